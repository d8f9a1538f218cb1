//! DELAY_DEQUEUE / DELAY_ZERO: who stays queued, what is counted, how a
//! delayed entity leaves or comes back.

use crate::common;

use common::check_invariants;
use sched::time::vdiff;
use sched::{DequeueFlags as D, DequeueOutcome, EnqueueFlags as E, EntityId, FairRq, Nice, Policy, Tunables, WakeFlags};

/// Queue of `n` nice-0 entities where the first picked one has run 2 ms,
/// so it is not eligible. Returns (rq, that entity, the others).
fn with_ineligible_curr(features: &str, n: usize) -> (FairRq, EntityId, Vec<EntityId>) {
    let mut t = Tunables::new(1);
    t.features = features.parse().unwrap();
    let mut rq = FairRq::new(t);
    let ids: Vec<_> = (0..n).map(|_| rq.fork(Nice::ZERO, Policy::Normal).unwrap()).collect();
    for &id in &ids {
        rq.enqueue(id, E::INITIAL).unwrap();
    }
    let a = rq.schedule().unwrap();
    rq.update_curr_at(2_000_000);
    assert!(!rq.entity_eligible(a));
    let others = ids.into_iter().filter(|&x| x != a).collect();
    (rq, a, others)
}

/// A sleeper that is not eligible stays queued: counted in load,
/// nr_queued and the V sums, but not as runnable; a sleeper that is
/// eligible leaves at once and keeps its positive lag.
#[test]
fn ineligible_sleeper_stays_queued_eligible_one_leaves() {
    let (mut rq, a, others) = with_ineligible_curr("", 3);
    let load = rq.load_weight();
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Delayed));
    assert!(rq.is_delayed(a));
    assert_eq!((rq.nr_queued(), rq.h_nr_runnable(), rq.load_weight()), (3, 2, load));
    check_invariants(&rq).unwrap();
    assert!(rq.need_resched(), "curr went to sleep");
    // switch away: the delayed entity goes back into the tree, still counted
    let b = rq.schedule().unwrap();
    assert_ne!(b, a);
    assert_eq!(rq.avg_sums().sum_weight(), 2 * 1024, "the delayed one is in the sums");
    check_invariants(&rq).unwrap();
    // an eligible sleeper (one that has been waiting) is dequeued at once
    let c = others.into_iter().find(|&x| x != b).unwrap();
    assert!(rq.entity_eligible(c));
    assert_eq!(rq.dequeue(c, D::SLEEP), Ok(DequeueOutcome::Dequeued));
    assert!(rq.entity(c).unwrap().vlag > 0, "keeps its positive lag");
    assert_eq!((rq.nr_queued(), rq.h_nr_runnable()), (2, 1));
    check_invariants(&rq).unwrap();
}

/// NO_DELAY_DEQUEUE, and special sleeps (stopped, frozen, dead) are never
/// delayed.
#[test]
fn no_delay_when_disabled_or_special() {
    let (mut rq, a, _) = with_ineligible_curr("NO_DELAY_DEQUEUE", 3);
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Dequeued));
    assert!(rq.entity(a).unwrap().vlag < 0, "keeps its debt in vlag instead");
    let (mut rq, a, _) = with_ineligible_curr("", 3);
    assert_eq!(rq.dequeue(a, D::SLEEP | D::SPECIAL), Ok(DequeueOutcome::Dequeued));
    let (mut rq, a, _) = with_ineligible_curr("", 3);
    assert_eq!(rq.dequeue(a, D::NONE), Ok(DequeueOutcome::Dequeued), "migration is not a sleep");
}

/// The pick never returns a delayed entity: when it comes up (it became
/// eligible) it is dequeued for good and the pick goes on; with DELAY_ZERO
/// its saved lag is truncated to 0, without it the positive lag is kept.
#[test]
fn pick_finishes_delayed_entity_and_truncates_lag() {
    for (features, zero) in [("", true), ("NO_DELAY_ZERO", false)] {
        let (mut rq, a, _) = with_ineligible_curr(features, 2);
        rq.dequeue(a, D::SLEEP).unwrap();
        let mut t = 2_000_000;
        let mut finished_lag = None;
        for _ in 0..100 {
            let next = rq.schedule();
            assert_ne!(next, Some(a), "a delayed entity is never run");
            if !rq.is_delayed(a) {
                finished_lag = Some(rq.entity(a).unwrap().vlag);
                break;
            }
            t += 100_000;
            rq.tick(t);
        }
        let vlag = finished_lag.expect("the delayed entity was dequeued by a pick");
        assert!(!rq.entity(a).unwrap().on_rq);
        assert_eq!(rq.stats().delayed_dequeued_by_pick, 1);
        if zero {
            assert_eq!(vlag, 0, "DELAY_ZERO truncates the positive lag");
        } else {
            assert!(vlag > 0, "{features}: keeps the positive lag ({vlag})");
        }
        check_invariants(&rq).unwrap();
    }
}

/// Waking a delayed entity that is still not eligible requeues it in
/// place: same vruntime and deadline, no second enqueue (nr_queued and
/// load unchanged), runnable again.
#[test]
fn wake_while_ineligible_requeues_in_place() {
    let (mut rq, a, _) = with_ineligible_curr("", 3);
    rq.dequeue(a, D::SLEEP).unwrap();
    rq.schedule();
    let before = *rq.entity(a).unwrap();
    let (nq, load) = (rq.nr_queued(), rq.load_weight());
    rq.enqueue(a, E::WAKEUP).unwrap();
    let after = *rq.entity(a).unwrap();
    assert!(!after.sched_delayed && after.on_rq);
    assert_eq!((after.vruntime, after.deadline), (before.vruntime, before.deadline));
    assert_eq!((rq.nr_queued(), rq.load_weight(), rq.h_nr_runnable()), (nq, load, 3));
    assert_eq!(rq.stats().delayed_requeued, 1);
    assert!(!rq.check_preempt_wakeup(a, WakeFlags::NONE).unwrap());
    check_invariants(&rq).unwrap();
}

/// Waking a delayed entity that became eligible in the meantime (not yet
/// picked) re-places it at V with lag 0 and a fresh request (DELAY_ZERO).
#[test]
fn wake_after_becoming_eligible_replaces_at_v() {
    let (mut rq, a, _) = with_ineligible_curr("NO_RUN_TO_PARITY", 2);
    rq.dequeue(a, D::SLEEP).unwrap();
    rq.schedule();
    // let the other run, without a pick, until a has positive lag
    let mut t = 2_000_000;
    while !rq.entity_eligible(a) || rq.entity_lag(a).unwrap() <= 0 {
        t += 50_000;
        rq.update_curr_at(t);
    }
    assert!(rq.is_delayed(a));
    rq.enqueue(a, E::WAKEUP).unwrap();
    let se = *rq.entity(a).unwrap();
    let v = rq.avg_vruntime();
    assert!(vdiff(v, se.vruntime).abs() <= 1, "placed at V");
    assert_eq!(vdiff(se.deadline, se.vruntime), 700_000, "fresh request");
    assert_eq!(rq.nr_queued(), 2);
    check_invariants(&rq).unwrap();
}

/// PELT while delayed: the entity keeps accruing load (it is queued) but
/// not runnable time (it is not runnable).
#[test]
fn delayed_entity_counts_as_load_not_runnable_in_pelt() {
    let (mut rq, a, _) = with_ineligible_curr("", 2);
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Delayed));
    let before = rq.entity(a).unwrap().avg;
    rq.schedule();
    rq.tick(3_000_000);
    assert!(rq.is_delayed(a), "still 1 ms short of eligible");
    rq.enqueue(a, E::WAKEUP).unwrap(); // brings a's PELT up to date
    let after = rq.entity(a).unwrap().avg;
    // one PELT period boundary (at 2.097 ms) was crossed: a signal that
    // stopped would have lost ~2.1%
    assert!(after.load_sum >= before.load_sum * 995 / 1000, "load keeps accruing: {} -> {}", before.load_sum, after.load_sum);
    assert!(after.runnable_sum <= before.runnable_sum * 99 / 100, "runnable decays: {} -> {}", before.runnable_sum, after.runnable_sum);
}

/// The delayed-dequeue counters (`@fw delayed`) follow what happened: a
/// sleeper 1 ms ahead of V (two nice-0 entities: a ran 2 ms, so V = 1 ms)
/// stays queued until the other has run 2.1 ms more (V past a's 2 ms;
/// at exactly 2 ms both are eligible and the other's deadline is the
/// earlier), is then picked and dequeued for good with lag <= 0
/// (DELAY_ZERO), after 2.1 ms delayed; a second sleep woken before it is paid is
/// requeued, its delay ending at the wakeup.
#[test]
fn delay_counters_follow_the_delays() {
    let (mut rq, a, others) = with_ineligible_curr("NO_PLACE_DEADLINE_INITIAL", 2);
    let b = others[0];
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Delayed));
    assert_eq!(rq.schedule(), Some(b));
    // b runs 1.9 ms: V = 1.95 ms < 2 ms, a still delayed
    rq.tick(3_900_000);
    assert_eq!(rq.schedule(), Some(b));
    assert!(rq.is_delayed(a));
    // at 4.1 ms V = 2.05 ms passed a: the pick dequeues it for good
    rq.tick(4_100_000);
    rq.schedule();
    assert!(!rq.is_delayed(a) && !rq.entity(a).unwrap().on_rq);
    let s = *rq.stats();
    assert_eq!((s.sleeps, s.delayed, s.delayed_dequeued_by_pick, s.delayed_dequeued, s.delayed_requeued), (1, 1, 1, 1, 0));
    assert_eq!((s.delayed_ns, s.delayed_max_ns), (2_100_000, 2_100_000));
    assert_eq!(s.delayed_leave_lag, rq.entity(a).unwrap().vlag);
    assert!(s.delayed_leave_lag <= 0);

    // wake a, let it run 2 ms (1 ms ahead of V) and sleep; wake it 0.5 ms later
    rq.enqueue(a, E::WAKEUP).unwrap();
    rq.set_curr(a).unwrap();
    rq.tick(6_100_000);
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Delayed));
    rq.schedule();
    rq.update_clock(6_600_000);
    rq.enqueue(a, E::WAKEUP).unwrap();
    let s = *rq.stats();
    assert_eq!((s.sleeps, s.delayed, s.delayed_requeued, s.delayed_dequeued), (2, 2, 1, 1));
    assert_eq!((s.delayed_ns, s.delayed_max_ns), (2_600_000, 2_100_000));
    check_invariants(&rq).unwrap();
}
