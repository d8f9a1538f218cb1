//! Plain-data snapshots of CPUs and tasks: the only inputs of the balancing
//! decisions.
//!
//! # Contract
//!
//! The kernel copies each CPU's state into a [`CpuSnapshot`] (a few loads per
//! CPU, no lock needed: a racy read is what Linux's balancer works with too)
//! and passes a slice of them to the decisions. The slice is indexed by CPU
//! number when possible (`cpus[i].cpu == i`, the cheap case); otherwise the
//! lookup falls back to a linear search ([`cpu_snap`]). A CPU that has no
//! snapshot is treated as absent (never chosen, never counted).
//!
//! Tasks are described by [`TaskSnapshot`]s, filled under the source
//! run-queue's lock when the kernel walks the tasks it might move
//! (`migrate::DetachCursor`), or under the task's `pi_lock` at wakeup.
//!
//! Units: loads on the weight scale (nice 0 = 1024), utilisation and
//! capacity out of 1024 per full CPU, times in ns. Every value is clamped or
//! widened where used, so no field value can make a decision panic; the
//! arithmetic bounds are stated where the arithmetic is.

use crate::cpumask::CpuMask;
use crate::time::Nanos;

/// The balance context, Linux's `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdleType {
    /// Periodic balance on an idle CPU (`CPU_IDLE`).
    Idle,
    /// Periodic balance on a busy CPU (`CPU_NOT_IDLE`).
    NotIdle,
    /// The CPU is about to go idle (`CPU_NEWLY_IDLE`).
    NewlyIdle,
}

impl IdleType {
    /// Index in the schedstat layout (version 15 order: idle, busy, newidle).
    pub const fn index(self) -> usize {
        match self {
            IdleType::Idle => 0,
            IdleType::NotIdle => 1,
            IdleType::NewlyIdle => 2,
        }
    }
    /// Whether the destination is (becoming) idle.
    pub const fn is_idle(self) -> bool {
        !matches!(self, IdleType::NotIdle)
    }
}

/// One CPU's state as the balancer reads it.
///
/// Invariants the decisions rely on (none can cause a panic if broken; a
/// broken one only gives a poor decision): `h_nr_runnable <= nr_running`;
/// `capacity <= capacity_orig`; `capacity_orig >= 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSnapshot {
    /// CPU number.
    pub cpu: usize,
    /// Runnable tasks of every class, including the current one
    /// (`rq->nr_running`).
    pub nr_running: u32,
    /// Runnable fair tasks, including the current one if fair
    /// (`cfs.h_nr_runnable`; delayed-dequeue entities excluded).
    pub h_nr_runnable: u32,
    /// Queued fair entities that are delayed (counted in `nr_running`).
    pub nr_delayed: u32,
    /// The idle task is running.
    pub idle: bool,
    /// A wakeup is queued for this CPU but not yet activated.
    pub ttwu_pending: bool,
    /// Only SCHED_IDLE fair tasks are runnable (`sched_idle_cpu`).
    pub sched_idle_only: bool,
    /// `cpu_load`: the fair queue's PELT `load_avg`.
    pub load_avg: u64,
    /// `cpu_runnable`: the fair queue's PELT `runnable_avg`.
    pub runnable_avg: u64,
    /// The fair queue's PELT `util_avg`.
    pub util_avg: u64,
    /// The fair queue's util_est (`FairRq::pelt().util_est`: the sum of its
    /// runnable tasks' EWMAs; 0 without UTIL_EST).
    pub util_est: u64,
    /// Capacity before any pressure (`arch_scale_cpu_capacity`), out of 1024.
    pub capacity_orig: u64,
    /// Capacity left for fair tasks (`capacity_of`), see `capacity`.
    pub capacity: u64,
    /// `rq->avg_idle` (ns), see `avg_idle`.
    pub avg_idle: Nanos,
    /// `rq->misfit_task_load`: 0, or the load of a current task that does
    /// not fit this CPU (see `capacity::update_misfit_status`).
    pub misfit_task_load: u64,
}

impl CpuSnapshot {
    /// An idle full-capacity CPU with no load.
    pub const fn idle(cpu: usize) -> CpuSnapshot {
        CpuSnapshot {
            cpu,
            nr_running: 0,
            h_nr_runnable: 0,
            nr_delayed: 0,
            idle: true,
            ttwu_pending: false,
            sched_idle_only: false,
            load_avg: 0,
            runnable_avg: 0,
            util_avg: 0,
            util_est: 0,
            capacity_orig: 1024,
            capacity: 1024,
            avg_idle: 1_000_000,
            misfit_task_load: 0,
        }
    }

    /// A CPU running `n` always-runnable nice-0 fair tasks (hogs): load and
    /// runnable `1024·n`, util saturated at the capacity (0 when `n == 0`).
    pub fn hogs(cpu: usize, n: u32) -> CpuSnapshot {
        let mut s = CpuSnapshot::idle(cpu);
        s.set_hogs(n);
        s
    }

    /// Reset to `n` hogs keeping the capacities (see [`CpuSnapshot::hogs`]).
    pub fn set_hogs(&mut self, n: u32) {
        self.nr_running = n;
        self.h_nr_runnable = n;
        self.idle = n == 0;
        self.load_avg = 1024 * n as u64;
        self.runnable_avg = 1024 * n as u64;
        self.util_avg = if n == 0 { 0 } else { self.capacity_orig.min(1024) };
        self.util_est = self.util_avg;
    }

    /// `cpu_util_cfs`: `min(max(util_avg, util_est), capacity_orig)`.
    pub fn util_cfs(&self) -> u64 {
        self.util_avg.max(self.util_est).min(self.capacity_orig)
    }

    /// `cpu_util_cfs_boost`: as [`Self::util_cfs`] with runnable as a floor.
    pub fn util_cfs_boost(&self) -> u64 {
        self.util_avg
            .max(self.util_est)
            .max(self.runnable_avg)
            .min(self.capacity_orig)
    }

    /// `available_idle_cpu`: idle task running, nothing queued, no wakeup
    /// pending.
    pub fn available_idle(&self) -> bool {
        self.idle && self.nr_running == 0 && !self.ttwu_pending
    }

    /// Linux's wakeup notion of idle: available idle, or only SCHED_IDLE
    /// tasks (`sched_idle_cpu`).
    pub fn idle_for_wakeup(&self) -> bool {
        self.available_idle() || (self.sched_idle_only && self.nr_running > 0)
    }

    /// `capacity_of`, never 0 (a snapshot of 0 is read as 1).
    pub fn cap(&self) -> u64 {
        self.capacity.max(1)
    }
}

/// `cpus`' snapshot of CPU `cpu`: the slot `cpu` if it holds that CPU, else
/// the slot `cpu - cpus[0].cpu` if it does (a run of consecutive CPUs, such
/// as one LLC that does not start at CPU 0), else a linear search; `None` if
/// absent. The first two are only shortcuts: each checks the slot's `cpu`.
pub fn cpu_snap(cpus: &[CpuSnapshot], cpu: usize) -> Option<&CpuSnapshot> {
    if let Some(s) = cpus.get(cpu).filter(|s| s.cpu == cpu) {
        return Some(s);
    }
    let base = cpus.first().map_or(0, |s| s.cpu);
    match cpu.checked_sub(base).and_then(|i| cpus.get(i)) {
        Some(s) if s.cpu == cpu => Some(s),
        _ => cpus.iter().find(|s| s.cpu == cpu),
    }
}

/// Where wakeup placement reads the CPUs' snapshots: a slice of them (the
/// tests, the balancer), or the kernel's live per-CPU values read one CPU
/// at a time when placement asks, as Linux's `select_idle_sibling()` reads
/// only the runqueues it examines. Either way each CPU's snapshot is a
/// value of some recent moment; the decisions need nothing more.
pub trait CpuView {
    /// `cpu`'s snapshot; `None` for a CPU the view does not hold.
    fn snap(&self, cpu: usize) -> Option<CpuSnapshot>;
    /// The first CPU of the view, in its order, that `allowed` holds
    /// (`select_fallback_rq`'s choice among the known CPUs).
    fn first_allowed(&self, allowed: &CpuMask) -> Option<usize>;
    /// Whether the view's CPUs differ in `capacity_orig`.
    fn capacities_differ(&self) -> bool;
}

impl CpuView for [CpuSnapshot] {
    fn snap(&self, cpu: usize) -> Option<CpuSnapshot> {
        cpu_snap(self, cpu).copied()
    }
    fn first_allowed(&self, allowed: &CpuMask) -> Option<usize> {
        self.iter().map(|s| s.cpu).find(|&c| allowed.contains(c))
    }
    fn capacities_differ(&self) -> bool {
        let mut caps = self.iter().map(|s| s.capacity_orig);
        let first = caps.next();
        caps.any(|c| Some(c) != first)
    }
}

impl CpuView for alloc::vec::Vec<CpuSnapshot> {
    fn snap(&self, cpu: usize) -> Option<CpuSnapshot> {
        self.as_slice().snap(cpu)
    }
    fn first_allowed(&self, allowed: &CpuMask) -> Option<usize> {
        self.as_slice().first_allowed(allowed)
    }
    fn capacities_differ(&self) -> bool {
        self.as_slice().capacities_differ()
    }
}

/// One task as a migration or placement decision reads it.
///
/// Invariant expected (not relied on for safety): `util_avg <= 1024`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskSnapshot {
    /// Kernel handle, opaque here (used by `wake::record_wakee`).
    pub id: u64,
    /// Load weight (nice 0 = 1024).
    pub weight: u64,
    /// `task_h_load`: PELT load_avg (without cgroups, the task's own).
    pub load_avg: u64,
    /// `task_util_est`: max of util_avg and util_est.
    pub util: u64,
    /// CPUs the task may run on (`p->cpus_ptr`).
    pub allowed: CpuMask,
    /// Currently running on its CPU.
    pub running: bool,
    /// Dequeue is delayed (DELAY_DEQUEUE): queued but not runnable.
    pub delayed: bool,
    /// Per-CPU kernel thread (never migrated by the balancer).
    pub per_cpu_kthread: bool,
    /// SCHED_IDLE policy (never cache hot).
    pub idle_policy: bool,
    /// Not eligible on its queue right now (negative lag); with PLACE_LAG
    /// the balancer prefers eligible tasks while it has not failed.
    pub ineligible: bool,
    /// Task clock of the source CPU when the task last started running
    /// (`se.exec_start`); 0 right after a migration (cold).
    pub exec_start: Nanos,
    /// The CPU it last ran on (`task_cpu`).
    pub prev_cpu: usize,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: Option<usize>,
    /// `wakee_flips` of the task (see `wake::WakeeState`).
    pub wakee_flips: u32,
    /// Its queue's next buddy (`cfs_rq->next`, nominated by a NEXT_BUDDY
    /// wakeup): cache hot for the balancer under CACHE_HOT_BUDDY.
    pub next_buddy: bool,
}

impl TaskSnapshot {
    /// A nice-0 always-runnable task allowed everywhere, last on `prev_cpu`.
    pub fn hog(id: u64, prev_cpu: usize) -> TaskSnapshot {
        TaskSnapshot::hog_allowed(id, prev_cpu, CpuMask::first_n(crate::cpumask::MAX_CPUS))
    }

    /// [`TaskSnapshot::hog`] allowed on `allowed` only. What a kernel path
    /// uses: a mask of every possible CPU would widen every mask's word
    /// loops to all of `MAX_CPUS` for the rest of the run
    /// (`cpumask::nr_cpu_words`).
    pub fn hog_allowed(id: u64, prev_cpu: usize, allowed: CpuMask) -> TaskSnapshot {
        TaskSnapshot {
            id,
            weight: 1024,
            load_avg: 1024,
            util: 1024,
            allowed,
            running: false,
            delayed: false,
            per_cpu_kthread: false,
            idle_policy: false,
            ineligible: false,
            exec_start: 0,
            prev_cpu,
            recent_used_cpu: None,
            wakee_flips: 0,
            next_buddy: false,
        }
    }

    /// Whether the task may run on `cpu`.
    pub fn allows(&self, cpu: usize) -> bool {
        self.allowed.contains(cpu)
    }
}
