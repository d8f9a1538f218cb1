//! `workload=storm[,threads=64][,ms=5000]`: threads spread over every CPU
//! doing short sleeps, semaphore hand-offs, pipe ping-pong with a partner and
//! increments of one counter behind a sleeping mutex shared by all, for a
//! fixed time. Counts every wait and every wakeup that ends one, so the
//! scenario can check that none was lost and every thread finished.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::params::{Param, num, MAX_MS, MAX_THREADS};
use crate::cmdline::Workload;
use mech::sync::{pipe::Pipe, Mutex, Semaphore};
use mech::thread::Spawn;

struct Pair {
    /// Each side's turn token.
    sem: [Semaphore; 2],
    /// a -> b and b -> a.
    pipe: [Pipe; 2],
}

struct Counts {
    sleeps: AtomicU64,
    sem_downs: AtomicU64,
    sem_ups: AtomicU64,
    pipe_sent: AtomicU64,
    pipe_received: AtomicU64,
    rounds: AtomicU64,
    finished: AtomicU64,
    /// Incremented once per sleep, under the shared sleeping mutex.
    locked: Mutex<u64>,
}

/// What `workload=storm` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("threads", 2, MAX_THREADS, 64, "threads, in partner pairs (an even number)"),
    num("ms", 1, MAX_MS, 5000, "how long the threads run (ms)"),
];

pub fn run(w: &Workload) -> bool {
    let threads = super::even_threads(w, "partner pairs");
    let ms = w.num("ms");
    if !super::budget::fits(w, &["threads"], threads as u64, 0) {
        return false;
    }
    let cpus = super::cpus();
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Counts {
        sleeps: AtomicU64::new(0),
        sem_downs: AtomicU64::new(0),
        sem_ups: AtomicU64::new(0),
        pipe_sent: AtomicU64::new(0),
        pipe_received: AtomicU64::new(0),
        rounds: AtomicU64::new(0),
        finished: AtomicU64::new(0),
        locked: Mutex::new(0),
    });
    let mut tasks = Vec::new();
    for p in 0..threads / 2 {
        let pair = Arc::new(Pair {
            sem: [Semaphore::new(0), Semaphore::new(0)],
            pipe: [Pipe::new(64), Pipe::new(64)],
        });
        for side in 0..2 {
            let (pair, stop, counts) = (pair.clone(), stop.clone(), counts.clone());
            let cpu = cpus[(2 * p + side) % cpus.len()];
            let mut name = alloc::string::String::from("storm");
            name.push_str(if side == 0 { "a" } else { "b" });
            let t = super::spawn(Spawn::new(&name).on_cpu(cpu), move || {
                worker(&pair, side, &stop, &counts, (p * 2 + side) as u64)
            });
            tasks.extend(t);
        }
    }
    mech::thread::sleep_ns(ms * 1_000_000);
    stop.store(true, Ordering::Release);
    super::join_all(&tasks);
    let c = |a: &AtomicU64| a.load(Ordering::Relaxed);
    mech::record!(
        "storm",
        "threads={} spawned={} finished={} rounds={} sleeps={} sem_downs={} sem_ups={} pipe_sent={} pipe_received={} mutex_count={}",
        threads,
        tasks.len(),
        c(&counts.finished),
        c(&counts.rounds),
        c(&counts.sleeps),
        c(&counts.sem_downs),
        c(&counts.sem_ups),
        c(&counts.pipe_sent),
        c(&counts.pipe_received),
        *counts.locked.lock()
    );
    if mech::debug::enabled() {
        mech::debug::check_global();
    }
    tasks.len() == threads && c(&counts.finished) == threads as u64
}

/// One side of a pair. Both sides run the same number of rounds (side 0
/// decides when to stop and tells side 1 through the last message), so every
/// down is matched by an up and every byte sent is received.
fn worker(pair: &Pair, side: usize, stop: &AtomicBool, counts: &Counts, seed: u64) {
    let other = 1 - side;
    let mut rng = super::Rng::new(seed + 1);
    let mut buf = [0u8; 8];
    loop {
        // Side 0 leads each round: it says whether the round happens.
        let go = if side == 0 {
            let go = !stop.load(Ordering::Acquire);
            pair.pipe[0].write(&[go as u8; 8], true);
            counts.pipe_sent.fetch_add(8, Ordering::Relaxed);
            go
        } else {
            let n = pair.pipe[0].read_exact(&mut buf);
            counts.pipe_received.fetch_add(n as u64, Ordering::Relaxed);
            buf[0] == 1
        };
        if !go {
            break;
        }
        // A short sleep, then a semaphore hand-off in both directions.
        mech::thread::sleep_ns(20_000 + rng.below(200_000));
        counts.sleeps.fetch_add(1, Ordering::Relaxed);
        {
            let mut n = counts.locked.lock();
            let v = *n;
            // Widen the critical section so that contenders really sleep on it.
            mech::thread::sleep_ns(1_000);
            *n = v + 1;
        }
        pair.sem[other].up();
        counts.sem_ups.fetch_add(1, Ordering::Relaxed);
        pair.sem[side].down();
        counts.sem_downs.fetch_add(1, Ordering::Relaxed);
        // Pipe reply from side 1.
        if side == 1 {
            pair.pipe[1].write(&[7u8; 8], true);
            counts.pipe_sent.fetch_add(8, Ordering::Relaxed);
        } else {
            let n = pair.pipe[1].read_exact(&mut buf);
            counts.pipe_received.fetch_add(n as u64, Ordering::Relaxed);
            counts.rounds.fetch_add(1, Ordering::Relaxed);
        }
    }
    counts.finished.fetch_add(1, Ordering::Relaxed);
}
