//! The idle task's loop, and when an idle CPU stops its tick.
//!
//! Stopping the tick and restarting it costs more than taking one tick, so
//! Linux stops it only when its cpuidle governor (menu, teo) predicts an idle
//! period of at least a tick, and otherwise retains it. fairway does the
//! same with a simple predictor: an average of this CPU's recent idle
//! periods, the newest weighted 1/8 (as `avg_idle`). A period that outlasts
//! the prediction stops the tick at the first tick that finds the CPU still
//! idle, so a CPU that stays idle is tickless after one tick at most.
//!
//! With short idle periods (a pipe ping-pong across CPUs, idle for a few
//! microseconds at a time) this saves two timer reprogrammings and two
//! NOHZ-mask updates per idle period.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::arch::percpu::{cpu_id, MAX_CPUS};
use crate::rq;

/// Predicted length of the next idle period of each CPU (ns). It starts
/// long, so a CPU idle from boot stops its tick at once.
static PREDICTED_NS: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(1_000_000_000) }; MAX_CPUS];
/// When each CPU's current idle period began (ns; valid while it is idle).
static IDLE_SINCE: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];

/// `cpu` switches to its idle task at `now` (on the interrupt path).
pub(crate) fn enter(cpu: usize, now: u64) {
    IDLE_SINCE[cpu].store(now, Ordering::Relaxed);
    if PREDICTED_NS[cpu].load(Ordering::Relaxed) >= crate::timer::tick_ns() {
        crate::timer::stop_tick(cpu);
    }
}

/// `cpu` leaves its idle task at `now` (on the interrupt path).
pub(crate) fn exit(cpu: usize, now: u64) {
    let idle = now.saturating_sub(IDLE_SINCE[cpu].load(Ordering::Relaxed));
    let old = PREDICTED_NS[cpu].load(Ordering::Relaxed) as i64;
    // Both below 2^63 ns (292 years), so the difference cannot overflow.
    let new = old + (idle.min(i64::MAX as u64) as i64 - old) / 8;
    PREDICTED_NS[cpu].store(new.max(0) as u64, Ordering::Relaxed);
    crate::timer::restart_tick(cpu);
}

/// The idle loop found nothing to run after an interrupt: an idle period
/// that has lasted a tick already is a long one, so stop the tick now.
fn still_idle(cpu: usize) {
    x86_64::instructions::interrupts::without_interrupts(|| {
        let since = IDLE_SINCE[cpu].load(Ordering::Relaxed);
        if rq::now_ns().saturating_sub(since) >= crate::timer::tick_ns() {
            crate::timer::stop_tick(cpu);
        }
    });
}

/// The idle loop every CPU runs when it has nothing else (its idle task).
pub fn idle_loop() -> ! {
    loop {
        x86_64::instructions::interrupts::disable();
        if rq::need_resched(cpu_id()) {
            x86_64::instructions::interrupts::enable();
            crate::schedule::schedule();
        } else {
            let cpu = cpu_id();
            let since = IDLE_SINCE[cpu].load(Ordering::Relaxed);
            crate::arch::wait_for_interrupt();
            // Back in this idle period (not in a new one after a switch
            // away and back): it may have outlasted a tick.
            if IDLE_SINCE[cpu].load(Ordering::Relaxed) == since {
                still_idle(cpu);
            }
        }
    }
}
