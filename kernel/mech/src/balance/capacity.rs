//! `cpu_capacity=CPU:CAP,...`: emulated asymmetric CPUs. A CPU given a
//! capacity below 1024 is made really slower: at every tick a pressure
//! source takes `(1024 - CAP) / 1024` of the tick's time on it (inside the
//! timer interrupt, like IRQ or RT time). The time taken is averaged like
//! PELT (a 32-tick half-life-ish moving average) and, accounted as RT
//! pressure, lowers `cpu_capacity` (`scale_rt_capacity`); the fair class's
//! PELT clock runs at the capacity (`FairRq::set_cpu_capacity`), so a task's
//! util on a slow CPU stays below its capacity and it becomes misfit.
//!
//! Follows Linux's `kernel/sched/fair.c: scale_rt_capacity()` and
//! `update_cpu_capacity()`, and `update_misfit_status()` for the misfit load.

use core::sync::atomic::{AtomicU64, Ordering};

use sched::balance::capacity::{scale_rt_capacity, update_misfit_status, CurrTask, Pressure};
use sched::EntityId;

use crate::rq::Rq;
use crate::percpu::{per_cpu, PerCpu};

/// This module's per-CPU part (its `CPUS`).
struct CapacityCpu {
    /// The pressure average of this CPU, out of 1024.
    pressure_avg: AtomicU64,
}

impl CapacityCpu {
    const fn new() -> Self {
        CapacityCpu {
            pressure_avg: AtomicU64::new(0),
        }
    }
}

/// Every CPU's CapacityCpu.
static CPUS: PerCpu<CapacityCpu> = per_cpu!(CapacityCpu::new());

/// Runs the pressure source for one tick on `cpu` (interrupts off); the
/// tick books its time (`stat.pressure_ns`) before.
pub fn run_pressure(cpu: usize, capacity_orig: u64, tick_ns: u64) {
    let take = pressure_ns(capacity_orig, tick_ns);
    if take > 0 {
        // Through the platform: a TSC loop on x86 (interrupts stay off, as
        // in the tick), a step of virtual time in the simulator, whose clock
        // a loop reading it would never see move.
        crate::platform::burn_ns(take);
    }
    // avg += (sample - avg) / 32, in 1024ths of a tick.
    let sample = (take * 1024).checked_div(tick_ns).unwrap_or(0);
    let avg = CPUS[cpu].pressure_avg.load(Ordering::Relaxed);
    let next = (avg * 31 + sample) / 32;
    CPUS[cpu].pressure_avg.store(next, Ordering::Relaxed);
}

/// The ns the pressure source takes per tick: `(1024 - CAP) / 1024` of it.
/// Like IRQ or RT time it is no fair task's: `Rq::clock_task` leaves it out,
/// so the running task is not charged for it (Linux charges capacity
/// pressure to no task: it lowers `cpu_capacity` and scales PELT time).
pub fn pressure_ns(capacity_orig: u64, tick_ns: u64) -> u64 {
    tick_ns * 1024u64.saturating_sub(capacity_orig.min(1024)) / 1024
}

/// Updates `rq`'s capacity from its pressure and its misfit status from its
/// running task (at each tick, under the runqueue lock).
pub fn update(rq: &mut Rq) {
    let pressure = Pressure { rt_dl: CPUS[rq.cpu].pressure_avg.load(Ordering::Relaxed), ..Default::default() };
    rq.capacity = scale_rt_capacity(1024, pressure).min(rq.capacity_orig).max(1);
    rq.fair.set_cpu_capacity(rq.capacity_orig);
    let Some(g) = super::state::global() else { return };
    let asym = g.asym_cpucapacity;
    let curr = rq.fair.curr().and_then(|e: EntityId| {
        let t = rq.task_of(e.0)?;
        let se = rq.fair.entity(e)?;
        let allowed = t.affinity.load();
        Some(CurrTask {
            // As fair.c: update_misfit_status(): a task just woken keeps its
            // estimate (balance-misfit-util-est fails with util_avg here).
            util: sched::pelt::task_util_est(&se.avg),
            load: se.avg.load_avg,
            pinned: allowed.weight() == 1,
            // Read only on a machine of mixed capacities (update_misfit_status
            // returns 0 first otherwise): no walk over every CPU at each tick.
            max_allowed_capacity: if asym { g.caps.max_in(&allowed) } else { 0 },
        })
    });
    rq.misfit_task_load = update_misfit_status(curr, asym, rq.capacity, rq.capacity_orig);
}
