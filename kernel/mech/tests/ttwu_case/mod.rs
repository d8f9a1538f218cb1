//! TTWU_QUEUE shown by its effect: where a remote wakeup's enqueue happens
//! and which IPIs it costs (core.c: `ttwu_queue()`). One run, the same for
//! both settings; `ttwu_queue_on.rs` and `ttwu_queue_off.rs` each boot one
//! (the mechanism's state is per process).
//!
//! On 4 CPUs, CPU 0 (idle, where the test's code runs) wakes three tasks
//! that sleep elsewhere:
//! - `a`, pinned to CPU 1, where a hog has run 100 us and keeps its slice:
//!   the wakee does not preempt it;
//! - `b`, pinned to CPU 2, which is idle;
//! - `c`, which slept on CPU 1 and may now run only on CPU 3 (its affinity
//!   changed while it slept): its wakeup moves its entity.
//!
//! With TTWU_QUEUE each wakeup only queues on the target's wake list and
//! kicks it with an IPI (three IPIs): no runqueue changes until the target
//! takes its IPI and activates the task itself. Without it CPU 0 enqueues
//! each task on the target's runqueue at once, and only the two targets
//! that must switch to their wakee (idle CPUs) get an IPI: CPU 1 is not
//! interrupted, its hog runs on with `a` queued behind it.
//!
//! Shown to fail: with `sched::ttwu::queue_on_wake_list` ignoring the
//! feature (always queueing), the off binary fails at `a`'s wakeup (no
//! enqueue, an IPI); with it never queueing, the on binary fails there.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::common::*;
use mech::task::Task;
use mech::thread::Spawn;
use sched::cpumask::CpuMask;
use sched::WakeFlags;

/// A task that ran once on `cpu` (idle until then) and sleeps there now.
fn sleeper(name: &str, spawn: Spawn, cpu: usize) -> Arc<Task> {
    let t = mech::thread::spawn(spawn, || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(cpu), &t), "{name} runs on CPU {cpu}");
    assert!(block(cpu).is_idle, "{name} sleeps, CPU {cpu} idles");
    t
}

/// The IPIs sent since `mark`.
fn ipis_since(mark: usize) -> Vec<(usize, usize)> {
    IPIS.lock().unwrap()[mark..].to_vec()
}

/// `cpu` takes its reschedule IPI: returns what runs there after it.
fn take_ipi(cpu: usize) -> Arc<Task> {
    run_on(cpu);
    let cur = current_on(cpu).unwrap();
    mech::entry::scheduler_ipi(frame_of(&cur));
    current_on(cpu).unwrap()
}

pub fn run(ttwu_queue: bool) {
    let a = sleeper("a", Spawn::new("a").pin(1), 1);
    let c = sleeper("c", Spawn::new("c").on_cpu(1), 1);
    let b = sleeper("b", Spawn::new("b").pin(2), 2);
    run_on(0);
    mech::setattr::set_affinity(&c, CpuMask::single(3)).unwrap();
    let hog = mech::thread::spawn(Spawn::new("hog").pin(1), || {}).unwrap();
    assert!(Arc::ptr_eq(&preempt(1), &hog));
    advance_ns(100_000);
    run_on(0);
    let mark = IPIS.lock().unwrap().len();

    // `a` onto busy CPU 1.
    assert!(mech::wakeup::try_to_wake_up(&a, WakeFlags::NONE));
    assert_eq!(mech::rq::wake_list_pending(1), ttwu_queue, "a: on CPU 1's wake list iff TTWU_QUEUE");
    assert_eq!(nr_queued(1), if ttwu_queue { 1 } else { 2 }, "a: enqueued by the waker iff NO_TTWU_QUEUE");
    assert!(!mech::resched::need_resched(1), "a does not preempt the hog");
    let want: &[(usize, usize)] = if ttwu_queue { &[(0, 1)] } else { &[] };
    assert_eq!(ipis_since(mark), want, "a: the wake list's IPI, or none");

    // `b` onto idle CPU 2: an IPI either way, to run it.
    assert!(mech::wakeup::try_to_wake_up(&b, WakeFlags::NONE));
    assert_eq!(mech::rq::wake_list_pending(2), ttwu_queue);
    assert_eq!(nr_queued(2), if ttwu_queue { 0 } else { 1 }, "b: enqueued by the waker iff NO_TTWU_QUEUE");
    assert_eq!(mech::resched::need_resched(2), !ttwu_queue, "b: CPU 2 asked to switch by the waker iff NO_TTWU_QUEUE");
    assert_eq!(ipis_since(mark).last(), Some(&(0, 2)));

    // `c` moves from CPU 1 to idle CPU 3.
    assert!(mech::wakeup::try_to_wake_up(&c, WakeFlags::NONE));
    assert_eq!(mech::rq::wake_list_pending(3), ttwu_queue);
    assert_eq!(nr_queued(3), if ttwu_queue { 0 } else { 1 }, "c: enqueued on CPU 3 by the waker iff NO_TTWU_QUEUE");
    assert_eq!(c.cpu.load(Ordering::Relaxed) == 3, !ttwu_queue, "c: on CPU 3's runqueue already iff NO_TTWU_QUEUE");
    assert_eq!(nr_queued(1), if ttwu_queue { 1 } else { 2 }, "c's entity left CPU 1 either way");
    assert_eq!(ipis_since(mark).last(), Some(&(0, 3)));
    let want: &[(usize, usize)] = if ttwu_queue { &[(0, 1), (0, 2), (0, 3)] } else { &[(0, 2), (0, 3)] };
    assert_eq!(ipis_since(mark), want, "three wake-list kicks, or the two switches");

    // The targets take their IPIs: every wakee ends up queued where it was
    // sent, b and c running, the hog still running with a behind it.
    if ttwu_queue {
        assert!(Arc::ptr_eq(&take_ipi(1), &hog), "a queued behind the hog");
    }
    assert!(Arc::ptr_eq(&take_ipi(2), &b));
    assert!(Arc::ptr_eq(&take_ipi(3), &c));
    assert_eq!((nr_queued(1), nr_queued(2), nr_queued(3)), (2, 1, 1));
    assert!(Arc::ptr_eq(&current_on(1).unwrap(), &hog));
    assert!((1..4).all(|cpu| !mech::rq::wake_list_pending(cpu)));
    assert_eq!(c.stats.nr_migrations.load(Ordering::Relaxed), 1);
}
