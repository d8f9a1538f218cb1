//! fairway's own scheduler mechanism (`kernel/mech`) and policy
//! (`kernel/sched`), unchanged, on N simulated CPUs in virtual time: the
//! second implementation of `mech::platform::Platform` (the first is
//! `kernel/src/arch/platform.rs`), bound into this crate with
//! `mech::set_platform!`, so every binary linking `fairway_sim` runs the
//! mechanism on the simulator (one modelled machine per process: the
//! mechanism's state is per process, see [`run`]).
//!
//! # The mapping (docs/SIMULATOR.md, "The mechanism on the engine")
//!
//! Every context of the mechanism is a stackful coroutine: a thread made by
//! `context_new_thread(entry, arg, ..)` runs `entry(arg)`; each CPU's boot
//! flow (which `rq::init_cpu` turns into its idle task) is one too. A CPU
//! runs one context at a time, and all mechanism code runs inside them, at
//! the virtual time of the event the engine is processing, on the CPU the
//! engine resumed (`cpu_id`). A coroutine suspends only at the points where
//! a real CPU would leave the code it runs:
//!
//! - `burn_ns` (a workload's spin): a step of CPU time, cut by an interrupt
//!   if interrupts are on; the handlers then run on the coroutine's stack
//!   (as x86 runs them on the interrupted task's), and a switch they decide
//!   (`switch_frames`) is carried out when they return: the coroutine
//!   suspends, the engine resumes the next context, and the interrupted one
//!   finishes its return path and its burn whenever it is picked again, on
//!   whichever CPU;
//! - `wait_for_interrupt` (the idle loop's halt): until an interrupt;
//! - `give_up_cpu`: the schedule trap (`schedule_voluntary`) then the switch;
//! - `poll_relax` (`idle=poll`'s wait): until a waker's store reaches this
//!   CPU or an interrupt;
//! - the end of an interrupt-off section with an interrupt pending: taken
//!   there, as `sti` would take it; or with a refill owed (`hw.rs`): burnt
//!   there, as the task's own time.
//!
//! What a CPU does when it comes online and when its reschedule IPI is taken
//! is the mechanism's own code, shared with the kernel (`mech::entry`:
//! `sched_cpu_starting`, `scheduler_ipi`); this module only routes the
//! engine's events to it.
//!
//! Because a coroutine never suspends inside an interrupt-off section (every
//! runqueue, wait-queue and list lock of the mechanism is one), no spin lock
//! is ever found held by another CPU: a CPU's mechanism code runs to its next
//! suspension point before any other CPU's. The hardware cost model
//! (`crate::hw`, `hw.rs` here) prices the hold another CPU would have met
//! instead, as virtual time on the waiter's clock.
//!
//! # Time
//!
//! Code takes no virtual time; the cost model (`engine::cost::CostModel`)
//! prices the kernel work, charged to the CPU as a step with interrupts
//! masked before what it does next: `switch_ns` (or `switch_idle_ns` to or
//! from idle) plus the cache penalty of a context arriving from another CPU
//! at every switch, `irq_entry_ns` per interrupt taken, `wakeup_ns` per
//! wakeup the CPU made (read from the mechanism's own `ttwu_count`), and
//! `ipi_latency_ns` between `send_resched_ipi` and the arrival; and, with a
//! hardware profile (`SimConfig::hw`), what the hardware adds (`hw.rs`:
//! refills, remote lines, lock waits, IPI flight, idle exit). Events are
//! ordered as in the engine (`engine::queue`: time, a seeded tie key,
//! insertion order), so one seed replays exactly and another explores other
//! orders of simultaneous events.
#![allow(unsafe_code)]


mod config;
mod context;
mod cpu_loop;
mod hw;
mod irq;
mod plat;
pub mod prices;

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::sync::Arc;

use corosensei::Yielder;

use crate::engine::cost::{CostModel, Distance};
use crate::engine::queue::EventQueue;
use crate::hw::cache::Caches;
use crate::hw::locks::Locks;
use crate::hw::{HwCpuStats, HwProfile};

pub use config::{SimConfig, SimReport, SIM_FAULTS};
use context::{pay_own_work, suspend, Ctx};
pub use cpu_loop::run;
use irq::take_interrupts;
pub use plat::SimPlatform;

/// What a context asks of the engine when it suspends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Req {
    /// Busy CPU work of this many ns (interruptible while interrupts are on).
    Burn(u64),
    /// Halt until an interrupt (interrupts on).
    Halt,
    /// This context is off the CPU (saved); run context `next` here.
    Switch(usize),
    /// Pay the kernel work charged so far, then carry on (`pay_own_work`).
    Pay,
    /// `idle=poll`'s wait: until a waker's store for this CPU is seen
    /// (`poll_kick`) or an interrupt (interrupts on).
    Poll,
    /// The run ends (`Platform::exit`, or the init task finished).
    Stop,
}

/// What the engine hands a context when it resumes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Resumed {
    /// Carry on (first start, after a switch back in, after a halt's wait).
    Run,
    /// The burn is done.
    Done,
    /// An interrupt is pending and taken now; `left` ns of the burn remain.
    Irq { left: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Act {
    /// Not booted yet.
    Off,
    /// A context's code is running (between two suspensions).
    Running,
    /// A burn step until `end`.
    Burn { start: u64, end: u64 },
    /// Halted until an interrupt.
    Halt,
    /// Leaving a halt for an interrupt: runs again at the step's end (the
    /// idle state's exit latency).
    Waking,
    /// Polling for work in idle; `kicked`: a waker's store is on its way.
    Poll { kicked: bool },
    /// Charged kernel work (interrupts masked), then `then`.
    Kernel { then: Req },
    /// The run ended.
    Stopped,
}

/// Per-CPU counters of the simulation (the mechanism keeps its own): the
/// engine's own counters, kept the same way when the mechanism is the
/// scheduler (a switch is one `switch_frames` between two contexts).
pub use crate::engine::CpuStats;

struct Cpu {
    /// The context whose coroutine this CPU runs (0: none yet).
    running: usize,
    act: Act,
    step_gen: u64,
    irqs_on: bool,
    guards: u32,
    guard_saved_on: bool,
    pending_ipi: bool,
    pending_timer: bool,
    timer_gen: u64,
    /// Kernel work to pay at the next suspension.
    charge_ns: u64,
    /// The mechanism's own work reported inside a section (interrupts off
    /// or a lock held: `Platform::work_done` there): this CPU's clock is
    /// ahead of the engine's by it (`uptime_ns` reads both), and it is paid
    /// with `charge_ns`.
    section_ns: u64,
    /// The scheduler's interrupt hooks are on (after `start_this_cpu`).
    hooks_on: bool,
    current: Option<Arc<mech::task::Task>>,
    /// The mechanism's `ttwu_count` of this CPU already charged.
    ttwu_seen: u64,
    stats: CpuStats,
    /// The part of `section_ns` the hardware model added (lock waits,
    /// remote lines): an IPI sent now leaves after it.
    hw_ahead_ns: u64,
    hw: HwCpuStats,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    StepEnd { cpu: usize, gen: u64 },
    Timer { cpu: usize, gen: u64 },
    Ipi { cpu: usize },
}

/// The simulation's state apart from the contexts' coroutines.
struct State {
    cost: CostModel,
    hw: HwProfile,
    /// Which hardware costs act (on in the profile and not all zero).
    hw_on: HwOn,
    caches: Option<Caches>,
    locks: Locks,
    stack_bytes: usize,
    queue: EventQueue<Event>,
    cpus: Vec<Cpu>,
    distance: Vec<Distance>,
    nr_cpus: usize,
    out: Vec<String>,
    echo: bool,
    log: Option<Vec<String>>,
    digest: u64,
    events: u64,
    stopped: Option<String>,
    stacks_in_use: usize,
    next_stack_slot: usize,
    /// Each CPU's boot flow: the engine's handle owning its coroutine.
    boot_ctx: Vec<usize>,
}

/// The hardware costs that act in this run: on in the profile and not all
/// zero (so `icount` takes none of their paths and its runs are the runs
/// before the model).
#[derive(Clone, Copy, Debug, Default)]
struct HwOn {
    refill: bool,
    remote: bool,
    locks: bool,
    ipi: bool,
    idle_exit: bool,
}

impl HwOn {
    fn of(p: &HwProfile) -> HwOn {
        let lines = p.line_ns.iter().any(|&l| l > 0);
        HwOn {
            refill: p.costs.refill && (lines || p.mem_ns > 0 || p.mem_remote_ns > 0),
            remote: p.costs.remote && lines && p.snapshot_lines > 0,
            locks: p.costs.locks && ((lines && p.lock_lines > 0) || p.hold_ns.iter().any(|&h| h > 0)),
            ipi: p.costs.ipi && (lines || p.ipi_base_ns > 0),
            idle_exit: p.costs.idle_exit && p.idle_exit_ns > 0,
        }
    }
}

thread_local! {
    static NOW: Cell<u64> = const { Cell::new(0) };
    static CPU: Cell<usize> = const { Cell::new(0) };
    /// The running coroutine's yielder (set by the coroutine itself when it
    /// starts and whenever it is resumed: see `suspend`).
    static YIELDER: Cell<*const Yielder<Resumed, Req>> = const { Cell::new(std::ptr::null()) };
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
    static CTXS: RefCell<Vec<Option<Ctx>>> = const { RefCell::new(Vec::new()) };
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(s.borrow_mut().as_mut().expect("sim: the mechanism's platform is used outside platform::run")))
}

fn with_ctx<R>(h: usize, f: impl FnOnce(&mut Ctx) -> R) -> R {
    CTXS.with(|c| f(c.borrow_mut()[h - 1].as_mut().unwrap_or_else(|| panic!("sim: context {h} used after it was freed"))))
}

fn now() -> u64 {
    NOW.with(|n| n.get())
}

fn cpu_id() -> usize {
    CPU.with(|c| c.get())
}

fn log(cpu: usize, what: std::fmt::Arguments) {
    with(|s| {
        if let Some(l) = &mut s.log {
            let mut line = String::new();
            let _ = write!(line, "{} cpu{} {}", now(), cpu, what);
            l.push(line);
        }
    });
}

/// Virtual ns per guest instruction of a workload's busy loop
/// (`Platform::work_done`): QEMU's `-icount shift=0`, which the cost model's
/// figures were measured under (docs/SIMULATOR.md, "Workloads").
pub const NS_PER_INSTRUCTION: u64 = 1;

/// This CPU's clock: the engine's time plus the work reported inside the
/// section running now (`Platform::uptime_ns`).
fn cpu_now() -> u64 {
    let c = cpu_id();
    now() + with(|s| s.cpus.get(c).map_or(0, |x| x.section_ns))
}

/// `Platform::work_done`: `instructions` of work, burnt as a workload's spin
/// where the context may give up its CPU, or, inside a section (interrupts
/// off or a lock held, where a coroutine never suspends), added to this
/// CPU's clock and paid with the next charge.
fn work_done(instructions: u64) {
    let ns = instructions * NS_PER_INSTRUCTION;
    let c = cpu_id();
    let inside = with(|s| {
        let cpu = &mut s.cpus[c];
        let inside = cpu.guards > 0 || !cpu.irqs_on;
        if inside {
            cpu.section_ns += ns;
        }
        inside
    });
    if !inside {
        burn_ns(ns);
    }
}

/// Busy CPU work for `ns` nanoseconds of this CPU's clock, interruptible (a
/// workload's spin): one step of the engine, cut by interrupts while they
/// are on (`Platform::burn_ns`).
pub fn burn_ns(ns: u64) {
    let mut left = ns;
    while left > 0 {
        match suspend(Req::Burn(left)) {
            Resumed::Done => return,
            Resumed::Irq { left: l } => {
                left = l;
                take_interrupts();
                // Switched away and back: the refill of its arrival first.
                left += hw::take_refill_owed();
            }
            Resumed::Run => unreachable!("sim: a burn resumed to run"),
        }
    }
}
/// The simulated CPUs and the mechanism's tasks as they are now (for a run
/// that did not finish: which CPU halts with work queued, which task sleeps).
pub fn dump() -> String {
    let mut out = String::new();
    let n = with(|s| s.nr_cpus);
    for c in 0..n {
        let (act, irqs, pi, pt, running, cur) = with(|s| {
            let x = &s.cpus[c];
            (x.act, x.irqs_on, x.pending_ipi, x.pending_timer, x.running, x.current.as_ref().map(|t| t.id))
        });
        CPU.with(|x| x.set(c));
        let queued = mech::rq::lock(c).fair.nr_queued();
        let _ = writeln!(
            out,
            "cpu{c} act={act:?} irqs_on={irqs} pending_ipi={pi} pending_timer={pt} ctx={running} current={cur:?} need_resched={} wake_list={} queued={queued}",
            mech::resched::need_resched(c),
            mech::rq::wake_list_pending(c),
        );
    }
    for t in mech::task::all() {
        let _ = writeln!(
            out,
            "task {} {} state={:?} cpu={} on_rq={} on_cpu={} ctx={}",
            t.id,
            t.name,
            t.state(),
            t.cpu.load(std::sync::atomic::Ordering::Relaxed),
            t.on_rq.load(std::sync::atomic::Ordering::Relaxed),
            t.ctx.on_cpu(),
            t.ctx.handle()
        );
    }
    out
}

/// The console lines written since the run's report was taken (what a
/// caller prints after `run`, such as `mech::trace::dump()`).
pub fn take_output() -> Vec<String> {
    with(|s| std::mem::take(&mut s.out))
}
