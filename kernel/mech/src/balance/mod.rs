//! SMP load balancing and wakeup placement: the kernel side.
//!
//! The decisions come from the policy crate (`sched::balance`); this module
//! takes the snapshots they read, keeps the per-CPU and per-domain state they
//! update, and applies what they decide: moving tasks between runqueues under
//! both runqueue locks.
//!
//! | file | what |
//! |---|---|
//! | `snapshot.rs` | per-CPU values published under each runqueue lock, read lock-free |
//! | `pull.rs` | moving tasks from a busiest CPU (detach/attach with `can_migrate_task`) |
//! | `periodic.rs` | `sched_balance_domains` from the tick, with intervals and active balance |
//! | `newidle.rs` | `sched_balance_newidle`, throttled by `avg_idle` |
//! | `wake.rs` | `select_task_rq_fair` for wakeups and forks |
//! | `nohz.rs` | NOHZ idle balancing: busy CPUs kick an idle one |
//! | `capacity.rs` | `cpu_capacity=`: a pressure source that really slows a CPU, misfit status |
//! | `idle_wait.rs` | "idle while others wait": the time a CPU idles while a CPU of its domain has a queue |
//! | `stats.rs` | per-domain `/proc/schedstat` lines and newidle counters |
//!
//! Lock order (see docs/DESIGN.md): a CPU's balance state (`cpu_state(cpu)`) is
//! taken before any runqueue lock; the LLC table is a leaf lock. `avg_idle`
//! lives in the runqueue (as in Linux), under its lock.

pub mod capacity;
pub mod idle_wait;
pub mod newidle;
pub mod nohz;
pub mod periodic;
pub mod pull;
pub mod snapshot;
pub mod stats;
pub mod wake;

use alloc::vec::Vec;

use sched::balance::{BalanceConfig, CapacityTable, NewidleCounters, SdState};
use sched::balance::sis::{LlcShared, SisLog, SisStats, SIS_LOG_LEN};
use sched::topology::SchedDomains;

use crate::percpu::{per_cpu, PerCpu};
use crate::lock::{level, IrqMutex};

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

static GLOBAL: spin::Once<Global> = spin::Once::new();

/// One CPU's balancing state: one `SdState` per domain (bottom-up, as
/// `sds.per_cpu(cpu)`), its newidle counters and what its wakeups' idle
/// scans did (its SIS_PROP aging is in `wake::WAKE_AGED`).
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
    /// The snapshots a balance attempt reads (`periodic::balance_rq`, for the
    /// periodic, NOHZ and newidle balancing) and the NOHZ kick test, refilled
    /// each time: balancing from the tick allocates nothing.
    pub balance_snaps: Vec<sched::balance::CpuSnapshot>,
}

/// Every CPU's balance state, under its lock (`None` until [`init`]).
static STATE: PerCpu<IrqMutex<level::BalanceState, Option<CpuState>>> = per_cpu!(IrqMutex::new(None));

/// `cpu`'s balance state and its lock.
#[inline(always)]
pub(super) fn cpu_state(cpu: usize) -> &'static IrqMutex<level::BalanceState, Option<CpuState>> {
    &STATE[cpu]
}
/// Per-LLC shared state (SIS_UTIL scan depth, SIS_PROP scan cost), by `sd_llc_id`.
pub static LLC: IrqMutex<level::LlcShared, Vec<LlcShared>> = IrqMutex::new(Vec::new());

/// Sets up balancing for the machine (once, on the boot CPU).
pub fn init(sds: SchedDomains, cfg: BalanceConfig, caps: CapacityTable, hz: u32) {
    let online: Vec<usize> = sds.online().iter().collect();
    {
        let mut llc = LLC.lock();
        for &cpu in &online {
            let id = sds.sd_llc_id(cpu);
            if llc.len() <= id {
                llc.resize(id + 1, LlcShared::new(1));
            }
            llc[id] = LlcShared::new(sds.sd_llc_size(cpu));
        }
    }
    for &cpu in &online {
        wake::init_wake_aged(cpu, sched::balance::avg_idle::AvgIdle::new().avg_idle);
        let sd = sds.per_cpu(cpu).iter().map(SdState::new).collect();
        *cpu_state(cpu).lock() = Some(CpuState {
            sd,
            newidle: NewidleCounters::default(),
            sis: SisStats::default(),
            sis_log: SisLog::with_capacity(if cfg.sis_prop == sched::balance::SisProp::Off { 0 } else { SIS_LOG_LEN }),
            wake_snaps: Vec::with_capacity(8),
            balance_snaps: Vec::with_capacity(online.len()),
        });
    }
    idle_wait::init(&sds);
    let asym_cpucapacity = caps.asymmetric(&sds.online());
    GLOBAL.call_once(|| Global { sds, cfg, caps, hz, asym_cpucapacity });
}

/// The shared balancing state, once `init` ran.
pub fn global() -> Option<&'static Global> {
    GLOBAL.get()
}
