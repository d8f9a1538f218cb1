//! The discrete-event core: virtual time, the CPUs' state, interrupts, timers,
//! IPIs, steps of CPU time, and the switch between coroutine tasks.

use std::fmt::Write as _;

use corosensei::CoroutineResult;

use super::cost::{CostModel, Distance};
use super::queue::EventQueue;
use super::task::{make_coroutine, Request, Resumed, TaskBody, TaskCoroutine, TaskId};
use crate::machine::Machine;

mod ops;

pub use self::ops::{Config, Kernel, PlatformOps, PrevState};

/// Where a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Waiting to be picked (the scheduler holds it).
    Runnable,
    /// On this CPU (being switched in, or running).
    Running(usize),
    /// Asleep until woken.
    Blocked,
    /// Its body returned.
    Dead,
}

/// What a CPU is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Activity {
    /// Waiting for an interrupt with interrupts enabled (no task).
    Idle,
    /// The current task executes until `end_ns` (a [`Request::Burn`]).
    Burn { task: TaskId, end_ns: u64 },
    /// The current task's body is being resumed (an instant, between two of
    /// its operations).
    Running(TaskId),
    /// Kernel work with interrupts masked until `end_ns`, then `then`, with
    /// interrupts then `irqs_after`.
    Kernel { end_ns: u64, then: Cont, irqs_after: bool },
}

/// What a CPU does when its kernel work ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cont {
    /// Continue the current task (after a wakeup it made); reschedule first if asked.
    Resume { task: TaskId, resched: bool },
    /// The switch to `task` is done: run it.
    SwitchedTo(TaskId),
    /// The switch to idle is done.
    SwitchedToIdle,
    /// Return from an interrupt that cut into `interrupted` (None: idle).
    IrqReturn { interrupted: Option<TaskId>, resched: bool },
}

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The CPU's current step (burn or kernel work) ends, if `gen` is still its step.
    StepEnd { cpu: usize, gen: u64 },
    /// The CPU's one-shot timer, if `gen` is still the armed one.
    Timer { cpu: usize, gen: u64 },
    /// A reschedule IPI arrives.
    Ipi { cpu: usize, from: usize },
    /// The CPU's first call into the scheduler (boot).
    Boot { cpu: usize },
}

/// One simulated CPU.
#[derive(Clone, Debug)]
pub struct CpuState {
    /// The CPU's virtual clock: the time of the last thing it did. It never
    /// goes backwards and never passes the engine's time.
    pub clock_ns: u64,
    /// Interrupts enabled (the flag a task or the kernel's work masks).
    pub irqs_enabled: bool,
    /// A reschedule IPI arrived and is not yet taken.
    pub pending_ipi: bool,
    /// The timer expired and its interrupt is not yet taken.
    pub pending_timer: bool,
    /// The armed one-shot timer's deadline.
    pub timer_deadline_ns: Option<u64>,
    /// When the live timer event in the queue comes (at or before the deadline).
    timer_event_at: Option<u64>,
    /// The task this CPU runs (the platform's per-CPU `current`); None: idle.
    pub current: Option<TaskId>,
    /// A reschedule asked while the task had interrupts masked: done when it unmasks them.
    deferred_resched: bool,
    activity: Activity,
    /// Generation of the current step; a `StepEnd` of an older one is stale.
    step_gen: u64,
    /// A step is queued and not ended or cut: no other work may start.
    step_live: bool,
    timer_gen: u64,
    /// Counters.
    pub stats: CpuStats,
}

/// One CPU's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Context switches, all of them; `idle_switches` of them to or from idle.
    pub switches: u64,
    pub idle_switches: u64,
    pub ipis_sent: u64,
    pub ipis_taken: u64,
    pub timer_irqs: u64,
    /// Tasks that arrived here from another CPU, by [`Distance`] (index 1..).
    pub migrations_in: [u64; 5],
    /// Virtual ns spent executing tasks' burns, in kernel work, idle.
    pub burn_ns: u64,
    pub kernel_ns: u64,
}

struct Task {
    name: String,
    state: TaskState,
    /// A wakeup came while the task was not asleep: its next block returns at once.
    wake_pending: bool,
    last_cpu: Option<usize>,
    /// What is left of a burn cut short by an interrupt.
    burn_left_ns: u64,
    /// When the current burn step started (to compute what is left).
    burn_started_ns: u64,
    co: Option<TaskCoroutine>,
}

/// The engine's state apart from the scheduler.
pub(crate) struct Core {
    machine: Machine,
    cost: CostModel,
    stack_bytes: usize,
    now_ns: u64,
    queue: EventQueue<Event>,
    cpus: Vec<CpuState>,
    tasks: Vec<Task>,
    log: Option<Vec<String>>,
    /// FNV-1a over every processed event's time, kind and CPU.
    digest: u64,
    events: u64,
    /// Distances between CPUs, row-major.
    distance: Vec<Distance>,
}

impl Core {
    fn log_line(&mut self, t: u64, cpu: usize, what: std::fmt::Arguments) {
        if let Some(log) = &mut self.log {
            let mut s = String::new();
            let _ = write!(s, "{t} cpu{cpu} {what}");
            log.push(s);
        }
    }

    fn send_ipi(&mut self, from: usize, to: usize) {
        self.cpus[from].stats.ipis_sent += 1;
        let at = self.now_ns + self.cost.ipi_latency_ns;
        self.queue.push(at, Event::Ipi { cpu: to, from });
        self.log_line(self.now_ns, from, format_args!("ipi_send to={to} arrives={at}"));
    }

    /// Arm `cpu`'s one-shot timer. The queue holds at most one live timer
    /// event per CPU: moving the deadline later keeps the queued event, which
    /// re-queues itself at the deadline when it comes (a tick re-armed at every
    /// pick would otherwise leave one stale event per pick in the queue).
    fn arm_timer(&mut self, cpu: usize, deadline_ns: u64) {
        let now = self.now_ns;
        let c = &mut self.cpus[cpu];
        let at = deadline_ns.max(now);
        c.timer_deadline_ns = Some(at);
        if c.timer_event_at.is_some_and(|q| q <= at) {
            return;
        }
        c.timer_gen += 1;
        c.timer_event_at = Some(at);
        let gen = c.timer_gen;
        self.queue.push(at, Event::Timer { cpu, gen });
    }

    fn distance(&self, a: usize, b: usize) -> Distance {
        self.distance[a * self.cpus.len() + b]
    }

    fn mix(&mut self, v: u64) {
        for b in v.to_le_bytes() {
            self.digest ^= u64::from(b);
            self.digest = self.digest.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The engine: a machine of simulated CPUs in virtual time, running coroutine
/// tasks under the scheduler `K`.
pub struct Engine<K: Kernel> {
    pub kernel: K,
    core: Core,
}

impl<K: Kernel> Engine<K> {
    pub fn new(machine: Machine, kernel: K, cfg: Config) -> Engine<K> {
        let n = machine.nr_cpus();
        let mut distance = Vec::with_capacity(n * n);
        for a in 0..n {
            for b in 0..n {
                distance.push(Distance::between(&machine, a, b));
            }
        }
        let cpu = CpuState {
            clock_ns: 0,
            irqs_enabled: true,
            pending_ipi: false,
            pending_timer: false,
            timer_deadline_ns: None,
            timer_event_at: None,
            current: None,
            deferred_resched: false,
            activity: Activity::Idle,
            step_gen: 0,
            step_live: false,
            timer_gen: 0,
            stats: CpuStats::default(),
        };
        let mut queue = EventQueue::new(cfg.seed);
        for c in 0..n {
            queue.push(0, Event::Boot { cpu: c });
        }
        Engine {
            kernel,
            core: Core {
                machine,
                cost: cfg.cost,
                stack_bytes: cfg.stack_bytes,
                now_ns: 0,
                queue,
                cpus: vec![cpu; n],
                tasks: Vec::new(),
                log: cfg.log.then(Vec::new),
                digest: 0xcbf2_9ce4_8422_2325,
                events: 0,
                distance,
            },
        }
    }

    /// Create a task; the scheduler places it (`Kernel::wake_up_new`) as if
    /// CPU `from_cpu` had created it. Its body runs when the scheduler picks it.
    pub fn spawn(&mut self, name: &str, from_cpu: usize, body: impl FnOnce(&super::TaskCtx) + 'static) -> TaskId {
        let id = TaskId(self.core.tasks.len());
        let body: TaskBody = Box::new(body);
        let co = make_coroutine(id, self.core.stack_bytes, body);
        self.core.tasks.push(Task {
            name: name.to_string(),
            state: TaskState::Runnable,
            wake_pending: false,
            last_cpu: None,
            burn_left_ns: 0,
            burn_started_ns: 0,
            co: Some(co),
        });
        let mut ops = PlatformOps { core: &mut self.core, cpu: from_cpu, charged_ns: 0 };
        self.kernel.wake_up_new(&mut ops, id);
        id
    }

    /// When the next queued event comes (a stale one counts: running to it
    /// may do nothing).
    pub fn next_event_ns(&self) -> Option<u64> {
        self.core.queue.peek_time()
    }

    /// The virtual time.
    pub fn now_ns(&self) -> u64 {
        self.core.now_ns
    }

    pub fn cpu(&self, cpu: usize) -> &CpuState {
        &self.core.cpus[cpu]
    }

    pub fn task_state(&self, t: TaskId) -> TaskState {
        self.core.tasks[t.0].state
    }

    pub fn task_name(&self, t: TaskId) -> &str {
        &self.core.tasks[t.0].name
    }

    /// The CPU the task last ran on.
    pub fn task_last_cpu(&self, t: TaskId) -> Option<usize> {
        self.core.tasks[t.0].last_cpu
    }

    pub fn nr_tasks(&self) -> usize {
        self.core.tasks.len()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.core.events
    }

    /// A hash of every processed event (time, kind, CPU): equal for equal runs.
    pub fn digest(&self) -> u64 {
        self.core.digest
    }

    /// The event log (empty unless `Config::log`).
    pub fn log(&self) -> &[String] {
        self.core.log.as_deref().unwrap_or(&[])
    }

    pub fn machine(&self) -> &Machine {
        &self.core.machine
    }

    /// Run until no event is left, every task is dead, or the next event is
    /// past `until_ns` (the time then stays at the last event processed).
    pub fn run_until(&mut self, until_ns: u64) {
        while let Some(t) = self.core.queue.peek_time() {
            if t > until_ns || self.all_dead() {
                break;
            }
            let (t, ev) = self.core.queue.pop().expect("peeked");
            self.step(t, ev);
        }
    }

    fn all_dead(&self) -> bool {
        !self.core.tasks.is_empty() && self.core.tasks.iter().all(|t| t.state == TaskState::Dead)
    }

    fn ops(&mut self, cpu: usize) -> (&mut K, PlatformOps<'_>) {
        (&mut self.kernel, PlatformOps { core: &mut self.core, cpu, charged_ns: 0 })
    }

    fn step(&mut self, t: u64, ev: Event) {
        debug_assert!(t >= self.core.now_ns, "time went backwards");
        self.core.now_ns = t;
        let (kind, cpu, gen) = match ev {
            Event::StepEnd { cpu, gen } => (1, cpu, gen),
            Event::Timer { cpu, gen } => (2, cpu, gen),
            Event::Ipi { cpu, from } => (3, cpu, from as u64),
            Event::Boot { cpu } => (4, cpu, 0),
        };
        let c = &self.core.cpus[cpu];
        // Stale steps and timers are no events: they do not count or hash.
        if (kind == 1 && c.step_gen != gen) || (kind == 2 && c.timer_gen != gen) {
            return;
        }
        if kind == 2 {
            // The live timer event: fire only at the deadline; a deadline
            // moved later re-queues it, a cancelled timer drops it.
            let c = &mut self.core.cpus[cpu];
            c.timer_event_at = None;
            match c.timer_deadline_ns {
                None => return,
                Some(d) if d > t => {
                    c.timer_gen += 1;
                    c.timer_event_at = Some(d);
                    let gen = c.timer_gen;
                    self.core.queue.push(d, Event::Timer { cpu, gen });
                    return;
                }
                Some(_) => {}
            }
        }
        self.core.events += 1;
        self.core.mix(t);
        self.core.mix(kind << 32 | cpu as u64);
        debug_assert!(self.core.cpus[cpu].clock_ns <= t);
        self.core.cpus[cpu].clock_ns = t;
        match ev {
            Event::Boot { cpu } => {
                self.core.log_line(t, cpu, format_args!("boot"));
                // An interrupt at time 0 may have entered the scheduler first:
                // then the CPU is no longer idle and has nothing to boot.
                if self.core.cpus[cpu].activity == Activity::Idle {
                    self.schedule(cpu, None);
                }
            }
            Event::StepEnd { cpu, .. } => {
                self.core.cpus[cpu].step_live = false;
                self.step_end(cpu);
            }
            Event::Timer { cpu, .. } => {
                let c = &mut self.core.cpus[cpu];
                c.timer_deadline_ns = None;
                c.pending_timer = true;
                self.core.log_line(t, cpu, format_args!("timer_expired"));
                self.maybe_take_interrupts(cpu);
            }
            Event::Ipi { cpu, from } => {
                self.core.cpus[cpu].pending_ipi = true;
                self.core.log_line(t, cpu, format_args!("ipi_arrive from={from}"));
                self.maybe_take_interrupts(cpu);
            }
        }
    }

    /// Start kernel work on `cpu` lasting `ns`, then `then`; interrupts are
    /// masked meanwhile (they stay pending) and `irqs_after` afterwards.
    fn kernel_step(&mut self, cpu: usize, ns: u64, then: Cont, irqs_after: bool) {
        let now = self.core.now_ns;
        let c = &mut self.core.cpus[cpu];
        assert!(!c.step_live, "sim: CPU {cpu} started kernel work over a live step");
        c.step_live = true;
        c.step_gen += 1;
        c.stats.kernel_ns += ns;
        c.irqs_enabled = false;
        c.activity = Activity::Kernel { end_ns: now + ns, then, irqs_after };
        let gen = c.step_gen;
        // Zero-length work still goes through the queue, so that what it
        // continues with comes after what is already queued for this time
        // (no unbounded recursion, and ties ordered by the seed).
        self.core.queue.push(now + ns, Event::StepEnd { cpu, gen });
    }

    /// Task `t` executes `ns` on `cpu` from now.
    fn start_burn(&mut self, cpu: usize, t: TaskId, ns: u64) {
        let now = self.core.now_ns;
        self.core.tasks[t.0].burn_left_ns = ns;
        self.core.tasks[t.0].burn_started_ns = now;
        let c = &mut self.core.cpus[cpu];
        assert!(!c.step_live, "sim: CPU {cpu} started a burn over a live step");
        c.step_live = true;
        c.step_gen += 1;
        c.activity = Activity::Burn { task: t, end_ns: now + ns };
        let gen = c.step_gen;
        self.core.queue.push(now + ns, Event::StepEnd { cpu, gen });
    }

    fn step_end(&mut self, cpu: usize) {
        let now = self.core.now_ns;
        match self.core.cpus[cpu].activity {
            Activity::Burn { task, end_ns } => {
                debug_assert_eq!(end_ns, now);
                let tk = &mut self.core.tasks[task.0];
                self.core.cpus[cpu].stats.burn_ns += now - tk.burn_started_ns;
                tk.burn_left_ns = 0;
                self.run_task(cpu, task);
            }
            Activity::Kernel { then, irqs_after, .. } => {
                self.core.cpus[cpu].irqs_enabled = irqs_after;
                let cont = match then {
                    Cont::Resume { task, resched: true } if irqs_after => return self.switch_out(cpu, task, PrevState::Runnable),
                    Cont::Resume { task, resched: true } => {
                        // Preemption waits for the task to unmask interrupts.
                        self.core.cpus[cpu].deferred_resched = true;
                        Some(task)
                    }
                    Cont::Resume { task, resched: false } => Some(task),
                    Cont::SwitchedTo(task) => {
                        self.core.cpus[cpu].current = Some(task);
                        self.core.tasks[task.0].last_cpu = Some(cpu);
                        Some(task)
                    }
                    Cont::SwitchedToIdle => {
                        self.core.cpus[cpu].current = None;
                        None
                    }
                    Cont::IrqReturn { interrupted: Some(t), resched: true } => return self.switch_out(cpu, t, PrevState::Runnable),
                    Cont::IrqReturn { interrupted: None, resched: true } => return self.schedule(cpu, None),
                    Cont::IrqReturn { interrupted, resched: false } => interrupted,
                };
                match cont {
                    Some(task) => {
                        self.core.cpus[cpu].activity = Activity::Running(task);
                        if !self.maybe_take_interrupts(cpu) {
                            self.run_task(cpu, task);
                        }
                    }
                    None => {
                        self.core.cpus[cpu].activity = Activity::Idle;
                        self.maybe_take_interrupts(cpu);
                    }
                }
            }
            Activity::Idle | Activity::Running(_) => unreachable!("a live step end on CPU {cpu} with no step"),
        }
    }

    /// Take the pending interrupts if the CPU can: interrupts enabled and
    /// not inside kernel work. Returns whether it took any (the CPU is then
    /// in the handlers' kernel work).
    fn maybe_take_interrupts(&mut self, cpu: usize) -> bool {
        let now = self.core.now_ns;
        let c = &self.core.cpus[cpu];
        if !(c.pending_ipi || c.pending_timer) || !c.irqs_enabled {
            return false;
        }
        let interrupted = match c.activity {
            Activity::Kernel { .. } => return false,
            Activity::Idle => None,
            Activity::Running(task) => Some(task),
            Activity::Burn { task, end_ns } => {
                self.core.cpus[cpu].step_live = false;
                let tk = &mut self.core.tasks[task.0];
                tk.burn_left_ns = end_ns - now;
                self.core.cpus[cpu].stats.burn_ns += now - tk.burn_started_ns;
                Some(task)
            }
        };
        let mut resched = std::mem::take(&mut self.core.cpus[cpu].deferred_resched);
        let mut ns = 0;
        if std::mem::take(&mut self.core.cpus[cpu].pending_timer) {
            self.core.cpus[cpu].stats.timer_irqs += 1;
            self.core.log_line(now, cpu, format_args!("irq timer"));
            let (k, mut ops) = self.ops(cpu);
            resched |= k.timer_interrupt(&mut ops);
            ns += ops.charged_ns + self.core.cost.irq_entry_ns;
        }
        if std::mem::take(&mut self.core.cpus[cpu].pending_ipi) {
            self.core.cpus[cpu].stats.ipis_taken += 1;
            self.core.log_line(now, cpu, format_args!("irq resched_ipi"));
            let (k, mut ops) = self.ops(cpu);
            resched |= k.resched_ipi(&mut ops);
            ns += ops.charged_ns + self.core.cost.irq_entry_ns;
        }
        self.kernel_step(cpu, ns, Cont::IrqReturn { interrupted, resched }, true);
        true
    }

    /// Continue task `t` on `cpu`: finish a cut burn, or resume its body and
    /// carry out what it asks until it asks for something that takes time.
    fn run_task(&mut self, cpu: usize, t: TaskId) {
        loop {
            let now = self.core.now_ns;
            self.core.cpus[cpu].activity = Activity::Running(t);
            let left = self.core.tasks[t.0].burn_left_ns;
            if left > 0 {
                return self.start_burn(cpu, t, left);
            }
            let co = self.core.tasks[t.0].co.as_mut().expect("a live task has its coroutine");
            let req = match co.resume(Resumed { now_ns: now, cpu }) {
                CoroutineResult::Yield(r) => r,
                CoroutineResult::Return(()) => {
                    self.core.tasks[t.0].co = None;
                    self.assert_irqs_on(cpu, t, "exited");
                    self.core.log_line(now, cpu, format_args!("exit task={}", t.0));
                    return self.switch_out(cpu, t, PrevState::Dead);
                }
            };
            match req {
                Request::Burn(ns) => return self.start_burn(cpu, t, ns),
                Request::IrqDisable => self.core.cpus[cpu].irqs_enabled = false,
                Request::IrqEnable => {
                    self.core.cpus[cpu].irqs_enabled = true;
                    if self.maybe_take_interrupts(cpu) {
                        return;
                    }
                    if std::mem::take(&mut self.core.cpus[cpu].deferred_resched) {
                        return self.switch_out(cpu, t, PrevState::Runnable);
                    }
                }
                Request::Wake(u) => return self.wake(cpu, t, u),
                Request::Yield => {
                    self.assert_irqs_on(cpu, t, "yielded");
                    return self.switch_out(cpu, t, PrevState::Runnable);
                }
                Request::Block => {
                    self.assert_irqs_on(cpu, t, "blocked");
                    let tk = &mut self.core.tasks[t.0];
                    if tk.wake_pending {
                        tk.wake_pending = false;
                        continue;
                    }
                    self.core.log_line(now, cpu, format_args!("block task={}", t.0));
                    return self.switch_out(cpu, t, PrevState::Sleeping);
                }
            }
        }
    }

    fn assert_irqs_on(&self, cpu: usize, t: TaskId, what: &str) {
        assert!(
            self.core.cpus[cpu].irqs_enabled,
            "sim: task {} ({}) {what} on CPU {cpu} with interrupts disabled",
            t.0,
            self.core.tasks[t.0].name
        );
    }

    /// Task `t` on `cpu` wakes `u`: the scheduler places it at once, and the
    /// waker continues after the wakeup's cost.
    fn wake(&mut self, cpu: usize, t: TaskId, u: TaskId) {
        let now = self.core.now_ns;
        let irqs = self.core.cpus[cpu].irqs_enabled;
        let mut resched = false;
        let mut extra = 0;
        match self.core.tasks[u.0].state {
            TaskState::Blocked => {
                self.core.tasks[u.0].state = TaskState::Runnable;
                self.core.log_line(now, cpu, format_args!("wake task={} by={}", u.0, t.0));
                let (k, mut ops) = self.ops(cpu);
                resched = k.wake_up(&mut ops, u);
                extra = ops.charged_ns;
            }
            // Not asleep yet: its next block returns at once (no lost wakeup).
            TaskState::Running(_) | TaskState::Runnable => self.core.tasks[u.0].wake_pending = true,
            TaskState::Dead => {}
        }
        let ns = self.core.cost.wakeup_ns + extra;
        self.kernel_step(cpu, ns, Cont::Resume { task: t, resched }, irqs);
    }

    /// `t` leaves `cpu` in `how`; the scheduler picks the next.
    fn switch_out(&mut self, cpu: usize, t: TaskId, how: PrevState) {
        self.core.tasks[t.0].state = match how {
            PrevState::Runnable => TaskState::Runnable,
            PrevState::Sleeping => TaskState::Blocked,
            PrevState::Dead => TaskState::Dead,
        };
        self.schedule(cpu, Some((t, how)));
    }

    /// Call the scheduler on `cpu` and carry out its pick: a switch costs
    /// `switch_ns` between two tasks, `switch_idle_ns` to or from idle, plus
    /// the cache penalty when the next task last ran on another CPU.
    fn schedule(&mut self, cpu: usize, prev: Option<(TaskId, PrevState)>) {
        let now = self.core.now_ns;
        let (k, mut ops) = self.ops(cpu);
        let next = k.schedule(&mut ops, prev);
        let extra = ops.charged_ns;
        let prev_task = prev.map(|p| p.0);
        match next {
            Some(n) if Some(n) == prev_task => {
                self.core.tasks[n.0].state = TaskState::Running(cpu);
                self.kernel_step(cpu, extra, Cont::Resume { task: n, resched: false }, true);
            }
            Some(n) => {
                let st = self.core.tasks[n.0].state;
                assert!(
                    st == TaskState::Runnable,
                    "sim: the scheduler picked task {} ({}) on CPU {cpu} in state {st:?}",
                    n.0,
                    self.core.tasks[n.0].name
                );
                self.core.tasks[n.0].state = TaskState::Running(cpu);
                let mut ns = extra + if prev_task.is_some() { self.core.cost.switch_ns } else { self.core.cost.switch_idle_ns };
                self.core.cpus[cpu].stats.idle_switches += u64::from(prev_task.is_none());
                if let Some(last) = self.core.tasks[n.0].last_cpu {
                    let d = self.core.distance(last, cpu);
                    ns += self.core.cost.migration_ns(d);
                    self.core.cpus[cpu].stats.migrations_in[d as usize] += u64::from(d != Distance::SameCpu);
                }
                self.core.cpus[cpu].stats.switches += 1;
                self.core.log_line(now, cpu, format_args!("switch prev={} next={} cost={ns}", fmt_task(prev_task), n.0));
                self.kernel_step(cpu, ns, Cont::SwitchedTo(n), true);
            }
            None => {
                let mut ns = extra;
                if prev_task.is_some() {
                    self.core.cpus[cpu].stats.switches += 1;
                    self.core.cpus[cpu].stats.idle_switches += 1;
                    ns += self.core.cost.switch_idle_ns;
                    self.core.log_line(now, cpu, format_args!("switch prev={} next=idle cost={ns}", fmt_task(prev_task)));
                }
                self.kernel_step(cpu, ns, Cont::SwitchedToIdle, true);
            }
        }
    }
}

fn fmt_task(t: Option<TaskId>) -> String {
    t.map_or_else(|| "idle".to_string(), |t| t.0.to_string())
}

impl Drop for Core {
    fn drop(&mut self) {
        // A suspended coroutine is dropped by unwinding its stack, which needs
        // panic=unwind; under panic=abort (the workspace's dev and release
        // profiles outside tests) leak it instead of aborting at the end.
        if !cfg!(panic = "unwind") {
            for t in &mut self.tasks {
                if let Some(co) = t.co.take() {
                    if co.started() && !co.done() {
                        std::mem::forget(co);
                    }
                }
            }
        }
    }
}
