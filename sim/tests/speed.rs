//! The simulator's speed check: 10 simulated seconds of schbench on 240 CPUs,
//! which should take under one minute of one host core. Measured, not asserted:
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

/// The value of `key=` in `line`.
fn field(line: &str, key: &str) -> Option<f64> {
    let want = format!("{key}=");
    line.split_whitespace().find_map(|w| w.strip_prefix(want.as_str())).and_then(|v| v.parse().ok())
}

#[test]
#[ignore = "about a minute of host CPU in a release build: run with --ignored"]
fn schbench_ten_simulated_seconds_on_dd_2024() {
    let runtime_ms = 10_000u64;
    let out = Command::new(env!("CARGO_BIN_EXE_fairway-sim"))
        .args(["--machine", "dd-2024", "--", &format!("workload=schbench,threads=16,workers=15,runtime_ms={runtime_ms}")])
        .output()
        .expect("run fairway-sim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // The run lasted the workload's runtime (plus its start and the
    // workers' last requests) ...
    let sim = stdout.lines().find(|l| l.starts_with("sim: ")).expect("a sim: line");
    let virtual_ns = field(sim, "virtual_ns").expect("virtual_ns=");
    assert!(virtual_ns >= (runtime_ms * 1_000_000) as f64, "{sim}");
    // ... and 240 workers each did requests of 300 us (200 us of work, 100
    // us of sleep) for most of it: at least half of 240 x 10 s / 300 us.
    let rps = stdout
        .lines()
        .find(|l| l.starts_with("@fw result workload=schbench metric=rps"))
        .and_then(|l| field(l, "value"))
        .expect("schbench's rps result");
    let floor = 0.5 * 240.0 / 300e-6;
    assert!(rps >= floor, "{rps} requests/s, below {floor}");
    let speed = stderr.lines().find(|l| l.starts_with("sim-speed: ")).expect("a sim-speed: line");
    println!("{sim}\n{speed}");
}
