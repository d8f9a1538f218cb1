//! Group classification (reference §5.5): `group_classify` and the
//! busiest-group choice `update_sd_pick_busiest`.
//!
//! Pure functions of `SgLbStats`; see `group_stats` for how the stats are
//! built. Products are `u128` of `u64` sums and percentages: no overflow.

use super::capacity::capacity_greater;
use super::sg_lb_stats::{GroupType, SgLbStats};
use crate::topology::SD_SHARE_CPUCAPACITY;

/// `group_has_capacity`: fewer tasks than CPUs, or runnable and util both
/// comfortably below the capacity (by `imbalance_pct`).
pub fn group_has_capacity(pct: u32, s: &SgLbStats) -> bool {
    if s.sum_nr_running < s.group_weight {
        return true;
    }
    let (cap, p) = (s.group_capacity as u128, pct as u128);
    cap * p >= s.group_runnable as u128 * 100 && cap * 100 > s.group_util as u128 * p
}

/// `group_is_overloaded`: more tasks than CPUs, and util or runnable
/// beyond the capacity (by `imbalance_pct`).
pub fn group_is_overloaded(pct: u32, s: &SgLbStats) -> bool {
    if s.sum_nr_running <= s.group_weight {
        return false;
    }
    let (cap, p) = (s.group_capacity as u128, pct as u128);
    cap * 100 < s.group_util as u128 * p || cap * p < s.group_runnable as u128 * 100
}

/// `group_classify`: the first matching row of §5.5's table.
pub fn group_classify(pct: u32, s: &SgLbStats) -> GroupType {
    if group_is_overloaded(pct, s) {
        GroupType::Overloaded
    } else if s.sgc_imbalance {
        GroupType::Imbalanced
    } else if s.asym_packing {
        GroupType::AsymPacking
    } else if s.smt_balance {
        GroupType::SmtBalance
    } else if s.misfit_task_load > 0 {
        GroupType::MisfitTask
    } else if !group_has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// 3.17's `group_classify()` with its `group_has_free_capacity`, for
/// `GroupCapacity::Factor`: more runnable fair tasks than task slots
/// (`capacity_factor`) is overloaded; then a child's unmovable imbalance;
/// fewer tasks than slots has spare capacity; as many is fully busy. 3.17
/// had no misfit, SMT or asym-packing types.
pub fn group_classify_factor(s: &SgLbStats) -> GroupType {
    if s.sum_h_nr_running > s.capacity_factor {
        GroupType::Overloaded
    } else if s.sgc_imbalance {
        GroupType::Imbalanced
    } else if s.capacity_factor > s.sum_h_nr_running {
        GroupType::HasSpare
    } else {
        GroupType::FullyBusy
    }
}

fn is_smt(s: &SgLbStats) -> bool {
    s.flags & SD_SHARE_CPUCAPACITY != 0
}

/// `update_sd_pick_busiest`: whether candidate `sg` should replace
/// `busiest` (None = no busiest yet). `asym` is the domain's asymmetric-
/// capacity state, `dst_capacity` the pulling CPU's capacity, `local` the
/// local group's stats.
pub fn update_sd_pick_busiest(
    sg: &SgLbStats,
    busiest: Option<&SgLbStats>,
    local: &SgLbStats,
    asym: bool,
    dst_capacity: u64,
) -> bool {
    if sg.sum_h_nr_running == 0 {
        return false;
    }
    // A misfit task we cannot help: dst not clearly bigger, or no room here.
    if asym
        && sg.group_type == GroupType::MisfitTask
        && (!capacity_greater(dst_capacity, sg.max_capacity)
            || local.group_type != GroupType::HasSpare)
    {
        return false;
    }
    let Some(b) = busiest else {
        return !(asym
            && sg.group_type <= GroupType::FullyBusy
            && capacity_greater(sg.min_capacity, dst_capacity));
    };
    if sg.group_type != b.group_type {
        return sg.group_type > b.group_type;
    }
    let has_spare = |sg: &SgLbStats, b: &SgLbStats| {
        !(sg.idle_cpus > b.idle_cpus
            || (sg.idle_cpus == b.idle_cpus && sg.sum_nr_running <= b.sum_nr_running))
    };
    let wins = match sg.group_type {
        GroupType::Overloaded => sg.avg_load > b.avg_load,
        GroupType::Imbalanced => false,
        // Lower ASYM_PACKING priority wins; without priorities keep the first.
        GroupType::AsymPacking => false,
        // Strictly larger only: a tie keeps the first group found (v6.9+).
        GroupType::MisfitTask => sg.misfit_task_load > b.misfit_task_load,
        GroupType::SmtBalance if sg.idle_cpus != 0 || b.idle_cpus != 0 => has_spare(sg, b),
        GroupType::SmtBalance | GroupType::FullyBusy => {
            sg.avg_load > b.avg_load || (sg.avg_load == b.avg_load && !is_smt(b))
        }
        GroupType::HasSpare => {
            if is_smt(sg) != is_smt(b) {
                // Do not empty an SMT core that runs a single task.
                !(is_smt(sg) && sg.sum_h_nr_running <= 1)
            } else {
                has_spare(sg, b)
            }
        }
    };
    wins && !(asym
        && sg.group_type <= GroupType::FullyBusy
        && capacity_greater(sg.min_capacity, dst_capacity))
}
