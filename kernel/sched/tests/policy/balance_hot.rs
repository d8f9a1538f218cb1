//! Cache hotness in the balancer's detach pass (fair.c: `task_hot()`, as
//! `can_migrate_task()` uses it in v6.19), and the features that act there:
//! CACHE_HOT_BUDDY keeps a queue's next buddy from a busy destination;
//! LB_MIN leaves tasks of tiny load while the domain has not failed.

use sched::balance::migrate::{can_migrate_task, task_hot, CantMigrate};
use sched::balance::*;
use sched::topology::{CpuTopology, Level, SchedDomain, SchedDomains};
use sched::{Feature, Features};

/// One LLC of 4 cores of 2 SMT threads each.
fn machine() -> SchedDomains {
    let cpus: Vec<CpuTopology> = (0..8)
        .map(|i| CpuTopology { cpu: i, apic_id: i as u32, smt_id: i as u32 % 2, core_id: i as u32 / 2, pkg_id: 0, llc_id: 0, node: 0 })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

fn domain(sds: &SchedDomains, level: Level) -> &SchedDomain {
    sds.per_cpu(0).iter().find(|d| d.level == level).unwrap()
}

/// CPU 0 pulls from CPU 2 (another core of its LLC) at `level`, CPU 0
/// running `dst_tasks` tasks, with the features `f`; the source's clock at
/// 10 ms, so a task last run at 1 ms is cold by time.
fn params(sds: &SchedDomains, level: Level, dst_tasks: u32, f: Features) -> DetachParams {
    let (dst, src) = (CpuSnapshot::hogs(0, dst_tasks), CpuSnapshot::hogs(2, 3));
    let idle = if dst_tasks == 0 { IdleType::Idle } else { IdleType::NotIdle };
    let mut p = DetachParams::new(&dst, &src, idle, domain(sds, level), 0);
    p.src_clock_task = 10_000_000;
    p.set_features(f);
    p
}

/// A waiting task of the source that last ran 9 ms ago, its queue's next buddy or not.
fn waiting(next_buddy: bool) -> TaskSnapshot {
    TaskSnapshot { exec_start: 1_000_000, next_buddy, ..TaskSnapshot::hog(1, 2) }
}

#[test]
fn cache_hot_buddy_keeps_the_next_buddy_from_a_busy_dst() {
    let sds = machine();
    let on = Features::default();
    assert!(on.has(Feature::CacheHotBuddy), "on by default, as in v6.19");
    let off = on.with(Feature::CacheHotBuddy, false);
    let busy = params(&sds, Level::Mc, 1, on);
    // Cold by time, hot as the buddy: kept while the domain has not failed
    // more than cache_nice_tries, then moved as a hot task.
    assert!(!task_hot(&waiting(false), &busy));
    assert!(task_hot(&waiting(true), &busy));
    assert_eq!(can_migrate_task(&waiting(true), &busy, MigrationType::Task), Err(CantMigrate::CacheHot));
    let failed = DetachParams { nr_balance_failed: busy.cache_nice_tries + 1, ..busy };
    assert_eq!(can_migrate_task(&waiting(true), &failed, MigrationType::Task), Ok(true));
    // Even right after a migration (exec_start 0), and with migration_cost 0.
    let fresh = TaskSnapshot { exec_start: 0, ..waiting(true) };
    assert!(task_hot(&fresh, &busy));
    assert!(task_hot(&waiting(true), &DetachParams { migration_cost: 0, ..busy }));
    // Without the feature the buddy is a task like another.
    let busy_off = params(&sds, Level::Mc, 1, off);
    assert!(!task_hot(&waiting(true), &busy_off));
    assert_eq!(can_migrate_task(&waiting(true), &busy_off, MigrationType::Task), Ok(false));
    // An idle dst takes the buddy (Linux tests dst_rq->nr_running), and SMT
    // siblings share the cache: never hot there.
    assert!(!task_hot(&waiting(true), &params(&sds, Level::Mc, 0, on)));
    assert!(!task_hot(&waiting(true), &params(&sds, Level::Smt, 1, on)));
    // SCHED_IDLE tasks are never hot.
    assert!(!task_hot(&TaskSnapshot { idle_policy: true, ..waiting(true) }, &busy));
}

#[test]
fn the_detach_pass_skips_the_buddy_and_takes_the_next_task() {
    let sds = machine();
    let m = Migration { kind: MigrationType::Task, imbalance: 1 };
    for (f, first) in [(Features::default(), 2), (Features::default().with(Feature::CacheHotBuddy, false), 1)] {
        let p = params(&sds, Level::Mc, 1, f);
        let mut cur = DetachCursor::new(&p, m);
        let buddy = TaskSnapshot { id: 1, ..waiting(true) };
        let other = TaskSnapshot { id: 2, ..waiting(false) };
        let mut taken = None;
        for t in [buddy, other] {
            if cur.consider(&t) == Detach::Take {
                taken = Some(t.id);
                break;
            }
        }
        assert_eq!(taken, Some(first), "{f}");
    }
}

#[test]
fn lb_min_leaves_tiny_loads_until_the_domain_fails() {
    let sds = machine();
    let m = Migration { kind: MigrationType::Load, imbalance: 1024 };
    let tiny = TaskSnapshot { load_avg: 15, ..waiting(false) };
    for (lb_min, failed, take) in [(false, 0, true), (true, 0, false), (true, 1, true)] {
        let f = Features::default().with(Feature::LbMin, lb_min);
        let p = DetachParams { nr_balance_failed: failed, ..params(&sds, Level::Mc, 1, f) };
        let mut cur = DetachCursor::new(&p, m);
        assert_eq!(cur.consider(&tiny) == Detach::Take, take, "LB_MIN {lb_min}, failed {failed}");
    }
}
