//! Time units and wrap-safe virtual-time arithmetic.
//!
//! All wall-clock quantities in this crate are `u64` nanoseconds ([`Nanos`]).
//! Virtual times (vruntime, deadline, the zero-lag point V, protection ends)
//! are `u64` values that are allowed to wrap around. They are only ever
//! compared or subtracted through the helpers below, which interpret the
//! difference of two values as a signed `i64`. This is correct as long as
//! the two compared values are less than 2^63 apart, which the runqueue
//! guarantees by keeping every queued entity within a bounded lag of V
//! (see `fair_rq` and `avg_vruntime`).

/// Nanoseconds of wall-clock (task) time.
pub type Nanos = u64;

/// Nanoseconds per microsecond.
pub const NSEC_PER_USEC: Nanos = 1_000;
/// Nanoseconds per millisecond.
pub const NSEC_PER_MSEC: Nanos = 1_000_000;
/// Nanoseconds per second.
pub const NSEC_PER_SEC: Nanos = 1_000_000_000;

/// Signed distance `a - b` between two wrapping virtual times.
///
/// Exact when the true distance lies in `[-2^63, 2^63)`.
#[inline]
pub const fn vdiff(a: u64, b: u64) -> i64 {
    a.wrapping_sub(b) as i64
}

/// `a < b` in wrapping virtual time.
#[inline]
pub const fn vbefore(a: u64, b: u64) -> bool {
    vdiff(a, b) < 0
}

/// `a <= b` in wrapping virtual time.
#[inline]
pub const fn vbefore_eq(a: u64, b: u64) -> bool {
    vdiff(a, b) <= 0
}

/// The earlier of two wrapping virtual times.
#[inline]
pub const fn vmin(a: u64, b: u64) -> u64 {
    if vbefore(b, a) {
        b
    } else {
        a
    }
}

/// `v + d` for a signed offset, wrapping.
#[inline]
pub const fn vadd(v: u64, d: i64) -> u64 {
    v.wrapping_add(d as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_survive_wraparound() {
        let a = u64::MAX - 5;
        let b = a.wrapping_add(10); // wrapped past zero
        assert!(b < a, "raw u64 order is wrong after the wrap");
        assert!(vbefore(a, b));
        assert!(!vbefore(b, a));
        assert_eq!(vdiff(b, a), 10);
        assert_eq!(vdiff(a, b), -10);
        assert_eq!(vmin(a, b), a);
        assert_eq!(vmin(b, a), a);
        assert_eq!(vadd(a, 10), b);
        assert_eq!(vadd(b, -10), a);
        assert!(vbefore_eq(a, a));
    }
}
