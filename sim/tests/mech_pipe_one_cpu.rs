//! Two tasks ping-pong through the mechanism's own pipes on one simulated
//! CPU, with the icount cost model: each round trip is two wakeups and two
//! switches (the kernel's `workload=pipe,mode=same`), and the simulated time
//! per round trip is those four charges, which the icount figures were
//! derived from (docs/SIMULATOR.md, "The cost model").

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::engine::CostModel;
use fairway_sim::platform::{self, SimConfig};
use fairway_sim::Machine;
use mech::sync::Pipe;
use mech::task::Spawn;

const ROUNDS: u64 = 2000;

#[test]
fn two_tasks_ping_pong_on_one_cpu_at_the_icount_cost() {
    let machine = Machine::from_smp("1", 1).unwrap();
    let result = Arc::new(AtomicU64::new(0));
    let r = result.clone();
    let report = platform::run(&machine, SimConfig { sched_debug: true, ..SimConfig::default() }, move || {
        let ping = Arc::new(Pipe::new(4096));
        let pong = Arc::new(Pipe::new(4096));
        let (p1, q1) = (ping.clone(), pong.clone());
        let start = mech::rq::now_ns();
        let b = mech::task::spawn(Spawn::new("pipe-b").pin(0), move || {
            let mut x = [0u8; 1];
            for _ in 0..ROUNDS {
                p1.read_exact(&mut x);
                q1.write(&x, true);
            }
        })
        .unwrap();
        let a = mech::task::spawn(Spawn::new("pipe-a").pin(0), move || {
            let mut x = [1u8; 1];
            for _ in 0..ROUNDS {
                ping.write(&x, true);
                pong.read_exact(&mut x);
            }
        })
        .unwrap();
        mech::task::join(&a);
        mech::task::join(&b);
        r.store(mech::rq::now_ns() - start, Ordering::Relaxed);
    });
    assert_eq!(report.end, "finished", "{report:?}");
    eprintln!("round trip {} ns, switches {:?}, events {}", result.load(Ordering::Relaxed) / ROUNDS, report.cpus[0], report.events);
    let ns = result.load(Ordering::Relaxed);
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
