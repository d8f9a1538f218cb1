//! Per-CPU areas, reached through the GS base.
//!
//! Invariant: every CPU sets its GS base to its own `PerCpu` (in the static
//! array `CPUS`, index = logical CPU id) before it prints or takes an
//! interrupt, and never changes it afterwards. `PerCpu::self_addr` is the first
//! field so that `gs:0` yields the area's address, and `id` is at `gs:8`.

use core::arch::asm;
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use x86_64::registers::model_specific::GsBase;
use x86_64::structures::gdt::GlobalDescriptorTable;
use x86_64::structures::tss::TaskStateSegment;
use x86_64::VirtAddr;

use super::descriptors::Idt;

/// The most CPUs fairway handles (the size of the scheduler's CPU masks).
pub const MAX_CPUS: usize = 256;

/// One CPU's private state.
///
/// The `UnsafeCell` fields (descriptor tables) are written only by their own
/// CPU: during its bring-up, before they are loaded, and afterwards only the
/// TSS's IST1 entry, with interrupts off, at each context switch
/// (`descriptors::set_irq_frame_top`). That is what makes sharing the array
/// between CPUs sound.
#[repr(C, align(64))]
pub struct PerCpu {
    /// Address of this structure (read through `gs:0`).
    self_addr: AtomicUsize,
    /// Logical CPU id (read through `gs:8`).
    id: AtomicUsize,
    /// Top of the stack the interrupt handlers run on (read through `gs:16`
    /// by `irq_common`, which switches to it after saving the interrupted
    /// task's frame in place; see `arch::context`).
    pub(super) irq_stack_top: AtomicU64,
    /// Local APIC id, from CPUID.
    pub apic_id: AtomicU32,
    /// Set once the CPU runs kernel code with its own tables.
    pub online: AtomicBool,
    /// TSC value when the CPU came online.
    pub online_tsc: AtomicU64,
    /// LAPIC timer interrupts taken.
    pub timer_ticks: AtomicU64,
    /// Timer interrupts after which this CPU stops its timer (0 = never).
    pub timer_stop_after: AtomicU64,
    /// Test IPIs taken.
    pub test_ipis: AtomicU64,
    /// Set once this CPU's scheduler runs (its interrupts go to the scheduler hooks).
    pub sched_running: AtomicBool,
    /// Set while this CPU reports a fault; a second fault then only halts.
    pub in_fault: AtomicBool,
    pub(super) gdt: UnsafeCell<GlobalDescriptorTable>,
    pub(super) tss: UnsafeCell<TaskStateSegment>,
    pub(super) idt: UnsafeCell<Idt>,
}

// SAFETY: the atomics are Sync; the UnsafeCell tables are only written by
// their own CPU before being loaded (see the type's invariant).
unsafe impl Sync for PerCpu {}

impl PerCpu {
    const fn new() -> Self {
        PerCpu {
            self_addr: AtomicUsize::new(0),
            id: AtomicUsize::new(0),
            irq_stack_top: AtomicU64::new(0),
            apic_id: AtomicU32::new(0),
            online: AtomicBool::new(false),
            online_tsc: AtomicU64::new(0),
            timer_ticks: AtomicU64::new(0),
            timer_stop_after: AtomicU64::new(0),
            test_ipis: AtomicU64::new(0),
            sched_running: AtomicBool::new(false),
            in_fault: AtomicBool::new(false),
            gdt: UnsafeCell::new(GlobalDescriptorTable::new()),
            tss: UnsafeCell::new(TaskStateSegment::new()),
            idt: UnsafeCell::new(Idt::new()),
        }
    }

    pub fn id(&self) -> usize {
        self.id.load(Ordering::Relaxed)
    }
}

// boot/isr.S reads these offsets.
const _: () = assert!(core::mem::offset_of!(PerCpu, self_addr) == 0);
const _: () = assert!(core::mem::offset_of!(PerCpu, id) == 8);
const _: () = assert!(core::mem::offset_of!(PerCpu, irq_stack_top) == 16);

static CPUS: [PerCpu; MAX_CPUS] = [const { PerCpu::new() }; MAX_CPUS];

/// Whether the boot CPU has set its GS base (before that, everything is CPU 0).
static GS_READY: AtomicBool = AtomicBool::new(false);

/// Points this CPU's GS base at `CPUS[id]`. Called first thing on each CPU.
pub fn install(id: usize) {
    let area = &CPUS[id];
    area.self_addr.store(area as *const PerCpu as usize, Ordering::Relaxed);
    area.id.store(id, Ordering::Relaxed);
    GsBase::write(VirtAddr::new(area as *const PerCpu as u64));
    GS_READY.store(true, Ordering::Release);
}

/// The logical id of the running CPU.
#[inline]
pub fn cpu_id() -> usize {
    if !GS_READY.load(Ordering::Acquire) {
        return 0;
    }
    let id: usize;
    // SAFETY: once GS_READY is set, the boot CPU's GS base is installed, and
    // every AP installs its own before running anything that calls this; gs:8
    // is the `id` field of a live `PerCpu` (repr(C), see the invariant).
    unsafe { asm!("mov {}, gs:[8]", out(reg) id, options(nostack, readonly, preserves_flags)) };
    id
}

/// The running CPU's area.
pub fn this_cpu() -> &'static PerCpu {
    &CPUS[cpu_id()]
}

/// Any CPU's area.
pub fn cpu(id: usize) -> &'static PerCpu {
    &CPUS[id]
}
