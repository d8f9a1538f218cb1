//! The balance environment (`struct lb_env` in Linux): which CPU balances at
//! which domain, in which idle state, over which CPUs.
//!
//! # Contract
//!
//! Built by the kernel for one `sched_balance_rq` attempt on `dst_cpu` at its
//! domain index `sd_index` (into `SchedDomains::per_cpu(dst_cpu)`, bottom-up).
//! Read-only for the decisions; the kernel holds no lock while they run (the
//! snapshots are copies). An index out of range yields "balanced" answers,
//! never a panic.

use crate::cpumask::CpuMask;
use crate::topology::{Level, SchedDomain, SchedDomains, SD_ASYM_CPUCAPACITY};

use super::snapshot::{cpu_snap, CpuSnapshot, IdleType};

/// One balance attempt's fixed inputs.
#[derive(Clone, Copy, Debug)]
pub struct LbEnv<'a> {
    /// The domain hierarchy.
    pub sds: &'a SchedDomains,
    /// The CPU that pulls.
    pub dst_cpu: usize,
    /// Index of the domain in `sds.per_cpu(dst_cpu)`.
    pub sd_index: usize,
    /// Why we balance.
    pub idle: IdleType,
    /// Candidate CPUs: the domain span ∩ active CPUs, minus source CPUs
    /// already found all-pinned in this attempt (Linux `env->cpus`).
    pub cpus: CpuMask,
    /// Groups whose `sgc->imbalance` flag is set (a child-level balance
    /// could not move pinned tasks), named by their first CPU.
    pub imbalanced_groups: CpuMask,
    /// The domain's `nr_balance_failed`.
    pub nr_balance_failed: u32,
    /// How a group's task capacity is judged (v6.19's, or the pre-3.18
    /// capacity factor).
    pub group_capacity: super::config::GroupCapacity,
}

impl<'a> LbEnv<'a> {
    /// An environment over the whole domain span.
    pub fn new(sds: &'a SchedDomains, dst_cpu: usize, sd_index: usize, idle: IdleType) -> Self {
        let cpus = sds
            .per_cpu(dst_cpu)
            .get(sd_index)
            .map_or(CpuMask::new(), |sd| sd.span);
        LbEnv {
            sds,
            dst_cpu,
            sd_index,
            idle,
            cpus,
            imbalanced_groups: CpuMask::new(),
            nr_balance_failed: 0,
            group_capacity: super::config::GroupCapacity::Util,
        }
    }

    /// The domain, if the index is valid.
    pub fn sd(&self) -> Option<&'a SchedDomain> {
        self.sds.per_cpu(self.dst_cpu).get(self.sd_index)
    }

    /// The parent domain, if any.
    pub fn parent(&self) -> Option<&'a SchedDomain> {
        self.sds.per_cpu(self.dst_cpu).get(self.sd_index + 1)
    }
}

/// The SMT siblings of `cpu` (its `SMT` domain span, or `{cpu}`).
pub fn smt_mask(sds: &SchedDomains, cpu: usize) -> CpuMask {
    match sds.per_cpu(cpu).first() {
        Some(sd) if sd.level == Level::Smt => sd.span,
        _ => CpuMask::single(cpu),
    }
}

/// Every CPU of `cpu`'s core is idle (`is_core_idle`); CPUs without a
/// snapshot count as busy.
pub fn is_core_idle(sds: &SchedDomains, cpus: &[CpuSnapshot], cpu: usize) -> bool {
    smt_mask(sds, cpu)
        .iter()
        .all(|c| cpu_snap(cpus, c).is_some_and(|s| s.available_idle()))
}

/// Number of cores in `span` (CPUs that are the first of their SMT mask).
pub fn nr_cores(sds: &SchedDomains, span: &CpuMask) -> u32 {
    span.iter()
        .filter(|&c| smt_mask(sds, c).intersection(span).first() == Some(c))
        .count() as u32
}

/// Whether the domain balances between CPUs of different capacities: the
/// `SD_ASYM_CPUCAPACITY` flag, or (since the topology builder never sets
/// it) differing `capacity_orig` among the snapshots of its span.
pub fn sd_asym_cpucapacity(sd: &SchedDomain, cpus: &[CpuSnapshot]) -> bool {
    if sd.flags & SD_ASYM_CPUCAPACITY != 0 {
        return true;
    }
    let mut caps = sd.span.iter().filter_map(|c| cpu_snap(cpus, c)).map(|s| s.capacity_orig);
    match caps.next() {
        Some(first) => caps.any(|c| c != first),
        None => false,
    }
}
