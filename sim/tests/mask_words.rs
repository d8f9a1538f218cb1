//! A machine's CPU masks cost the words its CPUs occupy, not `MAX_CPUS`'s
//! sixteen: the masks' word loops stop at `sched::cpumask::nr_cpu_words()`,
//! a bound every way into a mask raises and nothing lowers. A run on four
//! CPUs (tasks placed by fork balancing, waking each other, sleeping and
//! balanced) must leave it at one word: a mask of every possible CPU built
//! on any path (a new task's snapshot did) would widen every mask
//! operation of the rest of the run to 1,024 CPUs.

use std::sync::Arc;

use fairway_sim::Machine;
use mech::sync::pipe::Pipe;
use mech::thread::Spawn;

#[test]
fn a_four_cpu_run_keeps_the_masks_at_one_word() {
    let machine = Machine::from_smp("4", 1).unwrap();
    let config = fairway_sim::platform::SimConfig { sched_debug: true, ..Default::default() };
    let report = fairway_sim::platform::run(&machine, config, || {
        let mut tasks = Vec::new();
        for i in 0..6u64 {
            let ping = Arc::new(Pipe::new(64));
            let pong = Arc::new(Pipe::new(64));
            let (p, q) = (ping.clone(), pong.clone());
            // Unpinned: placed by fork balancing, moved by the balancer.
            tasks.push(
                mech::thread::spawn(Spawn::new("echo"), move || {
                    let mut x = [0u8; 1];
                    for _ in 0..200 {
                        p.read_exact(&mut x);
                        q.write(&x, true);
                    }
                })
                .unwrap(),
            );
            tasks.push(
                mech::thread::spawn(Spawn::new("talk"), move || {
                    let mut x = [1u8; 1];
                    for r in 0..200u64 {
                        ping.write(&x, true);
                        pong.read_exact(&mut x);
                        mech::platform::burn_ns(20_000 * (1 + (r + i) % 3));
                        if r % 50 == 0 {
                            mech::thread::sleep_ns(100_000);
                        }
                    }
                })
                .unwrap(),
            );
        }
        for t in &tasks {
            mech::thread::join(t);
        }
    });
    assert_eq!(report.end, "finished", "{report:?}");
    assert_eq!(sched::cpumask::nr_cpu_words(), 1, "the masks' word loops widened beyond the machine's 4 CPUs");
}
