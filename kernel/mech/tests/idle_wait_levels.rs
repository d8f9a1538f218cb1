//! "Idle while others wait" (`balance::idle_wait`) per domain level, on
//! two levels: 4 CPUs as 2 cores of 2 SMT threads under one LLC, so each
//! CPU has an SMT domain (its core: {0, 1} or {2, 3}) under an MC domain
//! (all four). A CPU idle while a CPU of its own core has a waiting task it
//! may run counts at SMT and at MC; idle while only a CPU of the other
//! core has one, at MC only; idle with no queue anywhere, at neither. The
//! idle CPUs here go idle and stop being idle through the real switch, so
//! these are the idle edges of a CPU with several levels (the flat
//! domains of `idle_wait.rs` take the one-level edge). The figures are
//! exact sums of the intervals the test makes (the test platform's
//! clock); newidle balancing is off so that no idle CPU pulls a waiter.

mod common;

use std::sync::Arc;

use common::*;
use mech::balance::idle_wait;
use mech::thread::Spawn;
use sched::topology::{CpuTopology, Level, SchedDomains};

const MS: u64 = 1_000_000;

/// CPUs 0..4 as cores {0, 1} and {2, 3} of one package and LLC.
fn two_cores_of_two_threads() -> SchedDomains {
    let cpus: Vec<CpuTopology> = (0..4)
        .map(|i| CpuTopology {
            cpu: i,
            apic_id: i as u32,
            smt_id: i as u32 % 2,
            core_id: i as u32 / 2,
            pkg_id: 0,
            llc_id: 0,
            node: 0,
        })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

/// `cpu`'s figures since `base` (its read at boot): (idle_ns, SMT
/// idle_wait_ns, MC idle_wait_ns), the levels checked to be those two.
fn figures(cpu: usize, base: &mech::stats::IdleWait) -> (u64, u64, u64) {
    let d = idle_wait::read(cpu).since(base);
    match d.levels {
        [Some((Level::Smt, smt)), Some((Level::Mc, mc)), None, ..] => (d.idle_ns, smt, mc),
        other => panic!("CPU {cpu}: expected the levels SMT and MC, got {other:?}"),
    }
}

/// Starts a task pinned to `cpu` (idle until now) and runs it there.
fn run_pinned(cpu: usize, name: &'static str) {
    let t = mech::thread::spawn(Spawn::new(name).pin(cpu), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(cpu), &t), "{name} runs on CPU {cpu}");
}

#[test]
fn idle_wait_counts_at_the_levels_whose_span_holds_the_queue() {
    let sds = two_cores_of_two_threads();
    let levels: Vec<Level> = sds.per_cpu(0).iter().map(|d| d.level).collect();
    assert_eq!(levels, [Level::Smt, Level::Mc], "the machine has the two levels");
    boot_domains(
        sds,
        sched::balance::BalanceConfig { newidle: false, ..Default::default() },
        sched::tunables::Tunables::default(),
    );
    let base: Vec<_> = (0..4).map(idle_wait::read).collect();
    let f = |cpu: usize| figures(cpu, &base[cpu]);

    // t = 0..2: every CPU idle from boot, nothing waits.
    advance_ns(2 * MS);
    // t = 2..3: CPUs 0 and 2 run a task each, then block: an idle exit and
    // an idle entry each, through the edges of a CPU with two levels.
    run_pinned(0, "a0");
    run_pinned(2, "a2");
    advance_ns(MS);
    assert!(block(0).is_idle);
    assert!(block(2).is_idle);
    // t = 3..6: no queue anywhere.
    advance_ns(3 * MS);
    assert_eq!(f(0), (5 * MS, 0, 0), "CPU 0: 5 ms idle (not the 1 ms it ran), no queue anywhere");
    assert_eq!(f(2), (5 * MS, 0, 0), "CPU 2: 5 ms idle, no queue anywhere");
    assert_eq!(f(3), (6 * MS, 0, 0), "CPU 3: idle throughout, no queue anywhere");

    // t = 6..11: CPU 1 runs `c` (pinned) with `d` (free) waiting behind it.
    // CPU 0, its SMT sibling, idles while d waits in both its domains;
    // CPUs 2 and 3, of the other core, only in their MC domain.
    let c = mech::thread::spawn(Spawn::new("c").pin(1), || {}).unwrap();
    let d = mech::thread::spawn(Spawn::new("d").on_cpu(1), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(1), &c));
    assert_eq!(nr_queued(1), 2);
    advance_ns(5 * MS);
    assert_eq!(f(0), (10 * MS, 5 * MS, 5 * MS), "CPU 0 idled beside a queue on its own core");
    assert_eq!(f(2), (10 * MS, 0, 5 * MS), "CPU 2 idled while only the other core had a queue");
    assert_eq!(f(3), (11 * MS, 0, 5 * MS), "CPU 3 idled while only the other core had a queue");
    assert_eq!(f(1), (6 * MS, 0, 0), "CPU 1 stopped idling when c arrived");

    // t = 11..13: CPUs 0 and 2 are busy while d still waits: their gains
    // so far are kept (the idle exit adds them), and nothing more counts.
    run_pinned(0, "b0");
    run_pinned(2, "b2");
    advance_ns(2 * MS);
    assert_eq!(f(0), (10 * MS, 5 * MS, 5 * MS), "busy CPU 0 gains nothing, keeps its 5 ms");
    assert_eq!(f(2), (10 * MS, 0, 5 * MS), "busy CPU 2 gains nothing, keeps its 5 ms");
    assert_eq!(f(3), (13 * MS, 0, 7 * MS));

    // t = 13..17: they idle again (an idle entry each) while d waits.
    assert!(block(0).is_idle);
    assert!(block(2).is_idle);
    advance_ns(4 * MS);
    assert_eq!(f(0), (14 * MS, 9 * MS, 9 * MS));
    assert_eq!(f(2), (14 * MS, 0, 9 * MS));
    assert_eq!(f(3), (17 * MS, 0, 11 * MS));

    // t = 17..20: c blocks, d runs alone on CPU 1: no queue anywhere.
    assert!(Arc::ptr_eq(&block(1), &d));
    advance_ns(3 * MS);
    assert_eq!(f(0), (17 * MS, 9 * MS, 9 * MS), "idle beside one task is not waiting");
    assert_eq!(f(2), (17 * MS, 0, 9 * MS));
    assert_eq!(f(3), (20 * MS, 0, 11 * MS));

    // t = 20..22: now the queue is on the other core: CPU 3 runs `e`
    // (pinned) with `g` (free) waiting. CPU 2 is its SMT sibling; CPU 0
    // counts at MC only.
    let e = mech::thread::spawn(Spawn::new("e").pin(3), || {}).unwrap();
    let _g = mech::thread::spawn(Spawn::new("g").on_cpu(3), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(3), &e));
    assert_eq!(nr_queued(3), 2);
    advance_ns(2 * MS);
    assert_eq!(f(0), (19 * MS, 9 * MS, 11 * MS), "CPU 0: the queue left its core, MC only");
    assert_eq!(f(2), (19 * MS, 2 * MS, 11 * MS), "CPU 2: the queue is on its own core");
    assert_eq!(f(3), (20 * MS, 0, 11 * MS), "CPU 3 stopped idling when e arrived");

    // t = 22..23: CPU 0 stops idling (its idle exit adds the MC-only 2 ms);
    // CPU 2 goes on counting at both levels.
    run_pinned(0, "h0");
    advance_ns(MS);
    assert_eq!(f(0), (19 * MS, 9 * MS, 11 * MS), "CPU 0 keeps what it counted, at each level");
    assert_eq!(f(2), (20 * MS, 3 * MS, 12 * MS));
    assert_eq!(f(1), (6 * MS, 0, 0), "CPU 1 never idled since c arrived");
}
