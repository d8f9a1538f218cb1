//! One group's load-balancing statistics, `struct sg_lb_stats` (reference §5.5), and its class,
//! `enum group_type`: the data that `group_stats` builds and `classify` reads. Below both, so
//! that neither imports the other for its types.

use crate::cpumask::CpuMask;

/// A group's state, in increasing order of how urgently it should be
/// relieved (the derived order is the comparison Linux uses).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupType {
    /// Some capacity is unused.
    #[default]
    HasSpare,
    /// Busy, but no task is waiting for CPU time it would get elsewhere.
    FullyBusy,
    /// A task needs a CPU with more capacity.
    MisfitTask,
    /// An SMT group runs ≥ 2 fair tasks while an idle CPU could take one.
    SmtBalance,
    /// ASYM_PACKING prefers the destination (never produced on x86 here).
    AsymPacking,
    /// A child-level balance could not move pinned tasks (`sgc->imbalance`).
    Imbalanced,
    /// More tasks than CPUs and short of capacity.
    Overloaded,
}

impl GroupType {
    /// Linux's name.
    pub const fn name(self) -> &'static str {
        match self {
            GroupType::HasSpare => "has_spare",
            GroupType::FullyBusy => "fully_busy",
            GroupType::MisfitTask => "misfit_task",
            GroupType::SmtBalance => "smt_balance",
            GroupType::AsymPacking => "asym_packing",
            GroupType::Imbalanced => "imbalanced",
            GroupType::Overloaded => "overloaded",
        }
    }
}

/// `struct sg_lb_stats` for one group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SgLbStats {
    /// The group's CPUs.
    pub span: CpuMask,
    /// Flags of the child domain (`sg->flags`).
    pub flags: u32,
    /// Σ `cpu_load`.
    pub group_load: u64,
    /// Σ `cpu_util_cfs`.
    pub group_util: u64,
    /// Σ `cpu_runnable`.
    pub group_runnable: u64,
    /// Σ `nr_running` (all classes).
    pub sum_nr_running: u32,
    /// Σ fair runnable tasks.
    pub sum_h_nr_running: u32,
    /// CPUs with nothing to run.
    pub idle_cpus: u32,
    /// Σ `capacity_of` (at least 1).
    pub group_capacity: u64,
    /// Number of CPUs.
    pub group_weight: u32,
    /// Number of cores.
    pub cores: u32,
    /// Smallest / largest per-CPU capacity.
    pub min_capacity: u64,
    /// See `min_capacity`.
    pub max_capacity: u64,
    /// Largest misfit load (see §5.5).
    pub misfit_task_load: u64,
    /// `group_load · 1024 / group_capacity`; computed for overloaded groups
    /// here and by `calculate_imbalance` where Linux computes it.
    pub avg_load: u64,
    /// `sgc->imbalance`.
    pub sgc_imbalance: bool,
    /// ASYM_PACKING preference (never set on this x86 model).
    pub asym_packing: bool,
    /// SMT group with ≥ 2 fair tasks while dst is idle.
    pub smt_balance: bool,
    /// Classification.
    pub group_type: GroupType,
    /// The pre-3.18 task slots (`sg_capacity_factor`), with
    /// `GroupCapacity::Factor` only (0 otherwise).
    pub capacity_factor: u32,
}
