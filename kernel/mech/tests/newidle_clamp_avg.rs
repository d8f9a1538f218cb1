//! The constructed clamp run (`clamp_case`) under `avg_idle_clamp=avg`:
//! pulls, attempts and idle-while-others-wait exactly as computed from the
//! inputs. The three clamp binaries and `newidle_clamp_off` together
//! show that the clamps differ in both effects, and newidle on from off.

mod clamp_case;
mod common;

use sched::balance::avg_idle::AvgIdleClamp;

#[test]
fn avg_pulls_and_idle_wait_follow_from_the_inputs() {
    let want = clamp_case::expect(Some(AvgIdleClamp::Avg));
    // avg: the long period lifts avg_idle to 325 us only: the gate stays
    // shut, nothing is pulled, and CPU 0 idles 5 x 200 us beside the tasks.
    assert_eq!((want.attempts, want.pulled, want.idle_wait_ns), (0, 0, 5 * 200_000));
    assert_eq!(clamp_case::run(Some(AvgIdleClamp::Avg)), want);
}
