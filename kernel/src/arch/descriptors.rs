//! Per-CPU GDT, TSS with IST stacks, and IDT.
//!
//! Every vector runs on an IST stack: the host target's `core` may use the red
//! zone below `rsp`, which an interrupt on the same stack would overwrite (see
//! ../shared/notes/toolchain.md). Vectors that can nest get stacks of their own:
//!
//! | IST | vectors |
//! |---|---|
//! | 1 | external interrupts and IPIs (32..=255; interrupt gates keep them from nesting) |
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
    const MISSING: Gate =
        Gate { offset_low: 0, selector: 0, options: 0, offset_mid: 0, offset_high: 0, reserved: 0 };

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
pub struct Idt([Gate; 256]);

impl Idt {
    pub const fn new() -> Self {
        Idt([Gate::MISSING; 256])
    }
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

/// Builds and loads this CPU's GDT (code, data, TSS), its IST stacks and IDT.
/// Needs the heap (for the stacks) and an installed per-CPU area.
pub fn init_this_cpu() {
    let cpu = this_cpu();
    // SAFETY: only this CPU touches its own tables, once, before loading them
    // (the `PerCpu` invariant); the stacks are leaked so they live forever.
    let (gdt, tss, idt) = unsafe { (&mut *cpu.gdt.get(), &mut *cpu.tss.get(), &mut *cpu.idt.get()) };
    for i in 0..IST_COUNT {
        let stack: &'static mut [u8] = Box::leak(alloc::vec![0u8; IST_STACK_SIZE].into_boxed_slice());
        let top = (stack.as_ptr() as u64 + IST_STACK_SIZE as u64) & !0xf;
        tss.interrupt_stack_table[i] = VirtAddr::new(top);
    }
    let code = gdt.append(Descriptor::kernel_code_segment());
    let data = gdt.append(Descriptor::kernel_data_segment());
    // SAFETY: the TSS lives in the static per-CPU array, so it outlives the GDT entry.
    let tss_sel = gdt.append(unsafe { Descriptor::tss_segment_unchecked(tss as *const _) });
    debug_assert_eq!(code.0, KERNEL_CODE);

    // SAFETY: isr_stubs is the start of 256 16-byte stubs defined in boot/isr.S.
    let stubs = unsafe { &isr_stubs as *const u8 as u64 };
    for (vector, gate) in idt.0.iter_mut().enumerate() {
        *gate = Gate::interrupt_gate(stubs + 16 * vector as u64, ist_for_vector(vector));
    }

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
    // SAFETY: the IDT is static, every gate points at a valid stub, and each
    // gate's IST index names a stack installed in the TSS just loaded.
    unsafe { lidt(&pointer) };
}
