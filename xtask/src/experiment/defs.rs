//! The helpers the experiments' rules share, and `avg-idle`'s matrix, claims and rules (the
//! list is `experiment.rs`'s `all()`; the others each have their file: `wake_balance.rs`, `delayed_dequeue.rs`,
//! `sis_scan_cost.rs`, `cpu_capacity.rs`). The verdicts are the claims' (`claims.rs`: an
//! interval against a threshold proportional to the claimed size); the rules here describe the
//! mechanism's figures and name the checks the quick form asserts.

use fairway_scenarios::Log;

use sched::balance::avg_idle::{hist_bucket, AVG_IDLE_HIST_BUCKETS, AVG_IDLE_HIST_NAMES, SYSCTL_SCHED_MIGRATION_COST};

use super::avg_idle_example;
use super::claims::{Claim, Figure};
use super::sweep::{Arg, Axis, Sweep};
use super::{per, sum, Check, Dist, Form, Matrix, Mech, Reading, SeedSetup, Spec, Variant};

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

const SNAP_MC: &str = "3.10: snap 2x";
const AVG_MC: &str = "Jason: avg 1.5x";
const DELTA_MC: &str = "Rik: delta 1.5x";
const TODAY: &str = "v6.19: avg 2x, cost gate";

/// The seed's claims: each 1.5x rule against the 2x snap, on AIM7 fserver with many users.
pub(super) const JASON_FSERVER_PCT: f64 = 20.0;
pub(super) const RIK_FSERVER_PCT: f64 = 33.7;

const AVG_IDLE_SETUP: &[SeedSetup] = &[
    SeedSetup {
        seed: "The rules (Jason Low, 2013-07-31, against 3.10): a sample above `2*sysctl_sched_migration_cost` set avg_idle \
               to that maximum (snap); his patch averages every sample first, then clamps the average at a maximum lowered to \
               1.5x, and starts avg_idle there; Rik van Riel's variant clamps the sample at 1.5x before averaging. The gate: \
               a newidle balance only if avg_idle >= sysctl_sched_migration_cost (0.5 ms).",
        here: "`avg_idle_clamp=snap avg_idle_ceiling=200`, `avg_idle_clamp=avg avg_idle_ceiling=150`, `avg_idle_clamp=delta \
               avg_idle_ceiling=150`, each with `newidle_gate=migration_cost ni_random=off`: 3.10's gate (no overload test, \
               no per-domain cost stop, the ceiling a multiple of the migration cost) and boot value; v6.19's rule beside them \
               for reference.",
        differs: "Everything else is v6.19's: the load balance a newidle pass runs (group classification, PELT loads), \
                  wakeup placement, EEVDF.",
    },
    SeedSetup {
        seed: "\"if a CPU remains idle for 200,000 ns most of the time, and if the CPU goes idle for 1,200,000 ns, the average \
               is then pushed up to 1,000,000 ns\" (Jason Low's example).",
        here: "`idleperiods`: one thread per CPU (`spread=1`) working 50 us, then sleeping 200 us, one sleep in ten 1.2 ms, \
               each length within ±25% from the seed; the CPUs' idle periods are measured (`@fw idle_period_hist`); a \
               second point has 1.5 threads per CPU, so that runqueues hold tasks to pull. Figures: ops/s and the delay \
               from a sleep's end to running again.",
        differs: "The thread says neither how often the long period comes nor what runs between idle periods: one in ten, \
                  50 us of work and the ±25% spread are this experiment's choices.",
    },
    SeedSetup {
        seed: "AIM7 fserver \"when running it with a high # of users\" on \"an 8 socket machine on the 3.10 kernel\": \"about \
               20%\" with the average clamped at 1.5x; with the sample clamped, on \"the 8 socket HT-enabled case\", fserver \
               +33.7% (other AIM7 loads +14.1% to +16.7%).",
        here: "`fserver` with `io_pct=10`: bursts of 25-75 us between sleeps of 50-150 us, one sleep in ten an I/O wait of \
               1-3 ms (drawn from the seed), at 1, 2 and 4 threads per CPU (QEMU: 4, 8, 16 on 4 CPUs; sim: 160, 320, 640 \
               on `avg-idle-2013`); ops/s for AIM7's jobs/min.",
        differs: "AIM7's fserver is a mix of file-system operations by real processes (page cache, journal, disk); this is \
                  calibrated CPU work and timer sleeps. \"A high # of users\" is no number: the counts are a choice. The \
                  share of disk waits is an assumption.",
    },
    SeedSetup {
        seed: "8 sockets with Hyper-Threading (3.10 era, core count not given).",
        here: "Simulator: preset `avg-idle-2013`, 8 sockets x 10 cores x 2 threads, 8 NUMA nodes (160 CPUs). QEMU: 4 CPUs.",
        differs: "10 cores per socket is Westmere-EX's, not the thread's. What a newidle pass costs across 8 sockets is the \
                  simulator's hardware profile's (`--hw`); under the `icount` profile a pass costs instructions only. QEMU \
                  models no caches.",
    },
];

pub(super) fn avg_idle() -> Spec {
    Spec {
        name: "avg-idle",
        claim: "Jason Low, 2013, \"sched: Reduce overestimating avg_idle\": a long idle period snapped avg_idle to its \
                ceiling (2x the migration cost), so CPUs whose idle periods were mostly short kept trying newidle \
                balances that cost more than the idle time they had. Averaging first and clamping the average at 1.5x \
                gave AIM7 fserver \"about 20%\" on an 8-socket machine with a high number of users; Rik van Riel's \
                variant, clamping the sample at 1.5x before averaging, gave fserver +33.7% (8-socket, HT on).",
        asks: "The three 2013 rules under 3.10's gate (snap 2x; Jason's average clamped at 1.5x; Rik's sample clamped at \
               1.5x), each against its own figure, and v6.19's rule for reference: the 2013 thread's idle periods \
               (idleperiods: about 200 us, one in ten about 1.2 ms) at one and 1.5 threads per CPU, and an AIM7-fserver-like \
               mix with occasional I/O waits at 1, 2 and 4 threads per CPU; throughput, wakeup delay, the measured idle \
               periods, gate openings, newidle attempts, pulls and time, avg_idle at the end; and the patch text's example \
               on the host.",
        setup: AVG_IDLE_SETUP,
        workload: "fserver",
        variants: vec![
            v(SNAP_MC, "avg_idle_clamp=snap avg_idle_ceiling=200 newidle_gate=migration_cost ni_random=off"),
            v(AVG_MC, "avg_idle_clamp=avg avg_idle_ceiling=150 newidle_gate=migration_cost ni_random=off"),
            v(DELTA_MC, "avg_idle_clamp=delta avg_idle_ceiling=150 newidle_gate=migration_cost ni_random=off"),
            v(TODAY, "avg_idle_clamp=avg avg_idle_ceiling=200 newidle_gate=cost"),
        ],
        full: Form {
            smp: "4",
            params: "ms=500",
            points: &[
                "idleperiods:threads=4,spread=1",
                "idleperiods:threads=6,spread=1",
                "threads=4,io_pct=10",
                "threads=8,io_pct=10",
                "threads=16,io_pct=10",
            ],
            timeout_s: 900,
        },
        // One thread per CPU on the seed's idle periods: the gate openings per rule show in 300 ms.
        quick: Form { smp: "4", params: "ms=300", points: &["idleperiods:threads=4,spread=1"], timeout_s: 180 },
        machine_note: "The claim's machine had 8 sockets with HT; QEMU on 2 host cores models 4 CPUs at most sensibly, so \
                       the thread counts are scaled to 4 CPUs (1, 2 and 4 fserver threads per CPU; idleperiods at one and \
                       1.5 per CPU).",
        mechs: vec![
            Mech { label: "idle_periods", unit: "count", read: idle_periods },
            Mech { label: "idle_periods_ge_500us", unit: "%", read: idle_long_share },
            Mech { label: "newidle_gate_open", unit: "count", read: gate_openings },
            Mech { label: "newidle_gate_skips", unit: "count", read: newidle_gate_skips },
            Mech { label: "newidle_attempts", unit: "count", read: newidle_attempts },
            Mech { label: "newidle_pulled", unit: "tasks", read: newidle_pulled },
            Mech { label: "newidle_time", unit: "us", read: newidle_time_us },
            Mech { label: "avg_idle_end", unit: "us", read: avg_idle_us },
            Mech { label: "gate_avg_idle_ge_500us", unit: "%", read: gate_open_share },
        ],
        host: Some(avg_idle_example::report),
        read: read_avg_idle,
        claims: avg_idle_claims(),
        dists: vec![
            Dist { label: "avg_idle at the newidle gate", counts: "gate decisions avg_idle's rule made", read: gate_dist },
            Dist { label: "idle periods", counts: "idle periods folded into avg_idle", read: idle_dist },
        ],
        // Where Jason's gain holds, over what a newidle pass costs across 8 sockets: the lines
        // read per CPU examined and a line's flight between the sockets (`--sweep`, simulator
        // only).
        sweeps: vec![Sweep {
            claim: JASON_CLAIM,
            x: Axis { name: "lines per CPU examined (snapshot_lines)", values: &["2", "32"], arg: Arg::Sim("--hw-set snapshot_lines={}") },
            y: Axis { name: "line across the sockets (line_other_node_ns)", values: &["73", "300"], arg: Arg::Sim("--hw-set line_other_node_ns={}") },
            seeds: None,
        }],
    }
}

const JASON_CLAIM: &str = "Jason's avg clamp 1.5x, fserver";

/// The seed's figures: AIM7 fserver "with a high # of users" on 8 sockets, Jason Low's average
/// clamped at 1.5x about +20%, Rik van Riel's delta variant +33.7%, both against the 2x snap;
/// and the mechanism both cut, the 2013 gate's openings after long idle periods.
fn avg_idle_claims() -> Vec<Claim> {
    let ops = Figure::Result("ops_per_s");
    let opened = Figure::Log { label: "newidle_gate_open", read: gate_openings };
    vec![
        Claim::change(JASON_CLAIM, ops, SNAP_MC, AVG_MC, JASON_FSERVER_PCT)
            .at(&["io_pct="])
            .source("Jason Low, 2013, \"sched: Reduce overestimating avg_idle\": AIM7 fserver \"about 20%\" with a high number of users on an 8-socket machine (3.10)")
            .fails_with_variant(SNAP_MC, "the 2x snap on both sides: no clamp change")
            .or_moved_by_variant(TODAY, "v6.19's rule and gate: the gate opens far less often under load"),
        Claim::change("Rik's delta variant, fserver", ops, SNAP_MC, DELTA_MC, RIK_FSERVER_PCT)
            .at(&["io_pct="])
            .source("Jason Low's reply to Rik van Riel in the same thread: fserver +33.7% with the sample clamped (8-socket, HT on)")
            .fails_with_variant(SNAP_MC, "the 2x snap on both sides: no clamp change")
            .or_moved_by_variant(TODAY, "v6.19's rule and gate: the gate opens far less often under load"),
        Claim::change("Jason's rule opens the 2013 gate less, idleperiods", opened, SNAP_MC, AVG_MC, -50.0)
            .at(&["idleperiods:"])
            .source("the patch text's example: after one 1.2 ms idle period snap keeps avg_idle above the migration cost for 8 more 200 us periods, the 1.5x rules for none")
            .fails_with_variant(SNAP_MC, "snap on both sides: the same openings"),
        Claim::change("Rik's rule opens the 2013 gate less, idleperiods", opened, SNAP_MC, DELTA_MC, -50.0)
            .at(&["idleperiods:"])
            .source("the same example, with the sample clamped")
            .fails_with_variant(SNAP_MC, "snap on both sides: the same openings"),
    ]
}

/// [`gate_hist`] as the plot's bins.
fn gate_dist(l: &Log) -> Vec<(String, f64)> {
    gate_hist(l).iter().enumerate().map(|(i, n)| (AVG_IDLE_HIST_NAMES[i].to_string(), *n)).collect()
}
/// [`idle_hist`] as the plot's bins.
fn idle_dist(l: &Log) -> Vec<(String, f64)> {
    idle_hist(l).iter().enumerate().map(|(i, n)| (AVG_IDLE_HIST_NAMES[i].to_string(), *n)).collect()
}

/// Newidle entries whose gate opened (the runqueue lock dropped to balance), summed over CPUs.
fn gate_openings(l: &Log) -> f64 {
    sum(l, "newidle", "lock_drops")
}
/// `@fw idle_period_hist` summed over CPUs: the idle periods avg_idle averaged, by bucket.
fn idle_hist(l: &Log) -> [f64; AVG_IDLE_HIST_BUCKETS] {
    core::array::from_fn(|i| sum(l, "idle_period_hist", AVG_IDLE_HIST_NAMES[i]))
}
fn idle_periods(l: &Log) -> f64 {
    idle_hist(l).iter().sum()
}
/// The share (%) of the idle periods of 500 us or more (the long ones of the 2013 example).
fn idle_long_share(l: &Log) -> f64 {
    let h = idle_hist(l);
    per(100.0 * h[hist_bucket(SYSCTL_SCHED_MIGRATION_COST)..].iter().sum::<f64>(), h.iter().sum())
}
/// The share (%) of the idle periods of 125-250 us (the 2013 example's 200 us).
fn idle_short_share(l: &Log) -> f64 {
    let h = idle_hist(l);
    per(100.0 * h[hist_bucket(200_000)], h.iter().sum())
}

fn is_idleperiods(pt: &str) -> bool {
    pt.starts_with("idleperiods:")
}

fn read_avg_idle(m: &Matrix) -> Reading {
    let mut why = Vec::new();
    let ex = avg_idle_example::answers();
    let periods = |c: &str, p: u32| ex.iter().find(|a| a.clamp.name() == c && a.ceiling_pct == p).map_or(0, |a| a.periods);
    let (ex_snap, ex_avg, ex_delta) = (periods("snap", 200), periods("avg", 150), periods("delta", 150));
    why.push(format!(
        "On paper (the policy crate's AvgIdle, the patch text's example): after one 1.2 ms idle period, snap at 2x keeps avg_idle \
         at or above the migration cost for {ex_snap} more 200 us idle periods, Jason's average at 1.5x for {ex_avg}, Rik's \
         delta at 1.5x for {ex_delta}; under the 2013 gate each of those periods tries a newidle balance."
    ));
    let vars = [SNAP_MC, AVG_MC, DELTA_MC, TODAY];
    let ip: Vec<usize> = (0..m.points.len()).filter(|&p| is_idleperiods(&m.points[p])).collect();
    let fs: Vec<usize> = (0..m.points.len()).filter(|&p| !is_idleperiods(&m.points[p])).collect();
    let over = |pts: &[usize], var: &str, read: fn(&Log) -> f64| pts.iter().map(|&p| m.mech(p, var, read)).sum::<f64>();
    // The idle periods the rules average: the seed's on the idleperiods points?
    if let Some(&p) = ip.first() {
        why.push(format!(
            "The idle periods (@fw idle_period_hist, all CPUs, {} with the snap rule): {:.0}% of them 125-250 us and {:.1}% of \
             500 us or more ({:.0} periods); the example's are about 200 us, now and then about 1.2 ms.",
            m.points[p],
            m.mech(p, SNAP_MC, idle_short_share),
            m.mech(p, SNAP_MC, idle_long_share),
            m.mech(p, SNAP_MC, idle_periods)
        ));
    }
    let mech_line = |name: &str, pts: &[usize]| {
        format!(
            "{name}: gate openings {}; newidle attempts {}; tasks pulled {}; time balancing {}.",
            vars.iter().map(|v| format!("{v} {:.0}", over(pts, v, gate_openings))).collect::<Vec<_>>().join(", "),
            vars.iter().map(|v| format!("{:.0}", over(pts, v, newidle_attempts))).collect::<Vec<_>>().join(" / "),
            vars.iter().map(|v| format!("{:.0}", over(pts, v, newidle_pulled))).collect::<Vec<_>>().join(" / "),
            vars.iter().map(|v| format!("{:.0} us", over(pts, v, newidle_time_us))).collect::<Vec<_>>().join(" / ")
        )
    };
    // How much of the workload reaches the mechanism: the 2013 gate opens on what share of the
    // idle periods.
    let reach = |pts: &[usize]| {
        vars.iter().map(|v| format!("{v} {:.1}", 100.0 * per(over(pts, v, gate_openings), over(pts, v, idle_periods)))).collect::<Vec<_>>().join(", ")
    };
    if !ip.is_empty() {
        why.push(format!("idleperiods points: newidle gate openings per 100 idle periods {} (a newidle entry that pulls a task ends no idle period, so this can pass 100).", reach(&ip)));
    }
    if !fs.is_empty() {
        why.push(format!("fserver points: newidle gate openings per 100 idle periods {}.", reach(&fs)));
    }
    if !ip.is_empty() {
        why.push(mech_line("idleperiods points", &ip));
    }
    if !fs.is_empty() {
        why.push(mech_line("fserver points", &fs));
    }
    // Each rule against its own figure: the fserver points' ops/s against snap.
    let effect = |var: &str, pts: &[usize]| -> (Vec<f64>, f64) {
        let d: Vec<f64> = pts.iter().map(|&p| crate::stats::pdiff(m.result(p, SNAP_MC, "ops_per_s"), m.result(p, var, "ops_per_s"), true)).collect();
        let mean = if d.is_empty() { f64::NAN } else { crate::stats::amean(&d) };
        (d, mean)
    };
    let per_point = |pts: &[usize], d: &[f64]| pts.iter().zip(d).map(|(&p, x)| format!("{} {}", m.points[p], fmt_pct(*x))).collect::<Vec<_>>().join(", ");
    let (jd, jason) = effect(AVG_MC, &fs);
    let (rd, rik) = effect(DELTA_MC, &fs);
    if !fs.is_empty() {
        why.push(format!(
            "fserver ops/s against snap 2x: Jason's average at 1.5x {} (mean {}; his figure: about +{JASON_FSERVER_PCT}%); Rik's \
             delta at 1.5x {} (mean {}; the thread's figure: +{RIK_FSERVER_PCT}%).",
            per_point(&fs, &jd),
            fmt_pct(jason),
            per_point(&fs, &rd),
            fmt_pct(rik)
        ));
    }
    if !ip.is_empty() {
        let delay = |p: usize, var: &str| m.result(p, var, "wakeup_p99");
        why.push(format!(
            "idleperiods ops/s against snap 2x: Jason {}, Rik {}, v6.19 {}; wakeup delay p99 (us) snap / Jason / Rik / v6.19: {}.",
            per_point(&ip, &effect(AVG_MC, &ip).0),
            per_point(&ip, &effect(DELTA_MC, &ip).0),
            per_point(&ip, &effect(TODAY, &ip).0),
            ip.iter()
                .map(|&p| format!("{} {}", m.points[p], vars.iter().map(|v| format!("{:.1}", delay(p, v))).collect::<Vec<_>>().join(" / ")))
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    // What the extra attempts cost here: newidle time against the CPUs' time.
    let total_s: f64 = (0..m.points.len()).map(|p| secs(m, p)).sum();
    let cpu_us: f64 = (0..m.points.len()).map(|p| secs(m, p) * 1e6 * m.mech(p, SNAP_MC, cpus)).sum();
    let share = |var: &str| 100.0 * m.mech_all(var, newidle_time_us) / cpu_us.max(1.0);
    why.push(format!(
        "Newidle balancing took {} of the CPUs' time ({:.1} s of runs in all): what the rules can win or lose on throughput \
         here, {}.",
        vars.iter().map(|v| format!("{v} {:.3}%", share(v))).collect::<Vec<_>>().join(", "),
        total_s,
        m.cost_words()
    ));
    why.push(format!(
        "v6.19's gate (reference) compares avg_idle with the lowest domain's measured max_newidle_lb_cost ({:.1} us, mean over \
         CPUs and points) once some runqueue holds two tasks: {:.0} gate openings against snap's {:.0} under 3.10's.",
        m.mech_all(TODAY, lowest_lb_cost_us) / m.points.len().max(1) as f64,
        m.mech_all(TODAY, gate_openings),
        m.mech_all(SNAP_MC, gate_openings)
    ));
    let mut checks = vec![Check::new(
        format!("the example: snap 2x keeps the gate open longer than Jason's 1.5x ({ex_snap} > {ex_avg})"),
        ex_snap > ex_avg,
        "the policy crate's avg clamp made to snap (sched::balance::avg_idle): both keep it open as long",
    )];
    if let Some(&p) = ip.first() {
        let (s, a, d) = (m.mech(p, SNAP_MC, gate_openings), m.mech(p, AVG_MC, gate_openings), m.mech(p, DELTA_MC, gate_openings));
        checks.push(Check::new(
            format!("{}: the 2013 gate opens at least twice as often under snap as under Jason's and Rik's rules ({s:.0} vs {a:.0} and {d:.0})", m.points[p]),
            s > 0.0 && a * 2.0 <= s && d * 2.0 <= s,
            "avg_idle_clamp=snap avg_idle_ceiling=200 in the 1.5x variants' place (the same rule: the same openings)",
        ));
        let (short, long) = (m.mech(p, SNAP_MC, idle_short_share), m.mech(p, SNAP_MC, idle_long_share));
        checks.push(Check::new(
            format!("{}: the idle periods are the example's: most 125-250 us ({short:.0}% >= 70%), 5-20% of 500 us or more ({long:.1}%)", m.points[p]),
            short >= 70.0 && (5.0..=20.0).contains(&long),
            "idleperiods with long_pct=0 or short_us=50 (other idle periods)",
        ));
    }
    Reading { why, checks }
}

pub(super) fn idle_wait_ms(l: &Log) -> f64 {
    sum(l, "schedstat_delta", "idle_wait_ns") / 1e6
}

#[cfg(test)]
mod tests {
    use super::super::claims::{decide_all, Verdict, POOLED};
    use super::super::tests::synthetic_runs;
    use super::*;
    use crate::stats::bootstrap::Bootstrap;

    fn newidle(openings: u64, pulled: u64) -> String {
        format!(
            "@fw newidle cpu=0 attempts={openings} successes=0 pulled={pulled} time_ns=1000 gate_skips=0 cost_stops=0 random_skips=0 \
             avg_idle=1000 max_idle_balance_cost=1 entries=5000 lock_drops={openings}\n"
        )
    }
    /// 1000 idle periods, `long` of them of 1-2 ms and the rest 125-250 us.
    fn periods(long: u64) -> String {
        format!("@fw idle_period_hist cpu=0 lt_125us=0 lt_250us={} lt_500us=0 lt_1ms=0 lt_2ms={long} ge_2ms=0\n", 1000 - long)
    }

    /// The avg-idle claims follow the runs: Jason's +20% on the fserver point reproduced, no
    /// effect, opposite and inconclusive as the variant's throughput says; the gate-opening
    /// claims and checks as the openings and the idle periods say.
    #[test]
    fn avg_idle_claims_and_checks_follow_the_numbers() {
        let spec = avg_idle();
        let pts = ["idleperiods:threads=4,spread=1", "threads=4,io_pct=10"];
        // Each run of a cell: the cell's figure, spread by -1, 0, +1, ... percent.
        let make = |ops_avg: f64, open_delta: u64, long: u64| {
            synthetic_runs(&spec, &pts, 6, move |_, v, run| {
                let spread = 1.0 + (run as f64 - 2.5) / 100.0;
                let (ops, open) = match v {
                    AVG_MC => (ops_avg, 100),
                    DELTA_MC => (100.0, open_delta),
                    _ => (100.0, 1000),
                };
                format!(
                    "@fw result workload=fserver metric=ops_per_s value={} unit=ops/s better=higher\n{}{}",
                    ops * spread,
                    newidle(open + run as u64, 1),
                    periods(long)
                )
            })
        };
        let verdict = |ops: f64| decide_all(&spec.claims, &make(ops, 10, 100), &Bootstrap::default()).verdict(0).unwrap();
        assert_eq!(verdict(125.0), Verdict::Reproduced);
        assert_eq!(verdict(101.0), Verdict::NoEffect);
        assert_eq!(verdict(80.0), Verdict::Opposite);
        assert_eq!(verdict(110.0), Verdict::Inconclusive, "+10% sits on the threshold of half the claim");
        let d = decide_all(&spec.claims, &make(125.0, 10, 100), &Bootstrap::default());
        // the gate claims: 100 and 10 openings against 1000, beyond half of -50%
        assert_eq!(d.verdict(2), Some(Verdict::Reproduced), "{:?}", d.rows);
        assert_eq!(d.verdict(3), Some(Verdict::Reproduced), "{:?}", d.rows);
        assert!(d.rows.iter().all(|r| r.claim >= 2 || r.point.contains("io_pct") || r.point == POOLED), "ops claims at the fserver point only: {:?}", d.rows);
        // the failing case, snap in the variant's place: no effect, another verdict
        assert!(d.failing.iter().any(|f| f.claim == 0 && f.verdict == Verdict::NoEffect), "{:?}", d.failing);
        let r = read_avg_idle(&make(125.0, 10, 100));
        assert!(r.checks.iter().all(|c| c.holds), "{:?}", r.checks);
        assert!(r.why[0].contains("for 8 more 200 us idle periods"), "{}", r.why[0]);
        let none = read_avg_idle(&make(101.0, 950, 100));
        assert!(!none.checks[1].holds, "950 of 1000 openings is not half: the check fails");
        let other = read_avg_idle(&make(101.0, 10, 0));
        assert!(!other.checks[2].holds, "no long idle period: not the example's periods");
    }
}
