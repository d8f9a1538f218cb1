//! `workload=pipes[,pairs=4][,rounds=2000]`: pipe ping-pong pairs free to run
//! anywhere (placed by fork balancing, moved by wakeup placement and the
//! balancer). At every round trip the initiator notes whether its partner's
//! task is on its CPU and whether they share a last-level cache:
//! `@fw pipes pair=.. rounds=.. same_cpu=.. same_llc=..` and a total line,
//! to compare wake_affine on and off.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::params::{Param, wss_kb, num, MAX_THREADS};
use crate::cmdline::Workload;
use mech::sync::pipe::Pipe;
use mech::task::Task;
use mech::thread::Spawn;

struct Tally {
    same_cpu: AtomicU64,
    same_llc: AtomicU64,
}

/// What `workload=pipes` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("pairs", 1, MAX_THREADS / 2, 4, "ping-pong pairs"),
    num("rounds", 1, 100_000_000, 2000, "round trips per pair"),
    wss_kb(16),
];

pub fn run(w: &Workload) -> bool {
    let pairs = w.num("pairs") as usize;
    let rounds = w.num("rounds");
    let wss = w.num("wss_kb") as u32;
    if !super::budget::fits(w, &["pairs"], (pairs * 2) as u64, 0) {
        return false;
    }
    let mut joins: Vec<Arc<Task>> = Vec::new();
    let mut tallies = Vec::new();
    for _ in 0..pairs {
        let (ping, pong) = (Arc::new(Pipe::new(64)), Arc::new(Pipe::new(64)));
        let (p1, q1) = (ping.clone(), pong.clone());
        let Some(b) = super::spawn(Spawn::new("pipes-b"), move || {
            mech::platform::set_working_set(wss);
            let mut x = [0u8; 1];
            for _ in 0..rounds {
                p1.read_exact(&mut x);
                q1.write(&x, true);
            }
        }) else {
            return false;
        };
        let tally = Arc::new(Tally { same_cpu: AtomicU64::new(0), same_llc: AtomicU64::new(0) });
        let (t2, partner) = (tally.clone(), b.clone());
        let a = super::spawn(Spawn::new("pipes-a"), move || {
            mech::platform::set_working_set(wss);
            let mut x = [1u8; 1];
            for _ in 0..rounds {
                ping.write(&x, true);
                pong.read_exact(&mut x);
                let me = mech::platform::cpu_id();
                let other = partner.cpu.load(Ordering::Relaxed);
                if me == other {
                    t2.same_cpu.fetch_add(1, Ordering::Relaxed);
                }
                if mech::balance::global().is_some_and(|g| g.sds.cpus_share_cache(me, other)) {
                    t2.same_llc.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        joins.push(b);
        joins.extend(a);
        tallies.push(tally);
    }
    super::join_all(&joins);
    let (mut cpu, mut llc) = (0, 0);
    for (i, t) in tallies.iter().enumerate() {
        let (c, l) = (t.same_cpu.load(Ordering::Relaxed), t.same_llc.load(Ordering::Relaxed));
        cpu += c;
        llc += l;
        mech::record!("pipes", "pair={} rounds={} same_cpu={} same_llc={}", i, rounds, c, l);
    }
    mech::record!("pipes_total", "pairs={} rounds={} same_cpu={} same_llc={}", pairs, rounds * pairs as u64, cpu, llc);
    joins.len() == 2 * pairs
}
