//! Watchdogs, on by default: each reports what it found as `@fw watchdog`
//! (the CPU's runqueue, the task, the last trace events; docs/CONSOLE.md) and
//! ends the boot with the `watchdog` exit status.
//!
//! - **Soft lockup** (Linux's `watchdog.c: watchdog_timer_fn()`): from each
//!   CPU's tick, a CPU that has not switched away from its running task for
//!   `2·watchdog_thresh` seconds while other tasks wait on its runqueue. Linux
//!   asks whether its per-CPU stopper thread got to run; here the question is
//!   asked directly of the runqueue: the same task (by id and switch count)
//!   at every tick, with runnable tasks beside it. The CPU must also have
//!   taken half that time in ticks, so that a vCPU the host did not run for a
//!   while is not taken for a stuck one.
//! - **Hard lockup** (Linux's buddy detector, `watchdog_buddy.c`: a CPU
//!   checks that another CPU's timer interrupts still advance): a CPU that
//!   took no timer interrupt for `2·watchdog_thresh` seconds while it had
//!   runnable tasks (a CPU spinning with interrupts off, or one whose tick
//!   stopped while work was queued), seen from another CPU's tick. Unlike
//!   Linux's, whose watchdog timer also runs on idle CPUs, a tickless idle CPU
//!   here takes no timer interrupt at all, so only a CPU with work counts.
//! - **Hung task** (Linux's `hung_task.c: check_hung_task()`): a task asleep
//!   for `hung_task_timeout_secs` whose waker should have come. Linux reports
//!   any task in D state that long; here a sleep may legitimately last (a
//!   pipe reader with no writer), so only a sleep nothing will end counts: a
//!   `sleep_ns` more than the timeout past its deadline (the timer lost it),
//!   or a task taken off its wait queue by a waker (which does so only to
//!   wake it) and still asleep that long with no wakeup counted.
//!
//! The checks other than the local one run at most every 100 ms, from
//! whichever CPU's tick comes first; each costs a few loads per CPU, and the
//! hung-task scan one pass over the threads under the registry lock.
//! State: per-CPU values are written by their CPU's tick (under its runqueue
//! lock) or by the one scan in progress (`NEXT_SCAN`'s winner).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crate::MAX_CPUS;
use crate::resched;
use crate::rq::{self, Rq};
use crate::lock::{level, IrqMutex};
use crate::task::{self, Task, TaskId, TaskState};

/// `watchdog_thresh=` default, seconds (Linux's is 10; runs here last
/// seconds, and a scheduler's lockup should show within them).
pub const DEFAULT_THRESH_S: u32 = 2;
/// `hung_task_timeout_secs=` default, seconds (Linux's is 120).
pub const DEFAULT_HUNG_S: u32 = 5;
/// Trace events printed per report.
const EVENTS: usize = 32;
/// How often the remote and hung-task checks run.
const SCAN_NS: u64 = 100_000_000;

/// Soft and hard lockup threshold (ns; 0: off).
static LOCKUP_NS: AtomicU64 = AtomicU64::new(0);
/// Hung-task threshold (ns; 0: off).
static HUNG_NS: AtomicU64 = AtomicU64::new(0);
/// A report was made: one per boot.
static FIRED: AtomicBool = AtomicBool::new(false);
static NEXT_SCAN: AtomicU64 = AtomicU64::new(0);

// The soft-lockup detector's per-CPU memory (written by the CPU's tick).
static RUN_TASK: [AtomicU32; MAX_CPUS] = [const { AtomicU32::new(u32::MAX) }; MAX_CPUS];
static RUN_SWITCHES: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];
static STUCK_SINCE: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];
static STUCK_TICKS: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];
// The hard-lockup detector's memory of each CPU (written by the scan).
static SEEN_IRQS: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];
static SEEN_AT: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];
/// `test_watchdog=soft_lockup`: the tick of this CPU asks for switches but
/// does not make them, as a CPU in a non-preemptible section would.
static NO_PREEMPT: [AtomicBool; MAX_CPUS] = [const { AtomicBool::new(false) }; MAX_CPUS];

/// Whether the hard-lockup check runs (`nmi_watchdog=1`). Off by default: under QEMU's TCG
/// a vCPU thread the host does not run for the threshold looks exactly like a CPU stuck with
/// interrupts off (64 vCPUs on 2 host cores went 4.2 s without a timer interrupt in a
/// healthy `-smp 64` boot), and nothing in the guest tells the two apart (no steal time).
static HARD_LOCKUP: AtomicBool = AtomicBool::new(false);

/// Sets the thresholds (`watchdog_thresh=`, `hung_task_timeout_secs=`) and whether the
/// hard-lockup check runs (`nmi_watchdog=`).
pub fn init(watchdog_thresh_s: u32, hung_task_timeout_s: u32, hard_lockup: bool) {
    HARD_LOCKUP.store(hard_lockup, Ordering::Relaxed);
    LOCKUP_NS.store(2 * watchdog_thresh_s as u64 * 1_000_000_000, Ordering::Relaxed);
    HUNG_NS.store(hung_task_timeout_s as u64 * 1_000_000_000, Ordering::Relaxed);
}

/// Whether `cpu`'s tick must not preempt (`test_watchdog=soft_lockup`).
#[inline]
pub fn no_preempt(cpu: usize) -> bool {
    NO_PREEMPT[cpu].load(Ordering::Relaxed)
}

/// The soft-lockup check of `rq`'s CPU, from its tick (lock held).
#[inline]
pub fn tick(rq: &Rq) {
    let limit = LOCKUP_NS.load(Ordering::Relaxed);
    if limit != 0 {
        check_soft_lockup(rq, limit);
    }
}

/// From every timer interrupt (a tick or a sleep deadline, no lock held):
/// the scan, if one is due. Tickless idle CPUs take no timer interrupt, so
/// a machine on which no CPU takes any (all idle, no sleeper) is not
/// scanned; Linux's watchdog timer runs on idle CPUs too.
#[inline]
pub fn timer_irq(cpu: usize, now: u64) {
    let next = NEXT_SCAN.load(Ordering::Relaxed);
    if now >= next && NEXT_SCAN.compare_exchange(next, now + SCAN_NS, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
        scan(cpu, now);
    }
}

fn check_soft_lockup(rq: &Rq, limit: u64) {
    let cpu = rq.cpu;
    let runnable = rq.fair.h_nr_runnable() as u64;
    let waiting = if rq.curr.is_idle { runnable } else { runnable.saturating_sub(1) };
    let id = rq.curr.id;
    let switches = rq.curr.stats.nr_switches.load(Ordering::Relaxed);
    let now = rq.clock;
    let since = STUCK_SINCE[cpu].load(Ordering::Relaxed);
    if RUN_TASK[cpu].load(Ordering::Relaxed) != id || RUN_SWITCHES[cpu].load(Ordering::Relaxed) != switches || waiting == 0
    {
        RUN_TASK[cpu].store(id, Ordering::Relaxed);
        RUN_SWITCHES[cpu].store(switches, Ordering::Relaxed);
        STUCK_SINCE[cpu].store(if waiting > 0 { now } else { 0 }, Ordering::Relaxed);
        STUCK_TICKS[cpu].store(0, Ordering::Relaxed);
        return;
    }
    if since == 0 {
        STUCK_SINCE[cpu].store(now, Ordering::Relaxed);
        return;
    }
    let ticks = STUCK_TICKS[cpu].load(Ordering::Relaxed) + 1;
    STUCK_TICKS[cpu].store(ticks, Ordering::Relaxed);
    let stuck = now.saturating_sub(since);
    if stuck >= limit && ticks * crate::clock::tick_ns() >= limit / 2 {
        if !claim() {
            return;
        }
        let t = &rq.curr;
        report_header(format_args!(
            "kind=soft_lockup cpu={} at={} stuck_ms={} ticks={} task={} name={} waiting={} need_resched={} msg=CPU {} has run task {} ({}) without a switch for {} ms while {} task(s) waited",
            cpu, now, stuck / 1_000_000, ticks, t.id, t.name, waiting, resched::need_resched(cpu) as u8,
            cpu, t.id, t.name, stuck / 1_000_000, waiting
        ));
        report_rq(rq);
        report_events(cpu);
        finish();
    }
}

/// The checks that look at other CPUs and at every thread.
fn scan(me: usize, now: u64) {
    let limit = LOCKUP_NS.load(Ordering::Relaxed);
    if limit != 0 && HARD_LOCKUP.load(Ordering::Relaxed) {
        for cpu in rq::online_mask().iter() {
            if cpu != me {
                check_hard_lockup(cpu, now, limit);
            }
        }
    }
    let hung = HUNG_NS.load(Ordering::Relaxed);
    if hung != 0 {
        check_hung_tasks(now, hung);
    }
}

fn check_hard_lockup(cpu: usize, now: u64, limit: u64) {
    let irqs = crate::timer::timer_irqs(cpu);
    let runnable = crate::balance::snapshot::cpu_snapshot(cpu).h_nr_runnable;
    if irqs != SEEN_IRQS[cpu].load(Ordering::Relaxed) || runnable == 0 || SEEN_AT[cpu].load(Ordering::Relaxed) == 0 {
        SEEN_IRQS[cpu].store(irqs, Ordering::Relaxed);
        SEEN_AT[cpu].store(now, Ordering::Relaxed);
        return;
    }
    let quiet = now.saturating_sub(SEEN_AT[cpu].load(Ordering::Relaxed));
    if quiet < limit || !claim() {
        return;
    }
    report_header(format_args!(
        "kind=hard_lockup cpu={} at={} stuck_ms={} timer_irqs={} runnable={} seen_from={} msg=CPU {} took no timer interrupt for {} ms while it had {} runnable task(s)",
        cpu, now, quiet / 1_000_000, irqs, runnable, crate::platform::cpu_id(), cpu, quiet / 1_000_000, runnable
    ));
    match rq::try_lock(cpu) {
        Some(rq) => report_rq(&rq),
        None => crate::record!("watchdog_rq", "cpu={} busy=1", cpu),
    }
    report_events(cpu);
    finish();
}

/// Why a sleeping task's wakeup should have come.
enum Hung {
    /// Its `sleep_ns` deadline passed this long ago (ns).
    SleepPast(u64),
    /// A waker took it off its wait queue this long ago at least (ns).
    Dequeued(u64),
}

/// The hung-task detector's memory, beside the tasks: each task it last
/// saw asleep on no wait queue (or in a timed sleep, which it judges by the
/// deadline and keeps), with when it first saw it so and the task's
/// `nr_wakeups` then. Only the scan in progress (`NEXT_SCAN`'s winner)
/// touches it; a task the scan does not keep is forgotten.
static SEEN: IrqMutex<level::HungTasks, Vec<Seen>> = IrqMutex::new(Vec::new());

struct Seen {
    id: TaskId,
    /// When the task was first seen asleep with no wakeup coming (ns).
    at: u64,
    wakeups: u64,
    /// Kept by this scan.
    kept: bool,
}

fn check_hung_tasks(now: u64, limit: u64) {
    let mut found: Option<(Arc<Task>, Hung)> = None;
    let mut seen = SEEN.lock();
    for s in seen.iter_mut() {
        s.kept = false;
    }
    task::for_each(|t| {
        if found.is_some() || t.state() != TaskState::Sleeping {
            return;
        }
        let entry = seen.iter().position(|s| s.id == t.id);
        let deadline = t.sleep_deadline.load(Ordering::Relaxed);
        if deadline != 0 {
            if let Some(i) = entry {
                seen[i].kept = true;
            }
            if now > deadline.saturating_add(limit) {
                found = Some((t.clone(), Hung::SleepPast(now - deadline)));
            }
            return;
        }
        if t.on_wait_queue.load(Ordering::Relaxed) {
            return;
        }
        // Asleep and on no wait queue: a waker popped it and its wakeup has
        // not arrived yet. Seen the same (no wakeup counted since) for the
        // whole limit: it will not.
        let wakeups = t.stats.nr_wakeups.load(Ordering::Relaxed);
        match entry {
            Some(i) if seen[i].wakeups == wakeups => {
                seen[i].kept = true;
                if now - seen[i].at >= limit {
                    found = Some((t.clone(), Hung::Dequeued(now - seen[i].at)));
                }
            }
            Some(i) => seen[i] = Seen { id: t.id, at: now, wakeups, kept: true },
            None => seen.push(Seen { id: t.id, at: now, wakeups, kept: true }),
        }
    });
    seen.retain(|s| s.kept);
    drop(seen);
    let Some((t, why)) = found else { return };
    if !claim() {
        return;
    }
    let cpu = t.cpu.load(Ordering::Relaxed);
    let (reason, ms) = match why {
        Hung::SleepPast(ns) => ("sleep_deadline_passed", ns / 1_000_000),
        Hung::Dequeued(ns) => ("dequeued_not_woken", ns / 1_000_000),
    };
    let msg: &dyn fmt::Display = match why {
        Hung::SleepPast(_) => &"its sleep's deadline passed and the timer never woke it",
        Hung::Dequeued(_) => &"a waker took it off its wait queue and never woke it",
    };
    report_header(format_args!(
        "kind=hung_task cpu={} at={} task={} name={} reason={} blocked_ms={} wakeups={} msg=task {} ({}) asleep for {} ms: {}",
        cpu, now, t.id, t.name, reason, ms, t.stats.nr_wakeups.load(Ordering::Relaxed), t.id, t.name, ms, msg
    ));
    crate::record!(
        "watchdog_blocked",
        "id={} name={} state={:?} cpu={} on_cpu={} on_rq={} on_wait_queue={} switches={} wakeups={}",
        t.id,
        t.name,
        t.state(),
        cpu,
        t.ctx.on_cpu() as u8,
        t.on_rq.load(Ordering::Relaxed) as u8,
        t.on_wait_queue.load(Ordering::Relaxed) as u8,
        t.stats.nr_switches.load(Ordering::Relaxed),
        t.stats.nr_wakeups.load(Ordering::Relaxed)
    );
    match rq::try_lock(cpu) {
        Some(rq) => report_rq(&rq),
        None => crate::record!("watchdog_rq", "cpu={} busy=1", cpu),
    }
    report_events(cpu);
    finish();
}

/// Takes the boot's one report; false if another CPU has it.
fn claim() -> bool {
    !FIRED.swap(true, Ordering::Relaxed)
}

fn report_header(what: fmt::Arguments) {
    crate::kprintln!("WATCHDOG: {}", what);
    crate::record!("watchdog", "{}", what);
}

/// `@fw watchdog_rq` and one `@fw watchdog_task` per task on the runqueue.
fn report_rq(rq: &Rq) {
    crate::record!(
        "watchdog_rq",
        "cpu={} curr={} curr_name={} nr_queued={} runnable={} need_resched={} clock={} tasks={}",
        rq.cpu,
        if rq.curr.is_idle { 0 } else { rq.curr.id },
        rq.curr.name,
        rq.fair.nr_queued(),
        rq.fair.h_nr_runnable(),
        resched::need_resched(rq.cpu) as u8,
        rq.clock,
        rq.tasks.iter().flatten().count()
    );
    for (eid, t) in rq.tasks.iter().enumerate() {
        let Some(t) = t else { continue };
        let se = rq.fair.entity(sched::EntityId(eid as u32));
        crate::record!(
            "watchdog_task",
            "id={} name={} state={:?} cpu={} curr={} queued={} delayed={} vruntime={} deadline={} switches={} wakeups={}",
            t.id,
            t.name,
            t.state(),
            rq.cpu,
            (!rq.curr.is_idle && alloc::sync::Arc::ptr_eq(t, &rq.curr)) as u8,
            se.is_some_and(|s| s.on_rq) as u8,
            se.is_some_and(|s| s.sched_delayed) as u8,
            se.map_or(0, |s| s.vruntime),
            se.map_or(0, |s| s.deadline),
            t.stats.nr_switches.load(Ordering::Relaxed),
            t.stats.nr_wakeups.load(Ordering::Relaxed)
        );
    }
}

fn report_events(cpu: usize) {
    match crate::trace::print_last(cpu, EVENTS) {
        Some(0) if !crate::trace::enabled() => {
            crate::record!("watchdog_trace", "cpu={} events=0 msg=tracing is off (trace=1 records the events)", cpu)
        }
        Some(n) => crate::record!("watchdog_trace", "cpu={} events={}", cpu, n),
        None => crate::record!("watchdog_trace", "cpu={} events=0 msg=the trace ring was busy", cpu),
    }
}

fn finish() -> ! {
    crate::platform::exit(crate::platform::Exit::Watchdog)
}

/// What `test_watchdog=` creates on purpose (the watchdog scenarios).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provoke {
    /// Two threads pinned to the last CPU; one runs with its tick's
    /// preemption held off (interrupts on), the other waits.
    SoftLockup,
    /// The same, the running one spinning with interrupts off.
    HardLockup,
    /// A thread waits on a wait queue; its waker pops it and drops the wakeup.
    LostWakeup,
    /// A thread sleeps 10 ms at a time; the timer forgets one of its sleeps.
    LostSleep,
}

impl Provoke {
    pub const ALL: [(&'static str, Provoke); 4] = [
        ("soft_lockup", Provoke::SoftLockup),
        ("hard_lockup", Provoke::HardLockup),
        ("lost_wakeup", Provoke::LostWakeup),
        ("lost_sleep", Provoke::LostSleep),
    ];
}

static PROVOKED: AtomicBool = AtomicBool::new(false);

fn spin_forever() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

/// Creates `what` from the init thread, then waits for the watchdog to end
/// the boot (it never returns).
pub fn provoke(what: Provoke) -> ! {
    let cpu = rq::online_mask().iter().last().unwrap_or(0);
    crate::kprintln!("test_watchdog: provoking {:?} on CPU {} on purpose", what, cpu);
    let spawn = |name: &str, f: fn()| {
        crate::thread::spawn(crate::thread::Spawn::new(name).pin(cpu), f).expect("test_watchdog: a thread for the test");
    };
    match what {
        Provoke::SoftLockup => {
            spawn("wd-waiter", || spin_forever());
            spawn("wd-holder", || {
                NO_PREEMPT[crate::platform::cpu_id()].store(true, Ordering::Relaxed);
                spin_forever()
            });
        }
        Provoke::HardLockup => {
            spawn("wd-waiter", || spin_forever());
            spawn("wd-holder", || {
                crate::platform::irq_disable();
                spin_forever()
            });
        }
        Provoke::LostWakeup => {
            static WQ: crate::sync::WaitQueue = crate::sync::WaitQueue::new();
            static CHECKS: AtomicU32 = AtomicU32::new(0);
            spawn("wd-sleeper", || {
                WQ.wait_until(|| {
                    CHECKS.fetch_add(1, Ordering::AcqRel);
                    PROVOKED.load(Ordering::Acquire)
                })
            });
            // The second check is the one made on the queue, marked asleep:
            // after it the sleeper only calls schedule() and blocks.
            while CHECKS.load(Ordering::Acquire) < 2 {
                crate::thread::sleep_ns(1_000_000);
            }
            // Released: the condition holds, the waker pops the waiter and
            // loses the wakeup.
            PROVOKED.store(true, Ordering::Release);
            assert!(WQ.forget_first(), "test_watchdog: the sleeper is on its queue");
        }
        Provoke::LostSleep => {
            // Sleeps again and again, so that the timer has one to forget
            // however late this thread gets to look.
            let napper = crate::thread::spawn(crate::thread::Spawn::new("wd-napper").pin(cpu), || loop {
                crate::thread::sleep_ns(10_000_000)
            })
            .expect("test_watchdog: a thread for the test");
            while !crate::timer::forget_sleeper(&napper) {
                crate::thread::sleep_ns(100_000);
            }
        }
    }
    crate::kprintln!("test_watchdog: done; waiting for the watchdog");
    // Short sleeps: their timer interrupts run the scans even when every
    // other CPU is idle and tickless.
    loop {
        crate::thread::sleep_ns(SCAN_NS);
    }
}
