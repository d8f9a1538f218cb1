//! SMP load balancing and wakeup placement: the kernel side.
//!
//! The decisions come from the policy crate (`sched::balance`); this module
//! takes the snapshots they read, keeps the per-CPU and per-domain state they
//! update, and applies what they decide: moving tasks between runqueues under
//! both runqueue locks.
//!
//! | file | what |
//! |---|---|
//! | `state.rs` | what every CPU shares (domains, configuration, capacities), each CPU's balance state, the LLC scan state (lock-free) |
//! | `snapshot.rs` | per-CPU values published under each runqueue lock, read lock-free |
//! | `pull.rs` | moving tasks from a busiest CPU (detach/attach with `can_migrate_task`) |
//! | `pass.rs` | one balance pass over a domain (`sched_balance_rq`): plan, pull, redo, active balance request |
//! | `active.rs` | active balance: the request, and the switch's push |
//! | `periodic.rs` | `sched_balance_domains` from the tick, with intervals |
//! | `newidle.rs` | `sched_balance_newidle`, throttled by `avg_idle` |
//! | `wake.rs` | `select_task_rq_fair` for wakeups and forks |
//! | `nohz.rs` | NOHZ idle balancing: busy CPUs kick an idle one |
//! | `capacity.rs` | `cpu_capacity=`: a pressure source that really slows a CPU, misfit status |
//! | `idle_wait.rs` | "idle while others wait": the time a CPU idles while a CPU of its domain has a queue |
//! | `stats.rs` | per-domain `/proc/schedstat` lines and newidle counters |
//!
//! The files import `state.rs` and each other downwards only (`mod.rs`, which
//! sets them up, is the top). Lock order (see docs/DESIGN.md): a CPU's
//! balance state (`state::cpu_state(cpu)`) is taken before any runqueue
//! lock. The per-LLC scan state (`state.rs`) and the NOHZ state (`nohz.rs`)
//! take no lock: they are atomics, as Linux keeps `sd_llc_shared` and
//! `struct nohz`, so no wakeup and no idle entry waits for another LLC's.
//! `avg_idle` lives in the runqueue (as in Linux), under its lock.

pub mod active;
pub mod capacity;
pub mod idle_wait;
pub mod newidle;
pub mod nohz;
pub mod pass;
pub mod periodic;
pub mod pull;
pub mod snapshot;
pub mod state;
pub mod stats;
pub mod wake;

use alloc::vec::Vec;

use sched::balance::sis::{LlcShared, SisLog, SisStats, SIS_LOG_LEN};
use sched::balance::{BalanceConfig, CapacityTable, NewidleCounters, SdState};
use sched::topology::SchedDomains;

pub use state::{global, Global};
use state::{cpu_state, CpuState};

/// Sets up balancing for the machine (once, on the boot CPU).
pub fn init(sds: SchedDomains, cfg: BalanceConfig, caps: CapacityTable, hz: u32) {
    let online: Vec<usize> = sds.online().iter().collect();
    for &cpu in &online {
        state::init_llc(sds.sd_llc_id(cpu), LlcShared::new(sds.sd_llc_size(cpu)));
    }
    // avg_idle starts at the configured ceiling (`boot_avg_idle`).
    let boot = sched::balance::avg_idle::AvgIdle::boot(cfg.avg_idle_ceiling_pct);
    for &cpu in &online {
        wake::init_wake_aged(cpu, boot.avg_idle);
        newidle::init_cpu(cpu, cfg.newidle && !sds.per_cpu(cpu).is_empty());
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
    state::GLOBAL.call_once(|| Global { sds, cfg, caps, hz, asym_cpucapacity });
}

/// A runqueue's `avg_idle` when its CPU starts scheduling: at the
/// configured ceiling (Linux's sched_init: 2x the migration cost; the 2013
/// patch's: 1.5x), or Linux's before `init` ran.
pub fn boot_avg_idle() -> sched::balance::AvgIdle {
    global().map_or(sched::balance::AvgIdle::new(), |g| sched::balance::AvgIdle::boot(g.cfg.avg_idle_ceiling_pct))
}
