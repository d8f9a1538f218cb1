//! The example of the 2013 "Reduce overestimating avg_idle" patch text, computed on the host
//! with the policy crate's own [`AvgIdle`] (the code the kernel runs): a CPU whose idle periods
//! are 200 us long settles, then one 1.2 ms idle period comes; how many 200 us periods follow
//! before `avg_idle` is below the migration cost again (while it is not, the 2013 gate
//! `newidle_gate=migration_cost` lets every one of them try a newidle balance)?

use sched::balance::avg_idle::{AvgIdle, AvgIdleClamp, SYSCTL_SCHED_MIGRATION_COST};

pub const SHORT_NS: u64 = 200_000;
pub const LONG_NS: u64 = 1_200_000;
/// Short periods folded before the long one: enough to settle from the boot value (1 ms).
pub const SETTLE: usize = 200;

/// One variant's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub clamp: AvgIdleClamp,
    pub ceiling_pct: u32,
    /// `avg_idle` settled, right after the long period.
    pub settled: u64,
    pub after_long: u64,
    /// Short periods after the long one until `avg_idle < migration cost` (0: already below).
    pub periods: usize,
}

/// The example for one clamp rule and ceiling, from the boot value at that ceiling, with
/// `max_idle_balance_cost` at the migration cost (as the 2013 gate keeps it): the ceiling is
/// `ceiling_pct`% of 0.5 ms.
pub fn answer(clamp: AvgIdleClamp, ceiling_pct: u32) -> Answer {
    let mut a = AvgIdle::boot(ceiling_pct);
    for _ in 0..SETTLE {
        a.fold(SHORT_NS, clamp, ceiling_pct);
    }
    let settled = a.avg_idle;
    a.fold(LONG_NS, clamp, ceiling_pct);
    let after_long = a.avg_idle;
    let mut periods = 0;
    while a.avg_idle >= SYSCTL_SCHED_MIGRATION_COST {
        a.fold(SHORT_NS, clamp, ceiling_pct);
        periods += 1;
        assert!(periods < 1000, "avg_idle never falls below the migration cost");
    }
    Answer { clamp, ceiling_pct, settled, after_long, periods }
}

/// The variants the experiment names: the pre-2013 snap at 2x, the proposal (delta) at 1.5x,
/// today's average-then-clamp at both ceilings, and delta at 2x.
pub fn answers() -> Vec<Answer> {
    [(AvgIdleClamp::Snap, 200), (AvgIdleClamp::Snap, 150), (AvgIdleClamp::Delta, 150), (AvgIdleClamp::Delta, 200), (AvgIdleClamp::Avg, 150), (AvgIdleClamp::Avg, 200)]
        .into_iter()
        .map(|(c, p)| answer(c, p))
        .collect()
}

pub fn report() -> String {
    let mut s = format!(
        "The patch text's example, with the policy crate's AvgIdle (kernel/sched/src/balance/avg_idle.rs): idle periods of \
         {} us until avg_idle settles ({SETTLE} of them from the boot value), then one of {} us; periods of {} us that follow \
         until avg_idle < the migration cost ({} us): under newidle_gate=migration_cost each of them still tries a newidle balance.\n\n",
        SHORT_NS / 1000,
        LONG_NS / 1000,
        SHORT_NS / 1000,
        SYSCTL_SCHED_MIGRATION_COST / 1000
    );
    s += &format!("{:<16} {:>8} {:>12} {:>16} {:>8}\n", "avg_idle_clamp", "ceiling", "settled_ns", "after_1.2ms_ns", "periods");
    for a in answers() {
        s += &format!("{:<16} {:>7}% {:>12} {:>16} {:>8}\n", a.clamp.name(), a.ceiling_pct, a.settled, a.after_long, a.periods);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand from `avg += (sample - avg) / 8`, truncating, ceiling = pct x 500 us.
    #[test]
    fn the_patch_example_by_hand() {
        // settled: 1 ms - 800 us decays by 7/8 per period to within 8 ns of 200 us (truncation
        // stops the last step: (200000 - avg)/8 is 0 once avg - 200000 < 8)
        let snap = answer(AvgIdleClamp::Snap, 200);
        assert!(snap.settled >= SHORT_NS && snap.settled < SHORT_NS + 8, "{snap:?}");
        // snap: 1.2 ms is over the 1 ms ceiling, which sets avg_idle to 1 ms
        assert_eq!(snap.after_long, 1_000_000);
        // real-valued: 200 + 800 (7/8)^n < 500  <=>  (7/8)^n < 3/8  <=>  n > ln(3/8)/ln(7/8) = 7.35
        assert_eq!(snap.periods, 8);
        // snap at 1.5x: 750 us: 200 + 550 (7/8)^n < 500 <=> (7/8)^n < 300/550 <=> n > 4.54
        let snap150 = answer(AvgIdleClamp::Snap, 150);
        assert_eq!((snap150.after_long, snap150.periods), (750_000, 5));
        // delta at 1.5x: the sample is clamped to 750 us first: avg = 200 + 550/8 = 268.75 us < 500
        let delta = answer(AvgIdleClamp::Delta, 150);
        assert_eq!(delta.periods, 0);
        assert!(delta.after_long.abs_diff(268_750) < 8, "{delta:?}");
        // avg (today): 200 + 1000/8 = 325 us < 500: no extra period either
        let avg = answer(AvgIdleClamp::Avg, 200);
        assert_eq!(avg.periods, 0);
        assert!(avg.after_long.abs_diff(325_000) < 8, "{avg:?}");
    }
}
