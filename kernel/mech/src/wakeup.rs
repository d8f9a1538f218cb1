//! Waking tasks up: `try_to_wake_up`, the per-CPU wake lists and their IPI.
//!
//! # The protocol (after Linux's `p->on_rq` / `p->on_cpu`)
//!
//! A task's `state` is `Running` (wants to run) or `Sleeping`. To block, a
//! task sets `Sleeping`, re-checks its condition, and calls `schedule()`,
//! which dequeues it from its runqueue only if the state is still
//! `Sleeping` (under the runqueue lock). A waker, under the task's `pi_lock`:
//!
//! 1. does nothing unless the state is `Sleeping` (so two wakers, or a
//!    wakeup and an exit, never both act);
//! 2. locks the task's runqueue; if its fair entity is still queued (the task
//!    has not reached `schedule()` yet, was preempted before it could, or its
//!    dequeue was delayed), it only sets `Running`, requeues a delayed entity
//!    in place, and checks wakeup preemption unless the task is the one
//!    running there — `ttwu_runnable`;
//! 3. otherwise waits until the task's context is off every CPU (its frame is
//!    saved), sets `Running`, picks the target CPU, moves the entity if the
//!    CPU changes, and enqueues it: directly when the target is this CPU,
//!    through the target's wake list and one IPI otherwise (TTWU_QUEUE; the
//!    policy's `sched::ttwu`), or, with NO_TTWU_QUEUE, directly on the
//!    target's runqueue under its lock, with the IPI only if the wakee
//!    should preempt.
//!
//! Step 2 is skipped, and with it the runqueue lock, when the task's
//! `on_rq` flag is false: the switch clears it under the runqueue lock when
//! the blocking task's entity left the queue at once, and only a wakeup
//! (under `pi_lock`) sets it again, so false means "dequeued" for certain
//! (Linux reads `p->on_rq` the same way). True means "maybe queued": step 2
//! runs under the lock and decides.
//!
//! Orderings: the state is stored with Release and read with Acquire; the
//! runqueue lock orders step 2 against the dequeue in `schedule()`; `on_cpu`
//! is released only after the frame is saved (`arch::context`). A wakeup that
//! races with the sleep either finds the entity queued (step 2) or finds it
//! dequeued and waits for the switch to finish (step 3): none is lost.
//!
//! A remote wake list is kicked by an IPI only when it goes from empty to
//! non-empty; the target drains it whole.
//!
//! Follows Linux's `kernel/sched/core.c: try_to_wake_up()` (`ttwu_runnable()`,
//! `ttwu_queue()`, `ttwu_queue_wakelist()`, `sched_ttwu_pending()`,
//! `ttwu_do_activate()`) and `wake_up_new_task()`.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sched::{EnqueueFlags, EntityId, Policy, SchedEntity, WakeFlags};

use sched::cpumask::CpuMask;

use crate::platform::cpu_id;
use crate::balance::wake::WakeeLoad;
use crate::rq::{self, Rq, WakeMove as Move, WAKE_NIL};
use crate::resched::{self, resched_cpu};
use crate::task::{Task, TaskState};
use crate::percpu::{per_cpu, PerCpu};

/// This module's per-CPU part (its `CPUS`).
struct WakeupCpu {
    /// Wakeups performed by this CPU, and those that woke onto the same CPU.
    ttwu_count: AtomicU64,
    ttwu_local: AtomicU64,
}

impl WakeupCpu {
    const fn new() -> Self {
        WakeupCpu {
            ttwu_count: AtomicU64::new(0),
            ttwu_local: AtomicU64::new(0),
        }
    }
}

/// Every CPU's WakeupCpu.
static CPUS: PerCpu<WakeupCpu> = per_cpu!(WakeupCpu::new());

/// (ttwu_count, ttwu_local) of `cpu`.
pub fn ttwu_stats(cpu: usize) -> (u64, u64) {
    (CPUS[cpu].ttwu_count.load(Ordering::Relaxed), CPUS[cpu].ttwu_local.load(Ordering::Relaxed))
}

/// Wakes `p` if it sleeps; returns whether this call woke it.
pub fn try_to_wake_up(p: &Arc<Task>, flags: WakeFlags) -> bool {
    let woke = wake(p, flags, || {});
    // `fault=preempt_points`: the waker may be preempted right here.
    crate::inject::preempt_point();
    woke
}

/// Wakes `p` if it sleeps, though nothing it waits for happened
/// (`fault=spurious_wake`): `mark` runs under `p`'s `pi_lock` once `p` is
/// found asleep, before the wakeup lets it run, so that fault injection can
/// count whether its wait went back to sleep.
pub fn wake_spurious(p: &Arc<Task>, mark: impl FnOnce()) -> bool {
    wake(p, WakeFlags::NONE, mark)
}

/// `try_to_wake_up`; `mark` runs under `pi_lock` once `p` is found asleep
/// (nothing for a plain wakeup: the empty closure compiles away).
#[inline(always)]
fn wake(p: &Arc<Task>, flags: WakeFlags, mark: impl FnOnce()) -> bool {
    let pi = p.pi_lock.lock();
    if p.state() != TaskState::Sleeping {
        return false;
    }
    mark();
    let this = cpu_id();
    if !p.on_rq.load(Ordering::Acquire) {
        wake_dequeued(p, this, flags);
        return true;
    }
    let mut rq = rq::lock_task_rq_inside(&pi, p);
    let eid = EntityId(p.eid.load(Ordering::Relaxed));

    // Step 2: still queued? (Whether it is delayed is read in the same
    // lookup: nothing below changes it before it is used.)
    if let Some(delayed) = rq.fair.entity(eid).filter(|se| se.on_rq).map(|se| se.sched_delayed) {
        let cpu = rq.cpu;
        // Before the clock is read: the trace's `wakeup` precedes the
        // `enqueue` below, as in step 3 (and Linux's waking/wakeup pair).
        account(p, this, cpu, flags);
        p.set_state(TaskState::Running);
        rq.update_clock();
        let preempt = if delayed {
            let wants = rq.fair.wake_delayed(eid, flags).unwrap_or(false);
            queued_woken(&mut rq, p, wants)
        } else {
            woken_still_queued(&mut rq, p, eid, flags)
        };
        drop(rq);
        if preempt {
            resched_cpu(cpu);
        }
        return true;
    }

    // Step 3: off the queue; wait for its switch-out to finish (without the
    // runqueue lock: the switching CPU may need it for newidle balancing).
    if p.ctx.on_cpu() {
        drop(rq);
        p.ctx.wait_off_cpu();
        rq = rq::lock_task_rq_inside(&pi, p);
    }
    p.set_state(TaskState::Running);
    let from = rq.cpu;
    // A task allowed on one CPU has nowhere else to go (Linux skips
    // select_task_rq when nr_cpus_allowed == 1).
    let single = p.affinity.single();
    let target = match single {
        Some(only) => only,
        None => {
            let allowed = p.affinity.load();
            // Placement takes balance state that ranks above runqueue locks.
            let load = WakeeLoad::of(&rq, p);
            drop(rq);
            let target = select_task_rq(p, allowed, load, from, this, flags);
            rq = rq::lock_inside(&pi, from);
            target
        }
    };
    account(p, this, target, flags);
    enqueue_woken(p, this, from, target, flags, Some(rq));
    true
}

/// Step 3 for a task whose entity is known to be off its runqueue
/// (`Task::on_rq` false): nothing moves a dequeued entity while its
/// `pi_lock` is held, so the old runqueue is locked only if the task
/// changes CPU (to take its entity along), and placement reads the load
/// the entity had when it blocked. Inlined into its one caller: out of
/// line it spilled and reloaded `p`, `this` and `flags` around the call.
#[inline(always)]
fn wake_dequeued(p: &Arc<Task>, this: usize, flags: WakeFlags) {
    p.ctx.wait_off_cpu();
    p.set_state(TaskState::Running);
    let from = p.cpu.load(Ordering::Acquire);
    let single = p.affinity.single();
    let target = match single {
        Some(only) => only,
        None => select_task_rq(p, p.affinity.load(), WakeeLoad::slept(p), from, this, flags),
    };
    account(p, this, target, flags);
    enqueue_woken(p, this, from, target, flags, None);
}

/// The end of step 3, on both paths: enqueues the woken `p` (Running,
/// accounted) on `target`. Its entity is in `from`'s runqueue, whose lock
/// the caller passes in `held` if it holds it: kept for a local wakeup
/// (one lock for all of it) or to take the entity along to another CPU,
/// taken only for those when not held, and dropped before a plain remote
/// wakeup, which only queues on `target`'s wake list (with NO_TTWU_QUEUE
/// it is `target`'s, and the waker enqueues there itself).
///
/// Called under `p`'s `pi_lock`, so with interrupts off: the runqueue
/// locks it takes do not save and disable them again.
#[inline(always)]
fn enqueue_woken(p: &Arc<Task>, this: usize, from: usize, target: usize, flags: WakeFlags, held: Option<rq::RqGuard<'static>>) {
    // Queued from here on. The switch may have cleared `on_rq` after the
    // locked path read it (the task was blocking as we came), so both paths
    // set it, before any enqueue and under `pi_lock`, which the next
    // wakeup's read of it holds too.
    p.on_rq.store(true, Ordering::Relaxed);
    if target == from && target != this {
        if !ttwu_queue_wakelist(this, target) {
            activate_remote(held.unwrap_or_else(|| rq::lock_irqs_off(target)), p, None, flags);
            return;
        }
        drop(held);
        push_remote_wake(target, p, flags);
        return;
    }
    let mut rq = held.unwrap_or_else(|| rq::lock_irqs_off(from));
    if target == from {
        if activate(&mut rq, p, None, flags) {
            resched::set_need_resched(this);
        }
        crate::balance::snapshot::publish_load(&rq);
    } else {
        let se = take_entity(&mut rq, p);
        drop(rq);
        if target != this && !ttwu_queue_wakelist(this, target) {
            activate_remote(rq::lock_irqs_off(target), p, Some(se), flags);
            return;
        }
        push_remote_or_local(target, Move { task: p.clone(), se, flags });
    }
}

/// TTWU_QUEUE as booted ([`configure`]; on until then, its default). A
/// flag of its own, one load away: every remote wakeup reads it, and the
/// balancer's copy of the features sits behind a `spin::Once`.
static TTWU_QUEUE: AtomicBool = AtomicBool::new(true);

/// Takes the wakeup path's features from the booted set (each CPU's
/// bring-up, `entry::sched_cpu_starting`: the same set on every CPU).
pub fn configure(features: sched::Features) {
    TTWU_QUEUE.store(features.has(sched::Feature::TtwuQueue), Ordering::Relaxed);
}

/// Whether a wakeup by `this` onto `target` goes through the target's wake
/// list (`sched::ttwu`).
#[inline(always)]
fn ttwu_queue_wakelist(this: usize, target: usize) -> bool {
    sched::ttwu::queue_on_wake_list(TTWU_QUEUE.load(Ordering::Relaxed), this, target)
}

/// The end of step 3 without the wake list (NO_TTWU_QUEUE; core.c
/// `ttwu_queue()`'s own activation): the waker enqueues `p` on a remote
/// CPU's runqueue `rq`, which it holds (with the entity `se` the task
/// brings along if it changes CPU), and asks that CPU to reschedule, with
/// the IPI, only if the wakee should run now. Out of line: the default
/// (TTWU_QUEUE) path carries only the test that leads here.
#[cold]
#[inline(never)]
fn activate_remote(mut rq: rq::RqGuard<'static>, p: &Arc<Task>, se: Option<SchedEntity>, flags: WakeFlags) {
    let target = rq.cpu;
    let preempt = activate(&mut rq, p, se, flags);
    // The target's switch comes after the IPI and takes the lock anew: it
    // reads its clock then.
    rq.clock_skip = false;
    crate::balance::snapshot::publish_load(&rq);
    drop(rq);
    if preempt {
        resched_cpu(target);
    }
}

#[inline(always)]
fn account(p: &Task, this: usize, target: usize, flags: WakeFlags) {
    crate::trace::record_now(|| crate::trace::Event::Wakeup { pid: p.id, target: target as u32 });
    CPUS[this].ttwu_count.fetch_add(1, Ordering::Relaxed);
    p.stats.nr_wakeups.fetch_add(1, Ordering::Relaxed);
    if target == this {
        CPUS[this].ttwu_local.fetch_add(1, Ordering::Relaxed);
        p.stats.nr_wakeups_local.fetch_add(1, Ordering::Relaxed);
    } else {
        p.stats.nr_wakeups_remote.fetch_add(1, Ordering::Relaxed);
        // core.c: ttwu_stat(): by the CPU the wakee was put on.
        crate::balance::wake::note_remote_wakeup(this, target);
    }
    if flags.contains(WakeFlags::SYNC) {
        p.stats.nr_wakeups_sync.fetch_add(1, Ordering::Relaxed);
    }
}

/// Where a waking task goes: the fair class's placement
/// (`balance::wake::select_wake_cpu`: wake_affine, select_idle_sibling, ...)
/// when it is set up and picks an allowed online CPU; otherwise its previous
/// CPU if allowed, else its first allowed online CPU. No lock is held;
/// `load` was read under `p`'s runqueue lock.
fn select_task_rq(p: &Arc<Task>, allowed: CpuMask, load: WakeeLoad, prev: usize, this: usize, flags: WakeFlags) -> usize {
    if let Some(cpu) = crate::balance::wake::select_wake_cpu(p, load, prev, this, flags) {
        if allowed.contains(cpu) && rq::is_online(cpu) {
            return cpu;
        }
    }
    if allowed.contains(prev) && rq::is_online(prev) {
        return prev;
    }
    allowed.intersection(&rq::online_mask()).first().unwrap_or(prev)
}

/// Removes `p`'s (dequeued, not running) entity from its locked runqueue.
fn take_entity(rq: &mut Rq, p: &Arc<Task>) -> SchedEntity {
    let eid = p.eid.load(Ordering::Relaxed);
    match rq.fair.remove_entity(EntityId(eid)) {
        Ok(se) => {
            rq.detach(eid);
            se
        }
        Err(e) => panic!("invariant: cannot move task {} ({}) off CPU {}: {}", p.id, p.name, rq.cpu, e),
    }
}

/// Enqueues `p` on the locked `rq` (adding its entity if it moved here);
/// returns whether the running task should be preempted.
fn activate(rq: &mut Rq, p: &Arc<Task>, se: Option<SchedEntity>, flags: WakeFlags) -> bool {
    rq.update_clock();
    crate::balance::newidle::note_activate(rq);
    let (eid, eflags) = match se {
        Some(se) => {
            let eid = match rq.fair.add_entity(se) {
                Ok(e) => e,
                Err(e) => panic!("CPU {}: cannot take task {}: {}", rq.cpu, p.name, e),
            };
            let from = p.cpu.load(Ordering::Relaxed) as u32;
            rq.attach(eid.0, p.clone());
            p.stats.nr_migrations.fetch_add(1, Ordering::Relaxed);
            crate::trace::record(rq.clock, || crate::trace::Event::Migrate { pid: p.id, from, to: rq.cpu as u32 });
            (eid, EnqueueFlags::WAKEUP | EnqueueFlags::MIGRATED)
        }
        None => (EntityId(p.eid.load(Ordering::Relaxed)), EnqueueFlags::WAKEUP),
    };
    rq.order.to_head(eid.0 as usize); // fair.c: account_entity_enqueue(): cfs_tasks head
    let wants = match rq.fair.wake(eid, eflags, flags) {
        Ok(w) => w,
        Err(e) => panic!("CPU {}: enqueue of task {} ({}): {}", rq.cpu, p.id, p.name, e),
    };
    // The caller publishes the runqueue once it has activated everything.
    queued_woken(rq, p, wants)
}

/// The end of every wakeup that put `p` on `rq` (an enqueue, or a delayed
/// entity requeued in place), where `wants` is the policy's preemption
/// answer: an idle CPU always switches to the wakee, a switch asked for
/// finds the clock fresh (`clock_skip`), and the trace's `enqueue` event goes
/// on `rq`'s CPU (the waker may be another one). Returns whether to switch.
#[inline(always)]
fn queued_woken(rq: &mut Rq, p: &Task, wants: bool) -> bool {
    p.stats.queued_at.set(rq, rq.clock);
    let preempt = rq.curr.is_idle || wants;
    rq.clock_skip |= preempt;
    if crate::trace::enabled() {
        trace_enqueue(rq, p, EntityId(p.eid.load(Ordering::Relaxed)), preempt);
    }
    preempt
}

/// Records the trace's `enqueue` of `p` (entity `eid`) on `rq`'s CPU, with what runs there as
/// the preemption check saw it. Called only while tracing: out of line and cold, so that the
/// wakeup's code carries one test of the flag and nothing else.
#[cold]
#[inline(never)]
fn trace_enqueue(rq: &Rq, p: &Task, eid: EntityId, preempt: bool) {
    let (curr_eligible, curr_protected) = match rq.fair.curr() {
        Some(c) if c != eid => (Some(rq.fair.entity_eligible(c)), Some(rq.fair.curr_protected())),
        _ => (None, None),
    };
    let ev = crate::trace::Event::Enqueue { pid: p.id, preempt, curr: rq.curr.id, curr_eligible, curr_protected };
    crate::trace::record_on(rq.clock, || (rq.cpu, ev));
}

/// Step 2 for a wakee whose entity is queued and not delayed: it set itself
/// `Sleeping` but has not switched out. Either it still runs (on its CPU,
/// maybe another than the waker's), and only its state changes; or a tick
/// or an IPI preempted it before it reached `schedule()` (the switch keeps
/// such a task queued, as runnable) and it waits on the queue, where its
/// wakeup may preempt the running task like any other (Linux's
/// `ttwu_runnable` calls `wakeup_preempt` when the task is not on its CPU).
/// Its wait began at that preemption, so `queued_at` stays. Records the
/// trace's `enqueue` (Linux's `sched_wakeup`, emitted for every wakeup) and
/// returns whether `rq`'s CPU should switch.
#[inline(always)]
fn woken_still_queued(rq: &mut Rq, p: &Task, eid: EntityId, flags: WakeFlags) -> bool {
    let preempt = rq.fair.curr() != Some(eid) && check_preempt(rq, eid, flags);
    rq.clock_skip |= preempt;
    if crate::trace::enabled() {
        trace_enqueue(rq, p, eid, preempt);
    }
    preempt
}

fn check_preempt(rq: &mut Rq, eid: EntityId, flags: WakeFlags) -> bool {
    if rq.curr.is_idle {
        return true;
    }
    rq.fair.check_preempt_wakeup(eid, flags).unwrap_or(false)
}

/// Queues the plain wakeup of `p` (its entity stays in `target`'s
/// runqueue) on `target`'s wake list, lock-free; the IPI goes out only when
/// the list was empty (core.c: `__ttwu_queue_wakelist()`).
#[inline(always)]
fn push_remote_wake(target: usize, p: &Task, flags: WakeFlags) {
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

/// Makes a new task runnable on its CPU (Linux's `wake_up_new_task`).
pub fn wake_up_new_task(p: &Arc<Task>) {
    let cpu = p.cpu.load(Ordering::Relaxed);
    let preempt = {
        let mut rq = rq::lock(cpu);
        rq.update_clock();
        let nice = sched::Nice::new(p.nice_value().clamp(-20, 19)).unwrap_or(sched::Nice::ZERO);
        let eid = match rq.fair.fork(nice, Policy::Normal) {
            Ok(e) => e,
            Err(e) => panic!("CPU {}: cannot create the entity of {}: {}", cpu, p.name, e),
        };
        let slice = p.slice_ns.load(Ordering::Relaxed);
        if slice != 0 {
            let _ = rq.fair.set_slice(eid, slice);
        }
        rq.attach(eid.0, p.clone());
        if let Err(e) = rq.fair.enqueue(eid, EnqueueFlags::INITIAL) {
            panic!("CPU {}: enqueue of new task {}: {}", cpu, p.name, e);
        }
        p.stats.queued_at.set(&rq, rq.clock);
        // No avg_idle sample: wake_up_new_task() is not ttwu_do_activate().
        let preempt = check_preempt(&mut rq, eid, WakeFlags::FORK);
        crate::balance::snapshot::publish_load(&rq);
        preempt
    };
    if preempt {
        resched_cpu(cpu);
    }
}

/// Changes `p`'s allowed CPUs; a task on a CPU no longer allowed moves.
pub fn set_affinity(p: &Arc<Task>, mask: sched::cpumask::CpuMask) -> Result<(), &'static str> {
    let mask = mask.intersection(&rq::online_mask());
    if mask.is_empty() {
        return Err("the mask has no online CPU");
    }
    let pi = p.pi_lock.lock();
    p.affinity.store(mask);
    if mask.contains(p.cpu.load(Ordering::Acquire)) {
        return Ok(());
    }
    // Queued but not running: move it now. Running: its CPU moves it at the
    // next switch (schedule() sees the affinity), so ask for one. Sleeping:
    // the wakeup picks an allowed CPU.
    let mut src = rq::lock_task_rq_inside(&pi, p);
    let cpu = src.cpu;
    let target = mask.first().unwrap_or(cpu);
    let mut resched_src = false;
    let moved = {
        let eid = EntityId(p.eid.load(Ordering::Relaxed));
        // Only `p`'s own entity: after its final switch (or while it moves
        // between CPUs) `p.eid` may name another task's entity here, which
        // must stay (core.c: affine_move_task() moves `p` only if it runs
        // or `task_on_rq_queued(p)`).
        let own = src.task_of(eid.0).is_some_and(|t| Arc::ptr_eq(t, p));
        let queued = own && src.fair.entity(eid).is_some_and(|se| se.on_rq);
        let running = src.fair.curr() == Some(eid);
        if queued && !running && !src.fair.is_delayed(eid) {
            src.update_clock();
            // The dequeue charges the running task first and may ask this
            // CPU to reschedule (fair.c: dequeue_entity()'s update_curr())
            let asked = src.fair.need_resched();
            let _ = src.fair.dequeue(eid, sched::DequeueFlags::NONE);
            resched_src = !asked && src.fair.need_resched();
            match src.fair.remove_entity(eid) {
                Ok(se) => {
                    src.detach(eid.0);
                    Some(se)
                }
                Err(_) => None,
            }
        } else {
            None
        }
    };
    drop(src);
    if resched_src {
        resched_cpu(cpu);
    }
    match moved {
        Some(se) => push_remote_or_local(target, Move { task: p.clone(), se, flags: WakeFlags::NONE }),
        None => {
            if p.state() == TaskState::Running {
                resched_cpu(cpu);
            }
        }
    }
    Ok(())
}

/// Moves `item` to `target`: directly when it is this CPU (asking this CPU
/// to reschedule if the task should preempt), else through the wake list.
fn push_remote_or_local(target: usize, item: Move) {
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
