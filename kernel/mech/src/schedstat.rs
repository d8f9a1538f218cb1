//! Scheduler statistics in the layout of Linux's `/proc/schedstat` (the CPU
//! fields that apply to fairway) and per-task counters.
//!
//! Per-CPU fields (Linux's meaning): `yld_count` yields; `sched_count` calls
//! of schedule; `sched_goidle` switches to the idle task; `ttwu_count`
//! wakeups this CPU performed; `ttwu_local` those of them that woke a task
//! onto this same CPU; `rq_cpu_time` ns tasks ran here; `run_delay` ns tasks
//! waited on this runqueue before running; `pcount` timeslices run here.
//! Beyond Linux's fields, the `@fw` records add `ticks`, `timer_irqs`,
//! `resched_ipis` (reschedule IPIs taken) and `wake_idle_without_ipi`
//! (wakeups that reached this CPU while it polled in idle, with no IPI),
//! `pressure_ns` (what the `cpu_capacity=` pressure source took), then `idle_ns`, `idle_wait_ns` and `idle_wait_<level>_ns` ("idle while
//! others wait", `balance::idle_wait`).

use core::fmt::Write;
use core::sync::atomic::Ordering;

use alloc::string::String;

use crate::stats::{CpuStat, Fields};
use crate::task::Task;

/// Every online CPU's counters now (ttwu counts included).
pub fn snapshot() -> alloc::vec::Vec<(usize, CpuStat)> {
    crate::rq::online_mask()
        .iter()
        .map(|cpu| {
            let mut s = crate::rq::lock(cpu).stat;
            (s.ttwu_count, s.ttwu_local) = crate::wakeup::ttwu_stats(cpu);
            s.timer_irqs = crate::timer::timer_irqs(cpu);
            (s.resched_ipis, s.wake_idle_without_ipi) = crate::resched::ipi_stats(cpu);
            s.idle_wait = crate::balance::idle_wait::read(cpu);
            (cpu, s)
        })
        .collect()
}

/// Prints what each CPU's counters gained since `before` (`@fw schedstat_delta`).
pub fn print_delta(before: &[(usize, CpuStat)]) {
    for (cpu, now) in snapshot() {
        let b = before.iter().find(|(c, _)| *c == cpu).map(|(_, s)| *s).unwrap_or_default();
        let delta = now.since(&b);
        let mut extra = String::new();
        let _ = crate::stats::write_fields(&mut extra, &delta.idle_wait);
        crate::record!("schedstat_delta", "cpu={}{}{}", cpu, Fields(&delta), extra);
    }
}

/// Prints every online CPU's counters: a `@fw schedstat` record and the line
/// as Linux's `/proc/schedstat` (version 17) lays it out.
pub fn print_cpus() {
    crate::kprintln!("version 17");
    for (cpu, s) in snapshot() {
        let mut extra = String::new();
        let _ = crate::stats::write_fields(&mut extra, &s.idle_wait);
        crate::record!("schedstat", "cpu={}{}{}", cpu, Fields(&s), extra);
        // Linux: cpuN yld_count 0 sched_count sched_goidle ttwu_count ttwu_local rq_cpu_time run_delay pcount
        crate::kprintln!(
            "cpu{} {} 0 {} {} {} {} {} {} {}",
            cpu, s.yld_count, s.sched_count, s.sched_goidle, s.ttwu_count, s.ttwu_local, s.rq_cpu_time,
            s.run_delay, s.pcount
        );
        crate::balance::stats::print_domain_lines(cpu);
    }
    for (cpu, _) in snapshot() {
        print_delayed(cpu);
    }
}

/// Prints `cpu`'s delayed-dequeue counters (DELAY_DEQUEUE) as a
/// `@fw delayed` record: sleeps, the delayed ones, how they ended
/// (requeued by a wakeup, dequeued for good by a pick or at exit, or still
/// pending), how long they stayed queued asleep and the lag they left with.
fn print_delayed(cpu: usize) {
    let (s, pending) = {
        let rq = crate::rq::lock(cpu);
        let pending = rq.fair.queued().filter(|&e| rq.fair.is_delayed(e)).count();
        (*rq.fair.stats(), pending)
    };
    crate::record!(
        "delayed",
        "cpu={} sleeps={} delayed={} requeued={} picked={} dequeued={} pending={} delayed_ns={} delayed_max_ns={} leave_lag={} zeroed={}",
        cpu, s.sleeps, s.delayed, s.delayed_requeued, s.delayed_dequeued_by_pick, s.delayed_dequeued, pending,
        s.delayed_ns, s.delayed_max_ns, s.delayed_leave_lag, s.delay_zeroed
    );
}

/// Prints one task's counters as a `@fw taskstat` record.
pub fn print_task(t: &Task) {
    let s = &t.stats;
    let mut cpus = String::new();
    let _ = write!(cpus, "{}", t.ran_on());
    crate::record!(
        "taskstat",
        "id={} name={} nice={} sum_exec_runtime={} wait_sum={} wait_max={} nr_switches={} nr_migrations={} nr_wakeups={} nr_wakeups_local={} nr_wakeups_remote={} nr_wakeups_sync={} cpus={}",
        t.id,
        t.name,
        t.nice_value(),
        s.sum_exec_runtime.load(Ordering::Relaxed),
        s.wait_sum.load(Ordering::Relaxed),
        s.wait_max.load(Ordering::Relaxed),
        s.nr_switches.load(Ordering::Relaxed),
        s.nr_migrations.load(Ordering::Relaxed),
        s.nr_wakeups.load(Ordering::Relaxed),
        s.nr_wakeups_local.load(Ordering::Relaxed),
        s.nr_wakeups_remote.load(Ordering::Relaxed),
        s.nr_wakeups_sync.load(Ordering::Relaxed),
        cpus
    );
}
