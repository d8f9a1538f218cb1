//! The event queue: events ordered by virtual time, ties broken by a seeded
//! pseudo-random key, then by insertion order.
//!
//! Why a seeded tie-break: on a real machine two things that happen "at the same
//! time" on different CPUs have no defined order, and a scheduler must be right
//! in every order. Breaking ties by insertion order alone would always pick the
//! one the engine happened to queue first; a seeded key lets a test explore other
//! orders (another seed) while any one seed replays exactly (same seed, same key
//! sequence, same order). The insertion counter makes the order total even if
//! two keys collide.


/// SplitMix64: a tiny, well-mixed 64-bit generator; enough for tie-breaking,
/// and without a dependency whose output could change between versions.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// One queued event: its full key and its payload.
struct Entry<E> {
    at_ns: u64,
    /// The seeded tie key.
    tie: u64,
    /// Insertion order: unique, so the order is total.
    seq: u64,
    ev: E,
}

/// Buckets of a radix heap over the times: bucket 0 holds the events at
/// `last`, bucket `b > 0` those whose time differs from `last` first in
/// bit `b - 1` (the highest bit of `at_ns ^ last`).
const BUCKETS: usize = 65;

/// A min-queue of events by (time, seeded tie key, insertion sequence).
///
/// A radix heap over the times (Ahuja, Mehlhorn, Orlin, Tarjan, "Faster
/// algorithms for the shortest path problem", JACM 1990): an event loop
/// never queues an event earlier than the one it last took out (`push`
/// checks it), so each event is filed by the highest bit in which its time
/// differs from that time, and moves only to lower buckets, a few times in
/// its life; the events of one time are then ordered by (tie key,
/// sequence) in a small binary heap. A 4-ary heap over all the events was
/// a tenth of a 240-CPU run, its comparisons a coin toss for the host's
/// branch predictor at every level.
///
/// Invariants: every event in bucket `b` has `bucket(at_ns ^ last) == b`;
/// bucket 0 (`now`) holds the events at `last`, a min-heap by (tie, seq);
/// `bucket_min[b]` is the least time in bucket `b` when it is not empty;
/// bit `b` of `nonempty` is set iff bucket `b` (`now` for 0) is not empty;
/// `len` counts every event.
pub struct EventQueue<E> {
    /// The time of the last event taken out (0 before any).
    last: u64,
    now: std::collections::BinaryHeap<Now<E>>,
    buckets: Vec<Vec<Entry<E>>>,
    bucket_min: [u64; BUCKETS],
    nonempty: u128,
    len: usize,
    rng: SplitMix64,
    seq: u64,
}

/// An event of bucket 0, ordered for `BinaryHeap` (a max-heap) so that the
/// least (tie, seq) comes first.
struct Now<E>(Entry<E>);

impl<E> PartialEq for Now<E> {
    fn eq(&self, other: &Self) -> bool {
        self.0.seq == other.0.seq
    }
}
impl<E> Eq for Now<E> {}
impl<E> PartialOrd for Now<E> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Now<E> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (other.0.tie, other.0.seq).cmp(&(self.0.tie, self.0.seq))
    }
}

/// The bucket of a time differing from `last` by the bits `diff`.
#[inline(always)]
fn bucket(diff: u64) -> usize {
    (64 - diff.leading_zeros()) as usize
}

impl<E> EventQueue<E> {
    pub fn new(seed: u64) -> EventQueue<E> {
        EventQueue {
            last: 0,
            now: std::collections::BinaryHeap::new(),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            bucket_min: [u64::MAX; BUCKETS],
            nonempty: 0,
            len: 0,
            rng: SplitMix64::new(seed),
            seq: 0,
        }
    }

    /// Files `e` by its time (not earlier than `last`).
    #[inline(always)]
    fn file(&mut self, e: Entry<E>) {
        let b = bucket(e.at_ns ^ self.last);
        self.nonempty |= 1 << b;
        if b == 0 {
            self.now.push(Now(e));
        } else {
            self.bucket_min[b] = self.bucket_min[b].min(e.at_ns);
            self.buckets[b].push(e);
        }
    }

    /// Queue `ev` to happen at `at_ns`, which is not earlier than the last
    /// event taken out (an event loop's time never goes back).
    pub fn push(&mut self, at_ns: u64, ev: E) {
        assert!(at_ns >= self.last, "sim: an event queued at {at_ns} ns, before the last one taken out ({} ns)", self.last);
        let tie = self.rng.next_u64();
        self.seq += 1;
        self.len += 1;
        self.file(Entry { at_ns, tie, seq: self.seq, ev });
    }

    /// Makes bucket 0 hold the earliest events, if there are any: the
    /// lowest non-empty bucket's least time becomes `last`, and its events
    /// are filed again (each into a lower bucket).
    fn refill_now(&mut self) {
        if self.nonempty & 1 != 0 || self.nonempty == 0 {
            return;
        }
        let b = self.nonempty.trailing_zeros() as usize;
        self.last = self.bucket_min[b];
        self.bucket_min[b] = u64::MAX;
        self.nonempty &= !(1 << b);
        let mut moving = std::mem::take(&mut self.buckets[b]);
        for e in moving.drain(..) {
            self.file(e);
        }
        // Keep the bucket's allocation for its next events.
        self.buckets[b] = moving;
    }

    /// The earliest event and its time.
    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.refill_now();
        let Now(e) = self.now.pop()?;
        if self.now.is_empty() {
            self.nonempty &= !1;
        }
        self.len -= 1;
        Some((e.at_ns, e.ev))
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<u64> {
        if self.nonempty & 1 != 0 {
            return Some(self.last);
        }
        (self.nonempty != 0).then(|| self.bucket_min[self.nonempty.trailing_zeros() as usize])
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(seed: u64, items: &[(u64, u32)]) -> Vec<(u64, u32)> {
        let mut q = EventQueue::new(seed);
        for &(t, v) in items {
            q.push(t, v);
        }
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn pops_in_key_order_whatever_the_push_order() {
        // Many times, few distinct (so ties are frequent), pushed and popped
        // interleaved: every pop is the least (time, tie key, sequence) left.
        let mut q = EventQueue::new(7);
        let mut rng = SplitMix64::new(99);
        let mut model: Vec<(u64, u64, u64)> = Vec::new();
        let mut tie_rng = SplitMix64::new(7);
        let mut seq = 0;
        // Times never before the last one taken out (an event loop's), at
        // any distance from it (so every bucket of the radix heap is used).
        let mut last = 0;
        for _ in 0..5000u64 {
            if !rng.next_u64().is_multiple_of(3) || model.is_empty() {
                let r = rng.next_u64();
                // Mostly near (0..50 ns, often less), one in 64 far (up to 2^40 ns).
                let near = (r % 50) >> ((r >> 60) & 3);
                let far = if (r >> 8).is_multiple_of(64) { (r >> 24) >> ((r >> 56) & 31) } else { 0 };
                let t = last + near + far;
                seq += 1;
                q.push(t, seq);
                model.push((t, tie_rng.next_u64(), seq));
            } else {
                model.sort_unstable();
                let want = model.remove(0);
                assert_eq!(q.pop(), Some((want.0, want.2)));
                last = want.0;
            }
        }
        model.sort_unstable();
        for want in model {
            assert_eq!(q.pop(), Some((want.0, want.2)));
        }
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn time_orders_first_and_a_seed_orders_ties_reproducibly() {
        let items: Vec<(u64, u32)> = (0..16).map(|i| (if i % 2 == 0 { 5 } else { 3 }, i)).collect();
        let a = drain(1, &items);
        // Every time-3 event before every time-5 event.
        assert!(a.windows(2).all(|w| w[0].0 <= w[1].0), "{a:?}");
        assert_eq!(a, drain(1, &items), "same seed, same order");
        // Some other seed orders the 8 ties at one time differently (the
        // insertion order is not the only order a test sees).
        assert!((2..10).any(|s| drain(s, &items) != a));
        // The tie order is a permutation of the ties, nothing lost.
        let mut vals: Vec<u32> = a.iter().map(|e| e.1).collect();
        vals.sort_unstable();
        assert_eq!(vals, (0..16).collect::<Vec<_>>());
    }

    #[test]
    #[should_panic(expected = "before the last one taken out")]
    fn an_event_before_the_last_one_taken_out_is_refused() {
        let mut q = EventQueue::new(1);
        q.push(10, ());
        q.pop();
        q.push(9, ());
    }

    #[test]
    fn peek_names_the_time_pop_takes_out() {
        let mut q = EventQueue::new(3);
        for t in [1u64 << 40, 7, 7, 1 << 20, 8, u64::MAX] {
            q.push(t, t);
        }
        let mut got = Vec::new();
        while let Some(t) = q.peek_time() {
            let (at, v) = q.pop().expect("peeked");
            assert_eq!((at, v), (t, t));
            got.push(t);
        }
        assert_eq!(got, [7, 7, 8, 1 << 20, 1 << 40, u64::MAX]);
        assert!(q.is_empty() && q.pop().is_none());
    }
}
