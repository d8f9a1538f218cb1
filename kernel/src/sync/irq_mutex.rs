//! A spin lock that keeps interrupts off while held.
//!
//! Everything the interrupt path also takes (runqueues, wake lists, wait
//! queues, timers) must be locked this way: an interrupt handler spinning on
//! a lock its own CPU holds would never get it back. Holding one also means
//! the holder cannot be preempted.
//!
//! Guards may be dropped in any order (a `Vec` of guards drops front to
//! back): each CPU counts the guards it holds and turns interrupts back on
//! only when the last one goes, and only if they were on before the first.
//! Interrupts stay off while any guard is held, so a guard is always dropped
//! on the CPU that took it.

use core::ops::{Deref, DerefMut};
use core::sync::atomic::Ordering;

use spin::{Mutex, MutexGuard};
use x86_64::instructions::interrupts;

use crate::arch::percpu::this_cpu;

/// Interrupts off; counts one more guard on this CPU (remembering, at the
/// first, whether interrupts were on).
#[inline(always)]
fn irq_off_enter() {
    let were = interrupts::are_enabled();
    interrupts::disable();
    let cpu = this_cpu();
    let held = cpu.irq_guards.load(Ordering::Relaxed);
    if held == 0 {
        cpu.irq_were_enabled.store(were, Ordering::Relaxed);
    }
    cpu.irq_guards.store(held + 1, Ordering::Relaxed);
}

/// One guard fewer on this CPU; interrupts back on after the last one if
/// they were on before the first. A guard taken where interrupts were
/// already off (an interrupt handler, the switch) therefore never turns
/// them on.
#[inline(always)]
fn irq_off_exit() {
    let cpu = this_cpu();
    let held = cpu.irq_guards.load(Ordering::Relaxed) - 1;
    cpu.irq_guards.store(held, Ordering::Relaxed);
    if held == 0 && cpu.irq_were_enabled.load(Ordering::Relaxed) {
        interrupts::enable();
    }
}

/// A spin lock taken with interrupts disabled on the local CPU.
pub struct IrqMutex<T> {
    inner: Mutex<T>,
}

/// Holds the lock; see the module docs for when interrupts come back on.
pub struct IrqGuard<'a, T> {
    guard: Option<MutexGuard<'a, T>>,
}

impl<T> IrqMutex<T> {
    pub const fn new(value: T) -> Self {
        IrqMutex { inner: Mutex::new(value) }
    }

    #[inline]
    pub fn lock(&self) -> IrqGuard<'_, T> {
        irq_off_enter();
        IrqGuard { guard: Some(self.inner.lock()) }
    }

    pub fn try_lock(&self) -> Option<IrqGuard<'_, T>> {
        irq_off_enter();
        match self.inner.try_lock() {
            Some(g) => Some(IrqGuard { guard: Some(g) }),
            None => {
                irq_off_exit();
                None
            }
        }
    }
}

impl<T> Deref for IrqGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        self.guard.as_ref().expect("guard present until drop")
    }
}

impl<T> DerefMut for IrqGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_mut().expect("guard present until drop")
    }
}

impl<T> Drop for IrqGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        drop(self.guard.take());
        irq_off_exit();
    }
}
