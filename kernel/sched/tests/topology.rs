//! Host tests for CPUID topology decoding and sched-domain construction.
//!
//! A small model of QEMU's x86 CPU numbering (`Qemu`) produces, for a given
//! `-smp` shape, the APIC IDs in QEMU's CPU order and the CPUID leaf 0xB /
//! leaf 4 registers QEMU reports; the tests decode those registers, build the
//! domains and check them against the hierarchy Linux would build.

use sched::cpumask::CpuMask;
use sched::topology::degenerate::attach_domain;
use sched::topology::print::{write_cpu_line, write_sched_domain_debug, write_sd_line};
use sched::topology::*;

/// QEMU's `-smp sockets=S,dies=D,cores=C,threads=T`. CPU index i has
/// thread i%T, core (i/T)%C, die (i/(T*C))%D, socket i/(T*C*D); the APIC ID
/// packs thread, core, die, socket fields of ceil_log2 width each.
#[derive(Clone, Copy)]
struct Qemu {
    sockets: u32,
    dies: u32,
    cores: u32,
    threads: u32,
}

fn bits(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

impl Qemu {
    fn new(sockets: u32, cores: u32, threads: u32) -> Self {
        Qemu {
            sockets,
            dies: 1,
            cores,
            threads,
        }
    }
    fn ncpus(&self) -> u32 {
        self.sockets * self.dies * self.cores * self.threads
    }
    fn core_offset(&self) -> u32 {
        bits(self.threads)
    }
    fn die_offset(&self) -> u32 {
        self.core_offset() + bits(self.cores)
    }
    fn pkg_offset(&self) -> u32 {
        self.die_offset() + bits(self.dies)
    }
    fn apic_id(&self, i: u32) -> u32 {
        let t = i % self.threads;
        let c = (i / self.threads) % self.cores;
        let d = (i / (self.threads * self.cores)) % self.dies;
        let s = i / (self.threads * self.cores * self.dies);
        (s << self.pkg_offset()) | (d << self.die_offset()) | (c << self.core_offset()) | t
    }
    /// Leaf 0xB subleafs 0..=2 as QEMU answers them on CPU i.
    fn leaf_0b(&self, i: u32) -> Vec<CpuidRegs> {
        let apic = self.apic_id(i);
        vec![
            CpuidRegs::new(self.core_offset(), self.threads, 1 << 8, apic),
            CpuidRegs::new(
                self.pkg_offset(),
                self.threads * self.cores * self.dies,
                (2 << 8) | 1,
                apic,
            ),
            CpuidRegs::new(0, 0, 2, apic),
        ]
    }
    /// Leaf 0x1F as QEMU answers it when dies > 1: SMT, Core, Die subleafs,
    /// each EAX = the next level's APIC-ID offset, EBX = CPUs in that unit.
    fn leaf_1f(&self, i: u32) -> Vec<CpuidRegs> {
        let apic = self.apic_id(i);
        let per_die = self.threads * self.cores;
        vec![
            CpuidRegs::new(self.core_offset(), self.threads, 1 << 8, apic),
            CpuidRegs::new(self.die_offset(), per_die, (2 << 8) | 1, apic),
            CpuidRegs::new(self.pkg_offset(), per_die * self.dies, (5 << 8) | 2, apic),
            CpuidRegs::new(0, 0, 3, apic),
        ]
    }
    /// Leaf 4: L1d, L1i, L2 shared by a core's threads, L3 shared by a die.
    fn leaf4(&self) -> Vec<CpuidRegs> {
        let cores_field = ((1u32 << (self.pkg_offset() - self.core_offset())) - 1) << 26;
        let entry = |ty: u32, level: u32, sharing_ids: u32| {
            CpuidRegs::new(
                ty | (level << 5) | (1 << 8) | ((sharing_ids - 1) << 14) | cores_field,
                0,
                0,
                0,
            )
        };
        let per_core = 1 << self.core_offset();
        let per_die = 1 << self.die_offset();
        vec![
            entry(1, 1, per_core),
            entry(2, 1, per_core),
            entry(3, 2, per_core),
            entry(3, 3, per_die),
            CpuidRegs::default(),
        ]
    }
    /// Decodes every CPU from its own registers, with `node(i)`.
    fn topology(&self, node: impl Fn(u32) -> u32) -> Vec<CpuTopology> {
        let leaf4 = self.leaf4();
        (0..self.ncpus())
            .map(|i| {
                let b = self.leaf_0b(i);
                let input = CpuidTopologyInput {
                    max_basic_leaf: 0xd,
                    leaf1: CpuidRegs::new(0x806f8, (self.apic_id(i) & 0xff) << 24, 0, 1 << 28),
                    leaf4: &leaf4,
                    leaf_0b: &b,
                    leaf_1f: &[],
                };
                let layout = ApicIdLayout::detect(&input);
                layout.decode(i as usize, b[0].edx, node(i))
            })
            .collect()
    }
    fn domains(&self) -> SchedDomains {
        SchedDomains::build(&self.topology(|_| 0), None).unwrap()
    }
}

fn sd_lines(sds: &SchedDomains, cpu: usize) -> Vec<String> {
    sds.per_cpu(cpu)
        .iter()
        .map(|sd| {
            let mut s = String::new();
            write_sd_line(&mut s, cpu, sd).unwrap();
            s
        })
        .collect()
}

/// `(level, span, groups)` per domain of `cpu`, groups joined by `/`.
fn shape(sds: &SchedDomains, cpu: usize) -> Vec<(String, String, String)> {
    sds.per_cpu(cpu)
        .iter()
        .map(|sd| {
            let groups: Vec<String> = sd.groups.iter().map(|g| g.span.to_string()).collect();
            (sd.level.to_string(), sd.span.to_string(), groups.join("/"))
        })
        .collect()
}

fn s3(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

/// Structural properties every built hierarchy must have.
fn check_invariants(sds: &SchedDomains) {
    check_invariants_with(sds, true)
}

/// `consistent`: the input topology nests (threads in LLCs in nodes). Without
/// that, Linux (and this code) widens spans, so equal-span levels with extra
/// flags (e.g. NUMA over a widened NODE) may legitimately remain.
fn check_invariants_with(sds: &SchedDomains, consistent: bool) {
    for cpu in sds.online().iter() {
        let chain = sds.per_cpu(cpu);
        let mut below: Option<CpuMask> = None;
        for sd in chain {
            assert!(sd.span.contains(cpu), "cpu {cpu} {:?}", sd.level);
            assert!(sd.span.is_subset(&sds.online()));
            assert_eq!(sd.span_weight, sd.span.weight());
            assert!(sd.span_weight >= 2, "degenerate single-CPU domain left");
            if let Some(b) = below {
                assert!(
                    b.is_subset(&sd.span),
                    "spans must grow: cpu {cpu} {chain:#?}"
                );
                assert!(
                    !consistent || b != sd.span,
                    "spans must strictly grow: cpu {cpu} {chain:#?}"
                );
            }
            below = Some(sd.span);
            assert!(sd.groups.len() >= 2 || sd.flags & SD_WAKE_AFFINE != 0);
            assert!(sd.groups[0].span.contains(cpu), "local group first");
            let mut union = CpuMask::new();
            let mut total = 0;
            for g in &sd.groups {
                assert!(!g.span.is_empty() && g.span.is_subset(&sd.span));
                assert!(g.span.contains(g.balance_cpu));
                assert_eq!(g.capacity, 1024 * g.span.weight());
                union = union.union(&g.span);
                total += g.span.weight();
            }
            assert_eq!(union, sd.span, "groups cover the span");
            if sd.flags & SD_OVERLAP == 0 {
                assert_eq!(total, sd.span_weight, "non-NUMA groups are disjoint");
            }
            assert_eq!(sd.min_interval_ms * 2, sd.max_interval_ms);
            assert_eq!(sd.busy_factor, 16);
        }
    }
}

// ---------------------------------------------------------------- CPUID

#[test]
fn cpuid_qemu_2s2c2t_leaf_0b_registers() {
    let q = Qemu::new(2, 2, 2);
    // CPU 5: socket 1, core 0, thread 1 → APIC ID 0b1_0_1.
    assert_eq!(q.apic_id(5), 5);
    let regs = q.leaf_0b(5);
    assert_eq!(regs[0], CpuidRegs::new(1, 2, 0x100, 5));
    assert_eq!(regs[1], CpuidRegs::new(2, 4, 0x201, 5));
    let l = ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf0B, &regs).unwrap();
    assert_eq!(
        (l.smt_shift(), l.core_shift(), l.pkg_shift(), l.llc_shift()),
        (1, 2, 2, 2)
    );
    // L3 EAX[25:14] = 3: four APIC IDs share it.
    assert_eq!((q.leaf4()[3].eax >> 14) & 0xfff, 3);
    let t = l.with_llc_from_leaf4(&q.leaf4()).decode(5, 5, 0);
    assert_eq!((t.smt_id, t.core_id, t.pkg_id, t.llc_id), (1, 0, 1, 1));
    let mut s = String::new();
    write_cpu_line(&mut s, &t).unwrap();
    assert_eq!(s, "@fw cpu id=5 apic=5 pkg=1 core=0 smt=1 llc=1 node=0");
}

#[test]
fn cpuid_non_power_of_two_cores_leave_apic_gaps() {
    let q = Qemu::new(2, 3, 2);
    let apics: Vec<u32> = (0..12).map(|i| q.apic_id(i)).collect();
    assert_eq!(apics, [0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13]);
    let l = ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf0B, &q.leaf_0b(0)).unwrap();
    assert_eq!((l.smt_shift(), l.pkg_shift()), (1, 3));
    let topo = q.topology(|_| 0);
    let t = topo[7]; // socket 1, core 0, thread 1
    assert_eq!(
        (t.apic_id, t.pkg_id, t.core_id, t.smt_id, t.llc_id),
        (9, 1, 0, 1, 1)
    );
    let t = topo[5]; // socket 0, core 2, thread 1
    assert_eq!((t.apic_id, t.pkg_id, t.core_id, t.smt_id), (5, 0, 2, 1));
}

#[test]
fn cpuid_detect_source_order() {
    let q = Qemu::new(1, 4, 2);
    let b = q.leaf_0b(3);
    let leaf4 = q.leaf4();
    // 0x1F: SMT shift 1, Core shift 3, Die shift 4 (2 dies).
    let f = [
        CpuidRegs::new(1, 2, 0x100, 3),
        CpuidRegs::new(3, 8, 0x201, 3),
        CpuidRegs::new(4, 16, 0x502, 3),
        CpuidRegs::new(0, 0, 3, 3),
    ];
    let mut input = CpuidTopologyInput {
        max_basic_leaf: 0x1f,
        leaf1: CpuidRegs::new(0, 8 << 16, 0, 1 << 28),
        leaf4: &leaf4,
        leaf_0b: &b,
        leaf_1f: &f,
    };
    let l = ApicIdLayout::detect(&input);
    assert_eq!(l.source(), cpuid::LayoutSource::Leaf1F);
    assert_eq!((l.core_shift(), l.pkg_shift()), (3, 4));
    // An all-zero 0x1F (QEMU without dies) falls back to 0xB.
    let zero = [CpuidRegs::default(); 2];
    input.leaf_1f = &zero;
    let l = ApicIdLayout::detect(&input);
    assert_eq!(l.source(), cpuid::LayoutSource::Leaf0B);
    assert_eq!((l.smt_shift(), l.pkg_shift(), l.llc_shift()), (1, 3, 3));
    // Below leaf 0xB: legacy from leaf 1 EBX[23:16] = 8 and leaf 4 cores = 4.
    input.max_basic_leaf = 0xa;
    let l = ApicIdLayout::detect(&input);
    assert_eq!(l.source(), cpuid::LayoutSource::Legacy);
    assert_eq!((l.smt_shift(), l.pkg_shift()), (1, 3));
}

#[test]
fn cpuid_leaf_1f_with_dies_gives_die_sized_llc() {
    // -smp 16,sockets=1,dies=2,cores=4,threads=2: QEMU raises the CPUID level
    // to 0x1F and shares L3 per die, so MC = die and PKG = the whole package.
    let q = Qemu {
        sockets: 1,
        dies: 2,
        cores: 4,
        threads: 2,
    };
    let leaf4 = q.leaf4();
    let cpus: Vec<CpuTopology> = (0..16)
        .map(|i| {
            let f = q.leaf_1f(i);
            let input = CpuidTopologyInput {
                max_basic_leaf: 0x1f,
                leaf1: CpuidRegs::new(0, 16 << 16, 0, 1 << 28),
                leaf4: &leaf4,
                leaf_0b: &[],
                leaf_1f: &f,
            };
            let l = ApicIdLayout::detect(&input);
            assert_eq!(
                (
                    l.smt_shift(),
                    l.core_shift(),
                    l.shift(TopoLevel::Die),
                    l.llc_shift()
                ),
                (1, 3, 4, 3)
            );
            l.decode(i as usize, q.apic_id(i), 0)
        })
        .collect();
    // core_id includes the die bit, as Linux's does: CPU 9 is die 1, core 0.
    assert_eq!(
        (
            cpus[9].apic_id,
            cpus[9].core_id,
            cpus[9].pkg_id,
            cpus[9].llc_id
        ),
        (9, 4, 0, 1)
    );
    let sds = SchedDomains::build(&cpus, None).unwrap();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 9),
        [
            s3("SMT", "8-9", "9/8"),
            s3("MC", "8-15", "8-9/10-11/12-13/14-15"),
            s3("PKG", "0-15", "8-15/0-7")
        ]
    );
}

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
    let pkg = &sds.per_cpu(0)[2];
    assert_eq!(
        pkg.flags,
        SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING
    );
    assert_eq!(
        (pkg.imbalance_pct, pkg.cache_nice_tries, pkg.span_weight),
        (117, 1, 8)
    );
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

fn two_nodes() -> Vec<CpuTopology> {
    Qemu::new(2, 4, 1).topology(|i| i / 4)
}

#[test]
fn domains_two_numa_nodes() {
    let slit = NumaDistances::from_rows(&[&[10, 21], &[21, 10]]).unwrap();
    for sds in [
        SchedDomains::build(&two_nodes(), None).unwrap(),
        SchedDomains::build(&two_nodes(), Some(&slit)).unwrap(),
    ] {
        check_invariants(&sds);
        assert_eq!(
            shape(&sds, 0),
            [s3("MC", "0-3", "0/1/2/3"), s3("NUMA", "0-7", "0-3/4-7")]
        );
        assert_eq!(
            shape(&sds, 6),
            [s3("MC", "4-7", "6/7/4/5"), s3("NUMA", "0-7", "4-7/0-3")]
        );
        let numa = &sds.per_cpu(0)[1];
        assert_eq!(
            numa.flags,
            SD_BALANCE_NEWIDLE
                | SD_BALANCE_EXEC
                | SD_BALANCE_FORK
                | SD_WAKE_AFFINE
                | SD_SERIALIZE
                | SD_OVERLAP
                | SD_NUMA
        );
        assert_eq!((numa.cache_nice_tries, numa.imbalance_pct), (2, 117));
        assert_eq!(numa.groups[1].balance_cpu, 4);
        assert_eq!(numa.groups[0].capacity, 4096);
        assert_eq!(sds.sd_numa(0).map(|d| d.level), Some(Level::Numa(1)));
        // PKG removed onto MC: MC keeps PREFER_SIBLING.
        assert_ne!(sds.per_cpu(0)[0].flags & SD_PREFER_SIBLING, 0);
    }
}

#[test]
fn domains_numa_in_package_drops_pkg_keeps_node() {
    // One socket, 8 cores, an LLC per pair of cores, nodes 0-3 and 4-7.
    let layout = ApicIdLayout::from_shifts(0, 3, Some(1));
    let cpus: Vec<CpuTopology> = (0..8)
        .map(|i| layout.decode(i, i as u32, (i / 4) as u32))
        .collect();
    let sds = SchedDomains::build(&cpus, None).unwrap();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 5),
        [
            s3("MC", "4-5", "5/4"),
            s3("NODE", "4-7", "4-5/6-7"),
            s3("NUMA", "0-7", "4-7/0-3")
        ]
    );
}

#[test]
fn domains_four_nodes_two_numa_levels() {
    // 4 sockets × 2 cores, node = socket; nodes {0,1} and {2,3} are close (20),
    // the pairs are far (40 > node_reclaim_distance).
    let cpus = Qemu::new(4, 2, 1).topology(|i| i / 2);
    let slit = NumaDistances::from_rows(&[
        &[10, 20, 40, 40],
        &[20, 10, 40, 40],
        &[40, 40, 10, 20],
        &[40, 40, 20, 10],
    ])
    .unwrap();
    let sds = SchedDomains::build(&cpus, Some(&slit)).unwrap();
    check_invariants(&sds);
    assert_eq!(
        shape(&sds, 0),
        [
            s3("MC", "0-1", "0/1"),
            s3("NUMA", "0-3", "0-1/2-3"),
            s3("NUMA2", "0-7", "0-3/4-7")
        ]
    );
    assert_eq!(
        shape(&sds, 7),
        [
            s3("MC", "6-7", "7/6"),
            s3("NUMA", "4-7", "6-7/4-5"),
            s3("NUMA2", "0-7", "4-7/0-3")
        ]
    );
    let far = &sds.per_cpu(0)[2];
    assert_eq!(
        far.flags,
        SD_BALANCE_NEWIDLE | SD_SERIALIZE | SD_OVERLAP | SD_NUMA
    );
    assert_eq!(
        sds.sd_numa(7).map(|d| d.span.to_string()),
        Some("4-7".into())
    );
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

// ------------------------------------------------------------- errors

#[test]
fn errors_for_impossible_input() {
    let ok = Qemu::new(1, 4, 1).topology(|_| 0);
    let err =
        |cpus: &[CpuTopology], d: Option<&NumaDistances>| SchedDomains::build(cpus, d).unwrap_err();

    assert_eq!(err(&[], None), TopologyError::NoCpus);
    let mut dup = ok.clone();
    dup[2].cpu = 1;
    assert_eq!(err(&dup, None), TopologyError::DuplicateCpu { cpu: 1 });
    let mut dup = ok.clone();
    dup[3].apic_id = 0;
    assert_eq!(
        err(&dup, None),
        TopologyError::DuplicateApicId {
            apic_id: 0,
            first_cpu: 0,
            second_cpu: 3
        }
    );
    let mut big = ok.clone();
    big[0].cpu = 256;
    assert_eq!(
        err(&big, None),
        TopologyError::CpuIndexOutOfRange { cpu: 256 }
    );
    let many: Vec<CpuTopology> = (0..257)
        .map(|i| ApicIdLayout::from_shifts(0, 9, None).decode(i, i as u32, 0))
        .collect();
    assert_eq!(err(&many, None), TopologyError::TooManyCpus { count: 257 });
    let slit = NumaDistances::from_rows(&[&[10, 20], &[20, 10]]).unwrap();
    let mut far = ok.clone();
    far[1].node = 2;
    assert_eq!(
        err(&far, Some(&slit)),
        TopologyError::NodeWithoutDistance {
            cpu: 1,
            node: 2,
            nodes: 2
        }
    );

    assert_eq!(
        NumaDistances::from_rows(&[&[10, 20], &[20]]),
        Err(TopologyError::DistanceNotSquare {
            nodes: 2,
            row: 1,
            len: 1
        })
    );
    assert_eq!(
        NumaDistances::from_slit(2, &[10, 20, 20]),
        Err(TopologyError::DistanceNotSquare {
            nodes: 2,
            row: 1,
            len: 1
        })
    );
    assert_eq!(
        NumaDistances::from_rows(&[&[10, 20], &[30, 10]]),
        Err(TopologyError::DistanceAsymmetric {
            a: 0,
            b: 1,
            ab: 20,
            ba: 30
        })
    );
    assert_eq!(
        NumaDistances::from_rows(&[&[11, 20], &[20, 10]]),
        Err(TopologyError::DistanceBadLocal {
            node: 0,
            distance: 11
        })
    );
    assert_eq!(
        NumaDistances::from_rows(&[&[10, 10], &[10, 10]]),
        Err(TopologyError::DistanceBadRemote {
            a: 0,
            b: 1,
            distance: 10
        })
    );
    assert_eq!(
        NumaDistances::from_rows(&[]),
        Err(TopologyError::BadNodeCount { nodes: 0 })
    );
    assert_eq!(
        NumaDistances::from_slit(2, &[10, 20, 20, 10])
            .unwrap()
            .distance(1, 0),
        Some(20)
    );

    assert_eq!(
        TopologyError::DuplicateApicId {
            apic_id: 0x10,
            first_cpu: 1,
            second_cpu: 3
        }
        .to_string(),
        "topology: CPUs 1 and 3 both have APIC ID 0x10"
    );
    assert_eq!(
        TopologyError::DistanceAsymmetric {
            a: 0,
            b: 1,
            ab: 20,
            ba: 30
        }
        .to_string(),
        "topology: distance table is asymmetric: 0->1 is 20 but 1->0 is 30"
    );
}

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

// ------------------------------------------------------------- robustness

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[test]
fn arbitrary_input_never_panics() {
    let mut r = Rng(0x2545_f491_4f6c_dd1d);
    let mut built = 0;
    for _ in 0..400 {
        let n = 1 + r.below(40) as usize;
        let smt = r.below(3) as u8;
        let pkg = smt + r.below(4) as u8;
        let llc = if r.below(2) == 0 {
            None
        } else {
            Some(r.below(pkg as u64 + 2) as u8)
        };
        let layout = ApicIdLayout::from_shifts(smt, pkg, llc);
        let nodes = 1 + r.below(4) as u32;
        let stride = 1 + r.below(3) as u32;
        let cpus: Vec<CpuTopology> = (0..n)
            .map(|i| {
                // Rarely a duplicate APIC ID or CPU index, to exercise errors.
                let apic = if r.below(400) == 0 {
                    0
                } else {
                    i as u32 * stride
                };
                layout.decode(
                    if r.below(400) == 0 { 0 } else { i },
                    apic,
                    r.below(nodes as u64) as u32,
                )
            })
            .collect();
        let slit = if r.below(2) == 0 {
            let k = nodes as usize;
            let mut flat = vec![10u8; k * k];
            for a in 0..k {
                for b in a + 1..k {
                    let d = 11 + r.below(40) as u8;
                    flat[a * k + b] = d;
                    flat[b * k + a] = d;
                }
            }
            let rows: Vec<&[u8]> = flat.chunks(k).collect();
            Some(NumaDistances::from_rows(&rows).unwrap())
        } else {
            None
        };
        if let Ok(sds) = SchedDomains::build(&cpus, slit.as_ref()) {
            built += 1;
            check_invariants_with(&sds, false);
            for cpu in 0..n {
                let mut s = String::new();
                write_sched_domain_debug(&mut s, &sds, cpu).unwrap();
                let _ = sd_lines(&sds, cpu);
            }
        }
        // Random CPUID words must decode or be rejected, never panic.
        let regs: Vec<CpuidRegs> = (0..4)
            .map(|_| CpuidRegs::new(r.next() as u32, r.next() as u32, r.next() as u32, 0))
            .collect();
        if let Ok(l) = ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf1F, &regs) {
            let _ = l.with_llc_from_leaf4(&regs).decode(0, r.next() as u32, 0);
        }
    }
    assert!(built > 200, "only {built} inputs were accepted");
}
