//! `fairway-sim`: one workload of the kernel's (`kernel/workloads`) on one
//! simulated machine, in one process (the mechanism's state is static).
//! `cargo xtask sim WORKLOAD --machine M --append '...'` builds and runs it.
//!
//! Usage: `fairway-sim --machine PRESET|SMP [--numa N] [--seed S] -- CMDLINE`,
//! where CMDLINE is the kernel's command line (`workload=pipe,rounds=100
//! hz=250 ...`), parsed by the workloads' own parser as the kernel does.
//! `cpu_capacity=` slows the named CPUs as the kernel does (its pressure
//! source), on top of a preset's own capacities.
//! Prints what the kernel would from its `init` thread on: the command
//! line's problems (`cmdline:` and `@fw cmdline_problem`), the workload's
//! `@fw` lines, the schedstat lines; then one `sim:` summary line. Exit
//! status: 0 the workload passed its checks, 1 it did not, 2 bad input or
//! the run did not finish.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fairway_sim::platform::{self, SimConfig};
use fairway_sim::presets;
use workloads::cmdline;

/// Workloads the simulator refuses, with the reason.
const REFUSED: &[(&str, &str)] = &[(
    "overflow",
    "it overflows a thread's stack into the guard page, and the simulator's coroutine stacks have no guard page to fault on",
)];

fn usage() -> ! {
    eprintln!("usage: fairway-sim --machine PRESET|SMP [--numa N] [--seed S] -- CMDLINE");
    std::process::exit(2)
}

fn main() {
    let mut machine = None;
    let mut numa = 0u32;
    let mut seed = 0u64;
    let mut line = String::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--machine" => machine = args.next(),
            "--numa" => numa = args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()),
            "--" => {
                line = args.collect::<Vec<_>>().join(" ");
                break;
            }
            _ => usage(),
        }
    }
    let Some(machine) = machine else { usage() };
    let mut m = match presets::machine(&machine, numa) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sim: --machine {machine}: {e}");
            std::process::exit(2)
        }
    };
    let parsed = cmdline::parse(&line);
    let o = parsed.options;
    let mut problems = parsed.problems;
    // What the kernel does that the simulator does not model: said, never
    // silently dropped.
    let unmodelled: [(bool, &str); 7] = [
        (o.fault != 0, "fault="),
        (o.trace > 0, "trace="),
        (o.idle_poll, "idle=poll"),
        (o.test_lockdep.is_some(), "test_lockdep="),
        (o.test_watchdog.is_some(), "test_watchdog="),
        (o.test_crash.is_some(), "test_crash="),
        (o.stats_ms > 0, "stats_ms="),
    ];
    for (given, what) in unmodelled {
        if given {
            problems.push(format!("{what}: not modelled by the simulator; run it under QEMU (`cargo xtask run`)"));
        }
    }
    // The kernel's boot prints the CPUs and the sched domains before it sets
    // any capacity (kernel/src/main.rs: topology::print_domains), so a
    // group's printed cap= is its CPUs' capacity_orig; the same here.
    match m.topology_report() {
        Ok(r) => print!("{r}"),
        Err(e) => println!("sim: {}: no sched domains: {e:?}", m.describe()),
    }
    // cpu_capacity= as the kernel's boot applies it (kernel/src/main.rs): on
    // top of the machine's own capacities (a preset's little CPUs), checked
    // once the CPUs are known, with the kernel's message. The slowdown is the
    // mechanism's own pressure source (mech balance/capacity.rs), which takes
    // (1024 - CAP)/1024 of every tick on the simulated CPU as it does in QEMU.
    let online = m.nr_cpus();
    for &(cpu, cap) in &o.cpu_capacity {
        if cpu < online && (1..=1024).contains(&cap) {
            m.capacity[cpu] = cap as u32;
        } else {
            problems.push(format!(
                "cpu_capacity: CPU {cpu} capacity {cap} is not an online CPU (online: {online}) with a capacity of 1..1024; CPU {cpu} keeps 1024"
            ));
        }
    }
    if let Some((name, why)) = REFUSED.iter().find(|(n, _)| *n == o.workload.name) {
        problems.push(format!("workload={name}: the simulator cannot run it: {why}"));
    }
    let cfg = SimConfig {
        seed,
        hz: o.hz,
        nohz: o.nohz,
        sched_debug: o.sched_debug,
        echo: true,
        balance: o.balance,
        features: Some(o.sched_features),
        ..SimConfig::default()
    };
    let ok = Arc::new(AtomicBool::new(false));
    let ok2 = ok.clone();
    let bad_input = !problems.is_empty();
    let workload = o.workload.clone();
    let phase_ns = o.phase_ns;
    let report = platform::run(&m, cfg, move || {
        mech::record!("cmdline", "msg={}", line);
        for p in &problems {
            cmdline::report_problem(p);
        }
        if !problems.is_empty() {
            return;
        }
        if phase_ns > 0 {
            mech::platform::burn_ns(phase_ns);
        }
        let passed = workloads::run(&workload);
        // What the kernel's `init` prints after the workload (kernel/src/main.rs: run_init()).
        mech::schedstat::print_cpus();
        mech::balance::stats::print_all();
        ok2.store(passed, Ordering::Relaxed);
    });
    println!(
        "sim: machine={} seed={} end={} virtual_ns={} events={} digest={:016x}",
        m.name, seed, report.end, report.end_ns, report.events, report.digest
    );
    let code = if bad_input || report.end != "finished" {
        2
    } else if ok.load(Ordering::Relaxed) {
        0
    } else {
        1
    };
    std::process::exit(code)
}
