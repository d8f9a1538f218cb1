//! One kernel command line (`workload=NAME,... OPTIONS`) on one simulated
//! machine, as the kernel's boot and `init` thread run it: what the
//! `fairway-sim` binary does, and what a test calls in-process (once per
//! process: the mechanism's state is static).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use workloads::cmdline;

use crate::hw::HwProfile;
use crate::platform::{self, SimConfig, SimReport};
use crate::Machine;

/// Workloads the simulator refuses, with the reason.
pub const REFUSED: &[(&str, &str)] = &[(
    "overflow",
    "it overflows a thread's stack into the guard page, and the simulator's coroutine stacks have no guard page to fault on",
)];

/// What a run of a command line did.
pub struct WorkloadRun {
    pub report: SimReport,
    /// The command line had a problem (reported as the kernel does, with a
    /// `cmdline:` line and `@fw cmdline_problem`): nothing ran.
    pub bad_input: bool,
    /// The workload passed its own checks.
    pub passed: bool,
}

/// Parses `line` with the kernel's parser, refuses by name what the
/// simulator does not model, and runs the workload on `m` with `seed`
/// (the order of simultaneous events, and the workload's random draws
/// unless `line` has a `seed=`); `echo` prints each console line as it is
/// written. The hardware is `icount`'s (no hardware costs: [`run_on`]
/// takes a profile).
pub fn run(m: &Machine, seed: u64, line: &str, echo: bool) -> WorkloadRun {
    run_on(m, &HwProfile::icount(), seed, line, echo)
}

/// [`run`] on the hardware of profile `hw` (`--hw`).
pub fn run_on(m: &Machine, hw: &HwProfile, seed: u64, line: &str, echo: bool) -> WorkloadRun {
    let line = line.to_string();
    let parsed = cmdline::parse(&line);
    let o = parsed.options;
    let mut problems = parsed.problems;
    // What the kernel does that the simulator does not model: said, never
    // silently dropped.
    let unmodelled: [(bool, &str); 4] = [
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
    // The fault modes that would spin forever on a clock that code does not
    // move (`platform::SIM_FAULTS`), by name; the others run.
    let off = o.fault & !platform::SIM_FAULTS;
    if off != 0 {
        problems.push(format!(
            "fault={}: not modelled by the simulator (it spins until the clock moves, and a simulated CPU's clock stands still while its code runs); run it under QEMU (`cargo xtask run`), or use {}",
            mech::fault::names(off),
            mech::fault::names(platform::SIM_FAULTS)
        ));
    }
    // cpu_capacity= as the kernel's boot applies it (kernel/src/main.rs): on
    // top of the machine's own capacities (a preset's little CPUs), checked
    // once the CPUs are known, by the kernel's own check (`cmdline::cpu_capacity_offline`). The slowdown is the
    // mechanism's own pressure source (mech balance/capacity.rs), which takes
    // (1024 - CAP)/1024 of every tick on the simulated CPU as it does in QEMU.
    let mut m = m.clone();
    let online = m.nr_cpus();
    for &(cpu, cap) in &o.cpu_capacity {
        match cmdline::cpu_capacity_offline(cpu, cap, online) {
            Some(problem) => problems.push(problem.to_string()),
            None => m.capacity[cpu] = cap as u32,
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
        echo,
        balance: o.balance,
        features: Some(o.sched_features),
        trace: if problems.is_empty() { o.trace } else { 0 },
        faults: (o.fault != 0 && problems.is_empty()).then(|| (o.fault, o.fault_seed.unwrap_or(mech::fault::DEFAULT_SEED))),
        hw: hw.clone(),
        idle_poll: o.idle_poll,
        ..SimConfig::default()
    };
    let ok = Arc::new(AtomicBool::new(false));
    let ok2 = ok.clone();
    let bad_input = !problems.is_empty();
    let mut workload = o.workload.clone();
    // The run's seed varies the workload's own draws too (think and service
    // times), unless the command line names one with `seed=`: then the
    // command line fixes the workload and `--seed` orders ties alone.
    if o.seed.is_none() {
        workload.seed = seed;
    }
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
        // The kernel's `init` steps around the workload (kernel/src/main.rs:
        // run_init()), the same shared calls: faults armed, then their
        // counts, the invariant checks, the trace and the statistics.
        mech::entry::workload_starts();
        let passed = workloads::run(&workload);
        mech::entry::workload_done();
        ok2.store(passed, Ordering::Relaxed);
    });
    WorkloadRun { report, bad_input, passed: ok.load(Ordering::Relaxed) }
}
