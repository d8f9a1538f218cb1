//! The `fairway-sim` binary runs the kernel's workload code (`kernel/workloads`)
//! on a simulated machine: each test starts one process per run (the
//! mechanism's state is static) and checks the printed `@fw` lines against
//! values that follow from the inputs and the icount cost model.

mod common;

use std::process::Command;

use common::sim;
use fairway_sim::engine::CostModel;

/// The value of `key=` on the first line starting with `prefix`.
fn field(out: &str, prefix: &str, key: &str) -> u64 {
    let line = out.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no `{prefix}` line in\n{out}"));
    let want = format!("{key}=");
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(want.as_str()))
        .unwrap_or_else(|| panic!("no {key}= in {line}"))
        .parse()
        .unwrap()
}

/// The pipes' own work per round trip: two one-byte messages, each a write
/// and a read.
const PIPE_WORK_NS_PER_ROUND_TRIP: u64 = 4 * fairway_sim::platform::prices::pipe_op_instructions(1) * fairway_sim::platform::NS_PER_INSTRUCTION;

#[test]
fn pipe_on_one_cpu_does_its_rounds_at_the_icount_cost() {
    let (code, out) = sim("1", 0, "workload=pipe,rounds=500,mode=same");
    assert_eq!(code, 0, "{out}");
    assert_eq!(field(&out, "@fw pipe ", "rounds"), 500);
    // Both threads on CPU 0, as mode=same asks.
    assert_eq!((field(&out, "@fw pipe ", "a_cpu"), field(&out, "@fw pipe ", "b_cpu")), (0, 0));
    // The measured window is the model's charges for what the mechanism
    // counted in it: two switches per round trip, and a wakeup for each
    // sleep (a partner preempted at the wakeup needs none later).
    let c = CostModel::ICOUNT;
    let (sw, tw) = (field(&out, "@fw schedstat_delta ", "sched_count"), field(&out, "@fw schedstat_delta ", "ttwu_count"));
    assert!((1000..=1004).contains(&sw), "{sw} switches for 500 round trips");
    assert!((500..=1000).contains(&tw), "{tw} wakeups for 500 round trips");
    let model = (sw * c.switch_ns + tw * c.wakeup_ns + 500 * PIPE_WORK_NS_PER_ROUND_TRIP) / 500;
    let per = field(&out, "@fw pipe ", "ns_per_round_trip");
    assert!((model.saturating_sub(10)..=model + 10).contains(&per), "ns per round trip {per}, the model's {model}");
    let mut woken = 0;
    for name in ["pipe-a", "pipe-b"] {
        let line = out.lines().find(|l| l.starts_with("@fw taskstat") && l.contains(&format!("name={name} "))).unwrap();
        woken += line.split_whitespace().find_map(|w| w.strip_prefix("nr_wakeups=")).unwrap().parse::<u64>().unwrap();
        assert!(line.contains(" nr_migrations=0 "), "{line}");
    }
    // The CPU's wakeups are the pair's, and init's at the join.
    assert!(woken <= tw && tw - woken <= 2, "the pair woke {woken} times, the CPU counted {tw}");
    assert!(out.contains("@fw workload_done name=pipe ok=1"), "{out}");
}

#[test]
fn hogs_share_one_cpu_by_weight() {
    // Three hogs (nice 0, 5, -5: weights 1024, 335, 3121) on CPU 0 for 200 ms:
    // the hogs' loops take virtual time only through `work_done`, so their
    // runtimes add up to the 200 ms and split by weight.
    let (code, out) = sim("1", 0, "workload=shares,cpu=0,ms=200");
    assert_eq!(code, 0, "{out}");
    let weights = [(0i64, 1024u64), (5, 335), (-5, 3121)];
    let total_w: u64 = weights.iter().map(|w| w.1).sum();
    let runs: Vec<u64> = weights
        .iter()
        .map(|(nice, _)| {
            let line = out.lines().find(|l| l.starts_with("@fw share ") && l.contains(&format!(" nice={nice} "))).unwrap();
            field(line, "@fw share", "runtime_ns")
        })
        .collect();
    let total: u64 = runs.iter().sum();
    assert!((195_000_000..=205_000_000).contains(&total), "the hogs ran {total} ns of 200 ms");
    for ((_, w), run) in weights.iter().zip(&runs) {
        let want = total * w / total_w;
        assert!(run.abs_diff(want) <= total / 50, "runtime {run} ns, weight share {want} ns (of {total}): {runs:?}");
    }
}

#[test]
fn the_same_seed_replays_the_same_run() {
    let a = sim("4", 7, "workload=hackbench,groups=1,loops=20");
    let b = sim("4", 7, "workload=hackbench,groups=1,loops=20");
    assert_eq!(a.0, 0, "{}", a.1);
    assert_eq!(a, b);
}

#[test]
fn a_bad_option_gets_the_kernels_message() {
    let (code, out) = sim("2", 0, "workload=pipe,bogus=1");
    assert_eq!(code, 2, "{out}");
    let msg = "workload=pipe: unknown parameter \"bogus\" (pipe takes rounds, mode, wss_kb); ignored";
    assert!(out.lines().any(|l| l == format!("cmdline: {msg}")), "{out}");
    assert!(out.lines().any(|l| l == format!("@fw cmdline_problem msg={msg}")), "{out}");
    // Refused, not run with a default.
    assert!(!out.contains("@fw workload "), "{out}");
    let (code, out) = sim("2", 0, "workload=nosuch");
    assert_eq!(code, 2);
    assert!(out.contains("cmdline: workload=\"nosuch\": unknown workload"), "{out}");
}

#[test]
fn what_the_simulator_cannot_run_is_refused_by_name() {
    let (code, out) = sim("1", 0, "workload=overflow");
    assert_eq!(code, 2);
    assert!(out.contains("cmdline: workload=overflow: the simulator cannot run it: "), "{out}");
    // The fault modes that spin on the clock, by name, with those that run.
    let (code, out) = sim("1", 0, "workload=pipe fault=spurious_wake,cpu_stall");
    assert_eq!(code, 2);
    let msg = "fault=cpu_stall: not modelled by the simulator (it spins until the clock moves, and a simulated CPU's clock stands still while its code runs); run it under QEMU (`cargo xtask run`), or use spurious_wake,preempt_points";
    assert!(out.lines().any(|l| l == format!("@fw cmdline_problem msg={msg}")), "{out}");
    assert!(!out.contains("@fw faults"), "nothing ran: {out}");
}

/// A Linux feature fairway does not implement is refused by name, as the
/// kernel refuses it, and the simulator then runs nothing.
#[test]
fn a_linux_only_feature_is_refused_by_name() {
    let (code, out) = sim("2", 0, "workload=pipe,rounds=10 sched_features=NO_DELAY_DEQUEUE,HRTICK");
    assert_eq!(code, 2, "{out}");
    let msg = "sched_features: HRTICK is a Linux feature fairway does not implement (slices end at the scheduler tick \
               (hz=), with no high-resolution timer per slice); ignoring HRTICK, the other features apply";
    assert!(out.lines().any(|l| l == format!("@fw cmdline_problem msg={msg}")), "{out}");
    assert!(!out.contains("@fw workload "), "{out}");
}

/// The reschedule IPIs and the remote wakeups (`ttwu_count - ttwu_local`)
/// of a run's measured window, over every CPU.
fn ipis_and_remote_wakeups(out: &str) -> (u64, u64) {
    let sum = |key: &str| -> u64 { out.lines().filter(|l| l.starts_with("@fw schedstat_delta ")).map(|l| field(l, "@fw schedstat_delta ", key)).sum() };
    (sum("resched_ipis"), sum("ttwu_count") - sum("ttwu_local"))
}

/// TTWU_QUEUE through the simulator's bring-up of each CPU (the kernel's
/// `mech::entry::sched_cpu_starting`): hackbench's senders and receivers
/// wake each other onto busy CPUs. With the wake list (the default) most
/// remote wakeups kick their target with an IPI; with NO_TTWU_QUEUE the
/// waker enqueues on the target's runqueue itself and interrupts only a CPU
/// that must switch to the wakee, so few do (measured: 569 IPIs for 870
/// remote wakeups, and 109 for 1741).
#[test]
fn without_ttwu_queue_a_wakeup_onto_a_busy_cpu_costs_no_ipi() {
    let run = |features: &str| {
        let (code, out) = sim("4", 0, &format!("workload=hackbench,groups=2,loops=100{features}"));
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("@fw workload_done name=hackbench ok=1"), "{out}");
        ipis_and_remote_wakeups(&out)
    };
    let (ipis, remote) = run("");
    assert!(remote > 500 && 2 * ipis > remote, "TTWU_QUEUE: {ipis} IPIs for {remote} remote wakeups");
    let (ipis, remote) = run(" sched_features=NO_TTWU_QUEUE");
    assert!(remote > 500 && 4 * ipis < remote, "NO_TTWU_QUEUE: {ipis} IPIs for {remote} remote wakeups");
}

/// `fault=preempt_points` runs in the simulator through the shared hooks:
/// each injected preemption asks for a reschedule and sends a reschedule IPI
/// to the task's own CPU, taken (and counted in `resched_ipis`) by the
/// mechanism's handler, `mech::entry::scheduler_ipi`. On one CPU the pipe
/// takes no IPI at all without it. (That the handler's preemption acts is
/// `mech_resched_ipi_preempts.rs`'s test: here the woken pipe task is mostly
/// the only one runnable, so a preemption picks it again.)
#[test]
fn preempt_points_preempt_through_the_shared_ipi_handler() {
    const ROUNDS: u64 = 500;
    let (code, plain) = sim("1", 0, &format!("workload=pipe,rounds={ROUNDS},mode=same"));
    assert_eq!(code, 0, "{plain}");
    assert_eq!(field(&plain, "@fw schedstat cpu=0", "resched_ipis"), 0);
    // Two switches per round trip, and the init thread's start, joins and end.
    assert_eq!(field(&plain, "@fw schedstat cpu=0", "sched_count"), 2 * ROUNDS + 5);
    let (code, out) = sim("1", 0, &format!("workload=pipe,rounds={ROUNDS},mode=same fault=preempt_points"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("fault injection: preempt_points (seed 1), from the workload's start"), "{out}");
    let injected = field(&out, "@fw faults", "preempt_injected");
    let ipis = field(&out, "@fw schedstat cpu=0", "resched_ipis");
    // One in 8 of the preemption points (two wakeups and two waits per round).
    assert!((ROUNDS / 4..=ROUNDS).contains(&injected), "{injected} injected in {ROUNDS} rounds");
    // Each injection sent one IPI; one still in flight when another is sent
    // is taken once, as an x86 APIC merges a pending vector.
    assert!(ipis > 0 && ipis <= injected, "{ipis} IPIs taken for {injected} injected");
    // The reschedules asked for add schedule() calls.
    assert!(field(&out, "@fw schedstat cpu=0", "sched_count") > 2 * ROUNDS + 5, "{out}");
}

#[test]
fn hackbench_on_one_cpu_takes_the_kernels_time() {
    // The messages' copies and the pipes' bookkeeping take the time they
    // take the kernel under -icount (`fairway_sim::platform::prices::pipe_op_instructions`,
    // the platform's price of the pipe's `Work::PipeCopy`): 8000 messages of 1 and of 100 bytes.
    // Kernel: `cargo xtask run --icount --smp 1 --append
    // workload=hackbench,groups=1,loops=20,datasize=D` at 7332c1d, `ns=`.
    for (datasize, kernel_ns) in [(1u64, 2_261_538u64), (100, 3_238_910)] {
        let (code, out) = sim("1", 0, &format!("workload=hackbench,groups=1,loops=20,datasize={datasize}"));
        assert_eq!(code, 0, "{out}");
        assert_eq!(field(&out, "@fw hackbench ", "messages_received"), 8000);
        let ns = field(&out, "@fw hackbench ", "ns");
        assert!(ns.abs_diff(kernel_ns) * 100 <= kernel_ns * 5, "datasize={datasize}: {ns} ns, the kernel's {kernel_ns}");
    }
}

#[test]
fn a_balance_pass_takes_the_kernels_time() {
    // Each balance pass reports its work (`Work::BalancePass`, priced by
    // `fairway_sim::platform::prices::balance_pass_instructions`: a fixed
    // part and each CPU of the span), so
    // newidle's own clock reads measure it, and `max_newidle_lb_cost`, which
    // the gate holds `avg_idle` against, is the cost of one pass (no pass of
    // this run redoes). Before, the passes took no time: time_ns=0, cost 0.
    for (machine, cpus) in [("2", 2u64), ("4", 4)] {
        let (code, out) = sim(machine, 0, "workload=fserver,ms=100");
        assert_eq!(code, 0, "{out}");
        let pass = fairway_sim::platform::prices::balance_pass_instructions(cpus) * fairway_sim::platform::NS_PER_INSTRUCTION;
        let mut attempts = 0;
        for line in out.lines().filter(|l| l.starts_with("@fw newidle_sd ")) {
            let get = |k: &str| -> u64 { line.split_whitespace().find_map(|w| w.strip_prefix(k)).unwrap().parse().unwrap() };
            let (n, t) = (get("attempts="), get("time_ns="));
            attempts += n;
            assert_eq!(t, n * pass, "{line}");
            if n > 0 {
                assert_eq!(get("max_newidle_lb_cost="), pass, "{line}");
            }
        }
        assert!(attempts > 0, "no newidle pass at --machine {machine}:\n{out}");
    }
}

/// Runs `fairway-sim` as [`sim`] does, but gives up after `secs` of host time
/// (a run that never finishes fails the test instead of hanging it).
fn sim_within(secs: u64, machine: &str, cmdline: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fairway-sim"))
        .args(["--machine", machine, "--", cmdline])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run fairway-sim");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(st) = child.try_wait().expect("wait for fairway-sim") {
            let mut out = String::new();
            std::io::Read::read_to_string(child.stdout.as_mut().unwrap(), &mut out).unwrap();
            return (st.code().unwrap_or(-1), out);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("fairway-sim --machine {machine} -- {cmdline:?} ran longer than {secs} s of host time");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The hogs' runtimes (Σ `runtime_ns` of `@fw share`) and CPU `cpu`'s
/// `pressure_ns` (`@fw schedstat`).
fn hogs_and_pressure(out: &str, cpu: u32) -> (u64, u64) {
    let hogs = out.lines().filter(|l| l.starts_with("@fw share ")).map(|l| field(l, "@fw share", "runtime_ns")).sum();
    let line = out.lines().find(|l| l.starts_with("@fw schedstat ") && l.contains(&format!(" cpu={cpu} "))).unwrap_or_else(|| panic!("no schedstat of CPU {cpu}\n{out}"));
    (hogs, field(line, "@fw schedstat", "pressure_ns"))
}

/// `cpu_capacity=` as the kernel emulates it (balance/capacity.rs): a CPU
/// at 512 loses half of every tick to the pressure source, so hogs pinned
/// there for 200 ms run 100 ms between them, and its `pressure_ns` is the
/// other 100 ms.
#[test]
fn cpu_capacity_slows_the_cpu_it_names() {
    let (code, out) = sim_within(60, "2", "workload=shares,cpu=1,ms=200 cpu_capacity=1:512");
    assert_eq!(code, 0, "{out}");
    let (hogs, pressure) = hogs_and_pressure(&out, 1);
    assert!((97_000_000..=103_000_000).contains(&hogs), "the hogs ran {hogs} ns of 200 ms at half capacity");
    assert!((97_000_000..=103_000_000).contains(&pressure), "pressure_ns {pressure} of 200 ms at half capacity");
    // The CPU at full capacity loses nothing.
    assert_eq!(hogs_and_pressure(&out, 0).1, 0);
    // A CPU the machine does not have: the kernel's message, and refused.
    let (code, out) = sim_within(60, "2", "workload=pipe,rounds=10 cpu_capacity=5:512");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("cmdline: cpu_capacity: CPU 5 capacity 512 is not an online CPU (online: 2)"), "{out}");
}

/// The `capacity-2014` preset's little CPUs (0 and 1 at 512) are slowed the
/// same way.
#[test]
fn the_capacity_preset_runs_its_little_cpus_at_half_speed() {
    let (code, out) = sim_within(60, "capacity-2014", "workload=shares,cpu=0,ms=100");
    assert_eq!(code, 0, "{out}");
    let (hogs, pressure) = hogs_and_pressure(&out, 0);
    assert!((48_000_000..=52_000_000).contains(&hogs), "the hogs ran {hogs} ns of 100 ms on a little CPU");
    assert!((48_000_000..=52_000_000).contains(&pressure), "pressure_ns {pressure}");
    assert_eq!(hogs_and_pressure(&out, 2).1, 0, "CPU 2 is big");
}

#[test]
fn the_icount_profile_changes_nothing_and_a_bad_profile_is_refused() {
    // `--hw icount` is the run without the hardware model: the same events
    // (digest) and bytes as no `--hw`, and every hardware cost 0.
    let line = "workload=hackbench,groups=1,loops=10";
    let run = |hw: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fairway-sim"));
        c.args(["--machine", "8,sockets=2,cores=2,threads=2", "--seed", "3"]);
        if let Some(h) = hw {
            c.args(["--hw", h]);
        }
        let out = c.args(["--", line]).output().expect("run fairway-sim");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, plain, _) = run(None);
    let (code2, icount, _) = run(Some("icount"));
    assert_eq!((code, code2), (Some(0), Some(0)), "{plain}");
    assert_eq!(plain, icount);
    let costs: Vec<&str> = plain.lines().filter(|l| l.starts_with("@fw hwcost ")).collect();
    assert_eq!(costs.len(), 8, "one @fw hwcost line per CPU");
    for l in costs {
        for k in ["refill_ns", "remote_ns", "lock_wait_ns", "ipi_ns", "idle_exit_ns"] {
            assert_eq!(field(l, "@fw hwcost", k), 0, "{l}");
        }
    }
    assert!(plain.contains("@fw hw profile=icount "), "{plain}");
    // A machine's profile moves the same run (its costs act).
    let (code, sis, _) = run(Some("sis-2021"));
    assert_eq!(code, Some(0));
    let digest = |out: &str| out.lines().find(|l| l.starts_with("sim: ")).unwrap().rsplit("digest=").next().unwrap().to_string();
    assert_ne!(digest(&sis), digest(&plain));
    assert!(sis.lines().any(|l| l.starts_with("@fw hwcost ") && !l.contains(" refill_ns=0 ")), "some CPU refilled:\n{sis}");
    // A bad key is named, with the keys there are; the run does not start.
    let (code, out, err) = run(Some("sis-2021,refil_scale=2"));
    assert_eq!(code, Some(2), "{out}");
    assert!(err.contains("unknown key `refil_scale`") && err.contains("refill_scale"), "{err}");
}
