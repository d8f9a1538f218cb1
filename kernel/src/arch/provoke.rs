//! Deliberate CPU exceptions for the harness's fault-report scenarios.

use core::arch::asm;

/// Reads `addr`, which must be unmapped: a page fault with CR2 = `addr`.
#[inline(never)]
pub fn page_fault(addr: u64) -> ! {
    // SAFETY: the read faults (the address is outside the identity map), and
    // the fault handler never returns here.
    unsafe { (addr as *const u64).read_volatile() };
    unreachable!("reading {:#x} did not fault", addr)
}

/// Divides by zero with `div`: a divide error.
#[inline(never)]
pub fn divide_error() -> ! {
    // SAFETY: the division faults and the handler never returns here.
    unsafe { asm!("xor edx, edx", "mov eax, 1", "xor ecx, ecx", "div ecx", out("eax") _, out("edx") _, out("ecx") _) };
    unreachable!("dividing by zero did not fault")
}

/// Executes `ud2`: an invalid opcode.
#[inline(never)]
pub fn invalid_opcode() -> ! {
    // SAFETY: ud2 faults and the handler never returns here.
    unsafe { asm!("ud2", options(noreturn)) }
}
