//! Per-CPU runqueues: one lock each, the fair class (the policy crate's
//! `FairRq`), then the idle task (the class order: fair, then idle).
//!
//! Lock order: a runqueue lock is taken after a task's `pi_lock` and before
//! any wait-queue, timer or wake-list lock; two runqueue locks are taken in
//! ascending CPU order (`lock_two`). Runqueue locks disable interrupts.
//!
//! Follows Linux's `struct rq` and its locking in `kernel/sched/core.c`
//! (`__task_rq_lock()`, `double_rq_lock()`); the reschedule request is
//! `resched.rs`.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sched::balance::migrate::CfsTasksOrder;
use sched::balance::AvgIdle;
use sched::cpumask::CpuMask;
use sched::tunables::Tunables;
use sched::{FairRq, SchedEntity, WakeFlags};

use crate::MAX_CPUS;
use crate::stats::CpuStat;
use crate::lock::level::{self, Outside};
use crate::lock::{Holds, IrqGuard, IrqMutex};
use crate::task::Task;
use crate::percpu::{per_cpu, PerCpu};

/// A task moving to this runqueue through its wake list, with its entity
/// (plain wakeups travel as an entity id only; see [`WakeList`]).
pub struct WakeMove {
    pub task: Arc<Task>,
    pub se: SchedEntity,
    pub flags: WakeFlags,
}

/// No entity: the end of a wake chain, and the empty head.
pub const WAKE_NIL: u32 = u32::MAX;

/// [`WakeList::head`]'s bit saying that `moves` holds tasks.
const WAKE_MOVES: u64 = 1 << 32;

/// The head of an empty wake list.
const WAKE_EMPTY: u64 = WAKE_NIL as u64;

/// A CPU's incoming tasks (Linux's `rq->wake_list`; `wakeup/wake_list.rs` queues and
/// drains it).
///
/// Plain wakeups (the common case: the task's entity stays in this CPU's
/// runqueue, `Rq::tasks` keeps the task) go on a lock-free stack of entity
/// ids, Linux's `llist` of `wake_entry`: `head`'s low 32 bits name the
/// newest entry, each entry's task links to the next one in its own
/// `Task::wake_link` (with its wake flags), and [`WAKE_NIL`] ends it. A
/// waker pushes with one compare-exchange, the owner takes the whole stack
/// with one exchange. No ABA: nothing but the take removes an entry, and a
/// task is on at most one list once (its wakeup found it asleep under its
/// `pi_lock`, and it cannot sleep again before it runs).
///
/// Tasks that change CPU bring their entity, which no runqueue holds on the
/// way, and the list must own them (an `Arc` that safe code cannot keep in
/// an atomic word): they wait in `moves`, under a lock, and `head`'s bit 32
/// says they are there, so that one word tells whether the list is empty
/// (the IPI goes out only when it was) and the owner takes the lock only
/// when moves wait.
///
/// Invariants: an entity id in the chain names a task of this CPU's
/// `Rq::tasks` that is `Running` and whose entity is not queued; `moves` is
/// non-empty only while bit 32 is set (set after each push, under the lock).
pub struct WakeList {
    head: AtomicU64,
    moves: IrqMutex<level::WakeList, Vec<WakeMove>>,
}

impl WakeList {
    const fn new() -> Self {
        WakeList { head: AtomicU64::new(WAKE_EMPTY), moves: IrqMutex::new(Vec::new()) }
    }

    /// Pushes the plain wakeup of `p` (its entity in this CPU's runqueue,
    /// `p`'s `pi_lock` held) with `flags` (`wakeup/wake_list.rs`'s encoding, 32 bits);
    /// returns whether the list was empty.
    #[inline]
    pub fn push_wake(&self, p: &Task, flags: u32) -> bool {
        let eid = p.eid.load(Ordering::Relaxed);
        let mut old = self.head.load(Ordering::Relaxed);
        loop {
            p.wake_link.store(u64::from(old as u32) | (u64::from(flags) << 32), Ordering::Relaxed);
            // Release: the drain that takes the entry sees its link.
            match self.head.compare_exchange_weak(old, (old & WAKE_MOVES) | u64::from(eid), Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return old == WAKE_EMPTY,
                Err(now) => old = now,
            }
        }
    }

    /// Queues a task that brings its entity; returns whether the list was
    /// empty.
    pub fn push_move(&self, item: WakeMove) -> bool {
        let mut moves = self.moves.lock();
        moves.push(item);
        self.head.fetch_or(WAKE_MOVES, Ordering::AcqRel) == WAKE_EMPTY
    }

    /// Whether anything waits (Linux's `rq->ttwu_pending`).
    #[inline]
    pub fn pending(&self) -> bool {
        self.head.load(Ordering::Acquire) != WAKE_EMPTY
    }

    /// Empties the list's lock-free part (its CPU, under its runqueue
    /// lock): returns the newest plain wakeup's entity id (the chain runs
    /// newest first; [`WAKE_NIL`]: none) and whether moves wait, which the
    /// caller takes next with [`moves_inside`](Self::moves_inside) (a move
    /// pushed in between sets the bit again: the next drain finds nothing).
    #[inline]
    pub fn take(&self) -> (u32, bool) {
        let word = self.head.swap(WAKE_EMPTY, Ordering::Acquire);
        (word as u32, word & WAKE_MOVES != 0)
    }

    /// The queued moves, oldest first, locked inside this CPU's runqueue
    /// lock `rq`.
    #[inline]
    pub fn moves_inside(&self, rq: &RqGuard<'_>) -> IrqGuard<'_, level::WakeList, Vec<WakeMove>> {
        self.moves.lock_inside(rq)
    }

    /// Whether `p` is on this list, as a move (true) or a plain wakeup
    /// (false); `rq` is this CPU's runqueue, locked (the invariant checks).
    pub fn find(&self, rq: &Rq, p: &Arc<Task>) -> Option<bool> {
        if self.moves.lock().iter().any(|w| Arc::ptr_eq(&w.task, p)) {
            return Some(true);
        }
        let mut eid = self.head.load(Ordering::Acquire) as u32;
        while eid != WAKE_NIL {
            let Some(t) = rq.task_of(eid) else { break };
            if Arc::ptr_eq(t, p) {
                return Some(false);
            }
            eid = t.wake_link.load(Ordering::Relaxed) as u32;
        }
        None
    }
}

/// One CPU's runqueue.
///
/// Invariants (checked by `debug::check_rq`): `tasks[e]` is `Some` exactly
/// for the live entities `e` of `fair`; `curr` is the task running on this CPU
/// (the idle task when `fair` has no current entity); every task in `tasks`
/// has `cpu == self.cpu` and `eid == e`.
pub struct Rq {
    pub cpu: usize,
    pub fair: FairRq,
    pub tasks: Vec<Option<Arc<Task>>>,
    pub curr: Arc<Task>,
    pub idle: Arc<Task>,
    /// Task clock in ns (from the TSC), updated at each operation batch.
    pub clock: u64,
    /// A wakeup that updated `clock` asked this CPU to switch: the switch
    /// skips its own, back-to-back update (Linux's `rq_clock_skip_update`).
    pub clock_skip: bool,
    pub stat: CpuStat,
    /// Capacity before pressure (`cpu_capacity=`, default 1024).
    pub capacity_orig: u64,
    /// Capacity left for fair tasks after the pressure source.
    pub capacity: u64,
    /// Load of a running task that does not fit this CPU (0: none).
    pub misfit_task_load: u64,
    /// Linux's `rq->avg_idle` and `max_idle_balance_cost`: the idle periods
    /// newidle balancing opens (`balance::newidle`) and wakeups close.
    pub avg_idle: AvgIdle,
    /// The order of Linux's `cfs_tasks` list over `tasks`' slots (slots are
    /// reused): the balancer detaches from its tail.
    pub order: CfsTasksOrder,
}

/// The task of entity `eid` in a runqueue's `tasks`: [`Rq::task_of`] on the
/// field alone, for a caller that keeps the task borrowed while it changes
/// the runqueue's other fields.
#[inline(always)]
pub fn task_in(tasks: &[Option<Arc<Task>>], eid: u32) -> Option<&Arc<Task>> {
    tasks.get(eid as usize).and_then(|t| t.as_ref())
}

impl Rq {
    /// The task of entity `eid`.
    pub fn task_of(&self, eid: u32) -> Option<&Arc<Task>> {
        task_in(&self.tasks, eid)
    }

    /// Records `task` as the owner of entity `eid`.
    pub fn attach(&mut self, eid: u32, task: Arc<Task>) {
        let i = eid as usize;
        if self.tasks.len() <= i {
            self.tasks.resize(i + 1, None);
        }
        task.eid.store(eid, Ordering::Relaxed);
        task.cpu.store(self.cpu, Ordering::Release);
        self.tasks[i] = Some(task);
        // Put on cfs_tasks: at its head (fair.c: account_entity_enqueue()).
        self.order.to_head(i);
    }

    /// Forgets the owner of entity `eid`.
    pub fn detach(&mut self, eid: u32) -> Option<Arc<Task>> {
        self.tasks.get_mut(eid as usize).and_then(|t| t.take())
    }

    /// Brings the clock and the fair class's clock (`clock_task`) to now.
    pub fn update_clock(&mut self) {
        let now = now_ns();
        if now > self.clock {
            self.clock = now;
        }
        self.fair.update_clock(self.clock_task());
    }

    /// Linux's `rq_clock_task`: `clock` less the time the `cpu_capacity=`
    /// pressure source took (`stat.pressure_ns`, its one counter: no task's
    /// time, left out as `update_rq_clock_task()` leaves out IRQ time), so
    /// the fair class only moves forward on the time tasks could run.
    #[inline]
    pub fn clock_task(&self) -> u64 {
        self.clock.saturating_sub(self.stat.pressure_ns)
    }
}

/// This module's per-CPU part (its `CPUS`): what Linux's `struct rq` holds
/// beside what its lock covers. The switch, a wakeup and the reschedule IPI
/// each touch several of these fields: one per-CPU variable, so one index
/// computation serves them.
struct RqCpu {
    /// Each CPU's runqueue, set once when the CPU starts scheduling: locking
    /// checks that once, so the guard's accesses need no check of their own.
    rq: spin::Once<IrqMutex<level::Runqueue, Rq>>,
    /// Its incoming wakeups and migrations.
    wake_list: WakeList,
    /// The CPU is asked to reschedule (`resched.rs` sets, reads and clears it).
    need_resched: AtomicBool,
    /// This CPU's time between charging the task that left and starting the
    /// next one (or idle) when the switch ran newidle balancing in between
    /// (ns): no task's runtime and no idle time holds it, so it closes the
    /// books of `workload=torture` (runtimes + idle + this + pressure = CPUs x
    /// elapsed). Written by its CPU only, under its runqueue lock.
    newidle_switch_ns: AtomicU64,
}

impl RqCpu {
    const fn new() -> Self {
        RqCpu {
            rq: spin::Once::new(),
            wake_list: WakeList::new(),
            need_resched: AtomicBool::new(false),
            newidle_switch_ns: AtomicU64::new(0),
        }
    }
}

/// Every CPU's RqCpu.
static CPUS: PerCpu<RqCpu> = per_cpu!(RqCpu::new());

/// Adds a newidle switch's gap to `cpu`'s `RqCpu::newidle_switch_ns` (its
/// own CPU, under its runqueue lock).
pub fn add_newidle_switch_ns(cpu: usize, gap: u64) {
    let c = &CPUS[cpu].newidle_switch_ns;
    c.store(c.load(Ordering::Relaxed) + gap, Ordering::Relaxed);
}

/// `cpu`'s newidle switch time so far (see `RqCpu::newidle_switch_ns`).
pub fn newidle_switch_ns(cpu: usize) -> u64 {
    CPUS[cpu].newidle_switch_ns.load(Ordering::Relaxed)
}

static ONLINE: [AtomicU64; MAX_CPUS / 64] = [const { AtomicU64::new(0) }; MAX_CPUS / 64];

/// A locked runqueue.
pub struct RqGuard<'a>(IrqGuard<'a, level::Runqueue, Rq>);

impl Holds for RqGuard<'_> {
    type Level = level::Runqueue;
}

// A `&Rq` exists only under its lock (through a guard): the witness a task's
// runqueue-locked fields take (`task::UnderRqLock`).
impl crate::task::RqLocked for Rq {}
impl crate::task::RqLocked for RqGuard<'_> {}

impl core::ops::Deref for RqGuard<'_> {
    type Target = Rq;
    #[inline]
    fn deref(&self) -> &Rq {
        &self.0
    }
}

impl core::ops::DerefMut for RqGuard<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Rq {
        &mut self.0
    }
}

#[inline]
fn rq_of(cpu: usize) -> &'static IrqMutex<level::Runqueue, Rq> {
    match CPUS[cpu].rq.get() {
        Some(rq) => rq,
        None => not_started(cpu),
    }
}

#[cold]
#[inline(never)]
fn not_started(cpu: usize) -> ! {
    panic!("CPU {}'s runqueue is used before the CPU starts scheduling", cpu)
}

/// Locks `cpu`'s runqueue (its order against the locks this CPU holds is
/// the runtime checker's to see).
#[inline]
pub fn lock(cpu: usize) -> RqGuard<'static> {
    // keyed by CPU: the lock checker orders two runqueues by it (`lock_two`)
    RqGuard(rq_of(cpu).lock_nested(cpu as u32))
}

/// [`lock`] where interrupts are off already (the switch, on the interrupt
/// path): the guard does not save and disable them again.
#[inline]
pub fn lock_irqs_off(cpu: usize) -> RqGuard<'static> {
    RqGuard(rq_of(cpu).lock_nested_irqs_off(cpu as u32))
}

/// Locks `cpu`'s runqueue inside `outer`, a lock held of an outer level (a
/// `pi_lock`, a balance state): the order is checked when compiling.
#[inline]
pub fn lock_inside<H: Holds>(outer: &H, cpu: usize) -> RqGuard<'static>
where
    H::Level: Outside<level::Runqueue>,
{
    RqGuard(rq_of(cpu).lock_nested_inside(outer, cpu as u32))
}

/// Locks the runqueue that holds `p`'s entity: a balancer may move the
/// entity between reading `p.cpu` and taking the lock, so the CPU is read
/// again under the lock until it agrees.
#[inline]
pub fn lock_task_rq(p: &Task) -> RqGuard<'static> {
    loop {
        let cpu = p.cpu.load(Ordering::Acquire);
        let g = lock(cpu);
        if p.cpu.load(Ordering::Acquire) == cpu {
            return g;
        }
    }
}

/// [`lock_task_rq`] under `p`'s `pi_lock`, whose guard `pi` is (Linux's
/// `task_rq_lock`, which takes both): nothing then moves a dequeued entity,
/// and the order is checked when compiling.
#[inline]
pub fn lock_task_rq_inside(pi: &IrqGuard<'_, level::PiLock, ()>, p: &Task) -> RqGuard<'static> {
    loop {
        let cpu = p.cpu.load(Ordering::Acquire);
        let g = lock_inside(pi, cpu);
        if p.cpu.load(Ordering::Acquire) == cpu {
            return g;
        }
    }
}

/// Locks `cpu`'s runqueue unless it is busy.
pub fn try_lock(cpu: usize) -> Option<RqGuard<'static>> {
    rq_of(cpu).try_lock_nested(cpu as u32).map(RqGuard)
}

/// Locks two runqueues in ascending CPU order; returns them as (a, b).
/// `a != b` is required.
pub fn lock_two(a: usize, b: usize) -> (RqGuard<'static>, RqGuard<'static>) {
    assert_ne!(a, b, "lock_two with one CPU");
    if a < b {
        let ga = lock(a);
        let gb = lock(b);
        (ga, gb)
    } else {
        let gb = lock(b);
        let ga = lock(a);
        (ga, gb)
    }
}

/// Creates `cpu`'s runqueue; its current flow of execution becomes its idle task.
pub fn init_cpu(cpu: usize, tunables: Tunables) {
    let idle = crate::task::new_idle(cpu);
    idle.note_ran_on(cpu);
    // From now on this CPU's interrupts save the boot flow's state into its
    // idle task's context (the first switch away from it needs it there).
    crate::platform::without_interrupts(|| crate::platform::adopt_here(&idle.ctx));
    debug_assert_eq!(cpu, crate::platform::cpu_id(), "a runqueue starts on its own CPU");
    crate::task::set_current(idle.clone());
    let mut fresh = false;
    CPUS[cpu].rq.call_once(|| {
        fresh = true;
        IrqMutex::new(Rq {
            cpu,
            fair: FairRq::new(tunables),
            tasks: Vec::new(),
            curr: idle.clone(),
            idle,
            clock: now_ns(),
            clock_skip: false,
            stat: CpuStat::default(),
            capacity_orig: 1024,
            capacity: 1024,
            misfit_task_load: 0,
            // Linux's boot value; `entry::sched_cpu_starting` sets the
            // configured one once the balancer is set up.
            avg_idle: AvgIdle::new(),
            order: CfsTasksOrder::default(),
        })
    });
    assert!(fresh, "CPU {}'s runqueue started twice", cpu);
    sched::cpumask::cover_cpu(cpu);
    ONLINE[cpu / 64].fetch_or(1 << (cpu % 64), Ordering::Release);
}

/// CPUs whose runqueue is running.
pub fn online_mask() -> CpuMask {
    CpuMask::from_words_in_use(|i| ONLINE[i].load(Ordering::Acquire))
}

pub fn is_online(cpu: usize) -> bool {
    cpu < MAX_CPUS && ONLINE[cpu / 64].load(Ordering::Acquire) & (1 << (cpu % 64)) != 0
}

/// `cpu`'s wake list (see [`WakeList`]).
#[inline(always)]
pub fn wake_list(cpu: usize) -> &'static WakeList {
    &CPUS[cpu].wake_list
}

/// `cpu`'s need-resched flag (`resched.rs`).
#[inline(always)]
pub(crate) fn need_resched_flag(cpu: usize) -> &'static AtomicBool {
    &CPUS[cpu].need_resched
}

/// Whether wakeups wait on `cpu`'s wake list (Linux's `ttwu_pending`: read
/// without a lock by the IPI handler, the balancer and the idle loop).
#[inline]
pub fn wake_list_pending(cpu: usize) -> bool {
    CPUS[cpu].wake_list.pending()
}

/// Nanoseconds since kernel entry, from the TSC.
pub fn now_ns() -> u64 {
    crate::platform::uptime_ns()
}
