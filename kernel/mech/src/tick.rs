//! The scheduler tick's work (Linux's `kernel/sched/core.c: sched_tick()`):
//! charge the running task and ask for a switch when its slice is used up;
//! the capacity pressure source's share, the soft-lockup check, the
//! periodic balance and the NOHZ kick, and the `sched_debug=1` checks and
//! `stats_ms=` lines that ride on it. Called by the timer interrupt
//! (`entry::timer_interrupt`) when `timer::tick_due` says so.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::{clock, resched, rq};

/// When the last hang-diagnostics dump was printed (`sched_debug=1`).
static LAST_DUMP: AtomicU64 = AtomicU64::new(0);

/// Print the schedstat lines every this many ticks of CPU 0 (0: never).
static STATS_EVERY_TICKS: AtomicU64 = AtomicU64::new(0);

/// Prints the statistics every `ms` milliseconds (`stats_ms=`).
pub fn print_stats_every(ms: u64) {
    STATS_EVERY_TICKS.store(ms * 1_000_000 / clock::tick_ns().max(1), Ordering::Relaxed);
}

/// One scheduler tick (Linux's `sched_tick`): charge the running task and ask
/// for a switch when its slice is used up.
pub fn scheduler_tick(cpu: usize) {
    let capacity_orig = {
        let mut rq = rq::lock(cpu);
        // Booked once (the task clock and the statistics read the same
        // counter), before the spin, so that no clock read during it counts it.
        let take = crate::balance::capacity::pressure_ns(rq.capacity_orig, clock::tick_ns());
        rq.stat.pressure_ns += take;
        if take > 0 && rq.curr.is_idle {
            // Not idle time as well: tick-sched.c: tick_nohz_irq_enter()
            // stops the idle clock while an interrupt runs.
            crate::idle::exclude_from_idle(cpu, take);
        }
        rq.capacity_orig
    };
    if capacity_orig < 1024 {
        crate::balance::capacity::run_pressure(cpu, capacity_orig, clock::tick_ns());
    }
    let mut rq = rq::lock(cpu);
    rq.update_clock();
    crate::balance::capacity::update(&mut rq);
    rq.stat.ticks += 1;
    crate::trace::record(rq.clock, || crate::trace::Event::Tick);
    let resched = if rq.curr.is_idle {
        rq.fair.nr_queued() > 0
    } else {
        let now = rq.clock_task();
        rq.fair.tick(now)
    };
    if crate::debug::enabled() {
        crate::debug::check_rq(&rq);
    }
    crate::watchdog::tick(&rq);
    if resched {
        resched::set_need_resched(cpu);
    }
    let ticks = rq.stat.ticks;
    let idle = rq.curr.is_idle;
    crate::balance::snapshot::publish(&rq);
    drop(rq);
    // Periodic balancing (Linux's sched_balance_trigger), and a kick of a
    // tickless idle CPU to balance for the others.
    crate::balance::periodic::sched_balance_domains(cpu, idle);
    if !idle {
        crate::balance::nohz::balancer_kick(cpu);
    }
    if cpu == 0 && crate::debug::enabled() && ticks.is_multiple_of(100) {
        crate::debug::check_global();
    }
    // Every 3 s of uptime, from whichever CPU ticks: what a hang looks like.
    if crate::debug::enabled() {
        let now = rq::now_ns();
        let last = LAST_DUMP.load(Ordering::Relaxed);
        if now > last + 3_000_000_000
            && LAST_DUMP.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_ok()
            && last != 0
        {
            crate::debug::dump_all();
        }
        if last == 0 {
            let _ = LAST_DUMP.compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
    let every = STATS_EVERY_TICKS.load(Ordering::Relaxed);
    if cpu == 0 && every != 0 && ticks.is_multiple_of(every) {
        crate::schedstat::print_cpus();
    }
}
