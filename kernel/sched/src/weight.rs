//! Load weights: the nice-to-weight table, its inverse, and the scaling of
//! wall-clock time into virtual time (`calc_delta_fair`).
//!
//! Weights live on the 1024 scale (nice 0 = [`NICE_0_LOAD`] = 1024). Linux
//! keeps ten extra fraction bits on 64-bit machines; those only matter for
//! group-share arithmetic, which this crate does not do yet, so a weight here
//! is exactly the table value (section 1.1 of the reference).
//!
//! Overflow bounds: a [`LoadWeight`] is always in `[MIN_WEIGHT, MAX_WEIGHT]`
//! = `[2, 2^20]`. `calc_delta_fair(delta, w)` = `delta * 1024 / w` is computed
//! in `u128` (`delta < 2^64`, `1024 = 2^10`, so the product is below 2^74)
//! and saturates at `u64::MAX` (reached only for `delta > 2^63` ns, i.e.
//! after about 292 years of runtime at weight 2).

use crate::time::Nanos;

/// The weight of a nice-0 entity.
pub const NICE_0_LOAD: u64 = 1024;
/// Smallest weight a [`LoadWeight`] can hold (Linux's `scale_load_down`
/// floor).
pub const MIN_WEIGHT: u64 = 2;
/// Largest weight a [`LoadWeight`] can hold (above any task weight and
/// Linux's maximum group share of 2^18).
pub const MAX_WEIGHT: u64 = 1 << 20;
/// Weight of a `SCHED_IDLE` entity.
pub const WEIGHT_IDLEPRIO: u64 = 3;
/// `2^32 / WEIGHT_IDLEPRIO`.
pub const WMULT_IDLEPRIO: u32 = 1_431_655_765;
/// The shift of the inverse-weight fixed point: `inv = 2^WMULT_SHIFT / w`.
pub const WMULT_SHIFT: u32 = 32;

/// Weight of each nice level; index = nice + 20.
pub const SCHED_PRIO_TO_WEIGHT: [u32; 40] = [
    88761, 71755, 56483, 46273, 36291, // -20 .. -16
    29154, 23254, 18705, 14949, 11916, // -15 .. -11
    9548, 7620, 6100, 4904, 3906, // -10 .. -6
    3121, 2501, 1991, 1586, 1277, // -5 .. -1
    1024, 820, 655, 526, 423, // 0 .. 4
    335, 272, 215, 172, 137, // 5 .. 9
    110, 87, 70, 56, 45, // 10 .. 14
    36, 29, 23, 18, 15, // 15 .. 19
];

/// `round(2^32 / weight)` for each nice level; index = nice + 20.
pub const SCHED_PRIO_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, // -20 .. -16
    147320, 184698, 229616, 287308, 360437, // -15 .. -11
    449829, 563644, 704093, 875809, 1099582, // -10 .. -6
    1376151, 1717300, 2157191, 2708050, 3363326, // -5 .. -1
    4194304, 5237765, 6557202, 8165337, 10153587, // 0 .. 4
    12820798, 15790321, 19976592, 24970740, 31350126, // 5 .. 9
    39045157, 49367440, 61356676, 76695844, 95443717, // 10 .. 14
    119304647, 148102320, 186737708, 238609294, 286331153, // 15 .. 19
];

/// A nice level.
///
/// Invariant: the value is in `-20..=19`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nice(i8);

impl Nice {
    /// Lowest (most favoured) nice level.
    pub const MIN: Nice = Nice(-20);
    /// Highest (least favoured) nice level.
    pub const MAX: Nice = Nice(19);
    /// Nice 0.
    pub const ZERO: Nice = Nice(0);

    /// A nice level, or `None` outside `-20..=19`.
    pub const fn new(nice: i32) -> Option<Nice> {
        if nice >= -20 && nice <= 19 {
            Some(Nice(nice as i8))
        } else {
            None
        }
    }

    /// A nice level, clamping out-of-range input into `-20..=19` (what
    /// `setpriority` does with out-of-range values).
    pub const fn clamped(nice: i32) -> Nice {
        if nice < -20 {
            Nice(-20)
        } else if nice > 19 {
            Nice(19)
        } else {
            Nice(nice as i8)
        }
    }

    /// The level as an integer.
    pub const fn get(self) -> i32 {
        self.0 as i32
    }

    const fn index(self) -> usize {
        (self.0 as i32 + 20) as usize
    }

    /// The table weight of this level.
    pub const fn weight(self) -> LoadWeight {
        LoadWeight {
            weight: SCHED_PRIO_TO_WEIGHT[self.index()] as u64,
            inv_weight: SCHED_PRIO_TO_WMULT[self.index()],
        }
    }
}

/// A load weight with its cached inverse.
///
/// Invariants: `MIN_WEIGHT <= weight <= MAX_WEIGHT`, and
/// `inv_weight ≈ 2^32 / weight` (exactly the table value for table weights,
/// `min(2^32 / weight, u32::MAX)` otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadWeight {
    weight: u64,
    inv_weight: u32,
}

impl LoadWeight {
    /// Nice 0.
    pub const NICE_0: LoadWeight = Nice::ZERO.weight();
    /// `SCHED_IDLE` weight.
    pub const IDLE: LoadWeight = LoadWeight { weight: WEIGHT_IDLEPRIO, inv_weight: WMULT_IDLEPRIO };

    /// Any weight (e.g. a future group share), clamped into
    /// `[MIN_WEIGHT, MAX_WEIGHT]`.
    pub const fn from_raw(weight: u64) -> LoadWeight {
        let w = if weight < MIN_WEIGHT {
            MIN_WEIGHT
        } else if weight > MAX_WEIGHT {
            MAX_WEIGHT
        } else {
            weight
        };
        let inv = (1u64 << WMULT_SHIFT) / w;
        let inv_weight = if inv > u32::MAX as u64 { u32::MAX } else { inv as u32 };
        LoadWeight { weight: w, inv_weight }
    }

    /// The weight, on the 1024 scale.
    #[inline]
    pub const fn weight(self) -> u64 {
        self.weight
    }

    /// The cached `2^32 / weight`.
    #[inline]
    pub const fn inv_weight(self) -> u32 {
        self.inv_weight
    }
}

/// How `calc_delta_fair` divides by the weight (section 1.2). The two give
/// results within one part in 2^32 of each other for table weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeltaMath {
    /// `delta * 1024 / w` with a real division: Linux on 64-bit after
    /// v6.19 (the division in `__calc_delta()` is an upstream change that
    /// v6.19 does not have yet).
    #[default]
    Divide,
    /// Multiply by the cached inverse `2^32 / w` and shift: Linux v6.19
    /// itself, and every kernel on 32-bit.
    InverseMultiply,
}

/// Wall-clock `delta` converted to virtual time for an entity of weight `lw`:
/// `delta * NICE_0_LOAD / lw.weight` (exact for nice 0).
///
/// Never overflows: the product is formed in `u128` and the result
/// saturates at `u64::MAX`.
#[inline(always)]
pub fn calc_delta_fair(delta: Nanos, lw: LoadWeight) -> u64 {
    if lw.weight == NICE_0_LOAD {
        return delta;
    }
    // The same quotient without the 128-bit division routine whenever
    // delta * 1024 fits in u64 (delta < 2^54 ns, 208 days): always on the
    // hot paths.
    if delta < 1 << 54 {
        return (delta * NICE_0_LOAD) / lw.weight;
    }
    calc_delta_fair_wide(delta, lw)
}

#[cold]
#[inline(never)]
fn calc_delta_fair_wide(delta: Nanos, lw: LoadWeight) -> u64 {
    saturate_u64((delta as u128 * NICE_0_LOAD as u128) / lw.weight as u128)
}

/// [`calc_delta_fair`] with the chosen division method. Both methods
/// return `delta` itself for a nice-0 weight: that test first, so the
/// common case does not load and test the method.
#[inline(always)]
pub fn calc_delta_fair_with(math: DeltaMath, delta: Nanos, lw: LoadWeight) -> u64 {
    if lw.weight == NICE_0_LOAD {
        return delta;
    }
    match math {
        DeltaMath::Divide => calc_delta_fair(delta, lw),
        DeltaMath::InverseMultiply => calc_delta_inv(delta, NICE_0_LOAD, lw),
    }
}

/// `delta * weight / lw.weight` through the cached inverse: form
/// `fact = weight * inv` and shift it down until it fits in 32 bits, then
/// return `(delta * fact) >> shift`.
///
/// Overflow bounds: `weight <= 2^20` and `inv < 2^32` so `fact < 2^52`
/// before the fit step; `delta * fact < 2^96` is formed in `u128`; the
/// result saturates at `u64::MAX`.
pub fn calc_delta_inv(delta: Nanos, weight: u64, lw: LoadWeight) -> u64 {
    let weight = weight.min(MAX_WEIGHT);
    let mut fact = weight * lw.inv_weight as u64;
    let mut shift = WMULT_SHIFT;
    while fact >> 32 != 0 && shift > 0 {
        fact >>= 1;
        shift -= 1;
    }
    saturate_u64((delta as u128 * fact as u128) >> shift)
}

/// `v` clamped into the `i64` range.
#[inline]
pub(crate) fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// `v` clamped into the `u64` range.
#[inline]
pub(crate) const fn saturate_u64(v: u128) -> u64 {
    if v > u64::MAX as u128 {
        u64::MAX
    } else {
        v as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wmult_is_the_rounded_inverse() {
        for (i, (&w, &inv)) in SCHED_PRIO_TO_WEIGHT.iter().zip(SCHED_PRIO_TO_WMULT.iter()).enumerate() {
            let exact = ((1u64 << 32) + w as u64 / 2) / w as u64;
            assert!(exact.abs_diff(inv as u64) <= 1, "nice {}: {} vs {}", i as i32 - 20, exact, inv);
        }
        assert_eq!((1u64 << 32) / WEIGHT_IDLEPRIO, WMULT_IDLEPRIO as u64);
    }

    #[test]
    fn adjacent_levels_differ_by_about_a_quarter() {
        for pair in SCHED_PRIO_TO_WEIGHT.windows(2) {
            let ratio = pair[0] as f64 / pair[1] as f64;
            assert!((1.15..1.35).contains(&ratio), "ratio {ratio}");
        }
    }

    #[test]
    fn nice_range_and_weights() {
        assert_eq!(Nice::new(-21), None);
        assert_eq!(Nice::new(20), None);
        assert_eq!(Nice::clamped(100), Nice::MAX);
        assert_eq!(Nice::clamped(-100), Nice::MIN);
        assert_eq!(Nice::ZERO.weight().weight(), NICE_0_LOAD);
        assert_eq!(Nice::MIN.weight().weight(), 88761);
        assert_eq!(Nice::MAX.weight().weight(), 15);
        assert_eq!(LoadWeight::from_raw(0).weight(), MIN_WEIGHT);
        assert_eq!(LoadWeight::from_raw(u64::MAX).weight(), MAX_WEIGHT);
        assert_eq!(LoadWeight::from_raw(1024), LoadWeight::NICE_0);
    }

    #[test]
    fn calc_delta_fair_scales_inversely_with_weight() {
        assert_eq!(calc_delta_fair(1000, LoadWeight::NICE_0), 1000);
        // nice -5 (3121) advances about 0.33 virtual ns per ns, nice 5 about 3.06.
        assert_eq!(calc_delta_fair(3_000_000, Nice::clamped(-5).weight()), 3_000_000 * 1024 / 3121);
        assert_eq!(calc_delta_fair(1_000_000, Nice::clamped(5).weight()), 1_000_000 * 1024 / 335);
        assert_eq!(calc_delta_fair(u64::MAX, LoadWeight::from_raw(2)), u64::MAX);
        assert_eq!(calc_delta_fair(u64::MAX, Nice::MIN.weight()), ((u64::MAX as u128 * 1024) / 88761) as u64);
    }

    #[test]
    fn inverse_variant_agrees_with_division() {
        for n in -20..=19 {
            let lw = Nice::clamped(n).weight();
            for &d in &[1u64, 999, 1_000_000, 4_000_000_000, 1 << 50] {
                let a = calc_delta_fair_with(DeltaMath::Divide, d, lw);
                let b = calc_delta_fair_with(DeltaMath::InverseMultiply, d, lw);
                // The rounded inverse is off by at most one part in 2^15.
                let tol = a / (1 << 15) + 1;
                assert!(a.abs_diff(b) <= tol, "nice {n} delta {d}: {a} vs {b}");
            }
        }
    }
}
