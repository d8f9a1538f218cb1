//! A pipe partner that wakes the other and then sleeps has run since the
//! wakee was placed: the wakeup's own work (`wakeup_ns`) is in the waker's
//! runtime, as in the kernel, where `try_to_wake_up()` runs on the waker's
//! clock. So at its sleep the waker is behind the queue's average by half of
//! that work (two equal weights), not eligible, and DELAY_DEQUEUE keeps it
//! queued (`fair.c: dequeue_entity()`). Under QEMU `-icount` the kernel's
//! `workload=pipe` at `-smp 1` delays 2535 of its 2539 sleeps; before the
//! wakeup's cost was paid on the waker's clock the simulator delayed 1 of
//! 4003 (it charged the cost to whichever task ran next).

mod common;

use fairway_sim::Machine;

const ROUNDS: u64 = 2000;

#[test]
fn pipe_partners_sleep_delayed_on_one_cpu() {
    let machine = Machine::from_smp("1", 1).unwrap();
    let stats = std::sync::Arc::new(std::sync::Mutex::new(None));
    let st = stats.clone();
    let (report, _) = common::pipe_ping_pong_then(&machine, 0, 0, ROUNDS, move || {
        *st.lock().unwrap() = Some(*mech::rq::lock(0).fair.stats());
    });
    assert_eq!(report.end, "finished", "{report:?}");
    let s = stats.lock().unwrap().take().expect("the run's delayed-dequeue counters");
    eprintln!("sleeps {} delayed {} requeued {} picked {}", s.sleeps, s.delayed, s.delayed_requeued, s.delayed_dequeued_by_pick);
    // Every sleep but the partners' first ones and the ends is a waker's
    // sleep after the wakeup it made: at least 2 per round trip minus a few,
    // delayed, and each of those is ended by the partner's next wakeup (a
    // requeue), not by a pick.
    assert!(s.sleeps >= ROUNDS, "{} sleeps for {ROUNDS} round trips", s.sleeps);
    assert!(s.delayed * 100 >= s.sleeps * 95, "{} of {} sleeps delayed", s.delayed, s.sleeps);
    assert!(s.delayed_requeued * 100 >= s.delayed * 95, "{} of {} delayed sleeps requeued", s.delayed_requeued, s.delayed);
}
