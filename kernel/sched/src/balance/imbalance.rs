//! The source choice and the amount to move (reference §5.6, §5.7):
//! `sched_balance_find_src_group`, `calculate_imbalance` and
//! `sched_balance_find_src_rq`.
//!
//! # Contract
//!
//! [`sched_balance_find_src_group`] takes the environment and the CPU
//! snapshots and returns either [`SrcGroup::Balanced`] (with why) or the
//! busiest group with a [`Migration`] (type and amount). The kernel then
//! calls [`sched_balance_find_src_rq`] over the same snapshots to choose the
//! CPU to pull from, and locks that CPU's run-queue for the detach loop
//! (`migrate`). No lock is needed for these two calls.
//!
//! Amounts: `Load` in load units (weight scale), `Util` in util units,
//! `Task` in tasks, `Misfit` is 1. As in Linux, the amount is not capped by
//! the busiest group's own load / util / task count (`detach_tasks` stops
//! when the source runs dry). Products are `u128`; differences saturate at
//! 0; a `Load` amount above `u64::MAX` (impossible with real loads)
//! saturates.

use super::capacity::{capacity_greater, check_cpu_capacity};
use super::env::LbEnv;
use super::group_stats::{avg_load, update_sd_lb_stats, SdLbStats};
use super::sg_lb_stats::{GroupType, SgLbStats};
use super::snapshot::{cpu_snap, CpuSnapshot, IdleType};
use crate::topology::{SD_NUMA, SD_SHARE_LLC};

/// What kind of imbalance to fix (`enum migration_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MigrationType {
    /// Move load (weight-scale PELT load).
    Load,
    /// Move utilisation.
    Util,
    /// Move a number of tasks.
    Task,
    /// Move the misfit task to a bigger CPU.
    Misfit,
}

/// A migration request: what to move and how much.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migration {
    /// Type.
    pub kind: MigrationType,
    /// Amount (see the module docs for units).
    pub imbalance: u64,
}

/// Why no group was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BalancedReason {
    /// No group has fair tasks to give (schedstat `lb_nobusyg`).
    NoBusiestGroup,
    /// The local group is in a worse state than the busiest.
    LocalBusier,
    /// Both overloaded, within `imbalance_pct` or local above average.
    WithinImbalancePct,
    /// dst is busy and busiest is not overloaded: leave it to an idle CPU.
    DstNotIdle,
    /// Idle CPUs are already spread evenly enough.
    IdleCpusBalanced,
    /// The busiest group runs a single fair task.
    SingleTask,
    /// `calculate_imbalance` found nothing to move.
    ZeroImbalance,
}

/// The answer of [`sched_balance_find_src_group`].
// The group's statistics hold its 128-byte span; the answer is made once a
// balance pass and moved at most twice, where a box would allocate.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SrcGroup {
    /// Nothing to do.
    Balanced(BalancedReason),
    /// Pull from this group.
    Busiest { group: SgLbStats, migration: Migration },
}

/// `sibling_imbalance`: tasks to move so both groups run the same number of
/// tasks per core (0 when dst is busy).
pub fn sibling_imbalance(idle: IdleType, busiest: &SgLbStats, local: &SgLbStats) -> u64 {
    if idle == IdleType::NotIdle || busiest.sum_nr_running == 0 {
        return 0;
    }
    let (nb, nl) = (busiest.cores.max(1) as i128, local.cores.max(1) as i128);
    let (b, l) = (busiest.sum_nr_running as i128, local.sum_nr_running as i128);
    if nb == nl {
        return (b - l).max(0) as u64;
    }
    let imb = (nl * b - nb * l).max(0);
    let mut imb = (2 * imb + nl + nb) / (nl + nb);
    if imb <= 1 && l == 0 && b > 1 {
        imb = 2;
    }
    imb as u64
}

/// `imb_numa_nr` for a NUMA domain whose local group is `local` (§5.1):
/// with one LLC in the group, 12.5% of its CPUs (at least 1); with several,
/// the number of LLCs.
pub fn imb_numa_nr(env: &LbEnv<'_>, local: &SgLbStats) -> u32 {
    let mut llcs = crate::cpumask::CpuMask::new();
    for c in local.span.iter() {
        llcs.set(env.sds.sd_llc_id(c));
    }
    match llcs.weight() {
        0 | 1 => (local.group_weight / 8).max(1),
        n => n,
    }
}

/// `calculate_imbalance` (§5.7). `sds.avg_load` and the groups' `avg_load`
/// are filled as Linux fills them. Returns `None` when nothing should move.
pub fn calculate_imbalance(env: &LbEnv<'_>, sds: &mut SdLbStats) -> Option<Migration> {
    let sd = env.sd()?;
    let busiest = sds.busiest?;
    let local = &mut sds.local;
    let m = |kind, imbalance| Some(Migration { kind, imbalance });
    match busiest.group_type {
        GroupType::MisfitTask if sds.asym => return m(MigrationType::Misfit, 1),
        GroupType::MisfitTask => return m(MigrationType::Load, busiest.misfit_task_load),
        GroupType::AsymPacking => {
            return m(MigrationType::Task, busiest.sum_h_nr_running as u64)
        }
        GroupType::SmtBalance | GroupType::Imbalanced => return m(MigrationType::Task, 1),
        _ => {}
    }
    if local.group_type == GroupType::HasSpare {
        if sd.flags & SD_SHARE_LLC == 0 && busiest.group_type > GroupType::FullyBusy {
            // Fill the local group's spare capacity with utilisation.
            let imb = local.group_capacity.max(local.group_util) - local.group_util;
            if imb == 0 && env.idle != IdleType::NotIdle {
                return m(MigrationType::Task, 1);
            }
            return m(MigrationType::Util, imb);
        }
        let mut imb = if busiest.group_weight == 1 || sds.prefer_sibling {
            sibling_imbalance(env.idle, &busiest, local)
        } else {
            local.idle_cpus.saturating_sub(busiest.idle_cpus) as u64
        };
        if sd.flags & SD_NUMA != 0 {
            // adjust_numa_imbalance: allow a small imbalance between nodes.
            if local.sum_nr_running < imb_numa_nr(env, local) && imb <= 2 {
                imb = 0;
            }
        }
        imb >>= 1;
        return if imb == 0 { None } else { m(MigrationType::Task, imb) };
    }
    if local.group_type < GroupType::Overloaded {
        local.avg_load = avg_load(local.group_load, local.group_capacity);
        if local.avg_load >= busiest.avg_load {
            return None;
        }
        sds.avg_load = avg_load(sds.total_load, sds.total_capacity);
        if local.avg_load >= sds.avg_load {
            return None;
        }
    }
    let (avg, local) = (sds.avg_load, &sds.local);
    let from = busiest.avg_load.saturating_sub(avg) as u128 * busiest.group_capacity as u128;
    let to = avg.saturating_sub(local.avg_load) as u128 * local.group_capacity as u128;
    let imb = (from.min(to) / 1024).min(u64::MAX as u128) as u64;
    if imb == 0 {
        None
    } else {
        m(MigrationType::Load, imb)
    }
}

/// `sched_balance_find_src_group` (§5.6): the domain's statistics, the
/// balanced checks, then `calculate_imbalance`. Also returns the statistics
/// (the kernel reads `overloaded`, `sum_util`).
pub fn sched_balance_find_src_group(env: &LbEnv<'_>, cpus: &[CpuSnapshot]) -> (SrcGroup, SdLbStats) {
    let mut sds = update_sd_lb_stats(env, cpus);
    let decision = find_src_group_inner(env, &mut sds);
    (decision, sds)
}

fn find_src_group_inner(env: &LbEnv<'_>, sds: &mut SdLbStats) -> SrcGroup {
    use BalancedReason::*;
    let Some(pct) = env.sd().map(|sd| sd.imbalance_pct) else {
        return SrcGroup::Balanced(NoBusiestGroup);
    };
    let Some(busiest) = sds.busiest else {
        return SrcGroup::Balanced(NoBusiestGroup);
    };
    let local = sds.local;
    let force = !matches!(
        busiest.group_type,
        GroupType::MisfitTask | GroupType::AsymPacking | GroupType::Imbalanced
    );
    if force {
        if local.group_type > busiest.group_type {
            return SrcGroup::Balanced(LocalBusier);
        }
        let mut forced = false;
        if local.group_type == GroupType::Overloaded {
            if local.avg_load >= busiest.avg_load {
                return SrcGroup::Balanced(LocalBusier);
            }
            sds.avg_load = avg_load(sds.total_load, sds.total_capacity);
            if local.avg_load >= sds.avg_load
                || 100 * busiest.avg_load as u128 <= pct as u128 * local.avg_load as u128
            {
                return SrcGroup::Balanced(WithinImbalancePct);
            }
        }
        if sds.prefer_sibling
            && local.group_type == GroupType::HasSpare
            && sibling_imbalance(env.idle, &busiest, &local) > 1
        {
            forced = true;
        }
        if !forced && busiest.group_type != GroupType::Overloaded {
            if env.idle == IdleType::NotIdle {
                return SrcGroup::Balanced(DstNotIdle);
            }
            let smt = |s: &SgLbStats| s.flags & crate::topology::SD_SHARE_CPUCAPACITY != 0;
            let smt_force = busiest.group_type == GroupType::SmtBalance && smt(&busiest) != smt(&local);
            if !smt_force {
                if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                    return SrcGroup::Balanced(IdleCpusBalanced);
                }
                if busiest.sum_h_nr_running == 1 {
                    return SrcGroup::Balanced(SingleTask);
                }
            }
        }
    }
    match calculate_imbalance(env, sds) {
        Some(migration) if migration.imbalance > 0 => SrcGroup::Busiest { group: busiest, migration },
        _ => SrcGroup::Balanced(ZeroImbalance),
    }
}

/// `sched_balance_find_src_rq`: the CPU of the busiest group to pull from.
pub fn sched_balance_find_src_rq(
    env: &LbEnv<'_>,
    group: &SgLbStats,
    migration: Migration,
    cpus: &[CpuSnapshot],
) -> Option<usize> {
    let sd = env.sd()?;
    let asym = super::env::sd_asym_cpucapacity(sd, cpus);
    let dst_cap = cpu_snap(cpus, env.dst_cpu).map_or(1, |s| s.cap());
    let mut best: Option<usize> = None;
    // (value, capacity) of the best so far; capacity only for Load.
    let (mut best_val, mut best_cap): (u64, u64) = (0, 1);
    for snap in group.span.iter().filter(|&c| env.cpus.contains(c)).filter_map(|c| cpu_snap(cpus, c)) {
        let nr = snap.h_nr_runnable;
        if nr == 0 || snap.cpu == env.dst_cpu {
            continue;
        }
        let cap = snap.cap();
        if asym && !capacity_greater(dst_cap, cap) && nr == 1 {
            continue;
        }
        match migration.kind {
            MigrationType::Load => {
                let load = snap.load_avg;
                if nr == 1
                    && load > migration.imbalance
                    && !check_cpu_capacity(snap.capacity, snap.capacity_orig, sd.imbalance_pct)
                {
                    continue;
                }
                if load as u128 * best_cap as u128 > best_val as u128 * cap as u128 {
                    (best_val, best_cap, best) = (load, cap, Some(snap.cpu));
                }
            }
            MigrationType::Util => {
                let util = snap.util_cfs_boost();
                // Strictly above the best so far, which starts at 0: a CPU
                // without util is never the source.
                if nr > 1 && util > best_val {
                    (best_val, best) = (util, Some(snap.cpu));
                }
            }
            MigrationType::Task => {
                if nr as u64 > best_val {
                    (best_val, best) = (nr as u64, Some(snap.cpu));
                }
            }
            MigrationType::Misfit => {
                if snap.misfit_task_load > best_val {
                    (best_val, best) = (snap.misfit_task_load, Some(snap.cpu));
                }
            }
        }
    }
    best
}
