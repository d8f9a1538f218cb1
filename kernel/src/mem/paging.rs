//! Changes to the boot page tables (boot/multiboot.S), which identity-map the
//! first 4 GiB with 2 MiB pages and are shared by every CPU.
//!
//! Invariant: the tables only ever map virtual = physical below 4 GiB. A 2 MiB
//! page is split into 512 4 KiB pages (same physical addresses and flags) when
//! a 4 KiB page inside it must change. The only changes after boot are the
//! stack arena's, made while the APs wait in `selfcheck::ap_idle` before the
//! scheduler starts, touching nothing they use; each AP flushes its TLB when
//! it leaves (`flush_local_tlb`). Changes while other CPUs run threads would
//! need a TLB shootdown (none are made).

use x86_64::registers::control::Cr3;

use super::{frame, FRAME_SIZE, MAPPED_LIMIT};

const PRESENT: u64 = 1 << 0;
const WRITABLE: u64 = 1 << 1;
const WRITE_THROUGH: u64 = 1 << 3;
const CACHE_DISABLE: u64 = 1 << 4;
const HUGE: u64 = 1 << 7;
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

/// Why a page-table change was refused.
#[derive(Debug)]
pub enum PagingError {
    OutsideIdentityMap(u64),
    NoFrameForTable,
}

impl core::fmt::Display for PagingError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PagingError::OutsideIdentityMap(a) => write!(f, "address {:#x} is outside the identity map", a),
            PagingError::NoFrameForTable => write!(f, "no free frame for a page table"),
        }
    }
}

/// The page-directory entry that maps `addr`.
fn pd_entry(addr: u64) -> Result<*mut u64, PagingError> {
    if addr >= MAPPED_LIMIT {
        return Err(PagingError::OutsideIdentityMap(addr));
    }
    let pml4 = Cr3::read().0.start_address().as_u64() as *const u64;
    // SAFETY: CR3 holds the boot PML4 whose entry 0 points at the PDPT, whose
    // entries 0..4 point at the page directories (boot/multiboot.S); all of
    // them are identity-mapped kernel .bss or frames from the frame allocator.
    unsafe {
        let pdpt = (pml4.read_volatile() & ADDR_MASK) as *const u64;
        let pd = (pdpt.add((addr >> 30) as usize).read_volatile() & ADDR_MASK) as *mut u64;
        Ok(pd.add(((addr >> 21) & 511) as usize))
    }
}

/// Makes sure the 2 MiB region holding `addr` is mapped by 4 KiB pages and
/// returns the page-table entry for `addr`.
fn pt_entry(addr: u64) -> Result<*mut u64, PagingError> {
    let pde = pd_entry(addr)?;
    // SAFETY: `pde` points into a live page directory (see `pd_entry`).
    unsafe {
        let entry = pde.read_volatile();
        if entry & HUGE != 0 {
            let table = frame::alloc_contiguous(1).ok_or(PagingError::NoFrameForTable)?;
            let base = entry & ADDR_MASK & !((2 << 20) - 1);
            let flags = entry & (PRESENT | WRITABLE | WRITE_THROUGH | CACHE_DISABLE);
            let pt = table as *mut u64;
            for i in 0..512u64 {
                pt.add(i as usize).write_volatile((base + i * FRAME_SIZE) | flags);
            }
            pde.write_volatile(table | PRESENT | WRITABLE);
            flush_all();
        }
        let pt = (pde.read_volatile() & ADDR_MASK) as *mut u64;
        Ok(pt.add(((addr >> 12) & 511) as usize))
    }
}

/// Unmaps the 4 KiB page at `addr` (a guard page: touching it faults).
pub fn unmap_page(addr: u64) -> Result<(), PagingError> {
    let pte = pt_entry(addr)?;
    // SAFETY: clearing one entry of a live page table; nothing maps code or
    // data the kernel uses at a guard page.
    unsafe { pte.write_volatile(0) };
    x86_64::instructions::tlb::flush(x86_64::VirtAddr::new(addr));
    Ok(())
}

/// Maps the 2 MiB regions covering `[start, end)` uncached (device memory:
/// the I/O APIC and local APIC windows).
pub fn set_uncached(start: u64, end: u64) -> Result<(), PagingError> {
    let mut addr = start & !((2 << 20) - 1);
    while addr < end {
        let pde = pd_entry(addr)?;
        // SAFETY: adding cache-control bits to a live 2 MiB identity mapping.
        unsafe { pde.write_volatile(pde.read_volatile() | WRITE_THROUGH | CACHE_DISABLE) };
        addr += 2 << 20;
    }
    flush_all();
    Ok(())
}

fn flush_all() {
    x86_64::instructions::tlb::flush_all();
}

/// Drops every translation this CPU has cached (the boot tables set no global
/// pages, so reloading CR3 drops them all). For a CPU that was running while
/// another changed the tables: `unmap_page` (and the split of a 2 MiB page
/// it may do first, `pt_entry`) flushes only the
/// TLB of the CPU that calls them.
pub fn flush_local_tlb() {
    flush_all();
}
