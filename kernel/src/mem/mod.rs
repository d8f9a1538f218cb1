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

/// The heap the boot needs whatever the CPU count: the self-check's 4 MiB
/// (eight 512 KiB blocks) and 1 MiB for the rest (the ACPI tables' copies,
/// the init thread, a small workload).
pub const HEAP_BASE: u64 = 5 << 20;
/// The heap each CPU takes by the time the scheduler runs: its 64 KiB boot
/// stack (`arch::smp::AP_STACK_SIZE`), its sched domains and groups (which
/// grow with the CPU count), its runqueue state. Measured at the self-check:
/// 167 KiB per CPU at 8 CPUs, 171 KiB at 16; rounded up for what follows.
pub const HEAP_PER_CPU: u64 = 192 << 10;

/// The heap each pair of CPUs takes: each CPU's balancer keeps a snapshot
/// buffer of one `CpuSnapshot` (88 bytes) per CPU, and each CPU's sched
/// domains hold up to one group (152 bytes, a 1024-CPU mask with its
/// figures) per other CPU (a level of single-CPU groups). 256 MiB at 1024
/// CPUs: what makes the need grow faster than the CPU count.
pub const HEAP_PER_CPU_PAIR: u64 = 256;

/// The heap `cpus` CPUs need to boot and run the default work.
pub const fn heap_need(cpus: u64) -> u64 {
    HEAP_BASE + cpus * HEAP_PER_CPU + cpus * cpus * HEAP_PER_CPU_PAIR
}

/// The usable memory (what the loader's map calls usable, below 4 GiB) that
/// gives `cpus` CPUs their heap when the need is above the 8 MiB minimum
/// (from 17 CPUs on; up to 16 the minimum holds it whatever the memory): the
/// heap is then a quarter of the memory free once the kernel image is
/// placed, so that free memory must be four times the need; what is not free
/// (`usable - free`: the image, the low MiB) comes on top.
pub const fn usable_need(cpus: u64, usable: u64, free: u64) -> u64 {
    usable.saturating_sub(free) + 4 * heap_need(cpus)
}

/// The heap's bounds: a quarter of the free memory, within these. The upper
/// one holds what 1024 CPUs need (453 MiB, `heap_need`) in the identity-mapped
/// first 4 GiB.
pub const HEAP_MIN: u64 = 8 << 20;
pub const HEAP_MAX: u64 = 1 << 30;

/// Physical range `[start, end)` occupied by the kernel image and its .bss.
pub fn kernel_range() -> (u64, u64) {
    // SAFETY: only the addresses of the linker symbols are taken.
    unsafe { (&__kernel_start as *const u8 as u64, &__kernel_end as *const u8 as u64) }
}

