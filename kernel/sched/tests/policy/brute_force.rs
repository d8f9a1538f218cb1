//! Property tests against O(n) references: the EEVDF pick and V.

use crate::common;

use common::{check_invariants, check_pick, features, op, Driver};
use proptest::prelude::*;
use proptest::test_runner::Config;
use sched::{FairRq, Features, Tunables};

fn config() -> Config {
    Config { cases: 10_000, failure_persistence: None, ..Config::default() }
}

fn rq(cpus: u32, f: Features) -> FairRq {
    let mut t = Tunables::new(cpus);
    t.features = f;
    FairRq::new(t)
}

proptest! {
    #![proptest_config(config())]

    /// After any operation sequence, the O(log n) pick equals the O(n)
    /// EEVDF reference (earliest eligible deadline, protection, single
    /// entity), and at least one queued entity is eligible.
    #[test]
    fn pick_matches_brute_force(cpus in 1u32..16, f in features(), ops in prop::collection::vec(op(), 1..48)) {
        let mut d = Driver::new(rq(cpus, f));
        for o in &ops {
            d.apply(o);
        }
        let picked = d.rq.pick_eevdf_peek();
        prop_assert!(check_pick(&d.rq, picked).is_ok(), "{:?}", check_pick(&d.rq, picked));
        prop_assert_eq!(d.rq.stats().no_eligible_fallbacks, 0);
    }

    /// After every operation of any sequence, `avg_vruntime` equals the
    /// brute-force floor of the weighted mean, and all accounting matches a
    /// recount.
    #[test]
    fn avg_vruntime_matches_brute_force(cpus in 1u32..16, f in features(), ops in prop::collection::vec(op(), 1..48)) {
        let mut d = Driver::new(rq(cpus, f));
        for o in &ops {
            d.apply(o);
            let r = check_invariants(&d.rq);
            prop_assert!(r.is_ok(), "after {:?}: {:?}", o, r);
        }
    }
}
