//! A TEST DOUBLE for the scheduler: per-CPU FIFO queues, a round-robin tick,
//! and idle CPUs that steal from others. It is not fairway's scheduler and
//! models none of its policy; it exists so that the engine's own contract
//! (interrupts, timers, IPIs, switch and migration costs, determinism, speed)
//! can be tested before the scheduler mechanism runs on the engine.

use std::collections::VecDeque;

use super::core::{Kernel, PlatformOps, PrevState};
use super::task::TaskId;

/// Picks the CPU a woken task goes to: (task, waking CPU, task's last CPU if
/// it ran) -> CPU.
pub type Placement = Box<dyn FnMut(TaskId, usize, Option<usize>) -> usize>;

/// The FIFO stand-in scheduler (a test double).
pub struct FifoTestDouble {
    queues: Vec<VecDeque<TaskId>>,
    running: Vec<Option<TaskId>>,
    last_cpu: Vec<Option<usize>>,
    /// Round-robin period while a CPU runs a task (None: no tick).
    pub tick_ns: Option<u64>,
    /// An idle CPU scans the others and takes the first queued task.
    pub steal: bool,
    place: Placement,
    /// Tasks taken by idle CPUs from another CPU's queue.
    pub steals: u64,
    /// Tasks in all queues (an idle CPU scans only when some are).
    queued: usize,
}

impl FifoTestDouble {
    /// `nr_cpus` queues; woken tasks go where `place` says.
    pub fn new(nr_cpus: usize, place: Placement) -> FifoTestDouble {
        FifoTestDouble {
            queues: vec![VecDeque::new(); nr_cpus],
            running: vec![None; nr_cpus],
            last_cpu: Vec::new(),
            tick_ns: None,
            steal: false,
            place,
            steals: 0,
            queued: 0,
        }
    }

    /// Woken tasks go back to their last CPU (the waker's for a new task).
    pub fn last_cpu_placement() -> Placement {
        Box::new(|_, waker, last| last.unwrap_or(waker))
    }

    fn enqueue(&mut self, ops: &mut PlatformOps, t: TaskId) -> bool {
        if self.last_cpu.len() <= t.0 {
            self.last_cpu.resize(t.0 + 1, None);
        }
        let cpu = (self.place)(t, ops.cpu(), self.last_cpu[t.0]);
        self.queues[cpu].push_back(t);
        self.queued += 1;
        if cpu != ops.cpu() {
            // Another CPU: tell it (it reschedules if it has a queue).
            ops.send_ipi(cpu);
        }
        // A FIFO never preempts the waker.
        false
    }
}

impl Kernel for FifoTestDouble {
    fn wake_up_new(&mut self, ops: &mut PlatformOps, task: TaskId) {
        self.enqueue(ops, task);
    }

    fn wake_up(&mut self, ops: &mut PlatformOps, task: TaskId) -> bool {
        self.enqueue(ops, task)
    }

    fn schedule(&mut self, ops: &mut PlatformOps, prev: Option<(TaskId, PrevState)>) -> Option<TaskId> {
        let cpu = ops.cpu();
        if let Some((p, PrevState::Runnable)) = prev {
            self.queues[cpu].push_back(p);
            self.queued += 1;
        }
        let mut next = self.queues[cpu].pop_front();
        if next.is_none() && self.steal && self.queued > 0 {
            let n = ops.nr_cpus();
            let mut scanned = 0;
            for i in 1..n {
                let other = (cpu + i) % n;
                scanned += 1;
                if let Some(t) = self.queues[other].pop_front() {
                    next = Some(t);
                    self.steals += 1;
                    break;
                }
            }
            ops.charge_balance_scan(scanned);
        }
        self.running[cpu] = next;
        if let Some(t) = next {
            self.queued -= 1;
            self.last_cpu[t.0] = Some(cpu);
            if let Some(tick) = self.tick_ns {
                let at = ops.now_ns() + tick;
                ops.arm_timer(at);
            }
        } else if self.tick_ns.is_some() {
            ops.cancel_timer();
        }
        next
    }

    fn timer_interrupt(&mut self, ops: &mut PlatformOps) -> bool {
        let cpu = ops.cpu();
        if let (Some(tick), Some(_)) = (self.tick_ns, self.running[cpu]) {
            let at = ops.now_ns() + tick;
            ops.arm_timer(at);
        }
        !self.queues[cpu].is_empty()
    }

    fn resched_ipi(&mut self, ops: &mut PlatformOps) -> bool {
        !self.queues[ops.cpu()].is_empty()
    }
}
