//! Lock contention in virtual time.
//!
//! The mechanism's code between two suspension points runs at one instant
//! of the engine, so no CPU ever finds a spin lock held. Each lock is
//! therefore modelled by when it is next free and which CPU last held it
//! (its line is there): a CPU taking a lock before its free time waits the
//! difference on its own clock (the engine's time plus the work it did in
//! the section so far), and a lock last held elsewhere brings its lines
//! (`HwProfile::lock_lines` at the distance). A lock is free again when its
//! holder's clock at the release plus the class's critical-section length
//! (`HwProfile::hold_ns`: the section's own instructions, which the cost
//! model charges after the section) have passed. Whoever the engine runs
//! first takes a lock first; a CPU never waits for its own earlier hold.
//! Locks are known by address (reused addresses keep the old lock's state:
//! harmless, its free time is past).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use mech::lock::level::{LockClass, CLASSES};

/// One lock's state.
#[derive(Clone, Copy, Debug)]
struct Lock {
    free_at: u64,
    /// The CPU that holds or last held it (its lines are there).
    holder: usize,
}

/// A lock a CPU holds now (one of each class and key: the mechanism's
/// lock-order rule, so the release names it by those).
#[derive(Clone, Copy, Debug)]
struct Held {
    /// The lock's index in `Locks::locks`.
    lock: u32,
    class: usize,
    key: u32,
    /// The holder's clock when it got the lock.
    since: u64,
}

/// Per lock class: what the run's locks of it did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassStats {
    pub acquires: u64,
    /// Acquisitions that waited for another CPU's hold.
    pub contended: u64,
    pub wait_ns: u64,
    /// Lines moved from the last holder.
    pub handoff_ns: u64,
    /// Clock advance inside plus the class's critical section.
    pub hold_ns: u64,
}

/// A multiplicative hash of an address: deterministic (no random seed).
#[derive(Default)]
pub struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, x: usize) {
        self.0 = (x as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
    }
}

/// Every lock's state, what each CPU holds, and the statistics.
pub struct Locks {
    /// Each lock's index in `locks`, by address (one lookup a lock taken;
    /// the release finds it through what the CPU holds).
    index: HashMap<usize, u32, BuildHasherDefault<AddrHasher>>,
    locks: Vec<Lock>,
    held: Vec<Vec<Held>>,
    pub classes: [ClassStats; CLASSES],
}

/// What taking a lock cost this CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Taken {
    pub wait_ns: u64,
    pub handoff_ns: u64,
}

impl Locks {
    pub fn new(cpus: usize) -> Locks {
        Locks { index: HashMap::default(), locks: Vec::new(), held: vec![Vec::new(); cpus], classes: [ClassStats::default(); CLASSES] }
    }

    /// CPU `cpu`, its clock at `clock`, takes lock `addr` of `class`;
    /// `handoff_ns(from)` prices its lines coming from CPU `from`.
    pub fn acquire(&mut self, cpu: usize, class: LockClass, key: u32, addr: usize, clock: u64, handoff_ns: impl FnOnce(usize) -> u64) -> Taken {
        let locks = &mut self.locks;
        let i = *self.index.entry(addr).or_insert_with(|| {
            locks.push(Lock { free_at: 0, holder: cpu });
            (locks.len() - 1) as u32
        });
        let l = &mut self.locks[i as usize];
        let mut t = Taken::default();
        if l.holder != cpu {
            t.wait_ns = l.free_at.saturating_sub(clock);
            t.handoff_ns = handoff_ns(l.holder);
            l.holder = cpu;
        }
        let k = class as usize;
        let s = &mut self.classes[k];
        s.acquires += 1;
        s.contended += u64::from(t.wait_ns > 0);
        s.wait_ns += t.wait_ns;
        s.handoff_ns += t.handoff_ns;
        self.held[cpu].push(Held { lock: i, class: k, key, since: clock + t.wait_ns + t.handoff_ns });
        t
    }

    /// CPU `cpu` releases its lock of `class` and `key` at `clock`; the
    /// lock is free again after the class's critical section, `hold_ns`.
    pub fn release(&mut self, cpu: usize, class: LockClass, key: u32, clock: u64, hold_ns: &[u64; CLASSES]) {
        let held = &mut self.held[cpu];
        let Some(i) = held.iter().rposition(|h| h.class == class as usize && h.key == key) else { return };
        let h = held.swap_remove(i);
        let hold = clock.saturating_sub(h.since) + hold_ns[h.class];
        self.classes[h.class].hold_ns += hold;
        self.locks[h.lock as usize].free_at = h.since + hold;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOLD: [u64; CLASSES] = [100; CLASSES];

    #[test]
    fn a_second_cpu_waits_for_the_holders_section() {
        let mut l = Locks::new(2);
        let rq = LockClass::Runqueue;
        // CPU 0 holds it from 1000 and its clock moves 50 inside.
        assert_eq!(l.acquire(0, rq, 3, 7, 1000, |_| 30), Taken::default());
        l.release(0, rq, 3, 1050, &HOLD);
        // CPU 1 wants it at 1010: free at 1050 + 100; the line comes from CPU 0.
        let t = l.acquire(1, rq, 3, 7, 1010, |from| if from == 0 { 30 } else { 0 });
        assert_eq!(t, Taken { wait_ns: 140, handoff_ns: 30 });
        l.release(1, rq, 3, 1180, &HOLD);
        // CPU 0 again at 1100: behind CPU 1's section (1180 + 100).
        assert_eq!(l.acquire(0, rq, 3, 7, 1100, |_| 30).wait_ns, 180);
        let s = l.classes[rq as usize];
        assert_eq!((s.acquires, s.contended, s.wait_ns, s.handoff_ns), (3, 2, 320, 60));
    }

    #[test]
    fn a_cpu_never_waits_for_itself_and_a_past_hold_costs_nothing() {
        let mut l = Locks::new(2);
        let c = LockClass::WakeList;
        l.acquire(0, c, 0, 9, 0, |_| 5);
        l.release(0, c, 0, 0, &HOLD);
        assert_eq!(l.acquire(0, c, 0, 9, 10, |_| 5), Taken::default());
        l.release(0, c, 0, 10, &HOLD);
        // Long after: only the line moves.
        assert_eq!(l.acquire(1, c, 0, 9, 10_000, |_| 5), Taken { wait_ns: 0, handoff_ns: 5 });
    }
}
