//! PELT behaviour of entities driven by the simulator.

use sched::pelt::{PeltInput, SchedAvg};
use sched::sim::{Behavior, Event, Sim};
use sched::time::NSEC_PER_MSEC;
use sched::{Nice, Tunables};

/// An always-running entity's util reaches 1024 within 1% after about
/// 345 ms (1024·(1 - y^t) >= 1013.8 once t >= ~337 periods of 1.024 ms).
#[test]
fn always_running_util_reaches_1024() {
    let mut s = Sim::new(Tunables::new(1));
    let t = s.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
    s.apply(Event::Run(100 * NSEC_PER_MSEC)).unwrap();
    let early = s.entity(t).unwrap().avg.util_avg;
    s.apply(Event::Run(245 * NSEC_PER_MSEC)).unwrap();
    let util = s.entity(t).unwrap().avg.util_avg;
    assert!(util as f64 >= 1024.0 * 0.99, "util {util} after 345 ms");
    assert!(util <= 1024);
    assert!(early < 1000, "it must ramp, not start full ({early} after 100 ms)");
    // the run-queue sees the same signal
    assert!(s.rq().pelt().util_avg as f64 >= 1024.0 * 0.99);
}

/// Util halves 32 periods (32.768 ms, "32 ms") after the entity stops
/// running.
#[test]
fn util_halves_after_32_ms_idle() {
    let mut sa = SchedAvg::default();
    let on = PeltInput { load: 1, runnable: 1, running: true };
    let mut now = 0;
    while now < 1000 * NSEC_PER_MSEC {
        now += NSEC_PER_MSEC;
        sa.update(now, on, 1024);
    }
    let full = sa.util_avg;
    let off = PeltInput::default();
    // 32 periods of 1024 units of 1024 ns, in 1 ms steps plus the remainder
    let end = now + 32 * 1024 * 1024;
    while now < end {
        now = (now + NSEC_PER_MSEC).min(end);
        sa.update(now, off, 1024);
    }
    let half = full as f64 / 2.0;
    assert!((sa.util_avg as f64 - half).abs() <= half * 0.02, "{} -> {} (expected ~{half})", full, sa.util_avg);
}

/// A 25% duty cycle (1 ms of every 4 ms) converges near 256: after
/// warm-up the util stays in a narrow band around it and its time average
/// is within 3%.
#[test]
fn quarter_duty_cycle_converges_near_256() {
    let mut s = Sim::new(Tunables::new(1));
    let t = s.apply(Event::Fork(Nice::ZERO, Behavior::DutyCycle { run: NSEC_PER_MSEC, sleep: 3 * NSEC_PER_MSEC })).unwrap().unwrap();
    s.apply(Event::Run(1000 * NSEC_PER_MSEC)).unwrap();
    let (mut sum, mut n, mut lo, mut hi) = (0u64, 0u64, u64::MAX, 0u64);
    for _ in 0..1000 {
        s.apply(Event::Run(NSEC_PER_MSEC / 4)).unwrap();
        // entities update at their own events; the run-queue's signal is
        // the one refreshed on every tick
        let u = s.rq().pelt().util_avg;
        sum += u;
        n += 1;
        lo = lo.min(u);
        hi = hi.max(u);
    }
    let mean = sum as f64 / n as f64;
    assert!((mean - 256.0).abs() <= 256.0 * 0.03, "mean util {mean}");
    assert!(lo >= 200 && hi <= 310, "band [{lo}, {hi}]");
    let se = s.entity(t).unwrap().avg.util_avg;
    assert!((200..=310).contains(&se), "entity util {se}");
}

/// Frequency invariance: the same 25% duty cycle (in wall-clock time) on a
/// CPU at half frequency does half the work, and its util settles near 128
/// instead of 256.
#[test]
fn half_frequency_halves_duty_cycle_util() {
    let mut s = Sim::new(Tunables::new(1));
    s.rq_mut().set_freq_capacity(512);
    s.apply(Event::Fork(Nice::ZERO, Behavior::DutyCycle { run: NSEC_PER_MSEC, sleep: 3 * NSEC_PER_MSEC })).unwrap();
    s.apply(Event::Run(1000 * NSEC_PER_MSEC)).unwrap();
    let (mut sum, mut n) = (0u64, 0u64);
    for _ in 0..1000 {
        s.apply(Event::Run(NSEC_PER_MSEC / 4)).unwrap();
        sum += s.rq().pelt().util_avg;
        n += 1;
    }
    let mean = sum as f64 / n as f64;
    assert!((mean - 128.0).abs() <= 128.0 * 0.05, "mean util at half frequency {mean}");
}

/// A run-queue's three signals each follow their own input: after a
/// second of a summed load of 3072 with two runnable entities and nothing
/// running, `load_avg` is near 3072, `runnable_avg` near 2·1024 and
/// `util_avg` 0. (Fails if an update feeds one input into another's sum.)
#[test]
fn run_queue_signals_follow_their_own_inputs() {
    let mut sa = SchedAvg::default();
    let waiting = PeltInput { load: 3072, runnable: 2, running: false };
    let mut now = 0;
    // steps of a few units, some inside a period and some across one
    while now < 1000 * NSEC_PER_MSEC {
        now += 700 * 1024 + 300;
        sa.update(now, waiting, 1);
    }
    let near = |v: u64, want: f64| (v as f64 - want).abs() <= want * 0.02;
    assert!(near(sa.load_avg, 3072.0), "load_avg {}", sa.load_avg);
    assert!(near(sa.runnable_avg, 2048.0), "runnable_avg {}", sa.runnable_avg);
    assert_eq!(sa.util_avg, 0);
}

mod update_forms {
    use proptest::prelude::*;
    use sched::pelt::{PeltInput, SchedAvg, UTIL_AVG_UNCHANGED};

    /// One step: time forward, then the entity's state since the last update.
    fn step() -> impl Strategy<Value = (u64, bool, bool, bool)> {
        // mostly within the current 1024-unit period (the inlined sums),
        // sometimes across one or many boundaries
        let dt = prop_oneof![4 => 0u64..200_000, 1 => 0u64..50_000_000];
        (dt, any::<bool>(), any::<bool>(), any::<bool>())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..ProptestConfig::default() })]

        /// `update_entity` (the fast paths' form, with its inlined sums)
        /// equals `update` with the inputs its flags stand for, field by
        /// field, `util_est`'s unchanged flag cleared when the averages
        /// were refreshed.
        #[test]
        fn update_entity_equals_update(
            weight in 2u64..=(1 << 20),
            start in any::<u32>(),
            steps in prop::collection::vec(step(), 1..200),
        ) {
            let mut now = start as u64;
            let mut fast = SchedAvg { last_update_time: now, util_est: UTIL_AVG_UNCHANGED, ..SchedAvg::default() };
            let mut general = fast;
            for (dt, on_rq, runnable, running) in steps {
                now += dt;
                let input = PeltInput { load: on_rq as u64, runnable: (on_rq && runnable) as u64, running };
                let refreshed = general.update(now, input, weight);
                if refreshed {
                    general.util_est &= !UTIL_AVG_UNCHANGED;
                }
                prop_assert_eq!(fast.update_entity(now, on_rq, on_rq && runnable, running, weight), refreshed);
                prop_assert_eq!(fast, general);
            }
        }

        /// `update_queue` (the run-queue's form, with plain products inside
        /// the period) equals `update` with the same inputs and load factor
        /// 1, field by field, for loads up to a queue's bound (2^52) and
        /// any `u32` runnable count.
        #[test]
        fn update_queue_equals_update(
            start in any::<u32>(),
            steps in prop::collection::vec((step(), 0u64..(1 << 52), any::<u32>(), 0u32..4), 1..200),
        ) {
            let mut now = start as u64;
            let mut fast = SchedAvg { last_update_time: now, ..SchedAvg::default() };
            let mut general = fast;
            for ((dt, _, _, running), load, runnable, small) in steps {
                now += dt;
                // often a pipe's small queue, sometimes anything in bounds
                let (load, runnable) = if small != 0 { (load % 4096, runnable % 4) } else { (load, runnable) };
                let input = PeltInput { load, runnable: runnable as u64, running };
                let refreshed = general.update(now, input, 1);
                prop_assert_eq!(fast.update_queue(now, load, runnable, running), refreshed);
                prop_assert_eq!(fast, general);
            }
        }

        /// `update_queue_empty` (nothing queued) equals `update` with a
        /// zero load, whatever runnable and running inputs come with it.
        #[test]
        fn update_queue_empty_equals_update(
            start in any::<u32>(),
            steps in prop::collection::vec((step(), any::<u32>()), 1..200),
        ) {
            let mut now = start as u64;
            let mut fast = SchedAvg { last_update_time: now, ..SchedAvg::default() };
            let mut general = fast;
            for ((dt, _, _, running), runnable) in steps {
                now += dt;
                let input = PeltInput { load: 0, runnable: runnable as u64, running };
                let refreshed = general.update(now, input, 1);
                prop_assert_eq!(fast.update_queue_empty(now), refreshed);
                prop_assert_eq!(fast, general);
            }
        }

        /// `update_queue_loaded` (a queue with something queued) equals
        /// `update` for every load from 1 up to a queue's bound.
        #[test]
        fn update_queue_loaded_equals_update(
            start in any::<u32>(),
            steps in prop::collection::vec((step(), 1u64..(1 << 52), any::<u32>(), 0u32..4), 1..200),
        ) {
            let mut now = start as u64;
            let mut fast = SchedAvg { last_update_time: now, ..SchedAvg::default() };
            let mut general = fast;
            for ((dt, _, _, running), load, runnable, small) in steps {
                now += dt;
                let (load, runnable) = if small != 0 { (1 + load % 4096, runnable % 4) } else { (load, runnable) };
                let input = PeltInput { load, runnable: runnable as u64, running };
                let refreshed = general.update(now, input, 1);
                prop_assert_eq!(fast.update_queue_loaded(now, load, runnable, running), refreshed);
                prop_assert_eq!(fast, general);
            }
        }
    }
}
