//! Per-CPU GDT and TSS with IST stacks, and the IDT all CPUs share.
//!
//! The IDT is the same on every CPU (a gate per vector into its stub, with the
//! vector's IST index; the stacks those indices name are in each CPU's own
//! TSS), so there is one, built by the first CPU and loaded by every CPU:
//! 4 KiB per CPU less, 4 MiB of the kernel image at 1024 CPUs.
//!
//! Every vector runs on an IST stack: the host target's `core` may use the red
//! zone below `rsp`, which an interrupt on the same stack would overwrite (the host
//! target's prebuilt `core` is built for the System V ABI). Vectors that can nest get stacks of their own:
//!
//! | IST | vectors |
//! |---|---|
//! | 1 | external interrupts, IPIs and the schedule interrupt (32..=255; interrupt gates keep them from nesting): points at the end of the running task's saved-frame area, so the CPU and `irq_common` save the interrupted context in place (`arch::context`); the handlers then run on the CPU's handler stack (`gs:16`) |
//! | 2 | NMI |
//! | 3 | double fault |
//! | 4 | machine check |
//! | 5 | every other exception (a fault inside an interrupt handler lands here) |

use alloc::boxed::Box;
use x86_64::instructions::segmentation::{Segment, CS, DS, ES, SS};
use x86_64::instructions::tables::{lidt, load_tss};
use x86_64::structures::gdt::{Descriptor, SegmentSelector};
use x86_64::structures::DescriptorTablePointer;
use x86_64::{PrivilegeLevel, VirtAddr};

use super::percpu::this_cpu;
use super::trap::TrapFrame;

/// Bytes per IST stack.
pub const IST_STACK_SIZE: usize = 16 * 1024;
const IST_COUNT: usize = 5;

/// One 16-byte IDT gate.
#[derive(Clone, Copy)]
#[repr(C)]
struct Gate {
    offset_low: u16,
    selector: u16,
    /// bits 0..3: IST index; bits 8..16: type (0xE = interrupt gate), DPL 0, present.
    options: u16,
    offset_mid: u16,
    offset_high: u32,
    reserved: u32,
}

impl Gate {
    fn interrupt_gate(handler: u64, ist: u16) -> Gate {
        Gate {
            offset_low: handler as u16,
            selector: KERNEL_CODE,
            options: 0x8E00 | (ist & 7),
            offset_mid: (handler >> 16) as u16,
            offset_high: (handler >> 32) as u32,
            reserved: 0,
        }
    }
}

/// The interrupt descriptor table: 256 gates into the stubs of boot/isr.S.
#[repr(C, align(16))]
struct Idt([Gate; 256]);

/// The IDT every CPU loads, built once and never written again.
static IDT: spin::Once<Idt> = spin::Once::new();

fn build_idt() -> Idt {
    // SAFETY: isr_stubs is the start of 256 16-byte stubs defined in boot/isr.S.
    let stubs = unsafe { &isr_stubs as *const u8 as u64 };
    Idt(core::array::from_fn(|vector| Gate::interrupt_gate(stubs + 16 * vector as u64, ist_for_vector(vector))))
}

/// Kernel code selector, the same in the boot GDT and every per-CPU GDT.
const KERNEL_CODE: u16 = 0x08;

extern "C" {
    /// 256 entry stubs, 16 bytes apart (boot/isr.S).
    static isr_stubs: u8;
}

fn ist_for_vector(vector: usize) -> u16 {
    match vector {
        2 => 2,
        8 => 3,
        18 => 4,
        0..=31 => 5,
        _ => 1,
    }
}

/// A new, never freed IST/handler stack; returns its (16-byte aligned) top.
fn leak_stack() -> u64 {
    let stack: &'static mut [u8] = Box::leak(alloc::vec![0u8; IST_STACK_SIZE].into_boxed_slice());
    (stack.as_ptr() as u64 + IST_STACK_SIZE as u64) & !0xf
}

/// The IST1 value that makes an interrupt save its frame exactly into `f`:
/// the CPU pushes ss..rip below this address and `irq_common` the rest.
pub(super) fn frame_top(f: *const TrapFrame) -> u64 {
    f as u64 + core::mem::size_of::<TrapFrame>() as u64
}

/// Points this CPU's IST1 at the end of `f`: the next interrupt taken on
/// this CPU saves the interrupted context into `f`.
///
/// Must be called with interrupts off, on the CPU whose TSS it changes, with
/// `f` a frame that only this CPU may write until the next call (the running
/// task's, see `arch::context`).
pub(super) fn set_irq_frame(f: *const TrapFrame) {
    // `frame_top` is one past a live frame's end, a kernel address:
    // canonical, as IST1 needs. The same address goes to `irq_frame_top`
    // for `schedule_call` (boot/isr.S), which saves a frame there without an
    // interrupt.
    super::percpu::set_irq_frame_top(frame_top(f));
}

/// Builds and loads this CPU's GDT (code, data, TSS) and IST stacks, and
/// loads the shared IDT (the first CPU builds it). Needs the heap (for the
/// stacks) and an installed per-CPU area.
pub fn init_this_cpu() {
    let cpu = this_cpu();
    // SAFETY: only this CPU touches its own tables, once, before loading them
    // (the `PerCpu` invariant); the stacks are leaked so they live forever.
    let (gdt, tss) = unsafe { (&mut *cpu.gdt.get(), &mut *cpu.tss.get()) };
    for i in 0..IST_COUNT {
        tss.interrupt_stack_table[i] = VirtAddr::new(leak_stack());
    }
    // IST1 is a frame area, not a stack: until this CPU's idle task adopts
    // its context (`context::adopt_here`), interrupts save into this one.
    let boot_frame: &'static mut TrapFrame = Box::leak(Box::new(TrapFrame::zeroed()));
    tss.interrupt_stack_table[0] = VirtAddr::new(frame_top(boot_frame));
    cpu.irq_frame_top.store(frame_top(boot_frame), core::sync::atomic::Ordering::Relaxed);
    cpu.irq_stack_top.store(leak_stack(), core::sync::atomic::Ordering::Relaxed);
    let code = gdt.append(Descriptor::kernel_code_segment());
    let data = gdt.append(Descriptor::kernel_data_segment());
    // SAFETY: the TSS lives in the static per-CPU array, so it outlives the GDT entry.
    let tss_sel = gdt.append(unsafe { Descriptor::tss_segment_unchecked(tss as *const _) });
    debug_assert_eq!(code.0, KERNEL_CODE);

    let idt = IDT.call_once(build_idt);

    // SAFETY: the GDT lives in the static per-CPU array ('static) and holds
    // valid code/data/TSS descriptors; reloading the segment registers with the
    // selectors just appended keeps the CPU in a consistent state.
    unsafe {
        gdt.load_unsafe();
        CS::set_reg(SegmentSelector::new(code.index(), PrivilegeLevel::Ring0));
        DS::set_reg(data);
        ES::set_reg(data);
        SS::set_reg(data);
        load_tss(tss_sel);
    }
    let pointer = DescriptorTablePointer {
        limit: (core::mem::size_of::<Idt>() - 1) as u16,
        base: VirtAddr::new(idt as *const Idt as u64),
    };
    // SAFETY: the IDT is static and never written after it was built, every
    // gate points at a valid stub, and each gate's IST index names a stack
    // installed in the TSS just loaded.
    unsafe { lidt(&pointer) };
}
