//! When to balance (reference §5.2, §5.4): intervals with the busy factor,
//! `max_load_balance_interval`, `should_we_balance`, and the interval /
//! failure bookkeeping that ends `sched_balance_rq` (§5.3).
//!
//! # Contract
//!
//! The kernel keeps one [`SdState`] per (CPU, domain level), owned by that
//! CPU and touched only from its own balance softirq / newidle path (no lock;
//! Linux's `sd` fields are likewise per-CPU). Times here are jiffies for the
//! periodic machinery (as Linux) and ns for newidle costs.

use crate::topology::{SchedDomain, SD_SHARE_CPUCAPACITY};

use super::domain_stats::DomainStats;
use super::env::{is_core_idle, smt_mask, LbEnv};
use super::imbalance::MigrationType;
use super::newidle::NewidleDomainState;
use super::snapshot::{cpu_snap, CpuSnapshot, IdleType};

/// Interval cap after all-pinned failures (`MAX_PINNED_INTERVAL`, ms).
pub const MAX_PINNED_INTERVAL_MS: u32 = 512;

/// Per-CPU, per-domain balancing state.
///
/// Invariant: `min_interval_ms <= balance_interval_ms` after the first
/// [`finish_balance`]; `balance_interval_ms` never exceeds
/// `max(max_interval_ms, MAX_PINNED_INTERVAL_MS)` times 2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SdState {
    /// Consecutive failed periodic balances (`sd->nr_balance_failed`).
    pub nr_balance_failed: u32,
    /// Current interval (ms), doubled while balanced (`sd->balance_interval`).
    pub balance_interval_ms: u32,
    /// Jiffies of the last periodic balance.
    pub last_balance: u64,
    /// Newidle cost and NI_RANDOM state.
    pub newidle: NewidleDomainState,
    /// schedstat counters.
    pub stats: DomainStats,
}

impl AsMut<DomainStats> for SdState {
    fn as_mut(&mut self) -> &mut DomainStats {
        &mut self.stats
    }
}

impl SdState {
    /// Initial state for `sd`.
    pub fn new(sd: &SchedDomain) -> Self {
        SdState {
            nr_balance_failed: 0,
            balance_interval_ms: sd.balance_interval_ms,
            last_balance: 0,
            newidle: NewidleDomainState::default(),
            stats: DomainStats::default(),
        }
    }
}

/// `max_load_balance_interval`: `HZ · online / 10` jiffies (at least 1).
pub fn max_load_balance_interval(hz: u32, nr_online: u32) -> u64 {
    (hz as u64 * nr_online as u64 / 10).max(1)
}

/// `msecs_to_jiffies`, rounding up.
pub fn ms_to_jiffies(ms: u64, hz: u32) -> u64 {
    (ms as u128 * hz as u128).div_ceil(1000).min(u64::MAX as u128) as u64
}

/// `get_sd_balance_interval`: the interval (jiffies), ×`busy_factor` and
/// −1 when the CPU is busy, clamped to `[1, max_interval]`.
pub fn get_sd_balance_interval(sd: &SchedDomain, st: &SdState, busy: bool, hz: u32, max_interval: u64) -> u64 {
    let mut ms = st.balance_interval_ms as u64;
    if busy {
        ms = ms.saturating_mul(sd.busy_factor.max(1) as u64);
    }
    let mut j = ms_to_jiffies(ms, hz);
    if busy {
        j = j.saturating_sub(1);
    }
    j.clamp(1, max_interval.max(1))
}

/// Whether the periodic balance of this domain is due at `now` (jiffies).
pub fn balance_due(st: &SdState, interval: u64, now: u64) -> bool {
    now >= st.last_balance.saturating_add(interval)
}

/// `should_we_balance`: only one CPU per group balances periodically — the
/// first idle CPU of a fully idle core (any idle CPU in an SMT domain), else
/// the first idle CPU whose core is busy, else the group's balance CPU.
/// Newidle: yes unless dst already has work.
pub fn should_we_balance(env: &LbEnv<'_>, cpus: &[CpuSnapshot]) -> bool {
    if !env.cpus.contains(env.dst_cpu) {
        return false;
    }
    let Some(sd) = env.sd() else { return false };
    if env.idle == IdleType::NewlyIdle {
        return cpu_snap(cpus, env.dst_cpu).is_some_and(|s| s.nr_running == 0 && !s.ttwu_pending);
    }
    let Some(group) = sd.groups.iter().find(|g| g.span.contains(env.dst_cpu)) else { return false };
    let mut candidates = group.span.intersection(&env.cpus);
    let mut idle_smt = None;
    while let Some(cpu) = candidates.first() {
        candidates.clear(cpu);
        if !cpu_snap(cpus, cpu).is_some_and(|s| s.available_idle()) {
            continue;
        }
        if sd.flags & SD_SHARE_CPUCAPACITY == 0 && !is_core_idle(env.sds, cpus, cpu) {
            idle_smt.get_or_insert(cpu);
            candidates = candidates.difference(&smt_mask(env.sds, cpu));
            continue;
        }
        return cpu == env.dst_cpu;
    }
    match idle_smt {
        Some(c) => c == env.dst_cpu,
        None => group.balance_cpu == env.dst_cpu,
    }
}

/// How one `sched_balance_rq` attempt ended, for [`finish_balance`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RqOutcome {
    /// Nothing to do (including "not the balancing CPU").
    Balanced,
    /// Every task of the busiest CPU was pinned away from dst (and no other
    /// source remained).
    AllPinned,
    /// Tasks were moved.
    Moved(u32),
    /// A busiest CPU was found but nothing moved; `active` tells whether an
    /// active balance was started (or was needed but impossible: `None`).
    Failed {
        /// Migration type of the attempt.
        kind: MigrationType,
        /// `Some(true)`: stopper started; `Some(false)`: not needed;
        /// `None`: needed but the running task may not run on dst.
        active: Option<bool>,
    },
}

/// The end of `sched_balance_rq`: failure count and interval back-off.
/// `kind` is the migration type when known (misfit does not back off).
pub fn finish_balance(st: &mut SdState, sd: &SchedDomain, idle: IdleType, kind: Option<MigrationType>, outcome: RqOutcome) {
    let backoff = |st: &mut SdState, all_pinned: bool| {
        if idle == IdleType::NewlyIdle || kind == Some(MigrationType::Misfit) {
            return;
        }
        if (all_pinned && st.balance_interval_ms < MAX_PINNED_INTERVAL_MS)
            || st.balance_interval_ms < sd.max_interval_ms
        {
            st.balance_interval_ms = st.balance_interval_ms.saturating_mul(2).max(1);
        }
    };
    match outcome {
        RqOutcome::Balanced => {
            st.nr_balance_failed = 0;
            backoff(st, false);
        }
        RqOutcome::AllPinned => {
            st.nr_balance_failed = 0;
            backoff(st, true);
        }
        RqOutcome::Moved(_) => {
            st.nr_balance_failed = 0;
            st.balance_interval_ms = sd.min_interval_ms;
        }
        RqOutcome::Failed { kind, active } => {
            if idle != IdleType::NewlyIdle && kind != MigrationType::Misfit {
                st.nr_balance_failed = st.nr_balance_failed.saturating_add(1);
            }
            match active {
                None => backoff(st, false),
                Some(_) => st.balance_interval_ms = sd.min_interval_ms,
            }
        }
    }
}

/// Increments `nr_balance_failed` as the failed attempt will (used to ask
/// `need_active_balance` before calling [`finish_balance`]).
pub fn failed_count_after(st: &SdState, idle: IdleType, kind: MigrationType) -> u32 {
    if idle != IdleType::NewlyIdle && kind != MigrationType::Misfit {
        st.nr_balance_failed.saturating_add(1)
    } else {
        st.nr_balance_failed
    }
}
