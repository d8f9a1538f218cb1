//! The x86_64 implementation of the mechanism's platform interface
//! (`mech::platform::Platform`): each item forwards to the part of `arch`
//! (or `mem`, `console`) that does it. This file is the only place `arch`
//! names the mechanism's types, and only the interface's own.

use alloc::boxed::Box;
use alloc::sync::Arc;
use core::fmt;

use mech::platform::{Context as MechContext, CurrentTask as Task, Exit, Frame, Platform, RegisterMismatch, Stack, SwitchError};

use super::context::{self, Context};
use super::trap::TrapFrame;
use super::{apic, percpu, time, ExitCode};

/// fairway's x86_64 machine.
pub struct KernelPlatform;

mech::set_platform!(KernelPlatform);

// The per-CPU `current` slot holds the mechanism's task, whatever the
// interface names it (`mech::platform::CurrentTask`): this is the one place
// of `arch` that says so (see `percpu::CurrentKind`).
impl percpu::CurrentKind for percpu::Current {
    type Of = Task;
}

/// The context behind a handle of `context_new_thread`/`context_running_here`.
#[inline(always)]
fn ctx(handle: usize) -> &'static Context {
    // SAFETY: a handle is only made from `Box::into_raw` below
    // (`MechContext::from_handle`'s contract), and freed only by
    // `context_free` when its `MechContext` drops, after which no
    // mechanism code holds it; the borrow lasts no longer than the call.
    unsafe { &*(handle as *const Context) }
}

fn wrap(c: Context) -> MechContext {
    // SAFETY: the handle is a fresh `Box` pointer, freed by `context_free`.
    unsafe { MechContext::from_handle(Box::into_raw(Box::new(c)) as usize) }
}

impl Platform for KernelPlatform {
    #[inline(always)]
    fn cpu_id() -> usize {
        percpu::cpu_id()
    }
    #[inline(always)]
    fn current() -> Option<Arc<Task>> {
        percpu::current()
    }
    #[inline(always)]
    fn current_ptr() -> *const Task {
        percpu::current_ptr()
    }
    #[inline(always)]
    fn set_current(task: Arc<Task>) {
        percpu::set_current(task)
    }
    #[inline(always)]
    fn set_current_irqs_off(task: Arc<Task>) {
        percpu::set_current_irqs_off(task)
    }
    #[inline(always)]
    fn irq_guard_enter() {
        percpu::irq_guard_enter()
    }
    #[inline(always)]
    fn irq_guard_enter_irqs_off() {
        percpu::irq_guard_enter_irqs_off()
    }
    #[inline(always)]
    fn irq_guard_exit() {
        percpu::irq_guard_exit()
    }
    #[inline(always)]
    fn irq_guards_held() -> u32 {
        percpu::irq_guards_held()
    }
    #[inline(always)]
    fn irqs_enabled() -> bool {
        x86_64::instructions::interrupts::are_enabled()
    }
    #[inline(always)]
    fn irq_disable() {
        x86_64::instructions::interrupts::disable()
    }
    #[inline(always)]
    fn irq_enable() {
        x86_64::instructions::interrupts::enable()
    }
    #[inline(always)]
    fn wait_for_interrupt() {
        super::wait_for_interrupt()
    }
    fn context_new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> MechContext {
        wrap(Context::new_thread(entry, arg, stack_top))
    }
    fn context_running_here(cpu: usize) -> MechContext {
        wrap(Context::running_here(cpu))
    }
    #[inline(always)]
    fn context_on_cpu(handle: usize) -> bool {
        ctx(handle).on_cpu()
    }
    fn context_free(handle: usize) {
        // SAFETY: as in `ctx`; the owning `MechContext` is being dropped,
        // so this is the handle's last use.
        drop(unsafe { Box::from_raw(handle as *mut Context) });
    }
    fn context_adopt_here(handle: usize) {
        context::adopt_here(ctx(handle))
    }
    #[inline(always)]
    fn switch_frames(frame: *mut Frame, prev: usize, next: usize) -> Result<*mut Frame, SwitchError> {
        // SAFETY: `frame` is the pointer the interrupt entry handed the
        // mechanism (`trap::Hooks`, cast there), the running task's frame,
        // which nothing else touches while this CPU handles the interrupt.
        let frame = unsafe { &mut *frame.cast::<TrapFrame>() };
        match context::switch_frames(frame, ctx(prev), ctx(next)) {
            Ok(f) => Ok(f.cast()),
            Err(context::SwitchError::RunningElsewhere { cpu }) => Err(SwitchError::RunningElsewhere { cpu }),
        }
    }
    #[inline(always)]
    fn give_up_cpu() {
        context::give_up_cpu()
    }
    #[inline(always)]
    fn give_up_cpu_unheld() -> u32 {
        context::give_up_cpu_unheld()
    }
    fn give_up_cpu_checking(salt: u64) -> Option<RegisterMismatch> {
        super::callee_saved::give_up_cpu_checking(salt)
            .map(|m| RegisterMismatch { register: m.register, expected: m.expected, found: m.found })
    }
    #[inline(always)]
    fn send_resched_ipi(cpu: usize) {
        super::wait::woken(cpu);
        apic::send_ipi(
            super::vectors::RESCHED_VECTOR,
            percpu::cpu(cpu).apic_id.load(core::sync::atomic::Ordering::Relaxed),
        );
    }
    #[inline(always)]
    fn timer_start_ns(ns: u64) {
        let counts = apic::ns_to_counts(ns).clamp(1, u32::MAX as u64);
        apic::start_oneshot(counts as u32);
    }
    #[inline(always)]
    fn timer_stop() {
        apic::stop_timer()
    }
    #[inline(always)]
    fn timer_eoi() {
        apic::eoi()
    }
    #[inline(always)]
    fn uptime_ns() -> u64 {
        time::uptime_ns()
    }
    fn stack_alloc() -> Option<Stack> {
        crate::mem::stack::alloc().map(|s| Stack { slot: s.slot, top: s.top })
    }
    fn stack_free(stack: Stack) {
        crate::mem::stack::free(crate::mem::stack::Stack { slot: stack.slot, top: stack.top })
    }
    fn stack_usage() -> (usize, usize) {
        crate::mem::stack::usage()
    }
    fn heap_usage() -> (usize, usize) {
        crate::mem::heap::usage()
    }
    fn stack_sizing(out: &mut dyn fmt::Write) {
        if let Some(s) = crate::mem::stack::sizing() {
            let _ = write!(out, ": {}", s);
            // Below the ceiling, memory is what limits the arena.
            if s.slots < s.ceiling {
                let _ = write!(out, "; more memory gives more, up to {}", s.ceiling);
            }
        }
    }
    fn write_line(args: fmt::Arguments) {
        crate::console::write_line(args)
    }
    fn exit(why: Exit) -> ! {
        match why {
            Exit::Watchdog => super::exit_with(ExitCode::Watchdog),
        }
    }
    fn burn_ns(ns: u64) {
        // A TSC loop: interrupts stay as they are, so the tick can preempt it.
        let end = time::uptime_ns() + ns;
        while time::uptime_ns() < end {
            core::hint::spin_loop();
        }
    }
    #[inline(always)]
    fn work_done(_instructions: u64) {
        // The CPU spent the time itself: nothing to account, no clock read.
    }
}
