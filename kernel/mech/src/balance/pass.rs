//! One balance pass of a CPU over one of its domains (Linux's
//! `sched_balance_rq`), for the periodic, NOHZ and newidle balancing: the
//! policy crate's plan over the domain's snapshots, then the pull it names
//! (redirected within the puller's group for tasks pinned away from it),
//! the redo with another source when every task there was pinned, and the
//! active balance request when nothing could move. Also the groups'
//! `sgc->imbalance` flags that pinned tasks leave for the parent domain.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use sched::balance::interval::{failed_count_after, finish_balance};
use sched::balance::migrate::{need_active_balance, ActiveBalanceInput, DetachOutcome, DetachParams};
use sched::balance::rq::record_pull;
use sched::balance::sis::idle_cpu_scan_refresh;
use sched::balance::{count_attempt, plan_balance, CpuSnapshot, IdleType, LbEnv, Migration, SdLbStats, Plan, RqOutcome, SdState};
use sched::cpumask::CpuMask;
use sched::topology::SchedDomain;
use sched::Feature;

use super::snapshot::{cpu_snapshot, snapshots_into};
use super::state::Global;
use crate::{MAX_CPUS, MAX_LEVELS};

/// Linux's `sgc->imbalance`, shared by every CPU whose domain at chain index
/// `i` has the group: `SGC_IMBALANCE[i]` holds the groups (by first CPU)
/// whose last balance left an imbalance that pinned tasks kept in place.
/// Indexed by position in the chain (domains are symmetric here).
static SGC_IMBALANCE: [[AtomicBool; MAX_CPUS]; MAX_LEVELS] = [const { [const { AtomicBool::new(false) }; MAX_CPUS] }; MAX_LEVELS];

/// Sets or clears the `sgc->imbalance` flag of `dst`'s group in its parent
/// domain (the domain at `idx + 1`), as fair.c: sched_balance_rq() does.
fn set_parent_group_imbalance(g: &Global, dst: usize, idx: usize, on: bool) {
    let Some(parent) = g.sds.per_cpu(dst).get(idx + 1) else { return };
    let Some(first) = parent.groups.iter().find(|gr| gr.span.contains(dst)).and_then(|gr| gr.span.first()) else { return };
    if let Some(level) = SGC_IMBALANCE.get(idx + 1) {
        level[first].store(on, Ordering::Relaxed);
    }
}

/// The groups of the domain at `idx` of `dst` whose flag is set.
fn imbalanced_groups(g: &Global, dst: usize, idx: usize) -> CpuMask {
    let mut m = CpuMask::new();
    let (Some(sd), Some(level)) = (g.sds.per_cpu(dst).get(idx), SGC_IMBALANCE.get(idx)) else { return m };
    for first in sd.groups.iter().filter_map(|gr| gr.span.first()) {
        if level[first].load(Ordering::Relaxed) {
            m.set(first);
        }
    }
    m
}

/// One `sched_balance_rq` attempt of `dst` at domain `idx`: whether the walk
/// may go on to the parent domain, and how many tasks were pulled. `snaps` is
/// `dst`'s reused buffer for the domain's snapshots (`CpuState::balance_snaps`).
pub fn balance_rq(
    g: &Global,
    dst: usize,
    idx: usize,
    idle: IdleType,
    st: &mut SdState,
    snaps: &mut Vec<CpuSnapshot>,
) -> (bool, u32) {
    let Some(sd) = g.sds.per_cpu(dst).get(idx) else { return (false, 0) };
    let mut env = LbEnv::new(&g.sds, dst, idx, idle);
    env.cpus = sd.span.intersection(&crate::rq::online_mask());
    env.nr_balance_failed = st.nr_balance_failed;
    env.imbalanced_groups = imbalanced_groups(g, dst, idx);
    env.group_capacity = g.cfg.group_capacity;
    let dst_group = sd.groups.iter().find(|gr| gr.span.contains(dst)).map_or(CpuMask::single(dst), |gr| gr.span);
    let mut all_pinned_seen = false;
    count_attempt(&mut st.stats, idle);
    for _ in 0..4 {
        snapshots_into(&sd.span, snaps);
        // The pass's work, for a simulated CPU (free on x86): newidle's measured
        // cost (`max_newidle_lb_cost`) and `avg_idle` see it there.
        crate::platform::mechanism_work(crate::platform::Work::BalancePass { cpus: sd.span_weight });
        let (plan, lb_stats) = plan_balance(&env, snaps, &mut st.stats);
        if let Some(lbs) = lb_stats {
            refresh_sis_util(g, dst, idle, sd, &lbs);
        }
        let Plan::Pull { src, migration } = plan else {
            // Balanced: the parent's group flag clears, unless a redo after an
            // all-pinned source got here (those tasks had no chance to move).
            if !all_pinned_seen {
                set_parent_group_imbalance(g, dst, idx, false);
            }
            finish_balance(st, sd, idle, None, RqOutcome::Balanced);
            return (!matches!(plan, Plan::NotBalancer), 0);
        };
        let (dsnap, ssnap) = (cpu_snapshot(dst), cpu_snapshot(src));
        let (total, left) = pull_from(g, dst, src, sd, st, idle, &mut env, (&dsnap, &ssnap), migration);
        record_pull(&mut st.stats, idle, &total);
        // LBF_SOME_PINNED with imbalance left: the parent domain sees this group
        // as imbalanced (group_imbalanced).
        if total.some_pinned && left > 0 {
            set_parent_group_imbalance(g, dst, idx, true);
        }
        if total.moved > 0 {
            finish_balance(st, sd, idle, Some(migration.kind), RqOutcome::Moved(total.moved));
            return (true, total.moved);
        }
        if total.all_pinned {
            // Linux's redo: another source, while candidates remain outside
            // dst's own group.
            all_pinned_seen = true;
            env.cpus.clear(src);
            if !env.cpus.is_subset(&dst_group) {
                continue;
            }
            finish_balance(st, sd, idle, Some(migration.kind), RqOutcome::AllPinned);
            return (true, 0);
        }
        let active = Some(active_balance(sd, st, idle, migration, (&dsnap, &ssnap), src, dst));
        finish_balance(st, sd, idle, Some(migration.kind), RqOutcome::Failed { kind: migration.kind, active });
        return (true, 0);
    }
    finish_balance(st, sd, idle, None, RqOutcome::AllPinned);
    (true, 0)
}

/// SIS_UTIL: the LLC domain's balance refreshes how deep wakeups scan (not a
/// newidle one: fair.c update_idle_cpu_scan()).
fn refresh_sis_util(g: &Global, dst: usize, idle: IdleType, sd: &SchedDomain, lbs: &SdLbStats) {
    let sis_util = g.cfg.features.has(Feature::SisUtil);
    let llc_weight = g.sds.sd_llc_size(dst);
    if let Some(nr) = idle_cpu_scan_refresh(sis_util, idle, sd.span_weight, llc_weight, lbs.sum_util, sd.imbalance_pct) {
        let id = g.sds.sd_llc_id(dst);
        super::state::set_nr_idle_scan(id, nr);
        if let Some(c) = super::state::LLC_UTIL_REFRESHES.get(id) {
            c.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// Pulls from `src` to `dst` as `migration` asks, then, for tasks that may
/// not run on `dst` but may on another CPU of its group (LBF_DST_PINNED), to
/// that CPU instead (`dst` leaves the candidates in `env`, so that it is not
/// chosen again). Returns the LBF_* flags of the whole attempt (ALL_PINNED
/// set once and only cleared, SOME_PINNED only set, the counts added:
/// schedstat counts the attempt once) and the imbalance left.
#[allow(clippy::too_many_arguments)]
fn pull_from(
    g: &Global,
    dst: usize,
    src: usize,
    sd: &SchedDomain,
    st: &SdState,
    idle: IdleType,
    env: &mut LbEnv,
    (dsnap, ssnap): (&CpuSnapshot, &CpuSnapshot),
    migration: Migration,
) -> (DetachOutcome, u64) {
    let mut params = DetachParams::new(dsnap, ssnap, idle, sd, st.nr_balance_failed);
    params.migration_cost = g.cfg.migration_cost;
    params.nr_migrate = g.cfg.nr_migrate;
    params.set_features(g.cfg.features);
    params.cpus = env.cpus;
    let mut out = super::pull::pull_tasks(dst, src, &params, migration);
    let mut total = out;
    let mut left = Migration { imbalance: out.imbalance_left, ..migration };
    while let Some(nd) = out.new_dst_cpu.filter(|&c| c != src && left.imbalance > 0) {
        env.cpus.clear(params.dst_cpu);
        params.set_dst(&cpu_snapshot(nd));
        params.cpus = env.cpus;
        out = super::pull::pull_tasks(nd, src, &params, left);
        total.moved += out.moved;
        total.hot_moved += out.hot_moved;
        total.all_pinned &= out.all_pinned;
        total.some_pinned |= out.some_pinned;
        left.imbalance = out.imbalance_left;
    }
    (total, left.imbalance)
}

/// Nothing could move from `src`: asks it to push its running task to `dst`
/// if the policy says so (as fair.c: sched_balance_rq(), for every idle
/// type, newidle included: only the failure count skips newidle). Returns
/// whether the request was made.
fn active_balance(
    sd: &SchedDomain,
    st: &mut SdState,
    idle: IdleType,
    migration: Migration,
    (dsnap, ssnap): (&CpuSnapshot, &CpuSnapshot),
    src: usize,
    dst: usize,
) -> bool {
    let failed = failed_count_after(st, idle, migration.kind);
    let need = need_active_balance(&ActiveBalanceInput {
        kind: migration.kind,
        idle,
        dst: dsnap,
        src: ssnap,
        imbalance_pct: sd.imbalance_pct,
        cache_nice_tries: sd.cache_nice_tries,
        nr_balance_failed: failed,
    });
    if !need {
        return false;
    }
    st.stats.alb_count += 1;
    let made = super::active::request(src, dst, idle);
    if !made {
        st.stats.alb_failed += 1;
    }
    made
}
