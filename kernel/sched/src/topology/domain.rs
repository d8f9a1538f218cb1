//! One CPU's scheduling domain and its groups, as built (`domains`) and trimmed (`degenerate`):
//! the data both work on, below them, so that neither imports the other for its types.

use alloc::vec::Vec;
use core::fmt;

use crate::cpumask::CpuMask;

/// The name of a scheduling-domain level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Hardware threads of one core.
    Smt,
    /// CPUs sharing the last-level cache.
    Mc,
    /// CPUs of one NUMA node (Linux's `PKG`, ex-`DIE`).
    Pkg,
    /// Linux's NUMA identity level (also one node); survives only when `PKG`
    /// is dropped because a package holds several nodes.
    Node,
    /// NUMA level `k ≥ 1`: nodes within the k-th smallest distinct distance.
    Numa(u8),
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Smt => f.write_str("SMT"),
            Level::Mc => f.write_str("MC"),
            Level::Pkg => f.write_str("PKG"),
            Level::Node => f.write_str("NODE"),
            Level::Numa(k) if *k <= 1 => f.write_str("NUMA"),
            Level::Numa(k) => write!(f, "NUMA{k}"),
        }
    }
}

/// One scheduling group: a set of CPUs a domain balances between.
///
/// Invariants: `span` is non-empty and a subset of its domain's span; the
/// groups of a non-NUMA domain are disjoint and cover the domain span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedGroup {
    pub span: CpuMask,
    /// Initial `sgc->capacity`: 1024 × |span|.
    pub capacity: u32,
    /// The CPU that balances on behalf of this group.
    pub balance_cpu: usize,
    /// Flags of the domain directly below the owning domain in this CPU's
    /// final (post-degeneration) chain, 0 at the bottom (Linux's `sg->flags`).
    pub flags: u32,
    /// Cores the group spans: its CPUs none of whose SMT siblings (in the
    /// final SMT domains) is a lower CPU of the group. Linux's `sg->cores`,
    /// counted once when the domains are built (`init_sched_groups_capacity()`),
    /// not at every balance pass.
    pub cores: u32,
}

/// One scheduling domain of one CPU.
///
/// Invariants: the span contains the owning CPU and the span of the domain
/// below; `groups[0]` (the local group) contains the owning CPU;
/// `span_weight == span.weight()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedDomain {
    pub level: Level,
    pub span: CpuMask,
    pub groups: Vec<SchedGroup>,
    pub flags: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub min_interval_ms: u32,
    pub max_interval_ms: u32,
    pub busy_factor: u32,
    pub balance_interval_ms: u32,
    pub span_weight: u32,
}
