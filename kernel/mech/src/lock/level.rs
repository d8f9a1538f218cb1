//! The lock order: every lock's level, outer to inner, once, as types (so
//! that an order written in the code is checked when it compiles) and as
//! the runtime checker's classes (`lockdep.rs`, for the rest).
//!
//! A level is a type (`level::Runqueue`) implementing [`Level`]; an
//! `IrqMutex<L, T>` carries its level `L` in its type, so no lock is
//! without one. `A: Outside<B>` holds for every level `A` listed before `B`:
//! [`IrqMutex::lock_inside`](super::IrqMutex::lock_inside) takes a held
//! lock's guard and compiles only if the new lock's level is inner to it.
//! The same list gives [`LockClass`], whose discriminant is the level's
//! rank (0 outermost), for the checks only the running kernel can make:
//! locks taken in different functions, and two runqueues by CPU id.
//! docs/DESIGN.md's "Locks and their order" is this list.

/// A lock's level (one of the types below): its class for the checker.
pub trait Level {
    const CLASS: LockClass;
}

/// `Self` ranks outside `Inner`: a lock of level `Inner` may be taken while
/// one of `Self` is held (generated for every pair of the list, in its order).
pub trait Outside<Inner: Level>: Level {}

/// `impl Outside<B> for A` for every `A` before `B` in the list.
macro_rules! outside_pairs {
    () => {};
    ($first:ident $($rest:ident)*) => {
        $( impl Outside<$rest> for $first {} )*
        outside_pairs!($($rest)*);
    };
}

/// The list: `LockClass` (its variants in this order), one unit type per
/// level, their `Level` impls and every `Outside` pair.
macro_rules! lock_order {
    ($( $(#[$doc:meta])* $level:ident = $name:literal, )*) => {
        /// A lock's class for the runtime checker: its level's rank (the
        /// discriminant, 0 outermost) and name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u8)]
        pub enum LockClass {
            $( $(#[$doc])* $level, )*
        }

        /// How many classes there are.
        pub const CLASSES: usize = [$(stringify!($level)),*].len();

        impl LockClass {
            /// Every class, outer to inner (the simulator prices each).
            pub const ALL: [LockClass; CLASSES] = [$(LockClass::$level),*];

            /// The name the checker's reports use.
            pub fn name(self) -> &'static str {
                match self {
                    $( LockClass::$level => $name, )*
                }
            }
        }

        $(
            $(#[$doc])*
            pub struct $level;
            impl Level for $level {
                const CLASS: LockClass = LockClass::$level;
            }
        )*

        outside_pairs!($($level)*);
    };
}

lock_order! {
    /// `Task::pi_lock`: serialises the wakeups and attribute changes of one task.
    PiLock = "pi_lock",
    /// A CPU's balance state (`balance::cpu_state`; a wakeup's placement
    /// takes the waking CPU's under the wakee's `pi_lock`).
    BalanceState = "balance_state",
    /// A CPU's runqueue. Keyed by CPU: two nest in ascending CPU order only
    /// (`rq::lock_two`), which only the runtime checker can see.
    Runqueue = "runqueue",
    /// The hung-task detector's memory (`watchdog.rs`; held across its walk
    /// of the registry).
    HungTasks = "hung_tasks",
    /// The thread registry (`task.rs`).
    Registry = "registry",
    /// A CPU's wake list (`wakeup/wake_list.rs`).
    WakeList = "wake_list",
    /// A CPU's sleeper heap (`timer.rs`).
    Sleepers = "sleepers",
    /// A wait queue's waiter list (`sync`).
    WaitQueue = "wait_queue",
    /// A pipe's ring and the tasks waiting on either end (`sync::pipe`).
    Pipe = "pipe",
    /// A slot writer of "idle while others wait" (`balance::idle_wait`;
    /// under a runqueue lock, from its publish).
    IdleWaitSlot = "idle_wait_slot",
    /// A task's record of whom it woke (`Task::wakee`; under two runqueue
    /// locks in a pull, under the wakee's `pi_lock` in placement).
    Wakee = "wakee",
    /// Where a task last blocked (`Task::blocked_at`, `sched_debug=1`).
    BlockedAt = "blocked_at",
    /// A thread's stack until it is joined (`Task::stack`).
    TaskStack = "task_stack",
    /// A thread's entry closure until it starts (`Task::entry`).
    TaskEntry = "task_entry",
    /// The task names kept for the trace's dump (`trace.rs`).
    TraceNames = "trace_names",
    /// A semaphore's count (`sync::Semaphore`).
    SemaphoreCount = "semaphore_count",
    /// The IPIs a CPU holds back (`fault.rs`, `fault=ipi_delay,ipi_reorder`;
    /// taken where a reschedule IPI is sent: under a `pi_lock` or a runqueue lock).
    HeldIpis = "held_ipis",
    /// A workload's own data (`kernel/workloads`): taken with no scheduler
    /// lock held and held across none.
    Workload = "workload",
    /// A CPU's trace ring (`trace.rs`; recorded under runqueue locks).
    TraceRing = "trace_ring",
    /// The frame bitmap and the stack arena (the kernel's `mem/`).
    Memory = "memory",
    /// The console (the kernel's `console.rs`; interrupts off by `without_interrupts`).
    Console = "console",
    /// The kernel heap (the kernel's `mem/heap.rs`): any lock may be held
    /// while allocating, and the heap calls nothing.
    Heap = "heap",
}
