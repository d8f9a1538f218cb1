//! `workload=hackbench[,groups=2][,loops=100][,datasize=100][,fds=20][,pipe_kb=64]`:
//! hackbench in pipe/thread mode (`perf bench sched messaging --pipe
//! --thread`). Each group has `fds` receivers, each owning one pipe, and
//! `fds` senders; every sender writes `loops` messages of `datasize` bytes
//! to every receiver of its group. The time runs from the start signal (sent
//! once every thread is ready) until every thread has finished. Prints the
//! report laid out like rt-tests' hackbench, `@fw hackbench` (the messages
//! the senders wrote and the receivers read) and `@fw result metric=time`.
//! All the benchmark workloads take `spread=0|1` (see `crew::place`).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::crew::{name, Crew};
use super::params::{Param, wss_kb, num};
use crate::cmdline::Workload;
use mech::rq;
use mech::sync::pipe::Pipe;

/// What `workload=hackbench` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num("groups", 1, 64, 2, "groups of senders and receivers"),
    num("loops", 1, 1_000_000, 100, "messages each sender writes to each receiver"),
    num("datasize", 1, 4096, 100, "bytes per message"),
    num("fds", 1, 64, 20, "receivers (and senders) per group"),
    num("pipe_kb", 1, 1024, 64, "capacity of each receiver's pipe (KiB)"),
    wss_kb(64),
];

pub fn run(w: &Workload) -> bool {
    let groups = w.num("groups") as usize;
    let loops = w.num("loops") as usize;
    let datasize = w.num("datasize") as usize;
    let fds = w.num("fds") as usize;
    let cap = (w.num("pipe_kb") * 1024) as usize;
    // senders and receivers; each receiver's pipe ring
    if !super::budget::fits(w, &["groups", "fds", "pipe_kb"], (groups * fds * 2) as u64, (groups * fds * cap) as u64) {
        return false;
    }
    let failed = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let received = Arc::new(AtomicU64::new(0));
    let mut crew = Crew::new(w);
    for g in 0..groups {
        let pipes: Vec<Arc<Pipe>> = (0..fds).map(|_| Arc::new(Pipe::new(cap))).collect();
        for (r, p) in pipes.iter().enumerate() {
            let (p, failed, received) = (p.clone(), failed.clone(), received.clone());
            let expect = fds * loops * datasize;
            crew.spawn(&name("hb-recv", g, Some(r)), crew.len(), move || {
                let mut buf = [0u8; 4096];
                let (mut got, mut msgs) = (0, 0);
                while got < expect {
                    let want = datasize.min(expect - got);
                    let n = p.read_exact(&mut buf[..want]);
                    if n == 0 {
                        failed.store(true, Ordering::Relaxed);
                        break;
                    }
                    got += n;
                    msgs += (n == datasize) as u64;
                }
                received.fetch_add(msgs, Ordering::Relaxed);
            });
        }
        for s in 0..fds {
            let (pipes, sent) = (pipes.clone(), sent.clone());
            crew.spawn(&name("hb-send", g, Some(s)), crew.len(), move || {
                let msg = [0x5au8; 4096];
                let mut msgs = 0;
                for _ in 0..loops {
                    for p in &pipes {
                        p.write(&msg[..datasize], false);
                        msgs += 1;
                    }
                }
                sent.fetch_add(msgs, Ordering::Relaxed);
            });
        }
    }
    let n = groups * fds * 2;
    if crew.len() != n {
        mech::kprintln!("hackbench: only {} of {} threads started", crew.len(), n);
        return false;
    }
    mech::kprintln!(
        "Running in threaded mode with {} groups using {} file descriptors each (== {} tasks)",
        groups,
        fds * 2,
        n
    );
    mech::kprintln!("Each sender will pass {} messages of {} bytes", loops, datasize);
    let Some(start) = crew.start() else { return false };
    crew.join();
    let ns = rq::now_ns() - start;
    mech::kprintln!("Time: {}.{:03}", ns / 1_000_000_000, ns / 1_000_000 % 1000);
    let (sent, received) = (sent.load(Ordering::Relaxed), received.load(Ordering::Relaxed));
    mech::record!(
        "hackbench",
        "groups={} fds={} loops={} datasize={} messages_sent={} messages_received={} ns={}",
        groups,
        fds,
        loops,
        datasize,
        sent,
        received,
        ns
    );
    super::result("hackbench", "time", ns / 1_000_000, "s", false);
    !failed.load(Ordering::Relaxed) && received == sent && sent == (groups * fds * fds * loops) as u64
}
