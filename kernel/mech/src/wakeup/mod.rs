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
//! non-empty; the target drains it whole (`wake_list`: the push, the kick
//! and the drain; a task's affinity change moves it through the same list,
//! `setattr::set_affinity`).
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
use crate::rq::{self, Rq, WakeMove as Move};
use crate::resched::{self, resched_cpu};
use crate::task::{Task, TaskState};
use crate::percpu::{per_cpu, PerCpu};

mod wake_list;

pub use wake_list::{in_transit, process_wake_list, process_wake_list_polled, queue_migration};
pub(crate) use wake_list::push_remote_or_local;
use wake_list::push_remote_wake;

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
pub(super) fn activate(rq: &mut Rq, p: &Arc<Task>, se: Option<SchedEntity>, flags: WakeFlags) -> bool {
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
pub(super) fn trace_enqueue(rq: &Rq, p: &Task, eid: EntityId, preempt: bool) {
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
