//! Scheduler invariant checks (`sched_debug=1`; always on in the scenarios
//! that ask for it). A violation panics with the runqueue dumped.
//!
//! Checked per runqueue at every switch and tick: the policy crate's own tree
//! and `avg_vruntime` consistency (`FairRq::check_tree`), the task map against
//! the entities, the queued count and weight sum, and the running task.
//! Checked across CPUs (`check_global`, every 100 ticks on CPU 0 and at the
//! end of a workload): every runnable task is on exactly one runqueue or on
//! its way to one. That no task runs on two CPUs is enforced at every switch
//! (`arch::context::switch_frames`).

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;
use core::sync::atomic::{AtomicBool, Ordering};

use sched::EntityId;

use crate::resched;
use crate::rq::{self, Rq};
use crate::task::{self, TaskState};

static ENABLED: AtomicBool = AtomicBool::new(false);

pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Checks one locked runqueue.
pub fn check_rq(rq: &Rq) {
    if let Err(e) = rq.fair.check_tree() {
        fail(rq, e);
    }
    let mut queued = 0u32;
    let mut weight = 0u64;
    for (i, slot) in rq.tasks.iter().enumerate() {
        let Some(t) = slot else { continue };
        let Some(se) = rq.fair.entity(EntityId(i as u32)) else {
            fail(rq, "a task maps to a dead entity");
        };
        if t.eid.load(Ordering::Relaxed) != i as u32 || t.cpu.load(Ordering::Relaxed) != rq.cpu {
            fail(rq, "a task's eid or cpu disagrees with the runqueue holding it");
        }
        if se.on_rq {
            queued += 1;
            weight += se.w();
        }
    }
    if queued != rq.fair.nr_queued() {
        fail(rq, "nr_queued differs from the queued entities");
    }
    if weight != rq.fair.load_weight() {
        fail(rq, "the load weight differs from the sum of the queued weights");
    }
    match rq.fair.curr() {
        Some(e) => {
            if rq.curr.is_idle || rq.curr.eid.load(Ordering::Relaxed) != e.0 {
                fail(rq, "the fair class's current entity is not the running task");
            }
        }
        None => {
            if !rq.curr.is_idle {
                fail(rq, "a task runs but the fair class has no current entity");
            }
        }
    }
}

/// Checks that every runnable task is on exactly one runqueue or in transit.
pub fn check_global() {
    let cpus: Vec<usize> = rq::online_mask().iter().collect();
    let guards: Vec<_> = cpus.iter().map(|&c| rq::lock(c)).collect();
    for t in task::all() {
        if t.state() == TaskState::Dead || t.eid.load(Ordering::Relaxed) == u32::MAX {
            continue;
        }
        // A wakeup or affinity change in progress holds the pi_lock and may
        // have the task between two runqueues: skip it this time.
        let Some(_pi) = t.pi_lock.try_lock() else { continue };
        let holders: Vec<usize> = guards
            .iter()
            .filter(|g| g.tasks.iter().any(|s| s.as_ref().is_some_and(|x| alloc::sync::Arc::ptr_eq(x, &t))))
            .map(|g| g.cpu)
            .collect();
        let in_transit = crate::wakeup::in_transit(&t, &guards);
        // Exactly one home: a runqueue holding its entity (a sleeping task
        // keeps it on its last CPU; a wakeup to that same CPU through the
        // wake list leaves it there), or a wake list carrying the entity to a
        // new CPU.
        let ok = matches!((holders.len(), in_transit), (1, None) | (1, Some(false)) | (0, Some(true)));
        if !ok {
            let mut s = String::new();
            let _ = write!(s, "task {} ({}) is held by CPUs {:?}, in transit: {:?}", t.id, t.name, holders, in_transit);
            drop(_pi);
            drop(guards);
            panic!("sched invariant violated: {}", s);
        }
    }
}

fn fail(rq: &Rq, what: &str) -> ! {
    crate::kprintln!("SCHED INVARIANT VIOLATED on CPU {}: {}", rq.cpu, what);
    crate::kprintln!(
        "  runqueue: nr_queued={} h_nr_runnable={} load={} curr={} clock={}",
        rq.fair.nr_queued(),
        rq.fair.h_nr_runnable(),
        rq.fair.load_weight(),
        rq.curr.name,
        rq.clock
    );
    for (i, slot) in rq.tasks.iter().enumerate() {
        if let Some(t) = slot {
            match rq.fair.entity(EntityId(i as u32)) {
                Some(se) => crate::kprintln!(
                    "  eid {} task {} ({}) state {:?} on_rq={} delayed={} w={} vruntime={} deadline={} vlag={}",
                    i, t.id, t.name, t.state(), se.on_rq, se.sched_delayed, se.w(), se.vruntime, se.deadline, se.vlag
                ),
                None => crate::kprintln!("  eid {} task {} ({}): no entity", i, t.id, t.name),
            }
        }
    }
    panic!("sched invariant violated on CPU {}: {}", rq.cpu, what);
}

/// Prints every CPU's runqueue and every task's state (`sched_debug=1`, every
/// 3 s of uptime from whichever CPU ticks): what a hang looks like from
/// inside. Each CPU line is read under that CPU's runqueue lock (one lock at
/// a time, never waited for: a busy lock is said so). The task lines take no
/// lock (a dump must not deadlock on a hung CPU's lock), so they are a later
/// sample than the CPU lines: a task can show `Running` (runnable) on a CPU
/// whose line above had nothing queued; the header line says so.
pub fn dump_all() {
    for cpu in rq::online_mask().iter() {
        let Some(rq) = rq::try_lock(cpu) else {
            crate::kprintln!("dump: CPU {} runqueue lock busy", cpu);
            continue;
        };
        crate::kprintln!(
            "dump: CPU {} curr={} nr_queued={} runnable={} need_resched={} clock={}",
            cpu,
            rq.curr.name,
            rq.fair.nr_queued(),
            rq.fair.h_nr_runnable(),
            resched::need_resched(cpu),
            rq.clock
        );
    }
    crate::kprintln!("dump: tasks, a lock-free sample taken after the CPU lines (runqueues may have changed since)");
    for t in task::all() {
        crate::kprintln!(
            "dump: task {} ({}) state={:?} cpu={} eid={} on_cpu={} switches={} wakeups={} blocked_at={:?}",
            t.id,
            t.name,
            t.state(),
            t.cpu.load(Ordering::Relaxed),
            t.eid.load(Ordering::Relaxed),
            t.ctx.on_cpu(),
            t.stats.nr_switches.load(Ordering::Relaxed),
            t.stats.nr_wakeups.load(Ordering::Relaxed),
            t.blocked_at.lock().map(|l| (l.file(), l.line()))
        );
    }
}
