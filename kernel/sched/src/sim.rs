//! A deterministic single-CPU simulator that drives a [`FairRq`] the way the
//! kernel will: a periodic tick, wakeups with preemption checks, sleeps and
//! switches. Tests and benchmarks use it to run scenarios.
//!
//! Events ([`Event`]): run for a time, fork, sleep, wake, exit, renice, set
//! slice. Tasks may also carry a [`Behavior`] that makes them sleep and wake
//! by themselves (a duty cycle). Everything is integer time and iteration in
//! task order, so a scenario always produces the same schedule.
//!
//! Invariants of [`Sim`]: `running`, when set, is the task whose entity is
//! the queue's `curr`; a task is `Runnable`/`Running` exactly when its
//! entity is queued and not delayed; `runtime` of a task is the simulated
//! time it held the CPU (and equals its entity's `sum_exec_runtime`).

use alloc::vec::Vec;

use crate::entity::{EntityId, Policy, SchedEntity};
use crate::fair_rq::{DequeueFlags, EnqueueFlags, FairRq, SchedError, WakeFlags};
use crate::time::Nanos;
use crate::tunables::Tunables;
use crate::weight::Nice;

/// Index of a simulated task.
pub type TaskId = usize;

/// What a task does on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    /// Always wants the CPU (until told to sleep).
    Hog,
    /// Runs `run` ns of CPU time, then sleeps `sleep` ns, forever.
    DutyCycle {
        /// CPU time per burst.
        run: Nanos,
        /// Sleep after each burst.
        sleep: Nanos,
    },
}

/// A scenario step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Let simulated time pass.
    Run(Nanos),
    /// Create a task (it starts runnable).
    Fork(Nice, Behavior),
    /// Put a task to sleep (until [`Event::Wake`]).
    Sleep(TaskId),
    /// Wake a sleeping task.
    Wake(TaskId),
    /// End a task.
    Exit(TaskId),
    /// Change a task's nice level.
    Renice(TaskId, Nice),
    /// Set a task's custom slice (0: default).
    SetSlice(TaskId, Nanos),
}

/// A simulated task's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// Queued, waiting for the CPU.
    Runnable,
    /// On the CPU.
    Running,
    /// Asleep; wakes by itself at the given time if any.
    Sleeping(Option<Nanos>),
    /// Gone.
    Exited,
}

/// One simulated task.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    /// Its entity on the queue.
    pub entity: EntityId,
    /// Its own sleep/wake pattern.
    pub behavior: Behavior,
    /// Current state.
    pub state: TaskState,
    /// CPU time received.
    pub runtime: Nanos,
    /// CPU time left in the current burst (duty cycle).
    burst_left: Nanos,
    /// When it last woke and has not run since.
    pub woke_at: Option<Nanos>,
    /// Longest wait from a wakeup (or fork) to getting the CPU.
    pub max_wakeup_latency: Nanos,
    /// Wait from the latest wakeup to getting the CPU (once it ran).
    pub last_wakeup_latency: Option<Nanos>,
}

/// The simulator; see the module docs.
#[derive(Clone, Debug)]
pub struct Sim {
    rq: FairRq,
    now: Nanos,
    next_tick: Nanos,
    tasks: Vec<Task>,
    by_entity: Vec<Option<TaskId>>,
    running: Option<TaskId>,
    switches: u64,
}

impl Sim {
    /// An idle CPU at time 0 with the given tunables.
    pub fn new(tun: Tunables) -> Sim {
        let tick = tun.tick_nsec();
        Sim { rq: FairRq::new(tun), now: 0, next_tick: tick, tasks: Vec::new(), by_entity: Vec::new(), running: None, switches: 0 }
    }

    /// The run-queue.
    pub fn rq(&self) -> &FairRq {
        &self.rq
    }

    /// Simulated time.
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// A task.
    pub fn task(&self, t: TaskId) -> Option<&Task> {
        self.tasks.get(t)
    }

    /// All tasks.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// The running task.
    pub fn running(&self) -> Option<TaskId> {
        self.running
    }

    /// Context switches so far.
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// The run-queue, for direct manipulation (e.g. capacity hooks).
    pub fn rq_mut(&mut self) -> &mut FairRq {
        &mut self.rq
    }

    /// A task's entity state.
    pub fn entity(&self, t: TaskId) -> Option<&SchedEntity> {
        self.rq.entity(self.tasks.get(t)?.entity)
    }

    /// Apply one event; returns the new task's id for [`Event::Fork`].
    pub fn apply(&mut self, ev: Event) -> Result<Option<TaskId>, SchedError> {
        self.apply_observed(ev, &mut |_, _| {})
    }

    /// Apply one event, calling `observe(rq, picked)` after every pick.
    pub fn apply_observed(&mut self, ev: Event, observe: &mut dyn FnMut(&FairRq, Option<EntityId>)) -> Result<Option<TaskId>, SchedError> {
        match ev {
            Event::Run(d) => {
                self.run_for(d, observe)?;
                return Ok(None);
            }
            Event::Fork(nice, behavior) => return self.fork(nice, behavior, observe).map(Some),
            Event::Sleep(t) => self.sleep(t, None, observe)?,
            Event::Wake(t) => self.wake(t, observe)?,
            Event::Exit(t) => self.exit(t, observe)?,
            Event::Renice(t, n) => {
                let e = self.entity_of(t)?;
                self.rq.reweight(e, n)?;
            }
            Event::SetSlice(t, ns) => {
                let e = self.entity_of(t)?;
                self.rq.set_slice(e, ns)?;
            }
        }
        Ok(None)
    }

    fn entity_of(&self, t: TaskId) -> Result<EntityId, SchedError> {
        match self.tasks.get(t) {
            Some(task) if task.state != TaskState::Exited => Ok(task.entity),
            _ => Err(SchedError::NoSuchEntity(EntityId(u32::MAX))),
        }
    }

    fn fork(&mut self, nice: Nice, behavior: Behavior, observe: &mut dyn FnMut(&FairRq, Option<EntityId>)) -> Result<TaskId, SchedError> {
        self.rq.update_clock(self.now);
        let e = self.rq.fork(nice, Policy::Normal)?;
        let id = self.tasks.len();
        let burst = match behavior {
            Behavior::Hog => 0,
            Behavior::DutyCycle { run, .. } => run,
        };
        self.tasks.push(Task {
            entity: e,
            behavior,
            state: TaskState::Runnable,
            runtime: 0,
            burst_left: burst,
            woke_at: Some(self.now),
            max_wakeup_latency: 0,
            last_wakeup_latency: None,
        });
        if self.by_entity.len() <= e.0 as usize {
            self.by_entity.resize(e.0 as usize + 1, None);
        }
        self.by_entity[e.0 as usize] = Some(id);
        self.rq.enqueue(e, EnqueueFlags::INITIAL)?;
        if self.rq.check_preempt_wakeup(e, WakeFlags::FORK)? {
            self.schedule(observe);
        }
        Ok(id)
    }

    fn sleep(&mut self, t: TaskId, until: Option<Nanos>, observe: &mut dyn FnMut(&FairRq, Option<EntityId>)) -> Result<(), SchedError> {
        let e = self.entity_of(t)?;
        if matches!(self.tasks[t].state, TaskState::Sleeping(_)) {
            return Ok(());
        }
        self.rq.update_clock(self.now);
        self.rq.dequeue(e, DequeueFlags::SLEEP)?;
        self.tasks[t].state = TaskState::Sleeping(until);
        if self.running == Some(t) {
            self.schedule(observe);
        }
        Ok(())
    }

    fn wake(&mut self, t: TaskId, observe: &mut dyn FnMut(&FairRq, Option<EntityId>)) -> Result<(), SchedError> {
        let e = self.entity_of(t)?;
        if !matches!(self.tasks[t].state, TaskState::Sleeping(_)) {
            return Ok(());
        }
        self.rq.update_clock(self.now);
        self.rq.enqueue(e, EnqueueFlags::WAKEUP)?;
        let task = &mut self.tasks[t];
        task.state = TaskState::Runnable;
        task.woke_at = Some(self.now);
        task.last_wakeup_latency = None;
        if let Behavior::DutyCycle { run, .. } = task.behavior {
            task.burst_left = run;
        }
        if self.rq.check_preempt_wakeup(e, WakeFlags::NONE)? || self.running.is_none() {
            self.schedule(observe);
        }
        Ok(())
    }

    fn exit(&mut self, t: TaskId, observe: &mut dyn FnMut(&FairRq, Option<EntityId>)) -> Result<(), SchedError> {
        let e = self.entity_of(t)?;
        self.rq.update_clock(self.now);
        if self.rq.entity(e).is_some_and(|se| se.on_rq) {
            self.rq.dequeue(e, DequeueFlags::SLEEP | DequeueFlags::SPECIAL | DequeueFlags::DELAYED)?;
        }
        self.tasks[t].state = TaskState::Exited;
        if self.running == Some(t) {
            self.schedule(observe);
        }
        self.rq.remove_entity(e)?;
        Ok(())
    }

    /// Switch to whatever the queue picks.
    fn schedule(&mut self, observe: &mut dyn FnMut(&FairRq, Option<EntityId>)) {
        self.rq.update_clock(self.now);
        let picked = self.rq.schedule();
        observe(&self.rq, picked);
        let next = picked.and_then(|e| self.by_entity.get(e.0 as usize).copied().flatten());
        if next != self.running {
            self.switches += 1;
            if let Some(p) = self.running {
                if self.tasks[p].state == TaskState::Running {
                    self.tasks[p].state = TaskState::Runnable;
                }
            }
        }
        if let Some(n) = next {
            let now = self.now;
            let task = &mut self.tasks[n];
            task.state = TaskState::Running;
            if let Some(w) = task.woke_at.take() {
                task.max_wakeup_latency = task.max_wakeup_latency.max(now - w);
                task.last_wakeup_latency = Some(now - w);
            }
        }
        self.running = next;
    }

    /// Let `dur` of simulated time pass: the running task runs, ticks fire,
    /// duty-cycle tasks sleep and wake. `observe` sees the queue at every
    /// pick.
    pub fn run_for(&mut self, dur: Nanos, observe: &mut dyn FnMut(&FairRq, Option<EntityId>)) -> Result<(), SchedError> {
        let end = self.now.saturating_add(dur);
        if self.running.is_none() && self.rq.h_nr_runnable() > 0 {
            self.schedule(observe);
        }
        loop {
            let mut t_next = end.min(self.next_tick);
            if let Some(r) = self.running {
                if let Behavior::DutyCycle { .. } = self.tasks[r].behavior {
                    t_next = t_next.min(self.now.saturating_add(self.tasks[r].burst_left));
                }
            }
            for task in &self.tasks {
                if let TaskState::Sleeping(Some(w)) = task.state {
                    t_next = t_next.min(w.max(self.now));
                }
            }
            if let Some(r) = self.running {
                let task = &mut self.tasks[r];
                task.runtime += t_next - self.now;
                task.burst_left = task.burst_left.saturating_sub(t_next - self.now);
            }
            self.now = t_next;
            self.rq.update_clock(self.now);

            if let Some(r) = self.running {
                if let Behavior::DutyCycle { sleep, .. } = self.tasks[r].behavior {
                    if self.tasks[r].burst_left == 0 {
                        self.sleep(r, Some(self.now.saturating_add(sleep)), observe)?;
                    }
                }
            }
            for t in 0..self.tasks.len() {
                if self.tasks[t].state == TaskState::Sleeping(Some(self.now)) {
                    self.wake(t, observe)?;
                }
            }
            if self.now == self.next_tick {
                self.next_tick += self.rq.tunables().tick_nsec();
                if self.rq.tick(self.now) {
                    self.schedule(observe);
                }
            }
            if self.running.is_none() && self.rq.h_nr_runnable() > 0 {
                self.schedule(observe);
            }
            if self.now >= end {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_matches_the_queue_and_time_is_fully_used() {
        let mut sim = Sim::new(Tunables::new(1));
        let a = sim.apply(Event::Fork(Nice::ZERO, Behavior::Hog)).unwrap().unwrap();
        let b = sim.apply(Event::Fork(Nice::ZERO, Behavior::DutyCycle { run: 300_000, sleep: 900_000 })).unwrap().unwrap();
        sim.apply(Event::Run(100_000_000)).unwrap();
        let total: Nanos = sim.tasks().iter().map(|t| t.runtime).sum();
        assert_eq!(total, 100_000_000, "a hog is always there: no idle time");
        for t in [a, b] {
            assert_eq!(sim.task(t).unwrap().runtime, sim.entity(t).unwrap().sum_exec_runtime);
        }
        sim.apply(Event::Exit(a)).unwrap();
        assert!(sim.entity(a).is_none());
        sim.apply(Event::Run(10_000_000)).unwrap();
        assert!(sim.task(b).unwrap().runtime > 0);
        assert!(sim.apply(Event::Wake(a)).is_err(), "exited tasks take no events");
    }

    #[test]
    fn same_script_same_schedule() {
        let run = || {
            let mut sim = Sim::new(Tunables::new(2));
            for n in [-3, 0, 4] {
                sim.apply(Event::Fork(Nice::clamped(n), Behavior::DutyCycle { run: (700_000 + n * 1000) as u64, sleep: 1_300_000 })).unwrap();
            }
            sim.apply(Event::Run(50_000_000)).unwrap();
            (sim.switches(), sim.tasks().iter().map(|t| t.runtime).collect::<Vec<_>>())
        };
        assert_eq!(run(), run());
    }
}
