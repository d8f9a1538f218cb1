//! One `sched_balance_rq` attempt as a plan (reference §5.3): should this
//! CPU balance, from which group and CPU, what and how much.
//!
//! # Contract
//!
//! ```text
//! let env = LbEnv { sds, dst_cpu, sd_index, idle, cpus, imbalanced_groups, nr_balance_failed, group_capacity };
//! count_attempt(&mut state.stats, idle);   // once, before any redo
//! match plan_balance(&env, &snapshots, &mut state.stats) {
//!     Plan::NotBalancer => stop walking up (continue_balancing = false); finish_balance(.., Balanced)
//!     Plan::Balanced(_) | Plan::NoBusyQueue => finish_balance(.., Balanced)
//!     Plan::Pull { src, migration, .. } => {
//!         lock src (and dst); run migrate::DetachCursor over src's tasks
//!         record_pull(&mut state.stats, idle, &outcome)
//!         moved ? finish_balance(.., Moved(n))
//!               : ask migrate::need_active_balance, kick src's stopper, finish_balance(.., Failed{..})
//!         all pinned ? remove src from env.cpus and plan again (Linux's redo)
//!     }
//! }
//! ```
//! No lock is needed for `plan_balance` itself (it reads snapshots).

use super::domain_stats::DomainStats;
use super::env::LbEnv;
use super::group_stats::SdLbStats;
use super::imbalance::{sched_balance_find_src_group, sched_balance_find_src_rq, BalancedReason, Migration, SrcGroup};
use super::interval::should_we_balance;
use super::migrate::DetachOutcome;
use super::snapshot::{CpuSnapshot, IdleType};

/// The plan of one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Another CPU of the group balances this domain.
    NotBalancer,
    /// Nothing to move.
    Balanced(BalancedReason),
    /// A busiest group, but no CPU in it to pull from.
    NoBusyQueue,
    /// Pull from `src`.
    Pull {
        /// Source CPU.
        src: usize,
        /// What and how much.
        migration: Migration,
    },
}

/// Counts one balancing attempt of `idle`'s kind in `stats` (lb_count):
/// once per attempt, before [`plan_balance`] and whatever it decides, as
/// Linux's `sched_balance_rq()` counts before its `should_we_balance()` test
/// and its redo label.
pub fn count_attempt(stats: &mut DomainStats, idle: IdleType) {
    stats.lb_mut(idle).lb_count += 1;
}

/// Plans one attempt (or, after an all-pinned source, its redo) and counts
/// its outcome in `stats` (lb_balanced, lb_nobusyg, lb_nobusyq,
/// lb_imbalance; a CPU that should not balance counts as balanced, as
/// Linux's `out_balanced` does). The attempt itself is counted once by
/// [`count_attempt`]. Also returns the domain statistics when they were
/// computed.
pub fn plan_balance(env: &LbEnv<'_>, cpus: &[CpuSnapshot], stats: &mut DomainStats) -> (Plan, Option<SdLbStats>) {
    let c = stats.lb_mut(env.idle);
    if !should_we_balance(env, cpus) {
        c.lb_balanced += 1;
        return (Plan::NotBalancer, None);
    }
    let (group, sds) = sched_balance_find_src_group(env, cpus);
    let plan = match group {
        SrcGroup::Balanced(BalancedReason::NoBusiestGroup) => {
            c.lb_nobusyg += 1;
            c.lb_balanced += 1;
            Plan::Balanced(BalancedReason::NoBusiestGroup)
        }
        SrcGroup::Balanced(r) => {
            c.lb_balanced += 1;
            Plan::Balanced(r)
        }
        SrcGroup::Busiest { group, migration } => match sched_balance_find_src_rq(env, &group, migration, cpus) {
            None => {
                c.lb_nobusyq += 1;
                c.lb_balanced += 1;
                Plan::NoBusyQueue
            }
            Some(src) => {
                c.lb_imbalance = c.lb_imbalance.wrapping_add(migration.imbalance);
                Plan::Pull { src, migration }
            }
        },
    };
    (plan, Some(sds))
}

/// Counts a detach pass's result (lb_gained, lb_hot_gained, lb_failed).
pub fn record_pull(stats: &mut DomainStats, idle: IdleType, out: &DetachOutcome) {
    let c = stats.lb_mut(idle);
    c.lb_gained = c.lb_gained.wrapping_add(out.moved as u64);
    c.lb_hot_gained = c.lb_hot_gained.wrapping_add(out.hot_moved as u64);
    if out.moved == 0 {
        c.lb_failed += 1;
    }
}
