//! Combined operations for the two steps of every blocking round trip:
//! a wakeup ([`FairRq::wake`] = `enqueue` + `check_preempt_wakeup`) and a
//! blocking switch ([`FairRq::block_and_schedule`] = `dequeue` +
//! `schedule`).
//!
//! Contract: each leaves exactly the state, and returns exactly the results,
//! of its calls in sequence, for every input (the property tests in
//! `tests/combined.rs` compare both on cloned queues after every step). They
//! exist only to do less work for the same result: one handle check, the
//! running entity charged once, and no re-tests of facts the first step
//! established (the wakee is queued and is not the running entity; the
//! running entity is off the queue). Cases off the common path (waking a
//! delayed or the running entity, a dequeue of anything but the running
//! entity going to sleep) simply run the two operations.

use crate::entity::EntityId;
use crate::fair_rq::{DequeueFlags, DequeueOutcome, EnqueueFlags, FairRq, SchedError, WakeFlags};
use crate::features::Feature;

impl FairRq {
    /// A wakeup in one call: `enqueue(id, ef)` and, if that succeeded,
    /// `check_preempt_wakeup(id, wf)`; returns the enqueue's error or
    /// whether to reschedule this CPU. Same state and result as the two
    /// calls in sequence.
    pub fn wake(&mut self, id: EntityId, ef: EnqueueFlags, wf: WakeFlags) -> Result<bool, SchedError> {
        let i = self.idx(id)?;
        if self.se(i).on_rq || self.curr == Some(i) {
            // a delayed entity's requeue, an error, or the running entity
            // coming back before it was switched out
            self.enqueue(id, ef)?;
            return self.check_preempt_wakeup(id, wf);
        }
        // enqueue of an entity that is neither queued nor running
        self.update_curr();
        self.enqueue_placed(i, ef);
        // check_preempt_wakeup: `i` is live, queued and not curr, and curr
        // (if any) was charged at this clock above
        Ok(self.check_preempt_idx(i, wf, true))
    }

    /// A blocking switch in one call: `dequeue(id, flags)`, then
    /// `schedule()` whatever the dequeue answered (as the kernel's switch
    /// does). Returns both results. Same state and results as the two calls
    /// in sequence.
    pub fn block_and_schedule(
        &mut self,
        id: EntityId,
        flags: DequeueFlags,
    ) -> (Result<DequeueOutcome, SchedError>, Option<EntityId>) {
        let i = match self.idx(id) {
            Ok(i) if self.curr == Some(i) && flags == DequeueFlags::SLEEP && self.se(i).runnable() => i,
            _ => {
                let r = self.dequeue(id, flags);
                return (r, self.schedule());
            }
        };
        // the running entity goes to sleep
        if self.sleep_curr(i) == DequeueOutcome::Delayed {
            return (Ok(DequeueOutcome::Delayed), self.schedule());
        }
        (Ok(DequeueOutcome::Dequeued), self.schedule_after_sleep(i))
    }

    /// `dequeue(c, SLEEP)` of the running entity `c`, which is queued and
    /// not delayed.
    #[inline(always)]
    fn sleep_curr(&mut self, c: u32) -> DequeueOutcome {
        self.update_curr();
        let mut v_mean = None;
        if self.feat(Feature::DelayDequeue) {
            // curr is queued, so it is V's extra term
            let se = self.se(c);
            let (s, w) = self.avg.totals(Some((se.vruntime, se.w())));
            if self.avg.eligible_in(se.vruntime, s, w) {
                v_mean = Some(self.avg.mean_in(s, w));
            } else {
                self.delay_dequeue(c, true);
                return DequeueOutcome::Delayed;
            }
        }
        self.update_entity_pelt(c);
        let v_mean = match v_mean {
            Some(v) => v,
            None => self.avg_vruntime(),
        };
        self.update_entity_lag_at(c, v_mean);
        let se = self.se_mut(c);
        se.on_rq = false;
        let w = se.w();
        self.nr_queued -= 1;
        self.h_nr_runnable -= 1;
        self.load_weight -= w;
        if self.next == Some(c) {
            self.next = None;
        }
        self.need_resched = true;
        self.recenter();
        DequeueOutcome::Dequeued
    }

    /// `schedule()` right after the running entity `c` left the queue by
    /// [`FairRq::sleep_curr`]: `c` is charged at this clock and its PELT
    /// (and the queue's) is current, and it is no candidate.
    #[inline(always)]
    fn schedule_after_sleep(&mut self, c: u32) -> Option<EntityId> {
        debug_assert!(self.curr == Some(c) && !self.se(c).on_rq);
        // pick_next (its update_curr is a no-op: c was charged at this clock)
        let next = loop {
            if self.nr_queued == 0 {
                break None;
            }
            let Some(n) = self.pick_eevdf_among(None, true) else { break None };
            if self.se(n).sched_delayed {
                self.stats.delayed_dequeued_by_pick += 1;
                // cannot fail: n is live and queued
                let _ = self.dequeue(EntityId(n), DequeueFlags::SLEEP | DequeueFlags::DELAYED);
                continue;
            }
            break Some(n);
        };
        // put_prev of an entity off the queue; its PELT update would be a
        // no-op (sleep_curr brought it and the queue's to this PELT clock)
        self.curr = None;
        match next {
            Some(n) => self.set_next(n),
            None => self.pelt_clock.enter_idle(self.pelt.util_sum),
        }
        self.need_resched = false;
        next.map(EntityId)
    }
}
