//! The per-CPU wake lists: a remote wakeup's push and the IPI that kicks
//! the list's CPU (core.c `__ttwu_queue_wakelist()`), and that CPU's drain
//! of it whole, moves first, then plain wakeups oldest first
//! (`sched_ttwu_pending()`); tasks that change CPU (a wakeup's move, a
//! migration, an affinity change) travel the same lists with their entity.
//! The protocol around them is the parent module's.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use sched::{EnqueueFlags, EntityId, SchedEntity, WakeFlags};

use super::{activate, trace_enqueue};
use crate::platform::cpu_id;
use crate::resched;
use crate::rq::{self, Rq, WakeMove as Move, WAKE_NIL};
use crate::task::Task;

/// Queues the plain wakeup of `p` (its entity stays in `target`'s
/// runqueue) on `target`'s wake list, lock-free; the IPI goes out only when
/// the list was empty (core.c: `__ttwu_queue_wakelist()`).
#[inline(always)]
pub(super) fn push_remote_wake(target: usize, p: &Task, flags: WakeFlags) {
    let was_empty = rq::wake_list(target).push_wake(p, flag_bits(flags));
    // The exchange took the head's line from `target` (a simulated CPU pays for it).
    crate::platform::remote_access(target, crate::platform::RemoteAccess::WakeListPush);
    kick_wake_list(target, was_empty);
}

/// Queues a task that brings its entity on `target`'s wake list.
fn push_remote_move(target: usize, item: Move) {
    let was_empty = rq::wake_list(target).push_move(item);
    kick_wake_list(target, was_empty);
}

/// Sends `target` the IPI for its wake list if the push found it empty and
/// `target` does not poll for it.
#[inline(always)]
fn kick_wake_list(target: usize, was_empty: bool) {
    if was_empty && !crate::resched::notices_without_ipi(target) {
        crate::resched::send_resched_ipi(target);
    }
}

/// The wake flags as the 32 bits a wake-list entry keeps (`rq::WakeList`).
#[inline(always)]
fn flag_bits(f: WakeFlags) -> u32 {
    u32::from(f.contains(WakeFlags::FORK))
        | u32::from(f.contains(WakeFlags::SYNC)) << 1
        | u32::from(f.contains(WakeFlags::RQ_SELECTED)) << 2
}

/// The wake flags [`flag_bits`] encoded.
#[inline(always)]
fn flags_of_bits(b: u32) -> WakeFlags {
    let mut f = WakeFlags::NONE;
    if b & 1 != 0 {
        f = f | WakeFlags::FORK;
    }
    if b & 2 != 0 {
        f = f | WakeFlags::SYNC;
    }
    if b & 4 != 0 {
        f = f | WakeFlags::RQ_SELECTED;
    }
    f
}

/// Drains this CPU's wake list from the polling idle loop (`idle=poll`),
/// where wakers sent no IPI. A wakee that should run leaves need-resched
/// set, for the `schedule()` that follows.
pub fn process_wake_list_polled() {
    crate::platform::without_interrupts(|| {
        if let Some(mut rq) = process_wake_list(cpu_id()) {
            // No switch takes the lock over right away: it reads the clock anew.
            rq.clock_skip = false;
            crate::balance::snapshot::publish_load(&rq);
        }
    });
}

/// Drains this CPU's wake list (`cpu`, from the reschedule IPI, which has
/// just read it): the moves first,
/// then the plain wakeups, each in the order they were queued (core.c:
/// `sched_ttwu_pending()` takes its list with one exchange). When it woke
/// a task that should run now, it sets need-resched and returns the
/// runqueue still locked, so the switch that follows takes it over instead
/// of locking it again; otherwise it publishes and unlocks. Inlined into
/// the IPI handler, its hot caller (a call costs the cross-CPU pipe about
/// 20 instructions per round trip).
#[inline(always)]
pub fn process_wake_list(cpu: usize) -> Option<rq::RqGuard<'static>> {
    let list = rq::wake_list(cpu);
    if !list.pending() {
        return None;
    }
    // Taken under the runqueue lock, so a task is on the list or on the
    // runqueue at every moment a checker (holding every runqueue lock) can see.
    let mut rq = rq::lock(cpu);
    let (newest, moves) = list.take();
    let mut preempt = false;
    if moves {
        preempt |= activate_moves(&mut rq);
    }
    if newest != WAKE_NIL {
        preempt |= activate_wakes(&mut rq, newest);
    }
    if preempt {
        resched::set_need_resched(cpu);
        // The switch publishes the runqueue's new state.
        return Some(rq);
    }
    crate::balance::snapshot::publish_load(&rq);
    None
}

/// Activates the moves queued on this CPU's wake list, oldest first. Out
/// of line: plain wakeups are the common case.
#[inline(never)]
fn activate_moves(rq: &mut rq::RqGuard<'static>) -> bool {
    let mut preempt = false;
    // Drained in place, so the vector keeps its allocation.
    let mut moves = rq::wake_list(rq.cpu).moves_inside(rq);
    for item in moves.drain(..) {
        preempt |= activate(rq, &item.task, Some(item.se), item.flags);
    }
    preempt
}

/// Activates the plain wakeups of the chain whose newest entry is entity
/// `newest` of `rq`, oldest first: a chain of more than one entry is
/// reversed in place first. The tasks stay where `rq.tasks` keeps them: no
/// reference count moves. The clock and the idle period are settled before
/// the newest entry is looked up, so that a lone entry (the common case) is
/// looked up once, its task kept across its enqueue.
#[inline(always)]
fn activate_wakes(rq: &mut Rq, newest: u32) -> bool {
    prepare_activate(rq);
    if let Some((preempt, _)) = enqueue_listed(rq, newest, true) {
        return preempt;
    }
    let mut oldest = WAKE_NIL;
    let mut eid = newest;
    while eid != WAKE_NIL {
        let t = listed_task(&rq.tasks, eid);
        let link = t.wake_link.load(Ordering::Relaxed);
        t.wake_link.store((link & !u64::from(u32::MAX)) | u64::from(oldest), Ordering::Relaxed);
        oldest = eid;
        eid = link as u32;
    }
    // The oldest entry's activation takes the clock and idle period settled
    // above (nothing in between reads the clock); each later one its own.
    let mut preempt = false;
    eid = oldest;
    while eid != WAKE_NIL {
        if eid != oldest {
            prepare_activate(rq);
        }
        let Some((wants, next)) = enqueue_listed(rq, eid, false) else { unreachable!() };
        preempt |= wants;
        eid = next;
    }
    preempt
}

/// The task of entity `eid` in `tasks` (this CPU's `rq.tasks`: a wake list
/// is drained by its own CPU), which a wake-list entry names. It takes the
/// field, not the runqueue, so that the task stays borrowed while the
/// policy's queue changes.
#[inline(always)]
fn listed_task(tasks: &[Option<Arc<Task>>], eid: u32) -> &Arc<Task> {
    match rq::task_in(tasks, eid) {
        Some(t) => t,
        None => wake_list_broken(eid),
    }
}

/// What [`activate`] does before the enqueue of a plain wakeup taken off the
/// wake list: the runqueue's clock, then the end of an open idle period.
#[inline(always)]
fn prepare_activate(rq: &mut Rq) {
    rq.update_clock();
    crate::balance::newidle::note_activate(rq);
}

/// The rest of [`activate`] for the plain wakeup of entity `eid` of `rq`
/// taken off the wake list, after [`prepare_activate`]: returns whether it
/// should preempt and the entry its link names (the next in the chain), or
/// `None` without a change when `lone_only` and the entry links to another.
/// The task is borrowed from `rq.tasks` across the enqueue, which changes
/// only `rq.fair` and `rq.order`.
#[inline(always)]
fn enqueue_listed(rq: &mut Rq, eid: u32, lone_only: bool) -> Option<(bool, u32)> {
    let p = listed_task(&rq.tasks, eid);
    let link = p.wake_link.load(Ordering::Relaxed);
    if lone_only && link as u32 != WAKE_NIL {
        return None;
    }
    rq.order.to_head(eid as usize); // fair.c: account_entity_enqueue(): cfs_tasks head
    let wants = match rq.fair.wake(EntityId(eid), EnqueueFlags::WAKEUP, flags_of_bits((link >> 32) as u32)) {
        Ok(w) => w,
        Err(e) => listed_enqueue_failed(eid, e),
    };
    // As `queued_woken`.
    let preempt = rq.curr.is_idle || wants;
    p.stats.queued_at.set(rq, rq.clock);
    if crate::trace::enabled() {
        trace_enqueue(rq, p, EntityId(eid), preempt);
    }
    rq.clock_skip |= preempt;
    Some((preempt, link as u32))
}

// The two failures of the drain, out of line and naming the CPU themselves
// (the drain runs on the list's CPU), so that the drain keeps no CPU number
// live for them.
#[cold]
#[inline(never)]
fn wake_list_broken(eid: u32) -> ! {
    panic!("invariant: CPU {}'s wake list names entity {}, which has no task there", cpu_id(), eid)
}

#[cold]
#[inline(never)]
fn listed_enqueue_failed(eid: u32, e: sched::SchedError) -> ! {
    panic!("CPU {}: enqueue of entity {} from the wake list: {}", cpu_id(), eid, e)
}

/// Sends a running task, taken off its old CPU by `schedule`, to `target`.
/// `target` is never the calling CPU (the task may not run there any more).
pub fn queue_migration(p: Arc<Task>, se: SchedEntity, target: usize) {
    push_remote_move(target, Move { task: p, se, flags: WakeFlags::NONE });
}

/// Moves `item` to `target`: directly when it is this CPU (asking this CPU
/// to reschedule if the task should preempt), else through the wake list.
pub(crate) fn push_remote_or_local(target: usize, item: Move) {
    if target == cpu_id() {
        let mut rq = rq::lock(target);
        if activate(&mut rq, &item.task, Some(item.se), item.flags) {
            resched::set_need_resched(target);
        }
        crate::balance::snapshot::publish_load(&rq);
    } else {
        push_remote_move(target, item);
    }
}

/// Whether `p` sits on some CPU's wake list, and if so whether it carries
/// its entity with it (it changes CPU) — for the invariant checks, which
/// hold every online CPU's runqueue lock (`rqs`).
pub fn in_transit(p: &Arc<Task>, rqs: &[rq::RqGuard<'_>]) -> Option<bool> {
    rqs.iter().find_map(|g| rq::wake_list(g.cpu).find(g, p))
}
