//! The boot information's memory: the `bootinfo` crate (kernel/bootinfo) parses Multiboot 1
//! and Multiboot 2 information from byte slices; this hands it the slices.

pub use bootinfo::{BootInfo, Fatal, Region};

use super::MAPPED_LIMIT;

/// The identity-mapped first 4 GiB, as the parser reads it.
struct LowMemory;

impl bootinfo::PhysMem for LowMemory {
    fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let end = addr.checked_add(len as u64)?;
        if addr == 0 || end > MAPPED_LIMIT {
            return None;
        }
        // SAFETY: the boot page tables identity-map the first 4 GiB from kernel entry on (page 0
        // is excluded above), and nothing writes to the loader's structures while the parser
        // reads them: `early` runs before the first frame or heap allocation.
        Some(unsafe { core::slice::from_raw_parts(addr as usize as *const u8, len) })
    }
}

/// The copy, in .bss: `BootInfo` is about 5 KiB, and boot_main's frame stays on CPU 0's boot
/// stack (its idle stack) for good.
static BOOT_INFO: spin::Once<BootInfo> = spin::Once::new();

/// Reads the boot information (`magic` from EAX, `info` from EBX) into a copy of its own.
/// Must run before any allocation: the loaders put their structures in memory the frame
/// allocator hands out (QEMU places the command line right after the kernel image).
pub fn early(magic: u32, info: u32) -> Result<&'static BootInfo, Fatal> {
    let parsed = bootinfo::parse(magic, info as u64, &LowMemory)?;
    Ok(BOOT_INFO.call_once(|| parsed))
}
