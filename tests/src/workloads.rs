//! Checks of the scheduler workloads (`workload=NAME,...`, kernel/workloads/src/) that the
//! scenarios in [`crate::scenarios::all`] boot. Every expected value is computed from the
//! scenario's inputs (its `-smp`, its `workload=` parameters, Linux's weight table, the base-slice
//! formula), never taken from the kernel's own output.

use crate::log::{format_cpulist, Log, Record};
use crate::scenarios::CheckResult;

fn ensure(cond: bool, msg: impl FnOnce() -> String) -> CheckResult {
    if cond {
        Ok(())
    } else {
        Err(msg())
    }
}

/// Linux's `sched_prio_to_weight[]` (kernel/sched/core.c), index `nice + 20`.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    /* -20 */ 88761, 71755, 56483, 46273, 36291, //
    /* -15 */ 29154, 23254, 18705, 14949, 11916, //
    /* -10 */ 9548, 7620, 6100, 4904, 3906, //
    /*  -5 */ 3121, 2501, 1991, 1586, 1277, //
    /*   0 */ 1024, 820, 655, 526, 423, //
    /*   5 */ 335, 272, 215, 172, 137, //
    /*  10 */ 110, 87, 70, 56, 45, //
    /*  15 */ 36, 29, 23, 18, 15,
];

/// The load weight of a nice value (Linux's table), `None` outside -20..=19.
pub fn nice_weight(nice: i64) -> Option<u64> {
    if (-20..=19).contains(&nice) {
        Some(PRIO_TO_WEIGHT[(nice + 20) as usize])
    } else {
        None
    }
}

/// Linux's default `sysctl_sched_base_slice` (0.70 ms in v6.19) scaled like
/// `update_sysctl()` with `SCHED_TUNABLESCALING_LOG`: `1 + ilog2(min(ncpus, 8))`.
pub fn base_slice_ns(cpus: u32) -> u64 {
    let n = cpus.clamp(1, 8);
    700_000 * (1 + n.ilog2() as u64)
}

/// A signed decimal field (`nice=-5`).
fn int(r: &Record, key: &str) -> Result<i64, String> {
    let v = r.field(key)?;
    v.parse()
        .map_err(|_| format!("`{r}`: field `{key}={v}` is not an integer"))
}

fn num_is(r: &Record, key: &str, want: u64) -> CheckResult {
    let v = r.num(key)?;
    ensure(v == want, || format!("`{r}`: expected {key}={want}"))
}

fn cpus_are(r: &Record, key: &str, want: &[u32]) -> CheckResult {
    let got = r.cpus(key)?;
    ensure(got == want, || {
        format!("`{r}`: expected {key}={}", format_cpulist(want))
    })
}

/// The `@fw taskstat` records of the threads called `name`.
pub fn taskstats<'a>(log: &'a Log, name: &str) -> Vec<&'a Record> {
    log.records("taskstat")
        .filter(|r| r.get("name") == Some(name))
        .collect()
}

/// The one `@fw taskstat` of the thread called `name`.
fn one_taskstat<'a>(log: &'a Log, name: &str) -> Result<&'a Record, String> {
    match taskstats(log, name).as_slice() {
        [r] => Ok(r),
        v => Err(format!(
            "expected one `@fw taskstat ... name={name}`, found {}",
            v.len()
        )),
    }
}

/// What every workload scenario shares: the scheduler ran with its invariant checks on
/// (`sched_debug=1`), on `cpus` CPUs, the workload `name` started on all of them, and (when
/// `finished`) it reported `ok=1` and printed one `@fw schedstat` per CPU.
pub fn workload_ran(log: &Log, name: &str, cpus: u32, finished: bool) -> CheckResult {
    let line = log
        .lines_starting_with("scheduler: ")
        .next()
        .ok_or("no `scheduler: ` line")?;
    ensure(line.contains("invariant checks on"), || {
        format!("`{line}`: expected the invariant checks on (sched_debug=1)")
    })?;
    workload_reported(log, name, cpus, finished)
}

/// [`workload_ran`] without the invariant checks: for the scenarios that boot the kernel as
/// `cargo xtask bench` does (`sched_debug=0`).
pub fn workload_reported(log: &Log, name: &str, cpus: u32, finished: bool) -> CheckResult {
    let w = log.one("workload")?;
    ensure(w.get("name") == Some(name), || {
        format!("`{w}`: expected name={name}")
    })?;
    num_is(w, "cpus", cpus as u64)?;
    if !finished {
        return Ok(());
    }
    let d = log.one("workload_done")?;
    ensure(
        d.get("name") == Some(name) && d.get("ok") == Some("1"),
        || format!("`{d}`: expected name={name} ok=1"),
    )?;
    let seen: Vec<u64> = log
        .records("schedstat")
        .map(|r| r.num("cpu"))
        .collect::<Result<_, _>>()?;
    let want: Vec<u64> = (0..cpus as u64).collect();
    ensure(seen == want, || {
        format!("expected one `@fw schedstat` for each of CPUs 0..{cpus} in order, got {seen:?}")
    })
}

/// The `@fw schedstat` of one CPU.
fn schedstat(log: &Log, cpu: u32) -> Result<&Record, String> {
    log.records("schedstat")
        .find(|r| r.num("cpu").ok() == Some(cpu as u64))
        .ok_or_else(|| format!("no `@fw schedstat cpu={cpu}`"))
}

/// The bucket `[lo, hi)` of a microsecond sample in the `@fw hist` layout
/// (kernel/workloads/src/samples.rs): one per microsecond below 16, then 8 per power of two.
pub fn hist_bucket(v: u64) -> (u64, u64) {
    if v < 16 {
        return (v, v + 1);
    }
    let shift = 63 - v.leading_zeros() - 3;
    let lo = (v >> shift) << shift;
    (lo, lo + (1 << shift))
}

/// The `@fw hist ... kind=KIND` buckets as `(lo_us, hi_us, count)`: at least one, every one
/// `workload=WORKLOAD`, a non-empty bucket of the log-linear layout ([`hist_bucket`]), in
/// ascending order.
pub fn hist_buckets(log: &Log, workload: &str, kind: &str) -> Result<Vec<(u64, u64, u64)>, String> {
    let mut buckets: Vec<(u64, u64, u64)> = Vec::new();
    for r in log.records("hist").filter(|r| r.get("kind") == Some(kind)) {
        ensure(r.get("workload") == Some(workload), || {
            format!("`{r}`: expected workload={workload}")
        })?;
        let (lo, hi, n) = (r.num("lo_us")?, r.num("hi_us")?, r.num("count")?);
        ensure(hist_bucket(lo) == (lo, hi) && n > 0, || {
            format!("`{r}`: not a non-empty bucket of the log-linear layout")
        })?;
        if let Some(&(_, prev_hi, _)) = buckets.last() {
            ensure(prev_hi <= lo, || format!("`{r}`: buckets out of order"))?;
        }
        buckets.push((lo, hi, n));
    }
    ensure(!buckets.is_empty(), || {
        format!("no `@fw hist workload={workload} kind={kind}`")
    })?;
    Ok(buckets)
}

/// The bucket holding the `rank`-th smallest sample (from 1), if the buckets hold that many.
pub fn hist_rank_bucket(buckets: &[(u64, u64, u64)], rank: u64) -> Option<(u64, u64)> {
    let mut seen = 0;
    buckets.iter().find_map(|&(lo, hi, n)| {
        seen += n;
        (seen >= rank).then_some((lo, hi))
    })
}

// ---------------------------------------------------------------------------------------------
// The checks, by concept.

#[path = "workloads_balance.rs"]
mod balance;
#[path = "workloads_bench.rs"]
mod bench;
#[path = "workloads_schbench.rs"]
mod schbench;
#[path = "workloads_effect.rs"]
mod effect;
#[path = "workloads_fairness.rs"]
mod fairness;
#[path = "workloads_idle.rs"]
mod idle;
#[path = "workloads_lb.rs"]
pub(crate) mod lb;
#[path = "workloads_threads.rs"]
mod threads;
#[path = "workloads_torture.rs"]
mod torture;
#[path = "workloads_wakeup.rs"]
mod wakeup;
#[path = "workloads_placement.rs"]
mod placement;
#[path = "workloads_faults.rs"]
mod faults;

pub use balance::{
    check_capacity, check_spread, check_spread_nohz, check_spread_smt, check_three_on_two, SPREAD_WITHIN_MS,
    THREE_ON_TWO_TOLERANCE_PP,
};
pub use bench::{
    check_deterministic_boot, check_ebizzy, check_fserver, check_hackbench, check_tbench, compare_identical, fixed, results, scan,
    schedstat_deltas, workload_params, EBIZZY_MIN_BUSY_PERCENT, RUN_SLACK_MS,
};
pub use effect::{
    check_ebizzy_ran, compare_capacity_pressure, compare_fork_placement, check_idle_wait_fserver, check_idle_wait_prodcons, check_clamp_gate, compare_newidle_on_off, idle_wait_deltas,
    idle_wait_total, newidle_sum, IdleWait,
};
pub use schbench::{check_schbench, percentiles, Percentiles};
pub use fairness::{
    check_delay_dequeue, check_features, check_features_bogus, check_features_linux_only, check_torture_no_ttwu_queue, check_latency, check_renice, check_shares, check_shares_pressure,
    FEATURES_BOGUS, FEATURES_LINUX_ONLY, FEATURES_SET, LINUX_ONLY_FEATURES, RENICE_AFTER_NS, RENICE_AT_ONCE_NS, RENICE_ROUNDS, RENICE_SLICE_NS, SHARES_NICE,
    SHARE_TOLERANCE_PP,
};
pub use idle::{
    check_prodcons, check_tickless, compare_snap_delta, newidle_attempts_per_s,
    NOHZ_IDLE_MAX_PER_S, TICKING_MIN_PER_S,
};
pub use threads::{
    check_affinity, check_overflow, check_pipe, check_regs, check_storm, check_trace_pipe, PIPE_MIN_WAKEUPS_PERCENT,
    PIPE_ROUNDS, TRACE_PIPE_ROUNDS,
};
pub use lb::{
    check_active_push, check_newidle_off, check_newidle_pull, check_newidle_push, compare_newidle_push,
    newidle_pushes_in_trace, NewidlePush, NEWIDLE_PUSH_CYCLE_US, NEWIDLE_PUSH_MS, check_new_dst_cpu,
    check_group_imbalanced, GROUP_IMBALANCED,
    PINNED_SMP, check_misfit_util_est, check_nohz_pull, check_periodic_pull, compare_capacity_push,
    compare_nohz_on_off, newidle_pulls_in_trace, record_sum, NewidlePull, NOHZ_PULL_HOGS, NOHZ_PULL_SMP,
};
pub use faults::{
    check_fault_malformed, check_faults, check_storm_faults, check_torture_faults, compare_ipi_delay, mode_names, ALL_FAULTS, CPU_STALL, FAULT_MALFORMED,
    FAULT_MODES, FAULT_SEED_ALONE, IPI_DELAY, IPI_REORDER, PREEMPT_POINTS, SPURIOUS_WAKE, IDLE_IRQS_OFF,
    check_idle_ipi_coming, IPI_COMING, IPI_COMING_MAX_NS,
};
pub use torture::{check_torture, check_torture_pressure, torture_books, torture_default_threads, torture_verdict, TORTURE_OPS, TORTURE_SEM_UNITS};
pub use wakeup::{check_pipes, compare_wake_affine, domstat_sum, pipes_total};
pub use placement::{
    check_sis_aged, check_sis_prop_scans, check_sis_util, check_sis_util_contradiction, check_wake_2005, check_wake_affine_sync, compare_sis_aged,
    compare_sis_prop_cost, compare_sis_altscan, compare_sis_util, nr_idle_scan, wakeplace, Wakeplace, SIS_UTIL_CONTRADICTION,
};

// ---------------------------------------------------------------------------------------------
// What a correct kernel prints, for the unit tests.

#[cfg(test)]
#[path = "workloads_synthetic.rs"]
pub(crate) mod synthetic;

#[cfg(test)]
#[path = "workloads_tests.rs"]
mod tests;
