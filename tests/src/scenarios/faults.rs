//! Fault injection and the tortures.
//! Part of [`super::all`]; the scenario type, shared constants and checks are in `scenarios.rs`.

use super::*;

pub(super) fn scenarios() -> Vec<Scenario> {
    vec![
        // Fault injection (kernel/mech/src/fault.rs): the torture must balance its books under each
        // mode, and each mode must show it was injected and did what it is for (ipi_delay's
        // effect is shown on the storm, whose rounds it slows). Under -icount,
        // so that each boot is one exact run of its seed.
        Scenario {
            name: "faults-ipi-delay",
            icount: true,
            append: "sched_debug=1 fault=ipi_delay workload=storm,threads=16,ms=250",
            check: check_storm_faults,
            // the same storm without faults: the held IPIs slowed the hand-offs
            versus: Some(Versus { append: "sched_debug=1 workload=storm,threads=16,ms=250", compare: compare_ipi_delay }),
            ..BASE
        },
        Scenario {
            name: "faults-ipi-delay-torture",
            icount: true,
            append: "sched_debug=1 fault=ipi_delay workload=torture,ms=250,seed=1",
            check: check_torture_faults::<4, 250, 1>,
            ..BASE
        },
        Scenario {
            name: "faults-ipi-reorder",
            icount: true,
            append: "sched_debug=1 fault=ipi_reorder workload=torture,ms=250,seed=2",
            check: check_torture_faults::<4, 250, 2>,
            ..BASE
        },
        Scenario {
            name: "faults-spurious-wake",
            icount: true,
            append: "sched_debug=1 fault=spurious_wake workload=torture,ms=250,seed=3",
            check: check_torture_faults::<4, 250, 3>,
            ..BASE
        },
        Scenario {
            name: "faults-preempt-points",
            icount: true,
            append: "sched_debug=1 fault=preempt_points workload=torture,ms=250,seed=4",
            check: check_torture_faults::<4, 250, 4>,
            ..BASE
        },
        Scenario {
            name: "faults-cpu-stall",
            icount: true,
            append: "sched_debug=1 fault=cpu_stall workload=torture,ms=250,seed=5",
            check: check_torture_faults::<4, 250, 5>,
            ..BASE
        },
        Scenario {
            name: "faults-all",
            icount: true,
            append: "sched_debug=1 fault=ipi_delay,ipi_reorder,spurious_wake,preempt_points,cpu_stall fault_seed=7 workload=torture,ms=250,seed=6",
            check: check_torture_faults::<4, 250, 6>,
            ..BASE
        },
        Scenario {
            // The mark of a reschedule IPI on its way (kernel/src/arch/wait.rs): CPU 1's idle loop
            // holds its interrupts off until the waker on CPU 0 wakes its sleeper, so each wait
            // starts with the IPI pending; the sleeper must run within microseconds. CPU 1 is
            // neither the waker's CPU (QEMU must run the waker while CPU 1 holds: kernel/mech/
            // src/fault.rs) nor the poller (CPU 2, which polls with interrupts on and takes the
            // IPI at once). Under -icount, so that each boot is one exact run.
            name: "idle-ipi-coming-smp3",
            icount: true,
            smp: "3",
            append: IPI_COMING,
            check: check_idle_ipi_coming,
            timeout_s: 30,
            ..BASE
        },
        Scenario {
            name: "faults-malformed",
            smp: "1",
            append: FAULT_MALFORMED,
            check: check_fault_malformed,
            complaints: true,
            ..BASE
        },
        Scenario {
            name: "faults-seed-alone",
            smp: "1",
            append: FAULT_SEED_ALONE,
            check: check_fault_malformed,
            complaints: true,
            ..BASE
        },
        Scenario {
            // Every thread operation at random, the books balanced at the end. In wall
            // time: under -icount 2 s of guest time at -smp 4 took 136 s of host time.
            name: "torture-smp4",
            smp: "4",
            append: "sched_debug=1 workload=torture,ms=5000,seed=1",
            check: check_torture::<4, 5000, 1>,
            ..BASE
        },
        Scenario {
            // The 60-second torture at -smp 8: it fits in the default run because the boot's busy
            // waits cost no seconds of host time per boot (docs/BENCHMARKS.md, "Boot cost"), and
            // because its eight vCPUs take turns in one host thread, one slot: with a thread per
            // vCPU it took both slots for its 60 s and did fewer operations (63,613 mutex
            // acquisitions against 83,598 in one thread, kernel of b504e25: eight vCPU threads
            // on two host cores mostly wait for each other). `torture-smp4` keeps a thread per
            // vCPU, so the default run still has vCPUs that truly run at once.
            name: "torture-smp8-60s",
            smp: "8",
            append: "sched_debug=1 workload=torture,ms=60000,seed=18",
            tcg_single_thread: true,
            timeout_s: 120,
            check: check_torture::<8, 60000, 18>,
            ..BASE
        },
        Scenario {
            // The cpu_capacity= pressure is booked once. CPU 1 at capacity 256 polls
            // when idle (its tick stays on), so the source also runs in idle periods: its time
            // is 3/4 of CPU 1's run and is not counted again as idle time in the books.
            name: "torture-pressure-books-smp2",
            icount: true,
            smp: "2",
            append: "sched_debug=1 idle=poll cpu_capacity=1:256 workload=torture,ms=300,seed=1,threads=2",
            check: check_torture_pressure::<256, 300, 1>,
            ..BASE
        },
        Scenario {
            name: "latency-smp1",
            // Wall-clock latencies under TCG are the host's (load average 8 on 2 cores gave
            // p99 3-20 ms); in instruction time the kernel's own latency shows (p99 6 us at
            // -smp 1, 1.0 ms at -smp 2).
            icount: true,
            smp: "1",
            append: "sched_debug=1 workload=latency,cpu=0,hogs=2,samples=300",
            check: check_latency::<1, 0, 0>,
            ..BASE
        },
        Scenario {
            name: "renice-resched-smp1",
            // A hog past its protected slice renices a waiting one: the renice's dequeue
            // charges the hog and asks for a reschedule, and the CPU switches at once (8 us
            // in instruction time), not at the next tick (about 500 us later).
            icount: true,
            smp: "1",
            append: "sched_debug=1 workload=renice,cpu=0",
            check: check_renice::<1, 0>,
            ..BASE
        },
        Scenario {
            name: "latency-smp2",
            // Wall-clock latencies under TCG are the host's (load average 8 on 2 cores gave
            // p99 3-20 ms); in instruction time the kernel's own latency shows (p99 6 us at
            // -smp 1, 1.0 ms at -smp 2).
            icount: true,
            smp: "2",
            append: "sched_debug=1 workload=latency,cpu=1,hogs=2,samples=300",
            check: check_latency::<2, 1, 0>,
            ..BASE
        },
        Scenario {
            name: "latency-short-slice-smp1",
            // The sleeper asks for a 0.1 ms slice (sched_attr.sched_runtime); the hogs keep the
            // 0.7 ms base slice. PREEMPT_SHORT lets its wakeup preempt a hog inside its request.
            icount: true,
            smp: "1",
            append: "sched_debug=1 workload=latency,cpu=0,hogs=2,samples=300,slice_us=100",
            check: check_latency::<1, 0, 100>,
            ..BASE
        },
        Scenario {
            name: "affinity-smp4",
            smp: "4",
            append: "sched_debug=1 workload=affinity,ms=1000",
            check: check_affinity::<4>,
            ..BASE
        },
        Scenario {
            name: "affinity-smp8",
            smp: "8",
            append: "sched_debug=1 workload=affinity,ms=1000",
            slots: 2,
            check: check_affinity::<8>,
            ..BASE
        },
        Scenario {
            name: "pipe-same-smp1",
            icount: true, // wakeup counts in wall time follow host load (PIPE_MIN_WAKEUPS_PERCENT)
            smp: "1",
            append: "sched_debug=1 workload=pipe,rounds=100000,mode=same",
            check: check_pipe::<1, false, false>,
            ..BASE
        },
        Scenario {
            // A voluntary switch keeps the callee-saved registers (boot/isr.S `schedule_call`):
            // resumed by its own return path, and by `restore_frame` beside a preempted hog.
            name: "regs-smp1",
            icount: true,
            smp: "1",
            append: "sched_debug=1 workload=regs,rounds=2000,preemptions=20",
            check: check_regs::<2000, 20, 1>,
            ..BASE
        },
        Scenario {
            // The same across two CPUs, and a sleeper on CPU 1 that CPU 0 wakes while CPU 1
            // idles: resumed from the reschedule IPI (`irq_resched`'s resume of a frame
            // `schedule_call` saved).
            name: "regs-smp2",
            icount: true,
            smp: "2",
            append: "sched_debug=1 workload=regs,rounds=500,preemptions=20",
            check: check_regs::<500, 20, 2>,
            ..BASE
        },
        Scenario {
            name: "delay-dequeue",
            icount: true,
            smp: "1",
            append: "sched_debug=1 workload=pipe,rounds=100000,mode=same",
            check: check_delay_dequeue::<true>,
            ..BASE
        },
        Scenario {
            name: "delay-dequeue-off",
            icount: true,
            smp: "1",
            append: "sched_debug=1 sched_features=NO_DELAY_DEQUEUE workload=pipe,rounds=100000,mode=same",
            check: check_delay_dequeue::<false>,
            ..BASE
        },
        Scenario {
            name: "pipe-same-smp2",
            icount: true, // wakeup counts in wall time follow host load (PIPE_MIN_WAKEUPS_PERCENT)
            smp: "2",
            append: "sched_debug=1 workload=pipe,rounds=100000,mode=same",
            check: check_pipe::<2, false, false>,
            ..BASE
        },
        Scenario {
            name: "pipe-cross-smp2",
            icount: true, // wakeup counts in wall time follow host load (PIPE_MIN_WAKEUPS_PERCENT)
            smp: "2",
            append: "sched_debug=1 workload=pipe,rounds=100000,mode=cross",
            check: check_pipe::<2, true, false>,
            ..BASE
        },
        Scenario {
            name: "trace-pipe-cross-smp2",
            icount: true,
            smp: "2",
            append: "sched_debug=1 trace=1 workload=pipe,rounds=500,mode=cross",
            check: check_trace_pipe,
            ..BASE
        },
        Scenario {
            name: "pipe-cross-idle-poll-smp2",
            icount: true, // wakeup counts in wall time follow host load (PIPE_MIN_WAKEUPS_PERCENT)
            smp: "2",
            append: "sched_debug=1 idle=poll workload=pipe,rounds=100000,mode=cross",
            check: check_pipe::<2, true, true>,
            ..BASE
        },
        Scenario {
            name: "pipe-cross-smp8",
            icount: true, // wakeup counts in wall time follow host load (PIPE_MIN_WAKEUPS_PERCENT)
            smp: "8",
            append: "sched_debug=1 workload=pipe,rounds=100000,mode=cross",
            slots: 2,
            timeout_s: 120,
            check: check_pipe::<8, true, false>,
            ..BASE
        },
        Scenario {
            name: "crash-stack-overflow",
            smp: "2",
            append: "sched_debug=1 workload=overflow",
            expect: Outcome::Exception,
            check: check_overflow::<2>,
            ..BASE
        },
        Scenario {
            name: "sched-features",
            smp: "2",
            append: "sched_debug=1 sched_features=NO_DELAY_DEQUEUE,NO_RUN_TO_PARITY workload=shares,cpu=1,ms=500",
            check: check_features,
            ..BASE
        },
        Scenario {
            name: "sched-features-bogus",
            smp: "2",
            append: "sched_debug=1 sched_features=BOGUS workload=shares,cpu=1,ms=500",
            check: check_features_bogus,
            complaints: true,
            ..BASE
        },
        Scenario {
            name: "ttwu-queue-off-torture-smp4",
            smp: "4",
            append: "sched_debug=1 sched_features=NO_TTWU_QUEUE workload=torture,ms=2000,seed=3",
            check: check_torture_no_ttwu_queue,
            ..BASE
        },
        Scenario {
            name: "sched-features-linux-only",
            smp: "2",
            append: "sched_debug=1 sched_features=HRTICK,NO_DELAY_DEQUEUE,NO_RT_PUSH_IPI workload=shares,cpu=1,ms=500",
            check: check_features_linux_only,
            complaints: true,
            ..BASE
        },
    ]
}
