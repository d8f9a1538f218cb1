//! `workload=ebizzy[,threads=CPUs][,chunks=10][,records=4096][,ms=1000]`:
//! ebizzy's "web search server" loop. `chunks` chunks of `records` sorted
//! 8-byte records are set up first; then each thread repeatedly picks a
//! random chunk, allocates a copy of it, copies it, binary-searches a random
//! key taken from it and frees the copy. Prints `N records/s` (searches per
//! second, all threads) like ebizzy and `@fw result metric=records_per_s`.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::crew::{name, Crew, Measured};
use crate::cmdline::Workload;

pub fn run(w: &Workload) -> bool {
    let ncpu = super::cpus().len() as u64;
    let threads = w.num("threads", ncpu).max(1) as usize;
    let nchunks = w.num("chunks", 10).max(1) as usize;
    let records = w.num("records", 4096).clamp(1, 1 << 20) as usize;
    let ms = w.num("ms", 1000).max(1);
    let mut rng = super::Rng::new(0xeb1);
    let chunks: Arc<Vec<Vec<u64>>> = Arc::new(
        (0..nchunks)
            .map(|_| {
                let mut c: Vec<u64> = (0..records).map(|_| rng.next()).collect();
                c.sort_unstable();
                c
            })
            .collect(),
    );
    let total = Arc::new(AtomicU64::new(0));
    let misses = Arc::new(AtomicU64::new(0));
    let mut crew = Crew::new(w);
    for i in 0..threads {
        let (chunks, stop, total, misses) = (chunks.clone(), crew.stop_flag(), total.clone(), misses.clone());
        let mut rng = super::Rng::new(i as u64 + 1);
        crew.spawn(&name("ebizzy", i, None), i, move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let src = &chunks[rng.below(chunks.len() as u64) as usize];
                let mut copy: Vec<u64> = Vec::with_capacity(src.len());
                copy.extend_from_slice(src);
                let key = copy[rng.below(copy.len() as u64) as usize];
                if copy.binary_search(&key).is_err() {
                    misses.fetch_add(1, Ordering::Relaxed);
                }
                drop(copy);
                n += 1;
            }
            total.fetch_add(n, Ordering::Relaxed);
        });
    }
    let Some(ns) = crew.run_for(ms, Measured::UntilStop) else { return false };
    let n = total.load(Ordering::Relaxed);
    let rate_milli = (n as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64;
    crate::kprintln!("{} records/s", rate_milli / 1000);
    crate::kprintln!("real {:>5}.{:02} s", ns / 1_000_000_000, ns / 10_000_000 % 100);
    crate::kprintln!("ebizzy: {} threads, {} chunks of {} records, {} searches", threads, nchunks, records, n);
    super::result("ebizzy", "records_per_s", rate_milli, "records/s", true);
    n > 0 && misses.load(Ordering::Relaxed) == 0
}
