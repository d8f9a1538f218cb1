//! Instruction counts of the run-queue's hot paths, as the kernel drives
//! them, for callgrind:
//!
//! ```sh
//! cargo build --release -p fairway-sched --example hotpath
//! B=target/x86_64-unknown-linux-gnu/release/examples/hotpath
//! for s in pipe pipe-nice5 pipe3 yield tick pipe-c pipe-nice5-c pipe3-c pipe-k cross-k; do
//!     valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$s $B $s
//!     callgrind_annotate --inclusive=yes /tmp/cg.$s | grep 'hotpath::op_'
//! done
//! ```
//!
//! Every operation is called through an `#[inline(never)]` wrapper `op_*`,
//! so callgrind's inclusive count of a wrapper divided by `ITERS` (its call
//! count) is the exact instruction count of one operation, plus the
//! wrapper's own few instructions (call, return, `black_box`, unwrap:
//! about 5-10). Run one scenario per process (the argument), since the
//! wrappers are shared. `op_schedule` in `tick` is called only when the
//! tick asks for a reschedule (the count is printed); divide by that.
//!
//! Scenarios (one CPU's tunables, nice 0, default features):
//! - `pipe`: two entities ping-pong as through a pipe: the running one
//!   wakes the other (`update_clock`, `enqueue(WAKEUP)`,
//!   `check_preempt_wakeup(SYNC)`), then blocks (`dequeue(SLEEP)`,
//!   `schedule()`), 2 µs of running per half round trip. Depending on
//!   eligibility the sleep could be delayed (DELAY_DEQUEUE) and the wakeup
//!   then requeue in place, exactly as in the kernel (the count is printed).
//! - `pipe-nice5`: the same at nice 5 (weight 335: `calc_delta_fair`
//!   divides instead of taking the nice-0 shortcut).
//! - `pipe3`: the same beside a third, always-runnable entity, which the
//!   pick chooses when the waker blocks (its sleep is then delayed); it
//!   runs 2 µs and the partner is switched in with `set_curr`.
//! - `yield`: two always-runnable entities yield to each other
//!   (`update_clock`, `yield_curr`, `schedule`).
//! - `tick`: three always-runnable entities under a 1 ms tick
//!   (`tick(now)`, and `schedule()` when it asks for a reschedule).
//! - `pipe-c`, `pipe-nice5-c`, `pipe3-c`: the pipe scenarios through the
//!   combined calls (`update_clock`, `wake(WAKEUP, SYNC)`,
//!   `block_and_schedule(SLEEP)`); each prints the same state digest as
//!   its sequential twin run alone.
//! - `pipe-k`, `cross-k`: the kernel's own sequences of crate calls for its
//!   same-CPU and cross-CPU pipe (see [`pipe_k`] and [`cross_k`]): time
//!   passes between the wakeup and the block, so the same-CPU waker's sleep
//!   is delayed and its next wakeup requeues it; across CPUs each task is
//!   alone, woken onto an idle queue and leaving it empty. Per half trip
//!   the sum of all `op_*` counts, each divided by `ITERS`.
//!
//! It also prints a digest of the final states (entities, V sums, PELT,
//! counters), so two builds can be compared for identical behaviour.

use std::hint::black_box;

use sched::{DequeueFlags, EnqueueFlags, EntityId, FairRq, Nice, Policy, Tunables, WakeFlags};

const ITERS: u64 = 20_000;

#[inline(never)]
fn op_update_clock(rq: &mut FairRq, now: u64) {
    rq.update_clock(black_box(now));
}
#[inline(never)]
fn op_enqueue_wakeup(rq: &mut FairRq, id: EntityId) {
    black_box(rq.enqueue(black_box(id), EnqueueFlags::WAKEUP)).unwrap();
}
#[inline(never)]
fn op_check_preempt(rq: &mut FairRq, id: EntityId) -> bool {
    black_box(rq.check_preempt_wakeup(black_box(id), WakeFlags::SYNC)).unwrap()
}
#[inline(never)]
fn op_dequeue_sleep(rq: &mut FairRq, id: EntityId) {
    black_box(rq.dequeue(black_box(id), DequeueFlags::SLEEP)).unwrap();
}
#[inline(never)]
fn op_schedule(rq: &mut FairRq) -> Option<EntityId> {
    black_box(rq.schedule())
}

#[inline(never)]
fn op_wake(rq: &mut FairRq, id: EntityId) -> bool {
    black_box(rq.wake(black_box(id), EnqueueFlags::WAKEUP, WakeFlags::SYNC)).unwrap()
}
#[inline(never)]
fn op_wake_delayed(rq: &mut FairRq, id: EntityId) -> bool {
    black_box(rq.wake_delayed(black_box(id), WakeFlags::SYNC)).unwrap()
}
#[inline(never)]
fn op_block_and_schedule(rq: &mut FairRq, id: EntityId) -> Option<EntityId> {
    let (r, next) = rq.block_and_schedule(black_box(id), DequeueFlags::SLEEP);
    black_box(r).unwrap();
    black_box(next)
}

/// The kernel's `rq.fair.entity(eid).is_some_and(|se| se.on_rq)` of a
/// wakeup (try_to_wake_up, step 2).
#[inline(never)]
fn op_entity_on_rq(rq: &FairRq, id: EntityId) -> bool {
    black_box(rq.entity(black_box(id)).is_some_and(|se| se.on_rq))
}
#[inline(never)]
fn op_is_delayed(rq: &FairRq, id: EntityId) -> bool {
    black_box(rq.is_delayed(black_box(id)))
}
/// The kernel's reads after a switch or wakeup: the entity (its stats) and
/// the values `balance::snapshot::publish` stores.
#[inline(never)]
fn op_publish(rq: &FairRq, id: EntityId) -> u64 {
    let se = black_box(rq.entity(black_box(id)));
    let p = rq.pelt();
    black_box(se.is_some() as u64 + p.load_avg + p.runnable_avg + p.util_avg + rq.nr_queued() as u64 + rq.h_nr_runnable() as u64)
}

#[inline(never)]
fn op_yield_curr(rq: &mut FairRq) {
    rq.yield_curr();
}

#[inline(never)]
fn op_tick(rq: &mut FairRq, now: u64) -> bool {
    black_box(rq.tick(black_box(now)))
}

fn new_rq() -> FairRq {
    FairRq::new(Tunables::new(1))
}

fn spawn(rq: &mut FairRq) -> EntityId {
    spawn_nice(rq, 0)
}

fn spawn_nice(rq: &mut FairRq, nice: i32) -> EntityId {
    let id = rq.fork(Nice::clamped(nice), Policy::Normal).unwrap();
    rq.enqueue(id, EnqueueFlags::INITIAL).unwrap();
    id
}

/// FNV-1a over the debug form of the queue and its entities.
fn digest(rq: &FairRq, ids: &[EntityId], h: &mut u64) {
    let mut s = format!("{:?}", rq.pelt());
    for &id in ids {
        s += &format!("{:?}", rq.entity(id));
    }
    s += &format!(
        "{:?}{:?}{:?}{:?}{}{}{}{}",
        rq.avg_sums(),
        rq.stats(),
        rq.curr(),
        rq.pelt_clock(),
        rq.nr_queued(),
        rq.h_nr_runnable(),
        rq.load_weight(),
        rq.need_resched()
    );
    for b in s.bytes() {
        *h = (*h ^ b as u64).wrapping_mul(0x100000001b3);
    }
}

fn pipe(h: &mut u64, nice: i32, combined: bool) -> (u64, u64) {
    let mut rq = new_rq();
    let a = spawn_nice(&mut rq, nice);
    let b = spawn_nice(&mut rq, nice);
    let mut now = 1_000;
    rq.update_clock(now);
    let mut run = rq.schedule().unwrap();
    let mut sleeper = if run == a { b } else { a };
    rq.dequeue(sleeper, DequeueFlags::SLEEP).unwrap();
    let (mut preempts, mut delayed) = (0, 0);
    for _ in 0..ITERS {
        now += 2_000;
        op_update_clock(&mut rq, now);
        let next = if combined {
            preempts += op_wake(&mut rq, sleeper) as u64;
            let next = op_block_and_schedule(&mut rq, run).unwrap();
            delayed += rq.is_delayed(run) as u64;
            next
        } else {
            op_enqueue_wakeup(&mut rq, sleeper);
            preempts += op_check_preempt(&mut rq, sleeper) as u64;
            op_dequeue_sleep(&mut rq, run);
            delayed += rq.is_delayed(run) as u64;
            op_schedule(&mut rq).unwrap()
        };
        assert_eq!(next, sleeper);
        sleeper = run;
        run = next;
    }
    digest(&rq, &[a, b], h);
    (preempts, delayed)
}

fn pipe3(h: &mut u64, combined: bool) -> (u64, u64) {
    let mut rq = new_rq();
    let hog = spawn(&mut rq);
    let a = spawn(&mut rq);
    let b = spawn(&mut rq);
    let mut now = 1_000;
    rq.update_clock(now);
    rq.set_curr(a).unwrap();
    rq.dequeue(b, DequeueFlags::SLEEP).unwrap();
    let (mut run, mut sleeper) = (a, b);
    let (mut preempts, mut hog_runs) = (0, 0);
    for _ in 0..ITERS {
        now += 2_000;
        op_update_clock(&mut rq, now);
        let next = if combined {
            preempts += op_wake(&mut rq, sleeper) as u64;
            op_block_and_schedule(&mut rq, run).unwrap()
        } else {
            op_enqueue_wakeup(&mut rq, sleeper);
            preempts += op_check_preempt(&mut rq, sleeper) as u64;
            op_dequeue_sleep(&mut rq, run);
            op_schedule(&mut rq).unwrap()
        };
        if next == hog {
            // the hog runs 2 µs, then the pipe partner gets the CPU back
            hog_runs += 1;
            now += 2_000;
            rq.update_clock(now);
            rq.set_curr(sleeper).unwrap();
        }
        let cur = rq.curr().unwrap();
        let other = if cur == a { b } else { a };
        run = cur;
        sleeper = other;
    }
    digest(&rq, &[hog, a, b], h);
    (preempts, hog_runs)
}

/// Counters of the kernel-sequence scenarios.
#[derive(Default)]
struct KernelCounts {
    /// `wake` calls, and those that requeued a delayed entity.
    wakes: u64,
    delayed_requeues: u64,
    /// Wakeups that asked for a reschedule (the waker is then switched out
    /// while runnable, and does not block in that half trip).
    preempts: u64,
    /// Blocking switches, and those whose sleep was delayed.
    blocks: u64,
    delayed_sleeps: u64,
}

/// `pipe-k`: the kernel's same-CPU pipe (`cargo xtask profile pipe
/// --params mode=same --smp 1`), with its exact sequence of crate calls and
/// its timing: per half trip the running task writes for 1.5 µs, wakes its
/// partner (`update_clock`, `entity` on_rq test, `is_delayed`, then
/// `wake_delayed` for a delayed partner, `wake` for one off the queue), reads
/// for 1.4 µs and blocks (`update_clock`, `block_and_schedule`, then the
/// `entity` and `publish` reads). A wakeup that asks for a reschedule
/// switches at once (`update_clock`, `schedule`); the waker stays runnable
/// and the partner's next wakeup of it finds it running-queued (no call).
///
/// The waker has run past V when it blocks, so its sleep is delayed; its
/// partner wakes it after running longer (1.5 µs) than the waker ran after
/// its wakeup (1.4 µs), so by then it is eligible again and DELAY_ZERO
/// re-places it (unlink, place at V, relink). That is what the kernel's
/// profile shows on every wakeup (`unlink_for_place`, `relink_after_place`
/// twice per round trip); with the two times equal its lag would be exactly
/// 0 and the requeue would leave it in place.
fn pipe_k(h: &mut u64) -> KernelCounts {
    let mut rq = new_rq();
    let a = spawn(&mut rq);
    let b = spawn(&mut rq);
    let mut now = 1_000;
    rq.update_clock(now);
    let mut run = rq.schedule().unwrap();
    let mut other = if run == a { b } else { a };
    rq.dequeue(other, DequeueFlags::SLEEP).unwrap();
    let mut k = KernelCounts::default();
    for _ in 0..ITERS {
        now += 1_500;
        op_update_clock(&mut rq, now);
        let mut preempt = false;
        if op_entity_on_rq(&rq, other) {
            if op_is_delayed(&rq, other) {
                k.wakes += 1;
                k.delayed_requeues += 1;
                preempt = op_wake_delayed(&mut rq, other);
            }
        } else {
            k.wakes += 1;
            preempt = op_wake(&mut rq, other);
        }
        if preempt {
            k.preempts += 1;
            op_update_clock(&mut rq, now);
            let next = op_schedule(&mut rq).unwrap();
            assert_eq!(next, other);
        } else {
            now += 1_400;
            op_update_clock(&mut rq, now);
            let next = op_block_and_schedule(&mut rq, run).unwrap();
            assert_eq!(next, other);
            k.blocks += 1;
            k.delayed_sleeps += rq.is_delayed(run) as u64;
            op_publish(&rq, run);
        }
        (run, other) = (other, run);
    }
    digest(&rq, &[a, b], h);
    k
}

/// `cross-k`: the kernel's cross-CPU pipe (`mode=cross --smp 2`): each task
/// alone on its CPU. Per half trip one queue goes through its cycle: it
/// idles ~3 µs, its task is woken onto it (`update_clock`, `entity` on_rq
/// test, `wake`, `publish`), the idle CPU switches to it 0.3 µs later
/// (`update_clock`, `schedule`), it runs 2.9 µs and blocks, leaving the
/// queue empty (`update_clock`, `block_and_schedule`, `publish`). The two
/// queues alternate, as the two CPUs do.
fn cross_k(h: &mut u64) -> KernelCounts {
    let mut rqs = [new_rq(), new_rq()];
    let ids = [spawn(&mut rqs[0]), spawn(&mut rqs[1])];
    let mut now = 1_000;
    for (rq, &id) in rqs.iter_mut().zip(&ids) {
        rq.update_clock(now);
        rq.schedule().unwrap();
        rq.dequeue(id, DequeueFlags::SLEEP).unwrap();
        rq.schedule();
    }
    let mut k = KernelCounts::default();
    for n in 0..ITERS as usize {
        let (rq, id) = (&mut rqs[n % 2], ids[n % 2]);
        op_update_clock(rq, now);
        assert!(!op_entity_on_rq(rq, id));
        k.wakes += 1;
        k.preempts += op_wake(rq, id) as u64;
        op_publish(rq, id);
        now += 300;
        op_update_clock(rq, now);
        assert_eq!(op_schedule(rq), Some(id));
        now += 2_900;
        op_update_clock(rq, now);
        assert_eq!(op_block_and_schedule(rq, id), None);
        k.blocks += 1;
        k.delayed_sleeps += rq.is_delayed(id) as u64;
        op_publish(rq, id);
    }
    for (rq, &id) in rqs.iter().zip(&ids) {
        digest(rq, &[id], h);
    }
    k
}

fn yields(h: &mut u64) -> u64 {
    let mut rq = new_rq();
    let a = spawn(&mut rq);
    let b = spawn(&mut rq);
    let mut now = 1_000;
    rq.update_clock(now);
    rq.schedule();
    let mut switches = 0;
    let mut prev = rq.curr();
    for _ in 0..ITERS {
        now += 1_000;
        op_update_clock(&mut rq, now);
        op_yield_curr(&mut rq);
        let next = op_schedule(&mut rq);
        switches += (next != prev) as u64;
        prev = next;
    }
    digest(&rq, &[a, b], h);
    switches
}

fn ticks(h: &mut u64) -> u64 {
    let mut rq = new_rq();
    let ids = [spawn(&mut rq), spawn(&mut rq), spawn(&mut rq)];
    let mut now = 1_000;
    rq.update_clock(now);
    rq.schedule();
    let mut switches = 0;
    for _ in 0..ITERS {
        now += 1_000_000;
        if op_tick(&mut rq, now) {
            op_schedule(&mut rq);
            switches += 1;
        }
    }
    digest(&rq, &ids, h);
    switches
}

fn main() {
    let which = std::env::args().nth(1).unwrap_or_else(|| "all".into());
    let all = which == "all";
    let mut h = 0xcbf29ce484222325u64;
    println!("iterations per scenario: {ITERS}");
    for (name, nice, combined) in [("pipe", 0, false), ("pipe-nice5", 5, false), ("pipe-c", 0, true), ("pipe-nice5-c", 5, true)] {
        if all || which == name {
            let p = pipe(&mut h, nice, combined);
            println!("{name}: {} preempting wakeups, {} delayed sleeps", p.0, p.1);
        }
    }
    for (name, combined) in [("pipe3", false), ("pipe3-c", true)] {
        if all || which == name {
            let p3 = pipe3(&mut h, combined);
            println!("{name}: {} preempting wakeups, {} hog runs", p3.0, p3.1);
        }
    }
    for (name, f) in [("pipe-k", pipe_k as fn(&mut u64) -> KernelCounts), ("cross-k", cross_k)] {
        if all || which == name {
            let k = f(&mut h);
            println!(
                "{name}: {} wakes ({} requeued a delayed entity, {} preempting), {} blocks ({} delayed sleeps)",
                k.wakes, k.delayed_requeues, k.preempts, k.blocks, k.delayed_sleeps
            );
        }
    }
    if all || which == "yield" {
        println!("yield: {} switches", yields(&mut h));
    }
    if all || which == "tick" {
        println!("tick:  {} switches", ticks(&mut h));
    }
    println!("state digest: {h:016x}");
}
