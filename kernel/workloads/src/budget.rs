//! What a workload is about to take, checked before it starts anything:
//! thread stacks (a fixed arena of the platform's, `Platform::stack_usage`;
//! the kernel sizes it at boot from the free memory and the number of CPUs)
//! and heap. A workload that asks for more than there is is refused before
//! it starts anything, with one message that names the parameters behind
//! the demand and the limit (a `cmdline: ` line and an `@fw cmdline_problem`
//! record, so the harness takes no figures from it): started, it would fail
//! thread by thread, or stop the kernel with OUT OF MEMORY half-way through
//! its setup.

use alloc::string::String;
use core::fmt::Write;

use crate::cmdline::Workload;

/// Whether `threads` more threads and `heap` more bytes of heap fit; if not,
/// reports it, naming the parameters `keys` (their values as `w` has them).
/// A workload may take at most three quarters of the free heap: the rest is
/// left to the kernel's own structures while it runs.
pub(super) fn fits(w: &Workload, keys: &[&str], threads: u64, heap: u64) -> bool {
    let (stacks_used, stacks) = mech::platform::stack_usage();
    let free_stacks = stacks.saturating_sub(stacks_used) as u64;
    let (heap_used, heap_size) = mech::platform::heap_usage();
    let free_heap = heap_size.saturating_sub(heap_used) as u64;
    let heap_limit = free_heap / 4 * 3;
    if threads <= free_stacks && heap <= heap_limit {
        return true;
    }
    let mut msg = String::new();
    let _ = write!(msg, "workload={}: ", w.name);
    for (i, k) in keys.iter().enumerate() {
        let _ = write!(msg, "{}{}={}", if i == 0 { "" } else { ", " }, k, w.num(k));
    }
    if threads > free_stacks {
        let _ = write!(msg, " need {} threads, but {} thread stacks are free ({} in all", threads, free_stacks, stacks);
        mech::platform::stack_sizing(&mut msg);
        let _ = write!(msg, ")");
    } else {
        let _ = write!(
            msg,
            " need {} KiB of heap, but a workload may take {} KiB (three quarters of the {} KiB free)",
            heap.div_ceil(1024),
            heap_limit / 1024,
            free_heap / 1024
        );
    }
    let _ = write!(msg, "; the workload does not run");
    crate::cmdline::report_problem(&msg);
    false
}
