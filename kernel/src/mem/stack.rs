//! Kernel-thread stacks with guard pages.
//!
//! At boot (before the APs start, so no TLB shootdown is ever needed) one
//! contiguous arena is carved into fixed slots `[guard page][stack]`, the
//! 2 MiB pages covering it are split into 4 KiB pages and every guard page is
//! unmapped for good. A thread that runs off the bottom of its stack touches
//! its guard page and takes a page fault (on an IST stack), which the fault
//! handler reports as a stack overflow of that thread (`guard_slot`).
//!
//! Invariant: slot `i` spans `[base + i * SLOT, base + (i + 1) * SLOT)`; its
//! first page is unmapped; bit `i` of `USED` is set while a thread owns it.

use alloc::vec;
use alloc::vec::Vec;
use crate::sync::irq_mutex::IrqMutex;

use super::{frame, paging, FRAME_SIZE};

/// Usable bytes of each thread stack.
pub const STACK_SIZE: u64 = 32 * 1024;
const SLOT: u64 = STACK_SIZE + FRAME_SIZE;

struct Arena {
    base: u64,
    slots: usize,
    used: Vec<bool>,
    in_use: usize,
}

static ARENA: IrqMutex<Arena> = IrqMutex::new(Arena { base: 0, slots: 0, used: Vec::new(), in_use: 0 });

/// A thread stack; free it with [`free`].
#[derive(Clone, Copy, Debug)]
pub struct Stack {
    pub slot: usize,
    /// One past the highest usable address (16-byte aligned); the lowest
    /// is `top - STACK_SIZE`, just above the guard page.
    pub top: u64,
}

/// Creates the arena with `slots` stacks. Returns the number created (fewer
/// when memory is short).
pub fn init(mut slots: usize) -> Result<usize, paging::PagingError> {
    let frames_per_slot = (SLOT / FRAME_SIZE) as usize;
    let base = loop {
        if slots == 0 {
            return Ok(0);
        }
        if let Some(b) = frame::alloc_contiguous(slots * frames_per_slot) {
            break b;
        }
        slots /= 2;
    };
    for i in 0..slots as u64 {
        paging::unmap_page(base + i * SLOT)?;
    }
    let mut a = ARENA.lock();
    a.base = base;
    a.slots = slots;
    a.used = vec![false; slots];
    Ok(slots)
}

/// Takes a free stack, or `None` when all are in use.
pub fn alloc() -> Option<Stack> {
    let mut a = ARENA.lock();
    let slot = a.used.iter().position(|u| !u)?;
    a.used[slot] = true;
    a.in_use += 1;
    let bottom = a.base + slot as u64 * SLOT + FRAME_SIZE;
    Some(Stack { slot, top: bottom + STACK_SIZE })
}

/// Returns a stack to the arena.
pub fn free(stack: Stack) {
    let mut a = ARENA.lock();
    if stack.slot < a.slots && a.used[stack.slot] {
        a.used[stack.slot] = false;
        a.in_use -= 1;
    }
}

/// (stacks in use, stacks in the arena).
pub fn usage() -> (usize, usize) {
    let a = ARENA.lock();
    (a.in_use, a.slots)
}

/// If `addr` lies in a guard page, the slot whose stack it guards.
pub fn guard_slot(addr: u64) -> Option<usize> {
    let a = ARENA.try_lock()?;
    if addr < a.base || addr >= a.base + a.slots as u64 * SLOT {
        return None;
    }
    let off = addr - a.base;
    (off % SLOT < FRAME_SIZE).then_some((off / SLOT) as usize)
}
