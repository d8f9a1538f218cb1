//! A pipe: a bounded byte ring with blocking read and write.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec;

use sched::WakeFlags;

use crate::lock::{level, IrqGuard, IrqMutex};
use crate::task::Task;
use super::Waiters;

/// The bytes in flight and whether the writing side is closed.
///
/// Invariant: `len <= buf.len()`, `head < buf.len()`; the bytes are
/// `buf[head..]` then `buf[..]` wrapping around, `len` of them; `tail`
/// is where they end, `(head + len) % buf.len()` (kept rather than worked
/// out at every write).
struct Ring {
    buf: Box<[u8]>,
    head: usize,
    tail: usize,
    len: usize,
    closed: bool,
}

/// Below this many bytes a byte loop beats two `memcpy` calls (the
/// simulator prices the two kinds of copy apart).
pub const SMALL_COPY: usize = 16;

/// Reports a read or write of `n` bytes to the platform (the pipe's lock is
/// held: a simulated CPU adds its price to its own clock and pays it when the
/// lock's section ends, before the wakeup that follows a write). Free on x86.
#[inline(always)]
fn report_op(n: usize) {
    crate::platform::mechanism_work(crate::platform::Work::PipeCopy { bytes: n });
}

impl Ring {
    /// No room for a byte.
    fn is_full(&self) -> bool {
        self.len == self.buf.len()
    }

    /// Nothing to read and no end-of-file to report: a reader waits.
    fn nothing_to_read(&self) -> bool {
        self.len == 0 && !self.closed
    }

    /// Index `i` positions after `from`, wrapped (`from < cap`, `i <= cap`).
    fn wrap(&self, from: usize, i: usize) -> usize {
        let j = from + i;
        if j >= self.buf.len() {
            j - self.buf.len()
        } else {
            j
        }
    }

    /// The index after `at` (`< cap`), wrapped.
    #[inline(always)]
    fn next(&self, at: usize) -> usize {
        let next = at + 1;
        if next == self.buf.len() {
            0
        } else {
            next
        }
    }

    /// Moves up to `out.len()` bytes out; returns how many.
    fn take(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.len);
        if n == 1 {
            // One byte (a ping-pong's message): no loop to set up.
            out[0] = self.buf[self.head];
            self.head = self.next(self.head);
        } else if n < SMALL_COPY {
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

    /// Moves as many bytes of `data` in as fit into the ring, which has
    /// room for at least one (the writer waited for it); returns how many.
    fn put(&mut self, data: &[u8]) -> usize {
        debug_assert!(!self.is_full(), "a write waits for room before it puts");
        let cap = self.buf.len();
        let tail = self.tail;
        if let [byte] = data {
            // As in `take`; one byte fits, as there is room.
            self.buf[tail] = *byte;
            self.tail = self.next(tail);
            self.len += 1;
            report_op(1);
            return 1;
        }
        let n = data.len().min(cap - self.len);
        if n < SMALL_COPY {
            // The loop's index ends wrapped where the next write starts.
            let mut at = tail;
            for &b in &data[..n] {
                self.buf[at] = b;
                at += 1;
                if at == cap {
                    at = 0;
                }
            }
            self.tail = at;
        } else {
            self.copy_in(tail, &data[..n]);
            self.tail = self.wrap(tail, n);
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

/// What a pipe's lock guards: the ring, and the tasks waiting on either
/// end (so that a reader finding the ring empty queues itself under the
/// lock the writer fills it under, and one lock round trip serves both).
struct PipeState {
    ring: Ring,
    /// Readers waiting for bytes or the close.
    readers: Waiters,
    /// Writers waiting for room.
    writers: Waiters,
}

fn readers(s: &mut PipeState) -> &mut Waiters {
    &mut s.readers
}

fn writers(s: &mut PipeState) -> &mut Waiters {
    &mut s.writers
}

/// A unidirectional byte pipe shared by its readers and writers.
///
/// Invariant: the ring and both lists change only under the one lock; a
/// task in `readers` found the ring empty and open under it when it queued
/// itself (a spuriously woken one stays queued while it re-checks), and a
/// task in `writers` found it full. Every write that adds bytes pops a
/// reader, every read that takes some pops a writer, the close pops all
/// readers: each wakes what it popped once the lock is dropped.
pub struct Pipe {
    state: IrqMutex<level::Pipe, PipeState>,
}

impl Pipe {
    /// A pipe holding at most `capacity` bytes (at least 1).
    pub fn new(capacity: usize) -> Pipe {
        let capacity = capacity.max(1);
        let ring = Ring { buf: vec![0; capacity].into_boxed_slice(), head: 0, tail: 0, len: 0, closed: false };
        Pipe { state: IrqMutex::new(PipeState { ring, readers: Waiters::new(), writers: Waiters::new() }) }
    }

    /// Writes all of `data`, blocking while the pipe is full. With `sync`,
    /// the reader's wakeup carries WF_SYNC: the writer is about to sleep
    /// (typically reading the answer), so the reader may take its CPU.
    #[track_caller]
    pub fn write(&self, data: &[u8], sync: bool) {
        let flags = if sync { WakeFlags::SYNC } else { WakeFlags::NONE };
        let mut done = 0;
        while done < data.len() {
            let mut s = self.state.lock();
            if s.ring.is_full() {
                s = self.wait_for_room(s);
            }
            done += s.ring.put(&data[done..]);
            let reader = s.readers.pop();
            drop(s);
            if let Some(r) = reader {
                self.wake(r, flags, readers);
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
        let mut s = self.state.lock();
        if s.ring.nothing_to_read() {
            s = super::block_locked(&self.state, s, readers, |s| !s.ring.nothing_to_read());
        }
        let n = s.ring.take(buf);
        let writer = if n > 0 { s.writers.pop() } else { None };
        drop(s);
        if let Some(w) = writer {
            self.wake(w, WakeFlags::NONE, writers);
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
        let all = {
            let mut s = self.state.lock();
            s.ring.closed = true;
            s.readers.take_all()
        };
        if !all.is_empty() {
            super::wake_taken(all);
        }
    }

    /// Blocks a writer until the ring has room; out of line, as it is rare.
    #[track_caller]
    #[inline(never)]
    fn wait_for_room<'a>(&'a self, s: IrqGuard<'a, level::Pipe, PipeState>) -> IrqGuard<'a, level::Pipe, PipeState> {
        super::block_locked(&self.state, s, writers, |s| !s.ring.is_full())
    }

    /// Wakes `first`, popped from the end `end` picks, or the next there
    /// that was asleep.
    #[inline(always)]
    fn wake(&self, first: Arc<Task>, flags: WakeFlags, end: fn(&mut PipeState) -> &mut Waiters) {
        super::wake_popped(first, flags, || end(&mut self.state.lock()).pop());
    }
}
