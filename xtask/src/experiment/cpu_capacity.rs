//! `cpu-capacity`: Vincent Guittot's 2014 cpu_capacity consolidation. Before it (3.17), a
//! group's capacity was turned into a count of task slots by rounding (`sg_capacity_factor`,
//! with `smt_gain` giving each of a core's two threads 589), so groups whose CPUs were not 1024
//! lost real cores (a 2-thread core counts one slot, a CPU at 512 none) or gained ghost ones (a
//! CPU left 600 of 1024 by pressure still counts a whole slot). Since 3.18 a group holds as many
//! tasks as it has CPUs and its utilisation is compared with its capacity (fair.c:
//! `group_has_capacity()`, `group_is_overloaded()`), and a task too big for a small CPU is a
//! misfit and moved (`update_misfit_status()`). Here the two rules (`group_capacity=util|factor`)
//! side by side on a flat 4-CPU machine with two CPUs at half capacity (`cpu_capacity=`: a
//! pressure source really takes half their time) and on 2 cores x 2 threads, with task counts
//! below, at and above the CPUs'.

use fairway_scenarios::Log;

use super::defs::{fmt_pct, v, v_smp};
use super::claims::{Claim, Figure};
use super::sweep::{Arg, Axis, Sweep};
use super::{per, split_point, sum, sum_where, Check, Form, Matrix, Mech, Reading, SeedSetup, Spec};

const ASYM: &str = "v6.19, CPUs 2-3 at 512";
const ASYM_2014: &str = "3.17 factor, CPUs 2-3 at 512";
const SMT: &str = "v6.19, 2 cores x 2 threads";
const SMT_2014: &str = "3.17 factor, 2x2";

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


const CAP_SETUP: &[SeedSetup] = &[
    SeedSetup {
        seed: "Vincent Guittot, v5 of \"sched: consolidation of cpu_capacity\" (2014-08-26): \"The current method assumes \
               that tasks have a fix load of SCHED_LOAD_SCALE and CPUs have a default capacity of SCHED_CAPACITY_SCALE. \
               This assumption generates wrong decision by creating ghost cores or by removing real ones when the original \
               capacity of CPUs is different from the default SCHED_CAPACITY_SCALE. We don't try anymore to evaluate the \
               number of available cores based on the group_capacity but instead we detect when the group is fully \
               utilized.\"",
        here: "`group_capacity=factor`: 3.17's sg_capacity_factor() (`min(cpus / ceil(1024 cpus / capacity_orig), \
               round(capacity / 1024))`, fix_small_capacity for SMT threads), with smt_gain (1178 per core, 589 per \
               thread) in the groups' capacities, and 3.17's classification (more tasks than slots: overloaded; fewer: \
               spare) against `group_capacity=util`, v6.19's (CPUs counted, utilisation against capacity, misfit tasks).",
        differs: "Only the capacity accounting is 3.17's: how much to move, which queue, active balance and misfit \
                  handling are v6.19's for both (3.17 had no misfit type, so its rule gives none).",
    },
    SeedSetup {
        seed: "Lost cores: a group whose CPUs are below 1024 counts fewer slots than CPUs that could each run a task (a \
               2-thread core at smt_gain counts one; a CPU of capacity 512 rounds to none). Ghost cores: rounding up counts \
               a slot with less than a CPU's capacity behind it (a CPU left 600 of 1024 by RT or IRQ work counts one).",
        here: "ebizzy-like searchers at 2, 3, 5 and 6 threads on 4 CPUs (and 4, the CPU count, as the control): where \
               tasks ran (each CPU's share of the runtime), balancer moves, idle while others wait, throughput. A lost \
               core shows as a CPU idle while another runs two tasks or a slow CPU runs one a fast one could; a ghost \
               core as tasks stacked on a CPU that has lost capacity.",
        differs: "The thread gives no workload for the ghost and lost cores (its tests are hackbench, perf pipe, scp and \
                  ebizzy -t 1..14, which showed no regression); these counts are this experiment's. Ghost cores cannot \
                  show here: they need capacities above 1024 (the thread's Cortex-A15 at 1441: two CPUs rounding to three \
                  slots), and fairway's are at most 1024, so a group rounds to at most its CPUs; lost cores can (a \
                  2-thread core at 1178 counts one slot, a CPU pressured below 512 none).",
    },
    SeedSetup {
        seed: "Dual Cortex-A7 and quad Cortex-A15 boards; SMT machines (Preethi's regression on POWER SMT); CPUs whose \
               capacity RT or IRQ work reduces (\"patchset+irq\").",
        here: "QEMU and the simulator: 4 CPUs with CPUs 2-3 at capacity 512 (`cpu_capacity=2:512,3:512`, a pressure \
               source taking half of their time), and 2 cores x 2 threads (`-smp 4,sockets=1,cores=2,threads=2`).",
        differs: "No ARM board: fairway's capacities are at most 1024 (big CPUs of 1441 cannot be expressed) and a slow \
                  CPU is a pressured one; QEMU's SMT threads do not share a core's resources, so SMT changes the domains, \
                  smt_gain and the rules, not the speed.",
    },
];

pub fn spec() -> Spec {
    Spec {
        name: "cpu-capacity",
        claim: "2014, Vincent Guittot's cpu_capacity consolidation: turning a group's capacity into a number of cores by \
                rounding (capacity_factor) created ghost cores, or removed real ones, whenever CPU capacities were not 1024 \
                (SMT threads under smt_gain, CPUs losing time to RT or IRQ work); detecting a fully utilised group instead \
                (counting its CPUs, comparing its utilisation with its capacity) puts a task on every CPU that exists and \
                keeps big tasks off small CPUs.",
        asks: "The pre-consolidation capacity factor (3.17: rounding, smt_gain) against v6.19's rule, on 4 CPUs with CPUs 2-3 \
               at half capacity and on 2 cores x 2 threads, with 2, 3, 4, 5 and 6 ebizzy-like searchers: where tasks ran \
               (each CPU's share of the runtime), misfit and other balancer moves, idle while others wait, throughput.",
        setup: CAP_SETUP,
        workload: "ebizzy",
        variants: vec![
            v(ASYM, "cpu_capacity=2:512,3:512 group_capacity=util"),
            v(ASYM_2014, "cpu_capacity=2:512,3:512 group_capacity=factor"),
            v_smp(SMT, "4,sockets=1,cores=2,threads=2", "group_capacity=util"),
            v_smp(SMT_2014, "4,sockets=1,cores=2,threads=2", "group_capacity=factor"),
        ],
        full: Form {
            smp: "4",
            params: "",
            points: &["threads=2,ms=200", "threads=3,ms=200", "threads=4,ms=200", "threads=5,ms=200", "threads=6,ms=200"],
            timeout_s: 900,
        },
        quick: Form { smp: "4", params: "", points: &["threads=2,ms=100"], timeout_s: 120 },
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
            Mech { label: "idle_wait", unit: "ms", read: idle_wait_ms },
        ],
        host: None,
        read,
        claims: claims(),
        dists: vec![],
        // Where the lost core shows, over what moving a searcher off a slow CPU costs: a
        // line's flight between CPUs and the searchers' working set (`--sweep`, simulator only).
        sweeps: vec![Sweep {
            claim: LOST_CORE_CLAIM,
            x: Axis { name: "line between CPUs (line_same_llc_ns)", values: &["40", "150", "600"], arg: Arg::Sim("--hw-set line_same_llc_ns={},line_other_llc_ns={}") },
            y: Axis { name: "working set (wss_kb)", values: &["64", "320", "2048"], arg: Arg::Param("wss_kb={}") },
            seeds: None,
        }],
    }
}

fn idle_wait_ms(l: &Log) -> f64 {
    sum(l, "schedstat_delta", "idle_wait_ns") / 1e6
}

const LOST_CORE_CLAIM: &str = "2 searchers off the slow CPUs";

/// The slow CPUs' share of the runtime when one of two searchers runs on a CPU at 512 and the
/// other on a full one: 100 ms of every 200 ms of the slow one's time, a third of the total.
const LOST_CORE_SLOW_SHARE: f64 = 100.0 / 3.0;

/// The consolidation's point as a figure: with 2 searchers on 4 CPUs, two of them at 512,
/// 3.17's rule counts no slot on a slow CPU and has no misfit type, so a searcher left on one
/// stays while a full CPU idles (the slow pair's share of the runtime a third); v6.19 moves it
/// (share 0). The thread gives no figure: the claimed change is that of one lost core, and
/// the threshold 0.3 of it (10 points).
fn claims() -> Vec<Claim> {
    vec![Claim::change(
        LOST_CORE_CLAIM,
        Figure::Log { label: "slow_cpus_runtime_share", read: slow_share },
        ASYM_2014,
        ASYM,
        -LOST_CORE_SLOW_SHARE,
    )
    .absolute()
    .threshold(0.3)
    .at(&["threads=2,"])
    .source(
        "Vincent Guittot, 2014: the capacity factor's rounding \"generates wrong decision by creating ghost cores or by \
         removing real ones\"; the figure is one lost core's (one of 2 searchers on a CPU at 512), as the thread gives none",
    )
    .fails_with_variant(ASYM_2014, "3.17's rule on both sides")]
}

fn ebizzy_threads(pt: &str) -> Option<u32> {
    let (w, params) = split_point("ebizzy", pt);
    if w != "ebizzy" {
        return None;
    }
    params.split(',').find_map(|kv| kv.strip_prefix("threads=")?.parse().ok())
}

/// The CPUs that ran next to nothing (under 5% of the runtime) in a cell.
fn idle_cpus(m: &Matrix, p: usize, var: &str) -> Vec<u32> {
    (0..4).filter(|&c| share_of(m, p, var, c) < 5.0).collect()
}

fn read(m: &Matrix) -> Reading {
    let mut why = Vec::new();
    let mut checks = Vec::new();
    let rec = |p: usize, var: &str| m.result(p, var, "records_per_s");
    let shares = |p: usize, var: &str| (0..4).map(|c| format!("{:.0}", share_of(m, p, var, c))).collect::<Vec<_>>().join("/");
    let mut lost_factor = Vec::new();
    for p in 0..m.points.len() {
        let Some(n) = ebizzy_threads(&m.points[p]) else { continue };
        why.push(format!(
            "ebizzy, {n} threads: runtime shares CPU0/1/2/3 in %: CPUs 2-3 at 512 v6.19 {}, 3.17 {}; 2x2 v6.19 {}, 3.17 {}; \
             records/s 3.17 against v6.19: {} (CPUs 2-3 at 512), {} (2x2); balancer moves {:.0} / {:.0} and {:.0} / {:.0}; \
             idle while others wait {:.2} / {:.2} and {:.2} / {:.2} ms.",
            shares(p, ASYM),
            shares(p, ASYM_2014),
            shares(p, SMT),
            shares(p, SMT_2014),
            fmt_pct(crate::stats::pdiff(rec(p, ASYM), rec(p, ASYM_2014), true)),
            fmt_pct(crate::stats::pdiff(rec(p, SMT), rec(p, SMT_2014), true)),
            m.mech(p, ASYM, moved),
            m.mech(p, ASYM_2014, moved),
            m.mech(p, SMT, moved),
            m.mech(p, SMT_2014, moved),
            m.mech(p, ASYM, idle_wait_ms),
            m.mech(p, ASYM_2014, idle_wait_ms),
            m.mech(p, SMT, idle_wait_ms),
            m.mech(p, SMT_2014, idle_wait_ms),
        ));
        // A full-capacity CPU idle while a slow one runs a searcher: a core the rule did not count.
        if n <= 2 {
            let fast_idle = |var: &str| idle_cpus(m, p, var).iter().any(|c| !SLOW.contains(c));
            let slow = |var: &str| m.mech(p, var, slow_share);
            if fast_idle(ASYM_2014) && slow(ASYM_2014) > 5.0 {
                lost_factor.push(m.points[p].clone());
            }
            checks.push(Check::new(
                format!("ebizzy {n} threads, CPUs 2-3 at 512, v6.19: the searchers ran on the full-capacity CPUs (slow CPUs' share {:.1}% <= 5%)", slow(ASYM)),
                slow(ASYM) <= 5.0,
                "misfit detection off (update_misfit_status() never marking a task): a searcher stays on a slow CPU",
            ));
            checks.push(Check::new(
                format!(
                    "ebizzy {n} threads, CPUs 2-3 at 512, 3.17's capacity factor decides otherwise: a slow CPU ran a searcher (share {:.1}% > 5%)",
                    slow(ASYM_2014)
                ),
                slow(ASYM_2014) > 5.0,
                "group_capacity=factor made group_capacity=util (the factor rule not reaching the balancer)",
            ));
        }
    }
    if !lost_factor.is_empty() {
        why.push(format!(
            "A lost core under 3.17's rule at {}: a full-capacity CPU stayed idle while a CPU at 512 ran a searcher. A CPU \
             pressured to 512 or below counts no task slot (its capacity rounds to 0, fix_small_capacity applies to SMT \
             threads only), so its one task makes its group overloaded while the idle full CPUs' groups, at one slot \
             each, have no room the rule can see, and 3.17 had no misfit type to move it; v6.19 marks it a misfit and \
             pushes it to the idle full CPU.",
            lost_factor.join(", ")
        ));
    }
    Reading { why, checks }
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

    fn boot(records: f64, times: [u64; 4]) -> String {
        let mut s = format!("@fw result workload=ebizzy metric=records_per_s value={records} unit=records/s better=higher\n");
        for (c, t) in times.iter().enumerate() {
            s += &format!("@fw schedstat_delta cpu={c} rq_cpu_time={t}\n");
        }
        s
    }

    /// The checks read the runtime shares: at 2 threads v6.19 keeps the searchers on the fast
    /// CPUs and 3.17's factor leaves one on a slow CPU while a fast one idles (a lost core).
    #[test]
    fn capacity_checks_follow_the_shares() {
        let s = spec();
        let make = |asym_2014: [u64; 4]| {
            synthetic(&s, &["threads=2,ms=300"], move |_, v| {
                let t = match v {
                    ASYM_2014 => asym_2014,
                    _ => [100, 100, 0, 0],
                };
                boot(1000.0, t)
            })
        };
        let r = read(&make([0, 100, 100, 0]));
        assert!(r.checks.iter().all(|c| c.holds), "{:?}", r.checks);
        assert!(r.why.iter().any(|w| w.contains("A lost core")), "{:?}", r.why);
        let same = read(&make([100, 100, 0, 0]));
        assert!(!same.checks[1].holds, "3.17 deciding as v6.19 fails the check: {:?}", same.checks);
    }

    /// The claim: the slow pair's share falls by a third (one lost core) from 3.17's rule to
    /// v6.19's at 2 searchers.
    #[test]
    fn capacity_claim_follows_the_slow_cpus_share() {
        use super::super::claims::{decide_all, Verdict};
        use super::super::tests::synthetic_runs;
        let s = spec();
        let make = |old_slow: u64| {
            synthetic_runs(&s, &["threads=2,ms=200"], 5, move |_, v, run| {
                let t = if v == ASYM_2014 { [0, 200, old_slow + run as u64, 0] } else { [200, 200 + run as u64, 0, 0] };
                boot(1000.0, t)
            })
        };
        let v = |slow| decide_all(&s.claims, &make(slow), &crate::stats::bootstrap::Bootstrap::default()).verdict(0).unwrap();
        assert_eq!(v(100), Verdict::Reproduced);
        assert_eq!(v(0), Verdict::NoEffect);
    }
}
