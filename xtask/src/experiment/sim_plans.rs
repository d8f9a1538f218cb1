//! What `--engine sim` runs for each experiment: the debate's own machine (a `fairway-sim`
//! preset, `sim/src/presets.rs`), the points scaled to it, and the seeds per cell. The variants
//! and the reading rules are the experiment's own (`defs.rs` and the experiment's own file), so both engines'
//! figures are read by the same rules.
//!
//! Run lengths are the shortest that gave the same direction on every seed tried (the
//! simulator costs host seconds per simulated second at 160-240 CPUs, see docs/SIMULATOR.md);
//! the cost of each full run is in its report.

use super::Form;

/// The simulator's forms of one experiment.
pub struct SimPlan {
    /// Seeds per cell of the full form (run i uses `--seed i`): more than one where the
    /// figure is a distribution's tail (schbench's p99).
    pub seeds: usize,
    /// `smp` is the preset (or an -smp value where the debate's machine is the qemu form's).
    pub full: Form,
    pub quick: Form,
    /// Why the machine and the points are what they are.
    pub note: &'static str,
}

pub fn plan(name: &str) -> SimPlan {
    match name {
        "avg-idle" => SimPlan {
            seeds: 1,
            // 1, 2 and 4 fserver threads per CPU, as the qemu form's 4, 8 and 16 on 4 CPUs.
            full: Form {
                smp: "avg-idle-2013",
                params: "ms=200",
                points: &["prodcons:pairs=160", "threads=160", "threads=320", "threads=640"],
                timeout_s: 0,
            },
            quick: Form { smp: "avg-idle-2013", params: "ms=200", points: &["prodcons:pairs=160"], timeout_s: 0 },
            note: "The claim's own machine: 8 sockets x 10 cores x 2 threads, 8 NUMA nodes (160 CPUs), preset \
                   `avg-idle-2013`; prodcons with one pair per CPU, fserver at 1, 2 and 4 threads per CPU (the qemu \
                   form's 4, 8 and 16 threads on 4 CPUs).",
        },
        "sis-scan-cost" => SimPlan {
            seeds: 1,
            // tbench pairs at a quarter, one and two times the 160 CPUs (the qemu form's 2, 8 and
            // 16 clients on 8). hackbench is left out: the simulator charges no pipe copy yet, so
            // a hackbench run of 32,000 messages takes tens of microseconds and its time says
            // nothing (docs/SIMULATOR.md's cross-check gaps).
            full: Form {
                smp: "sis-2021",
                params: "ms=20",
                points: &["clients=40", "clients=160", "clients=320"],
                timeout_s: 0,
            },
            quick: Form { smp: "sis-2021", params: "ms=1", points: &["clients=80"], timeout_s: 0 },
            note: "The debate's machine: 2 sockets x 40 cores x 2 threads, 2 nodes, two LLCs of 80 CPUs (preset \
                   `sis-2021`); tbench-like pairs at 40, 160 and 320 clients (a quarter of, one and two times the CPUs). \
                   hackbench is not run on the simulator: it charges no pipe copy yet, so hackbench's time is tens of \
                   microseconds there and says nothing.",
        },
        "delayed-dequeue" => SimPlan {
            seeds: 3,
            // One and two workers per CPU (the qemu form's 4 and 8 workers on 4 CPUs).
            full: Form {
                smp: "dd-2024",
                params: "runtime_ms=100",
                points: &["threads=4,workers=60", "threads=8,workers=60"],
                timeout_s: 0,
            },
            quick: Form { smp: "dd-2024", params: "runtime_ms=20", points: &["threads=2,workers=60"], timeout_s: 0 },
            note: "The claim's machine: 2 sockets x 60 cores x 2 threads, 2 nodes (240 CPUs, preset `dd-2024`); schbench \
                   with 4 and 8 message threads of 60 workers each (one and two workers per CPU, as the qemu form's 4 and \
                   8 workers on 4 CPUs); 3 seeds per cell, since the figure is a tail percentile.",
        },
        "wake-balance" => SimPlan {
            seeds: 3,
            full: Form {
                smp: "wake-2005",
                params: "",
                points: super::wake_balance::FULL_POINTS,
                timeout_s: 0,
            },
            quick: Form {
                smp: "wake-2005",
                params: "",
                points: &["schbench:threads=1,workers=4,runtime_ms=100,work_us=100,sleep_us=0,pin_msg=1"],
                timeout_s: 0,
            },
            note: "The dual Xeon (2 sockets x 1 core x 2 threads, preset `wake-2005`) is the qemu form's own machine: \
                   the same points run on both engines, 3 seeds per cell on the simulator.",
        },
        "cpu-capacity" => SimPlan {
            seeds: 1,
            full: Form {
                smp: "4",
                params: "",
                points: &["threads=2,ms=200", "threads=4,ms=200", "threads=6,ms=200", "pipe:rounds=5000,mode=cross"],
                timeout_s: 0,
            },
            quick: Form { smp: "4", params: "", points: &["threads=4,ms=100"], timeout_s: 0 },
            note: "The qemu form's machines (4 CPUs flat, and 2 cores x 2 threads), with `cpu_capacity=`, which the \
                   simulator emulates as the kernel does (the mechanism's pressure source takes (1024 - CAP)/1024 of \
                   every tick of the slowed CPU), rather than the `capacity-2014` preset: the 2014 debate was about \
                   capacities below 1024 from SMT and from RT/IRQ pressure on symmetric machines, which is what the \
                   variants emulate, and the same variants on both engines put their figures side by side. hackbench \
                   is left out (no pipe copy is charged on the simulator yet).",
        },
        other => panic!("no simulator plan for experiment {other}"),
    }
}
