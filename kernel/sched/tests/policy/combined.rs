//! The combined operations (`wake`, `block_and_schedule`) against the
//! calls they combine: random scripts run on two clones of one queue, one
//! through the combined call and one through the sequence; after every step
//! the results and the whole queue state (its `Debug` form: every slot,
//! tree node, sum, counter and clock) must be identical.

use crate::common;

use common::{features, op, Driver, Op};
use proptest::prelude::*;
use proptest::test_runner::Config;
use sched::{DequeueFlags, EnqueueFlags, EntityId, FairRq, Features, Tunables, WakeFlags};

fn config() -> Config {
    Config { cases: 4_000, failure_persistence: None, ..Config::default() }
}

#[derive(Clone, Debug)]
enum Step {
    /// Any operation of the shared generator, applied to both queues.
    Common(Op),
    /// Wake the k-th entity with the given enqueue and wake flags.
    Wake(usize, usize, usize, u64),
    /// Block the running entity (or, if `any`, the k-th entity) with the
    /// given dequeue flags, then switch.
    Block(bool, usize, usize, u64),
    /// `wake_delayed` of the k-th entity (delayed or not) with the given
    /// wake flags.
    WakeDelayed(usize, usize, u64),
}

const EFLAGS: [EnqueueFlags; 4] = [EnqueueFlags::WAKEUP, EnqueueFlags::NONE, EnqueueFlags::INITIAL, EnqueueFlags::MIGRATED];
const WFLAGS: [WakeFlags; 4] = [WakeFlags::SYNC, WakeFlags::NONE, WakeFlags::FORK, WakeFlags::SYNC];

fn dflags(k: usize) -> DequeueFlags {
    match k % 6 {
        0..=2 => DequeueFlags::SLEEP,
        3 => DequeueFlags::SLEEP | DequeueFlags::SPECIAL,
        4 => DequeueFlags::SLEEP | DequeueFlags::DELAYED,
        _ => DequeueFlags::NONE,
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => op().prop_map(Step::Common),
        4 => (any::<usize>(), 0usize..4, 0usize..4, 0u64..40_000).prop_map(|(k, e, w, d)| Step::Wake(k, e, w, d)),
        2 => (any::<usize>(), 0usize..4, 0u64..40_000).prop_map(|(k, w, d)| Step::WakeDelayed(k, w, d)),
        4 => (prop::bool::weighted(0.15), any::<usize>(), 0usize..6, 0u64..40_000).prop_map(|(a, k, f, d)| Step::Block(a, k, f, d)),
    ]
}

fn nth(ids: &[EntityId], k: usize) -> EntityId {
    // an unknown handle now and then, which both must refuse alike
    if ids.is_empty() || k.is_multiple_of(17) {
        EntityId((k % 5) as u32 + ids.len() as u32)
    } else {
        ids[k % ids.len()]
    }
}

fn same(a: &FairRq, b: &FairRq) -> Result<(), TestCaseError> {
    prop_assert_eq!(format!("{a:?}"), format!("{b:?}"));
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// `wake` = `enqueue` then (if it succeeded) `check_preempt_wakeup`;
    /// `block_and_schedule` = `dequeue` then `schedule`: identical results
    /// and identical queue state after every step.
    #[test]
    fn combined_ops_equal_their_sequences(
        cpus in 1u32..16,
        f in features(),
        steps in prop::collection::vec(step(), 1..64),
    ) {
        let mut t = Tunables::new(cpus);
        t.features = f;
        let mut seq = Driver::new(FairRq::new(t));
        let mut comb = Driver::new(FairRq::new(t));
        for s in &steps {
            match *s {
                Step::Common(ref o) => {
                    seq.apply(o);
                    comb.apply(o);
                }
                Step::Wake(k, e, w, d) => {
                    let id = nth(&seq.ids, k);
                    let (ef, wf) = (EFLAGS[e], WFLAGS[w]);
                    for dr in [&mut seq, &mut comb] {
                        dr.now += d;
                        dr.rq.update_clock(dr.now);
                    }
                    let a = seq.rq.enqueue(id, ef).and_then(|()| seq.rq.check_preempt_wakeup(id, wf));
                    let b = comb.rq.wake(id, ef, wf);
                    prop_assert_eq!(a, b, "{:?}", s);
                }
                Step::WakeDelayed(k, w, d) => {
                    let id = nth(&seq.ids, k);
                    let wf = WFLAGS[w];
                    for dr in [&mut seq, &mut comb] {
                        dr.now += d;
                        dr.rq.update_clock(dr.now);
                    }
                    let a = seq.rq.enqueue(id, EnqueueFlags::WAKEUP).and_then(|()| seq.rq.check_preempt_wakeup(id, wf));
                    let b = comb.rq.wake_delayed(id, wf);
                    prop_assert_eq!(a, b, "{:?}", s);
                }
                Step::Block(any, k, fl, d) => {
                    let id = match seq.rq.curr() {
                        Some(c) if !any => c,
                        _ => nth(&seq.ids, k),
                    };
                    let flags = dflags(fl);
                    for dr in [&mut seq, &mut comb] {
                        dr.now += d;
                        dr.rq.update_clock(dr.now);
                    }
                    let r = seq.rq.dequeue(id, flags);
                    let a = (r, seq.rq.schedule());
                    let b = comb.rq.block_and_schedule(id, flags);
                    prop_assert_eq!(a, b, "{:?}", s);
                }
            }
            same(&seq.rq, &comb.rq)?;
            prop_assert_eq!(&seq.ids, &comb.ids);
        }
    }
}

/// A pipe: two entities waking each other and blocking, through the
/// combined calls and through the sequences, for many round trips at
/// several speeds (including PELT period crossings and delayed sleeps).
#[test]
fn pipe_round_trips_equal_their_sequences() {
    for (nice, step) in [(0, 2_000u64), (5, 2_000), (0, 700_000), (-3, 37_000)] {
        let mut t = Tunables::new(1);
        t.features = Features::default();
        let mut rq = FairRq::new(t);
        let a = rq.fork(sched::Nice::clamped(nice), sched::Policy::Normal).unwrap();
        let b = rq.fork(sched::Nice::clamped(nice), sched::Policy::Normal).unwrap();
        let hog = rq.fork(sched::Nice::ZERO, sched::Policy::Normal).unwrap();
        for id in [a, b, hog] {
            rq.enqueue(id, EnqueueFlags::INITIAL).unwrap();
        }
        rq.update_clock(1_000);
        rq.set_curr(a).unwrap();
        rq.dequeue(b, DequeueFlags::SLEEP).unwrap();
        let mut seq = rq.clone();
        let mut comb = rq;
        let mut now = 1_000;
        for n in 0..5_000 {
            now += step;
            seq.update_clock(now);
            comb.update_clock(now);
            let run = seq.curr().unwrap();
            let sleeper = if run == a { b } else if run == b { a } else { continue };
            if seq.entity(sleeper).is_some_and(|se| !se.on_rq || se.sched_delayed) {
                let x = seq.enqueue(sleeper, EnqueueFlags::WAKEUP).and_then(|()| seq.check_preempt_wakeup(sleeper, WakeFlags::SYNC));
                assert_eq!(x, comb.wake(sleeper, EnqueueFlags::WAKEUP, WakeFlags::SYNC), "wake {n}");
            }
            let r = seq.dequeue(run, DequeueFlags::SLEEP);
            let x = (r, seq.schedule());
            assert_eq!(x, comb.block_and_schedule(run, DequeueFlags::SLEEP), "block {n}");
            assert_eq!(format!("{seq:?}"), format!("{comb:?}"), "state after {n}");
            if seq.curr() == Some(hog) {
                // the hog runs a while, then hands the CPU back
                now += step;
                for q in [&mut seq, &mut comb] {
                    q.update_clock(now);
                    let back = q.queued().find(|&e| e != hog && !q.is_delayed(e));
                    if let Some(e) = back {
                        q.set_curr(e).unwrap();
                    }
                }
            }
        }
        assert_eq!(seq.stats().no_eligible_fallbacks, 0);
    }
}

/// The kernel's same-CPU pipe (`examples/hotpath.rs`, `pipe-k`): time
/// passes between the wakeup and the block, so the waker's sleep is delayed
/// and its partner's wakeup requeues it, re-placing it when it became
/// eligible by the running entity's last charge (a tick halfway through
/// the wake's run, longer than the block after it) or leaving it in place
/// (shorter, or equal: lag exactly 0). Each wakeup
/// follows the kernel: only a queued-and-delayed or an unqueued partner is
/// woken; a preempting wakeup switches at once. Combined vs sequential:
/// equal results and whole-queue state after each step, and every path
/// taken many times.
#[test]
fn kernel_pipe_sequences_equal_their_sequences() {
    let timings = [(1_500u64, 1_400u64), (1_400, 1_500), (1_400, 1_400), (90_000, 3), (3, 90_000), (650_000, 700_000)];
    // re-placed, in place, fresh, preempting wakeups; delayed sleeps
    let mut seen = [0u32; 5];
    for (k, &(t_wake, t_block)) in timings.iter().enumerate() {
        for nice in [0, 7] {
            let mut t = Tunables::new(1 + k as u32 % 3);
            t.features = Features::default();
            let mut rq = FairRq::new(t);
            let a = rq.fork(sched::Nice::clamped(nice), sched::Policy::Normal).unwrap();
            let b = rq.fork(sched::Nice::ZERO, sched::Policy::Normal).unwrap();
            for id in [a, b] {
                rq.enqueue(id, EnqueueFlags::INITIAL).unwrap();
            }
            rq.update_clock(1_000);
            let mut run = rq.schedule().unwrap();
            let mut other = if run == a { b } else { a };
            rq.dequeue(other, DequeueFlags::SLEEP).unwrap();
            let (mut seq, mut comb) = (rq.clone(), rq);
            let mut now = 1_000;
            let (mut replaced, mut in_place, mut fresh_wakes, mut delayed_sleeps, mut slept) = (0, 0, 0, 0, 0);
            for n in 0..3_000 {
                // a tick halfway: the requeue of a delayed partner sees V as
                // of the running entity's last charge (fair.c
                // `requeue_delayed_entity()` does not charge it), so it is
                // re-placed only when V passed it by the tick
                now += t_wake / 2;
                assert_eq!(seq.tick(now), comb.tick(now), "tick {n}");
                now += t_wake - t_wake / 2;
                seq.update_clock(now);
                comb.update_clock(now);
                let se = *seq.entity(other).unwrap();
                let mut preempt = false;
                if !se.on_rq || se.sched_delayed {
                    let x = seq.enqueue(other, EnqueueFlags::WAKEUP).and_then(|()| seq.check_preempt_wakeup(other, WakeFlags::SYNC));
                    // the kernel's calls: `wake_delayed` for a delayed partner
                    let y = if se.sched_delayed {
                        comb.wake_delayed(other, WakeFlags::SYNC)
                    } else {
                        comb.wake(other, EnqueueFlags::WAKEUP, WakeFlags::SYNC)
                    };
                    assert_eq!(x, y, "wake {n}");
                    assert_eq!(format!("{seq:?}"), format!("{comb:?}"), "state after wake {n}");
                    preempt = x.unwrap();
                    match (se.on_rq, seq.entity(other).unwrap().vruntime == se.vruntime) {
                        (false, _) => fresh_wakes += 1,
                        (true, true) => in_place += 1,
                        (true, false) => replaced += 1,
                    }
                }
                if preempt {
                    seen[3] += 1;
                    assert_eq!(seq.schedule(), comb.schedule(), "preempting switch {n}");
                } else {
                    now += t_block;
                    seq.update_clock(now);
                    comb.update_clock(now);
                    let r = seq.dequeue(run, DequeueFlags::SLEEP);
                    let x = (r, seq.schedule());
                    assert_eq!(x, comb.block_and_schedule(run, DequeueFlags::SLEEP), "block {n}");
                    slept += 1;
                    delayed_sleeps += (r == Ok(sched::DequeueOutcome::Delayed)) as u32;
                }
                assert_eq!(format!("{seq:?}"), format!("{comb:?}"), "state after {n}");
                run = seq.curr().unwrap();
                other = if run == a { b } else { a };
            }
            assert_eq!(seq.stats().no_eligible_fallbacks, 0);
            println!("{t_wake}/{t_block} nice {nice}: {replaced} re-placed, {in_place} in place, {fresh_wakes} fresh wakes, {delayed_sleeps}/{slept} delayed sleeps");
            for (s, x) in seen.iter_mut().zip([replaced, in_place, fresh_wakes, 0, delayed_sleeps]) {
                *s += x;
            }
        }
    }
    assert!(seen.iter().all(|&x| x > 500), "every path taken: {seen:?}");
}

/// The kernel's cross-CPU pipe (`examples/hotpath.rs`, `cross-k`): an
/// entity alone on its queue is woken onto the idle queue, switched to, runs
/// and blocks, leaving the queue empty; at several speeds and weights, with
/// a custom slice now and then. Combined vs sequential: equal results and
/// whole-queue state after each step.
#[test]
fn kernel_cross_cpu_sequences_equal_their_sequences() {
    for (k, (idle, run)) in [(3_000u64, 2_900u64), (1, 1), (900_000, 5_000), (40, 2_000_000)].into_iter().enumerate() {
        for nice in [0, -4, 12] {
            let mut t = Tunables::new(2);
            t.features = Features::default();
            let mut rq = FairRq::new(t);
            if k == 1 {
                rq.set_cpu_capacity(700);
                rq.set_freq_capacity(333);
            }
            let a = rq.fork(sched::Nice::clamped(nice), sched::Policy::Normal).unwrap();
            if nice > 0 {
                rq.set_slice(a, 300_000).unwrap();
            }
            rq.enqueue(a, EnqueueFlags::INITIAL).unwrap();
            let mut now = 1_000;
            rq.update_clock(now);
            rq.schedule();
            let (mut seq, mut comb) = (rq.clone(), rq);
            for n in 0..2_000 {
                if seq.curr().is_some() {
                    now += run;
                    seq.update_clock(now);
                    comb.update_clock(now);
                    let r = seq.dequeue(a, DequeueFlags::SLEEP);
                    let x = (r, seq.schedule());
                    assert_eq!(x, comb.block_and_schedule(a, DequeueFlags::SLEEP), "block {n}");
                    assert_eq!(x.1, None);
                } else {
                    now += idle;
                    seq.update_clock(now);
                    comb.update_clock(now);
                    let x = seq.enqueue(a, EnqueueFlags::WAKEUP).and_then(|()| seq.check_preempt_wakeup(a, WakeFlags::SYNC));
                    assert_eq!(x, comb.wake(a, EnqueueFlags::WAKEUP, WakeFlags::SYNC), "wake {n}");
                    assert_eq!(format!("{seq:?}"), format!("{comb:?}"), "state after wake {n}");
                    now += 300;
                    seq.update_clock(now);
                    comb.update_clock(now);
                    assert_eq!(seq.schedule(), comb.schedule(), "switch {n}");
                }
                assert_eq!(format!("{seq:?}"), format!("{comb:?}"), "state after {n}");
            }
        }
    }
}
