//! The balancer's shared state: what every CPU shares (the domains, the
//! configuration, the capacities: [`Global`], set once by `balance::init`),
//! each CPU's balance state under its lock, and the per-LLC scan state.
//! Every other file of `balance/` reads it; it reads none of them.

use alloc::vec::Vec;

use sched::balance::{BalanceConfig, CapacityTable, NewidleCounters, SdState};
use sched::balance::sis::{LlcShared, SisLog, SisStats};
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
/// Per-LLC shared state (SIS_UTIL scan depth, SIS_PROP scan cost), by `sd_llc_id`.
pub static LLC: IrqMutex<level::LlcShared, Vec<LlcShared>> = IrqMutex::new(Vec::new());

/// How often each LLC's SIS_UTIL depth (`nr_idle_scan`) was refreshed, by
/// `sd_llc_id` (an LLC's id is one of its CPUs: below `MAX_CPUS`).
pub static LLC_UTIL_REFRESHES: [core::sync::atomic::AtomicU64; crate::MAX_CPUS] =
    [const { core::sync::atomic::AtomicU64::new(0) }; crate::MAX_CPUS];

/// The shared balancing state, once `balance::init` ran.
pub fn global() -> Option<&'static Global> {
    GLOBAL.get()
}
