//! Wakeup behaviour: latency of a long sleeper under a CPU hog, wakeup
//! preemption by a shorter slice, and no gain from sleeping (PLACE_LAG).

use sched::sim::{Behavior, Event, Sim};
use sched::time::{NSEC_PER_MSEC, NSEC_PER_SEC};
use sched::{Nice, Tunables};

fn sim(cpus: u32, features: &str) -> Sim {
    let mut t = Tunables::new(cpus);
    t.features = features.parse().unwrap();
    Sim::new(t)
}

/// A task that wakes after sleeping 1 s gets the CPU within one request of
/// the hog (its slice r), plus at most the one tick q at which the hog's
/// expired request is noticed (no HRTICK): latency <= r + q. Checked for
/// many wake phases relative to the tick and the hog's request.
#[test]
fn long_sleeper_runs_within_a_slice_under_a_hog() {
    for cpus in [1, 4, 8] {
        let mut s = sim(cpus, "WAKEUP_PREEMPTION");
        let r = s.rq().tunables().base_slice();
        let q = s.rq().tunables().tick_nsec();
        let _hog = s.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
        let sleeper = s.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
        s.apply(Event::Run(10 * NSEC_PER_MSEC)).unwrap();
        for round in 0..40u64 {
            s.apply(Event::Sleep(sleeper)).unwrap();
            s.apply(Event::Run(NSEC_PER_SEC + round * 77_777)).unwrap();
            s.apply(Event::Wake(sleeper)).unwrap();
            s.apply(Event::Run(r + q + 5 * NSEC_PER_MSEC)).unwrap();
            let lat = s.task(sleeper).unwrap().last_wakeup_latency.expect("it ran");
            assert!(lat <= r + q, "cpus {cpus} round {round}: waited {lat} ns > r + q = {}", r + q);
        }
        assert_eq!(s.rq().stats().no_eligible_fallbacks, 0);
    }
}

/// PREEMPT_SHORT under WAKEUP_PREEMPTION: a wakee with a shorter slice
/// than the running hog preempts at once, even while the hog is inside its
/// protected slice (two hogs take turns, so the running one is usually
/// protected). Without PREEMPT_SHORT the protection holds it off; without
/// WAKEUP_PREEMPTION it waits for the tick.
#[test]
fn shorter_slice_wakee_preempts_at_once() {
    for (features, immediate) in [("", true), ("NO_PREEMPT_SHORT", false), ("NO_WAKEUP_PREEMPTION", false)] {
        let mut s = sim(8, features);
        for _ in 0..2 {
            s.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap();
        }
        let short = s.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
        s.apply(Event::SetSlice(short, 100_000)).unwrap();
        s.apply(Event::Run(10 * NSEC_PER_MSEC)).unwrap();
        let mut worst = 0;
        for round in 0..40u64 {
            s.apply(Event::Sleep(short)).unwrap();
            s.apply(Event::Run(20 * NSEC_PER_MSEC + round * 333_333)).unwrap();
            s.apply(Event::Wake(short)).unwrap();
            s.apply(Event::Run(5 * NSEC_PER_MSEC)).unwrap();
            worst = worst.max(s.task(short).unwrap().last_wakeup_latency.expect("it ran"));
        }
        if immediate {
            assert_eq!(worst, 0, "{features}: the short-slice wakee must preempt at once");
        } else {
            assert!(worst > 0, "{features}: without it the wakee waits");
        }
    }
}

/// A task that runs in short bursts and sleeps in between competes with a
/// hog: with PLACE_LAG its saved (negative) lag follows it through sleep,
/// so over time it gets no more than its weight share (1/2) whatever its
/// rhythm, with or without DELAY_DEQUEUE.
#[test]
fn frequent_sleeper_gets_no_more_than_its_share() {
    let patterns = [(300_000, 100_000), (600_000, 100_000), (100_000, 50_000), (1_500_000, 200_000), (2_500_000, 300_000), (650_000, 20_000)];
    for features in ["PLACE_LAG", "PLACE_LAG NO_DELAY_DEQUEUE"] {
        for cpus in [1, 8] {
            for (run, sleep) in patterns {
                let mut s = sim(cpus, features);
                let h = s.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
                let t = s.apply(Event::Fork(Nice::ZERO, Behavior::DutyCycle { run, sleep })).unwrap().unwrap();
                s.apply(Event::Run(2 * NSEC_PER_SEC)).unwrap();
                let (rh, rt) = (s.task(h).unwrap().runtime, s.task(t).unwrap().runtime);
                let share = rt as f64 / (rh + rt) as f64;
                assert!(share <= 0.51, "{features} cpus {cpus} run {run} sleep {sleep}: sleeper got {share:.3}");
            }
        }
    }
}
