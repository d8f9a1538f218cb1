//! A test platform for the mechanism's host tests: CPUs simulated one at a
//! time on the test's thread. The test says which CPU runs (`run_on`) and
//! what time it is (`advance_ns`); a switch only moves the `current` slot
//! and the contexts' `on_cpu` flags (no code runs on a context), and a task
//! that gives up its CPU runs the switch at once, as the interrupt would.
//! Each test binary binds it once (`set_platform!`), and the mechanism's
//! state is per process, so each binary holds one test.
#![allow(unsafe_code, dead_code)]

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mech::platform::{Context, Exit, Frame, Platform, Stack, SwitchError, Work};
use mech::task::Task;

pub const CPUS: usize = 4;

static CPU: AtomicUsize = AtomicUsize::new(0);
static NOW: AtomicU64 = AtomicU64::new(1_000_000);
static CURRENT: Mutex<[Option<Arc<Task>>; CPUS]> = Mutex::new([None, None, None, None]);
static GUARDS: [AtomicU32; CPUS] = [const { AtomicU32::new(0) }; CPUS];
static IRQS_ON: [AtomicBool; CPUS] = [const { AtomicBool::new(true) }; CPUS];
static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);
/// Reschedule IPIs sent: (from, to).
pub static IPIS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
/// Switches made: (cpu, prev context, next context).
pub static SWITCHES: Mutex<Vec<(usize, usize, usize)>> = Mutex::new(Vec::new());

struct TestCtx {
    on_cpu: AtomicBool,
}

fn ctx(handle: usize) -> &'static TestCtx {
    // SAFETY: handles come only from `wrap` (a leaked-until-freed Box) and
    // are freed by `context_free` when their `Context` drops.
    unsafe { &*(handle as *const TestCtx) }
}

fn wrap(on_cpu: bool) -> Context {
    let b = Box::new(TestCtx { on_cpu: AtomicBool::new(on_cpu) });
    // SAFETY: a fresh Box pointer, freed only by `context_free`.
    unsafe { Context::from_handle(Box::into_raw(b) as usize) }
}

/// The frame a context's interrupt would save into (its handle: the
/// mechanism never looks inside a frame).
pub fn frame_of(t: &Task) -> *mut Frame {
    t.ctx.handle() as *mut Frame
}

/// From now on the test's code runs on `cpu`.
pub fn run_on(cpu: usize) {
    CPU.store(cpu, Ordering::Relaxed);
}

pub fn advance_ns(ns: u64) {
    NOW.fetch_add(ns, Ordering::Relaxed);
}

/// What runs on `cpu` (its `current` slot).
pub fn current_on(cpu: usize) -> Option<Arc<Task>> {
    CURRENT.lock().unwrap()[cpu].clone()
}

pub struct TestPlatform;

mech::set_platform!(TestPlatform);

impl Platform for TestPlatform {
    fn cpu_id() -> usize {
        CPU.load(Ordering::Relaxed)
    }
    fn current() -> Option<Arc<Task>> {
        current_on(Self::cpu_id())
    }
    fn current_ptr() -> *const Task {
        // The slot keeps its count while the test runs on this CPU.
        Self::current().map_or(core::ptr::null(), |t| Arc::as_ptr(&t))
    }
    fn set_current(task: Arc<Task>) {
        let old = CURRENT.lock().unwrap()[Self::cpu_id()].replace(task);
        drop(old);
    }
    fn set_current_irqs_off(task: Arc<Task>) {
        Self::set_current(task)
    }
    fn irq_guard_enter() {
        GUARDS[Self::cpu_id()].fetch_add(1, Ordering::Relaxed);
    }
    fn irq_guard_exit() {
        GUARDS[Self::cpu_id()].fetch_sub(1, Ordering::Relaxed);
    }
    fn irq_guards_held() -> u32 {
        GUARDS[Self::cpu_id()].load(Ordering::Relaxed)
    }
    fn irqs_enabled() -> bool {
        IRQS_ON[Self::cpu_id()].load(Ordering::Relaxed) && Self::irq_guards_held() == 0
    }
    fn irq_disable() {
        IRQS_ON[Self::cpu_id()].store(false, Ordering::Relaxed)
    }
    fn irq_enable() {
        IRQS_ON[Self::cpu_id()].store(true, Ordering::Relaxed)
    }
    fn wait_for_interrupt() {
        panic!("the test platform has no idle loop")
    }
    fn context_new_thread(_entry: extern "C" fn(usize) -> !, _arg: usize, _stack_top: u64) -> Context {
        wrap(false)
    }
    fn context_running_here(_cpu: usize) -> Context {
        wrap(true)
    }
    fn context_on_cpu(handle: usize) -> bool {
        ctx(handle).on_cpu.load(Ordering::Acquire)
    }
    fn context_free(handle: usize) {
        // SAFETY: as in `ctx`; the owning `Context` is being dropped.
        drop(unsafe { Box::from_raw(handle as *mut TestCtx) });
    }
    fn context_adopt_here(_handle: usize) {}
    fn switch_frames(frame: *mut Frame, prev: usize, next: usize) -> Result<*mut Frame, SwitchError> {
        if prev == next {
            return Ok(frame);
        }
        assert_eq!(frame as usize, prev, "the frame is the running context's");
        if ctx(next).on_cpu.swap(true, Ordering::Acquire) {
            return Err(SwitchError::RunningElsewhere { cpu: usize::MAX });
        }
        ctx(prev).on_cpu.store(false, Ordering::Release);
        SWITCHES.lock().unwrap().push((Self::cpu_id(), prev, next));
        Ok(next as *mut Frame)
    }
    fn give_up_cpu() {
        // The switch runs now, as the schedule interrupt would run it.
        let me = Self::current().expect("a task gives up its CPU");
        let frame = frame_of(&me);
        drop(me);
        mech::schedule::schedule_voluntary(frame);
    }
    fn send_resched_ipi(cpu: usize) {
        IPIS.lock().unwrap().push((Self::cpu_id(), cpu));
    }
    fn timer_start_ns(_ns: u64) {}
    fn timer_stop() {}
    fn timer_eoi() {}
    fn uptime_ns() -> u64 {
        NOW.load(Ordering::Relaxed)
    }
    fn stack_alloc() -> Option<Stack> {
        let slot = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
        Some(Stack { slot, top: 0x10_0000 * (slot as u64 + 1) })
    }
    fn stack_free(_stack: Stack) {}
    fn stack_usage() -> (usize, usize) {
        (NEXT_SLOT.load(Ordering::Relaxed), usize::MAX)
    }
    fn heap_usage() -> (usize, usize) {
        (0, usize::MAX)
    }
    fn stack_sizing(_out: &mut dyn fmt::Write) {
        // No arena, no rule to name.
    }
    fn write_line(args: fmt::Arguments) {
        println!("{}", args);
    }
    fn exit(why: Exit) -> ! {
        panic!("the mechanism ended the run: {:?}", why)
    }
    fn burn_ns(ns: u64) {
        // The test clock only moves when told: the spin is the time it adds.
        NOW.fetch_add(ns, Ordering::Relaxed);
    }
    fn work_done(instructions: u64) {
        // One instruction, one ns (QEMU's `-icount shift=0`), as the simulator.
        NOW.fetch_add(instructions, Ordering::Relaxed);
    }
    fn mechanism_work(work: Work) {
        NOW.fetch_add(work_ns(work), Ordering::Relaxed);
    }
}

/// What the mechanism's own work costs the test clock: the simulator's
/// prices (`sim/src/platform/prices.rs`), at one ns per instruction.
pub const fn work_ns(work: Work) -> u64 {
    match work {
        Work::PipeCopy { bytes } if bytes < mech::sync::pipe::SMALL_COPY => 135,
        Work::PipeCopy { bytes } => 174 + bytes as u64 * 217 / 1000,
        Work::BalancePass { cpus } => 1950 + cpus as u64 * 170,
        Work::PlacementCpuRead => 170,
    }
}

/// Brings up CPUs `0..n` as the kernel's boot does: the domains (one flat
/// domain over them), then each CPU's runqueue on that CPU, its capacity
/// published. Leaves the test on CPU 0.
pub fn boot(n: usize) {
    boot_with(n, sched::balance::BalanceConfig::default());
}

/// [`boot`] with the feature set `features` (the kernel's `sched_features=`),
/// for the balancer and every runqueue, as the kernel's boot hands it out.
pub fn boot_features(n: usize, features: sched::Features) {
    let config = sched::balance::BalanceConfig { features, ..Default::default() };
    let mut tunables = sched::tunables::Tunables::default();
    tunables.features = features;
    boot_tuned(n, config, tunables);
}

/// [`boot`] with the balancing configuration `config` (the kernel's from its
/// command line).
pub fn boot_with(n: usize, config: sched::balance::BalanceConfig) {
    boot_tuned(n, config, sched::tunables::Tunables::default());
}

fn boot_tuned(n: usize, config: sched::balance::BalanceConfig, tunables: sched::tunables::Tunables) {
    let mut online = sched::cpumask::CpuMask::new();
    for c in 0..n {
        online.set(c);
    }
    boot_domains(sched::topology::SchedDomains::flat(online), config, tunables);
}

/// [`boot`] of the online CPUs of `domains` (`0..n`), with those domains
/// (e.g. several levels from `SchedDomains::build`) in place of one flat
/// domain.
pub fn boot_domains(
    domains: sched::topology::SchedDomains,
    config: sched::balance::BalanceConfig,
    tunables: sched::tunables::Tunables,
) {
    let n = domains.online().weight() as usize;
    assert!(n <= CPUS, "the test platform has {CPUS} CPUs");
    assert_eq!(domains.online().iter().last(), Some(n - 1), "online CPUs are 0..{n}");
    mech::balance::init(domains, config, sched::balance::CapacityTable::new(n), 1000);
    for c in 0..n {
        run_on(c);
        // As entry::sched_cpu_starting, without the platform's hooks and tick.
        mech::wakeup::configure(tunables.features);
        mech::rq::init_cpu(c, tunables);
        let rq = mech::rq::lock(c);
        mech::balance::snapshot::publish(&rq);
    }
    run_on(0);
}

/// The reschedule interrupt (or tick) on `cpu` finds its flag set and
/// switches: returns what runs there now.
pub fn preempt(cpu: usize) -> Arc<Task> {
    run_on(cpu);
    let cur = current_on(cpu).expect("scheduler running");
    let resume = mech::schedule::preempt_irq(frame_of(&cur));
    let now = current_on(cpu).unwrap();
    assert_eq!(resume, frame_of(&now), "the resumed frame is the current task's");
    now
}

/// The task running on `cpu` blocks (sets itself Sleeping and gives up its
/// CPU, as a wait does): returns what runs there next.
pub fn block(cpu: usize) -> Arc<Task> {
    run_on(cpu);
    let me = current_on(cpu).unwrap();
    me.set_state(mech::task::TaskState::Sleeping);
    drop(me);
    mech::schedule::schedule();
    current_on(cpu).unwrap()
}

/// How many tasks `cpu`'s runqueue holds (queued and running, idle not
/// counted).
pub fn nr_queued(cpu: usize) -> u32 {
    mech::rq::lock(cpu).fair.nr_queued()
}
