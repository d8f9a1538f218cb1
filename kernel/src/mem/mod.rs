//! Memory: the multiboot memory map, the physical frame allocator and the
//! kernel heap. With `arch`, the only place that touches raw memory.

pub mod frame;
pub mod heap;
pub mod multiboot;
pub mod paging;
pub mod stack;

/// Size of a physical frame.
pub const FRAME_SIZE: u64 = 4096;
/// Memory the boot page tables map (identity, 2 MiB pages).
pub const MAPPED_LIMIT: u64 = 4 << 30;

extern "C" {
    static __kernel_start: u8;
    static __kernel_end: u8;
}

/// Physical range `[start, end)` occupied by the kernel image and its .bss.
pub fn kernel_range() -> (u64, u64) {
    // SAFETY: only the addresses of the linker symbols are taken.
    unsafe { (&__kernel_start as *const u8 as u64, &__kernel_end as *const u8 as u64) }
}

