//! Per-CPU values the balancer reads, published under each runqueue's lock
//! and read without it (Linux reads these fields of remote runqueues without
//! their locks, too). A reader sees each value as of some recent update; the
//! decisions only need that.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use sched::balance::{AvgIdle, CpuSnapshot};
use sched::cpumask::CpuMask;

use crate::rq::Rq;
use crate::percpu::{per_cpu, PerCpu};

struct Published {
    nr_running: AtomicU64,
    h_nr_runnable: AtomicU64,
    idle: AtomicBool,
    load_avg: AtomicU64,
    runnable_avg: AtomicU64,
    util_avg: AtomicU64,
    /// The fair queue's util_est (UTIL_EST: its runnable tasks' EWMAs).
    util_est: AtomicU64,
    capacity_orig: AtomicU64,
    capacity: AtomicU64,
    misfit_task_load: AtomicU64,
    /// `rq->avg_idle` (placement's SIS_PROP reads this CPU's).
    avg_idle: AtomicU64,
    /// Counted in `OVERLOADED` (more than one runnable task, or a misfit):
    /// 1, else 0 (a byte the publish compares as it computes it).
    overloaded: AtomicU8,
}

/// How many CPUs are published as overloaded: Linux's root-domain
/// `overloaded` flag, kept exact at every publish so that a CPU about to
/// idle learns whether there is anything to pull from one load.
static OVERLOADED: AtomicU64 = AtomicU64::new(0);

/// Whether some CPU has more than one runnable task or a misfit task.
pub fn any_overloaded() -> bool {
    OVERLOADED.load(Ordering::Relaxed) != 0
}

impl Published {
    const fn new() -> Self {
        Published {
            nr_running: AtomicU64::new(0),
            h_nr_runnable: AtomicU64::new(0),
            idle: AtomicBool::new(true),
            load_avg: AtomicU64::new(0),
            runnable_avg: AtomicU64::new(0),
            util_avg: AtomicU64::new(0),
            util_est: AtomicU64::new(0),
            capacity_orig: AtomicU64::new(1024),
            capacity: AtomicU64::new(1024),
            misfit_task_load: AtomicU64::new(0),
            avg_idle: AtomicU64::new(AvgIdle::new().avg_idle),
            overloaded: AtomicU8::new(0),
        }
    }
}

/// This module's per-CPU part (its `CPUS`).
struct SnapshotCpu {
    published: Published,
}

impl SnapshotCpu {
    const fn new() -> Self {
        SnapshotCpu {
            published: Published::new(),
        }
    }
}

/// Every CPU's SnapshotCpu.
static CPUS: PerCpu<SnapshotCpu> = per_cpu!(SnapshotCpu::new());

/// Publishes all of `rq`'s values (call with its lock held): at the tick,
/// which alone changes the capacities and the misfit load, and wherever
/// those may have changed.
pub fn publish(rq: &Rq) {
    let p = &CPUS[rq.cpu].published;
    p.capacity_orig.store(rq.capacity_orig, Ordering::Relaxed);
    p.capacity.store(rq.capacity, Ordering::Relaxed);
    p.misfit_task_load.store(rq.misfit_task_load, Ordering::Relaxed);
    publish_load(rq);
}

/// Publishes what enqueues, dequeues and switches change (call with the
/// lock held, after one): the counts, the idle flag, the queue's PELT
/// averages and `avg_idle`. Inlined: it is on the switch and wakeup paths.
#[inline]
pub fn publish_load(rq: &Rq) {
    let p = &CPUS[rq.cpu].published;
    let pelt = rq.fair.pelt();
    p.nr_running.store(rq.fair.nr_queued() as u64, Ordering::Relaxed);
    p.h_nr_runnable.store(rq.fair.h_nr_runnable() as u64, Ordering::Relaxed);
    super::idle_wait::on_publish(rq);
    p.idle.store(rq.curr.is_idle, Ordering::Relaxed);
    p.load_avg.store(pelt.load_avg, Ordering::Relaxed);
    p.runnable_avg.store(pelt.runnable_avg, Ordering::Relaxed);
    p.util_avg.store(pelt.util_avg, Ordering::Relaxed);
    p.util_est.store(pelt.util_est, Ordering::Relaxed);
    p.avg_idle.store(rq.avg_idle.avg_idle, Ordering::Relaxed);
    // Under this CPU's runqueue lock, so the flag and the count agree.
    let overloaded = u8::from(rq.fair.nr_queued() >= 2) | u8::from(rq.misfit_task_load > 0);
    if p.overloaded.load(Ordering::Relaxed) != overloaded {
        p.overloaded.store(overloaded, Ordering::Relaxed);
        if overloaded != 0 {
            OVERLOADED.fetch_add(1, Ordering::Relaxed);
        } else {
            OVERLOADED.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The balancer's view of `cpu`.
pub fn cpu_snapshot(cpu: usize) -> CpuSnapshot {
    // Lines `cpu` wrote: free on x86, priced by distance on a simulated
    // machine (every balance pass and idle-CPU scan reads through here).
    crate::platform::remote_access(cpu, crate::platform::RemoteAccess::Snapshot);
    let p = &CPUS[cpu].published;
    let nr_running = p.nr_running.load(Ordering::Relaxed) as u32;
    let h_nr_runnable = (p.h_nr_runnable.load(Ordering::Relaxed) as u32).min(nr_running);
    let capacity_orig = p.capacity_orig.load(Ordering::Relaxed).max(1);
    CpuSnapshot {
        cpu,
        nr_running,
        h_nr_runnable,
        nr_delayed: nr_running - h_nr_runnable,
        idle: p.idle.load(Ordering::Relaxed),
        ttwu_pending: crate::rq::wake_list_pending(cpu),
        sched_idle_only: false,
        load_avg: p.load_avg.load(Ordering::Relaxed),
        runnable_avg: p.runnable_avg.load(Ordering::Relaxed),
        util_avg: p.util_avg.load(Ordering::Relaxed),
        util_est: p.util_est.load(Ordering::Relaxed),
        capacity_orig,
        capacity: p.capacity.load(Ordering::Relaxed).clamp(1, capacity_orig),
        avg_idle: p.avg_idle.load(Ordering::Relaxed),
        misfit_task_load: p.misfit_task_load.load(Ordering::Relaxed),
    }
}

/// The live view wakeup placement reads (`sched::balance::CpuView`): the
/// CPUs of `span`, each snapshotted when placement asks for it, so a wakeup
/// reads the CPUs its search examines, as Linux's `select_idle_sibling()`
/// reads only the runqueues it looks at, instead of copying the whole span
/// (two LLCs: 240 CPUs on `dd-2024`) first.
pub struct LiveCpus {
    pub span: CpuMask,
    /// Whether capacities differ anywhere (`balance::Global::asym_cpucapacity`).
    pub asym: bool,
}

impl sched::balance::CpuView for LiveCpus {
    #[inline]
    fn snap(&self, cpu: usize) -> Option<CpuSnapshot> {
        // Reading a remote CPU's state is the work `select_idle_cpu()`'s
        // loop does per CPU examined: reported so that a simulated CPU
        // spends it inside the scan window SIS_PROP times (free on x86).
        crate::platform::mechanism_work(crate::platform::Work::PlacementCpuRead);
        self.span.contains(cpu).then(|| cpu_snapshot(cpu))
    }
    fn first_allowed(&self, allowed: &CpuMask) -> Option<usize> {
        self.span.intersection(allowed).iter().next()
    }
    fn capacities_differ(&self) -> bool {
        // Equal capacities everywhere: none differ in the span either.
        if !self.asym {
            return false;
        }
        let mut caps = self.span.iter().map(|c| CPUS[c].published.capacity_orig.load(Ordering::Relaxed).max(1));
        let first = caps.next();
        caps.any(|c| Some(c) != first)
    }
}

/// Snapshots of the CPUs of `mask`, ascending.
pub fn snapshots(mask: &CpuMask) -> Vec<CpuSnapshot> {
    mask.iter().map(cpu_snapshot).collect()
}

/// As `snapshots`, into `buf` (cleared first; its allocation is reused).
pub fn snapshots_into(mask: &CpuMask, buf: &mut Vec<CpuSnapshot>) {
    buf.clear();
    buf.extend(mask.iter().map(cpu_snapshot));
}
