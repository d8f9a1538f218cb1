//! The C memory functions the compiler emits calls to.
//!
//! The host target's `compiler_builtins` does not export them, so the kernel
//! provides them. They use `rep movsb` / `rep stosb` in inline assembly: a plain
//! Rust loop would be recognised by the optimiser and turned back into a call to
//! `memcpy`, recursing forever.

use core::arch::asm;

/// # Safety
/// `dst` and `src` must be valid for `n` bytes and must not overlap.
#[no_mangle]
pub unsafe extern "C" fn memcpy(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // 8-byte words first (a `rep` iteration is one instruction under QEMU's
    // -icount, so this is 8 times cheaper there), then the tail bytes.
    // SAFETY: the caller guarantees both ranges are valid; the direction flag
    // is clear in all kernel code (the ABI requires it), so the copy is forward.
    unsafe {
        asm!("rep movsq", "mov rcx, {tail}", "rep movsb",
             tail = in(reg) n % 8,
             inout("rcx") n / 8 => _, inout("rdi") dst => _, inout("rsi") src => _,
             options(nostack, preserves_flags));
    }
    dst
}

/// # Safety
/// `dst` and `src` must be valid for `n` bytes; they may overlap.
#[no_mangle]
pub unsafe extern "C" fn memmove(dst: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dst as usize) <= (src as usize) || (dst as usize) >= (src as usize).wrapping_add(n) {
        // SAFETY: a forward copy is correct when dst is below src or the ranges
        // do not overlap; validity is the caller's guarantee.
        return unsafe { memcpy(dst, src, n) };
    }
    // SAFETY: dst overlaps the tail of src, so copy backwards (direction flag
    // set for the copy and cleared again before returning).
    unsafe {
        asm!("std", "rep movsb", "cld",
             inout("rcx") n => _,
             inout("rdi") dst.add(n).wrapping_sub(1) => _,
             inout("rsi") src.add(n).wrapping_sub(1) => _,
             options(nostack));
    }
    dst
}

/// # Safety
/// `dst` must be valid for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memset(dst: *mut u8, value: i32, n: usize) -> *mut u8 {
    let byte = value as u8 as u64;
    // SAFETY: the caller guarantees dst is valid for n bytes; words first, then
    // the tail, as in memcpy.
    unsafe {
        asm!("rep stosq", "mov rcx, {tail}", "rep stosb",
             tail = in(reg) n % 8,
             inout("rcx") n / 8 => _, inout("rdi") dst => _, in("rax") byte * 0x0101_0101_0101_0101,
             options(nostack, preserves_flags));
    }
    dst
}

/// # Safety
/// `a` and `b` must be valid for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i < n {
        // SAFETY: i < n and both ranges are valid for n bytes. Volatile reads keep
        // the optimiser from turning this loop into a call to memcmp itself.
        let (x, y) = unsafe { (a.add(i).read_volatile(), b.add(i).read_volatile()) };
        if x != y {
            return x as i32 - y as i32;
        }
        i += 1;
    }
    0
}

/// # Safety
/// `a` and `b` must be valid for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: same contract as memcmp.
    unsafe { memcmp(a, b, n) }
}

/// The prebuilt `core` refers to this symbol; with `panic = "abort"` it is never called.
#[no_mangle]
pub extern "C" fn rust_eh_personality() {}
