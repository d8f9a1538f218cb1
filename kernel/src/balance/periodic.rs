//! Periodic load balancing (Linux's `sched_balance_domains` and
//! `sched_balance_rq`), run from each CPU's tick for every domain whose
//! interval has passed, and on behalf of tickless idle CPUs by the NOHZ
//! balancer. Also the active balance: when nothing could be pulled because
//! the busiest CPU only runs its current task, that CPU is asked to push it.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use sched::balance::interval::{balance_due, failed_count_after, finish_balance, get_sd_balance_interval, max_load_balance_interval};
use sched::balance::migrate::{need_active_balance, ActiveBalanceInput, DetachParams};
use sched::balance::newidle::decay_newidle_costs;
use sched::balance::rq::record_pull;
use sched::balance::sis::update_idle_cpu_scan;
use sched::balance::{plan_balance, CpuSnapshot, IdleType, LbEnv, Plan, RqOutcome, SdState};
use sched::Feature;

use super::snapshot::{cpu_snapshot, snapshots_into};
use super::{Global, STATE};
use crate::arch::percpu::MAX_CPUS;

/// Active balance requests: `ACTIVE_PUSH[src] = dst + 1` asks `src` to push
/// its running task to `dst` at its next switch (0: none).
static ACTIVE_PUSH: [AtomicUsize; MAX_CPUS] = [const { AtomicUsize::new(0) }; MAX_CPUS];

/// The CPU this CPU's running task should be pushed to, if asked (taken).
pub fn take_active_push(cpu: usize) -> Option<usize> {
    match ACTIVE_PUSH[cpu].swap(0, Ordering::AcqRel) {
        0 => None,
        d => Some(d - 1),
    }
}

/// Balances `cpu`'s domains whose interval has passed (`idle`: whether the
/// CPU runs its idle task).
pub fn sched_balance_domains(cpu: usize, idle: bool) {
    let Some(g) = super::global() else { return };
    let chain = g.sds.per_cpu(cpu);
    if chain.is_empty() {
        return;
    }
    let now = super::jiffies();
    let max = max_load_balance_interval(g.hz, g.sds.online().weight());
    let mut guard = STATE[cpu].lock();
    let Some(state) = guard.as_mut() else { return };
    // Age each domain's max_newidle_lb_cost (and max_idle_balance_cost).
    {
        // Balance state before the runqueue lock (the lock order).
        let now = crate::rq::now_ns();
        decay_newidle_costs(state.sd.iter_mut().map(|s| &mut s.newidle), &mut crate::rq::lock(cpu).avg_idle, now);
    }
    let kind = if idle { IdleType::Idle } else { IdleType::NotIdle };
    for (idx, sd) in chain.iter().enumerate() {
        let st = &mut state.sd[idx];
        let interval = get_sd_balance_interval(sd, st, !idle, g.hz, max);
        if !balance_due(st, interval, now) {
            continue;
        }
        let (go_on, _) = balance_rq(g, cpu, idx, kind, st, &mut state.balance_snaps);
        st.last_balance = now;
        if !go_on {
            break;
        }
    }
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
    for _ in 0..4 {
        snapshots_into(&sd.span, snaps);
        let (plan, lb_stats) = plan_balance(&env, snaps, &mut st.stats);
        // SIS_UTIL: the LLC domain's balance refreshes how deep wakeups scan.
        if let Some(lbs) = lb_stats {
            if g.sds.sd_llc(dst).is_some_and(|llc| llc.span == sd.span) {
                let nr = update_idle_cpu_scan(lbs.sum_util, sd.span_weight, sd.imbalance_pct);
                if let Some(l) = super::LLC.lock().get_mut(g.sds.sd_llc_id(dst)) {
                    l.nr_idle_scan = nr;
                }
            }
        }
        match plan {
            Plan::NotBalancer => {
                finish_balance(st, sd, idle, None, RqOutcome::Balanced);
                return (false, 0);
            }
            Plan::Balanced(_) | Plan::NoBusyQueue => {
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
                let out = super::pull::pull_tasks(dst, src, &params, migration);
                record_pull(&mut st.stats, idle, &out);
                if out.moved > 0 {
                    finish_balance(st, sd, idle, Some(migration.kind), RqOutcome::Moved(out.moved));
                    return (true, out.moved);
                }
                if out.all_pinned {
                    env.cpus.clear(src);
                    if env.cpus.weight() > 1 {
                        continue;
                    }
                    finish_balance(st, sd, idle, Some(migration.kind), RqOutcome::AllPinned);
                    return (true, 0);
                }
                let failed = failed_count_after(st, idle, migration.kind);
                let need = idle != IdleType::NewlyIdle
                    && need_active_balance(&ActiveBalanceInput {
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
                    if ACTIVE_PUSH[src].compare_exchange(0, dst + 1, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                        crate::schedule::resched_cpu(src);
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
