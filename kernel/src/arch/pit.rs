//! The 8254 PIT, used once at boot as the reference clock for calibration.
//!
//! Channel 2 counts down in mode 0 with its gate opened through port 0x61; its
//! output bit in port 0x61 goes high when the count reaches zero. That measures
//! a fixed interval without interrupts.
//!
//! Machines without the PC speaker port (`-machine microvm`) read 0xff from
//! port 0x61, so that wait ends at once; [`measure_channel0`] is the second
//! way, channel 0 (its gate is always open) polled through the read-back
//! command's status byte.

use x86_64::instructions::port::Port;

/// The PIT input clock.
pub const PIT_HZ: u64 = 1_193_182;

/// Runs `before` and `after` around a busy wait of `ms` milliseconds (at most 54) measured
/// by the PIT; `before` runs right before the countdown starts.
pub fn measure<B: FnOnce(), A: FnOnce()>(ms: u64, before: B, after: A) {
    let count = (PIT_HZ * ms / 1000).min(0xffff) as u16;
    let mut gate: Port<u8> = Port::new(0x61);
    let mut command: Port<u8> = Port::new(0x43);
    let mut data2: Port<u8> = Port::new(0x42);
    // SAFETY: ports 0x42, 0x43 and 0x61 are the PIT channel 2 and the PC speaker
    // gate; only this boot-time routine touches them, before SMP bring-up.
    unsafe {
        let g = gate.read();
        gate.write((g & !0x02) | 0x01); // gate on, speaker off
        command.write(0b1011_0000); // channel 2, lobyte/hibyte, mode 0, binary
        data2.write(count as u8);
        before();
        data2.write((count >> 8) as u8); // writing the high byte starts the count
        while gate.read() & 0x20 == 0 {
            super::time::spin(super::time::MEASURE_SPINS);
        }
        after();
        gate.write(g);
    }
}

/// As [`measure`], on channel 0: its OUT pin, read through the read-back
/// command's status byte (bit 7), goes high when the count reaches zero. Its
/// IRQ 0 goes nowhere: the 8259s are masked and no I/O APIC entry is set.
pub fn measure_channel0<B: FnOnce(), A: FnOnce()>(ms: u64, before: B, after: A) {
    let count = (PIT_HZ * ms / 1000).min(0xffff) as u16;
    let mut command: Port<u8> = Port::new(0x43);
    let mut data0: Port<u8> = Port::new(0x40);
    // SAFETY: ports 0x40 and 0x43 are PIT channel 0 and the mode register;
    // only this boot-time routine touches them, before SMP bring-up, with
    // interrupts off.
    unsafe {
        command.write(0b0011_0000); // channel 0, lobyte/hibyte, mode 0, binary
        data0.write(count as u8);
        before();
        data0.write((count >> 8) as u8); // writing the high byte starts the count
        loop {
            command.write(0b1110_0010); // read-back: status only, channel 0
            if data0.read() & 0x80 != 0 {
                break;
            }
            super::time::spin(super::time::MEASURE_SPINS);
        }
        after();
    }
}

/// Masks both 8259 PICs: fairway uses only the local APICs.
pub fn disable_8259() {
    let mut master: Port<u8> = Port::new(0x21);
    let mut slave: Port<u8> = Port::new(0xa1);
    // SAFETY: writing 0xff to the PIC data ports masks every legacy IRQ line.
    unsafe {
        master.write(0xff);
        slave.write(0xff);
    }
}
