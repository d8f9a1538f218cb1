//! Per-CPU ring buffers of scheduler events, dumped with `trace=1` after the
//! workload. `cargo xtask trace` turns a dump into a Perfetto/Chrome JSON
//! trace and an SVG timeline.
//!
//! Dump format (one event per line, see docs/CONSOLE.md):
//! `@fw trace cpu=C ts=NS ev=switch prev=P prev_state=R|S|D next=N`,
//! `ev=wakeup pid=P target=T`, `ev=migrate pid=P from=F to=T`, `ev=tick`,
//! `ev=newidle_start`, `ev=newidle_end pulled=N`; and one
//! `@fw trace_task pid=P name=NAME` per task (pid 0 is each CPU's idle task).
//! When a ring is full the oldest events are overwritten; the dump says how
//! many were lost per CPU.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::string::String;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::arch::percpu::{cpu_id, MAX_CPUS};
use crate::sync::irq_mutex::IrqMutex;

/// One recorded event.
#[derive(Clone, Copy)]
pub enum Event {
    Switch { prev: u32, prev_state: u8, next: u32 },
    Wakeup { pid: u32, target: u32 },
    Migrate { pid: u32, from: u32, to: u32 },
    Tick,
    NewidleStart,
    NewidleEnd { pulled: u32 },
}

struct Ring {
    events: VecDeque<(u64, Event)>,
    lost: u64,
}

/// Names of every task created while tracing (joined tasks leave the registry).
static NAMES: IrqMutex<BTreeMap<u32, String>> = IrqMutex::new(BTreeMap::new());

/// Remembers a new task's name for the dump.
pub fn name_task(pid: u32, name: &str) {
    if enabled() {
        NAMES.lock().insert(pid, String::from(name));
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static CAPACITY: AtomicUsize = AtomicUsize::new(0);
static RINGS: [IrqMutex<Ring>; MAX_CPUS] = [const { IrqMutex::new(Ring { events: VecDeque::new(), lost: 0 }) }; MAX_CPUS];

/// Turns tracing on with `per_cpu` events per ring.
pub fn enable(per_cpu: usize) {
    CAPACITY.store(per_cpu.max(16), Ordering::Relaxed);
    ENABLED.store(true, Ordering::Release);
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

#[inline(never)]
fn push(ts: u64, ev: Event) {
    let mut ring = RINGS[cpu_id()].lock();
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
        let ring = core::mem::replace(&mut *RINGS[cpu].lock(), Ring { events: VecDeque::new(), lost: 0 });
        crate::record!("trace_cpu", "cpu={} events={} lost={}", cpu, ring.events.len(), ring.lost);
        for (ts, ev) in ring.events {
            match ev {
                Event::Switch { prev, prev_state, next } => crate::record!(
                    "trace",
                    "cpu={} ts={} ev=switch prev={} prev_state={} next={}",
                    cpu, ts, prev, prev_state as char, next
                ),
                Event::Wakeup { pid, target } => {
                    crate::record!("trace", "cpu={} ts={} ev=wakeup pid={} target={}", cpu, ts, pid, target)
                }
                Event::Migrate { pid, from, to } => {
                    crate::record!("trace", "cpu={} ts={} ev=migrate pid={} from={} to={}", cpu, ts, pid, from, to)
                }
                Event::Tick => crate::record!("trace", "cpu={} ts={} ev=tick", cpu, ts),
                Event::NewidleStart => crate::record!("trace", "cpu={} ts={} ev=newidle_start", cpu, ts),
                Event::NewidleEnd { pulled } => {
                    crate::record!("trace", "cpu={} ts={} ev=newidle_end pulled={}", cpu, ts, pulled)
                }
            }
        }
    }
}
