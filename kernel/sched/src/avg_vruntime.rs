//! The zero-lag virtual time V (`avg_vruntime`) and the eligibility test,
//! from running sums relative to a reference v0 (sections 1.3-1.5).
//!
//! With `key_i = (i64)(v_i - v0)`, the sums `S = Σ key_i·w_i` and
//! `W = Σ w_i` over the entities in the tree give
//! `V = v0 + floor((S + key_c·w_c) / (W + w_c))`, where the running entity
//! `c` (kept out of the tree) is added on the fly. The floor (rather than
//! truncation towards zero) guarantees that an entity placed exactly at V
//! tests eligible. Eligibility of a vruntime `v` is `V >= v`, evaluated
//! without a division as `S' >= (v - v0)·W'`.
//!
//! Overflow safety (the 2024 overflow of section 1.5 cannot happen here),
//! by three independent measures:
//! 1. `S`, the products `key·w` and `key·W'`, and the shift correction
//!    `W·δ` are all formed in `i128`. Each key is an `i64` (`|key| <= 2^63`),
//!    each weight at most `2^20` (`weight::MAX_WEIGHT`) and there are fewer
//!    than `2^32` entities, so `|S| < 2^115` and `W < 2^52`; every product
//!    and sum stays below `2^117`, far inside `i128`. No checked or
//!    saturating step is needed, and no shift of precision (Linux's
//!    `PARANOID_AVG`) is ever required. This deliberately departs from
//!    Linux v6.19, whose 64-bit sums can overflow (after about 104 days of
//!    one lone task on a queue, by the issue-15 differential run); upstream
//!    fixed that after v6.19 (section 1.5, tip 2026), and these sums give
//!    the fixed results.
//! 2. The run-queue keeps v0 at V: it re-centres after every tree insert
//!    and remove (v6.19) and, by default, on every tick (the 2026 fix).
//! 3. Stored lag is clamped (`fair_rq::update_entity_lag`), so every key is
//!    bounded by a few slices' worth of virtual time (well under 2^40 ns).
//!    Measures 2 and 3 keep keys far below the `2^63` at which the wrapping
//!    `i64` key itself would be wrong.
//!
//! Invariant of [`AvgVruntime`]: `sum_w_vruntime == Σ key_i·w_i` and
//! `sum_weight == Σ w_i` over exactly the entities added and not yet removed,
//! with keys taken against the current `zero_vruntime`.

use crate::time::{vadd, vdiff};
use crate::weight::clamp_i64;

/// Running sums for V; see the module docs for the invariant and bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AvgVruntime {
    zero_vruntime: u64,
    sum_w_vruntime: i128,
    sum_weight: u64,
}

impl AvgVruntime {
    /// Empty sums with reference `v0`.
    pub const fn new(v0: u64) -> AvgVruntime {
        AvgVruntime { zero_vruntime: v0, sum_w_vruntime: 0, sum_weight: 0 }
    }

    /// The reference v0 (Linux's `zero_vruntime`).
    #[inline]
    pub fn zero_vruntime(&self) -> u64 {
        self.zero_vruntime
    }

    /// `S = Σ key_i·w_i` over the tree.
    #[inline]
    pub fn sum_w_vruntime(&self) -> i128 {
        self.sum_w_vruntime
    }

    /// `W = Σ w_i` over the tree.
    #[inline]
    pub fn sum_weight(&self) -> u64 {
        self.sum_weight
    }

    /// The key of a vruntime: its signed offset from v0.
    #[inline]
    pub fn key(&self, v: u64) -> i64 {
        vdiff(v, self.zero_vruntime)
    }

    /// `key·w` in `i128`. A weight is at most `2^20` and a sum of weights
    /// below `2^52` (module docs), so `w` fits `i64` and the product is one
    /// signed 64×64→128 multiply instead of a full 128×128 one (which LLVM
    /// must emit for a `u64` operand it cannot bound). Exact: the same
    /// mathematical product.
    #[inline(always)]
    fn wmul(key: i64, w: u64) -> i128 {
        debug_assert!(w <= i64::MAX as u64);
        key as i128 * w as i64 as i128
    }

    /// Account an entity entering the tree.
    #[inline]
    pub fn add(&mut self, v: u64, w: u64) {
        self.sum_w_vruntime += Self::wmul(self.key(v), w);
        self.sum_weight += w;
    }

    /// Account an entity leaving the tree (it must have been added with the
    /// same vruntime and weight).
    #[inline]
    pub fn sub(&mut self, v: u64, w: u64) {
        self.sum_w_vruntime -= Self::wmul(self.key(v), w);
        self.sum_weight = self.sum_weight.saturating_sub(w);
    }

    /// Move the reference to `v0`, adjusting `S` so V is unchanged.
    #[inline]
    pub fn shift_to(&mut self, v0: u64) {
        let delta = vdiff(v0, self.zero_vruntime);
        self.sum_w_vruntime -= Self::wmul(delta, self.sum_weight);
        self.zero_vruntime = v0;
    }

    /// `(S', W')`: the sums with `curr` (vruntime, weight) added, if given.
    /// Eligibility of the running entity (vruntime `v`, queued, so V's
    /// extra term, not in the sums): `eligible(v, Some((v, w)))`, that is
    /// `S + key(v)·w >= key(v)·(W + w)`, is `S >= key(v)·W` for every `w`:
    /// its own term is on both sides. One product instead of two (exact in
    /// `i128`: `|key| < 2^63`, `W < 2^52`).
    #[inline(always)]
    pub fn curr_eligible(&self, v: u64) -> bool {
        self.sum_w_vruntime >= Self::wmul(self.key(v), self.sum_weight)
    }

    /// Sums of exactly one term, entity (`v`, `w`): what `add(v, w)` then
    /// `sub` of the only other term leave (the sums are exact, so removing
    /// the only term leaves S = 0 and W = 0 whatever the order).
    #[inline(always)]
    pub(crate) fn set_only(&mut self, v: u64, w: u64) {
        self.sum_w_vruntime = Self::wmul(self.key(v), w);
        self.sum_weight = w;
    }

    /// `sub(v, w)` of the only term (entity `v`, `w`): the sums are exact
    /// (S is always the sum of its terms), so removing the only one leaves
    /// S = 0 and W = 0, without the product.
    #[inline(always)]
    pub(crate) fn clear_only(&mut self, v: u64, w: u64) {
        debug_assert!(self.sum_weight == w && self.sum_w_vruntime == Self::wmul(self.key(v), w));
        self.sum_w_vruntime = 0;
        self.sum_weight = 0;
    }

    /// The insert of the only entity (vruntime `v`, weight `w`) into empty
    /// sums, followed by the re-centring on `v`, when `v` is V: `add(v, w)`
    /// makes `S = key(v)·w`, V is then `v` (it is when the running entity,
    /// the only other term, is at `v` too: `(key·w + key·wc)/(w + wc) =
    /// key`, exact), and `shift_to(v)` leaves `S = key·w − key·w = 0`. So
    /// the zero point moves to `v`, S stays 0 and W becomes `w`, without
    /// the products and the division. `w = 0` is the re-centring alone.
    #[inline(always)]
    pub(crate) fn set_single(&mut self, v: u64, w: u64) {
        debug_assert!(self.sum_weight == 0 && self.sum_w_vruntime == 0);
        self.zero_vruntime = v;
        self.sum_weight = w;
    }

    #[inline(always)]
    pub fn totals(&self, curr: Option<(u64, u64)>) -> (i128, i128) {
        match curr {
            Some((v, w)) => (self.sum_w_vruntime + Self::wmul(self.key(v), w), (self.sum_weight + w) as i128),
            None => (self.sum_w_vruntime, self.sum_weight as i128),
        }
    }

    /// V: the weighted mean vruntime of the tree plus `curr` (vruntime,
    /// weight) if given, rounded down; v0 when the total weight is 0.
    #[inline]
    pub fn mean(&self, curr: Option<(u64, u64)>) -> u64 {
        let (s, w) = self.totals(curr);
        self.mean_in(s, w)
    }

    /// [`AvgVruntime::mean`] with an exact shortcut for a caller that
    /// often finds the tree empty: with `S = W = 0` and a running entity of
    /// weight `w > 0`, `(S + key·w)/(W + w)` is `key` exactly, so V is that
    /// entity's vruntime (`v0 + key = v`, wrapping); no product, no
    /// division. (A pipe's wakeup finds only the waker.)
    #[inline(always)]
    pub fn mean_or_curr(&self, curr: Option<(u64, u64)>) -> u64 {
        if let Some((v, w)) = curr {
            if self.sum_weight == 0 && self.sum_w_vruntime == 0 && w != 0 {
                return v;
            }
        }
        self.mean(curr)
    }

    /// [`AvgVruntime::mean`]`(Some((vc, w)))` when the sums are exactly
    /// the term of one entity (`vn`) of the running entity's weight `w`
    /// (the tree's only node: the sums are exact): `(key(vn)·w +
    /// key(vc)·w)/(2w)` is the mean of the two keys, so V is `v0 +
    /// floor((key(vn) + key(vc))/2)`, formed as `(a >> 1) + (b >> 1) + (a &
    /// b & 1)` (arithmetic shifts round down; no overflow for any two
    /// `i64`), without the products, the 128-bit range tests and the
    /// division.
    #[inline(always)]
    pub(crate) fn mean_of_equal_pair(&self, vn: u64, vc: u64) -> u64 {
        let (a, b) = (self.key(vn), self.key(vc));
        vadd(self.zero_vruntime, (a >> 1) + (b >> 1) + (a & b & 1))
    }

    /// [`AvgVruntime::mean`] from [`AvgVruntime::totals`].
    #[inline(always)]
    pub fn mean_in(&self, s: i128, w: i128) -> u64 {
        if w == 0 {
            return self.zero_vruntime;
        }
        // floor division; the common case fits a 64-bit divide. For w > 0
        // (always: a sum of positive weights) `s.div_euclid(w)` is the
        // truncated quotient less one when the remainder is negative;
        // spelled out so the compiler sees a positive divisor and drops
        // the zero and `MIN / -1` checks.
        let q = match (i64::try_from(s), i64::try_from(w)) {
            (Ok(s), Ok(w)) if w > 0 => (s / w) - (s % w < 0) as i64,
            _ => clamp_i64(s.div_euclid(w)),
        };
        vadd(self.zero_vruntime, q)
    }

    /// Whether `v <= V` (lag >= 0), without dividing:
    /// `S' >= (v - v0)·W'` in `i128`.
    #[inline]
    pub fn eligible(&self, v: u64, curr: Option<(u64, u64)>) -> bool {
        let (s, w) = self.totals(curr);
        self.eligible_in(v, s, w)
    }

    /// [`AvgVruntime::eligible`] from [`AvgVruntime::totals`].
    #[inline(always)]
    pub fn eligible_in(&self, v: u64, s: i128, w: i128) -> bool {
        // w = W' < 2^53 (module docs), so it fits i64: one 64×64→128 multiply
        s >= self.key(v) as i128 * w as i64 as i128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_is_floor_of_weighted_average() {
        let mut a = AvgVruntime::new(1000);
        a.add(990, 3);
        a.add(1001, 1);
        // (-30 + 1) / 4 = -7.25 -> floor -8
        assert_eq!(a.mean(None), 992);
        assert!(a.eligible(992, None));
        assert!(!a.eligible(993, None));
        a.add(1100, 4); // as curr instead:
        a.sub(1100, 4);
        assert_eq!(a.mean(Some((1100, 4))), 1000 + (-29 + 400i64).div_euclid(8) as u64);
        a.shift_to(2000);
        assert_eq!(a.mean(None), 992);
        a.sub(990, 3);
        a.sub(1001, 1);
        assert_eq!(a.sum_weight(), 0);
        assert_eq!(a.sum_w_vruntime(), 0);
        assert_eq!(a.mean(None), 2000);
    }

    #[test]
    fn entity_at_the_mean_is_eligible_across_the_wrap() {
        let mut a = AvgVruntime::new(u64::MAX - 10);
        a.add(u64::MAX - 20, 1024);
        a.add(5, 15); // wrapped past zero
        let v = a.mean(None);
        assert!(a.eligible(v, None));
        assert!(!a.eligible(v.wrapping_add(1), None));
    }

    proptest::proptest! {
        /// The midpoint form of V equals the general mean for every pair of
        /// vruntimes of one weight, keys near ±2^63 included.
        #[test]
        fn mean_of_equal_pair_is_the_mean(v0: u64, vn: u64, vc: u64, w in 2u64..=(1 << 20)) {
            let mut a = AvgVruntime::new(v0);
            a.add(vn, w);
            proptest::prop_assert_eq!(a.mean_of_equal_pair(vn, vc), a.mean(Some((vc, w))));
        }
    }

    /// The 2024 report: key about -1.09e16 with W' = 2677. The i64 product
    /// wraps (Linux then saw "nothing eligible"); ours does not.
    #[test]
    fn the_2024_overflow_numbers_are_handled() {
        let key: i64 = -10_900_000_000_000_000;
        let w_total: i64 = 2677;
        assert!(key.checked_mul(w_total).is_none(), "the i64 product overflows");
        let mut a = AvgVruntime::new(0);
        let v_far_left = key as u64; // wrapped representation of a negative key
        a.add(v_far_left, 2);
        a.add(0, 2675);
        let v = a.mean(None);
        assert!(crate::time::vbefore(v_far_left, v));
        assert!(a.eligible(v_far_left, None), "the far-left entity is eligible");
        assert!(!a.eligible(0, None), "the others are not: V is left of them");
    }
}
