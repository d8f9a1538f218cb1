//! Idle CPUs: the tick stopped on them (`nohz=`, `workload=shares`), and newidle balancing
//! throttled by `avg_idle` (`avg_idle_clamp=` snap vs delta, `workload=prodcons`).

use super::{ensure, num_is, workload_ran};
use crate::log::Log;
use crate::scenarios::CheckResult;

// ---------------------------------------------------------------------------------------------
// tickless idle: timer interrupts per CPU

/// Timer interrupts per second a CPU with nothing to run may take with `nohz=on`.
pub const NOHZ_IDLE_MAX_PER_S: u64 = 5;
/// Timer interrupts per second a CPU with a tick must take (at `hz=1000`).
pub const TICKING_MIN_PER_S: u64 = 500;

/// `timer_irqs=` of each CPU's `@fw schedstat_delta` (what the workload's run gained).
fn timer_irqs(log: &Log, cpus: u32) -> Result<Vec<u64>, String> {
    let mut v = vec![None; cpus as usize];
    for r in log.records("schedstat_delta") {
        let c = r.num("cpu")? as usize;
        ensure(c < v.len() && v[c].is_none(), || {
            format!("`{r}`: unexpected or repeated CPU")
        })?;
        v[c] = Some(r.num("timer_irqs")?);
    }
    v.into_iter()
        .enumerate()
        .map(|(c, x)| x.ok_or_else(|| format!("no `@fw schedstat_delta cpu={c}`")))
        .collect()
}

/// `workload=shares,cpu=BUSY,ms=MS` (hogs pinned to CPU `BUSY`) on `SMP` CPUs, with the tick
/// stopped on idle CPUs (`NOHZ`) or not: the busy CPU takes at least [`TICKING_MIN_PER_S`] timer
/// interrupts per second of the run; every CPU above `BUSY` (nothing runs there) takes at most
/// [`NOHZ_IDLE_MAX_PER_S`] per second with `NOHZ`, at least [`TICKING_MIN_PER_S`] without.
/// (CPU 0 runs the workload's main thread, so it is not counted as idle.)
pub fn check_tickless<const SMP: u32, const BUSY: u32, const MS: u64, const NOHZ: bool>(
    log: &Log,
) -> CheckResult {
    workload_ran(log, "shares", SMP, true)?;
    let irqs = timer_irqs(log, SMP)?;
    let per_s = |n: u64| n * 1000 / MS;
    let min = TICKING_MIN_PER_S * MS / 1000;
    ensure(irqs[BUSY as usize] >= min, || {
        format!(
            "busy CPU {BUSY} took {} timer interrupts in {MS} ms ({}/s), expected >= \
             {TICKING_MIN_PER_S}/s",
            irqs[BUSY as usize],
            per_s(irqs[BUSY as usize])
        )
    })?;
    for c in BUSY + 1..SMP {
        let n = irqs[c as usize];
        if NOHZ {
            ensure(n <= NOHZ_IDLE_MAX_PER_S * MS / 1000, || {
                format!(
                    "idle CPU {c} took {n} timer interrupts in {MS} ms with nohz=on, expected \
                     <= {NOHZ_IDLE_MAX_PER_S}/s (all CPUs: {irqs:?})"
                )
            })?;
        } else {
            ensure(n >= min, || {
                format!(
                    "idle CPU {c} took {n} timer interrupts in {MS} ms with nohz=off, expected \
                     >= {TICKING_MIN_PER_S}/s (all CPUs: {irqs:?})"
                )
            })?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// newidle throttling: avg_idle_clamp=snap vs delta (two boots)

/// Newidle balance attempts per second of the run: the sum of `@fw newidle ... attempts=` over
/// the CPUs, divided by the `@fw prodcons ms=` duration.
pub fn newidle_attempts_per_s(log: &Log) -> Result<f64, String> {
    let p = log.one("prodcons")?;
    let ms = p.num("ms")?;
    ensure(ms > 0, || format!("`{p}`: ms=0"))?;
    let mut sum = 0;
    let mut n = 0;
    for r in log.records("newidle") {
        sum += r.num("attempts")?;
        n += 1;
    }
    ensure(n > 0, || "no `@fw newidle` line".into())?;
    Ok(sum as f64 * 1000.0 / ms as f64)
}

/// One boot of the newidle pair: `workload=prodcons,pairs=PAIRS,ms=MS` on `SMP` CPUs ran, moved
/// items, and printed one `@fw newidle` per CPU.
pub fn check_prodcons<const SMP: u32, const PAIRS: u64, const MS: u64>(log: &Log) -> CheckResult {
    workload_ran(log, "prodcons", SMP, true)?;
    let p = log.one("prodcons")?;
    num_is(p, "pairs", PAIRS)?;
    num_is(p, "ms", MS)?;
    ensure(p.num("items")? > 0, || format!("`{p}`: no item consumed"))?;
    let cpus: Vec<u64> = log
        .records("newidle")
        .map(|r| r.num("cpu"))
        .collect::<Result<_, _>>()?;
    ensure(cpus == (0..SMP as u64).collect::<Vec<_>>(), || {
        format!("expected one `@fw newidle` for each of CPUs 0..{SMP}, got {cpus:?}")
    })
}

/// (`avg_idle_clamp=snap` boot, `avg_idle_clamp=delta` boot): delta tries newidle balancing less
/// often. With a 1 ms ceiling, a long idle period sets snap's `avg_idle` to the ceiling but
/// raises delta's by at most 1/8 of it, so after each long period snap needs ~16 more short
/// idle periods than delta before `avg_idle` falls below the newidle cost and the gate closes.
///
/// Attempts are not the effect: the pulls are. Snap's extra attempts must pull tasks (Σ
/// `pulled=` above delta's, and above 0), and in each boot the domain schedstat's
/// `lb_gained_newidle` counts the same tasks as the `@fw newidle` lines.
pub fn compare_snap_delta(snap: &Log, delta: &Log) -> CheckResult {
    let (s, d) = (
        newidle_attempts_per_s(snap)?,
        newidle_attempts_per_s(delta)?,
    );
    ensure(d < s, || {
        format!("newidle attempts/s: delta {d:.1} is not below snap {s:.1}")
    })?;
    let pulled = |log: &Log, which: &str| -> Result<u64, String> {
        let p = super::lb::record_sum(log, "newidle", "pulled")?;
        let g = super::lb::record_sum(log, "domstat", "lb_gained_newidle")?;
        ensure(p == g, || format!("{which}: Σ newidle pulled={p} but Σ lb_gained_newidle={g}"))?;
        Ok(p)
    };
    let (ps, pd) = (pulled(snap, "snap")?, pulled(delta, "delta")?);
    ensure(ps > pd, || {
        format!("newidle pulls: snap {ps} is not above delta {pd} (snap's extra attempts pulled nothing)")
    })
}
