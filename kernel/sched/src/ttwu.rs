//! Remote wakeups: whether the waker hands the wakee to the target CPU's
//! wake list or enqueues it there itself (core.c: `ttwu_queue()`,
//! `ttwu_queue_wakelist()`).
//!
//! With TTWU_QUEUE (on by default, as in Linux), a wakeup onto another CPU
//! goes on that CPU's wake list, kicked by one IPI when the list was empty,
//! and the target activates the task itself (`sched_ttwu_pending()`): the
//! waker never takes the remote runqueue's lock. Without it the waker locks
//! the target's runqueue, enqueues the task and runs the wakeup-preemption
//! check there, and sends the IPI only if the wakee should preempt
//! (`resched_curr()`): a wakee that waits for the running task's slice
//! costs the target no interrupt.
//!
//! Departure from Linux: v6.19 queues only where `ttwu_queue_cond()` agrees
//! (always across LLCs, and within one only onto a CPU with nothing
//! running); fairway queues every remote wakeup while the feature is on. The
//! wake list is how the mechanism keeps remote runqueue locks off its
//! wakeup path, and its fast-path figures (docs/BENCHMARKS.md) and the
//! simulator's digests were measured with it.

/// Whether a wakeup by `this_cpu` onto `target_cpu` goes through the
/// target's wake list, `ttwu_queue` being the TTWU_QUEUE feature (the
/// mechanism reads it once from the booted `Features` and keeps it at hand:
/// every remote wakeup asks). False for a local wakeup.
#[inline(always)]
pub fn queue_on_wake_list(ttwu_queue: bool, this_cpu: usize, target_cpu: usize) -> bool {
    target_cpu != this_cpu && ttwu_queue
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::{Feature, Features};

    #[test]
    fn remote_wakeups_queue_only_with_ttwu_queue() {
        assert!(Features::default().has(Feature::TtwuQueue), "on by default, as in v6.19");
        assert!(queue_on_wake_list(true, 0, 1));
        assert!(!queue_on_wake_list(false, 0, 1), "the waker enqueues it itself");
        assert!(!queue_on_wake_list(true, 3, 3), "a local wakeup never queues");
        assert!(!queue_on_wake_list(false, 3, 3));
    }
}
