//! The platform interface: everything the mechanism needs from the machine.
//!
//! The kernel implements [`Platform`] for x86_64 (`kernel/src/arch/platform.rs`);
//! a host test or the simulator implements it for a modelled machine. The
//! mechanism calls only the free functions of this module, never a platform
//! type, so its code is the same on every platform.
//!
//! # Why a link-time binding (`set_platform!`) and not generics
//!
//! The platform names itself once per binary with [`set_platform!`], which
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

use alloc::sync::Arc;
use core::fmt;

use crate::lock::level::LockClass;

/// What the per-CPU `current` slot holds: the mechanism's task type, named
/// by the module that defines it (`task.rs`: `impl CurrentKind for Current`)
/// so that this interface, below every other module of the mechanism,
/// imports none of them (the kernel's `arch::percpu::CurrentKind` is the
/// same device one layer down).
pub trait CurrentKind {
    type Of;
}

/// The `current` slot, as a type to hang [`CurrentKind`] on.
pub struct Current;

/// The task type the `current` slot holds (`task::Task`).
pub type CurrentTask = <Current as CurrentKind>::Of;

/// Lines of another CPU's that the mechanism touches, for the platform to
/// price ([`Platform::remote_access`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RemoteAccess {
    /// The balancer or wakeup placement reads the load figures the CPU
    /// published (`balance::snapshot::cpu_snapshot`).
    Snapshot,
    /// A waker stored work for the CPU, which polls in idle and gets no
    /// IPI: the poller sees the line change by itself.
    WakePoller,
    /// A waker pushed a wakeup on the CPU's lock-free wake list: its
    /// compare-exchange took the list head's line, which the CPU's last
    /// drain wrote.
    WakeListPush,
}

/// A saved register frame of the platform's interrupt entry, opaque here: the
/// mechanism only hands the pointer the interrupt gave it back to
/// [`switch_frames`] and returns what that gives.
#[repr(C)]
pub struct Frame {
    _opaque: [u8; 0],
}

/// A task's saved execution context, owned by the task (`Task::ctx`). The
/// platform allocates it ([`Platform::context_new_thread`],
/// [`Platform::context_running_here`]) and names it by an opaque word; its
/// address never changes while the task lives, and dropping the handle frees
/// it ([`Platform::context_free`]).
#[derive(Debug)]
pub struct Context {
    handle: usize,
}

impl Context {
    /// Wraps the platform's handle.
    ///
    /// # Safety
    ///
    /// `handle` must name a context of this binary's platform that no other
    /// `Context` names: dropping the result hands it to
    /// [`Platform::context_free`], and every use hands it to the platform.
    pub unsafe fn from_handle(handle: usize) -> Context {
        Context { handle }
    }

    /// The platform's handle.
    #[inline(always)]
    pub fn handle(&self) -> usize {
        self.handle
    }

    /// A new thread that starts at `entry(arg)` on the stack whose top
    /// (exclusive, 16-byte aligned) is `stack_top`, interrupts on.
    pub fn new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> Context {
        __fairway_platform_context_new_thread(entry, arg, stack_top)
    }

    /// The context of code already running on `cpu` (its boot flow, which
    /// becomes its idle task).
    pub fn running_here(cpu: usize) -> Context {
        __fairway_platform_context_running_here(cpu)
    }

    /// Whether some CPU runs (or is still saving) this context (Linux's
    /// `p->on_cpu`).
    #[inline]
    pub fn on_cpu(&self) -> bool {
        __fairway_platform_context_on_cpu(self.handle)
    }

    /// Waits until no CPU runs this context (its frame is completely saved).
    #[inline]
    pub fn wait_off_cpu(&self) {
        while self.on_cpu() {
            core::hint::spin_loop();
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        __fairway_platform_context_free(self.handle);
    }
}

/// Why a switch could not happen.
#[derive(Debug)]
pub enum SwitchError {
    /// `next` stayed claimed by another CPU: it would run on two CPUs.
    RunningElsewhere { cpu: usize },
}

/// A callee-saved register (or FPU control word) that a voluntary switch did
/// not keep: see [`Platform::give_up_cpu_checking`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterMismatch {
    /// The register's name (`rbx`, `r12`, `mxcsr`, ...).
    pub register: &'static str,
    pub expected: u64,
    pub found: u64,
}

/// A thread stack handed out by the platform (plain data); give it back with
/// [`stack_free`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stack {
    /// The platform's slot number (its guard-page reports name it).
    pub slot: usize,
    /// One past the highest usable address, 16-byte aligned.
    pub top: u64,
}

/// Work the mechanism itself does whose time a simulated CPU must spend
/// explicitly (a real CPU spends it by doing it), named by what it is: the
/// platform prices it ([`Platform::mechanism_work`]; the simulator from its
/// `-icount` measurements, `sim/src/platform/prices.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// A pipe read or write of `bytes` bytes, apart from any wakeup it
    /// makes: the ring's lock, the copy, the counts (`sync::pipe`).
    PipeCopy { bytes: usize },
    /// One balance pass over a domain whose span has `cpus` CPUs
    /// (`balance::pass::balance_rq`): the environment, the plan, the
    /// groups' sums, each CPU's snapshot.
    BalancePass { cpus: u32 },
    /// Wakeup placement read one CPU's state on a span wider than the one
    /// it copies first (`balance::snapshot::LiveCpus`): `select_idle_cpu()`'s
    /// work per CPU examined.
    PlacementCpuRead,
}

/// How a run ends on purpose (the platform maps it to its exit status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A watchdog found a CPU or task stuck (`watchdog.rs`).
    Watchdog,
}

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

/// Binds the mechanism to `$platform` (a type implementing
/// [`Platform`]): invoke it once in the binary.
#[macro_export]
macro_rules! set_platform {
    ($platform:ty) => {
        const _: () = {
            use $crate::platform::Platform as __P;
            use $crate::platform::{Context as __Ctx, Exit as __Exit, Frame as __Frame, Stack as __Stack, SwitchError as __SwitchError, Work as __Work};
            use $crate::platform::CurrentTask as __Task;
            extern crate alloc as __alloc;
            #[no_mangle]
            #[inline]
            fn __fairway_platform_cpu_id() -> usize { <$platform as __P>::cpu_id() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_current() -> Option<__alloc::sync::Arc<__Task>> { <$platform as __P>::current() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_current_ptr() -> *const __Task { <$platform as __P>::current_ptr() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_set_current(t: __alloc::sync::Arc<__Task>) { <$platform as __P>::set_current(t) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_set_current_irqs_off(t: __alloc::sync::Arc<__Task>) { <$platform as __P>::set_current_irqs_off(t) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guard_enter() { <$platform as __P>::irq_guard_enter() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guard_enter_irqs_off() { <$platform as __P>::irq_guard_enter_irqs_off() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guard_exit() { <$platform as __P>::irq_guard_exit() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guards_held() -> u32 { <$platform as __P>::irq_guards_held() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irqs_enabled() -> bool { <$platform as __P>::irqs_enabled() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_disable() { <$platform as __P>::irq_disable() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_enable() { <$platform as __P>::irq_enable() }
            #[no_mangle]
            #[inline(always)]
            fn __fairway_platform_wait_for_interrupt() { <$platform as __P>::wait_for_interrupt() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> __Ctx {
                <$platform as __P>::context_new_thread(entry, arg, stack_top)
            }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_running_here(cpu: usize) -> __Ctx { <$platform as __P>::context_running_here(cpu) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_on_cpu(ctx: usize) -> bool { <$platform as __P>::context_on_cpu(ctx) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_free(ctx: usize) { <$platform as __P>::context_free(ctx) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_adopt_here(ctx: usize) { <$platform as __P>::context_adopt_here(ctx) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_switch_frames(frame: *mut __Frame, prev: usize, next: usize) -> Result<*mut __Frame, __SwitchError> {
                <$platform as __P>::switch_frames(frame, prev, next)
            }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_give_up_cpu() { <$platform as __P>::give_up_cpu() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_give_up_cpu_unheld() -> u32 { <$platform as __P>::give_up_cpu_unheld() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_give_up_cpu_checking(salt: u64) -> Option<$crate::platform::RegisterMismatch> {
                <$platform as __P>::give_up_cpu_checking(salt)
            }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_send_resched_ipi(cpu: usize) { <$platform as __P>::send_resched_ipi(cpu) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_timer_start_ns(ns: u64) { <$platform as __P>::timer_start_ns(ns) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_timer_stop() { <$platform as __P>::timer_stop() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_timer_eoi() { <$platform as __P>::timer_eoi() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_uptime_ns() -> u64 { <$platform as __P>::uptime_ns() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_alloc() -> Option<__Stack> { <$platform as __P>::stack_alloc() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_free(s: __Stack) { <$platform as __P>::stack_free(s) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_usage() -> (usize, usize) { <$platform as __P>::stack_usage() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_heap_usage() -> (usize, usize) { <$platform as __P>::heap_usage() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_sizing(out: &mut dyn core::fmt::Write) { <$platform as __P>::stack_sizing(out) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_write_line(args: core::fmt::Arguments) { <$platform as __P>::write_line(args) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_exit(why: __Exit) -> ! { <$platform as __P>::exit(why) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_burn_ns(ns: u64) { <$platform as __P>::burn_ns(ns) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_work_done(instructions: u64) { <$platform as __P>::work_done(instructions) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_mechanism_work(work: __Work) { <$platform as __P>::mechanism_work(work) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_busy_loops_run() -> bool { <$platform as __P>::busy_loops_run() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_lock_acquired(c: $crate::lock::level::LockClass, k: u32, l: usize) { <$platform as __P>::lock_acquired(c, k, l) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_lock_released(c: $crate::lock::level::LockClass, k: u32) { <$platform as __P>::lock_released(c, k) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_remote_access(cpu: usize, a: $crate::platform::RemoteAccess) { <$platform as __P>::remote_access(cpu, a) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_poll_relax() { <$platform as __P>::poll_relax() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_set_working_set(kib: u32) { <$platform as __P>::set_working_set(kib) }
        };
    };
}

// SAFETY: each symbol is defined by `set_platform!` above with exactly this
// signature (the same text, one macro), so a call reaches a Rust function of
// the declared type; a binary without the macro fails to link rather than
// run. The functions themselves are safe Rust (the trait's methods).
unsafe extern "Rust" {
    safe fn __fairway_platform_cpu_id() -> usize;
    safe fn __fairway_platform_current() -> Option<Arc<CurrentTask>>;
    safe fn __fairway_platform_current_ptr() -> *const CurrentTask;
    safe fn __fairway_platform_set_current(t: Arc<CurrentTask>);
    safe fn __fairway_platform_set_current_irqs_off(t: Arc<CurrentTask>);
    safe fn __fairway_platform_irq_guard_enter();
    safe fn __fairway_platform_irq_guard_enter_irqs_off();
    safe fn __fairway_platform_irq_guard_exit();
    safe fn __fairway_platform_irq_guards_held() -> u32;
    safe fn __fairway_platform_irqs_enabled() -> bool;
    safe fn __fairway_platform_irq_disable();
    safe fn __fairway_platform_irq_enable();
    safe fn __fairway_platform_wait_for_interrupt();
    safe fn __fairway_platform_context_new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> Context;
    safe fn __fairway_platform_context_running_here(cpu: usize) -> Context;
    safe fn __fairway_platform_context_on_cpu(ctx: usize) -> bool;
    safe fn __fairway_platform_context_free(ctx: usize);
    safe fn __fairway_platform_context_adopt_here(ctx: usize);
    safe fn __fairway_platform_switch_frames(frame: *mut Frame, prev: usize, next: usize) -> Result<*mut Frame, SwitchError>;
    safe fn __fairway_platform_give_up_cpu();
    safe fn __fairway_platform_give_up_cpu_unheld() -> u32;
    safe fn __fairway_platform_give_up_cpu_checking(salt: u64) -> Option<RegisterMismatch>;
    safe fn __fairway_platform_send_resched_ipi(cpu: usize);
    safe fn __fairway_platform_timer_start_ns(ns: u64);
    safe fn __fairway_platform_timer_stop();
    safe fn __fairway_platform_timer_eoi();
    safe fn __fairway_platform_uptime_ns() -> u64;
    safe fn __fairway_platform_stack_alloc() -> Option<Stack>;
    safe fn __fairway_platform_stack_free(s: Stack);
    safe fn __fairway_platform_stack_usage() -> (usize, usize);
    safe fn __fairway_platform_heap_usage() -> (usize, usize);
    safe fn __fairway_platform_stack_sizing(out: &mut dyn fmt::Write);
    safe fn __fairway_platform_write_line(args: fmt::Arguments);
    safe fn __fairway_platform_exit(why: Exit) -> !;
    safe fn __fairway_platform_burn_ns(ns: u64);
    safe fn __fairway_platform_work_done(instructions: u64);
    safe fn __fairway_platform_mechanism_work(work: Work);
    safe fn __fairway_platform_busy_loops_run() -> bool;
    safe fn __fairway_platform_lock_acquired(c: LockClass, k: u32, l: usize);
    safe fn __fairway_platform_lock_released(c: LockClass, k: u32);
    safe fn __fairway_platform_remote_access(cpu: usize, a: RemoteAccess);
    safe fn __fairway_platform_poll_relax();
    safe fn __fairway_platform_set_working_set(kib: u32);
}

// The mechanism's view: plain functions, named as the mechanism uses them.

/// This CPU's id.
#[inline(always)]
pub fn cpu_id() -> usize {
    __fairway_platform_cpu_id()
}

/// What runs on this CPU, `None` before its scheduler starts.
#[inline]
pub fn current() -> Option<Arc<CurrentTask>> {
    __fairway_platform_current()
}

/// Runs `f` with what runs on this CPU borrowed, if its scheduler started:
/// `current()` without the reference count, for a caller that holds it
/// across a sleep (a blocking wait). A closure handed to the platform
/// instead (`&mut dyn FnMut`) stayed an indirect call out of line, 27
/// instructions of a pipe round trip at one CPU (+0.9%); hence this second
/// `unsafe` of the crate.
#[inline]
pub fn with_current<R>(f: impl FnOnce(&Arc<CurrentTask>) -> R) -> Option<R> {
    let p = __fairway_platform_current_ptr();
    if p.is_null() {
        return None;
    }
    // SAFETY: by `Platform::current_ptr`'s contract `p` came from an
    // `Arc<CurrentTask>` whose strong count the running CPU's slot owns while this
    // code runs, so it stays alive during `f`; `ManuallyDrop` gives back no
    // count, as none was taken.
    let me = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(p) });
    Some(f(&me))
}

/// See [`Platform::set_current`].
#[inline]
pub fn set_current(task: Arc<CurrentTask>) {
    __fairway_platform_set_current(task)
}

/// See [`Platform::set_current_irqs_off`].
#[inline]
pub fn set_current_irqs_off(task: Arc<CurrentTask>) {
    __fairway_platform_set_current_irqs_off(task)
}

/// See [`Platform::irq_guard_enter`].
#[inline(always)]
pub fn irq_guard_enter() {
    __fairway_platform_irq_guard_enter()
}

/// See [`Platform::irq_guard_enter_irqs_off`].
#[inline(always)]
pub fn irq_guard_enter_irqs_off() {
    __fairway_platform_irq_guard_enter_irqs_off()
}

/// See [`Platform::irq_guard_exit`].
#[inline(always)]
pub fn irq_guard_exit() {
    __fairway_platform_irq_guard_exit()
}

/// See [`Platform::irq_guards_held`].
#[inline]
pub fn irq_guards_held() -> u32 {
    __fairway_platform_irq_guards_held()
}

/// Whether interrupts are on here.
#[inline]
pub fn irqs_enabled() -> bool {
    __fairway_platform_irqs_enabled()
}

/// Interrupts off here.
#[inline]
pub fn irq_disable() {
    __fairway_platform_irq_disable()
}

/// Interrupts on here.
#[inline]
pub fn irq_enable() {
    __fairway_platform_irq_enable()
}

/// Runs `f` with interrupts off, restoring whether they were on.
#[inline]
pub fn without_interrupts<R>(f: impl FnOnce() -> R) -> R {
    let was_on = irqs_enabled();
    if was_on {
        irq_disable();
    }
    let r = f();
    if was_on {
        irq_enable();
    }
    r
}

/// See [`Platform::wait_for_interrupt`].
#[inline]
pub fn wait_for_interrupt() {
    __fairway_platform_wait_for_interrupt()
}

/// See [`Platform::context_adopt_here`].
#[inline]
pub fn adopt_here(ctx: &Context) {
    __fairway_platform_context_adopt_here(ctx.handle)
}

/// See [`Platform::switch_frames`].
#[inline(always)]
pub fn switch_frames(frame: *mut Frame, prev: &Context, next: &Context) -> Result<*mut Frame, SwitchError> {
    __fairway_platform_switch_frames(frame, prev.handle, next.handle)
}

/// See [`Platform::give_up_cpu`].
#[inline]
pub fn give_up_cpu() {
    __fairway_platform_give_up_cpu()
}

/// See [`Platform::give_up_cpu_unheld`].
#[inline(always)]
pub fn give_up_cpu_unheld() -> u32 {
    __fairway_platform_give_up_cpu_unheld()
}

/// See [`Platform::give_up_cpu_checking`].
pub fn give_up_cpu_checking(salt: u64) -> Option<RegisterMismatch> {
    __fairway_platform_give_up_cpu_checking(salt)
}

/// See [`Platform::send_resched_ipi`].
#[inline]
pub fn send_resched_ipi(cpu: usize) {
    __fairway_platform_send_resched_ipi(cpu)
}

/// See [`Platform::timer_start_ns`].
#[inline]
pub fn timer_start_ns(ns: u64) {
    __fairway_platform_timer_start_ns(ns)
}

/// See [`Platform::timer_stop`].
#[inline]
pub fn timer_stop() {
    __fairway_platform_timer_stop()
}

/// See [`Platform::timer_eoi`].
#[inline]
pub fn timer_eoi() {
    __fairway_platform_timer_eoi()
}

/// Nanoseconds since boot.
#[inline(always)]
pub fn uptime_ns() -> u64 {
    __fairway_platform_uptime_ns()
}

/// See [`Platform::stack_alloc`].
pub fn stack_alloc() -> Option<Stack> {
    __fairway_platform_stack_alloc()
}

/// See [`Platform::stack_free`].
pub fn stack_free(stack: Stack) {
    __fairway_platform_stack_free(stack)
}

/// (stacks in use, stacks there are).
pub fn stack_usage() -> (usize, usize) {
    __fairway_platform_stack_usage()
}

/// (heap bytes in use, heap bytes there are).
pub fn heap_usage() -> (usize, usize) {
    __fairway_platform_heap_usage()
}

/// See [`Platform::stack_sizing`].
pub fn stack_sizing(out: &mut dyn fmt::Write) {
    __fairway_platform_stack_sizing(out)
}

/// One console line (`kprintln!`, `record!`).
#[inline]
pub fn write_line(args: fmt::Arguments) {
    __fairway_platform_write_line(args)
}

/// Ends the run (see [`Platform::exit`]).
pub fn exit(why: Exit) -> ! {
    __fairway_platform_exit(why)
}

/// Spins this CPU for `ns` ns of its clock (see [`Platform::burn_ns`]): the
/// one way a workload burns CPU time, so that a simulated platform can
/// advance its virtual clock instead.
#[inline]
pub fn burn_ns(ns: u64) {
    __fairway_platform_burn_ns(ns)
}

/// Accounts a workload's busy-loop batch of about `instructions` guest
/// instructions (see [`Platform::work_done`]): free on x86.
#[inline]
pub fn work_done(instructions: u64) {
    __fairway_platform_work_done(instructions)
}

/// Accounts the mechanism's own `work` (see [`Platform::mechanism_work`]):
/// free on x86.
#[inline]
pub fn mechanism_work(work: Work) {
    __fairway_platform_mechanism_work(work)
}

/// Whether a busy loop's iterations must run (see [`Platform::busy_loops_run`]):
/// true on x86.
#[inline]
pub fn busy_loops_run() -> bool {
    __fairway_platform_busy_loops_run()
}

/// See [`Platform::lock_acquired`].
#[inline(always)]
pub fn lock_acquired(class: LockClass, key: u32, lock: usize) {
    __fairway_platform_lock_acquired(class, key, lock)
}

/// See [`Platform::lock_released`].
#[inline(always)]
pub fn lock_released(class: LockClass, key: u32) {
    __fairway_platform_lock_released(class, key)
}

/// See [`Platform::remote_access`].
#[inline(always)]
pub fn remote_access(cpu: usize, access: RemoteAccess) {
    __fairway_platform_remote_access(cpu, access)
}

/// See [`Platform::poll_relax`].
#[inline(always)]
pub fn poll_relax() {
    __fairway_platform_poll_relax()
}

/// Declares the running task's working set in KiB (see
/// [`Platform::set_working_set`]): free on x86.
#[inline(always)]
pub fn set_working_set(kib: u32) {
    __fairway_platform_set_working_set(kib)
}
