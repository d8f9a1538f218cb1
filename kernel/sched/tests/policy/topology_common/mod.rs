//! Shared helpers for the topology tests (`topology_*.rs`).
//!
//! A small model of QEMU's x86 CPU numbering (`Qemu`) produces, for a given
//! `-smp` shape, the APIC IDs in QEMU's CPU order and the CPUID leaf 0xB /
//! leaf 4 registers QEMU reports; the tests decode those registers, build the
//! domains and check them against the hierarchy Linux would build. Also here:
//! `shape`/`sd_lines` to render a CPU's domains, and the structural
//! invariants every built hierarchy must satisfy.
#![allow(dead_code)]

use sched::cpumask::CpuMask;
use sched::topology::print::write_sd_line;
use sched::topology::*;

/// QEMU's `-smp sockets=S,dies=D,cores=C,threads=T`. CPU index i has
/// thread i%T, core (i/T)%C, die (i/(T*C))%D, socket i/(T*C*D); the APIC ID
/// packs thread, core, die, socket fields of ceil_log2 width each.
#[derive(Clone, Copy)]
pub struct Qemu {
    pub sockets: u32,
    pub dies: u32,
    pub cores: u32,
    pub threads: u32,
}

pub fn bits(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

impl Qemu {
    pub fn new(sockets: u32, cores: u32, threads: u32) -> Self {
        Qemu {
            sockets,
            dies: 1,
            cores,
            threads,
        }
    }
    pub fn ncpus(&self) -> u32 {
        self.sockets * self.dies * self.cores * self.threads
    }
    pub fn core_offset(&self) -> u32 {
        bits(self.threads)
    }
    pub fn die_offset(&self) -> u32 {
        self.core_offset() + bits(self.cores)
    }
    pub fn pkg_offset(&self) -> u32 {
        self.die_offset() + bits(self.dies)
    }
    pub fn apic_id(&self, i: u32) -> u32 {
        let t = i % self.threads;
        let c = (i / self.threads) % self.cores;
        let d = (i / (self.threads * self.cores)) % self.dies;
        let s = i / (self.threads * self.cores * self.dies);
        (s << self.pkg_offset()) | (d << self.die_offset()) | (c << self.core_offset()) | t
    }
    /// Leaf 0xB subleafs 0..=2 as QEMU answers them on CPU i.
    pub fn leaf_0b(&self, i: u32) -> Vec<CpuidRegs> {
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
    pub fn leaf_1f(&self, i: u32) -> Vec<CpuidRegs> {
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
    pub fn leaf4(&self) -> Vec<CpuidRegs> {
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
    pub fn topology(&self, node: impl Fn(u32) -> u32) -> Vec<CpuTopology> {
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
    pub fn domains(&self) -> SchedDomains {
        SchedDomains::build(&self.topology(|_| 0), None).unwrap()
    }
}

pub fn sd_lines(sds: &SchedDomains, cpu: usize) -> Vec<String> {
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
pub fn shape(sds: &SchedDomains, cpu: usize) -> Vec<(String, String, String)> {
    sds.per_cpu(cpu)
        .iter()
        .map(|sd| {
            let groups: Vec<String> = sd.groups.iter().map(|g| g.span.to_string()).collect();
            (sd.level.to_string(), sd.span.to_string(), groups.join("/"))
        })
        .collect()
}

pub fn s3(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

/// Structural properties every built hierarchy must have.
pub fn check_invariants(sds: &SchedDomains) {
    check_invariants_with(sds, true)
}

/// `consistent`: the input topology nests (threads in LLCs in nodes). Without
/// that, Linux (and this code) widens spans, so equal-span levels with extra
/// flags (e.g. NUMA over a widened NODE) may legitimately remain.
pub fn check_invariants_with(sds: &SchedDomains, consistent: bool) {
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
                assert_eq!(g.cores, sched::balance::env::nr_cores(sds, &g.span), "cpu {cpu} group {}", g.span);
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

/// 2 sockets × 4 cores, node = socket (CPUs 0-3 and 4-7).
pub fn two_nodes() -> Vec<CpuTopology> {
    Qemu::new(2, 4, 1).topology(|i| i / 4)
}
