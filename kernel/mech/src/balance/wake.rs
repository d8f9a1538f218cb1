//! Wakeup and fork placement (Linux's `select_task_rq_fair`): wake_wide,
//! wake_affine (WA_IDLE, WA_WEIGHT, WA_BIAS), select_idle_sibling with the
//! scan depth of SIS_UTIL or SIS_PROP, the 2005 rule or no wake balancing
//! (`wake_balance=`), and the idlest-group descent for new tasks.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use core::sync::atomic::AtomicU64;

use sched::balance::fork::select_task_rq_fork;
use sched::balance::sis::{LlcTable, ScanClock, WakeAvgIdle};
use sched::balance::wake::{account_scan, count_wakeup, llc_span, select_task_rq_fair, wake_remote_domain, WakeCtx};
use sched::balance::TaskSnapshot;
use sched::cpumask::CpuMask;
use sched::topology::SD_BALANCE_FORK;
use sched::{EntityId, WakeFlags};

use super::snapshot::{cpu_snapshot, snapshots, snapshots_into, LiveCpus};
use super::state::{cpu_state, LlcRead};
use crate::task::Task;
use crate::percpu::{per_cpu, PerCpu};

/// A wakeup performed on `this` put its wakee on `cpu` (≠ `this`).
/// The domain is looked up once per target in a row: a waker mostly wakes the
/// same CPU again (a pipe's partner), and the domains never change after boot
/// (`state::GLOBAL` is set once), so the memo of the last target's domain
/// index stays true.
pub fn note_remote_wakeup(this: usize, cpu: usize) {
    let me = &CPUS[this];
    let memo = me.remote_memo.load(Ordering::Relaxed);
    let idx = if memo >> 8 == cpu as u64 + 1 {
        (memo & 0xff) as usize
    } else {
        let Some(g) = super::state::global() else { return };
        let Some(i) = wake_remote_domain(&g.sds, this, cpu) else { return };
        me.remote_memo.store((cpu as u64 + 1) << 8 | i as u64, Ordering::Relaxed);
        i
    };
    if let Some(c) = me.ttwu_wake_remote.get(idx) {
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// `ttwu_wake_remote` of `cpu`'s domain `idx` (see [`note_remote_wakeup`]).
pub fn ttwu_wake_remote(cpu: usize, idx: usize) -> u64 {
    CPUS[cpu].ttwu_wake_remote.get(idx).map_or(0, |c| c.load(Ordering::Relaxed))
}

/// The values placement needs from a sleeping task's entity (read by the
/// caller, which holds the task's runqueue lock).
#[derive(Clone, Copy)]
pub struct WakeeLoad {
    pub weight: u64,
    pub load_avg: u64,
    pub util: u64,
}

impl WakeeLoad {
    /// `p`'s entity in the locked runqueue `rq` (defaults if it has none).
    pub fn of(rq: &crate::rq::Rq, p: &Task) -> WakeeLoad {
        match rq.fair.entity(EntityId(p.eid.load(Ordering::Relaxed))) {
            Some(se) => WakeeLoad { weight: se.w(), load_avg: se.avg.load_avg, util: se.avg.util_avg },
            None => WakeeLoad { weight: 1024, load_avg: 0, util: 0 },
        }
    }

    /// Keeps `l` in `p` as its entity leaves the queue (`Task::on_rq`).
    pub fn keep_slept(p: &Task, l: WakeeLoad) {
        p.slept_load[0].store(l.weight, Ordering::Relaxed);
        p.slept_load[1].store(l.load_avg, Ordering::Relaxed);
        p.slept_load[2].store(l.util, Ordering::Relaxed);
    }

    /// What `keep_slept` kept (read after `on_rq` was seen false).
    pub fn slept(p: &Task) -> WakeeLoad {
        WakeeLoad {
            weight: p.slept_load[0].load(Ordering::Relaxed),
            load_avg: p.slept_load[1].load(Ordering::Relaxed),
            util: p.slept_load[2].load(Ordering::Relaxed),
        }
    }
}

/// This module's per-CPU part (its `CPUS`).
struct WakeCpu {
    /// Each runqueue's SIS_PROP `Aged` state (Linux 5.14–6.6's `rq->wake_stamp`
    /// and `rq->wake_avg_idle`): set when an idle CPU is woken
    /// ([`note_idle_wakeup`], under that runqueue's lock), read, aged and
    /// consumed by the wakeups that CPU performs (without the lock, as Linux
    /// reads `this_rq()`'s). Atomics, so neither side takes a lock the other holds.
    aged: [AtomicU64; 2],
    /// `ttwu_wake_remote` of this (waking) CPU by domain index: core.c: ttwu_stat()
    /// counts every wakeup onto another CPU, whatever its path, so the wakeup
    /// path counts it (`note_remote_wakeup`), lock-free (it holds runqueue
    /// locks, which rank below the balance state); added to the domain
    /// statistics when they are printed.
    ttwu_wake_remote: [AtomicU64; crate::MAX_LEVELS],
    /// The last remote wakeup's target and domain index, `(target + 1) << 8 |
    /// index` (0: none yet; indexes are below `MAX_LEVELS` ≤ 255); written only
    /// by this CPU's wakeups.
    remote_memo: AtomicU64,
}

impl WakeCpu {
    const fn new() -> Self {
        WakeCpu {
            aged: [AtomicU64::new(0), AtomicU64::new(0)],
            ttwu_wake_remote: [const { AtomicU64::new(0) }; crate::MAX_LEVELS],
            remote_memo: AtomicU64::new(0),
        }
    }
}

/// Every CPU's WakeCpu.
static CPUS: PerCpu<WakeCpu> = per_cpu!(WakeCpu::new());

/// Sets `cpu`'s SIS_PROP `Aged` prediction at boot (Linux's `sched_init`:
/// the whole initial `avg_idle`, stamped now).
pub fn init_wake_aged(cpu: usize, avg_idle: u64) {
    store_aged(cpu, WakeAvgIdle { wake_avg_idle: avg_idle, wake_stamp: crate::clock::jiffies() });
}

/// An idle `cpu` is being woken and its `avg_idle` was just updated with the
/// idle period that ends (`ttwu_do_activate` in 5.14–6.6): half of it is
/// the idle time predicted for that CPU's own wakeups.
/// Out of line and cold: only `sis_prop=aged` calls it, and the idle
/// wakeup path of every other setting keeps its inlined shape.
#[cold]
#[inline(never)]
pub fn note_idle_wakeup(cpu: usize, avg_idle: u64) {
    let mut a = load_aged(cpu);
    a.on_idle_wakeup(avg_idle, crate::clock::jiffies());
    store_aged(cpu, a);
}

fn load_aged(cpu: usize) -> WakeAvgIdle {
    let a = &CPUS[cpu].aged;
    WakeAvgIdle { wake_avg_idle: a[0].load(Ordering::Relaxed), wake_stamp: a[1].load(Ordering::Relaxed) }
}

fn store_aged(cpu: usize, v: WakeAvgIdle) {
    let a = &CPUS[cpu].aged;
    a[0].store(v.wake_avg_idle, Ordering::Relaxed);
    a[1].store(v.wake_stamp, Ordering::Relaxed);
}

/// The waker's `task_h_load` for a sync wakeup (without task groups: its
/// PELT `load_avg`), read from this CPU's runqueue, where it runs. Only
/// sync wakeups read it (`wake_affine_weight`), so only they pay the lock.
fn current_load_avg(this: usize) -> u64 {
    let rq = crate::rq::lock(this);
    rq.fair.curr().and_then(|e| rq.fair.entity(e)).map_or(0, |se| se.avg.load_avg)
}

/// The placement view of a sleeping task.
fn wakee_snapshot(p: &Task, l: WakeeLoad, prev: usize) -> TaskSnapshot {
    let WakeeLoad { weight, load_avg: load, util } = l;
    TaskSnapshot {
        id: p.id as u64,
        weight,
        load_avg: load,
        util,
        allowed: p.affinity.load(),
        running: false,
        delayed: false,
        per_cpu_kthread: false,
        idle_policy: false,
        ineligible: false,
        exec_start: 0,
        prev_cpu: prev,
        recent_used_cpu: match p.recent_used_cpu.load(Ordering::Relaxed) {
            usize::MAX => None,
            c => Some(c),
        },
        wakee_flips: p.wakee.lock().wakee_flips,
        next_buddy: false,
    }
}

/// The CPU a waking task goes to. `this` is the waking CPU; `load` was read
/// under `p`'s runqueue lock, which the caller has dropped again (this takes
/// the waking CPU's balance state, which ranks above runqueue locks, and no
/// lock that another CPU's placement takes: the LLCs' state is read and
/// written lock-free, `state::LlcRead`).
pub fn select_wake_cpu(p: &Arc<Task>, load: WakeeLoad, prev: usize, this: usize, flags: WakeFlags) -> Option<usize> {
    let g = super::state::global()?;
    let task = wakee_snapshot(p, load, prev);
    // The waker (the task this CPU runs) records the wakee: wake_wide's flips.
    let waker = crate::task::current_or_idle();
    let sync = flags.contains(WakeFlags::SYNC);
    let (waker_flips, waker_load) = if waker.is_idle {
        (0, 0)
    } else {
        let flips = {
            let mut w = waker.wakee.lock();
            w.record_wakee(p.id as u64, crate::clock::jiffies(), g.hz);
            w.wakee_flips
        };
        // fair.c: wake_affine_weight() discounts task_h_load(current).
        (flips, if sync { current_load_avg(this) } else { 0 })
    };
    let mut span = llc_span(&g.sds, this).union(&llc_span(&g.sds, prev));
    span.set(this);
    span.set(prev);
    // The 2005 rules' wake_idle searches every domain with SD_WAKE_IDLE,
    // beyond the two LLCs: they read the whole machine.
    if g.cfg.wake_balance.is_2005() {
        span = crate::rq::online_mask();
    }
    let span = span.intersection(&crate::rq::online_mask());
    let mut guard = cpu_state(this).lock();
    let state = guard.as_mut()?;
    // The two LLCs' scan state, read once, without a lock (fair.c:
    // select_idle_cpu() reads sd_llc_shared and this_sd's avg_scan_cost so).
    let mut llc = LlcRead::new(&g.sds, this, prev);
    let clock = crate::rq::now_ns;
    let mut aged = load_aged(this);
    let inputs = PlaceInputs { task: &task, this, waker_flips, waker_load, sync, llc: &llc, clock: &clock };
    let d = if span.weight() <= COPY_SPAN_MAX {
        // A small span is copied once: one placement reads each of its CPUs
        // several times (known, wake_affine, idle, fits), and a copy of two
        // is cheaper than re-reading them (the pipe across two CPUs).
        snapshots_into(&span, &mut state.wake_snaps);
        place(g, state.wake_snaps.as_slice(), &inputs, &mut aged)
    } else {
        place(g, &LiveCpus { span, asym: g.asym_cpucapacity }, &inputs, &mut aged)
    };
    let prop = g.cfg.sis_prop != sched::balance::SisProp::Off;
    // What SIS_PROP's depth read, before the accounting changes it.
    let prop_in = prop.then(|| {
        let aged_in = if g.cfg.sis_prop == sched::balance::SisProp::Aged { aged.wake_avg_idle } else { 0 };
        (LlcTable::get(&llc, g.sds.sd_llc_id(this)).map_or(0, |l| l.avg_scan_cost), aged_in)
    });
    // SIS_PROP learns what a scan costs in this CPU's LLC (`this_sd`).
    let accounted = account_scan(&g.cfg, &g.sds, this, &d, &mut llc, &mut aged);
    if g.cfg.sis_prop == sched::balance::SisProp::Aged {
        store_aged(this, aged);
    }
    if let Some(sis) = d.sis {
        if let Some(r) = sis.recent_used_cpu {
            p.recent_used_cpu.store(r, Ordering::Relaxed);
        }
        state.sis.record(sis.scan.as_ref(), sis.no_scan, accounted);
        if let (Some((cost, wake_avg_idle)), Some(scan)) = (prop_in, sis.scan) {
            note_prop_scan(state, &g.sds, this, d.cpu, &scan, cost, wake_avg_idle, accounted);
        }
    }
    count_wakeup(&g.sds, this, prev, &d, state.sd.as_mut_slice());
    Some(d.cpu)
}

/// Spans of at most this many CPUs are copied before placement; larger
/// ones (two LLCs of a big machine: 240 CPUs on `dd-2024`) are read one CPU
/// at a time as the search examines them ([`LiveCpus`]). The decisions are
/// the same either way; only the cost differs.
const COPY_SPAN_MAX: u32 = 8;

/// What one placement reads besides the CPUs.
struct PlaceInputs<'a> {
    task: &'a TaskSnapshot,
    this: usize,
    waker_flips: u32,
    waker_load: u64,
    sync: bool,
    llc: &'a dyn LlcTable,
    clock: &'a dyn Fn() -> u64,
}

/// `select_task_rq_fair` over `cpus`, a copy of the span or the live view.
fn place<C: sched::balance::CpuView + ?Sized>(g: &super::state::Global, cpus: &C, i: &PlaceInputs<'_>, aged: &mut sched::balance::sis::WakeAvgIdle) -> sched::balance::wake::WakeDecision {
    let ctx = WakeCtx {
        sds: &g.sds,
        cpus,
        task: i.task,
        this_cpu: i.this,
        waker_flips: i.waker_flips,
        waker_load: i.waker_load,
        sync: i.sync,
        waker_pcpu_kthread: false,
        llc: i.llc,
        now_jiffies: crate::clock::jiffies(),
        cfg: &g.cfg,
        clock: Some(ScanClock(i.clock)),
    };
    select_task_rq_fair(&ctx, aged)
}

/// Keeps a SIS_PROP-limited scan with the inputs of its depth in this CPU's
/// `sis_log` (`@fw sis_scan`). Cold: only `sis_prop=` other than `off` gets here.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn note_prop_scan(state: &mut super::state::CpuState, sds: &sched::topology::SchedDomains, this: usize, cpu: usize, scan: &sched::balance::sis::ScanResult, cost: u64, wake_avg_idle: u64, accounted: bool) {
    let (Some(nr), false) = (scan.nr, scan.idle_core) else { return };
    // This CPU's own `avg_idle`: it runs the wakeup, so nothing changed it since placement read it.
    let avg_idle = cpu_snapshot(this).avg_idle;
    state.sis_log.push(sched::balance::sis::SisSample {
        avg_idle,
        wake_avg_idle,
        avg_scan_cost: cost,
        // The scan's span is the target's LLC, which holds the CPU chosen.
        span: sds.sd_llc_size(cpu),
        nr,
        scanned: scan.scanned,
        found: scan.cpu.is_some(),
        truncated: scan.truncated,
        time: scan.time.unwrap_or(0),
        accounted,
    });
}

/// The CPU a new task starts on (fork balancing), given its allowed CPUs.
pub fn select_fork_cpu(allowed: CpuMask, nice: i32, this: usize) -> Option<usize> {
    let g = super::state::global()?;
    let weight = crate::task::nice_weight(nice);
    let mut task = TaskSnapshot::hog_allowed(0, this, allowed);
    task.weight = weight;
    task.load_avg = weight;
    task.util = 512;
    let cpus = snapshots(&crate::rq::online_mask());
    let cpu = select_task_rq_fork(&g.sds, &task, this, SD_BALANCE_FORK, &cpus);
    if let Some(state) = cpu_state(this).lock().as_mut() {
        sched::balance::fork::count_fork(&g.sds, this, SD_BALANCE_FORK, false, cpu, state.sd.as_mut_slice());
    }
    allowed.contains(cpu).then_some(cpu)
}
