//! avg_idle clamp variants and the newidle decision flow.

use sched::balance::avg_idle::{AvgIdle, AvgIdleClamp};
use sched::balance::newidle::*;
use sched::topology::{CpuTopology, SchedDomains};

/// Folds `samples` and returns the average after each.
fn run(clamp: AvgIdleClamp, ceiling: u32, samples: &[u64]) -> Vec<u64> {
    let mut a = AvgIdle::new();
    a.avg_idle = 200_000;
    samples
        .iter()
        .map(|&s| {
            a.fold(s, clamp, ceiling);
            a.avg_idle
        })
        .collect()
}

#[test]
fn three_clamps_differ_on_the_same_idle_periods() {
    // 200 µs average, then one 3 ms idle period, then a 50 µs one.
    let s = [3_000_000, 50_000];
    assert_eq!(run(AvgIdleClamp::Snap, 200, &s), vec![1_000_000, 881_250], "snap: to the ceiling");
    assert_eq!(run(AvgIdleClamp::Avg, 200, &s), vec![550_000, 487_500], "avg: (3000-200)/8 added");
    assert_eq!(run(AvgIdleClamp::Delta, 200, &s), vec![300_000, 268_750], "delta: sample clamped to 1 ms first");
    // A huge sample: avg and snap both end at the ceiling, delta moves 1/8.
    let big = [100_000_000];
    assert_eq!(run(AvgIdleClamp::Avg, 200, &big), vec![1_000_000]);
    assert_eq!(run(AvgIdleClamp::Snap, 200, &big), vec![1_000_000]);
    assert_eq!(run(AvgIdleClamp::Delta, 200, &big), vec![300_000]);
    // The 1.5× ceiling.
    assert_eq!(run(AvgIdleClamp::Avg, 150, &big), vec![750_000]);
    assert_eq!(run(AvgIdleClamp::Delta, 150, &big), vec![268_750]);
}

/// Producer/consumer-like idle: nine 50 µs idle periods then one 5 ms one,
/// repeated; newidle tried when the gate passes (lowest domain's
/// max_newidle_lb_cost = 300 µs, overloaded root domain).
fn attempts(clamp: AvgIdleClamp, ceiling: u32) -> u32 {
    let mut a = AvgIdle::new();
    let sd = NewidleDomainState { max_newidle_lb_cost: 300_000, ..Default::default() };
    let mut n = 0;
    let mut now = 1_000_000u64;
    for i in 0..1000 {
        a.enter_newidle(now);
        if newidle_gate(&a, Some(&sd), true, false, true).is_ok() {
            n += 1;
        }
        now += if i % 10 == 9 { 5_000_000 } else { 50_000 };
        a.end_idle(now, clamp, ceiling);
    }
    n
}

#[test]
fn delta_tries_newidle_less_often_than_snap() {
    let (snap, avg, delta) = (attempts(AvgIdleClamp::Snap, 200), attempts(AvgIdleClamp::Avg, 200), attempts(AvgIdleClamp::Delta, 200));
    assert!(delta < snap / 4, "delta {delta} vs snap {snap}");
    assert!(delta <= avg && avg <= snap, "snap {snap} ≥ avg {avg} ≥ delta {delta}");
    assert!(attempts(AvgIdleClamp::Snap, 150) < snap, "a lower ceiling tries less");
}

#[test]
fn gate_reasons() {
    let a = AvgIdle::new();
    let sd = NewidleDomainState { max_newidle_lb_cost: 2_000_000, ..Default::default() };
    assert_eq!(newidle_gate(&a, Some(&sd), true, false, true), Err(NewidleSkip::AvgIdleTooShort));
    assert_eq!(newidle_gate(&a, Some(&Default::default()), false, false, true), Err(NewidleSkip::NotOverloaded));
    assert_eq!(newidle_gate(&a, None, true, false, true), Err(NewidleSkip::NoDomain));
    assert_eq!(newidle_gate(&a, Some(&sd), true, true, true), Err(NewidleSkip::TtwuPending));
    assert_eq!(newidle_gate(&a, Some(&Default::default()), true, false, true), Ok(()));
}

/// The kernel decides the gate under its runqueue lock from a copy of the lowest domain's
/// `max_newidle_lb_cost` (`newidle_gate_by_cost`): the same answer as the gate on the domain's
/// state, for both thresholds and every reason.
#[test]
fn gate_by_cost_is_the_gate_on_the_domain_state() {
    use sched::balance::config::NewidleGate;
    use sched::balance::newidle::{newidle_gate_by_cost, newidle_gate_with};
    for gate in [NewidleGate::Cost, NewidleGate::MigrationCost] {
        for avg_idle in [0, 100_000, 499_999, 500_000, 2_000_000] {
            let mut a = AvgIdle::new();
            a.avg_idle = avg_idle;
            for cost in [None, Some(0), Some(100_000), Some(1_000_000)] {
                let sd = cost.map(|c| NewidleDomainState { max_newidle_lb_cost: c, ..Default::default() });
                for bits in 0..8u32 {
                    let (over, pending, active) = (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0);
                    assert_eq!(
                        newidle_gate_by_cost(gate, 500_000, &a, cost, over, pending, active),
                        newidle_gate_with(gate, 500_000, &a, sd.as_ref(), over, pending, active),
                        "{gate:?} avg_idle={avg_idle} cost={cost:?} bits={bits}"
                    );
                }
            }
        }
    }
}

fn two_level() -> SchedDomains {
    let cpus: Vec<CpuTopology> = (0..8u32)
        .map(|i| CpuTopology { cpu: i as usize, apic_id: i, smt_id: i % 2, core_id: i / 2, pkg_id: 0, llc_id: 0, node: 0 })
        .collect();
    SchedDomains::build(&cpus, None).unwrap()
}

#[test]
fn walk_stops_when_the_next_domain_costs_more_than_the_idle_time_left() {
    let sds = two_level();
    let chain = sds.per_cpu(0);
    assert_eq!(chain.len(), 2);
    let mut st = [NewidleDomainState { max_newidle_lb_cost: 100_000, ..Default::default() }, NewidleDomainState { max_newidle_lb_cost: 300_000, ..Default::default() }];
    let mut cpu = NewidleCounters::default();
    let mut w = NewidleWalk::new(350_000);
    assert_eq!(w.step(&chain[0], &mut st[0], false, 0), NewidleStep::Balance { weight: 1 });
    assert!(w.record(&mut st[0], 80_000, 0, 1, 10, true, &mut cpu), "nothing pulled: go on");
    // 80 µs spent + 300 µs > 350 µs: stop.
    assert_eq!(w.step(&chain[1], &mut st[1], false, 0), NewidleStep::Stop);
    assert_eq!((cpu.attempts, cpu.successes, cpu.time_ns), (1, 0, 80_000));
    // A pull ends the walk and raises max_idle_balance_cost.
    let mut w = NewidleWalk::new(10_000_000);
    w.step(&chain[0], &mut st[0], false, 0);
    assert!(!w.record(&mut st[0], 900_000, 1, 1, 20, true, &mut cpu));
    assert_eq!(st[0].max_newidle_lb_cost, 900_000);
    let mut a = AvgIdle::new();
    w.finish(&mut a);
    assert_eq!(a.max_idle_balance_cost(), 900_000);
    assert_eq!(cpu.tasks_pulled, 1);
}

#[test]
fn max_newidle_lb_cost_decays_after_a_quiet_second() {
    let mut st = NewidleDomainState { max_newidle_lb_cost: 256_000, last_decay_max_lb_cost: 0, ..Default::default() };
    assert!(!st.update_newidle_cost(0, 0, 1_000_000_000), "not before a full second");
    assert!(st.update_newidle_cost(0, 0, 1_000_000_001));
    assert_eq!(st.max_newidle_lb_cost, 253_000);
    assert!(!st.update_newidle_cost(0, 0, 1_500_000_000), "at most once a second");
    // ~59 s half-life.
    let mut t = 1_000_000_001u64;
    for _ in 0..58 {
        t += 1_000_000_001;
        st.update_newidle_cost(0, 0, t);
    }
    assert!((120_000..135_000).contains(&st.max_newidle_lb_cost), "{}", st.max_newidle_lb_cost);
    // Periodic decay recomputes max_idle_balance_cost, floored at 0.5 ms.
    let mut a = AvgIdle::new();
    a.set_max_idle_balance_cost(5_000_000);
    let mut sts = [st];
    decay_newidle_costs(sts.iter_mut(), &mut a, t + 2_000_000_000);
    assert_eq!(a.max_idle_balance_cost(), 500_000);
}

#[test]
fn ni_random_runs_in_proportion_to_success() {
    let sds = two_level();
    let sd = &sds.per_cpu(0)[0];
    let mut st = NewidleDomainState::default();
    assert_eq!(st.newidle_ratio, 512);
    let mut w = NewidleWalk::new(u64::MAX);
    // Ratio 512: dice ≤ 513 runs, with success weight round(1024/513) = 2.
    assert_eq!(w.step(sd, &mut st, true, 513), NewidleStep::Balance { weight: 2 });
    assert_eq!(w.step(sd, &mut st, true, 514), NewidleStep::Skip);
    // Always failing: the ratio falls toward 0 and almost every call skips.
    let mut st = NewidleDomainState::default();
    let mut cpu = NewidleCounters::default();
    let mut runs = 0;
    for i in 0..20_000u32 {
        let dice = i.wrapping_mul(2_654_435_761) >> 22;
        if let NewidleStep::Balance { weight } = w.step(sd, &mut st, true, dice) {
            runs += 1;
            w.record(&mut st, 1000, 0, weight, 0, true, &mut cpu);
        }
    }
    assert!(st.newidle_ratio < 8, "ratio {}", st.newidle_ratio);
    assert!(runs < 5_000, "{runs} of 20000");
    assert!(st.counters.random_skips > 15_000);
}

mod cached_ceiling {
    use proptest::prelude::*;
    use sched::balance::avg_idle::{ceiling_of, AvgIdle, AvgIdleClamp};
    use sched::balance::config::NewidleGate;
    use sched::balance::newidle::{DecayPass, NewidleDomainState, NewidleWalk};

    /// Everything that sets `max_idle_balance_cost` or the ceiling's
    /// percentage, and what reads the ceiling.
    #[derive(Clone, Debug)]
    enum Op {
        Boot(u32),
        Set(u64),
        Walk(u64, bool),
        Decay(u64, bool),
        Fold(u64, u8),
        EndIdle(u64, u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        let cost = prop_oneof![0..5_000_000u64, any::<u64>()];
        let pct = prop_oneof![Just(150u32), Just(200u32), any::<u32>()];
        prop_oneof![
            pct.prop_map(Op::Boot),
            cost.clone().prop_map(Op::Set),
            (cost.clone(), any::<bool>()).prop_map(|(c, g)| Op::Walk(c, g)),
            (cost, any::<bool>()).prop_map(|(c, g)| Op::Decay(c, g)),
            (0..10_000_000u64, 0..3u8).prop_map(|(s, c)| Op::Fold(s, c)),
            (1..10_000_000u64, 0..10_000_000u64).prop_map(|(a, b)| Op::EndIdle(a, b)),
        ]
    }

    proptest! {
        /// The cached ceiling equals the computed one after any sequence of
        /// the setters (fails if one of them does not refresh it), and the
        /// averages it decides equal those of the computed ceiling.
        #[test]
        fn equals_the_computed_one(ops in proptest::collection::vec(op(), 1..40)) {
            let mut pct = 200u32;
            let mut a = AvgIdle::new();
            for op in ops {
                let gate = |g: bool| if g { NewidleGate::MigrationCost } else { NewidleGate::Cost };
                match op {
                    Op::Boot(p) => {
                        pct = p;
                        a = AvgIdle::boot(p);
                    }
                    Op::Set(c) => a.set_max_idle_balance_cost(c),
                    Op::Walk(c, g) => {
                        let mut w = NewidleWalk::for_gate(gate(g), a.avg_idle);
                        w.curr_cost = c;
                        w.finish(&mut a);
                    }
                    Op::Decay(c, g) => {
                        let mut st = NewidleDomainState { max_newidle_lb_cost: c, ..NewidleDomainState::default() };
                        let mut p = DecayPass::for_gate(gate(g));
                        p.visit(&mut st, 1_000_000_000_000);
                        p.finish(&mut a);
                    }
                    Op::Fold(s, c) => {
                        let clamp = [AvgIdleClamp::Snap, AvgIdleClamp::Avg, AvgIdleClamp::Delta][c as usize];
                        let max = ceiling_of(a.max_idle_balance_cost(), pct);
                        let expected = match clamp {
                            AvgIdleClamp::Snap if s > max => max,
                            AvgIdleClamp::Snap => sched::balance::avg_idle::update_avg(a.avg_idle, s),
                            AvgIdleClamp::Avg => sched::balance::avg_idle::update_avg(a.avg_idle, s).min(max),
                            AvgIdleClamp::Delta => sched::balance::avg_idle::update_avg(a.avg_idle, s.min(max)),
                        };
                        a.fold(s, clamp, pct);
                        prop_assert_eq!(a.avg_idle, expected);
                    }
                    Op::EndIdle(start, len) => {
                        a.enter_newidle(start);
                        a.end_idle(start + len, AvgIdleClamp::Avg, pct);
                    }
                }
                prop_assert_eq!(a.ceiling(pct), ceiling_of(a.max_idle_balance_cost(), pct));
                prop_assert_eq!(a.ceiling(150), ceiling_of(a.max_idle_balance_cost(), 150));
            }
        }
    }
}
