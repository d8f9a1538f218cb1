//! The pipe ping-pong across two simulated CPUs (the kernel's
//! `workload=pipe,mode=cross`), through the mechanism's pipes, wake lists
//! and reschedule IPIs: each half round trip is a wakeup on the writer's
//! CPU, the writer's switch to idle, the reader's CPU taking the IPI and
//! switching from idle. The CPU time of both CPUs per round trip is the sum
//! of those charges, which is what the kernel measures under icount (one
//! vCPU runs at a time there, so its elapsed time is both CPUs' work).

mod common;

use fairway_sim::engine::CostModel;
use fairway_sim::Machine;

const ROUNDS: u64 = 2000;

#[test]
fn a_cross_cpu_ping_pong_costs_the_icount_figure_in_both_cpus_time() {
    let machine = Machine::from_smp("2", 1).unwrap();
    let (report, elapsed_ns) = common::pipe_ping_pong(&machine, 0, 1, ROUNDS);
    assert_eq!(report.end, "finished", "{report:?}");
    let c = CostModel::ICOUNT;
    // Per round trip: two wakeups, two IPIs taken, four switches to or from
    // idle, and the pipes' two writes and two reads of one byte.
    let work = 4 * fairway_sim::platform::prices::pipe_op_instructions(1) * fairway_sim::platform::NS_PER_INSTRUCTION;
    let model = 2 * c.wakeup_ns + 2 * c.irq_entry_ns + 4 * c.switch_idle_ns + work;
    let busy: u64 = report.cpus.iter().map(|x| x.kernel_ns + x.burn_ns).sum();
    let per = busy / ROUNDS;
    eprintln!("both CPUs' time per round trip {per} ns (model {model}), elapsed {} ns per round trip, {:?}", elapsed_ns / ROUNDS, report.cpus);
    // The start and end (init's join, the exits) and a few ticks add a little.
    assert!(per >= model && per <= model + model / 50, "both CPUs' time per round trip {per} ns, the model's {model}");
    // Which is the kernel's figure (both vCPUs' work under icount).
    let kernel = fairway_sim::engine::cost::IcountFigures::MEASURED.pipe_cross_ns_per_round_trip;
    assert!(per.abs_diff(kernel) * 100 <= kernel, "{per} ns per round trip, the kernel's {kernel}");
    let ipis: u64 = report.cpus.iter().map(|x| x.ipis_taken).sum();
    assert!((2 * ROUNDS..=2 * ROUNDS + 10).contains(&ipis), "{ipis} IPIs for {ROUNDS} round trips");
    let switches: u64 = report.cpus.iter().map(|x| x.switches).sum();
    assert!((4 * ROUNDS..=4 * ROUNDS + 20).contains(&switches), "{switches} switches for {ROUNDS} round trips");
}
