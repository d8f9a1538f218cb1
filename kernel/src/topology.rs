//! Reading each CPU's topology from CPUID and building the sched domains with
//! the policy crate (`sched::topology`), which does all the decoding and
//! construction; this module only gathers the raw registers and prints.
//!
//! Every CPU records its own CPUID snapshot while coming online (leaf 0xB and
//! 0x1F are per-CPU: EDX is that CPU's x2APIC id). The boot CPU then decodes
//! them all, so a CPU whose APIC id disagrees with the MADT is noticed.

use alloc::vec::Vec;

use sched::topology::{ApicIdLayout, CpuTopology, CpuidRegs, CpuidTopologyInput, SchedDomains};
use spin::Mutex;

use crate::arch::cpuid::{cpuid, max_leaf, Regs};
use crate::arch::percpu::MAX_CPUS;

/// The raw CPUID values one CPU reported about itself.
#[derive(Clone, Default)]
pub struct Snapshot {
    pub apic_id: u32,
    max_basic_leaf: u32,
    leaf1: CpuidRegs,
    leaf4: Vec<CpuidRegs>,
    leaf_0b: Vec<CpuidRegs>,
    leaf_1f: Vec<CpuidRegs>,
}

static SNAPSHOTS: [Mutex<Option<Snapshot>>; MAX_CPUS] = [const { Mutex::new(None) }; MAX_CPUS];

fn regs(r: Regs) -> CpuidRegs {
    CpuidRegs::new(r.eax, r.ebx, r.ecx, r.edx)
}

/// Reads subleafs of an extended-topology leaf until the level type is 0.
fn ext_leaf(leaf: u32) -> Vec<CpuidRegs> {
    let mut out = Vec::new();
    for sub in 0..8 {
        let r = cpuid(leaf, sub);
        if (r.ecx >> 8) & 0xff == 0 || r.ebx & 0xffff == 0 {
            break;
        }
        out.push(regs(r));
    }
    out
}

/// Records the running CPU's CPUID topology (called on every CPU).
pub fn record_this_cpu(cpu: usize) {
    let max = max_leaf();
    let leaf4 = if max >= 4 {
        (0..8).map(|s| regs(cpuid(4, s))).take_while(|r| r.eax & 0x1f != 0).collect()
    } else {
        Vec::new()
    };
    let snap = Snapshot {
        apic_id: crate::arch::cpuid::apic_id(),
        max_basic_leaf: max,
        leaf1: regs(cpuid(1, 0)),
        leaf4,
        leaf_0b: if max >= 0xB { ext_leaf(0xB) } else { Vec::new() },
        leaf_1f: if max >= 0x1F { ext_leaf(0x1F) } else { Vec::new() },
    };
    *SNAPSHOTS[cpu].lock() = Some(snap);
}

/// Which CPUID source the boot CPU's layout came from (for the boot log).
pub fn layout_source(cpu: usize) -> Option<sched::topology::cpuid::LayoutSource> {
    SNAPSHOTS[cpu].lock().as_ref().map(|s| layout_of(s).source())
}

fn layout_of(s: &Snapshot) -> ApicIdLayout {
    ApicIdLayout::detect(&CpuidTopologyInput {
        max_basic_leaf: s.max_basic_leaf,
        leaf1: s.leaf1,
        leaf4: &s.leaf4,
        leaf_0b: &s.leaf_0b,
        leaf_1f: &s.leaf_1f,
    })
}

/// Decodes every online CPU's snapshot; `nodes[i]` is CPU i's NUMA node.
pub fn decode(online: usize, nodes: &[u32]) -> Vec<CpuTopology> {
    (0..online)
        .filter_map(|cpu| {
            let guard = SNAPSHOTS[cpu].lock();
            let s = guard.as_ref()?;
            Some(layout_of(s).decode(cpu, s.apic_id, nodes.get(cpu).copied().unwrap_or(0)))
        })
        .collect()
}

/// Builds the domains, or explains why not and falls back to a flat level.
pub fn build_domains(cpus: &[CpuTopology], distances: Option<&[Vec<u8>]>) -> SchedDomains {
    let _ = distances;
    match SchedDomains::build(cpus, None) {
        Ok(d) => d,
        Err(e) => {
            crate::kprintln!("{}; falling back to one flat domain over all CPUs", e);
            SchedDomains::flat(cpus.len())
        }
    }
}
