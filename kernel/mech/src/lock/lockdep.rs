//! A small runtime lock-order checker (`lockdep=1`, on with `sched_debug=1`).
//!
//! Every interrupt-off lock belongs to a class, and the classes are totally
//! ordered, outer to inner, as `level.rs` lists them (the same list gives
//! the levels an `IrqMutex` carries in its type, which checks the order
//! written in one function when it compiles; this checks the rest). Each CPU keeps which classes it
//! holds (a bit per class and a count) and, for the classes whose instances
//! are taken two at a time by CPU id (runqueues), which CPUs' instances. Taking
//! a lock is then checked against what the CPU holds:
//! - nothing of the same or an inner class may be held (an inversion, or two
//!   locks of one class, which nothing orders);
//! - except a keyed class, whose instances nest in ascending key order only
//!   (`rq::lock_two`: the lower CPU's runqueue first);
//! - interrupts must be off before the lock is taken (every class here is
//!   taken by some interrupt path, or nests inside one that is);
//! - a `try_lock` cannot deadlock, so it is recorded but not ordered (Linux's
//!   lockdep treats trylocks the same way).
//!
//! A violation prints `@fw lockdep` (both classes and their CPUs) and panics.
//!
//! This checks the order on the paths the run takes, not every path: the
//! same approach as Linux's lockdep, without its dependency graph (one total
//! order makes the graph a line). Off, it costs a load and a branch per lock
//! and per unlock.
//!
//! State: each CPU's entry is touched only by that CPU, with interrupts off
//! (the checks run inside the interrupt-off guard), so relaxed atomics are
//! plain loads and stores.

use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use super::level::{LockClass, CLASSES};
use crate::{platform::cpu_id, MAX_CPUS};

const _: () = assert!(CLASSES <= 64, "one bit per class in `Held::classes`");

/// Whether instances of `class` nest among themselves by ascending key
/// (runqueues, keyed by CPU: `rq::lock_two`).
fn keyed(class: LockClass) -> bool {
    matches!(class, LockClass::Runqueue)
}

/// The classes at `class`'s level or inner to it.
fn same_or_inner(class: LockClass) -> u64 {
    !((1u64 << class as u32) - 1) & (u64::MAX >> (64 - CLASSES))
}

/// One CPU's held locks.
struct Held {
    /// Bit `c` set while class `c` has a holder.
    classes: AtomicU64,
    counts: [AtomicU8; CLASSES],
    /// The keys held of the keyed class (one bit per CPU id).
    keys: [AtomicU64; MAX_CPUS / 64],
}

impl Held {
    const fn new() -> Held {
        Held {
            classes: AtomicU64::new(0),
            counts: [const { AtomicU8::new(0) }; CLASSES],
            keys: [const { AtomicU64::new(0) }; MAX_CPUS / 64],
        }
    }

    /// The highest key held, if any.
    fn highest_key(&self) -> Option<usize> {
        (0..self.keys.len()).rev().find_map(|w| {
            let bits = self.keys[w].load(Ordering::Relaxed);
            (bits != 0).then(|| w * 64 + 63 - bits.leading_zeros() as usize)
        })
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static HELD: [Held; MAX_CPUS] = [const { Held::new() }; MAX_CPUS];

/// Turns the checker on or off. Turned on once, early on the boot CPU with
/// no lock held (a lock released after this without being recorded is
/// ignored, see `release`).
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

#[inline(always)]
pub fn enabled() -> bool {
    BUILT_IN && ENABLED.load(Ordering::Relaxed)
}

/// Whether this kernel has the checker (the `lockdep` feature: the kernel of
/// `cargo xtask test`); without it every lock's check compiles away.
pub const BUILT_IN: bool = cfg!(feature = "lockdep");

/// Checks and records taking a lock of `class` (instance `key`, 0 unless
/// keyed) on this CPU; `trylock`: taken by a try, which cannot deadlock.
#[inline(always)]
pub fn acquire(class: LockClass, key: u32, trylock: bool) {
    if enabled() {
        acquire_checked(class, key, trylock);
    }
}

/// Records releasing a lock `acquire` recorded.
#[inline(always)]
pub fn release(class: LockClass, key: u32) {
    if enabled() {
        release_recorded(class, key);
    }
}

#[inline(never)]
fn acquire_checked(class: LockClass, key: u32, trylock: bool) {
    let cpu = cpu_id();
    if crate::platform::irqs_enabled() {
        violation(cpu, class, key, None, "taken with interrupts on");
    }
    let h = &HELD[cpu];
    let held = h.classes.load(Ordering::Relaxed);
    if !trylock {
        let conflict = held & same_or_inner(class);
        if conflict != 0 {
            let ordered_pair = conflict == 1u64 << class as u32
                && keyed(class)
                && h.highest_key().is_some_and(|k| k < key as usize);
            if !ordered_pair {
                // The innermost held class names the other side.
                let other = LockClass::ALL[63 - conflict.leading_zeros() as usize];
                let other_key = if keyed(other) { h.highest_key() } else { None };
                let why = if other == class {
                    if keyed(class) {
                        "taken while a lock of the same class with an equal or higher CPU id is held (ascending CPU order)"
                    } else {
                        "taken while a lock of the same class is held (nothing orders two of them)"
                    }
                } else {
                    "taken while an inner lock is held (order inverted)"
                };
                violation(cpu, class, key, Some((other, other_key)), why);
            }
        }
    }
    let c = &h.counts[class as usize];
    c.store(c.load(Ordering::Relaxed).saturating_add(1), Ordering::Relaxed);
    h.classes.store(held | 1u64 << class as u32, Ordering::Relaxed);
    if keyed(class) {
        let w = &h.keys[key as usize / 64];
        w.store(w.load(Ordering::Relaxed) | 1u64 << (key % 64), Ordering::Relaxed);
    }
}

#[inline(never)]
fn release_recorded(class: LockClass, key: u32) {
    let h = &HELD[cpu_id()];
    let c = &h.counts[class as usize];
    let n = c.load(Ordering::Relaxed);
    if n == 0 {
        // Taken before the checker was on.
        return;
    }
    c.store(n - 1, Ordering::Relaxed);
    if n == 1 {
        h.classes.store(h.classes.load(Ordering::Relaxed) & !(1u64 << class as u32), Ordering::Relaxed);
    }
    if keyed(class) {
        let w = &h.keys[key as usize / 64];
        w.store(w.load(Ordering::Relaxed) & !(1u64 << (key % 64)), Ordering::Relaxed);
    }
}

/// Reports a violation and panics. The checker goes off first: the report
/// and the panic handler take locks of their own.
#[cold]
fn violation(cpu: usize, class: LockClass, key: u32, held: Option<(LockClass, Option<usize>)>, why: &str) -> ! {
    enable(false);
    let key_of = |c: LockClass, k: Option<usize>| Instance(if keyed(c) { k } else { None });
    let (held_class, held_key) = match held {
        Some((c, k)) => (c.name(), key_of(c, k)),
        None => ("-", Instance(None)),
    };
    crate::record!(
        "lockdep",
        "cpu={} taking={} taking_cpu={} held={} held_cpu={} msg={}",
        cpu,
        class.name(),
        key_of(class, Some(key as usize)),
        held_class,
        held_key,
        why
    );
    panic!(
        "lock order violated on CPU {}: {} (instance {}) {}; held: {} (instance {})",
        cpu,
        class.name(),
        key_of(class, Some(key as usize)),
        why,
        held_class,
        held_key
    );
}

/// A keyed lock's instance (its CPU), `-` for the others. (Not `format!`:
/// its prebuilt code needs an unwinder the kernel does not link.)
struct Instance(Option<usize>);

impl core::fmt::Display for Instance {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Some(k) => write!(f, "{}", k),
            None => f.write_str("-"),
        }
    }
}
