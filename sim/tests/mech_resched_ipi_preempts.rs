//! The reschedule IPI's handler is the mechanism's own
//! (`mech::entry::scheduler_ipi`, which the kernel's IPI calls too): at 2
//! simulated CPUs a hog burns on CPU 1 and a nice -20 task with a short
//! slice pinned there sleeps; a task on CPU 0 wakes it. Its virtual deadline
//! is far earlier than the hog's, so the wakeup preempts the hog (its trace
//! `enqueue` says `preempt=1`), CPU 0 sends CPU 1 a reschedule IPI, and the handler
//! switches to the wakee as it returns: the wakee runs one IPI latency (plus
//! the interrupt's entry and the switch) after the wakeup, long before CPU
//! 1's next tick. If the handler stopped acting on `need_resched` (or never
//! ran), the wakee would wait for that tick (up to 1 ms at hz=1000): with
//! its preemption removed it ran 699,165 ns after the wakeup.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use fairway_sim::engine::CostModel;
use fairway_sim::platform::{self, burn_ns, SimConfig};
use fairway_sim::Machine;
use mech::sync::WaitQueue;
use mech::thread::Spawn;

const CHUNK_NS: u64 = 10_000;

#[test]
fn a_resched_ipi_to_a_busy_cpu_switches_to_the_wakee_at_once() {
    let machine = Machine::from_smp("2", 1).unwrap();
    let woke_at = Arc::new(AtomicU64::new(0));
    let ran_at = Arc::new(AtomicU64::new(0));
    let ran_on = Arc::new(AtomicUsize::new(usize::MAX));
    let (w, r, o) = (woke_at.clone(), ran_at.clone(), ran_on.clone());
    let report = platform::run(&machine, SimConfig { sched_debug: true, ..SimConfig::default() }, move || {
        let go = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let wq = Arc::new(WaitQueue::new());
        let d = done.clone();
        let hog = mech::thread::spawn(Spawn::new("hog").pin(1), move || {
            while !d.load(Ordering::Relaxed) {
                burn_ns(CHUNK_NS);
            }
        })
        .unwrap();
        let (g, q) = (go.clone(), wq.clone());
        let wakee = mech::thread::spawn(Spawn::new("wakee").pin(1).slice_ns(100_000).nice(-20), move || {
            q.wait_until(|| g.load(Ordering::SeqCst));
            r.store(mech::rq::now_ns(), Ordering::Relaxed);
            o.store(mech::platform::cpu_id(), Ordering::Relaxed);
        })
        .unwrap();
        let waker = mech::thread::spawn(Spawn::new("waker").pin(0), move || {
            // Well inside the hog's run on CPU 1, between its ticks.
            burn_ns(2_300_000);
            go.store(true, Ordering::SeqCst);
            w.store(mech::rq::now_ns(), Ordering::Relaxed);
            wq.wake_one();
        })
        .unwrap();
        mech::thread::join(&waker);
        mech::thread::join(&wakee);
        done.store(true, Ordering::Relaxed);
        mech::thread::join(&hog);
    });
    assert_eq!(report.end, "finished", "{report:?}");
    let (woke, ran) = (woke_at.load(Ordering::Relaxed), ran_at.load(Ordering::Relaxed));
    assert_eq!(ran_on.load(Ordering::Relaxed), 1, "the wakee is pinned to CPU 1");
    let c = CostModel::ICOUNT;
    // The IPI's flight, its entry and the switch on CPU 1, plus the waker's
    // own wakeup cost charged before the IPI leaves.
    let bound = c.wakeup_ns + c.ipi_latency_ns + c.irq_entry_ns + c.switch_ns;
    assert!(ran > woke, "the wakee ran at {ran}, before it was woken at {woke}");
    assert!(ran - woke <= bound, "the wakee ran {} ns after its wakeup, more than the IPI path's {bound} ns", ran - woke);
    // It went through the IPI: CPU 1 took one, and it arrived no sooner than
    // the IPI's flight.
    assert!(ran - woke >= c.ipi_latency_ns, "{} ns is faster than an IPI ({} ns)", ran - woke, c.ipi_latency_ns);
    assert!(report.cpus[1].ipis_taken >= 1, "{:?}", report.cpus[1]);
}
