//! Wakeup and fork placement, SIS scan depth, NOHZ kicks.

use sched::balance::config::{BalanceConfig, SisProp, WakeBalance};
use sched::balance::fork::select_task_rq_fork;
use sched::balance::nohz::*;
use sched::balance::sis::*;
use sched::balance::wake::*;

use sched::balance::{CpuSnapshot, TaskSnapshot};
use sched::features::Feature;
use sched::topology::{CpuTopology, SchedDomains, SD_BALANCE_FORK};

/// `llcs` LLCs of `cores` cores × `threads` threads, one package/node.
fn topo(llcs: u32, cores: u32, threads: u32) -> SchedDomains {
    let n = llcs * cores * threads;
    let cpus: Vec<CpuTopology> = (0..n)
        .map(|i| CpuTopology { cpu: i as usize, apic_id: i, smt_id: i % threads, core_id: i / threads, pkg_id: 0, llc_id: i / (cores * threads), node: 0 })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

fn ctx<'a>(sds: &'a SchedDomains, cpus: &'a [CpuSnapshot], task: &'a TaskSnapshot, this: usize, llc: &'a dyn LlcTable, cfg: &'a BalanceConfig) -> WakeCtx<'a> {
    WakeCtx { sds, cpus, task, this_cpu: this, waker_flips: 1, waker_load: 1024, sync: true, waker_pcpu_kthread: false, llc, now_jiffies: 100, cfg, clock: None }
}

fn llc_full(n: usize) -> Vec<LlcShared> {
    vec![LlcShared::new(n as u32); n]
}

#[test]
fn pipe_partner_wakes_affine_into_the_wakers_llc() {
    // Two LLCs of 4 CPUs. The waker runs alone on CPU 0 (LLC 0); the wakee
    // last ran on CPU 5 (LLC 1), which is now busy with a hog. CPU 1 is idle.
    let sds = topo(2, 4, 1);
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[1] = CpuSnapshot::idle(1);
    cpus[5].set_hogs(2);
    let p = TaskSnapshot { load_avg: 300, util: 300, ..TaskSnapshot::hog(7, 5) };
    let cfg = BalanceConfig::default();
    let llc = llc_full(8);
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &cfg), &mut WakeAvgIdle::default());
    assert!(d.affine, "sync wakeup with one task on the waker's CPU is affine");
    assert_eq!(d.cpu, 1, "then the idle sibling in the waker's LLC");
    // Without wake_affine the wakee stays in its own LLC.
    let off = BalanceConfig { wake_affine: false, ..cfg };
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &off), &mut WakeAvgIdle::default());
    assert!(!d.affine);
    assert!((4..8).contains(&d.cpu), "{d:?}");
    // A wide 1:N waker (flips ≥ LLC size, and ≥ size × the wakee's) is not affine.
    let wp = TaskSnapshot { wakee_flips: 8, ..p };
    let wide = WakeCtx { waker_flips: 64, ..ctx(&sds, &cpus, &wp, 0, &llc, &cfg) };
    assert!(!select_task_rq_fair(&wide, &mut WakeAvgIdle::default()).affine);
}

#[test]
fn wake_affine_idle_rules() {
    let sds = topo(2, 2, 1);
    let busy = |c| CpuSnapshot::hogs(c, 1);
    // Sync wakeup from a CPU running only the waker: this.
    assert_eq!(wake_affine_idle(&sds, &busy(0), &busy(2), true), Some(0));
    assert_eq!(wake_affine_idle(&sds, &busy(0), &busy(2), false), None);
    // Idle prev: prev; idle this sharing the cache with a busy prev: this.
    assert_eq!(wake_affine_idle(&sds, &busy(0), &CpuSnapshot::idle(2), false), Some(2));
    assert_eq!(wake_affine_idle(&sds, &CpuSnapshot::idle(0), &busy(1), false), Some(0));
    // Idle this in another LLC than a busy prev: no opinion.
    assert_eq!(wake_affine_idle(&sds, &CpuSnapshot::idle(0), &busy(2), false), None);
}

#[test]
fn wake_affine_weight_and_bias() {
    let sds = topo(1, 4, 1);
    let sd = &sds.per_cpu(0)[0];
    let p = TaskSnapshot { load_avg: 100, ..TaskSnapshot::hog(1, 1) };
    let this = CpuSnapshot { load_avg: 1000, ..CpuSnapshot::hogs(0, 1) };
    let prev = CpuSnapshot { load_avg: 1300, ..CpuSnapshot::hogs(1, 1) };
    // this+p = 1100 vs prev-p = 1200: affine with or without the bias.
    assert_eq!(wake_affine_weight(sd, &p, &this, &prev, 0, false, false), Some(0));
    // this+p = 1100 vs prev-p = 1050: only WA_BIAS (prev ×108 at MC) admits
    // it (the reference's formula; its prose says the opposite direction).
    let prev = CpuSnapshot { load_avg: 1150, ..prev };
    assert_eq!(wake_affine_weight(sd, &p, &this, &prev, 0, false, false), None);
    assert_eq!(wake_affine_weight(sd, &p, &this, &prev, 0, false, true), Some(0));
    // 1100·100 vs 1000·108: not even with the bias.
    let prev = CpuSnapshot { load_avg: 1100, ..prev };
    assert_eq!(wake_affine_weight(sd, &p, &this, &prev, 0, false, true), None);
    // Sync: the waker's own load is discounted; a waker heavier than its CPU's load → this.
    assert_eq!(wake_affine_weight(sd, &p, &this, &prev, 2000, true, true), Some(0));
}

#[test]
fn select_idle_sibling_finds_an_idle_cpu_and_prefers_idle_cores() {
    let sds = topo(1, 4, 2); // 8 CPUs, SMT pairs (0,1) (2,3) (4,5) (6,7)
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[3] = CpuSnapshot::idle(3); // idle thread on a busy core
    cpus[6] = CpuSnapshot::idle(6);
    cpus[7] = CpuSnapshot::idle(7); // a fully idle core
    let p = TaskSnapshot::hog(1, 0);
    let input = SisInput { sds: &sds, cpus: &cpus, task: &p, prev: 0, target: 0, waker_pcpu_kthread_on_prev: false, nr: None, no_scan: false, asym: false, clock: None };
    let r = select_idle_sibling(&input);
    assert!(r.cpu == 6 || r.cpu == 7, "whole idle core first: {r:?}");
    // No idle core: an idle SMT sibling of prev, then any idle CPU.
    let mut cpus = cpus.clone();
    cpus[6].set_hogs(1);
    let r = select_idle_sibling(&SisInput { cpus: &cpus, prev: 2, ..input });
    assert_eq!(r.cpu, 3, "prev's idle sibling");
    let r = select_idle_sibling(&SisInput { cpus: &cpus, ..input });
    assert!(r.cpu == 3 || r.cpu == 7, "{r:?}");
    // recent_used_cpu: idle, in the LLC, allowed → taken; prev becomes recent.
    let q = TaskSnapshot { recent_used_cpu: Some(7), ..p };
    let r = select_idle_sibling(&SisInput { task: &q, ..input });
    assert_eq!((r.cpu, r.recent_used_cpu), (7, Some(0)));
    // Affinity is respected.
    let pinned = TaskSnapshot { allowed: [0usize, 1, 2].into_iter().collect(), ..p };
    assert_eq!(select_idle_sibling(&SisInput { cpus: &cpus, task: &pinned, ..input }).cpu, 0);
}

#[test]
fn sis_util_scan_depth_shrinks_as_llc_util_grows() {
    let depths: Vec<u32> = [0u64, 256, 512, 700, 875, 1024].iter().map(|&u| update_idle_cpu_scan(u * 16, 16, 117)).collect();
    assert_eq!(depths[0], 16);
    assert!(depths.windows(2).all(|w| w[0] >= w[1]), "{depths:?}");
    assert_eq!(depths[2], 10, "about 2/3 of the LLC at 50%");
    assert_eq!(depths[4], 0, "no scan from ~85%");
    // The wake path honours depth 0: no scan, target kept.
    let sds = topo(1, 8, 1);
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[5] = CpuSnapshot::idle(5);
    let p = TaskSnapshot::hog(1, 0);
    let cfg = BalanceConfig::default();
    let mut llc = llc_full(8);
    llc[0].nr_idle_scan = 0;
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &cfg), &mut WakeAvgIdle::default());
    assert_eq!(d.cpu, 0);
    llc[0].nr_idle_scan = 8;
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &cfg), &mut WakeAvgIdle::default());
    assert_eq!(d.cpu, 5);
    // Depth 2 scans CPUs 1 and 2 only (nr = 3: "!--nr" stops at the third).
    llc[0].nr_idle_scan = 2;
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &cfg), &mut WakeAvgIdle::default());
    assert_eq!(d.cpu, 0);
    let s = d.sis.unwrap().scan.unwrap();
    assert_eq!((s.scanned, s.truncated), (2, true));
}

#[test]
fn sis_prop_depth_per_variant() {
    let mut aged = WakeAvgIdle::default();
    // Legacy: span 16 × (1 ms / 512) / (cost 1000+1) → 31.
    assert_eq!(sis_prop_depth(SisProp::Legacy, 1_000_000, &mut aged, 0, 16, 1000), Some(31));
    assert_eq!(sis_prop_depth(SisProp::Legacy, 100_000, &mut aged, 0, 16, 1000), Some(4), "min 4");
    // Peter's acctscan: legacy's depth, and his loop examines up to nr CPUs (one more).
    assert_eq!(sis_prop_depth(SisProp::PerCpuCost, 1_000_000, &mut aged, 0, 16, 1000), Some(32));
    // Mel's altscan: avg_idle/512 kept, no span scaling: (1 ms / 512) / 101 ns = 19, at least 4.
    assert_eq!(sis_prop_depth(SisProp::Altscan, 1_000_000, &mut aged, 0, 16, 100), Some(19));
    assert_eq!(sis_prop_depth(SisProp::Legacy, 1_000_000, &mut aged, 0, 16, 100), Some(309), "the span scaling");
    assert_eq!(sis_prop_depth(SisProp::Altscan, 1_000_000, &mut aged, 0, 16, 1000), Some(4), "min 4");
    assert_eq!(sis_prop_depth(SisProp::Off, 1_000_000, &mut aged, 0, 16, 1000), None);
    // Aged: half of avg_idle at wakeup, halved per jiffy since.
    aged.on_idle_wakeup(1_000_000, 10);
    assert_eq!(sis_prop_depth(SisProp::Aged, 0, &mut aged, 10, 16, 1000), Some(7992));
    assert_eq!(sis_prop_depth(SisProp::Aged, 0, &mut aged, 12, 16, 1000), Some(1998));
    assert_eq!(aged.wake_avg_idle, 125_000);
    // Accounting differences on the same scan (8 µs, 8 CPUs, found, not truncated).
    let mut l = LlcShared::new(16);
    sis_prop_account(SisProp::Legacy, &mut l, &mut aged, 8000, 8, true, false);
    assert_eq!(l.avg_scan_cost, 1000);
    let mut l = LlcShared::new(16);
    sis_prop_account(SisProp::PerCpuCost, &mut l, &mut aged, 8000, 8, true, false);
    assert_eq!(l.avg_scan_cost, 125);
    // altscan: a success's counter is 4 x the CPUs examined: 8000 / 32 = 250, an eighth of it;
    // a failure's is the CPUs examined plus 1: 8000 / 9 = 888.
    let mut l = LlcShared::new(16);
    sis_prop_account(SisProp::Altscan, &mut l, &mut aged, 8000, 8, true, false);
    assert_eq!(l.avg_scan_cost, 31);
    let mut l = LlcShared::new(16);
    assert!(sis_prop_account(SisProp::Altscan, &mut l, &mut aged, 8000, 8, false, true));
    assert_eq!(l.avg_scan_cost, 111);
    let mut l = LlcShared::new(16);
    assert!(!sis_prop_account(SisProp::Legacy, &mut l, &mut aged, 8000, 3, false, true));
    assert_eq!(l.avg_scan_cost, 0, "legacy ignores truncated scans");
    sis_prop_account(SisProp::PerCpuCost, &mut l, &mut aged, 8000, 4, false, true);
    assert_eq!(l.avg_scan_cost, 250, "per-CPU cost counts them");
    // The wake path uses SIS_PROP when SIS_UTIL is off.
    let sds = topo(1, 8, 1);
    let cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot { avg_idle: 100_000, ..CpuSnapshot::hogs(c, 1) }).collect();
    let mut cfg = BalanceConfig { sis_prop: SisProp::Legacy, ..BalanceConfig::default() };
    cfg.features.set(Feature::SisUtil, false);
    let p = TaskSnapshot::hog(1, 0);
    let mut llc = llc_full(8);
    llc[0].avg_scan_cost = 1000;
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &cfg), &mut WakeAvgIdle::default());
    assert_eq!(d.sis.unwrap().scan.unwrap().scanned, 3, "nr = 4 examines 3");
}

#[test]
fn wake_balance_modes() {
    let sds = topo(1, 4, 2);
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[6] = CpuSnapshot::idle(6);
    cpus[7] = CpuSnapshot::idle(7);
    let p = TaskSnapshot::hog(1, 2);
    let llc = llc_full(8);
    let linux = BalanceConfig::default();
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &linux), &mut WakeAvgIdle::default());
    assert!(d.cpu == 6 || d.cpu == 7, "Linux moves the wakee to the idle core: {d:?}");
    let idle_only = BalanceConfig { wake_balance: WakeBalance::IdleOnly, ..linux };
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &idle_only), &mut WakeAvgIdle::default());
    assert_eq!((d.cpu, d.path), (2, WakePath::Prev), "waker's core busy: stay on prev");
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 6, &llc, &idle_only), &mut WakeAvgIdle::default());
    assert!(d.cpu == 6 || d.cpu == 7, "waker's sibling idle: balance as Linux: {d:?}");
    let off = BalanceConfig { wake_balance: WakeBalance::Off, ..linux };
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 6, &llc, &off), &mut WakeAvgIdle::default());
    assert_eq!(d.cpu, 2, "off: always prev");
    // prev no longer allowed: the first allowed CPU.
    let moved = TaskSnapshot { allowed: [4usize, 5].into_iter().collect(), ..p };
    assert_eq!(select_task_rq_fair(&ctx(&sds, &cpus, &moved, 0, &llc, &off), &mut WakeAvgIdle::default()).cpu, 4);
}

#[test]
fn record_wakee_counts_flips_and_decays() {
    let mut w = WakeeState::default();
    for i in 0..10 {
        w.record_wakee(i % 2, 5, 250);
    }
    assert_eq!(w.wakee_flips, 10);
    w.record_wakee(1, 5, 250);
    assert_eq!(w.wakee_flips, 10, "same wakee again: no flip");
    w.record_wakee(0, 300, 250);
    assert_eq!(w.wakee_flips, 6, "halved after a second, then one flip");
    assert!(wake_wide(16, 2, 2));
    assert!(!wake_wide(16, 1, 2));
    assert!(!wake_wide(3, 2, 2));
}

#[test]
fn forks_spread_over_idle_cpus_and_cores() {
    for (sds, want_cores) in [(topo(1, 8, 1), 8usize), (topo(1, 4, 2), 4)] {
        let n = sds.online().weight() as usize;
        let mut cpus: Vec<CpuSnapshot> = (0..n).map(CpuSnapshot::idle).collect();
        cpus[0].set_hogs(1); // the parent
        let threads = n / want_cores;
        let mut placed = Vec::new();
        for id in 0..(want_cores as u64 - 1) {
            let p = TaskSnapshot::hog(id + 10, 0);
            let c = select_task_rq_fork(&sds, &p, 0, SD_BALANCE_FORK, &cpus);
            let k = cpus[c].nr_running + 1;
            cpus[c].set_hogs(k);
            placed.push(c);
        }
        let mut cores: Vec<usize> = placed.iter().map(|c| c / threads).collect();
        cores.push(0);
        cores.sort();
        cores.dedup();
        assert_eq!(cores.len(), want_cores, "children {placed:?} on distinct cores");
    }
}

#[test]
fn nohz_kicks() {
    let sds = topo(1, 4, 1);
    let hz = 250;
    let mut n = NohzState::default();
    let mut cpus: Vec<CpuSnapshot> = (0..4).map(CpuSnapshot::idle).collect();
    cpus[0].set_hogs(2);
    // Nobody idle with a stopped tick: no kick.
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 10), 0);
    for c in 1..4 {
        n.enter_idle(c, 10, hz);
    }
    n.needs_update = false;
    // Two tasks on a busy CPU, balance due: BALANCE|STATS to the first idle CPU.
    let f = nohz_balancer_kick(&n, &sds, false, &cpus[0], 10);
    assert_eq!(f, NOHZ_BALANCE_KICK | NOHZ_STATS_KICK);
    let all = sched::cpumask::CpuMask::first_n(4);
    assert_eq!(n.find_new_ilb(0, &all, |c| cpus[c].available_idle()), Some(1));
    assert_eq!(n.find_new_ilb(1, &all, |c| cpus[c].available_idle()), Some(2), "never itself");
    assert_eq!(n.ilb_order(2).collect::<Vec<_>>(), vec![3, 1, 2]);
    // One task, symmetric LLC with only this CPU busy: no balance kick.
    cpus[0].set_hogs(1);
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 10), 0);
    // A second busy CPU in the LLC (tick running): kick.
    n.exit_idle(3);
    cpus[3].set_hogs(1);
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 10), NOHZ_BALANCE_KICK | NOHZ_STATS_KICK);
    // Not yet due: only the blocked-load refresh once it is stale.
    n.next_balance = 1000;
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 10), 0);
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 30), NOHZ_STATS_KICK);
    // Reduced capacity with a fair task: kick.
    n.next_balance = 0;
    n.exit_idle(3);
    n.enter_idle(3, 10, hz);
    n.needs_update = false;
    cpus[3] = CpuSnapshot::idle(3);
    cpus[0].capacity = 600;
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 10), NOHZ_BALANCE_KICK | NOHZ_STATS_KICK);
    // An idle CPU never kicks; needs_update adds NEXT.
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[1], 10), 0);
    n.needs_update = true;
    cpus[0].capacity = 1024;
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 10), NOHZ_NEXT_KICK);
    n.needs_update = false;
    // Asymmetric capacities: one task kicks only when it is misfit, whatever
    // the LLC's busy count (a second busy CPU in it).
    n.exit_idle(3);
    cpus[3].set_hogs(1);
    assert_eq!(nohz_balancer_kick(&n, &sds, false, &cpus[0], 10), NOHZ_BALANCE_KICK | NOHZ_STATS_KICK);
    assert_eq!(nohz_balancer_kick(&n, &sds, true, &cpus[0], 10), 0);
    cpus[0].misfit_task_load = 300;
    assert_eq!(nohz_balancer_kick(&n, &sds, true, &cpus[0], 10), NOHZ_BALANCE_KICK | NOHZ_STATS_KICK);
    cpus[0].misfit_task_load = 0;
    // The idle balancer: candidates are asked in order, none after the
    // first really idle one (a CPU busy again is passed over).
    let mut asked = Vec::new();
    cpus[1].set_hogs(1);
    let ilb = n.find_new_ilb(0, &all, |c| {
        asked.push(c);
        cpus[c].available_idle()
    });
    assert_eq!((ilb, asked), (Some(2), vec![1, 2]));
    // Newidle refresh: long avg_idle and stale blocked load.
    assert_eq!(nohz_newidle_balance(&n, 1_000_000, 100), NOHZ_NEWILB_KICK);
    assert_eq!(nohz_newidle_balance(&n, 100_000, 100), 0);
    n.after_idle_balance(100, hz, true, 200);
    assert_eq!(nohz_newidle_balance(&n, 1_000_000, 101), 0);
}

#[test]
fn idle_only_skip_path_still_runs_wake_idle_on_prev() {
    // The 2005 rule (`wake_balance=idle_only`): the waker's core (CPUs 0, 1)
    // is busy, so the wakee is not balanced toward the waker; but, as in the
    // 2005 try_to_wake_up, `wake_idle(prev)` still runs: a busy prev (CPU 2)
    // with an idle SMT sibling (CPU 3) sends the wakee to that sibling.
    let sds = topo(1, 4, 2); // SMT pairs (0,1) (2,3) (4,5) (6,7)
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[3] = CpuSnapshot::idle(3);
    cpus[6] = CpuSnapshot::idle(6); // an idle CPU elsewhere: not the 2005 rule's business
    let p = TaskSnapshot::hog(1, 2);
    let llc = llc_full(8);
    let idle_only = BalanceConfig { wake_balance: WakeBalance::IdleOnly, ..BalanceConfig::default() };
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &p, 0, &llc, &idle_only), &mut WakeAvgIdle::default());
    assert_eq!((d.cpu, d.path), (3, WakePath::Prev), "prev's idle sibling: {d:?}");
    // The sibling test honours the task's allowed CPUs.
    let pinned = TaskSnapshot { allowed: [0usize, 1, 2, 6].into_iter().collect(), ..p };
    let d = select_task_rq_fair(&ctx(&sds, &cpus, &pinned, 0, &llc, &idle_only), &mut WakeAvgIdle::default());
    assert_eq!((d.cpu, d.path), (2, WakePath::Prev), "sibling not allowed: prev");
    // A busy sibling: prev.
    let mut busy = cpus.clone();
    busy[3].set_hogs(1);
    let d = select_task_rq_fair(&ctx(&sds, &busy, &p, 0, &llc, &idle_only), &mut WakeAvgIdle::default());
    assert_eq!((d.cpu, d.path), (2, WakePath::Prev), "sibling busy: prev");
    // An idle prev stays prev (wake_idle returns an idle CPU itself first).
    let mut idle_prev = cpus.clone();
    idle_prev[2] = CpuSnapshot::idle(2);
    let d = select_task_rq_fair(&ctx(&sds, &idle_prev, &p, 0, &llc, &idle_only), &mut WakeAvgIdle::default());
    assert_eq!((d.cpu, d.path), (2, WakePath::Prev));
}

/// A fake clock for select_idle_cpu's loop: each read advances it by 1 µs.
fn ticking() -> impl Fn() -> u64 {
    let t = std::cell::Cell::new(0u64);
    move || {
        t.set(t.get() + 1000);
        t.get()
    }
}

#[test]
fn sis_prop_accounts_only_timed_depth_limited_scans_in_the_wakers_llc() {
    // Two LLCs of 4 CPUs. The waker runs on CPU 0 (LLC 0); the wakee's prev
    // is CPU 5 (LLC 1), busy; wake_affine off, so the scan runs in LLC 1.
    let sds = topo(2, 4, 1);
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot { avg_idle: 1_000_000, ..CpuSnapshot::hogs(c, 1) }).collect();
    cpus[7] = CpuSnapshot::idle(7);
    let p = TaskSnapshot::hog(1, 5);
    let mut cfg = BalanceConfig { sis_prop: SisProp::Legacy, wake_affine: false, ..BalanceConfig::default() };
    cfg.features.set(Feature::SisUtil, false);
    let mut llc = llc_full(8);
    llc[0].avg_scan_cost = 8000;
    llc[1].avg_scan_cost = 500;
    let clock = ticking();
    let c = WakeCtx { clock: Some(ScanClock(&clock)), sync: false, ..ctx(&sds, &cpus, &p, 0, &llc, &cfg) };
    let mut aged = WakeAvgIdle::default();
    let d = select_task_rq_fair(&c, &mut aged);
    assert_eq!(d.cpu, 7);
    let scan = d.sis.unwrap().scan.unwrap();
    // The depth reads the waker's LLC cost: 4 × (1 ms / 512) / 8001 = 0 → 4;
    // with LLC 1's cost (500) it would be 15.
    assert_eq!(scan.nr, Some(4));
    // The loop alone is timed: one read before, one after.
    assert_eq!(scan.time, Some(1000));
    assert!(account_scan(&cfg, &sds, 0, &d, &mut llc, &mut aged));
    assert_eq!(llc[0].avg_scan_cost, 8000 - 7000 / 8, "written to this_sd, the waker's LLC");
    assert_eq!(llc[1].avg_scan_cost, 500, "the target's LLC is untouched");
}

#[test]
fn sis_prop_does_not_account_whole_core_scans() {
    // SMT pairs; a whole idle core (6, 7): has_idle_core, no depth, no accounting.
    let sds = topo(1, 4, 2);
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[6] = CpuSnapshot::idle(6);
    cpus[7] = CpuSnapshot::idle(7);
    let p = TaskSnapshot::hog(1, 2);
    for variant in [SisProp::Legacy, SisProp::PerCpuCost, SisProp::Altscan, SisProp::Aged] {
        let mut cfg = BalanceConfig { sis_prop: variant, wake_affine: false, ..BalanceConfig::default() };
        cfg.features.set(Feature::SisUtil, false);
        let mut llc = llc_full(8);
        llc[0].avg_scan_cost = 3000;
        let clock = ticking();
        let c = WakeCtx { clock: Some(ScanClock(&clock)), ..ctx(&sds, &cpus, &p, 0, &llc, &cfg) };
        let mut aged = WakeAvgIdle { wake_avg_idle: 400_000, wake_stamp: 100 };
        let d = select_task_rq_fair(&c, &mut aged);
        assert!(d.cpu == 6 || d.cpu == 7, "{d:?}");
        let scan = d.sis.unwrap().scan.unwrap();
        assert!(scan.idle_core && scan.nr.is_none(), "{scan:?}");
        assert!(!account_scan(&cfg, &sds, 0, &d, &mut llc, &mut aged), "{variant:?}");
        assert_eq!(llc[0].avg_scan_cost, 3000);
        assert_eq!(aged.wake_avg_idle, 400_000);
    }
}

#[test]
fn sis_util_and_sis_prop_both_on_depth_from_util_cost_still_learnt() {
    // 6.0–6.6 with both features: SIS_UTIL's depth, SIS_PROP's aging and accounting.
    let sds = topo(1, 8, 1);
    let mut cpus: Vec<CpuSnapshot> = (0..8).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[2] = CpuSnapshot::idle(2);
    let p = TaskSnapshot::hog(1, 0);
    let cfg = BalanceConfig { sis_prop: SisProp::Aged, ..BalanceConfig::default() };
    let mut llc = llc_full(8);
    llc[0].nr_idle_scan = 3;
    let clock = ticking();
    let c = WakeCtx { clock: Some(ScanClock(&clock)), now_jiffies: 102, ..ctx(&sds, &cpus, &p, 0, &llc, &cfg) };
    let mut aged = WakeAvgIdle { wake_avg_idle: 400_000, wake_stamp: 100 };
    let d = select_task_rq_fair(&c, &mut aged);
    let scan = d.sis.unwrap().scan.unwrap();
    assert_eq!((d.cpu, scan.nr), (2, Some(4)), "nr_idle_scan + 1");
    assert_eq!(aged, WakeAvgIdle { wake_avg_idle: 100_000, wake_stamp: 102 }, "aged by two jiffies");
    assert!(account_scan(&cfg, &sds, 0, &d, &mut llc, &mut aged));
    assert_eq!(aged.wake_avg_idle, 99_000, "the scan's 1 µs consumed");
    assert_eq!(llc[0].avg_scan_cost, 125);
}

#[test]
fn sis_util_refresh_skips_newidle_and_non_llc_domains() {
    use sched::balance::IdleType;
    // fair.c: update_idle_cpu_scan() returns early for CPU_NEWLY_IDLE, with
    // SIS_UTIL off, and for a domain that is not the LLC.
    let u = 512 * 8; // 50% of an 8-CPU LLC
    assert_eq!(idle_cpu_scan_refresh(true, IdleType::NotIdle, 8, 8, u, 117), Some(update_idle_cpu_scan(u, 8, 117)));
    assert_eq!(idle_cpu_scan_refresh(true, IdleType::Idle, 8, 8, u, 117), Some(5));
    assert_eq!(idle_cpu_scan_refresh(true, IdleType::NewlyIdle, 8, 8, u, 117), None);
    assert_eq!(idle_cpu_scan_refresh(false, IdleType::NotIdle, 8, 8, u, 117), None);
    assert_eq!(idle_cpu_scan_refresh(true, IdleType::NotIdle, 16, 8, u, 117), None);
}

#[test]
fn ttwu_wake_remote_is_counted_by_the_wakees_cpu_not_its_prev() {
    // Two LLCs of 2 cores of 2 threads: CPU 0's domains are SMT {0,1}, MC {0-3}, PKG {0-7}.
    let sds = topo(2, 2, 2);
    let levels = sds.per_cpu(0).len();
    assert_eq!(levels, 3);
    // Woken onto the waker's own CPU: local, whatever prev was (prev 5: no count).
    assert_eq!(wake_remote_domain(&sds, 0, 0), None);
    // Onto its SMT sibling, a CPU of its LLC, the other LLC: the lowest domain spanning it.
    assert_eq!(wake_remote_domain(&sds, 0, 1), Some(0));
    assert_eq!(wake_remote_domain(&sds, 0, 3), Some(1));
    assert_eq!(wake_remote_domain(&sds, 0, 6), Some(2));
    // ttwu_move_affine only when wake_affine chose the waker's CPU, in the domain spanning prev.
    let mut stats = vec![sched::balance::DomainStats::default(); levels];
    let moved = WakeDecision { cpu: 0, path: WakePath::Fast, affine: true, sis: None, passive: false };
    count_wakeup(&sds, 0, 5, &moved, &mut stats);
    let stayed = WakeDecision { affine: false, ..moved };
    count_wakeup(&sds, 0, 5, &stayed, &mut stats);
    let affine: Vec<u64> = stats.iter().map(|s| s.ttwu_move_affine).collect();
    assert_eq!(affine, [0, 0, 1]);
    assert!(stats.iter().all(|s| s.ttwu_wake_remote == 0));
}

#[test]
fn sis_log_keeps_the_last_samples_oldest_first_with_their_numbers() {
    let s = |nr| SisSample { nr, ..Default::default() };
    let mut log = SisLog::with_capacity(3);
    for nr in 1..=2 {
        log.push(s(nr));
    }
    let got: Vec<(u64, u32)> = log.iter().map(|(i, x)| (i, x.nr)).collect();
    assert_eq!(got, [(0, 1), (1, 2)]);
    for nr in 3..=7 {
        log.push(s(nr));
    }
    let got: Vec<(u64, u32)> = log.iter().map(|(i, x)| (i, x.nr)).collect();
    assert_eq!(got, [(4, 5), (5, 6), (6, 7)]);
    assert_eq!(log.total, 7);
    // A log without room counts and keeps nothing.
    let mut none = SisLog::with_capacity(0);
    none.push(s(1));
    assert_eq!((none.total, none.iter().count()), (1, 0));
}

/// A view that answers from a slice and counts the CPUs placement read, as
/// the kernel's live view (`mech::balance::snapshot::LiveCpus`) reads each
/// CPU's published values only when asked.
struct Counting<'a> {
    snaps: &'a [CpuSnapshot],
    reads: std::cell::Cell<usize>,
}

impl sched::balance::CpuView for Counting<'_> {
    fn snap(&self, cpu: usize) -> Option<CpuSnapshot> {
        self.reads.set(self.reads.get() + 1);
        self.snaps.snap(cpu)
    }
    fn first_allowed(&self, allowed: &sched::cpumask::CpuMask) -> Option<usize> {
        self.snaps.first_allowed(allowed)
    }
    fn capacities_differ(&self) -> bool {
        self.snaps.capacities_differ()
    }
}

#[test]
fn placement_reads_the_cpus_it_examines_not_the_whole_span() {
    use sched::balance::CpuView as _;
    // Two LLCs of 60 cores x 2 threads (dd-2024's sockets). The wakee's
    // previous CPU 130 (LLC 1) is idle and stays the target (no wake_affine):
    // select_idle_sibling takes it after reading two CPUs (prev is known,
    // the target is idle), where copying both LLCs read all 240 at every
    // wakeup.
    let sds = topo(2, 60, 2);
    let mut cpus: Vec<CpuSnapshot> = (0..240).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[130] = CpuSnapshot::idle(130);
    let cfg = BalanceConfig { wake_affine: false, ..BalanceConfig::default() };
    let llc = llc_full(240);
    let mut p = TaskSnapshot::hog(1, 130);
    p.wakee_flips = 0;
    let view = Counting { snaps: &cpus, reads: std::cell::Cell::new(0) };
    let lazy = WakeCtx { sds: &sds, cpus: &view, task: &p, this_cpu: 5, waker_flips: 1, waker_load: 1024, sync: true, waker_pcpu_kthread: false, llc: &llc, now_jiffies: 100, cfg: &cfg, clock: None };
    let d = select_task_rq_fair(&lazy, &mut WakeAvgIdle::default());
    assert_eq!(d.cpu, 130, "{d:?}");
    assert_eq!(view.reads.get(), 2);
    // The same decision as from the slice of every snapshot.
    assert_eq!(select_task_rq_fair(&ctx(&sds, &cpus, &p, 5, &llc, &cfg), &mut WakeAvgIdle::default()), d);
    // The slice view's own answers: by offset in a run of CPUs that does not start at 0.
    assert_eq!(cpus[120..].snap(125).map(|s| s.cpu), Some(125));
    assert_eq!(cpus[120..].snap(5), None);
}

/// The 2005 rules on the dual Xeon's shape (2 sockets x 1 core x 2 threads), each deciding
/// differently from the others on one constructed wakeup: the waker on CPU 0 wakes a task last
/// on CPU 2 (the other socket), which runs two tasks; no CPU is idle. 2.6.12's SD_WAKE_AFFINE in
/// the CPU domain pulls it to the waker (`100 (1024 + 1024) <= 112 · 2048`); Ken Chen's change
/// (AFFINE and BALANCE off in the CPU domain), the removal and Ingo Molnar's idle gate leave it
/// on CPU 2. With CPU 1 idle the gate opens and the affine move lands on the idle sibling
/// (wake_idle), where Ken's change still leaves it on CPU 2's side (its idle sibling when CPU 3
/// idles).
#[test]
fn the_2005_rules_decide_differently() {
    let sds = topo(2, 1, 2);
    let mut cpus: Vec<CpuSnapshot> = (0..4).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    cpus[2].set_hogs(2);
    let p = TaskSnapshot::hog(9, 2);
    let llc = llc_full(4);
    let place = |cpus: &[CpuSnapshot], wb: WakeBalance, sync: bool| {
        let cfg = BalanceConfig { wake_balance: wb, ..BalanceConfig::default() };
        let c = WakeCtx { sync, ..ctx(&sds, cpus, &p, 0, &llc, &cfg) };
        select_task_rq_fair(&c, &mut WakeAvgIdle::default())
    };
    let d = place(&cpus, WakeBalance::V2005, false);
    assert_eq!((d.cpu, d.affine, d.passive), (0, true, false), "{d:?}");
    for wb in [WakeBalance::V2005CpuOff, WakeBalance::V2005None, WakeBalance::V2005IdleGate] {
        let d = place(&cpus, wb, false);
        assert_eq!((d.cpu, d.affine), (2, false), "{wb:?}: {d:?}");
    }
    // CPU 1 idle: the gate opens; the affine move goes to the idle sibling.
    cpus[1] = CpuSnapshot::idle(1);
    let d = place(&cpus, WakeBalance::V2005IdleGate, false);
    assert_eq!((d.cpu, d.affine), (1, true), "{d:?}");
    // wake_idle searches the CPU domain too (2.6.12's SD_CPU_INIT had SD_WAKE_IDLE): with the
    // affine flag off the wakee still moves to an idle CPU, the other socket's.
    let d = place(&cpus, WakeBalance::V2005CpuOff, false);
    assert_eq!((d.cpu, d.affine), (1, false), "{d:?}");
    // One task on prev, not sync: neither clause holds; sync: the waker's own load is not counted.
    let mut one: Vec<CpuSnapshot> = (0..4).map(|c| CpuSnapshot::hogs(c, 1)).collect();
    one[1].set_hogs(1);
    assert!(!place(&one, WakeBalance::V2005, false).affine);
    let d = place(&one, WakeBalance::V2005, true);
    assert_eq!((d.cpu, d.affine), (0, true), "{d:?}");
}

/// The 2005 counters: an affine move is `ttwu_move_affine`, a passive one `ttwu_move_balance`,
/// in the waking CPU's lowest domain holding prev.
#[test]
fn the_2005_moves_are_counted_apart() {
    use sched::balance::DomainStats;
    let sds = topo(2, 1, 2);
    let mut stats = vec![DomainStats::default(); sds.per_cpu(0).len()];
    let affine = WakeDecision { cpu: 0, path: WakePath::Fast, affine: true, sis: None, passive: false };
    let passive = WakeDecision { affine: false, passive: true, ..affine };
    count_wakeup(&sds, 0, 2, &affine, &mut stats);
    count_wakeup(&sds, 0, 2, &passive, &mut stats);
    count_wakeup(&sds, 0, 2, &passive, &mut stats);
    let top = stats.last().unwrap();
    assert_eq!((top.ttwu_move_affine, top.ttwu_move_balance), (1, 2));
}
