//! Newidle balancing (reference §3.2–3.4): whether a CPU that is about to
//! idle tries to pull work at all, how far up the domains it goes, the
//! per-domain cost with its decay, and NI_RANDOM.
//!
//! # Contract (the order the kernel follows, under its own rq lock except
//! where noted)
//!
//! ```text
//! avg.enter_newidle(now)                                   // idle period starts
//! match newidle_gate(&avg, lowest sd state, rd_overloaded, ttwu_pending, active)
//!   Err(skip) => go idle (nohz::nohz_newidle_balance may ask for a refresh)
//!   Ok(()) => {
//!     drop the rq lock (only now: the gate is decided under it)
//!     let mut walk = NewidleWalk::new(avg.avg_idle);
//!     for (sd, state) in domains bottom-up {
//!         match walk.step(sd, &mut state.newidle, ni_random, dice) {
//!             Stop => break,
//!             Skip => continue,
//!             Balance { weight } => {
//!                 pulled = sched_balance_rq(.., IdleType::NewlyIdle)
//!                 if !walk.record(&mut state.newidle, cost_ns, pulled, weight, now, continue_balancing, &mut cpu_counters) { break }
//!             }
//!         }
//!     }
//!     retake the rq lock; walk.finish(&mut avg)
//!     if pulled > 0 { avg.pulled() }
//!   }
//! ```
//!
//! Periodic passes call [`decay_newidle_costs`] over all of the CPU's
//! domain states. Costs are ns; sums saturate.

use crate::time::{Nanos, NSEC_PER_SEC};
use crate::topology::{SchedDomain, SD_BALANCE_NEWIDLE};

use super::avg_idle::{AvgIdle, SYSCTL_SCHED_MIGRATION_COST};

/// Newidle counters (per CPU, and per domain inside
/// [`NewidleDomainState`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewidleCounters {
    /// Balance attempts run (`sched_balance_rq` calls).
    pub attempts: u64,
    /// Attempts that pulled at least one task.
    pub successes: u64,
    /// Tasks pulled.
    pub tasks_pulled: u64,
    /// Time spent balancing (ns).
    pub time_ns: u64,
    /// Domains skipped by NI_RANDOM.
    pub random_skips: u64,
    /// Walks stopped by the cost rule.
    pub cost_stops: u64,
    /// Newidle entries refused by the gate.
    pub gate_skips: u64,
}

/// Per-domain newidle state (Linux's `sd->max_newidle_lb_cost`,
/// `last_decay_max_lb_cost`, `newidle_call/success/ratio`).
///
/// Invariants: `newidle_call < 1024` after each update;
/// `newidle_success <= newidle_call` when every credited success is ≤ 1
/// per call (weights above 1 may exceed it, as in Linux); ratio ≤ ~1024
/// times the largest weight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewidleDomainState {
    /// Costliest recent newidle balance of this domain (ns).
    pub max_newidle_lb_cost: Nanos,
    /// When it last rose or decayed (ns).
    pub last_decay_max_lb_cost: Nanos,
    /// NI_RANDOM window: calls.
    pub newidle_call: u32,
    /// NI_RANDOM window: weighted successes.
    pub newidle_success: u32,
    /// NI_RANDOM estimate of 1024 × success rate.
    pub newidle_ratio: u32,
    /// Counters for this domain.
    pub counters: NewidleCounters,
}

impl Default for NewidleDomainState {
    fn default() -> Self {
        NewidleDomainState {
            max_newidle_lb_cost: 0,
            last_decay_max_lb_cost: 0,
            newidle_call: 512,
            newidle_success: 256,
            newidle_ratio: 512,
            counters: NewidleCounters::default(),
        }
    }
}

impl NewidleDomainState {
    /// `update_newidle_stats`: one call with `success` weighted successes;
    /// every 1024 calls the ratio is refreshed and the window halved.
    pub fn update_newidle_stats(&mut self, success: u32) {
        self.newidle_call = self.newidle_call.saturating_add(1);
        self.newidle_success = self.newidle_success.saturating_add(success);
        if self.newidle_call >= 1024 {
            self.newidle_ratio = self.newidle_success;
            self.newidle_call /= 2;
            self.newidle_success /= 2;
        }
    }

    /// `update_newidle_cost`: raise the maximum to `cost`, or decay it by
    /// 253/256 if a full second passed without a new maximum. Returns
    /// whether it decayed.
    pub fn update_newidle_cost(&mut self, cost: Nanos, success: u32, now: Nanos) -> bool {
        if cost > 0 {
            self.update_newidle_stats(success);
        }
        if cost > self.max_newidle_lb_cost {
            self.max_newidle_lb_cost = cost;
            self.last_decay_max_lb_cost = now;
            false
        } else if now > self.last_decay_max_lb_cost.saturating_add(NSEC_PER_SEC) {
            self.max_newidle_lb_cost =
                (self.max_newidle_lb_cost as u128 * 253 / 256) as u64;
            self.last_decay_max_lb_cost = now;
            true
        } else {
            false
        }
    }
}

/// The periodic decay of `sched_balance_domains`, one domain at a time,
/// bottom-up: [`DecayPass::visit`] decays a domain and says whether it
/// decayed (the walk goes on past a "not the balancer" domain only while
/// domains decay); [`DecayPass::finish`] then resets `max_idle_balance_cost`
/// to `max(migration_cost, Σ max_newidle_lb_cost)` of the visited domains if
/// the LAST visited one decayed. As fair.c: sched_balance_domains() in v6.19,
/// which overwrites `need_decay` at each domain (an `|=` was proposed upstream
/// in 2026, unmerged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DecayPass {
    need_decay: bool,
    max_cost: Nanos,
    /// The 3.10 rule (`NewidleGate::MigrationCost`): the domains' costs
    /// still age, but `max_idle_balance_cost` stays at the migration cost.
    rule_2013: bool,
}

impl DecayPass {
    /// A pass under `gate` (`DecayPass::default()` is v6.19's).
    pub fn for_gate(gate: super::config::NewidleGate) -> DecayPass {
        DecayPass { rule_2013: gate.is_2013(), ..DecayPass::default() }
    }

    /// Decays one domain's cost at `now`; returns whether it decayed.
    pub fn visit(&mut self, st: &mut NewidleDomainState, now: Nanos) -> bool {
        self.need_decay = st.update_newidle_cost(0, 0, now);
        self.max_cost = self.max_cost.saturating_add(st.max_newidle_lb_cost);
        self.need_decay
    }

    /// Applies the pass to the runqueue's `max_idle_balance_cost`.
    pub fn finish(self, avg: &mut AvgIdle) {
        if self.need_decay && !self.rule_2013 {
            avg.set_max_idle_balance_cost(self.max_cost.max(SYSCTL_SCHED_MIGRATION_COST));
        }
    }
}

/// A [`DecayPass`] over every domain (a walk that never stops early).
pub fn decay_newidle_costs<'a>(states: impl IntoIterator<Item = &'a mut NewidleDomainState>, avg: &mut AvgIdle, now: Nanos) {
    let mut pass = DecayPass::default();
    for st in states {
        pass.visit(st, now);
    }
    pass.finish(avg);
}

/// Why a newidle balance is not tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewidleSkip {
    /// A wakeup is about to arrive.
    TtwuPending,
    /// The CPU is not active.
    Inactive,
    /// No domain.
    NoDomain,
    /// No CPU has ≥ 2 tasks or a misfit task (`!rd->overloaded`).
    NotOverloaded,
    /// `avg_idle` below the lowest domain's `max_newidle_lb_cost`.
    AvgIdleTooShort,
}

/// The gate with a selectable threshold: `MigrationCost` is the rule before
/// 3.13 (`avg_idle` against the fixed migration cost, and nothing about
/// overload or the measured cost), `Cost` the v6.19 rule of [`newidle_gate`].
pub fn newidle_gate_with(
    gate: super::config::NewidleGate,
    migration_cost: Nanos,
    avg: &AvgIdle,
    lowest: Option<&NewidleDomainState>,
    rd_overloaded: bool,
    ttwu_pending: bool,
    active: bool,
) -> Result<(), NewidleSkip> {
    let lowest_cost = lowest.map(|sd| sd.max_newidle_lb_cost);
    newidle_gate_by_cost(gate, migration_cost, avg, lowest_cost, rd_overloaded, ttwu_pending, active)
}

/// [`newidle_gate_with`] given only what it reads of the lowest domain: its
/// `max_newidle_lb_cost` (`None`: no domain). The kernel decides the gate
/// under its runqueue lock, before it drops it, as fair.c:
/// sched_balance_newidle() does, from a copy of that cost.
pub fn newidle_gate_by_cost(
    gate: super::config::NewidleGate,
    migration_cost: Nanos,
    avg: &AvgIdle,
    lowest_cost: Option<Nanos>,
    rd_overloaded: bool,
    ttwu_pending: bool,
    active: bool,
) -> Result<(), NewidleSkip> {
    if !gate.is_2013() {
        return gate_v6_19(avg, lowest_cost, rd_overloaded, ttwu_pending, active);
    }
    // 3.10's idle_balance(): the migration cost alone (a wakeup on its way
    // or a CPU with no domain has nothing to balance either way).
    if ttwu_pending {
        return Err(NewidleSkip::TtwuPending);
    }
    if !active {
        return Err(NewidleSkip::Inactive);
    }
    if lowest_cost.is_none() {
        return Err(NewidleSkip::NoDomain);
    }
    if avg.avg_idle < migration_cost {
        return Err(NewidleSkip::AvgIdleTooShort);
    }
    Ok(())
}

/// Whether to try newidle balancing at all (v6.19 rule).
pub fn newidle_gate(
    avg: &AvgIdle,
    lowest: Option<&NewidleDomainState>,
    rd_overloaded: bool,
    ttwu_pending: bool,
    active: bool,
) -> Result<(), NewidleSkip> {
    gate_v6_19(avg, lowest.map(|sd| sd.max_newidle_lb_cost), rd_overloaded, ttwu_pending, active)
}

/// The v6.19 gate on the lowest domain's cost (in fair.c:
/// sched_balance_newidle()'s order).
fn gate_v6_19(
    avg: &AvgIdle,
    lowest_cost: Option<Nanos>,
    rd_overloaded: bool,
    ttwu_pending: bool,
    active: bool,
) -> Result<(), NewidleSkip> {
    if ttwu_pending {
        return Err(NewidleSkip::TtwuPending);
    }
    if !active {
        return Err(NewidleSkip::Inactive);
    }
    let Some(cost) = lowest_cost else { return Err(NewidleSkip::NoDomain) };
    if !rd_overloaded {
        return Err(NewidleSkip::NotOverloaded);
    }
    if avg.avg_idle < cost {
        return Err(NewidleSkip::AvgIdleTooShort);
    }
    Ok(())
}

/// What to do at the next domain of the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewidleStep {
    /// Stop the walk (cost rule).
    Stop,
    /// Skip this domain (no SD_BALANCE_NEWIDLE, or NI_RANDOM said no).
    Skip,
    /// Balance here; credit a success with `weight`.
    Balance {
        /// Inverse-probability weight of a success.
        weight: u32,
    },
}

/// The bottom-up newidle walk.
///
/// Invariant: `curr_cost` is the sum of the recorded costs (saturating).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewidleWalk {
    /// `avg_idle` at entry.
    pub avg_idle: Nanos,
    /// Time spent so far.
    pub curr_cost: Nanos,
    /// Tasks pulled so far.
    pub pulled: u32,
    /// The 3.10 walk (`NewidleGate::MigrationCost`): every domain until a
    /// pull, no cost stop, `max_idle_balance_cost` left alone.
    pub rule_2013: bool,
}

impl NewidleWalk {
    /// Starts a v6.19 walk with the CPU's `avg_idle`.
    pub fn new(avg_idle: Nanos) -> Self {
        NewidleWalk { avg_idle, curr_cost: 0, pulled: 0, rule_2013: false }
    }

    /// Starts a walk under `gate` (the 3.10 walk for the 2013 gate).
    pub fn for_gate(gate: super::config::NewidleGate, avg_idle: Nanos) -> Self {
        NewidleWalk { rule_2013: gate.is_2013(), ..NewidleWalk::new(avg_idle) }
    }

    /// Decide about domain `sd` (state `st`). `dice` is a random number
    /// (only `dice % 1024` is used) for NI_RANDOM.
    pub fn step(&mut self, sd: &SchedDomain, st: &mut NewidleDomainState, ni_random: bool, dice: u32) -> NewidleStep {
        if !self.rule_2013 && self.avg_idle < self.curr_cost.saturating_add(st.max_newidle_lb_cost) {
            st.counters.cost_stops += 1;
            return NewidleStep::Stop;
        }
        if sd.flags & SD_BALANCE_NEWIDLE == 0 {
            return NewidleStep::Skip;
        }
        if !ni_random {
            return NewidleStep::Balance { weight: 1 };
        }
        let w = 1 + st.newidle_ratio;
        if dice % 1024 > w {
            st.update_newidle_stats(0);
            st.counters.random_skips += 1;
            return NewidleStep::Skip;
        }
        NewidleStep::Balance { weight: (1024 + w / 2) / w }
    }

    /// Record one balance at a domain: `cost` ns, `pulled` tasks. Updates the
    /// domain's cost and counters and the CPU's counters. Returns whether to
    /// go on to the next domain (nothing pulled and `continue_balancing`).
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        st: &mut NewidleDomainState,
        cost: Nanos,
        pulled: u32,
        weight: u32,
        now: Nanos,
        continue_balancing: bool,
        cpu: &mut NewidleCounters,
    ) -> bool {
        self.curr_cost = self.curr_cost.saturating_add(cost);
        self.pulled = self.pulled.saturating_add(pulled);
        st.update_newidle_cost(cost, if pulled > 0 { weight } else { 0 }, now);
        for c in [&mut st.counters, cpu] {
            c.attempts += 1;
            c.successes += (pulled > 0) as u64;
            c.tasks_pulled += pulled as u64;
            c.time_ns = c.time_ns.saturating_add(cost);
        }
        pulled == 0 && continue_balancing
    }

    /// End of the walk: raise `max_idle_balance_cost` to this walk's cost.
    pub fn finish(&self, avg: &mut AvgIdle) {
        if !self.rule_2013 {
            avg.set_max_idle_balance_cost(avg.max_idle_balance_cost().max(self.curr_cost));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balance::avg_idle::AvgIdleClamp;
    use crate::balance::config::NewidleGate;

    /// With the pre-3.13 gate (avg_idle against the 0.5 ms migration cost),
    /// a long idle period lifts `snap`'s average to the 1 ms ceiling, so the
    /// next few short periods still pass the gate; `delta` lifts it by at most
    /// 1/8 of the ceiling and stays below the cost: it passes far less often.
    #[test]
    fn migration_cost_gate_passes_less_often_with_delta() {
        let lowest = NewidleDomainState::default();
        let passes = |clamp: AvgIdleClamp| {
            let mut avg = AvgIdle::new();
            let mut n = 0;
            for i in 0..1000u64 {
                let sample = if i % 10 == 9 { 5_000_000 } else { 20_000 };
                let gate = newidle_gate_with(
                    NewidleGate::MigrationCost,
                    SYSCTL_SCHED_MIGRATION_COST,
                    &avg,
                    Some(&lowest),
                    true,
                    false,
                    true,
                );
                n += gate.is_ok() as u32;
                avg.fold(sample, clamp, 200);
            }
            n
        };
        let (snap, delta) = (passes(AvgIdleClamp::Snap), passes(AvgIdleClamp::Delta));
        assert!(snap >= 400, "snap passed {snap} times");
        assert!(delta * 4 < snap, "delta {delta} vs snap {snap}");
        // The v6.19 gate compares with the measured cost instead.
        let mut avg = AvgIdle::new();
        avg.avg_idle = 100_000;
        let cost = newidle_gate_with(NewidleGate::Cost, SYSCTL_SCHED_MIGRATION_COST, &avg, Some(&lowest), true, false, true);
        let old = newidle_gate_with(NewidleGate::MigrationCost, SYSCTL_SCHED_MIGRATION_COST, &avg, Some(&lowest), true, false, true);
        assert!(cost.is_ok());
        assert!(old.is_err());
    }

    /// The 2013 rule decides differently from v6.19's on constructed
    /// cases: it opens with nothing overloaded and with avg_idle below the
    /// measured cost, it keeps walking past a domain whose cost exceeds
    /// avg_idle, and neither a walk nor a decay moves the ceiling.
    #[test]
    fn the_2013_rule_ignores_overload_and_cost() {
        let mut avg = AvgIdle::new();
        avg.avg_idle = 600_000;
        let avg = avg;
        let dear = Some(700_000);
        let gate = |g| newidle_gate_by_cost(g, SYSCTL_SCHED_MIGRATION_COST, &avg, dear, false, false, true);
        assert_eq!(gate(NewidleGate::Cost), Err(NewidleSkip::NotOverloaded));
        assert_eq!(gate(NewidleGate::MigrationCost), Ok(()));
        let overloaded = |g| newidle_gate_by_cost(g, SYSCTL_SCHED_MIGRATION_COST, &avg, dear, true, false, true);
        assert_eq!(overloaded(NewidleGate::Cost), Err(NewidleSkip::AvgIdleTooShort));
        assert_eq!(overloaded(NewidleGate::MigrationCost), Ok(()));

        let sds = crate::topology::SchedDomains::flat(crate::cpumask::CpuMask::first_n(2));
        let sd = &sds.per_cpu(0)[0];
        assert!(sd.flags & SD_BALANCE_NEWIDLE != 0);
        let mut st = NewidleDomainState { max_newidle_lb_cost: 700_000, ..NewidleDomainState::default() };
        let mut today = NewidleWalk::for_gate(NewidleGate::Cost, 600_000);
        assert_eq!(today.step(sd, &mut st, false, 0), NewidleStep::Stop);
        let mut old = NewidleWalk::for_gate(NewidleGate::MigrationCost, 600_000);
        assert_eq!(old.step(sd, &mut st, false, 0), NewidleStep::Balance { weight: 1 });

        let mut a = AvgIdle::new();
        let mut w = NewidleWalk::for_gate(NewidleGate::MigrationCost, 600_000);
        w.curr_cost = 900_000;
        w.finish(&mut a);
        assert_eq!(a.max_idle_balance_cost(), SYSCTL_SCHED_MIGRATION_COST);
        let mut w = NewidleWalk::new(600_000);
        w.curr_cost = 900_000;
        w.finish(&mut a);
        assert_eq!(a.max_idle_balance_cost(), 900_000);

        let mut st = NewidleDomainState { max_newidle_lb_cost: 2_000_000, ..NewidleDomainState::default() };
        let (mut x, mut y) = (AvgIdle::new(), AvgIdle::new());
        let mut p = DecayPass::for_gate(NewidleGate::MigrationCost);
        p.visit(&mut st.clone(), 2 * NSEC_PER_SEC);
        p.finish(&mut x);
        let mut q = DecayPass::for_gate(NewidleGate::Cost);
        q.visit(&mut st, 2 * NSEC_PER_SEC);
        q.finish(&mut y);
        assert_eq!(x.max_idle_balance_cost(), SYSCTL_SCHED_MIGRATION_COST);
        assert!(y.max_idle_balance_cost() > 1_900_000, "{}", y.max_idle_balance_cost());
    }
}
