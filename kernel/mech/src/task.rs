//! Kernel threads: the task structure, spawning, exit, join and the registry.
//!
//! A `Task` is shared (`Arc`) between the registry, the runqueue that holds
//! it, wait queues and joiners. Its scheduling state follows the protocol of
//! `wakeup.rs`: `state` says whether it wants to run, its fair entity's
//! `on_rq` (inside its CPU's runqueue) whether it is queued, and its
//! context's `on_cpu` whether a CPU is running (or still saving) it.
//!
//! Follows Linux's `kernel/fork.c: kernel_clone()` (with `sched_fork()` and
//! `wake_up_new_task()`) and `kernel/exit.c: do_exit()`; `current` as
//! `get_current()`.

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

use sched::cpumask::CpuMask;

use crate::platform::{Context, Stack};
use crate::MAX_CPUS;
use crate::lock::{level, IrqMutex};
use crate::sync::Completion;

pub type TaskId = u32;

/// The load weight of a nice level (Linux's table; nice 0 = 1024).
pub fn nice_weight(nice: i32) -> u64 {
    sched::Nice::new(nice.clamp(-20, 19)).map_or(1024, |n| n.weight().weight())
}

/// A task's allowed CPUs, readable without a lock.
///
/// Invariant: `weight` is the number of bits set in `words`; both change
/// only under the task's `pi_lock` (`wakeup::set_affinity`),
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
        CpuMask::from_bits(core::array::from_fn(|i| self.words[i].load(Ordering::Acquire)))
    }
    /// Replaces the mask; the caller holds the task's `pi_lock`.
    pub fn store(&self, mask: CpuMask) {
        for (word, bits) in self.words.iter().zip(mask.bits()) {
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
    pub queued_at: crate::rq::UnderRqLock,
    /// Clock (ns) when the task last started running.
    pub exec_start: crate::rq::UnderRqLock,
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
    pub stats: TaskStats,
    /// True for the per-CPU idle tasks (never in a fair runqueue).
    pub is_idle: bool,
    stack: IrqMutex<level::TaskStack, Option<Stack>>,
    entry: IrqMutex<level::TaskEntry, Option<Box<dyn FnOnce() + Send>>>,
    pub exited: Completion,
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
    /// the runqueue lock as before (`wakeup.rs`).
    pub on_rq: AtomicBool,
    /// The entity's load when it left the queue (meaningful while `on_rq` is
    /// false; nothing changes a dequeued entity): placement reads it
    /// without the runqueue lock.
    pub slept_load: [AtomicU64; 3],
    /// The deadline (ns) of the `timer::sleep_ns` the task is in, 0 when
    /// not in one: the hung-task detector reports a sleep long past it.
    pub sleep_deadline: AtomicU64,
    /// The hung-task detector's memory (`watchdog.rs`, only it writes
    /// them): when it first saw the task asleep with no wakeup coming
    /// (ns, 0: not seen so), and the task's `nr_wakeups` then.
    pub hung_seen_at: AtomicU64,
    pub hung_seen_wakeups: AtomicU64,
}

impl Task {
    pub fn state(&self) -> TaskState {
        match self.state.load(Ordering::Acquire) {
            0 => TaskState::Running,
            1 => TaskState::Sleeping,
            _ => TaskState::Dead,
        }
    }

    pub fn set_state(&self, s: TaskState) {
        self.state.store(s as u8, Ordering::Release);
    }
    pub fn allowed(&self, cpu: usize) -> bool {
        self.affinity.contains(cpu)
    }

    #[inline]
    pub fn note_ran_on(&self, cpu: usize) {
        let word = &self.ran_on[cpu / 64];
        // Usually known already: a load instead of a locked read-modify-write.
        if word.load(Ordering::Relaxed) & (1 << (cpu % 64)) == 0 {
            word.fetch_or(1 << (cpu % 64), Ordering::Relaxed);
        }
    }

    /// CPUs the task has run on so far.
    pub fn ran_on(&self) -> CpuMask {
        CpuMask::from_bits([
            self.ran_on[0].load(Ordering::Relaxed),
            self.ran_on[1].load(Ordering::Relaxed),
            self.ran_on[2].load(Ordering::Relaxed),
            self.ran_on[3].load(Ordering::Relaxed),
        ])
    }

    pub fn nice_value(&self) -> i32 {
        self.nice.load(Ordering::Relaxed)
    }

    fn new(id: TaskId, name: String, ctx: Context, cpu: usize, nice: i32, affinity: CpuMask, is_idle: bool) -> Task {
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
            stats: TaskStats::default(),
            is_idle,
            stack: IrqMutex::new(None),
            entry: IrqMutex::new(None),
            exited: Completion::new(),
            blocked_at: IrqMutex::new(None),
            on_wait_queue: AtomicBool::new(false),
            on_rq: AtomicBool::new(true),
            slept_load: [const { AtomicU64::new(0) }; 3],
            wakee: IrqMutex::new(sched::balance::WakeeState::default()),
            recent_used_cpu: AtomicUsize::new(usize::MAX),
            sleep_deadline: AtomicU64::new(0),
            hung_seen_at: AtomicU64::new(0),
            hung_seen_wakeups: AtomicU64::new(0),
        }
    }
}

// The platform's per-CPU `current` slot holds an `Arc<Task>`: this is the one
// place that says so (see `platform::CurrentKind`).
impl crate::platform::CurrentKind for crate::platform::Current {
    type Of = Task;
}

static NEXT_ID: AtomicU32 = AtomicU32::new(1);
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
    Arc::new(Task::new(0, name, Context::running_here(cpu), cpu, 0, CpuMask::single(cpu), true))
}

fn push_num(s: &mut String, n: usize) {
    use core::fmt::Write;
    let _ = write!(s, "{}", n);
}

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
    let task = Arc::new(Task::new(id, opts.name, ctx, cpu, opts.nice, affinity, false));
    task.slice_ns.store(opts.slice_ns.unwrap_or(0), Ordering::Relaxed);
    *task.stack.lock() = Some(stack);
    *task.entry.lock() = Some(Box::new(f));
    REGISTRY.lock().insert(id, task.clone());
    crate::trace::name_task(id, &task.name);
    crate::wakeup::wake_up_new_task(&task);
    Ok(task)
}

/// First code of every thread (on its own stack, interrupts on).
extern "C" fn thread_start(id: usize) -> ! {
    let me = current();
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
    let me = current();
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
    task.exited.wait();
    // Its last switch may still be saving the frame on its CPU.
    task.ctx.wait_off_cpu();
    if let Some(s) = task.stack.lock().take() {
        crate::platform::stack_free(s);
    }
    REGISTRY.lock().remove(&task.id);
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
