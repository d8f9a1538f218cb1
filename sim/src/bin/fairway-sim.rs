//! `fairway-sim`: one workload of the kernel's (`kernel/workloads`) on one
//! simulated machine, in one process (the mechanism's state is static).
//! `cargo xtask sim WORKLOAD --machine M --append '...'` builds and runs it.
//!
//! Usage: `fairway-sim --machine PRESET|SMP [--numa N] [--seed S] [--hw
//! PROFILE[,KEY=VALUE...]] [--hw-set KEY=VALUE[,...]]... -- CMDLINE`, where
//! CMDLINE is the kernel's command line (`workload=pipe,rounds=100 hz=250
//! ...`), parsed by the workloads' own parser as the kernel does, and `--hw`
//! the hardware cost model's profile (`icount` when not given: no hardware
//! costs; docs/SIMULATOR.md, "The hardware cost model"); each `--hw-set`
//! overrides figures of the profile given before it (an experiment's sweep
//! sets one cost on top of the run's profile, a second axis another).
//! `cpu_capacity=` slows the named CPUs as the kernel does (its pressure
//! source), on top of a preset's own capacities. `--seed S` orders
//! simultaneous events and seeds the workload's random draws (its think and
//! service times) unless CMDLINE gives `seed=`.
//! Prints what the kernel would from its `init` thread on: the command
//! line's problems (`cmdline:` and `@fw cmdline_problem`), the workload's
//! `@fw` lines, `@fw faults` (with `fault=`), the trace (with `trace=N`, the
//! kernel's `@fw trace*` records), the schedstat lines, what the hardware
//! model added (`@fw hw`, `@fw hwcost` per CPU, `@fw hwlock`); then one `sim:`
//! summary line, and on stderr one `sim-speed:` line (events per second of
//! process CPU time, host CPU seconds per simulated second: not on stdout,
//! whose bytes a seed fixes). Exit
//! status: 0 the workload passed its checks, 1 it did not, 2 bad input or
//! the run did not finish.

use fairway_sim::engine::speed::process_cpu_s;
use fairway_sim::hw::HwProfile;
use fairway_sim::presets;

fn usage() -> ! {
    eprintln!("usage: fairway-sim --machine PRESET|SMP [--numa N] [--seed S] [--hw PROFILE[,KEY=VALUE...]] [--hw-set KEY=VALUE[,...]]... -- CMDLINE");
    eprintln!("       profiles: {}", HwProfile::NAMES.join(", "));
    std::process::exit(2)
}

fn main() {
    let mut machine = None;
    let mut numa = 0u32;
    let mut seed = 0u64;
    let mut hw = HwProfile::icount();
    let mut line = String::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--machine" => machine = args.next(),
            "--numa" => numa = args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()),
            "--hw" => {
                let spec = args.next().unwrap_or_else(|| usage());
                hw = HwProfile::parse(&spec).unwrap_or_else(|e| {
                    eprintln!("sim: {e}");
                    std::process::exit(2)
                });
            }
            "--hw-set" => {
                let spec = args.next().unwrap_or_else(|| usage());
                hw.apply(&spec).unwrap_or_else(|e| {
                    eprintln!("sim: --hw-set {spec}: {e}");
                    std::process::exit(2)
                });
            }
            "--" => {
                line = args.collect::<Vec<_>>().join(" ");
                break;
            }
            _ => usage(),
        }
    }
    let Some(machine) = machine else { usage() };
    let m = match presets::machine(&machine, numa) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("sim: --machine {machine}: {e}");
            std::process::exit(2)
        }
    };
    // The kernel's boot prints the CPUs and the sched domains before it sets
    // any capacity (kernel/src/main.rs: topology::print_domains), so a
    // group's printed cap= is its CPUs' capacity_orig; the same here
    // (`cpu_capacity=` is applied by `workload::run`).
    match m.topology_report() {
        Ok(r) => print!("{r}"),
        Err(e) => println!("sim: {}: no sched domains: {e:?}", m.describe()),
    }
    let run = fairway_sim::workload::run_on(&m, &hw, seed, &line, true);
    let report = run.report;
    println!(
        "sim: machine={} seed={} end={} virtual_ns={} events={} digest={:016x}",
        m.name, seed, report.end, report.end_ns, report.events, report.digest
    );
    // The run's speed, on stderr: stdout stays the same bytes for the same seed.
    let host_s = process_cpu_s();
    let sim_s = report.end_ns as f64 / 1e9;
    eprintln!(
        "sim-speed: events={} host_cpu_s={:.2} events_per_host_s={:.0} host_s_per_sim_s={:.2}",
        report.events,
        host_s,
        report.events as f64 / host_s.max(0.01),
        host_s / sim_s.max(1e-9)
    );
    let code = if run.bad_input || report.end != "finished" {
        2
    } else if run.passed {
        0
    } else {
        1
    };
    std::process::exit(code)
}
