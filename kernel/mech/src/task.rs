//! The task structure, the running task (`current`) and the registry of
//! live threads. Creating, ending and joining threads is `thread.rs`.
//!
//! A `Task` is shared (`Arc`) between the registry, the runqueue that holds
//! it, wait queues and joiners. Its scheduling state follows the protocol of
//! `wakeup/mod.rs`: `state` says whether it wants to run, its fair entity's
//! `on_rq` (inside its CPU's runqueue) whether it is queued, and its
//! context's `on_cpu` whether a CPU is running (or still saving) it.
//!
//! Follows Linux's `struct task_struct` and `get_current()`.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

use sched::cpumask::CpuMask;

use crate::lock::{level, IrqMutex};
use crate::platform::{Context, Stack};
use crate::MAX_CPUS;

pub type TaskId = u32;

/// The load weight of a nice level (Linux's table; nice 0 = 1024).
pub fn nice_weight(nice: i32) -> u64 {
    sched::Nice::new(nice.clamp(-20, 19)).map_or(1024, |n| n.weight().weight())
}

/// A task's allowed CPUs, readable without a lock.
///
/// Invariant: `weight` is the number of bits set in `words`; both change
/// only under the task's `pi_lock` (`setattr::set_affinity`),
/// so a reader holding the `pi_lock` sees one consistent mask; a reader
/// without it may see a mix of the old and new words, which is harmless for
/// the single-CPU tests (`contains`) the switch path makes.
pub struct AffinityMask {
    words: [AtomicU64; MAX_CPUS / 64],
    /// How many CPUs the mask holds (Linux's `nr_cpus_allowed`).
    weight: AtomicU32,
    /// Its lowest CPU (`u32::MAX` when empty): with `weight`, a pinned
    /// task's CPU in two loads.
    first: AtomicU32,
}

impl AffinityMask {
    fn new(mask: CpuMask) -> AffinityMask {
        let w = mask.bits();
        AffinityMask {
            words: core::array::from_fn(|i| AtomicU64::new(w[i])),
            weight: AtomicU32::new(mask.weight()),
            first: AtomicU32::new(mask.first().map_or(u32::MAX, |c| c as u32)),
        }
    }
    pub fn load(&self) -> CpuMask {
        CpuMask::from_words_in_use(|i| self.words[i].load(Ordering::Acquire))
    }
    /// Adds the mask's CPUs to `m` (no mask built: what a union over many
    /// tasks' masks needs).
    pub fn union_into(&self, m: &mut CpuMask) {
        m.union_with_words(|i| self.words[i].load(Ordering::Acquire));
    }
    /// Replaces the mask; the caller holds the task's `pi_lock`.
    pub fn store(&self, mask: CpuMask) {
        for (word, &bits) in self.words.iter().zip(mask.words_in_use()) {
            word.store(bits, Ordering::Release);
        }
        self.first.store(mask.first().map_or(u32::MAX, |c| c as u32), Ordering::Release);
        self.weight.store(mask.weight(), Ordering::Release);
    }
    #[inline]
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.words[cpu / 64].load(Ordering::Acquire) & (1 << (cpu % 64)) != 0
    }
    /// The one allowed CPU of a task pinned to it (weight 1). Under the
    /// task's `pi_lock` (as `store`), so the two fields agree.
    #[inline]
    pub fn single(&self) -> Option<usize> {
        if self.weight() == 1 {
            Some(self.first.load(Ordering::Acquire) as usize)
        } else {
            None
        }
    }
    /// The number of allowed CPUs.
    #[inline]
    pub fn weight(&self) -> usize {
        self.weight.load(Ordering::Acquire) as usize
    }
}

/// What a task wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TaskState {
    /// Runnable or running.
    Running = 0,
    /// Blocked until a wakeup.
    Sleeping = 1,
    /// Finished; never runs again.
    Dead = 2,
}

/// How a task left its CPU at a switch, as the switch decided it from the
/// state it read once (the `prev_state` of Linux's `sched_switch` trace
/// event; the byte is the letter the trace prints).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PrevState {
    /// Still runnable: preempted, yielding, or interrupted before it could block.
    Runnable = b'R',
    /// Blocked (dequeued now, or its dequeue delayed).
    Sleeping = b'S',
    /// Exited: its last switch.
    Dead = b'D',
}

impl PrevState {
    /// The trace's letter: R, S or D.
    pub fn letter(self) -> char {
        self as u8 as char
    }
}

/// What proves that the runqueue holding a task is locked: implemented by
/// `rq::Rq` and its guard only (a `&Rq` exists only under its lock), and
/// taken by a task's runqueue-locked fields ([`UnderRqLock`]).
pub trait RqLocked {}

/// A task's field that is meaningful only under the lock of the runqueue
/// holding the task: every access takes that runqueue (a [`RqLocked`]: `&Rq`,
/// which only a held `RqGuard` hands out) as the witness, so no code reaches
/// the value without a runqueue lock. The atomic is only there to make
/// `Task` Sync; the accesses are plain loads and stores.
pub struct UnderRqLock(AtomicU64);

impl UnderRqLock {
    pub const fn new(v: u64) -> UnderRqLock {
        UnderRqLock(AtomicU64::new(v))
    }
    #[inline(always)]
    pub fn get(&self, rq: &impl RqLocked) -> u64 {
        let _ = rq;
        self.0.load(Ordering::Relaxed)
    }
    #[inline(always)]
    pub fn set(&self, rq: &impl RqLocked, v: u64) {
        let _ = rq;
        self.0.store(v, Ordering::Relaxed)
    }
}

impl Default for UnderRqLock {
    fn default() -> Self {
        UnderRqLock::new(0)
    }
}

/// How a thread's end reaches those who join it: completed by its final
/// switch (`schedule.rs`), waited for by `thread::join`. `thread.rs` gives
/// each thread it spawns one (a `sync::Completion`: the wait queues are
/// above this file, hence a trait object); idle tasks never end and have
/// none.
pub trait ExitNotice: Send + Sync {
    /// The task has made its last switch: wakes the joiners.
    fn complete(&self);
    /// Blocks until [`complete`](Self::complete).
    fn wait(&self);
}

/// Per-task counters (Linux's `se.sum_exec_runtime`, `sched_info`, `se.statistics`).
#[derive(Default)]
pub struct TaskStats {
    pub sum_exec_runtime: AtomicU64,
    pub wait_sum: AtomicU64,
    pub wait_max: AtomicU64,
    pub nr_switches: AtomicU64,
    pub nr_migrations: AtomicU64,
    pub nr_wakeups: AtomicU64,
    pub nr_wakeups_local: AtomicU64,
    pub nr_wakeups_remote: AtomicU64,
    pub nr_wakeups_sync: AtomicU64,
    /// Clock (ns) when the task last became runnable and waited.
    pub queued_at: UnderRqLock,
    /// Clock (ns) when the task last started running.
    pub exec_start: UnderRqLock,
}

/// A kernel thread.
pub struct Task {
    pub id: TaskId,
    pub name: String,
    state: AtomicU8,
    pub ctx: Context,
    /// The CPU whose runqueue holds (or last held) the task's fair entity.
    pub cpu: AtomicUsize,
    /// Handle of its fair entity in that runqueue (valid under that rq's lock).
    pub eid: AtomicU32,
    pub nice: AtomicI32,
    /// Custom slice in ns (0: the default).
    pub slice_ns: AtomicU64,
    /// CPUs it may run on.
    pub affinity: AffinityMask,
    /// Serialises wakeups of this task (Linux's `p->pi_lock`).
    pub pi_lock: IrqMutex<level::PiLock, ()>,
    /// CPUs it has ever run on (checked by the affinity scenario).
    ran_on: [AtomicU64; MAX_CPUS / 64],
    /// The CPU it last started running on (`u32::MAX`: none yet), whose
    /// bit `ran_on` then holds: a switch to the task tests this one word.
    /// Written by that CPU's switch, under its runqueue lock.
    last_ran_on: AtomicU32,
    pub stats: TaskStats,
    /// True for the per-CPU idle tasks (never in a fair runqueue).
    pub is_idle: bool,
    /// Its stack until it is joined (`thread.rs`).
    pub(crate) stack: IrqMutex<level::TaskStack, Option<Stack>>,
    /// What it runs, until it starts (`thread.rs`).
    pub(crate) entry: IrqMutex<level::TaskEntry, Option<Box<dyn FnOnce() + Send>>>,
    /// How its end reaches its joiners (`None` for an idle task).
    pub(crate) exited: Option<Box<dyn ExitNotice>>,
    /// The CPU select_idle_sibling remembered for this task (Linux's
    /// `recent_used_cpu`; `usize::MAX`: none).
    pub recent_used_cpu: AtomicUsize,
    /// wake_wide's memory of whom this task woke (Linux's wakee_flips).
    pub wakee: IrqMutex<level::Wakee, sched::balance::WakeeState>,
    /// Where the task last blocked (file:line), for hang diagnostics
    /// (recorded with `sched_debug=1` only: it costs a lock per wait).
    pub blocked_at: IrqMutex<level::BlockedAt, Option<&'static core::panic::Location<'static>>>,
    /// In a `WaitQueue` (changed only under that queue's lock).
    pub on_wait_queue: AtomicBool,
    /// Linux's `p->on_rq`, kept conservatively: false only while the task's
    /// entity is known to be off its runqueue. The switch clears it (under
    /// the runqueue lock, before the frame is released) when a blocking
    /// task's entity leaves the queue at once; the wakeup that enqueues the
    /// task again sets it (under `pi_lock`). A delayed entity that the
    /// policy dequeues later leaves it true, and its wakeup then looks under
    /// the runqueue lock as before (`wakeup/mod.rs`).
    pub on_rq: AtomicBool,
    /// The entity's load when it left the queue (meaningful while `on_rq` is
    /// false; nothing changes a dequeued entity): placement reads it
    /// without the runqueue lock.
    pub slept_load: [AtomicU64; 3],
    /// The deadline (ns) of the `thread::sleep_ns` the task is in, 0 when
    /// not in one: the hung-task detector reports a sleep long past it.
    pub sleep_deadline: AtomicU64,
    /// Its entry on a CPU's lock-free wake list (Linux's `wake_entry`),
    /// meaningful while it is on one: the next entry's entity id (low 32
    /// bits) and the wakeup's flags (`rq::WakeList`).
    pub(crate) wake_link: AtomicU64,
}

impl Task {
    pub fn state(&self) -> TaskState {
        // Only `set_state` writes the byte: a discriminant.
        match self.state.load(Ordering::Acquire) {
            0 => TaskState::Running,
            1 => TaskState::Sleeping,
            2 => TaskState::Dead,
            v => unreachable!("task state byte {}", v),
        }
    }

    pub fn set_state(&self, s: TaskState) {
        self.state.store(s as u8, Ordering::Release);
    }
    pub fn allowed(&self, cpu: usize) -> bool {
        self.affinity.contains(cpu)
    }

    /// Notes that the task starts running on `cpu` (its CPU's switch, under
    /// its runqueue lock).
    #[inline]
    pub fn note_ran_on(&self, cpu: usize) {
        // Usually where it ran last: one compare.
        if self.last_ran_on.load(Ordering::Relaxed) != cpu as u32 {
            self.note_ran_on_new(cpu);
        }
    }

    #[inline(never)]
    fn note_ran_on_new(&self, cpu: usize) {
        self.last_ran_on.store(cpu as u32, Ordering::Relaxed);
        let word = &self.ran_on[cpu / 64];
        if word.load(Ordering::Relaxed) & (1 << (cpu % 64)) == 0 {
            sched::cpumask::cover_cpu(cpu);
            word.fetch_or(1 << (cpu % 64), Ordering::Relaxed);
        }
    }

    /// CPUs the task has run on so far.
    pub fn ran_on(&self) -> CpuMask {
        CpuMask::from_words_in_use(|i| self.ran_on[i].load(Ordering::Relaxed))
    }

    pub fn nice_value(&self) -> i32 {
        self.nice.load(Ordering::Relaxed)
    }

    /// A task that starts Running on `cpu`'s runqueue (not yet queued).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        id: TaskId,
        name: String,
        ctx: Context,
        cpu: usize,
        nice: i32,
        affinity: CpuMask,
        is_idle: bool,
        exited: Option<Box<dyn ExitNotice>>,
    ) -> Task {
        Task {
            id,
            name,
            state: AtomicU8::new(TaskState::Running as u8),
            ctx,
            cpu: AtomicUsize::new(cpu),
            eid: AtomicU32::new(u32::MAX),
            nice: AtomicI32::new(nice),
            slice_ns: AtomicU64::new(0),
            affinity: AffinityMask::new(affinity),
            pi_lock: IrqMutex::new(()),
            ran_on: [const { AtomicU64::new(0) }; MAX_CPUS / 64],
            last_ran_on: AtomicU32::new(u32::MAX),
            stats: TaskStats::default(),
            is_idle,
            stack: IrqMutex::new(None),
            entry: IrqMutex::new(None),
            exited,
            blocked_at: IrqMutex::new(None),
            on_wait_queue: AtomicBool::new(false),
            on_rq: AtomicBool::new(true),
            slept_load: [const { AtomicU64::new(0) }; 3],
            wakee: IrqMutex::new(sched::balance::WakeeState::default()),
            recent_used_cpu: AtomicUsize::new(usize::MAX),
            sleep_deadline: AtomicU64::new(0),
            wake_link: AtomicU64::new(0),
        }
    }
}

// The platform's per-CPU `current` slot holds an `Arc<Task>`: this is the one
// place that says so (see `platform::CurrentKind`).
impl crate::platform::CurrentKind for crate::platform::Current {
    type Of = Task;
}

static REGISTRY: IrqMutex<level::Registry, BTreeMap<TaskId, Arc<Task>>> = IrqMutex::new(BTreeMap::new());

/// The task running on this CPU.
#[inline]
pub fn current() -> Arc<Task> {
    crate::platform::current().expect("scheduler started on this CPU")
}

/// Runs `f` with the task running on this CPU borrowed: `current()` without
/// taking a reference count.
#[inline]
pub fn with_current<R>(f: impl FnOnce(&Arc<Task>) -> R) -> R {
    crate::platform::with_current(f).expect("scheduler started on this CPU")
}

/// The task running on this CPU, or a stand-in idle task before its
/// scheduler starts.
pub fn current_or_idle() -> Arc<Task> {
    match crate::platform::current() {
        Some(t) => t,
        None => new_idle(crate::platform::cpu_id()),
    }
}

/// Records the task now running on this CPU (once per CPU, when its
/// runqueue starts).
pub fn set_current(task: Arc<Task>) {
    crate::platform::set_current(task);
}

/// Records the task this CPU switches to (the switch, interrupts off).
pub fn switch_current(task: Arc<Task>) {
    crate::platform::set_current_irqs_off(task);
}

/// The idle task of `cpu`: its boot flow, which is running now.
pub fn new_idle(cpu: usize) -> Arc<Task> {
    let mut name = String::from("swapper/");
    push_num(&mut name, cpu);
    Arc::new(Task::new(0, name, Context::running_here(cpu), cpu, 0, CpuMask::single(cpu), true, None))
}

fn push_num(s: &mut String, n: usize) {
    use core::fmt::Write;
    let _ = write!(s, "{}", n);
}

/// Adds a new thread to the registry (`thread::spawn`).
pub(crate) fn register(task: &Arc<Task>) {
    REGISTRY.lock().insert(task.id, task.clone());
}

/// Forgets a joined thread (`thread::join`).
pub(crate) fn unregister(id: TaskId) {
    REGISTRY.lock().remove(&id);
}

/// All live (not yet joined) threads.
pub fn all() -> Vec<Arc<Task>> {
    REGISTRY.lock().values().cloned().collect()
}

/// Calls `f` with each live thread, under the registry lock (no
/// allocation: the watchdog's scan runs in the tick).
pub fn for_each(mut f: impl FnMut(&Arc<Task>)) {
    for t in REGISTRY.lock().values() {
        f(t);
    }
}

/// A sleeping thread, the `r % n`-th of the `n` that sleep now (for
/// `fault=spurious_wake`; it may be awake again by the time it is woken).
pub fn pick_sleeping(r: u64) -> Option<Arc<Task>> {
    let reg = REGISTRY.lock();
    let sleeping = || reg.values().filter(|t| !t.is_idle && t.state() == TaskState::Sleeping);
    let n = sleeping().count() as u64;
    if n == 0 {
        return None;
    }
    sleeping().nth((r % n) as usize).cloned()
}
/// The thread whose stack is in arena slot `slot` (for stack-overflow reports).
pub fn by_stack_slot(slot: usize) -> Option<Arc<Task>> {
    let reg = REGISTRY.try_lock()?;
    reg.values().find(|t| t.stack.try_lock().is_some_and(|s| s.is_some_and(|s| s.slot == slot))).cloned()
}
