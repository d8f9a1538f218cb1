//! Kernel-thread stacks with guard pages.
//!
//! When the scheduler starts (the APs are up but waiting, and flush their
//! TLBs when released: `selfcheck::ap_idle`, so no shootdown is needed) one
//! contiguous arena is carved into fixed slots `[guard page][stack]`, the
//! 2 MiB pages covering it are split into 4 KiB pages and every guard page is
//! unmapped for good. A thread that runs off the bottom of its stack touches
//! its guard page and takes a page fault (on an IST stack), which the fault
//! handler reports as a stack overflow of that thread (`guard_slot`).
//!
//! The number of slots comes from memory ([`Sizing`]): an eighth of the
//! frames still free after the heap, at least 256 and 4 per CPU, at most
//! what a workload and the kernel can use, and never more than half of the
//! free memory.
//!
//! Invariant: slot `i` spans `[base + i * SLOT, base + (i + 1) * SLOT)`; its
//! first page is unmapped; bit `i` of `USED` is set while a thread owns it.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;
use crate::lock::{level, IrqMutex};

use super::{frame, paging, FRAME_SIZE};

/// Usable bytes of each thread stack.
pub const STACK_SIZE: u64 = 32 * 1024;
const SLOT: u64 = STACK_SIZE + FRAME_SIZE;

/// The arena takes an eighth of the memory free when it is made (the heap
/// has already taken its quarter). A stack is mostly untouched memory, so a
/// small share does: at the default 512 MiB an eighth (about 47 MiB) holds
/// the ceiling (1025 slots, 36 MiB), 400 threads (hackbench's default 10
/// groups) fit from about 160 MiB, and seven eighths stay free.
const SHARE: u64 = 8;
/// Stacks wanted whatever the share, while memory allows: the arena's size
/// before it was sized from memory, so no small machine gets fewer.
pub const FLOOR_BASE: usize = 256;
pub const FLOOR_PER_CPU: usize = 4;
/// Never more than this fraction (1/2) of the free memory, floor or not: the
/// rest is left for the page tables that splitting the arena's 2 MiB pages
/// takes and for whatever is allocated later.
const MEMORY_LIMIT: u64 = 2;

/// Which bound decided the arena's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// An eighth of the free memory, between the floor and the ceiling.
    Share,
    /// The share was below the floor, which memory allowed.
    Floor,
    /// The share was above the ceiling.
    Ceiling,
    /// Even the floor was more than half of the free memory: that half.
    Memory,
}

impl Rule {
    /// The word of the `@fw stacks` record.
    pub fn word(self) -> &'static str {
        match self {
            Rule::Share => "share",
            Rule::Floor => "floor",
            Rule::Ceiling => "ceiling",
            Rule::Memory => "memory",
        }
    }
}

/// How the arena was sized; its `Display` says how the number was chosen.
#[derive(Clone, Copy, Debug)]
pub struct Sizing {
    /// Stacks created.
    pub slots: usize,
    /// Stacks the rule asked for: more than `slots` only when no contiguous
    /// run of free memory held them (`init` halves until one does).
    pub wanted: usize,
    pub rule: Rule,
    /// Free memory (bytes) when the arena was sized.
    pub free: u64,
    /// Stacks an eighth of `free` holds.
    pub share: usize,
    /// `FLOOR_BASE + FLOOR_PER_CPU * cpus`.
    pub floor: usize,
    /// `workload_threads + kernel_threads`.
    pub ceiling: usize,
    pub workload_threads: usize,
    pub kernel_threads: usize,
}

impl Sizing {
    /// Applies the rule to `free_frames` free frames (no allocation).
    pub fn plan(free_frames: usize, cpus: usize, workload_threads: usize, kernel_threads: usize) -> Sizing {
        let free = free_frames as u64 * FRAME_SIZE;
        let share = (free / SHARE / SLOT) as usize;
        let limit = (free / MEMORY_LIMIT / SLOT) as usize;
        let floor = FLOOR_BASE + FLOOR_PER_CPU * cpus;
        let ceiling = workload_threads + kernel_threads;
        let wanted = share.min(ceiling).max(floor);
        let (slots, rule) = if wanted > limit {
            (limit, Rule::Memory)
        } else if floor > share.min(ceiling) {
            (wanted, Rule::Floor)
        } else if share > ceiling {
            (wanted, Rule::Ceiling)
        } else {
            (wanted, Rule::Share)
        };
        Sizing { slots, wanted: slots, rule, free, share, floor, ceiling, workload_threads, kernel_threads }
    }
}

impl fmt::Display for Sizing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = self.free >> 20;
        match self.rule {
            Rule::Share => write!(f, "an eighth of the {} MiB of memory free at boot", mib)?,
            Rule::Floor => write!(
                f,
                "at least {} and {} per CPU; an eighth of the {} MiB of memory free at boot holds {}",
                FLOOR_BASE, FLOOR_PER_CPU, mib, self.share
            )?,
            Rule::Ceiling => write!(
                f,
                "at most {}, {} for a workload and {} for the kernel; an eighth of the {} MiB of memory free at boot would hold {}",
                self.ceiling, self.workload_threads, self.kernel_threads, mib, self.share
            )?,
            Rule::Memory => write!(
                f,
                "half of the {} MiB of memory free at boot, fewer than the {} of {} and {} per CPU",
                mib, self.floor, FLOOR_BASE, FLOOR_PER_CPU
            )?,
        }
        if self.slots < self.wanted {
            write!(f, "; only {} of those {}: no contiguous run of free memory held more", self.slots, self.wanted)?;
        }
        Ok(())
    }
}

struct Arena {
    base: u64,
    slots: usize,
    used: Vec<bool>,
    in_use: usize,
    sizing: Option<Sizing>,
}

static ARENA: IrqMutex<level::Memory, Arena> = IrqMutex::new(Arena { base: 0, slots: 0, used: Vec::new(), in_use: 0, sizing: None });

/// A thread stack; free it with [`free`].
#[derive(Clone, Copy, Debug)]
pub struct Stack {
    pub slot: usize,
    /// One past the highest usable address (16-byte aligned); the lowest
    /// is `top - STACK_SIZE`, just above the guard page.
    pub top: u64,
}

/// Creates the arena, sized by [`Sizing::plan`] from the frames free now, on
/// `cpus` CPUs, with room for at most `workload_threads` threads of a
/// workload and `kernel_threads` of the kernel. Fewer stacks than planned
/// when no contiguous run holds them (halved until one does; `slots` then
/// says so, and may be 0).
pub fn init(cpus: usize, workload_threads: usize, kernel_threads: usize) -> Result<Sizing, paging::PagingError> {
    let mut sizing = Sizing::plan(frame::free_frames(), cpus, workload_threads, kernel_threads);
    let frames_per_slot = (SLOT / FRAME_SIZE) as usize;
    let mut slots = sizing.slots;
    let base = loop {
        if slots == 0 {
            break 0;
        }
        if let Some(b) = frame::alloc_contiguous(slots * frames_per_slot) {
            break b;
        }
        slots /= 2;
    };
    sizing.slots = slots;
    for i in 0..slots as u64 {
        paging::unmap_page(base + i * SLOT)?;
    }
    let mut a = ARENA.lock();
    a.base = base;
    a.slots = slots;
    a.used = vec![false; slots];
    a.sizing = Some(sizing);
    Ok(sizing)
}

/// How the arena was sized (`None` before `init`).
pub fn sizing() -> Option<Sizing> {
    ARENA.lock().sizing
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
