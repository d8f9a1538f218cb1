//! NOHZ idle balancing: tickless idle CPUs do not balance themselves, so a
//! busy CPU's tick may kick one of them (`nohz_balancer_kick`) to run the
//! periodic balance on behalf of every tickless CPU (`find_new_ilb`, then
//! each idle CPU's domains in `ilb_order`).
//!
//! Follows Linux's `kernel/sched/fair.c: nohz_balancer_kick()`, `kick_ilb()`,
//! `find_new_ilb()` and `_nohz_idle_balance()`.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use sched::balance::nohz::{nohz_balancer_kick, NohzState, NOHZ_BALANCE_KICK, NOHZ_NEXT_KICK, NOHZ_STATS_KICK};

use super::snapshot::{cpu_snapshot, snapshots_into};
use crate::lock::{level, IrqMutex};
use crate::percpu::{per_cpu, PerCpu};

static NOHZ: IrqMutex<level::NohzState, NohzState> = IrqMutex::new(NohzState {
    idle_cpus: sched::cpumask::CpuMask::new(),
    has_blocked: false,
    next_balance: 0,
    next_blocked: 0,
    needs_update: false,
});
/// This module's per-CPU part (its `CPUS`).
struct NohzCpu {
    /// Kick flags waiting for each CPU (handled in its reschedule IPI).
    kick: AtomicU32,
    counters: NohzCounters,
}

impl NohzCpu {
    const fn new() -> Self {
        NohzCpu {
            kick: AtomicU32::new(0),
            counters: NohzCounters {
        kicks_sent: AtomicU64::new(0),
        ilb_runs: AtomicU64::new(0),
        balanced_for_others: AtomicU64::new(0),
        pulled_for_others: AtomicU64::new(0),
    },
        }
    }
}

/// Every CPU's NohzCpu.
static CPUS: PerCpu<NohzCpu> = per_cpu!(NohzCpu::new());
/// The flags a kick carries (Linux's `NOHZ_KICK_MASK`): any of them sends
/// the IPI, and the kicked CPU takes them all at once.
const KICK_MASK: u32 = NOHZ_BALANCE_KICK | NOHZ_STATS_KICK | NOHZ_NEXT_KICK;
/// How many CPUs are in `NOHZ.idle_cpus` (Linux's `nohz.nr_cpus`), read
/// without the lock by every busy tick: with none, a tick takes no lock.
static NR_IDLE: AtomicU32 = AtomicU32::new(0);

/// What NOHZ idle balancing did, per CPU (`@fw nohz`): kicks this CPU sent,
/// kicked balances it ran, passes it ran on behalf of another (tickless) CPU,
/// and tasks those passes pulled to that CPU.
#[derive(Default)]
struct NohzCounters {
    kicks_sent: AtomicU64,
    ilb_runs: AtomicU64,
    balanced_for_others: AtomicU64,
    pulled_for_others: AtomicU64,
}

/// Prints `cpu`'s `@fw nohz` record.
pub fn print_counters(cpu: usize) {
    let c = &CPUS[cpu].counters;
    crate::record!(
        "nohz",
        "cpu={} kicks_sent={} ilb_runs={} balanced_for_others={} pulled_for_others={}",
        cpu,
        c.kicks_sent.load(Ordering::Relaxed),
        c.ilb_runs.load(Ordering::Relaxed),
        c.balanced_for_others.load(Ordering::Relaxed),
        c.pulled_for_others.load(Ordering::Relaxed)
    );
}

/// `cpu` stopped its tick.
pub fn enter_idle(cpu: usize) {
    if let Some(g) = super::state::global() {
        let mut n = NOHZ.lock();
        if !n.idle_cpus.contains(cpu) {
            NR_IDLE.fetch_add(1, Ordering::Relaxed);
        }
        n.enter_idle(cpu, crate::clock::jiffies(), g.hz);
    }
}

/// `cpu` restarted its tick.
pub fn exit_idle(cpu: usize) {
    let mut n = NOHZ.lock();
    if n.idle_cpus.contains(cpu) {
        NR_IDLE.fetch_sub(1, Ordering::Relaxed);
    }
    n.exit_idle(cpu);
}

/// From a busy CPU's tick: kick an idle CPU to balance for the tickless ones.
pub fn balancer_kick(cpu: usize) {
    // No tickless CPU: nothing to do, and no lock taken (fair.c:
    // nohz_balancer_kick() reads nohz.nr_cpus first).
    if NR_IDLE.load(Ordering::Relaxed) == 0 {
        return;
    }
    let Some(g) = super::state::global() else { return };
    let now = crate::clock::jiffies();
    let n = *NOHZ.lock();
    if n.idle_cpus.is_empty() {
        return;
    }
    // Neither a balance nor a blocked-load refresh is due: the policy would
    // ask for nothing, so no CPU needs to be looked at (fair.c:
    // nohz_balancer_kick() returns before reading any other CPU until
    // nohz.next_balance or nohz.next_blocked). Snapshotting every CPU on
    // every busy tick cost 64-CPU machines most of their tick.
    if now < n.next_balance && !(n.has_blocked && now > n.next_blocked) {
        return;
    }
    let this = cpu_snapshot(cpu);
    // Every online CPU: the kick rules look at capacities across the machine.
    // Into this CPU's reused buffer (its balance state is the outermost lock,
    // and its own periodic balance has released it by now).
    let online = crate::rq::online_mask();
    let mut guard = super::state::cpu_state(cpu).lock();
    let (state, held) = guard.split();
    let Some(state) = state.as_mut() else { return };
    snapshots_into(&online, &mut state.balance_snaps);
    let all = &state.balance_snaps;
    let flags = nohz_balancer_kick(&n, &g.sds, all, &this, now);
    if flags & (NOHZ_BALANCE_KICK | NOHZ_STATS_KICK) == 0 {
        return;
    }
    // A balancing kick moves the next one to the next jiffy, so that the
    // other busy CPUs' ticks of this jiffy do not kick again; a kick that
    // only refreshes blocked load leaves it (fair.c: kick_ilb()). Pushing
    // it HZ·CPUs/10 away on every kick, as before, let a refresh kick hold
    // off balancing for 6.4 s at 64 CPUs while idle CPUs stayed idle.
    if flags & NOHZ_BALANCE_KICK != 0 {
        NOHZ.lock_inside(&held).next_balance = now + 1;
    }
    let Some(ilb) = n.find_new_ilb(cpu, &online, all) else { return };
    if CPUS[ilb].kick.fetch_or(flags, Ordering::AcqRel) & KICK_MASK == 0 {
        CPUS[cpu].counters.kicks_sent.fetch_add(1, Ordering::Relaxed);
        // The reschedule IPI without a reschedule request: the kicked CPU
        // balances in the IPI handler and switches only if it pulled work.
        crate::resched::send_resched_ipi(ilb);
    }
}

/// Whether a NOHZ kick (a balance, a blocked-load refresh, or both) was
/// sent to `cpu` and not handled yet.
pub fn kicked(cpu: usize) -> bool {
    CPUS[cpu].kick.load(Ordering::Acquire) & KICK_MASK != 0
}

/// In `cpu`'s reschedule IPI: handle a NOHZ kick, if any. Every kick is
/// taken whole (fair.c: nohz_csd_func()); before, a refresh-only kick was
/// never taken, so its flag stayed and that CPU was never kicked again.
pub fn run_kicked(cpu: usize) {
    let flags = CPUS[cpu].kick.swap(0, Ordering::AcqRel);
    if flags & KICK_MASK == 0 {
        return;
    }
    let Some(g) = super::state::global() else { return };
    if flags & NOHZ_BALANCE_KICK == 0 {
        // A refresh (and `next_balance` recomputation) only: the blocked
        // load counts as refreshed and the next refresh is 32 ms away
        // (fair.c: _nohz_idle_balance() without sched_balance_domains()).
        let now = crate::clock::jiffies();
        let mut n = NOHZ.lock();
        let next = n.next_balance;
        n.after_idle_balance(now, g.hz, true, next);
        return;
    }
    let order: alloc::vec::Vec<usize> = NOHZ.lock().ilb_order(cpu).collect();
    CPUS[cpu].counters.ilb_runs.fetch_add(1, Ordering::Relaxed);
    for c in order {
        // Each tickless CPU balances as itself; stop if work arrived here.
        if crate::resched::need_resched(cpu) {
            break;
        }
        let pulled = super::periodic::sched_balance_domains(c, true);
        if c != cpu {
            CPUS[cpu].counters.balanced_for_others.fetch_add(1, Ordering::Relaxed);
            CPUS[cpu].counters.pulled_for_others.fetch_add(pulled as u64, Ordering::Relaxed);
        }
    }
    let now = crate::clock::jiffies();
    let next = now + 1;
    NOHZ.lock().after_idle_balance(now, g.hz, true, next);
}
