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
