//! Two tasks ping-pong through the mechanism's own pipes on one simulated
//! CPU, with the icount cost model: each round trip is two wakeups and two
//! switches (the kernel's `workload=pipe,mode=same`), and the simulated time
//! per round trip is those four charges, which the icount figures were
//! derived from (docs/SIMULATOR.md, "The cost model").

mod common;

use fairway_sim::engine::CostModel;
use fairway_sim::Machine;

const ROUNDS: u64 = 2000;

#[test]
fn two_tasks_ping_pong_on_one_cpu_at_the_icount_cost() {
    let machine = Machine::from_smp("1", 1).unwrap();
    let (report, ns) = common::pipe_ping_pong(&machine, 0, 0, ROUNDS);
    assert_eq!(report.end, "finished", "{report:?}");
    eprintln!("round trip {} ns, switches {:?}, events {}", ns / ROUNDS, report.cpus[0], report.events);
    let c = CostModel::ICOUNT;
    let per = ns / ROUNDS;
    // Two wakeups and two task-to-task switches per round trip; the ends
    // (init blocking in join, the last exits) add a few switches over 2000
    // round trips.
    let model = 2 * c.wakeup_ns + 2 * c.switch_ns;
    assert!(per >= model && per <= model + 10, "ns per round trip {per}, the model's {model}");
    // Switches: two per round trip, on the one CPU.
    let sw = report.cpus[0].switches;
    assert!((2 * ROUNDS..=2 * ROUNDS + 10).contains(&sw), "{sw} switches for {ROUNDS} round trips");
}
