//! `workload=hackbench[,groups=2][,loops=100][,datasize=100][,fds=20][,pipe_kb=64]`:
//! hackbench in pipe/thread mode (`perf bench sched messaging --pipe
//! --thread`). Each group has `fds` receivers, each owning one pipe, and
//! `fds` senders; every sender writes `loops` messages of `datasize` bytes
//! to every receiver of its group. The time runs from the start signal (sent
//! once every thread is ready) until every thread has finished. Prints the
//! report laid out like rt-tests' hackbench and `@fw result metric=time`.
//! All the benchmark workloads take `spread=0|1` (see `place`).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::cmdline::Workload;
use crate::rq;
use crate::sync::{Completion, Pipe, Semaphore};
use crate::task::Spawn;

/// What every thread shares: the ready count and the start signal.
pub(super) struct Gate {
    ready: Semaphore,
    start: Completion,
}

impl Gate {
    pub(super) fn new() -> Arc<Gate> {
        Arc::new(Gate { ready: Semaphore::new(0), start: Completion::new() })
    }
    /// Called by each thread: says it is ready and waits for the start.
    pub(super) fn arrive(&self) {
        self.ready.up();
        self.start.wait();
    }
    /// Waits for `n` threads to be ready, then starts them; returns the start time.
    pub(super) fn open(&self, n: usize) -> u64 {
        for _ in 0..n {
            self.ready.down();
        }
        let t = rq::now_ns();
        self.start.complete_all();
        t
    }
}

/// A thread name `prefix-a` or `prefix-a-b` (without `format!`, whose
/// prebuilt code needs an unwinder the kernel does not link).
pub(super) fn name(prefix: &str, a: usize, b: Option<usize>) -> alloc::string::String {
    use core::fmt::Write;
    let mut s = alloc::string::String::from(prefix);
    let _ = write!(s, "-{}", a);
    if let Some(b) = b {
        let _ = write!(s, "-{}", b);
    }
    s
}

/// Where thread `i` starts: with `spread=0` (the default) wherever the
/// kernel's fork balancing puts it; with `spread=1` round-robin over the
/// online CPUs, not pinned (how the figures in docs/BENCHMARKS.md were taken,
/// before the kernel balanced forks).
pub(super) fn place(opts: Spawn, w: &Workload, i: usize) -> Spawn {
    let cpus = super::cpus();
    if w.num("spread", 0) == 0 || cpus.is_empty() {
        return opts;
    }
    opts.on_cpu(cpus[i % cpus.len()])
}

pub fn run(w: &Workload) -> bool {
    let groups = w.num("groups", 2).max(1) as usize;
    let loops = w.num("loops", 100) as usize;
    let datasize = w.num("datasize", 100).clamp(1, 4096) as usize;
    let fds = w.num("fds", 20).clamp(1, 64) as usize;
    let cap = (w.num("pipe_kb", 64).max(1) * 1024) as usize;
    let gate = Gate::new();
    let failed = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for g in 0..groups {
        let pipes: Vec<Arc<Pipe>> = (0..fds).map(|_| Arc::new(Pipe::new(cap))).collect();
        for (r, p) in pipes.iter().enumerate() {
            let (p, gate, failed) = (p.clone(), gate.clone(), failed.clone());
            let expect = fds * loops * datasize;
            let name = name("hb-recv", g, Some(r));
            tasks.extend(super::spawn(place(Spawn::new(&name), w, tasks.len()), move || {
                gate.arrive();
                let mut buf = [0u8; 4096];
                let mut got = 0;
                while got < expect {
                    let want = datasize.min(expect - got);
                    let n = p.read_exact(&mut buf[..want]);
                    if n == 0 {
                        failed.store(true, Ordering::Relaxed);
                        break;
                    }
                    got += n;
                }
            }));
        }
        for s in 0..fds {
            let (pipes, gate) = (pipes.clone(), gate.clone());
            let name = name("hb-send", g, Some(s));
            tasks.extend(super::spawn(place(Spawn::new(&name), w, tasks.len()), move || {
                gate.arrive();
                let msg = [0x5au8; 4096];
                for _ in 0..loops {
                    for p in &pipes {
                        p.write(&msg[..datasize], false);
                    }
                }
            }));
        }
    }
    let n = groups * fds * 2;
    if tasks.len() != n {
        crate::kprintln!("hackbench: only {} of {} threads started", tasks.len(), n);
        return false;
    }
    crate::kprintln!(
        "Running in threaded mode with {} groups using {} file descriptors each (== {} tasks)",
        groups,
        fds * 2,
        n
    );
    crate::kprintln!("Each sender will pass {} messages of {} bytes", loops, datasize);
    let start = gate.open(n);
    for t in &tasks {
        crate::task::join(t);
    }
    let ns = rq::now_ns() - start;
    crate::kprintln!("Time: {}.{:03}", ns / 1_000_000_000, ns / 1_000_000 % 1000);
    super::result("hackbench", "time", ns / 1_000_000, "s", false);
    !failed.load(Ordering::Relaxed)
}
