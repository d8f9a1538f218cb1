//! Fork and exec placement, the slow path (reference §4.1):
//! `sched_balance_find_dst_group`, `sched_balance_find_dst_group_cpu` and
//! `sched_balance_find_dst_cpu`.
//!
//! # Contract
//!
//! At fork (`SD_BALANCE_FORK`) or exec (`SD_BALANCE_EXEC`), under the new
//! task's `pi_lock` and no run-queue lock, the kernel calls
//! [`select_task_rq_fork`] with snapshots and enqueues the task on the
//! returned CPU. The new task is not yet on any run-queue, so no "without
//! p" correction is needed (exec balancing of a running task is treated the
//! same way: its own contribution is counted, a small bias to move).
//! Counting: `sbf_*`/`sbe_*` via [`count_fork`].

use crate::topology::{SchedDomains, SchedGroup};

use super::classify::group_classify;
use super::domain_stats::DomainStats;
use super::group_stats::avg_load;
use super::sg_lb_stats::{GroupType, SgLbStats};
use super::snapshot::{cpu_snap, CpuSnapshot, TaskSnapshot};

/// `update_sg_wakeup_stats` over the group's CPUs the task may use.
pub fn update_sg_wakeup_stats(pct: u32, group: &SchedGroup, p: &TaskSnapshot, cpus: &[CpuSnapshot]) -> SgLbStats {
    let mut s = SgLbStats {
        span: group.span,
        flags: group.flags,
        group_weight: group.span.weight(),
        cores: group.cores,
        min_capacity: u64::MAX,
        ..SgLbStats::default()
    };
    for snap in group.span.iter().filter_map(|c| cpu_snap(cpus, c)) {
        s.group_capacity = s.group_capacity.saturating_add(snap.cap());
        s.min_capacity = s.min_capacity.min(snap.cap());
        s.max_capacity = s.max_capacity.max(snap.cap());
        if !p.allows(snap.cpu) {
            continue;
        }
        s.group_load = s.group_load.saturating_add(snap.load_avg);
        s.group_util = s.group_util.saturating_add(snap.util_cfs());
        s.group_runnable = s.group_runnable.saturating_add(snap.runnable_avg);
        s.sum_h_nr_running = s.sum_h_nr_running.saturating_add(snap.h_nr_runnable);
        s.sum_nr_running = s.sum_nr_running.saturating_add(snap.nr_running);
        if snap.nr_running == 0 && snap.available_idle() {
            s.idle_cpus += 1;
        }
    }
    s.group_capacity = s.group_capacity.max(1);
    s.group_type = group_classify(pct, &s);
    if matches!(s.group_type, GroupType::FullyBusy | GroupType::Overloaded) {
        s.avg_load = avg_load(s.group_load, s.group_capacity);
    }
    s
}

/// `update_pick_idlest`: whether `sg` is idler than `idlest`.
fn pick_idlest(idlest: &SgLbStats, sg: &SgLbStats) -> bool {
    if sg.group_type != idlest.group_type {
        return sg.group_type < idlest.group_type;
    }
    match sg.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => sg.avg_load < idlest.avg_load,
        GroupType::Imbalanced | GroupType::AsymPacking | GroupType::SmtBalance => false,
        GroupType::MisfitTask => sg.max_capacity > idlest.max_capacity,
        GroupType::HasSpare => {
            sg.idle_cpus > idlest.idle_cpus || (sg.idle_cpus == idlest.idle_cpus && sg.group_util < idlest.group_util)
        }
    }
}

/// `sched_balance_find_dst_group`: the idlest group of `cpu`'s domain
/// `sd_index` if it is clearly better than the local one, else `None`.
pub fn sched_balance_find_dst_group<'a>(sds: &'a SchedDomains, cpu: usize, sd_index: usize, p: &TaskSnapshot, cpus: &[CpuSnapshot]) -> Option<&'a SchedGroup> {
    let sd = sds.per_cpu(cpu).get(sd_index)?;
    let pct = sd.imbalance_pct;
    let mut local: Option<SgLbStats> = None;
    let mut idlest: Option<(&SchedGroup, SgLbStats)> = None;
    for g in sd.groups.iter().filter(|g| g.span.intersects(&p.allowed)) {
        let s = update_sg_wakeup_stats(pct, g, p, cpus);
        if g.span.contains(cpu) {
            local = Some(s);
        } else if idlest.as_ref().is_none_or(|(_, i)| pick_idlest(i, &s)) {
            idlest = Some((g, s));
        }
    }
    let (g, idl) = idlest?;
    let Some(loc) = local else { return Some(g) };
    if loc.group_type != idl.group_type {
        return (loc.group_type > idl.group_type).then_some(g);
    }
    match loc.group_type {
        GroupType::Overloaded | GroupType::FullyBusy => {
            let margin = 1024 * (pct.saturating_sub(100)) as u64 / 100;
            if idl.avg_load >= loc.avg_load.saturating_add(margin) {
                return None;
            }
            if 100 * loc.avg_load as u128 <= pct as u128 * idl.avg_load as u128 {
                return None;
            }
        }
        GroupType::HasSpare => {
            if loc.idle_cpus >= idl.idle_cpus {
                return None;
            }
        }
        _ => return None,
    }
    Some(g)
}

/// `sched_balance_find_dst_group_cpu`: a SCHED_IDLE-only CPU, else the
/// first idle CPU, else the least loaded allowed CPU.
pub fn sched_balance_find_dst_group_cpu(group: &SchedGroup, p: &TaskSnapshot, cpus: &[CpuSnapshot], this: usize) -> usize {
    if group.span.weight() == 1 {
        return group.span.first().unwrap_or(this);
    }
    let mut idle = None;
    let mut least: Option<(u64, usize)> = None;
    for s in group.span.intersection(&p.allowed).iter().filter_map(|c| cpu_snap(cpus, c)) {
        if s.sched_idle_only && s.nr_running > 0 {
            return s.cpu;
        }
        if s.available_idle() {
            idle.get_or_insert(s.cpu);
        } else if idle.is_none() && least.is_none_or(|(l, _)| s.load_avg < l) {
            least = Some((s.load_avg, s.cpu));
        }
    }
    idle.or(least.map(|l| l.1)).unwrap_or(this)
}

/// `sched_balance_find_dst_cpu`: descend from `cpu`'s highest domain with
/// `sd_flag`, moving to the idlest group's idlest CPU at each level.
pub fn sched_balance_find_dst_cpu(sds: &SchedDomains, p: &TaskSnapshot, this: usize, prev: usize, sd_flag: u32, cpus: &[CpuSnapshot]) -> usize {
    let chain = sds.per_cpu(this);
    let top = chain.iter().take_while(|d| d.flags & sd_flag != 0).count();
    if top == 0 {
        return this;
    }
    if !chain[top - 1].span.intersects(&p.allowed) {
        return prev;
    }
    let (mut cpu, mut idx) = (this, Some(top - 1));
    let mut guard = 0;
    while let Some(i) = idx {
        guard += 1;
        if guard > 64 {
            break;
        }
        let Some(sd) = sds.per_cpu(cpu).get(i) else { break };
        let child = i.checked_sub(1);
        if sd.flags & sd_flag == 0 {
            idx = child;
            continue;
        }
        let Some(group) = sched_balance_find_dst_group(sds, cpu, i, p, cpus) else {
            idx = child;
            continue;
        };
        let new = sched_balance_find_dst_group_cpu(group, p, cpus, cpu);
        if new == cpu {
            idx = child;
            continue;
        }
        let weight = sd.span_weight;
        cpu = new;
        idx = None;
        for (j, d) in sds.per_cpu(cpu).iter().enumerate() {
            if weight <= d.span_weight {
                break;
            }
            if d.flags & sd_flag != 0 {
                idx = Some(j);
            }
        }
    }
    cpu
}

/// `select_task_rq_fair` for fork/exec: the slow path from the waking CPU.
pub fn select_task_rq_fork(sds: &SchedDomains, p: &TaskSnapshot, this: usize, sd_flag: u32, cpus: &[CpuSnapshot]) -> usize {
    let c = sched_balance_find_dst_cpu(sds, p, this, p.prev_cpu, sd_flag, cpus);
    if p.allows(c) {
        c
    } else {
        p.allowed.first().unwrap_or(c)
    }
}

/// Counts a fork (`exec = false`) or exec placement in the top balancing
/// domain of `this` (`stats[i]` belongs to `sds.per_cpu(this)[i]`).
pub fn count_fork<S: AsMut<DomainStats>>(sds: &SchedDomains, this: usize, sd_flag: u32, exec: bool, chosen: usize, stats: &mut [S]) {
    let top = sds.per_cpu(this).iter().take_while(|d| d.flags & sd_flag != 0).count();
    if let Some(s) = top.checked_sub(1).and_then(|i| stats.get_mut(i)).map(AsMut::as_mut) {
        let (count, bal, pushed) = if exec {
            (&mut s.sbe_count, &mut s.sbe_balanced, &mut s.sbe_pushed)
        } else {
            (&mut s.sbf_count, &mut s.sbf_balanced, &mut s.sbf_pushed)
        };
        *count += 1;
        if chosen == this { *bal += 1 } else { *pushed += 1 }
    }
}
