//! The modelled machine: which CPUs exist, where each sits in the topology,
//! its NUMA node and its capacity; and the sched domains the policy crate
//! builds over them, with the code the kernel runs at boot
//! (`sched::topology::SchedDomains::build`).
//!
//! A CPU's place is computed the way QEMU presents it to the kernel, so that
//! the same `-smp` string gives the simulator and the kernel in QEMU the same
//! domains (a QEMU scenario compares the two):
//! - logical CPU `i` (the ACPI MADT order, which is the kernel's CPU order)
//!   has thread `i % threads`, core `i / threads % cores`, then module, die
//!   and socket in the same mixed-radix way (QEMU's `x86_topo_ids_from_idx()`);
//! - its APIC ID packs those numbers into bit fields of `ceil(log2(count))`
//!   bits each, thread lowest (QEMU's `x86_apicid_from_topo_ids()`), which is
//!   what CPUID leaves 0xB/0x1F then describe;
//! - the last-level cache is shared by a die (QEMU's default L3), so the LLC
//!   id is the APIC ID without its thread, core and module bits;
//! - with `numa` nodes, CPUs are split into that many equal contiguous ranges
//!   (what `cargo xtask run --numa N` passes to QEMU), without a SLIT.

use std::fmt::Write;

use sched::topology::{print, ceil_log2, CpuTopology, NumaDistances, SchedDomains, TopologyError};

use crate::smp::{SmpError, SmpSpec};

/// The capacity of a full-speed CPU (Linux's `SCHED_CAPACITY_SCALE`).
pub const FULL_CAPACITY: u32 = 1024;

/// A machine to simulate.
///
/// Invariants: `cpus[i].cpu == i`; `capacity.len() == cpus.len()`, every
/// capacity in `1..=1024`; `nodes >= 1` and every CPU's node is below it;
/// `distances`, when present, has `nodes` rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// The preset's name, or the `-smp` string it was made from.
    pub name: String,
    /// The topology the machine was made from.
    pub smp: SmpSpec,
    /// NUMA nodes (1 without NUMA).
    pub nodes: u32,
    /// Every CPU's place, indexed by logical CPU.
    pub cpus: Vec<CpuTopology>,
    /// Every CPU's capacity (1024 = full speed).
    pub capacity: Vec<u32>,
    /// The SLIT, if the machine has one (else 10 local, 20 remote).
    pub distances: Option<NumaDistances>,
}

/// Bits of an APIC ID field that counts `n` things.
fn width(n: u32) -> u32 {
    u32::from(ceil_log2(n))
}

impl Machine {
    /// The machine of `-smp SPEC` with `numa` nodes (0 or 1: none).
    pub fn from_smp(spec: &str, numa: u32) -> Result<Machine, SmpError> {
        let smp = SmpSpec::parse(spec)?;
        let nodes = numa.max(1);
        if smp.cpus % nodes != 0 {
            return Err(SmpError(format!("{} CPUs (-smp {spec}) do not split evenly into {nodes} NUMA nodes", smp.cpus)));
        }
        let per_node = smp.cpus / nodes;
        let (smt_w, core_w, module_w, die_w) = (width(smp.threads), width(smp.cores), width(smp.modules), width(smp.dies));
        let core_off = smt_w;
        let module_off = core_off + core_w;
        let die_off = module_off + module_w;
        let pkg_off = die_off + die_w;
        let cpus = (0..smp.cpus)
            .map(|i| {
                let smt = i % smp.threads;
                let core = i / smp.threads % smp.cores;
                let module = i / (smp.threads * smp.cores) % smp.modules;
                let die = i / (smp.threads * smp.cores * smp.modules) % smp.dies;
                let pkg = i / (smp.threads * smp.cores * smp.modules * smp.dies);
                let apic_id = pkg << pkg_off | die << die_off | module << module_off | core << core_off | smt;
                CpuTopology {
                    cpu: i as usize,
                    apic_id,
                    smt_id: smt,
                    core_id: (apic_id >> core_off) & ((1 << (pkg_off - core_off)) - 1),
                    pkg_id: pkg,
                    llc_id: apic_id >> die_off,
                    node: i / per_node,
                }
            })
            .collect();
        Ok(Machine {
            name: spec.to_string(),
            smp,
            nodes,
            cpus,
            capacity: vec![FULL_CAPACITY; smp.cpus as usize],
            distances: None,
        })
    }

    /// Number of CPUs.
    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// The sched domains the kernel would build on this machine.
    pub fn domains(&self) -> Result<SchedDomains, TopologyError> {
        SchedDomains::build(&self.cpus, self.distances.as_ref())
    }

    /// The lines the kernel prints about its topology at boot: one `@fw cpu`
    /// line per CPU, every CPU's domains in Linux's debug format, and one
    /// `@fw sd` line per CPU and level (`kernel/src/topology.rs`).
    pub fn topology_report(&self) -> Result<String, TopologyError> {
        let domains = self.domains()?;
        let mut out = String::new();
        for t in &self.cpus {
            let _ = print::write_cpu_line(&mut out, t);
            out.push('\n');
        }
        for cpu in domains.online().iter() {
            let _ = print::write_sched_domain_debug(&mut out, &domains, cpu);
        }
        for cpu in domains.online().iter() {
            for sd in domains.per_cpu(cpu) {
                let _ = print::write_sd_line(&mut out, cpu, sd);
                out.push('\n');
            }
        }
        Ok(out)
    }

    /// One line: name, shape, nodes, capacities.
    pub fn describe(&self) -> String {
        let mut s = format!("{}: {} CPUs (-smp {}", self.name, self.nr_cpus(), self.smp);
        let _ = write!(s, ", {} NUMA node{})", self.nodes, if self.nodes == 1 { "" } else { "s" });
        if self.capacity.iter().any(|&c| c != FULL_CAPACITY) {
            let caps: Vec<String> = self.capacity.iter().enumerate()
                .filter(|&(_, &c)| c != FULL_CAPACITY)
                .map(|(i, c)| format!("{i}:{c}"))
                .collect();
            let _ = write!(s, ", capacity {}", caps.join(","));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(spec: &str, numa: u32) -> Machine {
        Machine::from_smp(spec, numa).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn ids_follow_the_mixed_radix_order_and_the_apic_bit_fields() {
        // 2 sockets x 3 cores x 2 threads: core needs 2 bits, thread 1.
        let mach = m("12,sockets=2,cores=3,threads=2", 0);
        let t = &mach.cpus[7]; // socket 1, core 0, thread 1
        assert_eq!((t.pkg_id, t.core_id, t.smt_id), (1, 0, 1));
        assert_eq!(t.apic_id, 1 << 3 | 1);
        assert_eq!(t.llc_id, 1);
        let t = &mach.cpus[5]; // socket 0, core 2, thread 1
        assert_eq!((t.pkg_id, t.core_id, t.smt_id, t.apic_id), (0, 2, 1, 2 << 1 | 1));
        // APIC IDs skip the unused core number 3 of each socket.
        assert_eq!(mach.cpus[6].apic_id, 8);
    }

    #[test]
    fn dies_split_the_llc_and_count_in_core_id() {
        let mach = m("8,sockets=1,dies=2,cores=2,threads=2", 0);
        let t = &mach.cpus[6]; // die 1, core 1, thread 0
        assert_eq!(t.apic_id, 1 << 2 | 1 << 1);
        assert_eq!((t.core_id, t.llc_id), (0b11, 1));
        assert_eq!(mach.cpus[3].llc_id, 0);
    }

    #[test]
    fn numa_nodes_are_equal_contiguous_ranges() {
        let mach = m("8,sockets=2", 2);
        let nodes: Vec<u32> = mach.cpus.iter().map(|t| t.node).collect();
        assert_eq!(nodes, [0, 0, 0, 0, 1, 1, 1, 1]);
        assert!(Machine::from_smp("6", 4).unwrap_err().0.contains("do not split evenly"));
    }

    #[test]
    fn smt_mc_pkg_domains_are_built_from_the_model() {
        let mach = m("8,sockets=2,cores=2,threads=2", 0);
        let d = mach.domains().unwrap();
        let names: Vec<String> = d.per_cpu(5).iter().map(|sd| format!("{:?}", sd.level)).collect();
        assert_eq!(names, ["Smt", "Mc", "Pkg"]);
        assert_eq!(d.sd_llc_size(5), 4);
        let report = mach.topology_report().unwrap();
        assert!(report.contains("@fw cpu id=5 apic=5 pkg=1 core=0 smt=1 llc=1 node=0\n"), "{report}");
        assert!(report.contains("CPU5 attaching sched-domain(s):\n"));
    }
}
