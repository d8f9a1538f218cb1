//! Per-domain balancing counters in the layout of `/proc/schedstat`'s
//! domain lines (schedstat version 15: idle types in the order idle, busy,
//! newly idle), plus the `@fw domstat` machine line.
//!
//! # Contract
//!
//! One [`DomainStats`] per (CPU, domain), inside `interval::SdState`,
//! updated by the owning CPU only (no lock). Counters are `u64` and wrap
//! (as Linux's `unsigned int` do, just later).
//!
//! Line format ([`DomainLine`]'s `Display`):
//! `domain<level index> <cpumask hex> ` then, for each idle type in the
//! order idle, busy, newidle: `lb_count lb_balanced lb_failed lb_imbalance
//! lb_gained lb_hot_gained lb_nobusyq lb_nobusyg`, then `alb_count
//! alb_failed alb_pushed sbe_count sbe_balanced sbe_pushed sbf_count
//! sbf_balanced sbf_pushed ttwu_wake_remote ttwu_move_affine
//! ttwu_move_balance` — 36 numbers. The mask is Linux's `%*pb`: hex, in
//! comma-separated 32-bit chunks, most significant first, the first chunk
//! only as wide as `nr_cpu_ids` needs.

use core::fmt;

use crate::cpumask::CpuMask;
use crate::topology::Level;

use super::snapshot::IdleType;

/// The eight load-balance counters of one idle type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LbCounters {
    /// Balance attempts.
    pub lb_count: u64,
    /// Attempts that found the domain balanced.
    pub lb_balanced: u64,
    /// Attempts that found an imbalance but moved nothing.
    pub lb_failed: u64,
    /// Σ imbalance found.
    pub lb_imbalance: u64,
    /// Tasks moved.
    pub lb_gained: u64,
    /// Of which cache hot.
    pub lb_hot_gained: u64,
    /// No busiest run-queue found.
    pub lb_nobusyq: u64,
    /// No busiest group found.
    pub lb_nobusyg: u64,
}

/// A domain's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DomainStats {
    /// Indexed by [`IdleType::index`].
    pub lb: [LbCounters; 3],
    /// Active balances tried / failed / that pushed a task.
    pub alb_count: u64,
    /// See `alb_count`.
    pub alb_failed: u64,
    /// See `alb_count`.
    pub alb_pushed: u64,
    /// Exec balancing (SD_BALANCE_EXEC): count, stayed, moved.
    pub sbe_count: u64,
    /// See `sbe_count`.
    pub sbe_balanced: u64,
    /// See `sbe_count`.
    pub sbe_pushed: u64,
    /// Fork balancing (SD_BALANCE_FORK): count, stayed, moved.
    pub sbf_count: u64,
    /// See `sbf_count`.
    pub sbf_balanced: u64,
    /// See `sbf_count`.
    pub sbf_pushed: u64,
    /// Wakeups from a CPU of this domain of a task last on another CPU.
    pub ttwu_wake_remote: u64,
    /// Wakeups moved to the waker by wake_affine.
    pub ttwu_move_affine: u64,
    /// Wakeups moved by wake balancing (SD_BALANCE_WAKE, never here).
    pub ttwu_move_balance: u64,
}

/// Lets the counting helpers take per-domain state that embeds the counters.
impl AsMut<DomainStats> for DomainStats {
    fn as_mut(&mut self) -> &mut DomainStats {
        self
    }
}

impl DomainStats {
    /// The counters of one idle type.
    pub fn lb_mut(&mut self, idle: IdleType) -> &mut LbCounters {
        &mut self.lb[idle.index()]
    }

    /// All 36 values in line order.
    pub fn values(&self) -> [u64; 36] {
        let mut v = [0u64; 36];
        for (i, c) in self.lb.iter().enumerate() {
            v[i * 8..i * 8 + 8].copy_from_slice(&[
                c.lb_count, c.lb_balanced, c.lb_failed, c.lb_imbalance, c.lb_gained,
                c.lb_hot_gained, c.lb_nobusyq, c.lb_nobusyg,
            ]);
        }
        v[24..].copy_from_slice(&[
            self.alb_count, self.alb_failed, self.alb_pushed, self.sbe_count, self.sbe_balanced,
            self.sbe_pushed, self.sbf_count, self.sbf_balanced, self.sbf_pushed,
            self.ttwu_wake_remote, self.ttwu_move_affine, self.ttwu_move_balance,
        ]);
        v
    }
}

/// Field names in line order, for the machine line.
pub const FIELD_NAMES: [&str; 36] = [
    "lb_count_idle", "lb_balanced_idle", "lb_failed_idle", "lb_imbalance_idle",
    "lb_gained_idle", "lb_hot_gained_idle", "lb_nobusyq_idle", "lb_nobusyg_idle",
    "lb_count_busy", "lb_balanced_busy", "lb_failed_busy", "lb_imbalance_busy",
    "lb_gained_busy", "lb_hot_gained_busy", "lb_nobusyq_busy", "lb_nobusyg_busy",
    "lb_count_newidle", "lb_balanced_newidle", "lb_failed_newidle", "lb_imbalance_newidle",
    "lb_gained_newidle", "lb_hot_gained_newidle", "lb_nobusyq_newidle", "lb_nobusyg_newidle",
    "alb_count", "alb_failed", "alb_pushed", "sbe_count", "sbe_balanced", "sbe_pushed",
    "sbf_count", "sbf_balanced", "sbf_pushed", "ttwu_wake_remote", "ttwu_move_affine",
    "ttwu_move_balance",
];

/// Writes `mask` as Linux's `%*pb` with `nr_cpu_ids` bits.
pub fn write_mask_hex<W: fmt::Write + ?Sized>(w: &mut W, mask: &CpuMask, nr_cpu_ids: usize) -> fmt::Result {
    let bits = mask.bits();
    let nbits = nr_cpu_ids.clamp(1, crate::cpumask::MAX_CPUS);
    let chunks = nbits.div_ceil(32);
    for k in (0..chunks).rev() {
        let word = bits[k / 2] >> ((k % 2) * 32);
        let chunk = (word & 0xffff_ffff) as u32;
        if k == chunks - 1 {
            let width = (nbits - k * 32).div_ceil(4);
            let chunk = if nbits - k * 32 >= 32 { chunk } else { chunk & ((1u32 << (nbits - k * 32)) - 1) };
            write!(w, "{chunk:0width$x}")?;
        } else {
            write!(w, ",{chunk:08x}")?;
        }
    }
    Ok(())
}

/// A `/proc/schedstat` domain line: `domain<index> <mask> <36 values>`.
pub struct DomainLine<'a> {
    /// Position of the domain in the CPU's chain (0 = lowest).
    pub index: usize,
    /// Domain span.
    pub span: CpuMask,
    /// `nr_cpu_ids` (mask width).
    pub nr_cpu_ids: usize,
    /// Counters.
    pub stats: &'a DomainStats,
}

impl fmt::Display for DomainLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "domain{} ", self.index)?;
        write_mask_hex(f, &self.span, self.nr_cpu_ids)?;
        for v in self.stats.values() {
            write!(f, " {v}")?;
        }
        Ok(())
    }
}

/// Writes `@fw domstat cpu=<cpu> level=<LEVEL> field=value ...` (all 36
/// fields, names from [`FIELD_NAMES`]).
pub fn write_domstat_line<W: fmt::Write + ?Sized>(w: &mut W, cpu: usize, level: Level, stats: &DomainStats) -> fmt::Result {
    write!(w, "@fw domstat cpu={cpu} level={level}")?;
    for (name, v) in FIELD_NAMES.iter().zip(stats.values()) {
        write!(w, " {name}={v}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};

    #[test]
    fn mask_hex_matches_linux_pb() {
        let mut s = String::new();
        write_mask_hex(&mut s, &CpuMask::first_n(2), 8).unwrap();
        assert_eq!(s, "03");
        s.clear();
        write_mask_hex(&mut s, &CpuMask::first_n(4), 4).unwrap();
        assert_eq!(s, "f");
        s.clear();
        let m: CpuMask = "0,33".parse().unwrap();
        write_mask_hex(&mut s, &m, 40).unwrap();
        assert_eq!(s, "02,00000001");
    }

    #[test]
    fn line_has_36_values_in_order() {
        let mut st = DomainStats::default();
        st.lb_mut(IdleType::NotIdle).lb_count = 7;
        st.ttwu_move_balance = 9;
        let line = DomainLine { index: 1, span: CpuMask::first_n(8), nr_cpu_ids: 8, stats: &st }.to_string();
        let f: alloc::vec::Vec<&str> = line.split(' ').collect();
        assert_eq!(f[0], "domain1");
        assert_eq!(f[1], "ff");
        assert_eq!(f.len(), 38);
        assert_eq!(f[2 + 8], "7");
        assert_eq!(f[37], "9");
        let mut m = String::new();
        write_domstat_line(&mut m, 3, Level::Mc, &st).unwrap();
        assert!(m.starts_with("@fw domstat cpu=3 level=MC lb_count_idle=0 "));
        assert!(m.contains(" lb_count_busy=7 "));
        assert!(m.ends_with(" ttwu_move_balance=9"));
    }
}
