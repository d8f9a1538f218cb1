//! The TTWU_QUEUE run (`ttwu_case`) with `sched_features=NO_TTWU_QUEUE`:
//! the waker enqueues on the remote runqueue itself, and interrupts only a
//! CPU that must switch to the wakee.

mod common;
mod ttwu_case;

#[test]
fn remote_wakeups_enqueue_at_once_and_interrupt_only_to_preempt() {
    common::boot_features(4, sched::Features::default().with(sched::Feature::TtwuQueue, false));
    ttwu_case::run(false);
}
