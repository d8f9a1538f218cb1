//! Printing the balancing statistics: each CPU's domain lines in the layout
//! of Linux's `/proc/schedstat` (`print_domain_lines`, called right after
//! that CPU's `cpuN` line), then (`print_all`) a `@fw domstat`
//! record per CPU and level, a `@fw newidle_sd` record per CPU and level (the
//! newidle counters of that domain), a `@fw sis` record per CPU (its
//! wakeups' select_idle_cpu scans: depth, hits, time), a `@fw newidle`
//! record, a `@fw avg_idle_hist` record (avg_idle at the newidle gate) and a
//! `@fw idle_period_hist` record (the idle periods avg_idle averaged) per CPU.

use alloc::string::String;

use sched::balance::domain_stats::{write_domstat_line, DomainLine};
use sched::balance::DomainStats;

use super::state::cpu_state;

/// `stats` with the pushes the switch counted (`active::note_pushed`) and
/// the remote wakeups the wakeup path counted (`wake::note_remote_wakeup`).
fn with_pushed(cpu: usize, idx: usize, stats: &DomainStats) -> DomainStats {
    let mut s = *stats;
    s.alb_pushed = s.alb_pushed.wrapping_add(super::active::alb_pushed(cpu, idx));
    s.ttwu_wake_remote = s.ttwu_wake_remote.wrapping_add(super::wake::ttwu_wake_remote(cpu, idx));
    s
}

/// Prints `cpu`'s `domainN <mask> ...` lines (Linux's layout).
pub fn print_domain_lines(cpu: usize) {
    let Some(g) = super::state::global() else { return };
    let nr = g.sds.online().iter().last().map_or(1, |c| c + 1);
    let guard = cpu_state(cpu).lock();
    let Some(state) = guard.as_ref() else { return };
    for (i, (sd, st)) in g.sds.per_cpu(cpu).iter().zip(state.sd.iter()).enumerate() {
        crate::kprintln!("{}", DomainLine { index: i, span: sd.span, nr_cpu_ids: nr, stats: &with_pushed(cpu, i, &st.stats) });
    }
}

/// Prints every CPU's domain statistics as machine-readable records, then
/// one `@fw sis_llc` record per LLC (its SIS_UTIL depth and refreshes).
pub fn print_all() {
    let Some(g) = super::state::global() else { return };
    print_cpus(g);
    let llc: alloc::vec::Vec<(usize, sched::balance::sis::LlcShared)> =
        g.sds.online().iter().filter(|&c| g.sds.sd_llc_id(c) == c).map(|c| (c, super::state::read_llc(c))).collect();
    for (id, l) in llc {
        let refreshes = super::state::LLC_UTIL_REFRESHES.get(id).map_or(0, |c| c.load(core::sync::atomic::Ordering::Relaxed));
        crate::record!(
            "sis_llc",
            "llc={} cpus={} nr_idle_scan={} util_refreshes={} avg_scan_cost={}",
            id, g.sds.sd_llc_size(id), l.nr_idle_scan, refreshes, l.avg_scan_cost
        );
    }
}

fn print_cpus(g: &super::state::Global) {
    for cpu in g.sds.online().iter() {
        let guard = cpu_state(cpu).lock();
        let Some(state) = guard.as_ref() else { continue };
        for (i, (sd, st)) in g.sds.per_cpu(cpu).iter().zip(state.sd.iter()).enumerate() {
            let mut line = String::new();
            let _ = write_domstat_line(&mut line, cpu, sd.level, &with_pushed(cpu, i, &st.stats));
            crate::kprintln!("{}", line);
            let n = st.newidle.counters;
            crate::record!(
                "newidle_sd",
                "cpu={} level={} attempts={} successes={} pulled={} time_ns={} cost_stops={} random_skips={} max_newidle_lb_cost={}",
                cpu, sd.level, n.attempts, n.successes, n.tasks_pulled, n.time_ns, n.cost_stops, n.random_skips,
                st.newidle.max_newidle_lb_cost
            );
        }
        let s = state.sis;
        crate::record!(
            "sis",
            "cpu={} scans={} scanned={} found={} truncated={} idle_core_scans={} limited={} depth_sum={} no_scan={} accounted={} time_ns={}",
            cpu, s.scans, s.scanned, s.found, s.truncated, s.idle_core_scans, s.limited, s.depth_sum, s.no_scan, s.accounted, s.time_ns
        );
        for (i, x) in state.sis_log.iter() {
            crate::record!(
                "sis_scan",
                "cpu={} i={} avg_idle={} wake_avg_idle={} avg_scan_cost={} span={} nr={} scanned={} found={} truncated={} time_ns={} accounted={}",
                cpu, i, x.avg_idle, x.wake_avg_idle, x.avg_scan_cost, x.span, x.nr, x.scanned, x.found as u8, x.truncated as u8, x.time, x.accounted as u8
            );
        }
        let n = state.newidle;
        // The walk counts its stops and random skips per domain (fair.c keeps no CPU total):
        // the CPU's figures are their sums.
        let (cost_stops, random_skips) = state.sd.iter().fold((n.cost_stops, n.random_skips), |(c, r), st| {
            (c + st.newidle.counters.cost_stops, r + st.newidle.counters.random_skips)
        });
        let avg = crate::rq::lock_inside(&guard, cpu).avg_idle;
        let (entries, lock_drops) = super::newidle::entries_and_lock_drops(cpu);
        crate::record!(
            "newidle",
            "cpu={} attempts={} successes={} pulled={} time_ns={} gate_skips={} cost_stops={} random_skips={} avg_idle={} max_idle_balance_cost={} entries={} lock_drops={}",
            cpu, n.attempts, n.successes, n.tasks_pulled, n.time_ns, n.gate_skips + super::newidle::gate_skips(cpu),
            cost_stops, random_skips, avg.avg_idle, avg.max_idle_balance_cost(), entries, lock_drops
        );
        let h = super::newidle::avg_idle_hist(cpu);
        let n = sched::balance::avg_idle::AVG_IDLE_HIST_NAMES;
        crate::record!(
            "avg_idle_hist",
            "cpu={} {}={} {}={} {}={} {}={} {}={} {}={}",
            cpu, n[0], h[0], n[1], h[1], n[2], h[2], n[3], h[3], n[4], h[4], n[5], h[5]
        );
        let h = avg.periods;
        crate::record!(
            "idle_period_hist",
            "cpu={} {}={} {}={} {}={} {}={} {}={} {}={}",
            cpu, n[0], h[0], n[1], h[1], n[2], h[2], n[3], h[3], n[4], h[4], n[5], h[5]
        );
        drop(guard);
        super::nohz::print_counters(cpu);
    }
}
