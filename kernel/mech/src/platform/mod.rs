//! The platform interface: everything the mechanism needs from the machine.
//!
//! The kernel implements [`Platform`] for x86_64 (`kernel/src/arch/platform.rs`);
//! a host test or the simulator implements it for a modelled machine. The
//! mechanism calls only the free functions of this module, never a platform
//! type, so its code is the same on every platform.
//!
//! # Why a link-time binding (`set_platform!`) and not generics
//!
//! The platform names itself once per binary with [`set_platform!`](crate::set_platform), which
//! defines one `#[no_mangle]` function per trait item forwarding to the impl;
//! this module declares the same symbols in one `extern "Rust"` block (the
//! pattern of the `critical-section` crate). The alternative, every function
//! generic over `P: Platform` with the state in a `Sched<P>`, would change the
//! signature of every function and every per-CPU static of the mechanism for
//! one platform per binary, which both users have (the kernel; the simulator
//! runs one modelled machine per process). The binding costs nothing: the
//! kernel is built with fat LTO (`profile.kernel`), which inlines the
//! forwarding functions and the impl into their callers, as if the mechanism
//! called `arch` directly. The price is that a binary without
//! `set_platform!` fails to link (naming the missing `__fairway_platform_*`
//! symbol), and a second one fails with a duplicate symbol.
//!
//! # The contract
//!
//! Types that cross the interface are the mechanism's own task (as
//! [`CurrentTask`]: see [`CurrentKind`]), opaque handles ([`Context`],
//! [`Frame`]) or plain data ([`Stack`]); the platform's register frame and
//! saved context stay its own. Each function's doc below is
//! its contract; the platform's impl must keep it (the mechanism's invariants
//! in docs/DESIGN.md assume it).
//!
//! # Where its parts are
//!
//! This file is the contract ([`Platform`]); `handles.rs` the types that
//! cross it; `binding.rs` how a binary binds its platform ([`set_platform!`](crate::set_platform))
//! and the symbols the mechanism calls; `calls.rs` the mechanism's view, one
//! plain function per item.

use alloc::sync::Arc;
use core::fmt;

use crate::lock::level::LockClass;

mod binding;
mod calls;
mod handles;

pub use calls::*;
pub use handles::*;

/// What the mechanism needs from the machine. Every function is called on
/// the CPU it concerns unless it takes a `cpu`.
pub trait Platform {
    /// This CPU's id, `0..MAX_CPUS`.
    fn cpu_id() -> usize;

    /// What runs on this CPU (the per-CPU `current` slot), `None` before its
    /// scheduler starts. The slot owns one strong count.
    fn current() -> Option<Arc<CurrentTask>>;
    /// The slot's task as the pointer of its `Arc` (`Arc::as_ptr`), null
    /// before the scheduler starts here. Contract: a non-null result is
    /// the caller's own task, and the slot of whatever CPU runs the caller
    /// owns a strong count of it for as long as the caller runs
    /// ([`with_current`] borrows it without a count on that ground).
    fn current_ptr() -> *const CurrentTask;
    /// Makes `task` what runs here (dropping the previous one's count).
    fn set_current(task: Arc<CurrentTask>);
    /// As `set_current`, interrupts already off (the switch), with the
    /// slot holding a task (`set_current` filled it when the CPU's
    /// scheduler started): a platform need not test it for empty.
    fn set_current_irqs_off(task: Arc<CurrentTask>);

    /// Enters a nested interrupt-off section (the first one disables
    /// interrupts, remembering whether they were on).
    fn irq_guard_enter();
    /// As `irq_guard_enter`, called only with interrupts already off (the
    /// switch, or inside a held section): a platform may skip saving and
    /// disabling them. By default the same as `irq_guard_enter`.
    #[inline(always)]
    fn irq_guard_enter_irqs_off() {
        Self::irq_guard_enter()
    }
    /// Leaves one (the last one restores what the first found).
    fn irq_guard_exit();
    /// How many sections this CPU is inside.
    fn irq_guards_held() -> u32;
    /// Whether interrupts are on here.
    fn irqs_enabled() -> bool;
    /// Interrupts off here.
    fn irq_disable();
    /// Interrupts on here.
    fn irq_enable();
    /// Interrupts on and wait for the next one (idle), atomically: an
    /// interrupt that arrives in between ends the wait.
    fn wait_for_interrupt();

    /// See [`Context::new_thread`].
    fn context_new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> Context;
    /// See [`Context::running_here`].
    fn context_running_here(cpu: usize) -> Context;
    /// See [`Context::on_cpu`].
    fn context_on_cpu(ctx: usize) -> bool;
    /// Frees a context no CPU runs.
    fn context_free(ctx: usize);
    /// Makes `ctx` (from `context_running_here` on this CPU) the one this
    /// CPU's interrupts save into. Interrupts off.
    fn context_adopt_here(ctx: usize);
    /// Switches this CPU from `prev` (running here; `frame` is its frame,
    /// just saved by the interrupt) to `next`, another context: claims
    /// `next`, releases `prev`, returns the frame to resume. Interrupts off.
    /// The switch calls it only when the two differ (a task picked again
    /// resumes `frame`), so a platform need not test it.
    fn switch_frames(frame: *mut Frame, prev: usize, next: usize) -> Result<*mut Frame, SwitchError>;
    /// The running task gives up its CPU (its state set first): saves its
    /// context and enters `schedule::schedule_voluntary` as the schedule
    /// interrupt would; returns when the task runs again. Does nothing
    /// before this CPU's scheduler runs.
    fn give_up_cpu();
    /// [`give_up_cpu`](Self::give_up_cpu) unless this CPU holds
    /// interrupt-off guards ([`irq_guards_held`](Self::irq_guards_held)):
    /// then it returns their count without switching (`schedule()`'s test,
    /// which a platform may make in one load with the scheduler's); 0
    /// otherwise.
    #[inline(always)]
    fn give_up_cpu_unheld() -> u32 {
        let held = Self::irq_guards_held();
        if held == 0 {
            Self::give_up_cpu();
        }
        held
    }
    /// As [`give_up_cpu`](Self::give_up_cpu), with every register and
    /// control word a call must preserve holding a value derived from
    /// `salt` (give each thread its own); returns the first one that
    /// differs when the task runs again. For the test of the switch
    /// (`workload=regs`), never on a fast path. A platform whose switch
    /// cannot lose registers (the simulator's coroutines) keeps the default:
    /// it gives up the CPU and reports nothing.
    fn give_up_cpu_checking(salt: u64) -> Option<RegisterMismatch> {
        let _ = salt;
        Self::give_up_cpu();
        None
    }

    /// Sends `cpu` the reschedule interrupt (whose handler runs the wake
    /// list, a kicked NOHZ balance and a pending reschedule).
    fn send_resched_ipi(cpu: usize);
    /// Arms this CPU's one-shot timer to fire in `ns` nanoseconds (at least
    /// one timer count).
    fn timer_start_ns(ns: u64);
    /// Stops this CPU's timer.
    fn timer_stop();
    /// Acknowledges the timer interrupt being handled (before the handler
    /// may switch away).
    fn timer_eoi();
    /// Nanoseconds since boot, one clock for every CPU.
    fn uptime_ns() -> u64;

    /// A guarded thread stack, `None` when none is free.
    fn stack_alloc() -> Option<Stack>;
    /// Gives a stack back.
    fn stack_free(stack: Stack);
    /// (stacks in use, stacks there are).
    fn stack_usage() -> (usize, usize);
    /// (heap bytes in use, heap bytes there are).
    fn heap_usage() -> (usize, usize);
    /// Writes how the stack arena was sized, for a workload's refusal when
    /// too few stacks are free: `: RULE` and, when more memory would give
    /// more stacks, `; more memory gives more, up to N`; nothing before the
    /// arena is sized.
    fn stack_sizing(out: &mut dyn fmt::Write);

    /// Writes one line on the console, whole (lines of CPUs never mix).
    fn write_line(args: fmt::Arguments);
    /// Ends the run with `why` (the first caller wins; others stop).
    fn exit(why: Exit) -> !;
    /// Busy CPU work for `ns` nanoseconds of this CPU's clock, interruptible (a workload's spin).
    fn burn_ns(ns: u64);
    /// A workload's own busy loop (the hog's arithmetic, `schbench::work`,
    /// ebizzy's copies) did about `instructions` guest instructions of pure
    /// computation since its last call: one call per batch of iterations.
    /// A real CPU spent that time itself, so x86 does nothing (no clock read:
    /// under `-icount` each `rdtsc` ends QEMU's translation block); a
    /// simulated CPU, whose loops take no virtual time, advances its clock by
    /// them (interruptible, as `burn_ns`), which is also what lets a task
    /// spinning on a flag be preempted by the one that sets it. Called with
    /// interrupts off or a lock held (the simulator's pricing of
    /// [`mechanism_work`](Self::mechanism_work) does), a simulated CPU must
    /// not give up its CPU there, so it advances only its own clock (what
    /// `uptime_ns` reads on it) and pays the time when interrupts come back on.
    fn work_done(instructions: u64);
    /// The mechanism did `work` (see [`Work`]), possibly with interrupts off
    /// or a lock held (as for `work_done`). A real CPU spent the time doing
    /// it: nothing (the default), and the call compiles away.
    fn mechanism_work(work: Work) {
        let _ = work;
    }
    /// Whether a workload's busy loop must execute for its time to pass.
    /// True on a real CPU (the default). A simulated CPU's clock moves by
    /// `work_done` alone, and the loops' results are never read (they are
    /// `black_box`ed arithmetic), so it returns false and the workloads skip
    /// the host work: schbench's calibrated loops were most of a simulated
    /// run's host time (docs/SIMULATOR.md, "Speed of a workload run").
    fn busy_loops_run() -> bool {
        true
    }

    // What a real machine's hardware makes cost time by itself, and a
    // simulated one must be told of to price (docs/SIMULATOR.md, "The
    // hardware cost model"). Each does nothing by default, and x86 keeps
    // the default: the calls inline to nothing. Each has a signature no
    // other item has: LLVM merges `set_platform!`'s forwarders whose bodies
    // are the same (empty, on x86) and signatures too into one alias, whose
    // calls are not inlined (a hook taking one `usize` beside
    // `work_done(u64)` costs the pipe round trip 0.6-1.6%).

    /// This CPU has just taken lock `lock` (the `IrqMutex`'s address) of
    /// `class` and `key` (`lockdep`'s): a simulated CPU waits here for
    /// another CPU's hold of it and pays the lock's lines coming from where
    /// it was last held.
    #[inline(always)]
    fn lock_acquired(_class: LockClass, _key: u32, _lock: usize) {}
    /// This CPU releases its lock of `class` and `key` (it holds one of each
    /// at a time: `lockdep`'s rule).
    #[inline(always)]
    fn lock_released(_class: LockClass, _key: u32) {}
    /// This CPU touches lines `cpu` wrote (see [`RemoteAccess`]).
    #[inline(always)]
    fn remote_access(_cpu: usize, _access: RemoteAccess) {}
    /// One turn of `idle=poll`'s wait for work (`core::hint::spin_loop` on a
    /// real CPU; a simulated one waits for a [`RemoteAccess::WakePoller`]
    /// or an interrupt).
    #[inline(always)]
    fn poll_relax() {
        core::hint::spin_loop()
    }
    /// The running task touches about `kib` KiB of memory each time it runs
    /// (its working set, declared by the workload): what a simulated CPU
    /// refills when the task comes to it with its caches cold.
    #[inline(always)]
    fn set_working_set(_kib: u32) {}
}
