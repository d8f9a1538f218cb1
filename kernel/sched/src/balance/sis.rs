//! `select_idle_sibling` and `select_idle_cpu` (reference §4.4–4.6): find an
//! idle CPU sharing the cache with the wakeup target, with the scan depth
//! limited by SIS_UTIL (today) or by one of the SIS_PROP variants (history).
//!
//! # Contract
//!
//! Called from `wake::select_task_rq_fair` (under the task's `pi_lock`, no
//! run-queue lock) with CPU snapshots and, per LLC, the shared state
//! [`LlcShared`] the kernel keeps (indexed by `sd_llc_id`, read through
//! [`LlcTable`]). The result says
//! which CPU, how many CPUs were scanned and whether the scan was cut short,
//! so the kernel can time the call and feed [`sis_prop_account`].
//! `nr_idle_scan` is refreshed by [`update_idle_cpu_scan`] during periodic
//! and NOHZ (not newidle) balancing of the domain that equals the LLC
//! (`SdLbStats::sum_util`; the gate is [`idle_cpu_scan_refresh`]).
//!
//! Arithmetic: SIS_UTIL's `x²·pct²` is at most `1024²·2^32` in `u128`;
//! SIS_PROP products are `u128`, depths clamp to `u32`.

use crate::cpumask::CpuMask;
use crate::time::Nanos;
use crate::topology::SchedDomains;

use super::avg_idle::update_avg;
use super::capacity::task_fits_cpu;
use super::config::SisProp;
use super::env::smt_mask;
use super::snapshot::{CpuSnapshot, CpuView, IdleType, TaskSnapshot};

/// Per-LLC shared state (`sd_llc_shared` plus SIS_PROP's `avg_scan_cost`).
///
/// Linux keeps `avg_scan_cost` in each CPU's own LLC-level `sched_domain`;
/// fairway keeps one per LLC, shared by its CPUs (the SIS_PROP variants'
/// figures were measured that way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LlcShared {
    /// SIS_UTIL: CPUs to scan; 0 = the LLC is considered overloaded.
    pub nr_idle_scan: u32,
    /// SIS_PROP: average scan cost (ns; whole scan or per CPU by variant).
    pub avg_scan_cost: Nanos,
}

impl LlcShared {
    /// Initial state for an LLC of `weight` CPUs: scan everything.
    pub const fn new(weight: u32) -> Self {
        LlcShared { nr_idle_scan: weight, avg_scan_cost: 0 }
    }
}

/// Where placement reads each LLC's [`LlcShared`] by `sd_llc_id`, and where
/// SIS_PROP writes a scan's cost back: a table of values (tests, copies) or
/// the kernel's per-LLC words, read and written without a lock as Linux
/// reads and writes `sd_llc_shared` and `avg_scan_cost`, so a reader sees
/// each field as of some recent write. Placement reads an LLC's state once
/// and decides on that value.
pub trait LlcTable {
    /// LLC `llc_id`'s state (`None`: not known, the caller's default).
    fn get(&self, llc_id: usize) -> Option<LlcShared>;
    /// SIS_PROP's new `avg_scan_cost` of LLC `llc_id` (a plain store of a
    /// value computed from a read: a concurrent one may be lost, as in Linux).
    fn set_avg_scan_cost(&mut self, llc_id: usize, cost: Nanos);
}

impl core::fmt::Debug for dyn LlcTable + '_ {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("LlcTable")
    }
}

impl LlcTable for [LlcShared] {
    fn get(&self, llc_id: usize) -> Option<LlcShared> {
        <[LlcShared]>::get(self, llc_id).copied()
    }
    fn set_avg_scan_cost(&mut self, llc_id: usize, cost: Nanos) {
        if let Some(l) = self.get_mut(llc_id) {
            l.avg_scan_cost = cost;
        }
    }
}

impl LlcTable for alloc::vec::Vec<LlcShared> {
    fn get(&self, llc_id: usize) -> Option<LlcShared> {
        LlcTable::get(self.as_slice(), llc_id)
    }
    fn set_avg_scan_cost(&mut self, llc_id: usize, cost: Nanos) {
        self.as_mut_slice().set_avg_scan_cost(llc_id, cost)
    }
}

/// SIS_UTIL's `update_idle_cpu_scan`: how many CPUs a wakeup may scan,
/// from the LLC's summed util. 0 from about 85% average util (pct 117).
pub fn update_idle_cpu_scan(sum_util: u64, llc_weight: u32, imbalance_pct: u32) -> u32 {
    let w = llc_weight.max(1) as u128;
    let x = (sum_util as u128 / w).min(1024);
    let p = imbalance_pct as u128;
    let y = 1024 - (x * x * p * p / (10_000 * 1024)).min(1024);
    (y * w / 1024) as u32
}

/// Whether a balance attempt refreshes SIS_UTIL's `nr_idle_scan`, and to
/// what (fair.c: `update_idle_cpu_scan()`): only with SIS_UTIL on, never
/// from newidle balancing (`CPU_NEWLY_IDLE`: a CPU about to idle would
/// refresh it far too often), and only for the domain that spans the LLC
/// (`sd_weight == llc_weight`). `None`: leave it as it is.
pub fn idle_cpu_scan_refresh(sis_util: bool, idle: IdleType, sd_weight: u32, llc_weight: u32, sum_util: u64, imbalance_pct: u32) -> Option<u32> {
    if !sis_util || idle == IdleType::NewlyIdle || sd_weight != llc_weight {
        return None;
    }
    Some(update_idle_cpu_scan(sum_util, llc_weight, imbalance_pct))
}

/// Per-run-queue SIS_PROP state of the `Aged` variant (5.14).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeAvgIdle {
    /// Remaining predicted idle time (ns).
    pub wake_avg_idle: Nanos,
    /// Jiffies of the last refresh.
    pub wake_stamp: u64,
}

impl WakeAvgIdle {
    /// At the wakeup of this idle CPU (with `avg_idle` just updated).
    pub fn on_idle_wakeup(&mut self, avg_idle: Nanos, now_jiffies: u64) {
        self.wake_stamp = now_jiffies;
        self.wake_avg_idle = avg_idle / 2;
    }
}

/// SIS_PROP scan depth (`nr`, counted as Linux's 5.x loop does: at most
/// `nr - 1` CPUs are examined) for `variant`, from the waking CPU's
/// `avg_idle`, the LLC size and `avg_scan_cost`. The `Aged` variant first
/// halves `wake_avg_idle` once per jiffy elapsed. `PerCpuCost`'s loop (Peter
/// Zijlstra's RFC) examined up to its `nr` CPUs, one more than the others':
/// its depth here is that `nr` plus one. `None` for `Off`.
pub fn sis_prop_depth(variant: SisProp, avg_idle: Nanos, aged: &mut WakeAvgIdle, now_jiffies: u64, span_weight: u32, avg_scan_cost: Nanos) -> Option<u32> {
    let cost = avg_scan_cost as u128 + 1;
    let span = span_weight as u128;
    let prop = |idle: u128| {
        let span_avg = span * idle;
        if span_avg > 4 * cost { (span_avg / cost).min(u32::MAX as u128) as u32 } else { 4 }
    };
    match variant {
        SisProp::Off => None,
        SisProp::Legacy => Some(prop(avg_idle as u128 / 512)),
        SisProp::PerCpuCost => Some(prop(avg_idle as u128 / 512).saturating_add(1)),
        SisProp::Altscan => Some(((avg_idle as u128 / 512 / cost).min(u32::MAX as u128) as u32).max(4)),
        SisProp::Aged => {
            while aged.wake_stamp < now_jiffies && aged.wake_avg_idle > 0 {
                aged.wake_stamp += 1;
                aged.wake_avg_idle >>= 1;
            }
            Some(prop(aged.wake_avg_idle as u128))
        }
    }
}

/// Folds one scan into SIS_PROP's cost average. `scan_time` is the time the
/// kernel measured around the scan, `scanned` the CPUs examined, `found`
/// whether it found an idle CPU, `truncated` whether the depth ran out.
/// Returns whether the scan was folded in.
///
/// - `Legacy`, `Aged`: whole-scan cost, only for scans not cut short
///   (`Aged` also consumes `wake_avg_idle` by the scan time).
/// - `PerCpuCost`: every scan's time over its loop counter, which is the
///   number of CPUs examined.
/// - `Altscan`: every scan's time over its loop counter, which starts at 1
///   and counts the CPUs found busy: `scanned + 1` for a scan that found
///   none (truncated or not), `4 × scanned` for one that found an idle CPU
///   (Mel Gorman's `loops <<= 2`).
pub fn sis_prop_account(variant: SisProp, llc: &mut LlcShared, aged: &mut WakeAvgIdle, scan_time: Nanos, scanned: u32, found: bool, truncated: bool) -> bool {
    match variant {
        SisProp::Off => return false,
        SisProp::Legacy if !truncated => llc.avg_scan_cost = update_avg(llc.avg_scan_cost, scan_time),
        SisProp::PerCpuCost => llc.avg_scan_cost = update_avg(llc.avg_scan_cost, scan_time / scanned.max(1) as u64),
        SisProp::Altscan => llc.avg_scan_cost = update_avg(llc.avg_scan_cost, scan_time / altscan_loops(scanned, found)),
        SisProp::Aged if !truncated => {
            aged.wake_avg_idle -= aged.wake_avg_idle.min(scan_time);
            llc.avg_scan_cost = update_avg(llc.avg_scan_cost, scan_time);
        }
        // 5.x's `if (!--nr) return -1;` left before the accounting.
        SisProp::Legacy | SisProp::Aged => return false,
    }
    true
}

/// Mel Gorman's loop counter at the end of a scan that examined `scanned`
/// CPUs (at least 1): it starts at 1 and counts each CPU found busy; a
/// success shifts it left by 2.
pub fn altscan_loops(scanned: u32, found: bool) -> u64 {
    let s = u64::from(scanned.max(1));
    if found { 4 * s } else { s + 1 }
}

/// The result of a scan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanResult {
    /// The idle CPU found.
    pub cpu: Option<usize>,
    /// CPUs examined.
    pub scanned: u32,
    /// The depth limit ended the scan.
    pub truncated: bool,
    /// The scan looked for idle cores and found none (clear `has_idle_cores`).
    pub no_idle_core: bool,
    /// The scan looked for whole idle cores (`has_idle_core`): no depth
    /// limit, and SIS_PROP neither limits nor accounts it.
    pub idle_core: bool,
    /// The depth limit it ran with (`nr`; `None` = unlimited).
    pub nr: Option<u32>,
    /// The time of the scan loop alone (Linux's `cpu_clock` pair around
    /// `select_idle_cpu`'s loop), when a clock was given.
    pub time: Option<Nanos>,
}

/// The clock `select_idle_cpu` reads before and after its loop (the
/// kernel's `now_ns`; tests pass a fake).
#[derive(Clone, Copy)]
pub struct ScanClock<'a>(pub &'a dyn Fn() -> Nanos);

impl core::fmt::Debug for ScanClock<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("ScanClock")
    }
}

fn idle<C: CpuView + ?Sized>(cpus: &C, c: usize) -> bool {
    cpus.snap(c).is_some_and(|s| s.idle_for_wakeup())
}

/// Whether some core of `span` has all its CPUs idle (the kernel's
/// `has_idle_cores` hint, computed here from the snapshots).
pub fn has_idle_cores<C: CpuView + ?Sized>(sds: &SchedDomains, cpus: &C, span: &CpuMask) -> bool {
    span.iter().any(|c| smt_mask(sds, c).iter().all(|s| idle(cpus, s)))
}

/// `select_idle_cpu`: scan `span ∩ allowed` from `target + 1`, wrapping.
/// `nr` is the depth (`None` = unlimited); with `has_idle_core` whole idle
/// cores are looked for first and the depth is not charged. `clock`, when
/// given, is read right before and after the loop (`ScanResult::time`).
/// (Linux's `select_idle_cpu()` reads the same inputs from the domain and
/// the task; passed one by one here, so that every rule's caller shows them.)
#[allow(clippy::too_many_arguments)]
pub fn select_idle_cpu<C: CpuView + ?Sized>(sds: &SchedDomains, cpus: &C, span: &CpuMask, allowed: &CpuMask, target: usize, has_idle_core: bool, nr: Option<u32>, clock: Option<ScanClock<'_>>) -> ScanResult {
    let t0 = clock.map(|c| (c.0)());
    let mut r = scan_loop(sds, cpus, span, allowed, target, has_idle_core, nr);
    if let (Some(c), Some(t0)) = (clock, t0) {
        r.time = Some((c.0)().saturating_sub(t0));
    }
    r.idle_core = has_idle_core;
    r.nr = nr;
    r
}

fn scan_loop<C: CpuView + ?Sized>(sds: &SchedDomains, cpus: &C, span: &CpuMask, allowed: &CpuMask, target: usize, has_idle_core: bool, nr: Option<u32>) -> ScanResult {
    let mut left = span.intersection(allowed);
    let mut r = ScanResult::default();
    let mut idle_cpu = None;
    let mut nr = nr.unwrap_or(u32::MAX);
    // The order is fixed by the set at the start (a copy: `left` shrinks
    // as whole cores are ruled out).
    let start = left;
    for cpu in start.iter_wrap(target.saturating_add(1)) {
        if !left.contains(cpu) {
            continue;
        }
        if has_idle_core {
            let core = smt_mask(sds, cpu);
            r.scanned += 1;
            if core.iter().all(|s| idle(cpus, s)) {
                r.cpu = Some(cpu);
                return r;
            }
            if idle_cpu.is_none() {
                idle_cpu = core.intersection(&left).iter().find(|&s| idle(cpus, s));
            }
            left = left.difference(&core);
        } else {
            nr = nr.saturating_sub(1);
            if nr == 0 {
                r.truncated = true;
                return r;
            }
            r.scanned += 1;
            if idle(cpus, cpu) {
                idle_cpu = Some(cpu);
                break;
            }
        }
    }
    r.no_idle_core = has_idle_core;
    r.cpu = idle_cpu;
    r
}

/// Inputs of [`select_idle_sibling`].
#[derive(Debug)]
pub struct SisInput<'a, C: CpuView + ?Sized = [CpuSnapshot]> {
    /// Domains.
    pub sds: &'a SchedDomains,
    /// CPU snapshots.
    pub cpus: &'a C,
    /// The wakee.
    pub task: &'a TaskSnapshot,
    /// Its previous CPU.
    pub prev: usize,
    /// The target chosen so far (prev or the waker's CPU).
    pub target: usize,
    /// The waker is a per-CPU kthread running on `prev` (I/O completion).
    pub waker_pcpu_kthread_on_prev: bool,
    /// Scan depth for the target's LLC (`None` = unlimited); see
    /// `wake::scan_depth`.
    pub nr: Option<u32>,
    /// SIS_UTIL made the LLC "overloaded" (`nr_idle_scan == 0`): no scan.
    pub no_scan: bool,
    /// Capacities differ across the machine (select_idle_capacity).
    pub asym: bool,
    /// The clock that times the scan loop (`None`: not timed).
    pub clock: Option<ScanClock<'a>>,
}

impl<C: CpuView + ?Sized> Clone for SisInput<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C: CpuView + ?Sized> Copy for SisInput<'_, C> {}

/// Where the wakee goes and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SisResult {
    /// The CPU.
    pub cpu: usize,
    /// The scan, if one ran.
    pub scan: Option<ScanResult>,
    /// The task's new `recent_used_cpu` (prev), when step 4 updated it.
    pub recent_used_cpu: Option<usize>,
    /// The search reached select_idle_cpu, and SIS_UTIL refused the scan
    /// (`nr_idle_scan` 0).
    pub no_scan: bool,
}

/// `select_idle_sibling` (§4.4).
pub fn select_idle_sibling<C: CpuView + ?Sized>(i: &SisInput<'_, C>) -> SisResult {
    let (sds, cpus, p) = (i.sds, i.cpus, i.task);
    let done = |cpu, recent| SisResult { cpu, scan: None, recent_used_cpu: recent, no_scan: false };
    let fits = |c: usize| !i.asym || cpus.snap(c).is_some_and(|s| task_fits_cpu(p.util, s.cap()));
    if idle(cpus, i.target) && fits(i.target) {
        return done(i.target, None);
    }
    if i.prev != i.target && sds.cpus_share_cache(i.prev, i.target) && idle(cpus, i.prev) && fits(i.prev) {
        return done(i.prev, None);
    }
    if i.waker_pcpu_kthread_on_prev && cpus.snap(i.prev).is_some_and(|s| s.nr_running <= 1) {
        return done(i.prev, None);
    }
    let recent = p.recent_used_cpu;
    let new_recent = Some(i.prev);
    if let Some(r) = recent {
        if r != i.prev && r != i.target && sds.cpus_share_cache(r, i.target) && idle(cpus, r) && p.allows(r) && fits(r) {
            return done(r, new_recent);
        }
    }
    if i.asym {
        let span = sds.per_cpu(i.target).last().map_or(CpuMask::single(i.target), |d| d.span);
        let mut best: Option<(u64, usize)> = None;
        for c in span.intersection(&p.allowed).iter_wrap(i.target) {
            if let Some(s) = cpus.snap(c).filter(|s| s.idle_for_wakeup()) {
                if task_fits_cpu(p.util, s.cap()) {
                    return done(c, new_recent);
                }
                if best.is_none_or(|(cap, _)| s.cap() > cap) {
                    best = Some((s.cap(), c));
                }
            }
        }
        return done(best.map_or(i.target, |b| b.1), new_recent);
    }
    let Some(llc) = sds.sd_llc(i.target) else { return done(i.target, new_recent) };
    let smt = sds.per_cpu(i.target).first().is_some_and(|d| d.level == crate::topology::Level::Smt);
    let has_idle_core = smt && has_idle_cores(sds, cpus, &llc.span);
    if smt && !has_idle_core && sds.cpus_share_cache(i.prev, i.target) {
        let sib = smt_mask(sds, i.prev).intersection(&llc.span).intersection(&p.allowed);
        if let Some(c) = sib.iter().find(|&c| c != i.prev && idle(cpus, c)) {
            return done(c, new_recent);
        }
    }
    if i.no_scan {
        return SisResult { no_scan: true, ..done(i.target, new_recent) };
    }
    let nr = if has_idle_core { None } else { i.nr };
    let scan = select_idle_cpu(sds, cpus, &llc.span, &p.allowed, i.target, has_idle_core, nr, i.clock);
    SisResult { cpu: scan.cpu.unwrap_or(i.target), scan: Some(scan), recent_used_cpu: new_recent, no_scan: false }
}

/// What one CPU's wakeups did in `select_idle_cpu` (printed as `@fw sis`).
/// Counts only grow; `time_ns` adds the loop times measured with the
/// wakeup's clock (`ScanResult::time`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SisStats {
    /// select_idle_cpu scans run.
    pub scans: u64,
    /// CPUs examined by them, in all.
    pub scanned: u64,
    /// Scans that found an idle CPU.
    pub found: u64,
    /// Scans the depth limit cut short.
    pub truncated: u64,
    /// Scans for whole idle cores (no depth limit).
    pub idle_core_scans: u64,
    /// Scans that ran with a depth limit (`nr`), and the sum of those `nr`:
    /// `depth_sum / limited` is the mean depth (Linux's `nr`: at most
    /// `nr - 1` CPUs examined).
    pub limited: u64,
    pub depth_sum: u64,
    /// Wakeups where SIS_UTIL said the LLC is overloaded (`nr_idle_scan` 0): no scan.
    pub no_scan: u64,
    /// Scans folded into SIS_PROP's average cost.
    pub accounted: u64,
    /// Time spent in the scan loops (ns).
    pub time_ns: u64,
}

/// One `select_idle_cpu` scan under SIS_PROP with the inputs its depth was
/// computed from, so that a test can recompute the depth and the cost
/// average from the figures of the run itself (printed as `@fw sis_scan`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SisSample {
    /// The waking CPU's `avg_idle` as the depth read it (ns).
    pub avg_idle: Nanos,
    /// `Aged`: the waking CPU's `wake_avg_idle` after its per-jiffy aging,
    /// as the depth read it (ns); 0 for the other variants.
    pub wake_avg_idle: Nanos,
    /// `this_sd`'s `avg_scan_cost` as the depth read it (ns).
    pub avg_scan_cost: Nanos,
    /// The target LLC's `span_weight`.
    pub span: u32,
    /// The depth the scan ran with (`nr`).
    pub nr: u32,
    /// CPUs examined.
    pub scanned: u32,
    /// An idle CPU was found.
    pub found: bool,
    /// The depth ran out.
    pub truncated: bool,
    /// The time of the scan loop (ns).
    pub time: Nanos,
    /// SIS_PROP folded the scan into `avg_scan_cost`.
    pub accounted: bool,
}

/// The last [`SIS_LOG_LEN`] [`SisSample`]s of one CPU (a ring that
/// allocates only in [`SisLog::with_capacity`]), and how many there were.
#[derive(Clone, Debug, Default)]
pub struct SisLog {
    ring: alloc::vec::Vec<SisSample>,
    next: usize,
    /// Samples pushed since boot.
    pub total: u64,
}

/// Samples a [`SisLog`] keeps.
pub const SIS_LOG_LEN: usize = 64;

impl SisLog {
    /// A log that keeps `n` samples (0: keeps none, counts them).
    pub fn with_capacity(n: usize) -> Self {
        SisLog { ring: alloc::vec::Vec::with_capacity(n), next: 0, total: 0 }
    }

    /// Keeps `s`, dropping the oldest when full; never allocates.
    pub fn push(&mut self, s: SisSample) {
        self.total += 1;
        let cap = self.ring.capacity();
        if cap == 0 {
            return;
        }
        if self.ring.len() < cap {
            self.ring.push(s);
        } else {
            self.ring[self.next] = s;
        }
        self.next = (self.next + 1) % cap;
    }

    /// The kept samples, oldest first, each with its number since boot (0-based).
    pub fn iter(&self) -> impl Iterator<Item = (u64, &SisSample)> + '_ {
        let n = self.ring.len();
        let start = if n < self.ring.capacity() { 0 } else { self.next };
        let first = self.total - n as u64;
        (0..n).map(move |i| (first + i as u64, &self.ring[(start + i) % n]))
    }
}

impl SisStats {
    /// Counts one wakeup's `select_idle_sibling` outcome: its scan if one
    /// ran, or a scan SIS_UTIL refused (`no_scan`); `accounted` says whether
    /// SIS_PROP folded it into its cost.
    pub fn record(&mut self, scan: Option<&ScanResult>, no_scan: bool, accounted: bool) {
        let Some(s) = scan else {
            self.no_scan += no_scan as u64;
            return;
        };
        self.scans += 1;
        self.scanned += s.scanned as u64;
        self.found += s.cpu.is_some() as u64;
        self.truncated += s.truncated as u64;
        self.idle_core_scans += s.idle_core as u64;
        if let Some(nr) = s.nr {
            self.limited += 1;
            self.depth_sum += nr as u64;
        }
        self.accounted += accounted as u64;
        self.time_ns += s.time.unwrap_or(0);
    }
}
