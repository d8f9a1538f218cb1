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
//!
//! A run takes a lock about twice per event, so finding a lock's state is
//! hot: the table keeps each lock's state beside its address in one slot of
//! 32 bytes (one cache line), found by one multiplicative hash and a linear
//! probe, where a general hash map read its control bytes, then its bucket,
//! then the state: three lines a lookup, which the host mostly missed.

use mech::lock::level::{LockClass, CLASSES};

/// One lock's state, in its slot of the table. `addr` 0 marks a free slot
/// (no lock lives at address 0).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
struct Lock {
    addr: usize,
    free_at: u64,
    /// The CPU that holds or last held it (its lines are there).
    holder: u32,
}

/// Every lock seen, by address: open addressing with linear probing.
///
/// Invariants: `slots.len()` is a power of two, `1 << (64 - shift)`; at
/// most half the slots are used (so a probe ends at a free slot soon); a
/// lock's slot is on the probe path from its hash, with no free slot
/// between (nothing is ever removed).
struct Table {
    slots: Vec<Lock>,
    used: usize,
    shift: u32,
}

impl Table {
    fn new() -> Table {
        Table { slots: vec![Lock::default(); 1024], used: 0, shift: 64 - 10 }
    }

    /// Where `addr`'s probe starts (Fibonacci hashing: the product's high
    /// bits, which every bit of the address moves).
    #[inline(always)]
    fn home(&self, addr: usize) -> usize {
        ((addr as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The slot of the lock at `addr`, made (free at 0, last held by
    /// `cpu`) if it is new; `grown` is set if the table moved its slots.
    #[inline]
    fn find_or_insert(&mut self, addr: usize, cpu: usize, grown: &mut bool) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(addr);
        loop {
            let a = self.slots[i].addr;
            if a == addr {
                return i;
            }
            if a == 0 {
                break;
            }
            i = (i + 1) & mask;
        }
        if 2 * (self.used + 1) > self.slots.len() {
            self.grow();
            *grown = true;
            return self.find_or_insert(addr, cpu, grown);
        }
        self.used += 1;
        self.slots[i] = Lock { addr, free_at: 0, holder: cpu as u32 };
        i
    }

    /// The slot of the lock at `addr`, which is in the table.
    fn find(&self, addr: usize) -> usize {
        let mask = self.slots.len() - 1;
        let mut i = self.home(addr);
        while self.slots[i].addr != addr {
            i = (i + 1) & mask;
        }
        i
    }

    /// Twice the slots, every lock placed again.
    fn grow(&mut self) {
        let twice = vec![Lock::default(); 2 * self.slots.len()];
        let old = std::mem::replace(&mut self.slots, twice);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for l in old.into_iter().filter(|l| l.addr != 0) {
            let mut i = self.home(l.addr);
            while self.slots[i].addr != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = l;
        }
    }
}

/// A lock a CPU holds now (one of each class and key: the mechanism's
/// lock-order rule, so the release names it by those).
#[derive(Clone, Copy, Debug)]
struct Held {
    /// The lock's slot in `Locks::table`.
    lock: u32,
    /// The lock's address (to find its slot again if the table grows).
    addr: usize,
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

/// Every lock's state, what each CPU holds, and the statistics.
pub struct Locks {
    /// Each lock's state by address (one lookup a lock taken; the release
    /// finds it through what the CPU holds).
    table: Table,
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
        Locks { table: Table::new(), held: vec![Vec::new(); cpus], classes: [ClassStats::default(); CLASSES] }
    }

    /// CPU `cpu`, its clock at `clock`, takes lock `addr` of `class`;
    /// `handoff_ns(from)` prices its lines coming from CPU `from`.
    pub fn acquire(&mut self, cpu: usize, class: LockClass, key: u32, addr: usize, clock: u64, handoff_ns: impl FnOnce(usize) -> u64) -> Taken {
        let mut grown = false;
        let i = self.table.find_or_insert(addr, cpu, &mut grown);
        if grown {
            // The held locks' slots moved with the table.
            for h in self.held.iter_mut().flatten() {
                h.lock = self.table.find(h.addr) as u32;
            }
        }
        let l = &mut self.table.slots[i];
        let mut t = Taken::default();
        if l.holder as usize != cpu {
            t.wait_ns = l.free_at.saturating_sub(clock);
            t.handoff_ns = handoff_ns(l.holder as usize);
            l.holder = cpu as u32;
        }
        let k = class as usize;
        let s = &mut self.classes[k];
        s.acquires += 1;
        s.contended += u64::from(t.wait_ns > 0);
        s.wait_ns += t.wait_ns;
        s.handoff_ns += t.handoff_ns;
        self.held[cpu].push(Held { lock: i as u32, addr, class: k, key, since: clock + t.wait_ns + t.handoff_ns });
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
        self.table.slots[h.lock as usize].free_at = h.since + hold;
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

    #[test]
    fn a_hold_across_the_table_growing_still_frees_its_own_lock() {
        let mut l = Locks::new(2);
        let rq = LockClass::Runqueue;
        let w = LockClass::WaitQueue;
        // CPU 0 holds lock 8 from 1000; meanwhile CPU 1 meets 5,000 other
        // locks (the table grows several times under the hold).
        l.acquire(0, rq, 0, 8, 1000, |_| 0);
        for a in 1..=5000usize {
            l.acquire(1, w, 0, 8 + 16 * a, 0, |_| 0);
            l.release(1, w, 0, 0, &HOLD);
        }
        l.release(0, rq, 0, 1200, &HOLD);
        // Lock 8 is free at 1200 + 100; each other lock at 100.
        assert_eq!(l.acquire(1, rq, 1, 8, 1000, |_| 0).wait_ns, 300);
        assert_eq!(l.acquire(0, w, 0, 8 + 16 * 4321, 40, |_| 0).wait_ns, 60);
    }
}
