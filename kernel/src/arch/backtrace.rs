//! Frame-pointer backtraces (the kernel is built with `-C force-frame-pointers=yes`).
//!
//! Each frame is `[rbp] = caller's rbp, [rbp + 8] = return address`. The walk
//! stops at a zero frame pointer (the boot paths clear `rbp`), at a pointer that
//! is misaligned or outside identity-mapped memory, when frames stop growing
//! upwards, or after `MAX_FRAMES`. Addresses are printed as `@fw bt` records;
//! `cargo xtask run` adds symbol names from the kernel ELF.

use core::arch::asm;

const MAX_FRAMES: usize = 32;
/// Frame pointers must lie in identity-mapped RAM above the first page.
const LOWEST: u64 = 0x1000;
const HIGHEST: u64 = 0x1_0000_0000;

/// Prints a backtrace starting at `rip` with frame pointer `rbp`.
pub fn print(cpu: usize, rip: u64, mut rbp: u64) {
    crate::kprintln!("  backtrace:");
    crate::record!("bt", "cpu={} frame=0 addr={:#x}", cpu, rip);
    let mut frame = 1;
    while frame < MAX_FRAMES && rbp != 0 {
        if !rbp.is_multiple_of(8) || !(LOWEST..HIGHEST - 16).contains(&rbp) {
            break;
        }
        // SAFETY: rbp is 8-aligned and inside the identity-mapped first 4 GiB,
        // so both reads hit mapped memory; the values are only printed.
        let (next, ret) = unsafe { ((rbp as *const u64).read_volatile(), ((rbp + 8) as *const u64).read_volatile()) };
        if ret == 0 {
            break;
        }
        crate::record!("bt", "cpu={} frame={} addr={:#x}", cpu, frame, ret);
        frame += 1;
        if next <= rbp {
            break;
        }
        rbp = next;
    }
}

/// Prints a backtrace of the caller.
#[inline(always)]
pub fn print_here(cpu: usize) {
    let rbp: u64;
    let rip: u64;
    // SAFETY: reads the frame pointer and the current instruction address only.
    unsafe {
        asm!("mov {}, rbp", out(reg) rbp, options(nomem, nostack, preserves_flags));
        asm!("lea {}, [rip]", out(reg) rip, options(nomem, nostack, preserves_flags));
    }
    print(cpu, rip, rbp);
}
