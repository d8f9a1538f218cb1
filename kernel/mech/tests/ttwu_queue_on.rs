//! The TTWU_QUEUE run (`ttwu_case`) with the feature on (the default):
//! every remote wakeup goes through its target's wake list and IPI.

mod common;
mod ttwu_case;

#[test]
fn remote_wakeups_queue_on_the_targets_wake_lists() {
    let f = sched::Features::default();
    assert!(f.has(sched::Feature::TtwuQueue));
    common::boot_features(4, f);
    ttwu_case::run(true);
}
