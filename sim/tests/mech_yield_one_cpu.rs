//! Two tasks yielding to each other on one simulated CPU (the kernel's
//! `workload=yield`): every `sched_yield` is one switch to the other task,
//! and the time per switch is the icount model's `switch_ns` (the kernel's
//! `ns_per_switch` under icount, 1,008, which it was taken from).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::engine::CostModel;
use fairway_sim::platform::{self, SimConfig};
use fairway_sim::Machine;
use mech::thread::Spawn;

const ROUNDS: u64 = 2000;

#[test]
fn each_yield_is_one_switch_at_the_icount_cost() {
    let machine = Machine::from_smp("1", 1).unwrap();
    let elapsed = Arc::new(AtomicU64::new(0));
    let e = elapsed.clone();
    let report = platform::run(&machine, SimConfig { sched_debug: true, ..SimConfig::default() }, move || {
        let start = mech::rq::now_ns();
        let mk = |name: &str| {
            mech::thread::spawn(Spawn::new(name).pin(0), || {
                for _ in 0..ROUNDS {
                    mech::schedule::yield_now();
                }
            })
            .unwrap()
        };
        let (a, b) = (mk("yield-a"), mk("yield-b"));
        mech::thread::join(&a);
        mech::thread::join(&b);
        e.store(mech::rq::now_ns() - start, Ordering::Relaxed);
    });
    assert_eq!(report.end, "finished", "{report:?}");
    let switches = report.cpus[0].switches;
    // One switch per yield (2 x ROUNDS), and a few around the start and the end.
    assert!((2 * ROUNDS..=2 * ROUNDS + 8).contains(&switches), "{switches} switches for {} yields", 2 * ROUNDS);
    let per = elapsed.load(Ordering::Relaxed) / (2 * ROUNDS);
    let c = CostModel::ICOUNT;
    assert!((c.switch_ns..=c.switch_ns + 5).contains(&per), "ns per switch {per}, the model's {}", c.switch_ns);
    eprintln!("ns per switch {per}, {switches} switches");
}
