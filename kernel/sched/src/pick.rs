//! The running entity and the EEVDF pick: `update_curr`, `update_deadline`,
//! `avg_vruntime`, `entity_eligible`, `pick_eevdf`, switching (`set_curr`,
//! `put_prev`, `schedule`), the tick and yield (sections 1.2-1.7, 1.10).
//!
//! Arithmetic: vruntime and deadlines advance with wrapping adds by design
//! (compared only through `time`'s helpers); runtime sums saturate at
//! `u64::MAX` (584 years); `calc_delta_fair` is bounded in `weight`.

use crate::avg_vruntime::AvgVruntime;
use crate::entity::{EntityId, SchedEntity};
use crate::fair_rq::{DequeueFlags, FairRq, SchedError};
use crate::features::Feature;
use crate::time::{vbefore, Nanos};
use crate::tree::Tree;
use crate::tunables::Tunables;
use crate::weight::{calc_delta_fair_with, DeltaMath};

impl FairRq {
    /// V, the zero-lag virtual time: the weighted mean vruntime of the queued
    /// entities (running one included), rounded down.
    #[inline(always)]
    pub fn avg_vruntime(&self) -> u64 {
        self.avg.mean(self.curr_term())
    }

    /// Whether an entity with vruntime `v` would be eligible (`v <= V`).
    #[inline]
    pub fn vruntime_eligible(&self, v: u64) -> bool {
        self.avg.eligible(v, self.curr_term())
    }

    /// Whether a queued entity has non-negative lag. `false` for a bad
    /// handle.
    pub fn entity_eligible(&self, id: EntityId) -> bool {
        self.idx(id).is_ok_and(|i| self.entity_eligible_idx(i))
    }

    #[inline(always)]
    pub(crate) fn entity_eligible_idx(&self, i: u32) -> bool {
        self.vruntime_eligible(self.se(i).vruntime)
    }

    /// An entity's current lag `w·(V - v)` in weighted virtual ns (divide by
    /// 1024 for service ns). For diagnostics and tests.
    pub fn entity_lag(&self, id: EntityId) -> Option<i128> {
        let i = self.idx(id).ok()?;
        let se = self.se(i);
        Some(crate::time::vdiff(self.avg_vruntime(), se.vruntime) as i128 * se.w() as i128)
    }

    /// The smallest slice among the queued entities (u64::MAX if none).
    #[inline(always)]
    pub fn cfs_rq_min_slice(&self) -> Nanos {
        let c = match self.curr {
            Some(c) if self.se(c).on_rq => self.se(c).slice,
            _ => u64::MAX,
        };
        c.min(self.tree.min_slice().unwrap_or(u64::MAX))
    }

    /// Advance the clock to `now` and charge the running entity. Returns
    /// whether a reschedule is requested.
    pub fn update_curr_at(&mut self, now: Nanos) -> bool {
        self.update_clock(now);
        self.update_curr();
        self.need_resched
    }

    /// Charge the running entity for the time since it was last charged
    /// (Linux `update_curr`): runtime, vruntime, deadline; request a
    /// reschedule when its request is used up or its protection ran out and
    /// someone else is queued.
    ///
    /// The common no-op (nothing running, or already charged at this clock:
    /// every operation after the first in a batch) is inlined into the
    /// caller; the charge itself is out of line.
    #[inline(always)]
    pub fn update_curr(&mut self) {
        let Some(c) = self.curr else { return };
        if self.clock <= self.se(c).exec_start {
            return;
        }
        self.charge_curr(c);
    }

    /// The body of [`FairRq::update_curr`]: `clock > exec_start` of `c`.
    ///
    /// The entity is borrowed once (each `self.se(c)` is a bounds-checked
    /// lookup that the compiler must repeat after every store); the steps
    /// are those of `calc_delta_fair`, `update_deadline` and
    /// `protect_slice`.
    #[inline(always)]
    fn charge_curr(&mut self, c: u32) {
        let (now, math, base_slice) = (self.clock, self.tun.delta_math, self.base_slice);
        let must_yield = charge_entity(&mut self.slots[c as usize].se, now, math, base_slice);
        self.after_charge(c, must_yield);
    }

    /// The end of `update_curr` after [`charge_entity`] of the running
    /// entity `c`: with someone else queued, a used-up request or an ended
    /// protection requests a reschedule and drops `c` as the next buddy.
    #[inline(always)]
    pub(crate) fn after_charge(&mut self, c: u32, must_yield: bool) {
        if self.nr_queued > 1 && must_yield {
            self.need_resched = true;
            if self.next == Some(c) {
                self.next = None;
            }
        }
    }

    /// Linux `__pick_eevdf`: the eligible entity with the earliest deadline,
    /// considering the running entity in place. With `protect`, a running
    /// entity inside its protected slice keeps the CPU. Honours the next
    /// buddy (PICK_BUDDY) if it is eligible.
    #[inline(always)]
    pub(crate) fn pick_eevdf(&mut self, protect: bool) -> Option<u32> {
        // the running entity counts (in V and as a candidate) only while queued
        let curr = match self.curr {
            Some(c) if self.se(c).on_rq => Some(c),
            _ => None,
        };
        self.pick_eevdf_among(curr, protect)
    }

    /// [`FairRq::pick_eevdf`] with the running entity's candidacy given:
    /// `curr` is `self.curr` if it is queued, else `None` (a caller that
    /// knows it, e.g. right after the running entity went to sleep, saves
    /// the test).
    #[inline(always)]
    pub(crate) fn pick_eevdf_among(&mut self, curr: Option<u32>, protect: bool) -> Option<u32> {
        self.stats.picks += 1;
        if self.nr_queued == 0 {
            return None;
        }
        if self.nr_queued == 1 {
            return curr.or(self.tree.leftmost());
        }
        // the running entity's fields read once, and V's totals (S', W')
        // formed once for every eligibility test below (`eligible(v, ct)`
        // is `eligible_in(v, totals(ct))`)
        let cur = curr.map(|c| {
            let se = self.se(c);
            (c, se.vruntime, se.w(), se.deadline, se.vprot)
        });
        let (s, wt) = self.avg.totals(cur.map(|(_, v, w, _, _)| (v, w)));
        if self.feat(Feature::PickBuddy) {
            if let Some(n) = self.next {
                let nse = self.se(n);
                if nse.on_rq && self.avg.eligible_in(nse.vruntime, s, wt) {
                    return Some(n);
                }
            }
        }
        let c = cur.filter(|&(_, v, _, _, _)| self.avg.eligible_in(v, s, wt));
        if let Some((c, v, _, _, vprot)) = c {
            // protect_slice
            if protect && vbefore(v, vprot) {
                return Some(c);
            }
        }
        let avg = &self.avg;
        let mut best = self.tree.pick(|v| avg.eligible_in(v, s, wt));
        if let Some((c, _, _, deadline, _)) = c {
            if best.is_none_or(|b| vbefore(deadline, self.se(b).deadline)) {
                best = Some(c);
            }
        }
        if best.is_none() {
            // Unreachable while the sums are exact (Σ lag = 0 puts the
            // smallest vruntime at or left of V); never leave the CPU idle
            // over it: take the earliest deadline.
            self.stats.no_eligible_fallbacks += 1;
            best = match (curr, self.tree.leftmost()) {
                (Some(c), Some(l)) if vbefore(self.se(l).deadline, self.se(c).deadline) => Some(l),
                (Some(c), _) => Some(c),
                (None, l) => l,
            };
        }
        best
    }

    /// Linux `pick_eevdf`: the EEVDF choice with slice protection, without
    /// switching and without finishing delayed dequeues (so it may name a
    /// delayed entity). `None` only when nothing is queued.
    pub fn pick_eevdf_peek(&mut self) -> Option<EntityId> {
        self.update_curr();
        self.pick_eevdf(true).map(EntityId)
    }

    /// Choose the entity to run next (Linux `pick_next_entity`), the current
    /// one included. A delayed entity that comes up is dequeued for good and
    /// the pick repeats. Does not switch: see [`FairRq::set_curr`].
    #[inline(always)]
    pub fn pick_next(&mut self) -> Option<EntityId> {
        self.update_curr();
        loop {
            if self.nr_queued == 0 {
                return None;
            }
            let i = self.pick_eevdf(true)?;
            if self.se(i).sched_delayed {
                self.stats.delayed_dequeued_by_pick += 1;
                // cannot fail: i is live and queued
                let _ = self.dequeue(EntityId(i), DequeueFlags::SLEEP | DequeueFlags::DELAYED);
                continue;
            }
            return Some(EntityId(i));
        }
    }

    /// Stop running the current entity (Linux `put_prev_entity`): charge it
    /// and, if it is still queued, put it back in the tree.
    #[inline(always)]
    pub fn put_prev(&mut self) {
        let Some(c) = self.curr else { return };
        // update_entity_pelt also brings the queue's PELT to now, so the
        // queue needs no second update after curr is cleared (it would
        // accrue nothing at the same clock).
        if self.se(c).on_rq {
            self.update_curr();
            self.update_entity_pelt(c);
            self.curr = None;
            self.enqueue_tree(c);
        } else {
            self.update_entity_pelt(c);
            self.curr = None;
        }
    }

    /// Switch from the running entity (if any) to the queued entity `i`
    /// (not running): `put_prev` then `set_next`.
    ///
    /// When the running entity `c` is queued and `i` is the tree's only
    /// node (two entities queued: every switch of a two-task pipe whose
    /// sleeper was delayed, or of two yielding hogs), `put_prev` would
    /// insert `c` beside `i` (descent, retrace) and `set_next` then remove
    /// `i` from a two-node tree (relink, retrace): the tree ends as `c`
    /// alone, exactly as the removal of the single node `i` followed by the
    /// insert of `c` into the empty tree leaves it (root and leftmost `c`,
    /// no links, height 1, `c`'s own keys as its augments; `i`'s node
    /// emptied). So the tree work is done in that cheaper order, inside
    /// `set_next`; the V sums still add `c` before subtracting `i`, and
    /// every other step keeps its place.
    #[inline(always)]
    pub(crate) fn switch_to(&mut self, i: u32) {
        if let Some(c) = self.curr {
            if self.se(c).on_rq && self.tree.len() == 1 && self.tree.leftmost() == Some(i) {
                // put_prev without its tree insert
                self.update_curr();
                self.update_entity_pelt(c);
                self.curr = None;
                self.set_next_in(i, Some(c));
                return;
            }
        }
        self.put_prev();
        self.set_next(i);
    }

    /// Make a queued entity the running one (Linux `set_next_entity`): take
    /// it out of the tree, start its protected slice and its exec clock.
    #[inline(always)]
    pub(crate) fn set_next(&mut self, i: u32) {
        self.set_next_in(i, None);
    }

    /// [`FairRq::set_next`] of `n`, the only queued entity, not delayed,
    /// with nothing running (an idle queue's switch to its wakee): `n` is
    /// then the tree's only node (nothing queued runs), so its removal
    /// empties the tree and the sums (exact: its term was all of them),
    /// and with the tree empty `cfs_rq_min_slice` is `n`'s own slice. The
    /// steps of `set_next_in(n, None)` with these facts as constants
    /// (queued, runnable, not running until now; the queue loaded).
    #[inline(always)]
    fn set_next_alone(&mut self, n: u32) {
        debug_assert!(self.curr.is_none() && self.nr_queued == 1 && self.tree.len() == 1);
        if self.next == Some(n) {
            self.next = None;
        }
        let (now, math, feats) = (self.clock, self.tun.delta_math, self.tun.features);
        let pnow = self.pelt_clock.now();
        let se = &mut self.slots[n as usize].se;
        debug_assert!(se.on_rq && !se.sched_delayed);
        let fresh = |last: Nanos| pnow.wrapping_sub(last) < 1024;
        if !fresh(se.avg.last_update_time) {
            let w = se.w();
            se.avg.update_entity(pnow, true, true, false, w);
        }
        if !fresh(self.pelt.last_update_time) {
            self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, false);
        }
        self.curr = Some(n);
        se.exec_start = now;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
        // dequeue_tree of the only node
        self.tree.remove_single(n);
        self.avg.clear_only(se.vruntime, se.w());
        // set_protect_slice: the tree is empty, so cfs_rq_min_slice is
        // n's slice, and with RUN_TO_PARITY the protection is its deadline
        let q = if feats.has(Feature::RunToParity) { se.slice } else { self.tun.normalized_base_slice().min(se.slice) };
        se.vprot = if q == se.slice {
            se.deadline
        } else {
            crate::time::vmin(se.deadline, se.vruntime.wrapping_add(calc_delta_fair_with(math, q, se.weight)))
        };
    }

    /// [`FairRq::set_next`]; with `put_back = Some(c)`, `c` (queued, no
    /// longer running, not yet in the tree) goes into the tree right after
    /// `i` leaves it: the tree half of `put_prev`, for
    /// [`FairRq::switch_to`] (where `i` is the tree's only node).
    #[inline(always)]
    pub(crate) fn set_next_in(&mut self, i: u32, put_back: Option<u32>) {
        let back = put_back.map(|c| {
            let se = self.se(c);
            (c, se.deadline, se.vruntime, se.slice, se.w())
        });
        debug_assert!(put_back.is_none() || self.se(i).on_rq);
        if self.next == Some(i) {
            self.next = None;
        }
        let (now, math, feats) = (self.clock, self.tun.delta_math, self.tun.features);
        let pnow = self.pelt_clock.now();
        let se = &mut self.slots[i as usize].se;
        // PELT first (`update_entity_pelt`, spelled out on the borrow):
        // until now, i was waiting and the CPU had no curr
        let fresh = |last: Nanos| pnow.wrapping_sub(last) < 1024;
        // each tested on its own: after a sleep at this clock the queue's
        // is fresh and the entity's is not (pipe switches); a test is
        // cheaper than the no-op update
        if !fresh(se.avg.last_update_time) {
            let w = se.w();
            se.avg.update_entity(pnow, se.on_rq, !se.sched_delayed, self.curr == Some(i), w);
        }
        if !fresh(self.pelt.last_update_time) {
            self.pelt.update_queue(pnow, self.load_weight, self.h_nr_runnable, self.curr.is_some());
        }
        // curr is set before the tree removal, so V never misses it
        self.curr = Some(i);
        se.exec_start = now;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
        if se.on_rq {
            // dequeue_tree (and put_prev's enqueue_tree of `back`, whose
            // V term goes in first, as in put_prev then set_next); the
            // tree's smallest slice afterwards
            let tree_min_slice = match back {
                Some((c, deadline, vruntime, slice, w)) if self.tree.replace_only(i, c, deadline, vruntime, slice) => {
                    // i was the tree's only node and c replaces it: the
                    // sums were exactly i's term, and become exactly c's
                    // (what adding c's and subtracting i's leaves); the
                    // tree is c alone, so its smallest slice is c's
                    self.avg.set_only(vruntime, w);
                    Some(slice)
                }
                back => {
                    let removed = self.tree.remove(i);
                    if let Some((c, deadline, vruntime, slice, w)) = back {
                        if self.tree.insert(c, deadline, vruntime, slice) {
                            self.avg.add(vruntime, w);
                        }
                    }
                    if removed {
                        self.avg.sub(se.vruntime, se.w());
                    }
                    self.tree.min_slice()
                }
            };
            // set_protect_slice: i is curr and queued, so cfs_rq_min_slice
            // is the smaller of its slice and the tree's; the min with its
            // own slice below takes the former
            let q = if feats.has(Feature::RunToParity) {
                tree_min_slice.unwrap_or(u64::MAX)
            } else {
                self.tun.normalized_base_slice()
            };
            let q = q.min(se.slice);
            se.vprot = if q == se.slice {
                se.deadline
            } else {
                crate::time::vmin(se.deadline, se.vruntime.wrapping_add(calc_delta_fair_with(math, q, se.weight)))
            };
        }
    }

    /// Switch to `id` (which must be queued and not delayed): put the
    /// previous entity back
    /// and start `id`. Switching to the current entity only clears the
    /// reschedule request.
    pub fn set_curr(&mut self, id: EntityId) -> Result<(), SchedError> {
        let i = self.idx(id)?;
        if !self.se(i).runnable() {
            return Err(SchedError::NotQueued(id)); // not queued, or asleep (delayed)
        }
        if self.curr != Some(i) {
            self.switch_to(i);
        }
        self.need_resched = false;
        Ok(())
    }

    /// Pick and switch (the `schedule()` step of this class): returns the
    /// entity now running, or `None` when the CPU goes idle.
    pub fn schedule(&mut self) -> Option<EntityId> {
        if self.curr.is_none() && self.nr_queued == 1 {
            // an idle CPU's switch to its one queued entity (a wakeup onto
            // an idle queue): pick_next's charge has no one to charge and
            // pick_eevdf, with nothing running and one entity queued,
            // returns the tree's leftmost; unless it is delayed, switch
            if let Some(n) = self.tree.leftmost() {
                if !self.se(n).sched_delayed {
                    self.stats.picks += 1;
                    self.set_next_alone(n);
                    self.need_resched = false;
                    return Some(EntityId(n));
                }
            }
        }
        if let Some(c) = self.curr {
            if self.nr_queued == 2 && self.next.is_none() && self.tree.len() == 1 {
                if let Some(picked) = self.schedule_pair(c) {
                    return Some(EntityId(picked));
                }
            }
        }
        let next = self.pick_next();
        match next {
            Some(EntityId(i)) => {
                // set_curr without its checks: pick_next returns a live,
                // queued, not delayed entity
                if self.curr != Some(i) {
                    self.switch_to(i);
                }
                self.need_resched = false;
            }
            None => {
                self.put_prev();
                self.pelt_clock.enter_idle(self.pelt.util_sum);
                self.need_resched = false;
            }
        }
        next
    }

    /// `schedule()` of the running entity `c` beside exactly one other
    /// queued entity `n` (the tree's only node), neither delayed, with no
    /// next buddy: two yielding tasks, or a wakeup that preempts the
    /// waker. Returns `None`, having changed nothing, when that is not the
    /// state (`c` off the queue or delayed, `n` delayed); the general
    /// `schedule()` follows.
    ///
    /// The steps of `pick_next`, `pick_eevdf` and `switch_to` on two
    /// borrows: the charge of `c` (`update_curr`); with the sums exactly
    /// `n`'s term (`S = key(n)·wn`, `W = wn`), `c` is eligible iff
    /// `S >= key(c)·W` ([`AvgVruntime::curr_eligible`]) and `n` iff
    /// `S + key(c)·wc >= key(n)·(W + wc)` (`Tree::pick` tests the leftmost, then descends
    /// to the same node and tests it again: one test); the buddy test is
    /// skipped (no buddy), and neither pick can be delayed.
    ///
    /// [`AvgVruntime::curr_eligible`]: crate::avg_vruntime::AvgVruntime::curr_eligible
    #[inline(always)]
    fn schedule_pair(&mut self, c: u32) -> Option<u32> {
        let n = self.tree.leftmost()?;
        let (now, math, base_slice) = (self.clock, self.tun.delta_math, self.base_slice);
        let [cs, ns] = self.slots.get_disjoint_mut([c as usize, n as usize]).ok()?;
        let (cse, nse) = (&mut cs.se, &mut ns.se);
        if !cse.on_rq || cse.sched_delayed || nse.sched_delayed {
            return None;
        }
        // (so the PELT updates below take these flags as the constants
        // they are: c queued and runnable, n runnable)
        // pick_next's update_curr (after_charge: two entities are queued,
        // and c is no buddy)
        if now > cse.exec_start && charge_entity(cse, now, math, base_slice) {
            self.need_resched = true;
        }
        // pick_eevdf(protect) among c and n
        self.stats.picks += 1;
        let pick_n = pick_of_two(&self.avg, cse, nse, true);
        if pick_n {
            // switch_to(n) on the two borrows: put_prev of c without its
            // tree insert (its update_curr is a no-op: charged at this
            // clock), then set_next_in(n, Some(c)), step by step
            let pnow = self.pelt_clock.now();
            let fresh = |last: Nanos| pnow.wrapping_sub(last) < 1024;
            // update_entity_pelt(c): c running, queued and runnable; the
            // queue with a curr
            if !(fresh(cse.avg.last_update_time) && fresh(self.pelt.last_update_time)) {
                cse.avg.update_entity(pnow, true, true, true, cse.w());
                self.pelt.update_queue_loaded(pnow, self.load_weight, self.h_nr_runnable, true);
            }
            self.curr = None;
            // set_next_in: no buddy to drop; n's PELT (waiting, nothing
            // running); the queue's is fresh now (the update above, or
            // both were), so its update is the no-op it skips
            // (n is the tree's only node, so queued: `on_rq` a constant)
            if !fresh(nse.avg.last_update_time) {
                nse.avg.update_entity(pnow, true, true, false, nse.w());
            }
            self.curr = Some(n);
            nse.exec_start = now;
            nse.prev_sum_exec_runtime = nse.sum_exec_runtime;
            swap_only_and_protect(&mut self.tree, &mut self.avg, &self.tun, (c, cse), (n, nse));
        }
        self.need_resched = false;
        Some(if pick_n { n } else { c })
    }

    /// Timer tick at `now` (Linux `entity_tick`): charge the running entity,
    /// update PELT, re-centre v0 (if enabled). Returns whether to reschedule.
    pub fn tick(&mut self, now: Nanos) -> bool {
        self.update_clock(now);
        self.update_curr();
        match self.curr {
            Some(c) => self.update_entity_pelt(c),
            None => self.update_rq_pelt(),
        }
        if self.tun.recenter_on_tick {
            self.recenter();
        }
        self.need_resched
    }

    /// The running entity yields: if it is eligible it gives up the rest of
    /// its request (`v = d`, `d += r/w`). Requests a reschedule when someone
    /// else is queued. Always inlined: `mech::schedule::yield_now` is on the
    /// yield fast path, and the register check's yield calls it too (a
    /// second caller made LLVM keep it out of line: 4 instructions more per
    /// switch).
    #[inline(always)]
    pub fn yield_curr(&mut self) {
        let Some(c) = self.curr else { return };
        let (now, math, base_slice) = (self.clock, self.tun.delta_math, self.base_slice);
        let se = &mut self.slots[c as usize].se;
        if self.nr_queued <= 1 || !se.on_rq {
            return;
        }
        if self.next == Some(c) {
            self.next = None;
        }
        // update_curr; its after_charge (reschedule, drop c as buddy) is
        // subsumed: the buddy is cleared above, the reschedule set below
        if now > se.exec_start {
            charge_entity(se, now, math, base_slice);
        }
        // entity_eligible: c is queued, so it is V's extra term
        if self.avg.curr_eligible(se.vruntime) {
            let vslice = calc_delta_fair_with(math, se.slice, se.weight);
            se.vruntime = se.deadline;
            se.deadline = se.deadline.wrapping_add(vslice);
        }
        self.need_resched = true;
    }
}

/// The end of `set_next_in(n, Some(c))` for `n` the tree's only node (so
/// queued; both callers found the tree of length 1 with `n` its leftmost):
/// `n` leaves the tree and `c` (queued, no longer running) goes in, in one
/// step ([`Tree::replace_single`]), the sums then exactly `c`'s term; then
/// `n`'s protected slice (`set_protect_slice`). On the fields themselves,
/// for callers that hold both entities borrowed.
#[inline(always)]
pub(crate) fn swap_only_and_protect(
    tree: &mut Tree,
    avg: &mut AvgVruntime,
    tun: &Tunables,
    (c, cse): (u32, &SchedEntity),
    (n, nse): (u32, &mut SchedEntity),
) {
    debug_assert!(nse.on_rq);
    let (cv, cw) = (cse.vruntime, cse.w());
    tree.replace_single(n, c, cse.deadline, cv, cse.slice);
    avg.set_only(cv, cw);
    // set_protect_slice: n is curr and queued, so cfs_rq_min_slice is the
    // smaller of its slice and the tree's, which is c alone
    let q = if tun.features.has(Feature::RunToParity) {
        cse.slice
    } else {
        tun.normalized_base_slice()
    };
    let q = q.min(nse.slice);
    nse.vprot = if q == nse.slice {
        nse.deadline
    } else {
        crate::time::vmin(nse.deadline, nse.vruntime.wrapping_add(calc_delta_fair_with(tun.delta_math, q, nse.weight)))
    };
}

/// `pick_eevdf_among(Some(c), protect)` (after its pick count) in the
/// state of two queued entities and no next buddy: the running entity `c`
/// and the tree's only node `n`, with `avg` the sums of that tree (the
/// pick does not look at `sched_delayed`). Returns whether `n` is the pick.
///
/// The same tests: `c` eligible iff `S >= key(c)·W` (`curr_eligible`, the
/// running entity's term on both sides), `n` iff `S + key(c)·wc >=
/// key(n)·(W + wc)`; `Tree::pick` on one node tests it once (the descent
/// would reach the same node); the buddy test has no buddy. With `n` the
/// tree's only node the sums are exactly its term (`S = key(n)·wn`, `W =
/// wn`: they are exact), so the first is `key(n)·wn >= key(c)·wn` and the
/// second `key(c)·wc >= key(n)·wc`; a weight is at least `MIN_WEIGHT` > 0,
/// so they are `key(c) <= key(n)` and `key(n) <= key(c)`: two compares
/// instead of two 128-bit products (the same answers, products and all,
/// as `tests/policy/fast_paths.rs` and `tests/policy/combined.rs` check through
/// `schedule()` and the wakeup against the general pick). One of the two
/// always holds, so the pick never falls back to "no eligible entity"
/// (nothing for `no_eligible_fallbacks`).
#[inline(always)]
pub(crate) fn pick_of_two(avg: &AvgVruntime, c: &SchedEntity, n: &SchedEntity, protect: bool) -> bool {
    debug_assert!(avg.sum_weight() == n.w() && avg.sum_w_vruntime() == avg.key(n.vruntime) as i128 * n.w() as i128);
    let (kc, kn) = (avg.key(c.vruntime), avg.key(n.vruntime));
    let c_eligible = kc <= kn;
    if c_eligible && protect && vbefore(c.vruntime, c.vprot) {
        return false;
    }
    let n_eligible = kn <= kc;
    // Not `c` means `n`: when `c` is not eligible, `n` is.
    !(c_eligible && (!n_eligible || vbefore(c.deadline, n.deadline)))
}

/// The charge of `update_curr` on the running entity `se` at `now`
/// (`now > se.exec_start`): runtime, vruntime (`calc_delta_fair`), and at
/// its deadline a new request from the current vruntime (`d = v + r/w`,
/// reloading the default slice unless custom: Linux `update_deadline`).
/// Returns whether it must give up the CPU if someone else is queued: its
/// request was used up, or its protection (`vprot`) ended. A free function
/// on the borrowed entity, so the combined operations, which hold borrows
/// of two entities, share it.
#[inline(always)]
pub(crate) fn charge_entity(se: &mut SchedEntity, now: Nanos, math: DeltaMath, base_slice: Nanos) -> bool {
    let delta = now - se.exec_start;
    let dv = calc_delta_fair_with(math, delta, se.weight);
    se.exec_start = now;
    se.sum_exec_runtime = se.sum_exec_runtime.saturating_add(delta);
    se.vruntime = se.vruntime.wrapping_add(dv);
    let expired = !vbefore(se.vruntime, se.deadline);
    if expired {
        let slice = if se.custom_slice { se.slice } else { base_slice };
        let vslice = calc_delta_fair_with(math, slice, se.weight);
        se.slice = slice;
        se.deadline = se.vruntime.wrapping_add(vslice);
    }
    expired || !vbefore(se.vruntime, se.vprot)
}
