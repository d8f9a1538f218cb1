//! Combined operations for the two steps of every blocking round trip:
//! a wakeup ([`FairRq::wake`] = `enqueue` + `check_preempt_wakeup`) and a
//! blocking switch ([`FairRq::block_and_schedule`] = `dequeue` +
//! `schedule`).
//!
//! Contract: each leaves exactly the state, and returns exactly the results,
//! of its calls in sequence, for every input (the property tests in
//! `tests/policy/combined.rs` compare both on cloned queues after every step). They
//! exist only to do less work for the same result: one handle check, the
//! running entity charged once, and no re-tests of facts the first step
//! established (the wakee is queued and is not the running entity; the
//! running entity is off the queue). Cases off the common path (waking a
//! delayed or the running entity, a dequeue of anything but the running
//! entity going to sleep) simply run the two operations.

use crate::avg_vruntime::AvgVruntime;
use crate::entity::{EntityId, Policy, SchedEntity};
use crate::fair_rq::{DequeueFlags, DequeueOutcome, EnqueueFlags, FairRq, SchedError, WakeFlags};
use crate::features::Feature;
use crate::pick::{charge_entity, pick_of_two, swap_only_and_protect};
use crate::place::{place_se, save_lag};
use crate::time::{vbefore, vmin, Nanos};
use crate::weight::calc_delta_fair_with;

impl FairRq {
    /// A wakeup in one call: `enqueue(id, ef)` and, if that succeeded,
    /// `check_preempt_wakeup(id, wf)`; returns the enqueue's error or
    /// whether to reschedule this CPU. Same state and result as the two
    /// calls in sequence.
    ///
    /// The idle queue's wakeup, inlined here, or `FairRq::wake_busy` (a
    /// tail call), so that the cross-CPU pipe's wakeup pays one call and
    /// not the register saves of the other cases' code.
    #[inline(never)]
    pub fn wake(&mut self, id: EntityId, ef: EnqueueFlags, wf: WakeFlags) -> Result<bool, SchedError> {
        if self.curr.is_some() || !self.wake_idle(id.0, ef) {
            return self.wake_busy(id, ef, wf);
        }
        // check_preempt_wakeup with nothing running
        Ok(true)
    }

    /// [`FairRq::wake`] of anything but an entity off an idle queue (that
    /// one was tried first: here, with nothing running, only the general
    /// path remains).
    #[inline(never)]
    fn wake_busy(&mut self, id: EntityId, ef: EnqueueFlags, wf: WakeFlags) -> Result<bool, SchedError> {
        // the two common cases, each its own copy of the borrowed-entity
        // path (so the delayed requeue adds nothing to the plain wakeup):
        // an entity off the queue, then a delayed one
        if self.curr.is_some() {
            if let Some(preempt) = self.wake_beside_curr::<false>(id.0, ef, wf) {
                return Ok(preempt);
            }
            if let Some(preempt) = self.wake_delayed_beside_curr(id.0, wf) {
                return Ok(preempt);
            }
        }
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

    /// The wakeup of an entity the caller knows to be queued and delayed
    /// (the kernel asks [`FairRq::is_delayed`] first): the delayed requeue
    /// beside the running entity directly, without first trying (and
    /// failing) the plain wakeup's path as [`FairRq::wake`] does.
    ///
    /// Same state and result as `wake(id, EnqueueFlags::WAKEUP, wf)` for
    /// every input: any other case (not delayed, nothing running, a bad
    /// handle) is that call. The enqueue flags do not matter to a requeue.
    #[inline]
    pub fn wake_delayed(&mut self, id: EntityId, wf: WakeFlags) -> Result<bool, SchedError> {
        match self.wake_delayed_beside_curr(id.0, wf) {
            Some(preempt) => Ok(preempt),
            None => self.wake(id, EnqueueFlags::WAKEUP, wf),
        }
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
        if self.avg.sum_weight() == 0 && self.avg.sum_w_vruntime() == 0 {
            return (Ok(DequeueOutcome::Dequeued), self.sleep_alone(i));
        }
        if self.sleep_curr(i) == DequeueOutcome::Delayed {
            return (Ok(DequeueOutcome::Delayed), self.schedule_after_delay(i));
        }
        (Ok(DequeueOutcome::Dequeued), self.schedule_after_sleep(i))
    }

    /// `dequeue(c, SLEEP)` of the running entity `c`, which is queued and
    /// not delayed, with `c` borrowed once: the steps of `dequeue`
    /// (`update_curr`, the DELAY_DEQUEUE eligibility test, `update_entity_pelt`,
    /// the lag saved by `place::save_lag` (with `place::lag_limit`, the
    /// functions `update_entity_lag` calls), the accounting, `recenter`) on
    /// the borrow.
    #[inline(always)]
    fn sleep_curr(&mut self, c: u32) -> DequeueOutcome {
        let pnow = self.pelt_clock.now();
        let se = &mut self.slots[c as usize].se;
        // dequeue_task_fair's util_est (c is runnable) and update_curr,
        // spelled out on the one borrow (`util_est_dequeue_update`,
        // `charge_entity`, `after_charge`). `util_est_update` returns at
        // once while `util_avg` is unchanged (most sleeps): that test here,
        // so that the call and its register saves in the mechanism's
        // switch (this is inlined there) are only paid when it works.
        if self.tun.features.has(Feature::UtilEst) {
            crate::pelt::util_est_dequeue(&mut self.pelt, &se.avg);
            if se.avg.util_est & crate::pelt::UTIL_AVG_UNCHANGED == 0 {
                crate::pelt::util_est_update(&mut se.avg, self.pelt_clock.cpu_capacity());
            }
        }
        // (after_charge's reschedule and buddy drop: both outcomes below
        // make them anyway, and nothing reads either before, so the
        // charge's answer is not needed)
        if self.clock > se.exec_start {
            let _ = charge_entity(se, self.clock, self.tun.delta_math, self.base_slice);
        }
        self.stats.sleeps += 1;
        let (v, w) = (se.vruntime, se.w());
        // update_entity_pelt: c runs and is queued and runnable until now
        // (in both outcomes below; `block_and_schedule` checked the flags,
        // so they are passed as constants)
        debug_assert!(se.on_rq && !se.sched_delayed);
        // c's eligibility, `eligible(v, Some((v, w)))`: its own term is on
        // both sides, so it is `curr_eligible(v)` (one product, no totals;
        // V itself is only needed for the lag below)
        if self.tun.features.has(Feature::DelayDequeue) && !self.avg.curr_eligible(v) {
            // delay_dequeue(c, is_curr): PELT, then asleep but queued
            // (no freshness pre-test: each update is a no-op when its
            // clock is within the current 1024 ns unit of `pnow`)
            se.avg.update_entity(pnow, true, true, true, w);
            self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, true);
            se.sched_delayed = true;
            se.delayed_at = self.clock;
            self.h_nr_runnable -= 1;
            self.stats.delayed += 1;
            if self.next == Some(c) {
                self.next = None;
            }
            self.need_resched = true;
            return DequeueOutcome::Delayed;
        }
        // V with curr's term (it is queued)
        let v_mean = self.avg.mean(Some((v, w)));
        // (no freshness pre-test: each update is a no-op when its
        // clock is within the current 1024 ns unit of `pnow`)
        se.avg.update_entity(pnow, true, true, true, w);
        self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, true);
        save_lag(se, v_mean, self.tun.delta_math, self.tun.tick_nsec());
        // sleep: the deadline stays absolute; curr: not in the tree
        se.on_rq = false;
        self.nr_queued -= 1;
        self.h_nr_runnable -= 1;
        self.load_weight -= w;
        if self.next == Some(c) {
            self.next = None;
        }
        self.need_resched = true;
        // recenter: V of the tree alone now that curr is off the queue
        let v0 = self.avg.mean(None);
        self.avg.shift_to(v0);
        DequeueOutcome::Dequeued
    }

    /// `dequeue(c, SLEEP)` and `schedule()` of the running entity `c`
    /// (queued, not delayed) alone on the queue: the tree and its sums are
    /// empty. Then V is c's vruntime exactly (`(0 + key·w)/(0 + w) =
    /// key`), so c is eligible (never delayed) and its saved lag is 0
    /// (`vdiff(V, v) = 0`, inside any clamp); the re-centring is a no-op
    /// (V of an empty tree is v0: a shift by 0); and the pick finds nothing
    /// queued. The other steps as in [`FairRq::sleep_curr`] and
    /// [`FairRq::schedule_after_sleep`]. Out of line: it is the cross-CPU
    /// pipe's block, and its code would weigh on the two-task one.
    #[inline(never)]
    fn sleep_alone(&mut self, c: u32) -> Option<EntityId> {
        let (math, now, base_slice) = (self.tun.delta_math, self.clock, self.base_slice);
        let feats = self.tun.features;
        let (pnow, cap) = (self.pelt_clock.now(), self.pelt_clock.cpu_capacity());
        let se = &mut self.slots[c as usize].se;
        // dequeue_task_fair's util_est (c is runnable) and update_curr,
        // on the one borrow as in `sleep_curr`
        if feats.has(Feature::UtilEst) {
            crate::pelt::util_est_dequeue(&mut self.pelt, &se.avg);
            crate::pelt::util_est_update(&mut se.avg, cap);
        }
        // (after_charge's reschedule and buddy drop are made below
        // anyway, before anything reads them: its answer is not needed)
        if now > se.exec_start {
            let _ = charge_entity(se, now, math, base_slice);
        }
        self.stats.sleeps += 1;
        // update_entity_pelt: c runs and is queued and runnable until now
        // (flags checked by `block_and_schedule`: constants)
        debug_assert!(se.on_rq && !se.sched_delayed);
        let w = se.w();
        // (no freshness pre-test: each update is a no-op when its
        // clock is within the current 1024 ns unit of `pnow`)
        se.avg.update_entity(pnow, true, true, true, w);
        self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, true);
        se.vlag = 0;
        se.on_rq = false;
        self.nr_queued -= 1;
        self.h_nr_runnable -= 1;
        self.load_weight -= w;
        if self.next == Some(c) {
            self.next = None;
        }
        self.need_resched = true;
        // schedule_after_sleep, which finds nothing queued: no pick
        if self.nr_queued != 0 {
            return self.schedule_after_sleep(c);
        }
        self.curr = None;
        self.pelt_clock.enter_idle(self.pelt.util_sum);
        self.need_resched = false;
        None
    }

    /// `schedule()` right after [`FairRq::sleep_curr`] delayed the sleep of
    /// the running entity `c`: `c` is queued and delayed, charged at this
    /// clock, its PELT and the queue's are current (so `put_prev`'s
    /// `update_curr` and `update_entity_pelt` are no-ops), and it is not
    /// eligible on the sums the pick sees (nothing moved since the test).
    ///
    /// The common case, one other entity `n` queued (the tree's only node)
    /// and runnable: `pick_eevdf` finds `c` not eligible and returns `n`
    /// whenever `n` is eligible (as the tree's leftmost, or as the next
    /// buddy, which can only be `n`: `c` was dropped as buddy), so it is
    /// tested here and the switch follows directly. Anything else is the
    /// general `schedule()`.
    #[inline(never)]
    fn schedule_after_delay(&mut self, c: u32) -> Option<EntityId> {
        // c is queued and running, so not in the tree: one node in the
        // tree is two entities queued
        if self.tree.len() == 1 {
            debug_assert!(self.nr_queued == 2);
            if let Some(n) = self.tree.leftmost() {
                let Ok([cs, ns]) = self.slots.get_disjoint_mut([c as usize, n as usize]) else { return self.schedule() };
                let (cse, nse) = (&cs.se, &mut ns.se);
                let (cv, cw) = (cse.vruntime, cse.w());
                // n's eligibility, `S + key(c)·wc >= key(n)·(wn + wc)`: with
                // n the tree's only node S is exactly `key(n)·wn` (the sums
                // are exact), so it is `key(c)·wc >= key(n)·wc`, that is
                // `key(n) <= key(c)` for wc > 0 (and true for wc = 0)
                let eligible = cw == 0 || self.avg.key(nse.vruntime) <= self.avg.key(cv);
                if !nse.sched_delayed && self.next.is_none_or(|x| x == n) && eligible {
                    self.stats.picks += 1;
                    // put_prev of c (its update_curr and PELT are no-ops),
                    // then set_next_in(n, Some(c)) step by step on the two
                    // borrows: the buddy, n's PELT (waiting, nothing
                    // running) and the queue's, the exec clock, the tree
                    // swap and the protection
                    self.curr = None;
                    if self.next == Some(n) {
                        self.next = None;
                    }
                    let pnow = self.pelt_clock.now();
                    let fresh = |last: Nanos| pnow.wrapping_sub(last) < 1024;
                    // (runnable: not delayed, tested above; no freshness
                    // pre-test: n has waited since its wakeup, so its
                    // update is rarely the no-op the test would skip)
                    // (n is the tree's only node, so queued: `on_rq` a
                    // constant)
                    nse.avg.update_entity(pnow, true, true, false, nse.w());
                    if !fresh(self.pelt.last_update_time) {
                        self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, false);
                    }
                    self.curr = Some(n);
                    nse.exec_start = self.clock;
                    nse.prev_sum_exec_runtime = nse.sum_exec_runtime;
                    swap_only_and_protect(&mut self.tree, &mut self.avg, &self.tun, (c, cse), (n, nse));
                    self.need_resched = false;
                    return Some(EntityId(n));
                }
            }
        }
        self.schedule()
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

    /// The enqueue of a wakeup onto an idle queue (nothing running, nothing
    /// queued) of an entity `i` off the queue: the steps of `enqueue`
    /// (`update_curr` has nothing to charge), `place_entity`,
    /// `update_entity_pelt`, the accounting, `enqueue_tree` and `recenter`,
    /// on one borrow. Returns false, having changed nothing, when this case
    /// does not apply (also for a bad handle: the general path reports it).
    ///
    /// With nothing queued, the tree and its sums are empty (they are
    /// exact), V is v0 and there is no lag to apply, so the entity is
    /// placed at v0 with a fresh request. Its insert adds `key(v0)·w = 0`
    /// to S, so V stays v0 and the re-centring is a shift by 0: the sums
    /// become W = w, S = 0 without the product.
    /// Inlined only into [`FairRq::wake`]: it is the cross-CPU pipe's
    /// wakeup, and its code would weigh on the same-CPU ones.
    #[inline(always)]
    fn wake_idle(&mut self, i: u32, ef: EnqueueFlags) -> bool {
        if self.nr_queued != 0 {
            return false;
        }
        let (math, feats, base_slice) = (self.tun.delta_math, self.tun.features, self.base_slice);
        let pnow = self.pelt_clock.now();
        let Some(slot) = self.slots.get_mut(i as usize) else { return false };
        if !slot.live || slot.se.on_rq {
            return false;
        }
        let se = &mut slot.se;
        // enqueue_task_fair's util_est_enqueue
        if feats.has(Feature::UtilEst) && !se.sched_delayed {
            crate::pelt::util_est_enqueue(&mut self.pelt, &se.avg);
        }
        // place_entity: nothing is queued, so the tree and its sums are
        // empty (they are exact) and V is v0; nr_queued == 0, so no lag
        debug_assert!(self.avg.sum_weight() == 0 && self.avg.sum_w_vruntime() == 0);
        let v0 = self.avg.zero_vruntime();
        place_se(se, v0, None, ef.contains(EnqueueFlags::INITIAL), feats, math, base_slice);
        // update_entity_pelt (not running, not queued until now, as
        // tested above; nothing runs on the queue)
        // (no freshness pre-test: each update is a no-op when its
        // clock is within the current 1024 ns unit of `pnow`)
        // (the queue's load is 0: nothing queued)
        let w = se.w();
        se.avg.update_entity(pnow, false, !se.sched_delayed, false, w);
        debug_assert!(self.load_weight == 0);
        self.pelt.update_queue_empty(pnow);
        // accounting, enqueue_tree, recenter
        se.on_rq = true;
        let w = se.w();
        self.nr_queued += 1;
        self.h_nr_runnable += !se.sched_delayed as u32;
        self.load_weight += w;
        // enqueue_tree and recenter: into the empty tree (nothing queued)
        // and empty sums at v0, S gains `key(v0)·w = 0`, V stays v0 and
        // the re-centring is a shift by 0 (`set_single` at v0)
        self.tree.insert_single(i, se.deadline, se.vruntime, se.slice);
        self.avg.set_single(v0, w);
        true
    }

    /// [`FairRq::wake_beside_curr`] of a delayed entity, out of line so
    /// that its code does not weigh on the plain wakeup's (register saves,
    /// layout). The enqueue flags do not matter to a requeue.
    #[inline(never)]
    fn wake_delayed_beside_curr(&mut self, i: u32, wf: WakeFlags) -> Option<bool> {
        self.wake_beside_curr::<true>(i, EnqueueFlags::NONE, wf)
    }

    /// The wakeup of `i` while a queued entity runs, the common cases, with
    /// both entities borrowed once: `i` is either neither queued nor running
    /// (`DELAYED = false`; the same steps as `update_curr`, `place_entity`,
    /// `update_entity_pelt`, the accounting, `enqueue_tree`, `recenter`), or
    /// queued and delayed (`DELAYED = true`; `requeue_delayed`: PELT, and
    /// with DELAY_ZERO the saved lag and, when it is positive, the
    /// re-placement at V as `unlink_for_place`, `place_entity`,
    /// `relink_after_place` do it); then `check_preempt_wakeup`. The lag
    /// and the placement are the functions the plain path calls
    /// (`place::save_lag`, `place::place_se`); the bookkeeping around them
    /// is written out on the two borrows and names the helper it follows.
    /// Returns `None`, having changed nothing, when this
    /// case does not apply (`i` is no live entity, is not in the state
    /// `DELAYED` names, or is the running one; no running entity, or it is
    /// off the queue); the wakeup then takes the general path, which also
    /// reports a bad handle.
    ///
    /// The preemption test finishes here only when its answer needs no other
    /// entity (running entity protected and eligible, a policy rule, a
    /// pending reschedule, or no preemption at all); otherwise it is
    /// [`FairRq::check_preempt_idx`] after the enqueue, as in the general
    /// path.
    #[inline(always)]
    fn wake_beside_curr<const DELAYED: bool>(&mut self, i: u32, ef: EnqueueFlags, wf: WakeFlags) -> Option<bool> {
        let c = self.curr?;
        // fails for an index out of range and for i == c
        let [ws, cs] = self.slots.get_disjoint_mut([i as usize, c as usize]).ok()?;
        if !ws.live {
            return None;
        }
        let (se, cse): (&mut SchedEntity, &mut SchedEntity) = (&mut ws.se, &mut cs.se);
        // a delayed entity is queued, except after a dequeue without
        // DELAYED (a migration's), which leaves `sched_delayed` set on an
        // entity off the queue: that one wakes as a plain wakeup
        let case = if DELAYED { se.sched_delayed && se.on_rq } else { !se.on_rq };
        if !case || !cse.on_rq {
            return None;
        }

        // update_curr: charge the running entity (and `after_charge`,
        // spelled out: `self` is borrowed through the two entities); not
        // for a requeue, which Linux does without it (fair.c
        // `requeue_delayed_entity()`): there the preemption check charges
        if !DELAYED && self.clock > cse.exec_start && charge_entity(cse, self.clock, self.tun.delta_math, self.base_slice) && self.nr_queued > 1 {
            self.need_resched = true;
            if self.next == Some(c) {
                self.next = None;
            }
        }
        // the running entity's term of V: it is queued, and stays put below
        let ct = Some((cse.vruntime, cse.w()));
        let avg: &mut AvgVruntime = &mut self.avg;
        let pnow = self.pelt_clock.now();

        // enqueue_task_fair's util_est_enqueue: a delayed entity's requeue
        // puts its EWMA back; a plain wakeup adds it unless it arrives
        // still delayed (migrated so)
        if self.tun.features.has(Feature::UtilEst) && (DELAYED || !se.sched_delayed) {
            crate::pelt::util_est_enqueue(&mut self.pelt, &se.avg);
        }
        if DELAYED {
            // requeue_delayed of `i`, queued (so in the tree: it is not curr)
            // and delayed
            // update_entity_pelt (queued, not runnable, not running: the
            // state `case` tested)
            // (no freshness pre-test: each update is a no-op when its
            // clock is within the current 1024 ns unit of `pnow`)
            let w = se.w();
            se.avg.update_entity(pnow, true, false, false, w);
            self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, true);
            if self.tun.features.has(Feature::DelayZero) {
                // update_entity_lag: V with `i` in the tree. `i` is in the
                // tree (queued, not running), so a tree of one node is `i`
                // alone, and with the running entity's weight V is the
                // mean of the two keys
                let v_mean = if self.tree.len() == 1 && se.w() == cse.w() {
                    avg.mean_of_equal_pair(se.vruntime, cse.vruntime)
                } else {
                    avg.mean(ct)
                };
                debug_assert_eq!(v_mean, avg.mean(ct));
                save_lag(se, v_mean, self.tun.delta_math, self.tun.tick_nsec());
                if se.vlag > 0 {
                    // it became eligible while delayed: re-place it at V
                    // with a fresh request. unlink_for_place (not curr):
                    // (`on_rq` and `nr_queued`, cleared here and set again
                    // by relink_after_place, are read by nothing between:
                    // left as they are.) When `i` is the tree's only node
                    // the tree is not emptied here and refilled below: the
                    // insert rewrites that node in place
                    // (`Tree::replace_only`), the same final tree.
                    let w = se.w();
                    let only = self.tree.len() == 1 && self.tree.leftmost() == Some(i);
                    if only || self.tree.remove(i) {
                        avg.sub(se.vruntime, w);
                    }
                    se.vlag = 0;
                    // place_entity(NONE): V of the others; no lag (vlag is
                    // 0), so the vruntime is V itself. With `i` the tree's
                    // only entity its removal leaves empty sums (they are
                    // exact: S is always the sum of its terms), and V of
                    // the others is the running entity's vruntime
                    // (`mean_or_curr`'s shortcut)
                    let alone = avg.sum_weight() == 0 && avg.sum_w_vruntime() == 0 && cse.w() != 0;
                    let v_mean = if alone { cse.vruntime } else { avg.mean(ct) };
                    place_se(se, v_mean, None, false, self.tun.features, self.tun.delta_math, self.base_slice);
                    // relink_after_place (not curr)
                    let inserted = if only {
                        self.tree.replace_only(i, i, se.deadline, se.vruntime, se.slice)
                    } else {
                        self.tree.insert(i, se.deadline, se.vruntime, se.slice)
                    };
                    if alone {
                        // recenter: `i` and the running entity both at the
                        // latter's vruntime, which is V (`set_single`)
                        avg.set_single(v_mean, if inserted { w } else { 0 });
                    } else {
                        if inserted {
                            avg.add(se.vruntime, w);
                        }
                        let v = avg.mean(ct);
                        avg.shift_to(v);
                    }
                }
            }
            se.sched_delayed = false;
            self.h_nr_runnable += 1;
            self.stats.delayed_requeued += 1;
            self.stats.end_delay(se.delayed_at, self.clock);
        } else {
            // place_entity (nr_queued > 0: curr is queued, so the weight
            // V is taken over is at least curr's)
            let wq = avg.sum_weight() + cse.w();
            place_se(se, avg.mean_or_curr(ct), Some(wq), ef.contains(EnqueueFlags::INITIAL), self.tun.features, self.tun.delta_math, self.base_slice);

            // update_entity_pelt (not running, not queued until now: the
            // state `case` tested)
            // (no freshness pre-test: each update is a no-op when its
            // clock is within the current 1024 ns unit of `pnow`)
            let w = se.w();
            se.avg.update_entity(pnow, false, !se.sched_delayed, false, w);
            self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, true);

            // accounting, enqueue_tree, recenter
            se.on_rq = true;
            let w = se.w();
            self.nr_queued += 1;
            self.h_nr_runnable += !se.sched_delayed as u32;
            self.load_weight += w;
            if self.tree.insert(i, se.deadline, se.vruntime, se.slice) {
                avg.add(se.vruntime, w);
            }
            let v = avg.mean(ct);
            avg.shift_to(v);
        }

        // check_preempt_wakeup: curr is c != i, charged above unless
        // DELAYED (then charged below, after the rules that decide without
        // it, as `check_preempt_idx` does); i is queued
        if self.need_resched {
            return Some(true);
        }
        if !self.tun.features.has(Feature::WakeupPreemption) {
            return Some(false);
        }
        let (cp, wp) = (cse.policy, se.policy);
        if (cp, wp) == (Policy::Normal, Policy::Normal) {
            // the policy rules below decide nothing between two normal entities
        } else if cp == Policy::Idle && wp != Policy::Idle {
            // cancel_protect_slice
            if vbefore(cse.vruntime, cse.vprot) {
                cse.vprot = cse.vruntime;
            }
            self.need_resched = true;
            return Some(true);
        } else if (cp == Policy::Idle) != (wp == Policy::Idle) || wp != Policy::Normal {
            return Some(false);
        }
        // check_preempt_wakeup's update_curr, which charges the running
        // entity after a requeue (as in Linux); after_charge spelled out
        if DELAYED && self.clock > cse.exec_start && charge_entity(cse, self.clock, self.tun.delta_math, self.base_slice) && self.nr_queued > 1 {
            self.need_resched = true;
            if self.next == Some(c) {
                self.next = None;
            }
        }
        let short = self.tun.features.has(Feature::PreemptShort) && se.slice < cse.slice;
        // (a requeued entity is no longer delayed: cleared above)
        if !short && (wf.contains(WakeFlags::FORK) || (!DELAYED && se.sched_delayed)) {
            return Some(false);
        }
        // Action::Pick without buddies (PICK_BUDDY needs `next`, nominated
        // only with NEXT_BUDDY)
        if !short && !self.tun.features.has(Feature::NextBuddy) && self.next.is_none() {
            // Action::Pick: with `i` the tree's only node (two entities
            // queued) pick_eevdf is `pick_of_two`; then as
            // check_preempt_idx: a preemption if `i` is picked, else
            // RUN_TO_PARITY's update_protect_slice. `i` is queued and not
            // running, so in the tree, and the running entity is queued
            // and not in it: a tree of one node is `i` alone, and two
            // entities are queued. Its sums are then exactly `i`'s term,
            // so `curr_eligible` below is `key(c) <= key(i)`, the pick's
            // own test of `c`, and a protected eligible `c` is its answer
            // too (`protect`): the same outcome as the test below, from
            // two keys instead of a product.
            if self.tree.len() == 1 {
                debug_assert!(self.nr_queued == 2 && self.tree.leftmost() == Some(i));
                self.stats.picks += 1;
                if pick_of_two(avg, cse, se, true) {
                    self.need_resched = true;
                    return Some(true);
                }
                if self.tun.features.has(Feature::RunToParity) {
                    let q = cse.slice.min(self.tree.min_slice().unwrap_or(u64::MAX));
                    let end = cse.vruntime.wrapping_add(calc_delta_fair_with(self.tun.delta_math, q, cse.weight));
                    cse.vprot = vmin(cse.vprot, end);
                }
                return Some(false);
            }
            // pick_eevdf(protect) returns the running entity at once when
            // it is eligible and protected; the wakee is not it, so no
            // preemption, and RUN_TO_PARITY shrinks the protection
            // (update_protect_slice).
            // (the running entity is queued: its eligibility is
            // `curr_eligible`, exactly `eligible(v, Some((v, w)))`)
            let protected = vbefore(cse.vruntime, cse.vprot);
            if protected && avg.curr_eligible(cse.vruntime) {
                self.stats.picks += 1;
                if self.tun.features.has(Feature::RunToParity) {
                    // cfs_rq_min_slice: curr is queued
                    let q = cse.slice.min(self.tree.min_slice().unwrap_or(u64::MAX));
                    let end = cse.vruntime.wrapping_add(calc_delta_fair_with(self.tun.delta_math, q, cse.weight));
                    cse.vprot = vmin(cse.vprot, end);
                }
                return Some(false);
            }
        }
        // the rest of check_preempt_idx (its tests above passed, and a
        // request the charge set is the pick's to answer)
        Some(self.check_preempt_charged(c, i, wf))
    }
}
