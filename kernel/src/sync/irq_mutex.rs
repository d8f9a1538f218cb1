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
use spin::{Mutex, MutexGuard};

use crate::arch::percpu::{irq_guard_enter as irq_off_enter, irq_guard_exit as irq_off_exit};

/// A spin lock taken with interrupts disabled on the local CPU.
pub struct IrqMutex<T> {
    inner: Mutex<T>,
}

/// Holds the lock; see the module docs for when interrupts come back on.
///
/// Fields drop in declaration order: the spin lock is released first, then
/// the interrupt-off count.
pub struct IrqGuard<'a, T> {
    guard: MutexGuard<'a, T>,
    _irq_off: IrqOff,
}

/// One counted interrupt-off guard of this CPU (see the module docs).
struct IrqOff;

impl IrqOff {
    #[inline(always)]
    fn enter() -> IrqOff {
        irq_off_enter();
        IrqOff
    }
}

impl Drop for IrqOff {
    #[inline(always)]
    fn drop(&mut self) {
        irq_off_exit();
    }
}

impl<T> IrqMutex<T> {
    pub const fn new(value: T) -> Self {
        IrqMutex { inner: Mutex::new(value) }
    }

    #[inline]
    pub fn lock(&self) -> IrqGuard<'_, T> {
        let irq_off = IrqOff::enter();
        IrqGuard { guard: self.inner.lock(), _irq_off: irq_off }
    }

    pub fn try_lock(&self) -> Option<IrqGuard<'_, T>> {
        let irq_off = IrqOff::enter();
        // On failure `irq_off` drops here and undoes the count.
        self.inner.try_lock().map(|guard| IrqGuard { guard, _irq_off: irq_off })
    }
}

impl<T> Deref for IrqGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for IrqGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}
