//! Host tests for sched-domain construction on non-NUMA machines: which
//! levels (SMT, MC, PKG) a QEMU `-smp` shape yields, their spans, groups,
//! flags and balancing parameters, LLC lookups, degenerate-level removal
//! (and the `SD_PREFER_SIBLING` hand-down), the flat fallback, and the
//! golden `sched_domain_debug` / `@fw sd` text.

use crate::topology_common;

use sched::cpumask::CpuMask;
use sched::topology::degenerate::attach_domain;
use sched::topology::print::write_sched_domain_debug;
use sched::topology::*;
use topology_common::{check_invariants, s3, sd_lines, shape, two_nodes, Qemu};

// ------------------------------------------------------------- domains

#[test]
fn domains_smp1_has_none() {
    let sds = Qemu::new(1, 1, 1).domains();
    assert!(sds.per_cpu(0).is_empty());
    let mut s = String::new();
    write_sched_domain_debug(&mut s, &sds, 0).unwrap();
    assert_eq!(s, "CPU0 attaching NULL sched-domain.\n");
    assert_eq!(sds.sd_llc_size(0), 1);
    assert_eq!(sds.sd_llc_id(0), 0);
}

#[test]
fn domains_smp8_default_is_one_mc_level() {
    // QEMU ≥ 6.2 machine types prefer cores: -smp 8 = 1 socket × 8 cores × 1 thread.
    let sds = Qemu::new(1, 8, 1).domains();
    check_invariants(&sds);
    for cpu in 0..8 {
        let sh = shape(&sds, cpu);
        assert_eq!(sh.len(), 1, "{sh:?}");
        assert_eq!((sh[0].0.as_str(), sh[0].1.as_str()), ("MC", "0-7"));
        let sd = &sds.per_cpu(cpu)[0];
        assert_eq!(sd.groups.len(), 8);
        assert!(sd.groups.iter().all(|g| g.span.weight() == 1));
        assert_eq!(sd.groups[0].span, CpuMask::single(cpu));
        assert_eq!(sds.sd_llc_size(cpu), 8);
        assert_eq!(sds.sd_llc_id(cpu), 0);
    }
    assert!(sds.cpus_share_cache(1, 7));
    assert!(sds.sd_numa(0).is_none());
}

#[test]
fn domains_2s2c2t() {
    let sds = Qemu::new(2, 2, 2).domains();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 0),
        [
            s3("SMT", "0-1", "0/1"),
            s3("MC", "0-3", "0-1/2-3"),
            s3("PKG", "0-7", "0-3/4-7")
        ]
    );
    assert_eq!(
        shape(&sds, 5),
        [
            s3("SMT", "4-5", "5/4"),
            s3("MC", "4-7", "4-5/6-7"),
            s3("PKG", "0-7", "4-7/0-3")
        ]
    );
    assert_eq!(
        shape(&sds, 6),
        [
            s3("SMT", "6-7", "6/7"),
            s3("MC", "4-7", "6-7/4-5"),
            s3("PKG", "0-7", "4-7/0-3")
        ]
    );
    let sd = &sds.per_cpu(0)[0];
    assert_eq!(
        sd.flags,
        SD_BALANCE_NEWIDLE
            | SD_BALANCE_EXEC
            | SD_BALANCE_FORK
            | SD_WAKE_AFFINE
            | SD_SHARE_CPUCAPACITY
            | SD_SHARE_LLC
            | SD_PREFER_SIBLING
    );
    assert_eq!(
        (
            sd.imbalance_pct,
            sd.cache_nice_tries,
            sd.min_interval_ms,
            sd.max_interval_ms
        ),
        (110, 0, 2, 4)
    );
    let mc = &sds.per_cpu(0)[1];
    assert_eq!(
        (
            mc.imbalance_pct,
            mc.cache_nice_tries,
            mc.balance_interval_ms
        ),
        (117, 1, 4)
    );
    assert_eq!(mc.groups[1].flags, sd.flags, "group flags are the child's");
    // Cores per group: one per SMT group, two per MC group of two SMT pairs.
    assert_eq!(sd.groups.iter().map(|g| g.cores).collect::<Vec<_>>(), [1, 1]);
    assert_eq!(mc.groups.iter().map(|g| g.cores).collect::<Vec<_>>(), [1, 1]);
    let pkg = &sds.per_cpu(0)[2];
    assert_eq!(
        pkg.flags,
        SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING
    );
    assert_eq!(
        (pkg.imbalance_pct, pkg.cache_nice_tries, pkg.span_weight),
        (117, 1, 8)
    );
    assert_eq!(pkg.groups.iter().map(|g| g.cores).collect::<Vec<_>>(), [2, 2]);
    assert_eq!(sds.sd_llc(5).map(|d| d.level), Some(Level::Mc));
    assert_eq!((sds.sd_llc_size(5), sds.sd_llc_id(5)), (4, 4));
    assert!(sds.cpus_share_cache(4, 7) && !sds.cpus_share_cache(3, 4));
}

#[test]
fn domains_1s4c2t_smt_and_mc_only() {
    let sds = Qemu::new(1, 4, 2).domains();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 3),
        [s3("SMT", "2-3", "3/2"), s3("MC", "0-7", "2-3/4-5/6-7/0-1")]
    );
}

#[test]
fn domains_4s1c1t_pkg_only() {
    let sds = Qemu::new(4, 1, 1).domains();
    check_invariants(&sds);
    assert_eq!(shape(&sds, 0), [s3("PKG", "0-3", "0/1/2/3")]);
    assert_eq!(shape(&sds, 2), [s3("PKG", "0-3", "2/3/0/1")]);
    // No LLC domain: each CPU is its own LLC.
    assert_eq!((sds.sd_llc_size(2), sds.sd_llc_id(2)), (1, 2));
    assert!(!sds.cpus_share_cache(0, 1) && sds.cpus_share_cache(1, 1));
}

#[test]
fn domains_64_cpus() {
    let sds = Qemu::new(2, 16, 2).domains();
    check_invariants(&sds);
    for cpu in [0, 17, 33, 63] {
        let sh = shape(&sds, cpu);
        let levels: Vec<&str> = sh.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(levels, ["SMT", "MC", "PKG"]);
        let counts: Vec<usize> = sds.per_cpu(cpu).iter().map(|d| d.groups.len()).collect();
        assert_eq!(counts, [2, 16, 2]);
    }
    assert_eq!(shape(&sds, 33)[1].1, "32-63");
    assert_eq!(sds.per_cpu(33)[2].min_interval_ms, 64);
}

#[test]
fn domains_non_power_of_two() {
    // -smp 6,sockets=1,cores=3,threads=2.
    let sds = Qemu::new(1, 3, 2).domains();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 4),
        [s3("SMT", "4-5", "4/5"), s3("MC", "0-5", "4-5/0-1/2-3")]
    );
    // sockets=2: APIC IDs 0-5, 8-13, CPU indices stay dense.
    let sds = Qemu::new(2, 3, 2).domains();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 7),
        [
            s3("SMT", "6-7", "7/6"),
            s3("MC", "6-11", "6-7/8-9/10-11"),
            s3("PKG", "0-11", "6-11/0-5")
        ]
    );
}

// ------------------------------------------- degenerate levels, fallback

#[test]
fn flat_fallback() {
    let sds = SchedDomains::flat("0-3".parse().unwrap());
    check_invariants(&sds);
    assert_eq!(shape(&sds, 1), [s3("PKG", "0-3", "1/2/3/0")]);
    assert!(SchedDomains::flat(CpuMask::single(0)).per_cpu(0).is_empty());
    assert!(SchedDomains::flat(CpuMask::new()).per_cpu(0).is_empty());
}

#[test]
fn degenerate_parent_hands_prefer_sibling_down() {
    let sds = Qemu::new(1, 2, 1).domains();
    let mc = sds.per_cpu(0)[0].clone();
    let mut child = mc.clone();
    child.flags &= !SD_PREFER_SIBLING;
    let parent = mc.clone(); // same span, flags ⊆ child's + PREFER_SIBLING (a NEEDS_GROUPS flag)
    let mut one_group_parent = parent.clone();
    one_group_parent.groups.truncate(1);
    // With two groups PREFER_SIBLING counts as an extra flag: parent kept.
    assert_eq!(attach_domain(vec![child.clone(), parent]).len(), 2);
    // With one group it is ignored: parent removed, flag moves down.
    let out = attach_domain(vec![child, one_group_parent]);
    assert_eq!(out.len(), 1);
    assert_ne!(out[0].flags & SD_PREFER_SIBLING, 0);
}

// ------------------------------------------------------------- golden text

#[test]
fn golden_2s2c2t_output() {
    let sds = Qemu::new(2, 2, 2).domains();
    let mut s = String::new();
    write_sched_domain_debug(&mut s, &sds, 5).unwrap();
    assert_eq!(
        s,
        "CPU5 attaching sched-domain(s):\n\
         \x20domain-0: span=4-5 level=SMT\n\
         \x20 groups: 5:{ span=5 }, 4:{ span=4 }\n\
         \x20 domain-1: span=4-7 level=MC\n\
         \x20  groups: 4:{ span=4-5 cap=2048 }, 6:{ span=6-7 cap=2048 }\n\
         \x20  domain-2: span=0-7 level=PKG\n\
         \x20   groups: 4:{ span=4-7 cap=4096 }, 0:{ span=0-3 cap=4096 }\n"
    );
    assert_eq!(
        sd_lines(&sds, 0),
        [
            "@fw sd cpu=0 level=SMT span=0-1 groups=0/1 flags=SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SHARE_CPUCAPACITY|SD_SHARE_LLC|SD_PREFER_SIBLING",
            "@fw sd cpu=0 level=MC span=0-3 groups=0-1/2-3 flags=SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SHARE_LLC|SD_PREFER_SIBLING",
            "@fw sd cpu=0 level=PKG span=0-7 groups=0-3/4-7 flags=SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_PREFER_SIBLING",
        ]
    );
    let numa = SchedDomains::build(&two_nodes(), None).unwrap();
    assert_eq!(
        sd_lines(&numa, 4)[1],
        "@fw sd cpu=4 level=NUMA span=0-7 groups=4-7/0-3 flags=SD_BALANCE_NEWIDLE|SD_BALANCE_EXEC|SD_BALANCE_FORK|SD_WAKE_AFFINE|SD_SERIALIZE|SD_OVERLAP|SD_NUMA"
    );
}
