//! `schedule()`'s shortcuts (an idle queue's one entity, two queued
//! entities: `schedule_pair`) against the general steps they stand for:
//! `pick_next()` then `set_curr()` of the pick. Random scripts run on a
//! queue; after every step a clone takes each way, and the results and the
//! whole queue state (its `Debug` form) must be identical (the pick itself
//! is checked against the brute-force EEVDF choice in `brute_force.rs`).

use crate::common;

use common::{features, op, Driver};
use proptest::prelude::*;
use proptest::test_runner::Config;
use sched::{FairRq, Tunables};

fn config() -> Config {
    Config { cases: 4_000, failure_persistence: None, ..Config::default() }
}

/// Whether the queue is in `schedule_pair`'s state: the running entity
/// queued beside exactly one other queued entity.
fn pair_state(rq: &FairRq) -> bool {
    rq.curr().is_some_and(|c| rq.entity(c).is_some_and(|se| se.on_rq)) && rq.nr_queued() == 2
}

/// `schedule()` on one clone, `pick_next()` + `set_curr()` on another:
/// the same answer and the same state whenever something is picked.
fn compare_schedule(rq: &FairRq) -> Result<bool, TestCaseError> {
    let mut fast = rq.clone();
    let mut general = rq.clone();
    let picked = general.pick_next();
    let Some(id) = picked else { return Ok(false) };
    prop_assert_eq!(general.set_curr(id), Ok(()));
    prop_assert_eq!(fast.schedule(), picked);
    prop_assert_eq!(format!("{fast:?}"), format!("{general:?}"));
    Ok(true)
}

proptest! {
    #![proptest_config(config())]

    /// Every switch `schedule()` makes equals the general pick and switch.
    #[test]
    fn schedule_equals_pick_next_then_set_curr(
        cpus in 1u32..16,
        f in features(),
        steps in prop::collection::vec(op(), 1..48),
    ) {
        let mut t = Tunables::new(cpus);
        t.features = f;
        let mut d = Driver::new(FairRq::new(t));
        for o in &steps {
            d.apply(o);
            compare_schedule(&d.rq)?;
        }
    }
}

/// Two always-runnable entities switching by yield and by tick, and a
/// third now and then: `schedule_pair`'s state at nearly every switch, with
/// both outcomes (the running entity kept, the other picked).
#[test]
fn pair_switches_equal_the_general_path() {
    use sched::{EnqueueFlags, Nice, Policy};
    for (nice_a, nice_b, step) in [(0, 0, 1_000u64), (0, 5, 700), (-3, 2, 3_000_000), (19, -20, 50_000)] {
        let mut rq = FairRq::new(Tunables::new(4));
        let a = rq.fork(Nice::clamped(nice_a), Policy::Normal).unwrap();
        let b = rq.fork(Nice::clamped(nice_b), Policy::Normal).unwrap();
        rq.enqueue(a, EnqueueFlags::INITIAL).unwrap();
        rq.enqueue(b, EnqueueFlags::INITIAL).unwrap();
        let mut now = 1_000;
        rq.update_clock(now);
        rq.schedule();
        let (mut pairs, mut kept, mut switched) = (0, 0, 0);
        for n in 0..3_000u64 {
            now += step + n % 7;
            rq.update_clock(now);
            if n % 3 == 0 {
                rq.yield_curr();
            }
            if pair_state(&rq) {
                pairs += 1;
            }
            let before = rq.curr();
            match compare_schedule(&rq) {
                Ok(true) => {}
                Ok(false) => panic!("nothing picked with two runnable entities"),
                Err(e) => panic!("nice {nice_a}/{nice_b} step {step}, switch {n}: {e}"),
            }
            let after = rq.schedule();
            if after == before {
                kept += 1;
            } else {
                switched += 1;
            }
        }
        assert!(pairs > 2_900, "pair state in {pairs} of 3000 switches");
        assert!(kept > 0 && switched > 0, "kept {kept}, switched {switched}");
    }
}
