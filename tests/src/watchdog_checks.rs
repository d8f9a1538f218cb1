//! The watchdog and lock-order scenarios: each provokes its condition on purpose
//! (`test_watchdog=`, `test_lockdep=`), and its check asserts the report names what was
//! provoked. That no other scenario reports anything is `Scenario::evaluate`'s part.

use crate::boot_checks::ensure;
use crate::log::{Log, Record};
use crate::scenarios::CheckResult;

/// Soft lockup: on the last CPU of 2, `wd-holder` runs with its tick's preemption held off
/// while `wd-waiter` waits; `watchdog_thresh=1` reports after 2 s.
pub const SOFT_LOCKUP: &str = "watchdog_thresh=1 trace=256 test_watchdog=soft_lockup";
/// Hard lockup: `wd-holder` spins with interrupts off on CPU 1; CPU 0 reports it.
pub const HARD_LOCKUP: &str = "watchdog_thresh=1 trace=256 test_watchdog=hard_lockup";
/// Hung task: `wd-sleeper` is popped from its wait queue and its wakeup dropped.
pub const LOST_WAKEUP: &str = "hung_task_timeout_secs=1 trace=256 test_watchdog=lost_wakeup";
/// Hung task: `wd-napper`'s 10 ms sleep is removed from the timer's heap.
pub const LOST_SLEEP: &str = "hung_task_timeout_secs=1 trace=256 test_watchdog=lost_sleep";
/// A runqueue lock, then a `pi_lock` (the order says pi_lock first).
pub const LOCKDEP_INVERSION: &str = "test_lockdep=inversion";
/// CPU 1's runqueue, then CPU 0's.
pub const LOCKDEP_RQ_DESCENDING: &str = "test_lockdep=rq_descending";
/// A runqueue lock recorded with interrupts on.
pub const LOCKDEP_IRQS_ON: &str = "test_lockdep=irqs_on";
/// `schedule()` with a runqueue lock held.
pub const LOCKDEP_SCHEDULE_HELD: &str = "test_lockdep=schedule_held";

/// The threshold the scenarios set: 1 s, so lockups are reported after 2 s and hung tasks
/// after 1 s.
const LOCKUP_MS: u64 = 2_000;
const HUNG_MS: u64 = 1_000;
/// `hz` is the default 1000: a CPU stuck for `LOCKUP_MS` ticked at least half as many times.
const MIN_TICKS: u64 = LOCKUP_MS / 2;
/// The stuck CPU: the last of the scenarios' 2.
const CPU: u64 = 1;

fn header<'a>(log: &'a Log, kind: &str) -> Result<&'a Record, String> {
    let w = log.one("watchdog")?;
    ensure(w.get("kind") == Some(kind), || format!("`{w}`: expected kind={kind}"))?;
    Ok(w)
}

/// The `@fw watchdog_task` line of the thread named `name`.
fn task_line<'a>(log: &'a Log, name: &str) -> Result<&'a Record, String> {
    let all: Vec<&Record> = log.records("watchdog_task").filter(|r| r.get("name") == Some(name)).collect();
    match all.as_slice() {
        [one] => Ok(one),
        _ => Err(format!("expected one `@fw watchdog_task name={name}`, found {}", all.len())),
    }
}

fn at_least(r: &Record, key: &str, min: u64) -> CheckResult {
    let v = r.num(key)?;
    ensure(v >= min, || format!("`{r}`: expected {key} >= {min}"))
}

fn is(r: &Record, key: &str, want: &str) -> CheckResult {
    ensure(r.get(key) == Some(want), || format!("`{r}`: expected {key}={want}"))
}

/// The trace events the report printed for `cpu`, as many as its `@fw watchdog_trace` says.
fn events(log: &Log, cpu: u64) -> Result<Vec<&Record>, String> {
    let t = log.one("watchdog_trace")?;
    ensure(t.num("cpu")? == cpu, || format!("`{t}`: expected cpu={cpu}"))?;
    let n = t.num("events")? as usize;
    ensure(n > 0, || format!("`{t}`: expected trace events (trace=256 is on)"))?;
    let ev: Vec<&Record> = log.records("watchdog_event").collect();
    ensure(ev.len() == n, || format!("`{t}` but {} `@fw watchdog_event` lines", ev.len()))?;
    for e in &ev {
        ensure(e.num("cpu")? == cpu, || format!("`{e}`: expected cpu={cpu}"))?;
    }
    Ok(ev)
}

/// The holder ran and the waiter waited on CPU 1 for 2 s without a switch, while the tick
/// kept coming (asking to switch: `need_resched=1`); its last trace events are ticks only.
pub(crate) fn check_soft_lockup(log: &Log) -> CheckResult {
    let w = header(log, "soft_lockup")?;
    ensure(w.num("cpu")? == CPU, || format!("`{w}`: expected cpu={CPU}"))?;
    is(w, "name", "wd-holder")?;
    at_least(w, "stuck_ms", LOCKUP_MS)?;
    at_least(w, "ticks", MIN_TICKS)?;
    at_least(w, "waiting", 1)?;
    is(w, "need_resched", "1")?;
    let holder = task_line(log, "wd-holder")?;
    let waiter = task_line(log, "wd-waiter")?;
    ensure(holder.get("id") == w.get("task"), || format!("`{w}` does not name `{holder}`"))?;
    is(holder, "curr", "1")?;
    is(waiter, "curr", "0")?;
    is(waiter, "queued", "1")?;
    for t in [holder, waiter] {
        ensure(t.num("cpu")? == CPU, || format!("`{t}`: expected cpu={CPU}"))?;
    }
    let rq = log.one("watchdog_rq")?;
    ensure(rq.num("cpu")? == CPU && rq.get("curr") == w.get("task"), || {
        format!("`{rq}`: expected cpu={CPU} curr={}", w.get("task").unwrap_or("?"))
    })?;
    ensure(rq.num("runnable")? == w.num("waiting")? + 1, || format!("`{rq}`: expected runnable = waiting + 1 of `{w}`"))?;
    for e in events(log, CPU)? {
        ensure(e.get("ev") == Some("tick"), || format!("`{e}`: the stuck CPU's last events must be ticks, no switch"))?;
    }
    no_workload(log)
}

/// CPU 0 saw CPU 1 take no timer interrupt for 2 s while it had runnable tasks; CPU 1's last
/// switch went to the holder and no tick followed it.
pub(crate) fn check_hard_lockup(log: &Log) -> CheckResult {
    let w = header(log, "hard_lockup")?;
    ensure(w.num("cpu")? == CPU, || format!("`{w}`: expected cpu={CPU}"))?;
    ensure(w.num("seen_from")? == 0, || format!("`{w}`: expected seen_from=0"))?;
    at_least(w, "stuck_ms", LOCKUP_MS)?;
    at_least(w, "runnable", 1)?;
    let rq = log.one("watchdog_rq")?;
    ensure(rq.num("cpu")? == CPU, || format!("`{rq}`: expected cpu={CPU}"))?;
    is(rq, "curr_name", "wd-holder")?;
    let holder = task_line(log, "wd-holder")?;
    is(holder, "curr", "1")?;
    let ev = events(log, CPU)?;
    let last_switch = ev
        .iter()
        .rposition(|e| e.get("ev") == Some("switch"))
        .ok_or_else(|| "no switch among CPU 1's last events".to_string())?;
    ensure(ev[last_switch].get("next") == holder.get("id"), || {
        format!("`{}`: expected the last switch to be to wd-holder ({})", ev[last_switch], holder.get("id").unwrap_or("?"))
    })?;
    // Nothing ran CPU 1 in the quiet time: no tick, no switch (a tick may still come between
    // the switch and the holder's `cli`).
    // Quiet for the threshold before the report: the count the detector watches may have last
    // moved a little before the lockup began (CPU 1 switched to the holder, by IPI, after its
    // last timer interrupt), so the reported span can hold that switch.
    let quiet_from = w.num("at")?.saturating_sub(LOCKUP_MS * 1_000_000);
    for e in &ev {
        if matches!(e.get("ev"), Some("tick" | "switch")) && e.num("ts")? > quiet_from {
            return Err(format!("`{e}`: CPU 1 acted during the {} ms `{w}` reports", w.num("stuck_ms")?));
        }
    }
    no_workload(log)
}

fn check_hung(log: &Log, name: &str, reason: &str) -> CheckResult {
    let w = header(log, "hung_task")?;
    is(w, "name", name)?;
    is(w, "reason", reason)?;
    at_least(w, "blocked_ms", HUNG_MS)?;
    let t = log.one("watchdog_blocked")?;
    is(t, "name", name)?;
    ensure(t.get("id") == w.get("task"), || format!("`{w}` does not name `{t}`"))?;
    is(t, "state", "Sleeping")?;
    is(t, "on_wait_queue", "0")?;
    is(t, "on_cpu", "0")?;
    let rq = log.one("watchdog_rq")?;
    ensure(rq.get("cpu") == w.get("cpu"), || format!("`{rq}`: expected the runqueue of `{w}`"))?;
    // It left its CPU asleep and never ran again.
    let ev = events(log, w.num("cpu")?)?;
    let id = t.get("id");
    let slept = ev
        .iter()
        .rposition(|e| e.get("ev") == Some("switch") && e.get("prev") == id && e.get("prev_state") == Some("S"))
        .ok_or_else(|| format!("no `switch prev={} prev_state=S` among its CPU's last events", id.unwrap_or("?")))?;
    if let Some(e) = ev[slept..].iter().find(|e| e.get("next") == id) {
        return Err(format!("`{e}`: the hung task ran again"));
    }
    no_workload(log)
}

/// `wd-sleeper` was taken off its wait queue and never woken.
pub(crate) fn check_lost_wakeup(log: &Log) -> CheckResult {
    check_hung(log, "wd-sleeper", "dequeued_not_woken")
}

/// `wd-napper`'s sleep passed its deadline with no timer to end it.
pub(crate) fn check_lost_sleep(log: &Log) -> CheckResult {
    check_hung(log, "wd-napper", "sleep_deadline_passed")
}

/// The provoking boots never reach their workload.
fn no_workload(log: &Log) -> CheckResult {
    ensure(log.records("workload_done").next().is_none(), || "a workload ran to its end".to_string())
}

fn check_lockdep(log: &Log, taking: &str, taking_cpu: Option<u64>, held: &str, held_cpu: Option<u64>, msg: &str) -> CheckResult {
    let p = log.one("panic")?;
    ensure(p.get("msg").is_some_and(|m| m.contains("lock order violated")), || {
        format!("`{p}`: expected `lock order violated`")
    })?;
    let l = log.one("lockdep")?;
    ensure(l.get("cpu") == p.get("cpu"), || format!("`{l}` and `{p}` name different CPUs"))?;
    is(l, "taking", taking)?;
    is(l, "held", held)?;
    let cpu_word = |c: Option<u64>| c.map_or("-".to_string(), |c| c.to_string());
    is(l, "taking_cpu", &cpu_word(taking_cpu))?;
    is(l, "held_cpu", &cpu_word(held_cpu))?;
    ensure(l.get("msg").is_some_and(|m| m.contains(msg)), || format!("`{l}`: expected msg= containing `{msg}`"))
}

/// A runqueue held (init's CPU), a `pi_lock` taken.
pub(crate) fn check_lockdep_inversion(log: &Log) -> CheckResult {
    let cpu = log.one("lockdep")?.num("cpu")?;
    check_lockdep(log, "pi_lock", None, "runqueue", Some(cpu), "order inverted")
}

/// CPU 1's runqueue held, CPU 0's taken.
pub(crate) fn check_lockdep_rq_descending(log: &Log) -> CheckResult {
    check_lockdep(log, "runqueue", Some(0), "runqueue", Some(1), "ascending CPU order")
}

/// A runqueue lock with interrupts on, nothing else held.
pub(crate) fn check_lockdep_irqs_on(log: &Log) -> CheckResult {
    let cpu = log.one("lockdep")?.num("cpu")?;
    check_lockdep(log, "runqueue", Some(cpu), "-", None, "interrupts on")
}

/// `schedule()` refused to switch with one interrupt-off lock held, and said so.
pub(crate) fn check_lockdep_schedule_held(log: &Log) -> CheckResult {
    let p = log.one("panic")?;
    let cpu = p.num("cpu")?;
    let want = format!("schedule() called on CPU {cpu} holding 1 interrupt-off lock(s)");
    ensure(p.get("msg").is_some_and(|m| m.contains(&want)), || format!("`{p}`: expected `{want}`"))
}

/// What a correct kernel prints after the boot for `append`, for the unit tests (None: not
/// one of these scenarios).
pub fn synthetic(append: &str) -> Option<String> {
    let sched = "@fw stage name=sched\n";
    let ticks = |n: usize, from: u64| -> String {
        (0..n).map(|i| format!("@fw watchdog_event cpu=1 ts={} ev=tick\n", from + i as u64 * 1_000_000)).collect()
    };
    let out = match append {
        SOFT_LOCKUP => format!(
            "{sched}test_watchdog: provoking SoftLockup on CPU 1 on purpose\n\
             @fw watchdog kind=soft_lockup cpu=1 at=3500000000 stuck_ms=2001 ticks=2000 task=3 name=wd-holder waiting=1 need_resched=1 msg=CPU 1 has run task 3 (wd-holder) without a switch for 2001 ms while 1 task(s) waited\n\
             @fw watchdog_rq cpu=1 curr=3 curr_name=wd-holder nr_queued=2 runnable=2 need_resched=1 clock=3500000000 tasks=2\n\
             @fw watchdog_task id=2 name=wd-waiter state=Running cpu=1 curr=0 queued=1 delayed=0 vruntime=100 deadline=200 switches=1 wakeups=1\n\
             @fw watchdog_task id=3 name=wd-holder state=Running cpu=1 curr=1 queued=1 delayed=0 vruntime=300 deadline=400 switches=0 wakeups=1\n\
             {}@fw watchdog_trace cpu=1 events=32\n@fw exit status=43 code=watchdog\n",
            ticks(32, 3_468_000_000)
        ),
        HARD_LOCKUP => format!(
            "{sched}test_watchdog: provoking HardLockup on CPU 1 on purpose\n\
             @fw watchdog kind=hard_lockup cpu=1 at=3500000000 stuck_ms=2010 timer_irqs=120 runnable=2 seen_from=0 msg=CPU 1 took no timer interrupt for 2010 ms while it had 2 runnable task(s)\n\
             @fw watchdog_rq cpu=1 curr=3 curr_name=wd-holder nr_queued=2 runnable=2 need_resched=0 clock=1400000000 tasks=2\n\
             @fw watchdog_task id=2 name=wd-waiter state=Running cpu=1 curr=0 queued=1 delayed=0 vruntime=100 deadline=200 switches=1 wakeups=1\n\
             @fw watchdog_task id=3 name=wd-holder state=Running cpu=1 curr=1 queued=1 delayed=0 vruntime=300 deadline=400 switches=0 wakeups=1\n\
             {}@fw watchdog_event cpu=1 ts=1400000000 ev=switch prev=2 prev_state=R next=3\n\
             @fw watchdog_trace cpu=1 events=4\n@fw exit status=43 code=watchdog\n",
            ticks(3, 1_397_000_000)
        ),
        LOST_WAKEUP => format!(
            "{sched}test_watchdog: provoking LostWakeup on CPU 1 on purpose\n\
             @fw watchdog kind=hung_task cpu=1 at=2500000000 task=2 name=wd-sleeper reason=dequeued_not_woken blocked_ms=1000 wakeups=1 msg=task 2 (wd-sleeper) asleep for 1000 ms: a waker took it off its wait queue and never woke it\n\
             @fw watchdog_blocked id=2 name=wd-sleeper state=Sleeping cpu=1 on_cpu=0 on_rq=0 on_wait_queue=0 switches=1 wakeups=1\n\
             @fw watchdog_rq cpu=1 curr=0 curr_name=idle1 nr_queued=0 runnable=0 need_resched=0 clock=2500000000 tasks=1\n\
             @fw watchdog_task id=2 name=wd-sleeper state=Sleeping cpu=1 curr=0 queued=0 delayed=0 vruntime=1 deadline=2 switches=1 wakeups=1\n\
             @fw watchdog_event cpu=1 ts=1000 ev=switch prev=2 prev_state=S next=0\n\
             @fw watchdog_trace cpu=1 events=1\n@fw exit status=43 code=watchdog\n"
        ),
        LOST_SLEEP => format!(
            "{sched}test_watchdog: provoking LostSleep on CPU 1 on purpose\n\
             @fw watchdog kind=hung_task cpu=1 at=2500000000 task=2 name=wd-napper reason=sleep_deadline_passed blocked_ms=1050 wakeups=1 msg=task 2 (wd-napper) asleep for 1050 ms: its sleep's deadline passed and the timer never woke it\n\
             @fw watchdog_blocked id=2 name=wd-napper state=Sleeping cpu=1 on_cpu=0 on_rq=0 on_wait_queue=0 switches=1 wakeups=1\n\
             @fw watchdog_rq cpu=1 curr=0 curr_name=idle1 nr_queued=0 runnable=0 need_resched=0 clock=2500000000 tasks=1\n\
             @fw watchdog_task id=2 name=wd-napper state=Sleeping cpu=1 curr=0 queued=0 delayed=0 vruntime=1 deadline=2 switches=1 wakeups=1\n\
             @fw watchdog_event cpu=1 ts=1000 ev=switch prev=0 prev_state=R next=2\n\
             @fw watchdog_event cpu=1 ts=2000 ev=switch prev=2 prev_state=S next=0\n\
             @fw watchdog_trace cpu=1 events=2\n@fw exit status=43 code=watchdog\n"
        ),
        LOCKDEP_INVERSION => format!(
            "{sched}@fw lockdep cpu=0 taking=pi_lock taking_cpu=- held=runqueue held_cpu=0 msg=taken while an inner lock is held (order inverted)\n\
             @fw panic cpu=0 msg=lock order violated on CPU 0: pi_lock (instance -) taken while an inner lock is held (order inverted); held: runqueue (instance 0)\n\
             @fw exit status=37 code=panic\n"
        ),
        LOCKDEP_RQ_DESCENDING => format!(
            "{sched}@fw lockdep cpu=0 taking=runqueue taking_cpu=0 held=runqueue held_cpu=1 msg=taken while a lock of the same class with an equal or higher CPU id is held (ascending CPU order)\n\
             @fw panic cpu=0 msg=lock order violated on CPU 0: runqueue (instance 0) taken while a lock of the same class with an equal or higher CPU id is held (ascending CPU order); held: runqueue (instance 1)\n\
             @fw exit status=37 code=panic\n"
        ),
        LOCKDEP_IRQS_ON => format!(
            "{sched}@fw lockdep cpu=1 taking=runqueue taking_cpu=1 held=- held_cpu=- msg=taken with interrupts on\n\
             @fw panic cpu=1 msg=lock order violated on CPU 1: runqueue (instance 1) taken with interrupts on; held: - (instance -)\n\
             @fw exit status=37 code=panic\n"
        ),
        LOCKDEP_SCHEDULE_HELD => format!(
            "{sched}@fw panic cpu=1 msg=schedule() called on CPU 1 holding 1 interrupt-off lock(s)\n\
             @fw exit status=37 code=panic\n"
        ),
        _ => return None,
    };
    Some(out)
}
