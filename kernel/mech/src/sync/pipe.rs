//! A pipe: a bounded byte ring with blocking read and write.

use alloc::boxed::Box;
use alloc::vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::lock::{level, IrqMutex};
use super::WaitQueue;

/// The bytes in flight and whether the writing side is closed.
///
/// Invariant: `len <= buf.len()`, `head < buf.len()`; the bytes are
/// `buf[head..]` then `buf[..]` wrapping around, `len` of them.
struct Ring {
    buf: Box<[u8]>,
    head: usize,
    len: usize,
    closed: bool,
}

/// Below this many bytes a byte loop beats two `memcpy` calls (the
/// simulator prices the two kinds of copy apart).
pub const SMALL_COPY: usize = 16;

/// Reports a read or write of `n` bytes to the platform (the ring's lock is
/// held: a simulated CPU adds its price to its own clock and pays it when the
/// lock's section ends, before the wakeup that follows a write). Free on x86.
#[inline(always)]
fn report_op(n: usize) {
    crate::platform::mechanism_work(crate::platform::Work::PipeCopy { bytes: n });
}

impl Ring {
    /// Index `i` positions after `from`, wrapped (`from < cap`, `i <= cap`).
    fn wrap(&self, from: usize, i: usize) -> usize {
        let j = from + i;
        if j >= self.buf.len() {
            j - self.buf.len()
        } else {
            j
        }
    }

    /// Moves up to `out.len()` bytes out; returns how many.
    fn take(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.len);
        if n < SMALL_COPY {
            // The loop's index ends wrapped where the next read starts.
            let cap = self.buf.len();
            let mut at = self.head;
            for b in &mut out[..n] {
                *b = self.buf[at];
                at += 1;
                if at == cap {
                    at = 0;
                }
            }
            self.head = at;
        } else {
            self.copy_out(&mut out[..n]);
            self.head = self.wrap(self.head, n);
        }
        self.len -= n;
        report_op(n);
        n
    }

    /// `take`'s bulk copy of `out.len()` bytes from `head` (`<= len`), out
    /// of line: its registers would weigh on every one-byte lock round trip.
    #[inline(never)]
    fn copy_out(&self, out: &mut [u8]) {
        let n = out.len();
        let first = n.min(self.buf.len() - self.head);
        out[..first].copy_from_slice(&self.buf[self.head..self.head + first]);
        out[first..n].copy_from_slice(&self.buf[..n - first]);
    }

    /// Moves as many bytes of `data` in as fit; returns how many.
    fn put(&mut self, data: &[u8]) -> usize {
        let cap = self.buf.len();
        let n = data.len().min(cap - self.len);
        let tail = self.wrap(self.head, self.len);
        if n < SMALL_COPY {
            let mut at = tail;
            for &b in &data[..n] {
                self.buf[at] = b;
                at += 1;
                if at == cap {
                    at = 0;
                }
            }
        } else {
            self.copy_in(tail, &data[..n]);
        }
        self.len += n;
        report_op(n);
        n
    }

    /// `put`'s bulk copy of `data` to `tail` (`data.len()` bytes of free
    /// space there), out of line as `copy_out`.
    #[inline(never)]
    fn copy_in(&mut self, tail: usize, data: &[u8]) {
        let n = data.len();
        let first = n.min(self.buf.len() - tail);
        self.buf[tail..tail + first].copy_from_slice(&data[..first]);
        self.buf[..n - first].copy_from_slice(&data[first..n]);
    }
}

/// A unidirectional byte pipe shared by its reader and writer.
///
/// Invariant: `readable` equals the ring's `len`, or is nonzero once the
/// pipe is closed (it is updated under the ring lock); `room` equals its
/// free space. Both let a waiter re-check its condition without the lock:
/// the wait queue's fences order them against the waker's update.
pub struct Pipe {
    ring: IrqMutex<level::PipeRing, Ring>,
    readable: AtomicUsize,
    room: AtomicUsize,
    readers: WaitQueue,
    writers: WaitQueue,
}

impl Pipe {
    /// A pipe holding at most `capacity` bytes (at least 1).
    pub fn new(capacity: usize) -> Pipe {
        let capacity = capacity.max(1);
        Pipe {
            ring: IrqMutex::new(Ring { buf: vec![0; capacity].into_boxed_slice(), head: 0, len: 0, closed: false }),
            readable: AtomicUsize::new(0),
            room: AtomicUsize::new(capacity),
            readers: WaitQueue::new(),
            writers: WaitQueue::new(),
        }
    }

    /// Writes all of `data`, blocking while the pipe is full. With `sync`,
    /// the reader's wakeup carries WF_SYNC: the writer is about to sleep
    /// (typically reading the answer), so the reader may take its CPU.
    #[track_caller]
    pub fn write(&self, data: &[u8], sync: bool) {
        let mut done = 0;
        while done < data.len() {
            // Copies in as soon as there is room (one lock when there is).
            self.writers.wait_until(|| {
                if self.room.load(Ordering::Acquire) == 0 {
                    return false;
                }
                let n = self.locked(|r| r.put(&data[done..]));
                done += n;
                n > 0
            });
            if sync {
                self.readers.wake_one_sync();
            } else {
                self.readers.wake_one();
            }
        }
    }

    /// Reads up to `buf.len()` bytes, blocking until at least one is there
    /// or the writer closed; returns the count (0 only after `close`).
    #[track_caller]
    pub fn read(&self, buf: &mut [u8]) -> usize {
        if buf.is_empty() {
            return 0;
        }
        let mut n = 0;
        // Takes the bytes as soon as there are some (one lock when there are).
        let mut eof = false;
        self.readers.wait_until(|| {
            if self.readable.load(Ordering::Acquire) == 0 {
                return false;
            }
            (n, eof) = self.take_locked(buf);
            n > 0 || eof
        });
        if n > 0 {
            self.writers.wake_one();
        }
        n
    }

    /// Reads exactly `buf.len()` bytes unless the writer closes first.
    #[track_caller]
    pub fn read_exact(&self, buf: &mut [u8]) -> usize {
        let mut got = 0;
        while got < buf.len() {
            let n = self.read(&mut buf[got..]);
            if n == 0 {
                break;
            }
            got += n;
        }
        got
    }

    /// Closes the writing side: readers see end-of-file once it is drained.
    pub fn close(&self) {
        self.locked(|r| r.closed = true);
        self.readers.wake_all();
    }

    /// Takes what the ring holds into `buf` under its lock; returns the count
    /// and whether the writer closed. Out of line, so that `read`'s wait
    /// condition stays a load and a call, small enough to be inlined into
    /// both of `wait_until`'s tests (LTO otherwise may outline the whole
    /// condition, which cost the cross-CPU round trip ~40 instructions).
    #[inline(never)]
    fn take_locked(&self, buf: &mut [u8]) -> (usize, bool) {
        self.locked(|r| (r.take(buf), r.closed))
    }

    /// Runs `f` on the locked ring and refreshes the lock-free counts.
    fn locked<R>(&self, f: impl FnOnce(&mut Ring) -> R) -> R {
        let mut r = self.ring.lock();
        let out = f(&mut r);
        self.readable.store(if r.closed { usize::MAX } else { r.len }, Ordering::Release);
        self.room.store(r.buf.len() - r.len, Ordering::Release);
        out
    }
}
