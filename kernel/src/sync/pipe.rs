//! A pipe: a bounded byte ring with blocking read and write.

use alloc::collections::VecDeque;

use super::irq_mutex::IrqMutex;
use super::WaitQueue;

/// Bytes and a flag saying whether the writing side is closed.
struct Ring {
    bytes: VecDeque<u8>,
    capacity: usize,
    closed: bool,
}

/// A unidirectional byte pipe shared by its reader and writer.
pub struct Pipe {
    ring: IrqMutex<Ring>,
    readers: WaitQueue,
    writers: WaitQueue,
}

impl Pipe {
    /// A pipe holding at most `capacity` bytes (at least 1).
    pub fn new(capacity: usize) -> Pipe {
        let capacity = capacity.max(1);
        Pipe {
            ring: IrqMutex::new(Ring { bytes: VecDeque::with_capacity(capacity), capacity, closed: false }),
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
            self.writers.wait_until(|| {
                let r = self.ring.lock();
                r.bytes.len() < r.capacity
            });
            {
                let mut r = self.ring.lock();
                let room = r.capacity - r.bytes.len();
                let n = room.min(data.len() - done);
                r.bytes.extend(&data[done..done + n]);
                done += n;
            }
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
        self.readers.wait_until(|| {
            let r = self.ring.lock();
            !r.bytes.is_empty() || r.closed
        });
        let n = {
            let mut r = self.ring.lock();
            let n = buf.len().min(r.bytes.len());
            for (i, b) in r.bytes.drain(..n).enumerate() {
                buf[i] = b;
            }
            n
        };
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
        self.ring.lock().closed = true;
        self.readers.wake_all();
    }
}
