//! Wakeup placement (reference §4.1–4.3, §4.7): `record_wakee`,
//! `wake_wide`, `wake_affine` (WA_IDLE, WA_WEIGHT, WA_BIAS) and
//! `select_task_rq_fair` for wakeups, with the wake-balance modes of
//! `config::WakeBalance`.
//!
//! # Contract
//!
//! At `try_to_wake_up`, holding the wakee's `pi_lock` but no run-queue lock,
//! the kernel calls `waker.record_wakee(..)` on the current task's
//! [`WakeeState`], then [`select_task_rq_fair`] with snapshots, and enqueues
//! the wakee on `WakeDecision::cpu` (locking that run-queue). It stores
//! `recent_used_cpu` back into the task, adds `ttwu_*` schedstat counts from
//! the decision ([`count_wakeup`]), and, with SIS_PROP, passes a clock
//! (`WakeCtx::clock`) that times select_idle_cpu's loop and feeds the scan to
//! [`account_scan`]. The chosen CPU is always allowed for the
//! task when any allowed CPU is known; otherwise `prev` is returned.
//!
//! Fork and exec use `fork::sched_balance_find_dst_cpu`.

use crate::cpumask::CpuMask;
use crate::features::Feature;
use crate::topology::{Level, SchedDomain, SchedDomains, SD_WAKE_AFFINE};

use super::config::{BalanceConfig, SisProp, WakeBalance};
use super::domain_stats::DomainStats;
use super::env::smt_mask;
use super::sis::{select_idle_sibling, sis_prop_account, sis_prop_depth, LlcShared, ScanClock, SisInput, SisResult, WakeAvgIdle};
use super::snapshot::{CpuSnapshot, CpuView, TaskSnapshot};

/// A task's waker-side wakeup history (`wakee_flips`, `last_wakee`).
///
/// Invariant: `wakee_flips` only grows by 1 per wakeup and halves at most
/// once per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WakeeState {
    /// Recent switches of wakee, decayed.
    pub wakee_flips: u32,
    /// Jiffies of the last decay.
    pub wakee_flip_decay_ts: u64,
    /// The last task woken.
    pub last_wakee: Option<u64>,
}

impl WakeeState {
    /// `record_wakee`, run by the waker: halve the flips once a second has
    /// passed, and count a flip when the wakee differs from the last one.
    pub fn record_wakee(&mut self, wakee: u64, now_jiffies: u64, hz: u32) {
        if now_jiffies > self.wakee_flip_decay_ts.saturating_add(hz as u64) {
            self.wakee_flips >>= 1;
            self.wakee_flip_decay_ts = now_jiffies;
        }
        if self.last_wakee != Some(wakee) {
            self.last_wakee = Some(wakee);
            self.wakee_flips = self.wakee_flips.saturating_add(1);
        }
    }
}

/// `wake_wide`: a 1:N waker/wakee pattern wider than the LLC.
pub fn wake_wide(waker_flips: u32, wakee_flips: u32, llc_size: u32) -> bool {
    let (master, slave) = (waker_flips.max(wakee_flips), waker_flips.min(wakee_flips));
    let f = llc_size as u64;
    slave as u64 >= f && master as u64 >= slave as u64 * f
}

/// `wake_affine_idle`: `Some(this)`/`Some(prev)` from idleness, or `None`.
pub fn wake_affine_idle(sds: &SchedDomains, this: &CpuSnapshot, prev: &CpuSnapshot, sync: bool) -> Option<usize> {
    if this.available_idle() && sds.cpus_share_cache(this.cpu, prev.cpu) {
        return Some(if prev.available_idle() { prev.cpu } else { this.cpu });
    }
    if sync && this.nr_running.saturating_sub(this.nr_delayed) == 1 {
        return Some(this.cpu);
    }
    if prev.available_idle() {
        return Some(prev.cpu);
    }
    None
}

/// `wake_affine_weight`: `Some(this)` if this CPU's load with the wakee is
/// below prev's without it (with the WA_BIAS margin). `curr_load` is the
/// waker's `task_h_load` (used for sync wakeups).
pub fn wake_affine_weight(sd: &SchedDomain, p: &TaskSnapshot, this: &CpuSnapshot, prev: &CpuSnapshot, curr_load: u64, sync: bool, bias: bool) -> Option<usize> {
    let mut this_eff = this.load_avg as i128;
    if sync {
        if curr_load as i128 > this_eff {
            return Some(this.cpu);
        }
        this_eff -= curr_load as i128;
    }
    let tl = p.load_avg as i128;
    let (bt, bp) = if bias { (100i128, 100 + (sd.imbalance_pct as i128 - 100) / 2) } else { (1, 1) };
    let this_eff = (this_eff + tl) * bt * prev.cap() as i128;
    let mut prev_eff = (prev.load_avg as i128 - tl) * bp * this.cap() as i128;
    if sync {
        prev_eff += 1;
    }
    (this_eff < prev_eff).then_some(this.cpu)
}

/// `wake_affine`: `this` or `prev`.
#[allow(clippy::too_many_arguments)]
pub fn wake_affine(sds: &SchedDomains, sd: &SchedDomain, p: &TaskSnapshot, this: &CpuSnapshot, prev: &CpuSnapshot, curr_load: u64, sync: bool, cfg: &BalanceConfig) -> usize {
    let f = cfg.features;
    let mut t = if f.has(Feature::WaIdle) { wake_affine_idle(sds, this, prev, sync) } else { None };
    if t.is_none() && f.has(Feature::WaWeight) {
        t = wake_affine_weight(sd, p, this, prev, curr_load, sync, f.has(Feature::WaBias));
    }
    if t == Some(this.cpu) { this.cpu } else { prev.cpu }
}

/// How the CPU was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WakePath {
    /// select_idle_sibling after wake_affine / on prev.
    Fast,
    /// WakeBalance::Off, or IdleOnly with no idle CPU near the waker (then
    /// prev or its idle allowed SMT sibling: `wake_idle_2005`).
    Prev,
    /// No allowed CPU known: prev unchanged.
    Fallback,
}

/// A wakeup placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeDecision {
    /// Where to enqueue the wakee.
    pub cpu: usize,
    /// How.
    pub path: WakePath,
    /// wake_affine chose the waker's CPU over prev.
    pub affine: bool,
    /// The idle-sibling search details.
    pub sis: Option<SisResult>,
    /// The 2005 rules' `SD_WAKE_BALANCE` moved the wakee to the waking CPU
    /// (passive balancing; Linux's `ttwu_move_balance`).
    pub passive: bool,
}

/// The inputs of a wakeup.
#[derive(Debug)]
pub struct WakeCtx<'a, C: CpuView + ?Sized = [CpuSnapshot]> {
    /// Domains.
    pub sds: &'a SchedDomains,
    /// Snapshots (a slice, or the kernel's live per-CPU values: [`CpuView`]).
    pub cpus: &'a C,
    /// The wakee (its `prev_cpu`, affinity, `wakee_flips`, recent CPU).
    pub task: &'a TaskSnapshot,
    /// The waking CPU.
    pub this_cpu: usize,
    /// The waker's `wakee_flips` (after `record_wakee`).
    pub waker_flips: u32,
    /// The waker's `task_h_load`.
    pub waker_load: u64,
    /// WF_SYNC and the waker is not exiting.
    pub sync: bool,
    /// The waker is a per-CPU kthread running on `prev`.
    pub waker_pcpu_kthread: bool,
    /// Per-LLC shared state, indexed by `sd_llc_id`.
    pub llc: &'a [LlcShared],
    /// Jiffies now (SIS_PROP aging).
    pub now_jiffies: u64,
    /// Configuration.
    pub cfg: &'a BalanceConfig,
    /// The clock that times select_idle_cpu's loop (`None`: untimed).
    pub clock: Option<ScanClock<'a>>,
}

impl<C: CpuView + ?Sized> Clone for WakeCtx<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<C: CpuView + ?Sized> Copy for WakeCtx<'_, C> {}

/// The 2005 `wake_idle(cpu, p)`, which the 2005 `try_to_wake_up` ran on
/// every path, the one that kept `prev` included: `cpu` itself if idle, else
/// the first idle CPU of its SMT domain (the level with `SD_WAKE_IDLE`) among
/// the task's allowed CPUs, else `cpu`.
pub fn wake_idle_2005<C: CpuView + ?Sized>(sds: &SchedDomains, cpus: &C, p: &TaskSnapshot, cpu: usize) -> usize {
    let idle = |c: usize| cpus.snap(c).is_some_and(|s| s.available_idle());
    if idle(cpu) {
        return cpu;
    }
    smt_mask(sds, cpu).intersection(&p.allowed).iter().find(|&c| idle(c)).unwrap_or(cpu)
}

/// The scan depth for `target`'s LLC: SIS_UTIL's `nr_idle_scan + 1`
/// (overriding SIS_PROP, as in 6.0–6.6 when both were on), else SIS_PROP's
/// depth from the waking CPU, else unlimited. Returns `(nr, no_scan)`.
///
/// SIS_PROP's depth is computed (and `Aged` ages `wake_avg_idle`) even when
/// SIS_UTIL overrides it, as 6.0–6.6's `select_idle_cpu` did. Its cost is
/// `this_sd`'s, the waking CPU's LLC, and its span the target's LLC
/// (`sd->span_weight`). Linux skips all of it when `has_idle_core`: the
/// caller passes `nr` through only when there is no idle core.
pub fn scan_depth<C: CpuView + ?Sized>(ctx: &WakeCtx<'_, C>, target: usize, aged: &mut WakeAvgIdle) -> (Option<u32>, bool) {
    let sds = ctx.sds;
    let shared = ctx.llc.get(sds.sd_llc_id(target)).copied().unwrap_or(LlcShared::new(sds.sd_llc_size(target)));
    let prop = if ctx.cfg.sis_prop == SisProp::Off {
        None
    } else {
        let this_shared = ctx.llc.get(sds.sd_llc_id(ctx.this_cpu)).copied().unwrap_or(shared);
        let avg_idle = ctx.cpus.snap(ctx.this_cpu).map_or(0, |s| s.avg_idle);
        sis_prop_depth(ctx.cfg.sis_prop, avg_idle, aged, ctx.now_jiffies, sds.sd_llc_size(target), this_shared.avg_scan_cost)
    };
    if ctx.cfg.features.has(Feature::SisUtil) {
        let nr = shared.nr_idle_scan.saturating_add(1);
        return (Some(nr), nr == 1);
    }
    (prop, false)
}

/// SIS_PROP's accounting at the end of `select_idle_cpu` (5.x–6.6): a scan
/// that ran with SIS_PROP on and no idle core (`!has_idle_core`) folds the
/// time of its loop into the average cost of `this_sd`, the waking CPU's
/// LLC, the same one its depth was read from (and `Aged` consumes
/// `wake_avg_idle`); which scans count is the variant's
/// ([`sis_prop_account`]). Returns whether a scan was accounted.
pub fn account_scan(cfg: &BalanceConfig, sds: &SchedDomains, this_cpu: usize, d: &WakeDecision, llc: &mut [LlcShared], aged: &mut WakeAvgIdle) -> bool {
    if cfg.sis_prop == SisProp::Off {
        return false;
    }
    let Some(scan) = d.sis.and_then(|s| s.scan) else { return false };
    let Some(time) = scan.time.filter(|_| !scan.idle_core) else { return false };
    let Some(l) = llc.get_mut(sds.sd_llc_id(this_cpu)) else { return false };
    sis_prop_account(cfg.sis_prop, l, aged, time, scan.scanned, scan.cpu.is_some(), scan.truncated)
}

/// `select_task_rq_fair` for a wakeup. `aged` is the waking CPU's
/// SIS_PROP `Aged` state.
pub fn select_task_rq_fair<C: CpuView + ?Sized>(ctx: &WakeCtx<'_, C>, aged: &mut WakeAvgIdle) -> WakeDecision {
    let (sds, p) = (ctx.sds, ctx.task);
    let prev = p.prev_cpu;
    let this = ctx.this_cpu;
    let fallback = |cpu| WakeDecision { cpu, path: WakePath::Fallback, affine: false, sis: None, passive: false };
    let known = |c: usize| ctx.cpus.snap(c).is_some();
    if !p.allows(prev) || !known(prev) {
        // select_fallback_rq: the first allowed CPU we know of.
        let c = ctx.cpus.first_allowed(&p.allowed).unwrap_or(prev);
        return fallback(c);
    }
    let at_prev = WakeDecision { cpu: prev, path: WakePath::Prev, affine: false, sis: None, passive: false };
    match ctx.cfg.wake_balance {
        WakeBalance::Off => return at_prev,
        wb if wb.is_2005() => return try_to_wake_up_2005(ctx, wb),
        WakeBalance::IdleOnly => {
            let near_idle = smt_mask(sds, this).iter().any(|c| ctx.cpus.snap(c).is_some_and(|s| s.available_idle()));
            if !near_idle {
                return WakeDecision { cpu: wake_idle_2005(sds, ctx.cpus, p, prev), ..at_prev };
            }
        }
        _ => {}
    }
    let want_affine = ctx.cfg.wake_affine
        && p.allows(this)
        && known(this)
        && !wake_wide(ctx.waker_flips, p.wakee_flips, sds.sd_llc_size(this));
    let mut target = prev;
    let mut affine = false;
    if want_affine {
        if let Some(sd) = sds.per_cpu(this).iter().find(|sd| sd.flags & SD_WAKE_AFFINE != 0 && sd.span.contains(prev)) {
            if this != prev {
                if let (Some(t), Some(pv)) = (ctx.cpus.snap(this), ctx.cpus.snap(prev)) {
                    target = wake_affine(sds, sd, p, &t, &pv, ctx.waker_load, ctx.sync, ctx.cfg);
                    affine = target == this;
                }
            }
        }
    }
    let (nr, no_scan) = scan_depth(ctx, target, aged);
    let asym = ctx.cpus.capacities_differ();
    let sis = select_idle_sibling(&SisInput {
        sds,
        cpus: ctx.cpus,
        task: p,
        prev,
        target,
        waker_pcpu_kthread_on_prev: ctx.waker_pcpu_kthread && this == prev,
        nr,
        no_scan,
        asym,
        clock: ctx.clock,
    });
    let cpu = if p.allows(sis.cpu) { sis.cpu } else { target };
    WakeDecision { cpu, path: WakePath::Fast, affine, sis: Some(sis), passive: false }
}

/// A domain's 2005 wakeup settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wake2005 {
    /// `SD_WAKE_AFFINE`.
    pub affine: bool,
    /// `SD_WAKE_BALANCE` (passive balancing).
    pub balance: bool,
    /// `SD_WAKE_IDLE` (`wake_idle` searches it).
    pub idle: bool,
    /// The domain's `imbalance_pct` then.
    pub imbalance_pct: u64,
}

/// 2.6.12's generic topology (`SD_SIBLING_INIT`, `SD_CPU_INIT`,
/// `SD_NODE_INIT`): SMT siblings AFFINE and IDLE at 110%; the CPU domain
/// (here MC and PKG) AFFINE, IDLE and BALANCE at 125%; NUMA levels BALANCE
/// at 125%. Ken Chen's change takes AFFINE and BALANCE off the CPU domain.
pub fn wake_2005(level: Level, variant: WakeBalance) -> Wake2005 {
    match level {
        Level::Smt => Wake2005 { affine: true, balance: false, idle: true, imbalance_pct: 110 },
        Level::Mc | Level::Pkg => {
            let on = variant != WakeBalance::V2005CpuOff;
            Wake2005 { affine: on, balance: on, idle: true, imbalance_pct: 125 }
        }
        Level::Node | Level::Numa(_) => Wake2005 { affine: false, balance: true, idle: false, imbalance_pct: 125 },
    }
}

/// 2.6.12's `wake_idle(cpu, p)`: `cpu` if idle, else the first idle allowed
/// CPU of each domain above it while the domains have `SD_WAKE_IDLE`, else
/// `cpu`.
pub fn wake_idle_2005_walk<C: CpuView + ?Sized>(sds: &SchedDomains, cpus: &C, p: &TaskSnapshot, cpu: usize, variant: WakeBalance) -> usize {
    let idle = |c: usize| cpus.snap(c).is_some_and(|s| s.available_idle());
    if idle(cpu) {
        return cpu;
    }
    for sd in sds.per_cpu(cpu) {
        if !wake_2005(sd.level, variant).idle {
            break;
        }
        if let Some(c) = sd.span.intersection(&p.allowed).iter().find(|&c| idle(c)) {
            return c;
        }
    }
    cpu
}

/// The O(1) scheduler's load of a CPU for the 2005 rules: its runnable
/// tasks × `SCHED_LOAD_SCALE`.
fn load_2005<C: CpuView + ?Sized>(cpus: &C, cpu: usize) -> u64 {
    cpus.snap(cpu).map_or(0, |s| u64::from(s.nr_running.saturating_sub(s.nr_delayed)) * 1024)
}

/// 2.6.12's `try_to_wake_up` placement (with Ken Chen's and Ingo Molnar's
/// changes by `variant`), from the thread's quoted code: the idle gate of
/// patch #3 (the waking CPU or an allowed SMT sibling idle), a wakeup on
/// the waking CPU itself, the lowest domain of the
/// waking CPU holding `prev`, `imbalance = 100 + (imbalance_pct - 100) / 2`,
/// `SD_WAKE_AFFINE` (`tl = this_load`, less one task if sync: move if `tl <=
/// load && tl + load <= 1024`, or `100 (tl + 1024) <= imbalance · load`), then
/// `SD_WAKE_BALANCE` (move if `imbalance · this_load <= 100 · load`), and
/// `wake_idle` on the CPU chosen. `load` is `prev`'s.
// Cold and out of line: only the 2005 variants come here, and today's
// wakeup path keeps the inlining it had without it.
#[cold]
#[inline(never)]
pub fn try_to_wake_up_2005<C: CpuView + ?Sized>(ctx: &WakeCtx<'_, C>, variant: WakeBalance) -> WakeDecision {
    let (sds, p, prev, this) = (ctx.sds, ctx.task, ctx.task.prev_cpu, ctx.this_cpu);
    let wake_idle = |cpu| wake_idle_2005_walk(sds, ctx.cpus, p, cpu, variant);
    let stay = WakeDecision { cpu: wake_idle(prev), path: WakePath::Prev, affine: false, sis: None, passive: false };
    if variant == WakeBalance::V2005None || this == prev || !p.allows(this) || ctx.cpus.snap(this).is_none() {
        return stay;
    }
    // Patch #3's gate: "this CPU (or any SMT sibling) is idle" (its wake_idle()
    // searched the siblings only: 2.6.13's CPU domain had no SD_WAKE_IDLE).
    let idle = |c: usize| ctx.cpus.snap(c).is_some_and(|s| s.available_idle());
    if variant == WakeBalance::V2005IdleGate && !smt_mask(sds, this).intersection(&p.allowed).iter().chain([this]).any(idle) {
        return stay;
    }
    let Some(sd) = sds.per_cpu(this).iter().find(|sd| sd.span.contains(prev)) else { return stay };
    let f = wake_2005(sd.level, variant);
    let imbalance = 100 + (f.imbalance_pct - 100) / 2;
    let (load, this_load) = (load_2005(ctx.cpus, prev), load_2005(ctx.cpus, this));
    let moved = |affine, passive| WakeDecision { cpu: wake_idle(this), path: WakePath::Fast, affine, sis: None, passive };
    if f.affine {
        let tl = if ctx.sync { this_load.saturating_sub(1024) } else { this_load };
        if (tl <= load && tl + load <= 1024) || 100 * (tl + 1024) <= imbalance * load {
            return moved(true, false);
        }
    }
    if f.balance && imbalance * this_load <= 100 * load {
        return moved(false, true);
    }
    stay
}

/// Adds a wakeup's wake_affine outcome to the waking CPU's schedstat: fair.c:
/// wake_affine() counts `ttwu_move_affine` in the affine domain (the lowest
/// domain of `this_cpu` spanning `prev`) when it chose `this_cpu`, and the
/// 2005 rules' passive balancing counts `ttwu_move_balance` there.
/// `ttwu_wake_remote` is not counted here: see [`wake_remote_domain`].
/// `stats[i]` belongs to `sds.per_cpu(this_cpu)[i]`.
pub fn count_wakeup<S: AsMut<DomainStats>>(sds: &SchedDomains, this_cpu: usize, prev: usize, d: &WakeDecision, stats: &mut [S]) {
    if this_cpu == prev || !(d.affine || d.passive) {
        return;
    }
    let idx = sds.per_cpu(this_cpu).iter().position(|sd| sd.span.contains(prev));
    if let Some(s) = idx.and_then(|i| stats.get_mut(i)).map(AsMut::as_mut) {
        if d.affine {
            s.ttwu_move_affine += 1;
        } else {
            s.ttwu_move_balance += 1;
        }
    }
}

/// Where core.c: ttwu_stat() counts a wakeup's `ttwu_wake_remote`: the index
/// of the waking CPU's lowest domain that spans `cpu`, the CPU the wakee was
/// put on (not its previous CPU), for every wakeup whatever its path (a
/// still-queued wakee, a task allowed on one CPU); `None` for a wakeup onto
/// the waking CPU itself.
pub fn wake_remote_domain(sds: &SchedDomains, this_cpu: usize, cpu: usize) -> Option<usize> {
    if this_cpu == cpu {
        return None;
    }
    sds.per_cpu(this_cpu).iter().position(|sd| sd.span.contains(cpu))
}

/// CPUs that share the LLC with `cpu` (its `sd_llc` span, or `{cpu}`).
pub fn llc_span(sds: &SchedDomains, cpu: usize) -> CpuMask {
    sds.sd_llc(cpu).map_or(CpuMask::single(cpu), |d| d.span)
}
