//! Per-CPU time events: when the scheduler tick is due and the deadlines of
//! high-resolution sleeps, both driven by the CPU's one-shot timer; and
//! tickless idle, which stops the tick.
//!
//! Each CPU keeps the time of its next tick and a heap of sleep deadlines; the
//! timer is always programmed for the earlier of the two, so a sleep ends
//! when it is due, not at the next tick. The interrupt that fires is
//! `entry::timer_interrupt`, the tick's work `tick.rs`, a sleep
//! `thread::sleep_ns`.
//!
//! Follows Linux's `kernel/time/tick-sched.c` (`tick_nohz_idle_stop_tick()`,
//! `tick_nohz_idle_exit()`) for NOHZ, and high-resolution timers
//! (`hrtimer_start()`) for sleeps.

use alloc::collections::BinaryHeap;
use alloc::sync::Arc;
use core::cmp::{Ordering as CmpOrdering, Reverse};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::lock::{level, IrqMutex};
use crate::platform::cpu_id;
use crate::task::Task;
use crate::{clock, rq};
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
        restart_stopped_tick(cpu);
    }
}

/// [`restart_tick`] once it found the tick stopped. Out of line: the exit
/// from idle that calls it (`idle::exit`) keeps to the caller-saved
/// registers when it finds the tick running, as after a short idle period.
#[inline(never)]
fn restart_stopped_tick(cpu: usize) {
    crate::balance::nohz::exit_idle(cpu);
    let now = rq::now_ns();
    CPUS[cpu].next_tick.store(now + clock::tick_ns(), Ordering::Relaxed);
    program(cpu, now);
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
    let next = next_event(cpu);
    if next == u64::MAX {
        crate::platform::timer_stop();
        return;
    }
    let delta = next.saturating_sub(now).max(1_000);
    crate::platform::timer_start_ns(delta);
}

/// Adds `task`, asleep until `deadline` (ns), to this CPU's sleeper heap
/// and reprograms the timer (interrupts off: the task has just set itself
/// Sleeping; `thread::sleep_ns`).
pub fn add_sleeper(task: Arc<Task>, deadline: u64) {
    let cpu = cpu_id();
    CPUS[cpu].sleepers.lock().push(Reverse(Sleeper { deadline, seq: SEQ.fetch_add(1, Ordering::Relaxed), task }));
    program(cpu, rq::now_ns());
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

/// Counts a timer interrupt taken by `cpu` (a tick or a sleep deadline).
#[inline]
pub fn note_interrupt(cpu: usize) {
    CPUS[cpu].timer_irqs.fetch_add(1, Ordering::Relaxed);
}

/// Takes one sleeper of `cpu`'s heap whose deadline is at or before `now`,
/// for the caller to wake without the heap's lock held (the wakeup takes
/// runqueue locks). One at a time: collecting them into a Vec first cost an
/// allocation per timer wakeup, whose first-fit search made the wakeup's
/// cost depend on the heap's layout (and so on the command line's length).
pub fn take_due_sleeper(cpu: usize, now: u64) -> Option<Arc<Task>> {
    let mut heap = CPUS[cpu].sleepers.lock();
    match heap.peek() {
        Some(Reverse(s)) if s.deadline <= now => heap.pop().map(|Reverse(s)| s.task),
        _ => None,
    }
}

/// Whether `cpu`'s tick is due at `now`: its deadline, if so. The LAPIC
/// timer's calibration is only as good as a few percent: a tick due within
/// 1/16 of a period counts as due now, rather than costing a second
/// interrupt a few microseconds later. A stopped tick is never due.
pub fn tick_due(cpu: usize, now: u64) -> Option<u64> {
    let next_tick = CPUS[cpu].next_tick.load(Ordering::Relaxed);
    (now + clock::tick_ns() / 16 >= next_tick && !CPUS[cpu].tick_stopped.load(Ordering::Relaxed)).then_some(next_tick)
}

/// After the tick due at `due` ran at `now`: the next one, a period later
/// (or a period from now, if that is already close).
pub fn advance_tick(cpu: usize, due: u64, now: u64) {
    let period = clock::tick_ns();
    let mut next = due + period;
    if next <= now + period / 16 {
        next = now + period;
    }
    CPUS[cpu].next_tick.store(next, Ordering::Relaxed);
}

/// When `cpu`'s timer fires next (ns): the earlier of its next tick (unless
/// stopped) and its first sleep deadline; `u64::MAX` for neither. Inlined
/// into `program`, on the path of every switch to and from idle.
#[inline(always)]
pub fn next_event(cpu: usize) -> u64 {
    let mut next = if CPUS[cpu].tick_stopped.load(Ordering::Relaxed) { u64::MAX } else { CPUS[cpu].next_tick.load(Ordering::Relaxed) };
    if let Some(Reverse(s)) = CPUS[cpu].sleepers.lock().peek() {
        next = next.min(s.deadline);
    }
    next
}

/// Programs `cpu`'s timer for its next event, from now.
pub fn reprogram(cpu: usize) {
    program(cpu, rq::now_ns());
}
