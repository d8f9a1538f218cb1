//! Changing a live task's scheduling attributes: its nice level (core.c
//! `set_user_nice()`), its custom slice (`sched_setattr()`'s runtime,
//! core.c `__setscheduler_params()`) and its allowed CPUs
//! (`sched_setaffinity()`, core.c `__set_cpus_allowed_ptr()`);
//! `workload=torture` changes all three while tasks run.
//!
//! All follow Linux's `task_rq_lock()` discipline: the task's `pi_lock`
//! (no wakeup can move it meanwhile), then the runqueue holding its entity.
//! An entity in transit on a wake list (a cross-CPU wakeup or a migration
//! carries it) is on no runqueue; Linux waits out `TASK_ON_RQ_MIGRATING` the
//! same way, so a nice or slice change retries until the entity has landed
//! (an affinity change needs no retry: the entity lands on a CPU the
//! wakeup's placement chose under the new mask, or moves at its next switch).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use sched::{EntityId, FairRq, WakeFlags};

use crate::resched::resched_cpu;
use crate::rq::{self, WakeMove as Move};
use crate::task::{Task, TaskState};
use crate::wakeup::push_remote_or_local;

/// Why an attribute could not be changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetattrError {
    /// Nice outside -20..19.
    BadNice,
    /// The task has exited.
    Exited,
}

impl core::fmt::Display for SetattrError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SetattrError::BadNice => write!(f, "nice must be from -20 to 19"),
            SetattrError::Exited => write!(f, "the task has exited"),
        }
    }
}

/// Sets `p`'s nice level (core.c `set_user_nice()`): the entity is
/// reweighted in place, keeping its lag (`FairRq::reweight`, which also
/// asks for the preemption checks of fair.c `prio_changed_fair()`).
pub fn set_user_nice(p: &Arc<Task>, nice: i32) -> Result<(), SetattrError> {
    let n = sched::Nice::new(nice).ok_or(SetattrError::BadNice)?;
    change(p, |fair, eid| {
        let _ = fair.reweight(eid, n);
        p.nice.store(nice, Ordering::Relaxed);
    })
}

/// Sets `p`'s custom slice in ns (0: back to the base slice), clamped as
/// `sched_setattr()` clamps it (`FairRq::set_slice`).
pub fn set_slice(p: &Arc<Task>, ns: u64) -> Result<(), SetattrError> {
    change(p, |fair, eid| {
        let _ = fair.set_slice(eid, ns);
        p.slice_ns.store(ns, Ordering::Relaxed);
    })
}

/// Runs `f` on `p`'s entity under `p.pi_lock` and its runqueue's lock,
/// then asks for the switch the policy wants.
fn change(p: &Arc<Task>, mut f: impl FnMut(&mut FairRq, EntityId)) -> Result<(), SetattrError> {
    loop {
        let pi = p.pi_lock.lock();
        if p.state() == TaskState::Dead {
            return Err(SetattrError::Exited);
        }
        let mut rq = crate::rq::lock_task_rq_inside(&pi, p);
        let eid = EntityId(p.eid.load(Ordering::Relaxed));
        if !rq.task_of(eid.0).is_some_and(|t| Arc::ptr_eq(t, p)) {
            // In transit on a wake list: wait until it lands.
            drop(rq);
            drop(pi);
            core::hint::spin_loop();
            continue;
        }
        rq.update_clock();
        f(&mut rq.fair, eid);
        // A sleeping task's placement reads the load it kept when it left
        // the queue (`Task::on_rq`): keep the new weight's.
        if !p.on_rq.load(Ordering::Relaxed) {
            let l = crate::balance::wake::WakeeLoad::of(&rq, p);
            crate::balance::wake::WakeeLoad::keep_slept(p, l);
        }
        let resched = rq.fair.need_resched();
        let cpu = rq.cpu;
        crate::balance::snapshot::publish_load(&rq);
        drop(rq);
        drop(pi);
        if resched {
            crate::resched::resched_cpu(cpu);
            // Changing the running task's own attributes: switch now if
            // asked (Linux reschedules at the next preemption point).
            crate::schedule::preempt_point();
        }
        return Ok(());
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
