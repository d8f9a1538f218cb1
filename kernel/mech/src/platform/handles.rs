//! What crosses the platform interface: the `current` slot's type, the
//! opaque handles of a task's context and an interrupt's frame, and plain
//! data (stacks, the kinds of work and remote access a platform prices).

use super::binding::*;

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
/// price ([`Platform::remote_access`](super::Platform::remote_access)).
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
/// [`switch_frames`](super::switch_frames) and returns what that gives.
#[repr(C)]
pub struct Frame {
    _opaque: [u8; 0],
}

/// A task's saved execution context, owned by the task (`Task::ctx`). The
/// platform allocates it ([`Platform::context_new_thread`](super::Platform::context_new_thread),
/// [`Platform::context_running_here`](super::Platform::context_running_here)) and names it by an opaque word; its
/// address never changes while the task lives, and dropping the handle frees
/// it ([`Platform::context_free`](super::Platform::context_free)).
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
    /// [`Platform::context_free`](super::Platform::context_free), and every use hands it to the platform.
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
/// not keep: see [`Platform::give_up_cpu_checking`](super::Platform::give_up_cpu_checking).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterMismatch {
    /// The register's name (`rbx`, `r12`, `mxcsr`, ...).
    pub register: &'static str,
    pub expected: u64,
    pub found: u64,
}

/// A thread stack handed out by the platform (plain data); give it back with
/// [`stack_free`](super::stack_free).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stack {
    /// The platform's slot number (its guard-page reports name it).
    pub slot: usize,
    /// One past the highest usable address, 16-byte aligned.
    pub top: u64,
}

/// Work the mechanism itself does whose time a simulated CPU must spend
/// explicitly (a real CPU spends it by doing it), named by what it is: the
/// platform prices it ([`Platform::mechanism_work`](super::Platform::mechanism_work); the simulator from its
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
