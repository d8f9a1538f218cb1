//! The pipe ping-pong across two simulated CPUs (the kernel's
//! `workload=pipe,mode=cross`), through the mechanism's pipes, wake lists
//! and reschedule IPIs: each half round trip is a wakeup on the writer's
//! CPU, the writer's switch to idle, the reader's CPU taking the IPI and
//! switching from idle. The CPU time of both CPUs per round trip is the sum
//! of those charges, which is what the kernel measures under icount (one
//! vCPU runs at a time there, so its elapsed time is both CPUs' work).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::engine::CostModel;
use fairway_sim::platform::{self, SimConfig};
use fairway_sim::Machine;
use mech::sync::Pipe;
use mech::task::Spawn;

const ROUNDS: u64 = 2000;

#[test]
fn a_cross_cpu_ping_pong_costs_the_icount_figure_in_both_cpus_time() {
    let machine = Machine::from_smp("2", 1).unwrap();
    let elapsed = Arc::new(AtomicU64::new(0));
    let e = elapsed.clone();
    let report = platform::run(&machine, SimConfig { sched_debug: true, ..SimConfig::default() }, move || {
        let ping = Arc::new(Pipe::new(4096));
        let pong = Arc::new(Pipe::new(4096));
        let (p1, q1) = (ping.clone(), pong.clone());
        let start = mech::rq::now_ns();
        let b = mech::task::spawn(Spawn::new("pipe-b").pin(1), move || {
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
        e.store(mech::rq::now_ns() - start, Ordering::Relaxed);
    });
    assert_eq!(report.end, "finished", "{report:?}");
    let c = CostModel::ICOUNT;
    // Per round trip: two wakeups, two IPIs taken, four switches to or from idle.
    let model = 2 * c.wakeup_ns + 2 * c.irq_entry_ns + 4 * c.switch_idle_ns;
    let busy: u64 = report.cpus.iter().map(|x| x.kernel_ns + x.burn_ns).sum();
    let per = busy / ROUNDS;
    eprintln!("both CPUs' time per round trip {per} ns (model {model}), elapsed {} ns per round trip, {:?}", elapsed.load(Ordering::Relaxed) / ROUNDS, report.cpus);
    // The start and end (init's join, the exits) and a few ticks add a little.
    assert!(per >= model && per <= model + model / 50, "both CPUs' time per round trip {per} ns, the model's {model}");
    let ipis: u64 = report.cpus.iter().map(|x| x.ipis_taken).sum();
    assert!((2 * ROUNDS..=2 * ROUNDS + 10).contains(&ipis), "{ipis} IPIs for {ROUNDS} round trips");
    let switches: u64 = report.cpus.iter().map(|x| x.switches).sum();
    assert!((4 * ROUNDS..=4 * ROUNDS + 20).contains(&switches), "{switches} switches for {ROUNDS} round trips");
}
