//! Run-queue tunables: base slice and its CPU-count scaling, tick length,
//! feature switches, and the historical variants kept selectable.
//!
//! Historical variants (reference sections 1.2, 1.4, 1.6) that experiments
//! may want to compare against the v6.19 behaviour:
//! - [`LEGACY_BASE_SLICE_NS`] (0.75 ms, Linux 6.6-6.14) instead of
//!   [`BASE_SLICE_NS`] (0.70 ms, 6.15 onward);
//! - [`TunableScaling`] `None`/`Linear` instead of `Log`;
//! - [`DeltaMath::InverseMultiply`] (32-bit style reciprocal) instead of the
//!   64-bit division;
//! - `recenter_on_tick`: re-centre the zero-lag reference v0 on every tick
//!   (the 2026 fix, our default, because it bounds keys with one runnable
//!   entity) or only on enqueue/dequeue (exactly v6.19).

use crate::features::Features;
use crate::time::{Nanos, NSEC_PER_MSEC, NSEC_PER_USEC};
use crate::weight::DeltaMath;

/// Normalized base slice since Linux 6.15: 0.70 ms.
pub const BASE_SLICE_NS: Nanos = 700 * NSEC_PER_USEC;
/// Normalized base slice in Linux 6.6-6.14: 0.75 ms.
pub const LEGACY_BASE_SLICE_NS: Nanos = 750 * NSEC_PER_USEC;
/// Smallest custom slice accepted (0.1 ms); smaller requests are raised.
pub const MIN_CUSTOM_SLICE_NS: Nanos = 100 * NSEC_PER_USEC;
/// Largest custom slice accepted (100 ms); larger requests are lowered.
pub const MAX_CUSTOM_SLICE_NS: Nanos = 100 * NSEC_PER_MSEC;
/// Tick length at HZ=1000.
pub const TICK_NSEC_HZ1000: Nanos = NSEC_PER_MSEC;

/// How the base slice grows with the number of online CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TunableScaling {
    /// Factor 1.
    None,
    /// Factor `1 + ilog2(min(ncpus, 8))` (Linux default).
    #[default]
    Log,
    /// Factor `min(ncpus, 8)`.
    Linear,
}

impl TunableScaling {
    /// The slice factor for `ncpus` online CPUs (0 is treated as 1).
    pub fn factor(self, ncpus: u32) -> u64 {
        let n = ncpus.clamp(1, 8);
        match self {
            TunableScaling::None => 1,
            TunableScaling::Log => 1 + n.ilog2() as u64,
            TunableScaling::Linear => n as u64,
        }
    }
}

/// The knobs of one fair run-queue.
///
/// Invariants (kept by the constructors and setters, so every field is
/// usable without checks): `nr_cpus >= 1`, `normalized_base_slice` in
/// `[MIN_CUSTOM_SLICE_NS, MAX_CUSTOM_SLICE_NS]`, `tick_nsec >= 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunables {
    /// Feature switches.
    pub features: Features,
    nr_cpus: u32,
    scaling: TunableScaling,
    normalized_base_slice: Nanos,
    tick_nsec: Nanos,
    /// Division method of `calc_delta_fair`.
    pub delta_math: DeltaMath,
    /// Re-centre v0 on the mean on every tick as well as on enqueue/dequeue.
    pub recenter_on_tick: bool,
}

impl Default for Tunables {
    fn default() -> Tunables {
        Tunables::new(1)
    }
}

impl Tunables {
    /// Defaults for a machine with `nr_cpus` online CPUs, HZ=1000.
    pub fn new(nr_cpus: u32) -> Tunables {
        Tunables {
            features: Features::default(),
            nr_cpus: nr_cpus.max(1),
            scaling: TunableScaling::Log,
            normalized_base_slice: BASE_SLICE_NS,
            tick_nsec: TICK_NSEC_HZ1000,
            delta_math: DeltaMath::Divide,
            recenter_on_tick: true,
        }
    }

    /// Online CPU count used for slice scaling.
    pub fn nr_cpus(&self) -> u32 {
        self.nr_cpus
    }

    /// Set the online CPU count (0 is treated as 1).
    pub fn set_nr_cpus(&mut self, n: u32) {
        self.nr_cpus = n.max(1);
    }

    /// The scaling rule.
    pub fn scaling(&self) -> TunableScaling {
        self.scaling
    }

    /// Set the scaling rule.
    pub fn set_scaling(&mut self, s: TunableScaling) {
        self.scaling = s;
    }

    /// The unscaled base slice.
    pub fn normalized_base_slice(&self) -> Nanos {
        self.normalized_base_slice
    }

    /// Set the unscaled base slice, clamped to the custom-slice range.
    pub fn set_normalized_base_slice(&mut self, ns: Nanos) {
        self.normalized_base_slice = ns.clamp(MIN_CUSTOM_SLICE_NS, MAX_CUSTOM_SLICE_NS);
    }

    /// The tick length.
    pub fn tick_nsec(&self) -> Nanos {
        self.tick_nsec
    }

    /// Set the tick length (0 is treated as 1 ns).
    pub fn set_tick_nsec(&mut self, ns: Nanos) {
        self.tick_nsec = ns.max(1);
    }

    /// The default slice of an entity without a custom slice:
    /// normalized base × scaling factor (at most 800 ms, no overflow).
    pub fn base_slice(&self) -> Nanos {
        self.normalized_base_slice * self.scaling.factor(self.nr_cpus)
    }
}

/// A custom slice request clamped as `sched_setattr` does; `None` for 0
/// (which means "back to the default").
pub fn clamp_custom_slice(ns: Nanos) -> Option<Nanos> {
    if ns == 0 {
        None
    } else {
        Some(ns.clamp(MIN_CUSTOM_SLICE_NS, MAX_CUSTOM_SLICE_NS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_slice_scales_like_linux() {
        let expect = [(1, 700_000), (2, 1_400_000), (3, 1_400_000), (4, 2_100_000), (7, 2_100_000), (8, 2_800_000), (64, 2_800_000)];
        for (n, slice) in expect {
            assert_eq!(Tunables::new(n).base_slice(), slice, "{n} cpus");
        }
        let mut t = Tunables::new(4);
        t.set_normalized_base_slice(LEGACY_BASE_SLICE_NS);
        assert_eq!(t.base_slice(), 2_250_000);
        t.set_scaling(TunableScaling::Linear);
        assert_eq!(t.base_slice(), 3_000_000);
        t.set_scaling(TunableScaling::None);
        assert_eq!(t.base_slice(), 750_000);
        assert_eq!(Tunables::new(0).nr_cpus(), 1);
    }

    #[test]
    fn custom_slice_is_clamped() {
        assert_eq!(clamp_custom_slice(0), None);
        assert_eq!(clamp_custom_slice(1), Some(MIN_CUSTOM_SLICE_NS));
        assert_eq!(clamp_custom_slice(u64::MAX), Some(MAX_CUSTOM_SLICE_NS));
        assert_eq!(clamp_custom_slice(3_000_000), Some(3_000_000));
    }
}
