//! Newidle balancing (Linux's `sched_balance_newidle`): a CPU about to run
//! its idle task first tries to pull work, unless its `avg_idle` says the
//! idle period will be shorter than what balancing costs. Every idle period
//! opened here is measured when the next task arrives (`note_activate`) and
//! folded into `avg_idle` by the selected clamp rule (`avg_idle_clamp=`).

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sched::balance::avg_idle::{hist_bucket, AVG_IDLE_HIST_BUCKETS};
use sched::balance::newidle::{newidle_gate_by_cost, NewidleStep, NewidleWalk};
use sched::balance::IdleType;
use sched::Feature;

use super::pass::balance_rq;
use super::state::cpu_state;
use crate::percpu::{per_cpu, PerCpu};

/// This module's per-CPU part (its `CPUS`).
struct NewidleCpu {
    /// Gate refusals (added to the counters' `gate_skips` when printed).
    gate_skips: AtomicU64,
    /// The lowest domain's `max_newidle_lb_cost`, copied whenever the balance
    /// state changes it, so that the gate reads it under the runqueue lock
    /// (which ranks below the balance state's).
    lowest_cost: AtomicU64,
    /// Whether this CPU's idle entries reach the gate: newidle balancing on
    /// and a domain to balance in (set once by `init_cpu`; both are fixed
    /// after boot), one load where the entry would look up its domains.
    gated: AtomicBool,
    /// Newidle entries that reached the gate, counted apart from their
    /// outcomes: the scenarios check `entries = gate_skips + lock_drops`,
    /// which fails if an entry is refused after the lock was dropped (or
    /// not counted at all).
    entries: AtomicU64,
    /// Entries for which the switch dropped its runqueue lock to balance.
    lock_drops: AtomicU64,
    /// The distribution of `avg_idle` as the gate saw it at the decisions
    /// the clamp rule can change (with something overloaded under today's
    /// gate, all of them under the 2013 gate), by
    /// `sched::balance::avg_idle::hist_bucket`.
    avg_idle_hist: [AtomicU64; AVG_IDLE_HIST_BUCKETS],
}

impl NewidleCpu {
    const fn new() -> Self {
        NewidleCpu {
            gate_skips: AtomicU64::new(0),
            lowest_cost: AtomicU64::new(0),
            gated: AtomicBool::new(false),
            entries: AtomicU64::new(0),
            lock_drops: AtomicU64::new(0),
            avg_idle_hist: [const { AtomicU64::new(0) }; AVG_IDLE_HIST_BUCKETS],
        }
    }
}

/// `cpu`'s newidle entries that reached the gate and, of those, the ones for
/// which its runqueue lock was dropped. Every entry is either refused by the
/// gate or drops the lock, never both (`entries = gate_skips + lock_drops`).
pub fn entries_and_lock_drops(cpu: usize) -> (u64, u64) {
    (CPUS[cpu].entries.load(Ordering::Relaxed), CPUS[cpu].lock_drops.load(Ordering::Relaxed))
}

/// Sets whether `cpu`'s idle entries reach the gate (`balance::init`, on
/// the boot CPU before any CPU schedules): newidle balancing `on` and
/// `cpu` has a domain.
pub(super) fn init_cpu(cpu: usize, on: bool) {
    CPUS[cpu].gated.store(on, Ordering::Relaxed);
}

/// Every CPU's NewidleCpu.
static CPUS: PerCpu<NewidleCpu> = per_cpu!(NewidleCpu::new());

/// `cpu`'s distribution of `avg_idle` at the gate's decisions while
/// something was overloaded (counts per `hist_bucket`).
pub fn avg_idle_hist(cpu: usize) -> [u64; AVG_IDLE_HIST_BUCKETS] {
    core::array::from_fn(|i| CPUS[cpu].avg_idle_hist[i].load(Ordering::Relaxed))
}

/// `cpu`'s gate refusals.
pub fn gate_skips(cpu: usize) -> u64 {
    CPUS[cpu].gate_skips.load(Ordering::Relaxed)
}

/// Copies `cpu`'s lowest domain's `max_newidle_lb_cost` for the gate; called
/// with `cpu`'s balance state locked, after anything that may change it (a
/// newidle walk, the periodic decay).
pub(super) fn note_lowest_cost(cpu: usize, state: &super::state::CpuState) {
    if let Some(sd) = state.sd.first() {
        CPUS[cpu].lowest_cost.store(sd.newidle.max_newidle_lb_cost, Ordering::Relaxed);
    }
}

static DICE: AtomicU64 = AtomicU64::new(0x2545_F491_4F6C_DD1D);

/// A cheap shared random number for NI_RANDOM (xorshift; races only mix it).
fn dice() -> u32 {
    let mut x = DICE.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    DICE.store(x, Ordering::Relaxed);
    (x >> 32) as u32
}

/// The start of newidle balancing, called by the switch under `rq`'s lock
/// when its CPU is about to go idle (`rq.clock` is Linux's `idle_stamp`):
/// opens the idle period that `avg_idle` will measure and decides the gate.
/// Returns the `avg_idle` to balance with if the gate passed: only then does
/// the switch drop the runqueue lock and call [`sched_balance_newidle`].
///
/// The order is fair.c: sched_balance_newidle()'s in v6.19: a pending wakeup
/// returns first; then `idle_stamp` is set; then, still under the lock, the
/// root domain's overload and `avg_idle` against the lowest domain's
/// `max_newidle_lb_cost` (or the 0.5 ms migration cost before 3.13,
/// `newidle_gate=`). (Linux also moves `rq->next_balance` earlier on that
/// early exit; fairway has no per-runqueue `next_balance`: each domain's
/// `last_balance` and interval decide at the tick.)
pub fn newidle_begin(rq: &mut crate::rq::Rq) -> Option<sched::time::Nanos> {
    let g = super::state::global()?;
    // A wakeup already on its way means no idle period (and no balancing).
    if crate::rq::wake_list_pending(rq.cpu) {
        return None;
    }
    rq.avg_idle.enter_newidle(rq.clock);
    let me = &CPUS[rq.cpu];
    if !me.gated.load(Ordering::Relaxed) {
        return None;
    }
    me.entries.fetch_add(1, Ordering::Relaxed);
    // Nothing overloaded anywhere: refused whatever the cost rule says, so
    // it is not evaluated (fair.c: sched_balance_newidle() reads
    // `rd->overloaded` first too). This is the common case of a CPU going
    // idle beside CPUs with one task each: 12 instructions of every such
    // switch (two per cross-CPU pipe round trip). The 2013 gate had no such
    // test (3.10 balanced whenever avg_idle passed): it goes on.
    let overloaded = super::snapshot::any_overloaded();
    let rule_2013 = g.cfg.newidle_gate.is_2013();
    if !overloaded && !rule_2013 {
        me.gate_skips.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    // The decisions avg_idle's rule makes: those with something overloaded
    // under today's gate, every one under the 2013 gate.
    me.avg_idle_hist[hist_bucket(rq.avg_idle.avg_idle)].fetch_add(1, Ordering::Relaxed);
    let lowest = Some(me.lowest_cost.load(Ordering::Relaxed));
    let gate = newidle_gate_by_cost(g.cfg.newidle_gate, g.cfg.migration_cost, &rq.avg_idle, lowest, overloaded, false, true);
    if gate.is_err() {
        me.gate_skips.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    me.lock_drops.fetch_add(1, Ordering::Relaxed);
    Some(rq.avg_idle.avg_idle)
}

/// Called by the switch, with no lock held, when `cpu` is about to go idle
/// and `newidle_begin` passed the gate with `avg_idle`: the walk up the
/// domains (the gate is not tested again, as in fair.c:
/// sched_balance_newidle()). Returns how many tasks it pulled.
pub fn sched_balance_newidle(cpu: usize, avg_idle: sched::time::Nanos) -> u32 {
    let Some(g) = super::state::global() else { return 0 };
    let chain = g.sds.per_cpu(cpu);
    let now = crate::rq::now_ns();
    let mut guard = cpu_state(cpu).lock();
    let Some(state) = guard.as_mut() else { return 0 };
    crate::trace::record(now, || crate::trace::Event::NewidleStart);
    let ni_random = g.cfg.features.has(Feature::NiRandom);
    let mut walk = NewidleWalk::for_gate(g.cfg.newidle_gate, avg_idle);
    for (idx, sd) in chain.iter().enumerate() {
        let step = walk.step(sd, &mut state.sd[idx].newidle, ni_random, dice());
        let weight = match step {
            NewidleStep::Stop => break,
            NewidleStep::Skip => continue,
            NewidleStep::Balance { weight } => weight,
        };
        let t0 = crate::rq::now_ns();
        let (go_on, pulled) = balance_rq(g, cpu, idx, IdleType::NewlyIdle, &mut state.sd[idx], &mut state.balance_snaps);
        let t1 = crate::rq::now_ns();
        if !walk.record(&mut state.sd[idx].newidle, t1 - t0, pulled, weight, t1, go_on, &mut state.newidle) {
            break;
        }
    }
    note_lowest_cost(cpu, state);
    {
        let mut rq = crate::rq::lock_inside(&guard, cpu);
        walk.finish(&mut rq.avg_idle);
        // Not going idle after all: a pull, or a task queued here while the
        // lock was dropped, closes the period without a sample (fair.c:
        // sched_balance_newidle() clears idle_stamp when it "pulled").
        let not_idle = walk.pulled > 0 || rq.fair.nr_queued() > 0;
        rq.avg_idle.newidle_done(not_idle);
    }
    crate::trace::record_now(|| crate::trace::Event::NewidleEnd { pulled: walk.pulled });
    walk.pulled
}

/// A woken task is activated on the locked `rq` at its clock: close an open
/// idle period and fold it into `avg_idle`. As core.c: ttwu_do_activate(),
/// whenever a period is open (`idle_stamp`), whatever runs now: a wakeup
/// that lands while newidle balancing has dropped the lock ends the period.
/// Not for a new task (wake_up_new_task() takes no sample) nor a migration.
#[inline]
pub fn note_activate(rq: &mut crate::rq::Rq) {
    // The configuration first: `end_idle` tests for an open period itself,
    // and a test here too would be a second load of it (the configuration's
    // acquiring load lies between the two).
    let Some(g) = super::state::global() else { return };
    let now = rq.clock;
    let ended = rq.avg_idle.end_idle(now, g.cfg.avg_idle_clamp, g.cfg.avg_idle_ceiling_pct).is_some();
    // SIS_PROP `Aged` (5.14–6.6 ttwu_do_activate()): the prediction for this
    // CPU's own wakeups starts at half the updated avg_idle. Only `aged`
    // reads it, so the other settings skip the clock read it costs.
    if ended && g.cfg.sis_prop == sched::balance::SisProp::Aged {
        super::wake::note_idle_wakeup(rq.cpu, rq.avg_idle.avg_idle);
    }
}
