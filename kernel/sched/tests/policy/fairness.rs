//! Fairness and lag bound of always-runnable entities under the simulator.

use sched::sim::{Behavior, Event, Sim};
use sched::time::NSEC_PER_SEC;
use sched::{Nice, Tunables};

const NICES: [i32; 8] = [-10, -7, -4, -1, 2, 5, 8, 10];

fn setup(nr_cpus: u32) -> (Sim, Vec<usize>) {
    let mut sim = Sim::new(Tunables::new(nr_cpus));
    let ids = NICES.iter().map(|&n| sim.apply(Event::Fork(Nice::clamped(n), Behavior::Hog)).unwrap().unwrap()).collect();
    (sim, ids)
}

/// 8 always-runnable entities, nice -10..10, 10 simulated seconds: each
/// runtime share is within 0.5 percentage points of its weight share, and
/// (stronger) each runtime is within one lag bound (slice + tick) of its
/// ideal weighted share in absolute ns.
#[test]
fn runtime_share_follows_weight_share() {
    for nr_cpus in [1, 8] {
        let (mut sim, ids) = setup(nr_cpus);
        let total = 10 * NSEC_PER_SEC;
        sim.apply(Event::Run(total)).unwrap();
        let wsum: u64 = ids.iter().map(|&t| sim.entity(t).unwrap().w()).sum();
        let slice = sim.rq().tunables().base_slice();
        let tick = sim.rq().tunables().tick_nsec();
        for &t in &ids {
            let w = sim.entity(t).unwrap().w();
            let run = sim.task(t).unwrap().runtime;
            let share = run as f64 / total as f64;
            let wshare = w as f64 / wsum as f64;
            println!("cpus {nr_cpus} nice {:>3}: share {:.5} weight share {:.5}", NICES[t], share, wshare);
            assert!((share - wshare).abs() <= 0.005, "nice {}: share {share} vs {wshare}", NICES[t]);
            let ideal = (total as u128 * w as u128 / wsum as u128) as i128;
            let err = run as i128 - ideal;
            assert!(err.unsigned_abs() <= (slice + tick) as u128, "nice {}: {} ns off the ideal", NICES[t], err);
        }
    }
}

/// The lag bound of section 1.8, checked at every pick for every queued
/// entity. In service ns, `lag_i = w_i·(V - v_i)/1024`; the EEVDF bound
/// for requests of size r (all equal here) served with a scheduling quantum
/// q (the tick: a deadline is noticed at the next tick) is
/// `-(r + q) < lag_i < r + q`, i.e. the paper's `-r_max < lag < max(r_max, q)`
/// with each side widened by the one quantum a request can overrun its
/// deadline by under tick-driven preemption.
#[test]
fn lag_stays_bounded_at_every_pick() {
    for nr_cpus in [1, 8] {
        let (mut sim, _ids) = setup(nr_cpus);
        let r = sim.rq().tunables().base_slice() as i128;
        let q = sim.rq().tunables().tick_nsec() as i128;
        let (mut lo, mut hi, mut picks) = (0i128, 0i128, 0u64);
        let mut check = |rq: &sched::FairRq, _picked: Option<sched::EntityId>| {
            picks += 1;
            for id in rq.queued() {
                let lag = rq.entity_lag(id).unwrap() / 1024;
                lo = lo.min(lag);
                hi = hi.max(lag);
                assert!(lag > -(r + q) && lag < r + q, "lag {lag} ns out of ({}, {})", -(r + q), r + q);
            }
        };
        sim.apply_observed(Event::Run(2 * NSEC_PER_SEC), &mut check).unwrap();
        println!("cpus {nr_cpus}: {picks} picks, lag in [{lo}, {hi}] ns, bound ±{}", r + q);
        assert!(picks > 500);
    }
}
