//! `cpu-capacity`: Vincent Guittot's 2014 cpu_capacity consolidation. Before it, a group's
//! capacity was turned into a count of "cores" by rounding (`capacity_factor`), so CPUs whose
//! capacity was not 1024 (SMT threads at 589 under smt_gain, CPUs with RT or IRQ pressure) made
//! the balancer see ghost cores (more than exist) or lose real ones. Since then a group holds as
//! many tasks as it has CPUs (`group_weight`) and its utilisation is compared with its capacity
//! (fair.c: `group_has_capacity()`, `group_is_overloaded()`), and a task too big for a small CPU
//! is a misfit and moved (`update_misfit_status()`). Here: a flat 4-CPU machine, the same with
//! two CPUs at half capacity (`cpu_capacity=`: a pressure source really takes half their time),
//! 2 cores x 2 threads, and the latter with one core at half capacity.

use fairway_scenarios::Log;

use super::defs::{fmt_pct, v, v_smp, NOISE_PCT};
use super::{split_point, sum, sum_where, Form, Matrix, Mech, Outcome, Reading, Spec};

const SYM: &str = "4 CPUs at 1024";
const ASYM: &str = "CPUs 2-3 at 512";
const SMT: &str = "2 cores x 2 threads";
const SMT_ASYM: &str = "2x2, core 1 at 512";

/// The asymmetric variants' slow CPUs.
const SLOW: [u32; 2] = [2, 3];

fn cpu_time(l: &Log, cpu: u32) -> f64 {
    sum_where(l, "schedstat_delta", "rq_cpu_time", "cpu", &cpu.to_string())
}
/// CPU `cpu`'s share of the tasks' runtime during the workload, %.
fn share(l: &Log, cpu: u32) -> f64 {
    let all = sum(l, "schedstat_delta", "rq_cpu_time");
    if all == 0.0 { 0.0 } else { (1000.0 * cpu_time(l, cpu) / all).round() / 10.0 }
}
fn share0(l: &Log) -> f64 {
    share(l, 0)
}
fn share1(l: &Log) -> f64 {
    share(l, 1)
}
fn share2(l: &Log) -> f64 {
    share(l, 2)
}
fn share3(l: &Log) -> f64 {
    share(l, 3)
}
/// The runtime share of the CPUs that are slow in the asymmetric variants, %.
fn slow_share(l: &Log) -> f64 {
    SLOW.iter().map(|&c| share(l, c)).sum()
}
/// Active-balance pushes (a misfit task, or one the periodic balance could not move).
fn pushed(l: &Log) -> f64 {
    sum(l, "domstat", "alb_pushed")
}
/// Tasks the balancer moved: periodic pulls (busy and idle), newidle pulls, active pushes.
fn moved(l: &Log) -> f64 {
    ["lb_gained_busy", "lb_gained_idle", "lb_gained_newidle", "alb_pushed"].iter().map(|f| sum(l, "domstat", f)).sum()
}

/// The boot printout's groups (`groups: 0:{ span=0-1 cap=2048 }, ...`): Σ over every group with a
/// `cap=` of cap/1024 minus the CPUs of its span, and how many groups that is. 0 means every
/// printed group's capacity counts exactly the CPUs it holds: no ghost core (positive), no lost
/// one (negative).
pub(super) fn printed_cores_minus_cpus(log: &str) -> (f64, usize) {
    let (mut diff, mut n) = (0.0, 0);
    for line in log.lines().filter(|l| l.trim_start().starts_with("groups:")) {
        for g in line.split("{ span=").skip(1) {
            let Some((span, rest)) = g.split_once(' ') else { continue };
            let Some(cap) = rest.strip_prefix("cap=").and_then(|c| c.split_whitespace().next()).and_then(|c| c.parse::<f64>().ok()) else {
                continue;
            };
            let cpus = fairway_scenarios::parse_cpulist(span).map(|c| c.len()).unwrap_or(0) as f64;
            diff += cap / 1024.0 - cpus;
            n += 1;
        }
    }
    (diff, n)
}
fn ghost_cores(l: &Log) -> f64 {
    printed_cores_minus_cpus(&l.raw()).0
}

pub fn spec() -> Spec {
    Spec {
        name: "cpu-capacity",
        claim: "2014, Vincent Guittot's cpu_capacity consolidation: turning a group's capacity into a number of cores by \
                rounding (capacity_factor) saw ghost cores, or lost real ones, whenever CPU capacities were not 1024 (SMT \
                threads under smt_gain, CPUs losing time to RT or IRQ work); counting a group's CPUs and comparing its \
                utilisation with its capacity instead puts one task on every CPU that exists and keeps big tasks off \
                small CPUs.",
        asks: "A flat 4-CPU machine, the same with CPUs 2-3 at half capacity (cpu_capacity=2:512,3:512), 2 cores x 2 threads, \
               and that with core 1 at half capacity: ebizzy-like searchers (2, 4 and 6 threads), hackbench and a pipe pair; \
               where tasks ran (each CPU's share of the runtime), misfit and other balancer moves, throughput, and whether \
               the domain printout's group capacities count the CPUs that exist.",
        workload: "ebizzy",
        variants: vec![
            v(SYM, ""),
            v(ASYM, "cpu_capacity=2:512,3:512"),
            v_smp(SMT, "4,sockets=1,cores=2,threads=2", ""),
            v_smp(SMT_ASYM, "4,sockets=1,cores=2,threads=2", "cpu_capacity=2:512,3:512"),
        ],
        full: Form {
            smp: "4",
            params: "",
            points: &["threads=2,ms=200", "threads=4,ms=200", "threads=6,ms=200", "hackbench:groups=1,loops=50", "pipe:rounds=5000,mode=cross"],
            timeout_s: 600,
        },
        quick: Form { smp: "4", params: "", points: &["threads=4,ms=100"], timeout_s: 120 },
        machine_note: "4 CPUs, flat or as 2 cores x 2 threads, within what 2 host cores emulate. The asymmetry is emulated: a \
                       pressure source takes (1024 - CAP)/1024 of a slowed CPU's time, as RT or IRQ work does on a real one \
                       (docs/OPTIONS.md, cpu_capacity=); QEMU's SMT threads do not share a core's resources, so an SMT shape \
                       changes the domains and their flags, not the speed.",
        mechs: vec![
            Mech { label: "runtime_share_cpu0", unit: "%", read: share0 },
            Mech { label: "runtime_share_cpu1", unit: "%", read: share1 },
            Mech { label: "runtime_share_cpu2", unit: "%", read: share2 },
            Mech { label: "runtime_share_cpu3", unit: "%", read: share3 },
            Mech { label: "alb_pushed", unit: "tasks", read: pushed },
            Mech { label: "balancer_moves", unit: "tasks", read: moved },
            Mech { label: "printed_cores_minus_cpus", unit: "cores", read: ghost_cores },
        ],
        host: None,
        read: read,
    }
}

fn ebizzy_threads(pt: &str) -> Option<u32> {
    let (w, params) = split_point("ebizzy", pt);
    if w != "ebizzy" {
        return None;
    }
    params.split(',').find_map(|kv| kv.strip_prefix("threads=")?.parse().ok())
}

fn read(m: &Matrix) -> Reading {
    let mut why = Vec::new();
    let mut checks = Vec::new();
    let rec = |p: usize, var: &str| m.result(p, var, "records_per_s");
    let mut holds = true;
    let mut tested = false;
    // Printout: every group's capacity counts its CPUs, in every variant.
    let printed: Vec<String> = m
        .variants
        .iter()
        .map(|v| {
            let (d, n) = printed_cores_minus_cpus(&m.cells[0][m.variants.iter().position(|x| x.label == v.label).unwrap()].logs[0].raw());
            format!("{} {d:+.0} over {n} groups", v.label)
        })
        .collect();
    why.push(format!(
        "The domain printout (cap= of every group at every level, against the CPUs of its span): {}. The printout is made when \
         the domains are built, before any pressure, so it shows capacity_orig: 1024 per CPU and per SMT thread (no smt_gain, \
         gone from Linux since 4.20), and a 2-thread core counts as the 2 CPUs it has.",
        printed.join("; ")
    ));
    for p in 0..m.points.len() {
        let Some(n) = ebizzy_threads(&m.points[p]) else { continue };
        let (s, a, t, ta) = (rec(p, SYM), rec(p, ASYM), rec(p, SMT), rec(p, SMT_ASYM));
        let shares = |var: &str| (0..4).map(|c| format!("{:.0}", share_of(m, p, var, c))).collect::<Vec<_>>().join("/");
        // What a capacity-aware balancer can reach: one task per CPU, the fastest CPUs first.
        let caps = [1.0, 1.0, 0.5, 0.5];
        let k = n.clamp(1, 4) as usize;
        let ideal_pct = 100.0 * (caps[..k].iter().sum::<f64>() / k as f64 - 1.0);
        let asym_pct = crate::stats::pdiff(s, a, true);
        why.push(format!(
            "ebizzy, {n} threads: records/s {s:.0} flat, {a:.0} with CPUs 2-3 at 512 ({}; a balancer that fills the fast CPUs \
             first reaches {}), {t:.0} as 2x2 SMT ({}), {ta:.0} with core 1 at 512 ({}); runtime shares CPU0/1/2/3 in %: flat {}, \
             asymmetric {}, SMT {}, SMT asymmetric {}; active pushes (misfit) {:.0} asymmetric against {:.0} flat.",
            fmt_pct(asym_pct),
            fmt_pct(ideal_pct),
            fmt_pct(crate::stats::pdiff(s, t, true)),
            fmt_pct(crate::stats::pdiff(s, ta, true)),
            shares(SYM),
            shares(ASYM),
            shares(SMT),
            shares(SMT_ASYM),
            m.mech(p, ASYM, pushed),
            m.mech(p, SYM, pushed),
        ));
        if n <= 4 {
            tested = true;
            let close = (asym_pct - ideal_pct).abs() <= 5.0;
            holds &= close;
            checks.push((
                format!("ebizzy {n} threads, CPUs 2-3 at 512: records/s within 5 points of the capacity-aware ideal ({} vs {})", fmt_pct(asym_pct), fmt_pct(ideal_pct)),
                close,
            ));
            let smt_same = crate::stats::pdiff(s, t, true).abs() < NOISE_PCT;
            holds &= smt_same;
            checks.push((
                format!("ebizzy {n} threads: 2x2 SMT runs as the flat machine (records/s {}; no core lost)", fmt_pct(crate::stats::pdiff(s, t, true))),
                smt_same,
            ));
        }
        if n == 2 {
            let slow = m.mech(p, ASYM, slow_share);
            why.push(format!(
                "With 2 searchers and 2 fast CPUs, {slow:.1}% of the runtime was on the slow CPUs 2-3 in the asymmetric boot (0% is \
                 where capacity awareness puts them; flat: {:.1}%).",
                m.mech(p, SYM, slow_share)
            ));
        }
    }
    for p in 0..m.points.len() {
        let (w, _) = split_point("ebizzy", &m.points[p]);
        if w == "ebizzy" {
            continue;
        }
        let (metric, hib) = if w == "hackbench" { ("time", false) } else { ("usecs_per_op", false) };
        let f = |var: &str| m.result(p, var, metric);
        why.push(format!(
            "{}: {metric} {:.4} flat, CPUs 2-3 at 512 {}, SMT {}, SMT asymmetric {}{}.",
            m.points[p],
            f(SYM),
            fmt_pct(crate::stats::pdiff(f(SYM), f(ASYM), hib)),
            fmt_pct(crate::stats::pdiff(f(SYM), f(SMT), hib)),
            fmt_pct(crate::stats::pdiff(f(SYM), f(SMT_ASYM), hib)),
            if w == "pipe" { " (the pair is pinned to CPUs 0 and 1, which stay at full capacity: a control)" } else { "" }
        ));
    }
    let outcome = if !tested {
        Outcome::NotReproduced
    } else if holds {
        Outcome::Reproduced
    } else {
        Outcome::NotReproduced
    };
    why.push(match outcome {
        Outcome::Reproduced => "The consolidation's promise holds here: no CPU that exists was left out (every CPU ran its share when \
                                there were tasks for it), none that does not was counted, and the throughput lost to the slow \
                                CPUs is what their capacity costs, no more."
            .into(),
        _ => "Where a check above fails, the balancer either left capacity unused or stacked tasks on the slow CPUs: the shares and \
              the active pushes say which."
            .into(),
    });
    Reading { outcome, why, checks }
}

/// CPU `c`'s runtime share in the cell (`share` of the cell's log).
fn share_of(m: &Matrix, p: usize, var: &str, c: u32) -> f64 {
    match c {
        0 => m.mech(p, var, share0),
        1 => m.mech(p, var, share1),
        2 => m.mech(p, var, share2),
        _ => m.mech(p, var, share3),
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::synthetic;
    use super::*;

    #[test]
    fn the_printout_counts_cores_against_cpus() {
        let log = " domain-0: span=0-1 level=SMT\n  groups: 0:{ span=0 }, 1:{ span=1 }\n  domain-1: span=0-3 level=MC\n   \
                   groups: 0:{ span=0-1 cap=2048 }, 2:{ span=2-3 cap=2048 }\n";
        assert_eq!(printed_cores_minus_cpus(log), (0.0, 2));
        // the 2014 smt_gain: a 2-thread core at 1178 counts as one core, a lost one
        let old = "   groups: 0:{ span=0-1 cap=1178 }, 2:{ span=2-3 cap=1178 }\n";
        let (d, n) = printed_cores_minus_cpus(old);
        assert_eq!(n, 2);
        assert!((d - (2.0 * 1178.0 / 1024.0 - 4.0)).abs() < 1e-9, "{d}");
    }

    fn boot(records: f64, times: [u64; 4]) -> String {
        let mut s = format!("@fw result workload=ebizzy metric=records_per_s value={records} unit=records/s better=higher\n");
        for (c, t) in times.iter().enumerate() {
            s += &format!("@fw schedstat_delta cpu={c} rq_cpu_time={t}\n");
        }
        s
    }

    /// Capacity-aware: 2 threads lose nothing, 4 lose a quarter (two CPUs at half); SMT as flat.
    #[test]
    fn capacity_reading_follows_the_numbers() {
        let s = spec();
        let make = |asym4: f64, smt4: f64| {
            synthetic(&s, &["threads=2,ms=300", "threads=4,ms=300"], move |pt, v| {
                let four = pt.starts_with("threads=4");
                match (four, v) {
                    (false, ASYM) | (false, SMT_ASYM) => boot(1000.0, [100, 100, 0, 0]),
                    (false, _) => boot(1000.0, [100, 0, 100, 0]),
                    (true, ASYM) | (true, SMT_ASYM) => boot(asym4, [100, 100, 50, 50]),
                    (true, SMT) => boot(smt4, [100, 100, 100, 100]),
                    (true, _) => boot(2000.0, [100, 100, 100, 100]),
                }
            })
        };
        let r = read(&make(1500.0, 2000.0));
        assert_eq!(r.outcome, Outcome::Reproduced, "{:?} {:?}", r.why, r.checks);
        assert!(r.checks.iter().all(|c| c.1), "{:?}", r.checks);
        assert!(r.why.iter().any(|w| w.contains("0.0% of the runtime was on the slow CPUs")), "{:?}", r.why);
        // a lost core: the slow pair treated as one CPU, one of them idle
        let lost = read(&make(1250.0, 2000.0));
        assert_eq!(lost.outcome, Outcome::NotReproduced);
        assert!(lost.checks.iter().any(|c| !c.1 && c.0.contains("4 threads, CPUs 2-3")), "{:?}", lost.checks);
        // SMT losing a core
        assert_eq!(read(&make(1500.0, 1500.0)).outcome, Outcome::NotReproduced);
    }
}
