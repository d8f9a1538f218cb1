//! Orders of operations that must follow Linux v6.19's fair.c: each test
//! names the Linux function it pins and asserts values computed from its
//! inputs.

use crate::common;

use common::check_invariants;
use sched::balance::migrate::task_hot;
use sched::balance::snapshot::{CpuSnapshot, IdleType, TaskSnapshot};
use sched::balance::DetachParams;
use sched::time::{vdiff, Nanos};
use sched::topology::{CpuTopology, SchedDomains};
use sched::{DequeueFlags as D, DequeueOutcome, EnqueueFlags as E, EntityId, FairRq, Nice, Policy, Tunables, WakeFlags};

const MS: Nanos = 1_000_000;

fn rq(features: &str) -> FairRq {
    let mut t = Tunables::new(1);
    t.features = features.parse().unwrap();
    FairRq::new(t)
}

fn forked(rq: &mut FairRq, n: usize) -> Vec<EntityId> {
    let ids: Vec<_> = (0..n).map(|_| rq.fork(Nice::ZERO, Policy::Normal).unwrap()).collect();
    for &id in &ids {
        rq.enqueue(id, E::INITIAL).unwrap();
    }
    ids
}

fn two_cpus() -> SchedDomains {
    let cpus: Vec<CpuTopology> = (0..2)
        .map(|i| CpuTopology { cpu: i, apic_id: i as u32, smt_id: 0, core_id: i as u32, pkg_id: 0, llc_id: 0, node: 0 })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

/// Item 7, fair.c `migrate_task_rq_fair()` (`se->exec_start = 0`): a task
/// that just moved to this CPU is not cache hot here, however recently it
/// ran on the CPU it came from; `task_hot()` reads the 0 as "cold".
#[test]
fn a_migrated_task_is_not_cache_hot() {
    let mut src = rq("");
    let ids = forked(&mut src, 2);
    src.update_clock(MS);
    let a = src.schedule().unwrap();
    src.update_clock(2 * MS);
    let b = ids.into_iter().find(|&x| x != a).unwrap();
    src.set_curr(b).unwrap(); // a ran from 1 ms to 2 ms, then waits
    assert_eq!(src.entity(a).unwrap().exec_start, 2 * MS);
    src.dequeue(a, D::NONE).unwrap();
    let se = src.remove_entity(a).unwrap();

    let mut dst = rq("");
    dst.update_clock(2 * MS);
    let na = dst.add_entity(se).unwrap();
    dst.enqueue(na, E::MIGRATED).unwrap();
    let moved = dst.entity(na).unwrap();
    assert_eq!(moved.exec_start, 0, "migrate_task_rq_fair zeroes exec_start");

    // the effect: a balancer on the other CPU 0.1 ms later does not find it hot
    let sds = two_cpus();
    let snaps = [CpuSnapshot::hogs(0, 0), CpuSnapshot::hogs(1, 2)];
    let mut p = DetachParams::new(&snaps[0], &snaps[1], IdleType::NewlyIdle, &sds.per_cpu(0)[0], 0);
    p.src_clock_task = 2 * MS + 100_000;
    let mut t = TaskSnapshot::hog(1, 1);
    t.exec_start = moved.exec_start;
    assert!(!task_hot(&t, &p));
    // and the same task had it stayed (exec_start 2 ms, 0.1 ms < 0.5 ms ago) is hot
    t.exec_start = 2 * MS;
    assert!(task_hot(&t, &p));

    // once it runs on the new CPU, it has a start time there again
    dst.update_clock(3 * MS);
    assert_eq!(dst.schedule(), Some(na));
    assert_eq!(dst.entity(na).unwrap().exec_start, 3 * MS);
    check_invariants(&dst).unwrap();
}

/// A running entity `c` that has run 1 ms since it was picked, and a
/// sleeper `w` woken with an earlier deadline (both nice 0, 0.7 ms
/// slices, no initial half slice). Returns (rq, c, w).
fn sync_wakeup_setup(features: &str) -> (FairRq, EntityId, EntityId) {
    let mut rq = rq(&format!("NO_PLACE_DEADLINE_INITIAL {features}"));
    let ids = forked(&mut rq, 2);
    let c = rq.schedule().unwrap();
    let w = ids.into_iter().find(|&x| x != c).unwrap();
    // w sleeps 0.1 ms in, with lag V - v = 0.05 ms
    rq.update_clock(100_000);
    assert_eq!(rq.dequeue(w, D::SLEEP), Ok(DequeueOutcome::Dequeued));
    assert_eq!(rq.entity(w).unwrap().vlag, 50_000);
    rq.update_clock(MS);
    (rq, c, w)
}

/// Item 9, fair.c `preempt_sync()` in v6.19: the waker's run time is
/// `rq_clock_task - exec_start` after `check_preempt_wakeup_fair()`'s
/// `update_curr()`, which is 0: a sync wakeup sets the buddy but does not
/// force a reschedule, although the waker ran 1 ms (> 0.5 ms) since its
/// pick and the wakee's deadline is earlier.
#[test]
fn sync_wakeup_measures_time_since_the_last_charge() {
    let (mut rq, c, w) = sync_wakeup_setup("NEXT_BUDDY");
    rq.enqueue(w, E::WAKEUP).unwrap();
    // V = c's vruntime (1 ms) alone; w's lag 0.05 ms inflated by (W + w)/W = 2
    let (wse, cse) = (*rq.entity(w).unwrap(), *rq.entity(c).unwrap());
    assert_eq!(vdiff(cse.vruntime, wse.vruntime), 100_000);
    assert!(vdiff(cse.deadline, wse.deadline) > 0, "the wakee's deadline is earlier");
    assert!(!rq.check_preempt_wakeup(w, WakeFlags::SYNC).unwrap());
    assert!(!rq.need_resched());
    assert_eq!(rq.next_buddy(), Some(w), "the buddy decides at the next pick");
    // and the same through the combined wakeup
    let (mut rq2, _c, w2) = sync_wakeup_setup("NEXT_BUDDY");
    assert!(!rq2.wake(w2, E::WAKEUP, WakeFlags::SYNC).unwrap());
}

/// Item 11(a), fair.c `requeue_delayed_entity()` (via `enqueue_task_fair()`
/// with `ENQUEUE_DELAYED`): the wakeup of a delayed entity does not charge
/// the running entity before it recomputes the lag (DELAY_ZERO), so a
/// delayed entity whose lag is still negative at the uncharged V stays
/// where it is; the charge comes with the preemption check after.
#[test]
fn requeue_of_a_delayed_entity_does_not_charge_the_running_one_first() {
    for combined in [false, true] {
        let mut rq = rq("NO_PLACE_DEADLINE_INITIAL");
        let ids = forked(&mut rq, 2);
        let a = rq.schedule().unwrap();
        let b = ids.into_iter().find(|&x| x != a).unwrap();
        // a runs 0.6 ms (0.3 ms ahead of V) and sleeps: delayed
        rq.update_clock(600_000);
        assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Delayed));
        assert_eq!(rq.schedule(), Some(b));
        let va = rq.entity(a).unwrap().vruntime;
        // b is charged at 0.8 ms (vruntime 0.2 ms), then runs on to 1.3 ms
        rq.update_clock(800_000);
        rq.update_curr();
        rq.update_clock(1_300_000);
        // uncharged: b's vruntime 0.2 ms, V = 0.4 ms < 0.6 ms: a is not eligible
        // charged: b's vruntime 0.7 ms, V = 0.65 ms > 0.6 ms: a would be re-placed
        let preempt = if combined {
            rq.wake(a, E::WAKEUP, WakeFlags::NONE).unwrap()
        } else {
            rq.enqueue(a, E::WAKEUP).unwrap();
            rq.check_preempt_wakeup(a, WakeFlags::NONE).unwrap()
        };
        assert_eq!(rq.entity(a).unwrap().vruntime, va, "combined {combined}: left in place");
        assert!(!rq.is_delayed(a));
        // the preemption check charged b afterwards
        assert_eq!(rq.entity(b).unwrap().sum_exec_runtime, 700_000);
        let _ = preempt;
        check_invariants(&rq).unwrap();
    }
}
/// Three nice-0 entities without the initial half slice; the first picked
/// runs `ran` ns and is switched away from by `set_curr` of the second.
/// Returns (rq, the one that ran and now waits, the running one, the third).
fn ran_then_waits(features: &str, ran: Nanos) -> (FairRq, EntityId, EntityId, EntityId) {
    let mut rq = rq(&format!("NO_PLACE_DEADLINE_INITIAL {features}"));
    let ids = forked(&mut rq, 3);
    let x = rq.schedule().unwrap();
    let rest: Vec<_> = ids.into_iter().filter(|&e| e != x).collect();
    rq.update_clock(ran);
    rq.set_curr(rest[0]).unwrap();
    (rq, x, rest[0], rest[1])
}

fn vslice(rq: &FairRq, slice: Nanos, nice: i32) -> u64 {
    sched::weight::calc_delta_fair_with(rq.tunables().delta_math, slice, Nice::clamped(nice).weight())
}

/// Item 11(b), core.c `set_user_nice()`: the task is dequeued (not a
/// sleep) before `reweight_entity()`, so with NO_PLACE_REL_DEADLINE its
/// deadline is not kept relative and the re-placement gives it a fresh
/// request at the new weight; with PLACE_REL_DEADLINE the remaining
/// request is kept, rescaled by w_old/w_new.
#[test]
fn renice_of_a_waiting_task_without_rel_deadline_gets_a_fresh_request() {
    let (mut rq, x, _, _) = ran_then_waits("NO_PLACE_REL_DEADLINE", 300_000);
    rq.reweight(x, Nice::clamped(-5)).unwrap();
    let se = *rq.entity(x).unwrap();
    assert_eq!(se.w(), 3121);
    assert_eq!(vdiff(se.deadline, se.vruntime) as u64, vslice(&rq, 700_000, -5), "fresh 0.7 ms request at weight 3121");
    check_invariants(&rq).unwrap();

    // PLACE_REL_DEADLINE: the 0.4 ms left of its request, scaled by 1024/3121
    let (mut rq, x, _, _) = ran_then_waits("", 300_000);
    rq.reweight(x, Nice::clamped(-5)).unwrap();
    let se = *rq.entity(x).unwrap();
    assert_eq!(vdiff(se.deadline, se.vruntime), 400_000 * 1024 / 3121);
    check_invariants(&rq).unwrap();
}

/// Item 11(d) and item 9's reweight of the running entity, core.c
/// `set_user_nice()`: the running task is put back and set running again
/// (`put_prev_task()` / `set_next_task()`), so its protection is
/// recomputed from its rescaled deadline (`set_protect_slice()`), not kept
/// at the old, unscaled end; and a lower priority of the running task asks
/// for a reschedule (fair.c `prio_changed_fair()`).
#[test]
fn renice_of_the_running_task_recomputes_its_protection() {
    let (mut rq, _, c, _) = ran_then_waits("", 300_000);
    rq.update_clock(500_000); // c has run 0.2 ms of its 0.7 ms request
    let before = *rq.entity(c).unwrap();
    assert_eq!(before.vprot, before.deadline);
    rq.reweight(c, Nice::clamped(5)).unwrap();
    let se = *rq.entity(c).unwrap();
    assert_eq!(rq.curr(), Some(c));
    assert_eq!(vdiff(se.deadline, se.vruntime), 500_000 * 1024 / 335, "the rest of its request, rescaled");
    assert_eq!(se.vprot, se.deadline, "protection to its new deadline");
    assert_eq!(se.exec_start, 500_000);
    assert_eq!(se.prev_sum_exec_runtime, se.sum_exec_runtime);
    assert!(rq.need_resched(), "its priority went down");
    check_invariants(&rq).unwrap();

    // a higher priority of the running task asks for nothing
    let (mut rq, _, c, _) = ran_then_waits("", 300_000);
    rq.update_clock(500_000);
    rq.reweight(c, Nice::clamped(-5)).unwrap();
    assert!(!rq.need_resched());
    let se = *rq.entity(c).unwrap();
    assert_eq!(se.vprot, se.deadline);
}

/// Item 11(c), core.c `__sched_setscheduler()` with `__setscheduler_params()`:
/// a slice change dequeues the task (its lag saved and clamped with the
/// old slice's bound) and re-places it; in place, a lag beyond the bound
/// would survive.
#[test]
fn slice_change_of_a_waiting_task_re_places_it_with_its_lag_clamped() {
    let mut rq = rq("NO_PLACE_DEADLINE_INITIAL");
    let ids = forked(&mut rq, 2);
    let hog = rq.schedule().unwrap();
    let x = ids.into_iter().find(|&e| e != hog).unwrap();
    rq.set_slice(hog, 10_000_000).unwrap();
    rq.update_curr_at(6_000_000);
    // V = 3 ms, x at 0: lag 3 ms, beyond max(2 · 0.7 ms, 1 ms tick) = 1.4 ms
    assert_eq!(vdiff(rq.avg_vruntime(), rq.entity(x).unwrap().vruntime), 3_000_000);
    rq.set_slice(x, 200_000).unwrap();
    let se = *rq.entity(x).unwrap();
    assert_eq!((se.slice, se.custom_slice), (200_000, true));
    // re-placed at V of the others (the hog at 6 ms) minus 1.4 ms · (W + w)/W
    assert_eq!(vdiff(rq.entity(hog).unwrap().vruntime, se.vruntime), 2_800_000);
    assert_eq!(vdiff(rq.avg_vruntime(), se.vruntime), 1_400_000);
    // the relative deadline is kept: the new size applies from its next request
    check_invariants(&rq).unwrap();
}

/// Item 9, fair.c `set_preempt_buddy()`: a sync wakeup consults
/// `preempt_sync()` only when the wakee became the buddy; when an earlier
/// buddy is kept, the EEVDF pick decides. Here the kept buddy `x` and the
/// running `c` are not eligible, so the pick is the wakee `w` and it
/// preempts (`preempt_sync()` would have said no: `w`'s deadline is not
/// before `c`'s).
#[test]
fn sync_wakeup_with_a_kept_buddy_is_decided_by_the_pick() {
    let mut rq = rq("NEXT_BUDDY NO_PREEMPT_SHORT NO_DELAY_DEQUEUE NO_PLACE_DEADLINE_INITIAL");
    let ids: Vec<_> = (0..3).map(|_| rq.fork(Nice::ZERO, Policy::Normal).unwrap()).collect();
    rq.set_slice(ids[1], 3 * MS).unwrap();
    rq.set_slice(ids[2], 3 * MS).unwrap();
    for &id in &ids {
        rq.enqueue(id, E::INITIAL).unwrap();
    }
    // x (0.7 ms request, the earliest deadline) runs 0.06 ms and sleeps
    let x = rq.schedule().unwrap();
    assert_eq!(x, ids[0]);
    rq.update_clock(60_000);
    assert_eq!(rq.dequeue(x, D::SLEEP), Ok(DequeueOutcome::Dequeued));
    assert_eq!(rq.entity(x).unwrap().vlag, -40_000);
    let c = rq.schedule().unwrap();
    let w = if c == ids[1] { ids[2] } else { ids[1] };
    // c runs 1 ms; x wakes 0.06 ms right of V and becomes the buddy
    rq.update_clock(1_060_000);
    rq.enqueue(x, E::WAKEUP).unwrap();
    assert!(!rq.check_preempt_wakeup(x, WakeFlags::NONE).unwrap());
    assert_eq!(rq.next_buddy(), Some(x));
    assert!(!rq.entity_eligible(x) && !rq.entity_eligible(c));
    // w sleeps and wakes (sync) with a fresh 3 ms request: x's deadline is earlier
    assert_eq!(rq.dequeue(w, D::SLEEP), Ok(DequeueOutcome::Dequeued));
    rq.enqueue(w, E::WAKEUP).unwrap();
    assert!(vdiff(rq.entity(w).unwrap().deadline, rq.entity(x).unwrap().deadline) > 0);
    assert!(rq.check_preempt_wakeup(w, WakeFlags::SYNC).unwrap(), "the pick is w");
    assert_eq!(rq.next_buddy(), Some(x), "the earlier buddy is kept");
    check_invariants(&rq).unwrap();
}

/// Item 9, UTIL_EST (fair.c `util_est_enqueue()`, `util_est_dequeue()`,
/// `util_est_update()`, v6.19): a task's EWMA follows its `util_avg` at
/// its sleeps (up at once, down a quarter of the way), and the queue's
/// `util_est` is the sum of its runnable tasks' EWMAs: it keeps the
/// estimate of a task that is awake though its `util_avg` decayed while it
/// slept. NO_UTIL_EST keeps the sums at 0.
#[test]
fn util_est_follows_the_sleeps() {
    use sched::pelt::UTIL_AVG_UNCHANGED;
    let mut rq = rq("");
    let a = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    rq.enqueue(a, E::INITIAL).unwrap();
    let ewma0 = rq.entity(a).unwrap().avg.util_est;
    assert_eq!(ewma0, 0);
    assert_eq!(rq.pelt().util_est, 0);
    rq.schedule();
    rq.tick(100 * MS);
    // it sleeps after 100 ms of running: the EWMA jumps to its util_avg
    let util = rq.entity(a).unwrap().avg.util_avg;
    assert!(util > 800, "util_avg {util} after 100 ms running");
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Dequeued));
    rq.schedule();
    assert_eq!(rq.entity(a).unwrap().avg.util_est, util | UTIL_AVG_UNCHANGED);
    assert_eq!(rq.pelt().util_est, 0, "nothing runnable");
    // 60 ms asleep: util_avg decays, the queue's estimate is the EWMA once it wakes
    rq.update_clock(160 * MS);
    rq.enqueue(a, E::WAKEUP).unwrap();
    assert_eq!(rq.pelt().util_est, util);
    rq.schedule();
    rq.tick(161 * MS);
    let se = *rq.entity(a).unwrap();
    assert!(se.avg.util_avg + 10 < util, "decayed: {} vs {util}", se.avg.util_avg);
    // it sleeps again after 1 ms: a quarter of the way down
    assert_eq!(rq.dequeue(a, D::SLEEP), Ok(DequeueOutcome::Dequeued));
    let dequeued = se.avg.util_avg;
    assert!(dequeued + 10 >= se.avg.runnable_avg, "not contended");
    let want = ((util << 2) - (util - dequeued)) >> 2;
    assert_eq!(rq.entity(a).unwrap().avg.util_est, want | UTIL_AVG_UNCHANGED);
    assert_eq!(rq.pelt().util_est, 0);

    let mut rq = self::rq("NO_UTIL_EST");
    let a = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    rq.enqueue(a, E::INITIAL).unwrap();
    rq.schedule();
    rq.tick(100 * MS);
    rq.dequeue(a, D::SLEEP).unwrap();
    rq.schedule();
    rq.enqueue(a, E::WAKEUP).unwrap();
    assert_eq!((rq.pelt().util_est, rq.entity(a).unwrap().avg.util_est), (0, 0));
}

/// The running entity `c` of [`ran_then_waits`] (x ran 0.3 ms first) has
/// run `ran` ns of its 0.7 ms request, uncharged (no tick came): returns
/// (rq, x waiting, c running, t waiting). After 0.8 ms its request and its
/// protection (RUN_TO_PARITY: the whole request, all slices equal) are
/// used up, which only its next charge notices.
fn curr_ran(ran: Nanos) -> (FairRq, EntityId, EntityId, EntityId) {
    let (mut rq, x, c, t) = ran_then_waits("", 300_000);
    rq.update_clock(300_000 + ran);
    assert!(!rq.need_resched());
    (rq, x, c, t)
}

/// The attribute changes below, each at the running entity's protection
/// ran out (`expired`) and inside it: core.c `set_user_nice()` and
/// `__sched_setscheduler()` dequeue the task (`DEQUEUE_SAVE`), and fair.c
/// `dequeue_entity()` starts with `update_curr()`, which asks for a
/// reschedule when more than one entity is queued and the running one's
/// request or protection is used up. That request stands: after the
/// change the CPU picks again, and goes to the earliest eligible deadline
/// (`t`: deadline 0.7 ms like x's, and x's is moved later or x is the
/// running one's peer in the tie; `c` ran ahead of V).
fn change_asks_for_the_pick(what: &str, change: impl Fn(&mut FairRq, EntityId, EntityId)) {
    // inside the protection (0.2 ms of 0.7 ms): nothing to ask for
    let (mut rq, x, c, _) = curr_ran(200_000);
    change(&mut rq, x, c);
    assert!(!rq.need_resched(), "{what}: the running entity is inside its protection");
    assert_eq!(rq.curr(), Some(c));
    check_invariants(&rq).unwrap();

    // past it (0.8 ms): the charge of the change asks for the pick
    let (mut rq, x, c, t) = curr_ran(800_000);
    change(&mut rq, x, c);
    assert!(rq.need_resched(), "{what}: update_curr() of the dequeue asked for a reschedule");
    assert_eq!(rq.entity(c).unwrap().sum_exec_runtime, 800_000, "{what}: charged up to the change");
    check_invariants(&rq).unwrap();
    assert_eq!(rq.schedule(), Some(t), "{what}: the earliest eligible deadline runs");
}

/// core.c `set_user_nice()` of the running task, to a higher priority (so
/// fair.c `prio_changed_fair()` asks for nothing itself).
#[test]
fn renice_of_the_running_task_past_its_protection_asks_for_a_reschedule() {
    change_asks_for_the_pick("renice of curr", |rq, _x, c| rq.reweight(c, Nice::clamped(-5)).unwrap());
}

/// core.c `set_user_nice()` of a waiting task, to a lower priority (its
/// wakeup-preemption check, fair.c `prio_changed_fair()`, does not pick it).
#[test]
fn renice_of_a_waiting_task_past_the_running_protection_asks_for_a_reschedule() {
    change_asks_for_the_pick("renice of a waiting task", |rq, x, _c| rq.reweight(x, Nice::clamped(5)).unwrap());
}

/// core.c `__sched_setscheduler()` (`__setparam_fair()`) of the running
/// task's slice.
#[test]
fn slice_change_of_the_running_task_past_its_protection_asks_for_a_reschedule() {
    change_asks_for_the_pick("slice of curr", |rq, _x, c| rq.set_slice(c, 3 * MS).unwrap());
}

/// core.c `__sched_setscheduler()` (`__setparam_fair()`) of a waiting
/// task's slice.
#[test]
fn slice_change_of_a_waiting_task_past_the_running_protection_asks_for_a_reschedule() {
    change_asks_for_the_pick("slice of a waiting task", |rq, x, _c| rq.set_slice(x, 2 * MS).unwrap());
}

/// core.c `set_user_nice()` returns before it locks anything when the nice
/// level does not change, and `__sched_setscheduler()` when the requested
/// runtime is the task's slice (`attr->sched_runtime != p->se.slice` sends
/// it to the change): nothing is dequeued, the running entity is not
/// charged, no reschedule is asked for, and a base slice asked for by
/// value stays the base slice (not custom).
#[test]
fn an_attribute_change_to_the_same_value_touches_nothing() {
    let (mut rq, x, c, _) = curr_ran(800_000);
    let before: Vec<_> = [x, c].iter().map(|&e| *rq.entity(e).unwrap()).collect();
    rq.reweight(x, Nice::ZERO).unwrap();
    rq.reweight(c, Nice::ZERO).unwrap();
    rq.set_slice(x, 700_000).unwrap();
    rq.set_slice(c, 700_000).unwrap();
    let after: Vec<_> = [x, c].iter().map(|&e| *rq.entity(e).unwrap()).collect();
    assert_eq!(before, after, "not re-placed, not charged");
    assert!(!after[0].custom_slice && !after[1].custom_slice);
    assert!(!rq.need_resched());
    check_invariants(&rq).unwrap();
}

/// core.c `set_user_nice()` of a `SCHED_IDLE` task changes its nice level
/// under the same protocol as any fair task (`set_load_weight()` keeps
/// its weight at `WEIGHT_IDLEPRIO`): the dequeue charges the running
/// entity, whose used-up protection asks for a reschedule.
#[test]
fn renice_of_a_sched_idle_task_dequeues_it_as_any_other() {
    let mut rq = rq("NO_PLACE_DEADLINE_INITIAL");
    let c = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    let t = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    let i = rq.fork(Nice::ZERO, Policy::Idle).unwrap();
    for id in [c, t, i] {
        rq.enqueue(id, E::INITIAL).unwrap();
    }
    assert_eq!(rq.schedule(), Some(c));
    rq.update_clock(800_000);
    rq.reweight(i, Nice::clamped(5)).unwrap();
    let se = *rq.entity(i).unwrap();
    assert_eq!((se.nice, se.w()), (Nice::clamped(5), 3), "the nice level changes, the weight stays");
    assert_eq!(rq.entity(c).unwrap().sum_exec_runtime, 800_000, "the running entity was charged");
    assert!(rq.need_resched(), "its used-up protection asks for a reschedule");
    check_invariants(&rq).unwrap();
    assert_eq!(rq.schedule(), Some(t));
}
