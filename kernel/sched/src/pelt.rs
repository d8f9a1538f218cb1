//! Per-entity load tracking (PELT, section 2): geometrically decaying load,
//! runnable and util averages in 1024 ns units and 1024-unit periods, with
//! `y^32 = 1/2`.
//!
//! A signal that has been 1 for the whole history sums to
//! `1024·Σ y^n` = [`LOAD_AVG_MAX`] (47742 in this integer arithmetic);
//! dividing a sum by the current "maximum so far"
//! (`LOAD_AVG_MAX - 1024 + period_contrib`) gives an average in `[0, 1]`,
//! scaled by 1024 for util/runnable and by the weight for load.
//!
//! Invariance hooks: [`PeltClock`] is the run-queue's `clock_pelt`. While the
//! CPU is busy each clock delta is scaled by the CPU's capacity and its
//! current frequency ratio (both out of 1024), so a task on a half-speed CPU
//! accrues half the utilisation per wall-clock ms; when the CPU goes idle,
//! the clock is re-synchronised with task time.
//!
//! Overflow bounds (all arithmetic is integer; no step can panic):
//! - `decay_load(v, n)` forms `v·y^n·2^32` in `u128` (`v < 2^64`).
//! - per update, `contrib <= LOAD_AVG_MAX < 2^16`;
//!   `util_sum <= LOAD_AVG_MAX·1024 < 2^26`;
//!   `runnable_sum <= runnable·LOAD_AVG_MAX·1024`, below 2^58 for any
//!   `u32` runnable count; `load_sum <= load·LOAD_AVG_MAX`, exact while the
//!   load is below 2^47 (2^27 nice -20 entities) and saturating above.
//! - `load_avg = factor·load_sum / divider` is formed in `u128` and
//!   saturates at `u64::MAX`.

use crate::time::Nanos;
use crate::weight::saturate_u64;

/// Periods after which a contribution weighs half.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// The saturated sum of an always-on signal.
pub const LOAD_AVG_MAX: u64 = 47742;
/// Smallest divider (`LOAD_AVG_MAX - 1024`), reached at a period boundary.
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// Capacity scale: util of a CPU-bound entity on the biggest CPU at full
/// frequency.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;
/// `log2(SCHED_CAPACITY_SCALE)`.
pub const SCHED_CAPACITY_SHIFT: u32 = 10;
/// Past this many periods, anything has decayed to 0.
const DECAY_HORIZON: u64 = LOAD_AVG_PERIOD * 63;

/// `floor((2^32 - 1) · y^k)` for `k` in `0..32`, `y = 2^(-1/32)`.
pub const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `val · y^n`, rounded down; 0 once `n > 32·63`.
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > DECAY_HORIZON {
        return 0;
    }
    let halvings = n / LOAD_AVG_PERIOD;
    let v = val >> halvings;
    ((v as u128 * RUNNABLE_AVG_YN_INV[(n % LOAD_AVG_PERIOD) as usize] as u128) >> 32) as u64
}

/// The contribution of an interval that crossed `periods` boundaries: the
/// `d1` units finishing the old period (decayed `periods` times), the full
/// periods in between, and the `d3` units of the new period.
fn accumulate_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX.saturating_sub(decay_load(LOAD_AVG_MAX, periods)).saturating_sub(1024);
    c1 + c2 + d3
}

/// The inputs of one PELT update: what the tracked object was doing since
/// the previous update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PeltInput {
    /// Load: 1 for a queued entity; the summed weight for a run-queue.
    pub load: u64,
    /// Runnable count: 1 for a runnable (queued, not delayed) entity; the
    /// number of runnable entities for a run-queue.
    pub runnable: u64,
    /// Whether it was running (the entity is curr / the queue has a curr).
    pub running: bool,
}

/// Decaying sums and averages of one entity or run-queue.
///
/// Invariants: `period_contrib < 1024`; `last_update_time` is a multiple of
/// 1024 ns after the first update; `util_avg <= 1024`; each `*_avg` is its
/// `*_sum` over the divider of the last period boundary (times the weight
/// factor for `load_avg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SchedAvg {
    /// PELT clock time of the last accumulation (ns).
    pub last_update_time: Nanos,
    /// Σ load·contrib.
    pub load_sum: u64,
    /// Σ runnable·contrib·1024.
    pub runnable_sum: u64,
    /// Σ running·contrib·1024.
    pub util_sum: u64,
    /// Units already accounted in the current unfinished period.
    pub period_contrib: u32,
    /// Load average (weight scale).
    pub load_avg: u64,
    /// Runnable average (1024 per runnable entity).
    pub runnable_avg: u64,
    /// Utilisation average (at most 1024).
    pub util_avg: u64,
    /// UTIL_EST (fair.c `util_est_*`, v6.19): for an entity, the EWMA of
    /// its `util_avg` at its sleeps, with [`UTIL_AVG_UNCHANGED`] set while
    /// `util_avg` has not changed since the EWMA was last updated; for a
    /// run-queue, the sum of its runnable entities' EWMAs (flag masked).
    pub util_est: u64,
}

/// The flag of an entity's `util_est`: its `util_avg` did not change since
/// the last `util_est_update` (Linux `UTIL_AVG_UNCHANGED`).
pub const UTIL_AVG_UNCHANGED: u64 = 0x8000_0000;
/// The least change of the EWMA worth making: 1% of the capacity scale
/// (Linux `UTIL_EST_MARGIN`).
pub const UTIL_EST_MARGIN: u64 = SCHED_CAPACITY_SCALE / 100;
/// The EWMA's weight of a new sample, `1/2^2` (Linux `UTIL_EST_WEIGHT_SHIFT`).
pub const UTIL_EST_WEIGHT_SHIFT: u32 = 2;

/// An entity's util_est without the flag (Linux `_task_util_est`).
#[inline(always)]
pub fn task_util_est_raw(avg: &SchedAvg) -> u64 {
    avg.util_est & !UTIL_AVG_UNCHANGED
}

/// fair.c `task_util_est()`: the larger of an entity's `util_avg` and the
/// EWMA of its `util_avg` at its past sleeps. What the balancer measures a
/// task by: `detach_tasks()` for `migrate_util` and `migrate_misfit`, the
/// misfit test, `select_idle_capacity()`. A task that just woke from a long
/// sleep has a decayed `util_avg` but keeps its estimate.
#[inline(always)]
pub fn task_util_est(avg: &SchedAvg) -> u64 {
    avg.util_avg.max(task_util_est_raw(avg))
}

/// fair.c `util_est_enqueue()`: the run-queue's sum gains the entity's EWMA.
#[inline(always)]
pub fn util_est_enqueue(rq: &mut SchedAvg, se: &SchedAvg) {
    rq.util_est = rq.util_est.saturating_add(task_util_est_raw(se));
}

/// fair.c `util_est_dequeue()`: the run-queue's sum loses it (never below 0).
#[inline(always)]
pub fn util_est_dequeue(rq: &mut SchedAvg, se: &SchedAvg) {
    rq.util_est -= rq.util_est.min(task_util_est_raw(se));
}

/// fair.c `util_est_update()` at a sleep: unless `util_avg` is unchanged
/// since the last update, the EWMA jumps up to `util_avg`, or moves a
/// quarter of the way down to it, except when the change is under
/// [`UTIL_EST_MARGIN`] or the task was contended (`util_avg + margin <
/// runnable_avg`: its util is no measure of its need); a `util_avg` above
/// the CPU's capacity (`cpu_capacity`) leaves everything as it is. Then the
/// flag is set.
#[inline]
pub fn util_est_update(se: &mut SchedAvg, cpu_capacity: u64) {
    let mut ewma = se.util_est;
    if ewma & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let dequeued = se.util_avg;
    if ewma <= dequeued {
        ewma = dequeued;
    } else {
        let diff = ewma - dequeued;
        if diff >= UTIL_EST_MARGIN {
            if dequeued > cpu_capacity {
                return;
            }
            if dequeued + UTIL_EST_MARGIN >= se.runnable_avg {
                // ewma - diff/4, as Linux forms it: ((ewma << 2) - diff) >> 2
                ewma = ((ewma << UTIL_EST_WEIGHT_SHIFT) - diff) >> UTIL_EST_WEIGHT_SHIFT;
            }
        }
    }
    se.util_est = ewma | UTIL_AVG_UNCHANGED;
}

impl SchedAvg {
    /// The current divider: the maximum sum an always-on signal can have
    /// reached at this point of the period.
    #[inline]
    pub fn divider(&self) -> u64 {
        PELT_MIN_DIVIDER + self.period_contrib as u64
    }

    /// Advance to `now` (PELT clock ns) with the object in state `input`
    /// since the last update; refresh the averages (weighting `load_avg`
    /// by `load_factor`) when a period boundary was crossed. Returns whether
    /// the averages were refreshed. A clock that went backwards only resets
    /// the update time.
    ///
    /// The general form, for any object and input: the scheduler calls its
    /// two specialised forms, [`SchedAvg::update_queue`] (a run-queue) and
    /// [`SchedAvg::update_entity`] (an entity), which the tests check
    /// against it field by field. Inlined into the caller are the two
    /// common cases: the no-op (less than 1024 ns since the last update,
    /// e.g. the second update of the same object at the same clock) and an
    /// interval that stays inside the current 1024-unit period (a few
    /// microseconds between the updates of a pipe round trip), which is
    /// three additions: no decay, and the averages are not refreshed (they
    /// only change at a boundary). An interval that crosses a boundary is
    /// out of line.
    #[inline(always)]
    pub fn update(&mut self, now: Nanos, input: PeltInput, load_factor: u64) -> bool {
        let Some(units) = self.elapsed_units(now) else { return false };
        if units + (self.period_contrib as u64) < 1024 {
            let (runnable, running) = if input.load == 0 { (0, false) } else { (input.runnable, input.running) };
            self.accrue_in_period(units, input.load, runnable, running);
            return false;
        }
        self.accumulate(units, input.load, input.runnable, input.running, load_factor)
    }

    /// [`SchedAvg::update`] for a run-queue: its load is the summed weight
    /// of its queued entities (fewer than 2^32, each at most 2^20: below
    /// 2^52), its runnable count a `u32`, its load factor 1. Inside the
    /// period (`units < 1024`) the contributions `load·units < 2^62` and
    /// `runnable·units·1024 < 2^52` cannot overflow, and the runnable sum
    /// stays below `2^32·LOAD_AVG_MAX·1024 < 2^58` (module docs): plain
    /// multiplies and a plain add where `update` saturates (the load sum
    /// keeps its saturating add: a load near 2^52 can fill it). Wrapping,
    /// so that no input, however far off these bounds, can panic.
    #[inline(always)]
    pub fn update_queue(&mut self, now: Nanos, load: u64, runnable: u32, running: bool) -> bool {
        let Some(units) = self.elapsed_units(now) else { return false };
        if units + (self.period_contrib as u64) < 1024 {
            let (runnable, running) = if load == 0 { (0, false) } else { (runnable as u64, running) };
            self.last_update_time += units << 10;
            self.period_contrib += units as u32; // < 1024: checked above
            self.load_sum = self.load_sum.saturating_add(load.wrapping_mul(units));
            self.runnable_sum = self.runnable_sum.wrapping_add(runnable.wrapping_mul(units << 10));
            if running {
                self.util_sum += units << 10;
            }
            return false;
        }
        self.accumulate(units, load, runnable as u64, running, 1)
    }

    /// [`SchedAvg::update_queue`] of a queue with something queued: its
    /// load is a sum of weights of at least `MIN_WEIGHT` each, so never 0,
    /// and the zero-load case (no runnable, no running signal) is no case
    /// here. The same arithmetic without that test; for `load >= 1` the
    /// same result (a proptest checks it against `update`).
    #[inline(always)]
    pub fn update_queue_loaded(&mut self, now: Nanos, load: u64, runnable: u32, running: bool) -> bool {
        debug_assert!(load != 0);
        let Some(units) = self.elapsed_units(now) else { return false };
        if units + (self.period_contrib as u64) < 1024 {
            self.last_update_time += units << 10;
            self.period_contrib += units as u32; // < 1024: checked above
            self.load_sum = self.load_sum.saturating_add(load.wrapping_mul(units));
            self.runnable_sum = self.runnable_sum.wrapping_add((runnable as u64).wrapping_mul(units << 10));
            if running {
                self.util_sum += units << 10;
            }
            return false;
        }
        self.accumulate(units, load, runnable as u64, running, 1)
    }

    /// [`SchedAvg::update_queue`] of a queue with nothing queued (load 0,
    /// so no runnable or running signal either): inside the period only
    /// the clock and the period's units move. The same result as
    /// `update_queue(now, 0, _, _)` (a proptest checks it against
    /// `update`).
    #[inline(always)]
    pub fn update_queue_empty(&mut self, now: Nanos) -> bool {
        let Some(units) = self.elapsed_units(now) else { return false };
        if units + (self.period_contrib as u64) < 1024 {
            self.last_update_time += units << 10;
            self.period_contrib += units as u32; // < 1024: checked above
            return false;
        }
        self.accumulate(units, 0, 0, false, 1)
    }

    /// [`SchedAvg::update`] for an entity, whose inputs are flags: load 1
    /// when `on_rq`, runnable 1 when also `runnable`, and the weight as the
    /// load factor. The same arithmetic with the multiplications by 0/1
    /// turned into selections.
    ///
    /// Inside the period the sums take plain adds, as `util_sum` does in
    /// every update: an entity's signals are at most 1, so its `load_sum`
    /// stays below `LOAD_AVG_MAX` and its `runnable_sum` below
    /// `LOAD_AVG_MAX·1024 < 2^26` (module docs), and with `units < 1024`
    /// neither add comes near `u64::MAX`: the saturating adds of
    /// [`SchedAvg::update`] (which also serves run-queues, whose load is a
    /// sum of weights) would never saturate here. Wrapping, so that no
    /// input, however far off these bounds, can panic.
    #[inline(always)]
    pub fn update_entity(&mut self, now: Nanos, on_rq: bool, runnable: bool, running: bool, weight: u64) -> bool {
        let Some(units) = self.elapsed_units(now) else { return false };
        if units + (self.period_contrib as u64) < 1024 {
            self.last_update_time += units << 10;
            self.period_contrib += units as u32; // < 1024: checked above
            if on_rq {
                self.load_sum = self.load_sum.wrapping_add(units);
                if runnable {
                    self.runnable_sum = self.runnable_sum.wrapping_add(units << 10);
                }
                if running {
                    self.util_sum += units << 10;
                }
            }
            return false;
        }
        let refreshed = self.accumulate(units, on_rq as u64, runnable as u64, running, weight);
        if refreshed {
            // fair.c `cfs_se_util_change()`: util_avg changed
            self.util_est &= !UTIL_AVG_UNCHANGED;
        }
        refreshed
    }

    /// Whole 1024 ns units from the last update to `now` (`None` when
    /// there are none; a clock that went backwards resets the update time).
    /// `units < 2^54`, so adding `period_contrib` cannot overflow.
    #[inline(always)]
    fn elapsed_units(&mut self, now: Nanos) -> Option<u64> {
        if now < self.last_update_time {
            self.last_update_time = now;
            return None;
        }
        let units = (now - self.last_update_time) >> 10;
        (units != 0).then_some(units)
    }

    /// The accumulation of `units` that end inside the current period
    /// (`units + period_contrib < 1024`): the contribution is `units` itself,
    /// undecayed. `runnable`/`running` are already 0 for a zero load.
    #[inline(always)]
    fn accrue_in_period(&mut self, units: u64, load: u64, runnable: u64, running: bool) {
        self.last_update_time += units << 10;
        self.period_contrib += units as u32;
        self.load_sum = self.load_sum.saturating_add(load.saturating_mul(units));
        self.runnable_sum = self.runnable_sum.saturating_add(runnable.saturating_mul(units << 10));
        if running {
            self.util_sum += units << 10;
        }
    }

    /// The body of [`SchedAvg::update`] for `units >= 1` elapsed units,
    /// with the [`PeltInput`] as its three fields: passed in registers, so
    /// the inlined callers do not build it in memory before they know
    /// whether the call is needed.
    #[inline(never)]
    fn accumulate(&mut self, units: u64, load: u64, runnable: u64, running: bool, load_factor: u64) -> bool {
        self.last_update_time += units << 10;
        let (runnable, running) = if load == 0 { (0, false) } else { (runnable, running) };

        let mut contrib = units;
        let total = units + self.period_contrib as u64;
        let periods = total / 1024;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            contrib = accumulate_segments(periods, 1024 - self.period_contrib as u64, total % 1024);
        }
        self.period_contrib = (total % 1024) as u32;
        self.load_sum = self.load_sum.saturating_add(load.saturating_mul(contrib));
        self.runnable_sum = self.runnable_sum.saturating_add(runnable.saturating_mul(contrib << 10));
        if running {
            self.util_sum += contrib << 10;
        }
        if periods > 0 {
            self.refresh_avgs(load_factor);
        }
        periods > 0
    }

    /// Recompute the load average from its sum (e.g. after a weight change).
    pub fn refresh_load_avg(&mut self, load_factor: u64) {
        // The same quotient as in u128 whenever the product fits in u64
        // (always for an entity: load_sum <= LOAD_AVG_MAX < 2^16, factor
        // <= 2^20), without the 128-bit division routine.
        self.load_avg = match load_factor.checked_mul(self.load_sum) {
            Some(p) => p / self.divider(),
            None => saturate_u64(load_factor as u128 * self.load_sum as u128 / self.divider() as u128),
        };
    }

    /// Recompute the averages from the sums.
    pub fn refresh_avgs(&mut self, load_factor: u64) {
        self.refresh_load_avg(load_factor);
        let div = self.divider();
        self.runnable_avg = self.runnable_sum / div;
        self.util_avg = self.util_sum / div;
    }

    /// Initial values of a new task of weight `weight` joining a run-queue
    /// whose averages are `rq` on a CPU of capacity `capacity` (section
    /// 2.5): full load, and half of the remaining util headroom (scaled by
    /// the task's share of the queue's load when the queue is busy).
    pub fn new_task(weight: u64, rq: &SchedAvg, capacity: u64) -> SchedAvg {
        let mut sa = SchedAvg { load_avg: weight, ..SchedAvg::default() };
        let cap = capacity.saturating_sub(rq.util_avg) / 2;
        if cap > 0 {
            let util = if rq.util_avg != 0 {
                saturate_u64(rq.util_avg as u128 * weight as u128 / (rq.load_avg as u128 + 1))
            } else {
                cap
            };
            sa.util_avg = util.min(cap);
        }
        sa.runnable_avg = sa.util_avg;
        sa.sync_sums_from_avgs(weight);
        sa
    }

    /// Set the sums consistent with the averages (used when the averages
    /// are chosen rather than accumulated, and after a reweight).
    pub fn sync_sums_from_avgs(&mut self, weight: u64) {
        let div = self.divider();
        self.load_sum = if weight == 0 { 0 } else { saturate_u64(self.load_avg as u128 * div as u128 / weight as u128) };
        self.runnable_sum = self.runnable_avg.saturating_mul(div);
        self.util_sum = self.util_avg.saturating_mul(div);
    }

    /// Add an entity's contribution into a run-queue's sums (attach).
    pub fn attach(&mut self, se: &SchedAvg, se_weight: u64) {
        self.load_avg = self.load_avg.saturating_add(se.load_avg);
        self.load_sum = self.load_sum.saturating_add(se.load_sum.saturating_mul(se_weight));
        self.runnable_avg = self.runnable_avg.saturating_add(se.runnable_avg);
        self.runnable_sum = self.runnable_sum.saturating_add(se.runnable_sum);
        self.util_avg = self.util_avg.saturating_add(se.util_avg);
        self.util_sum = self.util_sum.saturating_add(se.util_sum);
    }

    /// Remove an entity's contribution from a run-queue's sums (detach);
    /// saturates at zero, as the two decayed separately.
    pub fn detach(&mut self, se: &SchedAvg, se_weight: u64) {
        self.load_avg = self.load_avg.saturating_sub(se.load_avg);
        self.load_sum = self.load_sum.saturating_sub(se.load_sum.saturating_mul(se_weight));
        self.runnable_avg = self.runnable_avg.saturating_sub(se.runnable_avg);
        self.runnable_sum = self.runnable_sum.saturating_sub(se.runnable_sum);
        self.util_avg = self.util_avg.saturating_sub(se.util_avg);
        self.util_sum = self.util_sum.saturating_sub(se.util_sum);
    }
}

/// A run-queue's invariant PELT clock.
///
/// Invariants: `clock_pelt <= clock_task`, `lost_idle_time <= clock_pelt`,
/// `cpu_capacity` and `freq_capacity` in `1..=1024`, `full_capacity` iff
/// both are 1024.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PeltClock {
    clock_task: Nanos,
    clock_pelt: Nanos,
    lost_idle_time: Nanos,
    cpu_capacity: u64,
    freq_capacity: u64,
    /// Both capacities are full, so busy time counts unscaled: kept by the
    /// setters, so that every clock update tests one flag, not two values.
    full_capacity: bool,
}

/// The clock's state, without `full_capacity` (which the capacities say).
impl core::fmt::Debug for PeltClock {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PeltClock")
            .field("clock_task", &self.clock_task)
            .field("clock_pelt", &self.clock_pelt)
            .field("lost_idle_time", &self.lost_idle_time)
            .field("cpu_capacity", &self.cpu_capacity)
            .field("freq_capacity", &self.freq_capacity)
            .finish()
    }
}

impl Default for PeltClock {
    fn default() -> PeltClock {
        PeltClock::new(0)
    }
}

impl PeltClock {
    /// A clock at `now`, full capacity and frequency.
    pub const fn new(now: Nanos) -> PeltClock {
        PeltClock {
            clock_task: now,
            clock_pelt: now,
            lost_idle_time: 0,
            cpu_capacity: SCHED_CAPACITY_SCALE,
            freq_capacity: SCHED_CAPACITY_SCALE,
            full_capacity: true,
        }
    }

    /// Set the CPU's capacity relative to the biggest CPU (1..=1024).
    pub fn set_cpu_capacity(&mut self, cap: u64) {
        self.cpu_capacity = cap.clamp(1, SCHED_CAPACITY_SCALE);
        self.note_full_capacity();
    }

    /// Set the current frequency ratio (1..=1024 of the maximum).
    pub fn set_freq_capacity(&mut self, cap: u64) {
        self.freq_capacity = cap.clamp(1, SCHED_CAPACITY_SCALE);
        self.note_full_capacity();
    }

    fn note_full_capacity(&mut self) {
        self.full_capacity = self.cpu_capacity == SCHED_CAPACITY_SCALE && self.freq_capacity == SCHED_CAPACITY_SCALE;
    }

    /// The CPU capacity.
    pub fn cpu_capacity(&self) -> u64 {
        self.cpu_capacity
    }

    /// Advance task time to `now`. While `busy`, the elapsed time counts
    /// scaled by capacity and frequency; while idle the clock catches up
    /// with task time. Ignores a clock that goes backwards.
    #[inline]
    pub fn update(&mut self, now: Nanos, busy: bool) {
        if now > self.clock_task {
            self.advance(now, busy);
        }
    }

    /// [`update`](Self::update) to a later `now` (`now > clock_task`), for a
    /// caller whose own clock moves with this one's task time (`FairRq`'s).
    #[inline]
    pub(crate) fn advance(&mut self, now: Nanos, busy: bool) {
        debug_assert!(now > self.clock_task);
        let delta = now - self.clock_task;
        self.clock_task = now;
        if busy {
            let d = if self.full_capacity {
                // Full capacity and frequency: both scalings are `x * 1024 >> 10 = x`
                // (the common case, two 128-bit products saved at every clock update).
                delta
            } else {
                // delta < 2^64 and each factor <= 2^10: the u128 products cannot overflow
                let d = (delta as u128 * self.cpu_capacity as u128) >> SCHED_CAPACITY_SHIFT;
                ((d * self.freq_capacity as u128) >> SCHED_CAPACITY_SHIFT) as u64
            };
            self.clock_pelt = self.clock_pelt.saturating_add(d).min(self.clock_task);
        } else {
            self.clock_pelt = self.clock_task;
        }
    }

    /// The CPU is going idle: if its utilisation sum shows it had no idle
    /// time left (`util_sum` at the maximum), the time the invariant clock
    /// fell behind is idle time it never had, and is remembered as lost
    /// instead of being credited as idle. Then the clock catches up.
    pub fn enter_idle(&mut self, util_sum: u64) {
        let saturated = (PELT_MIN_DIVIDER << SCHED_CAPACITY_SHIFT) - LOAD_AVG_MAX;
        if util_sum >= saturated {
            self.lost_idle_time = self.lost_idle_time.saturating_add(self.clock_task - self.clock_pelt);
        }
        self.clock_pelt = self.clock_task;
    }

    /// The PELT time to feed [`SchedAvg::update`].
    #[inline]
    pub fn now(&self) -> Nanos {
        self.clock_pelt - self.lost_idle_time.min(self.clock_pelt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_capacity_clock_is_task_time_and_scaling_is_exact() {
        // At capacity and frequency 1024 the busy clock advances exactly by
        // task time (the identity shortcut); below, by the two scalings.
        let mut full = PeltClock::new(1_000);
        let mut half = PeltClock::new(1_000);
        half.set_cpu_capacity(512);
        let mut odd = PeltClock::new(1_000);
        odd.set_cpu_capacity(1000);
        odd.set_freq_capacity(700);
        let mut now = 1_000u64;
        for step in [1u64, 7, 1023, 1024, 1_000_003, u64::MAX / 4] {
            now = now.saturating_add(step);
            let (fp, hp, op) = (full.now(), half.now(), odd.now());
            let (ft, ht, ot) = (full.clock_task, half.clock_task, odd.clock_task);
            full.update(now, true);
            half.update(now, true);
            odd.update(now, true);
            assert_eq!(full.now() - fp, now - ft);
            assert_eq!(half.now() - hp, (((now - ht) as u128 * 512) >> 10) as u64);
            let d = ((((now - ot) as u128 * 1000) >> 10) * 700) >> 10;
            assert_eq!(odd.now() - op, (d as u64).min(now - op));
        }
    }

    #[test]
    fn decay_table_is_y_to_the_k() {
        let y = 0.5f64.powf(1.0 / 32.0);
        for (k, &v) in RUNNABLE_AVG_YN_INV.iter().enumerate() {
            let exact = (u32::MAX as f64) * y.powi(k as i32);
            assert!((v as f64 - exact).abs() < 1.0, "k={k}");
        }
        assert_eq!(RUNNABLE_AVG_YN_INV[16], 0xb504f333);
    }

    #[test]
    fn decay_halves_every_32_periods() {
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        assert_eq!(decay_load(u64::MAX, DECAY_HORIZON + 1), 0);
        assert!(decay_load(u64::MAX, 1) < u64::MAX);
    }

    #[test]
    fn load_avg_max_is_the_fixed_point() {
        // accumulating full periods forever converges to LOAD_AVG_MAX
        let mut sum = 0u64;
        for _ in 0..3000 {
            sum = decay_load(sum, 1) + 1024;
        }
        assert_eq!(sum, LOAD_AVG_MAX);
    }

    #[test]
    fn always_running_signal_saturates() {
        let mut sa = SchedAvg::default();
        let on = PeltInput { load: 1, runnable: 1, running: true };
        for ms in 1..=2000u64 {
            sa.update(ms * 1_000_000, on, 1024);
        }
        assert!(sa.util_avg >= 1010 && sa.util_avg <= 1024, "{}", sa.util_avg);
        assert!(sa.load_avg >= 1010 && sa.load_avg <= 1024, "{}", sa.load_avg);
    }

    #[test]
    fn clock_scales_while_busy_and_resyncs_when_idle() {
        let mut c = PeltClock::new(0);
        c.set_cpu_capacity(512);
        c.set_freq_capacity(512);
        c.update(1_000_000, true);
        assert_eq!(c.now(), 250_000);
        c.update(2_000_000, false);
        assert_eq!(c.now(), 2_000_000);
        c.update(3_000_000, true);
        c.enter_idle(u64::MAX); // saturated: the gap becomes lost idle time
        assert_eq!(c.now(), 3_000_000 - 750_000);
        c.update(1, true); // backwards: ignored
        assert_eq!(c.now(), 2_250_000);
    }

    #[test]
    fn task_util_est_keeps_the_estimate_of_a_long_sleeper() {
        // 200 ms running: util near 1024; its sleep records the estimate; 100 ms
        // asleep decays util_avg to about an eighth, the estimate stays.
        let mut sa = SchedAvg::default();
        let on = PeltInput { load: 1, runnable: 1, running: true };
        let off = PeltInput { load: 0, runnable: 0, running: false };
        for ms in 1..=200u64 {
            sa.update(ms * 1_000_000, on, 1024);
        }
        let busy = sa.util_avg;
        util_est_update(&mut sa, 1024);
        assert_eq!(task_util_est_raw(&sa), busy);
        for ms in 201..=300u64 {
            sa.update(ms * 1_000_000, off, 1024);
        }
        assert!(sa.util_avg < busy / 4, "util_avg {} after 100 ms asleep", sa.util_avg);
        assert_eq!(task_util_est(&sa), busy);
        // A task whose util grew past its old estimate is measured by util_avg.
        sa.util_avg = busy + 5;
        assert_eq!(task_util_est(&sa), busy + 5);
    }
}
