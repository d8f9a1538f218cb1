//! The constructed clamp run (`clamp_case`) under `avg_idle_clamp=snap`:
//! pulls, attempts and idle-while-others-wait exactly as computed from the
//! inputs. The three clamp binaries and `newidle_clamp_off` together
//! show that the clamps differ in both effects, and newidle on from off.

mod clamp_case;
mod common;

use sched::balance::avg_idle::AvgIdleClamp;

#[test]
fn snap_pulls_and_idle_wait_follow_from_the_inputs() {
    let want = clamp_case::expect(Some(AvgIdleClamp::Snap));
    // snap: the long period sets avg_idle to the 1 ms ceiling; after 7
    // failing attempts it is still 511 us, above the gate: the 3 free tasks
    // are pulled (no sample), then one more attempt finds nothing, and that
    // period's sample closes the gate. CPU 0 idles while they wait only
    // for the three balance passes that pull them.
    assert_eq!((want.attempts, want.pulled, want.idle_wait_ns), (7 + 3 + 1, 3, 3 * clamp_case::PASS_NS));
    // The 3.10 gate ignores overload: from the 1 ms boot value the first
    // periods try a balance with nothing queued anywhere.
    assert!(want.settle_attempts > 0, "{want:?}");
    assert_eq!(clamp_case::run(Some(AvgIdleClamp::Snap)), want);
}
