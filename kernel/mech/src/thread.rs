//! Threads: creating one (fork placement, its stack and context, its first
//! enqueue), ending it and joining it, and a thread's timed sleep.
//!
//! Follows Linux's `kernel/fork.c: kernel_clone()` (with `sched_fork()` and
//! `wake_up_new_task()`) and `kernel/exit.c: do_exit()`; a join waits for
//! the exited thread's last switch, which completes its [`ExitNotice`] (a
//! `sync::Completion`), and then frees its stack.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU32, Ordering};

use sched::cpumask::CpuMask;

use crate::platform::Context;
use crate::rq;
use crate::sync::Completion;
use crate::task::{self, ExitNotice, Task, TaskState};

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

/// How to create a thread.
pub struct Spawn {
    pub name: String,
    pub nice: i32,
    /// Custom slice in ns (None: the default).
    pub slice_ns: Option<u64>,
    /// Allowed CPUs (None: all online CPUs).
    pub affinity: Option<CpuMask>,
    /// CPU to start on (None: the spawning CPU, or the first allowed one).
    pub cpu: Option<usize>,
}

impl Spawn {
    pub fn new(name: &str) -> Spawn {
        Spawn { name: String::from(name), nice: 0, slice_ns: None, affinity: None, cpu: None }
    }
    pub fn nice(mut self, nice: i32) -> Spawn {
        self.nice = nice.clamp(-20, 19);
        self
    }
    /// A custom slice (Linux's `sched_attr.sched_runtime`), honoured from
    /// the task's first enqueue (`wake_up_new_task`); `workload=latency`'s
    /// `slice_us` sets it.
    pub fn slice_ns(mut self, ns: u64) -> Spawn {
        self.slice_ns = Some(ns);
        self
    }
    pub fn pin(mut self, cpu: usize) -> Spawn {
        self.affinity = Some(CpuMask::single(cpu));
        self.cpu = Some(cpu);
        self
    }
    /// An affinity mask wider than one CPU (`workload=spread,mask=`).
    pub fn affinity(mut self, mask: CpuMask) -> Spawn {
        self.affinity = Some(mask);
        self
    }
    pub fn on_cpu(mut self, cpu: usize) -> Spawn {
        self.cpu = Some(cpu);
        self
    }
}

/// Why a thread could not be created.
#[derive(Debug)]
pub enum SpawnError {
    /// Every stack of the arena is in use.
    NoStack { in_use: usize, total: usize },
    /// The affinity mask has no online CPU.
    NoAllowedCpu,
}

impl core::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SpawnError::NoStack { in_use, total } => write!(f, "no free thread stack ({} of {} in use)", in_use, total),
            SpawnError::NoAllowedCpu => write!(f, "its affinity mask has no online CPU"),
        }
    }
}

/// Creates a thread running `f` and makes it runnable.
pub fn spawn(opts: Spawn, f: impl FnOnce() + Send + 'static) -> Result<Arc<Task>, SpawnError> {
    let online = crate::rq::online_mask();
    let affinity = opts.affinity.map_or(online, |m| m.intersection(&online));
    let here = crate::platform::cpu_id();
    let cpu = match opts.cpu {
        Some(c) if affinity.contains(c) => c,
        // Fork balancing: the idlest CPU the domains lead to.
        _ => match crate::balance::wake::select_fork_cpu(affinity, opts.nice, here) {
            Some(c) => c,
            None if affinity.contains(here) => here,
            None => affinity.first().ok_or(SpawnError::NoAllowedCpu)?,
        },
    };
    let Some(stack) = crate::platform::stack_alloc() else {
        let (in_use, total) = crate::platform::stack_usage();
        return Err(SpawnError::NoStack { in_use, total });
    };
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let ctx = Context::new_thread(thread_start, id as usize, stack.top);
    let exited: Box<dyn ExitNotice> = Box::new(Completion::new());
    let task = Arc::new(Task::new(id, opts.name, ctx, cpu, opts.nice, affinity, false, Some(exited)));
    task.slice_ns.store(opts.slice_ns.unwrap_or(0), Ordering::Relaxed);
    *task.stack.lock() = Some(stack);
    *task.entry.lock() = Some(Box::new(f));
    task::register(&task);
    crate::trace::name_task(id, &task.name);
    crate::wakeup::wake_up_new_task(&task);
    Ok(task)
}

/// First code of every thread (on its own stack, interrupts on).
extern "C" fn thread_start(id: usize) -> ! {
    let me = task::current();
    debug_assert_eq!(me.id as usize, id);
    let entry = me.entry.lock().take();
    drop(me);
    if let Some(f) = entry {
        f();
    }
    exit()
}

/// Ends the calling thread.
pub fn exit() -> ! {
    let me = task::current();
    me.set_state(TaskState::Dead);
    drop(me);
    // The final switch (schedule_irq) completes `exited` for the joiners.
    loop {
        // `fault=preempt_points`: preempted while Dead, still queued.
        crate::inject::preempt_point();
        crate::schedule::schedule();
    }
}

/// Waits for `task` to exit, then frees its stack and forgets it.
pub fn join(task: &Arc<Task>) {
    // Completed by the task's final switch, not by `exit` itself: a task that
    // is preempted between `exit` and that switch still runs on its stack.
    if let Some(exited) = &task.exited {
        exited.wait();
    }
    // Its last switch may still be saving the frame on its CPU.
    task.ctx.wait_off_cpu();
    if let Some(s) = task.stack.lock().take() {
        crate::platform::stack_free(s);
    }
    task::unregister(task.id);
}

/// Sleeps at least `ns` nanoseconds (on this CPU's sleeper heap,
/// `timer.rs`, whose interrupt wakes the thread at the deadline).
#[track_caller]
pub fn sleep_ns(ns: u64) {
    let me = task::current();
    if crate::debug::enabled() {
        *me.blocked_at.lock() = Some(core::panic::Location::caller());
    }
    let deadline = rq::now_ns().saturating_add(ns);
    // For the hung-task detector: a sleep long past this has lost its wakeup.
    me.sleep_deadline.store(deadline.max(1), Ordering::Relaxed);
    while rq::now_ns() < deadline {
        crate::platform::without_interrupts(|| {
            me.set_state(TaskState::Sleeping);
            crate::timer::add_sleeper(me.clone(), deadline);
        });
        crate::inject::preempt_point();
        crate::schedule::schedule();
        if crate::inject::armed() && rq::now_ns() < deadline {
            // woken before its deadline: sleeps again
            crate::inject::after_wait();
        }
    }
    me.sleep_deadline.store(0, Ordering::Relaxed);
}
