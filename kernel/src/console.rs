//! The serial console: whole lines under one lock, the `log` facade, and the
//! `@fw` machine-readable records (format in docs/CONSOLE.md).
//!
//! Lines from different CPUs never interleave: a line is written entirely while
//! the console lock is held, with interrupts off so that a handler on the same
//! CPU cannot try to take the lock it interrupted. An exception can still hit
//! a CPU in the middle of a line (a fault while formatting); its report then
//! finds the lock held by its own CPU and writes through a second handle to the
//! port instead of deadlocking.

use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU32, AtomicU8, Ordering};

use spin::Mutex;
use uart_16550::SerialPort;

use crate::arch;

static PORT: Mutex<Option<SerialPort>> = Mutex::new(None);
/// CPU holding the console lock, or `NO_OWNER`.
static OWNER: AtomicU32 = AtomicU32::new(NO_OWNER);
const NO_OWNER: u32 = u32::MAX;

/// Opens COM1. Called once on the boot CPU before anything prints.
pub fn init() {
    *PORT.lock() = Some(arch::serial::com1());
}

/// Writes one line (the formatted text plus a newline) atomically.
pub fn write_line(args: fmt::Arguments) {
    let me = arch::percpu::cpu_id() as u32;
    if OWNER.load(Ordering::Relaxed) == me {
        // Re-entered from an exception on this CPU while it was printing.
        let mut port = arch::serial::com1();
        let mut out = LineWriter(&mut port);
        let _ = out.write_str("\n");
        let _ = out.write_fmt(args);
        let _ = out.write_str("\n");
        return;
    }
    x86_64::instructions::interrupts::without_interrupts(|| {
        crate::lock::lockdep::acquire(crate::lock::level::LockClass::Console, 0, false);
        let mut guard = PORT.lock();
        OWNER.store(me, Ordering::Relaxed);
        if let Some(port) = guard.as_mut() {
            let mut out = LineWriter(port);
            let _ = out.write_fmt(args);
            let _ = out.write_str("\n");
        }
        OWNER.store(NO_OWNER, Ordering::Relaxed);
        drop(guard);
        crate::lock::lockdep::release(crate::lock::level::LockClass::Console, 0);
    });
}

/// Translates `\n` into `\r\n` for terminals and never blocks on a missing port.
struct LineWriter<'a>(&'a mut SerialPort);

impl Write for LineWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for b in s.bytes() {
            if b == b'\n' {
                self.0.send(b'\r');
            }
            self.0.send(b);
        }
        Ok(())
    }
}

/// Prints one line on the console.
#[macro_export]
macro_rules! kprintln {
    () => { $crate::console::write_line(format_args!("")) };
    ($($arg:tt)*) => { $crate::console::write_line(format_args!($($arg)*)) };
}

/// Prints one machine-readable record: `@fw KIND fields...`.
#[macro_export]
macro_rules! record {
    ($kind:literal) => { $crate::console::write_line(format_args!(concat!("@fw ", $kind))) };
    ($kind:literal, $($arg:tt)*) => {
        $crate::console::write_line(format_args!("@fw {} {}", $kind, format_args!($($arg)*)))
    };
}

/// Marks a boot stage; the harness names the last one reached when a run fails.
pub fn stage(name: &str) {
    write_line(format_args!("@fw stage name={}", name));
}

// ---------------------------------------------------------------------------
// The `log` facade.

static LEVEL: AtomicU8 = AtomicU8::new(log::LevelFilter::Info as u8);

struct Logger;
static LOGGER: Logger = Logger;

/// Installs the logger at the given level (from `log=` on the command line).
pub fn init_log(level: log::LevelFilter) {
    LEVEL.store(level as u8, Ordering::Relaxed);
    let _ = log::set_logger(&LOGGER);
    log::set_max_level(level);
}

impl log::Log for Logger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() as u8 <= LEVEL.load(Ordering::Relaxed)
    }

    fn log(&self, record: &log::Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let us = arch::time::uptime_us();
        write_line(format_args!(
            "[{:>5}.{:06}] cpu{} {:<5} {}",
            us / 1_000_000,
            us % 1_000_000,
            arch::percpu::cpu_id(),
            record.level(),
            record.args()
        ));
    }

    fn flush(&self) {}
}
