//! Load-balancing decisions on synthetic topologies and loads: group
//! classification, source choice, migration types, and a small pure
//! simulation that applies the decisions pass after pass.

use sched::balance::capacity::{update_misfit_status, CurrTask};
use sched::balance::group_stats::update_sd_lb_stats;
use sched::balance::imbalance::{sched_balance_find_src_group, BalancedReason};
use sched::balance::interval::{failed_count_after, finish_balance};
use sched::balance::migrate::{need_active_balance, ActiveBalanceInput};
use sched::balance::*;
use sched::cpumask::CpuMask;
use sched::topology::{CpuTopology, Level, SchedDomains};

fn topo(cores: u32, threads: u32) -> SchedDomains {
    let cpus: Vec<CpuTopology> = (0..cores * threads)
        .map(|i| CpuTopology {
            cpu: i as usize,
            apic_id: i,
            smt_id: i % threads,
            core_id: i / threads,
            pkg_id: 0,
            llc_id: 0,
            node: 0,
        })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

fn hogs(counts: &[u32]) -> Vec<CpuSnapshot> {
    counts.iter().enumerate().map(|(i, &n)| CpuSnapshot::hogs(i, n)).collect()
}

fn mc_index(sds: &SchedDomains, cpu: usize) -> usize {
    sds.per_cpu(cpu).iter().position(|d| d.level == Level::Mc).unwrap()
}

#[test]
fn classification_of_typical_groups() {
    let sds = topo(4, 1);
    let cpus = hogs(&[3, 1, 0, 0]);
    let env = LbEnv::new(&sds, 2, 0, IdleType::Idle);
    let s = update_sd_lb_stats(&env, &cpus);
    assert_eq!(s.local.group_type, GroupType::HasSpare, "idle CPU 2");
    let b = s.busiest.unwrap();
    assert_eq!(b.span, CpuMask::single(0));
    assert_eq!(b.group_type, GroupType::Overloaded);
    assert_eq!(b.avg_load, 3 * 1024);
    assert!(s.overloaded);
    // One hog on one CPU: util at capacity, no spare.
    let env1 = LbEnv::new(&sds, 1, 0, IdleType::NotIdle);
    assert_eq!(update_sd_lb_stats(&env1, &cpus).local.group_type, GroupType::FullyBusy);
    // Two light tasks on one CPU: more tasks than CPUs but plenty of capacity.
    let mut light = hogs(&[0, 0, 0, 0]);
    light[0] = CpuSnapshot { nr_running: 2, h_nr_runnable: 2, idle: false, load_avg: 300, runnable_avg: 300, util_avg: 200, ..CpuSnapshot::idle(0) };
    let s = update_sd_lb_stats(&LbEnv::new(&sds, 3, 0, IdleType::Idle), &light);
    assert_eq!(s.busiest.unwrap().group_type, GroupType::HasSpare, "2 tasks on 1 CPU, but util/runnable low: spare");
    // Pinned-task imbalance flag.
    let mut env = LbEnv::new(&sds, 2, 0, IdleType::Idle);
    env.imbalanced_groups.set(1);
    let s = update_sd_lb_stats(&env, &hogs(&[0, 1, 0, 0]));
    assert_eq!(s.busiest.unwrap().group_type, GroupType::Imbalanced);
}

#[test]
fn find_src_group_picks_the_overloaded_group_and_task_type() {
    let sds = topo(4, 1);
    let cpus = hogs(&[2, 4, 1, 0]);
    let env = LbEnv::new(&sds, 3, 0, IdleType::Idle);
    let (g, _) = sched_balance_find_src_group(&env, &cpus);
    match g {
        SrcGroup::Busiest { group, migration } => {
            assert_eq!(group.span, CpuMask::single(1), "highest avg_load among overloaded");
            assert_eq!(migration.kind, MigrationType::Task, "idle dst with spare: move tasks");
            assert_eq!(migration.imbalance, 2, "(4 - 0) / 2");
        }
        other => panic!("expected a busiest group, got {other:?}"),
    }
}

#[test]
fn migration_types() {
    let sds = topo(4, 1);
    // Both overloaded → Load, bounded by both sides' distance to the average.
    let env = LbEnv::new(&sds, 0, 0, IdleType::NotIdle);
    let (g, _) = sched_balance_find_src_group(&env, &hogs(&[2, 4, 2, 2]));
    match g {
        SrcGroup::Busiest { migration, .. } => {
            assert_eq!(migration.kind, MigrationType::Load);
            // avg 2560: min((4096-2560)·1024, (2560-2048)·1024)/1024 = 512
            assert_eq!(migration.imbalance, 512);
        }
        other => panic!("{other:?}"),
    }
    // Busy dst, busiest not overloaded → leave it to an idle CPU.
    let env = LbEnv::new(&sds, 0, 0, IdleType::NotIdle);
    let (g, _) = sched_balance_find_src_group(&env, &hogs(&[1, 1, 1, 0]));
    assert_eq!(g, SrcGroup::Balanced(BalancedReason::DstNotIdle));
    // Equal: nothing.
    let env = LbEnv::new(&sds, 0, 0, IdleType::NotIdle);
    let (g, _) = sched_balance_find_src_group(&env, &hogs(&[2, 2, 2, 2]));
    assert!(matches!(g, SrcGroup::Balanced(_)), "{g:?}");
    // Misfit on asymmetric capacities → Misfit, 1.
    let mut cpus = hogs(&[1, 0, 0, 0]);
    for c in cpus.iter_mut().skip(1) {
        c.capacity_orig = 1024;
    }
    cpus[0].capacity_orig = 512;
    cpus[0].capacity = 512;
    cpus[0].set_hogs(1);
    cpus[0].misfit_task_load = 1024;
    let env = LbEnv::new(&sds, 2, 0, IdleType::Idle);
    match sched_balance_find_src_group(&env, &cpus).0 {
        SrcGroup::Busiest { group, migration } => {
            assert_eq!(group.group_type, GroupType::MisfitTask);
            assert_eq!(migration, Migration { kind: MigrationType::Misfit, imbalance: 1 });
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn util_migration_across_llcs() {
    // Two LLCs of 2 CPUs: PKG level is not LLC-sharing → Util when local has spare.
    let cpus_t: Vec<CpuTopology> = (0..4)
        .map(|i| CpuTopology { cpu: i, apic_id: i as u32, smt_id: 0, core_id: i as u32, pkg_id: 0, llc_id: (i / 2) as u32, node: 0 })
        .collect();
    let sds = SchedDomains::build(&cpus_t, None).unwrap();
    let pkg = sds.per_cpu(2).iter().position(|d| d.level == Level::Pkg).unwrap();
    let cpus = hogs(&[3, 2, 0, 0]);
    let env = LbEnv::new(&sds, 2, pkg, IdleType::Idle);
    match sched_balance_find_src_group(&env, &cpus).0 {
        SrcGroup::Busiest { migration, .. } => {
            assert_eq!(migration.kind, MigrationType::Util);
            assert_eq!(migration.imbalance, 2048, "the idle LLC's whole capacity");
        }
        other => panic!("{other:?}"),
    }
}

// ---------------------------------------------------------------------------
// A pure simulation: per CPU a task list (index 0 = head = running / most
// recent, the tail = least recently run), refreshed snapshots, and every CPU
// running every domain's balance each pass, applying the plans.

#[derive(Clone)]
struct Sim {
    sds: SchedDomains,
    orig: Vec<u64>,
    rq: Vec<Vec<TaskSnapshot>>,
    st: Vec<Vec<SdState>>,
    now: u64,
    migrations: u32,
}

impl Sim {
    fn new(sds: SchedDomains, counts: &[u32]) -> Sim {
        let n = counts.len();
        let mut id = 0;
        let rq = counts
            .iter()
            .enumerate()
            .map(|(c, &k)| {
                (0..k)
                    .map(|_| {
                        id += 1;
                        TaskSnapshot { exec_start: 1, ..TaskSnapshot::hog(id, c) }
                    })
                    .collect()
            })
            .collect();
        let st = (0..n).map(|c| sds.per_cpu(c).iter().map(SdState::new).collect()).collect();
        Sim { sds, orig: vec![1024; n], rq, st, now: 10_000_000, migrations: 0 }
    }

    fn snaps(&self) -> Vec<CpuSnapshot> {
        let asym = self.orig.iter().any(|&c| c != self.orig[0]);
        let maxcap = *self.orig.iter().max().unwrap();
        self.rq
            .iter()
            .enumerate()
            .map(|(c, ts)| {
                let mut s = CpuSnapshot::idle(c);
                s.capacity_orig = self.orig[c];
                s.capacity = self.orig[c];
                s.set_hogs(ts.len() as u32);
                s.misfit_task_load = update_misfit_status(
                    ts.first().map(|t| CurrTask { util: self.orig[c], load: t.load_avg, pinned: t.allowed.weight() == 1, max_allowed_capacity: maxcap }),
                    asym,
                    s.capacity,
                    s.capacity_orig,
                );
                s
            })
            .collect()
    }

    fn counts(&self) -> Vec<usize> {
        self.rq.iter().map(Vec::len).collect()
    }

    /// One tick: rotate each busy CPU (tail runs next; the preempted task is
    /// now hot), then every CPU balances every domain bottom-up.
    fn pass(&mut self) {
        self.now += 4_000_000;
        for ts in self.rq.iter_mut() {
            if ts.len() >= 2 {
                ts[0].running = false;
                ts[0].exec_start = self.now;
                let t = ts.pop().unwrap();
                ts.insert(0, t);
            }
            if let Some(t) = ts.first_mut() {
                t.running = true;
            }
        }
        for cpu in 0..self.rq.len() {
            for i in 0..self.sds.per_cpu(cpu).len() {
                if !self.balance(cpu, i) {
                    break;
                }
            }
        }
    }

    /// One `sched_balance_rq`; returns continue_balancing.
    fn balance(&mut self, dst: usize, i: usize) -> bool {
        let snaps = self.snaps();
        let idle = if self.rq[dst].is_empty() { IdleType::Idle } else { IdleType::NotIdle };
        let sds = self.sds.clone();
        let sd = &sds.per_cpu(dst)[i];
        let mut env = LbEnv::new(&sds, dst, i, idle);
        env.nr_balance_failed = self.st[dst][i].nr_balance_failed;
        count_attempt(&mut self.st[dst][i].stats, idle);
        let (plan, _) = plan_balance(&env, &snaps, &mut self.st[dst][i].stats);
        let (src, migration) = match plan {
            Plan::NotBalancer => {
                finish_balance(&mut self.st[dst][i], sd, idle, None, RqOutcome::Balanced);
                return false;
            }
            Plan::Balanced(_) | Plan::NoBusyQueue => {
                finish_balance(&mut self.st[dst][i], sd, idle, None, RqOutcome::Balanced);
                return true;
            }
            Plan::Pull { src, migration } => (src, migration),
        };
        let mut p = DetachParams::new(&snaps[dst], &snaps[src], idle, sd, env.nr_balance_failed);
        p.src_clock_task = self.now;
        let mut cur = DetachCursor::new(&p, migration);
        let mut take = Vec::new();
        for k in (0..self.rq[src].len()).rev() {
            match cur.consider(&self.rq[src][k]) {
                Detach::Take => {
                    assert!(self.rq[src][k].allows(dst));
                    take.push(k);
                    if cur.stop_after_take().is_some() {
                        break;
                    }
                }
                Detach::Skip(_) => {}
                Detach::Stop(_) => break,
            }
        }
        let out = cur.outcome();
        rq::record_pull(&mut self.st[dst][i].stats, idle, &out);
        for k in take {
            let mut t = self.rq[src].remove(k);
            t.running = false;
            t.exec_start = 0;
            self.rq[dst].push(t);
            self.migrations += 1;
        }
        if out.moved > 0 {
            finish_balance(&mut self.st[dst][i], sd, idle, Some(migration.kind), RqOutcome::Moved(out.moved));
            return true;
        }
        let failed = failed_count_after(&self.st[dst][i], idle, migration.kind);
        let need = need_active_balance(&ActiveBalanceInput {
            kind: migration.kind,
            idle,
            dst: &snaps[dst],
            src: &snaps[src],
            imbalance_pct: sd.imbalance_pct,
            cache_nice_tries: sd.cache_nice_tries,
            nr_balance_failed: failed,
        });
        let mut active = Some(false);
        if need {
            // The stopper on src pushes its running task (ACTIVE_LB).
            active = match self.rq[src].first() {
                Some(t) if t.allows(dst) => {
                    let mut t = self.rq[src].remove(0);
                    t.running = false;
                    t.exec_start = 0;
                    self.rq[dst].push(t);
                    self.migrations += 1;
                    self.st[dst][i].stats.alb_pushed += 1;
                    Some(true)
                }
                _ => None,
            };
            self.st[dst][i].stats.alb_count += 1;
        }
        finish_balance(&mut self.st[dst][i], sd, idle, Some(migration.kind), RqOutcome::Failed { kind: migration.kind, active });
        true
    }
}

#[test]
fn eight_hogs_on_one_cpu_spread_to_one_per_cpu() {
    let mut sim = Sim::new(topo(8, 1), &[8, 0, 0, 0, 0, 0, 0, 0]);
    for _ in 0..10 {
        sim.pass();
    }
    assert_eq!(sim.counts(), vec![1; 8]);
    let spread_migrations = sim.migrations;
    for _ in 0..50 {
        sim.pass();
    }
    assert_eq!(sim.counts(), vec![1; 8]);
    assert_eq!(sim.migrations, spread_migrations, "no migration once spread");
    // CPU 1's MC-level statistics line shows the pull it did while idle.
    let st = &sim.st[1][0].stats;
    assert!(st.lb[IdleType::Idle.index()].lb_gained >= 1);
}

#[test]
fn smt_four_hogs_end_on_four_cores() {
    let sds = topo(4, 2);
    assert_eq!(sds.per_cpu(0)[0].level, Level::Smt);
    let mut sim = Sim::new(sds, &[4, 0, 0, 0, 0, 0, 0, 0]);
    for _ in 0..30 {
        sim.pass();
    }
    let c = sim.counts();
    let per_core: Vec<usize> = c.chunks(2).map(|p| p[0] + p[1]).collect();
    assert_eq!(per_core, vec![1, 1, 1, 1], "per CPU {c:?}");
    let m = sim.migrations;
    for _ in 0..30 {
        sim.pass();
    }
    assert_eq!(sim.migrations, m, "stable");
}

/// 3 hogs on 2 CPUs. The counts stay 2 + 1 at every pass. The single-hog
/// CPU's busy balance sees a load imbalance of 512 that no 1024-load task
/// fits; after `nr_balance_failed` exceeds `cache_nice_tries` (1) the
/// tolerance `load >> failed` admits the recently-run (hot) tail task, so a
/// task moves over about every third attempt and the pair rotates: which CPU
/// holds two tasks alternates. This is Linux's behaviour too (its busy
/// balance runs every `busy_factor × interval`, about 32 ms here).
#[test]
fn three_hogs_on_two_cpus_stay_two_plus_one_and_rotate() {
    let mut sim = Sim::new(topo(2, 1), &[2, 1]);
    for _ in 0..60 {
        sim.pass();
        let mut c = sim.counts();
        c.sort();
        assert_eq!(c, vec![1, 2]);
    }
    assert!(sim.migrations >= 10, "rotation: {} migrations", sim.migrations);
    assert!(sim.migrations <= 30, "not every pass: {} migrations", sim.migrations);
}

#[test]
fn misfit_hog_on_half_capacity_cpu_moves_to_a_big_cpu() {
    let mut sim = Sim::new(topo(4, 1), &[1, 0, 0, 0]);
    sim.orig = vec![512, 1024, 1024, 1024];
    assert!(sim.snaps()[0].misfit_task_load > 0);
    sim.pass();
    let c = sim.counts();
    assert_eq!(c[0], 0, "{c:?}");
    assert_eq!(c.iter().sum::<usize>(), 1);
    let alb: u64 = sim.st.iter().flatten().map(|s| s.stats.alb_pushed).sum();
    assert_eq!(alb, 1, "the running misfit task needs the stopper");
    let m = sim.migrations;
    for _ in 0..20 {
        sim.pass();
    }
    assert_eq!(sim.migrations, m, "a fitting task stays on the big CPU");
}

#[test]
fn pinned_tasks_never_leave_their_cpu() {
    let mut sim = Sim::new(topo(4, 1), &[4, 0, 0, 0]);
    for t in sim.rq[0].iter_mut() {
        t.allowed = CpuMask::single(0);
    }
    for _ in 0..20 {
        sim.pass();
    }
    assert_eq!(sim.counts(), vec![4, 0, 0, 0]);
    let pinned_backoff = sim.st[1][mc_index(&sim.sds, 1)].balance_interval_ms;
    assert!(pinned_backoff > sim.sds.per_cpu(1)[0].min_interval_ms, "all-pinned backs off");
}

#[test]
fn overloaded_by_runnable_alone() {
    // Two waiting-heavy tasks on one CPU: util 500 (low) but runnable 2048.
    let sds = topo(2, 1);
    let mut cpus = hogs(&[0, 0]);
    cpus[0] = CpuSnapshot { nr_running: 2, h_nr_runnable: 2, idle: false, load_avg: 2048, runnable_avg: 2048, util_avg: 500, ..CpuSnapshot::idle(0) };
    let s = update_sd_lb_stats(&LbEnv::new(&sds, 1, 0, IdleType::Idle), &cpus);
    assert_eq!(s.busiest.unwrap().group_type, GroupType::Overloaded);
}

#[test]
fn should_we_balance_picks_one_cpu_per_group() {
    use sched::balance::interval::should_we_balance;
    let sds = topo(4, 2);
    let mc = mc_index(&sds, 0);
    let who = |cpus: &[CpuSnapshot]| -> Vec<usize> {
        (0..2).filter(|&c| should_we_balance(&LbEnv::new(&sds, c, mc, IdleType::Idle), cpus)).collect()
    };
    // Core 0 = CPUs 0, 1. Both busy: the group's balance CPU (0).
    assert_eq!(who(&hogs(&[1, 1, 0, 0, 0, 0, 0, 0])), vec![0]);
    // CPU 1 idle on a busy core: the first idle SMT CPU balances.
    assert_eq!(who(&hogs(&[1, 0, 0, 0, 0, 0, 0, 0])), vec![1]);
    // Whole core idle: its first CPU.
    assert_eq!(who(&hogs(&[0, 0, 1, 0, 0, 0, 0, 0])), vec![0]);
    // Newidle: any CPU with nothing queued.
    let cpus = hogs(&[0, 0, 1, 0, 0, 0, 0, 0]);
    assert!(should_we_balance(&LbEnv::new(&sds, 1, mc, IdleType::NewlyIdle), &cpus));
}

/// The pre-3.18 capacity factor against v6.19's count of CPUs, on constructed loads where they
/// decide differently. 2 cores x 2 threads, three tasks (two on core 0, one on CPU 2), balancing
/// the cores from idle CPU 3: v6.19 counts core 1 (2 CPUs, 1 task) as having spare capacity;
/// 3.17 counts a core at smt_gain (2 x 589 = 1178) as one task slot, so core 1 is full and its
/// idle thread counts for nothing (a lost core), while core 0 is overloaded. A flat 4-CPU
/// machine whose CPU 2 has capacity 512: alone it holds no task under 3.17 (its one task makes
/// it the overloaded busiest group), one under v6.19.
#[test]
fn the_pre_consolidation_capacity_factor_decides_differently() {
    assert_eq!(group_stats::sg_capacity_factor(1178, 1178, 2, false), 1, "a 2-thread core at smt_gain: one slot");
    assert_eq!(group_stats::sg_capacity_factor(512, 512, 1, false), 0, "a CPU at 512: no slot");
    assert_eq!(group_stats::sg_capacity_factor(589, 589, 1, true), 1, "an SMT thread, fix_small_capacity");
    assert_eq!(group_stats::sg_capacity_factor(600, 1024, 1, false), 1, "a CPU at 600 of 1024 rounds to a whole slot");
    assert_eq!(group_stats::sg_capacity_factor(1536, 2048, 2, false), 2, "1.5 rounds up");
    let sds = topo(2, 2);
    let idx = mc_index(&sds, 3);
    let cpus = hogs(&[1, 1, 1, 0]);
    let cores = |rule: GroupCapacity| {
        let mut env = LbEnv::new(&sds, 3, idx, IdleType::Idle);
        env.group_capacity = rule;
        let s = update_sd_lb_stats(&env, &cpus);
        (s.local.group_type, s.busiest.map(|b| b.group_type))
    };
    assert_eq!(cores(GroupCapacity::Util).0, GroupType::HasSpare);
    assert_eq!(cores(GroupCapacity::Factor), (GroupType::FullyBusy, Some(GroupType::Overloaded)));

    let flat = topo(4, 1);
    let mut cpus = hogs(&[1, 1, 1, 0]);
    cpus[2].capacity_orig = 512;
    cpus[2].capacity = 512;
    let cpu2 = |rule: GroupCapacity| {
        let mut env = LbEnv::new(&flat, 3, 0, IdleType::Idle);
        env.group_capacity = rule;
        update_sd_lb_stats(&env, &cpus).busiest.map(|b| (b.span, b.group_type))
    };
    assert!(cpu2(GroupCapacity::Util).is_none_or(|b| b.1 != GroupType::Overloaded), "{:?}", cpu2(GroupCapacity::Util));
    assert_eq!(cpu2(GroupCapacity::Factor), Some((CpuMask::single(2), GroupType::Overloaded)));
}
