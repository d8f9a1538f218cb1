//! The workloads that rebuild the debates' setups (docs/experiments/) do
//! what they claim on the simulator: each test runs `fairway-sim` (one
//! process per run, the mechanism's state is static) and reads the `@fw`
//! lines the kernel prints.

mod common;

use common::sim;

/// Σ over the lines starting with `prefix` of `key=`.
fn sum(out: &str, prefix: &str, key: &str) -> u64 {
    let want = format!("{key}=");
    out.lines()
        .filter(|l| l.starts_with(prefix))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix(want.as_str())))
        .map(|v| v.parse::<u64>().unwrap())
        .sum()
}

/// The `sim:` line's digest.
fn digest(out: &str) -> &str {
    out.lines().find(|l| l.starts_with("sim: ")).and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix("digest="))).unwrap()
}

/// `idleperiods` with its defaults, one thread per CPU: the CPUs' idle
/// periods are the 2013 thread's (about 200 us most of the time, about
/// 1.2 ms one time in ten), as the kernel's own idle-period histogram
/// measures them; and the 2013 gate opens on them far more often with the
/// 2x snap rule than with Jason Low's 1.5x average or Rik van Riel's 1.5x
/// delta, in that order.
#[test]
fn idleperiods_makes_the_2013_idle_periods_and_the_rules_open_the_gate_differently() {
    let run = |rule: &str| {
        let (code, out) = sim("8", 1, &format!("workload=idleperiods,ms=300,spread=1 {rule} newidle_gate=migration_cost ni_random=off"));
        assert_eq!(code, 0, "{out}");
        out
    };
    let snap = run("avg_idle_clamp=snap avg_idle_ceiling=200");
    let h: Vec<u64> = ["lt_125us", "lt_250us", "lt_500us", "lt_1ms", "lt_2ms", "ge_2ms"].iter().map(|b| sum(&snap, "@fw idle_period_hist ", b)).collect();
    let all: u64 = h.iter().sum();
    let long = h[3] + h[4];
    assert!(all > 5000, "{h:?}");
    assert!(h[1] * 100 >= all * 80, "most idle periods are 150-250 us: {h:?}");
    assert!((all * 6..=all * 14).contains(&(long * 100)), "about one in ten is 0.9-1.5 ms: {h:?}");
    assert_eq!(h[5], 0, "{h:?}");
    let opened = |out: &str| sum(out, "@fw newidle ", "lock_drops");
    let (avg, delta) = (run("avg_idle_clamp=avg avg_idle_ceiling=150"), run("avg_idle_clamp=delta avg_idle_ceiling=150"));
    let (s, a, d) = (opened(&snap), opened(&avg), opened(&delta));
    assert!(s > 4 * a && a > d && s >= all / 3, "gate openings: snap {s}, avg {a}, delta {d} of {all} idle periods");
    // The same idle periods in all three (the rule changes no sleep).
    assert_eq!(sum(&avg, "@fw idleperiods ", "sleeps"), sum(&snap, "@fw idleperiods ", "sleeps"));
}

/// The run's seed is the workload's: the same seed replays the run byte
/// for byte, another seed draws other think times (other counts), and
/// `seed=` on the command line fixes the workload whatever `--seed` orders.
#[test]
fn the_seed_varies_the_workload_and_replays_it() {
    let line = "workload=fserver,threads=16,ms=50,io_pct=10";
    let (a, b, c) = (sim("4", 3, line).1, sim("4", 3, line).1, sim("4", 4, line).1);
    assert_eq!(a, b);
    let ops = |o: &str| o.lines().find(|l| l.starts_with("fserver: 16 threads")).unwrap().to_string();
    assert_ne!(ops(&a), ops(&c), "seed 4 drew the same think times as seed 3");
    let fixed = format!("{line} seed=3");
    let (x, y) = (sim("4", 3, &fixed).1, sim("4", 4, &fixed).1);
    assert_eq!(ops(&x), ops(&a), "seed=3 is --seed 3's workload");
    assert_ne!(digest(&x), digest(&y), "--seed still orders ties");
    assert!(a.contains("fserver: 10% of the sleeps were I/O waits of 2000 us (mean)"), "{a}");
}

/// `oltp` is interrupt-bound: every process wakeup comes from the completion CPU, every step's
/// I/O completes, and on the dual Xeon's shape with 6 processes per CPU 2.6.12's rules
/// (`wake_balance=2005`) pull a share of the wakees to that CPU (affine wakeups, at least 2% of
/// the steps), which the removal (`2005_none`) never does; the processes migrate either way.
#[test]
fn oltp_wakes_from_one_cpu_and_the_2005_rules_move_wakees_there() {
    let run = |wb: &str| {
        let (code, out) = sim("wake-2005", 1, &format!("workload=oltp,procs=24,io_us=800,ms=300 wake_balance={wb}"));
        assert_eq!(code, 0, "{out}");
        out
    };
    let (v2005, none) = (run("2005"), run("2005_none"));
    for out in [&v2005, &none] {
        let (steps, completed) = (sum(out, "@fw oltp ", "steps"), sum(out, "@fw oltp ", "completed"));
        assert!(steps > 3000 && steps == completed, "{steps} steps, {completed} I/Os completed");
        let woken_by_cpu0 = sum(out, "@fw schedstat_delta cpu=0 ", "ttwu_count");
        assert!(woken_by_cpu0 >= completed, "CPU 0 woke {woken_by_cpu0} times for {completed} completions");
        assert!(sum(out, "@fw oltp ", "migrations") > 0);
    }
    let affine = sum(&v2005, "@fw domstat ", "ttwu_move_affine");
    let steps = sum(&v2005, "@fw oltp ", "steps");
    assert!(affine * 100 >= steps * 2, "2.6.12's rules: {affine} affine wakeups in {steps} steps");
    assert_eq!(sum(&none, "@fw domstat ", "ttwu_move_affine"), 0);
}
