//! Wakeup and fork placement (Linux's `select_task_rq_fair`): wake_wide,
//! wake_affine (WA_IDLE, WA_WEIGHT, WA_BIAS), select_idle_sibling with the
//! scan depth of SIS_UTIL or SIS_PROP, the 2005 rule or no wake balancing
//! (`wake_balance=`), and the idlest-group descent for new tasks.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use sched::balance::fork::select_task_rq_fork;
use sched::balance::sis::sis_prop_account;
use sched::balance::wake::{count_wakeup, llc_span, select_task_rq_fair, WakeCtx};
use sched::balance::TaskSnapshot;
use sched::cpumask::CpuMask;
use sched::topology::SD_BALANCE_FORK;
use sched::{EntityId, WakeFlags};

use super::snapshot::{snapshots, snapshots_into};
use super::{jiffies, LLC, STATE};
use crate::task::Task;

/// The values placement needs from a sleeping task's entity (read by the
/// caller, which holds the task's runqueue lock).
#[derive(Clone, Copy)]
pub struct WakeeLoad {
    pub weight: u64,
    pub load_avg: u64,
    pub util: u64,
}

impl WakeeLoad {
    /// `p`'s entity in the locked runqueue `rq` (defaults if it has none).
    pub fn of(rq: &crate::rq::Rq, p: &Task) -> WakeeLoad {
        match rq.fair.entity(EntityId(p.eid.load(Ordering::Relaxed))) {
            Some(se) => WakeeLoad { weight: se.w(), load_avg: se.avg.load_avg, util: se.avg.util_avg },
            None => WakeeLoad { weight: 1024, load_avg: 0, util: 0 },
        }
    }

    /// Keeps `l` in `p` as its entity leaves the queue (`Task::on_rq`).
    pub fn keep_slept(p: &Task, l: WakeeLoad) {
        p.slept_load[0].store(l.weight, Ordering::Relaxed);
        p.slept_load[1].store(l.load_avg, Ordering::Relaxed);
        p.slept_load[2].store(l.util, Ordering::Relaxed);
    }

    /// What `keep_slept` kept (read after `on_rq` was seen false).
    pub fn slept(p: &Task) -> WakeeLoad {
        WakeeLoad {
            weight: p.slept_load[0].load(Ordering::Relaxed),
            load_avg: p.slept_load[1].load(Ordering::Relaxed),
            util: p.slept_load[2].load(Ordering::Relaxed),
        }
    }
}

/// The placement view of a sleeping task.
fn wakee_snapshot(p: &Task, l: WakeeLoad, prev: usize) -> TaskSnapshot {
    let WakeeLoad { weight, load_avg: load, util } = l;
    TaskSnapshot {
        id: p.id as u64,
        weight,
        load_avg: load,
        util,
        allowed: p.affinity.load(),
        running: false,
        delayed: false,
        per_cpu_kthread: false,
        idle_policy: false,
        ineligible: false,
        exec_start: 0,
        prev_cpu: prev,
        recent_used_cpu: match p.recent_used_cpu.load(Ordering::Relaxed) {
            usize::MAX => None,
            c => Some(c),
        },
        wakee_flips: p.wakee.lock().wakee_flips,
    }
}

/// The CPU a waking task goes to. `this` is the waking CPU; `load` was read
/// under `p`'s runqueue lock, which the caller has dropped again (this takes
/// balance state, which ranks above runqueue locks).
pub fn select_wake_cpu(p: &Arc<Task>, load: WakeeLoad, prev: usize, this: usize, flags: WakeFlags) -> Option<usize> {
    let g = super::global()?;
    let task = wakee_snapshot(p, load, prev);
    // The waker (the task this CPU runs) records the wakee: wake_wide's flips.
    let waker = crate::task::current_or_idle();
    let (waker_flips, waker_load) = if waker.is_idle {
        (0, 0)
    } else {
        let mut w = waker.wakee.lock();
        w.record_wakee(p.id as u64, jiffies(), g.hz);
        (w.wakee_flips, crate::task::nice_weight(waker.nice_value()))
    };
    let mut span = llc_span(&g.sds, this).union(&llc_span(&g.sds, prev));
    span.set(this);
    span.set(prev);
    let span = span.intersection(&crate::rq::online_mask());
    let mut guard = STATE[this].lock();
    let state = guard.as_mut()?;
    snapshots_into(&span, &mut state.wake_snaps);
    let llc = LLC.lock();
    let ctx = WakeCtx {
        sds: &g.sds,
        cpus: &state.wake_snaps,
        task: &task,
        this_cpu: this,
        waker_flips,
        waker_load,
        sync: flags.contains(WakeFlags::SYNC),
        waker_pcpu_kthread: false,
        llc: &llc,
        now_jiffies: jiffies(),
        cfg: &g.cfg,
    };
    let t0 = crate::rq::now_ns();
    let d = select_task_rq_fair(&ctx, &mut state.wake_aged);
    let scan_time = crate::rq::now_ns() - t0;
    drop(llc);
    if let Some(r) = d.sis.and_then(|s| s.recent_used_cpu) {
        p.recent_used_cpu.store(r, Ordering::Relaxed);
    }
    // SIS_PROP learns what a scan costs in this LLC (with SIS_UTIL off).
    if !g.cfg.features.has(sched::Feature::SisUtil) {
        if let Some(scan) = d.sis.and_then(|s| s.scan) {
            if let Some(l) = LLC.lock().get_mut(g.sds.sd_llc_id(d.cpu)) {
                sis_prop_account(g.cfg.sis_prop, l, &mut state.wake_aged, scan_time, scan.scanned, scan.cpu.is_some(), scan.truncated);
            }
        }
    }
    count_wakeup(&g.sds, this, prev, &d, state.sd.as_mut_slice());
    Some(d.cpu)
}

/// The CPU a new task starts on (fork balancing), given its allowed CPUs.
pub fn select_fork_cpu(allowed: CpuMask, nice: i32, this: usize) -> Option<usize> {
    let g = super::global()?;
    let weight = crate::task::nice_weight(nice);
    let mut task = TaskSnapshot::hog(0, this);
    task.weight = weight;
    task.load_avg = weight;
    task.util = 512;
    task.allowed = allowed;
    let cpus = snapshots(&crate::rq::online_mask());
    let cpu = select_task_rq_fork(&g.sds, &task, this, SD_BALANCE_FORK, &cpus);
    if let Some(state) = STATE[this].lock().as_mut() {
        sched::balance::fork::count_fork(&g.sds, this, SD_BALANCE_FORK, false, cpu, state.sd.as_mut_slice());
    }
    allowed.contains(cpu).then_some(cpu)
}
