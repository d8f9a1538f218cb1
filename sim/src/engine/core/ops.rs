//! What the engine is set up with and what it and the scheduler it runs
//! offer each other: the engine's [`Config`], the [`Kernel`]'s entry
//! points, and the [`PlatformOps`] each entry point gets for its CPU.

use super::Core;
use crate::engine::cost::CostModel;
use crate::engine::task::TaskId;
use crate::machine::Machine;

/// Engine settings.
#[derive(Clone, Debug)]
pub struct Config {
    /// Seeds the tie-break between events of the same virtual time.
    pub seed: u64,
    pub cost: CostModel,
    /// Keep a text line per event and decision ([`Engine::log`](crate::engine::Engine::log)); off for speed.
    pub log: bool,
    /// Each task's coroutine stack.
    pub stack_bytes: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config { seed: 0, cost: CostModel::ICOUNT, log: false, stack_bytes: 64 * 1024 }
    }
}

/// The scheduler the engine runs: the entry points a kernel's scheduler
/// mechanism offers its platform. Each is called on one CPU at the current
/// virtual time with [`PlatformOps`] for that CPU; what it decides takes
/// effect at once, and the time it costs (the cost model's charge plus what
/// it asks through `PlatformOps::charge_*`) delays what that CPU does next.
pub trait Kernel {
    /// A new task is runnable (its first wakeup), created from `ops.cpu()`.
    fn wake_up_new(&mut self, ops: &mut PlatformOps, task: TaskId);
    /// A sleeping task was woken by the task running on `ops.cpu()`. Returns
    /// whether that CPU must reschedule (the waker is preempted).
    fn wake_up(&mut self, ops: &mut PlatformOps, task: TaskId) -> bool;
    /// Pick what runs next on `ops.cpu()`; `prev` is what ran (None: idle) and
    /// how it left. `None` means idle.
    fn schedule(&mut self, ops: &mut PlatformOps, prev: Option<(TaskId, PrevState)>) -> Option<TaskId>;
    /// This CPU's one-shot timer expired. Returns whether to reschedule.
    fn timer_interrupt(&mut self, ops: &mut PlatformOps) -> bool;
    /// A reschedule IPI reached this CPU. Returns whether to reschedule.
    fn resched_ipi(&mut self, ops: &mut PlatformOps) -> bool;
}

/// How the previous task left the CPU (the kernel's `prev_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrevState {
    /// Still runnable: preempted or yielded.
    Runnable,
    /// Asleep until woken.
    Sleeping,
    /// Its body returned.
    Dead,
}

/// The platform operations the engine offers a [`Kernel`] entry point: the
/// calling CPU's id and clock, IPIs, the CPU's timer, and charges of time.
pub struct PlatformOps<'a> {
    pub(super) core: &'a mut Core,
    pub(super) cpu: usize,
    /// What the entry point asked to be charged on top of the cost model's figure.
    pub(super) charged_ns: u64,
}

impl PlatformOps<'_> {
    /// The CPU this call runs on.
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// The virtual time, ns.
    pub fn now_ns(&self) -> u64 {
        self.core.now_ns
    }

    pub fn nr_cpus(&self) -> usize {
        self.core.cpus.len()
    }

    /// The machine being simulated.
    pub fn machine(&self) -> &Machine {
        &self.core.machine
    }

    /// Whether `cpu` is idle (runs no task). Reading another CPU's state is
    /// what a scheduler does through its runqueues; this is for test doubles.
    pub fn cpu_is_idle(&self, cpu: usize) -> bool {
        self.core.cpus[cpu].current.is_none()
    }

    /// Send a reschedule IPI to `cpu`; it arrives after the IPI latency.
    pub fn send_ipi(&mut self, cpu: usize) {
        let from = self.cpu;
        self.core.send_ipi(from, cpu);
    }

    /// Arm this CPU's one-shot timer for `deadline_ns` (replacing any armed one;
    /// a deadline already past fires at once).
    pub fn arm_timer(&mut self, deadline_ns: u64) {
        self.core.arm_timer(self.cpu, deadline_ns);
    }

    /// Disarm this CPU's timer.
    pub fn cancel_timer(&mut self) {
        // The queued event, if any, finds no deadline and does nothing.
        self.core.cpus[self.cpu].timer_deadline_ns = None;
    }

    /// Charge this call `ns` more of the CPU's time.
    pub fn charge_ns(&mut self, ns: u64) {
        self.charged_ns += ns;
    }

    /// Charge a balance pass or idle scan that read `cpus` CPUs' statistics.
    pub fn charge_balance_scan(&mut self, cpus: u64) {
        self.charged_ns += cpus * self.core.cost.balance_per_cpu_scanned_ns;
    }

    /// Append a line to the event log (if it is kept).
    pub fn log(&mut self, what: std::fmt::Arguments) {
        let (t, c) = (self.core.now_ns, self.cpu);
        self.core.log_line(t, c, what);
    }
}
