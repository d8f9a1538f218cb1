//! The benchmark workloads, each run accounted for.
//! Part of [`super::all`]; the scenario type, shared constants and checks are in `scenarios.rs`.

use super::*;

pub(super) fn scenarios() -> Vec<Scenario> {
    vec![
        // The benchmark workloads (`cargo xtask bench`'s): each run accounted for (messages,
        // requests, bytes), its report consistent with its `@fw` records and results, and a
        // `@fw schedstat_delta` per CPU. In instruction time, short runs (3-6 s of wall time
        // each); every parameter a check uses is written out in the command line, which the
        // check reads (`workload_params`).
        Scenario {
            name: "bench-hackbench-smp2",
            icount: true,
            smp: "2",
            append: BENCH_HACKBENCH,
            check: |log| check_hackbench(log, 2, BENCH_HACKBENCH),
            ..BASE
        },
        Scenario {
            // The most cross-CPU wakeups: 80 threads on 4 CPUs, and every CPU must have woken
            // threads on another.
            name: "bench-hackbench-smp4",
            icount: true,
            smp: "4",
            append: BENCH_HACKBENCH,
            check: |log| check_hackbench(log, 4, BENCH_HACKBENCH),
            ..BASE
        },
        Scenario {
            // Deterministic mode, the harness's `--icount`: the same settings twice give the same
            // serial output, line for line (figures, counters, every CPU's schedstat), with
            // cross-CPU wakeups, IPIs and balancing on 4 CPUs. A cheaper hackbench than above:
            // the point is the second boot, not the load.
            name: "icount-deterministic-smp4",
            icount: true,
            smp: "4",
            append: BENCH_HACKBENCH_SHORT,
            check: |log| check_hackbench(log, 4, BENCH_HACKBENCH_SHORT),
            versus: Some(Versus { append: BENCH_HACKBENCH_SHORT, compare: compare_identical }),
            ..BASE
        },
    ]
}
