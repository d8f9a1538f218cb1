//! Moving tasks from a busiest CPU to the balancing CPU (Linux's
//! `detach_tasks` + `attach_tasks`), under both runqueue locks taken in
//! CPU order. Only queued, not running, not delayed entities move (the
//! policy crate's `can_migrate_task` says which); a moved task keeps its
//! `Task` and gets a new entity handle on the destination.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use sched::balance::migrate::{Detach, DetachCursor, DetachOutcome, DetachParams};
use sched::balance::{Migration, TaskSnapshot};
use sched::{DequeueFlags, EnqueueFlags, EntityId, WakeFlags};

use crate::rq::{self, Rq};
use crate::task::Task;

/// The balancer's view of a queued task of `rq`.
pub fn task_snapshot(rq: &Rq, eid: u32, t: &Task) -> Option<TaskSnapshot> {
    let e = EntityId(eid);
    let se = rq.fair.entity(e)?;
    if !se.on_rq {
        return None;
    }
    Some(TaskSnapshot {
        id: t.id as u64,
        weight: se.w(),
        load_avg: se.avg.load_avg,
        // fair.c: detach_tasks() measures a migrate_util or misfit task by
        // task_util_est(), not util_avg alone.
        util: sched::pelt::task_util_est(&se.avg),
        allowed: t.affinity.load(),
        running: rq.fair.curr() == Some(e),
        delayed: se.sched_delayed,
        per_cpu_kthread: false,
        idle_policy: false,
        ineligible: !rq.fair.entity_eligible(e),
        exec_start: se.exec_start,
        prev_cpu: rq.cpu,
        recent_used_cpu: None,
        wakee_flips: t.wakee.lock().wakee_flips,
        next_buddy: rq.fair.next_buddy() == Some(e),
    })
}

/// Pulls tasks from `src` to `dst` as `migration` asks; returns what moved.
pub fn pull_tasks(dst: usize, src: usize, params: &DetachParams, migration: Migration) -> DetachOutcome {
    let (mut d, mut s) = rq::lock_two(dst, src);
    s.update_clock();
    d.update_clock();
    // Each detach charges src's running task first (fair.c: dequeue_entity()'s
    // update_curr()), which asks src to reschedule if that task's request or
    // protection is used up: forwarded below, as resched_curr_lazy() does.
    let src_asked = s.fair.need_resched();
    let mut params = *params;
    params.src_clock_task = s.fair.clock();
    params.src_nr_running = s.fair.nr_queued();
    let mut cursor = DetachCursor::new(&params, migration);
    // From the tail of cfs_tasks: the task least recently queued or run
    // (fair.c: detach_tasks()). One task at a time: taking one only empties
    // its own slot, and the cursor may stop long before the list ends (no
    // list of every task, allocated under two locks).
    let mut walk = s.order.from_tail();
    let mut last = None;
    while let Some(i) = walk.next(&s.order, |i| s.tasks.get(i).is_some_and(|t| t.is_some())) {
        let Some(t) = s.tasks[i].clone() else { continue };
        let eid = i as u32;
        let Some(snap) = task_snapshot(&s, eid, &t) else { continue };
        match cursor.consider(&snap) {
            Detach::Take => {
                last = move_task(&mut s, &mut d, eid, &t).or(last);
                if cursor.stop_after_take().is_some() {
                    break;
                }
            }
            // Skipped: rotated to the head (not visited again by this walk).
            Detach::Skip(_) => s.order.to_head(i),
            Detach::Stop(_) => break,
        }
    }
    let out = cursor.outcome();
    if out.moved > 0 {
        super::snapshot::publish(&s);
        super::snapshot::publish(&d);
        // The last task attached asks whether to preempt (attach_task()).
        let preempt = d.curr.is_idle
            || last.is_some_and(|e| d.fair.check_preempt_wakeup(e, WakeFlags::NONE).unwrap_or(false));
        let src_resched = !src_asked && s.fair.need_resched();
        drop(s);
        drop(d);
        if preempt {
            crate::resched::resched_cpu(dst);
        }
        if src_resched {
            crate::resched::resched_cpu(src);
        }
    }
    out
}

/// Moves queued entity `eid` (task `t`) from `s` to `d`; returns its new
/// entity on `d` (None if it could not be dequeued).
fn move_task(s: &mut Rq, d: &mut Rq, eid: u32, t: &Arc<Task>) -> Option<EntityId> {
    let e = EntityId(eid);
    if s.fair.dequeue(e, DequeueFlags::NONE).is_err() {
        return None;
    }
    let se = match s.fair.remove_entity(e) {
        Ok(se) => se,
        Err(err) => panic!("balance: cannot detach {} from CPU {}: {}", t.name, s.cpu, err),
    };
    s.detach(eid);
    let ne = match d.fair.add_entity(se) {
        Ok(ne) => ne,
        Err(err) => panic!("balance: cannot attach {} to CPU {}: {}", t.name, d.cpu, err),
    };
    d.attach(ne.0, t.clone());
    if let Err(err) = d.fair.enqueue(ne, EnqueueFlags::MIGRATED) {
        panic!("balance: enqueue of {} on CPU {}: {}", t.name, d.cpu, err);
    }
    t.stats.nr_migrations.fetch_add(1, Ordering::Relaxed);
    t.stats.queued_at.set(d, d.clock);
    crate::trace::record(d.clock, || crate::trace::Event::Migrate { pid: t.id, from: s.cpu as u32, to: d.cpu as u32 });
    Some(ne)
}
