//! The fair run-queue of one CPU: entity arena, accounting, enqueue and
//! dequeue. Picking and the running entity live in `pick`, placement and
//! reweighting in `place`, wakeup preemption in `preempt`, delayed dequeue in
//! `delay`.
//!
//! # Contract with the kernel
//!
//! The run-queue owns the fair-class state of its entities in an arena and
//! hands out [`EntityId`] handles. The kernel keeps `task -> (cpu, EntityId)`
//! in its own structures and drives the queue under the CPU's run-queue lock:
//!
//! 1. `update_clock(now)` with the CPU's task clock before a batch of
//!    operations (like Linux's `update_rq_clock`); time never goes backwards
//!    (a smaller value is ignored).
//! 2. Task lifecycle: [`FairRq::fork`] / [`FairRq::add_entity`] create an
//!    entity (not queued); [`FairRq::remove_entity`] destroys one that is
//!    neither queued nor current and returns its state (also the way to
//!    migrate: dequeue without `SLEEP`, remove, `add_entity` on the target
//!    queue, enqueue with `MIGRATED`).
//! 3. Wakeup: `enqueue(id, EnqueueFlags::WAKEUP)` then
//!    `check_preempt_wakeup(id, flags)`; a `true` answer means "reschedule
//!    this CPU". Waking an entity whose dequeue was delayed requeues it in
//!    place (no second enqueue).
//! 4. Blocking: `dequeue(id, DequeueFlags::SLEEP)`, which answers
//!    [`DequeueOutcome::Delayed`] when the entity stays queued until it is
//!    eligible (the task is asleep nevertheless; the kernel must not treat
//!    it as runnable, but must keep the handle here until the entity is
//!    dequeued for good: a later pick does that, or an explicit
//!    `dequeue(id, SLEEP | DELAYED)` e.g. at exit).
//! 5. Switching: `schedule()` (or `pick_next()` + `set_curr()`), which puts
//!    the previous entity back and returns the one to run (`None`: idle).
//!    The two common steps of a blocking round trip also exist combined,
//!    with the same state and results as the sequences and fewer
//!    instructions: [`FairRq::wake`] (`enqueue` + `check_preempt_wakeup`)
//!    and [`FairRq::block_and_schedule`] (`dequeue` + `schedule`).
//! 6. Timer tick: `tick(now)` returns whether to reschedule.
//! 7. Attribute changes: `reweight`, `set_weight`, `set_slice`,
//!    `yield_curr`.
//!
//! No operation panics on any input: bad handles and wrong states are
//! reported as [`SchedError`], arithmetic is bounded or saturating.
//!
//! # Invariants of [`FairRq`]
//!
//! - `nr_queued` = entities with `on_rq` (running, in the tree, or delayed);
//!   `h_nr_runnable` = those of them not delayed; `load_weight` = their
//!   summed weights. Delayed entities count in load and `nr_queued`.
//! - The tree holds exactly the `on_rq` entities other than `curr`; the
//!   `avg` sums hold exactly the tree's entities (curr is added on the fly).
//! - `curr`, when set, is a live entity; it may be off the queue (it went to
//!   sleep and has not been switched out yet).
//! - `next` (the buddy), when set, is a live queued entity.
//! - Every queued entity's vruntime is within a few clamped lags of V and
//!   v0 is re-centred on V after every tree insert/remove, so virtual-time
//!   differences never approach 2^63 (see `avg_vruntime`).

use alloc::vec::Vec;

use crate::avg_vruntime::AvgVruntime;
use crate::entity::{EntityId, Policy, SchedEntity};
use crate::features::{Feature, Features};
pub use crate::flags::{DequeueFlags, DequeueOutcome, EnqueueFlags, SchedError, WakeFlags};
use crate::pelt::{PeltClock, SchedAvg, SCHED_CAPACITY_SCALE};
use crate::time::Nanos;
use crate::tree::{Tree, NIL};
use crate::tunables::{clamp_custom_slice, Tunables, MAX_CUSTOM_SLICE_NS};
use crate::weight::{calc_delta_fair_with, Nice};

/// Counters for tests and diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RqStats {
    /// Calls of the EEVDF pick.
    pub picks: u64,
    /// Picks that found no eligible entity and fell back to the earliest
    /// deadline. Always 0 unless an arithmetic invariant broke.
    pub no_eligible_fallbacks: u64,
    /// Sleeps: `dequeue(SLEEP)` of a runnable entity (delayed or not).
    pub sleeps: u64,
    /// Sleeps turned into delayed dequeues.
    pub delayed: u64,
    /// Delayed entities finally dequeued by a pick.
    pub delayed_dequeued_by_pick: u64,
    /// Delayed entities finally dequeued, by a pick or an explicit
    /// `dequeue(SLEEP | DELAYED)` (exit).
    pub delayed_dequeued: u64,
    /// Delayed entities woken (requeued in place).
    pub delayed_requeued: u64,
    /// Task-clock ns delayed entities stayed queued asleep, summed over
    /// the delays that ended here (by a requeue or a final dequeue).
    pub delayed_ns: u64,
    /// The longest of those delays.
    pub delayed_max_ns: u64,
    /// Saved lags (virtual ns) delayed entities left with at their final
    /// dequeue, summed (after DELAY_ZERO): never positive with DELAY_ZERO.
    pub delayed_leave_lag: i64,
    /// Final dequeues whose positive lag DELAY_ZERO dropped.
    pub delay_zeroed: u64,
}

impl RqStats {
    /// A delay that began at `since` ends at `now`.
    #[inline]
    pub(crate) fn end_delay(&mut self, since: Nanos, now: Nanos) {
        let d = now.saturating_sub(since);
        self.delayed_ns = self.delayed_ns.saturating_add(d);
        self.delayed_max_ns = self.delayed_max_ns.max(d);
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) se: SchedEntity,
    pub(crate) live: bool,
}

/// One CPU's fair run-queue; see the module docs for the contract and
/// invariants.
#[derive(Clone, Debug)]
pub struct FairRq {
    pub(crate) slots: Vec<Slot>,
    free: Vec<u32>,
    pub(crate) tree: Tree,
    pub(crate) avg: AvgVruntime,
    pub(crate) curr: Option<u32>,
    pub(crate) next: Option<u32>,
    pub(crate) nr_queued: u32,
    pub(crate) h_nr_runnable: u32,
    pub(crate) load_weight: u64,
    pub(crate) tun: Tunables,
    /// `tun.base_slice()`, cached: it is read on every placement, deadline
    /// refresh and switch, and `set_tunables` is the only way `tun` changes.
    pub(crate) base_slice: Nanos,
    pub(crate) clock: Nanos,
    pub(crate) pelt_clock: PeltClock,
    pub(crate) pelt: SchedAvg,
    pub(crate) need_resched: bool,
    pub(crate) stats: RqStats,
}

/// Initial v0 of a new queue: just below the wrap point, so that wrapping
/// is exercised early (as Linux does).
pub const INITIAL_ZERO_VRUNTIME: u64 = 0u64.wrapping_sub(1 << 20);

impl FairRq {
    /// An empty queue with the given tunables.
    pub fn new(tun: Tunables) -> FairRq {
        FairRq {
            slots: Vec::new(),
            free: Vec::new(),
            tree: Tree::new(),
            avg: AvgVruntime::new(INITIAL_ZERO_VRUNTIME),
            curr: None,
            next: None,
            nr_queued: 0,
            h_nr_runnable: 0,
            load_weight: 0,
            tun,
            base_slice: tun.base_slice(),
            clock: 0,
            pelt_clock: PeltClock::new(0),
            pelt: SchedAvg::default(),
            need_resched: false,
            stats: RqStats::default(),
        }
    }

    // ---- accessors ----

    /// The tunables.
    pub fn tunables(&self) -> &Tunables {
        &self.tun
    }

    /// Change the tunables (e.g. CPU count on hotplug, features). Takes
    /// effect at each entity's next slice refresh or placement.
    pub fn set_tunables(&mut self, tun: Tunables) {
        self.tun = tun;
        self.base_slice = tun.base_slice();
    }

    /// The feature switches.
    pub fn features(&self) -> Features {
        self.tun.features
    }

    #[inline]
    pub(crate) fn feat(&self, f: Feature) -> bool {
        self.tun.features.has(f)
    }

    /// The state of a live entity.
    #[inline]
    pub fn entity(&self, id: EntityId) -> Option<&SchedEntity> {
        self.slots.get(id.0 as usize).filter(|s| s.live).map(|s| &s.se)
    }

    /// The next buddy (`cfs_rq->next`), set by a NEXT_BUDDY wakeup and
    /// preferred by the pick while eligible (PICK_BUDDY).
    pub fn next_buddy(&self) -> Option<EntityId> {
        self.next.map(EntityId)
    }

    /// The running entity, if any.
    #[inline]
    pub fn curr(&self) -> Option<EntityId> {
        self.curr.map(EntityId)
    }

    /// Entities on the queue (running, waiting, or delayed).
    #[inline]
    pub fn nr_queued(&self) -> u32 {
        self.nr_queued
    }

    /// Queued entities that are not delayed.
    #[inline]
    pub fn h_nr_runnable(&self) -> u32 {
        self.h_nr_runnable
    }

    /// Summed weight of the queued entities (delayed ones included).
    #[inline]
    pub fn load_weight(&self) -> u64 {
        self.load_weight
    }

    /// The task clock as last updated.
    #[inline]
    pub fn clock(&self) -> Nanos {
        self.clock
    }

    /// The run-queue's PELT averages.
    pub fn pelt(&self) -> &SchedAvg {
        &self.pelt
    }

    /// The invariant PELT clock.
    pub fn pelt_clock(&self) -> &PeltClock {
        &self.pelt_clock
    }

    /// Set the CPU capacity (1..=1024) used by PELT invariance.
    pub fn set_cpu_capacity(&mut self, cap: u64) {
        self.pelt_clock.set_cpu_capacity(cap);
    }

    /// Set the current frequency ratio (1..=1024) used by PELT invariance.
    pub fn set_freq_capacity(&mut self, cap: u64) {
        self.pelt_clock.set_freq_capacity(cap);
    }

    /// Whether a reschedule has been requested since the last switch.
    #[inline]
    pub fn need_resched(&self) -> bool {
        self.need_resched
    }

    /// Diagnostic counters.
    pub fn stats(&self) -> &RqStats {
        &self.stats
    }

    /// The zero-lag reference v0 (Linux's `zero_vruntime`).
    pub fn zero_vruntime(&self) -> u64 {
        self.avg.zero_vruntime()
    }

    /// The V sums (for tests and diagnostics).
    pub fn avg_sums(&self) -> &AvgVruntime {
        &self.avg
    }

    /// Every queued entity: the running one first (if queued), then the
    /// tree in deadline order. O(n).
    pub fn queued(&self) -> impl Iterator<Item = EntityId> + '_ {
        let c = self.curr.filter(|&c| self.slots[c as usize].se.on_rq);
        c.into_iter().chain(self.tree.iter()).map(EntityId)
    }

    /// Check the tree's structural invariants (O(n); for tests).
    pub fn check_tree(&self) -> Result<(), &'static str> {
        self.tree.check()
    }

    // ---- internal helpers ----

    #[inline(always)]
    pub(crate) fn idx(&self, id: EntityId) -> Result<u32, SchedError> {
        match self.slots.get(id.0 as usize) {
            Some(s) if s.live => Ok(id.0),
            _ => Err(SchedError::NoSuchEntity(id)),
        }
    }

    #[inline]
    pub(crate) fn se(&self, i: u32) -> &SchedEntity {
        &self.slots[i as usize].se
    }

    #[inline]
    pub(crate) fn se_mut(&mut self, i: u32) -> &mut SchedEntity {
        &mut self.slots[i as usize].se
    }

    /// Wall-clock delta to virtual time for entity `i`.
    #[inline]
    pub(crate) fn vdelta(&self, delta: Nanos, i: u32) -> u64 {
        calc_delta_fair_with(self.tun.delta_math, delta, self.se(i).weight)
    }

    /// The running entity's (vruntime, weight) if it counts towards V.
    #[inline(always)]
    pub(crate) fn curr_term(&self) -> Option<(u64, u64)> {
        let c = self.curr?;
        let se = self.se(c);
        se.on_rq.then_some((se.vruntime, se.w()))
    }

    /// Link entity `i` into the tree and the V sums.
    #[inline(always)]
    pub(crate) fn enqueue_tree(&mut self, i: u32) {
        let se = self.slots[i as usize].se;
        if self.tree.insert(i, se.deadline, se.vruntime, se.slice) {
            self.avg.add(se.vruntime, se.w());
        }
    }

    /// Unlink entity `i` from the tree and the V sums.
    #[inline(always)]
    pub(crate) fn dequeue_tree(&mut self, i: u32) {
        let se = self.slots[i as usize].se;
        if self.tree.remove(i) {
            self.avg.sub(se.vruntime, se.w());
        }
    }

    /// Move v0 onto V.
    #[inline(always)]
    pub(crate) fn recenter(&mut self) {
        let v = self.avg_vruntime();
        self.avg.shift_to(v);
    }

    // ---- lifecycle ----

    /// Put an (unqueued) entity under this queue's management, attaching
    /// its PELT history to the queue's averages.
    pub fn add_entity(&mut self, mut se: SchedEntity) -> Result<EntityId, SchedError> {
        se.on_rq = false;
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                let n = self.slots.len();
                if n >= NIL as usize {
                    return Err(SchedError::TooManyEntities);
                }
                self.tree.ensure_slot(n as u32).map_err(|_| SchedError::OutOfMemory)?;
                self.slots.try_reserve(1).map_err(|_| SchedError::OutOfMemory)?;
                self.free.try_reserve(n + 1 - self.free.len()).map_err(|_| SchedError::OutOfMemory)?;
                self.slots.push(Slot { se, live: false });
                n as u32
            }
        };
        self.update_rq_pelt();
        // fair.c `migrate_task_rq_fair()`: an entity that changes CPU is not
        // cache hot on its new one (`task_hot()` reads 0 as cold) until it
        // runs there
        se.exec_start = 0;
        se.avg.last_update_time = self.pelt_clock.now();
        self.pelt.attach(&se.avg, se.w());
        self.slots[i as usize] = Slot { se, live: true };
        self.sanitize_incoming(i);
        Ok(EntityId(i))
    }

    /// Re-establish the entity invariants on state that came from outside
    /// (another queue, or the kernel): slice in range, not delayed unless
    /// migrated so, saved lag and relative deadline within their bounds.
    fn sanitize_incoming(&mut self, i: u32) {
        let base = self.base_slice;
        let se = self.se_mut(i);
        se.slice = match (se.custom_slice, clamp_custom_slice(se.slice)) {
            (true, Some(s)) => s,
            _ => {
                se.custom_slice = false;
                base
            }
        };
        let limit = self.lag_limit(i);
        let dlimit = self.vdelta(2 * MAX_CUSTOM_SLICE_NS.max(base), i) as i64;
        let se = self.se_mut(i);
        se.vlag = se.vlag.clamp(-limit, limit);
        if se.rel_deadline {
            se.deadline = (se.deadline as i64).clamp(-dlimit, dlimit) as u64;
        }
    }

    /// Create a new task's entity (not queued yet: enqueue it with
    /// `EnqueueFlags::INITIAL`), with the PELT start values of a new task.
    pub fn fork(&mut self, nice: Nice, policy: Policy) -> Result<EntityId, SchedError> {
        let mut se = SchedEntity::new(nice, policy);
        se.slice = self.base_slice;
        let cap = self.pelt_clock.cpu_capacity().min(SCHED_CAPACITY_SCALE);
        se.avg = SchedAvg::new_task(se.w(), &self.pelt, cap);
        self.add_entity(se)
    }

    /// Give up an entity that is neither queued nor running, returning its
    /// state (with its PELT history detached from this queue).
    pub fn remove_entity(&mut self, id: EntityId) -> Result<SchedEntity, SchedError> {
        let i = self.idx(id)?;
        if self.se(i).on_rq || self.curr == Some(i) {
            return Err(SchedError::Busy(id));
        }
        self.update_entity_pelt(i);
        let se = self.slots[i as usize].se;
        self.pelt.detach(&se.avg, se.w());
        self.slots[i as usize].live = false;
        // cannot fail: capacity for every slot was reserved in add_entity
        self.free.push(i);
        Ok(se)
    }

    // ---- clock and PELT ----

    /// Advance the task clock (ignored if `now` is not later).
    #[inline]
    pub fn update_clock(&mut self, now: Nanos) {
        if now > self.clock {
            // `clock` is the PELT clock's task time (both start at 0 and
            // move only here), so the PELT clock's own test would repeat this one.
            self.pelt_clock.advance(now, self.curr.is_some());
            self.clock = now;
        }
    }

    #[inline]
    pub(crate) fn update_rq_pelt(&mut self) {
        self.update_rq_pelt_at(self.pelt_clock.now());
    }

    #[inline]
    fn update_rq_pelt_at(&mut self, now: Nanos) {
        self.pelt.update_queue(now, self.load_weight, self.h_nr_runnable, self.curr.is_some());
    }

    /// Bring entity `i`'s PELT sums (and the queue's) up to now, with the
    /// state it had since the last update.
    ///
    /// Within one operation batch most calls find both already updated at
    /// this PELT clock (less than one 1024 ns unit ago): that check is
    /// inlined, the update itself is not.
    #[inline(always)]
    pub(crate) fn update_entity_pelt(&mut self, i: u32) {
        let now = self.pelt_clock.now();
        let running = self.curr == Some(i);
        // wrapping: a clock behind the last update gives a huge difference,
        // so it takes the slow path, which resets the update time
        let fresh = |last: Nanos| now.wrapping_sub(last) < 1024;
        let se = &mut self.slots[i as usize].se;
        if fresh(se.avg.last_update_time) && fresh(self.pelt.last_update_time) {
            return;
        }
        let w = se.w();
        se.avg.update_entity(now, se.on_rq, !se.sched_delayed, running, w);
        self.update_rq_pelt_at(now);
    }

    // ---- enqueue / dequeue ----

    /// Put an entity on the queue (Linux `enqueue_entity`): place it from its
    /// saved lag, account it and insert it in the tree. Waking a delayed
    /// entity requeues it in place instead.
    pub fn enqueue(&mut self, id: EntityId, flags: EnqueueFlags) -> Result<(), SchedError> {
        let i = self.idx(id)?;
        if self.se(i).on_rq {
            if self.se(i).sched_delayed {
                self.requeue_delayed(i);
                return Ok(());
            }
            return Err(SchedError::AlreadyQueued(id));
        }
        if self.curr == Some(i) {
            self.util_est_enqueue(i);
            self.place_entity(i, flags);
            self.update_curr();
            self.enqueue_account(i, true);
        } else {
            self.update_curr();
            self.enqueue_placed(i, flags);
        }
        Ok(())
    }

    /// The rest of [`FairRq::enqueue`] for an entity `i` that is neither
    /// queued nor running, after `update_curr`: place, account, insert.
    #[inline(always)]
    pub(crate) fn enqueue_placed(&mut self, i: u32, flags: EnqueueFlags) {
        self.util_est_enqueue(i);
        self.place_entity(i, flags);
        self.enqueue_account(i, false);
    }

    /// The end of an enqueue of the placed entity `i`: PELT, counts, tree
    /// (unless it is the running one) and v0.
    #[inline(always)]
    fn enqueue_account(&mut self, i: u32, is_curr: bool) {
        self.update_entity_pelt(i);
        let se = self.se_mut(i);
        se.on_rq = true;
        let (runnable, w) = (!se.sched_delayed, se.w());
        self.nr_queued += 1;
        self.h_nr_runnable += runnable as u32;
        self.load_weight += w;
        if !is_curr {
            self.enqueue_tree(i);
        }
        self.recenter();
    }

    /// Take an entity off the queue (Linux `dequeue_entity`).
    ///
    /// A `SLEEP` of an entity that is not eligible is delayed when
    /// DELAY_DEQUEUE is on (unless `SPECIAL`): it stays queued, counted in
    /// load and `nr_queued` but not runnable, and [`DequeueOutcome::Delayed`]
    /// is returned. Otherwise its lag is saved (clamped), a non-sleep keeps
    /// its deadline relative, and it leaves the queue. With `DELAYED`, a
    /// delayed entity is dequeued for good (DELAY_ZERO drops positive lag).
    pub fn dequeue(&mut self, id: EntityId, flags: DequeueFlags) -> Result<DequeueOutcome, SchedError> {
        let i = self.idx(id)?;
        if !self.se(i).on_rq {
            return Err(SchedError::NotQueued(id));
        }
        let sleep = flags.contains(DequeueFlags::SLEEP);
        let is_curr = self.curr == Some(i);
        if !(self.se(i).sched_delayed && sleep && !flags.contains(DequeueFlags::DELAYED)) {
            self.util_est_dequeue_update(i, sleep);
        }
        self.update_curr();
        if sleep && !self.se(i).sched_delayed {
            self.stats.sleeps += 1;
        }
        let mut v_mean = None;
        if self.se(i).sched_delayed {
            if sleep && !flags.contains(DequeueFlags::DELAYED) {
                return Ok(DequeueOutcome::Delayed); // already asleep and delayed
            }
        } else if sleep && !flags.contains(DequeueFlags::SPECIAL) && self.feat(Feature::DelayDequeue) {
            // the eligibility test and the lag saved below share V's sums
            let (s, w) = self.avg.totals(self.curr_term());
            if self.avg.eligible_in(self.se(i).vruntime, s, w) {
                v_mean = Some(self.avg.mean_in(s, w));
            } else {
                self.delay_dequeue(i, is_curr);
                return Ok(DequeueOutcome::Delayed);
            }
        }

        self.update_entity_pelt(i);
        let v_mean = match v_mean {
            Some(v) => v,
            None => self.avg_vruntime(),
        };
        self.update_entity_lag_at(i, v_mean);

        if !sleep && self.feat(Feature::PlaceRelDeadline) {
            let se = self.se_mut(i);
            se.deadline = se.deadline.wrapping_sub(se.vruntime);
            se.rel_deadline = true;
        }
        if !is_curr {
            self.dequeue_tree(i);
        }
        let se = self.se_mut(i);
        se.on_rq = false;
        let (was_runnable, w) = (!se.sched_delayed, se.w());
        self.nr_queued -= 1;
        self.h_nr_runnable -= was_runnable as u32;
        self.load_weight -= w;
        if flags.contains(DequeueFlags::DELAYED) && !was_runnable {
            self.finish_delayed_dequeue(i);
        }
        if self.next == Some(i) {
            self.next = None;
        }
        if is_curr {
            self.need_resched = true;
        }
        self.recenter();
        Ok(DequeueOutcome::Dequeued)
    }

    /// fair.c `enqueue_task_fair()`'s `util_est_enqueue()`: the queue's
    /// util_est gains the EWMA of an entity that becomes runnable (not of
    /// one that arrives still delayed).
    #[inline(always)]
    pub(crate) fn util_est_enqueue(&mut self, i: u32) {
        if self.feat(Feature::UtilEst) && !self.se(i).sched_delayed {
            let se = &self.slots[i as usize].se;
            crate::pelt::util_est_enqueue(&mut self.pelt, &se.avg);
        }
    }

    /// fair.c `dequeue_task_fair()`'s `util_est_dequeue()` (unless the
    /// entity is delayed: its EWMA left the sum when it was) and
    /// `util_est_update()` (at a sleep), before the dequeue itself.
    #[inline(always)]
    pub(crate) fn util_est_dequeue_update(&mut self, i: u32, sleep: bool) {
        if !self.feat(Feature::UtilEst) {
            return;
        }
        let cap = self.pelt_clock.cpu_capacity();
        let se = &mut self.slots[i as usize].se;
        if !se.sched_delayed {
            crate::pelt::util_est_dequeue(&mut self.pelt, &se.avg);
        }
        if sleep {
            crate::pelt::util_est_update(&mut se.avg, cap);
        }
    }

    /// A sleep of a queued, not eligible entity turned into a delayed
    /// dequeue (see `delay`).
    #[inline(never)]
    pub(crate) fn delay_dequeue(&mut self, i: u32, is_curr: bool) {
        self.update_entity_pelt(i);
        let now = self.clock;
        let se = self.se_mut(i);
        se.sched_delayed = true;
        se.delayed_at = now;
        self.h_nr_runnable -= 1;
        self.stats.delayed += 1;
        if self.next == Some(i) {
            self.next = None;
        }
        if is_curr {
            self.need_resched = true;
        }
    }
}

#[cfg(test)]
#[path = "fair_rq_tests.rs"]
mod tests;
