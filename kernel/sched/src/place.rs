//! Lag, placement, reweight and slice changes (section 1.8).
//!
//! Overflow bounds:
//! - the lag clamp `calc_delta_fair(max(2·slice, tick))` is at most
//!   `2·800 ms·1024/2 < 2^40` virtual ns (slice <= 800 ms, weight >= 2);
//! - the placement inflation `vlag·(W + w)/W` is formed in `i128`
//!   (`|vlag| < 2^63`, `W + w < 2^53`), and clamped back into `i64`;
//! - the reweight rescale `x·w_old/w_new` is formed in `i128` and clamped.

use crate::entity::{EntityId, SchedEntity};
use crate::fair_rq::{DequeueFlags, EnqueueFlags, FairRq, SchedError};
use crate::features::{Feature, Features};
use crate::time::{vadd, vdiff, Nanos};
use crate::tunables::clamp_custom_slice;
use crate::weight::{calc_delta_fair_with, clamp_i64, DeltaMath, LoadWeight, Nice};

impl FairRq {
    /// The bound of a stored lag for entity `i` ([`lag_limit`]).
    #[inline(always)]
    pub(crate) fn lag_limit(&self, i: u32) -> i64 {
        lag_limit(self.se(i), self.tun.delta_math, self.tun.tick_nsec())
    }

    /// Save a queued entity's virtual lag `V - v`, clamped to
    /// `±lag_limit` (Linux `update_entity_lag`).
    #[inline(always)]
    pub(crate) fn update_entity_lag(&mut self, i: u32) {
        self.update_entity_lag_at(i, self.avg_vruntime());
    }

    /// [`FairRq::update_entity_lag`] with V already computed.
    #[inline(always)]
    pub(crate) fn update_entity_lag_at(&mut self, i: u32, v_mean: u64) {
        let (math, tick) = (self.tun.delta_math, self.tun.tick_nsec());
        save_lag(&mut self.slots[i as usize].se, v_mean, math, tick);
    }

    /// Place an entity that is not counted in the queue (Linux
    /// `place_entity`, see [`place_se`]) against V of the queue.
    #[inline(always)]
    pub(crate) fn place_entity(&mut self, i: u32, flags: EnqueueFlags) {
        let v_mean = self.avg_vruntime();
        // the weight V is taken over (curr counted while queued); only
        // read when there is a lag to apply
        let wq = (self.nr_queued > 0).then(|| self.avg.sum_weight() + self.curr_term().map_or(0, |c| c.1));
        let (feats, math, base) = (self.tun.features, self.tun.delta_math, self.base_slice);
        place_se(&mut self.slots[i as usize].se, v_mean, wq, flags.contains(EnqueueFlags::INITIAL), feats, math, base);
    }

    /// Take a queued entity out of V and `nr_queued` (and the tree unless it
    /// is running) so it can be re-placed against the others only.
    pub(crate) fn unlink_for_place(&mut self, i: u32) {
        if self.curr != Some(i) {
            self.dequeue_tree(i);
        }
        self.se_mut(i).on_rq = false; // also drops curr from V
        self.nr_queued -= 1;
    }

    /// Undo [`FairRq::unlink_for_place`] after the entity was placed.
    pub(crate) fn relink_after_place(&mut self, i: u32) {
        self.se_mut(i).on_rq = true;
        self.nr_queued += 1;
        if self.curr != Some(i) {
            self.enqueue_tree(i);
        }
        self.recenter();
    }

    /// Linux's protocol for changing a task's attributes (core.c
    /// `set_user_nice()`, `__sched_setscheduler()`: the `sched_change`
    /// guard): a queued entity is dequeued as for a migration (lag saved
    /// and clamped, deadline kept relative with PLACE_REL_DEADLINE), a
    /// running one is put back (`put_prev_task()`); `change` runs on the
    /// entity off the queue; then it is enqueued again (`ENQUEUE_RESTORE`:
    /// placed from its saved lag, behind entities of equal deadline) and,
    /// if it was running, made the running one again (`set_next_task()`: a
    /// new `exec_start` and protection, `set_protect_slice()`).
    ///
    /// The dequeue of a queued entity first charges the running entity
    /// (fair.c `dequeue_entity()` starts with `update_curr()`), which asks
    /// for a reschedule when someone else is queued and the running
    /// entity's request or protection is used up; that request stands, so
    /// the CPU picks again at once (the earliest eligible deadline, unless
    /// the running entity is still eligible and re-protected by the
    /// change). Otherwise a pending request is neither set nor cleared: the
    /// running entity leaving the queue and coming back is no switch.
    /// Returns whether the entity was (queued, running).
    fn change_attributes(&mut self, i: u32, change: impl FnOnce(&mut SchedEntity)) -> (bool, bool) {
        let queued = self.se(i).on_rq;
        let running = self.curr == Some(i);
        if queued {
            // dequeue_entity()'s update_curr(): the dequeue below finds the
            // running entity charged at this clock
            self.update_curr();
        }
        let resched = self.need_resched;
        if queued {
            // cannot fail: i is live and queued
            let _ = self.dequeue(EntityId(i), DequeueFlags::NONE);
        }
        if running {
            self.put_prev();
        }
        change(self.se_mut(i));
        if queued {
            self.update_curr();
            self.enqueue_placed(i, EnqueueFlags::NONE);
        }
        if running {
            self.set_next(i);
        }
        self.need_resched = resched;
        (queued, running)
    }

    /// Change an entity's nice level, as core.c `set_user_nice()` does:
    /// nothing at all when the level does not change (it returns before
    /// locking the task); otherwise the weight becomes the level's, or stays
    /// [`LoadWeight::IDLE`] for `SCHED_IDLE` (`set_load_weight()`), under
    /// the protocol of [`FairRq::set_weight`] either way. Then, as fair.c
    /// `prio_changed_fair()`: a running entity whose priority went down
    /// asks for a reschedule, a queued one that is not running is tested
    /// for wakeup preemption.
    pub fn reweight(&mut self, id: EntityId, nice: Nice) -> Result<(), SchedError> {
        let i = self.idx(id)?;
        let old = self.se(i).nice;
        if old == nice {
            return Ok(());
        }
        self.se_mut(i).nice = nice;
        let weight = if self.se(i).policy == crate::entity::Policy::Idle { LoadWeight::IDLE } else { nice.weight() };
        let (queued, running) = self.reweight_idx(i, weight);
        if !queued || self.nr_queued == 1 {
            return Ok(());
        }
        if running {
            if nice > old {
                self.need_resched = true;
            }
        } else {
            self.check_preempt_idx(i, crate::fair_rq::WakeFlags::NONE, false);
        }
        Ok(())
    }

    /// Change an entity's weight, preserving its lag `w·(V - v)`: the
    /// entity leaves the queue and comes back as [`FairRq::reweight`]'s
    /// `set_user_nice()` does it, and off the queue fair.c
    /// `reweight_entity()` scales its saved virtual lag, and its deadline
    /// when relative, by `w_old/w_new`. The PELT load average is rescaled
    /// to the new weight.
    pub fn set_weight(&mut self, id: EntityId, weight: LoadWeight) -> Result<(), SchedError> {
        let i = self.idx(id)?;
        self.reweight_idx(i, weight);
        Ok(())
    }

    fn reweight_idx(&mut self, i: u32, weight: LoadWeight) -> (bool, bool) {
        self.update_entity_pelt(i);
        self.change_attributes(i, |se| {
            let (old, new) = (se.w() as i128, weight.weight() as i128);
            se.vlag = clamp_i64(se.vlag as i128 * old / new);
            if se.rel_deadline {
                se.deadline = clamp_i64(se.deadline as i64 as i128 * old / new) as u64;
            }
            se.weight = weight;
            se.avg.refresh_load_avg(weight.weight());
        })
    }

    /// Set a custom slice (`sched_setattr` runtime, core.c
    /// `__setscheduler_params()`): clamped to 0.1-100 ms; 0 returns to the
    /// default base slice. A queued or running entity leaves the queue and
    /// comes back (see [`FairRq::reweight`]): its lag is clamped with the
    /// old slice's bound, a relative deadline keeps the rest of its current
    /// request (the new size applies from its next one), and a running
    /// entity's protection is recomputed. Asking for the slice the entity
    /// has (`ns` equal to its slice, custom or not) changes nothing, as
    /// `__sched_setscheduler()` finds nothing to change.
    pub fn set_slice(&mut self, id: EntityId, ns: Nanos) -> Result<(), SchedError> {
        let i = self.idx(id)?;
        if ns == self.se(i).slice {
            return Ok(());
        }
        let (slice, custom) = match clamp_custom_slice(ns) {
            Some(s) => (s, true),
            None => (self.base_slice, false),
        };
        self.change_attributes(i, |se| {
            se.slice = slice;
            se.custom_slice = custom;
        });
        Ok(())
    }
}

/// The bound of a stored lag, in the entity's virtual ns, of fair.c
/// `update_entity_lag()`: `calc_delta_fair(max(2·slice, TICK_NSEC))`. The
/// one definition that the plain and the combined paths call.
#[inline(always)]
pub(crate) fn lag_limit(se: &SchedEntity, math: DeltaMath, tick: Nanos) -> i64 {
    let span = se.slice.saturating_mul(2).max(tick);
    clamp_i64(calc_delta_fair_with(math, span, se.weight) as i128)
}

/// fair.c `update_entity_lag()` on a borrowed entity, with V given: its
/// virtual lag `V - v`, clamped to `±`[`lag_limit`].
#[inline(always)]
pub(crate) fn save_lag(se: &mut SchedEntity, v_mean: u64, math: DeltaMath, tick: Nanos) {
    let limit = lag_limit(se, math, tick);
    se.vlag = vdiff(v_mean, se.vruntime).clamp(-limit, limit);
}

/// fair.c `place_entity()` on a borrowed entity that is not counted in
/// the queue, with `v_mean` = V of the queue and `wq` = the weight V is
/// taken over (`None`: nothing is queued, so no lag applies): the default
/// slice reloaded unless custom; vruntime `V - lag`, where with PLACE_LAG
/// the saved lag is inflated by `(W + w)/W` ([`place_lag`]) so that the
/// lag it keeps after joining equals the saved one; deadline the saved
/// relative one, or one request later (half a request for a new task,
/// `initial`, with PLACE_DEADLINE_INITIAL). The one definition that the
/// plain and the combined paths call.
#[inline(always)]
pub(crate) fn place_se(
    se: &mut SchedEntity,
    v_mean: u64,
    wq: Option<u64>,
    initial: bool,
    feats: Features,
    math: DeltaMath,
    base_slice: Nanos,
) {
    if !se.custom_slice {
        se.slice = base_slice;
    }
    let mut vslice = calc_delta_fair_with(math, se.slice, se.weight);
    let mut lag: i64 = 0;
    if let Some(wq) = wq {
        if feats.has(Feature::PlaceLag) && se.vlag != 0 {
            // an empty weight (cannot happen with something queued) as 1,
            // as Linux does
            lag = place_lag(se.vlag, wq.max(1), se.w());
        }
    }
    se.vruntime = vadd(v_mean, lag.saturating_neg());
    if se.rel_deadline {
        se.deadline = se.deadline.wrapping_add(se.vruntime);
        se.rel_deadline = false;
        return;
    }
    if initial && feats.has(Feature::PlaceDeadlineInitial) {
        vslice /= 2;
    }
    se.deadline = se.vruntime.wrapping_add(vslice);
}

/// The placement lag of `place_entity`: the saved lag inflated by
/// `(W + w)/W`, truncated towards zero and clamped into `i64`. With
/// `|vlag| < 2^63` and `W + w < 2^53` the product is formed in `i128`; when
/// it fits `i64` (always, for lags within their clamp: `|vlag| < 2^40`,
/// `W + w < 2^23` for a few nice-0 entities) the quotient is the same from
/// a 64-bit division, without the 128-bit division routine. Callers pass
/// `wq >= 1` (`place_entity` replaces an empty queue's 0 by 1).
#[inline(always)]
pub(crate) fn place_lag(vlag: i64, wq: u64, w: u64) -> i64 {
    let (num, den) = (wq + w, wq);
    if let (Ok(n), Ok(d)) = (i64::try_from(num), i64::try_from(den)) {
        if let Some(p) = vlag.checked_mul(n) {
            return p / d; // d = wq >= 1
        }
    }
    clamp_i64(vlag as i128 * num as i128 / den as i128)
}
