//! Lock contention (`fairway_sim::hw::locks`) by its effect: two tasks on
//! CPUs 1 and 2 each take CPU 3's runqueue lock 500 times, 100 ns of their
//! own work apart, with the runqueue's critical section priced at 2,000 ns
//! (`hold_runqueue_ns=2000` on `icount`: no other hardware cost). Alone, a
//! task needs its 100 ns a round (it never waits for its own hold); the two
//! together serialise on the lock, so the pair needs about 2 x 500 x 2,000 ns,
//! and each waiter's time shows as its CPU's `lock_wait_ns` and the
//! runqueue class's `wait_ns` (a task alone waits once, for the spawning
//! CPU's hold of the task's runqueue). With the wait removed
//! (`Locks::acquire` returning no wait) the pair finishes in about 100 us
//! and this fails.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::hw::HwProfile;
use fairway_sim::platform::{self, burn_ns, SimConfig};
use fairway_sim::Machine;
use mech::thread::Spawn;

const TEST: &str = "two_cpus_hammering_one_runqueue_lock_serialise_and_wait";
const ROUNDS: u64 = 500;
const HOLD_NS: u64 = 2_000;
const WORK_NS: u64 = 100;
const START_NS: u64 = 20_000;

/// One run with `tasks` hammering tasks (1 or 2): prints the virtual ns
/// until both finished, then each CPU's `lock_wait_ns`, then the runqueue
/// class's contended acquisitions and wait.
fn child(tasks: usize) {
    let machine = Machine::from_smp("4", 1).unwrap();
    let hw = HwProfile::parse(&format!("icount,hold_runqueue_ns={HOLD_NS}")).unwrap();
    let elapsed = Arc::new(AtomicU64::new(0));
    let e = elapsed.clone();
    let report = platform::run(&machine, SimConfig { hw, ..SimConfig::default() }, move || {
        let start = mech::rq::now_ns();
        let mut ts = Vec::new();
        for cpu in 1..=tasks {
            ts.push(
                mech::thread::spawn(Spawn::new("hammer").pin(cpu), move || {
                    // Past the boot's holds of CPU 3's lock.
                    burn_ns(START_NS);
                    for _ in 0..ROUNDS {
                        drop(mech::rq::lock(3));
                        burn_ns(WORK_NS);
                    }
                })
                .unwrap(),
            );
        }
        for t in &ts {
            mech::thread::join(t);
        }
        e.store(mech::rq::now_ns() - start, Ordering::Relaxed);
    });
    assert_eq!(report.end, "finished");
    let rq = report.locks.iter().find(|(name, _)| *name == "runqueue").map(|(_, s)| *s).unwrap_or_default();
    common::child_result(&format!(
        "{} {} {} {} {}\n",
        elapsed.load(Ordering::Relaxed),
        report.hw[1].lock_wait_ns,
        report.hw[2].lock_wait_ns,
        rq.contended,
        rq.wait_ns
    ));
}

fn run(tasks: usize) -> Vec<u64> {
    common::in_child(TEST, &tasks.to_string()).split_whitespace().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn two_cpus_hammering_one_runqueue_lock_serialise_and_wait() {
    if let Some(arg) = common::child_arg() {
        child(arg.parse().unwrap());
        return;
    }
    let alone = run(1);
    let both = run(2);
    // Alone: its own work and the mechanism's; no wait but, once, for the
    // spawning CPU's hold of its own runqueue.
    assert!(alone[1] <= HOLD_NS, "a task alone waited {} ns", alone[1]);
    assert!(alone[0] < ROUNDS * (WORK_NS + HOLD_NS) / 4, "alone it took {} ns", alone[0]);
    // Together: one lock hold after the other.
    let serial = START_NS + 2 * ROUNDS * HOLD_NS;
    assert!(both[0] >= serial * 9 / 10, "the pair took {} ns; serialised on the lock: at least {}", both[0], serial * 9 / 10);
    assert!(both[0] <= serial * 12 / 10, "the pair took {} ns; serialised on the lock: about {serial}", both[0]);
    // The waits are what the pair lost, on both CPUs, and the class says so.
    assert!(both[1] > 0 && both[2] > 0, "lock waits on CPU 1: {} ns, CPU 2: {} ns", both[1], both[2]);
    assert!(both[1] + both[2] >= (serial - START_NS) * 8 / 10, "waited {} ns in all", both[1] + both[2]);
    assert!(both[3] >= ROUNDS, "{} contended acquisitions", both[3]);
    assert!(both[4] >= both[1] + both[2], "the runqueue class's wait {} holds the CPUs' {}", both[4], both[1] + both[2]);
    eprintln!("alone {} ns; both {} ns, waits {} + {} ns, {} contended", alone[0], both[0], both[1], both[2], both[3]);
}
