//! The platform's entries into the mechanism: what a CPU does when it comes
//! online, what its reschedule IPI does, and what the `init` thread does
//! around the workload. One copy, called by both platforms (the kernel's
//! `kernel/src/main.rs` and the simulator's `sim/src/platform/`), so the
//! simulator cannot drift from the kernel here; what is hardware (the
//! APIC's end of interrupt, the trap table's per-CPU switch) stays with the
//! platform and is passed in or done by the caller.
//!
//! - [`sched_cpu_starting`] follows Linux's bring-up of a CPU: `core.c:
//!   sched_cpu_starting()` and `sched_cpu_activate()` (the runqueue goes
//!   online with its capacity) as called from `smpboot.c:
//!   start_secondary()`, whose flow then becomes the CPU's idle task.
//! - [`timer_interrupt`] is the one-shot timer's interrupt: the due
//!   sleepers' wakeups (Linux's hrtimer expiry), the tick (`sched_tick()`,
//!   `tick.rs`), the watchdog's scan, and the preemption they ask for.
//! - [`scheduler_ipi`] follows what Linux's reschedule IPI amounts to: the
//!   queued wakeups (`core.c: sched_ttwu_pending()`, run from the IPI's
//!   call-function queue), a NOHZ balance kick (`core.c: nohz_csd_func()`),
//!   then the preemption it asked for (`sched.h: scheduler_ipi()` folds
//!   `need_resched` and the return from the interrupt switches).
//! - [`configure_faults`], [`configure_trace`], [`workload_starts`] and
//!   [`workload_done`]: the boot's `fault=` and `trace=` set-up and the
//!   `init` thread's steps before and after the workload (its fault report,
//!   invariant check, trace dump and statistics), the same lines on both.

use crate::platform::{cpu_id, Frame};
use sched::WakeFlags;

use crate::{balance, debug, fault, resched, rq, schedstat, schedule, tick, timer, trace, wakeup, watchdog};

/// Brings `cpu` (the CPU running this) into scheduling: the wakeup path's
/// features and its runqueue with `tunables` (its current flow becomes its
/// idle task), its capacity and boot `avg_idle` from the balancer's
/// configuration, published to the balancer, then `hooks_on` (the platform
/// routes this CPU's timer and reschedule IPI to the mechanism from now on),
/// then its tick. Interrupts are off.
pub fn sched_cpu_starting(cpu: usize, tunables: sched::Tunables, hooks_on: impl FnOnce()) {
    wakeup::configure(tunables.features);
    rq::init_cpu(cpu, tunables);
    if let Some(g) = balance::global() {
        let mut rq = rq::lock(cpu);
        rq.capacity_orig = g.caps.orig(cpu);
        rq.capacity = rq.capacity_orig;
        rq.avg_idle = balance::boot_avg_idle();
        balance::snapshot::publish(&rq);
    }
    hooks_on();
    timer::start_this_cpu();
}

/// The reschedule IPI's handler, on the interrupted context's `frame`
/// (interrupts off; the platform has acknowledged the interrupt): returns
/// the frame to resume, another task's when the IPI preempts.
#[inline]
pub fn scheduler_ipi(frame: *mut Frame) -> *mut Frame {
    let cpu = cpu_id();
    resched::count_resched_ipi(cpu);
    // A wakee that should run now: its runqueue stays locked for the switch.
    let mut held = wakeup::process_wake_list(cpu);
    if balance::nohz::kicked(cpu) {
        // The NOHZ balance locks runqueues itself.
        drop(held.take());
        balance::nohz::run_kicked(cpu);
    }
    // A runqueue still held means need-resched is set: no reload of the flag.
    if held.is_some() || resched::need_resched(cpu) {
        crate::inject::note_preemption();
        schedule::preempt_irq_locked(frame, held)
    } else {
        frame
    }
}

/// The timer interrupt of a CPU whose scheduler runs (the platform has not
/// acknowledged it; interrupts off): wakes the sleepers whose deadline has
/// passed, runs the tick if it is due (`tick.rs`), programs the timer for
/// the next event, runs the watchdog's scan if one is due, and switches if
/// a reschedule is wanted. Returns the frame to resume.
pub fn timer_interrupt(frame: *mut Frame) -> *mut Frame {
    crate::platform::timer_eoi();
    let cpu = cpu_id();
    timer::note_interrupt(cpu);
    let now = rq::now_ns();
    while let Some(t) = timer::take_due_sleeper(cpu, now) {
        wakeup::try_to_wake_up(&t, WakeFlags::NONE);
    }
    if let Some(due) = timer::tick_due(cpu, now) {
        tick::scheduler_tick(cpu);
        crate::inject::tick(cpu);
        timer::advance_tick(cpu, due, now);
    }
    timer::reprogram(cpu);
    watchdog::timer_irq(cpu, now);
    // `test_watchdog=soft_lockup` holds this CPU's preemption off.
    if resched::need_resched(cpu) && !watchdog::no_preempt(cpu) {
        crate::inject::note_preemption();
        schedule::preempt_irq(frame)
    } else {
        frame
    }
}

/// `fault=MODES fault_seed=SEED` at boot (before any CPU schedules): sets
/// them and says so. Injection starts with the workload ([`workload_starts`]).
pub fn configure_faults(modes: u8, seed: u64) {
    fault::configure(modes, seed);
    crate::kprintln!("fault injection: {} (seed {}), from the workload's start", fault::names(modes), seed);
}

/// `trace=N` at boot: rings of `per_cpu` events for `cpus`, and a line
/// saying so; the error (the heap is too small) for the caller to report as
/// a command-line problem, tracing then off.
pub fn configure_trace(per_cpu: usize, cpus: &[usize]) -> Result<(), alloc::string::String> {
    let bytes = trace::enable(per_cpu, cpus)?;
    crate::kprintln!("trace: recording up to {} scheduler events per CPU ({} KiB allocated)", per_cpu, bytes / 1024);
    Ok(())
}

/// The `init` thread, right before the workload: fault injection starts.
pub fn workload_starts() {
    fault::arm();
}

/// The `init` thread, right after the workload: the fault counts
/// (`@fw faults`), the invariant checks across CPUs (`sched_debug=1`), the
/// trace (`trace=N`), then each CPU's schedstat and balance counters.
pub fn workload_done() {
    fault::report();
    if debug::enabled() {
        debug::check_global();
    }
    trace::dump();
    schedstat::print_cpus();
    balance::stats::print_all();
}
