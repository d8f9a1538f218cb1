//! Events per second of the simulator's engine on a schbench-shaped load
//! (`fairway_sim::engine::speed`): `cargo run --release -p fairway-sim
//! --example engine_speed -- [PRESET] [SIM_MS] [MESSAGE_TASKS] [WORKERS_EACH] [THINK_US]`.

use fairway_sim::engine::speed::{process_cpu_s, run, SpeedLoad};
use fairway_sim::engine::{Config, CostModel};

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: u64| a.get(i).map_or(d, |s| s.parse().unwrap_or_else(|_| panic!("argument {}: not a number: {s}", i + 1)));
    let preset = a.first().cloned().unwrap_or_else(|| "dd-2024".into());
    let machine = fairway_sim::presets::machine(&preset, 0).unwrap_or_else(|e| panic!("{e}"));
    let load = SpeedLoad {
        sim_ns: arg(1, 1_000) * 1_000_000,
        message_tasks: arg(2, 16) as usize,
        workers_per_message: arg(3, 128) as usize,
        think_ns: arg(4, 20) * 1_000,
        tick_ns: 1_000_000,
    };
    let cpu0 = process_cpu_s();
    let r = run(machine, load, Config { seed: 1, cost: CostModel::ICOUNT, ..Config::default() });
    println!(
        "{preset}: {} CPUs, {} tasks, {:.3} s simulated in {:.2} s of host time: {} events ({:.2} M events/s), \
         {} requests, {} switches; {:.1} host s per simulated s; digest {:016x}\n\
         process CPU time {:.2} s: {:.2} M events/s, {:.1} host CPU s per simulated s",
        r.cpus,
        r.tasks,
        r.sim_ns as f64 / 1e9,
        r.host_s,
        r.events,
        r.events_per_s() / 1e6,
        r.requests,
        r.switches,
        r.slowdown(),
        r.digest,
        process_cpu_s() - cpu0,
        r.events as f64 / (process_cpu_s() - cpu0) / 1e6,
        (process_cpu_s() - cpu0) / (r.sim_ns as f64 / 1e9),
    );
}
