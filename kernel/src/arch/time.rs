//! Time from the TSC, calibrated against the PIT at boot.
//!
//! Invariant: `TSC_HZ` is 0 until calibration; until then uptime reads 0 and
//! `delay_us` spins on a conservative 4 GHz guess (never shorter than asked).

use core::sync::atomic::{AtomicU64, Ordering};

static BOOT_TSC: AtomicU64 = AtomicU64::new(0);
static TSC_HZ: AtomicU64 = AtomicU64::new(0);
/// `2^32 * 1e9 / TSC_HZ`: nanoseconds per TSC tick in 32.32 fixed point, so
/// that converting needs a multiply, not a division. With any TSC above
/// 1 MHz it is below 2^42, so `delta * mult` fits in u128 for any u64 delta.
static NS_MULT: AtomicU64 = AtomicU64::new(0);
const GUESS_HZ: u64 = 4_000_000_000;

/// TSC rates the boot calibration accepts: every x86_64 TSC, and QEMU's (the
/// host's, or 1 GHz under `-icount shift=0`), is well inside. A rate outside
/// means the reference clock did not count (no PIT, no port 0x61), and every
/// delay and deadline would be off by that factor.
pub const TSC_HZ_PLAUSIBLE: core::ops::RangeInclusive<u64> = 100_000_000..=100_000_000_000;

/// Reads the time-stamp counter.
#[inline]
pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC is unprivileged-safe here and has no side effects.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Records the TSC at kernel entry (the zero of uptime).
pub fn mark_boot() {
    BOOT_TSC.store(rdtsc(), Ordering::Relaxed);
}

pub fn set_tsc_hz(hz: u64) {
    TSC_HZ.store(hz, Ordering::Relaxed);
    let mult = if hz == 0 { 0 } else { ((1_000_000_000u128 << 32) / hz as u128).min(u64::MAX as u128) as u64 };
    NS_MULT.store(mult, Ordering::Relaxed);
}

pub fn tsc_hz() -> u64 {
    TSC_HZ.load(Ordering::Relaxed)
}

/// Converts a TSC difference to microseconds (u128 intermediate: no overflow
/// for any u64 difference).
pub fn tsc_to_us(delta: u64) -> u64 {
    let hz = tsc_hz();
    if hz == 0 {
        return 0;
    }
    (delta as u128 * 1_000_000 / hz as u128) as u64
}

/// Microseconds since kernel entry.
pub fn uptime_us() -> u64 {
    tsc_to_us(rdtsc().wrapping_sub(BOOT_TSC.load(Ordering::Relaxed)))
}

/// Microseconds from kernel entry to a given TSC value.
pub fn us_since_boot(tsc: u64) -> u64 {
    tsc_to_us(tsc.wrapping_sub(BOOT_TSC.load(Ordering::Relaxed)))
}

/// Plain loop iterations between two reads of a clock in a boot-time busy
/// wait, before one PAUSE.
///
/// Why: under QEMU TCG a PAUSE leaves the translated code (QEMU's
/// `helper_pause()` ends the CPU loop, and in `-icount`'s round-robin that
/// passes through every other vCPU), and under `-icount` every RDTSC and port
/// read ends its translated block too. Waits that polled back to back with a
/// PAUSE a round (~5 guest instructions) cost ~0.5 host us per guest
/// instruction at `-smp 8`: the 20 ms PIT calibration alone took 5 to 13 host
/// seconds, a bare boot 9.3 host CPU seconds. A batch of plain iterations runs
/// inside one block at TCG's full speed. Granularity: ~3 us of guest time
/// under `-icount` (3 to 4 instructions an iteration), ~1 us on hardware; it
/// only lengthens a wait, never shortens it. Waits that measure a rate use the
/// finer [`MEASURE_SPINS`] instead.
pub const RELAX_SPINS: u32 = 1024;

/// One polling round's pause in a boot-time busy wait (see [`RELAX_SPINS`]).
#[inline]
pub fn relax() {
    spin(RELAX_SPINS);
    core::hint::spin_loop();
}

/// Plain loop iterations between two reads of a clock in a calibration
/// (no PAUSE, see [`RELAX_SPINS`]): noticing the end late adds ~50 ns of guest
/// time, 0.0003% of the 20 ms PIT interval and 0.003% of a 2 ms LAPIC countdown.
pub const MEASURE_SPINS: u32 = 16;

/// `n` iterations that do nothing the compiler may remove.
#[inline]
pub fn spin(n: u32) {
    for i in 0..n {
        core::hint::black_box(i);
    }
}

/// Busy-waits at least `us` microseconds.
pub fn delay_us(us: u64) {
    let hz = match tsc_hz() {
        0 => GUESS_HZ,
        hz => hz,
    };
    let start = rdtsc();
    let ticks = (us as u128 * hz as u128 / 1_000_000) as u64;
    while rdtsc().wrapping_sub(start) < ticks {
        relax();
    }
}

/// Nanoseconds since kernel entry (32.32 fixed point; error below 1 ns per
/// 4 s of uptime, no overflow: see `NS_MULT`).
#[inline]
pub fn uptime_ns() -> u64 {
    let delta = rdtsc().wrapping_sub(BOOT_TSC.load(Ordering::Relaxed));
    ((delta as u128 * NS_MULT.load(Ordering::Relaxed) as u128) >> 32) as u64
}
