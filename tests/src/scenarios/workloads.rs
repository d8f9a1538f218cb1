//! The scheduler's workloads with the invariant checks on.
//! Part of [`super::all`]; the scenario type, shared constants and checks are in `scenarios.rs`.

use super::*;

pub(super) fn scenarios() -> Vec<Scenario> {
    vec![
        // The scheduler's workloads (kernel/workloads/src/), all with the invariant checks on
        // (`sched_debug=1`: a violation panics, so the exit status fails the scenario). The
        // checks' parameters (-smp, pinned CPU, threads, mode) repeat the `append` values; the
        // unit tests' synthetic logs are generated from `append`, so a mismatch fails them.
        Scenario {
            name: "shares-smp1",
            smp: "1",
            append: "sched_debug=1 workload=shares,cpu=0,ms=2000",
            check: check_shares::<1, 0>,
            ..BASE
        },
        Scenario {
            name: "shares-smp2",
            smp: "2",
            append: "sched_debug=1 workload=shares,cpu=1,ms=2000",
            check: check_shares::<2, 1>,
            ..BASE
        },
        Scenario {
            name: "shares-pressure",
            smp: "2",
            icount: true,
            append: "sched_debug=1 cpu_capacity=1:512 workload=shares,cpu=1,ms=250",
            check: check_shares_pressure,
            ..BASE
        },
        Scenario {
            name: "shares-smp8",
            smp: "8",
            append: "sched_debug=1 workload=shares,cpu=1,ms=2000",
            slots: 2,
            check: check_shares::<8, 1>,
            ..BASE
        },
        Scenario {
            name: "storm-smp1",
            smp: "1",
            append: "sched_debug=1 workload=storm,threads=16,ms=2000",
            check: check_storm::<1, 16>,
            ..BASE
        },
        Scenario {
            name: "storm-smp8",
            smp: "8",
            append: "sched_debug=1 workload=storm,threads=64,ms=5000",
            slots: 2,
            check: check_storm::<8, 64>,
            ..BASE
        },
    ]
}
