//! The engine's speed on a schbench-shaped load: message tasks each waking
//! their workers, workers burning a think time and waking the message task
//! back when the last of its group is done. The scheduler is the FIFO test
//! double (with its tick and stealing), so this measures the engine alone:
//! the event queue, interrupts, steps and coroutine switches.
//!
//! `cargo run --release -p fairway-sim --example engine_speed` prints it for
//! `dd-2024` (docs/SIMULATOR.md, "Speed").

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use super::fifo_double::FifoTestDouble;
use super::{Config, Engine, TaskId};
use crate::machine::Machine;

/// The load.
#[derive(Clone, Copy, Debug)]
pub struct SpeedLoad {
    pub message_tasks: usize,
    pub workers_per_message: usize,
    /// Each worker's CPU time per request.
    pub think_ns: u64,
    /// Virtual time to run.
    pub sim_ns: u64,
    /// The FIFO double's round-robin tick.
    pub tick_ns: u64,
}

/// What a run did and how fast.
#[derive(Clone, Copy, Debug)]
pub struct SpeedReport {
    pub cpus: usize,
    pub tasks: usize,
    pub events: u64,
    pub requests: u64,
    pub switches: u64,
    pub sim_ns: u64,
    pub host_s: f64,
    pub digest: u64,
}

impl SpeedReport {
    pub fn events_per_s(&self) -> f64 {
        self.events as f64 / self.host_s
    }

    /// Host seconds per simulated second.
    pub fn slowdown(&self) -> f64 {
        self.host_s / (self.sim_ns as f64 / 1e9)
    }
}

/// Run `load` on `machine` with `cfg` and time it.
pub fn run(machine: Machine, load: SpeedLoad, cfg: Config) -> SpeedReport {
    let n = machine.nr_cpus();
    let mut fifo = FifoTestDouble::new(n, FifoTestDouble::last_cpu_placement());
    fifo.steal = true;
    fifo.tick_ns = Some(load.tick_ns);
    let mut e = Engine::new(machine, fifo, cfg);
    let requests = Rc::new(Cell::new(0u64));
    let group = load.workers_per_message + 1;
    for m in 0..load.message_tasks {
        let first = m * group;
        let msg = TaskId(first);
        let workers: Vec<TaskId> = (1..group).map(|w| TaskId(first + w)).collect();
        let left = Rc::new(Cell::new(0usize));
        let l = left.clone();
        let id = e.spawn("message", first % n, move |ctx| loop {
            l.set(workers.len());
            for &w in &workers {
                ctx.wake(w);
            }
            while l.get() > 0 {
                ctx.block();
            }
        });
        assert_eq!(id, msg);
        for w in 1..group {
            let (left, requests) = (left.clone(), requests.clone());
            let think = load.think_ns;
            e.spawn("worker", (first + w) % n, move |ctx| loop {
                ctx.block();
                ctx.burn(think);
                requests.set(requests.get() + 1);
                left.set(left.get() - 1);
                if left.get() == 0 {
                    ctx.wake(msg);
                }
            });
        }
    }
    let start = Instant::now();
    e.run_until(load.sim_ns);
    let host_s = start.elapsed().as_secs_f64();
    SpeedReport {
        cpus: n,
        tasks: e.nr_tasks(),
        events: e.events(),
        requests: requests.get(),
        switches: (0..n).map(|c| e.cpu(c).stats.switches).sum(),
        sim_ns: load.sim_ns,
        host_s,
        digest: e.digest(),
    }
}

/// This process's user + system CPU time in seconds (Linux
/// `/proc/self/stat`, clock ticks of 1/100 s; 0 where it cannot be read).
/// Speed figures use it, not wall time: the host is shared, and wall time
/// also counts the other processes' load.
pub fn process_cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |x| x.1);
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of the line (utime, stime); after the name, indexes 11 and 12.
    (tick(11) + tick(12)) / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::CostModel;

    #[test]
    fn a_small_schbench_shaped_run_makes_progress_and_repeats() {
        let load = SpeedLoad { message_tasks: 4, workers_per_message: 15, think_ns: 20_000, sim_ns: 2_000_000, tick_ns: 1_000_000 };
        let cfg = Config { seed: 3, cost: CostModel::ICOUNT, ..Config::default() };
        let a = run(crate::presets::machine("wake-2005", 0).unwrap(), load, cfg.clone());
        // 64 tasks on 4 CPUs for 2 ms of 20 us requests: at most 4 CPUs x 2 ms / 20 us.
        assert!(a.requests > 100 && a.requests <= 400, "{a:?}");
        let b = run(crate::presets::machine("wake-2005", 0).unwrap(), load, cfg);
        assert_eq!((a.events, a.requests, a.digest), (b.events, b.requests, b.digest));
    }
}
