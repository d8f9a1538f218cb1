//! An idle CPU's periods: their time, their predicted length, and when the
//! tick stops for one (the switch calls [`enter`] and [`exit`]; the idle
//! task's loop is `idle_loop.rs`).
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
//!
//! With `idle=poll` (Linux's option of that name) an idle CPU does not halt:
//! it spins until need-resched is set or its wake list fills, with
//! interrupts on, and says so in a per-CPU flag (`resched.rs`, with the
//! waker's side). A waker that finds the flag set sends no reschedule IPI
//! (Linux's `TIF_POLLING_NRFLAG`, counted as `wake_idle_without_ipi` after
//! its tracepoint), so the wakee is running sooner, at the price of a CPU
//! that never rests. The tick stays on while polling, as in Linux.
//!
//! The flag and the waker's store pair like two Dekker flags: the waker
//! stores its work, fences, and reads the flag; the polling CPU clears the
//! flag, fences, and looks for work once more. So either the waker sees the
//! flag clear and sends the IPI, or the poller sees the work.
//!
//! Follows Linux's `kernel/sched/idle.c: do_idle()` and `cpu_idle_poll()`, with
//! the tick stopped as `kernel/time/tick-sched.c: tick_nohz_idle_stop_tick()`
//! does.

use core::sync::atomic::{fence, AtomicU64, Ordering};

use crate::{resched, rq};
use crate::percpu::{per_cpu, PerCpu};

/// This module's per-CPU part (its `CPUS`).
struct IdleCpu {
    /// Predicted length of the next idle period of this CPU (ns). It starts
    /// long, so a CPU idle from boot stops its tick at once.
    predicted_ns: AtomicU64,
    /// When this CPU's current idle period began (ns), 0 while it is not idle
    /// (every CPU starts in its idle task: 1, idle since boot).
    idle_since: AtomicU64,
    /// The time this CPU's idle task ran in the periods that ended (ns):
    /// Linux's idle time (`cpustat[CPUTIME_IDLE]`), which, with the tasks'
    /// runtimes, accounts for all of a CPU's time. (`idle_ns` of `@fw schedstat`
    /// is narrower: the time with no runnable task.) Only its CPU writes it.
    idle_task_ns: AtomicU64,
    /// The part of this CPU's idle periods that interrupts spent on other
    /// work (the `cpu_capacity=` pressure source, booked as pressure): not
    /// idle time (tick-sched.c: tick_nohz_irq_enter() stops the idle clock).
    /// Only its CPU writes it.
    not_idle_ns: AtomicU64,
}

impl IdleCpu {
    const fn new() -> Self {
        IdleCpu {
            predicted_ns: AtomicU64::new(1_000_000_000),
            idle_since: AtomicU64::new(1),
            idle_task_ns: AtomicU64::new(0),
            not_idle_ns: AtomicU64::new(0),
        }
    }
}

/// Every CPU's IdleCpu.
static CPUS: PerCpu<IdleCpu> = per_cpu!(IdleCpu::new());

/// `cpu` switches to its idle task at `now` (on the interrupt path).
pub fn enter(cpu: usize, now: u64) {
    CPUS[cpu].idle_since.store(now, Ordering::Relaxed);
    // A polling CPU keeps its tick, as Linux's does.
    if !resched::polls() && CPUS[cpu].predicted_ns.load(Ordering::Relaxed) >= crate::clock::tick_ns() {
        crate::timer::stop_tick(cpu);
    }
}

/// `cpu` leaves its idle task at `now` (on the interrupt path). The polling
/// flag's work is out of line, so that the usual exit keeps to the
/// caller-saved registers. Out of line: inlined, it moves the layout of
/// the switch, whose task-to-task path does not call it.
#[inline(never)]
pub fn exit(cpu: usize, now: u64) {
    if resched::polls() {
        exit_polling(cpu);
    }
    let c = &CPUS[cpu];
    let idle = now.saturating_sub(c.idle_since.load(Ordering::Relaxed));
    // The sum first, then the end of the period: `idle_task_ns` retries
    // when it sees the start change under it.
    c.idle_task_ns.store(c.idle_task_ns.load(Ordering::Relaxed) + idle, Ordering::Release);
    c.idle_since.store(0, Ordering::Release);
    c.predicted_ns.store(predicted_after(c.predicted_ns.load(Ordering::Relaxed), idle), Ordering::Relaxed);
    crate::timer::restart_tick(cpu);
}

/// [`exit`] under `idle=poll`: the flag means the idle task polls, not that
/// it was preempted while polling, so a task running here would not see the
/// work of a waker that skipped its IPI. Work that came in before the flag
/// went down gets the IPI now, from this CPU to itself; it is taken as soon
/// as the next task runs with interrupts on.
#[cold]
#[inline(never)]
fn exit_polling(cpu: usize) {
    resched::set_polling(cpu, false);
    fence(Ordering::SeqCst);
    if resched::need_resched(cpu) || rq::wake_list_pending(cpu) {
        resched::send_resched_ipi(cpu);
    }
}

/// The prediction after an idle period of `idle` ns that followed the
/// prediction `old` (below 2^63: it starts at 1 s and stays between its
/// old value and a sample capped at `i64::MAX`): the newest period weighted
/// 1/8, truncated toward zero. `update_avg` computes it in `u64` on either
/// side of `old`, with the values of the signed form `old + (idle - old) / 8`
/// (a host test below compares the two).
#[inline(always)]
fn predicted_after(old: u64, idle: u64) -> u64 {
    sched::balance::avg_idle::update_avg(old, idle.min(i64::MAX as u64))
}

/// `ns` of `cpu`'s current idle period went to work booked elsewhere (the
/// pressure source, from the tick; on `cpu`, interrupts off).
pub(crate) fn exclude_from_idle(cpu: usize, ns: u64) {
    let c = &CPUS[cpu].not_idle_ns;
    c.store(c.load(Ordering::Relaxed) + ns, Ordering::Release);
}

/// The time `cpu`'s idle task has run so far (ns), an ongoing period
/// included, less what interrupts took from it for work booked elsewhere
/// (`exclude_from_idle`). Read without a lock: the period's start, the
/// sums, the start again; a start that changed meanwhile means a period
/// began or ended.
pub fn idle_task_ns(cpu: usize) -> u64 {
    loop {
        let since = CPUS[cpu].idle_since.load(Ordering::Acquire);
        let sum = CPUS[cpu].idle_task_ns.load(Ordering::Acquire);
        let not_idle = CPUS[cpu].not_idle_ns.load(Ordering::Acquire);
        let now = rq::now_ns();
        if CPUS[cpu].idle_since.load(Ordering::Acquire) == since {
            return (sum + if since != 0 { now.saturating_sub(since) } else { 0 }).saturating_sub(not_idle);
        }
    }
}

/// When `cpu`'s current idle period began (ns; 0 while it is not idle): the
/// idle loop compares it across a halt to know it is still in one period.
#[inline]
pub fn idle_since(cpu: usize) -> u64 {
    CPUS[cpu].idle_since.load(Ordering::Relaxed)
}

/// The idle loop found nothing to run after an interrupt: an idle period
/// that has lasted a tick already is a long one, so stop the tick now.
pub fn still_idle(cpu: usize) {
    crate::platform::without_interrupts(|| {
        let since = CPUS[cpu].idle_since.load(Ordering::Relaxed);
        if rq::now_ns().saturating_sub(since) >= crate::clock::tick_ns() {
            crate::timer::stop_tick(cpu);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::predicted_after;

    /// The signed form the prediction had before `update_avg`.
    fn signed(old: u64, idle: u64) -> u64 {
        let old = old as i64;
        let new = old + (idle.min(i64::MAX as u64) as i64 - old) / 8;
        new.max(0) as u64
    }

    #[test]
    fn predicted_after_is_the_signed_form() {
        let edges = [0, 1, 7, 8, 9, 1_000, 999_999_999, 1_000_000_000, u32::MAX as u64, (i64::MAX - 8) as u64, i64::MAX as u64];
        for &old in &edges {
            for idle in edges.iter().copied().chain([i64::MAX as u64 + 1, u64::MAX - 1, u64::MAX]) {
                assert_eq!(predicted_after(old, idle), signed(old, idle), "old {old} idle {idle}");
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let old = x >> 1;
            let idle = x.rotate_left(17) >> (x % 64);
            assert_eq!(predicted_after(old, idle), signed(old, idle), "old {old} idle {idle}");
        }
    }
}
