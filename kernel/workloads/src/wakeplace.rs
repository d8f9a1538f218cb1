//! `workload=wakeplace`: where wakeup placement puts one wakee, round after
//! round, with the CPUs around it made busy on purpose. A waker pinned to
//! `waker` sleeps `sleep_us` (its CPU idles: `avg_idle`), spins `busy_us`,
//! then wakes the wakee through a pipe (WF_SYNC). The wakee, allowed on
//! `allowed_mask`, notes the CPU it runs on after each wakeup, spins
//! `work_us`, and with `home=1` goes back to `prev` before it sleeps again, so
//! that every wakeup starts from the same previous CPU. Pinned nice-0 hogs
//! (`hog_mask`) and nice-5 hogs (`light_mask`) make CPUs busy; they run
//! `warm_ms` before the first wakeup (the waker and the wakee sleep then), so
//! that every PELT load and util has settled.
//!
//! Prints `@fw wakeplace` (the setting) and one `@fw wakeplace_cpu cpu=
//! wakeups=` per online CPU (where the wakee ran after its wakeups; they
//! add up to `rounds`), then the wakee's taskstat. Used by the SIS scan-depth
//! and wake-balance scenarios.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sched::cpumask::CpuMask;

use super::params::{num, Param, MAX_CPU};
use mech::platform::cpu_id;
use mech::MAX_CPUS;
use crate::cmdline::{report_problem, Workload};
use mech::sync::pipe::Pipe;
use mech::thread::Spawn;

/// What `workload=wakeplace` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("waker", 0, MAX_CPU, 0, "the waker's CPU (pinned)"),
    num("prev", 0, MAX_CPU, 1, "the wakee's CPU before its first wakeup (and before each, with home=1)"),
    num("allowed_mask", 0, u32::MAX as u64, 0, "the wakee's allowed CPUs as a bit mask (0: all online CPUs)"),
    num("hog_mask", 0, u32::MAX as u64, 0, "a nice-0 hog pinned on each CPU of this bit mask"),
    num("light_mask", 0, u32::MAX as u64, 0, "a nice-5 hog pinned on each CPU of this bit mask"),
    num("rounds", 1, 100_000, 200, "wakeups"),
    num("sleep_us", 50, 1_000_000, 1000, "the waker sleeps this long before each wakeup (us)"),
    num("busy_us", 0, 1_000_000, 0, "then spins this long before it wakes the wakee (us)"),
    num("work_us", 0, 1_000_000, 50, "the wakee spins this long after each wakeup (us)"),
    num("home", 0, 1, 1, "1: the wakee returns to prev after each wakeup"),
    num("warm_ms", 0, 10_000, 200, "the hogs run this long before the first wakeup (their PELT util settles)"),
];

pub fn run(w: &Workload) -> bool {
    let cpus = super::cpus();
    let online = mech::rq::online_mask();
    let waker_cpu = w.cpu("waker", &cpus);
    let prev = w.cpu("prev", &cpus);
    let mut allowed = match w.num("allowed_mask") {
        0 => online,
        bits => super::cpu_mask(w, "allowed_mask", bits, &online),
    };
    if !allowed.contains(prev) {
        report_problem(format_args!("workload={}: allowed_mask does not hold prev={}; adding it", w.name, prev));
        allowed.set(prev);
    }
    let hogs = super::cpu_mask(w, "hog_mask", w.num("hog_mask"), &online);
    let light = super::cpu_mask(w, "light_mask", w.num("light_mask"), &online);
    let rounds = w.num("rounds");
    let (sleep, busy, work) = (w.num("sleep_us") * 1000, w.num("busy_us") * 1000, w.num("work_us") * 1000);
    let home = w.num("home") == 1;
    let warm = w.num("warm_ms") * 1_000_000;
    let threads = 2 + hogs.weight() as u64 + light.weight() as u64;
    if !super::budget::fits(w, &["hog_mask", "light_mask"], threads, 0) {
        return false;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut hog_tasks = Vec::new();
    for (set, nice) in [(hogs, 0), (light, 5)] {
        for cpu in set.iter() {
            let s = stop.clone();
            hog_tasks.extend(super::spawn(Spawn::new("hog").pin(cpu).nice(nice), move || super::hog(&s)));
        }
    }
    let tally: Arc<Vec<AtomicU64>> = Arc::new((0..MAX_CPUS).map(|_| AtomicU64::new(0)).collect());
    let (ping, ack) = (Arc::new(Pipe::new(64)), Arc::new(Pipe::new(64)));
    let (p2, a2, t2) = (ping.clone(), ack.clone(), tally.clone());
    let Some(wakee) = super::spawn(Spawn::new("wakee").pin(prev), move || {
        let me = mech::task::current();
        let _ = mech::setattr::set_affinity(&me, allowed);
        let mut x = [0u8; 1];
        for _ in 0..rounds {
            a2.write(&x, false);
            p2.read_exact(&mut x);
            t2[cpu_id()].fetch_add(1, Ordering::Relaxed);
            mech::platform::burn_ns(work);
            if home && cpu_id() != prev {
                let _ = mech::setattr::set_affinity(&me, CpuMask::single(prev));
                while cpu_id() != prev {
                    mech::schedule::yield_now();
                }
                let _ = mech::setattr::set_affinity(&me, allowed);
            }
        }
    }) else {
        stop.store(true, Ordering::Relaxed);
        super::join_all(&hog_tasks);
        return false;
    };
    let waker = super::spawn(Spawn::new("waker").pin(waker_cpu), move || {
        let mut x = [0u8; 1];
        // Everyone's PELT load settles first: the hogs' rises, the new
        // waker's and wakee's (born at full weight) decays while they sleep.
        mech::thread::sleep_ns(warm);
        for _ in 0..rounds {
            // The wakee is about to sleep at prev; sleeping here lets it.
            ack.read_exact(&mut x);
            mech::thread::sleep_ns(sleep);
            if busy > 0 {
                mech::platform::burn_ns(busy);
            }
            ping.write(&x, true);
        }
    });
    let ok = waker.is_some();
    if let Some(t) = &waker {
        mech::thread::join(t);
    }
    mech::thread::join(&wakee);
    stop.store(true, Ordering::Relaxed);
    super::join_all(&hog_tasks);
    mech::record!(
        "wakeplace",
        "waker={} prev={} allowed={} hogs={} light={} rounds={} sleep_us={} busy_us={} work_us={} home={} warm_ms={}",
        waker_cpu, prev, allowed, Cpus(hogs), Cpus(light), rounds, sleep / 1000, busy / 1000, work / 1000, home as u8, warm / 1_000_000
    );
    for cpu in online.iter() {
        mech::record!("wakeplace_cpu", "cpu={} wakeups={}", cpu, tally[cpu].load(Ordering::Relaxed));
    }
    mech::schedstat::print_task(&wakee);
    ok
}

/// A CPU list for a record: `-` when empty (a field is never blank).
struct Cpus(CpuMask);

impl core::fmt::Display for Cpus {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        if self.0.is_empty() { f.write_str("-") } else { write!(f, "{}", self.0) }
    }
}
