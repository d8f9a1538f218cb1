//! Per-CPU areas, reached through the GS base.
//!
//! Invariant: every CPU sets its GS base to its own `PerCpu` (in the static
//! array `CPUS`, index = logical CPU id) before it prints or takes an
//! interrupt, and never changes it afterwards. `PerCpu::self_addr` is the first
//! field so that `gs:0` yields the area's address, and `id` is at `gs:8`.

use core::arch::asm;
use core::cell::UnsafeCell;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

use x86_64::instructions::interrupts::without_interrupts;

use x86_64::registers::model_specific::GsBase;
use x86_64::structures::gdt::GlobalDescriptorTable;
use x86_64::structures::tss::TaskStateSegment;
use x86_64::VirtAddr;


/// The most CPUs fairway handles: the size of the policy crate's CPU masks,
/// the one definition every per-CPU array and bitmap of the kernel uses.
pub const MAX_CPUS: usize = sched::cpumask::MAX_CPUS;

/// `PerCpu::waiting`: the CPU does not wait (`arch::wait` moves the states).
pub(super) const RUNS: u8 = 0;
/// `PerCpu::waiting`: the CPU waits, counted in `arch::wait`'s `WAITING`.
pub(super) const WAITS: u8 = 1;
/// `PerCpu::waiting`: a reschedule IPI is on its way to the CPU (`arch::wait::woken`); it is
/// not counted.
pub(super) const IPI_COMING: u8 = 2;

/// One CPU's private state.
///
/// The `UnsafeCell` fields (GDT and TSS) are written only by their own
/// CPU: during its bring-up, before they are loaded, and afterwards only the
/// TSS's IST1 entry, with interrupts off, at each context switch
/// (`descriptors::set_irq_frame`). That is what makes sharing the array
/// between CPUs sound. (The IDT is one for all CPUs: `descriptors`.)
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
    /// The running task's frame area end, the value IST1 holds (read through
    /// `gs:24` by `schedule_call`, which saves a blocking task's frame there
    /// without an interrupt; kept equal to IST1 by `set_irq_frame`).
    pub(super) irq_frame_top: AtomicU64,
    /// The scheduler's schedule hook (`trap::Hooks::schedule`, an
    /// `extern "C"` function) once this CPU's scheduler runs, 0 before:
    /// `schedule_call` calls it through `gs:32` directly (set before
    /// `sched_running`, which gates `give_up_cpu`, and never changed after).
    pub(super) schedule_hook: AtomicUsize,
    /// The scheduler's reschedule-IPI hook (`trap::Hooks::resched_ipi`, an
    /// `extern "C"` function) once this CPU's scheduler runs, 0 before:
    /// `irq_resched` calls it through `gs:40` directly (set with
    /// `schedule_hook`, never changed after).
    pub(super) resched_hook: AtomicUsize,
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
    /// Under `idle=last_polls` (`arch::wait`): whether this CPU waits for an interrupt, counted
    /// as waiting, or has a reschedule IPI on its way ([`RUNS`], [`WAITS`], [`IPI_COMING`]).
    pub(super) waiting: AtomicU8,
    /// Interrupts this CPU took, the poller's kick aside (`arch::wait`); only this CPU writes it.
    pub(super) interrupts: AtomicU64,
    /// Interrupt-off lock guards this CPU holds (`lock::irq_mutex`), and
    /// the RFLAGS of every guard's entry ORed together: its IF bit is the
    /// one found before the first guard, the other bits mean nothing. Only
    /// this CPU touches them, through `gs` (`irq_guard_enter`/`irq_guard_exit`).
    irq_guards: AtomicU32,
    /// 1 until this CPU's scheduler runs, then 0 (set with `sched_running`):
    /// beside `irq_guards`, with zeroed padding up to `irq_saved_flags`, so
    /// that one 8-byte load tells whether a task may give up the CPU
    /// (`switch_gate_open`: no guard held and the scheduler running).
    sched_off: AtomicU8,
    gate_pad: [AtomicU8; 3],
    irq_saved_flags: AtomicU64,
    /// The scheduler's word for what runs on this CPU (`current`): an
    /// `Arc` pointer of the type `Current` names, null before its scheduler
    /// starts. Invariant: non-null, it owns one strong count of that object,
    /// and only this CPU replaces it, with interrupts off. This layer never
    /// looks inside it.
    current: AtomicPtr<()>,
    pub(super) gdt: UnsafeCell<GlobalDescriptorTable>,
    pub(super) tss: UnsafeCell<TaskStateSegment>,
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
            irq_frame_top: AtomicU64::new(0),
            schedule_hook: AtomicUsize::new(0),
            resched_hook: AtomicUsize::new(0),
            apic_id: AtomicU32::new(0),
            online: AtomicBool::new(false),
            online_tsc: AtomicU64::new(0),
            timer_ticks: AtomicU64::new(0),
            timer_stop_after: AtomicU64::new(0),
            test_ipis: AtomicU64::new(0),
            sched_running: AtomicBool::new(false),
            in_fault: AtomicBool::new(false),
            waiting: AtomicU8::new(RUNS),
            interrupts: AtomicU64::new(0),
            irq_guards: AtomicU32::new(0),
            sched_off: AtomicU8::new(1),
            gate_pad: [const { AtomicU8::new(0) }; 3],
            irq_saved_flags: AtomicU64::new(0),
            current: AtomicPtr::new(core::ptr::null_mut()),
            gdt: UnsafeCell::new(GlobalDescriptorTable::new()),
            tss: UnsafeCell::new(TaskStateSegment::new()),
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
const _: () = assert!(core::mem::offset_of!(PerCpu, irq_frame_top) == 24);
const _: () = assert!(core::mem::offset_of!(PerCpu, schedule_hook) == 32);
const _: () = assert!(core::mem::offset_of!(PerCpu, resched_hook) == 40);
// `switch_gate_open`'s word: the guard count, `sched_off`, the zero padding.
const _: () = assert!(core::mem::offset_of!(PerCpu, sched_off) == core::mem::offset_of!(PerCpu, irq_guards) + 4);
const _: () = assert!(core::mem::offset_of!(PerCpu, gate_pad) == core::mem::offset_of!(PerCpu, irq_guards) + 5);
const _: () = assert!(core::mem::offset_of!(PerCpu, irq_saved_flags) == core::mem::offset_of!(PerCpu, irq_guards) + 8);

static CPUS: [PerCpu; MAX_CPUS] = [const { PerCpu::new() }; MAX_CPUS];

/// Points this CPU's GS base at `CPUS[id]`. Called first thing on each CPU
/// (`kernel_entry` on the boot CPU, `ap_entry` on the others), before any
/// code that reads the per-CPU area: nothing checks for it afterwards.
pub fn install(id: usize) {
    let area = &CPUS[id];
    area.self_addr.store(area as *const PerCpu as usize, Ordering::Relaxed);
    area.id.store(id, Ordering::Relaxed);
    GsBase::write(VirtAddr::new(area as *const PerCpu as u64));
}

/// The logical id of the running CPU.
#[inline]
pub fn cpu_id() -> usize {
    let id: usize;
    // SAFETY: every CPU installs its GS base before running anything that
    // calls this (`install`); gs:8 is the `id` field of a live `PerCpu`
    // (repr(C), see the invariant).
    unsafe { asm!("mov {}, gs:[8]", out(reg) id, options(nostack, readonly, preserves_flags)) };
    // Told to the compiler, so per-CPU arrays indexed by it need no bounds
    // check.
    // SAFETY: `install` stored `id` only after indexing `CPUS` (of
    // `MAX_CPUS` entries) with it.
    unsafe { core::hint::assert_unchecked(id < MAX_CPUS) };
    id
}

const GUARDS_OFFSET: usize = core::mem::offset_of!(PerCpu, irq_guards);
const SAVED_FLAGS_OFFSET: usize = core::mem::offset_of!(PerCpu, irq_saved_flags);
const CURRENT_OFFSET: usize = core::mem::offset_of!(PerCpu, current);
const SCHED_RUNNING_OFFSET: usize = core::mem::offset_of!(PerCpu, sched_running);
/// RFLAGS.IF's bit number.
const FLAGS_IF_BIT: u32 = 9;
const FRAME_TOP_OFFSET: usize = core::mem::offset_of!(PerCpu, irq_frame_top);
/// IST1 inside this CPU's TSS (an `UnsafeCell` is laid out as its content).
const IST1_OFFSET: usize = core::mem::offset_of!(PerCpu, tss) + core::mem::offset_of!(TaskStateSegment, interrupt_stack_table);

/// Stores `top` into this CPU's IST1 and `irq_frame_top`
/// (`descriptors::set_irq_frame`, at every switch): two stores through
/// `gs`, without finding the area first. The caller holds what
/// `set_irq_frame` requires (interrupts off; `top` canonical, the end of a
/// frame only this CPU writes).
#[inline(always)]
pub(super) fn set_irq_frame_top(top: u64) {
    // No `nomem`: the stores must stay ordered with the switch's other
    // memory accesses (before `prev`'s `on_cpu` release).
    // SAFETY: GS points at this CPU's `PerCpu` (`install`); the offsets are
    // its TSS's IST1 and its `irq_frame_top`, which only this CPU writes
    // (the `PerCpu` invariant), here with interrupts off (the caller's
    // contract), so no interrupt entry reads IST1 half-written.
    unsafe {
        asm!(
            "mov qword ptr gs:[{ist1}], {top}",
            "mov qword ptr gs:[{frame_top}], {top}",
            ist1 = const IST1_OFFSET,
            frame_top = const FRAME_TOP_OFFSET,
            top = in(reg) top,
            options(nostack, preserves_flags),
        )
    }
}

/// Counts one more interrupt-off guard on this CPU, turning interrupts off
/// and folding RFLAGS into the saved flags. While any guard is held
/// interrupts are off, so a nested guard folds in a clear IF and only the
/// first one's IF reaches the saved word (which the last exit clears): no
/// test of the count is needed to tell the first guard from a nested one.
/// An interrupt between `pushfq` and `cli` leaves the count and the saved
/// IF as it found them (its own guards enter and exit with IF clear).
#[inline(always)]
pub fn irq_guard_enter() {
    // No `nomem`: the asm also orders memory accesses, so the compiler
    // moves nothing of the critical section above the `cli`.
    // SAFETY: GS points at this CPU's `PerCpu` (`install`); the offsets are its
    // `irq_guards`/`irq_saved_flags`, touched only by this CPU; pushfq/pop balance.
    unsafe {
        asm!(
            "pushfq",
            "pop {flags}",
            "cli",
            "or qword ptr gs:[{saved}], {flags}",
            "inc dword ptr gs:[{guards}]",
            guards = const GUARDS_OFFSET,
            saved = const SAVED_FLAGS_OFFSET,
            flags = out(reg) _,
        )
    }
}

/// As `irq_guard_enter` where interrupts are already off (the switch, a
/// lock taken inside a held guard): the count alone. RFLAGS would fold in a
/// clear IF, which changes nothing the saved word means (its IF is the first
/// guard's, and the last exit clears it), so the `pushfq`/`cli`/`or` are
/// left out: 4 instructions per lock of every switch and nested lock.
#[inline(always)]
pub fn irq_guard_enter_irqs_off() {
    // No `nomem`, as in `irq_guard_enter`: the critical section stays after it.
    // SAFETY: as in `irq_guard_enter`; the caller has interrupts off (the
    // platform's contract), so nothing can run between here and the lock.
    unsafe {
        asm!(
            "inc dword ptr gs:[{guards}]",
            guards = const GUARDS_OFFSET,
            options(nostack),
        )
    }
}

/// One guard fewer on this CPU; after the last one, interrupts come back on
/// if they were on before the first (the saved IF, cleared here for the
/// next first guard). A guard taken where interrupts were already off (an
/// interrupt handler, the switch) therefore never turns them on.
#[inline(always)]
pub fn irq_guard_exit() {
    // SAFETY: as in `irq_guard_enter`; a guard is held (the caller's), so
    // the count is at least 1 and interrupts are off until the `sti`.
    unsafe {
        asm!(
            "dec dword ptr gs:[{guards}]",
            "jnz 2f",
            "btr qword ptr gs:[{saved}], {if_bit}",
            "jnc 2f",
            "sti",
            "2:",
            guards = const GUARDS_OFFSET,
            saved = const SAVED_FLAGS_OFFSET,
            if_bit = const FLAGS_IF_BIT,
            options(nostack),
        )
    }
}

/// How many interrupt-off guards this CPU holds.
#[inline]
pub fn irq_guards_held() -> u32 {
    let n: u32;
    // SAFETY: as in `irq_guard_enter`; a plain load of this CPU's count.
    unsafe {
        asm!("mov {:e}, dword ptr gs:[{guards}]", out(reg) n, guards = const GUARDS_OFFSET,
             options(nostack, readonly, preserves_flags))
    };
    n
}

/// Whether this CPU's scheduler runs (its `sched_running`), in one load
/// through `gs`: the test of every voluntary switch.
#[inline(always)]
pub fn sched_running_here() -> bool {
    let on: u32;
    // SAFETY: as in `cpu_id`; the offset is `sched_running`'s (an
    // `AtomicBool`, one byte) in a live `PerCpu`. On x86 a plain load has
    // the acquire ordering the flag's readers need, and the asm, without
    // `nomem`, is a compiler barrier as well.
    unsafe {
        asm!("movzx {:e}, byte ptr gs:[{off}]", out(reg) on, off = const SCHED_RUNNING_OFFSET,
             options(nostack, readonly, preserves_flags))
    };
    on != 0
}

/// Marks this CPU's scheduler as running for `switch_gate_open` (with
/// `sched_running`, by `trap::enable_hooks_here`).
pub(super) fn open_switch_gate() {
    this_cpu().sched_off.store(0, Ordering::Relaxed);
}

/// Whether a task may give up this CPU now: no interrupt-off guard held and
/// the scheduler running, in one load through `gs` of the guard count,
/// `sched_off` and the zero padding after them (`schedule()`'s test).
#[inline(always)]
pub fn switch_gate_open() -> bool {
    let word: u64;
    // SAFETY: as in `cpu_id`; the 8 bytes from `irq_guards`' offset are
    // `irq_guards`, `sched_off` and `gate_pad` of a live `PerCpu` (the
    // offsets are asserted above), written only by this CPU.
    unsafe {
        asm!("mov {}, qword ptr gs:[{off}]", out(reg) word, off = const GUARDS_OFFSET,
             options(nostack, readonly, preserves_flags))
    };
    word == 0
}

/// The running CPU's area.
#[inline]
pub fn this_cpu() -> &'static PerCpu {
    let area: usize;
    // SAFETY: as in `cpu_id`; gs:0 is the `self_addr` field, the address of
    // this CPU's element of the static `CPUS` array.
    unsafe { asm!("mov {}, gs:[0]", out(reg) area, options(nostack, readonly, preserves_flags)) };
    // SAFETY: `area` points at a `PerCpu` in a static array, so it is valid
    // for 'static and only ever shared (`PerCpu` is Sync).
    unsafe { &*(area as *const PerCpu) }
}

/// Any CPU's area.
pub fn cpu(id: usize) -> &'static PerCpu {
    &CPUS[id]
}

/// Names the type whose `Arc` the `current` slot holds. The scheduler layer
/// writes the one impl (`impl CurrentKind for Current { type Of = Task; }`);
/// the compiler's coherence rule allows no second one in the crate, so every
/// reader and writer of the slot agrees on the type, and this layer needs
/// to import nothing of the scheduler (Linux keeps `current` in an
/// architecture per-CPU variable the same way: `pcpu_hot.current_task`).
pub trait CurrentKind {
    type Of: Send + Sync + 'static;
}

/// The `current` slot's key type (see `CurrentKind`).
pub struct Current;

type Cur = <Current as CurrentKind>::Of;

/// This CPU's slot: the running object's pointer, null before its
/// scheduler starts. One load through `gs`, so no interrupt or migration
/// can come between finding this CPU's area and reading its slot. At the
/// load the slot named the task running this code (the field's invariant),
/// so a non-null result is the caller itself; it may be preempted and moved
/// since, but wherever it runs, that CPU's slot owns a strong count of it.
#[inline(always)]
pub fn current_ptr() -> *const Cur {
    let p: *const Cur;
    // A pointer-sized load through `gs` is one instruction.
    // SAFETY: as in `cpu_id`; the offset is `current`'s in a live `PerCpu`.
    unsafe {
        asm!("mov {}, gs:[{off}]", out(reg) p, off = const CURRENT_OFFSET,
             options(nostack, readonly, preserves_flags))
    };
    p
}

/// What runs on this CPU, if its scheduler has started (Linux's `current`).
#[inline]
pub fn current() -> Option<Arc<Cur>> {
    let p = current_ptr();
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` is us and alive (`current_ptr`); the increment adds the
    // count the Arc owns.
    unsafe {
        Arc::increment_strong_count(p);
        Some(Arc::from_raw(p))
    }
}

/// Makes `cur` what runs on this CPU (dropping the previous one's count,
/// if the slot held one: the first call on a CPU finds it empty).
pub fn set_current(cur: Arc<Cur>) {
    without_interrupts(|| {
        let new = Arc::into_raw(cur);
        let old: *const Cur;
        // SAFETY: as in `set_current_irqs_off`.
        unsafe {
            asm!("mov {old}, gs:[{off}]", "mov gs:[{off}], {new}", old = out(reg) old, new = in(reg) new,
                 off = const CURRENT_OFFSET, options(nostack, preserves_flags))
        };
        if !old.is_null() {
            // SAFETY: as in `set_current_irqs_off`.
            drop(unsafe { Arc::from_raw(old) });
        }
    });
}

/// As `set_current`, with interrupts already off, for the switch, whose
/// slot always holds the outgoing task (`set_current` filled it when the
/// CPU's scheduler started): no test of an empty slot. The slot is this
/// CPU's alone, so a load and a store through `gs` replace it (not `xchg`,
/// whose memory form is a locked, fully ordered instruction).
#[inline]
pub fn set_current_irqs_off(cur: Arc<Cur>) {
    let new = Arc::into_raw(cur);
    let old: *const Cur;
    // SAFETY: as in `cpu_id`; the offset is `current`'s in a live `PerCpu`.
    // The store puts the new pointer (with the strong count `cur` owned) in
    // the slot after the load took the one it held; interrupts are off and
    // only this CPU writes its slot, so nothing runs between the two.
    unsafe {
        asm!("mov {old}, gs:[{off}]", "mov gs:[{off}], {new}", old = out(reg) old, new = in(reg) new,
             off = const CURRENT_OFFSET, options(nostack, preserves_flags))
    };
    debug_assert!(!old.is_null(), "a switch before the scheduler started here");
    // SAFETY: `old` is non-null (the caller's contract, above) and came
    // from `Arc::into_raw` of a `Cur` (the only type stored, see
    // `CurrentKind`) with the slot's strong count, which the slot no longer
    // holds (invariant); interrupts are off, so no reader on this CPU ran
    // between the slot's last store and the load.
    drop(unsafe { Arc::from_raw(old) });
}
