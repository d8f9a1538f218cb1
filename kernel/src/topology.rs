//! Reading each CPU's topology from CPUID and building the sched domains with
//! the policy crate (`sched::topology`), which does all the decoding and
//! construction; this module only gathers the raw registers and prints.
//!
//! Every CPU records its own CPUID snapshot while coming online (leaf 0xB and
//! 0x1F are per-CPU: EDX is that CPU's x2APIC id). The boot CPU then decodes
//! them all, so a CPU whose APIC id disagrees with the MADT is noticed.

use alloc::string::String;
use alloc::vec::Vec;

use sched::cpumask::CpuMask;
use sched::topology::{print, ApicIdLayout, CpuTopology, CpuidRegs, CpuidTopologyInput, NumaDistances, SchedDomains};
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

/// Builds the domains, or explains why not and falls back to one flat level.
pub fn build_domains(cpus: &[CpuTopology], distances: Option<&[Vec<u8>]>) -> SchedDomains {
    let slit = match distances {
        Some(rows) if !rows.is_empty() => {
            let rows: Vec<&[u8]> = rows.iter().map(|r| r.as_slice()).collect();
            match NumaDistances::from_rows(&rows) {
                Ok(d) => Some(d),
                Err(e) => {
                    crate::kprintln!("{}; ignoring the SLIT (nodes at distance 10 local, 20 remote)", e);
                    None
                }
            }
        }
        _ => None,
    };
    match SchedDomains::build(cpus, slit.as_ref()) {
        Ok(d) => d,
        Err(e) => {
            crate::kprintln!("{}; falling back to one flat domain over all CPUs", e);
            let mut online = CpuMask::new();
            for t in cpus {
                online.set(t.cpu);
            }
            SchedDomains::flat(online)
        }
    }
}

/// Prints one `@fw cpu` line per CPU.
pub fn print_cpus(cpus: &[CpuTopology]) {
    for t in cpus {
        let mut line = String::new();
        let _ = print::write_cpu_line(&mut line, t);
        crate::kprintln!("{}", line);
    }
}

/// Machines up to this many CPUs print every CPU's hierarchy in the debug
/// style; larger ones print the first CPU's. At 1,024 CPUs of 4 x 128 x 2 the
/// trees are 3.5 MB of serial output (each group `2:{ span=2-3 cap=2048 }`),
/// tens of minutes of an emulated UART; the `@fw sd` lines say the same
/// about every CPU in a quarter of it.
const DEBUG_TREE_CPUS: usize = 64;

/// Prints every CPU's hierarchy in Linux's sched-domain debug style (only
/// the first CPU's above [`DEBUG_TREE_CPUS`]), then one `@fw sd` line per
/// CPU and level.
pub fn print_domains(domains: &SchedDomains) {
    let cpus: Vec<usize> = domains.online().iter().collect();
    let trees = if cpus.len() > DEBUG_TREE_CPUS { &cpus[..1] } else { &cpus[..] };
    for &cpu in trees {
        let mut text = String::new();
        let _ = print::write_sched_domain_debug(&mut text, domains, cpu);
        for line in text.lines() {
            crate::kprintln!("{}", line);
        }
    }
    if trees.len() < cpus.len() {
        crate::kprintln!(
            "(the other {} CPUs' domains: the @fw sd lines below; the trees are printed up to {} CPUs)",
            cpus.len() - trees.len(),
            DEBUG_TREE_CPUS
        );
    }
    for &cpu in &cpus {
        for sd in domains.per_cpu(cpu) {
            let mut line = String::new();
            let _ = print::write_sd_line(&mut line, cpu, sd);
            crate::kprintln!("{}", line);
        }
    }
}
