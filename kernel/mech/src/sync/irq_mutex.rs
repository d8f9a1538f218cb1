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
//!
//! Each lock has a class (`lockdep::LockClass`, `Leaf` unless given one):
//! with the checker on, taking it is checked against the classes the CPU
//! holds (docs/DESIGN.md, "Locks and their order"). Taking and releasing it
//! is told to the platform (`platform::lock_acquired`, `lock_released`:
//! nothing on x86; the simulator prices the wait for another CPU's hold and
//! the lock's line moving): with the class, the key and, when taken, the
//! lock's address; a CPU holds one lock of a class and key at a time (the
//! checker's rule), so the class and key name it at the release and the
//! guard carries nothing more.

use core::ops::{Deref, DerefMut};
use spin::{Mutex, MutexGuard};

use super::lockdep::{self, LockClass};
use crate::platform::{irq_guard_enter as irq_off_enter, irq_guard_exit as irq_off_exit, lock_acquired, lock_released};

/// A spin lock taken with interrupts disabled on the local CPU.
pub struct IrqMutex<T> {
    inner: Mutex<T>,
    class: LockClass,
}

/// Holds the lock; see the module docs for when interrupts come back on.
///
/// Fields drop in declaration order: the spin lock is released first, then
/// the checker's record of it, then the interrupt-off count.
pub struct IrqGuard<'a, T> {
    guard: MutexGuard<'a, T>,
    _held: Held,
    _irq_off: IrqOff,
}

/// The checker's record of one held lock (class and key).
struct Held(LockClass, u8);

impl Drop for Held {
    #[inline(always)]
    fn drop(&mut self) {
        lockdep::release(self.0, self.1);
        lock_released(self.0, self.1);
    }
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
    /// A `Leaf` lock.
    pub const fn new(value: T) -> Self {
        IrqMutex { inner: Mutex::new(value), class: LockClass::Leaf }
    }

    /// A lock of `class`.
    pub const fn with_class(value: T, class: LockClass) -> Self {
        IrqMutex { inner: Mutex::new(value), class }
    }

    #[inline]
    pub fn lock(&self) -> IrqGuard<'_, T> {
        self.lock_nested(0)
    }

    /// Locks instance `key` of a keyed class (a runqueue: its CPU), so that
    /// the checker can order two of them (Linux's `spin_lock_nested`).
    #[inline]
    pub fn lock_nested(&self, key: u8) -> IrqGuard<'_, T> {
        let irq_off = IrqOff::enter();
        // Checked before spinning: an inversion is reported, not deadlocked on.
        lockdep::acquire(self.class, key, false);
        let guard = self.inner.lock();
        lock_acquired(self.class, key, self as *const Self as usize);
        IrqGuard { guard, _held: Held(self.class, key), _irq_off: irq_off }
    }

    pub fn try_lock(&self) -> Option<IrqGuard<'_, T>> {
        self.try_lock_nested(0)
    }

    /// `try_lock` of instance `key` (see `lock_nested`).
    pub fn try_lock_nested(&self, key: u8) -> Option<IrqGuard<'_, T>> {
        let irq_off = IrqOff::enter();
        // On failure `irq_off` drops here and undoes the count.
        self.inner.try_lock().map(|guard| {
            lockdep::acquire(self.class, key, true);
            lock_acquired(self.class, key, self as *const Self as usize);
            IrqGuard { guard, _held: Held(self.class, key), _irq_off: irq_off }
        })
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
