//! Host tests for impossible topologies: every `TopologyError` that
//! `SchedDomains::build` and the `NumaDistances` constructors return (no CPUs,
//! duplicate CPU index or APIC ID, too many CPUs, bad distance tables) and
//! their messages; and a seeded random sweep showing that arbitrary topology
//! input and CPUID words are built or rejected, never a panic.

use crate::topology_common;

use sched::topology::print::write_sched_domain_debug;
use sched::topology::*;
use topology_common::{check_invariants_with, sd_lines, Qemu};

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
    big[0].cpu = 1024;
    assert_eq!(
        err(&big, None),
        TopologyError::CpuIndexOutOfRange { cpu: 1024 }
    );
    let many: Vec<CpuTopology> = (0..1025)
        .map(|i| ApicIdLayout::from_shifts(0, 11, None).decode(i, i as u32, 0))
        .collect();
    assert_eq!(err(&many, None), TopologyError::TooManyCpus { count: 1025 });
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
