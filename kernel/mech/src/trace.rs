//! Per-CPU ring buffers of scheduler events, dumped with `trace=1` after the
//! workload. `cargo xtask trace` turns a dump into a Perfetto/Chrome JSON
//! trace and an SVG timeline.
//!
//! Dump format (one event per line, see docs/CONSOLE.md):
//! `@fw trace cpu=C ts=NS ev=switch prev=P prev_state=R|S|D next=N`,
//! `ev=wakeup pid=P target=T`,
//! `ev=enqueue pid=P preempt=0|1 curr=C curr_eligible=0|1|- curr_protected=0|1|-`,
//! `ev=migrate pid=P from=F to=T`, `ev=tick`, `ev=newidle_start`,
//! `ev=newidle_end pulled=N`, `ev=alb_request src=S dst=D idle=idle|busy|newidle`; and one
//! `@fw trace_task pid=P name=NAME` per task (pid 0 is each CPU's idle task).
//!
//! `wakeup` is Linux's `sched_waking`: recorded by the waker, on its CPU, when
//! it has chosen the wakee's `target` CPU. `enqueue` is Linux's
//! `sched_wakeup`: recorded for every wakeup, after its `wakeup`, on the
//! target CPU's ring, under its runqueue lock and stamped with its runqueue
//! clock: when the wakee is enqueued there, when its delayed entity is
//! requeued in place, and when it is found still queued because it had not
//! switched out since it set itself sleeping (it still runs there, and then
//! `preempt=0`; or a tick or an IPI preempted it first, it waits on the
//! queue, and the wakeup-preemption check decides). `preempt=1` when the
//! event left the CPU asked to reschedule (it was idle, the wakeup preempts,
//! or a reschedule was already pending because the running entity's request
//! or protection had run out), `preempt=0` when the wakee waits for the
//! running task's slice or tick (or is the running task). The pick that
//! follows decides: after a pending reschedule it may keep the running task
//! (no `switch` then), and the wakee still waits. A task pushed to another
//! CPU through its wake list (active balancing, an affinity change) is
//! enqueued the same way, so it has an `enqueue` after its `migrate`; tasks
//! pulled by load balancing have only the `migrate`.
//!
//! `curr`, `curr_eligible` and `curr_protected` say what the wakeup found running there, as
//! the preemption check saw it (the wakee already queued): the running task's pid (0 for the
//! idle task), whether its entity was eligible (V at or past its vruntime) and whether its
//! slice was still protected (RUN_TO_PARITY); `-` when no fair entity ran or the running task
//! was the wakee itself. A preempting wakeup of an eligible, protected task needs PREEMPT_SHORT
//! or a pending reschedule; an ineligible one is never protected. This is how a trace shows why
//! a wakeup preempted.
//!
//! When a ring is full the oldest events are overwritten; the dump says how
//! many were lost per CPU.
//!
//! Its events are Linux's `sched_switch`, `sched_wakeup` and
//! `sched_migrate_task` tracepoints (`include/trace/events/sched.h`).

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::platform::cpu_id;
use crate::lock::{level, IrqMutex};
use crate::percpu::{per_cpu, PerCpu};

/// One recorded event (16 bytes; 24 with its time stamp, the figure `trace=` sizes the rings
/// by).
#[derive(Clone, Copy)]
pub enum Event {
    Switch { prev: u32, prev_state: crate::task::PrevState, next: u32 },
    Wakeup { pid: u32, target: u32 },
    Enqueue { pid: u32, preempt: bool, curr: u32, curr_eligible: Option<bool>, curr_protected: Option<bool> },
    Migrate { pid: u32, from: u32, to: u32 },
    Tick,
    NewidleStart,
    NewidleEnd { pulled: u32 },
    /// A balance of this CPU (`dst`) asked `src` to push its running task
    /// here (active balance), from a pass of the given idle type.
    AlbRequest { src: u32, dst: u32, idle: sched::balance::IdleType },
}

const _: () = assert!(core::mem::size_of::<(u64, Event)>() == 24, "trace= promises 24 bytes per event");

/// `0`, `1`, or `-` for none.
fn flag(f: Option<bool>) -> char {
    match f {
        Some(true) => '1',
        Some(false) => '0',
        None => '-',
    }
}

struct Ring {
    events: VecDeque<(u64, Event)>,
    lost: u64,
}

/// Names of every task created while tracing (joined tasks leave the registry).
static NAMES: IrqMutex<level::TraceNames, BTreeMap<u32, String>> = IrqMutex::new(BTreeMap::new());

/// Remembers a new task's name for the dump.
pub fn name_task(pid: u32, name: &str) {
    if enabled() {
        NAMES.lock().insert(pid, String::from(name));
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static CAPACITY: AtomicUsize = AtomicUsize::new(0);
/// This module's per-CPU part (its `CPUS`).
struct TraceCpu {
    ring: IrqMutex<level::TraceRing, Ring>,
}

impl TraceCpu {
    const fn new() -> Self {
        TraceCpu {
            ring: IrqMutex::new(Ring { events: VecDeque::new(), lost: 0 }),
        }
    }
}

/// Every CPU's TraceCpu.
static CPUS: PerCpu<TraceCpu> = per_cpu!(TraceCpu::new());

/// Turns tracing on with `per_cpu` events per ring, for the CPUs in `cpus`
/// (those that came online). Their rings are allocated here, whole, so that
/// recording never allocates: a ring that grew as it filled reallocated
/// under its lock, inside the switch, and one such copy stalled a switch by
/// ~130 us, which then showed up as scheduling latency. Returns the bytes
/// allocated. The rings may take at most half of the free heap (the rest is
/// the workload's; the heap stops the kernel when it runs out): above that,
/// tracing stays off and the error says what was needed.
pub fn enable(per_cpu: usize, cpus: &[usize]) -> Result<usize, String> {
    let per_cpu = per_cpu.max(16);
    let bytes = per_cpu * core::mem::size_of::<(u64, Event)>();
    let total = bytes.saturating_mul(cpus.len());
    let (used, size) = crate::platform::heap_usage();
    let free = size.saturating_sub(used);
    if total > free / 2 {
        let mut why = String::new();
        let _ = core::fmt::Write::write_fmt(
            &mut why,
            format_args!(
                "{} events per CPU need {} KiB for {} CPUs, more than half of the {} KiB the heap has free",
                per_cpu,
                total / 1024,
                cpus.len(),
                free / 1024
            ),
        );
        return Err(why);
    }
    for &cpu in cpus {
        CPUS[cpu].ring.lock().events.reserve_exact(per_cpu);
    }
    CAPACITY.store(per_cpu, Ordering::Relaxed);
    ENABLED.store(true, Ordering::Release);
    Ok(total)
}

#[inline]
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Records the event `ev()` builds on this CPU at `ts` ns. With tracing off
/// this is one load and a branch, inlined into the hot paths: the event is
/// built only when it is recorded (built by the caller, its fields' loads
/// stayed in the switch and the wakeup, about 10 instructions each).
#[inline(always)]
pub fn record(ts: u64, ev: impl FnOnce() -> Event) {
    if enabled() {
        push(ts, ev());
    }
}

/// As `record`, stamped with the current time (read only when tracing).
#[inline(always)]
pub fn record_now(ev: impl FnOnce() -> Event) {
    if enabled() {
        push(crate::rq::now_ns(), ev());
    }
}

/// As `record`, into the ring of the CPU `ev` names with the event: for an
/// event that may belong to another CPU's timeline (a runqueue the caller
/// has locked). The CPU is part of the closure, so it is not read either
/// with tracing off.
#[inline(always)]
pub fn record_on(ts: u64, ev: impl FnOnce() -> (usize, Event)) {
    if enabled() {
        let (cpu, ev) = ev();
        push_on(cpu, ts, ev);
    }
}

#[inline(never)]
fn push(ts: u64, ev: Event) {
    push_on(cpu_id(), ts, ev)
}

#[inline(never)]
fn push_on(cpu: usize, ts: u64, ev: Event) {
    let mut ring = CPUS[cpu].ring.lock();
    let cap = CAPACITY.load(Ordering::Relaxed);
    if ring.events.len() >= cap {
        ring.events.pop_front();
        ring.lost += 1;
    }
    ring.events.push_back((ts, ev));
}

/// Prints every ring and the task names, then empties the rings.
pub fn dump() {
    if !enabled() {
        return;
    }
    ENABLED.store(false, Ordering::Release);
    let mut names = core::mem::take(&mut *NAMES.lock());
    for t in crate::task::all() {
        names.insert(t.id, t.name.clone());
    }
    for (pid, name) in &names {
        crate::record!("trace_task", "pid={} name={}", pid, name);
    }
    for cpu in crate::rq::online_mask().iter() {
        let ring = core::mem::replace(&mut *CPUS[cpu].ring.lock(), Ring { events: VecDeque::new(), lost: 0 });
        crate::record!("trace_cpu", "cpu={} events={} lost={}", cpu, ring.events.len(), ring.lost);
        for (ts, ev) in ring.events {
            crate::record!("trace", "cpu={} ts={} {}", cpu, ts, Shown(ev));
        }
    }
}

/// An event's fields as the `@fw trace` line writes them, from `ev=` on.
struct Shown(Event);

impl core::fmt::Display for Shown {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Event::Switch { prev, prev_state, next } => {
                write!(f, "ev=switch prev={} prev_state={} next={}", prev, prev_state.letter(), next)
            }
            Event::Wakeup { pid, target } => write!(f, "ev=wakeup pid={} target={}", pid, target),
            Event::Enqueue { pid, preempt, curr, curr_eligible, curr_protected } => write!(
                f,
                "ev=enqueue pid={} preempt={} curr={} curr_eligible={} curr_protected={}",
                pid, preempt as u8, curr, flag(curr_eligible), flag(curr_protected)
            ),
            Event::Migrate { pid, from, to } => write!(f, "ev=migrate pid={} from={} to={}", pid, from, to),
            Event::Tick => write!(f, "ev=tick"),
            Event::NewidleStart => write!(f, "ev=newidle_start"),
            Event::NewidleEnd { pulled } => write!(f, "ev=newidle_end pulled={}", pulled),
            Event::AlbRequest { src, dst, idle } => {
                let idle = match idle {
                    sched::balance::IdleType::Idle => "idle",
                    sched::balance::IdleType::NotIdle => "busy",
                    sched::balance::IdleType::NewlyIdle => "newidle",
                };
                write!(f, "ev=alb_request src={} dst={} idle={}", src, dst, idle)
            }
        }
    }
}

/// Prints the last `n` events of `cpu`'s ring as `@fw watchdog_event` lines
/// (the fields of `@fw trace`), oldest first, for a watchdog report; returns
/// how many (0 with tracing off). The ring is only tried: a report must not
/// wait on a lock a stuck CPU may hold.
pub fn print_last(cpu: usize, n: usize) -> Option<usize> {
    if !enabled() {
        return Some(0);
    }
    let ring = CPUS[cpu].ring.try_lock()?;
    let skip = ring.events.len().saturating_sub(n);
    for &(ts, ev) in ring.events.iter().skip(skip) {
        crate::record!("watchdog_event", "cpu={} ts={} {}", cpu, ts, Shown(ev));
    }
    Some(ring.events.len() - skip)
}