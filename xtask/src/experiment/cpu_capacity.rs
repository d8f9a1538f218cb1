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

use super::defs::{fmt_pct, v, v_smp};
use super::claims::{Claim, Figure};
use super::{per, split_point, sum, sum_where, Check, Form, Matrix, Mech, Reading, Spec};

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
    (1000.0 * per(cpu_time(l, cpu), sum(l, "schedstat_delta", "rq_cpu_time"))).round() / 10.0
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
        claims: claims(),
        dists: vec![],
        sweeps: vec![],
    }
}

fn ebizzy_threads(pt: &str) -> Option<u32> {
    let (w, params) = split_point("ebizzy", pt);
    if w != "ebizzy" {
        return None;
    }
    params.split(',').find_map(|kv| kv.strip_prefix("threads=")?.parse().ok())
}

/// The slow CPUs' share of the runtime when every CPU runs one task at its capacity: the fast
/// CPUs give a task all their time, the slow ones half (the pressure source takes the rest).
const FULL_SLOW_SHARE: f64 = 100.0 * (0.5 + 0.5) / (1.0 + 1.0 + 0.5 + 0.5);

fn read(m: &Matrix) -> Reading {
    let mut why = Vec::new();
    let mut checks = Vec::new();
    let rec = |p: usize, var: &str| m.result(p, var, "records_per_s");
    let vi = |label: &str| m.variants.iter().position(|x| x.label == label).unwrap();
    // Printout: every group's capacity counts its CPUs, in every variant.
    let printed: Vec<(f64, usize)> = m.variants.iter().map(|v| printed_cores_minus_cpus(&m.cells[0][vi(v.label)].logs[0].raw())).collect();
    why.push(format!(
        "The domain printout (cap= of every group at every level, against the CPUs of its span; 0 = no ghost and no lost core): \
         {} (a group of one CPU prints no cap=, so the flat machine has none to check). It is made when the domains are built, before any pressure, so it shows capacity_orig: 1024 per CPU and per SMT \
         thread (no smt_gain, which Linux dropped in 4.20), and a 2-thread core counts as the 2 CPUs it has.",
        m.variants.iter().zip(&printed).map(|(v, (d, n))| format!("{} {d:+.0} over {n} groups", v.label)).collect::<Vec<_>>().join("; ")
    ));
    // A flat machine's groups are single CPUs, which the printout gives no cap= (as Linux's).
    let printed_ok = printed.iter().all(|(d, _)| *d == 0.0) && printed.iter().any(|(_, n)| *n > 0);
    checks.push(Check::new(
        "every printed group capacity counts exactly the CPUs of its span, in every variant",
        printed_ok,
        "a pre-consolidation variant whose 2-thread core reports capacity_orig 1178 (smt_gain): its SMT groups print 1 core for 2 CPUs",
    ));
    let shares = |p: usize, var: &str| (0..4).map(|c| format!("{:.0}", share_of(m, p, var, c))).collect::<Vec<_>>().join("/");
    let mut thr = Vec::new();
    for p in 0..m.points.len() {
        let Some(n) = ebizzy_threads(&m.points[p]) else { continue };
        let s = rec(p, SYM);
        thr.push(format!(
            "{n} threads {s:.0} flat, {} with CPUs 2-3 at 512, {} SMT, {} SMT asymmetric",
            fmt_pct(crate::stats::pdiff(s, rec(p, ASYM), true)),
            fmt_pct(crate::stats::pdiff(s, rec(p, SMT), true)),
            fmt_pct(crate::stats::pdiff(s, rec(p, SMT_ASYM), true))
        ));
        why.push(format!(
            "ebizzy, {n} threads: runtime shares CPU0/1/2/3 in %: flat {}, CPUs 2-3 at 512 {}, SMT {}, SMT with core 1 at 512 {}; \
             active (misfit) pushes {:.0} and {:.0} in the asymmetric boots, {:.0} flat; idle while others wait {:.2} ms flat, \
             {:.2} ms asymmetric.",
            shares(p, SYM),
            shares(p, ASYM),
            shares(p, SMT),
            shares(p, SMT_ASYM),
            m.mech(p, ASYM, pushed),
            m.mech(p, SMT_ASYM, pushed),
            m.mech(p, SYM, pushed),
            m.mech(p, SYM, |l| sum(l, "schedstat_delta", "idle_wait_ns") / 1e6),
            m.mech(p, ASYM, |l| sum(l, "schedstat_delta", "idle_wait_ns") / 1e6),
        ));
        for var in [ASYM, SMT_ASYM] {
            let slow = m.mech(p, var, slow_share);
            if n == 2 {
                // Two tasks, two full-capacity CPUs: a misfit on a slow CPU is pushed to an idle fast one.
                checks.push(Check::new(
                    format!("ebizzy 2 threads, {var}: the searchers ran on the full-capacity CPUs (slow CPUs' share {slow:.1}% <= 5%)"),
                    slow <= 5.0,
                    "misfit detection off (update_misfit_status() never marking a task): a searcher stays on a slow CPU",
                ));
            } else if n == 4 {
                // One task per CPU: the slow CPUs run theirs at half speed; a lost core would leave one of them idle
                // (share near half of this), a ghost one would stack two tasks on a slow CPU.
                checks.push(Check::new(
                    format!(
                        "ebizzy 4 threads, {var}: every CPU ran a searcher at its capacity (slow CPUs' share {slow:.1}%, one task each gives {FULL_SLOW_SHARE:.1}% ±5)"
                    ),
                    (slow - FULL_SLOW_SHARE).abs() <= 5.0,
                    "ebizzy with 3 threads in this point: one slow CPU left idle (a lost core), its share near half of this",
                ));
            }
        }
        if n == 4 {
            let least = (0..4).map(|c| share_of(m, p, SMT, c)).fold(f64::MAX, f64::min);
            checks.push(Check::new(
                format!("ebizzy 4 threads on 2 cores x 2 threads: every thread ran a searcher (least share {least:.1}% >= 20%: no core lost)"),
                least >= 20.0,
                "ebizzy with 3 threads in this point: one SMT thread idle",
            ));
        }
    }
    if !thr.is_empty() && matches!(m.mode, super::Mode::Sim(_)) {
        // On the simulator every CPU keeps its own virtual time: a busy CPU adds its work, and a
        // slowed one gives its tasks only CAP/1024 of it, so the throughput shows both.
        let four = (0..m.points.len()).find(|&p| ebizzy_threads(&m.points[p]) == Some(4));
        let lost = four.map(|p| crate::stats::pdiff(rec(p, SYM), rec(p, ASYM), true));
        why.push(format!(
            "ebizzy records/s: {}. On the simulator every CPU runs in its own virtual time, so the throughput shows the \
             parallelism and the capacity a slowed CPU loses: with one searcher per CPU, two CPUs at 512 leave 3 of 4 CPUs' \
             worth of capacity, {} of the flat machine's throughput, and the run measured {}.",
            thr.join("; "),
            fmt_pct(-25.0),
            lost.map_or("n/a".into(), fmt_pct)
        ));
    } else if !thr.is_empty() && matches!(m.mode, super::Mode::RealTime(_)) {
        let four = (0..m.points.len()).find(|&p| ebizzy_threads(&m.points[p]) == Some(4));
        let lost = four.map(|p| crate::stats::pdiff(rec(p, SYM), rec(p, ASYM), true));
        why.push(format!(
            "ebizzy records/s: {}. In real time the throughput is the host's: here 4 vCPUs share {} host cores, and two CPUs \
             at 512 (the pressure source spins for half of every tick) cost 4 searchers {} against the {} of capacity \
             they take; how the shared host cores and the balancer's moves split that difference is not separated by \
             these boots.",
            thr.join("; "),
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            lost.map_or("n/a".into(), fmt_pct),
            fmt_pct(-25.0)
        ));
    } else if !thr.is_empty() {
        why.push(format!(
            "ebizzy records/s: {}. Under -icount one virtual nanosecond is one instruction of whichever CPU runs, so the whole \
             machine executes the same instructions per virtual second however many CPUs are busy: the total throughput cannot \
             show parallelism (2 and 6 threads give the same records/s) nor the capacity a slow CPU loses (the pressure source \
             waits in a PAUSE loop that costs few instructions, and, as the equal figures show, the other CPUs execute the \
             instructions it leaves). Where tasks run shows in the runtime shares above; the \
             throughput of a placement needs real-time boots, which this loaded 2-core host cannot give reliably.",
            thr.join("; ")
        ));
    }
    for p in 0..m.points.len() {
        let (w, _) = split_point("ebizzy", &m.points[p]);
        if w == "ebizzy" {
            continue;
        }
        let (metric, hib) = if w == "hackbench" { ("time", false) } else { ("usecs_per_op", false) };
        let f = |var: &str| m.result(p, var, metric);
        why.push(format!(
            "{}: {metric} {:.4} flat, CPUs 2-3 at 512 {}, SMT {}, SMT asymmetric {}{}; runtime shares flat {}, asymmetric {}{}.",
            m.points[p],
            f(SYM),
            fmt_pct(crate::stats::pdiff(f(SYM), f(ASYM), hib)),
            fmt_pct(crate::stats::pdiff(f(SYM), f(SMT), hib)),
            fmt_pct(crate::stats::pdiff(f(SYM), f(SMT_ASYM), hib)),
            if matches!(m.mode, super::Mode::Sim(_)) { "" } else { " (instruction counts, as above)" },
            shares(p, SYM),
            shares(p, ASYM),
            if w == "pipe" { " (the pair is pinned to CPUs 0 and 1, which stay at full capacity: a control)" } else { "" }
        ));
    }
    Reading { why, checks }
}

/// The consolidation's promise as a figure: with one searcher per CPU and CPUs 2-3 at half
/// capacity, each slow CPU runs its one task at its capacity, so the slow pair's share of the
/// runtime falls from half (flat) to a third: -16.7 points. A lost core (a slow CPU idle) or a
/// ghost one (two tasks stacked on a slow CPU) moves it elsewhere. The threshold, 0.3 of the
/// claim (5 points), is the quick form's check's tolerance.
fn claims() -> Vec<Claim> {
    vec![Claim::change(
        "one searcher per CPU at its capacity",
        Figure::Log { label: "slow_cpus_runtime_share", read: slow_share },
        SYM,
        ASYM,
        FULL_SLOW_SHARE - 50.0,
    )
    .absolute()
    .threshold(0.3)
    .at(&["threads=4"])
    .source("Vincent Guittot, 2014: capacity_factor's rounding made ghost cores or lost real ones when CPU capacities were not 1024; counting CPUs and comparing utilisation with capacity places one task on every CPU that exists")
    .fails_with_variant(SYM, "the flat machine on both sides")]
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

    /// The checks read the runtime shares: 2 searchers on the fast CPUs, 4 at one per CPU, SMT
    /// losing no thread.
    #[test]
    fn capacity_checks_follow_the_shares() {
        let s = spec();
        let print = "   groups: 0:{ span=0-1 cap=2048 }, 2:{ span=2-3 cap=2048 }\n";
        let make = |asym4: [u64; 4], smt4: [u64; 4]| {
            synthetic(&s, &["threads=2,ms=300", "threads=4,ms=300"], move |pt, v| {
                let four = pt.starts_with("threads=4");
                let t = match (four, v) {
                    (false, ASYM) | (false, SMT_ASYM) => [100, 100, 0, 0],
                    (false, _) => [0, 100, 100, 0],
                    (true, ASYM) | (true, SMT_ASYM) => asym4,
                    (true, SMT) => smt4,
                    (true, _) => [100, 100, 100, 100],
                };
                format!("{print}{}", boot(1000.0, t))
            })
        };
        let r = read(&make([100, 100, 50, 50], [100, 100, 100, 100]));
        assert!(r.checks.iter().all(|c| c.holds), "{:?}", r.checks);
        assert_eq!(r.checks.len(), 1 + 2 + 2 + 1, "{:?}", r.checks);
        // a lost core: one slow CPU left idle
        let lost = read(&make([100, 100, 50, 0], [100, 100, 100, 100]));
        assert!(lost.checks.iter().any(|c| !c.holds && c.what.contains("4 threads, CPUs 2-3 at 512")), "{:?}", lost.checks);
        // SMT losing a thread
        assert!(read(&make([100, 100, 50, 50], [100, 100, 100, 0])).checks.iter().any(|c| !c.holds));
    }

    /// The claim: the slow pair's share, -16.7 points against the flat machine's half.
    #[test]
    fn capacity_claim_follows_the_slow_cpus_share() {
        use super::super::claims::{decide_all, Verdict};
        use super::super::tests::synthetic_runs;
        let s = spec();
        let make = |slow: u64| {
            synthetic_runs(&s, &["threads=4,ms=300"], 5, move |_, v, run| {
                let t = if v == ASYM || v == SMT_ASYM { [100, 100, slow, slow + run as u64] } else { [100, 100, 100, 100 + run as u64] };
                boot(1000.0, t)
            })
        };
        let v = |slow| decide_all(&s.claims, &make(slow), &crate::stats::bootstrap::Bootstrap::default()).verdict(0).unwrap();
        assert_eq!(v(50), Verdict::Reproduced);
        assert_eq!(v(100), Verdict::NoEffect);
        assert_eq!(v(200), Verdict::Opposite, "the slow pair running more than the fast one");
    }
}
