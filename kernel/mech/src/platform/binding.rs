//! How a binary binds its platform: [`set_platform!`](crate::set_platform)
//! defines one `#[no_mangle]` function per item of [`Platform`](super::Platform),
//! and the `unsafe extern` block below declares the same symbols for the
//! mechanism to call (the `critical-section` crate's pattern; the parent
//! module says why).

use alloc::sync::Arc;
use core::fmt;

use super::{Context, CurrentTask, Exit, Frame, RegisterMismatch, RemoteAccess, Stack, SwitchError, Work};
use crate::lock::level::LockClass;

/// Binds the mechanism to `$platform` (a type implementing
/// [`Platform`](super::Platform)): invoke it once in the binary.
#[macro_export]
macro_rules! set_platform {
    ($platform:ty) => {
        const _: () = {
            use $crate::platform::Platform as __P;
            use $crate::platform::{Context as __Ctx, Exit as __Exit, Frame as __Frame, Stack as __Stack, SwitchError as __SwitchError, Work as __Work};
            use $crate::platform::CurrentTask as __Task;
            extern crate alloc as __alloc;
            #[no_mangle]
            #[inline]
            fn __fairway_platform_cpu_id() -> usize { <$platform as __P>::cpu_id() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_current() -> Option<__alloc::sync::Arc<__Task>> { <$platform as __P>::current() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_current_ptr() -> *const __Task { <$platform as __P>::current_ptr() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_set_current(t: __alloc::sync::Arc<__Task>) { <$platform as __P>::set_current(t) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_set_current_irqs_off(t: __alloc::sync::Arc<__Task>) { <$platform as __P>::set_current_irqs_off(t) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guard_enter() { <$platform as __P>::irq_guard_enter() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guard_enter_irqs_off() { <$platform as __P>::irq_guard_enter_irqs_off() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guard_exit() { <$platform as __P>::irq_guard_exit() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_guards_held() -> u32 { <$platform as __P>::irq_guards_held() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irqs_enabled() -> bool { <$platform as __P>::irqs_enabled() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_disable() { <$platform as __P>::irq_disable() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_irq_enable() { <$platform as __P>::irq_enable() }
            #[no_mangle]
            #[inline(always)]
            fn __fairway_platform_wait_for_interrupt() { <$platform as __P>::wait_for_interrupt() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> __Ctx {
                <$platform as __P>::context_new_thread(entry, arg, stack_top)
            }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_running_here(cpu: usize) -> __Ctx { <$platform as __P>::context_running_here(cpu) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_on_cpu(ctx: usize) -> bool { <$platform as __P>::context_on_cpu(ctx) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_free(ctx: usize) { <$platform as __P>::context_free(ctx) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_context_adopt_here(ctx: usize) { <$platform as __P>::context_adopt_here(ctx) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_switch_frames(frame: *mut __Frame, prev: usize, next: usize) -> Result<*mut __Frame, __SwitchError> {
                <$platform as __P>::switch_frames(frame, prev, next)
            }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_give_up_cpu() { <$platform as __P>::give_up_cpu() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_give_up_cpu_unheld() -> u32 { <$platform as __P>::give_up_cpu_unheld() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_give_up_cpu_checking(salt: u64) -> Option<$crate::platform::RegisterMismatch> {
                <$platform as __P>::give_up_cpu_checking(salt)
            }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_send_resched_ipi(cpu: usize) { <$platform as __P>::send_resched_ipi(cpu) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_timer_start_ns(ns: u64) { <$platform as __P>::timer_start_ns(ns) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_timer_stop() { <$platform as __P>::timer_stop() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_timer_eoi() { <$platform as __P>::timer_eoi() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_uptime_ns() -> u64 { <$platform as __P>::uptime_ns() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_alloc() -> Option<__Stack> { <$platform as __P>::stack_alloc() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_free(s: __Stack) { <$platform as __P>::stack_free(s) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_usage() -> (usize, usize) { <$platform as __P>::stack_usage() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_heap_usage() -> (usize, usize) { <$platform as __P>::heap_usage() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_stack_sizing(out: &mut dyn core::fmt::Write) { <$platform as __P>::stack_sizing(out) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_write_line(args: core::fmt::Arguments) { <$platform as __P>::write_line(args) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_exit(why: __Exit) -> ! { <$platform as __P>::exit(why) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_burn_ns(ns: u64) { <$platform as __P>::burn_ns(ns) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_work_done(instructions: u64) { <$platform as __P>::work_done(instructions) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_mechanism_work(work: __Work) { <$platform as __P>::mechanism_work(work) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_busy_loops_run() -> bool { <$platform as __P>::busy_loops_run() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_lock_acquired(c: $crate::lock::level::LockClass, k: u32, l: usize) { <$platform as __P>::lock_acquired(c, k, l) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_lock_released(c: $crate::lock::level::LockClass, k: u32) { <$platform as __P>::lock_released(c, k) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_remote_access(cpu: usize, a: $crate::platform::RemoteAccess) { <$platform as __P>::remote_access(cpu, a) }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_poll_relax() { <$platform as __P>::poll_relax() }
            #[no_mangle]
            #[inline]
            fn __fairway_platform_set_working_set(kib: u32) { <$platform as __P>::set_working_set(kib) }
        };
    };
}

// SAFETY: each symbol is defined by `set_platform!` above with exactly this
// signature (the same text, one macro), so a call reaches a Rust function of
// the declared type; a binary without the macro fails to link rather than
// run. The functions themselves are safe Rust (the trait's methods).
unsafe extern "Rust" {
    pub(super) safe fn __fairway_platform_cpu_id() -> usize;
    pub(super) safe fn __fairway_platform_current() -> Option<Arc<CurrentTask>>;
    pub(super) safe fn __fairway_platform_current_ptr() -> *const CurrentTask;
    pub(super) safe fn __fairway_platform_set_current(t: Arc<CurrentTask>);
    pub(super) safe fn __fairway_platform_set_current_irqs_off(t: Arc<CurrentTask>);
    pub(super) safe fn __fairway_platform_irq_guard_enter();
    pub(super) safe fn __fairway_platform_irq_guard_enter_irqs_off();
    pub(super) safe fn __fairway_platform_irq_guard_exit();
    pub(super) safe fn __fairway_platform_irq_guards_held() -> u32;
    pub(super) safe fn __fairway_platform_irqs_enabled() -> bool;
    pub(super) safe fn __fairway_platform_irq_disable();
    pub(super) safe fn __fairway_platform_irq_enable();
    pub(super) safe fn __fairway_platform_wait_for_interrupt();
    pub(super) safe fn __fairway_platform_context_new_thread(entry: extern "C" fn(usize) -> !, arg: usize, stack_top: u64) -> Context;
    pub(super) safe fn __fairway_platform_context_running_here(cpu: usize) -> Context;
    pub(super) safe fn __fairway_platform_context_on_cpu(ctx: usize) -> bool;
    pub(super) safe fn __fairway_platform_context_free(ctx: usize);
    pub(super) safe fn __fairway_platform_context_adopt_here(ctx: usize);
    pub(super) safe fn __fairway_platform_switch_frames(frame: *mut Frame, prev: usize, next: usize) -> Result<*mut Frame, SwitchError>;
    pub(super) safe fn __fairway_platform_give_up_cpu();
    pub(super) safe fn __fairway_platform_give_up_cpu_unheld() -> u32;
    pub(super) safe fn __fairway_platform_give_up_cpu_checking(salt: u64) -> Option<RegisterMismatch>;
    pub(super) safe fn __fairway_platform_send_resched_ipi(cpu: usize);
    pub(super) safe fn __fairway_platform_timer_start_ns(ns: u64);
    pub(super) safe fn __fairway_platform_timer_stop();
    pub(super) safe fn __fairway_platform_timer_eoi();
    pub(super) safe fn __fairway_platform_uptime_ns() -> u64;
    pub(super) safe fn __fairway_platform_stack_alloc() -> Option<Stack>;
    pub(super) safe fn __fairway_platform_stack_free(s: Stack);
    pub(super) safe fn __fairway_platform_stack_usage() -> (usize, usize);
    pub(super) safe fn __fairway_platform_heap_usage() -> (usize, usize);
    pub(super) safe fn __fairway_platform_stack_sizing(out: &mut dyn fmt::Write);
    pub(super) safe fn __fairway_platform_write_line(args: fmt::Arguments);
    pub(super) safe fn __fairway_platform_exit(why: Exit) -> !;
    pub(super) safe fn __fairway_platform_burn_ns(ns: u64);
    pub(super) safe fn __fairway_platform_work_done(instructions: u64);
    pub(super) safe fn __fairway_platform_mechanism_work(work: Work);
    pub(super) safe fn __fairway_platform_busy_loops_run() -> bool;
    pub(super) safe fn __fairway_platform_lock_acquired(c: LockClass, k: u32, l: usize);
    pub(super) safe fn __fairway_platform_lock_released(c: LockClass, k: u32);
    pub(super) safe fn __fairway_platform_remote_access(cpu: usize, a: RemoteAccess);
    pub(super) safe fn __fairway_platform_poll_relax();
    pub(super) safe fn __fairway_platform_set_working_set(kib: u32);
}
