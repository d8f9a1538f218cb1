//! CPU capacity (reference §6): original capacity, capacity left after
//! pressure, fit tests and misfit detection.
//!
//! # Contract
//!
//! - [`CapacityTable`] holds each CPU's original capacity (settable, to
//!   emulate asymmetric CPUs; 1024 by default). The kernel reads it when it
//!   fills `CpuSnapshot::capacity_orig`.
//! - [`scale_rt_capacity`] turns the original capacity and the pressure
//!   averages (PELT-style averages, out of 1024, of the time taken by
//!   higher classes and IRQs, and of thermal/frequency caps) into the
//!   capacity left for fair tasks (`CpuSnapshot::capacity`). The kernel
//!   calls it at each balance pass for its own CPU (Linux refreshes it in
//!   `update_group_capacity`), under no lock.
//! - [`update_misfit_status`] is called on the tick (and with `None` when
//!   the CPU goes newly idle) under the run-queue lock; the result goes into
//!   `CpuSnapshot::misfit_task_load`.
//!
//! Arithmetic: every product is of two values below 2^32 after clamping
//! (capacities ≤ 2^20 here in practice), done in `u128`, so nothing
//! overflows; results are at least 1 where Linux guarantees it.

use alloc::vec;
use alloc::vec::Vec;

use crate::cpumask::CpuMask;

/// One full-speed CPU.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;

/// Original capacities, one per CPU index.
///
/// Invariant: every entry is in `1..=SCHED_CAPACITY_SCALE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapacityTable {
    orig: Vec<u64>,
}

impl CapacityTable {
    /// `nr_cpus` CPUs of capacity 1024.
    pub fn new(nr_cpus: usize) -> Self {
        CapacityTable { orig: vec![SCHED_CAPACITY_SCALE; nr_cpus] }
    }

    /// Sets CPU `cpu`'s original capacity, clamped to `1..=1024`; ignored for
    /// an unknown CPU. Returns whether it was stored.
    pub fn set(&mut self, cpu: usize, cap: u64) -> bool {
        match self.orig.get_mut(cpu) {
            Some(c) => {
                *c = cap.clamp(1, SCHED_CAPACITY_SCALE);
                true
            }
            None => false,
        }
    }

    /// CPU `cpu`'s original capacity (1024 for an unknown CPU).
    pub fn orig(&self, cpu: usize) -> u64 {
        self.orig.get(cpu).copied().unwrap_or(SCHED_CAPACITY_SCALE)
    }

    /// Whether capacities differ among `span`'s CPUs (what Linux's
    /// `asym_cpu_capacity_classify` detects to set `SD_ASYM_CPUCAPACITY`).
    pub fn asymmetric(&self, span: &CpuMask) -> bool {
        let mut it = span.iter().map(|c| self.orig(c));
        let first = it.next();
        it.any(|c| Some(c) != first)
    }

    /// The largest original capacity among `mask`'s CPUs (0 if empty).
    pub fn max_in(&self, mask: &CpuMask) -> u64 {
        mask.iter().map(|c| self.orig(c)).max().unwrap_or(0)
    }
}

/// Pressure on one CPU, each a PELT-style average out of 1024.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pressure {
    /// Capacity lost to hardware (thermal) or cpufreq caps.
    pub hw: u64,
    /// Utilisation of the RT and deadline classes.
    pub rt_dl: u64,
    /// Time in IRQ context.
    pub irq: u64,
}

/// Capacity left for the fair class (`scale_rt_capacity`): the capacity
/// after hardware pressure, minus what RT/DL use, scaled down by the IRQ
/// share. Always at least 1.
pub fn scale_rt_capacity(orig: u64, p: Pressure) -> u64 {
    let max = orig.saturating_sub(p.hw);
    if max == 0 || p.irq >= max || p.rt_dl >= max {
        return 1;
    }
    let free = max - p.rt_dl;
    let scaled = free as u128 * (max - p.irq) as u128 / max as u128;
    (scaled as u64).max(1)
}

/// `fits_capacity(u, c)`: `u` is below 80% of `c` (the 1280/1024 margin).
pub fn fits_capacity(util: u64, cap: u64) -> bool {
    (util as u128) * 1280 < (cap as u128) * 1024
}

/// `capacity_greater(a, b)`: `a` is more than about 5% above `b`.
pub fn capacity_greater(a: u64, b: u64) -> bool {
    (a as u128) * 1024 > (b as u128) * 1078
}

/// `check_cpu_capacity`: the CPU lost more than `imbalance_pct - 100` percent
/// of its original capacity to pressure.
pub fn check_cpu_capacity(capacity: u64, capacity_orig: u64, imbalance_pct: u32) -> bool {
    (capacity as u128) * (imbalance_pct as u128) < (capacity_orig as u128) * 100
}

/// `task_fits_cpu` without uclamp: the task's util fits the CPU's capacity.
pub fn task_fits_cpu(task_util: u64, cpu_capacity: u64) -> bool {
    fits_capacity(task_util, cpu_capacity)
}

/// The current task as misfit detection needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurrTask {
    /// `task_util_est`.
    pub util: u64,
    /// `task_h_load`.
    pub load: u64,
    /// May run on exactly one CPU.
    pub pinned: bool,
    /// Largest original capacity among the CPUs it may use.
    pub max_allowed_capacity: u64,
}

/// `update_misfit_status`: the `misfit_task_load` to store for this CPU.
/// `None` (newly idle) or a symmetric system gives 0; otherwise
/// `max(1, load)` when the task may move, this CPU is not already the
/// biggest it may use, and its util does not fit this CPU's capacity.
pub fn update_misfit_status(
    curr: Option<CurrTask>,
    asym: bool,
    cpu_capacity: u64,
    cpu_capacity_orig: u64,
) -> u64 {
    let Some(p) = curr else { return 0 };
    if !asym || p.pinned || p.max_allowed_capacity <= cpu_capacity_orig {
        return 0;
    }
    if task_fits_cpu(p.util, cpu_capacity) {
        return 0;
    }
    p.load.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_rt_capacity_subtracts_and_scales() {
        assert_eq!(scale_rt_capacity(1024, Pressure::default()), 1024);
        assert_eq!(scale_rt_capacity(1024, Pressure { rt_dl: 256, ..Default::default() }), 768);
        // 768 free × (1024 - 512) / 1024 = 384
        assert_eq!(scale_rt_capacity(1024, Pressure { rt_dl: 256, irq: 512, hw: 0 }), 384);
        assert_eq!(scale_rt_capacity(1024, Pressure { hw: 512, ..Default::default() }), 512);
        assert_eq!(scale_rt_capacity(1024, Pressure { irq: 2000, ..Default::default() }), 1);
        assert_eq!(scale_rt_capacity(0, Pressure::default()), 1);
        assert!(scale_rt_capacity(u64::MAX, Pressure { rt_dl: 1, irq: 1, hw: 0 }) > 0);
    }

    #[test]
    fn fit_margins() {
        assert!(fits_capacity(818, 1024));
        assert!(!fits_capacity(820, 1024));
        assert!(!fits_capacity(512, 512));
        assert!(capacity_greater(1024, 512));
        assert!(!capacity_greater(1050, 1024));
        assert!(capacity_greater(1080, 1024));
        assert!(check_cpu_capacity(870, 1024, 117));
        assert!(!check_cpu_capacity(880, 1024, 117));
    }

    #[test]
    fn misfit_only_where_a_bigger_cpu_exists() {
        let hog = CurrTask { util: 512, load: 1024, pinned: false, max_allowed_capacity: 1024 };
        assert_eq!(update_misfit_status(Some(hog), true, 512, 512), 1024);
        assert_eq!(update_misfit_status(Some(hog), false, 512, 512), 0);
        assert_eq!(update_misfit_status(Some(hog), true, 1024, 1024), 0);
        let pinned = CurrTask { pinned: true, ..hog };
        assert_eq!(update_misfit_status(Some(pinned), true, 512, 512), 0);
        let small = CurrTask { util: 100, ..hog };
        assert_eq!(update_misfit_status(Some(small), true, 512, 512), 0);
        assert_eq!(update_misfit_status(None, true, 512, 512), 0);
    }

    #[test]
    fn table_clamps_and_detects_asymmetry() {
        let mut t = CapacityTable::new(4);
        assert!(!t.asymmetric(&CpuMask::first_n(4)));
        assert!(t.set(1, 0));
        assert_eq!(t.orig(1), 1);
        assert!(t.set(2, 5000));
        assert_eq!(t.orig(2), 1024);
        assert!(!t.set(9, 512));
        t.set(1, 512);
        assert!(t.asymmetric(&CpuMask::first_n(4)));
        assert_eq!(t.max_in(&CpuMask::single(1)), 512);
    }
}
