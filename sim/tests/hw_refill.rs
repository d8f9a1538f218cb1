//! Cache affinity (`fairway_sim::hw::cache`) by its effect: a task that
//! warmed 256 KiB of working set on CPU 0 and is moved to another CPU then
//! does the same work, 1 ms; moved to CPU 0's SMT sibling (the same core's
//! cache) it takes what the mechanism's switches take, moved to the other
//! socket it takes one refill more: its 4,096 lines from CPU 0's caches
//! across the sockets, `refill_mlp` at a time, at the profile's
//! `line_other_node_ns` (sis-2021: 136 ns, 4 at a time: 139,264 ns). With the
//! refill removed (`Caches::arrive` returning no cost) both moves take the
//! same time and this fails.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use fairway_sim::hw::HwProfile;
use fairway_sim::platform::{self, burn_ns, SimConfig};
use fairway_sim::Machine;
use mech::thread::Spawn;

const TEST: &str = "a_cache_hot_task_moved_across_sockets_finishes_later_by_its_refill";
const WSS: u64 = 256 * 1024;
const PROFILE: &str = "sis-2021,only=refill";

/// One run: the task moves from CPU 0 to `target`; prints the virtual ns
/// from just before the move to the end of its work there, the CPU it
/// ended on and the refill the target CPU charged.
fn child(target: usize) {
    // 2 sockets (= nodes) x 2 cores x 2 threads: CPU 1 is CPU 0's sibling, 4 the other socket's.
    let machine = Machine::from_smp("8,sockets=2,cores=2,threads=2", 2).unwrap();
    let out = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let o = out.clone();
    let cfg = SimConfig { hw: HwProfile::parse(PROFILE).unwrap(), sched_debug: true, ..SimConfig::default() };
    let report = platform::run(&machine, cfg, move || {
        let t = mech::thread::spawn(Spawn::new("hot").pin(0), move || {
            mech::platform::set_working_set((WSS / 1024) as u32);
            burn_ns(1_000_000);
            let t0 = mech::rq::now_ns();
            let mut mask = sched::cpumask::CpuMask::new();
            mask.set(target);
            mech::setattr::set_affinity(&mech::task::current(), mask).unwrap();
            mech::schedule::yield_now();
            burn_ns(1_000_000);
            o[0].store(mech::rq::now_ns() - t0, Ordering::Relaxed);
            o[1].store(mech::platform::cpu_id() as u64, Ordering::Relaxed);
        })
        .unwrap();
        mech::thread::join(&t);
    });
    assert_eq!(report.end, "finished");
    common::child_result(&format!(
        "{} {} {}\n",
        out[0].load(Ordering::Relaxed),
        out[1].load(Ordering::Relaxed),
        report.hw[target].refill_ns
    ));
}

fn run(target: usize) -> (u64, u64, u64) {
    let r = common::in_child(TEST, &target.to_string());
    let v: Vec<u64> = r.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (v[0], v[1], v[2])
}

#[test]
fn a_cache_hot_task_moved_across_sockets_finishes_later_by_its_refill() {
    if let Some(arg) = common::child_arg() {
        child(arg.parse().unwrap());
        return;
    }
    let p = HwProfile::parse(PROFILE).unwrap();
    let lines = WSS / 64;
    let refill = lines * p.line_ns[3] / p.refill_mlp;
    let (sibling_ns, sibling_cpu, sibling_refill) = run(1);
    let (far_ns, far_cpu, far_refill) = run(4);
    assert_eq!((sibling_cpu, far_cpu), (1, 4), "the task ended where it was moved");
    // The sibling shares the core's cache: nothing to refill.
    assert_eq!(sibling_refill, 0);
    assert_eq!(far_refill, refill, "the other socket's refill: {lines} lines at {} ns, {} at a time", p.line_ns[3], p.refill_mlp);
    // And the task's own time shows it: the rest of the two moves is the same.
    assert_eq!(far_ns - sibling_ns, refill, "moved to the sibling: {sibling_ns} ns; across the sockets: {far_ns} ns");
    eprintln!("moved to the sibling: {sibling_ns} ns; across the sockets: {far_ns} ns (refill {refill} ns)");
}
