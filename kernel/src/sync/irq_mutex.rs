//! A spin lock that keeps interrupts off while held.
//!
//! Everything the interrupt path also takes (runqueues, wake lists, wait
//! queues, timers) must be locked this way: an interrupt handler spinning on
//! a lock its own CPU holds would never get it back. Holding one also means
//! the holder cannot be preempted.

use core::ops::{Deref, DerefMut};

use spin::{Mutex, MutexGuard};
use x86_64::instructions::interrupts;

/// A spin lock taken with interrupts disabled on the local CPU.
pub struct IrqMutex<T> {
    inner: Mutex<T>,
}

/// Holds the lock; restores the interrupt flag when dropped.
pub struct IrqGuard<'a, T> {
    guard: Option<MutexGuard<'a, T>>,
    were_enabled: bool,
}

impl<T> IrqMutex<T> {
    pub const fn new(value: T) -> Self {
        IrqMutex { inner: Mutex::new(value) }
    }

    pub fn lock(&self) -> IrqGuard<'_, T> {
        let were_enabled = interrupts::are_enabled();
        interrupts::disable();
        IrqGuard { guard: Some(self.inner.lock()), were_enabled }
    }

    pub fn try_lock(&self) -> Option<IrqGuard<'_, T>> {
        let were_enabled = interrupts::are_enabled();
        interrupts::disable();
        match self.inner.try_lock() {
            Some(g) => Some(IrqGuard { guard: Some(g), were_enabled }),
            None => {
                if were_enabled {
                    interrupts::enable();
                }
                None
            }
        }
    }
}

impl<T> Deref for IrqGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard.as_ref().expect("guard present until drop")
    }
}

impl<T> DerefMut for IrqGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_mut().expect("guard present until drop")
    }
}

impl<T> Drop for IrqGuard<'_, T> {
    fn drop(&mut self) {
        drop(self.guard.take());
        if self.were_enabled {
            interrupts::enable();
        }
    }
}
