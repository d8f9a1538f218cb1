//! DELAY_DEQUEUE and DELAY_ZERO (section 1.11).
//!
//! An entity that goes to sleep while not eligible (negative lag) is not
//! removed: it stays in the tree, in the V sums, in `load_weight` and in
//! `nr_queued`, but not in `h_nr_runnable` nor in PELT's runnable signal.
//! While it waits, V moves past it, burning off its debt. It leaves the
//! queue for good when the pick selects it (it is then eligible), when the
//! kernel dequeues it with `DELAYED` (e.g. exit), or it is requeued in place
//! when it wakes up first. So sleeping never erases negative lag.
//!
//! With DELAY_ZERO, a delayed entity never comes back with positive lag: its
//! final dequeue truncates a positive saved lag to 0, and a wakeup of an
//! entity that became eligible while delayed re-places it at V with a fresh
//! request. A wakeup while still not eligible leaves it where it is.

use crate::entity::EntityId;
use crate::fair_rq::{EnqueueFlags, FairRq};
use crate::features::Feature;

impl FairRq {
    /// Whether an entity's dequeue is currently delayed.
    #[inline]
    pub fn is_delayed(&self, id: EntityId) -> bool {
        self.entity(id).is_some_and(|se| se.sched_delayed)
    }

    /// Last step of the final dequeue of a delayed entity.
    pub(crate) fn finish_delayed_dequeue(&mut self, i: u32) {
        let zero = self.feat(Feature::DelayZero);
        let now = self.clock;
        let se = &mut self.slots[i as usize].se;
        se.sched_delayed = false;
        if zero && se.vlag > 0 {
            se.vlag = 0;
            self.stats.delay_zeroed += 1;
        }
        self.stats.delayed_dequeued += 1;
        self.stats.delayed_leave_lag = self.stats.delayed_leave_lag.saturating_add(se.vlag);
        let since = se.delayed_at;
        self.stats.end_delay(since, now);
    }

    /// Wakeup of a delayed entity: runnable again without a second enqueue
    /// (fair.c `requeue_delayed_entity()`). The running entity is not
    /// charged first: with DELAY_ZERO the lag is taken at V as of its last
    /// charge; the preemption check that follows charges it.
    pub(crate) fn requeue_delayed(&mut self, i: u32) {
        // enqueue_task_fair(ENQUEUE_DELAYED): util_est back in the sum first
        if self.feat(Feature::UtilEst) {
            let se = &self.slots[i as usize].se;
            crate::pelt::util_est_enqueue(&mut self.pelt, &se.avg);
        }
        self.update_entity_pelt(i);
        if self.feat(Feature::DelayZero) {
            self.update_entity_lag(i);
            if self.se(i).vlag > 0 {
                self.unlink_for_place(i);
                self.se_mut(i).vlag = 0;
                self.place_entity(i, EnqueueFlags::NONE);
                self.relink_after_place(i);
            }
        }
        self.se_mut(i).sched_delayed = false;
        self.h_nr_runnable += 1;
        self.stats.delayed_requeued += 1;
        let (since, now) = (self.se(i).delayed_at, self.clock);
        self.stats.end_delay(since, now);
    }
}
