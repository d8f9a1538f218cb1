//! The kernel heap: `linked_list_allocator` over a block of frames, behind a
//! global allocator that turns an allocation failure into a clear report and
//! the `oom` exit status instead of a hang or a bare panic.
//!
//! Interrupt handlers allocate too (wake lists, timer lists), so the heap's
//! spin lock is only ever held with interrupts off: an interrupt can never
//! arrive on a CPU that holds it.

use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicUsize, Ordering};

use linked_list_allocator::LockedHeap;
use x86_64::instructions::interrupts::without_interrupts;

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
        // SAFETY: forwarded with the caller's layout.
        let p = without_interrupts(|| unsafe { self.inner.alloc(layout) });
        if p.is_null() {
            out_of_memory(layout);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded; ptr came from `alloc` with this layout.
        without_interrupts(|| unsafe { self.inner.dealloc(ptr, layout) })
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
        Some(h) => (h.used(), h.size()),
        None => (0, HEAP.size.load(Ordering::Relaxed)),
    })
}
