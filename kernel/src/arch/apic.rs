//! The local APIC, through the `x2apic` crate: x2APIC mode where CPUID offers
//! it, xAPIC (MMIO at the address in IA32_APIC_BASE) otherwise.
//!
//! Each CPU builds its own `LocalApic` handle (the type is deliberately neither
//! Send nor Sync) and keeps it in a per-CPU slot that only that CPU touches,
//! with interrupts off (handlers run with interrupts off too), so no two
//! references to it are ever live at once.
//!
//! The two operations on the scheduler's hot path, EOI and the fixed IPI,
//! write their x2APIC MSRs directly in x2APIC mode: going through the
//! crate's handle costs a per-CPU lookup with interrupts saved and a
//! bit-by-bit ICR, about 25 instructions more per call, and a pipe round
//! trip across CPUs makes four such calls.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use x2apic::lapic::{LocalApic, LocalApicBuilder, TimerDivide, TimerMode};
use x86_64::registers::model_specific::Msr;

use super::percpu::{cpu_id, MAX_CPUS};
use super::vectors::{ERROR_VECTOR, SPURIOUS_VECTOR, TIMER_VECTOR};

struct Slot(UnsafeCell<Option<LocalApic>>);
// SAFETY: slot i is only ever accessed by CPU i (see the module invariant).
unsafe impl Sync for Slot {}

static APICS: [Slot; MAX_CPUS] = [const { Slot(UnsafeCell::new(None)) }; MAX_CPUS];
static X2APIC: AtomicBool = AtomicBool::new(false);
/// LAPIC timer ticks per second at divide-by-1 (0 until calibrated).
static LAPIC_HZ: AtomicU64 = AtomicU64::new(0);

/// Runs `f` on this CPU's local APIC with interrupts off.
fn with_apic<R>(f: impl FnOnce(&mut LocalApic) -> R) -> Option<R> {
    x86_64::instructions::interrupts::without_interrupts(|| {
        // SAFETY: the slot belongs to this CPU and interrupts are off, so no
        // other reference to it exists while `f` runs.
        let slot = unsafe { &mut *APICS[cpu_id()].0.get() };
        slot.as_mut().map(f)
    })
}

/// Which mode the APICs run in.
pub fn mode_name() -> &'static str {
    if X2APIC.load(Ordering::Relaxed) {
        "x2apic"
    } else {
        "xapic"
    }
}

/// Enables this CPU's local APIC with the timer stopped.
pub fn init_this_cpu() -> Result<(), &'static str> {
    let x2 = super::cpuid::has_x2apic();
    X2APIC.store(x2, Ordering::Relaxed);
    // SAFETY: reading IA32_APIC_BASE has no side effects.
    let base = unsafe { x2apic::lapic::xapic_base() };
    let mut apic = LocalApicBuilder::new()
        .timer_vector(TIMER_VECTOR as usize)
        .error_vector(ERROR_VECTOR as usize)
        .spurious_vector(SPURIOUS_VECTOR as usize)
        .timer_mode(TimerMode::OneShot)
        .timer_divide(TimerDivide::Div1)
        .timer_initial(0)
        .set_xapic_base(base)
        .build()?;
    // SAFETY: enabling the APIC of the running CPU; its xAPIC window is
    // identity-mapped (first 4 GiB) and the vectors have IDT gates.
    unsafe {
        apic.enable();
        apic.disable_timer();
    }
    x86_64::instructions::interrupts::without_interrupts(|| {
        // SAFETY: this CPU's slot, interrupts off (module invariant).
        unsafe { *APICS[cpu_id()].0.get() = Some(apic) };
    });
    Ok(())
}

/// Signals end of interrupt.
pub fn eoi() {
    if X2APIC.load(Ordering::Relaxed) {
        // SAFETY: in x2APIC mode (this CPU enabled it at bring-up, as every
        // CPU does when X2APIC is set) writing 0 to the EOI MSR ends the
        // interrupt in service; called from an interrupt handler.
        unsafe { Msr::new(X2APIC_EOI_MSR).write(0) };
        return;
    }
    // SAFETY: called from an interrupt handler of this CPU.
    with_apic(|a| unsafe { a.end_of_interrupt() });
}

/// x2APIC registers (Intel SDM vol. 3, "x2APIC Register Address Space").
const X2APIC_EOI_MSR: u32 = 0x80B;
const X2APIC_ICR_MSR: u32 = 0x830;
/// ICR bits: level "assert" (bit 14); fixed delivery, physical destination
/// and no shorthand are zero. The destination APIC id is bits 32..64.
const ICR_LEVEL_ASSERT: u64 = 1 << 14;

/// Waits until the previous IPI was delivered (xAPIC only; x2APIC writes are
/// complete when the WRMSR retires).
fn wait_icr_idle(a: &LocalApic) {
    if X2APIC.load(Ordering::Relaxed) {
        return;
    }
    // SAFETY: reading the ICR delivery status has no side effects.
    while unsafe { a.get_ipi_delivery_status() } {
        core::hint::spin_loop();
    }
}

/// Sends a fixed IPI with `vector` to the CPU with `apic_id`. Inlined: the
/// x2APIC write is one instruction, the call around it five more, on every
/// remote wakeup; the xAPIC path stays out of line.
#[inline(always)]
pub fn send_ipi(vector: u8, apic_id: u32) {
    if X2APIC.load(Ordering::Relaxed) {
        let icr = (u64::from(apic_id) << 32) | ICR_LEVEL_ASSERT | u64::from(vector);
        // An x2APIC ICR write needs no wait for the previous delivery.
        // SAFETY: x2APIC mode (see `eoi`): the fixed, physical IPI the crate's
        // `send_ipi` writes, to a valid APIC id; `vector` has a gate everywhere.
        unsafe { Msr::new(X2APIC_ICR_MSR).write(icr) };
        return;
    }
    send_ipi_xapic(vector, apic_id);
}

/// [`send_ipi`] in xAPIC mode, through the crate's handle.
#[inline(never)]
fn send_ipi_xapic(vector: u8, apic_id: u32) {
    with_apic(|a| {
        wait_icr_idle(a);
        // SAFETY: a fixed IPI to a valid APIC id, with a handler on every CPU.
        unsafe { a.send_ipi(vector, apic_dest(apic_id)) };
    });
}

/// Sends INIT to an AP.
pub fn send_init(apic_id: u32) {
    with_apic(|a| {
        wait_icr_idle(a);
        // SAFETY: INIT to an AP that is not running kernel code yet.
        unsafe { a.send_init_ipi(apic_dest(apic_id)) };
        wait_icr_idle(a);
    });
}

/// Sends a STARTUP IPI: the AP starts at physical `page << 12` in real mode.
pub fn send_sipi(page: u8, apic_id: u32) {
    with_apic(|a| {
        wait_icr_idle(a);
        // SAFETY: the trampoline has been copied to that page.
        unsafe { a.send_sipi(page, apic_dest(apic_id)) };
        wait_icr_idle(a);
    });
}

/// Whether an IPI can reach the CPU with `apic_id` in the mode the APICs run
/// in: xAPIC's destination field has 8 bits and 0xFF is its broadcast, so a
/// CPU with a larger ID (firmware lists them as x2APIC entries) can only be
/// started in x2APIC mode, whose IDs are 32 bits (0xFFFF_FFFF: broadcast).
pub fn addressable(apic_id: u32) -> bool {
    if X2APIC.load(Ordering::Relaxed) {
        apic_id != u32::MAX
    } else {
        apic_id < 0xFF
    }
}

/// In xAPIC mode the destination lives in ICR bits 56..64, which the crate
/// fills from bits 32..64 of its argument; x2APIC takes the full 32-bit id.
fn apic_dest(apic_id: u32) -> u32 {
    if X2APIC.load(Ordering::Relaxed) {
        apic_id
    } else {
        apic_id << 24
    }
}

/// Starts a one-shot countdown of `initial` ticks (divide by 1).
pub fn start_oneshot(initial: u32) {
    // SAFETY: timer configuration of this CPU's APIC.
    with_apic(|a| unsafe {
        a.set_timer_mode(TimerMode::OneShot);
        a.set_timer_divide(TimerDivide::Div1);
        a.enable_timer();
        a.set_timer_initial(initial);
    });
}
/// Starts the periodic tick at `hz` (needs calibration).
pub fn start_periodic(hz: u32) {
    let per_tick = (LAPIC_HZ.load(Ordering::Relaxed) / hz.max(1) as u64).clamp(1, u32::MAX as u64) as u32;
    // SAFETY: timer configuration of this CPU's APIC; the vector has a gate.
    with_apic(|a| unsafe {
        a.set_timer_mode(TimerMode::Periodic);
        a.set_timer_divide(TimerDivide::Div1);
        a.enable_timer();
        a.set_timer_initial(per_tick);
    });
}

/// Stops (masks) this CPU's timer.
pub fn stop_timer() {
    // SAFETY: masking the timer of this CPU's APIC.
    with_apic(|a| unsafe {
        a.set_timer_initial(0);
        a.disable_timer();
    });
}

/// LAPIC timer counts per ns in 32.32 fixed point: `hz * 2^32 / 1e9`. With
/// `hz` below 2^40 (1 THz) it fits in u64; `ns_to_counts` multiplies in u128.
static COUNTS_PER_NS_FP32: AtomicU64 = AtomicU64::new(0);

pub fn set_lapic_hz(hz: u64) {
    LAPIC_HZ.store(hz, Ordering::Relaxed);
    COUNTS_PER_NS_FP32.store(((hz as u128) << 32).div_ceil(1_000_000_000) as u64, Ordering::Relaxed);
}

/// LAPIC timer counts lasting at least `ns` (rounded up; a multiply and a
/// shift: the timer is re-armed at every idle entry and tick).
pub fn ns_to_counts(ns: u64) -> u64 {
    let counts = (ns as u128 * COUNTS_PER_NS_FP32.load(Ordering::Relaxed) as u128).div_ceil(1 << 32);
    counts.min(u64::MAX as u128) as u64
}

