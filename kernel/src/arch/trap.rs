//! Interrupt and exception dispatch from the assembly stubs (boot/isr.S).
//!
//! Exceptions are fatal in fairway: the report names the vector, error code,
//! RIP, CR2, every register and the CPU, walks the frame pointers, and exits
//! QEMU with the `exception` status. Interrupts go to their handlers and return
//! the frame to resume.

use core::sync::atomic::Ordering;

use x86_64::registers::control::Cr2;

use super::exit::ExitCode;
use super::vectors::{
    ERROR_VECTOR, POLL_KICK_VECTOR, RESCHED_VECTOR, SCHEDULE_VECTOR, SPURIOUS_VECTOR, TEST_IPI_VECTOR, TIMER_VECTOR,
};
use super::{apic, backtrace, percpu};

/// The `vector` of a frame that `schedule_call` (boot/isr.S) saved: beyond
/// every real vector, so it marks a frame whose caller-saved registers
/// were not saved (what a C call may clobber), which that stub resumes by
/// restoring the rest and jumping back to the caller. No handler sees it:
/// only `irq_common` and `isr_common` frames reach `isr_dispatch`.
pub const SCHEDULE_CALL_FRAME: u64 = 0x100;
// No interrupt's vector (a u8) can be mistaken for it.
const _: () = assert!(SCHEDULE_CALL_FRAME > u8::MAX as u64);

/// What the stubs push, lowest address first.
///
/// Invariant: the layout matches `isr_common` in boot/isr.S exactly; `fx` is
/// 16-byte aligned (the stub aligns the stack) and holds an `fxsave64` image.
#[repr(C, align(16))]
pub struct TrapFrame {
    pub fx: [u8; 512],
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rbp: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rbx: u64,
    pub rax: u64,
    pub vector: u64,
    pub error_code: u64,
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}

const _: () = assert!(core::mem::size_of::<TrapFrame>() == 512 + 22 * 8);
// boot/isr.S's `schedule_call` reads these offsets.
const _: () = assert!(core::mem::offset_of!(TrapFrame, r15) == 512);
const _: () = assert!(core::mem::offset_of!(TrapFrame, r12) == 536);
const _: () = assert!(core::mem::offset_of!(TrapFrame, rbp) == 576);
const _: () = assert!(core::mem::offset_of!(TrapFrame, rbx) == 616);
const _: () = assert!(core::mem::offset_of!(TrapFrame, vector) == 632);
const _: () = assert!(core::mem::offset_of!(TrapFrame, rip) == 648);
const _: () = assert!(core::mem::offset_of!(TrapFrame, rflags) == 664);
const _: () = assert!(core::mem::offset_of!(TrapFrame, rsp) == 672);

/// Kernel code and data selectors (boot GDT and every per-CPU GDT).
pub(super) const KERNEL_CS: u64 = 0x08;
pub(super) const KERNEL_SS: u64 = 0x10;

impl TrapFrame {
    /// A frame of zeros but for the kernel's selectors and the always-set bit of RFLAGS.
    pub(super) fn zeroed() -> TrapFrame {
        TrapFrame {
            fx: [0; 512],
            r15: 0,
            r14: 0,
            r13: 0,
            r12: 0,
            r11: 0,
            r10: 0,
            r9: 0,
            r8: 0,
            rbp: 0,
            rdi: 0,
            rsi: 0,
            rdx: 0,
            rcx: 0,
            rbx: 0,
            rax: 0,
            vector: 0,
            error_code: 0,
            rip: 0,
            cs: KERNEL_CS,
            rflags: 0x2,
            rsp: 0,
            ss: KERNEL_SS,
        }
    }
}

/// What the scheduler does on the interrupt path. Each returns the frame to
/// resume (another task's, after a switch).
pub struct Hooks {
    pub timer: fn(&mut TrapFrame) -> *mut TrapFrame,
    /// `extern "C"`: `irq_resched` (boot/isr.S) calls it directly, after
    /// which it calls [`resched_entered`] first.
    pub resched_ipi: extern "C" fn(&mut TrapFrame) -> *mut TrapFrame,
    /// `extern "C"`: `schedule_call` (boot/isr.S) calls it directly.
    pub schedule: extern "C" fn(&mut TrapFrame) -> *mut TrapFrame,
    /// Explains a page fault at `cr2` (e.g. a thread's stack guard page);
    /// prints its own report and returns true when it recognised it.
    pub explain_page_fault: fn(u64) -> bool,
}

static HOOKS: spin::Once<Hooks> = spin::Once::new();

/// Installs the scheduler's hooks; each CPU starts using them once it calls
/// `enable_hooks_here`.
pub fn install_hooks(h: Hooks) {
    HOOKS.call_once(|| h);
}

/// From now on this CPU's timer, reschedule IPI and schedule interrupt go to
/// the scheduler.
pub fn enable_hooks_here() {
    let cpu = percpu::this_cpu();
    let hooks = HOOKS.get().expect("scheduler hooks installed before a CPU enables them");
    cpu.schedule_hook.store(hooks.schedule as usize, Ordering::Relaxed);
    cpu.sched_running.store(true, Ordering::Release);
    percpu::open_switch_gate();
    // After `sched_running`: the IPI reaches the hook only once the
    // scheduler runs here, directly or (until this store) through
    // `resched_dispatch`.
    cpu.resched_hook.store(hooks.resched_ipi as usize, Ordering::Relaxed);
}

fn hooks_here() -> Option<&'static Hooks> {
    if percpu::this_cpu().sched_running.load(Ordering::Acquire) {
        HOOKS.get()
    } else {
        None
    }
}

/// What every reschedule IPI does first, before its hook's work: the
/// entry's part of `isr_dispatch` (`wait::interrupted`).
#[inline(always)]
pub fn resched_entered() {
    super::wait::interrupted(RESCHED_VECTOR as u64);
}

/// Called by `irq_resched` (boot/isr.S) with the frame saved for the
/// reschedule IPI while this CPU has no hook for it in `gs:40` (its
/// scheduler not yet running, or just started: the hook is called directly
/// from then on); returns the frame to resume. `isr_dispatch` for that one
/// vector, without the vector's dispatch.
#[no_mangle]
extern "C" fn resched_dispatch(frame: &mut TrapFrame) -> *mut TrapFrame {
    match hooks_here() {
        // The hook calls `resched_entered` itself.
        Some(h) => (h.resched_ipi)(frame),
        None => {
            resched_entered();
            apic::eoi();
            frame as *mut TrapFrame
        }
    }
}

/// Called by `isr_common` and `irq_common` with the saved frame; returns the
/// frame to resume. (The reschedule IPI comes through `resched_dispatch`.)
#[no_mangle]
extern "C" fn isr_dispatch(frame: &mut TrapFrame) -> *mut TrapFrame {
    super::wait::interrupted(frame.vector);
    if let Some(h) = hooks_here() {
        match frame.vector {
            v if v == TIMER_VECTOR as u64 => return (h.timer)(frame),
            v if v == SCHEDULE_VECTOR as u64 => return (h.schedule)(frame),
            _ => {}
        }
    }
    match frame.vector {
        0..=31 => exception(frame),
        v if v == TIMER_VECTOR as u64 => {
            let cpu = percpu::this_cpu();
            let ticks = cpu.timer_ticks.fetch_add(1, Ordering::Relaxed) + 1;
            let stop = cpu.timer_stop_after.load(Ordering::Relaxed);
            if stop != 0 && ticks >= stop {
                apic::stop_timer();
            }
            apic::eoi();
        }
        v if v == TEST_IPI_VECTOR as u64 => {
            percpu::this_cpu().test_ipis.fetch_add(1, Ordering::Release);
            apic::eoi();
        }
        v if v == SPURIOUS_VECTOR as u64 => {}
        v if v == POLL_KICK_VECTOR as u64 => apic::eoi(),
        v if v == SCHEDULE_VECTOR as u64 => {}
        v if v == ERROR_VECTOR as u64 => {
            log::warn!("local APIC error interrupt");
            apic::eoi();
        }
        v => {
            log::warn!("unexpected interrupt vector {}", v);
            apic::eoi();
        }
    }
    frame as *mut TrapFrame
}

fn exception_name(vector: u64) -> &'static str {
    match vector {
        0 => "#DE",
        1 => "#DB",
        2 => "NMI",
        3 => "#BP",
        4 => "#OF",
        5 => "#BR",
        6 => "#UD",
        7 => "#NM",
        8 => "#DF",
        10 => "#TS",
        11 => "#NP",
        12 => "#SS",
        13 => "#GP",
        14 => "#PF",
        16 => "#MF",
        17 => "#AC",
        18 => "#MC",
        19 => "#XM",
        20 => "#VE",
        21 => "#CP",
        _ => "reserved",
    }
}

fn exception_description(vector: u64) -> &'static str {
    match vector {
        0 => "divide error",
        1 => "debug",
        2 => "non-maskable interrupt",
        3 => "breakpoint",
        4 => "overflow",
        5 => "bound range exceeded",
        6 => "invalid opcode",
        7 => "device not available",
        8 => "double fault",
        10 => "invalid TSS",
        11 => "segment not present",
        12 => "stack-segment fault",
        13 => "general protection fault",
        14 => "page fault",
        16 => "x87 floating-point error",
        17 => "alignment check",
        18 => "machine check",
        19 => "SIMD floating-point exception",
        _ => "reserved exception",
    }
}

fn exception(frame: &TrapFrame) -> ! {
    let cpu = percpu::this_cpu();
    if cpu.in_fault.swap(true, Ordering::SeqCst) {
        // A fault while reporting a fault: nothing more can be said safely.
        super::halt_forever();
    }
    let cr2 = Cr2::read_raw();
    let id = cpu.id();
    if frame.vector == 14 {
        if let Some(h) = HOOKS.get() {
            (h.explain_page_fault)(cr2);
        }
    }
    crate::kprintln!(
        "EXCEPTION on CPU {}: {} {} (vector {}), error code {:#x}",
        id,
        exception_name(frame.vector),
        exception_description(frame.vector),
        frame.vector,
        frame.error_code
    );
    crate::record!(
        "fault",
        "cpu={} vector={} name={} error={:#x} rip={:#x} cr2={:#x}",
        id,
        frame.vector,
        exception_name(frame.vector),
        frame.error_code,
        frame.rip,
        cr2
    );
    crate::kprintln!(
        "  RIP {:#018x}  CS {:#06x}  RFLAGS {:#010x}  RSP {:#018x}  SS {:#06x}  CR2 {:#018x}",
        frame.rip, frame.cs, frame.rflags, frame.rsp, frame.ss, cr2
    );
    crate::kprintln!(
        "  RAX {:#018x}  RBX {:#018x}  RCX {:#018x}  RDX {:#018x}",
        frame.rax, frame.rbx, frame.rcx, frame.rdx
    );
    crate::kprintln!(
        "  RSI {:#018x}  RDI {:#018x}  RBP {:#018x}  R8  {:#018x}",
        frame.rsi, frame.rdi, frame.rbp, frame.r8
    );
    crate::kprintln!(
        "  R9  {:#018x}  R10 {:#018x}  R11 {:#018x}  R12 {:#018x}",
        frame.r9, frame.r10, frame.r11, frame.r12
    );
    crate::kprintln!("  R13 {:#018x}  R14 {:#018x}  R15 {:#018x}", frame.r13, frame.r14, frame.r15);
    backtrace::print(id, frame.rip, frame.rbp);
    super::exit_with(ExitCode::Exception)
}
