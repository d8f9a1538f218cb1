//! NOHZ idle balancing decisions (reference §5.10, §3.3): the idle CPUs
//! with a stopped tick as pure data, which idle CPU to kick, when a busy
//! CPU kicks, and the newidle refresh request.
//!
//! # Contract
//!
//! One global [`NohzState`], updated with atomics or under a small lock in
//! the kernel (here: `&mut`). A CPU stopping its tick calls
//! [`NohzState::enter_idle`]; the tick of a busy CPU calls
//! [`nohz_balancer_kick`] (its own snapshot, no lock) and, for non-zero flags,
//! [`NohzState::find_new_ilb`], then sends that CPU the flags by IPI. The
//! kicked CPU balances on behalf of [`NohzState::ilb_order`] and calls
//! [`NohzState::after_idle_balance`]. Times are jiffies.

use crate::cpumask::CpuMask;
use crate::topology::SchedDomains;

use super::avg_idle::SYSCTL_SCHED_MIGRATION_COST;
use super::capacity::check_cpu_capacity;
use super::snapshot::CpuSnapshot;

/// Balance on behalf of the idle CPUs.
pub const NOHZ_BALANCE_KICK: u32 = 1;
/// Refresh their blocked load.
pub const NOHZ_STATS_KICK: u32 = 2;
/// Recompute `next_balance`.
pub const NOHZ_NEXT_KICK: u32 = 4;
/// Newidle: refresh blocked load before this CPU idles.
pub const NOHZ_NEWILB_KICK: u32 = 8;

/// Blocked-load refresh period (32 ms) in jiffies for `hz`.
pub fn blocked_period(hz: u32) -> u64 {
    (32 * hz as u64).div_ceil(1000).max(1)
}

/// The machine's NOHZ state (`struct nohz`).
///
/// Invariant: `idle_cpus` holds exactly the CPUs between `enter_idle` and
/// `exit_idle`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NohzState {
    /// CPUs idle with their tick stopped.
    pub idle_cpus: CpuMask,
    /// Some of them carry blocked load to decay.
    pub has_blocked: bool,
    /// Earliest `next_balance` of the idle CPUs.
    pub next_balance: u64,
    /// When blocked load should next be refreshed.
    pub next_blocked: u64,
    /// `next_balance` must be recomputed.
    pub needs_update: bool,
}

impl NohzState {
    /// `nohz_balance_enter_idle`.
    pub fn enter_idle(&mut self, cpu: usize, now: u64, hz: u32) {
        if !self.idle_cpus.contains(cpu) {
            self.idle_cpus.set(cpu);
            self.needs_update = true;
        }
        if !self.has_blocked {
            self.next_blocked = now.saturating_add(blocked_period(hz));
        }
        self.has_blocked = true;
    }

    /// `nohz_balance_exit_idle` (the CPU's tick restarted).
    pub fn exit_idle(&mut self, cpu: usize) {
        self.idle_cpus.clear(cpu);
    }

    /// `find_new_ilb`: the first tick-stopped housekeeping CPU other than
    /// `this` that is really idle. `available_idle` is asked of the
    /// candidates in order and of no CPU after the first that is, so a
    /// caller reads only those CPUs' state (fair.c: find_new_ilb() looks at
    /// `idle_cpu()` of each candidate until one is).
    pub fn find_new_ilb(&self, this: usize, housekeeping: &CpuMask, mut available_idle: impl FnMut(usize) -> bool) -> Option<usize> {
        self.idle_cpus.intersection(housekeeping).iter().find(|&c| c != this && available_idle(c))
    }

    /// The CPUs the idle balancer `ilb` works for: the others wrapping from
    /// `ilb + 1`, then `ilb` itself.
    pub fn ilb_order(&self, ilb: usize) -> impl Iterator<Item = usize> + '_ {
        let others = self.idle_cpus.iter_wrap(ilb.saturating_add(1)).filter(move |&c| c != ilb);
        others.chain(self.idle_cpus.contains(ilb).then_some(ilb))
    }

    /// After an idle balance that refreshed every blocked load (`STATS`
    /// done and none left): schedule the next refresh; `next_balance` is the
    /// earliest of the balanced CPUs'.
    pub fn after_idle_balance(&mut self, now: u64, hz: u32, all_blocked_done: bool, next_balance: u64) {
        self.next_blocked = now.saturating_add(blocked_period(hz));
        if all_blocked_done {
            self.has_blocked = false;
        }
        self.next_balance = next_balance;
        self.needs_update = false;
    }
}

/// `nohz_balancer_kick`: the flags a busy CPU's tick asks an idle CPU to
/// act on (0 = no kick). `this` is the ticking CPU's snapshot;
/// `asym_cpucapacity` says whether CPU capacities differ across the
/// machine (Linux's `sd_asym_cpucapacity`, fixed when the domains are
/// built). The rules read no other CPU's state, as fair.c's do: a busy
/// tick that read every CPU's statistics would cost a big machine more
/// than its tick.
pub fn nohz_balancer_kick(n: &NohzState, sds: &SchedDomains, asym_cpucapacity: bool, this: &CpuSnapshot, now: u64) -> u32 {
    if this.available_idle() || n.idle_cpus.difference(&CpuMask::single(this.cpu)).is_empty() {
        return 0;
    }
    let mut flags = 0;
    if n.has_blocked && now > n.next_blocked {
        flags = NOHZ_STATS_KICK;
    }
    if now >= n.next_balance {
        let kick = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK;
        let chain = sds.per_cpu(this.cpu);
        let reduced = chain.first().is_some_and(|sd| {
            this.h_nr_runnable >= 1 && check_cpu_capacity(this.capacity, this.capacity_orig, sd.imbalance_pct)
        });
        if this.nr_running >= 2 || reduced {
            flags = kick;
        } else if asym_cpucapacity {
            if this.misfit_task_load > 0 {
                flags = kick;
            }
        } else if let Some(llc) = sds.sd_llc(this.cpu) {
            let busy = llc.span.difference(&n.idle_cpus).weight();
            if busy > 1 {
                flags = kick;
            }
        }
    }
    if n.needs_update {
        flags |= NOHZ_NEXT_KICK;
    }
    flags
}

/// `nohz_newidle_balance`: a CPU about to idle with a long expected idle
/// refreshes the idle CPUs' stale blocked load itself.
pub fn nohz_newidle_balance(n: &NohzState, avg_idle: u64, now: u64) -> u32 {
    if avg_idle < SYSCTL_SCHED_MIGRATION_COST || !n.has_blocked || now < n.next_blocked {
        0
    } else {
        NOHZ_NEWILB_KICK
    }
}
