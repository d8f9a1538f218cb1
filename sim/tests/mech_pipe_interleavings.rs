//! Pipes under seeded interleavings on 4 simulated CPUs, with spurious
//! wakeups and preemption at the wait points injected
//! (`fault=spurious_wake,preempt_points`): several writers and readers
//! share one pipe of two bytes, so both ends have several tasks queued at
//! once (writers waiting for room, readers for bytes) and the close wakes
//! the readers left; beside them two pairs ping-pong a byte through two
//! pipes (one pair on one CPU, one across two), where every wakeup is the
//! only one coming: a lost one leaves both asleep for good. For every seed:
//! the run finishes (a lost wakeup leaves its waiter asleep and the run idle
//! until its end), the readers got every byte written, each once, and the
//! pairs did all their rounds.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::engine::queue::SplitMix64;
use fairway_sim::platform::{self, SimConfig, SIM_FAULTS};
use fairway_sim::Machine;
use mech::sync::pipe::Pipe;
use mech::thread::Spawn;

const WRITERS: u64 = 3;
const READERS: u64 = 3;
/// Bytes each writer writes.
const BYTES: u64 = 400;
const SEEDS: u64 = 24;
/// Round trips of each ping-pong pair.
const ROUNDS: u64 = 300;

fn one_run(seed: u64) -> String {
    let machine = Machine::from_smp("4", 1).unwrap();
    let cfg = SimConfig { seed, sched_debug: true, until_ns: 10_000_000_000, faults: Some((SIM_FAULTS, seed)), ..SimConfig::default() };
    // Per reader: the bytes it read and their sum (each writer writes its
    // own index + 1, so the sum tells whose bytes arrived).
    let got: Arc<Vec<(AtomicU64, AtomicU64)>> = Arc::new((0..READERS).map(|_| (AtomicU64::new(0), AtomicU64::new(0))).collect());
    let g = got.clone();
    let rounds: Arc<Vec<AtomicU64>> = Arc::new((0..2).map(|_| AtomicU64::new(0)).collect());
    let rounds_done = rounds.clone();
    let body = move || {
        mech::entry::workload_starts();
        let pipe = Arc::new(Pipe::new(2));
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            let pipe = pipe.clone();
            let mut rng = SplitMix64::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (w + 1));
            writers.push(
                mech::thread::spawn(Spawn::new("writer").on_cpu(w as usize % 4), move || {
                    let mut left = BYTES;
                    while left > 0 {
                        let n = (1 + rng.next_u64() % 3).min(left);
                        pipe.write(&vec![w as u8 + 1; n as usize], rng.next_u64().is_multiple_of(2));
                        left -= n;
                        match rng.next_u64() % 4 {
                            0 => platform::burn_ns(5_000 + rng.next_u64() % 200_000),
                            1 => mech::schedule::yield_now(),
                            _ => {}
                        }
                    }
                })
                .unwrap(),
            );
        }
        let mut readers = Vec::new();
        for r in 0..READERS {
            let (pipe, g) = (pipe.clone(), g.clone());
            let mut rng = SplitMix64::new(seed.wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (r + 1));
            readers.push(
                mech::thread::spawn(Spawn::new("reader").on_cpu((r as usize + 2) % 4), move || {
                    let mut buf = [0u8; 3];
                    loop {
                        let want = 1 + rng.next_u64() as usize % 3;
                        let n = pipe.read(&mut buf[..want]);
                        if n == 0 {
                            break;
                        }
                        g[r as usize].0.fetch_add(n as u64, Ordering::Relaxed);
                        g[r as usize].1.fetch_add(buf[..n].iter().map(|&b| u64::from(b)).sum::<u64>(), Ordering::Relaxed);
                        if rng.next_u64().is_multiple_of(4) {
                            platform::burn_ns(5_000 + rng.next_u64() % 200_000);
                        }
                    }
                })
                .unwrap(),
            );
        }
        // The pairs: pair 0 on CPU 1, pair 1 across CPUs 2 and 3.
        let mut pairs = Vec::new();
        for (p, (cpu_a, cpu_b)) in [(1, 1), (2, 3)].into_iter().enumerate() {
            let (ping, pong) = (Arc::new(Pipe::new(1)), Arc::new(Pipe::new(1)));
            let (ping_b, pong_b, done) = (ping.clone(), pong.clone(), rounds_done.clone());
            let mut rng = SplitMix64::new(seed ^ (0x100 + p as u64));
            pairs.push(
                mech::thread::spawn(Spawn::new("pong").on_cpu(cpu_b), move || {
                    let mut x = [0u8; 1];
                    for _ in 0..ROUNDS {
                        ping_b.read_exact(&mut x);
                        if rng.next_u64().is_multiple_of(8) {
                            platform::burn_ns(1_000 + rng.next_u64() % 50_000);
                        }
                        pong_b.write(&x, true);
                    }
                })
                .unwrap(),
            );
            pairs.push(
                mech::thread::spawn(Spawn::new("ping").on_cpu(cpu_a), move || {
                    let mut x = [1u8; 1];
                    for _ in 0..ROUNDS {
                        ping.write(&x, true);
                        pong.read_exact(&mut x);
                        done[p].fetch_add(1, Ordering::Relaxed);
                    }
                })
                .unwrap(),
            );
        }
        for t in writers.iter().chain(&pairs) {
            mech::thread::join(t);
        }
        pipe.close();
        for t in &readers {
            mech::thread::join(t);
        }
        mech::entry::workload_done();
    };
    let report = platform::run(&machine, cfg, body);
    let mut out = format!("end={} events={}\n", report.end, report.events);
    if report.end != "finished" {
        eprintln!("{}", platform::dump());
    }
    let bytes: u64 = got.iter().map(|g| g.0.load(Ordering::Relaxed)).sum();
    let sum: u64 = got.iter().map(|g| g.1.load(Ordering::Relaxed)).sum();
    let readers_busy = got.iter().filter(|g| g.0.load(Ordering::Relaxed) > 0).count();
    out += &format!("bytes={bytes} sum={sum} readers_busy={readers_busy}\n");
    for (p, r) in rounds.iter().enumerate() {
        out += &format!("pair={p} rounds={}\n", r.load(Ordering::Relaxed));
    }
    for l in report.output.iter().filter(|l| l.starts_with("@fw faults")) {
        out += l;
        out += "\n";
    }
    out
}

#[test]
fn pipes_under_injected_faults_lose_no_wakeup_and_no_byte() {
    if let Some(arg) = common::child_arg() {
        common::child_result(&one_run(arg.parse().expect("a seed")));
        return;
    }
    let name = "pipes_under_injected_faults_lose_no_wakeup_and_no_byte";
    let want_sum: u64 = (1..=WRITERS).map(|w| w * BYTES).sum();
    let mut resleeps = 0u64;
    for seed in 0..SEEDS {
        let out = common::in_child(name, &seed.to_string());
        assert!(out.starts_with("end=finished "), "seed {seed}: {out}");
        assert!(out.contains(&format!("bytes={} sum={want_sum} ", WRITERS * BYTES)), "seed {seed}: {out}");
        for p in 0..2 {
            assert!(out.contains(&format!("pair={p} rounds={ROUNDS}\n")), "seed {seed}, pair {p}: {out}");
        }
        resleeps += out
            .split_whitespace()
            .find_map(|w| w.strip_prefix("spurious_resleeps="))
            .unwrap_or_else(|| panic!("seed {seed}: no fault counts: {out}"))
            .parse::<u64>()
            .unwrap();
    }
    // The injected wakeups reached the pipe's waiters while there was
    // nothing to read or no room: the re-check and the sleep again ran.
    assert!(resleeps > 0, "no waiter slept again after a spurious wakeup in {SEEDS} seeds");
}
