//! The experiments: the list, the helpers their rules share, and `avg-idle`'s matrix, claims
//! and rules (the others each have their file: `wake_balance.rs`, `delayed_dequeue.rs`,
//! `sis_scan_cost.rs`, `cpu_capacity.rs`). The verdicts are the claims' (`claims.rs`: an
//! interval against a threshold proportional to the claimed size); the rules here describe the
//! mechanism's figures and name the checks the quick form asserts.

use fairway_scenarios::Log;

use sched::balance::avg_idle::{hist_bucket, AVG_IDLE_HIST_BUCKETS, AVG_IDLE_HIST_NAMES, SYSCTL_SCHED_MIGRATION_COST};

use super::avg_idle_example;
use super::claims::{Claim, Figure};
use super::{change, sum, Check, Dist, Form, Matrix, Mech, Reading, Spec, Variant};

pub fn all() -> Vec<Spec> {
    vec![avg_idle(), super::wake_balance::spec(), super::delayed_dequeue::spec(), super::sis_scan_cost::spec(), super::cpu_capacity::spec()]
}

pub(super) fn v(label: &'static str, append: &'static str) -> Variant {
    Variant { label, append, smp: "", sim_args: "" }
}

/// A variant on another machine than the form's (`-smp` as QEMU takes it).
pub(super) fn v_smp(label: &'static str, smp: &'static str, append: &'static str) -> Variant {
    Variant { label, append, smp, sim_args: "" }
}

fn newidle_attempts(l: &Log) -> f64 {
    sum(l, "newidle", "attempts")
}
fn newidle_pulled(l: &Log) -> f64 {
    sum(l, "newidle", "pulled")
}
fn newidle_time_us(l: &Log) -> f64 {
    sum(l, "newidle", "time_ns") / 1000.0
}
fn newidle_gate_skips(l: &Log) -> f64 {
    sum(l, "newidle", "gate_skips")
}
/// The CPUs of the boot (one `newidle` record each).
fn cpus(l: &Log) -> f64 {
    l.records("newidle").count() as f64
}
/// avg_idle at the end of the run, the mean over CPUs.
fn avg_idle_us(l: &Log) -> f64 {
    let n = l.records("newidle").count().max(1) as f64;
    sum(l, "newidle", "avg_idle") / n / 1000.0
}

/// `@fw avg_idle_hist` summed over CPUs: how often the newidle gate saw avg_idle in each bucket
/// while something was overloaded (`sched::balance::avg_idle::hist_bucket`).
fn gate_hist(l: &Log) -> [f64; AVG_IDLE_HIST_BUCKETS] {
    core::array::from_fn(|i| sum(l, "avg_idle_hist", AVG_IDLE_HIST_NAMES[i]))
}
/// The share (%) of those gate decisions with avg_idle at or above the 500 us migration cost: the
/// 2013 gate's open side.
fn gate_open_share(l: &Log) -> f64 {
    let h = gate_hist(l);
    let all: f64 = h.iter().sum();
    let open: f64 = h[hist_bucket(SYSCTL_SCHED_MIGRATION_COST)..].iter().sum();
    if all > 0.0 { 100.0 * open / all } else { 0.0 }
}

/// The lowest domain's `max_newidle_lb_cost` (what today's gate compares avg_idle with), mean
/// over CPUs, in us: each CPU's first `newidle_sd` record is its lowest domain.
fn lowest_lb_cost_us(l: &Log) -> f64 {
    let mut seen = Vec::new();
    let mut total = 0.0;
    for r in l.records("newidle_sd") {
        let cpu = r.get("cpu").unwrap_or("").to_string();
        if !seen.contains(&cpu) {
            total += r.num("max_newidle_lb_cost").unwrap_or(0) as f64;
            seen.push(cpu);
        }
    }
    total / seen.len().max(1) as f64 / 1000.0
}

/// The workload's seconds from a point's command line (`ms=`), 1 if absent.
fn secs(m: &Matrix, p: usize) -> f64 {
    let line = &m.cells[p][0].cmdline;
    line.split([',', ' '])
        .find_map(|kv| kv.strip_prefix("ms=").and_then(|v| v.parse::<f64>().ok()))
        .map_or(1.0, |ms| ms / 1000.0)
}

pub(super) fn fmt_pct(x: f64) -> String {
    if x.is_finite() { format!("{x:+.1}%") } else { "n/a".into() }
}

// ---------------------------------------------------------------------------------------------
// avg-idle

const SNAP_MC: &str = "snap 2x, 2013 gate";
const DELTA_MC: &str = "delta 1.5x, 2013 gate";
const AVG_MC: &str = "avg 1.5x, 2013 gate";
const SNAP_COST: &str = "snap 2x, today's gate";
const DELTA_COST: &str = "delta 1.5x, today's gate";
const TODAY: &str = "avg 2x, today's gate";

fn avg_idle() -> Spec {
    Spec {
        name: "avg-idle",
        claim: "Jason Low, 2013, \"sched: Reduce overestimating avg_idle\": a long idle period snapped avg_idle to its \
                ceiling (2x the migration cost), so CPUs whose idle periods were mostly short kept trying newidle \
                balances that cost more than the idle time they had; clamping the sample before averaging (delta) with \
                a 1.5x ceiling gave AIM7 fserver about +20% on an 8-socket machine with many users.",
        asks: "avg_idle_clamp=snap (ceiling 2x) versus delta/avg (ceiling 1.5x), under the 2013 gate \
               (newidle_gate=migration_cost) and today's (the measured max_newidle_lb_cost): the prodcons mix (short idle \
               periods, one long in ten) and the fserver-like mix at rising thread counts; throughput, newidle attempts, \
               pulls and time, avg_idle at the end; and the patch text's example on the host.",
        workload: "fserver",
        variants: vec![
            v(SNAP_MC, "avg_idle_clamp=snap avg_idle_ceiling=200 newidle_gate=migration_cost"),
            v(DELTA_MC, "avg_idle_clamp=delta avg_idle_ceiling=150 newidle_gate=migration_cost"),
            v(AVG_MC, "avg_idle_clamp=avg avg_idle_ceiling=150 newidle_gate=migration_cost"),
            v(SNAP_COST, "avg_idle_clamp=snap avg_idle_ceiling=200 newidle_gate=cost"),
            v(DELTA_COST, "avg_idle_clamp=delta avg_idle_ceiling=150 newidle_gate=cost"),
            v(TODAY, "avg_idle_clamp=avg avg_idle_ceiling=200 newidle_gate=cost"),
        ],
        full: Form {
            smp: "4",
            params: "ms=500",
            points: &["prodcons:pairs=4", "threads=4", "threads=8", "threads=16"],
            timeout_s: 600,
        },
        // The mechanism needs 4 CPUs and a few hundred ms of prodcons to show (at -smp 2, 150 ms,
        // v6.19's sampling left 2 attempts on either side); fserver's throughput is the full form's.
        quick: Form { smp: "4", params: "ms=300", points: &["prodcons:pairs=4"], timeout_s: 180 },
        machine_note: "The claim's machine had 8 sockets (80 CPUs); QEMU on 2 host cores models 4 CPUs at most \
                       sensibly, so the thread counts are scaled to 4 CPUs (1, 2 and 4 fserver threads per CPU).",
        mechs: vec![
            Mech { label: "newidle_attempts", unit: "count", read: newidle_attempts },
            Mech { label: "newidle_pulled", unit: "tasks", read: newidle_pulled },
            Mech { label: "newidle_time", unit: "us", read: newidle_time_us },
            Mech { label: "newidle_gate_skips", unit: "count", read: newidle_gate_skips },
            Mech { label: "avg_idle_end", unit: "us", read: avg_idle_us },
            Mech { label: "avg_idle_ge_500us", unit: "%", read: gate_open_share },
        ],
        host: Some(avg_idle_example::report),
        read: read_avg_idle,
        claims: avg_idle_claims(),
        dists: vec![Dist { label: "avg_idle at the newidle gate", counts: "gate decisions while a CPU was overloaded", read: gate_dist }],
        sweeps: vec![],
    }
}

/// The seed's figures: AIM7 fserver "with a high number of users" on 8 sockets, Jason Low's
/// avg clamp at 1.5x +20%, Rik van Riel's delta variant +33.7%, both against the 2x snap.
fn avg_idle_claims() -> Vec<Claim> {
    let ops = Figure::Result("ops_per_s");
    vec![
        Claim::change("Jason's avg clamp 1.5x, fserver", ops, SNAP_MC, AVG_MC, 20.0)
            .at(&["threads="])
            .source("Jason Low, 2013, \"sched: Reduce overestimating avg_idle\": AIM7 fserver about +20% with many users on 8 sockets")
            .fails_with_variant(SNAP_COST, "the 2x snap under today's gate: no clamp change"),
        Claim::change("Rik's delta variant, fserver", ops, SNAP_MC, DELTA_MC, 33.7)
            .at(&["threads="])
            .source("Rik van Riel's reply in the same thread: fserver +33.7% with the delta variant")
            .fails_with_variant(SNAP_COST, "the 2x snap under today's gate: no clamp change"),
        Claim::change("delta cuts newidle attempts, prodcons", Figure::Log { label: "newidle_attempts", read: newidle_attempts }, SNAP_MC, DELTA_MC, -50.0)
            .at(&["prodcons"])
            .source("the patch text's example: after one 1.2 ms idle period snap keeps avg_idle above the migration cost for 8 more 200 us periods, delta for none")
            .fails_with_variant(SNAP_COST, "snap again, under today's gate: the same clamp"),
    ]
}

/// [`gate_hist`] as the plot's bins.
fn gate_dist(l: &Log) -> Vec<(String, f64)> {
    gate_hist(l).iter().enumerate().map(|(i, n)| (AVG_IDLE_HIST_NAMES[i].to_string(), *n)).collect()
}

fn read_avg_idle(m: &Matrix) -> Reading {
    let mut why = Vec::new();
    let ex = avg_idle_example::answers();
    let periods = |c: &str, p: u32| ex.iter().find(|a| a.clamp.name() == c && a.ceiling_pct == p).map_or(0, |a| a.periods);
    let (ex_snap, ex_delta) = (periods("snap", 200), periods("delta", 150));
    why.push(format!(
        "On paper (the policy crate's AvgIdle, the patch text's example): after one 1.2 ms idle period, snap at 2x keeps avg_idle \
         at or above the migration cost for {ex_snap} more 200 us idle periods, delta at 1.5x for {ex_delta}; under the 2013 gate \
         each of those periods tries a newidle balance."
    ));
    // The mechanism in QEMU: newidle attempts per second, summed over the points.
    let total_s: f64 = (0..m.points.len()).map(|p| secs(m, p)).sum();
    let rate = |var: &str| m.mech_all(var, newidle_attempts) / total_s;
    let (a_snap, a_delta, a_avg) = (rate(SNAP_MC), rate(DELTA_MC), rate(AVG_MC));
    why.push(format!(
        "2013 gate, all points: newidle attempts per second snap {a_snap:.0}, delta {a_delta:.0} ({}), avg 1.5x {a_avg:.0}; \
         pulls {:.0} / {:.0}; time balancing {:.0} / {:.0} us per second.",
        fmt_pct(change(a_snap, a_delta)),
        m.mech_all(SNAP_MC, newidle_pulled) / total_s,
        m.mech_all(DELTA_MC, newidle_pulled) / total_s,
        m.mech_all(SNAP_MC, newidle_time_us) / total_s,
        m.mech_all(DELTA_MC, newidle_time_us) / total_s,
    ));
    let (c_snap, c_delta, c_today) = (rate(SNAP_COST), rate(DELTA_COST), rate(TODAY));
    let lb_cost = m.mech_all(TODAY, lowest_lb_cost_us) / m.points.len().max(1) as f64;
    why.push(format!(
        "Today's gate (avg_idle against the measured max_newidle_lb_cost, 3.13 on): attempts per second snap {c_snap:.0}, delta \
         {c_delta:.0} ({}), today's avg 2x {c_today:.0}. {}",
        fmt_pct(change(c_snap, c_delta)),
        if (change(c_snap, c_delta)).abs() < (change(a_snap, a_delta)).abs() / 2.0 {
            format!(
                "The clamp rule matters far less under it: the measured cost (max_newidle_lb_cost of the lowest domain, mean over \
                 CPUs and points: {lb_cost:.1} us) is far below the 500 us migration cost, so avg_idle clears the gate with any \
                 of the rules."
            )
        } else {
            format!("The clamp rule still moves the attempts under it (the measured cost: {lb_cost:.1} us).")
        }
    ));
    // The distribution of avg_idle where it decides something: at the gate, while a CPU was overloaded.
    let dist = |var: &str| {
        let mut h = [0.0; AVG_IDLE_HIST_BUCKETS];
        for p in 0..m.points.len() {
            for c in &m.cells[p][m.variants.iter().position(|v| v.label == var).unwrap_or(0)].logs {
                for (a, b) in h.iter_mut().zip(gate_hist(c)) {
                    *a += b;
                }
            }
        }
        let all: f64 = h.iter().sum::<f64>().max(1.0);
        h.iter().map(|x| format!("{:.0}", 100.0 * x / all)).collect::<Vec<_>>().join("/")
    };
    why.push(format!(
        "The distribution of avg_idle at the newidle gate while something was overloaded (@fw avg_idle_hist, all points, % of \
         the decisions under 125 us / 250 / 500 / 1 ms / 2 ms / above; the 2013 gate opens from 500 us): snap {}, delta {}, \
         avg 1.5x {} under the 2013 gate; snap {}, delta {}, today's {} under today's.",
        dist(SNAP_MC),
        dist(DELTA_MC),
        dist(AVG_MC),
        dist(SNAP_COST),
        dist(DELTA_COST),
        dist(TODAY)
    ));
    // The effect newidle balancing exists for: a CPU idle while a CPU of its domain has a queue.
    let iw = |var: &str| m.mech_all(var, idle_wait_ms);
    why.push(format!(
        "Idle while others wait (Σ idle_wait_ns over CPUs and points; only waiting tasks the idle CPU may run count): snap {:.2} ms, delta {:.2} ms ({}), avg 1.5x {:.2} ms under the \
         2013 gate; snap {:.2}, delta {:.2}, today's {:.2} ms under today's.",
        iw(SNAP_MC),
        iw(DELTA_MC),
        fmt_pct(change(iw(SNAP_MC), iw(DELTA_MC))),
        iw(AVG_MC),
        iw(SNAP_COST),
        iw(DELTA_COST),
        iw(TODAY)
    ));
    // The headline's figures per point (the verdict is the claims'): fserver throughput against snap.
    let fs: Vec<usize> = (0..m.points.len()).filter(|&p| !m.points[p].starts_with("prodcons")).collect();
    let per_point = |var: &str| -> Vec<String> {
        fs.iter()
            .map(|&p| format!("{} {}", m.points[p], fmt_pct(crate::stats::pdiff(m.result(p, SNAP_MC, "ops_per_s"), m.result(p, var, "ops_per_s"), true))))
            .collect()
    };
    if !fs.is_empty() {
        why.push(format!(
            "fserver ops/s against snap 2x under the 2013 gate, means of the runs: delta 1.5x {}; avg 1.5x {} (the claims: +33.7% \
             and +20% with many users on 8 sockets).",
            per_point(DELTA_MC).join(", "),
            per_point(AVG_MC).join(", ")
        ));
        // What the extra attempts cost here: newidle time against the CPUs' time, and how many of
        // them the fserver points (the throughput) saw at all.
        let cpu_us: f64 = (0..m.points.len()).map(|p| secs(m, p) * 1e6 * m.mech(p, SNAP_MC, cpus)).sum();
        let share = |var: &str| 100.0 * m.mech_all(var, newidle_time_us) / cpu_us.max(1.0);
        let fs_attempts = |var: &str| fs.iter().map(|&p| m.mech(p, var, newidle_attempts)).sum::<f64>();
        why.push(format!(
            "What newidle balancing cost here: {:.3}% of the CPUs' time with snap and {:.3}% with delta; the fserver points made \
             {:.0} (snap) and {:.0} (delta) newidle attempts in all. The cost of one pass is this engine's ({}); what a costlier \
             pass would change is not measured by this matrix.",
            share(SNAP_MC),
            share(DELTA_MC),
            fs_attempts(SNAP_MC),
            fs_attempts(DELTA_MC),
            m.cost_words()
        ));
    }
    let mut checks = vec![Check::new(
        format!("the example: snap 2x needs more idle periods than delta 1.5x ({ex_snap} > {ex_delta})"),
        ex_snap > ex_delta,
        "the policy crate's delta clamp made to snap (sched::balance::avg_idle): both need the same periods",
    )];
    if let Some(p) = m.points.iter().position(|p| p.starts_with("prodcons")) {
        let (s, d) = (m.mech(p, SNAP_MC, newidle_attempts), m.mech(p, DELTA_MC, newidle_attempts));
        checks.push(Check::new(
            format!("prodcons, 2013 gate: delta tries at most half the newidle balances of snap ({d:.0} vs {s:.0})"),
            d * 2.0 <= s,
            "avg_idle_clamp=snap in the delta variant's place (the same clamp: the same attempts)",
        ));
    }
    Reading { why, checks }
}

pub(super) fn idle_wait_ms(l: &Log) -> f64 {
    sum(l, "schedstat_delta", "idle_wait_ns") / 1e6
}

#[cfg(test)]
mod tests {
    use super::super::claims::{decide_all, Verdict};
    use super::super::tests::synthetic_runs;
    use super::*;
    use crate::stats::bootstrap::Bootstrap;

    fn newidle(attempts: u64, pulled: u64) -> String {
        format!("@fw newidle cpu=0 attempts={attempts} successes=0 pulled={pulled} time_ns=1000 gate_skips=0 avg_idle=1000 max_idle_balance_cost=1\n")
    }

    /// The avg-idle claims follow the runs: Jason's +20% reproduced, no effect, opposite and
    /// inconclusive as the variant's throughput says; the mechanism's check as its attempts say.
    #[test]
    fn avg_idle_claims_and_checks_follow_the_numbers() {
        let spec = avg_idle();
        let pts = ["prodcons:pairs=4", "threads=4"];
        // Each run of a cell: the cell's figure, spread by -1, 0, +1, ... percent.
        let make = |ops_avg: f64, attempts_delta: u64| {
            synthetic_runs(&spec, &pts, 6, move |_, v, run| {
                let spread = 1.0 + (run as f64 - 2.5) / 100.0;
                let (ops, att) = match v {
                    AVG_MC => (ops_avg, 1000),
                    DELTA_MC => (100.0, attempts_delta),
                    _ => (100.0, 1000),
                };
                format!("@fw result workload=fserver metric=ops_per_s value={} unit=ops/s better=higher\n{}", ops * spread, newidle(att, 1))
            })
        };
        let verdict = |ops: f64| {
            let d = decide_all(&spec.claims, &make(ops, 10), &Bootstrap::default());
            d.verdict(0).unwrap()
        };
        assert_eq!(verdict(125.0), Verdict::Reproduced);
        assert_eq!(verdict(101.0), Verdict::NoEffect);
        assert_eq!(verdict(80.0), Verdict::Opposite);
        assert_eq!(verdict(110.0), Verdict::Inconclusive, "+10% sits on the threshold of half the claim");
        let d = decide_all(&spec.claims, &make(125.0, 10), &Bootstrap::default());
        // the mechanism's claim: 10 against 1000 attempts, beyond half of -50%
        assert_eq!(d.verdict(2), Some(Verdict::Reproduced));
        // the failing case, snap under today's gate in the variant's place: no effect, another verdict
        assert!(d.failing.iter().any(|f| f.claim == 0 && f.verdict == Verdict::NoEffect), "{:?}", d.failing);
        let r = read_avg_idle(&make(125.0, 10));
        assert!(r.checks.iter().all(|c| c.holds), "{:?}", r.checks);
        assert!(r.why[0].contains("for 8 more 200 us idle periods, delta at 1.5x for 0"), "{}", r.why[0]);
        let none = read_avg_idle(&make(101.0, 950));
        assert!(!none.checks[1].holds, "950 of 1000 attempts is not half: the quick check fails");
    }
}
