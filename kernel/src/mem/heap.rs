//! The kernel heap: `linked_list_allocator` over a block of frames, behind a
//! global allocator that turns an allocation failure into a clear report and
//! the `oom` exit status instead of a hang or a bare panic.
//!
//! Interrupt handlers allocate too (wake lists, timer lists), so the heap's
//! spin lock is only ever held with interrupts off: an interrupt can never
//! arrive on a CPU that holds it. The lock-order checker records it as the
//! innermost class (`level::Heap`): any lock may be held while allocating,
//! and the allocator takes none.

use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicUsize, Ordering};

use linked_list_allocator::LockedHeap;
use x86_64::instructions::interrupts::without_interrupts;

use crate::lock::level::LockClass;
use crate::lock::lockdep;

struct KernelHeap {
    inner: LockedHeap,
    size: AtomicUsize,
}

#[global_allocator]
static HEAP: KernelHeap = KernelHeap { inner: LockedHeap::empty(), size: AtomicUsize::new(0) };

// SAFETY: delegates to linked_list_allocator, which upholds the GlobalAlloc
// contract; the failure path never returns.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = without_interrupts(|| {
            lockdep::acquire(LockClass::Heap, 0, false);
            // SAFETY: forwarded with the caller's layout.
            let p = unsafe { self.inner.alloc(layout) };
            lockdep::release(LockClass::Heap, 0);
            p
        });
        if p.is_null() {
            out_of_memory(layout);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        without_interrupts(|| {
            lockdep::acquire(LockClass::Heap, 0, false);
            // SAFETY: forwarded; ptr came from `alloc` with this layout.
            unsafe { self.inner.dealloc(ptr, layout) };
            lockdep::release(LockClass::Heap, 0);
        })
    }
}

fn out_of_memory(layout: Layout) -> ! {
    let (used, size) = usage();
    crate::kprintln!(
        "OUT OF MEMORY: the kernel heap cannot give {} bytes (alignment {}); {} of {} bytes in use. Exiting.",
        layout.size(),
        layout.align(),
        used,
        size
    );
    crate::record!("oom", "size={} align={} heap_used={} heap_size={}", layout.size(), layout.align(), used, size);
    crate::arch::backtrace::print_here(crate::arch::percpu::cpu_id());
    crate::arch::exit_with(crate::arch::ExitCode::Oom)
}

/// Hands `[start, start + size)` to the heap. Called once.
pub fn init(start: u64, size: usize) {
    // SAFETY: the range was just taken from the frame allocator, is
    // identity-mapped, unused, and is given to the heap exactly once.
    unsafe { HEAP.inner.lock().init(start as *mut u8, size) };
    HEAP.size.store(size, Ordering::Relaxed);
}

/// (bytes in use, heap size).
pub fn usage() -> (usize, usize) {
    without_interrupts(|| match HEAP.inner.try_lock() {
        Some(h) => {
            lockdep::acquire(LockClass::Heap, 0, true);
            let usage = (h.used(), h.size());
            drop(h);
            lockdep::release(LockClass::Heap, 0);
            usage
        }
        None => (0, HEAP.size.load(Ordering::Relaxed)),
    })
}
