//! Balancing decisions pinned to Linux v6.19 where fairway could diverge
//! from it unnoticed: each test states the Linux function it follows and
//! the exact value that function yields for these inputs.

use sched::balance::avg_idle::{AvgIdle, SYSCTL_SCHED_MIGRATION_COST};
use sched::balance::classify::update_sd_pick_busiest;
use sched::balance::imbalance::{calculate_imbalance, sched_balance_find_src_rq};
use sched::balance::newidle::{decay_newidle_costs, NewidleDomainState};
use sched::balance::*;
use sched::cpumask::CpuMask;
use sched::time::NSEC_PER_SEC;
use sched::topology::{CpuTopology, Level, SchedDomains};

/// `llcs` LLCs of `cores` single-thread cores each.
fn machine(llcs: u32, cores: u32) -> SchedDomains {
    let n = llcs * cores;
    let cpus: Vec<CpuTopology> = (0..n)
        .map(|i| CpuTopology { cpu: i as usize, apic_id: i, smt_id: 0, core_id: i, pkg_id: 0, llc_id: i / cores, node: 0 })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

fn level_index(sds: &SchedDomains, cpu: usize, level: Level) -> usize {
    sds.per_cpu(cpu).iter().position(|d| d.level == level).unwrap()
}

#[test]
fn misfit_tie_keeps_the_first_group() {
    // fair.c: update_sd_pick_busiest(): among misfit groups only a strictly
    // larger misfit load replaces the busiest (strict since v6.9).
    let local = SgLbStats { group_type: GroupType::HasSpare, ..SgLbStats::default() };
    let first = SgLbStats {
        span: CpuMask::single(1),
        sum_h_nr_running: 1,
        misfit_task_load: 700,
        group_type: GroupType::MisfitTask,
        ..SgLbStats::default()
    };
    let same = SgLbStats { span: CpuMask::single(2), ..first };
    let bigger = SgLbStats { span: CpuMask::single(3), misfit_task_load: 701, ..first };
    assert!(!update_sd_pick_busiest(&same, Some(&first), &local, false, 1024), "a tie keeps the first");
    assert!(update_sd_pick_busiest(&bigger, Some(&first), &local, false, 1024), "a larger misfit wins");
}

#[test]
fn calculate_imbalance_has_no_cap_by_the_busiest_group() {
    // fair.c: calculate_imbalance(): the task count is sibling_imbalance()
    // halved, taken from sum_nr_running (every class), never capped by the
    // busiest group's fair task count. Busiest: 6 tasks, 2 of them fair.
    let sds = machine(1, 4);
    let idx = level_index(&sds, 0, Level::Mc);
    let env = LbEnv::new(&sds, 0, idx, IdleType::Idle);
    let busiest = SgLbStats {
        span: CpuMask::single(1),
        group_weight: 1,
        cores: 1,
        sum_nr_running: 6,
        sum_h_nr_running: 2,
        group_capacity: 1024,
        group_type: GroupType::Overloaded,
        ..SgLbStats::default()
    };
    let local = SgLbStats { span: CpuMask::single(0), group_weight: 1, cores: 1, group_capacity: 1024, idle_cpus: 1, ..SgLbStats::default() };
    let mut st = SdLbStats { local, busiest: Some(busiest), ..SdLbStats::default() };
    let m = calculate_imbalance(&env, &mut st).unwrap();
    assert_eq!(m, Migration { kind: MigrationType::Task, imbalance: 3 }, "(6 - 0) >> 1");

    // Across LLCs the local group's spare capacity is the util imbalance:
    // max(capacity, util) - util = 4096 - 100, whatever the busiest's util.
    let sds = machine(2, 4);
    let idx = level_index(&sds, 0, Level::Pkg);
    let env = LbEnv::new(&sds, 0, idx, IdleType::Idle);
    let busiest = SgLbStats {
        span: CpuMask::first_n(8).difference(&CpuMask::first_n(4)),
        group_weight: 4,
        cores: 4,
        sum_nr_running: 9,
        sum_h_nr_running: 9,
        group_capacity: 4096,
        group_util: 500,
        group_type: GroupType::Overloaded,
        ..SgLbStats::default()
    };
    let local = SgLbStats { span: CpuMask::first_n(4), group_weight: 4, cores: 4, group_capacity: 4096, group_util: 100, idle_cpus: 3, sum_nr_running: 1, sum_h_nr_running: 1, ..SgLbStats::default() };
    let mut st = SdLbStats { local, busiest: Some(busiest), ..SdLbStats::default() };
    let m = calculate_imbalance(&env, &mut st).unwrap();
    assert_eq!(m, Migration { kind: MigrationType::Util, imbalance: 4096 - 100 });
}

#[test]
fn util_source_needs_some_util() {
    // fair.c: sched_balance_find_src_rq(): for migrate_util the busiest
    // CPU is the one with the largest util above 0; a CPU with no util is
    // never chosen, even with 2 tasks.
    let sds = machine(1, 4);
    let idx = level_index(&sds, 0, Level::Mc);
    let env = LbEnv::new(&sds, 0, idx, IdleType::Idle);
    let mut cpus: Vec<CpuSnapshot> = (0..4).map(CpuSnapshot::idle).collect();
    cpus[2] = CpuSnapshot { nr_running: 2, h_nr_runnable: 2, idle: false, ..CpuSnapshot::idle(2) };
    let group = SgLbStats { span: CpuMask::single(2), ..SgLbStats::default() };
    let m = Migration { kind: MigrationType::Util, imbalance: 512 };
    assert_eq!(sched_balance_find_src_rq(&env, &group, m, &cpus), None);
    cpus[2].util_avg = 1;
    assert_eq!(sched_balance_find_src_rq(&env, &group, m, &cpus), Some(2));
}

#[test]
fn only_affinity_decides_all_pinned() {
    // fair.c: can_migrate_task(): LBF_ALL_PINNED is cleared only once a task
    // passes the affinity test; delayed, ineligible and per-CPU kthread
    // rejections come before it and leave the flag set.
    let sds = machine(1, 4);
    let sd = &sds.per_cpu(0)[level_index(&sds, 0, Level::Mc)];
    let (dst, src) = (CpuSnapshot::hogs(0, 1), CpuSnapshot::hogs(1, 4));
    let params = DetachParams::new(&dst, &src, IdleType::Idle, sd, 0);
    let delayed = TaskSnapshot { delayed: true, ..TaskSnapshot::hog(1, 1) };
    let ineligible = TaskSnapshot { ineligible: true, ..TaskSnapshot::hog(2, 1) };
    let kthread = TaskSnapshot { per_cpu_kthread: true, ..TaskSnapshot::hog(3, 1) };
    let mut cur = DetachCursor::new(&params, Migration { kind: MigrationType::Task, imbalance: 1 });
    assert!(matches!(cur.consider(&delayed), Detach::Skip(_)));
    assert!(matches!(cur.consider(&ineligible), Detach::Skip(_)));
    assert!(matches!(cur.consider(&kthread), Detach::Skip(_)));
    assert!(cur.outcome().all_pinned, "no task was rejected by affinity alone: still all pinned");
    // A running task passed the affinity test: not all pinned.
    let running = TaskSnapshot { running: true, ..TaskSnapshot::hog(4, 1) };
    assert!(matches!(cur.consider(&running), Detach::Skip(_)));
    assert!(!cur.outcome().all_pinned);
}

#[test]
fn need_decay_is_the_last_visited_domain() {
    // fair.c: sched_balance_domains() overwrites need_decay at each domain
    // and sums max_newidle_lb_cost over the domains it visits; the runqueue's
    // max_idle_balance_cost is reset only if the last visited one decayed.
    let now = 10 * NSEC_PER_SEC;
    let old = NewidleDomainState { max_newidle_lb_cost: 2_560_000, last_decay_max_lb_cost: 0, ..Default::default() };
    let fresh = NewidleDomainState { max_newidle_lb_cost: 1_000_000, last_decay_max_lb_cost: now - 1, ..Default::default() };
    // Lower domain decays, upper one does not: no reset.
    let mut st = [old, fresh];
    let mut avg = AvgIdle::new();
    avg.set_max_idle_balance_cost(7_000_000);
    decay_newidle_costs(st.iter_mut(), &mut avg, now);
    assert_eq!(st[0].max_newidle_lb_cost, 2_560_000 * 253 / 256, "the lower domain still decays");
    assert_eq!(avg.max_idle_balance_cost(), 7_000_000, "the last domain did not decay: unchanged");
    // Upper decays: reset to the sum of both.
    let mut st = [fresh, old];
    decay_newidle_costs(st.iter_mut(), &mut avg, now);
    assert_eq!(avg.max_idle_balance_cost(), 1_000_000 + 2_560_000 * 253 / 256);
    // Never below the migration cost.
    let tiny = NewidleDomainState { max_newidle_lb_cost: 256, last_decay_max_lb_cost: 0, ..Default::default() };
    let mut st = [tiny];
    decay_newidle_costs(st.iter_mut(), &mut avg, now);
    assert_eq!(avg.max_idle_balance_cost(), SYSCTL_SCHED_MIGRATION_COST);
}

#[test]
fn detach_walks_cfs_tasks_from_the_least_recently_queued_or_run() {
    // fair.c: detach_tasks() takes from the tail of rq->cfs_tasks; a task
    // goes to the head when enqueued (account_entity_enqueue) or picked
    // (set_next_task_fair), and a skipped one is rotated to the head.
    // Slots are reused, so slot order is not list order.
    use sched::balance::migrate::CfsTasksOrder;
    let walk = |o: &CfsTasksOrder, live: &[usize]| {
        let mut w = o.from_tail();
        let mut v = Vec::new();
        while let Some(i) = w.next(o, |i| live.contains(&i)) {
            v.push(i);
        }
        v
    };
    let mut o = CfsTasksOrder::default();
    o.to_head(0); // A
    o.to_head(1); // B
    o.to_head(2); // C
    // B leaves; D arrives and takes B's slot 1.
    o.to_head(1);
    assert_eq!(walk(&o, &[0, 1, 2]), vec![0, 2, 1], "A, C, then the newest D (not slot order)");
    // A runs: it goes to the head.
    o.to_head(0);
    assert_eq!(walk(&o, &[0, 1, 2]), vec![2, 1, 0]);
    // A dead slot is not visited; a task rotated during the walk is not
    // visited again in that walk.
    let mut w = o.from_tail();
    assert_eq!(w.next(&o, |i| i != 2), Some(1));
    o.to_head(1);
    assert_eq!(w.next(&o, |i| i != 2), Some(0));
    assert_eq!(w.next(&o, |i| i != 2), None);
}

#[test]
fn dst_pinned_names_another_cpu_of_the_dst_group_still_a_candidate() {
    // fair.c: can_migrate_task(): a task pinned away from dst names the
    // first CPU of dst's group that is still in env->cpus and that the task
    // allows (LBF_DST_PINNED, new_dst_cpu); never when newly idle.
    let sds = machine(2, 2);
    let idx = level_index(&sds, 0, Level::Pkg);
    let sd = &sds.per_cpu(0)[idx];
    let (dst, src) = (CpuSnapshot::hogs(0, 1), CpuSnapshot::hogs(2, 3));
    let pinned = TaskSnapshot { allowed: "1-3".parse().unwrap(), ..TaskSnapshot::hog(1, 2) };
    let m = Migration { kind: MigrationType::Task, imbalance: 1 };
    let mut params = DetachParams::new(&dst, &src, IdleType::Idle, sd, 0);
    let mut cur = DetachCursor::new(&params, m);
    assert_eq!(cur.consider(&pinned), Detach::Skip(Some(sched::balance::migrate::CantMigrate::Affinity)));
    let out = cur.outcome();
    assert_eq!(out.new_dst_cpu, Some(1));
    assert!(out.all_pinned && out.some_pinned);
    // CPU 1 already left the candidates: no other CPU of the group fits.
    params.cpus.clear(1);
    let mut cur = DetachCursor::new(&params, m);
    cur.consider(&pinned);
    assert_eq!(cur.outcome().new_dst_cpu, None);
    // Newly idle: never.
    let params = DetachParams::new(&dst, &src, IdleType::NewlyIdle, sd, 0);
    let mut cur = DetachCursor::new(&params, m);
    cur.consider(&pinned);
    assert_eq!(cur.outcome().new_dst_cpu, None);
}

#[test]
fn newidle_end_closes_the_period_without_a_sample_when_not_idle() {
    // fair.c: sched_balance_newidle() clears idle_stamp when it pulled or
    // when a task was queued meanwhile; core.c: ttwu_do_activate() folds a
    // period only while idle_stamp is set.
    let mut a = AvgIdle::new();
    a.enter_newidle(1_000);
    a.newidle_done(true);
    assert_eq!(a.end_idle(400_000, AvgIdleClamp::Avg, 200), None);
    assert_eq!(a.avg_idle, 1_000_000);
    a.enter_newidle(1_000);
    a.newidle_done(false);
    assert_eq!(a.end_idle(401_000, AvgIdleClamp::Avg, 200), Some(400_000));
    assert_eq!(a.avg_idle, 1_000_000 - 600_000 / 8);
}
