//! Bringing up the application processors with INIT-SIPI-SIPI.
//!
//! The trampoline (boot/trampoline.S) is copied to physical 0x8000 and takes
//! its page tables, stack, entry point and argument from slots at its end. The
//! boot CPU sends INIT to every AP and waits once (10 ms on CPUs older than
//! Linux's cut-off, none on modern ones: see [`init_udelay_us`]); then it starts one AP
//! at a time: it fills the slots, sends STARTUP (and a second STARTUP only if
//! the AP has not answered), and waits until the AP has read its slots and
//! called `ap_entry`. Each AP then finishes
//! its own setup (tables, APIC) in parallel with the next one's start.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use super::{percpu, time};

/// Physical address the trampoline runs at; the SIPI vector is its page number.
const AP_TRAMPOLINE: usize = 0x8000;
/// Bytes of kernel stack per AP.
pub const AP_STACK_SIZE: usize = 64 * 1024;

extern "C" {
    static ap_trampoline_start: u8;
    static ap_trampoline_end: u8;
    static ap_tramp_cr3: u8;
    static ap_tramp_stack: u8;
    static ap_tramp_entry: u8;
    static ap_tramp_arg: u8;
    static boot_pml4: u8;
}

/// The id of the last AP that reached `ap_entry` (the handshake).
static ARRIVED: AtomicUsize = AtomicUsize::new(0);

/// What an AP runs once its tables and APIC are up. Set by `start_aps`.
pub type ApMain = fn(cpu: usize) -> !;
static AP_MAIN: spin::Once<ApMain> = spin::Once::new();

/// Address of `sym` inside the trampoline copy at 0x8000.
fn slot(sym: &u8) -> *mut u64 {
    // SAFETY: only the addresses of the linker symbols are taken.
    let start = unsafe { &ap_trampoline_start as *const u8 as usize };
    (AP_TRAMPOLINE + (sym as *const u8 as usize - start)) as *mut u64
}

/// An AP that did not come up.
#[derive(Debug)]
pub struct StartFailure {
    pub cpu: usize,
    pub apic_id: u32,
}

/// Starts every CPU in `apic_ids` except index 0 (the boot CPU), in order.
/// CPU `i` gets logical id `i`. Returns the CPUs that never answered.
pub fn start_aps(apic_ids: &[u32], ap_main: ApMain) -> Vec<StartFailure> {
    AP_MAIN.call_once(|| ap_main);
    // SAFETY: the trampoline bytes are part of the kernel image; 0x8000..0x9000
    // is conventional memory that nothing else uses (the frame allocator only
    // hands out memory above the kernel) and is identity-mapped.
    unsafe {
        let start = &ap_trampoline_start as *const u8;
        let len = &ap_trampoline_end as *const u8 as usize - start as usize;
        core::ptr::copy_nonoverlapping(start, AP_TRAMPOLINE as *mut u8, len);
        slot(&ap_tramp_cr3).write_volatile(&boot_pml4 as *const u8 as u64);
        slot(&ap_tramp_entry).write_volatile(ap_entry as *const () as usize as u64);
    }
    let mut failures = Vec::new();
    // INIT every AP, then one wait for all of them (the protocol's
    // INIT-to-SIPI delay, where the CPU needs one), then start them one by one
    // with STARTUP: the APs sit in wait-for-SIPI meanwhile.
    for &apic_id in apic_ids.iter().skip(1) {
        super::apic::send_init(apic_id);
    }
    if apic_ids.len() > 1 {
        let (delay, why) = init_udelay_us();
        log::debug!("INIT-to-STARTUP delay {} us ({})", delay, why);
        time::delay_us(delay);
    }
    for (cpu, &apic_id) in apic_ids.iter().enumerate().skip(1) {
        let stack = alloc::vec![0u8; AP_STACK_SIZE].leak();
        let top = (stack.as_ptr() as u64 + AP_STACK_SIZE as u64) & !0xf;
        percpu::cpu(cpu).apic_id.store(apic_id, Ordering::Relaxed);
        // SAFETY: the slots are inside the trampoline copy; the previous AP has
        // already read them (it answered before we got here).
        unsafe {
            slot(&ap_tramp_stack).write_volatile(top);
            slot(&ap_tramp_arg).write_volatile(cpu as u64);
        }
        super::apic::send_sipi((AP_TRAMPOLINE >> 12) as u8, apic_id);
        if !wait_arrival(cpu, 1_000) {
            super::apic::send_sipi((AP_TRAMPOLINE >> 12) as u8, apic_id);
            if !wait_arrival(cpu, 1_000_000) {
                failures.push(StartFailure { cpu, apic_id });
            }
        }
    }
    failures
}

/// The INIT-to-STARTUP delay for this CPU, as Linux chooses it
/// (`smpboot.c: smp_quirk_init_udelay()`; the rule and its host tests are
/// `sched::topology::CpuSignature::init_udelay_us`): none on modern CPUs, 10 ms
/// on older ones. (QEMU needs none: it handles INIT at once.)
pub fn init_udelay_us() -> (u64, &'static str) {
    let l0 = super::cpuid::cpuid(0, 0);
    let leaf0 = sched::topology::CpuidRegs::new(l0.eax, l0.ebx, l0.ecx, l0.edx);
    let signature = sched::topology::CpuSignature::from_leaves(leaf0, super::cpuid::cpuid(1, 0).eax);
    log::debug!("boot CPU: {:?} family {:#x} model {:#x}", signature.vendor, signature.family, signature.model);
    match signature.init_udelay_us() {
        0 => (0, "a modern CPU"),
        us => (us, "not a CPU Linux exempts"),
    }
}

fn wait_arrival(cpu: usize, timeout_us: u64) -> bool {
    let deadline = time::rdtsc() + timeout_us * (time::tsc_hz().max(1) / 1_000_000).max(1);
    while time::rdtsc() < deadline {
        if ARRIVED.load(Ordering::Acquire) == cpu {
            return true;
        }
        time::relax(); // RDTSC is costly under -icount
    }
    ARRIVED.load(Ordering::Acquire) == cpu
}

/// First Rust code on an AP, on its own stack, interrupts off.
extern "C" fn ap_entry(cpu: u64) -> ! {
    let cpu = cpu as usize;
    percpu::install(cpu);
    ARRIVED.store(cpu, Ordering::Release);
    super::descriptors::init_this_cpu();
    if let Err(e) = super::apic::init_this_cpu() {
        panic!("CPU {}: local APIC: {}", cpu, e);
    }
    let main = AP_MAIN.get().copied().expect("AP main routine set before start");
    main(cpu)
}
