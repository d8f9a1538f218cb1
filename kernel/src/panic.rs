//! The panic handler: message, CPU and backtrace, then the `panic` exit status.

use core::panic::PanicInfo;

use crate::arch;

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    x86_64::instructions::interrupts::disable();
    let cpu = arch::percpu::cpu_id();
    crate::kprintln!("PANIC on CPU {}: {}", cpu, info.message());
    if let Some(loc) = info.location() {
        crate::kprintln!("  at {}:{}:{}", loc.file(), loc.line(), loc.column());
    }
    crate::record!("panic", "cpu={} msg={}", cpu, info.message());
    arch::backtrace::print_here(cpu);
    arch::exit_with(arch::ExitCode::Panic)
}
