//! IPI delivery and idle exit (`fairway_sim::hw`) by their effect on a
//! wakeup's latency: a waker on CPU 0 wakes a task sleeping on an idle CPU
//! (pinned there) 20 times, 200 us apart; the wakee notes how long after
//! the wakeup it runs.
//!
//! - Halted, the target needs its idle state's exit latency before it takes
//!   the IPI; polling (`idle=poll`), it sees the wakeup by itself (no IPI, no
//!   exit, no interrupt entry). With `idle_exit_ns=5000` on `icount` the halt
//!   costs the exit and the interrupt entry more than the poll; with the
//!   exit removed (`deliver` not delaying a halted CPU) only the entry
//!   remains and the first test fails.
//! - An IPI to the other socket arrives `line_other_node_ns -
//!   line_same_llc_ns` later than one within the LLC (`sis-2021,only=ipi`:
//!   136 - 48 ns); with the latency removed (`send_resched_ipi` not adding
//!   it) both arrive alike and the second test fails.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::hw::HwProfile;
use fairway_sim::platform::{self, burn_ns, SimConfig};
use fairway_sim::Machine;
use mech::sync::WaitQueue;
use mech::thread::Spawn;

const ROUNDS: u64 = 20;

/// One run: the mean ns from a wakeup to the wakee running on `target`,
/// and the target's idle exits and polling wakes.
fn child(arg: &str) {
    let mut it = arg.split(' ');
    let (target, poll, hw) = (it.next().unwrap().parse::<usize>().unwrap(), it.next().unwrap() == "poll", it.next().unwrap());
    // 2 sockets (= nodes) x 2 cores x 2 threads: CPU 2 shares CPU 0's LLC, 4 is the other socket.
    let machine = Machine::from_smp("8,sockets=2,cores=2,threads=2", 2).unwrap();
    let cfg = SimConfig { hw: HwProfile::parse(hw).unwrap(), idle_poll: poll, sched_debug: true, ..SimConfig::default() };
    let total = Arc::new(AtomicU64::new(0));
    let t = total.clone();
    let report = platform::run(&machine, cfg, move || {
        let wq = Arc::new(WaitQueue::new());
        let go = Arc::new(AtomicBool::new(false));
        let woken_at = Arc::new(AtomicU64::new(0));
        let (wq2, go2, at2) = (wq.clone(), go.clone(), woken_at.clone());
        let wakee = mech::thread::spawn(Spawn::new("wakee").pin(target), move || {
            for _ in 0..ROUNDS {
                wq2.wait_until(|| go2.swap(false, Ordering::SeqCst));
                t.fetch_add(mech::rq::now_ns() - at2.load(Ordering::SeqCst), Ordering::Relaxed);
            }
        })
        .unwrap();
        let waker = mech::thread::spawn(Spawn::new("waker").pin(0), move || {
            for _ in 0..ROUNDS {
                burn_ns(200_000);
                woken_at.store(mech::rq::now_ns(), Ordering::SeqCst);
                go.store(true, Ordering::SeqCst);
                wq.wake_one();
            }
        })
        .unwrap();
        mech::thread::join(&waker);
        mech::thread::join(&wakee);
    });
    assert_eq!(report.end, "finished");
    let h = &report.hw[target];
    common::child_result(&format!("{} {} {}\n", total.load(Ordering::Relaxed) / ROUNDS, h.idle_exits, h.poll_wakes));
}

fn run(test: &str, target: usize, idle: &str, hw: &str) -> Vec<u64> {
    common::in_child(test, &format!("{target} {idle} {hw}")).split_whitespace().map(|x| x.parse().unwrap()).collect()
}

const EXIT_NS: u64 = 5_000;

#[test]
fn idle_poll_wakes_sooner_than_halt_by_the_exit_latency() {
    if let Some(arg) = common::child_arg() {
        child(&arg);
        return;
    }
    let t = "idle_poll_wakes_sooner_than_halt_by_the_exit_latency";
    let hw = format!("icount,idle_exit_ns={EXIT_NS}");
    let halt = run(t, 2, "halt", &hw);
    let poll = run(t, 2, "poll", &hw);
    // Every wakeup found the target halted, or polling.
    assert!(halt[1] >= ROUNDS && halt[2] == 0, "halt: {halt:?}");
    assert!(poll[2] >= ROUNDS && poll[1] == 0, "poll: {poll:?}");
    // The halt pays the exit and the interrupt's entry (the poll takes neither).
    let irq = fairway_sim::engine::CostModel::ICOUNT.irq_entry_ns;
    assert_eq!(halt[0] - poll[0], EXIT_NS + irq, "a wakeup into a halted CPU took {} ns, into a polling one {} ns", halt[0], poll[0]);
    eprintln!("halt {} ns, poll {} ns", halt[0], poll[0]);
}

#[test]
fn an_ipi_across_sockets_arrives_later_than_one_within() {
    if let Some(arg) = common::child_arg() {
        child(&arg);
        return;
    }
    let t = "an_ipi_across_sockets_arrives_later_than_one_within";
    let hw = "sis-2021,only=ipi";
    let p = HwProfile::parse(hw).unwrap();
    let near = run(t, 2, "halt", hw);
    let far = run(t, 4, "halt", hw);
    assert_eq!(far[0] - near[0], p.line_ns[3] - p.line_ns[1], "a wakeup within the LLC took {} ns, across the sockets {} ns", near[0], far[0]);
    eprintln!("within the LLC {} ns, across the sockets {} ns", near[0], far[0]);
}
