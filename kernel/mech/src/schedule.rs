//! The switch: choosing the next task and handing its saved frame to the
//! interrupt stub (`arch::context`).
//!
//! Every switch happens with interrupts off, on the CPU's handler stack, with
//! the outgoing task's frame saved in place: from the timer tick, from the
//! reschedule IPI, or from `schedule()` when a task blocks, yields or exits
//! (`arch::context::give_up_cpu`, which saves the frame the `SCHEDULE_VECTOR`
//! interrupt would, by a call).
//!
//! Follows Linux's `kernel/sched/core.c: __schedule()` (with
//! `pick_next_task()`, `context_switch()`, `finish_task_switch()`); the newidle
//! balance runs where `pick_next_task_fair()` calls `sched_balance_newidle()`.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use sched::{DequeueFlags, DequeueOutcome, EntityId};

use crate::platform::{self as context, Frame, SwitchError};
use crate::platform::cpu_id;
use crate::{resched, rq};
use crate::task::{self, PrevState, TaskState};

/// Gives up the CPU. The caller has set its state (Sleeping to block, Dead to
/// exit) or stays Running (it is then only preempted).
pub fn schedule() {
    // A switch with an interrupt-off lock held would leave the lock and the
    // guard count behind on this CPU: the platform tests it first.
    if context::give_up_cpu_unheld() != 0 {
        held_at_switch("schedule()");
    }
}

/// The panic of a switch asked for with interrupt-off locks held (out of
/// line: the count is read again for the message).
#[cold]
#[inline(never)]
fn held_at_switch(what: &str) -> ! {
    panic!("{} called on CPU {} holding {} interrupt-off lock(s)", what, cpu_id(), crate::platform::irq_guards_held());
}

/// Yields the rest of the running task's slice (Linux's `sched_yield`).
pub fn yield_now() {
    yield_curr();
    schedule();
}

/// As [`yield_now`], checking that the switch kept the registers a call
/// keeps ([`context::give_up_cpu_checking`]): the first one it lost, if any.
pub fn yield_checking_registers(salt: u64) -> Option<context::RegisterMismatch> {
    yield_curr();
    if crate::platform::irq_guards_held() != 0 {
        held_at_switch("yield_checking_registers()");
    }
    context::give_up_cpu_checking(salt)
}

/// As [`schedule`] for a task that has set itself Sleeping, checking that
/// the switch kept the registers a call keeps
/// ([`context::give_up_cpu_checking`]): `workload=regs`' cross phase, whose
/// sleeper is resumed by another CPU's wakeup through the reschedule IPI.
pub fn schedule_checking_registers(salt: u64) -> Option<context::RegisterMismatch> {
    if crate::platform::irq_guards_held() != 0 {
        held_at_switch("schedule_checking_registers()");
    }
    context::give_up_cpu_checking(salt)
}

/// The yield's bookkeeping before the switch: the slice given up, `yld_count`.
#[inline(always)]
fn yield_curr() {
    let mut rq = rq::lock(cpu_id());
    rq.update_clock();
    rq.fair.yield_curr();
    rq.stat.yld_count += 1;
}

/// Reschedules if a wakeup asked this CPU to (a preemption point for thread
/// code that just woke someone).
pub fn preempt_point() {
    // The flag first: it is usually clear, and reading RFLAGS costs more.
    if resched::need_resched(cpu_id()) && crate::platform::irqs_enabled() {
        // `schedule()` without its test of held interrupt-off guards: with
        // interrupts on, none is held (each keeps them off while held).
        context::give_up_cpu();
    }
}

/// `schedule()` (or the `SCHEDULE_VECTOR` interrupt): the running task gives
/// up its CPU (and blocks if it set itself Sleeping or Dead). Its own copy
/// of `schedule_irq`, with `voluntary` and no held lock as constants: the
/// switch of every block and yield, inlined into the platform's schedule
/// hook instead of called from it.
pub fn schedule_voluntary(frame: *mut Frame) -> *mut Frame {
    schedule_irq(frame, true, None)
}

/// A preemption (tick, reschedule IPI): the running task stays runnable even
/// if it had set itself Sleeping, because it was interrupted before it could
/// re-check its wait condition (Linux's preemption case in `__schedule`).
pub fn preempt_irq(frame: *mut Frame) -> *mut Frame {
    preempt_irq_locked(frame, None)
}

/// As `preempt_irq`, taking over this CPU's runqueue lock if the caller
/// still holds it (the reschedule IPI, right after activating a wakee).
/// The preemptions' one copy of `schedule_irq`.
#[inline(never)]
pub fn preempt_irq_locked(frame: *mut Frame, held: Option<rq::RqGuard<'static>>) -> *mut Frame {
    schedule_irq(frame, false, held)
}

/// The core of the switch, called on the interrupt path with the interrupted
/// frame (and this CPU's runqueue lock, if the caller holds it); returns the
/// frame to resume. Its steps follow `__schedule()`: the outgoing task's
/// accounting and dequeue ([`put_prev`]), the pick with the newidle balance
/// ([`pick_next`]), what becomes of a dead or migrating `prev`
/// ([`settle_prev`]), the switch's statistics ([`account_switch`]), then the
/// frames. Each step is inlined, and the whole into its two entries
/// (voluntary, preemption): this is the hot path of every switch.
#[inline(always)]
fn schedule_irq(frame: *mut Frame, voluntary: bool, held: Option<rq::RqGuard<'static>>) -> *mut Frame {
    let cpu = cpu_id();
    resched::clear_need_resched(cpu);
    let mut rq = match held {
        Some(rq) => rq,
        // Every switch runs with interrupts off.
        None => rq::lock_irqs_off(cpu),
    };
    // Right after a wakeup that asked for this switch, its clock is fresh.
    if !core::mem::take(&mut rq.clock_skip) {
        rq.update_clock();
    }
    let now = rq.clock;
    rq.stat.sched_count += 1;
    let prev = rq.curr.clone();
    let leaving = put_prev(&mut rq, &prev, voluntary, cpu);
    let (mut rq, next, now) = pick_next(rq, &prev, leaving.picked_on_block, cpu, now);

    let finished = leaving.state == PrevState::Dead;
    // Whether this is a switch at all (a preempted task may be picked again).
    let switching = !Arc::ptr_eq(&prev, &next);
    if !prev.is_idle {
        settle_prev(&mut rq, &prev, &leaving, switching, cpu, now);
    }
    if switching {
        account_switch(&mut rq, &prev, &next, leaving.state, cpu, now);
        rq.curr = next.clone();
    }
    if crate::debug::enabled() {
        crate::debug::check_rq(&rq);
    }
    crate::balance::snapshot::publish_load(&rq);
    drop(rq);
    // One test on the usual switch, task to task.
    if next.is_idle != prev.is_idle {
        if next.is_idle {
            crate::idle::enter(cpu, now);
        } else {
            crate::idle::exit(cpu, now);
        }
    }
    // A preempted task picked again resumes its own frame.
    let resume = if !switching {
        frame
    } else {
        match context::switch_frames(frame, &prev.ctx, &next.ctx) {
            Ok(f) => f,
            Err(SwitchError::RunningElsewhere { cpu: other }) => panic!(
                "invariant: task {} ({}) picked on CPU {} is still running on CPU {}",
                next.id, next.name, cpu, other
            ),
        }
    };
    // Last, so that `next` moves into the per-CPU slot instead of being
    // cloned for it (this CPU alone reads the slot, and nothing above does).
    if switching {
        task::switch_current(next);
    }
    // An exiting task has made its last switch (its frame is saved, and
    // joiners may now free its stack); its joiners' wakeups see `next` as
    // the running task, as the switch made it.
    if finished {
        if let Some(exited) = &prev.exited {
            exited.complete();
        }
    }
    resume
}

/// How the outgoing task leaves the CPU, as [`put_prev`] found it.
struct Leaving {
    /// The trace's `prev_state`. The task's state is read once: only a
    /// waker changes it from here on, and that must not change this
    /// switch's decision.
    state: PrevState,
    /// A running task to move (its entity, and the active balance's
    /// target if one asked for it).
    migrate: Option<(EntityId, Option<usize>)>,
    /// The blocking switch asks the policy for dequeue and pick in one
    /// call: its pick.
    picked_on_block: Option<Option<EntityId>>,
}

/// `prev`'s side of the switch (`put_prev_task()` and the dequeue of a
/// blocking task in `__schedule()`): its execution time, then by its state
/// a blocking dequeue with the pick, a dead task's dequeue, or a running
/// task dequeued to migrate.
#[inline(always)]
fn put_prev(rq: &mut rq::Rq, prev: &Arc<task::Task>, voluntary: bool, cpu: usize) -> Leaving {
    let mut leaving = Leaving { state: PrevState::Runnable, migrate: None, picked_on_block: None };
    if prev.is_idle {
        return leaving;
    }
    let eid = EntityId(prev.eid.load(Ordering::Relaxed));
    // exec times on the task clock, without the pressure time
    let now_task = rq.clock_task();
    let ran = now_task.saturating_sub(prev.stats.exec_start.get(rq));
    prev.stats.sum_exec_runtime.fetch_add(ran, Ordering::Relaxed);
    prev.stats.exec_start.set(rq, now_task);
    rq.stat.rq_cpu_time += ran;
    match prev.state() {
        TaskState::Running => {
            // Its affinity no longer allows this CPU, or an active
            // balance asked for it elsewhere: move it.
            let push = crate::balance::active::take_active_push(cpu)
                .filter(|&d| d != cpu && prev.allowed(d) && rq::is_online(d));
            if !prev.allowed(cpu) || push.is_some() {
                let _ = rq.fair.dequeue(eid, DequeueFlags::NONE);
                leaving.migrate = Some((eid, push));
            }
        }
        TaskState::Sleeping | TaskState::Dead if !voluntary => {}
        TaskState::Sleeping => {
            leaving.state = PrevState::Sleeping;
            let (outcome, picked) = rq.fair.block_and_schedule(eid, DequeueFlags::SLEEP);
            if outcome == Ok(DequeueOutcome::Dequeued) {
                // Off the queue: its wakeup needs no runqueue lock to
                // know it (released with the frame, by `switch_frames`).
                crate::balance::wake::WakeeLoad::keep_slept(prev, crate::balance::wake::WakeeLoad::of(rq, prev));
                prev.on_rq.store(false, Ordering::Release);
            }
            leaving.picked_on_block = Some(picked);
        }
        TaskState::Dead => {
            leaving.state = PrevState::Dead;
            let _ = rq.fair.dequeue(eid, DequeueFlags::SLEEP | DequeueFlags::SPECIAL);
        }
    }
    leaving
}

/// The pick (`pick_next_task()`), with the newidle balance when the CPU is
/// about to idle (`pick_next_task_fair()` calling
/// `sched_balance_newidle()`), which drops and retakes the lock. Returns
/// the lock, the task to run and the switch's time (read again after a
/// balance).
#[inline(always)]
fn pick_next(
    mut rq: rq::RqGuard<'static>,
    prev: &task::Task,
    picked_on_block: Option<Option<EntityId>>,
    cpu: usize,
    mut now: u64,
) -> (rq::RqGuard<'static>, Arc<task::Task>, u64) {
    let mut picked = match picked_on_block {
        Some(p) => p,
        None => rq.fair.schedule(),
    };
    // The newidle gate is decided under our lock (fair.c: sched_balance_newidle()).
    let newidle = if picked.is_none() && !prev.is_idle { crate::balance::newidle::newidle_begin(&mut rq) } else { None };
    if let Some(avg_idle) = newidle {
        // About to idle, and another CPU is overloaded: newidle balancing,
        // without our lock (it takes two). The balancer reads this CPU's
        // published counts, so publish them now that prev is off the queue:
        // as in Linux's `sched_balance_rq`, which reads the live `dst_rq`
        // (`nr_running == 0`) with prev already dequeued. Published before,
        // the stale count said "not the balancer" and nothing was pulled.
        crate::balance::snapshot::publish_load(&rq);
        drop(rq);
        crate::balance::newidle::sched_balance_newidle(cpu, avg_idle);
        rq = rq::lock_irqs_off(cpu);
        // The switch happens now, after the balancing: its time (for the
        // trace, which has the balancing's events before it, and for the
        // statistics) is read again.
        rq.update_clock();
        let gap = rq.clock - now;
        rq::add_newidle_switch_ns(cpu, gap);
        now = rq.clock;
        if rq.fair.nr_queued() > 0 {
            picked = rq.fair.schedule();
        }
    }
    let next = match picked {
        Some(e) => match rq.task_of(e.0) {
            Some(t) => t.clone(),
            None => panic!("CPU {}: entity {} has no task", cpu, e.0),
        },
        None => rq.idle.clone(),
    };
    (rq, next, now)
}

/// What becomes of a task `prev` (not the idle task) after the pick: a dead
/// one leaves the runqueue, a migrating one goes to its target's wake
/// list, a preempted one that stays queued starts waiting now.
#[inline(always)]
fn settle_prev(rq: &mut rq::Rq, prev: &Arc<task::Task>, leaving: &Leaving, switching: bool, cpu: usize, now: u64) {
    let eid = prev.eid.load(Ordering::Relaxed);
    if leaving.state == PrevState::Dead {
        let _ = rq.fair.remove_entity(EntityId(eid));
        rq.detach(eid);
    } else if let Some((e, push)) = leaving.migrate {
        match rq.fair.remove_entity(e) {
            Ok(se) => {
                rq.detach(e.0);
                let target = push.unwrap_or_else(|| prev.affinity.load().first().unwrap_or(cpu));
                if push.is_some() {
                    crate::balance::active::note_pushed(cpu, target);
                }
                crate::wakeup::queue_migration(prev.clone(), se, target);
            }
            Err(err) => panic!("CPU {}: cannot migrate {}: {}", cpu, prev.name, err),
        }
    } else if leaving.state == PrevState::Runnable && switching {
        // Still queued, and not delayed: a running entity is never delayed
        // (a pick dequeues a delayed one), and only `put_prev`'s blocking,
        // dead and migrating cases take one off the queue.
        debug_assert!(rq.fair.entity(EntityId(eid)).is_some_and(|se| se.on_rq && !se.sched_delayed));
        prev.stats.queued_at.set(rq, now);
    }
}

/// The statistics of a switch from `prev` to another task `next` (schedstat's
/// `pcount`, `sched_goidle`, `run_delay`, the tasks' switch counts and wait
/// times), `next`'s start of execution and its place at the head of
/// `cfs_tasks`, and the trace's `switch` event.
#[inline(always)]
fn account_switch(rq: &mut rq::Rq, prev: &task::Task, next: &task::Task, prev_state: PrevState, cpu: usize, now: u64) {
    rq.stat.pcount += 1;
    prev.stats.nr_switches.fetch_add(1, Ordering::Relaxed);
    if next.is_idle {
        rq.stat.sched_goidle += 1;
    } else {
        let waited = now.saturating_sub(next.stats.queued_at.get(rq));
        next.stats.wait_sum.fetch_add(waited, Ordering::Relaxed);
        // Only the CPU holding the task's runqueue lock writes these.
        if waited > next.stats.wait_max.load(Ordering::Relaxed) {
            next.stats.wait_max.store(waited, Ordering::Relaxed);
        }
        rq.stat.run_delay += waited;
        let clock_task = rq.clock_task();
        next.stats.exec_start.set(rq, clock_task);
        // Picked: to the head of cfs_tasks (fair.c: set_next_task_fair()).
        rq.order.to_head(next.eid.load(Ordering::Relaxed) as usize);
        // (an idle task has run on its CPU since `rq::init_cpu`)
        next.note_ran_on(cpu);
    }
    crate::trace::record(now, || crate::trace::Event::Switch { prev: prev.id, prev_state, next: next.id });
}
