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
//! - the end of an interrupt-off section with an interrupt pending: taken
//!   there, as `sti` would take it.
//!
//! Because a coroutine never suspends inside an interrupt-off section (every
//! runqueue, wait-queue and list lock of the mechanism is one), no spin lock
//! is ever found held by another CPU: a CPU's mechanism code runs to its next
//! suspension point before any other CPU's.
//!
//! # Time
//!
//! Code takes no virtual time; the cost model (`engine::cost::CostModel`)
//! prices the kernel work, charged to the CPU as a step with interrupts
//! masked before what it does next: `switch_ns` (or `switch_idle_ns` to or
//! from idle) plus the cache penalty of a context arriving from another CPU
//! at every switch, `irq_entry_ns` per interrupt taken, `wakeup_ns` per
//! wakeup the CPU made (read from the mechanism's own `ttwu_count`), and
//! `ipi_latency_ns` between `send_resched_ipi` and the arrival. Events are
//! ordered as in the engine (`engine::queue`: time, a seeded tie key,
//! insertion order), so one seed replays exactly and another explores other
//! orders of simultaneous events.
#![allow(unsafe_code)]

mod plat;

use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::sync::Arc;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::engine::cost::{CostModel, Distance};
use crate::engine::queue::EventQueue;
use crate::machine::Machine;

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

type Co = Coroutine<Resumed, Req, (), DefaultStack>;

/// One mechanism context.
struct Ctx {
    /// `Platform::context_on_cpu`: claimed by `switch_frames`.
    on_cpu: bool,
    /// The coroutine; `None` while it runs (the engine took it out to resume it).
    co: Option<Co>,
    /// A boot flow's (idle task's) context: the CPU; its coroutine is shared
    /// by every handle of that CPU (`context_running_here`).
    boot_of: Option<usize>,
    /// The CPU it last ran on (the migration penalty of `switch_frames`).
    last_cpu: Option<usize>,
    /// `context_free` came while its coroutine was out: drop it when back.
    freed: bool,
}

impl Drop for Ctx {
    fn drop(&mut self) {
        // At the end of the process (the thread-local's destructor) every
        // context still suspended is dropped without unwinding its stack.
        if let Some(co) = self.co.take() {
            discard(co);
        }
    }
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

/// Suspends the running coroutine with `req`; returns what the engine
/// resumed it with.
fn suspend(req: Req) -> Resumed {
    let y = YIELDER.with(|y| y.get());
    assert!(!y.is_null(), "sim: {req:?} outside a simulated context");
    charge_wakeups();
    // SAFETY: `YIELDER` holds the yielder of the coroutine running now: each
    // coroutine stores its own when it starts and again after every return
    // from `suspend` (below), and only the running coroutine's code calls
    // this. A coroutine's yielder lives on its own stack for as long as its
    // body runs, which is at least as long as this call.
    let r = unsafe { &*y }.suspend(req);
    YIELDER.with(|c| c.set(y));
    r
}

/// The kernel work this context did since its last suspension (its
/// wakeups) elapses now, on its own clock, before it goes on: called where
/// interrupts come back on (`irqs_on_again`), the first point after a wakeup
/// where a real CPU's code may be interrupted. The waker is still current
/// then, so the wakeup's time is in its runtime at its next `update_curr`, as
/// in the kernel, where `try_to_wake_up()` runs in the waker's context; paid
/// only at the next switch, it went to whichever task ran next, and a pipe
/// partner that woke the other and then slept had run 0 ns since the wakee
/// was placed: lag 0, eligible, never a delayed dequeue.
fn pay_own_work() {
    charge_wakeups();
    let c = cpu_id();
    // Never inside a section: a coroutine suspends only where no lock is held.
    if with(|s| s.cpus[c].charge_ns + s.cpus[c].section_ns > 0 && s.cpus[c].guards == 0) {
        match suspend(Req::Pay) {
            Resumed::Done => {}
            r => unreachable!("sim: a payment resumed with {r:?}"),
        }
    }
}

/// Charges `wakeup_ns` per wakeup this CPU made since the last charge.
fn charge_wakeups() {
    let c = cpu_id();
    let n = mech::wakeup::ttwu_stats(c).0;
    with(|s| {
        let cpu = &mut s.cpus[c];
        if n > cpu.ttwu_seen {
            cpu.charge_ns += (n - cpu.ttwu_seen) * s.cost.wakeup_ns;
            cpu.ttwu_seen = n;
        }
    });
}

fn new_coroutine(stack_bytes: usize, body: impl FnOnce() + 'static) -> Co {
    let stack = DefaultStack::new(stack_bytes).unwrap_or_else(|e| panic!("sim: no stack of {stack_bytes} bytes for a context: {e}"));
    Coroutine::with_stack(stack, move |y: &Yielder<Resumed, Req>, _first: Resumed| {
        YIELDER.with(|c| c.set(y as *const _));
        body();
    })
}

fn new_ctx(co: Option<Co>, boot_of: Option<usize>, on_cpu: bool) -> usize {
    CTXS.with(|c| {
        let mut c = c.borrow_mut();
        let ctx = Ctx { on_cpu, co, boot_of, last_cpu: boot_of, freed: false };
        match c.iter().position(Option::is_none) {
            Some(i) if boot_of.is_none() => {
                c[i] = Some(ctx);
                i + 1
            }
            _ => {
                c.push(Some(ctx));
                c.len()
            }
        }
    })
}

/// Drops a coroutine that can no longer run: a thread's body never returns
/// (its entry is `-> !`), so its stack is given back without unwinding it
/// (what it still holds is leaked, as an exited kernel thread's stack holds
/// nothing anyone reads).
fn discard(co: Co) {
    if co.started() && !co.done() {
        let mut co = co;
        // SAFETY: the coroutine is suspended and will never be resumed (its
        // context was freed); resetting it without unwinding skips the
        // destructors of what its stack holds, which only leaks them.
        unsafe { co.force_reset() };
        drop(co);
    }
}

/// Takes the pending interrupts of this CPU, if its interrupts are on: the
/// handlers run here, on the running context's stack; a switch they decide
/// suspends this context until it is picked again.
fn take_interrupts() {
    loop {
        let c = cpu_id();
        let (timer, ipi, me) = with(|s| {
            let cpu = &mut s.cpus[c];
            if !cpu.irqs_on || cpu.guards != 0 || !cpu.hooks_on {
                return (false, false, 0);
            }
            // One interrupt at a time, the timer's vector first: if its
            // handler switches, the IPI waits for the next context's unmask.
            let timer = std::mem::take(&mut cpu.pending_timer);
            let ipi = !timer && std::mem::take(&mut cpu.pending_ipi);
            if timer || ipi {
                cpu.irqs_on = false;
                cpu.charge_ns += s.cost.irq_entry_ns;
                if timer {
                    cpu.stats.timer_irqs += 1;
                } else {
                    cpu.stats.ipis_taken += 1;
                }
            }
            (timer, ipi, cpu.running)
        });
        if !timer && !ipi {
            return;
        }
        log(c, format_args!("irq {}", if timer { "timer" } else { "resched_ipi" }));
        let frame = me as *mut mech::platform::Frame;
        let resume = if timer { mech::timer::on_timer(frame) } else { on_resched_ipi(frame) };
        let next = resume as usize;
        if next != me {
            suspend(Req::Switch(next));
        }
        // The return from the interrupt: interrupts on again, on whichever
        // CPU this context now runs.
        let c = cpu_id();
        with(|s| s.cpus[c].irqs_on = true);
    }
}

/// The reschedule IPI's handler: the kernel's `on_resched_ipi`
/// (`kernel/src/main.rs`), the same calls in the same order.
fn on_resched_ipi(frame: *mut mech::platform::Frame) -> *mut mech::platform::Frame {
    let cpu = cpu_id();
    mech::idle::count_resched_ipi(cpu);
    let mut held = mech::wakeup::process_wake_list();
    if mech::balance::nohz::kicked(cpu) {
        drop(held.take());
        mech::balance::nohz::run_kicked(cpu);
    }
    if mech::rq::need_resched(cpu) {
        mech::schedule::preempt_irq_locked(frame, held)
    } else {
        frame
    }
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
            }
            Resumed::Run => unreachable!("sim: a burn resumed to run"),
        }
    }
}

/// The machine and how to run it.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seeds the order of simultaneous events.
    pub seed: u64,
    pub cost: CostModel,
    /// The tick rate (`hz=`).
    pub hz: u32,
    /// Tickless idle (`nohz=`).
    pub nohz: bool,
    /// The invariant checks (`sched_debug=1`).
    pub sched_debug: bool,
    /// Stop at this virtual time if the init task has not finished.
    pub until_ns: u64,
    /// Print each console line on stdout as well.
    pub echo: bool,
    /// Keep an event log line per event ([`SimReport::log`]).
    pub log: bool,
    /// Each context's coroutine stack (the mechanism's code runs on it, so
    /// debug builds need more than a task body alone).
    pub stack_bytes: usize,
    /// The balancing configuration (the kernel's from its command line).
    pub balance: sched::balance::BalanceConfig,
    /// `sched_features=` applied (`None`: the defaults).
    pub features: Option<sched::Features>,
}

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            seed: 0,
            cost: CostModel::ICOUNT,
            hz: 1000,
            nohz: true,
            sched_debug: false,
            until_ns: 60_000_000_000,
            echo: false,
            log: false,
            stack_bytes: 256 * 1024,
            balance: sched::balance::BalanceConfig::default(),
            features: None,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// The console lines, in order.
    pub output: Vec<String>,
    /// Why the run ended: "finished" (the init task's body returned), the
    /// mechanism's exit, "until" (time limit) or "idle" (no event left: every
    /// CPU halted with no timer armed).
    pub end: String,
    /// Virtual time at the end.
    pub end_ns: u64,
    pub events: u64,
    /// FNV-1a over every processed event's time, kind and CPU.
    pub digest: u64,
    pub cpus: Vec<CpuStats>,
    pub log: Vec<String>,
}

/// Runs the mechanism on `machine`: boots every CPU as the kernel does
/// (`kernel/src/main.rs: start_scheduler()` and `ap_main()`: the runqueue,
/// the capacity, the tick, then the idle loop), starts `init` as the kernel's
/// `init` thread from CPU 0, and runs until `init` returns, the mechanism
/// exits, no event is left, or `cfg.until_ns`.
///
/// Once per process: the mechanism's state (runqueues, tasks, the domains)
/// is static, as in the kernel. A test that needs many runs starts one
/// process per run (see `tests/common`).
pub fn run(machine: &Machine, cfg: SimConfig, init: impl FnOnce() + Send + 'static) -> SimReport {
    let n = machine.nr_cpus();
    assert!((1..=mech::MAX_CPUS).contains(&n), "sim: {n} CPUs (1..={})", mech::MAX_CPUS);
    let domains = machine.domains().unwrap_or_else(|e| panic!("sim: the machine's domains: {e}"));
    let mut distance = Vec::with_capacity(n * n);
    for a in 0..n {
        for b in 0..n {
            distance.push(Distance::between(machine, a, b));
        }
    }
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        assert!(s.is_none(), "sim: platform::run runs once per process (the mechanism's state is static)");
        *s = Some(State {
            cost: cfg.cost,
            stack_bytes: cfg.stack_bytes,
            queue: EventQueue::new(cfg.seed),
            cpus: (0..n)
                .map(|_| Cpu {
                    running: 0,
                    act: Act::Off,
                    step_gen: 0,
                    irqs_on: false,
                    guards: 0,
                    guard_saved_on: false,
                    pending_ipi: false,
                    pending_timer: false,
                    timer_gen: 0,
                    charge_ns: 0,
                    section_ns: 0,
                    hooks_on: false,
                    current: None,
                    ttwu_seen: 0,
                    stats: CpuStats::default(),
                })
                .collect(),
            distance,
            nr_cpus: n,
            out: Vec::new(),
            echo: cfg.echo,
            log: cfg.log.then(Vec::new),
            digest: 0xcbf2_9ce4_8422_2325,
            events: 0,
            stopped: None,
            stacks_in_use: 0,
            next_stack_slot: 0,
            boot_ctx: vec![0; n],
        });
    });

    // What the kernel's boot does before the scheduler starts
    // (`kernel/src/main.rs`), on the boot CPU.
    let mut caps = sched::balance::CapacityTable::new(n);
    for (c, &cap) in machine.capacity.iter().enumerate() {
        caps.set(c, u64::from(cap));
    }
    let mut tun = sched::Tunables::new(n as u32);
    tun.set_tick_nsec(1_000_000_000 / u64::from(cfg.hz));
    let mut balance_cfg = cfg.balance;
    if let Some(f) = cfg.features {
        tun.features = f;
        balance_cfg.features = f;
    }
    mech::balance::init(domains, balance_cfg, caps, cfg.hz);
    mech::debug::enable(cfg.sched_debug);
    // The lock-order checker, where it is compiled in (the `lockdep`
    // feature of `kernel/mech`, which this crate's tests turn on).
    mech::sync::lockdep::enable(true);
    mech::timer::set_hz(cfg.hz);
    mech::timer::set_nohz(cfg.nohz);

    // Every CPU's boot flow is a coroutine: CPUs 1.. come online first, then
    // CPU 0 starts `init` (the kernel's boot CPU waits for the others).
    let stack_bytes = cfg.stack_bytes;
    let mut init = Some(init);
    let order: Vec<usize> = (1..n).chain([0]).collect();
    for &c in &order {
        let tun = tun;
        let init = if c == 0 { init.take() } else { None };
        let co = new_coroutine(stack_bytes, move || {
            start_this_cpu(c, tun);
            if let Some(init) = init {
                let init = move || {
                    init();
                    with(|s| s.stopped.get_or_insert_with(|| "finished".to_string()).clone());
                    loop {
                        suspend(Req::Stop);
                    }
                };
                if let Err(e) = mech::task::spawn(mech::task::Spawn::new("init"), init) {
                    panic!("sim: cannot start the init thread: {e}");
                }
            }
            mech::idle::idle_loop()
        });
        let h = new_ctx(Some(co), Some(c), true);
        with(|s| {
            s.boot_ctx[c] = h;
            s.cpus[c].running = h;
            s.cpus[c].act = Act::Running;
        });
        CPU.with(|x| x.set(c));
        let req = resume_ctx(c, h, Resumed::Run);
        handle(c, req);
    }

    // The event loop.
    loop {
        if with(|s| s.stopped.is_some()) {
            break;
        }
        let Some((t, ev)) = with(|s| match s.queue.peek_time() {
            Some(t) if t <= cfg.until_ns => s.queue.pop(),
            _ => None,
        }) else {
            with(|s| {
                if s.stopped.is_none() {
                    let why = if s.queue.is_empty() { "idle" } else { "until" };
                    s.stopped = Some(why.to_string());
                }
            });
            break;
        };
        step(t, ev);
    }

    let report = with(|s| SimReport {
        output: std::mem::take(&mut s.out),
        end: s.stopped.clone().unwrap_or_default(),
        end_ns: now(),
        events: s.events,
        digest: s.digest,
        cpus: s.cpus.iter().map(|c| c.stats.clone()).collect(),
        log: s.log.take().unwrap_or_default(),
    });
    report
}

/// The kernel's `start_this_cpu` (`kernel/src/main.rs`): this flow becomes
/// the CPU's idle task, its capacity is published, its tick starts.
fn start_this_cpu(cpu: usize, tun: sched::Tunables) {
    mech::rq::init_cpu(cpu, tun);
    if let Some(g) = mech::balance::global() {
        let mut rq = mech::rq::lock(cpu);
        rq.capacity_orig = g.caps.orig(cpu);
        rq.capacity = rq.capacity_orig;
        mech::balance::snapshot::publish(&rq);
    }
    with(|s| s.cpus[cpu].hooks_on = true);
    mech::timer::start_this_cpu();
}

/// Resumes context `h` on CPU `c`; returns what it asks next.
fn resume_ctx(c: usize, h: usize, msg: Resumed) -> Req {
    CPU.with(|x| x.set(c));
    // An idle task's context (`context_running_here`) names its CPU's boot
    // flow, whose coroutine the engine's own handle owns.
    let owner = match with_ctx(h, |x| (x.co.is_none(), x.boot_of)) {
        (true, Some(b)) => with(|s| s.boot_ctx[b]),
        _ => h,
    };
    let mut co = with_ctx(owner, |x| x.co.take()).unwrap_or_else(|| panic!("sim: context {h} resumed on CPU {c} while it runs"));
    with(|s| s.cpus[c].act = Act::Running);
    let r = co.resume(msg);
    if with_ctx(owner, |x| x.freed) {
        CTXS.with(|cs| cs.borrow_mut()[owner - 1] = None);
        discard(co);
    } else {
        with_ctx(owner, |x| x.co = Some(co));
    }
    match r {
        CoroutineResult::Yield(req) => req,
        CoroutineResult::Return(()) => panic!("sim: context {h} returned (a thread's entry never does)"),
    }
}

/// Carries out what the context running on `c` asked, paying its charged
/// kernel work first; resumes contexts until one waits for an event.
fn handle(c: usize, mut req: Req) {
    loop {
        let charge = with(|s| {
            let cpu = &mut s.cpus[c];
            std::mem::take(&mut cpu.charge_ns) + std::mem::take(&mut cpu.section_ns)
        });
        if charge > 0 && req != Req::Stop {
            with(|s| {
                let t = now() + charge;
                let cpu = &mut s.cpus[c];
                cpu.stats.kernel_ns += charge;
                cpu.step_gen += 1;
                cpu.act = Act::Kernel { then: req };
                let gen = cpu.step_gen;
                s.queue.push(t, Event::StepEnd { cpu: c, gen });
            });
            return;
        }
        match start(c, req) {
            Some(r) => req = r,
            None => return,
        }
    }
}

/// Starts `req` on CPU `c` (its charge paid); returns the next request if
/// it resumed a context at once.
fn start(c: usize, req: Req) -> Option<Req> {
    match req {
        Req::Burn(ns) => {
            let (pending, h) = with(|s| {
                let cpu = &s.cpus[c];
                (cpu.irqs_on && (cpu.pending_ipi || cpu.pending_timer), cpu.running)
            });
            if pending {
                return Some(resume_ctx(c, h, Resumed::Irq { left: ns }));
            }
            with(|s| {
                let t = now() + ns;
                let cpu = &mut s.cpus[c];
                cpu.step_gen += 1;
                cpu.act = Act::Burn { start: now(), end: t };
                let gen = cpu.step_gen;
                s.queue.push(t, Event::StepEnd { cpu: c, gen });
            });
            None
        }
        Req::Halt => {
            let (pending, h) = with(|s| {
                let cpu = &mut s.cpus[c];
                cpu.act = Act::Halt;
                (cpu.pending_ipi || cpu.pending_timer, cpu.running)
            });
            pending.then(|| resume_ctx(c, h, Resumed::Irq { left: 0 }))
        }
        Req::Switch(next) => {
            with(|s| s.cpus[c].running = next);
            Some(resume_ctx(c, next, Resumed::Run))
        }
        Req::Pay => {
            let h = with(|s| s.cpus[c].running);
            Some(resume_ctx(c, h, Resumed::Done))
        }
        Req::Stop => {
            with(|s| {
                s.cpus[c].act = Act::Stopped;
                s.stopped.get_or_insert_with(|| "exit".to_string());
            });
            None
        }
    }
}

/// Processes one event.
fn step(t: u64, ev: Event) {
    let (cpu, kind) = match ev {
        Event::StepEnd { cpu, gen } => {
            if with(|s| s.cpus[cpu].step_gen != gen) {
                return;
            }
            (cpu, 1u64)
        }
        Event::Timer { cpu, gen } => {
            if with(|s| s.cpus[cpu].timer_gen != gen) {
                return;
            }
            (cpu, 2)
        }
        Event::Ipi { cpu } => (cpu, 3),
    };
    NOW.with(|n| n.set(t));
    with(|s| {
        s.events += 1;
        for v in [t, kind << 32 | cpu as u64] {
            for b in v.to_le_bytes() {
                s.digest ^= u64::from(b);
                s.digest = s.digest.wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    });
    match ev {
        Event::StepEnd { cpu, .. } => {
            let act = with(|s| s.cpus[cpu].act);
            match act {
                Act::Burn { start, .. } => {
                    let h = with(|s| {
                        let c = &mut s.cpus[cpu];
                        c.stats.burn_ns += t - start;
                        c.running
                    });
                    let req = resume_ctx(cpu, h, Resumed::Done);
                    handle(cpu, req);
                }
                Act::Kernel { then } => {
                    if let Some(req) = start(cpu, then) {
                        handle(cpu, req);
                    }
                }
                other => panic!("sim: a step ended on CPU {cpu} doing {other:?}"),
            }
        }
        Event::Timer { cpu, .. } => {
            with(|s| s.cpus[cpu].pending_timer = true);
            log(cpu, format_args!("timer_expired"));
            deliver(cpu);
        }
        Event::Ipi { cpu } => {
            with(|s| s.cpus[cpu].pending_ipi = true);
            log(cpu, format_args!("ipi_arrive"));
            deliver(cpu);
        }
    }
}

/// An interrupt became pending on `cpu`: taken now if the CPU halts, or
/// burns with interrupts on; otherwise when its context unmasks them.
fn deliver(cpu: usize) {
    let t = now();
    let go = with(|s| {
        let c = &mut s.cpus[cpu];
        match c.act {
            Act::Halt => Some((c.running, 0)),
            Act::Burn { start, end } if c.irqs_on => {
                c.step_gen += 1;
                c.stats.burn_ns += t - start;
                Some((c.running, end - t))
            }
            _ => None,
        }
    });
    if let Some((h, left)) = go {
        let req = resume_ctx(cpu, h, Resumed::Irq { left });
        handle(cpu, req);
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
            mech::rq::need_resched(c),
            mech::wakeup::wake_list_pending(c),
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
