//! Interleaving tests: the mechanism on 4 simulated CPUs (64
//! seeds), 8 CPUs with SMT (16 seeds) and 4 CPUs with every cost zero (16
//! seeds, far more simultaneous events for the seed to order) under a
//! seeded random mix of wakeups through wait queues, timer sleeps, yields
//! and affinity changes (migrations), with its invariant checks on
//! (`sched_debug`: every switch and tick checks the runqueue, and the end
//! checks every runnable task is on exactly one runqueue). Each seed is one
//! process (the mechanism's state is static). For every seed: the run
//! finishes (init joined every task, so no task was lost and no wakeup:
//! a lost one leaves its waiter asleep and the run idle), every task did
//! all its rounds and consumed exactly its tokens, and no timer sleep
//! ended before its deadline.

mod common;

use std::sync::atomic::Ordering;

use fairway_sim::platform::{self, SimConfig};
use fairway_sim::Machine;

const TASKS: usize = 12;
const ROUNDS: u64 = 200;
const SEEDS: u64 = 64;

/// The child's argument: `SEED` (the mix of `TASKS` x `ROUNDS` on 4 CPUs)
/// or `SEED/TASKS/ROUNDS[/SMP[/free]]` (SMP: a QEMU `-smp` value; `free`:
/// every cost zero, so far more events fall on the same ns and the seed
/// orders more of them).
fn one_run_arg(arg: &str) -> String {
    let v: Vec<&str> = arg.split('/').collect();
    let num = |i: usize| v[i].parse::<u64>().unwrap_or_else(|_| panic!("child argument {arg}"));
    match v.len() {
        1 => one_run(num(0), TASKS, ROUNDS, "4,sockets=2,cores=2"),
        3 => one_run(num(0), num(1) as usize, num(2), "4,sockets=2,cores=2"),
        4 => one_run(num(0), num(1) as usize, num(2), v[3]),
        5 if v[4] == "free" => {
            std::env::set_var("SIM_COST", "free");
            one_run(num(0), num(1) as usize, num(2), v[3])
        }
        _ => panic!("child argument {arg}"),
    }
}

fn one_run(seed: u64, tasks: usize, rounds: u64, smp: &str) -> String {
    let machine = Machine::from_smp(smp, 1).unwrap();
    let (res, body) = common::mix(seed, machine.nr_cpus(), tasks, rounds);
    let mut cfg = SimConfig { seed, sched_debug: true, until_ns: 10_000_000_000, ..SimConfig::default() };
    if std::env::var("SIM_COST").as_deref() == Ok("free") {
        cfg.cost = fairway_sim::engine::CostModel::FREE;
    }
    let body = move || {
        if std::env::var("SIM_TRACE").is_ok() {
            mech::trace::enable(200000, &(0..mech::rq::online_mask().weight() as usize).collect::<Vec<_>>()).unwrap();
        }
        body()
    };
    let report = platform::run(&machine, cfg, body);
    let mut out = format!("end={} end_ns={} events={}\n", report.end, report.end_ns, report.events);
    if report.end != "finished" {
        eprintln!("{}", platform::dump());
        if std::env::var("SIM_TRACE").is_ok() {
            mech::trace::dump();
            for l in platform::take_output() { eprintln!("{l}"); }
        }
    }
    for i in 0..tasks {
        out += &format!("task={i} rounds={} consumed={}\n", res.rounds[i].load(Ordering::Relaxed), res.consumed[i].load(Ordering::Relaxed));
    }
    out += &format!("sleeps={} early={}\n", res.sleeps.load(Ordering::Relaxed), res.early.load(Ordering::Relaxed));
    let moved: u64 = report.cpus.iter().map(|c| c.migrations_in.iter().sum::<u64>()).sum();
    out += &format!("migrations={moved}\n");
    out
}

#[test]
fn seeded_random_mixes_lose_no_wakeup_and_no_task() {
    if let Some(arg) = common::child_arg() {
        common::child_result(&one_run_arg(&arg));
        return;
    }
    let name = "seeded_random_mixes_lose_no_wakeup_and_no_task";
    let mut migrations = 0;
    let mut runs = 0;
    // 4 CPUs (2 sockets x 2 cores) with the icount costs; 8 CPUs with SMT;
    // 4 CPUs with every cost zero.
    let batches = [(SEEDS, TASKS, ROUNDS, ""), (16, 16, 100, "/8,sockets=2,cores=2,threads=2"), (16, TASKS, ROUNDS, "/4,sockets=2,cores=2/free")];
    for (seeds, tasks, rounds, rest) in batches {
        for seed in 0..seeds {
            let arg = format!("{seed}/{tasks}/{rounds}{rest}");
            let out = common::in_child(name, &arg);
            assert!(out.starts_with("end=finished "), "run {arg}: {out}");
            for i in 0..tasks {
                assert!(out.contains(&format!("task={i} rounds={rounds} consumed={rounds}\n")), "run {arg}, task {i}: {out}");
            }
            assert!(out.contains(" early=0\n"), "run {arg}: a sleep ended early: {out}");
            let m: u64 = out.lines().find_map(|l| l.strip_prefix("migrations=")).unwrap().parse().unwrap();
            migrations += m;
            runs += 1;
        }
    }
    // The mix moves tasks between CPUs (affinity changes, wake placement,
    // balancing): the interleavings cover the migration paths.
    assert!(migrations > runs * 10, "{migrations} migrations in {runs} runs");
}
