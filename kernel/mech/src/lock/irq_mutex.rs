//! A spin lock that keeps interrupts off while held, its level in its type.
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
//! Each lock's level (`level.rs`) is a type parameter, `IrqMutex<L, T>`, so
//! every lock names one. Taking a lock while presenting the guard of a lock
//! held ([`IrqMutex::lock_inside`]) compiles only in the order of the list;
//! [`IrqMutex::lock`] presents nothing, and the runtime checker
//! (`lockdep.rs`, with `lockdep=1`) checks every lock taken against the
//! classes its CPU holds, whichever way it was taken.
//!
//! Taking and releasing a lock is told to the platform
//! (`platform::lock_acquired`, `lock_released`: nothing on x86; the
//! simulator prices the wait for another CPU's hold and the lock's line
//! moving): with the level's class, the key and, when taken, the lock's
//! address; a CPU holds one lock of a class and key at a time (the
//! checker's rule), so the class and key name it at the release and the
//! guard carries nothing more.

use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use spin::{Mutex, MutexGuard};

use super::level::{Level, Outside};
use super::lockdep;
use crate::platform::{irq_guard_enter as irq_off_enter, irq_guard_enter_irqs_off, irq_guard_exit as irq_off_exit, lock_acquired, lock_released};

/// A spin lock of level `L` taken with interrupts disabled on the local CPU.
pub struct IrqMutex<L: Level, T> {
    inner: Mutex<T>,
    level: PhantomData<L>,
}

/// Holds the lock; see the module docs for when interrupts come back on.
///
/// Fields drop in declaration order: the spin lock is released first, then
/// the checker's record of it, then the interrupt-off count.
pub struct IrqGuard<'a, L: Level, T> {
    guard: MutexGuard<'a, T>,
    _record: Record<L>,
    _irq_off: IrqOff,
}

/// A held lock whose level is known when compiling: what
/// [`IrqMutex::lock_inside`] takes as the proof that the new lock ranks
/// inside it (an [`IrqGuard`], or a guard that wraps one, as the runqueue's).
pub trait Holds {
    type Level: Level;
}

impl<L: Level, T> Holds for IrqGuard<'_, L, T> {
    type Level = L;
}

/// A lock of level `L` held, borrowed from its guard beside the data it
/// guards ([`IrqGuard::split`]), to present to [`IrqMutex::lock_inside`].
pub struct Held<'a, L: Level>(PhantomData<&'a L>);

impl<L: Level> Holds for Held<'_, L> {
    type Level = L;
}

impl<L: Level, T> IrqGuard<'_, L, T> {
    /// The guarded data and the proof that the lock is held, both borrowed
    /// from the guard: the data stays usable while the proof takes an inner
    /// lock.
    #[inline(always)]
    pub fn split(&mut self) -> (&mut T, Held<'_, L>) {
        (&mut self.guard, Held(PhantomData))
    }
}

/// The checker's record of one held lock of level `L` (its key).
struct Record<L: Level>(u32, PhantomData<L>);

impl<L: Level> Drop for Record<L> {
    #[inline(always)]
    fn drop(&mut self) {
        lockdep::release(L::CLASS, self.0);
        lock_released(L::CLASS, self.0);
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

impl IrqOff {
    /// [`IrqOff::enter`] where interrupts are known to be off already.
    #[inline(always)]
    fn enter_irqs_off() -> IrqOff {
        irq_guard_enter_irqs_off();
        IrqOff
    }
}

impl Drop for IrqOff {
    #[inline(always)]
    fn drop(&mut self) {
        irq_off_exit();
    }
}

impl<L: Level, T> IrqMutex<L, T> {
    pub const fn new(value: T) -> Self {
        IrqMutex { inner: Mutex::new(value), level: PhantomData }
    }

    /// Takes the lock presenting no held lock: its order against what this
    /// CPU holds is the runtime checker's to see.
    #[inline]
    pub fn lock(&self) -> IrqGuard<'_, L, T> {
        self.lock_nested(0)
    }

    /// Takes the lock inside `outer`, a lock this code holds: compiles only
    /// if this lock's level is inner to `outer`'s (`level.rs`). The runtime
    /// checker still checks it against every lock its CPU holds.
    ///
    /// A runqueue lock ranks inside every `pi_lock`, so taking a `pi_lock`
    /// inside a held runqueue lock does not compile:
    ///
    /// ```compile_fail,E0277
    /// use mech::lock::{level, IrqGuard, IrqMutex};
    /// // Never called: the order is a type error, and the doctest links nothing of the
    /// // mechanism (which needs a platform), so that it would build if the order were right.
    /// fn inverted<'a>(pi_lock: &'a IrqMutex<level::PiLock, ()>, rq: &IrqGuard<'_, level::Runqueue, ()>) -> IrqGuard<'a, level::PiLock, ()> {
    ///     pi_lock.lock_inside(rq)
    /// }
    /// ```
    #[inline]
    pub fn lock_inside<H: Holds>(&self, outer: &H) -> IrqGuard<'_, L, T>
    where
        H::Level: Outside<L>,
    {
        // `outer` is held, so interrupts are off already.
        let _ = outer;
        self.lock_nested_with(0, IrqOff::enter_irqs_off())
    }

    /// Locks instance `key` of a keyed level (a runqueue: its CPU), so that
    /// the checker can order two of them (Linux's `spin_lock_nested`).
    #[inline]
    pub fn lock_nested(&self, key: u32) -> IrqGuard<'_, L, T> {
        self.lock_nested_with(key, IrqOff::enter())
    }

    /// The lock taken once `irq_off` has counted its guard.
    #[inline(always)]
    fn lock_nested_with(&self, key: u32, irq_off: IrqOff) -> IrqGuard<'_, L, T> {
        // Checked before spinning: an inversion is reported, not deadlocked on.
        lockdep::acquire(L::CLASS, key, false);
        // One attempt before the spin loop: an uncontended lock (the
        // usual case) is taken straight through, without the padding that
        // aligns the loop's head or the jump out of it.
        let guard = match self.inner.try_lock() {
            Some(guard) => guard,
            None => self.inner.lock(),
        };
        lock_acquired(L::CLASS, key, self as *const Self as usize);
        IrqGuard { guard, _record: Record(key, PhantomData), _irq_off: irq_off }
    }

    /// [`lock_nested`](Self::lock_nested) inside `outer` (see [`lock_inside`](Self::lock_inside)).
    #[inline]
    pub fn lock_nested_inside<H: Holds>(&self, outer: &H, key: u32) -> IrqGuard<'_, L, T>
    where
        H::Level: Outside<L>,
    {
        // `outer` is held, so interrupts are off already.
        let _ = outer;
        self.lock_nested_with(key, IrqOff::enter_irqs_off())
    }

    /// [`lock_nested`](Self::lock_nested) where the caller has interrupts
    /// off already (the switch, on the interrupt path): the guard counts
    /// itself without saving and disabling them (`Platform::irq_guard_enter_irqs_off`).
    /// Called with interrupts on, the lock would be held with them on.
    #[inline]
    pub fn lock_nested_irqs_off(&self, key: u32) -> IrqGuard<'_, L, T> {
        self.lock_nested_with(key, IrqOff::enter_irqs_off())
    }

    pub fn try_lock(&self) -> Option<IrqGuard<'_, L, T>> {
        self.try_lock_nested(0)
    }

    /// `try_lock` of instance `key` (see `lock_nested`). A try cannot
    /// deadlock, so it takes no order.
    pub fn try_lock_nested(&self, key: u32) -> Option<IrqGuard<'_, L, T>> {
        let irq_off = IrqOff::enter();
        // On failure `irq_off` drops here and undoes the count.
        self.inner.try_lock().map(|guard| {
            lockdep::acquire(L::CLASS, key, true);
            lock_acquired(L::CLASS, key, self as *const Self as usize);
            IrqGuard { guard, _record: Record(key, PhantomData), _irq_off: irq_off }
        })
    }
}

impl<L: Level, T> Deref for IrqGuard<'_, L, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<L: Level, T> DerefMut for IrqGuard<'_, L, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}
