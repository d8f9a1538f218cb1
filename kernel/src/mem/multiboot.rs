//! Reading the Multiboot 1 information structure QEMU passes in EBX.

use alloc::string::String;

/// The value EAX holds when a Multiboot 1 loader enters the kernel.
pub const BOOTLOADER_MAGIC: u32 = 0x2BAD_B002;

const FLAG_CMDLINE: u32 = 1 << 2;
const FLAG_MMAP: u32 = 1 << 6;

/// One region of the firmware memory map.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub base: u64,
    pub len: u64,
    /// 1 = usable RAM; everything else is reserved.
    pub kind: u32,
}

/// The parts of the multiboot information fairway uses, copied out so the
/// original (which lives in free low memory) may be overwritten later.
pub struct BootInfo {
    pub cmdline: String,
    /// The command line was longer than `CMDLINE_MAX` and was cut.
    pub cmdline_cut: bool,
}

/// Longest command line kept; the rest is cut (and said so).
pub const CMDLINE_MAX: usize = 1024;

/// Fixed-size copy of what is needed before the heap exists. QEMU places the
/// command line right after the kernel image, where the heap will go, so it
/// is copied out before any allocation.
pub struct EarlyInfo {
    pub regions: [Region; 32],
    pub region_count: usize,
    cmdline: [u8; CMDLINE_MAX],
    cmdline_len: usize,
    cmdline_cut: bool,
}

/// Reads the memory map from the info structure at `info`.
///
/// Returns `None` when the loader passed no memory map.
pub fn early(info: u32) -> Option<EarlyInfo> {
    let base = info as usize as *const u32;
    // SAFETY: a multiboot loader guarantees `info` points at a valid info
    // structure in identity-mapped low memory; fields are read only when the
    // flags say they are present.
    unsafe {
        let flags = base.read_volatile();
        let cmdline_addr: u32 = if flags & FLAG_CMDLINE != 0 { base.add(4).read_volatile() } else { 0 };
        if flags & FLAG_MMAP == 0 {
            return None;
        }
        let len = base.add(11).read_volatile() as usize;
        let addr = base.add(12).read_volatile() as usize;
        let mut out = EarlyInfo {
            regions: [Region { base: 0, len: 0, kind: 0 }; 32],
            region_count: 0,
            cmdline: [0; CMDLINE_MAX],
            cmdline_len: 0,
            cmdline_cut: false,
        };
        if cmdline_addr != 0 {
            let p = cmdline_addr as usize as *const u8;
            loop {
                let b = p.add(out.cmdline_len).read_volatile();
                if b == 0 {
                    break;
                }
                if out.cmdline_len == CMDLINE_MAX {
                    out.cmdline_cut = true;
                    break;
                }
                out.cmdline[out.cmdline_len] = b;
                out.cmdline_len += 1;
            }
        }
        let mut off = 0;
        while off + 24 <= len && out.region_count < out.regions.len() {
            let entry = (addr + off) as *const u8;
            let size = (entry as *const u32).read_unaligned() as usize;
            let base = (entry.add(4) as *const u64).read_unaligned();
            let length = (entry.add(12) as *const u64).read_unaligned();
            let kind = (entry.add(20) as *const u32).read_unaligned();
            out.regions[out.region_count] = Region { base, len: length, kind };
            out.region_count += 1;
            off += size + 4;
        }
        Some(out)
    }
}

impl EarlyInfo {
    pub fn regions(&self) -> &[Region] {
        &self.regions[..self.region_count]
    }

    /// Copies the command line (needs the heap). QEMU passes the kernel's
    /// file name as the first word; it is dropped.
    pub fn into_boot_info(self) -> BootInfo {
        let text: String = self.cmdline[..self.cmdline_len]
            .iter()
            .map(|&b| if b.is_ascii() && b != 0 { b as char } else { '?' })
            .collect();
        let mut words = text.split_ascii_whitespace().peekable();
        if words.peek().is_some_and(|w| w.contains('/') && !w.contains('=')) {
            words.next();
        }
        let mut cmdline = String::new();
        for w in words {
            if !cmdline.is_empty() {
                cmdline.push(' ');
            }
            cmdline.push_str(w);
        }
        BootInfo { cmdline, cmdline_cut: self.cmdline_cut }
    }
}
