//! One CPU's scheduler state, in one structure per CPU: what Linux gathers
//! in `struct rq` (kernel/sched/sched.h) and the scheduler's per-CPU
//! variables. Each module keeps its part's type, fields and invariants in
//! its own file (`rq::RqCpu`, `wakeup::WakeupCpu`, `idle::IdleCpu`,
//! `timer::TimerCpu`, `trace::TraceCpu`, `balance::BalanceCpu`) and reaches
//! its part through `cpu(id)`; this file only aggregates them.
//!
//! Nothing here adds a lock: every part keeps its own atomics and locks,
//! in the lock order of docs/DESIGN.md. A part is found by indexing one
//! static array with the CPU id (a multiply and an add; the running CPU's
//! id is known to be below `MAX_CPUS`, so no bounds check), and each CPU's
//! structure starts on its own cache line, so no two CPUs share a line.

use crate::MAX_CPUS;

/// One CPU's scheduler state (see the module docs).
#[repr(align(64))]
pub struct SchedCpu {
    pub rq: crate::rq::RqCpu,
    pub wakeup: crate::wakeup::WakeupCpu,
    pub idle: crate::idle::IdleCpu,
    pub timer: crate::timer::TimerCpu,
    pub trace: crate::trace::TraceCpu,
    pub balance: crate::balance::BalanceCpu,
}

impl SchedCpu {
    const fn new() -> SchedCpu {
        SchedCpu {
            rq: crate::rq::RqCpu::new(),
            wakeup: crate::wakeup::WakeupCpu::new(),
            idle: crate::idle::IdleCpu::new(),
            timer: crate::timer::TimerCpu::new(),
            trace: crate::trace::TraceCpu::new(),
            balance: crate::balance::BalanceCpu::new(),
        }
    }
}

static CPUS: [SchedCpu; MAX_CPUS] = [const { SchedCpu::new() }; MAX_CPUS];

/// `id`'s scheduler state.
#[inline(always)]
pub fn cpu(id: usize) -> &'static SchedCpu {
    &CPUS[id]
}
