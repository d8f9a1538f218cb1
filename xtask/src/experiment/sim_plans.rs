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
    /// The hardware cost model's profile of the full form when `--hw` names none
    /// (docs/SIMULATOR.md, "Hardware profiles": the debate's machine's figures).
    pub hw: &'static str,
    /// Why the machine and the points are what they are.
    pub note: &'static str,
}

pub fn plan(name: &str) -> SimPlan {
    match name {
        "avg-idle" => SimPlan {
            seeds: 10,
            // idleperiods at one thread per CPU and fserver with I/O waits at 2 per CPU, 300 ms
            // (tens of thousands of idle periods per cell); the qemu form's other points are
            // left out for the host time they cost on a shared host.
            full: Form {
                smp: "avg-idle-2013",
                params: "ms=300",
                points: &["idleperiods:threads=160,spread=1", "threads=320,io_pct=10"],
                timeout_s: 0,
            },
            quick: Form { smp: "avg-idle-2013", params: "ms=100", points: &["idleperiods:threads=160,spread=1"], timeout_s: 0 },
            hw: "avg-idle-2013",
            note: "The claim's own machine: 8 sockets x 10 cores x 2 threads, 8 NUMA nodes (160 CPUs), preset \
                   `avg-idle-2013`; idleperiods with one thread per CPU, fserver with one sleep in ten an I/O wait at 2 \
                   threads per CPU (320: \"a high # of users\"), 300 ms each; the qemu form's other points (idleperiods at \
                   1.5 per CPU, fserver at 1 and 4 per CPU) are not run here, for the host time they cost; 10 seeds per \
                   cell, each drawing its own sleeps and bursts.",
        },
        "sis-scan-cost" => SimPlan {
            seeds: 10,
            // The thread's client counts on its own machine; 500 ms measured after 800 ms: under full
            // load each core's CPU balances the LLC domain every 640 ms, so SIS_UTIL's first
            // refresh comes about 640 ms in (at 320 clients none in the first 300 ms; 20 and 26
            // per LLC in a run of 1.8 s, seed 1), and SIS_UTIL scans nothing after it (5.5
            // million wakeups without a scan). hackbench is left out: the simulator
            // charges no pipe copy yet, so a hackbench run of 32,000 messages takes tens of
            // microseconds and its time says nothing (docs/SIMULATOR.md's cross-check gaps). The
            // window is 500 ms, not 1 s, and the map runs 5 seeds a point, for the host time (the
            // note says how much).
            full: Form {
                smp: "sis-2021",
                params: "ms=500,warmup_ms=800,jitter_pct=50",
                // A light LLC, Mel's 64 clients and the thread's busiest, 320; its 2 to 32 clients
                // cost 4 host seconds a run each (10 million events), and 128 and 256 are left out
                // for the host time of the grid.
                points: &["clients=1", "clients=64", "clients=320"],
                timeout_s: 0,
            },
            quick: Form { smp: "sis-2021", params: "ms=10,jitter_pct=50", points: &["clients=64"], timeout_s: 0 },
            hw: "sis-2021",
            note: "The debate's machine: 2 sockets x 20 cores x 2 threads, 2 nodes, two LLCs of 40 CPUs (preset \
                   `sis-2021`, Mel Gorman's \"2-socket (40 cores, 80 threads)\"); tbench-like pairs at 1 client (a light LLC) \
                   and at the thread's 64 and 320 (its 2 to 32, 128 and 256 are left out for the host time they cost), 500 ms measured after an 800 ms warm-up (SIS_UTIL's first refresh under full load comes \
                   about 640 ms in); 10 seeds per cell, each drawing the servers' \
                   work; the map 5 seeds a grid point. The window and the map's seeds are what a rerun of the five \
                   reports on a 2-core host affords: at revision 62d1baa31308 a run of 800 + 1,000 ms took 34 s of host CPU at \
                   64 clients (37.5 million events, `sim-speed:`) and 75 s at 320, so a 1 s window and 10 seeds a map point \
                   would cost this report about 70 minutes of 2 cores, the 500 ms window and 5 seeds about 40. hackbench is not run on the simulator: it charges no pipe copy yet, so hackbench's time is tens \
                   of microseconds there and says nothing.",
        },
        "delayed-dequeue" => SimPlan {
            seeds: 10,
            // schbench -m 2 as the seed ran it: 120 workers per message thread (one per CPU); 2 s
            // of 15 ms requests (about 130 per worker), each seed drawing its own request lengths.
            full: Form {
                smp: "dd-2024",
                params: "runtime_ms=2000,work_us=14500,sleep_us=100,jitter_pct=5",
                points: &["threads=2,workers=120"],
                timeout_s: 0,
            },
            quick: Form { smp: "dd-2024", params: "runtime_ms=300,work_us=14500,sleep_us=100,jitter_pct=5", points: &["threads=2,workers=120"], timeout_s: 0 },
            // Every cost of the profile, the lock model's included: wakeup placement and NOHZ
            // take no machine-wide lock (the LLC scan state and the NOHZ state are lock-free),
            // so the locks left are those Linux has too (docs/SIMULATOR.md, "Speed with the
            // model": 6.3 host s per simulated s with every cost).
            hw: "dd-2024",
            note: "The claim's machine: 2 sockets x 60 cores x 2 threads, 2 nodes (240 CPUs, preset `dd-2024`); schbench \
                   with 2 message threads of 120 workers (schbench's default: one worker per CPU), requests of 100 us of \
                   sleep and 14.5 ms of work, 2 s (the seed ran 100 s); 10 seeds per cell, each drawing its own request lengths.",
        },
        "wake-balance" => SimPlan {
            seeds: 10,
            full: Form {
                smp: "wake-2005",
                params: "",
                points: super::wake_balance::FULL_POINTS,
                timeout_s: 0,
            },
            quick: Form { smp: "wake-2005", params: "", points: &["oltp:procs=24,io_us=800,ms=200"], timeout_s: 0 },
            hw: "wake-2005",
            note: "The dual Xeon (2 sockets x 1 core x 2 threads, preset `wake-2005`) is the qemu form's own machine: \
                   the same points run on both engines, 10 seeds per cell on the simulator (each drawing its own work \
                   and I/O times).",
        },
        "cpu-capacity" => SimPlan {
            seeds: 10,
            full: Form {
                smp: "4",
                params: "",
                points: &["threads=2,ms=200", "threads=3,ms=200", "threads=4,ms=200", "threads=5,ms=200", "threads=6,ms=200"],
                timeout_s: 0,
            },
            quick: Form { smp: "4", params: "", points: &["threads=2,ms=100"], timeout_s: 0 },
            hw: "capacity-2014",
            note: "The qemu form's machines (4 CPUs with CPUs 2-3 at half capacity, and 2 cores x 2 threads), with \
                   `cpu_capacity=`, which the simulator emulates as the kernel does (the mechanism's pressure source takes \
                   (1024 - CAP)/1024 of every tick of the slowed CPU), rather than the `capacity-2014` preset: the variants \
                   pair each rule with one machine, and the same variants on both engines put their figures side by side. \
                   10 seeds per cell (ebizzy's searches draw from the seed).",
        },
        other => panic!("no simulator plan for experiment {other}"),
    }
}
