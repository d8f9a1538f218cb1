//! Wakeup placement takes no lock that the CPUs of other LLCs take: two
//! CPUs in different LLCs placing wakeups at the same time place them as
//! fast as one alone, and neither waits for a lock.
//!
//! On 2 sockets of 16 CPUs (one LLC each), every CPU busy (hogs), a task on
//! CPU 1 and one on CPU 17 each run `balance::wake::select_wake_cpu` 400
//! times for a sleeping task of their own LLC, 100 ns of their own work
//! apart: every placement scans its LLC for an idle CPU (`select_idle_cpu`,
//! 15 CPUs examined, 170 ns each: about 3.7 us a round) and finds none. With
//! `dd-2024,only=locks` (lock holds and handoffs priced, nothing else), a
//! lock shared by the two LLCs and held across the scan (as the per-LLC
//! table `balance::state::LLC` once was) serialises the two: the pair needs
//! about twice as long as one alone and each waits about one placement per
//! round (measured with that lock: 3.21 ms against 1.54 ms, 1.59 ms of
//! waits on each placing CPU). Linux's `select_idle_cpu()` takes no lock (its `sd_llc_shared`
//! is read and written with plain and atomic accesses), nor does this.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::hw::HwProfile;
use fairway_sim::platform::{self, burn_ns, SimConfig};
use fairway_sim::Machine;
use mech::balance::wake::{select_wake_cpu, WakeeLoad};
use mech::thread::Spawn;

const TEST: &str = "placements_in_two_llcs_run_in_parallel_without_lock_waits";
const ROUNDS: u64 = 400;
const WORK_NS: u64 = 100;
/// Past the boot and the hogs' start.
const START_NS: u64 = 2_000_000;
/// The placing CPUs, one per LLC, and a sleeping wakee's previous CPU in each.
const PLACERS: [(usize, usize); 2] = [(1, 2), (17, 18)];

/// One run with `placers` placing tasks (1 or 2): prints the virtual ns the
/// slowest took for its rounds, each placing CPU's `lock_wait_ns`, and the
/// placements that found no idle CPU (the scan ran its whole depth).
fn child(placers: usize) {
    let machine = Machine::from_smp("32,sockets=2,cores=16", 2).unwrap();
    let hw = HwProfile::parse("dd-2024,only=locks").unwrap();
    let slowest = Arc::new(AtomicU64::new(0));
    let busy_placements = Arc::new(AtomicU64::new(0));
    let (s, b) = (slowest.clone(), busy_placements.clone());
    let report = platform::run(&machine, SimConfig { hw, ..SimConfig::default() }, move || {
        let stop = Arc::new(AtomicBool::new(false));
        let mut hogs = Vec::new();
        for cpu in (0..32).filter(|c| !PLACERS.iter().any(|p| p.0 == *c)) {
            let stop = stop.clone();
            hogs.push(
                mech::thread::spawn(Spawn::new("hog").pin(cpu), move || {
                    while !stop.load(Ordering::Relaxed) {
                        burn_ns(50_000);
                    }
                })
                .unwrap(),
            );
        }
        let mut ts = Vec::new();
        let mut wakees = Vec::new();
        for &(cpu, prev) in &PLACERS[..placers] {
            // Unpinned, asleep for the whole run: each placement may look
            // at its whole LLC.
            let wakee = mech::thread::spawn(Spawn::new("wakee").pin(prev), || mech::thread::sleep_ns(10_000_000)).unwrap();
            wakees.push(wakee.clone());
            let (s, b) = (s.clone(), b.clone());
            ts.push(
                mech::thread::spawn(Spawn::new("placer").pin(cpu), move || {
                    burn_ns(START_NS);
                    wakee.affinity.store(mech::rq::online_mask());
                    let load = WakeeLoad { weight: 1024, load_avg: 0, util: 0 };
                    let start = mech::rq::now_ns();
                    for _ in 0..ROUNDS {
                        let to = select_wake_cpu(&wakee, load, prev, cpu, sched::WakeFlags::NONE).unwrap();
                        b.fetch_add(u64::from(to == prev || to == cpu), Ordering::Relaxed);
                        burn_ns(WORK_NS);
                    }
                    s.fetch_max(mech::rq::now_ns() - start, Ordering::Relaxed);
                })
                .unwrap(),
            );
        }
        for t in &ts {
            mech::thread::join(t);
        }
        stop.store(true, Ordering::Relaxed);
        for t in hogs.iter().chain(&wakees) {
            mech::thread::join(t);
        }
    });
    assert_eq!(report.end, "finished");
    common::child_result(&format!(
        "{} {} {} {}\n",
        slowest.load(Ordering::Relaxed),
        report.hw[PLACERS[0].0].lock_wait_ns,
        report.hw[PLACERS[1].0].lock_wait_ns,
        busy_placements.load(Ordering::Relaxed)
    ));
}

fn run(placers: usize) -> Vec<u64> {
    common::in_child(TEST, &placers.to_string()).split_whitespace().map(|x| x.parse().unwrap()).collect()
}

#[test]
fn placements_in_two_llcs_run_in_parallel_without_lock_waits() {
    if let Some(arg) = common::child_arg() {
        child(arg.parse().unwrap());
        return;
    }
    let alone = run(1);
    let pair = run(2);
    eprintln!("alone: {alone:?}\npair: {pair:?}");
    assert_eq!(alone[3], ROUNDS, "every placement found its LLC busy (it scanned): {alone:?}");
    assert_eq!(pair[3], 2 * ROUNDS, "every placement found its LLC busy (it scanned): {pair:?}");
    // One placement with its scan: the time a serialising lock makes the other wait per round.
    let per_round = alone[0] / ROUNDS;
    assert!(per_round > 1_000, "a placement scans its LLC (about 3.7 us): {per_round} ns a round");
    assert!(pair[0] <= alone[0] + alone[0] / 20, "two LLCs' placements take as long together as one alone: {} ns against {} ns", pair[0], alone[0]);
    for (i, wait) in pair[1..3].iter().enumerate() {
        assert!(*wait < per_round, "CPU {} waited {wait} ns for locks in {ROUNDS} placements (one placement: {per_round} ns)", PLACERS[i].0);
    }
}
