//! The balancer's shared state: what every CPU shares (the domains, the
//! configuration, the capacities: [`Global`], set once by `balance::init`),
//! each CPU's balance state under its lock, and the per-LLC scan state,
//! which takes no lock (`LlcRead`).
//! Every other file of `balance/` reads it; it reads none of them.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use sched::balance::{BalanceConfig, CapacityTable, NewidleCounters, SdState};
use sched::balance::sis::{LlcShared, LlcTable, SisLog, SisStats};
use sched::time::Nanos;
use sched::topology::SchedDomains;

use crate::lock::{level, IrqMutex};
use crate::percpu::{per_cpu, PerCpu};

/// What every CPU shares: the domains, the configuration, the capacities.
pub struct Global {
    pub sds: SchedDomains,
    pub cfg: BalanceConfig,
    pub caps: CapacityTable,
    pub hz: u32,
    /// Whether the online CPUs' capacities differ (Linux's static key
    /// `sched_asym_cpucapacity`, set when the domains are built): computed
    /// once here instead of over every CPU at each tick and wakeup.
    pub asym_cpucapacity: bool,
}

pub(super) static GLOBAL: spin::Once<Global> = spin::Once::new();

/// One CPU's balancing state: one `SdState` per domain (bottom-up, as
/// `sds.per_cpu(cpu)`), its newidle counters and what its wakeups' idle
/// scans did (its SIS_PROP aging is in `wake.rs`'s per-CPU part).
pub struct CpuState {
    pub sd: Vec<SdState>,
    pub newidle: NewidleCounters,
    pub sis: SisStats,
    /// Its last SIS_PROP-limited scans with their inputs (`@fw sis_scan`;
    /// room only with `sis_prop=` on).
    pub sis_log: SisLog,
    /// The snapshots wake placement reads when its span is small
    /// (`wake::COPY_SPAN_MAX`), refilled at each such wakeup this CPU
    /// performs (kept so that a wakeup allocates nothing).
    pub wake_snaps: Vec<sched::balance::CpuSnapshot>,
    /// The snapshots a balance attempt reads (`pass::balance_rq`, for the
    /// periodic, NOHZ and newidle balancing) and the NOHZ kick test, refilled
    /// each time: balancing from the tick allocates nothing.
    pub balance_snaps: Vec<sched::balance::CpuSnapshot>,
}

/// Every CPU's balance state, under its lock (`None` until `balance::init`).
static STATE: PerCpu<IrqMutex<level::BalanceState, Option<CpuState>>> = per_cpu!(IrqMutex::new(None));

/// `cpu`'s balance state and its lock.
#[inline(always)]
pub(super) fn cpu_state(cpu: usize) -> &'static IrqMutex<level::BalanceState, Option<CpuState>> {
    &STATE[cpu]
}
/// SIS_UTIL's `nr_idle_scan` of each LLC, by `sd_llc_id` (the LLC's first
/// CPU, as Linux's `sd_llc_shared` is the first CPU's `sched_domain_shared`):
/// written by the LLC's periodic balance when it changes, read by every
/// wakeup that scans the LLC, both without a lock (fair.c:
/// update_idle_cpu_scan(), select_idle_cpu()). Its own cache line per LLC.
static NR_IDLE_SCAN: PerCpu<AtomicU32> = per_cpu!(AtomicU32::new(0));
/// SIS_PROP's `avg_scan_cost` of each LLC, by `sd_llc_id`, shared by the
/// LLC's CPUs (see `LlcShared`): read and written by the wakeups of the
/// LLC's CPUs without a lock, a concurrent update possibly lost, as Linux's
/// `update_avg(&this_sd->avg_scan_cost, ...)`. A line of its own, apart from
/// `NR_IDLE_SCAN`, which every scan reads.
static AVG_SCAN_COST: PerCpu<AtomicU64> = per_cpu!(AtomicU64::new(0));

/// Sets LLC `llc_id`'s state (`balance::init`, before any wakeup).
pub(super) fn init_llc(llc_id: usize, v: LlcShared) {
    NR_IDLE_SCAN[llc_id].store(v.nr_idle_scan, Ordering::Relaxed);
    AVG_SCAN_COST[llc_id].store(v.avg_scan_cost, Ordering::Relaxed);
}

/// SIS_UTIL's new scan depth for LLC `llc_id`, stored only if it changed
/// (fair.c: update_idle_cpu_scan(): the line every wakeup of the LLC reads
/// is not dirtied for nothing).
pub(super) fn set_nr_idle_scan(llc_id: usize, nr: u32) {
    let slot = &NR_IDLE_SCAN[llc_id];
    if slot.load(Ordering::Relaxed) != nr {
        slot.store(nr, Ordering::Relaxed);
    }
}

/// LLC `llc_id`'s state now.
pub(super) fn read_llc(llc_id: usize) -> LlcShared {
    LlcShared { nr_idle_scan: NR_IDLE_SCAN[llc_id].load(Ordering::Relaxed), avg_scan_cost: AVG_SCAN_COST[llc_id].load(Ordering::Relaxed) }
}

/// The per-LLC state as one wakeup's placement sees it: the LLCs of the
/// waking CPU and of the wakee's previous CPU (where the target is), each
/// read once when placement starts, so the depth, SIS_PROP's accounting and
/// the `@fw sis_scan` sample all see one value; any other LLC is read when
/// asked. Another CPU may change an LLC's words meanwhile: placement decides
/// on a recent value, as Linux's does.
pub(super) struct LlcRead {
    ids: [usize; 2],
    vals: [LlcShared; 2],
}

impl LlcRead {
    /// The state of `this`'s and `prev`'s LLCs now.
    pub(super) fn new(sds: &SchedDomains, this: usize, prev: usize) -> LlcRead {
        let ids = [sds.sd_llc_id(this), sds.sd_llc_id(prev)];
        let first = read_llc(ids[0]);
        let second = if ids[1] == ids[0] { first } else { read_llc(ids[1]) };
        LlcRead { ids, vals: [first, second] }
    }
}

impl LlcTable for LlcRead {
    fn get(&self, llc_id: usize) -> Option<LlcShared> {
        match self.ids.iter().position(|&i| i == llc_id) {
            Some(k) => Some(self.vals[k]),
            None => (llc_id < crate::MAX_CPUS).then(|| read_llc(llc_id)),
        }
    }
    fn set_avg_scan_cost(&mut self, llc_id: usize, cost: Nanos) {
        if llc_id >= crate::MAX_CPUS {
            return;
        }
        AVG_SCAN_COST[llc_id].store(cost, Ordering::Relaxed);
        for k in 0..2 {
            if self.ids[k] == llc_id {
                self.vals[k].avg_scan_cost = cost;
            }
        }
    }
}

/// How often each LLC's SIS_UTIL depth (`nr_idle_scan`) was refreshed, by
/// `sd_llc_id` (an LLC's id is one of its CPUs: below `MAX_CPUS`).
pub static LLC_UTIL_REFRESHES: [core::sync::atomic::AtomicU64; crate::MAX_CPUS] =
    [const { core::sync::atomic::AtomicU64::new(0) }; crate::MAX_CPUS];

/// The shared balancing state, once `balance::init` ran.
pub fn global() -> Option<&'static Global> {
    GLOBAL.get()
}
