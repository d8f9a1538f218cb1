//! Asking a CPU to reschedule: its need-resched flag (kept in the
//! runqueue's per-CPU part, which the switch reads with the rest), the
//! reschedule IPI, and polling idle's flag, which lets a waker skip the IPI.
//!
//! With `idle=poll` an idle CPU spins with its `polling` flag up (Linux's
//! `TIF_POLLING_NRFLAG`, on the idle task). The flag and the waker's store
//! pair like two Dekker flags: the waker stores its work (need-resched or a
//! wake-list entry), fences, and reads the flag ([`notices_without_ipi`]);
//! the polling CPU clears the flag, fences, and looks for work once more
//! (`idle_loop.rs`, `idle.rs`). So either the waker sees the flag clear and sends the IPI,
//! or the poller sees the work.
//!
//! Follows Linux's `kernel/sched/core.c: resched_curr()` and
//! `set_nr_if_polling()`, and `smp_send_reschedule()` for the IPI; fault
//! injection may hold an IPI back (`inject::take_ipi`).

use core::sync::atomic::{fence, AtomicBool, AtomicU64, Ordering};

use crate::percpu::{per_cpu, PerCpu};

/// This module's per-CPU part (its `CPUS`).
struct ReschedCpu {
    /// Whether this CPU's idle task is polling for work right now (see the
    /// module docs).
    polling: AtomicBool,
    /// Reschedules and wake-list entries this CPU received while polling, with
    /// no IPI (Linux's `sched_wake_idle_without_ipi` events).
    wake_idle_without_ipi: AtomicU64,
    /// Reschedule IPIs this CPU took.
    resched_ipis: AtomicU64,
}

impl ReschedCpu {
    const fn new() -> Self {
        ReschedCpu {
            polling: AtomicBool::new(false),
            wake_idle_without_ipi: AtomicU64::new(0),
            resched_ipis: AtomicU64::new(0),
        }
    }
}

/// Every CPU's ReschedCpu.
static CPUS: PerCpu<ReschedCpu> = per_cpu!(ReschedCpu::new());

/// `idle=poll`: idle CPUs spin instead of halting.
static POLL: AtomicBool = AtomicBool::new(false);

/// Chooses `idle=poll` (true) or `idle=halt`, before any CPU idles.
pub fn set_poll(on: bool) {
    POLL.store(on, Ordering::Relaxed);
}

/// Whether idle CPUs poll (`idle=poll`).
pub fn polls() -> bool {
    POLL.load(Ordering::Relaxed)
}

/// Asks `cpu` to reschedule at its next opportunity.
pub fn set_need_resched(cpu: usize) {
    crate::rq::need_resched_flag(cpu).store(true, Ordering::Release);
}

pub fn need_resched(cpu: usize) -> bool {
    crate::rq::need_resched_flag(cpu).load(Ordering::Acquire)
}

pub fn clear_need_resched(cpu: usize) {
    crate::rq::need_resched_flag(cpu).store(false, Ordering::Release);
}

/// Raises or lowers `cpu`'s polling flag (its idle loop, on `cpu`).
#[inline]
pub fn set_polling(cpu: usize, on: bool) {
    CPUS[cpu].polling.store(on, Ordering::Relaxed);
}

/// Whether `cpu`'s polling flag is up.
#[inline]
pub fn polling(cpu: usize) -> bool {
    CPUS[cpu].polling.load(Ordering::Relaxed)
}

/// Called by a waker right after it stored work for `cpu` (need-resched or
/// a wake-list entry): whether `cpu` is polling and will find it without an
/// IPI. Always false under `idle=halt`, at the cost of one load.
#[inline]
pub fn notices_without_ipi(cpu: usize) -> bool {
    if !POLL.load(Ordering::Relaxed) {
        return false;
    }
    // Orders the caller's store before the flag's load (see the module docs).
    fence(Ordering::SeqCst);
    if CPUS[cpu].polling.load(Ordering::Relaxed) {
        CPUS[cpu].wake_idle_without_ipi.fetch_add(1, Ordering::Relaxed);
        // The poller sees the store by itself (a simulated one is told).
        crate::platform::remote_access(cpu, crate::platform::RemoteAccess::WakePoller);
        return true;
    }
    false
}

/// Asks `cpu` to reschedule (core.c: `resched_curr()`): locally through the
/// flag the interrupt exit checks, remotely with the reschedule IPI (unless
/// it polls in idle and will see the flag by itself: `set_nr_if_polling()`).
#[inline]
pub fn resched_cpu(cpu: usize) {
    set_need_resched(cpu);
    if cpu != crate::platform::cpu_id() && !notices_without_ipi(cpu) {
        send_resched_ipi(cpu);
    }
}

/// Sends `cpu` the reschedule IPI. By itself it asks for no switch: the
/// handler drains the wake list, runs a kicked NOHZ balance, and switches
/// only if one of them (or `resched_cpu`) set need-resched. Inlined: it is
/// on every remote wakeup's path.
#[inline(always)]
pub fn send_resched_ipi(cpu: usize) {
    if crate::inject::take_ipi(cpu) {
        return;
    }
    send_resched_ipi_now(cpu);
}

/// `send_resched_ipi` past fault injection (`fault=ipi_delay,ipi_reorder`).
#[inline(always)]
pub fn send_resched_ipi_now(cpu: usize) {
    crate::platform::send_resched_ipi(cpu);
}

/// This CPU took a reschedule IPI (counted for the statistics).
#[inline]
pub fn count_resched_ipi(cpu: usize) {
    CPUS[cpu].resched_ipis.fetch_add(1, Ordering::Relaxed);
}

/// (`resched_ipis`, `wake_idle_without_ipi`) of `cpu` so far.
pub fn ipi_stats(cpu: usize) -> (u64, u64) {
    (CPUS[cpu].resched_ipis.load(Ordering::Relaxed), CPUS[cpu].wake_idle_without_ipi.load(Ordering::Relaxed))
}
