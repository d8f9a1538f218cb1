//! Cost of the run-queue's hot operations at 10 to 10,000 runnable
//! entities: enqueue, dequeue, the EEVDF pick (as it happens in a busy
//! queue, and forced to descend the tree), and a full switch
//! (tick + pick + put_prev + set_next).
//!
//! State: `n` entities of mixed nice levels (-10..=9, deterministic), run
//! through `2n` switches at 100 µs so vruntimes, deadlines and lags spread
//! as in a busy queue. Enqueue/dequeue are timed in chunks of
//! `k = clamp(n/2, 1, 256)` operations (the queue size moves between
//! `n - k` and `n`) so the clock reads cost under 5% of an operation.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sched::{DequeueFlags, EnqueueFlags, EntityId, FairRq, Nice, Policy, Tunables};

const SIZES: [usize; 4] = [10, 100, 1_000, 10_000];

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// A busy queue of `n` entities, nobody running; returns the clock.
fn busy_queue(n: usize) -> (FairRq, Vec<EntityId>, u64) {
    let mut rq = FairRq::new(Tunables::new(8));
    let mut rng = Lcg(n as u64);
    let ids: Vec<_> = (0..n)
        .map(|_| {
            let id = rq.fork(Nice::clamped(rng.next() as i32 % 20 - 10), Policy::Normal).unwrap();
            rq.enqueue(id, EnqueueFlags::INITIAL).unwrap();
            id
        })
        .collect();
    let mut now = 0;
    for _ in 0..2 * n {
        now += 100_000;
        rq.update_clock(now);
        rq.schedule();
    }
    rq.put_prev();
    (rq, ids, now)
}

/// A queue whose earliest-deadline entity is not eligible, so the pick
/// cannot take the leftmost shortcut and must descend the tree: `n`
/// entities placed at V, plus one with a 0.1 ms request (earliest
/// deadline) that has just run 10 µs past V.
fn descent_queue(n: usize) -> FairRq {
    let mut rq = FairRq::new(Tunables::new(8));
    let mut rng = Lcg(n as u64);
    for _ in 0..n {
        let id = rq.fork(Nice::clamped(rng.next() as i32 % 20 - 10), Policy::Normal).unwrap();
        rq.enqueue(id, EnqueueFlags::INITIAL).unwrap();
    }
    let x = rq.fork(Nice::ZERO, Policy::Normal).unwrap();
    rq.set_slice(x, 100_000).unwrap();
    rq.enqueue(x, EnqueueFlags::INITIAL).unwrap();
    rq.set_curr(x).unwrap();
    rq.update_curr_at(10_000);
    rq.put_prev();
    assert!(!rq.entity_eligible(x));
    assert_ne!(rq.pick_eevdf_peek(), Some(x));
    rq
}

fn chunk(n: usize) -> usize {
    (n / 2).clamp(1, 256)
}

/// Time `op` on chunks of entities prepared by `prep` (untimed).
fn timed_chunks(
    iters: u64,
    rq: &mut FairRq,
    ids: &[EntityId],
    rng: &mut Lcg,
    prep: fn(&mut FairRq, EntityId),
    op: fn(&mut FairRq, EntityId),
) -> Duration {
    let k = chunk(ids.len());
    let mut total = Duration::ZERO;
    let mut left = iters;
    let mut picked = Vec::with_capacity(k);
    while left > 0 {
        let m = (left as usize).min(k);
        picked.clear();
        while picked.len() < m {
            let id = ids[rng.next() as usize % ids.len()];
            if !picked.contains(&id) {
                picked.push(id);
            }
        }
        for &id in &picked {
            prep(rq, id);
        }
        let t = Instant::now();
        for &id in &picked {
            op(rq, id);
        }
        total += t.elapsed();
        for &id in &picked {
            // undo, so the queue keeps its size
            if rq.entity(id).is_some_and(|se| se.on_rq) {
                let _ = rq.dequeue(id, DequeueFlags::NONE);
            }
            let _ = rq.enqueue(id, EnqueueFlags::NONE);
        }
        left -= m as u64;
    }
    total
}

fn do_enqueue(rq: &mut FairRq, id: EntityId) {
    black_box(rq.enqueue(id, EnqueueFlags::NONE)).unwrap();
}

fn do_dequeue(rq: &mut FairRq, id: EntityId) {
    black_box(rq.dequeue(id, DequeueFlags::NONE)).unwrap();
}

fn out(rq: &mut FairRq, id: EntityId) {
    rq.dequeue(id, DequeueFlags::NONE).unwrap();
}

fn nothing(_: &mut FairRq, _: EntityId) {}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("enqueue");
    for n in SIZES {
        let (mut rq, ids, _) = busy_queue(n);
        let mut rng = Lcg(1);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| timed_chunks(iters, &mut rq, &ids, &mut rng, out, do_enqueue))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("dequeue");
    for n in SIZES {
        let (mut rq, ids, _) = busy_queue(n);
        let mut rng = Lcg(2);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter_custom(|iters| timed_chunks(iters, &mut rq, &ids, &mut rng, nothing, do_dequeue))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("pick");
    for n in SIZES {
        let (mut rq, _ids, _) = busy_queue(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| b.iter(|| black_box(rq.pick_eevdf_peek())));
    }
    g.finish();

    let mut g = c.benchmark_group("pick_descent");
    for n in SIZES {
        let mut rq = descent_queue(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| b.iter(|| black_box(rq.pick_eevdf_peek())));
    }
    g.finish();

    let mut g = c.benchmark_group("tick_and_switch");
    for n in SIZES {
        let (mut rq, _ids, mut now) = busy_queue(n);
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                now += 100_000;
                rq.tick(now);
                black_box(rq.schedule())
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
