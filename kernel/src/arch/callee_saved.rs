//! A voluntary switch that checks it kept what a C call keeps: rbx, rbp,
//! r12-r15, the x87 control word and MXCSR (the System V ABI's callee-saved
//! state; `schedule_call`, boot/isr.S, saves and restores exactly these).
//!
//! Not on any fast path: only the workload that tests the switch
//! (`workload=regs`) calls it, in place of `context::give_up_cpu`.

use core::arch::asm;
use core::sync::atomic::Ordering;

/// The callee-saved state, in the order the check reports it. The asm below
/// reads and writes this layout: six registers at 0..48, the x87 control
/// word at 48, MXCSR at 52.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CalleeSaved {
    /// rbx, rbp, r12, r13, r14, r15.
    gprs: [u64; 6],
    x87_control: u16,
    _pad: u16,
    mxcsr: u32,
}

const GPR_NAMES: [&str; 6] = ["rbx", "rbp", "r12", "r13", "r14", "r15"];

/// Distinct per register, so a value restored into the wrong register shows.
const GPR_SENTINELS: [u64; 6] = [
    0xB0B0_0001_0000_0000,
    0xB0B0_0002_0000_0000,
    0xB0B0_0012_0000_0000,
    0xB0B0_0013_0000_0000,
    0xB0B0_0014_0000_0000,
    0xB0B0_0015_0000_0000,
];

/// The x87 control word at reset (all exceptions masked, 64-bit precision,
/// round to nearest) and MXCSR's (exceptions masked, round to nearest).
const X87_CONTROL_DEFAULT: u16 = 0x037F;
const MXCSR_DEFAULT: u32 = 0x1F80;

/// A callee-saved register (or control word) that a switch did not keep.
#[derive(Clone, Copy, Debug)]
pub struct Mismatch {
    pub register: &'static str,
    pub expected: u64,
    pub found: u64,
}

extern "C" {
    /// boot/isr.S, as for `context::give_up_cpu`.
    fn schedule_call();
}

/// Gives up the CPU as `context::give_up_cpu` does, with every callee-saved
/// register and both control words holding sentinels derived from `salt`
/// (give each thread its own, so that another task's values restored by
/// mistake show); returns the first that differs after the task resumes.
/// The control words' sentinels change only bits that integer code never
/// reads: the x87 rounding control (x86_64 code computes with SSE) and
/// MXCSR's flush-to-zero and denormals-are-zero (denormal operands only),
/// because the scheduler runs on them until the switch restores the next
/// task's.
pub fn give_up_cpu_checking(salt: u64) -> Option<Mismatch> {
    if !super::percpu::this_cpu().sched_running.load(Ordering::Acquire) {
        return None;
    }
    let variant = salt % 3;
    let expected = CalleeSaved {
        gprs: core::array::from_fn(|i| GPR_SENTINELS[i] ^ salt),
        // Rounding control (bits 10-11): down, up or toward zero.
        x87_control: X87_CONTROL_DEFAULT | (((variant + 1) as u16) << 10),
        _pad: 0,
        // FZ (bit 15), DAZ (bit 6), or both.
        mxcsr: MXCSR_DEFAULT | [0x8000, 0x0040, 0x8040][variant as usize],
    };
    let mut found = CalleeSaved::default();
    // SAFETY: rbx and rbp (which asm cannot name as operands) are pushed
    // and popped around the block; r12-r15 are declared clobbered, and
    // `clobber_abi("C")` covers what `schedule_call` (a C function: it
    // returns, rsp and callee-saved state as they were, when this task runs
    // again) may change. rsp is 16-byte aligned on entry to the block, so
    // after the two pushes and 16 more bytes it is at the call. The caller's
    // x87 control word and MXCSR are kept in that space and reloaded before
    // the block ends. `rdi` points at `found`, `rsi` at `expected`, both
    // live for the block; `rdi` is kept on the stack across the call.
    unsafe {
        asm!(
            "push rbx",
            "push rbp",
            "sub rsp, 16",
            "mov [rsp], rdi",
            "fnstcw word ptr [rsp + 8]",
            "stmxcsr dword ptr [rsp + 12]",
            "fldcw word ptr [rsi + 48]",
            "ldmxcsr dword ptr [rsi + 52]",
            "mov rbx, [rsi]",
            "mov rbp, [rsi + 8]",
            "mov r12, [rsi + 16]",
            "mov r13, [rsi + 24]",
            "mov r14, [rsi + 32]",
            "mov r15, [rsi + 40]",
            "call {schedule_call}",
            "mov rax, [rsp]",
            "mov [rax], rbx",
            "mov [rax + 8], rbp",
            "mov [rax + 16], r12",
            "mov [rax + 24], r13",
            "mov [rax + 32], r14",
            "mov [rax + 40], r15",
            "fnstcw word ptr [rax + 48]",
            "stmxcsr dword ptr [rax + 52]",
            "fldcw word ptr [rsp + 8]",
            "ldmxcsr dword ptr [rsp + 12]",
            "add rsp, 16",
            "pop rbp",
            "pop rbx",
            schedule_call = sym schedule_call,
            in("rdi") &mut found as *mut CalleeSaved,
            in("rsi") &expected as *const CalleeSaved,
            out("r12") _,
            out("r13") _,
            out("r14") _,
            out("r15") _,
            clobber_abi("C"),
        );
    }
    for ((&register, &want), &got) in GPR_NAMES.iter().zip(&expected.gprs).zip(&found.gprs) {
        if got != want {
            return Some(Mismatch { register, expected: want, found: got });
        }
    }
    if found.x87_control != expected.x87_control {
        return Some(Mismatch {
            register: "x87 control word",
            expected: expected.x87_control as u64,
            found: found.x87_control as u64,
        });
    }
    if found.mxcsr != expected.mxcsr {
        return Some(Mismatch { register: "mxcsr", expected: expected.mxcsr as u64, found: found.mxcsr as u64 });
    }
    None
}
