//! Events per second of fairway's mechanism on the simulator
//! (`fairway_sim::platform`) on the schbench-shaped load of `engine_speed`:
//! message tasks each waking their workers through the mechanism's wait
//! queues, workers burning a think time and the last of a group waking its
//! message task. `cargo run --release -p fairway-sim --example mech_speed --
//! [PRESET] [SIM_MS] [MESSAGE_TASKS] [WORKERS_EACH] [THINK_US]`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use fairway_sim::engine::speed::process_cpu_s;
use fairway_sim::platform::{self, burn_ns, SimConfig};
use mech::sync::WaitQueue;
use mech::thread::Spawn;

struct Group {
    /// Workers still busy with the current request.
    left: AtomicUsize,
    msg: WaitQueue,
    /// Each worker's pending wakeup (a token) and its queue.
    tokens: Vec<AtomicUsize>,
    workers: Vec<WaitQueue>,
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: u64| a.get(i).map_or(d, |s| s.parse().unwrap_or_else(|_| panic!("argument {}: not a number: {s}", i + 1)));
    let preset = a.first().cloned().unwrap_or_else(|| "dd-2024".into());
    let machine = fairway_sim::presets::machine(&preset, 0).unwrap_or_else(|e| panic!("{e}"));
    let sim_ns = arg(1, 100) * 1_000_000;
    let (messages, workers, think_ns) = (arg(2, 16) as usize, arg(3, 128) as usize, arg(4, 20) * 1_000);
    let requests = Arc::new(AtomicU64::new(0));
    let r = requests.clone();
    let n = machine.nr_cpus();
    let init = move || {
        for m in 0..messages {
            let g = Arc::new(Group {
                left: AtomicUsize::new(0),
                msg: WaitQueue::new(),
                tokens: (0..workers).map(|_| AtomicUsize::new(0)).collect(),
                workers: (0..workers).map(|_| WaitQueue::new()).collect(),
            });
            for w in 0..workers {
                let (g, r) = (g.clone(), r.clone());
                let cpu = (m * (workers + 1) + 1 + w) % n;
                mech::thread::spawn(Spawn::new("worker").on_cpu(cpu), move || loop {
                    g.workers[w].wait_until(|| g.tokens[w].fetch_update(Ordering::SeqCst, Ordering::SeqCst, |t| t.checked_sub(1)).is_ok());
                    burn_ns(think_ns);
                    r.fetch_add(1, Ordering::Relaxed);
                    if g.left.fetch_sub(1, Ordering::SeqCst) == 1 {
                        g.msg.wake_one();
                    }
                })
                .unwrap();
            }
            mech::thread::spawn(Spawn::new("message").on_cpu((m * (workers + 1)) % n), move || loop {
                g.left.store(workers, Ordering::SeqCst);
                for w in 0..workers {
                    g.tokens[w].fetch_add(1, Ordering::SeqCst);
                    g.workers[w].wake_one();
                }
                g.msg.wait_until(|| g.left.load(Ordering::SeqCst) == 0);
            })
            .unwrap();
        }
        // The load runs until the time limit.
        mech::thread::sleep_ns(u64::MAX / 4);
    };
    let cpu0 = process_cpu_s();
    let rep = platform::run(&machine, SimConfig { seed: 1, until_ns: sim_ns, ..SimConfig::default() }, init);
    let host = process_cpu_s() - cpu0;
    let switches: u64 = rep.cpus.iter().map(|c| c.switches).sum();
    println!(
        "{preset}: {n} CPUs, {} tasks, {:.3} s simulated ({}): {} events, {} requests, {} switches; digest {:016x}\n\
         process CPU time {:.2} s: {:.3} M events/s, {:.1} host CPU s per simulated s",
        messages * (workers + 1) + 1,
        rep.end_ns as f64 / 1e9,
        rep.end,
        rep.events,
        requests.load(Ordering::Relaxed),
        switches,
        rep.digest,
        host,
        rep.events as f64 / host / 1e6,
        host / (rep.end_ns as f64 / 1e9),
    );
}
