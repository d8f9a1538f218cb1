//! The simulator's speed check: 10 simulated seconds of schbench on 240 CPUs,
//! which should take under one minute of one host core, without the hardware
//! cost model and with its richest profile (`dd-2024`: every cost on).
//! Measured, not asserted:
//! the host is shared, so the figure is printed, and the test only holds
//! that the run did its work. Ignored by default (about a minute of CPU in
//! a release build); run it with
//!
//! ```sh
//! cargo test --release -p fairway-sim --test speed -- --ignored --nocapture
//! ```
//!
//! (docs/SIMULATOR.md, "Speed of a workload run").

use std::process::Command;

/// Runs 10 simulated seconds of schbench on `dd-2024` with the extra
/// `fairway-sim` arguments `args`: (stdout, stderr), after checking that
/// it finished and lasted the workload's runtime.
fn ten_seconds(args: &[&str]) -> (String, String) {
    let runtime_ms = 10_000u64;
    let out = Command::new(env!("CARGO_BIN_EXE_fairway-sim"))
        .args(["--machine", "dd-2024"])
        .args(args)
        .args(["--", &format!("workload=schbench,threads=16,workers=15,runtime_ms={runtime_ms}")])
        .output()
        .expect("run fairway-sim");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let sim = stdout.lines().find(|l| l.starts_with("sim: ")).expect("a sim: line");
    let virtual_ns = field(sim, "virtual_ns").expect("virtual_ns=");
    assert!(virtual_ns >= (runtime_ms * 1_000_000) as f64, "{sim}");
    (stdout, stderr)
}

/// The value of `key=` in `line`.
fn field(line: &str, key: &str) -> Option<f64> {
    let want = format!("{key}=");
    line.split_whitespace().find_map(|w| w.strip_prefix(want.as_str())).and_then(|v| v.parse().ok())
}

#[test]
#[ignore = "about a minute of host CPU in a release build: run with --ignored"]
fn schbench_ten_simulated_seconds_on_dd_2024() {
    let (stdout, stderr) = ten_seconds(&[]);
    // 240 workers each did requests of 300 us (200 us of work, 100 us of
    // sleep) for most of it: at least half of 240 x 10 s / 300 us.
    let rps = stdout
        .lines()
        .find(|l| l.starts_with("@fw result workload=schbench metric=rps"))
        .and_then(|l| field(l, "value"))
        .expect("schbench's rps result");
    let floor = 0.5 * 240.0 / 300e-6;
    assert!(rps >= floor, "{rps} requests/s, below {floor}");
    let sim = stdout.lines().find(|l| l.starts_with("sim: ")).expect("a sim: line");
    let speed = stderr.lines().find(|l| l.starts_with("sim-speed: ")).expect("a sim-speed: line");
    println!("{sim}\n{speed}");
}

/// The same run priced by the `dd-2024` hardware profile (every cost of the
/// hardware model on; docs/SIMULATOR.md, "Speed with the model"), and with
/// its lock waits off (the run then has as many events as without the model).
#[test]
#[ignore = "about two minutes of host CPU in a release build: run with --ignored"]
fn schbench_ten_simulated_seconds_on_dd_2024_with_its_hardware() {
    for hw in ["dd-2024", "dd-2024,locks=off"] {
        let (stdout, stderr) = ten_seconds(&["--hw", hw]);
        assert!(stdout.lines().any(|l| l.starts_with("@fw hwcost ") && !l.contains(" refill_ns=0 ")), "the refill acted");
        let sim = stdout.lines().find(|l| l.starts_with("sim: ")).expect("a sim: line");
        let speed = stderr.lines().find(|l| l.starts_with("sim-speed: ")).expect("a sim-speed: line");
        println!("--hw {hw}\n{sim}\n{speed}");
    }
}

/// Today's two-socket server, 2 x 192 cores x 2 threads (768 CPUs, one LLC
/// per socket as `-smp` gives it): one simulated second of schbench with one
/// worker per CPU (8 message threads of 96 workers: `dd-2024`'s
/// delayed-dequeue plan of 4 x 60 on 240 CPUs, scaled). About 25 s of host CPU
/// in a release build (docs/SIMULATOR.md, "Speed of a workload run").
#[test]
#[ignore = "about half a minute of host CPU in a release build: run with --ignored"]
fn schbench_one_simulated_second_on_768_cpus() {
    let out = Command::new(env!("CARGO_BIN_EXE_fairway-sim"))
        .args(["--machine", "768,sockets=2,cores=192,threads=2", "--", "workload=schbench,threads=8,workers=96,runtime_ms=1000"])
        .output()
        .expect("run fairway-sim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let sim = stdout.lines().find(|l| l.starts_with("sim: ")).expect("a sim: line");
    assert!(field(sim, "virtual_ns").expect("virtual_ns=") >= 1e9, "{sim}");
    // 768 workers with requests of 300 us: at least half of 768 / 300 us.
    let rps = stdout
        .lines()
        .find(|l| l.starts_with("@fw result workload=schbench metric=rps"))
        .and_then(|l| field(l, "value"))
        .expect("schbench's rps result");
    let floor = 0.5 * 768.0 / 300e-6;
    assert!(rps >= floor, "{rps} requests/s, below {floor}");
    let speed = stderr.lines().find(|l| l.starts_with("sim-speed: ")).expect("a sim-speed: line");
    println!("{sim}\n{speed}");
}
