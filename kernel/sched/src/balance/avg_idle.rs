//! `rq->avg_idle`: the average length of a CPU's idle periods (reference
//! §3.1), with the clamp rule and ceiling selectable for experiments.
//!
//! # Contract
//!
//! One [`AvgIdle`] per run-queue, mutated under that run-queue's lock:
//! - [`AvgIdle::enter_newidle`] when the CPU starts a newidle balance (the
//!   idle period starts there, so balancing time counts as idle);
//! - [`AvgIdle::newidle_done`] when that balance ends: if it pulled work,
//!   or a task was queued meanwhile, the period closes with no sample;
//! - [`AvgIdle::end_idle`] when a woken task is activated on the CPU while
//!   a period is open, whatever runs there then (v6.19 core.c:
//!   `ttwu_do_activate`, which tests `idle_stamp` only; not on fork, not on
//!   a balancer's migration; tip-2026 moved it to `put_prev_task_idle`);
//!   it folds the idle period into the average, counts it in `periods` by
//!   length, and returns the sample.
//!
//! The average is `avg += (sample - avg) / 8` (signed, truncating toward
//! zero, as Linux's `update_avg` with a real division). The ceiling is
//! `ceiling_pct/100 × max_idle_balance_cost`; how it applies is
//! [`AvgIdleClamp`]. A runqueue starts at the ceiling ([`AvgIdle::boot`]:
//! 2x the migration cost in Linux's `sched_init`, 1.5x in the 2013 patch).
//! Under the 2013 gate (`newidle_gate=migration_cost`) nothing raises
//! `max_idle_balance_cost` (3.10 had no such field: the ceiling was the
//! migration cost times 2, or 1.5 in the patch); see `newidle`. Arithmetic: samples and averages are `u64` ns, the
//! difference is taken in `i128`, so no overflow for any input; the ceiling
//! product saturates.

use crate::time::Nanos;

/// `sysctl_sched_migration_cost`: 0.5 ms.
pub const SYSCTL_SCHED_MIGRATION_COST: Nanos = 500_000;

/// How the ceiling applies to `avg_idle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AvgIdleClamp {
    /// 2.6.35 – 3.12: a sample above the ceiling sets the average to the
    /// ceiling; other samples are averaged.
    Snap,
    /// 3.13 – today, Jason Low's 2013 patch: average every sample, then
    /// clamp the average.
    #[default]
    Avg,
    /// The 2013 thread's second rule (Rik van Riel, 2013-07-31, tried
    /// first by Jason Low): clamp the sample to the ceiling, then average;
    /// the average itself is not clamped (it stays at or below the ceiling
    /// when it starts there, and falls back under a lowered one by
    /// averaging).
    Delta,
}

impl AvgIdleClamp {
    /// The name used on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            AvgIdleClamp::Snap => "snap",
            AvgIdleClamp::Avg => "avg",
            AvgIdleClamp::Delta => "delta",
        }
    }
}

/// The ceiling of `avg_idle`: `ceiling_pct`% of `max_idle_balance_cost`
/// (saturating).
pub const fn ceiling_of(max_idle_balance_cost: Nanos, ceiling_pct: u32) -> Nanos {
    // In u64 whenever the product fits (any realistic cost): a 128-bit
    // division is a library call.
    match max_idle_balance_cost.checked_mul(ceiling_pct as u64) {
        Some(p) => p / 100,
        None => {
            let q = max_idle_balance_cost as u128 * ceiling_pct as u128 / 100;
            if q > u64::MAX as u128 {
                u64::MAX
            } else {
                q as u64
            }
        }
    }
}

/// Linux's `update_avg`: `avg + (sample - avg) / 8`, truncating toward 0.
/// Computed in `u64` on either side of `avg`: the step `|sample - avg| / 8`
/// truncates toward zero whatever the sign, and the result lies between
/// `avg` and `sample` (no overflow). The same values as the signed
/// difference in `i128`, without its 128-bit shifts.
pub fn update_avg(avg: u64, sample: u64) -> u64 {
    if sample >= avg {
        avg + (sample - avg) / 8
    } else {
        avg - (avg - sample) / 8
    }
}

/// Per-run-queue idle-time average and idle-balance cost.
///
/// Invariants: after any update through [`AvgIdle::fold`] with clamp
/// `Avg`, `avg_idle <= ceiling`; with `Delta` and `Snap` the average never
/// exceeds the largest ceiling seen nor its boot value (each update moves
/// it toward a sample at or below the ceiling, or sets it to the ceiling);
/// `max_idle_balance_cost >= 1` is not required (0 gives a 0 ceiling).
/// `ceiling_ns` is always [`ceiling_of`]`(max_idle_balance_cost,
/// ceiling_pct)`: the fields are private, and their only setters
/// ([`AvgIdle::boot`], [`AvgIdle::set_max_idle_balance_cost`]) refresh it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvgIdle {
    /// Average idle period (ns).
    pub avg_idle: Nanos,
    /// `rq->max_idle_balance_cost` (ns): the costliest recent newidle pass.
    max_idle_balance_cost: Nanos,
    /// The percentage the ceiling was cached for (`boot`'s).
    ceiling_pct: u32,
    /// The ceiling at `ceiling_pct`, kept where its inputs change: every
    /// woken task that ends an idle period folds it in, and the cost
    /// changes only after a newidle walk or a periodic decay.
    ceiling_ns: Nanos,
    /// Start of the current idle period (`idle_stamp`); 0 = none.
    pub idle_stamp: Nanos,
    /// The idle periods [`AvgIdle::end_idle`] folded in, counted by
    /// [`hist_bucket`] of their length (wrapping; statistics only, no
    /// decision reads them).
    pub periods: [u32; AVG_IDLE_HIST_BUCKETS],
}

impl Default for AvgIdle {
    fn default() -> Self {
        AvgIdle::new()
    }
}

impl AvgIdle {
    /// Boot values: `avg_idle` = 2 × migration cost (1 ms),
    /// `max_idle_balance_cost` = migration cost (0.5 ms).
    pub const fn new() -> AvgIdle {
        AvgIdle {
            avg_idle: 2 * SYSCTL_SCHED_MIGRATION_COST,
            max_idle_balance_cost: SYSCTL_SCHED_MIGRATION_COST,
            ceiling_pct: 200,
            ceiling_ns: ceiling_of(SYSCTL_SCHED_MIGRATION_COST, 200),
            idle_stamp: 0,
            periods: [0; AVG_IDLE_HIST_BUCKETS],
        }
    }

    /// A runqueue at boot with its average at the ceiling `ceiling_pct`% of
    /// the migration cost (`sched_init`: `rq->avg_idle = 2 *
    /// sysctl_sched_migration_cost`; Jason Low's 2013 patch set it to its
    /// new ceiling, 1.5x), and `max_idle_balance_cost` at the migration
    /// cost. `boot(200)` is [`AvgIdle::new`].
    pub fn boot(ceiling_pct: u32) -> AvgIdle {
        let a = AvgIdle::new();
        let ceiling_ns = ceiling_of(a.max_idle_balance_cost, ceiling_pct);
        AvgIdle { avg_idle: ceiling_ns, ceiling_pct, ceiling_ns, ..a }
    }

    /// `rq->max_idle_balance_cost` (ns).
    pub const fn max_idle_balance_cost(&self) -> Nanos {
        self.max_idle_balance_cost
    }

    /// Sets `max_idle_balance_cost`, and the ceiling that follows from it.
    pub fn set_max_idle_balance_cost(&mut self, cost: Nanos) {
        self.max_idle_balance_cost = cost;
        self.ceiling_ns = ceiling_of(cost, self.ceiling_pct);
    }

    /// The ceiling: `ceiling_pct`% of `max_idle_balance_cost` (saturating),
    /// [`ceiling_of`] them; the cached value at the runqueue's own
    /// percentage.
    #[inline]
    pub fn ceiling(&self, ceiling_pct: u32) -> Nanos {
        if ceiling_pct == self.ceiling_pct {
            self.ceiling_ns
        } else {
            ceiling_of(self.max_idle_balance_cost, ceiling_pct)
        }
    }

    /// Fold one idle period of `sample` ns into the average.
    pub fn fold(&mut self, sample: Nanos, clamp: AvgIdleClamp, ceiling_pct: u32) {
        let max = self.ceiling(ceiling_pct);
        self.avg_idle = match clamp {
            AvgIdleClamp::Snap if sample > max => max,
            AvgIdleClamp::Snap => update_avg(self.avg_idle, sample),
            AvgIdleClamp::Avg => update_avg(self.avg_idle, sample).min(max),
            AvgIdleClamp::Delta => update_avg(self.avg_idle, sample.min(max)),
        };
    }

    /// The CPU starts a newidle balance at `now` (its idle period starts).
    /// A `now` of 0 is stored as 1 so that the stamp is never "none".
    pub fn enter_newidle(&mut self, now: Nanos) {
        self.idle_stamp = now.max(1);
    }

    /// The newidle balance pulled a task: no idle period after all.
    pub fn pulled(&mut self) {
        self.idle_stamp = 0;
    }

    /// The end of a newidle balance: `not_idle` (it pulled, or a task was
    /// queued meanwhile) closes the period without a sample, as fair.c:
    /// sched_balance_newidle() does in v6.19 (it clears `idle_stamp`; the
    /// period is folded in only by a later wakeup activation otherwise).
    pub fn newidle_done(&mut self, not_idle: bool) {
        if not_idle {
            self.pulled();
        }
    }

    /// A task is activated at `now`: if an idle period was open, fold its
    /// length into the average, close it and return the sample.
    #[inline]
    pub fn end_idle(&mut self, now: Nanos, clamp: AvgIdleClamp, ceiling_pct: u32) -> Option<Nanos> {
        if self.idle_stamp == 0 {
            return None;
        }
        let sample = now.saturating_sub(self.idle_stamp);
        self.fold(sample, clamp, ceiling_pct);
        self.idle_stamp = 0;
        // Most periods are short (a pipe's partner answers within
        // microseconds): their bucket without the bucket's arithmetic.
        let i = if sample < AVG_IDLE_HIST_BOUNDS_NS[0] { 0 } else { hist_bucket(sample) };
        self.periods[i] = self.periods[i].wrapping_add(1);
        Some(sample)
    }
}

/// Upper bounds (exclusive, ns) of the buckets of [`hist_bucket`]: powers of
/// two around the 500 µs migration cost that the 2013 gate compares
/// `avg_idle` with, so the bucket `[500 µs, 1 ms)` and the ones above are
/// the gate's "open" side.
pub const AVG_IDLE_HIST_BOUNDS_NS: [Nanos; 5] = [125_000, 250_000, 500_000, 1_000_000, 2_000_000];
/// Buckets of [`hist_bucket`]: one per bound and one above the last.
pub const AVG_IDLE_HIST_BUCKETS: usize = AVG_IDLE_HIST_BOUNDS_NS.len() + 1;
/// The names of the buckets in `@fw avg_idle_hist` (`lt_125us` ... `ge_2ms`).
pub const AVG_IDLE_HIST_NAMES: [&str; AVG_IDLE_HIST_BUCKETS] = ["lt_125us", "lt_250us", "lt_500us", "lt_1ms", "lt_2ms", "ge_2ms"];

/// The bucket of the distribution of `avg_idle` that a value falls in: the
/// first bound it is below, or the last bucket. The bounds double from
/// 125 µs, so the bucket is the bit length of `ns / 125 µs`, capped: a
/// division and a leading-zero count instead of a search, since the kernel
/// counts an idle period's bucket at every wakeup that ends one.
pub fn hist_bucket(avg_idle: Nanos) -> usize {
    let q = avg_idle / AVG_IDLE_HIST_BOUNDS_NS[0];
    ((u64::BITS - q.leading_zeros()) as usize).min(AVG_IDLE_HIST_BOUNDS_NS.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bit-length form is the first bound the value is below, everywhere.
    #[test]
    fn hist_bucket_is_the_first_bound_above() {
        let search = |v: u64| AVG_IDLE_HIST_BOUNDS_NS.iter().position(|&b| v < b).unwrap_or(AVG_IDLE_HIST_BOUNDS_NS.len());
        for b in AVG_IDLE_HIST_BOUNDS_NS {
            for v in [b - 1, b, b + 1, b / 2, b * 3 / 2] {
                assert_eq!(hist_bucket(v), search(v), "{v}");
            }
        }
        for v in (0..5_000_000).step_by(997).chain([u64::MAX, u64::MAX / 3]) {
            assert_eq!(hist_bucket(v), search(v), "{v}");
        }
    }

    #[test]
    fn hist_buckets_split_at_the_bounds() {
        assert_eq!(hist_bucket(0), 0);
        assert_eq!(hist_bucket(124_999), 0);
        assert_eq!(hist_bucket(125_000), 1);
        assert_eq!(hist_bucket(499_999), 2);
        assert_eq!(hist_bucket(SYSCTL_SCHED_MIGRATION_COST), 3);
        assert_eq!(hist_bucket(1_999_999), 4);
        assert_eq!(hist_bucket(2_000_000), 5);
        assert_eq!(hist_bucket(u64::MAX), AVG_IDLE_HIST_BUCKETS - 1);
    }

    #[test]
    fn update_avg_is_the_signed_difference_over_8() {
        let signed = |avg: u64, sample: u64| (avg as i128 + (sample as i128 - avg as i128) / 8) as u64;
        let edges = [0, 1, 7, 8, 9, 15, 16, 17, 999_999, 1_000_000, u64::MAX / 2, u64::MAX - 8, u64::MAX - 1, u64::MAX];
        for &a in &edges {
            for &s in &edges {
                assert_eq!(update_avg(a, s), signed(a, s), "avg {a} sample {s}");
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (a, s) = (x >> (x & 31), x.rotate_left(17) >> ((x >> 8) & 31));
            assert_eq!(update_avg(a, s), signed(a, s), "avg {a} sample {s}");
        }
    }

    #[test]
    fn update_avg_truncates_toward_zero() {
        assert_eq!(update_avg(0, 800), 100);
        assert_eq!(update_avg(800, 0), 700);
        assert_eq!(update_avg(10, 3), 10); // (3-10)/8 = 0, not -1
        assert_eq!(update_avg(u64::MAX, 0), u64::MAX - u64::MAX / 8);
        assert_eq!(update_avg(0, u64::MAX), u64::MAX / 8);
    }

    /// The 2013 thread's three rules on one constructed history, each
    /// deciding differently: after 200 us periods, one 1.2 ms period snaps
    /// 2x to its 1 ms ceiling, averages 1.5x toward 1.2 ms, and averages
    /// Rik van Riel's delta toward the 750 us ceiling; two long periods in
    /// a row push Jason's average past the 500 us gate while the delta rule
    /// stays under it.
    #[test]
    fn the_2013_rules_decide_differently() {
        let after = |clamp, pct, longs: usize| {
            let mut a = AvgIdle::boot(pct);
            for _ in 0..40 {
                a.fold(200_000, clamp, pct);
            }
            for _ in 0..longs {
                a.fold(1_200_000, clamp, pct);
            }
            a.avg_idle
        };
        assert_eq!(after(AvgIdleClamp::Snap, 200, 1), 1_000_000);
        let (avg1, delta1) = (after(AvgIdleClamp::Avg, 150, 1), after(AvgIdleClamp::Delta, 150, 1));
        assert!((320_000..340_000).contains(&avg1) && (260_000..280_000).contains(&delta1), "{avg1} {delta1}");
        let (avg2, delta2) = (after(AvgIdleClamp::Avg, 150, 2), after(AvgIdleClamp::Delta, 150, 2));
        assert!(avg2 < SYSCTL_SCHED_MIGRATION_COST && delta2 < avg2, "{avg2} {delta2}");
        let (avg3, delta3) = (after(AvgIdleClamp::Avg, 150, 3), after(AvgIdleClamp::Delta, 150, 3));
        assert!(avg3 >= SYSCTL_SCHED_MIGRATION_COST && delta3 < SYSCTL_SCHED_MIGRATION_COST, "{avg3} {delta3}");
    }

    /// Rik van Riel's rule clamps the sample only: an average above a
    /// lowered ceiling falls back by averaging, not at once (the average
    /// rule cuts it to the ceiling).
    #[test]
    fn delta_clamps_the_sample_not_the_average() {
        let mut d = AvgIdle { avg_idle: 1_000_000, ..AvgIdle::new() };
        let mut a = d;
        d.fold(2_000_000, AvgIdleClamp::Delta, 150);
        a.fold(2_000_000, AvgIdleClamp::Avg, 150);
        assert_eq!(d.avg_idle, 1_000_000 - (1_000_000 - 750_000) / 8);
        assert_eq!(a.avg_idle, 750_000);
    }

    #[test]
    fn boot_is_at_the_ceiling() {
        assert_eq!(AvgIdle::boot(200), AvgIdle::new());
        assert_eq!(AvgIdle::boot(150).avg_idle, 750_000);
        assert_eq!(AvgIdle::boot(150).max_idle_balance_cost, SYSCTL_SCHED_MIGRATION_COST);
    }

    #[test]
    fn boot_values_and_ceiling() {
        let a = AvgIdle::new();
        assert_eq!(a.avg_idle, 1_000_000);
        assert_eq!(a.ceiling(200), 1_000_000);
        assert_eq!(a.ceiling(150), 750_000);
        let mut b = a;
        b.set_max_idle_balance_cost(u64::MAX);
        assert_eq!(b.ceiling(200), u64::MAX);
    }

    #[test]
    fn ceiling_in_u64_equals_the_wide_product() {
        // The u64 path (product fits) and the u128 fallback agree with the
        // exact value everywhere, including around the overflow boundary.
        let wide = |c: u64, pct: u32| ((c as u128 * pct as u128) / 100).min(u64::MAX as u128) as u64;
        let costs = [0, 1, 99, 500_000, u64::MAX / 200, u64::MAX / 200 + 1, u64::MAX / 150, u64::MAX / 150 + 1, u64::MAX];
        for &c in &costs {
            for pct in [0u32, 1, 100, 150, 200, u32::MAX] {
                let mut a = AvgIdle::new();
                a.set_max_idle_balance_cost(c);
                assert_eq!(a.ceiling(pct), wide(c, pct), "cost {} pct {}", c, pct);
            }
        }
    }

    #[test]
    fn stamp_opens_and_closes_idle_periods() {
        let mut a = AvgIdle::new();
        assert_eq!(a.end_idle(5, AvgIdleClamp::Avg, 200), None);
        a.enter_newidle(1000);
        a.pulled();
        assert_eq!(a.end_idle(5000, AvgIdleClamp::Avg, 200), None);
        a.enter_newidle(1000);
        assert_eq!(a.end_idle(9000, AvgIdleClamp::Avg, 200), Some(8000));
        assert_eq!(a.idle_stamp, 0);
        a.enter_newidle(10_000);
        assert_eq!(a.end_idle(1_210_000, AvgIdleClamp::Avg, 200), Some(1_200_000));
        assert_eq!(a.periods, [1, 0, 0, 0, 1, 0], "8 us and 1.2 ms counted, the pulled period not");
    }
}
