//! Property tests: the balancing decisions never panic on arbitrary
//! snapshots and topologies; an imbalance stays within the bounds of Linux's
//! formulas; no decision sends a task outside its affinity.

#![allow(clippy::manual_is_multiple_of)]

use proptest::prelude::*;
use sched::balance::config::{BalanceConfig, SisProp, WakeBalance};
use sched::balance::fork::select_task_rq_fork;
use sched::balance::imbalance::sched_balance_find_src_group;
use sched::balance::migrate::can_migrate_task;
use sched::balance::nohz::{nohz_balancer_kick, NohzState};
use sched::balance::sis::{LlcShared, WakeAvgIdle};
use sched::balance::wake::{select_task_rq_fair, WakeCtx};
use sched::balance::*;
use sched::cpumask::CpuMask;
use sched::features::Feature;
use sched::topology::{CpuTopology, SchedDomains, SD_BALANCE_EXEC};

/// The snapshots in another order, answering `CpuView` by CPU as the
/// kernel's live view does (ascending for `first_allowed`).
struct Shuffled(Vec<CpuSnapshot>);

impl CpuView for Shuffled {
    fn snap(&self, cpu: usize) -> Option<CpuSnapshot> {
        self.0.iter().find(|s| s.cpu == cpu).copied()
    }
    fn first_allowed(&self, allowed: &CpuMask) -> Option<usize> {
        self.0.iter().map(|s| s.cpu).filter(|&c| allowed.contains(c)).min()
    }
    fn capacities_differ(&self) -> bool {
        self.0.as_slice().capacities_differ()
    }
}

/// The mask of CPUs 0..64 whose bits `word` has.
fn low_cpus(word: u64) -> CpuMask {
    let mut bits = [0; sched::cpumask::MAX_CPUS / 64];
    bits[0] = word;
    CpuMask::from_bits(bits)
}

fn machine(llcs: u32, cores: u32, threads: u32) -> SchedDomains {
    let n = llcs * cores * threads;
    let cpus: Vec<CpuTopology> = (0..n)
        .map(|i| CpuTopology { cpu: i as usize, apic_id: i, smt_id: i % threads, core_id: i / threads, pkg_id: 0, llc_id: i / (cores * threads), node: 0 })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

fn snap(cpu: usize, v: &[u64; 9]) -> CpuSnapshot {
    let nr = (v[0] % 6) as u32;
    CpuSnapshot {
        cpu,
        nr_running: nr,
        h_nr_runnable: nr.saturating_sub((v[1] % 2) as u32),
        nr_delayed: (v[1] % 3) as u32,
        idle: nr == 0 || v[2] % 7 == 0,
        ttwu_pending: v[2] % 11 == 0,
        sched_idle_only: v[2] % 13 == 0,
        load_avg: if v[3] % 9 == 0 { u64::MAX } else { v[3] % 100_000 },
        runnable_avg: v[4] % 10_000,
        util_avg: v[5] % 2_000,
        util_est: v[5] % 1_500,
        capacity_orig: if v[6] % 5 == 0 { 0 } else { v[6] % 1025 },
        capacity: v[7] % 1100,
        avg_idle: v[8],
        misfit_task_load: if v[8] % 3 == 0 { v[3] % 5000 } else { 0 },
    }
}

fn task(v: &[u64; 9], allowed: u64, prev: usize) -> TaskSnapshot {
    TaskSnapshot {
        id: v[0],
        weight: v[1] % 100_000,
        load_avg: if v[2] % 10 == 0 { u64::MAX } else { v[2] % 5000 },
        util: v[3] % 1500,
        allowed: low_cpus(allowed),
        running: v[4] % 3 == 0,
        delayed: v[4] % 5 == 0,
        per_cpu_kthread: v[4] % 17 == 0,
        idle_policy: v[4] % 7 == 0,
        ineligible: v[5] % 2 == 0,
        exec_start: v[6],
        prev_cpu: prev,
        recent_used_cpu: (v[7] % 3 == 0).then_some((v[7] % 70) as usize),
        wakee_flips: (v[8] % 100) as u32,
        next_buddy: v[5] % 3 == 0,
    }
}

/// (llcs, cores, threads, per-CPU values, task values, affinity bits, dst, misc).
type Case = (u32, u32, u32, Vec<[u64; 9]>, [u64; 9], u64, usize, u64);

fn arb_case() -> impl Strategy<Value = Case> {
    (1u32..=2, 1u32..=4, 1u32..=2).prop_flat_map(|(l, c, t)| {
        let n = (l * c * t) as usize;
        (Just(l), Just(c), Just(t), proptest::collection::vec(any::<[u64; 9]>(), n), any::<[u64; 9]>(), any::<u64>(), 0..n, any::<u64>())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn decisions_never_panic_and_stay_in_bounds((l, c, t, vals, tv, allowed, dst, misc) in arb_case()) {
        let sds = machine(l, c, t);
        let cpus: Vec<CpuSnapshot> = vals.iter().enumerate().map(|(i, v)| snap(i, v)).collect();
        let n = cpus.len();
        let p = task(&tv, allowed, (misc as usize) % (n + 2));
        let idle = [IdleType::Idle, IdleType::NotIdle, IdleType::NewlyIdle][(misc % 3) as usize];
        for sd_index in 0..=sds.per_cpu(dst).len() {
            let mut env = LbEnv::new(&sds, dst, sd_index, idle);
            env.imbalanced_groups = low_cpus(misc >> 3);
            env.nr_balance_failed = (misc % 7) as u32;
            let (g, sdst) = sched_balance_find_src_group(&env, &cpus);
            if let SrcGroup::Busiest { group, migration } = g {
                prop_assert!(migration.imbalance > 0);
                // As Linux's calculate_imbalance: util is bounded by the
                // local group's room, tasks by the busiest's (all-class)
                // count or the local idle CPUs; load is not bounded.
                let cap = match migration.kind {
                    MigrationType::Load => u64::MAX,
                    MigrationType::Util => sdst.local.group_capacity.max(sdst.local.group_util),
                    MigrationType::Task => (group.sum_nr_running as u64 + 1).max(sdst.local.idle_cpus as u64),
                    MigrationType::Misfit => 1,
                };
                prop_assert!(migration.imbalance <= cap, "{:?} > {} in {:?}", migration, cap, group);
                prop_assert!(sdst.busiest.is_some());
            }
            let mut stats = DomainStats::default();
            let _ = plan_balance(&env, &cpus, &mut stats);
            // Detach over random tasks: a taken task always allows dst.
            if let Some(sd) = env.sd() {
                let src = (misc as usize / 7) % n;
                let mut params = DetachParams::new(&cpus[dst], &cpus[src], idle, sd, env.nr_balance_failed);
                params.active = misc % 5 == 0;
                params.src_clock_task = misc;
                let kind = [MigrationType::Load, MigrationType::Util, MigrationType::Task, MigrationType::Misfit][(misc % 4) as usize];
                let mut cur = DetachCursor::new(&params, Migration { kind, imbalance: misc % 10_000 });
                for k in 0..8u64 {
                    let mut tv2 = tv;
                    tv2[0] = tv[0].wrapping_add(k);
                    tv2[4] = tv[4].wrapping_mul(k + 1);
                    let q = task(&tv2, allowed.rotate_left(k as u32), src);
                    match cur.consider(&q) {
                        Detach::Take => prop_assert!(q.allows(dst), "took a task not allowed on dst"),
                        Detach::Stop(_) => break,
                        Detach::Skip(_) => {}
                    }
                    if can_migrate_task(&q, &params, kind).is_ok() {
                        prop_assert!(q.allows(dst));
                    }
                }
                let _ = cur.outcome();
            }
        }
        // Wakeup and fork placement: an allowed CPU whenever the task allows one we know.
        let cfgs = [
            BalanceConfig::default(),
            BalanceConfig { sis_prop: SisProp::Aged, wake_balance: WakeBalance::IdleOnly, features: BalanceConfig::default().features.with(Feature::SisUtil, false), ..BalanceConfig::default() },
            BalanceConfig { sis_prop: SisProp::Altscan, wake_balance: WakeBalance::Off, features: BalanceConfig::default().features.with(Feature::SisUtil, false), ..BalanceConfig::default() },
        ];
        let llc: Vec<LlcShared> = (0..n).map(|i| LlcShared { nr_idle_scan: (vals[i][0] % 9) as u32, avg_scan_cost: vals[i][1] % 100_000 }).collect();
        let any_allowed = cpus.iter().any(|s| p.allows(s.cpu));
        for cfg in &cfgs {
            let ctx = WakeCtx { sds: &sds, cpus: &cpus, task: &p, this_cpu: dst, waker_flips: (misc % 50) as u32, waker_load: misc % 3000, sync: misc % 2 == 0, waker_pcpu_kthread: misc % 9 == 0, llc: &llc, now_jiffies: misc % 1000, cfg, clock: None };
            let mut aged = WakeAvgIdle { wake_avg_idle: misc, wake_stamp: misc % 500 };
            let aged_in = aged;
            let d = select_task_rq_fair(&ctx, &mut aged);
            // The same decision from a view read one CPU at a time, holding
            // the same CPUs in another order (the kernel's `LiveCpus`).
            let view = Shuffled(cpus.iter().rev().copied().collect());
            let mut aged2 = aged_in;
            let lazy = WakeCtx { sds: ctx.sds, cpus: &view, task: ctx.task, this_cpu: ctx.this_cpu, waker_flips: ctx.waker_flips, waker_load: ctx.waker_load, sync: ctx.sync, waker_pcpu_kthread: ctx.waker_pcpu_kthread, llc: ctx.llc, now_jiffies: ctx.now_jiffies, cfg: ctx.cfg, clock: None };
            prop_assert_eq!(select_task_rq_fair(&lazy, &mut aged2), d);
            prop_assert_eq!(aged2, aged);
            if any_allowed {
                prop_assert!(p.allows(d.cpu), "woke on {} outside {:?}", d.cpu, p.allowed);
            }
        }
        let f = select_task_rq_fork(&sds, &p, dst, SD_BALANCE_EXEC, &cpus);
        if any_allowed {
            prop_assert!(p.allows(f), "fork on {} outside {:?}", f, p.allowed);
        }
        let mut nz = NohzState::default();
        for (i, s) in cpus.iter().enumerate() {
            if s.idle { nz.enter_idle(i, misc % 100, 250); }
        }
        let asym = cpus.iter().any(|s| s.capacity_orig != cpus[0].capacity_orig);
        let _ = nohz_balancer_kick(&nz, &sds, asym, &cpus[dst], misc % 200);
    }
}
