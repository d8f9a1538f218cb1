//! The constructed clamp run (`clamp_case`) under `avg_idle_clamp=delta`:
//! pulls, attempts and idle-while-others-wait exactly as computed from the
//! inputs. The three clamp binaries and `newidle_clamp_off` together
//! show that the clamps differ in both effects, and newidle on from off.

mod clamp_case;
mod common;

use sched::balance::avg_idle::AvgIdleClamp;

#[test]
fn delta_pulls_and_idle_wait_follow_from_the_inputs() {
    let want = clamp_case::expect(Some(AvgIdleClamp::Delta));
    // delta: the long sample is clamped to the ceiling first (300 us): the
    // gate stays shut, nothing is pulled, CPU 0 idles 5 x 200 us beside them.
    assert_eq!((want.attempts, want.pulled, want.idle_wait_ns), (0, 0, 5 * 200_000));
    assert_eq!(clamp_case::run(Some(AvgIdleClamp::Delta)), want);
}
