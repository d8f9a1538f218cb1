//! The avg_idle clamps proven by their effect, through the real switch:
//! one constructed run, the same for every clamp, where the
//! clamp alone decides whether an idle CPU pulls the tasks waiting on its
//! neighbour. Each `newidle_clamp_*.rs` binary runs it for one setting (the
//! mechanism's state is per process) and asserts pulls, attempts and "idle
//! while others wait" exactly, as computed here from the inputs.
//!
//! The run, on 2 CPUs under the 2013 gate (`avg_idle` against the 0.5 ms
//! migration cost), NI_RANDOM off so that every gate pass balances:
//! 1. CPU 1 runs a pinned hog; on CPU 0 a pinned task `t` sleeps
//!    [`SHORT_NS`] at a time, [`SETTLE`] times: `avg_idle` falls from its
//!    1 ms boot value towards 200 us. Nothing is overloaded, but the 3.10
//!    gate does not look (only `avg_idle` against the migration cost): the
//!    first periods, while `avg_idle` is still above 0.5 ms, try a balance
//!    that finds nothing ([`Outcome::settle_attempts`]).
//! 2. A second pinned task queues on CPU 1 (overloaded, nothing CPU 0 may
//!    take: the gate alone decides, as prodcons' `hogs=`), and `t` sleeps
//!    once for [`LONG_NS`]: the 2013 patch's example. snap jumps to its
//!    ceiling (1 ms), avg and delta rise by an eighth of the way.
//! 3. [`FAILING`] more short sleeps: a gate that passes balances and finds
//!    nothing (the period is sampled).
//! 4. [`FREE`] tasks that CPU 0 may run queue on CPU 1 and age past the
//!    cache-hot window, then [`PERIODS`] short sleeps of `t`. A passing
//!    gate pulls one of them, and a pull ends the idle period with no
//!    sample (fair.c: sched_balance_newidle() clears `idle_stamp`), so the
//!    gate stays as open as it was while there is something to pull. The
//!    pulled task runs for the rest of `t`'s sleep and then blocks.
//!
//! [`expect`] replays the four phases on the `update_avg` rule of each
//! clamp (reference: core.c `ttwu_do_activate()` and the 2013 patch) to
//! give the exact figures.
//!
//! Shown to fail: with `AvgIdle::fold` forced to snap's rule, the avg and
//! delta binaries read 11 attempts, 3 pulled, 3 passes (due: 0, 0, 1 ms); with
//! a pull's period sampled (`newidle_done` never closing it), snap's reads
//! 8, 1 and 0.8 ms (due: 11, 3, 0).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::common::*;
use mech::balance::{idle_wait, newidle};
use mech::task::Task;
use mech::thread::Spawn;
use sched::balance::avg_idle::{hist_bucket, AvgIdleClamp, AVG_IDLE_HIST_BUCKETS};
use sched::WakeFlags;

pub const US: u64 = 1_000;
/// `t`'s short sleep, and the patch example's short idle period.
pub const SHORT_NS: u64 = 200 * US;
/// The patch example's one long idle period.
pub const LONG_NS: u64 = 1_200 * US;
/// How long `t` runs between its sleeps (CPU 0 busy: counts nowhere).
pub const RUN_NS: u64 = 50 * US;
pub const SETTLE: u32 = 200;
/// Failing attempts after the long period: one fewer than snap's gate
/// stays open for (8 at a 1 ms ceiling; `expect` checks it).
pub const FAILING: u32 = 7;
pub const FREE: u32 = 3;
pub const PERIODS: u32 = 5;
/// `sysctl_sched_migration_cost`, the 2013 gate's threshold.
pub const MIGRATION_COST: u64 = 500 * US;
/// `avg_idle_ceiling=` (the default): 200% of `max_idle_balance_cost`
/// (0.5 ms: a balance here costs far less, [`PASS_NS`]).
pub const CEILING: u64 = 1_000 * US;

/// The test clock one balance attempt takes: the work a pass over the
/// 2-CPU domain reports (`Platform::mechanism_work`, priced by the test
/// platform as the simulator prices it). A failed attempt's idle period is that much longer;
/// during a pull's attempt CPU 0 is idle while the free tasks wait.
pub const PASS_NS: u64 = work_ns(mech::platform::Work::BalancePass { cpus: 2 });

/// What the run shows for one setting.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Gate passes in phase 1, with nothing overloaded.
    pub settle_attempts: u64,
    /// Gate passes (balances tried) in phases 3 and 4.
    pub attempts: u64,
    /// Free tasks that ended up running on CPU 0.
    pub pulled: u64,
    /// CPU 0's idle time while CPU 1 had a task CPU 0 may run (phase 4).
    pub idle_wait_ns: u64,
    /// CPU 0's `avg_idle` at the end.
    pub avg_idle: u64,
    /// CPU 0's distribution of `avg_idle` at the gate's decisions (every
    /// newidle entry under the 3.10 gate; `@fw avg_idle_hist`).
    pub gate_hist: [u64; AVG_IDLE_HIST_BUCKETS],
}

/// One idle period of `sample` ns folded into `avg` by `clamp`'s rule
/// (truncating division by 8, as `update_avg`).
fn fold(clamp: Option<AvgIdleClamp>, avg: u64, sample: u64) -> u64 {
    let step = |a: u64, s: u64| (a as i64 + (s as i64 - a as i64) / 8) as u64;
    match clamp {
        Some(AvgIdleClamp::Snap) if sample > CEILING => CEILING,
        Some(AvgIdleClamp::Snap) => step(avg, sample),
        Some(AvgIdleClamp::Avg) => step(avg, sample).min(CEILING),
        Some(AvgIdleClamp::Delta) => step(avg, sample.min(CEILING)),
        // newidle=off: avg_idle still follows the idle periods (default rule).
        None => step(avg, sample).min(CEILING),
    }
}

/// The figures the run must give for `clamp` (`None`: newidle off), from
/// the inputs above.
pub fn expect(clamp: Option<AvgIdleClamp>) -> Outcome {
    let gate = |avg: u64| clamp.is_some() && avg >= MIGRATION_COST;
    // Every newidle entry is the gate's decision under the 3.10 rule (it
    // does not look at overload), and the gate sees the avg_idle of that
    // moment (none with newidle off).
    let mut gate_hist = [0; AVG_IDLE_HIST_BUCKETS];
    let mut seen = |avg: u64| {
        if clamp.is_some() {
            gate_hist[hist_bucket(avg)] += 1;
        }
    };
    let mut avg = 2 * MIGRATION_COST;
    let mut settle_attempts = 0;
    for _ in 0..SETTLE {
        seen(avg);
        let tried = gate(avg);
        settle_attempts += tried as u64;
        avg = fold(clamp, avg, SHORT_NS + if tried { PASS_NS } else { 0 });
    }
    assert!(avg < MIGRATION_COST, "settled below the gate");
    seen(avg);
    avg = fold(clamp, avg, LONG_NS);
    let mut attempts = 0;
    for _ in 0..FAILING {
        seen(avg);
        let tried = gate(avg);
        attempts += tried as u64;
        avg = fold(clamp, avg, SHORT_NS + if tried { PASS_NS } else { 0 });
    }
    let (mut pulled, mut idle_wait_ns, mut free) = (0, 0, FREE as u64);
    for _ in 0..PERIODS {
        seen(avg);
        let tried = gate(avg);
        if tried {
            attempts += 1;
            if free > 0 {
                free -= 1;
                pulled += 1;
                idle_wait_ns += PASS_NS;
                continue;
            }
        }
        if free > 0 {
            idle_wait_ns += SHORT_NS;
        }
        avg = fold(clamp, avg, SHORT_NS + if tried { PASS_NS } else { 0 });
    }
    Outcome { settle_attempts, attempts, pulled, idle_wait_ns, avg_idle: avg, gate_hist }
}

fn avg_idle(cpu: usize) -> u64 {
    mech::rq::lock(cpu).avg_idle.avg_idle
}

fn lock_drops(cpu: usize) -> u64 {
    newidle::entries_and_lock_drops(cpu).1
}

/// `t` sleeps `ns` on CPU 0 and is woken; returns the task that ran in its
/// place (a pulled one), if any. `t` runs [`RUN_NS`] again afterwards.
fn sleep_once(t: &Arc<Task>, ns: u64) -> Option<Arc<Task>> {
    let next = block(0);
    let pulled = (!next.is_idle).then(|| next.clone());
    advance_ns(ns);
    run_on(0);
    assert!(mech::wakeup::try_to_wake_up(t, WakeFlags::NONE), "t was asleep");
    let run = match &pulled {
        // The pulled task's turn ends: it blocks for good and `t` runs.
        Some(_) => block(0),
        None => preempt(0),
    };
    assert!(Arc::ptr_eq(&run, t), "CPU 0 runs {} after t's sleep, not t", run.name);
    advance_ns(RUN_NS);
    pulled
}

/// Runs the four phases under `clamp` (`None`: `newidle=off`) and returns
/// what happened.
pub fn run(clamp: Option<AvgIdleClamp>) -> Outcome {
    let mut config = sched::balance::BalanceConfig {
        newidle: clamp.is_some(),
        newidle_gate: sched::balance::NewidleGate::MigrationCost,
        avg_idle_clamp: clamp.unwrap_or_default(),
        ..Default::default()
    };
    config.features.set(sched::Feature::NiRandom, false);
    assert_eq!(config.avg_idle_ceiling_pct, 200);
    boot_with(2, config);
    let t = mech::thread::spawn(Spawn::new("t").pin(0), || {}).unwrap();
    let hog = mech::thread::spawn(Spawn::new("hog").pin(1), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(0), &t));
    assert!(Arc::ptr_eq(&preempt(1), &hog));
    assert_eq!(avg_idle(0), 2 * MIGRATION_COST, "boot value");

    // 1. Settle: nothing overloaded; the 3.10 gate tries while avg_idle is
    // at or above the migration cost, and finds nothing.
    for _ in 0..SETTLE {
        assert!(sleep_once(&t, SHORT_NS).is_none());
    }
    let settle_attempts = lock_drops(0);
    // 2. A second task pinned to CPU 1: overloaded, nothing CPU 0 may run.
    let _pinned = mech::thread::spawn(Spawn::new("pinned").pin(1), || {}).unwrap();
    assert!(mech::balance::snapshot::any_overloaded());
    assert!(sleep_once(&t, LONG_NS).is_none(), "avg_idle had settled below the gate");
    let drops = lock_drops(0);
    assert_eq!(drops, settle_attempts, "avg_idle had settled below the gate");

    // 3. Attempts that find nothing to pull (each period sampled).
    for _ in 0..FAILING {
        assert!(sleep_once(&t, SHORT_NS).is_none(), "only pinned tasks wait");
    }

    // 4. Free tasks queue on CPU 1 and age past the 0.5 ms cache-hot window
    // while `t` runs; from here CPU 0's idle time counts as waiting.
    let free: Vec<Arc<Task>> =
        (0..FREE).map(|i| mech::thread::spawn(Spawn::new(&format!("free{i}")).on_cpu(1), || {}).unwrap()).collect();
    advance_ns(2 * MIGRATION_COST);
    let before = idle_wait::read(0);
    let mut pulled = 0;
    for _ in 0..PERIODS {
        if let Some(p) = sleep_once(&t, SHORT_NS) {
            assert!(free.iter().any(|f| Arc::ptr_eq(f, &p)), "CPU 0 ran {}, not a free task", p.name);
            assert_eq!(p.cpu.load(Ordering::Relaxed), 0);
            pulled += 1;
        }
    }
    Outcome {
        settle_attempts,
        attempts: lock_drops(0) - drops,
        pulled,
        idle_wait_ns: idle_wait::read(0).since(&before).top(),
        avg_idle: avg_idle(0),
        gate_hist: newidle::avg_idle_hist(0),
    }
}
