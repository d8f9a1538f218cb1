//! Unit tests of the run-queue operations (scenario and property tests are
//! in `tests/`).

use crate::entity::{EntityId, Policy};
use crate::fair_rq::{DequeueFlags as D, DequeueOutcome, EnqueueFlags as E, FairRq, SchedError, WakeFlags};
use crate::features::Feature;
use crate::time::vdiff;
use crate::tunables::Tunables;
use crate::weight::Nice;

fn rq_with(n: usize, nice: i32) -> (FairRq, alloc::vec::Vec<EntityId>) {
    let mut rq = FairRq::new(Tunables::new(1));
    let ids: alloc::vec::Vec<_> = (0..n).map(|_| rq.fork(Nice::clamped(nice), Policy::Normal).unwrap()).collect();
    for &id in &ids {
        rq.enqueue(id, E::INITIAL).unwrap();
    }
    (rq, ids)
}

#[test]
fn accounting_follows_enqueue_and_dequeue() {
    let (mut rq, ids) = rq_with(3, 0);
    assert_eq!(rq.nr_queued(), 3);
    assert_eq!(rq.h_nr_runnable(), 3);
    assert_eq!(rq.load_weight(), 3 * 1024);
    assert_eq!(rq.avg_sums().sum_weight(), 3 * 1024);
    let first = rq.schedule().unwrap();
    assert_eq!(rq.curr(), Some(first));
    assert_eq!(rq.avg_sums().sum_weight(), 2 * 1024, "curr is out of the sums");
    assert_eq!(rq.nr_queued(), 3);
    rq.dequeue(ids[1], D::NONE).unwrap();
    assert_eq!(rq.nr_queued(), 2);
    assert_eq!(rq.load_weight(), 2 * 1024);
    rq.check_tree().unwrap();
}

#[test]
fn bad_handles_and_states_are_errors() {
    let (mut rq, ids) = rq_with(1, 0);
    let bogus = EntityId(77);
    assert_eq!(rq.enqueue(bogus, E::NONE), Err(SchedError::NoSuchEntity(bogus)));
    assert_eq!(rq.enqueue(ids[0], E::NONE), Err(SchedError::AlreadyQueued(ids[0])));
    assert_eq!(rq.remove_entity(ids[0]).unwrap_err(), SchedError::Busy(ids[0]));
    assert_eq!(rq.dequeue(ids[0], D::SLEEP), Ok(DequeueOutcome::Dequeued));
    assert_eq!(rq.dequeue(ids[0], D::SLEEP), Err(SchedError::NotQueued(ids[0])));
    assert_eq!(rq.set_curr(ids[0]), Err(SchedError::NotQueued(ids[0])));
    assert!(rq.check_preempt_wakeup(bogus, WakeFlags::NONE).is_err());
    assert!(rq.remove_entity(ids[0]).is_ok());
    assert!(rq.entity(ids[0]).is_none());
    assert_eq!(rq.reweight(ids[0], Nice::MIN), Err(SchedError::NoSuchEntity(ids[0])));
    // the freed slot is reused
    assert_eq!(rq.fork(Nice::ZERO, Policy::Normal).unwrap(), ids[0]);
}

#[test]
fn new_task_gets_half_a_request() {
    let (rq, ids) = rq_with(1, 0);
    let se = rq.entity(ids[0]).unwrap();
    assert_eq!(vdiff(se.deadline, se.vruntime), 350_000);
    let mut t = Tunables::new(1);
    t.features.set(Feature::PlaceDeadlineInitial, false);
    let mut rq = FairRq::new(t);
    let id = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    rq.enqueue(id, E::INITIAL).unwrap();
    let se = rq.entity(id).unwrap();
    assert_eq!(vdiff(se.deadline, se.vruntime), 700_000);
}

#[test]
fn placement_preserves_saved_lag() {
    let (mut rq, ids) = rq_with(4, 0);
    let a = rq.schedule().unwrap();
    rq.update_curr_at(600_000);
    rq.schedule();
    // a ran 0.6 ms: negative lag; take it off as a migration and put it back
    rq.dequeue(a, D::NONE).unwrap();
    let saved = rq.entity(a).unwrap().vlag;
    assert!(saved < 0);
    rq.enqueue(a, E::MIGRATED).unwrap();
    let lag_after = vdiff(rq.avg_vruntime(), rq.entity(a).unwrap().vruntime);
    assert!((lag_after - saved).abs() <= 1, "saved {saved}, after {lag_after}");
    let _ = ids;
}

#[test]
fn reweight_preserves_lag_and_relative_deadline() {
    let (mut rq, ids) = rq_with(3, 0);
    rq.schedule();
    rq.update_curr_at(500_000);
    rq.schedule();
    for &id in &ids {
        let lag_before = rq.entity_lag(id).unwrap();
        rq.reweight(id, Nice::clamped(-7)).unwrap();
        let lag_after = rq.entity_lag(id).unwrap();
        // lag is w·(V - v): weighted units; rounding costs at most one
        // virtual ns per unit of weight, plus the shift of V itself
        let tol = 3 * 4904 + 3 * 1024;
        assert!((lag_after - lag_before).abs() <= tol, "{id:?}: {lag_before} -> {lag_after}");
        assert_eq!(rq.entity(id).unwrap().w(), 4904);
        rq.check_tree().unwrap();
    }
    assert_eq!(rq.load_weight(), 3 * 4904);
}

#[test]
fn yield_skips_the_rest_of_the_request() {
    let (mut rq, _ids) = rq_with(2, 0);
    let a = rq.schedule().unwrap();
    let before = *rq.entity(a).unwrap();
    rq.yield_curr();
    let after = rq.entity(a).unwrap();
    assert_eq!(after.vruntime, before.deadline);
    assert_eq!(vdiff(after.deadline, after.vruntime), 700_000);
    assert!(rq.need_resched());
    assert_ne!(rq.schedule(), Some(a));
}

#[test]
fn custom_slice_is_clamped_and_propagated() {
    let (mut rq, ids) = rq_with(3, 0);
    rq.set_slice(ids[2], 10).unwrap();
    assert_eq!(rq.entity(ids[2]).unwrap().slice, 100_000);
    assert_eq!(rq.cfs_rq_min_slice(), 100_000);
    rq.check_tree().unwrap();
    rq.set_slice(ids[2], 0).unwrap();
    assert!(!rq.entity(ids[2]).unwrap().custom_slice);
    assert_eq!(rq.cfs_rq_min_slice(), 700_000);
}

#[test]
fn sleeping_while_ineligible_is_delayed_then_finished_by_pick() {
    let (mut rq, ids) = rq_with(2, 0);
    let a = rq.schedule().unwrap();
    rq.update_curr_at(1_000_000); // a ran ahead: not eligible
    assert!(!rq.entity_eligible(a));
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Delayed));
    assert_eq!((rq.nr_queued(), rq.h_nr_runnable(), rq.load_weight()), (2, 1, 2048));
    let b = rq.schedule().unwrap();
    assert_ne!(b, a);
    assert!(rq.is_delayed(a));
    // b runs until a becomes eligible and is picked: a is then dequeued for good
    let mut t = 1_000_000;
    while rq.is_delayed(a) {
        t += 1_000_000;
        rq.tick(t);
        assert_eq!(rq.schedule(), Some(b));
    }
    assert_eq!((rq.nr_queued(), rq.h_nr_runnable()), (1, 1));
    let se = rq.entity(a).unwrap();
    assert!(!se.on_rq && se.vlag <= 0, "DELAY_ZERO: no positive lag after delay");
    let _ = ids;
}

#[test]
fn saved_lag_is_clamped_to_the_bound() {
    // a long-request entity runs 50 ms while a short-request one waits far
    // longer than its own bound max(2·0.1 ms, tick) = 1 ms of service
    let (mut rq, ids) = rq_with(2, 0);
    rq.set_slice(ids[0], 100_000_000).unwrap();
    rq.set_slice(ids[1], 100_000).unwrap();
    let first = rq.schedule().unwrap();
    let (long, short) = if first == ids[0] { (ids[0], ids[1]) } else { (ids[1], ids[0]) };
    if first != long {
        rq.dequeue(short, D::NONE).unwrap();
        rq.schedule();
        rq.enqueue(short, E::NONE).unwrap();
    }
    assert_eq!(rq.curr(), Some(long));
    rq.update_curr_at(50_000_000);
    let true_lag = vdiff(rq.avg_vruntime(), rq.entity(short).unwrap().vruntime);
    assert!(true_lag > 10_000_000, "it is owed far more than the bound: {true_lag}");
    rq.dequeue(short, D::SLEEP).unwrap();
    assert_eq!(rq.entity(short).unwrap().vlag, 1_000_000, "clamped to calc_delta_fair(1 ms)");
}

#[test]
fn run_to_parity_protects_the_whole_request() {
    // two nice-0 entities with 2.8 ms requests (8 CPUs); the running one is
    // asked to reschedule only at the end of its request with RUN_TO_PARITY,
    // and after one normalized base slice (0.7 ms) without it
    for (features, expect) in [("", 2_800_000u64), ("NO_RUN_TO_PARITY", 700_000)] {
        let mut t = Tunables::new(8);
        t.features = features.parse().unwrap();
        let mut rq = FairRq::new(t);
        for _ in 0..2 {
            let id = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
            rq.enqueue(id, E::NONE).unwrap();
        }
        let a = rq.schedule().unwrap();
        let mut now = 0;
        while !rq.tick(now + 50_000) {
            now += 50_000;
            assert!(now < 10_000_000);
        }
        assert_eq!(now + 50_000, expect, "{features}");
        assert_eq!(rq.curr(), Some(a));
    }
}

/// A wakeup that finds its entity still queued and not running (the
/// kernel's task preempted after it set itself sleeping, before it could
/// block) asks only `check_preempt_wakeup`: no enqueue, the entity and the
/// queue's counts unchanged, and the answer a fresh enqueue would get. Here
/// the waiting entity has the shorter slice: not eligible yet, it waits;
/// once the hog has run past it, it preempts. The running entity never
/// preempts itself.
#[test]
fn check_preempt_of_a_queued_waiting_entity() {
    let mut rq = FairRq::new(Tunables::new(1));
    let hog = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    rq.set_slice(hog, 3_000_000).unwrap();
    let short = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    rq.enqueue(hog, E::INITIAL).unwrap();
    rq.enqueue(short, E::INITIAL).unwrap();
    // short runs first (earlier deadline) until its request is used up,
    // then the hog: short waits, queued, with negative lag
    assert_eq!(rq.schedule(), Some(short));
    assert!(rq.update_curr_at(400_000));
    assert_eq!(rq.schedule(), Some(hog));
    assert!(!rq.entity_eligible(short));
    assert!(!rq.check_preempt_wakeup(short, WakeFlags::NONE).unwrap());
    assert!(!rq.need_resched());
    // the hog runs (inside its request) until short is eligible again
    assert!(!rq.update_curr_at(900_000));
    assert!(rq.entity_eligible(short));
    let before = *rq.entity(short).unwrap();
    let counts = (rq.nr_queued(), rq.load_weight(), rq.h_nr_runnable());
    assert!(!rq.check_preempt_wakeup(hog, WakeFlags::NONE).unwrap());
    assert!(rq.check_preempt_wakeup(short, WakeFlags::NONE).unwrap());
    assert!(rq.need_resched());
    let after = *rq.entity(short).unwrap();
    assert!(after.on_rq && !after.sched_delayed);
    assert_eq!((after.vruntime, after.deadline), (before.vruntime, before.deadline));
    assert_eq!((rq.nr_queued(), rq.load_weight(), rq.h_nr_runnable()), counts);
    assert_eq!(rq.schedule(), Some(short));
    rq.check_tree().unwrap();
}
