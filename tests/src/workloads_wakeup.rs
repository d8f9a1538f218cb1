//! Wakeup placement: pipe partners sharing a CPU or an LLC with `wake_affine=` on and off
//! (`workload=pipes`).

use super::{ensure, num_is, workload_ran};
use crate::log::Log;
use crate::scenarios::CheckResult;

// ---------------------------------------------------------------------------------------------
// wake affinity: wake_affine=on vs off (two boots)

/// `(same_cpu, same_llc, rounds)` of `@fw pipes_total`, checked against the per-pair lines.
pub fn pipes_total(log: &Log, pairs: u64, rounds: u64) -> Result<(u64, u64), String> {
    let t = log.one("pipes_total")?;
    num_is(t, "pairs", pairs)?;
    num_is(t, "rounds", pairs * rounds)?;
    let (mut cpu, mut llc, mut n) = (0, 0, 0);
    for r in log.records("pipes") {
        num_is(r, "rounds", rounds)?;
        let (c, l) = (r.num("same_cpu")?, r.num("same_llc")?);
        ensure(c <= l && l <= rounds, || {
            format!("`{r}`: expected same_cpu <= same_llc <= rounds")
        })?;
        cpu += c;
        llc += l;
        n += 1;
    }
    ensure(n == pairs, || {
        format!("expected {pairs} `@fw pipes` lines, got {n}")
    })?;
    num_is(t, "same_cpu", cpu)?;
    num_is(t, "same_llc", llc)?;
    Ok((cpu, llc))
}

/// The sum of a `@fw domstat` field over every CPU and level.
pub fn domstat_sum(log: &Log, key: &str) -> Result<u64, String> {
    let mut sum = 0;
    let mut n = 0;
    for r in log.records("domstat") {
        sum += r.num(key)?;
        n += 1;
    }
    ensure(n > 0, || "no `@fw domstat` line".into())?;
    Ok(sum)
}

/// One boot of the wake-affinity pair: `workload=pipes,pairs=PAIRS,rounds=ROUNDS` on `SMP` CPUs
/// with one LLC (QEMU's default topology): every round trip saw the partners share the LLC.
pub fn check_pipes<const SMP: u32, const PAIRS: u64, const ROUNDS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "pipes", SMP, true)?;
    let (_, llc) = pipes_total(log, PAIRS, ROUNDS)?;
    ensure(llc == PAIRS * ROUNDS, || {
        format!("same_llc={llc}: with one LLC the partners always share it")
    })
}

/// (`wake_affine=on` boot, `wake_affine=off` boot) of `workload=pipes,pairs=PAIRS,rounds=ROUNDS`
/// at `-smp 4` (one LLC, so `same_llc` is always 100% and `same_cpu` is what differs): with
/// wake_affine on, the partners are on one CPU at more round trips than with it off, by at least
/// a quarter of the round trips; the domains counted affine wakeups (`ttwu_move_affine`) with it
/// on and none with it off.
pub fn compare_wake_affine<const PAIRS: u64, const ROUNDS: u64>(
    on: &Log,
    off: &Log,
) -> CheckResult {
    let (c_on, _) = pipes_total(on, PAIRS, ROUNDS)?;
    let (c_off, _) = pipes_total(off, PAIRS, ROUNDS)?;
    let total = PAIRS * ROUNDS;
    ensure(c_on >= c_off + total / 4, || {
        format!(
            "same_cpu: {c_on} of {total} round trips with wake_affine=on, {c_off} with off: \
             expected on >= off + {}",
            total / 4
        )
    })?;
    let (a_on, a_off) = (
        domstat_sum(on, "ttwu_move_affine")?,
        domstat_sum(off, "ttwu_move_affine")?,
    );
    ensure(a_on > 0 && a_off == 0, || {
        format!(
            "ttwu_move_affine summed over CPUs and levels: {a_on} with wake_affine=on, {a_off} \
             with off: expected > 0 and 0"
        )
    })
}
