//! Periodic load balancing (Linux's `sched_balance_domains` and
//! `sched_balance_rq`), run from each CPU's tick for every domain whose
//! interval has passed, and on behalf of tickless idle CPUs by the NOHZ
//! balancer. Also the active balance: when nothing could be pulled because
//! the busiest CPU only runs its current task, that CPU is asked to push it.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use sched::balance::interval::{balance_due, failed_count_after, finish_balance, get_sd_balance_interval, max_load_balance_interval};
use sched::balance::migrate::{need_active_balance, ActiveBalanceInput, DetachParams};
use sched::balance::newidle::DecayPass;
use sched::balance::rq::record_pull;
use sched::balance::sis::idle_cpu_scan_refresh;
use sched::balance::{plan_balance, CpuSnapshot, IdleType, LbEnv, Migration, Plan, RqOutcome, SdState};
use sched::cpumask::CpuMask;
use sched::Feature;

use super::snapshot::{cpu_snapshot, snapshots_into};
use super::{cpu_state, Global};
use crate::{MAX_CPUS, MAX_LEVELS};
use crate::percpu::{per_cpu, PerCpu};

/// This module's per-CPU part (its `CPUS`).
pub struct PeriodicCpu {
    /// Active balance requests: `dst + 1` asks this CPU (the source) to push
    /// its running task to `dst` at its next switch (0: none).
    active_push: AtomicUsize,
    /// Tasks an active balance pushed, by domain index (Linux's
    /// `alb_pushed` of the busiest CPU's lowest domain that holds the target),
    /// counted by the switch that moves the task (it holds a runqueue lock, so
    /// not the balance state: added to `alb_pushed` when printed).
    alb_pushed: [AtomicU64; MAX_LEVELS],
}

impl PeriodicCpu {
    pub const fn new() -> Self {
        PeriodicCpu {
            active_push: AtomicUsize::new(0),
            alb_pushed: [const { AtomicU64::new(0) }; MAX_LEVELS],
        }
    }
}

/// Every CPU's PeriodicCpu.
static CPUS: PerCpu<PeriodicCpu> = per_cpu!(PeriodicCpu::new());

/// The CPU this CPU's running task should be pushed to, if asked (taken).
pub fn take_active_push(cpu: usize) -> Option<usize> {
    match CPUS[cpu].active_push.swap(0, Ordering::AcqRel) {
        0 => None,
        d => Some(d - 1),
    }
}

/// The switch on `src` moved its running task to `dst` for an active balance.
pub fn note_pushed(src: usize, dst: usize) {
    let Some(g) = super::global() else { return };
    if let Some(idx) = g.sds.per_cpu(src).iter().position(|sd| sd.span.contains(dst)) {
        if let Some(c) = CPUS[src].alb_pushed.get(idx) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// `alb_pushed` of `cpu`'s domain `idx` (see [`note_pushed`]).
pub fn alb_pushed(cpu: usize, idx: usize) -> u64 {
    CPUS[cpu].alb_pushed.get(idx).map_or(0, |c| c.load(Ordering::Relaxed))
}

/// Balances `cpu`'s domains whose interval has passed (`idle`: whether the
/// CPU runs its idle task); returns how many tasks it pulled to `cpu`.
pub fn sched_balance_domains(cpu: usize, idle: bool) -> u32 {
    let Some(g) = super::global() else { return 0 };
    let chain = g.sds.per_cpu(cpu);
    if chain.is_empty() {
        return 0;
    }
    let now = crate::clock::jiffies();
    let max = max_load_balance_interval(g.hz, g.sds.online().weight());
    let mut guard = cpu_state(cpu).lock();
    let Some(state) = guard.as_mut() else { return 0 };
    let mut pulled = 0;
    let mut kind = if idle { IdleType::Idle } else { IdleType::NotIdle };
    // As fair.c: sched_balance_domains(): each visited domain's newidle cost
    // ages first; once a domain said "not the balancer", the walk goes on
    // only while domains decay, and the runqueue's max_idle_balance_cost
    // follows the last visited one.
    let ns = crate::rq::now_ns();
    let mut decay = DecayPass::default();
    let mut continue_balancing = true;
    for (idx, sd) in chain.iter().enumerate() {
        let st = &mut state.sd[idx];
        let decayed = decay.visit(&mut st.newidle, ns);
        if !continue_balancing {
            if decayed {
                continue;
            }
            break;
        }
        let interval = get_sd_balance_interval(sd, st, kind != IdleType::Idle, g.hz, max);
        if !balance_due(st, interval, now) {
            continue;
        }
        let (go_on, moved) = balance_rq(g, cpu, idx, kind, st, &mut state.balance_snaps);
        st.last_balance = now;
        continue_balancing = go_on;
        pulled += moved;
        if moved > 0 {
            // It has work now: the higher domains balance as a busy CPU.
            kind = IdleType::NotIdle;
        }
    }
    super::newidle::note_lowest_cost(cpu, state);
    // Balance state before the runqueue lock (the lock order).
    decay.finish(&mut crate::rq::lock_inside(&guard, cpu).avg_idle);
    pulled
}

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
    let dst_group = sd.groups.iter().find(|gr| gr.span.contains(dst)).map_or(CpuMask::single(dst), |gr| gr.span);
    let mut all_pinned_seen = false;
    for _ in 0..4 {
        snapshots_into(&sd.span, snaps);
        // The pass's work, for a simulated CPU (free on x86): newidle's measured
        // cost (`max_newidle_lb_cost`) and `avg_idle` see it there.
        crate::platform::mechanism_work(crate::platform::Work::BalancePass { cpus: sd.span_weight });
        let (plan, lb_stats) = plan_balance(&env, snaps, &mut st.stats);
        // SIS_UTIL: the LLC domain's balance refreshes how deep wakeups scan
        // (not a newidle one: fair.c update_idle_cpu_scan()).
        if let Some(lbs) = lb_stats {
            let sis_util = g.cfg.features.has(Feature::SisUtil);
            let llc_weight = g.sds.sd_llc_size(dst);
            if let Some(nr) = idle_cpu_scan_refresh(sis_util, idle, sd.span_weight, llc_weight, lbs.sum_util, sd.imbalance_pct) {
                if let Some(l) = super::LLC.lock().get_mut(g.sds.sd_llc_id(dst)) {
                    l.nr_idle_scan = nr;
                }
            }
        }
        match plan {
            // Balanced: the parent's group flag clears, unless a redo after an
            // all-pinned source got here (those tasks had no chance to move).
            Plan::NotBalancer => {
                if !all_pinned_seen {
                    set_parent_group_imbalance(g, dst, idx, false);
                }
                finish_balance(st, sd, idle, None, RqOutcome::Balanced);
                return (false, 0);
            }
            Plan::Balanced(_) | Plan::NoBusyQueue => {
                if !all_pinned_seen {
                    set_parent_group_imbalance(g, dst, idx, false);
                }
                finish_balance(st, sd, idle, None, RqOutcome::Balanced);
                return (true, 0);
            }
            Plan::Pull { src, migration } => {
                let (dsnap, ssnap) = (cpu_snapshot(dst), cpu_snapshot(src));
                let mut params = DetachParams::new(&dsnap, &ssnap, idle, sd, st.nr_balance_failed);
                params.migration_cost = g.cfg.migration_cost;
                params.nr_migrate = g.cfg.nr_migrate;
                params.place_lag = g.cfg.features.has(Feature::PlaceLag);
                params.lb_min = g.cfg.features.has(Feature::LbMin);
                params.cpus = env.cpus;
                let mut out = super::pull::pull_tasks(dst, src, &params, migration);
                // The LBF_* flags of the whole attempt: ALL_PINNED is set once and only
                // cleared, SOME_PINNED only set, the counts add up (schedstat counts the
                // attempt once).
                let mut total = out;
                // LBF_DST_PINNED: tasks that may not run on dst may run on another CPU of
                // its group: move them there instead (dst leaves the candidates so that it
                // is not chosen again).
                let mut left = Migration { imbalance: out.imbalance_left, ..migration };
                while let Some(nd) = out.new_dst_cpu.filter(|&c| c != src && left.imbalance > 0) {
                    env.cpus.clear(params.dst_cpu);
                    let nsnap = cpu_snapshot(nd);
                    params.dst_cpu = nd;
                    params.dst_h_nr_runnable = nsnap.h_nr_runnable;
                    params.cpus = env.cpus;
                    out = super::pull::pull_tasks(nd, src, &params, left);
                    total.moved += out.moved;
                    total.hot_moved += out.hot_moved;
                    total.all_pinned &= out.all_pinned;
                    total.some_pinned |= out.some_pinned;
                    left.imbalance = out.imbalance_left;
                }
                record_pull(&mut st.stats, idle, &total);
                // LBF_SOME_PINNED with imbalance left: the parent domain sees this group
                // as imbalanced (group_imbalanced).
                if total.some_pinned && left.imbalance > 0 {
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
                let failed = failed_count_after(st, idle, migration.kind);
                // As fair.c: sched_balance_rq(): asked for every idle type,
                // newidle included (only the failure count skips newidle).
                let need = need_active_balance(&ActiveBalanceInput {
                    kind: migration.kind,
                    idle,
                    dst: &dsnap,
                    src: &ssnap,
                    imbalance_pct: sd.imbalance_pct,
                    cache_nice_tries: sd.cache_nice_tries,
                    nr_balance_failed: failed,
                });
                let active = if need {
                    st.stats.alb_count += 1;
                    if CPUS[src].active_push.compare_exchange(0, dst + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                        // On dst's ring: a NOHZ pass runs here for another CPU.
                        if crate::trace::enabled() {
                            crate::trace::record_on(crate::rq::now_ns(), || {
                                (dst, crate::trace::Event::AlbRequest { src: src as u32, dst: dst as u32, idle })
                            });
                        }
                        crate::resched::resched_cpu(src);
                        Some(true)
                    } else {
                        st.stats.alb_failed += 1;
                        Some(false)
                    }
                } else {
                    Some(false)
                };
                finish_balance(st, sd, idle, Some(migration.kind), RqOutcome::Failed { kind: migration.kind, active });
                return (true, 0);
            }
        }
    }
    finish_balance(st, sd, idle, None, RqOutcome::AllPinned);
    (true, 0)
}
