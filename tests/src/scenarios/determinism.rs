//! Every other workload booted twice in instruction time: identical logs.
//! Part of [`super::all`]; the scenario type, shared constants and checks are in `scenarios.rs`.

use super::*;

pub(super) fn scenarios() -> Vec<Scenario> {
    vec![
        // Every other workload of `workload=`, each booted twice in instruction time as
        // `cargo xtask bench` boots it (no `sched_debug`), with short parameters: the two serial
        // logs must be identical (`deterministic!`). storm at -smp 1, 2 and 4 runs fewer threads
        // than it takes to keep every CPU busy, so all CPUs go idle thousands of times: with
        // `idle=halt` two boots of either multi-CPU form differ (QEMU's clock jump when every
        // vCPU halts, docs/BENCHMARKS.md), with `idle=last_polls` they agree.
        deterministic!("demo", 2, "workload=demo,ms=50"),
        deterministic!("shares", 2, "workload=shares,cpu=1,ms=100"),
        deterministic!("storm", 1, "workload=storm,threads=2,ms=100", default),
        deterministic!("storm", 2, "workload=storm,threads=6,ms=150", default),
        deterministic!("storm", 4, "workload=storm,threads=4,ms=300", default),
        deterministic!("latency", 2, "workload=latency,cpu=1,hogs=2,period_us=1000,samples=50"),
        deterministic!("affinity", 2, "workload=affinity,ms=100"),
        deterministic!("pipe", 2, "workload=pipe,rounds=2000,mode=cross"),
        deterministic!("yield", 1, "workload=yield,rounds=2000"),
        deterministic!("regs", 1, "workload=regs,rounds=200,preemptions=3"),
        deterministic!("overflow", 2, "workload=overflow", Outcome::Exception),
        deterministic!("schbench", 2, "workload=schbench,threads=1,workers=2,runtime_ms=100,work_us=200,sleep_us=100"),
        deterministic!("ebizzy", 2, "workload=ebizzy,threads=2,chunks=4,records=256,ms=100"),
        deterministic!("tbench", 2, "workload=tbench,clients=2,req=256,reply=4096,server_us=5,ms=100"),
        deterministic!("fserver", 2, "workload=fserver,threads=4,burst_us=50,sleep_us=100,ms=100"),
        deterministic!("spread", 2, "workload=spread,hogs=2,start_cpu=0,ms=100"),
        deterministic!("prodcons", 2, "workload=prodcons,pairs=2,ms=100,hogs=1"),
        deterministic!("idleperiods", 2, "workload=idleperiods,threads=3,ms=100 seed=3"),
        deterministic!("pipes", 2, "workload=pipes,pairs=2,rounds=500"),
        deterministic!("oltp", 2, "workload=oltp,procs=6,ms=100 seed=2"),
        deterministic!("wakeplace", 2, "workload=wakeplace,waker=0,prev=1,hog_mask=1,light_mask=2,rounds=20,warm_ms=20"),
        deterministic!("torture", 2, "workload=torture,ms=100,seed=1"),
        deterministic!("utilest", 2, "workload=utilest,burst_ms=20,sleep_ms=40,ms=20"),
        deterministic!("renice", 1, "workload=renice,cpu=0,rounds=10"),
        deterministic!("help", 1, "workload=help"),
        Scenario {
            name: "bench-schbench-smp2",
            icount: true,
            smp: "2",
            append: BENCH_SCHBENCH,
            check: |log| check_schbench(log, 2, BENCH_SCHBENCH),
            ..BASE
        },
        Scenario {
            name: "bench-ebizzy-smp2",
            icount: true,
            smp: "2",
            append: BENCH_EBIZZY,
            check: |log| check_ebizzy(log, 2, BENCH_EBIZZY),
            ..BASE
        },
        Scenario {
            name: "bench-tbench-smp2",
            icount: true,
            smp: "2",
            append: BENCH_TBENCH,
            check: |log| check_tbench(log, 2, BENCH_TBENCH),
            ..BASE
        },
        Scenario {
            name: "bench-fserver-smp2",
            icount: true,
            smp: "2",
            append: BENCH_FSERVER,
            check: |log| check_fserver(log, 2, BENCH_FSERVER),
            ..BASE
        },
    ]
}
