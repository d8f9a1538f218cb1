//! Host tests for CPUID topology decoding: QEMU's APIC-ID packing, leaf
//! 0xB / 0x1F / leaf 4 registers, which leaf `ApicIdLayout::detect` trusts
//! (0x1F, then 0xB, then legacy leaf 1 + 4), and decoding a CPU's package,
//! core, SMT and LLC IDs from them.

use crate::topology_common;

use sched::topology::print::write_cpu_line;
use sched::topology::*;
use topology_common::{check_invariants, s3, shape, Qemu};

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
