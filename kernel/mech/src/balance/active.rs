//! Active balance: when a balance pass could pull nothing because the
//! busiest CPU only runs its current task, that CPU is asked to push it at
//! its next switch (Linux's `active_load_balance_cpu_stop`, here done by the
//! switch itself, `schedule.rs`, instead of a stopper thread).

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use sched::balance::IdleType;

use crate::percpu::{per_cpu, PerCpu};
use crate::MAX_LEVELS;

/// This module's per-CPU part (its `CPUS`).
struct ActiveCpu {
    /// Active balance requests: `dst + 1` asks this CPU (the source) to push
    /// its running task to `dst` at its next switch (0: none).
    active_push: AtomicUsize,
    /// Tasks an active balance pushed, by domain index (Linux's
    /// `alb_pushed` of the busiest CPU's lowest domain that holds the target),
    /// counted by the switch that moves the task (it holds a runqueue lock, so
    /// not the balance state: added to `alb_pushed` when printed).
    alb_pushed: [AtomicU64; MAX_LEVELS],
}

impl ActiveCpu {
    const fn new() -> Self {
        ActiveCpu {
            active_push: AtomicUsize::new(0),
            alb_pushed: [const { AtomicU64::new(0) }; MAX_LEVELS],
        }
    }
}

/// Every CPU's ActiveCpu.
static CPUS: PerCpu<ActiveCpu> = per_cpu!(ActiveCpu::new());

/// Asks `src` to push its running task to `dst` (a pass of idle type `idle`
/// on `dst` decided it), unless a request is pending there: returns whether
/// this one was made. `src` is asked to reschedule.
pub fn request(src: usize, dst: usize, idle: IdleType) -> bool {
    if CPUS[src].active_push.compare_exchange(0, dst + 1, Ordering::AcqRel, Ordering::Relaxed).is_err() {
        return false;
    }
    // On dst's ring: a NOHZ pass runs here for another CPU.
    if crate::trace::enabled() {
        crate::trace::record_on(crate::rq::now_ns(), || {
            (dst, crate::trace::Event::AlbRequest { src: src as u32, dst: dst as u32, idle })
        });
    }
    crate::resched::resched_cpu(src);
    true
}

/// The CPU this CPU's running task should be pushed to, if asked (taken).
pub fn take_active_push(cpu: usize) -> Option<usize> {
    match CPUS[cpu].active_push.swap(0, Ordering::AcqRel) {
        0 => None,
        d => Some(d - 1),
    }
}

/// The switch on `src` moved its running task to `dst` for an active balance.
pub fn note_pushed(src: usize, dst: usize) {
    let Some(g) = super::state::global() else { return };
    if let Some(idx) = g.sds.per_cpu(src).iter().position(|sd| sd.span.contains(dst)) {
        if let Some(c) = CPUS[src].alb_pushed.get(idx) {
            c.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// `alb_pushed` of `cpu`'s domain `idx` (see [`note_pushed`]).
pub fn alb_pushed(cpu: usize, idx: usize) -> u64 {
    CPUS[cpu].alb_pushed.get(idx).map_or(0, |c| c.load(Ordering::Relaxed))
}
