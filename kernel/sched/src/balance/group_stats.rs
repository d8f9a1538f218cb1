//! Group and domain statistics (reference §5.5): `update_sg_lb_stats` over
//! the snapshots of a group's CPUs and `update_sd_lb_stats` over a domain's
//! groups, which also picks the local and the busiest group.
//!
//! # Contract
//!
//! Inputs: an [`LbEnv`] and the CPU snapshots (see `snapshot`). Output: an
//! [`SdLbStats`] value; nothing is mutated. Group capacity is the sum of the
//! snapshots' `capacity` (Linux's `sgc->capacity`, refreshed from
//! `scale_rt_capacity` by the pass itself). Sums are `u64` of per-CPU values
//! (each ≤ 2^40 for any real load: 2^8 CPUs × 88761 × a few hundred tasks),
//! saturating if not; `avg_load` products are `u128`.
//!
//! The kernel also reads two side results: `overloaded` (some CPU has ≥ 2
//! tasks or a misfit task, Linux's `rd->overloaded`, the newidle gate) and
//! `sum_util`/`span_weight` (when the domain is the LLC, to refresh SIS_UTIL's
//! `nr_idle_scan`, see `sis::update_idle_cpu_scan`).

use crate::topology::{SchedGroup, SD_SHARE_CPUCAPACITY};

use super::capacity::{check_cpu_capacity, fits_capacity, SCHED_CAPACITY_SCALE};
use super::classify::{group_classify, group_classify_factor, update_sd_pick_busiest};
use super::config::GroupCapacity;
use super::env::{sd_asym_cpucapacity, smt_mask, LbEnv};
use super::sg_lb_stats::{GroupType, SgLbStats};
use super::snapshot::{cpu_snap, CpuSnapshot, IdleType};

/// 3.17's default `smt_gain`: a core's capacity, shared by its SMT threads.
pub const SMT_GAIN: u64 = 1178;

/// 3.17's `sg_capacity_factor()`: how many tasks a group of `cpus` CPUs
/// holds, from its capacity and original capacity (with `smt_gain`):
/// `smt = ceil(1024 · cpus / capacity_orig)`, `min(cpus / smt, round(capacity
/// / 1024))`, and where that is 0, `fix_small_capacity()`: 1 for a group of
/// an SMT domain (`smt_domain`) still holding more than 29/32 of its
/// original capacity, else 0. Inputs are below 2^40 (sums of capacities):
/// the products fit `u64`.
pub fn sg_capacity_factor(capacity: u64, capacity_orig: u64, cpus: u32, smt_domain: bool) -> u32 {
    let orig = capacity_orig.max(1);
    let smt = (SCHED_CAPACITY_SCALE * cpus as u64).div_ceil(orig).max(1);
    let by_cores = cpus as u64 / smt;
    let by_capacity = (capacity + SCHED_CAPACITY_SCALE / 2) / SCHED_CAPACITY_SCALE;
    let f = by_cores.min(by_capacity);
    if f > 0 {
        return f as u32;
    }
    (smt_domain && capacity * 32 > orig * 29) as u32
}

/// `avg_load` of a group: `load · 1024 / capacity`.
pub fn avg_load(load: u64, capacity: u64) -> u64 {
    (load as u128 * SCHED_CAPACITY_SCALE as u128 / capacity.max(1) as u128).min(u64::MAX as u128)
        as u64
}

/// `update_sg_lb_stats`. Also reports whether a CPU of the group is
/// overloaded (≥ 2 tasks or misfit) and whether one is overutilised.
/// `asym`: whether the domain balances across capacities, computed once
/// per pass by [`update_sd_lb_stats`] (Linux reads the domain's
/// `SD_ASYM_CPUCAPACITY`; recomputing it per group made a pass quadratic in
/// the span).
pub fn update_sg_lb_stats(
    env: &LbEnv<'_>,
    group: &SchedGroup,
    cpus: &[CpuSnapshot],
    local: bool,
    asym: bool,
) -> (SgLbStats, bool, bool) {
    let pct = env.sd().map_or(117, |sd| sd.imbalance_pct);
    let mut s = SgLbStats {
        span: group.span,
        flags: group.flags,
        group_weight: group.span.weight(),
        cores: group.cores,
        sgc_imbalance: group.span.first().is_some_and(|f| env.imbalanced_groups.contains(f)),
        min_capacity: u64::MAX,
        ..SgLbStats::default()
    };
    let (mut overloaded, mut overutilized) = (false, false);
    let factor = env.group_capacity == GroupCapacity::Factor;
    let mut capacity_orig = 0u64;
    for snap in group.span.iter().filter_map(|c| cpu_snap(cpus, c)) {
        if factor {
            // 3.17's update_cpu_capacity(): an SMT thread's capacity is its
            // share of smt_gain.
            let w = smt_mask(env.sds, snap.cpu).weight() as u64;
            let scale = |c: u64| if w > 1 { c * (SMT_GAIN / w) / SCHED_CAPACITY_SCALE } else { c };
            s.group_capacity = s.group_capacity.saturating_add(scale(snap.cap()).max(1));
            capacity_orig = capacity_orig.saturating_add(scale(snap.capacity_orig).max(1));
        } else {
            s.group_capacity = s.group_capacity.saturating_add(snap.cap());
        }
        s.min_capacity = s.min_capacity.min(snap.cap());
        s.max_capacity = s.max_capacity.max(snap.cap());
        if !env.cpus.contains(snap.cpu) {
            continue;
        }
        s.group_load = s.group_load.saturating_add(snap.load_avg);
        s.group_util = s.group_util.saturating_add(snap.util_cfs());
        s.group_runnable = s.group_runnable.saturating_add(snap.runnable_avg);
        s.sum_h_nr_running = s.sum_h_nr_running.saturating_add(snap.h_nr_runnable);
        s.sum_nr_running = s.sum_nr_running.saturating_add(snap.nr_running);
        overloaded |= snap.nr_running > 1;
        overutilized |= !fits_capacity(snap.util_cfs(), snap.cap());
        if snap.nr_running == 0 && snap.available_idle() {
            s.idle_cpus += 1;
            continue;
        }
        if local {
            continue;
        }
        if asym {
            if snap.misfit_task_load > 0 {
                s.misfit_task_load = s.misfit_task_load.max(snap.misfit_task_load);
                overloaded = true;
            }
        } else if env.idle.is_idle()
            && snap.h_nr_runnable == 1
            && check_cpu_capacity(snap.capacity, snap.capacity_orig, pct)
        {
            // One task on a CPU eaten by pressure: worth moving while dst idles.
            s.misfit_task_load = s.misfit_task_load.max(snap.load_avg);
        }
    }
    s.group_capacity = s.group_capacity.max(1);
    if s.min_capacity == u64::MAX {
        s.min_capacity = 0;
    }
    s.smt_balance = !local
        && env.idle != IdleType::NotIdle
        && s.flags & SD_SHARE_CPUCAPACITY != 0
        && s.sum_h_nr_running > 1;
    if factor {
        let smt_domain = env.sd().is_some_and(|sd| sd.flags & SD_SHARE_CPUCAPACITY != 0);
        s.capacity_factor = sg_capacity_factor(s.group_capacity, capacity_orig.max(1), s.group_weight, smt_domain);
        s.group_type = group_classify_factor(&s);
    } else {
        s.group_type = group_classify(pct, &s);
    }
    if s.group_type == GroupType::Overloaded {
        s.avg_load = avg_load(s.group_load, s.group_capacity);
    }
    (s, overloaded, overutilized)
}

/// `struct sd_lb_stats`: the domain's totals, local and busiest groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SdLbStats {
    /// The group containing dst.
    pub local: SgLbStats,
    /// The group to pull from, if any.
    pub busiest: Option<SgLbStats>,
    /// Σ group_load.
    pub total_load: u64,
    /// Σ group_capacity.
    pub total_capacity: u64,
    /// `total_load · 1024 / total_capacity` (filled when needed).
    pub avg_load: u64,
    /// Σ group_util (for SIS_UTIL when the domain is the LLC).
    pub sum_util: u64,
    /// The child domain has SD_PREFER_SIBLING.
    pub prefer_sibling: bool,
    /// Some CPU has ≥ 2 tasks or a misfit task (`rd->overloaded`).
    pub overloaded: bool,
    /// Some CPU's util does not fit its capacity (`rd->overutilized`).
    pub overutilized: bool,
    /// The domain balances across capacities.
    pub asym: bool,
}

/// `update_sd_lb_stats`: every group of the domain, local first.
pub fn update_sd_lb_stats(env: &LbEnv<'_>, cpus: &[CpuSnapshot]) -> SdLbStats {
    let mut sds = SdLbStats::default();
    let Some(sd) = env.sd() else { return sds };
    sds.asym = sd_asym_cpucapacity(sd, cpus);
    sds.prefer_sibling = sd
        .groups
        .first()
        .is_some_and(|g| g.flags & crate::topology::SD_PREFER_SIBLING != 0);
    let dst_cap = cpu_snap(cpus, env.dst_cpu).map_or(1, |s| s.cap());
    let mut have_local = false;
    for g in &sd.groups {
        let local = g.span.contains(env.dst_cpu);
        let (s, ov, ou) = update_sg_lb_stats(env, g, cpus, local, sds.asym);
        sds.overloaded |= ov;
        sds.overutilized |= ou;
        sds.total_load = sds.total_load.saturating_add(s.group_load);
        sds.total_capacity = sds.total_capacity.saturating_add(s.group_capacity);
        sds.sum_util = sds.sum_util.saturating_add(s.group_util);
        if local && !have_local {
            sds.local = s;
            have_local = true;
            continue;
        }
        if update_sd_pick_busiest(&s, sds.busiest.as_ref(), &sds.local, sds.asym, dst_cap) {
            sds.busiest = Some(s);
        }
    }
    sds
}
