//! Two tasks ping-pong through the mechanism's own pipes on one simulated
//! CPU, with the icount cost model (the kernel's `workload=pipe,mode=same`):
//! the simulated time is exactly the model's charges for the switches,
//! wakeups and ticks the mechanism made, and a round trip is two switches.
//! How many wakeups a round trip takes depends on the order of sleeps and
//! wakeup preemptions (a partner preempted at the wakeup is not woken later):
//! `mech_pipe_delayed` holds that order.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::engine::CostModel;
use fairway_sim::Machine;

const ROUNDS: u64 = 2000;

#[test]
fn two_tasks_ping_pong_on_one_cpu_at_the_icount_cost() {
    let machine = Machine::from_smp("1", 1).unwrap();
    let wakeups = Arc::new(AtomicU64::new(0));
    let w = wakeups.clone();
    let (report, ns) = common::pipe_ping_pong_then(&machine, 0, 0, ROUNDS, move || {
        w.store(mech::wakeup::ttwu_stats(0).0, Ordering::Relaxed);
    });
    assert_eq!(report.end, "finished", "{report:?}");
    let cpu = &report.cpus[0];
    let tw = wakeups.load(Ordering::Relaxed);
    eprintln!("round trip {} ns, {tw} wakeups, {cpu:?}, events {}", ns / ROUNDS, report.events);
    let c = CostModel::ICOUNT;
    // Nothing but the model's charges takes time on the CPU.
    let tasks = cpu.switches - cpu.idle_switches;
    let model = tasks * c.switch_ns + cpu.idle_switches * c.switch_idle_ns + tw * c.wakeup_ns + cpu.timer_irqs * c.irq_entry_ns;
    assert_eq!(cpu.kernel_ns + cpu.burn_ns, model + work_ns(), "{cpu:?}");
    // Two switches per round trip; the ends (init blocking in join, the
    // exits) add a few.
    assert!((2 * ROUNDS..=2 * ROUNDS + 10).contains(&cpu.switches), "{} switches for {ROUNDS} round trips", cpu.switches);
    // At least one wakeup per round trip (someone sleeps), at most two.
    assert!((ROUNDS..=2 * ROUNDS + 4).contains(&tw), "{tw} wakeups for {ROUNDS} round trips");
    // And the round trip is the kernel's under -icount (which makes about as
    // many wakeups per round trip: 25,705 for 20,000), within 3%.
    let f = fairway_sim::engine::cost::IcountFigures::MEASURED.pipe_same;
    let kernel = f.ns / (f.messages / 2);
    let per = ns / ROUNDS;
    assert!(per.abs_diff(kernel) * 100 <= kernel * 3, "{per} ns per round trip, the kernel's {kernel}");
}

/// The pipes' own work: a write and a read of one byte per message, two
/// messages per round trip (`fairway_sim::platform::prices::pipe_op_instructions`).
fn work_ns() -> u64 {
    4 * ROUNDS * fairway_sim::platform::prices::pipe_op_instructions(1) * fairway_sim::platform::NS_PER_INSTRUCTION
}
