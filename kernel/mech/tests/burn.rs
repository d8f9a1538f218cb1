//! `Platform::burn_ns`, a workload's busy work, through the mechanism's
//! call: on the test platform it is the time it adds to this CPU's clock,
//! as a simulated CPU's spin is; it switches nothing and sends nothing.

mod common;

use common::*;

#[test]
fn burn_ns_moves_the_clock_the_mechanism_reads_by_exactly_ns() {
    boot(2);
    run_on(1);
    let before = mech::rq::now_ns();
    let (ipis, switches) = (IPIS.lock().unwrap().len(), SWITCHES.lock().unwrap().len());
    mech::platform::burn_ns(250_000);
    assert_eq!(mech::rq::now_ns() - before, 250_000);
    mech::platform::burn_ns(0);
    assert_eq!(mech::rq::now_ns() - before, 250_000, "no work, no time");
    assert_eq!(IPIS.lock().unwrap().len(), ipis);
    assert_eq!(SWITCHES.lock().unwrap().len(), switches);
}
