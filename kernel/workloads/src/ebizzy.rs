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
use super::params::{Param, wss_kb, num_per_cpu, num, MAX_MS, MAX_THREADS};
use crate::cmdline::Workload;

/// What `workload=ebizzy` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("threads", 1, MAX_THREADS, 1, "searching threads"),
    num("chunks", 1, 1024, 10, "chunks of records searched"),
    num("records", 1, 1 << 20, 4096, "8-byte records per chunk"),
    num("ms", 1, MAX_MS, 1000, "how long the threads search (ms)"),
    wss_kb(320),
];

pub fn run(w: &Workload) -> bool {
    let threads = w.num("threads") as usize;
    let nchunks = w.num("chunks") as usize;
    let records = w.num("records") as usize;
    let ms = w.num("ms");
    // the chunks, and one copy of a chunk per searching thread
    let record_bytes = (records * core::mem::size_of::<u64>()) as u64;
    if !super::budget::fits(w, &["threads", "chunks", "records"], threads as u64, (nchunks + threads) as u64 * record_bytes) {
        return false;
    }
    let mut rng = w.rng(0xeb1);
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
        let mut rng = w.rng(i as u64 + 1);
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
                // An estimate, not a measured count: one instruction per
                // copied record, ~20 per search step, ~200 for the allocation.
                mech::platform::work_done(src.len() as u64 + 20 * (64 - (src.len() as u64).leading_zeros() as u64) + 200);
            }
            total.fetch_add(n, Ordering::Relaxed);
        });
    }
    let Some(ns) = crew.run_for(ms, Measured::UntilStop) else { return false };
    let n = total.load(Ordering::Relaxed);
    let rate_milli = (n as u128 * 1_000_000_000_000 / ns.max(1) as u128) as u64;
    mech::kprintln!("{} records/s", rate_milli / 1000);
    mech::kprintln!("real {:>5}.{:02} s", ns / 1_000_000_000, ns / 10_000_000 % 100);
    mech::kprintln!("ebizzy: {} threads, {} chunks of {} records, {} searches", threads, nchunks, records, n);
    super::result("ebizzy", "records_per_s", rate_milli, "records/s", true);
    n > 0 && misses.load(Ordering::Relaxed) == 0
}
