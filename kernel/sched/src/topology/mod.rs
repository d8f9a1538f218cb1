//! CPU topology decoding and scheduling-domain construction (pure code).
//!
//! This module turns what the kernel read from the hardware into the
//! scheduling-domain hierarchy the fair scheduler balances over, following
//! Linux (`arch/x86/kernel/cpu/topology*.c`, `kernel/sched/topology.c`:
//! `build_sched_domains()`, `sd_degenerate()`, `sd_init()`). It performs no I/O: the
//! kernel executes CPUID and parses ACPI itself and passes raw values in.
//!
//! # Pipeline
//!
//! 1. [`cpuid`]: raw CPUID registers → [`ApicIdLayout`] (the x2APIC-ID bit
//!    shifts of each topology level, plus the LLC shift), exactly as Linux's
//!    x86 `parse_topology` reads leaf 0x1F / 0xB / the legacy leaves 1 and 4.
//!    [`ApicIdLayout::decode`] then maps one CPU's APIC ID to a [`CpuTopology`]
//!    (`smt_id`, `core_id`, `pkg_id`, `llc_id`).
//! 2. [`domains`]: `&[CpuTopology]` plus optional [`NumaDistances`] (ACPI SLIT)
//!    → [`SchedDomains`]: per CPU, the bottom-up list of [`SchedDomain`]s with
//!    their [`SchedGroup`]s (the types in [`domain`]), flags and balancing parameters, after Linux's
//!    degenerate-level removal ([`degenerate`]) and with the per-CPU shortcuts
//!    (`sd_llc`, `sd_llc_size`, `sd_llc_id`, `sd_numa`, `cpus_share_cache`).
//! 3. [`print`]: the serial-console renderings (Linux's sched-domain debug
//!    text, the `@fw sd` and `@fw cpu` machine lines).
//!
//! # Errors and fallback
//!
//! Nothing here panics, whatever the input. Inputs that cannot describe a real
//! machine (duplicate APIC IDs, too many CPUs, a malformed SLIT, ...) yield a
//! [`TopologyError`] whose `Display` is a one-line explanation. The kernel's
//! contract is: print the error, then use [`SchedDomains::flat`] (one
//! `PKG`-level domain over all online CPUs with one single-CPU group per CPU,
//! or no domain at all for one CPU) so that scheduling still works.

pub mod cpuid;
pub mod degenerate;
pub mod domain;
pub mod domains;
pub mod flags;
pub mod numa;
pub mod print;

pub use cpuid::{ApicIdLayout, CpuSignature, CpuVendor, CpuidRegs, CpuidTopologyInput, ExtLeaf, TopoLevel};
pub use domain::{Level, SchedDomain, SchedGroup};
pub use domains::SchedDomains;
pub use flags::*;
pub use numa::NumaDistances;

use core::fmt;

/// One CPU's place in the machine, as the domain builder consumes it.
///
/// Invariants expected by [`SchedDomains::build`] (checked there, violations
/// are [`TopologyError`]s): `cpu < MAX_CPUS` and unique; `apic_id` unique.
/// The ID fields follow Linux's meanings:
/// * `smt_id`: thread number inside its core;
/// * `core_id`: core number inside its package (it includes the die/module
///   bits, as Linux's `core_id` does, so it is unique within the package);
/// * `pkg_id`: package (socket) number;
/// * `llc_id`: identifier of the last-level cache, unique machine-wide
///   (APIC ID shifted right by the LLC shift);
/// * `node`: NUMA node (0 without NUMA information).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTopology {
    /// Logical CPU index (the kernel's enumeration order, ACPI MADT order).
    pub cpu: usize,
    /// x2APIC (or xAPIC) ID.
    pub apic_id: u32,
    /// Thread within the core.
    pub smt_id: u32,
    /// Core within the package.
    pub core_id: u32,
    /// Package (socket).
    pub pkg_id: u32,
    /// Last-level-cache identifier.
    pub llc_id: u32,
    /// NUMA node.
    pub node: u32,
}

/// Why a topology could not be decoded or turned into domains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TopologyError {
    /// No CPUs were given.
    NoCpus,
    /// More CPUs were given than [`crate::cpumask::MAX_CPUS`].
    TooManyCpus { count: usize },
    /// A CPU index is `>= MAX_CPUS`.
    CpuIndexOutOfRange { cpu: usize },
    /// The same logical CPU index appears twice.
    DuplicateCpu { cpu: usize },
    /// Two CPUs report the same APIC ID.
    DuplicateApicId {
        apic_id: u32,
        first_cpu: usize,
        second_cpu: usize,
    },
    /// A CPU's node has no row in the distance matrix.
    NodeWithoutDistance { cpu: usize, node: u32, nodes: usize },
    /// The distance matrix has no nodes, or more than 256.
    BadNodeCount { nodes: usize },
    /// The distance matrix is not `nodes × nodes`.
    DistanceNotSquare {
        nodes: usize,
        row: usize,
        len: usize,
    },
    /// `distance(a, b) != distance(b, a)`.
    DistanceAsymmetric { a: usize, b: usize, ab: u8, ba: u8 },
    /// A node's distance to itself is not 10 (ACPI's local distance).
    DistanceBadLocal { node: usize, distance: u8 },
    /// A distance between two different nodes is not above 10.
    DistanceBadRemote { a: usize, b: usize, distance: u8 },
    /// An extended-topology CPUID leaf had no valid subleaf 0.
    CpuidNoLevels { leaf: u32 },
    /// An extended-topology subleaf named a level at or below the previous one.
    CpuidLevelOrder {
        leaf: u32,
        subleaf: usize,
        level_type: u8,
    },
    /// An extended-topology subleaf gave a smaller shift than the level below.
    CpuidShiftDecreases {
        leaf: u32,
        subleaf: usize,
        shift: u8,
        previous: u8,
    },
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use TopologyError::*;
        match *self {
            NoCpus => write!(f, "topology: no CPUs given"),
            TooManyCpus { count } => write!(
                f,
                "topology: {count} CPUs given, at most {} supported",
                crate::cpumask::MAX_CPUS
            ),
            CpuIndexOutOfRange { cpu } => write!(
                f,
                "topology: CPU index {cpu} is not below the limit of {}",
                crate::cpumask::MAX_CPUS
            ),
            DuplicateCpu { cpu } => write!(f, "topology: CPU index {cpu} given twice"),
            DuplicateApicId { apic_id, first_cpu, second_cpu } => write!(
                f,
                "topology: CPUs {first_cpu} and {second_cpu} both have APIC ID {apic_id:#x}"
            ),
            NodeWithoutDistance { cpu, node, nodes } => write!(
                f,
                "topology: CPU {cpu} is on node {node} but the distance table has only {nodes} nodes"
            ),
            BadNodeCount { nodes } => {
                write!(f, "topology: distance table for {nodes} nodes (need 1..=256)")
            }
            DistanceNotSquare { nodes, row, len } => write!(
                f,
                "topology: distance table is not square: row {row} has {len} entries, expected {nodes}"
            ),
            DistanceAsymmetric { a, b, ab, ba } => write!(
                f,
                "topology: distance table is asymmetric: {a}->{b} is {ab} but {b}->{a} is {ba}"
            ),
            DistanceBadLocal { node, distance } => write!(
                f,
                "topology: node {node}'s distance to itself is {distance}, expected 10"
            ),
            DistanceBadRemote { a, b, distance } => write!(
                f,
                "topology: distance {a}->{b} is {distance}, must be above the local 10"
            ),
            CpuidNoLevels { leaf } => {
                write!(f, "topology: CPUID leaf {leaf:#x} reports no topology levels")
            }
            CpuidLevelOrder { leaf, subleaf, level_type } => write!(
                f,
                "topology: CPUID leaf {leaf:#x} subleaf {subleaf} level type {level_type} is out of order"
            ),
            CpuidShiftDecreases { leaf, subleaf, shift, previous } => write!(
                f,
                "topology: CPUID leaf {leaf:#x} subleaf {subleaf} shift {shift} is below the previous level's {previous}"
            ),
        }
    }
}

/// `ceil(log2(n))` with `ceil_log2(0) == ceil_log2(1) == 0` (Linux's
/// `get_count_order` for the values CPUID can report).
pub fn ceil_log2(n: u32) -> u8 {
    if n <= 1 {
        0
    } else {
        (32 - (n - 1).leading_zeros()) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topology_ceil_log2() {
        assert_eq!(ceil_log2(0), 0);
        assert_eq!(ceil_log2(1), 0);
        assert_eq!(ceil_log2(2), 1);
        assert_eq!(ceil_log2(3), 2);
        assert_eq!(ceil_log2(4), 2);
        assert_eq!(ceil_log2(5), 3);
        assert_eq!(ceil_log2(u32::MAX), 32);
    }
}
