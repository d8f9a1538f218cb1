//! Issue 16's interleaving tests: the mechanism on 4 simulated CPUs under a
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

/// The child's argument: `SEED` (the mix of `TASKS` x `ROUNDS`) or
/// `SEED/TASKS/ROUNDS`.
fn one_run_arg(arg: &str) -> String {
    let v: Vec<u64> = arg.split('/').map(|x| x.parse().unwrap()).collect();
    match v[..] {
        [seed] => one_run(seed, TASKS, ROUNDS),
        [seed, tasks, rounds] => one_run(seed, tasks as usize, rounds),
        _ => panic!("child argument {arg}"),
    }
}

fn one_run(seed: u64, tasks: usize, rounds: u64) -> String {
    let machine = Machine::from_smp("4,sockets=2,cores=2", 1).unwrap();
    let (res, body) = common::mix(seed, 4, tasks, rounds);
    let cfg = SimConfig { seed, sched_debug: true, until_ns: 10_000_000_000, ..SimConfig::default() };
    let body = move || {
        if std::env::var("SIM_TRACE").is_ok() {
            mech::trace::enable(200000, &[0, 1, 2, 3]).unwrap();
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
    let mut migrations = 0;
    for seed in 0..SEEDS {
        let out = common::in_child("seeded_random_mixes_lose_no_wakeup_and_no_task", &seed.to_string());
        assert!(out.starts_with("end=finished "), "seed {seed}: {out}");
        for i in 0..TASKS {
            assert!(out.contains(&format!("task={i} rounds={ROUNDS} consumed={ROUNDS}\n")), "seed {seed}, task {i}: {out}");
        }
        assert!(out.contains(" early=0\n"), "seed {seed}: a sleep ended early: {out}");
        let m: u64 = out.lines().find_map(|l| l.strip_prefix("migrations=")).unwrap().parse().unwrap();
        migrations += m;
    }
    // The mix moves tasks between CPUs (affinity changes, wake placement,
    // balancing): the interleavings cover the migration paths.
    assert!(migrations > SEEDS * 10, "{migrations} migrations in {SEEDS} runs");
}
