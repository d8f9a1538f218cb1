//! Architecture layer: everything that touches x86_64 hardware directly.
//! All of the kernel's `unsafe` lives here and in `mem`; the rest is safe code.

pub mod acpi;
pub mod apic;
pub mod backtrace;
pub mod callee_saved;
pub mod context;
pub mod cpuid;
pub mod descriptors;
pub mod exit;
pub mod libc;
pub mod percpu;
pub mod pit;
pub mod platform;
pub mod provoke;
pub mod serial;
pub mod smp;
pub mod time;
pub mod trap;
pub mod vectors;
pub mod wait;

use core::sync::atomic::{AtomicBool, Ordering};

pub use exit::ExitCode;

core::arch::global_asm!(include_str!("../../../boot/multiboot.S"), options(att_syntax));
core::arch::global_asm!(include_str!("../../../boot/trampoline.S"), options(att_syntax));
core::arch::global_asm!(include_str!("../../../boot/isr.S"), options(att_syntax));

/// Called by boot/multiboot.S in long mode with the multiboot magic and info.
#[no_mangle]
extern "C" fn kernel_entry(magic: u32, info: u32) -> ! {
    percpu::install(0);
    time::mark_boot();
    crate::boot_main(magic, info)
}

/// Halts this CPU for good, interrupts off.
pub fn halt_forever() -> ! {
    loop {
        x86_64::instructions::interrupts::disable();
        x86_64::instructions::hlt();
    }
}

/// Waits for the next interrupt (interrupts on): halts, or with `idle=last_polls` polls when
/// every other CPU waits ([`wait`]).
#[inline(always)]
pub fn wait_for_interrupt() {
    wait::wait_for_interrupt();
}

static EXITING: AtomicBool = AtomicBool::new(false);

/// Reports the exit status and leaves QEMU. Only the first caller exits;
/// a concurrent caller on another CPU halts.
pub fn exit_with(code: ExitCode) -> ! {
    x86_64::instructions::interrupts::disable();
    if EXITING.swap(true, Ordering::SeqCst) {
        halt_forever();
    }
    crate::record!("exit", "status={} code={}", (code as u32) << 1 | 1, code.name());
    exit::qemu_exit(code);
    halt_forever()
}
