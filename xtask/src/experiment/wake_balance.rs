//! `wake-balance`: the 2005 debate on SD_WAKE_AFFINE and SD_WAKE_BALANCE (Ken Chen's OLTP,
//! Nick Piggin's tbench on a dual Xeon) and the idle-gated rule that came out of it, with the
//! 2005 kernels' own rules as the variants: the matrix and the rules that read it.

use fairway_scenarios::Log;

use super::claims::{Claim, Figure};
use super::defs::{fmt_pct, idle_wait_ms, v};
use super::sweep::{Arg, Axis, Sweep};
use super::{sum, sum_where, Check, Dist, Form, Matrix, Mech, Reading, SeedSetup, Spec};

const V2612: &str = "2.6.12";
const KEN_OFF: &str = "Ken: CPU-domain flags off";
const REMOVED: &str = "no wake balancing";
const INGO: &str = "Ingo #3: idle gate";
const TODAY: &str = "v6.19";

/// Ken Chen's figures, each against 2.6.12 on his OLTP: both flags off in the CPU domain, then
/// the wake-up balancing code removed as well, then Ingo Molnar's patch #3.
pub(super) const KEN_FLAGS_OFF_PCT: f64 = 2.15;
pub(super) const KEN_REMOVED_PCT: f64 = 2.35;
pub(super) const KEN_INGO_PCT: f64 = 2.2;

/// Nick Piggin's tbench on a dual Xeon (MB/s, three runs): processes, 2.6.13-rc4, no wake
/// balancing.
pub(super) const NICK_TBENCH: &[(u32, [f64; 3], [f64; 3])] = &[
    (1, [187.0, 183.0, 179.0], [180.0, 180.0, 177.0]),
    (2, [260.0, 259.0, 256.0], [254.0, 254.0, 253.0]),
    (3, [340.0, 320.0, 349.0], [268.0, 270.0, 348.0]),
    (4, [504.0, 496.0, 500.0], [345.0, 290.0, 500.0]),
];

fn affine(l: &Log) -> f64 {
    sum(l, "domstat", "ttwu_move_affine")
}
fn passive(l: &Log) -> f64 {
    sum(l, "domstat", "ttwu_move_balance")
}
fn remote_smt(l: &Log) -> f64 {
    sum_where(l, "domstat", "ttwu_wake_remote", "level", "SMT")
}
fn remote_pkg(l: &Log) -> f64 {
    sum_where(l, "domstat", "ttwu_wake_remote", "level", "PKG")
}
fn wakeups(l: &Log) -> f64 {
    sum(l, "schedstat_delta", "ttwu_count")
}
fn round_trips(l: &Log) -> f64 {
    sum(l, "tbench", "round_trips")
}
/// Wakeups CPU 0 performed (`ttwu_count` counts on the waking CPU).
fn wakeups_by_cpu0(l: &Log) -> f64 {
    sum_where(l, "schedstat_delta", "ttwu_count", "cpu", "0")
}
fn oltp_steps(l: &Log) -> f64 {
    sum(l, "oltp", "steps")
}
fn oltp_completed(l: &Log) -> f64 {
    sum(l, "oltp", "completed")
}
fn oltp_migrations(l: &Log) -> f64 {
    sum(l, "oltp", "migrations")
}

const WAKE_SETUP: &[SeedSetup] = &[
    SeedSetup {
        seed: "The rules of 2.6.12's try_to_wake_up(), quoted in Ingo Molnar's removal patch: in the waking CPU's lowest \
               domain holding the wakee's CPU, SD_WAKE_AFFINE moves it to the waking CPU when `(tl <= load && tl + \
               target_load(cpu) <= SCHED_LOAD_SCALE) || 100*(tl + SCHED_LOAD_SCALE) <= imbalance*load` (`imbalance = 100 + \
               (imbalance_pct - 100)/2`, `tl` less one task if sync), else SD_WAKE_BALANCE when `imbalance*this_load <= \
               100*load`; then wake_idle(). Ken Chen turned both flags off \"in the cpu sd domain\" (+2.15%) and deleted \
               the code (another +0.2%); Ingo's patch #3 balances only \"if this CPU (or any SMT sibling) is idle\" (Ken: \
               +2.2%, \"the same effectiveness\").",
        here: "`wake_balance=2005` (2.6.12, flags as its generic topology: siblings AFFINE and IDLE at 110%, the CPU \
               domain AFFINE, IDLE and BALANCE at 125%), `2005_cpu_off` (Ken), `2005_none` (the removal), \
               `2005_idle_gate` (Ingo #3 on 2.6.12), and v6.19's placement for reference. 2.6.12 is the baseline.",
        differs: "Loads are runnable tasks x 1024 at the moment (2.6.12's source_load/target_load also averaged \
                  cpu_load[] over ticks); everything else is v6.19's: EEVDF, PELT, the periodic balancer, which balances \
                  PELT load, not task counts. Nick's 2.6.13-rc4 had fewer wake flags in the CPU domain than 2.6.12.",
    },
    SeedSetup {
        seed: "Ken Chen: \"our industry standard OLTP workload\" with interrupt binding, on a large database setup of \
               non-SMT Itanium 2 (Madison) CPUs, CPU-overloaded (Ingo: \"CPU-overload (Ken's benchmark)\").",
        here: "`oltp`: 6 database processes per CPU, each 150 us of work then an I/O of 800 us (both within ±50% from \
               the seed); every I/O completed by one thread pinned to CPU 0, so every process wakeup comes from CPU 0. \
               Figures: steps/s, affine and passive wakeups, the processes' migrations.",
        differs: "A real OLTP run has a database's processes, locks, buffer cache and disks; the number of CPUs and of \
                  processes in Ken's setup are not in the thread; an interrupt is a nice-0 kernel thread here, not \
                  hardirq context; his machine had no SMT, the dual Xeon's shape here has.",
    },
    SeedSetup {
        seed: "Nick Piggin: tbench over localhost at 1 to 4 processes on a dual Xeon, three runs each (MB/s): \
               2.6.13-rc4 187/183/179, 260/259/256, 340/320/349, 504/496/500; no wake balancing 180/180/177, \
               254/254/253, 268/270/348, 345/290/500. Ingo measured no difference on his dual Xeon.",
        here: "`tbench` pairs at 1 to 4 clients (the server's work within ±50% of 5 us from the seed) on the dual Xeon's \
               shape: 2 sockets x 1 core x 2 threads (QEMU `-smp 4,sockets=2,cores=1,threads=2`, simulator preset \
               `wake-2005`); \"no wake balancing\" is Ingo's quick hack, the removal.",
        differs: "tbench's loopback TCP is a pipe here. Cache sharing between SMT siblings and across sockets, the point \
                  of wake-affine, is the simulator's hardware profile's (`--hw wake-2005`); QEMU models no caches.",
    },
];

pub fn spec() -> Spec {
    Spec {
        name: "wake-balance",
        claim: "2005: Ken Chen measured his OLTP workload +2.15% with SD_WAKE_AFFINE and SD_WAKE_BALANCE turned off in the \
                CPU domain (+0.2% more with the wake-balancing code deleted); Nick Piggin answered with tbench at 1 to 4 \
                processes on a dual Xeon (2 sockets x 1 core x 2 threads), where moving the wakee next to its waker paid \
                (3 and 4 processes: 340 against 268 MB/s, 504 against 345); Ingo Molnar's rule that came out of it moves a \
                wakee only when the waking CPU (or its SMT sibling) is idle, and Ken measured it at +2.2%.",
        asks: "The 2005 kernels' rules on the dual Xeon's shape: 2.6.12 (the baseline), Ken's flags off, the removal, Ingo's \
               idle gate, and v6.19's placement: tbench-like pairs at 1 to 4 clients, and Ken's interrupt-bound mix (oltp: \
               every wakeup from CPU 0, more processes than CPUs); throughput, affine and passive wakeups, migrations, the \
               cache distance of cross-CPU wakeups (ttwu_wake_remote at the SMT level: siblings sharing a core; at PKG: \
               across sockets), and idle while others wait.",
        setup: WAKE_SETUP,
        workload: "tbench",
        variants: vec![
            v(V2612, "wake_balance=2005"),
            v(KEN_OFF, "wake_balance=2005_cpu_off"),
            v(REMOVED, "wake_balance=2005_none"),
            v(INGO, "wake_balance=2005_idle_gate"),
            v(TODAY, "wake_balance=linux"),
        ],
        full: Form {
            smp: "4,sockets=2,cores=1,threads=2",
            params: "",
            points: FULL_POINTS,
            timeout_s: 900,
        },
        // Ken's point: its checks (CPU 0 woke every process; the rules' affine wakeups) prove the
        // mix is what it claims to be.
        quick: Form { smp: "4,sockets=2,cores=1,threads=2", params: "", points: &[KEN_QUICK], timeout_s: 180 },
        machine_note: "This is the dual Xeon's own shape, 4 logical CPUs, within what 2 host cores emulate. Ken Chen's \
                       OLTP machine took its I/O interrupts on one CPU, which woke the database processes; here an I/O \
                       completion thread pinned to CPU 0 wakes every process.",
        mechs: vec![
            Mech { label: "round_trips", unit: "count", read: round_trips },
            Mech { label: "oltp_steps", unit: "count", read: oltp_steps },
            Mech { label: "ttwu_move_affine", unit: "count", read: affine },
            Mech { label: "ttwu_move_balance", unit: "count", read: passive },
            Mech { label: "oltp_migrations", unit: "count", read: oltp_migrations },
            Mech { label: "ttwu_wake_remote_smt", unit: "count", read: remote_smt },
            Mech { label: "ttwu_wake_remote_pkg", unit: "count", read: remote_pkg },
            Mech { label: "wakeups_by_cpu0", unit: "count", read: wakeups_by_cpu0 },
        ],
        host: None,
        read: read_wake_balance,
        claims: wake_balance_claims(),
        dists: vec![Dist { label: "where wakees were woken from", counts: "wakeups", read: wake_distance }],
        // Where removing wake balancing costs Ken's OLTP, over what a wakee pays when it lands
        // away from its data: a line's flight between the sockets and the processes' working
        // set (`--sweep`, simulator only).
        sweeps: vec![Sweep {
            claim: KEN_REMOVED_CLAIM,
            x: Axis { name: "line across the sockets (line_other_llc_ns)", values: &["30", "120", "480"], arg: Arg::Sim("--hw-set line_other_llc_ns={},line_other_node_ns={}") },
            y: Axis { name: "working set (wss_kb)", values: &["16", "64", "512"], arg: Arg::Param("wss_kb={}") },
            seeds: None,
        }],
    }
}

/// Where each wakeup came from, relative to the wakee's CPU: the same CPU, its SMT sibling
/// (`ttwu_wake_remote` at the SMT level), the other socket (at PKG); summed over CPUs.
fn wake_distance(l: &Log) -> Vec<(String, f64)> {
    let (w, local, smt, pkg) = (wakeups(l), sum(l, "schedstat_delta", "ttwu_local"), remote_smt(l), remote_pkg(l));
    vec![
        ("same CPU".into(), local),
        ("SMT sibling".into(), smt),
        ("other socket".into(), pkg),
        ("elsewhere".into(), (w - local - smt - pkg).max(0.0)),
    ]
}

/// Nick Piggin's tbench (the means of his three runs, with wake balancing against without) and
/// Ken Chen's three OLTP figures, each against 2.6.12's rules.
fn wake_balance_claims() -> Vec<Claim> {
    let tp = Figure::Result("throughput");
    let steps = Figure::Result("tps");
    vec![
        Claim::change("Nick's tbench, 3 clients", tp, REMOVED, V2612, 13.9)
            .at(&["clients=3,"])
            .source("Nick Piggin, 2005: tbench 3 processes 340/320/349 MB/s with wake balancing, 268/270/348 without")
            .fails_with_variant(REMOVED, "no wake balancing on either side"),
        Claim::change("Nick's tbench, 4 clients", tp, REMOVED, V2612, 32.2)
            .at(&["clients=4,"])
            .source("Nick Piggin, 2005: tbench 4 processes 504/496/500 MB/s with wake balancing, 345/290/500 without")
            .fails_with_variant(REMOVED, "no wake balancing on either side"),
        Claim::change("Ken's OLTP, CPU-domain flags off", steps, V2612, KEN_OFF, KEN_FLAGS_OFF_PCT)
            .at(&["oltp:"])
            .source("Ken Chen, 2005: OLTP +2.15% with SD_WAKE_AFFINE and SD_WAKE_BALANCE turned off in the cpu sd domain")
            .fails_with_variant(V2612, "2.6.12 on both sides"),
        Claim::change(KEN_REMOVED_CLAIM, steps, V2612, REMOVED, KEN_REMOVED_PCT)
            .at(&["oltp:"])
            .source("Ken Chen, 2005: \"deleting all the code in the try_to_wake_up() pertain to load balancing gives us another 0.2% gain\"")
            .fails_with_variant(V2612, "2.6.12 on both sides"),
        Claim::change("Ken's OLTP, Ingo's idle gate", steps, V2612, INGO, KEN_INGO_PCT)
            .at(&["oltp:"])
            .source("Ken Chen, 2005: patch #3 \"has the same effectiveness compare to turning off both SD_WAKE_BALANCE and SD_WAKE_AFFINE, (+2.2% on db OLTP workload)\"")
            .fails_with_variant(V2612, "2.6.12 on both sides"),
    ]
}

/// Ken Chen's interrupt-bound mix: 6 processes per CPU woken by I/O completions on CPU 0.
const KEN_FULL: &str = "oltp:procs=24,io_us=800,ms=500";
/// The full form's points: tbench-like pairs at 1 to 4 clients, then Ken's mix (the simulator
/// runs the same points on the same machine, `sim_plans.rs`).
const KEN_REMOVED_CLAIM: &str = "Ken's OLTP, wake balancing removed";

pub(super) const FULL_POINTS: &[&str] = &[
    "clients=1,ms=500,spread=1,jitter_pct=50",
    "clients=2,ms=500,spread=1,jitter_pct=50",
    "clients=3,ms=500,spread=1,jitter_pct=50",
    "clients=4,ms=500,spread=1,jitter_pct=50",
    KEN_FULL,
];
const KEN_QUICK: &str = "oltp:procs=24,io_us=800,ms=200";

fn is_ken(pt: &str) -> bool {
    pt.starts_with("oltp:")
}

fn read_wake_balance(m: &Matrix) -> Reading {
    let mut why = Vec::new();
    let vars = [V2612, KEN_OFF, REMOVED, INGO, TODAY];
    let tp = |p: usize, var: &str| m.result(p, var, "throughput");
    let ken = m.points.iter().position(|p| is_ken(p));
    let tb: Vec<usize> = (0..m.points.len()).filter(|&p| Some(p) != ken).collect();
    let tb_names: Vec<&String> = tb.iter().map(|&p| &m.points[p]).collect();
    // Nick's claim: wake balancing (2.6.12's) against none, on tbench.
    let nick: Vec<f64> = tb.iter().map(|&p| crate::stats::pdiff(tp(p, REMOVED), tp(p, V2612), true)).collect();
    let head = if nick.is_empty() { f64::NAN } else { crate::stats::amean(&nick) };
    let _ = head;
    if !tb.is_empty() {
        let seed_of = |pt: &str| {
            let n: u32 = pt.split(',').find_map(|kv| kv.strip_prefix("clients=")?.parse().ok())?;
            let r = NICK_TBENCH.iter().find(|r| r.0 == n)?;
            let (a, b) = (r.1.iter().sum::<f64>() / 3.0, r.2.iter().sum::<f64>() / 3.0);
            Some(100.0 * (a / b - 1.0))
        };
        why.push(format!(
            "tbench throughput, 2.6.12's wake balancing against none: {} (mean {}; Nick's dual Xeon, mean of three runs, in \
             brackets).",
            tb_names
                .iter()
                .zip(&nick)
                .map(|(p, d)| format!("{p} {}{}", fmt_pct(*d), seed_of(p).map_or(String::new(), |s| format!(" ({})", fmt_pct(s)))))
                .collect::<Vec<_>>()
                .join(", "),
            fmt_pct(head)
        ));
        why.push(format!(
            "The other rules against 2.6.12 on tbench (mean over the client counts): {}.",
            [KEN_OFF, INGO, TODAY]
                .iter()
                .map(|v| {
                    let d: Vec<f64> = tb.iter().map(|&p| crate::stats::pdiff(tp(p, V2612), tp(p, v), true)).collect();
                    format!("{v} {}", fmt_pct(crate::stats::amean(&d)))
                })
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    why.push(format!(
        "Idle while others wait (Σ idle_wait_ns over CPUs and points, ms): {}.",
        vars.iter().map(|v| format!("{v} {:.2}", m.mech_all(v, idle_wait_ms))).collect::<Vec<_>>().join(", ")
    ));
    // Ken Chen's side: every wakeup from one CPU; each change against 2.6.12 with his figure.
    let mut checks = Vec::new();
    let mut ken_off = f64::NAN;
    if let Some(p) = ken {
        let tps = |var: &str| m.result(p, var, "tps");
        let against = |var: &str| crate::stats::pdiff(tps(V2612), tps(var), true);
        ken_off = against(KEN_OFF);
        why.push(format!(
            "Ken Chen's interrupt-bound mix ({}): steps/s against 2.6.12: his flags off {} (his figure +{KEN_FLAGS_OFF_PCT}%), \
             the removal {} (+{KEN_REMOVED_PCT}%), Ingo's idle gate {} (+{KEN_INGO_PCT}%), v6.19 {}.",
            m.points[p],
            fmt_pct(ken_off),
            fmt_pct(against(REMOVED)),
            fmt_pct(against(INGO)),
            fmt_pct(against(TODAY))
        ));
        why.push(format!(
            "The mechanism there: affine wakeups {}; passive (SD_WAKE_BALANCE) moves {}; the processes' migrations {}; of {:.0} \
             steps (2.6.12).",
            vars.iter().map(|v| format!("{v} {:.0}", m.mech(p, v, affine))).collect::<Vec<_>>().join(", "),
            vars.iter().map(|v| format!("{:.0}", m.mech(p, v, passive))).collect::<Vec<_>>().join(" / "),
            vars.iter().map(|v| format!("{:.0}", m.mech(p, v, oltp_migrations))).collect::<Vec<_>>().join(" / "),
            m.mech(p, V2612, oltp_steps)
        ));
        // The mix is Ken's only if CPU 0 woke the processes: a wakeup from CPU 0 for every I/O
        // completed, in every variant.
        let least = vars
            .iter()
            .map(|v| {
                let c = m.mech(p, v, oltp_completed);
                if c > 0.0 { 100.0 * m.mech(p, v, wakeups_by_cpu0) / c } else { 0.0 }
            })
            .fold(f64::MAX, f64::min);
        checks.push(Check::new(
            format!("interrupt-bound mix: CPU 0 performed a wakeup for every I/O completed, in every variant (least {least:.1}%)"),
            least >= 100.0,
            "oltp with its completion thread unpinned: the wakeups come from every CPU",
        ));
        let (a, none) = (m.mech(p, V2612, affine), m.mech(p, REMOVED, affine));
        checks.push(Check::new(
            format!("interrupt-bound mix: 2.6.12's rules move wakees to CPU 0 (affine wakeups {a:.0} > 0) and the removal never does ({none:.0})"),
            a > 0.0 && none == 0.0,
            "wake_balance=2005_none in the 2.6.12 variant's place: no affine wakeup on either side",
        ));
    }
    let share = |x: f64, w: f64| if w > 0.0 { 100.0 * x / w } else { 0.0 };
    why.push(format!(
        "Where wakees ran, all points: of the wakeups, from the wakee's SMT sibling {}; from the other socket {} \
         (ttwu_wake_remote by domain level against ttwu_count).",
        vars.iter().map(|v| format!("{v} {:.1}%", share(m.mech_all(v, remote_smt), m.mech_all(v, wakeups)))).collect::<Vec<_>>().join(", "),
        vars.iter().map(|v| format!("{:.1}%", share(m.mech_all(v, remote_pkg), m.mech_all(v, wakeups)))).collect::<Vec<_>>().join(" / ")
    ));
    let wins: Vec<&str> = tb_names.iter().map(|s| s.as_str()).zip(&nick).filter(|(_, d)| **d >= 2.0).map(|(p, _)| p).collect();
    let losses: Vec<&str> = tb_names.iter().map(|s| s.as_str()).zip(&nick).filter(|(_, d)| **d <= -2.0).map(|(p, _)| p).collect();
    if !wins.is_empty() && !losses.is_empty() {
        why.push(format!("2.6.12's wake balancing gains 2% or more at {} and loses as much at {} (the per-point counters are in the table).", wins.join(", "), losses.join(", ")));
    }
    let _ = ken_off;
    why.push(format!(
        "What the placement costs or saves here: {}; a wakee moved next to its waker's data gains what the engine charges for \
         a cache refill, which is how the dual Xeon's win and Ken's loss were argued.",
        m.cost_words()
    ));
    Reading { why, checks }
}

#[cfg(test)]
mod tests {
    use super::super::claims::{decide_all, Verdict};
    use super::super::tests::{synthetic, synthetic_runs};
    use super::*;
    use crate::stats::bootstrap::Bootstrap;

    /// Nick's claim at 3 clients follows 2.6.12's throughput against no wake balancing; Ken's
    /// claims follow the steps/s; the checks follow the counters.
    #[test]
    fn wake_balance_claims_and_checks_follow_the_numbers() {
        let spec = spec();
        let make = |tp_2612: f64| {
            synthetic_runs(&spec, &["clients=3,ms=500,spread=1"], 5, move |_, v, run| {
                let tp = if v == V2612 { tp_2612 } else { 100.0 } * (1.0 + (run as f64 - 2.0) / 200.0);
                format!(
                    "@fw result workload=tbench metric=throughput value={tp} unit=MB/s better=higher\n\
                     @fw domstat cpu=0 level=SMT ttwu_move_affine=7 ttwu_wake_remote=4\n\
                     @fw schedstat_delta cpu=0 ttwu_count=5\n"
                )
            })
        };
        let verdict = |tp: f64| decide_all(&spec.claims, &make(tp), &Bootstrap::default()).verdict(0).unwrap();
        assert_eq!(verdict(115.0), Verdict::Reproduced);
        assert_eq!(verdict(100.5), Verdict::NoEffect);
        assert_eq!(verdict(90.0), Verdict::Opposite);
        assert_eq!(verdict(107.0), Verdict::Inconclusive, "on half the claimed +13.9%");
        let r = read_wake_balance(&make(100.0));
        assert!(r.why[0].contains("clients=3,ms=500,spread=1 +0.0% (+13.9%)"), "{}", r.why[0]);
        // Ken's point: the checks read CPU 0's wakeups against the I/Os completed, and the affine wakeups
        let ken = |cpu0: u64, affine_2612: u64, tps_off: f64| {
            synthetic_runs(&spec, &[KEN_QUICK], 5, move |_, v, run| {
                let aff = if v == V2612 { affine_2612 } else if v == REMOVED { 0 } else { 3 };
                let tps = if v == KEN_OFF { tps_off } else { 100.0 } * (1.0 + (run as f64 - 2.0) / 1000.0);
                format!(
                    "@fw result workload=oltp metric=tps value={tps} unit=steps/s better=higher\n\
                     @fw oltp procs=24 irq_cpu=0 steps=1000 completed=1000 passes=800 migrations=50 ns=1\n\
                     @fw schedstat_delta cpu=0 ttwu_count={cpu0}\n@fw schedstat_delta cpu=1 ttwu_count=9\n\
                     @fw domstat cpu=0 level=PKG ttwu_move_affine={aff} ttwu_wake_remote=4\n"
                )
            })
        };
        let good = read_wake_balance(&ken(1002, 40, 100.0));
        assert!(good.checks.iter().all(|c| c.holds), "{:?}", good.checks);
        let unpinned = read_wake_balance(&ken(500, 40, 100.0));
        assert!(!unpinned.checks[0].holds && unpinned.checks[0].what.contains("least 50.0%"), "{:?}", unpinned.checks);
        assert!(!read_wake_balance(&ken(1002, 0, 100.0)).checks[1].holds, "no affine wakeup under 2.6.12 fails the check");
        assert_eq!(decide_all(&spec.claims, &ken(1002, 40, 102.2), &Bootstrap::default()).verdict(2), Some(Verdict::Reproduced));
        assert_eq!(decide_all(&spec.claims, &ken(1002, 40, 100.0), &Bootstrap::default()).verdict(2), Some(Verdict::NoEffect));
        // one run per cell: every claim inconclusive
        let one = synthetic(&spec, &[KEN_QUICK], |_, _| "@fw result workload=oltp metric=tps value=100 unit=steps/s better=higher\n".into());
        assert_eq!(decide_all(&spec.claims, &one, &Bootstrap::default()).verdict(2), Some(Verdict::Inconclusive));
    }
}
