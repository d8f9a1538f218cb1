//! At 4 simulated CPUs with five hogs (two on CPU 0) and a task on CPU 3
//! that goes to sleep, CPU 3's switch to idle runs the mechanism's newidle
//! balance (`schedule.rs` → `fair.c: sched_balance_newidle()`), which pulls
//! the hog waiting on CPU 0: the hog runs on CPU 3 within microseconds of
//! the sleep, long before CPU 3's next tick could have balanced. With the
//! order reversed (`publish_load` after the balancer) the hog
//! reaches CPU 3 only at the next tick, 698 us later, and this fails.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use fairway_sim::platform::{self, burn_ns, SimConfig};
use fairway_sim::Machine;
use mech::thread::Spawn;

/// Where each hog ran: (hog, end of a burn chunk, CPU).
type Trail = Arc<Mutex<Vec<(usize, u64, usize)>>>;

const CHUNK_NS: u64 = 20_000;
const SLEEPER_WORK_NS: u64 = 5_300_000;

#[test]
fn a_cpu_going_idle_pulls_a_waiting_hog() {
    let machine = Machine::from_smp("4", 1).unwrap();
    let trail: Trail = Arc::new(Mutex::new(Vec::new()));
    let slept_at = Arc::new(AtomicU64::new(0));
    let (tr, sa) = (trail.clone(), slept_at.clone());
    let report = platform::run(&machine, SimConfig { sched_debug: true, ..SimConfig::default() }, move || {
        // Hogs 0 and 1 start on CPU 0, 2 on CPU 1, 3 on CPU 2; none pinned.
        let mut tasks = Vec::new();
        for (i, cpu) in [0usize, 0, 1, 2].into_iter().enumerate() {
            let tr = tr.clone();
            tasks.push(
                mech::thread::spawn(Spawn::new("hog").on_cpu(cpu), move || {
                    let mut done = 0;
                    while done < 12_000_000 {
                        burn_ns(CHUNK_NS);
                        done += CHUNK_NS;
                        tr.lock().unwrap().push((i, mech::rq::now_ns(), mech::platform::cpu_id()));
                    }
                })
                .unwrap(),
            );
        }
        // The sleeper works on CPU 3, then sleeps past the hogs' end.
        let sa = sa.clone();
        tasks.push(
            mech::thread::spawn(Spawn::new("sleeper").on_cpu(3), move || {
                burn_ns(SLEEPER_WORK_NS);
                sa.store(mech::rq::now_ns(), Ordering::Relaxed);
                mech::thread::sleep_ns(30_000_000);
            })
            .unwrap(),
        );
        for t in &tasks {
            mech::thread::join(t);
        }
    });
    assert_eq!(report.end, "finished", "{report:?}");
    let slept = slept_at.load(Ordering::Relaxed);
    let trail = trail.lock().unwrap();
    // No hog ran on CPU 3 while the sleeper worked there.
    let first_on_3 = trail.iter().find(|&&(_, _, c)| c == 3).copied().expect("some hog ran on CPU 3");
    let (hog, at, _) = first_on_3;
    assert!(at > slept, "hog {hog} ran on CPU 3 at {at}, before the sleeper slept at {slept}");
    // Pulled by the switch to idle: its first chunk there ends one chunk
    // (plus the switch's and the migration's cost) after the sleep, long
    // before CPU 3's next tick (1 ms).
    assert!(at <= slept + CHUNK_NS + 5_000, "hog {hog} reached CPU 3 at {at}, {} ns after the sleep", at - slept);
    // It was one of the two sharing CPU 0 (where it ran before).
    assert!(hog < 2, "hog {hog} came from CPU {}", trail.iter().rev().find(|&&(h, t, _)| h == hog && t < at).unwrap().2);
    let before = trail.iter().rev().find(|&&(h, t, _)| h == hog && t < at).unwrap();
    assert_eq!(before.2, 0, "hog {hog} ran on CPU 0 before");
    eprintln!("hog {hog} pulled to CPU 3 at {at} ns, the sleeper slept at {slept} ns");
}
