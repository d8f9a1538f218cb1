//! The physical frame allocator: a bitmap over the identity-mapped first 4 GiB.
//!
//! Invariant: bit `i` is set iff frame `i` (physical `i * 4096`) is free. Only
//! frames inside usable memory-map regions, above the kernel image, are ever
//! marked free. All state sits behind one spin lock.

use crate::lock::{level, IrqMutex};

use super::multiboot::Region;
use super::{FRAME_SIZE, MAPPED_LIMIT};

const FRAMES: usize = (MAPPED_LIMIT / FRAME_SIZE) as usize;

struct Bitmap {
    words: [u64; FRAMES / 64],
    free: usize,
}

static FREE: IrqMutex<level::Memory, Bitmap> = IrqMutex::new(Bitmap { words: [0; FRAMES / 64], free: 0 });

/// Totals after `init`.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub usable_bytes: u64,
    pub free_frames: usize,
    pub above_4g_bytes: u64,
}

/// Marks the usable frames of `regions` above `reserved_below` free.
pub fn init(regions: &[Region], reserved_below: u64) -> Summary {
    let mut map = FREE.lock();
    let mut usable = 0;
    let mut above = 0;
    for r in regions.iter().filter(|r| r.kind == 1) {
        usable += r.len;
        let end = r.base.saturating_add(r.len);
        if end > MAPPED_LIMIT {
            above += end - r.base.max(MAPPED_LIMIT);
        }
        let first = r.base.max(reserved_below).div_ceil(FRAME_SIZE);
        let last = end.min(MAPPED_LIMIT) / FRAME_SIZE;
        for f in first..last {
            let f = f as usize;
            map.words[f / 64] |= 1 << (f % 64);
            map.free += 1;
        }
    }
    Summary { usable_bytes: usable, free_frames: map.free, above_4g_bytes: above }
}

/// Frames free now (the stack arena is sized from them, after the heap).
pub fn free_frames() -> usize {
    FREE.lock().free
}

/// Allocates `count` physically contiguous frames; returns the first address.
pub fn alloc_contiguous(count: usize) -> Option<u64> {
    let mut map = FREE.lock();
    let mut run = 0;
    for f in 0..FRAMES {
        if map.words[f / 64] & (1 << (f % 64)) != 0 {
            run += 1;
            if run == count {
                let first = f + 1 - count;
                for g in first..=f {
                    map.words[g / 64] &= !(1 << (g % 64));
                }
                map.free -= count;
                return Some(first as u64 * FRAME_SIZE);
            }
        } else {
            run = 0;
        }
    }
    None
}
