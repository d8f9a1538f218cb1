//! ACPI: the RSDP (from the boot loader's Multiboot 2 ACPI tag, else found by scanning the
//! EBDA and the BIOS area, the only way under Multiboot 1), the MADT
//! (local APICs and I/O APICs, through the `acpi` crate), and the SRAT/SLIT
//! for NUMA nodes (parsed here: the crate version that builds on stable has no
//! SRAT support).
//!
//! All ACPI tables lie in the identity-mapped first 4 GiB, so the handler maps
//! a physical region by returning its physical address.

use alloc::vec::Vec;
use core::ptr::NonNull;

use acpi::madt::{Madt, MadtEntry};
use acpi::rsdp::Rsdp;
use acpi::sdt::{SdtHeader, Signature};
use acpi::{AcpiHandler, AcpiTable, AcpiTables, PhysicalMapping};

#[derive(Clone, Copy)]
struct IdentityMapped;

impl AcpiHandler for IdentityMapped {
    unsafe fn map_physical_region<T>(&self, physical_address: usize, size: usize) -> PhysicalMapping<Self, T> {
        // SAFETY: physical memory below 4 GiB is identity-mapped for the whole
        // life of the kernel, so the physical address is a valid virtual one.
        unsafe {
            PhysicalMapping::new(
                physical_address,
                NonNull::new_unchecked(physical_address as *mut T),
                size,
                size,
                *self,
            )
        }
    }

    fn unmap_physical_region<T>(_region: &PhysicalMapping<Self, T>) {}
}

/// One processor the firmware lists.
#[derive(Clone, Copy, Debug)]
pub struct Processor {
    pub apic_id: u32,
    /// Proximity domain from the SRAT (0 without one).
    pub node: u32,
}

/// Where the RSDP came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RsdpOrigin {
    /// A Multiboot 2 ACPI tag (a copy of the firmware's RSDP).
    BootLoader(bootinfo::RsdpSource),
    /// The scan of the EBDA and 0xE0000..0xFFFFF.
    BiosScan,
}

impl RsdpOrigin {
    pub fn word(self) -> &'static str {
        match self {
            RsdpOrigin::BootLoader(s) => s.word(),
            RsdpOrigin::BiosScan => "bios_scan",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            RsdpOrigin::BootLoader(s) => s.describe(),
            RsdpOrigin::BiosScan => "the BIOS-area scan",
        }
    }
}

/// What fairway needs from the ACPI tables.
#[derive(Debug)]
pub struct Platform {
    /// Physical address of the RSDP the tables were read from (for a boot loader's, its copy).
    pub rsdp: usize,
    pub rsdp_source: RsdpOrigin,
    /// Enabled processors in MADT order (the boot CPU is among them).
    pub processors: Vec<Processor>,
    pub ioapics: Vec<u64>,
    /// Number of NUMA nodes in the SRAT (0 without an SRAT).
    pub numa_nodes: u32,
    /// Node distances from the SLIT, row-major `numa_nodes x numa_nodes`.
    pub distances: Option<Vec<Vec<u8>>>,
}

/// Why the ACPI tables could not be used.
#[derive(Debug)]
pub enum AcpiProblem {
    NoRsdp,
    NoMadt,
    Invalid(acpi::AcpiError),
}

impl core::fmt::Display for AcpiProblem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            AcpiProblem::NoRsdp => write!(f, "no RSDP from the boot loader nor in the BIOS areas"),
            AcpiProblem::NoMadt => write!(f, "no MADT among the tables"),
            AcpiProblem::Invalid(e) => write!(f, "invalid tables: {:?}", e),
        }
    }
}

/// The boot loader's RSDP, copied into the kernel image (identity-mapped, so its address is a
/// physical one the table parser can map): the loader's own copy lies in memory handed out since.
static RSDP_COPY: spin::Once<[u8; bootinfo::RSDP_MAX]> = spin::Once::new();

/// Finds the tables (through the boot loader's RSDP when it passed a valid one, else by the
/// BIOS-area scan) and reads the MADT, SRAT and SLIT.
pub fn discover(from_loader: Option<&bootinfo::Rsdp>) -> Result<Platform, AcpiProblem> {
    if let Some(r) = from_loader {
        let copy = RSDP_COPY.call_once(|| {
            let mut b = [0; bootinfo::RSDP_MAX];
            b[..r.bytes().len()].copy_from_slice(r.bytes());
            b
        });
        let rsdp = copy.as_ptr() as usize;
        // SAFETY: `rsdp` is the address of a validated RSDP copy in the kernel image; the
        // tables it points at lie in identity-mapped memory below 4 GiB.
        match unsafe { AcpiTables::from_rsdp(IdentityMapped, rsdp) } {
            Ok(tables) => return read_tables(tables, rsdp, RsdpOrigin::BootLoader(r.source)),
            Err(e) => crate::kprintln!(
                "ACPI: the RSDP from {} gives no usable tables ({:?}); scanning the BIOS areas",
                r.source.describe(),
                e
            ),
        }
    }
    // SAFETY: the EBDA and 0xE0000..0xFFFFF areas the crate scans are identity-mapped low
    // memory (on a UEFI machine they hold no RSDP, and the scan finds none).
    let rsdp_mapping = unsafe { Rsdp::search_for_on_bios(IdentityMapped) }.map_err(|e| match e {
        acpi::AcpiError::NoValidRsdp => AcpiProblem::NoRsdp,
        e => AcpiProblem::Invalid(e),
    })?;
    let rsdp = rsdp_mapping.physical_start();
    // SAFETY: the crate validated this RSDP (signature and checksums) in the search.
    let tables = unsafe { AcpiTables::from_validated_rsdp(IdentityMapped, rsdp_mapping) }
        .map_err(AcpiProblem::Invalid)?;
    read_tables(tables, rsdp, RsdpOrigin::BiosScan)
}

fn read_tables(tables: AcpiTables<IdentityMapped>, rsdp: usize, rsdp_source: RsdpOrigin) -> Result<Platform, AcpiProblem> {
    let madt = tables.find_table::<Madt>().map_err(|_| AcpiProblem::NoMadt)?;
    let mut processors = Vec::new();
    let mut ioapics = Vec::new();
    for entry in madt.get().entries() {
        match entry {
            // bit 0: the CPU is enabled (a disabled one falls to `_`)
            MadtEntry::LocalApic(e) if e.flags & 1 != 0 => {
                processors.push(Processor { apic_id: e.apic_id as u32, node: 0 });
            }
            MadtEntry::LocalX2Apic(e) if e.flags & 1 != 0 => {
                let id = e.x2apic_id;
                processors.push(Processor { apic_id: id, node: 0 });
            }
            MadtEntry::IoApic(e) => ioapics.push(e.io_apic_address as u64),
            _ => {}
        }
    }
    let mut numa_nodes = 0;
    if let Ok(srat) = tables.find_table::<Srat>() {
        numa_nodes = srat.apply(&mut processors);
    }
    let distances = tables.find_table::<Slit>().ok().map(|slit| slit.matrix());
    Ok(Platform { rsdp, rsdp_source, processors, ioapics, numa_nodes, distances })
}

/// System Resource Affinity Table header; entries follow.
#[repr(C, packed)]
struct Srat {
    header: SdtHeader,
    _table_revision: u32,
    _reserved: u64,
}

// SAFETY: `Srat` is the fixed part of the SRAT as the ACPI specification lays it out.
unsafe impl AcpiTable for Srat {
    const SIGNATURE: Signature = Signature::SRAT;
    fn header(&self) -> &SdtHeader {
        &self.header
    }
}

impl Srat {
    /// Sets each processor's node from the affinity entries; returns the
    /// number of distinct nodes.
    fn apply(&self, processors: &mut [Processor]) -> u32 {
        let bytes = self.bytes();
        let mut nodes: Vec<u32> = Vec::new();
        let mut off = core::mem::size_of::<Srat>();
        while off + 2 <= bytes.len() {
            let (kind, len) = (bytes[off], bytes[off + 1] as usize);
            if len < 2 || off + len > bytes.len() {
                log::warn!("SRAT entry at offset {} has a bad length {}; ignoring the rest", off, len);
                break;
            }
            let e = &bytes[off..off + len];
            let le32 = |at: usize| u32::from_le_bytes([e[at], e[at + 1], e[at + 2], e[at + 3]]);
            let affinity = match (kind, len) {
                // Processor local APIC affinity: domain split in bytes 2 and 9..12.
                (0, 16) if le32(4) & 1 != 0 => {
                    Some((e[3] as u32, e[2] as u32 | (e[9] as u32) << 8 | (e[10] as u32) << 16 | (e[11] as u32) << 24))
                }
                // Processor x2APIC affinity.
                (2, 24) if le32(12) & 1 != 0 => Some((le32(8), le32(4))),
                _ => None,
            };
            if let Some((apic_id, domain)) = affinity {
                for p in processors.iter_mut().filter(|p| p.apic_id == apic_id) {
                    p.node = domain;
                }
                if !nodes.contains(&domain) {
                    nodes.push(domain);
                }
            }
            off += len;
        }
        nodes.len() as u32
    }

    fn bytes(&self) -> &[u8] {
        let len = self.header.length as usize;
        // SAFETY: the table is `length` bytes long in identity-mapped memory
        // (its checksum was validated by the crate over that length).
        unsafe { core::slice::from_raw_parts(self as *const Self as *const u8, len) }
    }
}

/// System Locality Information Table header; the matrix follows.
#[repr(C, packed)]
struct Slit {
    header: SdtHeader,
    localities: u64,
}

// SAFETY: `Slit` is the fixed part of the SLIT as the ACPI specification lays it out.
unsafe impl AcpiTable for Slit {
    const SIGNATURE: Signature = Signature::SLIT;
    fn header(&self) -> &SdtHeader {
        &self.header
    }
}

impl Slit {
    fn matrix(&self) -> Vec<Vec<u8>> {
        let n = self.localities.min(64) as usize;
        let len = self.header.length as usize;
        let start = core::mem::size_of::<Slit>();
        if start + n * n > len {
            log::warn!("SLIT shorter than its {} localities; ignoring it", n);
            return Vec::new();
        }
        // SAFETY: the table is `length` bytes long in identity-mapped memory.
        let bytes = unsafe { core::slice::from_raw_parts(self as *const Self as *const u8, len) };
        (0..n).map(|i| bytes[start + i * n..start + (i + 1) * n].to_vec()).collect()
    }
}
