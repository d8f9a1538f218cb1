//! Slice protection (RUN_TO_PARITY) and wakeup preemption (PREEMPT_SHORT,
//! WAKEUP_PREEMPTION, buddies), sections 1.9 and 1.10.
//!
//! Protection: when an entity is picked it gets a protected end `vprot`;
//! until its vruntime passes `vprot`, the pick keeps it running even if
//! another entity became a better EEVDF choice. With RUN_TO_PARITY the
//! protected span is the smallest slice on the queue (capped by its own
//! slice, so alone among equals it runs to its deadline); without it, one
//! normalized base slice (0.70 ms). A non-preempting wakeup shrinks the
//! protection to the smallest queued slice; a PREEMPT_SHORT wakeup of an
//! entity with a shorter slice ignores it.

use crate::entity::{EntityId, Policy};
use crate::fair_rq::{FairRq, SchedError, WakeFlags};
use crate::features::Feature;
use crate::time::{vbefore, vmin, Nanos, NSEC_PER_USEC};

/// Linux's `sysctl_sched_migration_cost` (0.5 ms), the sync-wakeup
/// threshold.
pub const MIGRATION_COST_NS: Nanos = 500 * NSEC_PER_USEC;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    None,
    Short,
    Pick,
    Resched,
}

impl FairRq {
    /// Whether entity `i` is inside its protected slice.
    #[inline(always)]
    pub(crate) fn protect_slice(&self, i: u32) -> bool {
        let se = self.se(i);
        vbefore(se.vruntime, se.vprot)
    }

    /// Shrink the protection to the smallest queued slice from now.
    #[inline(always)]
    fn update_protect_slice(&mut self, i: u32) {
        let q = self.cfs_rq_min_slice();
        let end = self.se(i).vruntime.wrapping_add(self.vdelta(q, i));
        let se = self.se_mut(i);
        se.vprot = vmin(se.vprot, end);
    }

    /// End the protection now.
    #[inline(always)]
    fn cancel_protect_slice(&mut self, i: u32) {
        if self.protect_slice(i) {
            let se = self.se_mut(i);
            se.vprot = se.vruntime;
        }
    }

    /// Whether a protection is active for the running entity (diagnostics).
    pub fn curr_protected(&self) -> bool {
        self.curr.is_some_and(|c| self.protect_slice(c))
    }

    /// Decide whether the just-woken (already enqueued) entity `woken`
    /// should preempt the running one (Linux `check_preempt_wakeup_fair`).
    /// Returns true when a reschedule is requested (also when one was
    /// already pending, or the CPU has nothing running).
    pub fn check_preempt_wakeup(&mut self, woken: EntityId, wf: WakeFlags) -> Result<bool, SchedError> {
        let w = self.idx(woken)?;
        Ok(self.check_preempt_idx(w, wf, false))
    }

    /// [`FairRq::check_preempt_wakeup`] for a live entity `w`. Inlined into
    /// [`FairRq::wake`], where it follows the enqueue directly; `charged`
    /// says the running entity was already charged at this clock (its
    /// `update_curr` would be a no-op).
    #[inline(always)]
    pub(crate) fn check_preempt_idx(&mut self, w: u32, wf: WakeFlags, charged: bool) -> bool {
        let Some(c) = self.curr else { return true };
        if c == w {
            return false;
        }
        if self.need_resched {
            return true;
        }
        if !self.feat(Feature::WakeupPreemption) || !self.se(w).on_rq {
            return false;
        }
        let (cp, wp) = (self.se(c).policy, self.se(w).policy);
        if cp == Policy::Idle && wp != Policy::Idle {
            // anything beats a SCHED_IDLE entity, protection or not
            self.cancel_protect_slice(c);
            self.need_resched = true;
            return true;
        } else if (cp == Policy::Idle) != (wp == Policy::Idle) || wp != Policy::Normal {
            return false;
        }
        if !charged {
            self.update_curr();
        }
        self.check_preempt_charged(c, w, wf)
    }

    /// The end of [`FairRq::check_preempt_idx`], from the state its
    /// `update_curr` leaves: `c` is the running entity, charged at this
    /// clock, `w` another queued entity, the reschedule request, the
    /// feature and the policy rules already tested (a request set by that
    /// charge itself does not end the test here: the pick decides).
    #[inline(always)]
    pub(crate) fn check_preempt_charged(&mut self, c: u32, w: u32, wf: WakeFlags) -> bool {
        let action = if self.feat(Feature::PreemptShort) && self.se(w).slice < self.se(c).slice {
            Action::Short
        } else if wf.contains(WakeFlags::FORK) || self.se(w).sched_delayed {
            return false;
        } else if self.feat(Feature::NextBuddy) && self.set_next_buddy(w) && wf.contains(WakeFlags::SYNC) {
            // fair.c: set_preempt_buddy() gates preempt_sync(): a kept
            // (earlier) buddy leaves the decision to the pick
            self.preempt_sync(c, w, wf)
        } else {
            Action::Pick
        };
        let preempt = match action {
            Action::None => false,
            Action::Resched => true,
            Action::Pick | Action::Short => {
                let pick = self.pick_eevdf(action != Action::Short);
                if pick == Some(w) {
                    if action == Action::Short {
                        self.cancel_protect_slice(c);
                    }
                    true
                } else {
                    if self.feat(Feature::RunToParity) && self.se(c).on_rq {
                        self.update_protect_slice(c);
                    }
                    false
                }
            }
        };
        if preempt {
            self.need_resched = true;
        }
        preempt
    }

    /// NEXT_BUDDY: nominate the wakee unless the current buddy's deadline
    /// is earlier (fair.c: `set_preempt_buddy()`); returns whether the
    /// wakee became the buddy.
    fn set_next_buddy(&mut self, w: u32) -> bool {
        let keep = self.next.is_some_and(|n| n != w && vbefore(self.se(n).deadline, self.se(w).deadline));
        if !keep {
            self.next = Some(w);
        }
        !keep
    }

    /// A sync wakeup (the waker is about to sleep), fair.c `preempt_sync()`:
    /// switch at once if the wakee's deadline is earlier and the current
    /// entity has run at least the migration cost (a quarter of it when this
    /// CPU was chosen for the wakee) since its `exec_start`; otherwise leave
    /// the buddy to the next pick.
    ///
    /// As in Linux v6.19, the time is `clock - exec_start` read after
    /// `check_preempt_wakeup_fair()`'s `update_curr()`, which has just moved
    /// `exec_start` to the clock: it is 0 for a charged entity, so a sync
    /// wakeup does not force the switch and the buddy decides at the next
    /// pick (not the runtime since the pick, `sum - prev_sum`, which an
    /// earlier fairway used).
    fn preempt_sync(&self, c: u32, w: u32, wf: WakeFlags) -> Action {
        let mut threshold = MIGRATION_COST_NS;
        if wf.contains(WakeFlags::RQ_SELECTED) {
            threshold /= 4;
        }
        let cse = self.se(c);
        let ran = self.clock.saturating_sub(cse.exec_start);
        if vbefore(self.se(w).deadline, cse.deadline) && ran >= threshold {
            Action::Resched
        } else {
            Action::None
        }
    }
}
