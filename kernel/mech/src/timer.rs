//! Per-CPU time events: the scheduler tick and high-resolution sleep timers,
//! both driven by the LAPIC timer in one-shot mode.
//!
//! Each CPU keeps the time of its next tick and a heap of sleep deadlines; the
//! LAPIC timer is always programmed for the earlier of the two, so a sleep
//! ends when it is due, not at the next tick.
//!
//! Follows Linux's `kernel/sched/core.c: sched_tick()` for the tick,
//! `kernel/time/tick-sched.c` (`tick_nohz_idle_stop_tick()`,
//! `tick_nohz_idle_exit()`) for NOHZ, and high-resolution timers
//! (`hrtimer_start()`) for sleeps.

use alloc::collections::BinaryHeap;
use alloc::sync::Arc;
use core::cmp::{Ordering as CmpOrdering, Reverse};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sched::WakeFlags;

use crate::platform::cpu_id;
use crate::platform::Frame;
use crate::{clock, resched, rq};
use crate::lock::{level, IrqMutex};
use crate::task::{self, Task, TaskState};
use crate::percpu::{per_cpu, PerCpu};

struct Sleeper {
    deadline: u64,
    seq: u64,
    task: Arc<Task>,
}

impl PartialEq for Sleeper {
    fn eq(&self, o: &Self) -> bool {
        (self.deadline, self.seq) == (o.deadline, o.seq)
    }
}
impl Eq for Sleeper {}
impl PartialOrd for Sleeper {
    fn partial_cmp(&self, o: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(o))
    }
}
impl Ord for Sleeper {
    fn cmp(&self, o: &Self) -> CmpOrdering {
        (self.deadline, self.seq).cmp(&(o.deadline, o.seq))
    }
}

/// This module's per-CPU part (its `CPUS`).
struct TimerCpu {
    sleepers: IrqMutex<level::Sleepers, BinaryHeap<Reverse<Sleeper>>>,
    next_tick: AtomicU64,
    tick_stopped: AtomicBool,
    /// LAPIC timer interrupts taken by this CPU (ticks and sleep deadlines).
    timer_irqs: AtomicU64,
}

impl TimerCpu {
    const fn new() -> Self {
        TimerCpu {
            sleepers: IrqMutex::new(BinaryHeap::new()),
            next_tick: AtomicU64::new(0),
            tick_stopped: AtomicBool::new(false),
            timer_irqs: AtomicU64::new(0),
        }
    }
}

/// Every CPU's TimerCpu.
static CPUS: PerCpu<TimerCpu> = per_cpu!(TimerCpu::new());

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Tickless idle (`nohz=on`, the default): an idle CPU stops its tick and its
/// LAPIC timer only fires for sleep deadlines.
static NOHZ: AtomicBool = AtomicBool::new(true);

pub fn set_nohz(on: bool) {
    NOHZ.store(on, Ordering::Relaxed);
}

/// Timer interrupts `cpu` has taken.
pub fn timer_irqs(cpu: usize) -> u64 {
    CPUS[cpu].timer_irqs.load(Ordering::Relaxed)
}
/// Stops this CPU's tick (Linux's `tick_nohz_idle_stop_tick`) when tickless
/// idle is on: from now on only sleep deadlines fire its timer, and it joins
/// the NOHZ mask so a busy CPU balances for it. Interrupts off.
pub fn stop_tick(cpu: usize) {
    if NOHZ.load(Ordering::Relaxed) && !CPUS[cpu].tick_stopped.swap(true, Ordering::Relaxed) {
        crate::balance::nohz::enter_idle(cpu);
        program(cpu, rq::now_ns());
    }
}

/// Restarts this CPU's tick one period from now if it was stopped.
/// Interrupts off.
pub fn restart_tick(cpu: usize) {
    if CPUS[cpu].tick_stopped.swap(false, Ordering::Relaxed) {
        crate::balance::nohz::exit_idle(cpu);
        let now = rq::now_ns();
        CPUS[cpu].next_tick.store(now + clock::tick_ns(), Ordering::Relaxed);
        program(cpu, now);
    }
}

/// When the last hang-diagnostics dump was printed (`sched_debug=1`).
static LAST_DUMP: AtomicU64 = AtomicU64::new(0);

/// Print the schedstat lines every this many ticks of CPU 0 (0: never).
static STATS_EVERY_TICKS: AtomicU64 = AtomicU64::new(0);

/// Prints the statistics every `ms` milliseconds (`stats_ms=`).
pub fn print_stats_every(ms: u64) {
    STATS_EVERY_TICKS.store(ms * 1_000_000 / clock::tick_ns().max(1), Ordering::Relaxed);
}

/// Starts this CPU's timer. The CPU starts in its idle task, so with
/// tickless idle its tick starts stopped.
pub fn start_this_cpu() {
    let cpu = cpu_id();
    CPUS[cpu].next_tick.store(rq::now_ns() + clock::tick_ns(), Ordering::Relaxed);
    let nohz = NOHZ.load(Ordering::Relaxed);
    CPUS[cpu].tick_stopped.store(nohz, Ordering::Relaxed);
    if nohz {
        crate::balance::nohz::enter_idle(cpu);
    }
    program(cpu, rq::now_ns());
}

/// Programs the LAPIC timer for the earlier of the next tick and the first
/// sleep deadline.
fn program(cpu: usize, now: u64) {
    let mut next = if CPUS[cpu].tick_stopped.load(Ordering::Relaxed) { u64::MAX } else { CPUS[cpu].next_tick.load(Ordering::Relaxed) };
    if let Some(Reverse(s)) = CPUS[cpu].sleepers.lock().peek() {
        next = next.min(s.deadline);
    }
    if next == u64::MAX {
        crate::platform::timer_stop();
        return;
    }
    let delta = next.saturating_sub(now).max(1_000);
    crate::platform::timer_start_ns(delta);
}

/// Sleeps at least `ns` nanoseconds.
#[track_caller]
pub fn sleep_ns(ns: u64) {
    let me = task::current();
    if crate::debug::enabled() {
        *me.blocked_at.lock() = Some(core::panic::Location::caller());
    }
    let deadline = rq::now_ns().saturating_add(ns);
    // For the hung-task detector: a sleep long past this has lost its wakeup.
    me.sleep_deadline.store(deadline.max(1), Ordering::Relaxed);
    while rq::now_ns() < deadline {
        crate::platform::without_interrupts(|| {
            let cpu = cpu_id();
            me.set_state(TaskState::Sleeping);
            CPUS[cpu].sleepers.lock().push(Reverse(Sleeper {
                deadline,
                seq: SEQ.fetch_add(1, Ordering::Relaxed),
                task: me.clone(),
            }));
            program(cpu, rq::now_ns());
        });
        crate::inject::preempt_point();
        crate::schedule::schedule();
        if crate::inject::armed() && rq::now_ns() < deadline {
            // woken before its deadline: sleeps again
            crate::inject::after_wait();
        }
    }
    me.sleep_deadline.store(0, Ordering::Relaxed);
}

/// Removes `task` from every CPU's sleeper heap without waking it: the lost
/// timer wakeup `test_watchdog=lost_sleep` creates. Returns whether it was
/// in one.
pub fn forget_sleeper(task: &Task) -> bool {
    let mut found = false;
    for cpu in rq::online_mask().iter() {
        let mut heap = CPUS[cpu].sleepers.lock();
        let before = heap.len();
        heap.retain(|Reverse(s)| !core::ptr::eq(&*s.task, task));
        found |= heap.len() != before;
    }
    found
}

/// The LAPIC timer interrupt of a CPU whose scheduler runs.
pub fn on_timer(frame: *mut Frame) -> *mut Frame {
    crate::platform::timer_eoi();
    let cpu = cpu_id();
    CPUS[cpu].timer_irqs.fetch_add(1, Ordering::Relaxed);
    let now = rq::now_ns();
    // One due sleeper at a time, woken without the heap's lock held (the
    // wakeup takes runqueue locks). Collecting them into a Vec first cost an
    // allocation per timer wakeup, whose first-fit search made the wakeup's
    // cost depend on the heap's layout (and so on the command line's length).
    loop {
        let next = {
            let mut heap = CPUS[cpu].sleepers.lock();
            match heap.peek() {
                Some(Reverse(s)) if s.deadline <= now => heap.pop().map(|Reverse(s)| s.task),
                _ => None,
            }
        };
        let Some(t) = next else { break };
        crate::wakeup::try_to_wake_up(&t, WakeFlags::NONE);
    }
    let next_tick = CPUS[cpu].next_tick.load(Ordering::Relaxed);
    // The LAPIC timer's calibration is only as good as a few percent: a
    // tick due within 1/16 of a period counts as due now, rather than costing
    // a second interrupt a few microseconds later.
    if now + clock::tick_ns() / 16 >= next_tick && !CPUS[cpu].tick_stopped.load(Ordering::Relaxed) {
        scheduler_tick(cpu);
        crate::inject::tick(cpu);
        let period = clock::tick_ns();
        let mut next = next_tick + period;
        if next <= now + period / 16 {
            next = now + period;
        }
        CPUS[cpu].next_tick.store(next, Ordering::Relaxed);
    }
    program(cpu, rq::now_ns());
    crate::watchdog::timer_irq(cpu, now);
    // `test_watchdog=soft_lockup` holds this CPU's preemption off.
    if resched::need_resched(cpu) && !crate::watchdog::no_preempt(cpu) {
        crate::inject::note_preemption();
        crate::schedule::preempt_irq(frame)
    } else {
        frame
    }
}

/// One scheduler tick (Linux's `sched_tick`): charge the running task and ask
/// for a switch when its slice is used up.
fn scheduler_tick(cpu: usize) {
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
