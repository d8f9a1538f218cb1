//! The mechanism's view of the platform: plain functions, named as the
//! mechanism uses them, each forwarding to the bound platform's item.

use alloc::sync::Arc;
use core::fmt;

use super::binding::*;
use super::{Context, CurrentTask, Exit, Frame, RegisterMismatch, RemoteAccess, Stack, SwitchError, Work};
use crate::lock::level::LockClass;

/// This CPU's id.
#[inline(always)]
pub fn cpu_id() -> usize {
    __fairway_platform_cpu_id()
}

/// What runs on this CPU, `None` before its scheduler starts.
#[inline]
pub fn current() -> Option<Arc<CurrentTask>> {
    __fairway_platform_current()
}

/// Runs `f` with what runs on this CPU borrowed, if its scheduler started:
/// `current()` without the reference count, for a caller that holds it
/// across a sleep (a blocking wait). A closure handed to the platform
/// instead (`&mut dyn FnMut`) stayed an indirect call out of line, 27
/// instructions of a pipe round trip at one CPU (+0.9%); hence this second
/// `unsafe` of the crate.
#[inline]
pub fn with_current<R>(f: impl FnOnce(&Arc<CurrentTask>) -> R) -> Option<R> {
    let p = __fairway_platform_current_ptr();
    if p.is_null() {
        return None;
    }
    // SAFETY: by `Platform::current_ptr`'s contract `p` came from an
    // `Arc<CurrentTask>` whose strong count the running CPU's slot owns while this
    // code runs, so it stays alive during `f`; `ManuallyDrop` gives back no
    // count, as none was taken.
    let me = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(p) });
    Some(f(&me))
}

/// See [`Platform::set_current`](super::Platform::set_current).
#[inline]
pub fn set_current(task: Arc<CurrentTask>) {
    __fairway_platform_set_current(task)
}

/// See [`Platform::set_current_irqs_off`](super::Platform::set_current_irqs_off).
#[inline]
pub fn set_current_irqs_off(task: Arc<CurrentTask>) {
    __fairway_platform_set_current_irqs_off(task)
}

/// See [`Platform::irq_guard_enter`](super::Platform::irq_guard_enter).
#[inline(always)]
pub fn irq_guard_enter() {
    __fairway_platform_irq_guard_enter()
}

/// See [`Platform::irq_guard_enter_irqs_off`](super::Platform::irq_guard_enter_irqs_off).
#[inline(always)]
pub fn irq_guard_enter_irqs_off() {
    __fairway_platform_irq_guard_enter_irqs_off()
}

/// See [`Platform::irq_guard_exit`](super::Platform::irq_guard_exit).
#[inline(always)]
pub fn irq_guard_exit() {
    __fairway_platform_irq_guard_exit()
}

/// See [`Platform::irq_guards_held`](super::Platform::irq_guards_held).
#[inline]
pub fn irq_guards_held() -> u32 {
    __fairway_platform_irq_guards_held()
}

/// Whether interrupts are on here.
#[inline]
pub fn irqs_enabled() -> bool {
    __fairway_platform_irqs_enabled()
}

/// Interrupts off here.
#[inline]
pub fn irq_disable() {
    __fairway_platform_irq_disable()
}

/// Interrupts on here.
#[inline]
pub fn irq_enable() {
    __fairway_platform_irq_enable()
}

/// Runs `f` with interrupts off, restoring whether they were on.
#[inline]
pub fn without_interrupts<R>(f: impl FnOnce() -> R) -> R {
    let was_on = irqs_enabled();
    if was_on {
        irq_disable();
    }
    let r = f();
    if was_on {
        irq_enable();
    }
    r
}

/// See [`Platform::wait_for_interrupt`](super::Platform::wait_for_interrupt).
#[inline]
pub fn wait_for_interrupt() {
    __fairway_platform_wait_for_interrupt()
}

/// See [`Platform::context_adopt_here`](super::Platform::context_adopt_here).
#[inline]
pub fn adopt_here(ctx: &Context) {
    __fairway_platform_context_adopt_here(ctx.handle())
}

/// See [`Platform::switch_frames`](super::Platform::switch_frames).
#[inline(always)]
pub fn switch_frames(frame: *mut Frame, prev: &Context, next: &Context) -> Result<*mut Frame, SwitchError> {
    __fairway_platform_switch_frames(frame, prev.handle(), next.handle())
}

/// See [`Platform::give_up_cpu`](super::Platform::give_up_cpu).
#[inline]
pub fn give_up_cpu() {
    __fairway_platform_give_up_cpu()
}

/// See [`Platform::give_up_cpu_unheld`](super::Platform::give_up_cpu_unheld).
#[inline(always)]
pub fn give_up_cpu_unheld() -> u32 {
    __fairway_platform_give_up_cpu_unheld()
}

/// See [`Platform::give_up_cpu_checking`](super::Platform::give_up_cpu_checking).
pub fn give_up_cpu_checking(salt: u64) -> Option<RegisterMismatch> {
    __fairway_platform_give_up_cpu_checking(salt)
}

/// See [`Platform::send_resched_ipi`](super::Platform::send_resched_ipi).
#[inline]
pub fn send_resched_ipi(cpu: usize) {
    __fairway_platform_send_resched_ipi(cpu)
}

/// See [`Platform::timer_start_ns`](super::Platform::timer_start_ns).
#[inline]
pub fn timer_start_ns(ns: u64) {
    __fairway_platform_timer_start_ns(ns)
}

/// See [`Platform::timer_stop`](super::Platform::timer_stop).
#[inline]
pub fn timer_stop() {
    __fairway_platform_timer_stop()
}

/// See [`Platform::timer_eoi`](super::Platform::timer_eoi).
#[inline]
pub fn timer_eoi() {
    __fairway_platform_timer_eoi()
}

/// Nanoseconds since boot.
#[inline(always)]
pub fn uptime_ns() -> u64 {
    __fairway_platform_uptime_ns()
}

/// See [`Platform::stack_alloc`](super::Platform::stack_alloc).
pub fn stack_alloc() -> Option<Stack> {
    __fairway_platform_stack_alloc()
}

/// See [`Platform::stack_free`](super::Platform::stack_free).
pub fn stack_free(stack: Stack) {
    __fairway_platform_stack_free(stack)
}

/// (stacks in use, stacks there are).
pub fn stack_usage() -> (usize, usize) {
    __fairway_platform_stack_usage()
}

/// (heap bytes in use, heap bytes there are).
pub fn heap_usage() -> (usize, usize) {
    __fairway_platform_heap_usage()
}

/// See [`Platform::stack_sizing`](super::Platform::stack_sizing).
pub fn stack_sizing(out: &mut dyn fmt::Write) {
    __fairway_platform_stack_sizing(out)
}

/// One console line (`kprintln!`, `record!`).
#[inline]
pub fn write_line(args: fmt::Arguments) {
    __fairway_platform_write_line(args)
}

/// Ends the run (see [`Platform::exit`](super::Platform::exit)).
pub fn exit(why: Exit) -> ! {
    __fairway_platform_exit(why)
}

/// Spins this CPU for `ns` ns of its clock (see [`Platform::burn_ns`](super::Platform::burn_ns)): the
/// one way a workload burns CPU time, so that a simulated platform can
/// advance its virtual clock instead.
#[inline]
pub fn burn_ns(ns: u64) {
    __fairway_platform_burn_ns(ns)
}

/// Accounts a workload's busy-loop batch of about `instructions` guest
/// instructions (see [`Platform::work_done`](super::Platform::work_done)): free on x86.
#[inline]
pub fn work_done(instructions: u64) {
    __fairway_platform_work_done(instructions)
}

/// Accounts the mechanism's own `work` (see [`Platform::mechanism_work`](super::Platform::mechanism_work)):
/// free on x86.
#[inline]
pub fn mechanism_work(work: Work) {
    __fairway_platform_mechanism_work(work)
}

/// Whether a busy loop's iterations must run (see [`Platform::busy_loops_run`](super::Platform::busy_loops_run)):
/// true on x86.
#[inline]
pub fn busy_loops_run() -> bool {
    __fairway_platform_busy_loops_run()
}

/// See [`Platform::lock_acquired`](super::Platform::lock_acquired).
#[inline(always)]
pub fn lock_acquired(class: LockClass, key: u32, lock: usize) {
    __fairway_platform_lock_acquired(class, key, lock)
}

/// See [`Platform::lock_released`](super::Platform::lock_released).
#[inline(always)]
pub fn lock_released(class: LockClass, key: u32) {
    __fairway_platform_lock_released(class, key)
}

/// See [`Platform::remote_access`](super::Platform::remote_access).
#[inline(always)]
pub fn remote_access(cpu: usize, access: RemoteAccess) {
    __fairway_platform_remote_access(cpu, access)
}

/// See [`Platform::poll_relax`](super::Platform::poll_relax).
#[inline(always)]
pub fn poll_relax() {
    __fairway_platform_poll_relax()
}

/// Declares the running task's working set in KiB (see
/// [`Platform::set_working_set`](super::Platform::set_working_set)): free on x86.
#[inline(always)]
pub fn set_working_set(kib: u32) {
    __fairway_platform_set_working_set(kib)
}
