//! `workload=pipe[,rounds=100000][,mode=same|cross]`: two threads ping-pong
//! one byte over a pair of pipes, like `perf bench sched pipe`; on one CPU
//! (`same`) or on two (`cross`). Prints `usecs/op` and `ops/sec` as perf does
//! and a `@fw pipe` record with the total time (in `--icount` mode 1 ns of
//! guest time is one guest instruction).
//!
//! `workload=yield[,rounds=100000]`: two threads on one CPU yield to each
//! other; each round is two context switches.

use alloc::sync::Arc;

use super::params::{Param, wss_kb, num, choice};
use crate::cmdline::Workload;
use mech::rq;
use mech::sync::pipe::Pipe;
use mech::thread::Spawn;

/// What `workload=pipe` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("rounds", 1, 100_000_000, 100_000, "round trips"),
    choice("mode", &["same", "cross"], "both threads on one CPU, or on two"),
    wss_kb(16),
];

/// `workload=yield`'s parameters.
pub(super) const YIELD_PARAMS: &[Param] = &[num("rounds", 1, 100_000_000, 100_000, "rounds of two yields")];

pub fn run(w: &Workload) -> bool {
    let rounds = w.num("rounds");
    let mode = w.text("mode");
    let cpus = super::cpus();
    let a_cpu = cpus[0];
    let b_cpu = match (mode, cpus.get(1)) {
        ("cross", Some(&b)) => b,
        ("cross", None) => {
            crate::cmdline::report_problem("workload=pipe: mode=cross needs two online CPUs; both threads run on the one there is");
            a_cpu
        }
        _ => a_cpu,
    };
    let ping = Arc::new(Pipe::new(4096));
    let pong = Arc::new(Pipe::new(4096));
    let (p1, q1) = (ping.clone(), pong.clone());
    let wss = w.num("wss_kb") as u32;
    let start = rq::now_ns();
    let b = super::spawn(Spawn::new("pipe-b").pin(b_cpu), move || {
        mech::platform::set_working_set(wss);
        let mut x = [0u8; 1];
        for _ in 0..rounds {
            p1.read_exact(&mut x);
            q1.write(&x, true);
        }
    });
    let a = super::spawn(Spawn::new("pipe-a").pin(a_cpu), move || {
        mech::platform::set_working_set(wss);
        let mut x = [1u8; 1];
        for _ in 0..rounds {
            ping.write(&x, true);
            pong.read_exact(&mut x);
        }
    });
    let (Some(a), Some(b)) = (a, b) else { return false };
    mech::thread::join(&a);
    mech::thread::join(&b);
    let ns = rq::now_ns() - start;
    let per = ns / rounds.max(1);
    mech::kprintln!("# Running 'sched/pipe' benchmark:");
    mech::kprintln!("# Executed {} pipe operations between two threads ({}: CPU {} and CPU {})", rounds, mode, a_cpu, b_cpu);
    mech::kprintln!("     Total time: {}.{:03} [sec]", ns / 1_000_000_000, ns / 1_000_000 % 1000);
    mech::kprintln!("     {:>10}.{:03} usecs/op", per / 1000, per % 1000);
    mech::kprintln!("     {:>10} ops/sec", rounds as u128 * 1_000_000_000 / ns.max(1) as u128);
    mech::record!("pipe", "mode={} rounds={} a_cpu={} b_cpu={} total_ns={} ns_per_round_trip={}", mode, rounds, a_cpu, b_cpu, ns, per);
    super::result("pipe", "usecs_per_op", ns / rounds.max(1), "us", false);
    super::result("pipe", "ops_per_sec", (rounds as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64, "ops/s", true);
    mech::schedstat::print_task(&a);
    mech::schedstat::print_task(&b);
    true
}

pub fn run_yield(w: &Workload) -> bool {
    let rounds = w.num("rounds");
    let cpu = super::cpus()[0];
    let start = rq::now_ns();
    let mk = |name: &str| {
        super::spawn(Spawn::new(name).pin(cpu), move || {
            for _ in 0..rounds {
                mech::schedule::yield_now();
            }
        })
    };
    let (Some(a), Some(b)) = (mk("yield-a"), mk("yield-b")) else { return false };
    mech::thread::join(&a);
    mech::thread::join(&b);
    let ns = rq::now_ns() - start;
    let switches = a.stats.nr_switches.load(core::sync::atomic::Ordering::Relaxed)
        + b.stats.nr_switches.load(core::sync::atomic::Ordering::Relaxed);
    mech::record!("yield", "rounds={} cpu={} total_ns={} switches={} ns_per_switch={}", rounds, cpu, ns, switches, ns / switches.max(1));
    true
}
