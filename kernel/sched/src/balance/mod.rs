//! SMP placement and load-balancing decisions (reference sections 3–6), as
//! pure functions of plain-data snapshots.
//!
//! The kernel snapshots CPU and task state ([`snapshot`]), calls these
//! functions, and applies the typed decisions they return under the locks
//! each module's docs name. Nothing here locks, allocates on a hot path
//! beyond small `Vec`s, or panics on any input.
//!
//! | module | decision |
//! |---|---|
//! | [`snapshot`] | `CpuSnapshot`, `TaskSnapshot`, `IdleType` |
//! | [`env`](mod@env) | `LbEnv` (Linux `lb_env`), SMT helpers |
//! | [`avg_idle`] | `rq->avg_idle` with `AvgIdleClamp::{Snap, Avg, Delta}` |
//! | [`newidle`] | `sched_balance_newidle` gate, walk, cost decay, NI_RANDOM |
//! | [`sg_lb_stats`] | `SgLbStats` (Linux `sg_lb_stats`), `GroupType` |
//! | [`group_stats`], [`classify`] | `update_sg_lb_stats`, `group_classify`, `update_sd_lb_stats` |
//! | [`imbalance`] | `sched_balance_find_src_group`, `calculate_imbalance`, `sched_balance_find_src_rq` |
//! | [`migrate`] | `can_migrate_task`, detach cursor, `need_active_balance` |
//! | [`interval`] | intervals, `should_we_balance`, `SdState`, `finish_balance` |
//! | [`rq`] | one `sched_balance_rq` attempt as a `Plan` |
//! | [`wake`] | `select_task_rq_fair`: wake_wide, wake_affine, wake-balance modes |
//! | [`sis`] | `select_idle_sibling`, `select_idle_cpu`, SIS_UTIL, SIS_PROP variants |
//! | [`fork`] | `sched_balance_find_dst_group` / `_cpu` for fork and exec |
//! | [`capacity`] | capacity, pressure, fit and misfit |
//! | [`nohz`] | NOHZ idle-balance kick decisions |
//! | [`domain_stats`] | `/proc/schedstat` domain counters and lines |
//! | [`config`] | `BalanceConfig`: the experiment switches, parsed from the command line |

pub mod avg_idle;
pub mod capacity;
pub mod classify;
pub mod config;
pub mod domain_stats;
pub mod env;
pub mod fork;
pub mod group_stats;
pub mod imbalance;
pub mod interval;
pub mod migrate;
pub mod newidle;
pub mod nohz;
pub mod rq;
pub mod sg_lb_stats;
pub mod sis;
pub mod snapshot;
pub mod wake;

pub use avg_idle::{AvgIdle, AvgIdleClamp, SYSCTL_SCHED_MIGRATION_COST};
pub use capacity::{CapacityTable, Pressure};
pub use config::{BalanceConfig, ConfigError, GroupCapacity, NewidleGate, SisProp, WakeBalance};
pub use domain_stats::{DomainLine, DomainStats};
pub use env::LbEnv;
pub use group_stats::SdLbStats;
pub use sg_lb_stats::{GroupType, SgLbStats};
pub use imbalance::{Migration, MigrationType, SrcGroup};
pub use interval::{RqOutcome, SdState};
pub use migrate::{Detach, DetachCursor, DetachOutcome, DetachParams};
pub use newidle::{NewidleCounters, NewidleDomainState, NewidleStep, NewidleWalk};
pub use nohz::NohzState;
pub use rq::{count_attempt, plan_balance, Plan};
pub use snapshot::{CpuSnapshot, CpuView, IdleType, TaskSnapshot};
pub use wake::{WakeDecision, WakeeState};
