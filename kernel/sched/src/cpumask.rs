//! A fixed-size CPU set, the scheduler's equivalent of Linux's `struct cpumask`.
//!
//! # Contract
//!
//! * [`CpuMask`] holds any subset of the CPU indices `0..MAX_CPUS` as a
//!   1024-bit bitmap (`[u64; 16]`, bit `i % 64` of word `i / 64` is CPU `i`).
//!   It is `Copy`, allocation-free and every operation is total: an index
//!   `>= MAX_CPUS` is never stored (setters report it through their return
//!   value, queries answer "not present"). Nothing here panics.
//! * The word loops (weight, emptiness, iteration, set algebra) stop at
//!   [`nr_cpu_words`], the words any mask of the program has ever used, so a
//!   machine of a few CPUs pays for one word, not sixteen: Linux bounds its
//!   cpumask loops by `nr_cpu_ids` for the same reason. The bound only grows
//!   (every way of putting a CPU into a mask raises it first), so it is
//!   correct whatever order threads build masks in.
//! * Iteration is always in ascending CPU order; [`CpuMask::iter_wrap`] gives
//!   Linux's `for_each_cpu_wrap` order (start at a CPU, wrap around once).
//! * `Display` writes the Linux *cpulist* format: ascending, comma-separated,
//!   runs of two or more consecutive CPUs written `a-b` (`0-3,8,10-11`); the
//!   empty set prints as the empty string. `FromStr` parses that format back
//!   (plain `n` and `a-b` items; the Linux stride form `a-b:g/w` is not
//!   accepted), so `s.parse::<CpuMask>()?.to_string() == canonical(s)`.

use core::fmt;
use core::str::FromStr;
use core::sync::atomic::{AtomicUsize, Ordering};

/// Largest number of CPUs fairway supports; CPU indices are `0..MAX_CPUS`.
/// A two-socket server of AMD EPYC 9965 parts (2024) has 768 hardware
/// threads: 192 cores x 2 threads per socket (Wikipedia, "Epyc",
/// <https://en.wikipedia.org/wiki/Epyc>).
pub const MAX_CPUS: usize = 1024;

const WORDS: usize = MAX_CPUS / 64;

/// One more than the highest word any mask has held a CPU in (at least 1):
/// every set bit of every mask lies below `64 * WORDS_IN_USE`. Raised (never
/// lowered) before a bit of a new word is stored: by [`CpuMask::set`],
/// [`CpuMask::first_n`] and [`CpuMask::from_bits`], the only ways bits get
/// into a mask, and by [`cover_cpu`] for a CPU's bit kept outside one.
///
/// Why this is enough across threads: a mask reaches another thread only
/// through something that orders memory (a lock, a release store, a thread
/// spawn) after the raise, and the raise is a read-modify-write of one
/// location, so the other thread's later load sees it or a larger value
/// (coherence). Words kept in atomics come back through `from_bits`, which
/// raises the bound itself, or through [`CpuMask::from_words_in_use`], which
/// reads the words below the bound it sees: a reader ordered after the
/// writer (the same lock, an acquire load of what the writer released)
/// sees the raise, and an unordered reader sees the words as they were
/// before the write, as an unordered read may.
static WORDS_IN_USE: AtomicUsize = AtomicUsize::new(1);

/// The words of a [`CpuMask`] that may hold a CPU (see `WORDS_IN_USE`): the
/// bound of every word loop here, Linux's `nr_cpu_ids` rounded up to words.
#[inline(always)]
pub fn nr_cpu_words() -> usize {
    // `min` lets the compiler drop the bounds checks of the loops.
    WORDS_IN_USE.load(Ordering::Relaxed).min(WORDS)
}

/// Makes the word loops cover `cpu` (nothing for `cpu >= MAX_CPUS`): for a
/// CPU's bit set outside a mask (an atomic word that
/// [`CpuMask::from_words_in_use`] reads back), before it is set.
#[inline]
pub fn cover_cpu(cpu: usize) {
    if cpu < MAX_CPUS {
        note_word(cpu / 64);
    }
}

/// Makes the word loops cover word `word`.
#[inline(always)]
fn note_word(word: usize) {
    if word >= WORDS_IN_USE.load(Ordering::Relaxed) {
        raise_words(word);
    }
}

#[cold]
#[inline(never)]
fn raise_words(word: usize) {
    WORDS_IN_USE.fetch_max(word + 1, Ordering::Relaxed);
}

/// A set of CPU indices below [`MAX_CPUS`].
///
/// Invariant: only bits for CPUs `0..MAX_CPUS` exist (the storage has exactly
/// `MAX_CPUS` bits), so every stored bit is a valid CPU index, and every set
/// bit lies in the first [`nr_cpu_words`] words (the words above are zero).
/// Equality is set equality.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CpuMask {
    bits: [u64; WORDS],
}

impl CpuMask {
    /// The empty set.
    pub const fn new() -> Self {
        CpuMask { bits: [0; WORDS] }
    }

    /// The empty set (alias of [`CpuMask::new`]).
    pub const fn empty() -> Self {
        Self::new()
    }

    /// `{cpu}`; the empty set when `cpu >= MAX_CPUS`.
    pub fn single(cpu: usize) -> Self {
        let mut m = Self::new();
        m.set(cpu);
        m
    }

    /// `{0, 1, .., n-1}` (clamped to `MAX_CPUS`).
    pub fn first_n(n: usize) -> Self {
        let n = n.min(MAX_CPUS);
        let mut m = Self::new();
        if n == 0 {
            return m;
        }
        note_word((n - 1) / 64);
        for (w, word) in m.bits.iter_mut().enumerate().take(n.div_ceil(64)) {
            let bits_here = (n - w * 64).min(64);
            *word = if bits_here == 64 { !0 } else { (1u64 << bits_here) - 1 };
        }
        m
    }

    /// Builds a mask from raw words (bit `i % 64` of word `i / 64` is CPU `i`).
    #[inline]
    pub fn from_bits(bits: [u64; WORDS]) -> Self {
        // Usually nothing above the bound: one pass of ORs, no search.
        let above = bits[nr_cpu_words()..].iter().fold(0, |a, &w| a | w);
        if above != 0 {
            if let Some(top) = bits.iter().rposition(|&w| w != 0) {
                note_word(top);
            }
        }
        CpuMask { bits }
    }

    /// A mask of the words `word(i)` gives for the words in use, `i <
    /// nr_cpu_words()`, the others zero: for words kept apart from a mask
    /// (atomics a mask was stored into word by word), which are zero above
    /// the bound because every mask's are and the bound only grows. A CPU
    /// set of a 4-CPU machine is then one load, not sixteen.
    #[inline]
    pub fn from_words_in_use(mut word: impl FnMut(usize) -> u64) -> Self {
        let mut bits = [0; WORDS];
        for (i, b) in bits[..nr_cpu_words()].iter_mut().enumerate() {
            *b = word(i);
        }
        CpuMask { bits }
    }

    /// The words in use (see [`nr_cpu_words`]): what a mask stored word by
    /// word needs to store, the words above being zero.
    #[inline]
    pub fn words_in_use(&self) -> &[u64] {
        &self.bits[..nr_cpu_words()]
    }

    /// The raw words (see [`CpuMask::from_bits`]).
    pub const fn bits(&self) -> [u64; WORDS] {
        self.bits
    }

    /// Adds `cpu`. Returns `false` (and changes nothing) when `cpu >= MAX_CPUS`.
    pub fn set(&mut self, cpu: usize) -> bool {
        if cpu >= MAX_CPUS {
            return false;
        }
        note_word(cpu / 64);
        self.bits[cpu / 64] |= 1u64 << (cpu % 64);
        true
    }

    /// Removes `cpu` (no-op when absent or out of range).
    pub fn clear(&mut self, cpu: usize) {
        if cpu < MAX_CPUS {
            self.bits[cpu / 64] &= !(1u64 << (cpu % 64));
        }
    }

    /// Whether `cpu` is in the set (`false` for out-of-range indices).
    pub fn contains(&self, cpu: usize) -> bool {
        cpu < MAX_CPUS && self.bits[cpu / 64] & (1u64 << (cpu % 64)) != 0
    }

    /// Number of CPUs in the set (Linux `cpumask_weight`).
    pub fn weight(&self) -> u32 {
        self.bits[..nr_cpu_words()].iter().map(|w| w.count_ones()).sum()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits[..nr_cpu_words()].iter().all(|&w| w == 0)
    }

    /// Lowest CPU in the set.
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// Lowest CPU in the set that is strictly greater than `cpu`
    /// (Linux `cpumask_next`).
    pub fn next(&self, cpu: usize) -> Option<usize> {
        self.next_from(cpu.checked_add(1)?)
    }

    /// Lowest CPU in the set that is `>= start`.
    fn next_from(&self, start: usize) -> Option<usize> {
        let words = nr_cpu_words();
        let mut word = start / 64;
        if word >= words {
            return None;
        }
        let mut cur = self.bits[word] & (!0u64 << (start % 64));
        loop {
            if cur != 0 {
                return Some(word * 64 + cur.trailing_zeros() as usize);
            }
            word += 1;
            if word >= words {
                return None;
            }
            cur = self.bits[word];
        }
    }

    /// Ascending iterator over the CPUs of the set.
    pub fn iter(&self) -> Iter<'_> {
        Iter::new(self, 0, MAX_CPUS)
    }

    /// Iterates the set starting at `start` (or the first CPU after it) and
    /// wrapping around once: Linux's `for_each_cpu_wrap`. Every member is
    /// produced exactly once.
    pub fn iter_wrap(&self, start: usize) -> impl Iterator<Item = usize> + '_ {
        let start = start.min(MAX_CPUS);
        Iter::new(self, start, MAX_CPUS).chain(Iter::new(self, 0, start))
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &CpuMask) -> CpuMask {
        self.zip(other, |a, b| a | b)
    }

    /// `self ∩ other`.
    pub fn intersection(&self, other: &CpuMask) -> CpuMask {
        self.zip(other, |a, b| a & b)
    }

    /// `self \ other`.
    pub fn difference(&self, other: &CpuMask) -> CpuMask {
        self.zip(other, |a, b| a & !b)
    }

    /// `self ∪= other`, in place (Linux's `cpumask_or` into its first
    /// operand): no new mask, so no 128 bytes zeroed and copied.
    #[inline]
    pub fn union_with(&mut self, other: &CpuMask) {
        self.union_with_words(|i| other.bits[i]);
    }

    /// `self ∪=` the words `word(i)` gives for the words in use, `i <
    /// nr_cpu_words()`: for words kept apart from a mask (as
    /// [`CpuMask::from_words_in_use`]), without building one.
    #[inline]
    pub fn union_with_words(&mut self, mut word: impl FnMut(usize) -> u64) {
        let n = nr_cpu_words();
        for (i, b) in self.bits[..n].iter_mut().enumerate() {
            *b |= word(i);
        }
    }

    /// `self ∩= other`, in place (Linux's `cpumask_and` into its first
    /// operand).
    #[inline]
    pub fn intersect_with(&mut self, other: &CpuMask) {
        let n = nr_cpu_words();
        for (b, o) in self.bits[..n].iter_mut().zip(&other.bits[..n]) {
            *b &= *o;
        }
    }

    /// Whether every CPU of `self` is in `other`.
    pub fn is_subset(&self, other: &CpuMask) -> bool {
        let n = nr_cpu_words();
        self.bits[..n].iter().zip(&other.bits[..n]).all(|(a, b)| a & !b == 0)
    }

    /// Whether the two sets share a CPU.
    pub fn intersects(&self, other: &CpuMask) -> bool {
        let n = nr_cpu_words();
        self.bits[..n].iter().zip(&other.bits[..n]).any(|(a, b)| a & b != 0)
    }

    /// Word by word over the words in use; `f(0, 0)` must be 0, so the
    /// words above stay zero.
    #[inline(always)]
    fn zip(&self, other: &CpuMask, f: impl Fn(u64, u64) -> u64) -> CpuMask {
        let mut bits = [0u64; WORDS];
        let n = nr_cpu_words();
        for ((b, x), y) in bits[..n].iter_mut().zip(&self.bits[..n]).zip(&other.bits[..n]) {
            *b = f(*x, *y);
        }
        CpuMask { bits }
    }
}

/// Ascending iterator over the CPUs of a [`CpuMask`] in `start..end`: the
/// word it is in and that word's CPUs not produced yet, so each step is a
/// trailing-zero count and a clear.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    mask: &'a CpuMask,
    /// The word `cur` came from.
    word: usize,
    /// The CPUs of word `word` at or after the next one to produce.
    cur: u64,
    /// One past the last CPU to produce (at most `64 * nr_cpu_words()`).
    end: usize,
}

impl<'a> Iter<'a> {
    fn new(mask: &'a CpuMask, start: usize, end: usize) -> Iter<'a> {
        let end = end.min(64 * nr_cpu_words());
        if start >= end {
            return Iter { mask, word: 0, cur: 0, end: 0 };
        }
        let word = start / 64;
        Iter { mask, word, cur: mask.bits[word] & (!0u64 << (start % 64)), end }
    }
}

impl Iterator for Iter<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        loop {
            if self.cur != 0 {
                let cpu = self.word * 64 + self.cur.trailing_zeros() as usize;
                if cpu >= self.end {
                    self.cur = 0;
                    self.end = 0;
                    return None;
                }
                self.cur &= self.cur - 1;
                return Some(cpu);
            }
            self.word += 1;
            if self.word * 64 >= self.end {
                return None;
            }
            self.cur = self.mask.bits[self.word];
        }
    }
}

impl<'a> IntoIterator for &'a CpuMask {
    type Item = usize;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl FromIterator<usize> for CpuMask {
    /// Collects CPU indices; indices `>= MAX_CPUS` are dropped.
    fn from_iter<T: IntoIterator<Item = usize>>(iter: T) -> Self {
        let mut m = CpuMask::new();
        for cpu in iter {
            m.set(cpu);
        }
        m
    }
}

impl fmt::Display for CpuMask {
    /// Linux cpulist format, e.g. `0-3,8,10-11`; empty set → empty string.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut it = self.iter().peekable();
        let mut first = true;
        while let Some(lo) = it.next() {
            let mut hi = lo;
            while it.peek() == Some(&(hi + 1)) {
                hi += 1;
                it.next();
            }
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if hi == lo {
                write!(f, "{lo}")?;
            } else {
                write!(f, "{lo}-{hi}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CpuMask({self})")
    }
}

/// Why a cpulist string could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuListError {
    /// An item between commas was empty (e.g. `0,,2` or a trailing comma).
    EmptyItem { position: usize },
    /// An item was not `n` or `a-b` with decimal `n`, `a`, `b`.
    BadNumber { position: usize },
    /// A CPU index was `>= MAX_CPUS`.
    OutOfRange { cpu: u64 },
    /// A range `a-b` had `a > b`.
    ReversedRange { start: u64, end: u64 },
}

impl fmt::Display for CpuListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuListError::EmptyItem { position } => {
                write!(f, "cpulist: empty item at byte {position}")
            }
            CpuListError::BadNumber { position } => {
                write!(
                    f,
                    "cpulist: expected a decimal CPU number at byte {position}"
                )
            }
            CpuListError::OutOfRange { cpu } => {
                write!(f, "cpulist: CPU {cpu} is not below the limit of {MAX_CPUS}")
            }
            CpuListError::ReversedRange { start, end } => {
                write!(f, "cpulist: range {start}-{end} ends before it starts")
            }
        }
    }
}

fn parse_cpu(s: &str, position: usize) -> Result<u64, CpuListError> {
    if s.is_empty() || s.len() > 10 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CpuListError::BadNumber { position });
    }
    let v: u64 = s
        .parse()
        .map_err(|_| CpuListError::BadNumber { position })?;
    if v >= MAX_CPUS as u64 {
        return Err(CpuListError::OutOfRange { cpu: v });
    }
    Ok(v)
}

impl FromStr for CpuMask {
    type Err = CpuListError;

    /// Parses the cpulist format. Surrounding ASCII whitespace is ignored; the
    /// empty (or all-whitespace) string is the empty set.
    fn from_str(s: &str) -> Result<Self, CpuListError> {
        let lead = s.len() - s.trim_start().len();
        let s = s.trim();
        let mut mask = CpuMask::new();
        if s.is_empty() {
            return Ok(mask);
        }
        let mut pos = lead;
        for item in s.split(',') {
            if item.is_empty() {
                return Err(CpuListError::EmptyItem { position: pos });
            }
            match item.split_once('-') {
                None => {
                    mask.set(parse_cpu(item, pos)? as usize);
                }
                Some((a, b)) => {
                    let start = parse_cpu(a, pos)?;
                    let end = parse_cpu(b, pos + a.len() + 1)?;
                    if start > end {
                        return Err(CpuListError::ReversedRange { start, end });
                    }
                    for cpu in start..=end {
                        mask.set(cpu as usize);
                    }
                }
            }
            pos += item.len() + 1;
        }
        Ok(mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    fn m(s: &str) -> CpuMask {
        s.parse().unwrap()
    }

    #[test]
    fn cpumask_basic_ops() {
        let mut a = CpuMask::new();
        assert!(a.is_empty());
        assert!(a.set(0) && a.set(63) && a.set(64) && a.set(255) && a.set(256) && a.set(1023));
        assert!(!a.set(1024));
        assert_eq!(a.weight(), 6);
        assert!(a.contains(64) && !a.contains(65) && a.contains(1023) && !a.contains(1024) && !a.contains(5000));
        assert_eq!(a.first(), Some(0));
        assert_eq!(a.next(0), Some(63));
        assert_eq!(a.next(63), Some(64));
        assert_eq!(a.next(64), Some(255));
        assert_eq!(a.next(255), Some(256));
        assert_eq!(a.next(256), Some(1023));
        assert_eq!(a.next(1023), None);
        assert_eq!(a.next(usize::MAX), None);
        a.clear(63);
        a.clear(999);
        a.clear(5000);
        assert_eq!(a.iter().collect::<Vec<_>>(), [0, 64, 255, 256, 1023]);
        assert_eq!(CpuMask::single(300).iter().collect::<Vec<_>>(), [300]);
        assert_eq!(CpuMask::single(1024), CpuMask::new());
        assert_eq!(CpuMask::first_n(4), m("0-3"));
        assert_eq!(CpuMask::first_n(0), CpuMask::new());
        assert_eq!(CpuMask::first_n(768), m("0-767"));
        assert_eq!(CpuMask::first_n(5000), m("0-1023"));
    }

    #[test]
    fn cpumask_set_algebra() {
        let a = m("0-5");
        let b = m("4-9");
        assert_eq!(a.union(&b), m("0-9"));
        assert_eq!(a.intersection(&b), m("4-5"));
        assert_eq!(a.difference(&b), m("0-3"));
        assert!(m("1-2").is_subset(&a));
        assert!(!b.is_subset(&a));
        assert!(CpuMask::new().is_subset(&a));
        assert!(a.intersects(&b) && !m("0").intersects(&m("1")));
    }

    #[test]
    fn cpumask_iter_wrap() {
        let a = m("0-1,4-5,200,767");
        assert_eq!(a.iter_wrap(5).collect::<Vec<_>>(), [5, 200, 767, 0, 1, 4]);
        assert_eq!(a.iter_wrap(2).collect::<Vec<_>>(), [4, 5, 200, 767, 0, 1]);
        assert_eq!(a.iter_wrap(0).collect::<Vec<_>>(), [0, 1, 4, 5, 200, 767]);
        assert_eq!(a.iter_wrap(700).collect::<Vec<_>>(), [767, 0, 1, 4, 5, 200]);
        assert_eq!(a.iter_wrap(9999).collect::<Vec<_>>(), [0, 1, 4, 5, 200, 767]);
    }

    #[test]
    fn cpumask_cpulist_format() {
        assert_eq!(CpuMask::new().to_string(), "");
        assert_eq!(m("0-3,8,10-11").to_string(), "0-3,8,10-11");
        assert_eq!(m("3,2,1,0").to_string(), "0-3");
        assert_eq!(m("5,6").to_string(), "5-6");
        assert_eq!(m("63-64,255").to_string(), "63-64,255");
        assert_eq!(m("255-256,511-512,1023").to_string(), "255-256,511-512,1023");
        assert_eq!(m("0-1023").to_string(), "0-1023");
        assert_eq!(m(" 7 ").to_string(), "7");
        assert_eq!(m("").to_string(), "");
    }

    #[test]
    fn cpumask_cpulist_errors() {
        assert_eq!(
            "1,,2".parse::<CpuMask>(),
            Err(CpuListError::EmptyItem { position: 2 })
        );
        assert_eq!(
            "1,".parse::<CpuMask>(),
            Err(CpuListError::EmptyItem { position: 2 })
        );
        assert_eq!(
            "x".parse::<CpuMask>(),
            Err(CpuListError::BadNumber { position: 0 })
        );
        assert_eq!(
            "+1".parse::<CpuMask>(),
            Err(CpuListError::BadNumber { position: 0 })
        );
        assert_eq!(
            "1-".parse::<CpuMask>(),
            Err(CpuListError::BadNumber { position: 2 })
        );
        assert_eq!(
            "1024".parse::<CpuMask>(),
            Err(CpuListError::OutOfRange { cpu: 1024 })
        );
        assert_eq!(
            "1000-1024".parse::<CpuMask>(),
            Err(CpuListError::OutOfRange { cpu: 1024 })
        );
        assert_eq!(
            "99999999999999999999".parse::<CpuMask>(),
            Err(CpuListError::BadNumber { position: 0 })
        );
        assert_eq!(
            "5-3".parse::<CpuMask>(),
            Err(CpuListError::ReversedRange { start: 5, end: 3 })
        );
        assert_eq!(
            CpuListError::OutOfRange { cpu: 1100 }.to_string(),
            "cpulist: CPU 1100 is not below the limit of 1024"
        );
    }

    #[test]
    fn cpumask_round_trip_pseudo_random() {
        // xorshift-generated masks: Display then FromStr gives the same set.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..500 {
            let mut bits = [0u64; WORDS];
            for b in bits.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Sparse and dense words alike.
                *b = if x & 3 == 0 {
                    x
                } else {
                    x & (x >> 11) & (x >> 23)
                };
            }
            let mask = CpuMask::from_bits(bits);
            let text = mask.to_string();
            assert_eq!(text.parse::<CpuMask>(), Ok(mask), "{text}");
            assert_eq!(mask.iter().count() as u32, mask.weight());
        }
    }
}
