//! Leaving QEMU with a status through the `isa-debug-exit` device.

use x86_64::instructions::port::Port;

/// The outcome the kernel reports; QEMU exits with `(code << 1) | 1`.
/// Documented in docs/CONSOLE.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ExitCode {
    Success = 0x10,
    Failure = 0x11,
    Panic = 0x12,
    Exception = 0x13,
    Oom = 0x14,
    Watchdog = 0x15,
}

impl ExitCode {
    pub fn name(self) -> &'static str {
        match self {
            ExitCode::Success => "success",
            ExitCode::Failure => "failure",
            ExitCode::Panic => "panic",
            ExitCode::Exception => "exception",
            ExitCode::Oom => "oom",
            ExitCode::Watchdog => "watchdog",
        }
    }
}

/// Writes the exit value to the debug-exit port. Without the device (a plain
/// QEMU or real hardware) the write does nothing, so the caller halts afterwards.
pub fn qemu_exit(code: ExitCode) {
    let mut port: Port<u32> = Port::new(0xf4);
    // SAFETY: port 0xf4 is the isa-debug-exit device the harness adds; writing
    // to an absent port is harmless on the PC platform.
    unsafe { port.write(code as u32) };
}
