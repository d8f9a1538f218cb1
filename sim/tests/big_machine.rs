//! Today's two-socket servers: 768 CPUs (2 sockets x 192 cores x 2 threads)
//! boot every CPU and run schbench, the same seed replays the same events,
//! and a machine beyond `MAX_CPUS` (1024) is refused with the limit named.
//! Each run is its own `fairway-sim` process (the mechanism's state is static).

use std::process::{Command, Output};

fn sim(machine: &str, cmdline: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fairway-sim"))
        .args(["--machine", machine, "--seed", "7", "--", cmdline])
        .output()
        .expect("run fairway-sim")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_768_cpu_server_runs_every_cpu_and_replays_its_seed() {
    // One schbench worker per CPU (8 message threads of 96 workers), as
    // docs/SIMULATOR.md's 768-CPU figure, for 2 ms.
    let cmdline = "workload=schbench,threads=8,workers=96,runtime_ms=2";
    let runs: Vec<(String, String)> = (0..2).map(|_| text(&sim("768,sockets=2,cores=192,threads=2", cmdline))).collect();
    let (out, err) = &runs[0];
    assert!(out.lines().any(|l| l.starts_with("sim: ") && l.contains(" end=finished ")), "{out}\n{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("@fw cpu ")).count(), 768, "a @fw cpu line per CPU");
    // Every CPU ran the scheduler: a schedstat line for CPU 767 too.
    assert!(out.lines().any(|l| l.starts_with("cpu767 ")), "{out}");
    // APIC IDs above 255 (socket 1 starts at 512 with 8 bits of cores and a thread bit).
    assert!(out.contains("@fw cpu id=767 apic=895 pkg=1 core=191 smt=1"), "{out}");
    let sim_line = |o: &str| o.lines().find(|l| l.starts_with("sim: ")).map(str::to_string);
    assert_eq!(sim_line(out), sim_line(&runs[1].0), "two runs of seed 7 differ");
    assert_eq!(runs[0].0, runs[1].0, "the same seed printed other bytes");
}

#[test]
fn more_cpus_than_fairway_handles_are_refused_with_the_limit() {
    let out = sim("1040,sockets=2,cores=260,threads=2", "workload=pipe");
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("1040 CPUs; fairway handles at most 1024"), "{err}");
    // The limit itself is fine.
    let out = sim("1024,sockets=4,cores=128,threads=2", "workload=yield,rounds=10");
    let (stdout, err) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{err}");
}
