//! The COM1 serial port: the kernel's console.

use uart_16550::SerialPort;

/// I/O port base of COM1.
const COM1: u16 = 0x3f8;

/// Returns an initialised COM1 port.
pub fn com1() -> SerialPort {
    // SAFETY: 0x3f8 is COM1 on the PC platform QEMU emulates; nothing else in the
    // kernel uses those ports (the console owns the only handle).
    let mut port = unsafe { SerialPort::new(COM1) };
    port.init();
    port
}
