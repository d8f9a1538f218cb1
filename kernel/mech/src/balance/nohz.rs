//! NOHZ idle balancing: tickless idle CPUs do not balance themselves, so a
//! busy CPU's tick may kick one of them (`nohz_balancer_kick`) to run the
//! periodic balance on behalf of every tickless CPU (`find_new_ilb`, then
//! each idle CPU's domains in `ilb_order`).
//!
//! Follows Linux's `kernel/sched/fair.c: nohz_balancer_kick()`, `kick_ilb()`,
//! `find_new_ilb()` and `_nohz_idle_balance()`.

use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use sched::balance::nohz::{blocked_period, nohz_balancer_kick, NohzState, NOHZ_BALANCE_KICK, NOHZ_NEXT_KICK, NOHZ_STATS_KICK};
use sched::cpumask::CpuMask;

use super::snapshot::cpu_snapshot;
use crate::percpu::{per_cpu, PerCpu};
use crate::MAX_CPUS;

/// The machine's NOHZ state (the policy's [`NohzState`], Linux's `struct
/// nohz`) without a lock, as Linux keeps it: the idle mask in atomic words,
/// the count, the flags and the times in atomics of their own. Every CPU's
/// idle entry and exit and every busy tick touch it, so none of them waits
/// for another CPU (fair.c: nohz_balance_enter_idle(),
/// nohz_balance_exit_idle(), nohz_balancer_kick()).
///
/// Each operation applies the policy's transition of the same name
/// ([`NohzState::enter_idle`], `exit_idle`, `after_idle_balance`) field by
/// field; `kernel/mech/tests/nohz_atomic.rs` checks that both give the same
/// state. Invariant: `nr_cpus` is the number of bits set in `idle_cpus`
/// once every operation in flight has finished (each bit's change and its
/// count change come from one `fetch_or`/`fetch_and`). A reader
/// ([`Self::snapshot`]) sees each word and flag as of some recent write,
/// not one instant: the kick decides on such a view, as Linux's does.
pub struct NohzAtomic {
    idle_cpus: [AtomicU64; MAX_CPUS / 64],
    /// How many CPUs are in `idle_cpus` (Linux's `nohz.nr_cpus`), read first
    /// by every busy tick: with none, a tick reads nothing else.
    nr_cpus: AtomicU32,
    has_blocked: AtomicBool,
    next_balance: AtomicU64,
    next_blocked: AtomicU64,
    needs_update: AtomicBool,
}

impl NohzAtomic {
    /// No CPU tickless, nothing due (the policy's `NohzState::default()`).
    pub const fn new() -> NohzAtomic {
        NohzAtomic {
            idle_cpus: [const { AtomicU64::new(0) }; MAX_CPUS / 64],
            nr_cpus: AtomicU32::new(0),
            has_blocked: AtomicBool::new(false),
            next_balance: AtomicU64::new(0),
            next_blocked: AtomicU64::new(0),
            needs_update: AtomicBool::new(false),
        }
    }

    /// The CPUs in the idle mask now (Linux's `nohz.nr_cpus`).
    pub fn nr_cpus(&self) -> u32 {
        self.nr_cpus.load(Ordering::Acquire)
    }

    /// A view of the state for the policy's decisions.
    pub fn snapshot(&self) -> NohzState {
        NohzState {
            idle_cpus: self.idle_mask(),
            has_blocked: self.has_blocked.load(Ordering::Acquire),
            next_balance: self.next_balance.load(Ordering::Relaxed),
            next_blocked: self.next_blocked.load(Ordering::Relaxed),
            needs_update: self.needs_update.load(Ordering::Relaxed),
        }
    }

    /// The idle mask alone.
    pub fn idle_mask(&self) -> CpuMask {
        CpuMask::from_words_in_use(|w| self.idle_cpus[w].load(Ordering::Acquire))
    }

    /// [`NohzState::enter_idle`]: `cpu` stopped its tick at `now` (jiffies).
    pub fn enter_idle(&self, cpu: usize, now: u64, hz: u32) {
        let bit = 1u64 << (cpu % 64);
        // The masks' word loops must reach the word before the bit is in it.
        sched::cpumask::cover_cpu(cpu);
        if self.idle_cpus[cpu / 64].fetch_or(bit, Ordering::AcqRel) & bit == 0 {
            self.nr_cpus.fetch_add(1, Ordering::AcqRel);
            self.needs_update.store(true, Ordering::Release);
        }
        // The next refresh is set before `has_blocked` says there is one to
        // make, so a kick that sees the flag sees a time with it.
        if !self.has_blocked.load(Ordering::Acquire) {
            self.next_blocked.store(now.saturating_add(blocked_period(hz)), Ordering::Relaxed);
        }
        self.has_blocked.store(true, Ordering::Release);
    }

    /// [`NohzState::exit_idle`]: `cpu` restarted its tick.
    pub fn exit_idle(&self, cpu: usize) {
        let bit = 1u64 << (cpu % 64);
        if self.idle_cpus[cpu / 64].fetch_and(!bit, Ordering::AcqRel) & bit != 0 {
            self.nr_cpus.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// [`NohzState::after_idle_balance`].
    pub fn after_idle_balance(&self, now: u64, hz: u32, all_blocked_done: bool, next_balance: u64) {
        self.next_blocked.store(now.saturating_add(blocked_period(hz)), Ordering::Relaxed);
        if all_blocked_done {
            self.has_blocked.store(false, Ordering::Release);
        }
        self.next_balance.store(next_balance, Ordering::Relaxed);
        self.needs_update.store(false, Ordering::Release);
    }

    /// A balancing kick holds the next one off until `next_balance`
    /// (fair.c: kick_ilb()).
    pub fn set_next_balance(&self, next_balance: u64) {
        self.next_balance.store(next_balance, Ordering::Relaxed);
    }

    /// `next_balance` now.
    pub fn next_balance(&self) -> u64 {
        self.next_balance.load(Ordering::Relaxed)
    }
}

impl Default for NohzAtomic {
    fn default() -> Self {
        NohzAtomic::new()
    }
}

/// The machine's NOHZ state.
static NOHZ: NohzAtomic = NohzAtomic::new();

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
        NOHZ.enter_idle(cpu, crate::clock::jiffies(), g.hz);
    }
}

/// `cpu` restarted its tick.
pub fn exit_idle(cpu: usize) {
    NOHZ.exit_idle(cpu);
}

/// From a busy CPU's tick: kick an idle CPU to balance for the tickless ones.
pub fn balancer_kick(cpu: usize) {
    // No tickless CPU: nothing to do, and nothing else read (fair.c:
    // nohz_balancer_kick() reads nohz.nr_cpus first).
    if NOHZ.nr_cpus() == 0 {
        return;
    }
    let Some(g) = super::state::global() else { return };
    let now = crate::clock::jiffies();
    let n = NOHZ.snapshot();
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
    let flags = nohz_balancer_kick(&n, &g.sds, g.asym_cpucapacity, &this, now);
    if flags & (NOHZ_BALANCE_KICK | NOHZ_STATS_KICK) == 0 {
        return;
    }
    // A balancing kick moves the next one to the next jiffy, so that the
    // other busy CPUs' ticks of this jiffy do not kick again; a kick that
    // only refreshes blocked load leaves it (fair.c: kick_ilb()).
    if flags & NOHZ_BALANCE_KICK != 0 {
        NOHZ.set_next_balance(now + 1);
    }
    // Only the candidates up to the first really idle one are read.
    let online = crate::rq::online_mask();
    let Some(ilb) = n.find_new_ilb(cpu, &online, |c| cpu_snapshot(c).available_idle()) else { return };
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
        NOHZ.after_idle_balance(now, g.hz, true, NOHZ.next_balance());
        return;
    }
    let idle = NohzState { idle_cpus: NOHZ.idle_mask(), ..NohzState::default() };
    let order: alloc::vec::Vec<usize> = idle.ilb_order(cpu).collect();
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
    NOHZ.after_idle_balance(now, g.hz, true, next);
}
