//! fairway's boot information, read from what a Multiboot 1 or Multiboot 2 loader hands over.
//!
//! The kernel gives [`parse`] the magic value from EAX, the physical address from EBX and a
//! [`PhysMem`] that turns physical ranges into byte slices; everything else here is pure code on
//! those bytes, so every bad case (no memory map, a tag list that ends early, an RSDP whose
//! checksum fails, no ACPI tag at all) is tested on the host. Nothing here panics on any input.
//!
//! What is kept is copied into a fixed-size [`BootInfo`] (no heap: it is filled before the
//! heap exists, and the loader's structures lie in memory the kernel hands out later).
//!
//! Fallbacks, each reported as a [`Problem`] the kernel prints:
//! - no memory map: the basic lower/upper memory sizes (Multiboot 1 flag 0, Multiboot 2 tag 4)
//!   give two usable regions, `[0, lower)` and `[1 MiB, 1 MiB + upper)`; without those either
//!   the boot stops with [`Fatal::NoMemory`];
//! - a Multiboot 2 tag list that runs past its total size, has a tag shorter than its header or
//!   no end tag: the tags before the fault are used, the rest ignored;
//! - an ACPI tag whose RSDP fails its signature or checksum: the other ACPI tag (new, then old)
//!   is tried; with none valid, [`BootInfo::rsdp`] is `None` and the kernel scans the BIOS areas
//!   as it does under Multiboot 1 (which passes no RSDP).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use core::fmt;

/// EAX when a Multiboot 1 loader (QEMU's `-kernel`, GRUB's `multiboot`) enters the kernel.
pub const MULTIBOOT1_MAGIC: u32 = 0x2BAD_B002;
/// EAX when a Multiboot 2 loader (GRUB's `multiboot2`) enters the kernel.
pub const MULTIBOOT2_MAGIC: u32 = 0x36D7_6289;
/// Memory-map regions kept; more are counted in [`Problem::RegionsDropped`]. (GRUB on UEFI
/// passes the firmware's map, which often has a hundred entries.)
pub const MAX_REGIONS: usize = 160;
/// Longest command line kept; the rest is cut (and said so).
pub const CMDLINE_MAX: usize = 1024;
/// Longest boot loader name kept.
pub const LOADER_MAX: usize = 64;
/// The largest Multiboot 2 information read; a longer one counts as truncated there.
pub const MB2_INFO_MAX: usize = 64 * 1024;
/// Problems kept; more are dropped silently after the last one says so.
const MAX_PROBLEMS: usize = 8;
/// The largest RSDP copy kept (ACPI 2.0+ says 36 bytes).
pub const RSDP_MAX: usize = 64;

/// Memory-map type of usable RAM (both protocols use the BIOS E820 numbering).
pub const USABLE: u32 = 1;

/// Reads physical memory. The kernel's implementation maps the identity-mapped first 4 GiB;
/// `None` for a range it cannot read.
pub trait PhysMem {
    fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]>;
}

/// One region of the firmware memory map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub base: u64,
    pub len: u64,
    /// [`USABLE`] = usable RAM; everything else is reserved.
    pub kind: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    Multiboot1,
    Multiboot2,
}

impl Protocol {
    pub fn word(self) -> &'static str {
        match self {
            Protocol::Multiboot1 => "multiboot1",
            Protocol::Multiboot2 => "multiboot2",
        }
    }
}

/// Where the usable memory came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemorySource {
    /// The loader's memory map (Multiboot 1 flag 6, Multiboot 2 tag 6).
    MemoryMap,
    /// Only the lower/upper memory sizes (the fallback).
    BasicMeminfo,
}

impl MemorySource {
    pub fn word(self) -> &'static str {
        match self {
            MemorySource::MemoryMap => "mmap",
            MemorySource::BasicMeminfo => "meminfo",
        }
    }
}

/// Which Multiboot 2 ACPI tag an RSDP came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RsdpSource {
    /// Tag 15: a copy of the ACPI 2.0+ RSDP (XSDT address).
    Multiboot2New,
    /// Tag 14: a copy of the ACPI 1.0 RSDP (RSDT address).
    Multiboot2Old,
}

impl RsdpSource {
    pub fn word(self) -> &'static str {
        match self {
            RsdpSource::Multiboot2New => "mb2_new",
            RsdpSource::Multiboot2Old => "mb2_old",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            RsdpSource::Multiboot2New => "the boot loader's new (ACPI 2.0+) RSDP tag",
            RsdpSource::Multiboot2Old => "the boot loader's old (ACPI 1.0) RSDP tag",
        }
    }
}

/// Why an RSDP copy was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RsdpFault {
    /// Fewer bytes than the revision needs.
    Short { len: usize },
    /// Not `RSD PTR `.
    Signature,
    /// The first 20 bytes do not sum to 0.
    Checksum,
    /// The length field is below 36 or above what the tag holds.
    Length { field: u32 },
    /// The whole structure (`length` bytes) does not sum to 0.
    ExtendedChecksum,
}

impl fmt::Display for RsdpFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RsdpFault::Short { len } => write!(f, "only {len} bytes"),
            RsdpFault::Signature => write!(f, "no `RSD PTR ` signature"),
            RsdpFault::Checksum => write!(f, "bad checksum"),
            RsdpFault::Length { field } => write!(f, "bad length field {field}"),
            RsdpFault::ExtendedChecksum => write!(f, "bad extended checksum"),
        }
    }
}

/// A validated RSDP copy, ready for the ACPI table parser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rsdp {
    bytes: [u8; RSDP_MAX],
    len: usize,
    pub source: RsdpSource,
    /// The revision the table parser will see (0 = RSDT, 2 = XSDT).
    pub revision: u8,
}

impl Rsdp {
    /// The RSDP bytes (at least 36, zero-padded past a 1.0 RSDP's 20).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len.max(36)]
    }
}

/// Checks an RSDP as ACPI defines it: signature, the checksum over the first 20 bytes, and for
/// revision > 0 the length field and the checksum over `length` bytes. Returns the revision.
pub fn check_rsdp(b: &[u8]) -> Result<u8, RsdpFault> {
    let revision = check_rsdp_v1(b)?;
    if revision > 0 {
        if b.len() < 36 {
            return Err(RsdpFault::Short { len: b.len() });
        }
        let field = le32(b, 20).unwrap_or(0);
        if field < 36 || field as usize > b.len() || field as usize > RSDP_MAX {
            return Err(RsdpFault::Length { field });
        }
        if sum(&b[..field as usize]) != 0 {
            return Err(RsdpFault::ExtendedChecksum);
        }
    }
    Ok(revision)
}

/// The ACPI 1.0 part of [`check_rsdp`]: 20 bytes, the signature and their checksum.
pub fn check_rsdp_v1(b: &[u8]) -> Result<u8, RsdpFault> {
    if b.len() < 20 {
        return Err(RsdpFault::Short { len: b.len() });
    }
    if &b[..8] != b"RSD PTR " {
        return Err(RsdpFault::Signature);
    }
    if sum(&b[..20]) != 0 {
        return Err(RsdpFault::Checksum);
    }
    Ok(b[15])
}

fn sum(b: &[u8]) -> u8 {
    b.iter().fold(0u8, |a, &x| a.wrapping_add(x))
}

/// Something wrong with the boot information that the kernel works around (and prints).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The Multiboot 2 tag list ends early: a tag at `offset` does not fit in the `total` bytes
    /// (or no end tag came before them). Tags before `offset` were used.
    TruncatedTags { offset: usize, total: usize },
    /// The Multiboot 2 information claims `claimed` bytes; only the first [`MB2_INFO_MAX`] were read.
    InfoTooLong { claimed: u32 },
    /// An ACPI tag's RSDP was rejected.
    BadRsdp { source: RsdpSource, fault: RsdpFault },
    /// No memory map: the basic memory sizes were used instead.
    NoMemoryMap,
    /// A Multiboot 2 memory map whose entries are shorter than 24 bytes (ignored).
    BadMemoryMap { entry_size: u32 },
    /// More than [`MAX_REGIONS`] memory regions: the rest were dropped.
    RegionsDropped { dropped: usize },
    /// The command line was longer than [`CMDLINE_MAX`] and was cut.
    CmdlineCut,
    /// A structure the information points at could not be read.
    Unreadable { what: &'static str, addr: u64 },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::TruncatedTags { offset, total } => write!(
                f,
                "the multiboot2 tag list is truncated at byte {offset} of {total}; the tags after it are ignored"
            ),
            Problem::InfoTooLong { claimed } => write!(
                f,
                "the multiboot2 information claims {claimed} bytes; only the first {MB2_INFO_MAX} are read"
            ),
            Problem::BadRsdp { source, fault } => {
                write!(f, "the RSDP in {} is invalid ({fault}); not used", source.describe())
            }
            Problem::NoMemoryMap => write!(
                f,
                "the boot loader passed no memory map; using its lower/upper memory sizes instead"
            ),
            Problem::BadMemoryMap { entry_size } => {
                write!(f, "the memory map's entries are {entry_size} bytes (fewer than 24); map ignored")
            }
            Problem::RegionsDropped { dropped } => write!(
                f,
                "the memory map has {dropped} regions more than the {MAX_REGIONS} kept; they stay unused"
            ),
            Problem::CmdlineCut => {
                write!(f, "the command line is longer than {CMDLINE_MAX} bytes; the rest is ignored")
            }
            Problem::Unreadable { what, addr } => write!(f, "cannot read the {what} at {addr:#x}; ignored"),
        }
    }
}

/// Why the kernel cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fatal {
    /// EAX held neither magic value.
    NotMultiboot { magic: u32 },
    /// The information structure itself cannot be read.
    InfoUnreadable { addr: u64 },
    /// Neither a memory map nor the basic memory sizes.
    NoMemory { protocol: Protocol },
}

impl fmt::Display for Fatal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fatal::NotMultiboot { magic } => write!(
                f,
                "not started by a multiboot loader (EAX = {magic:#x}, expected {MULTIBOOT1_MAGIC:#x} or {MULTIBOOT2_MAGIC:#x}); cannot find memory"
            ),
            Fatal::InfoUnreadable { addr } => {
                write!(f, "the boot information at {addr:#x} cannot be read; cannot find memory")
            }
            Fatal::NoMemory { protocol } => write!(
                f,
                "the boot loader ({}) passed neither a memory map nor the memory sizes; cannot find memory",
                protocol.word()
            ),
        }
    }
}

/// What fairway keeps of the boot information.
///
/// Invariants: `region_count <= MAX_REGIONS`, `cmdline_len <= CMDLINE_MAX`,
/// `loader_len <= LOADER_MAX`, the problems fill a prefix of `problems`.
#[derive(Clone, Debug)]
pub struct BootInfo {
    pub protocol: Protocol,
    pub memory_source: MemorySource,
    regions: [Region; MAX_REGIONS],
    region_count: usize,
    cmdline: [u8; CMDLINE_MAX],
    cmdline_len: usize,
    /// The loader passed a command line (possibly empty).
    pub has_cmdline: bool,
    loader: [u8; LOADER_MAX],
    loader_len: usize,
    /// The RSDP from a Multiboot 2 ACPI tag, when one was valid.
    pub rsdp: Option<Rsdp>,
    /// ACPI tags the loader passed (valid or not); 0 = none.
    pub acpi_tags: u8,
    problems: [Option<Problem>; MAX_PROBLEMS],
}

impl BootInfo {
    fn new(protocol: Protocol) -> Self {
        BootInfo {
            protocol,
            memory_source: MemorySource::MemoryMap,
            regions: [Region { base: 0, len: 0, kind: 0 }; MAX_REGIONS],
            region_count: 0,
            cmdline: [0; CMDLINE_MAX],
            cmdline_len: 0,
            has_cmdline: false,
            loader: [0; LOADER_MAX],
            loader_len: 0,
            rsdp: None,
            acpi_tags: 0,
            problems: [None; MAX_PROBLEMS],
        }
    }

    pub fn regions(&self) -> &[Region] {
        &self.regions[..self.region_count]
    }

    pub fn problems(&self) -> impl Iterator<Item = &Problem> {
        self.problems.iter().map_while(Option::as_ref)
    }

    /// The boot loader's name (`GRUB 2.06-13+deb12u2`), empty when not passed.
    pub fn loader_name(&self) -> &str {
        core::str::from_utf8(&self.loader[..self.loader_len]).unwrap_or("?")
    }

    /// The raw command line as passed (non-ASCII bytes as `?`).
    pub fn raw_cmdline(&self) -> String {
        self.cmdline[..self.cmdline_len]
            .iter()
            .map(|&b| if b.is_ascii() && b != 0 { b as char } else { '?' })
            .collect()
    }

    /// The kernel's command line: the words of the loader's, single-spaced, without a leading
    /// kernel path (QEMU's `-kernel` and GRUB's `multiboot` put the kernel's file name first;
    /// a word with `/` and no `=` is taken for one).
    pub fn cmdline(&self) -> String {
        let text = self.raw_cmdline();
        let mut words = text.split_ascii_whitespace().peekable();
        if words.peek().is_some_and(|w| w.contains('/') && !w.contains('=')) {
            words.next();
        }
        let mut out = String::new();
        for w in words {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
        out
    }

    fn problem(&mut self, p: Problem) {
        if let Some(slot) = self.problems.iter_mut().find(|s| s.is_none()) {
            *slot = Some(p);
        }
    }

    fn push_region(&mut self, r: Region, dropped: &mut usize) {
        if self.region_count < MAX_REGIONS {
            self.regions[self.region_count] = r;
            self.region_count += 1;
        } else {
            *dropped += 1;
        }
    }

    fn set_cmdline(&mut self, s: &[u8]) {
        self.has_cmdline = true;
        let s = until_nul(s);
        let n = s.len().min(CMDLINE_MAX);
        self.cmdline[..n].copy_from_slice(&s[..n]);
        self.cmdline_len = n;
        if s.len() > CMDLINE_MAX {
            self.problem(Problem::CmdlineCut);
        }
    }

    fn set_loader(&mut self, s: &[u8]) {
        let s = until_nul(s);
        let n = s.len().min(LOADER_MAX);
        self.loader[..n].copy_from_slice(&s[..n]);
        // keep whole UTF-8 characters only
        let mut n = n;
        while n > 0 && core::str::from_utf8(&self.loader[..n]).is_err() {
            n -= 1;
        }
        self.loader_len = n;
    }

    /// Two usable regions from the basic memory sizes (KiB below 640 KiB, KiB above 1 MiB).
    fn basic_regions(&mut self, lower_kib: u32, upper_kib: u32) {
        let mut dropped = 0;
        self.memory_source = MemorySource::BasicMeminfo;
        self.push_region(Region { base: 0, len: lower_kib as u64 * 1024, kind: USABLE }, &mut dropped);
        self.push_region(Region { base: 1 << 20, len: upper_kib as u64 * 1024, kind: USABLE }, &mut dropped);
    }
}

fn until_nul(s: &[u8]) -> &[u8] {
    s.iter().position(|&b| b == 0).map_or(s, |n| &s[..n])
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn le64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at.checked_add(8)?)?.try_into().ok()?))
}

/// Reads the boot information of either protocol, chosen by `magic`.
pub fn parse(magic: u32, info: u64, mem: &dyn PhysMem) -> Result<BootInfo, Fatal> {
    match magic {
        MULTIBOOT1_MAGIC => parse_multiboot1(info, mem),
        MULTIBOOT2_MAGIC => {
            let head = mem.bytes(info, 8).ok_or(Fatal::InfoUnreadable { addr: info })?;
            let claimed = le32(head, 0).unwrap_or(0);
            let len = (claimed as usize).clamp(8, MB2_INFO_MAX);
            let bytes = mem.bytes(info, len).ok_or(Fatal::InfoUnreadable { addr: info })?;
            let mut b = parse_multiboot2(bytes)?;
            if claimed as usize > MB2_INFO_MAX {
                b.problem(Problem::InfoTooLong { claimed });
            }
            Ok(b)
        }
        magic => Err(Fatal::NotMultiboot { magic }),
    }
}

// Multiboot 1 information: byte offsets of the fields used and the flag bits that say they are there.
const MB1_FLAGS: usize = 0;
const MB1_MEM_LOWER: usize = 4;
const MB1_MEM_UPPER: usize = 8;
const MB1_CMDLINE: usize = 16;
const MB1_MMAP_LENGTH: usize = 44;
const MB1_MMAP_ADDR: usize = 48;
const MB1_LOADER_NAME: usize = 64;
const MB1_FIXED_LEN: usize = 68;
const MB1_FLAG_MEM: u32 = 1 << 0;
const MB1_FLAG_CMDLINE: u32 = 1 << 2;
const MB1_FLAG_MMAP: u32 = 1 << 6;
const MB1_FLAG_LOADER_NAME: u32 = 1 << 9;

/// A NUL-terminated string at `addr`: its bytes up to the NUL (or up to where readable memory
/// ends), at most `max + 1` of them (a longer string is cut by the caller).
fn c_string(mem: &dyn PhysMem, addr: u64, max: usize) -> Option<&[u8]> {
    // Byte by byte, so that a string ending where readable memory ends is still found whole.
    mem.bytes(addr, 1)?;
    let len = (0..=max).find(|&i| mem.bytes(addr + i as u64, 1).is_none_or(|b| b[0] == 0)).unwrap_or(max + 1);
    mem.bytes(addr, len + 1).or_else(|| mem.bytes(addr, len))
}

/// Multiboot 1: a fixed structure whose flags say which fields are valid; the command line and
/// the memory map lie elsewhere, at the addresses it gives.
pub fn parse_multiboot1(info: u64, mem: &dyn PhysMem) -> Result<BootInfo, Fatal> {
    let fixed = mem.bytes(info, MB1_FIXED_LEN).ok_or(Fatal::InfoUnreadable { addr: info })?;
    let field = |at| le32(fixed, at).unwrap_or(0);
    let flags = field(MB1_FLAGS);
    let mut b = BootInfo::new(Protocol::Multiboot1);
    if flags & MB1_FLAG_CMDLINE != 0 {
        let addr = field(MB1_CMDLINE) as u64;
        match c_string(mem, addr, CMDLINE_MAX) {
            Some(s) => b.set_cmdline(s),
            None => b.problem(Problem::Unreadable { what: "command line", addr }),
        }
    }
    if flags & MB1_FLAG_LOADER_NAME != 0 {
        let addr = field(MB1_LOADER_NAME) as u64;
        if let Some(s) = c_string(mem, addr, LOADER_MAX) {
            b.set_loader(s);
        }
    }
    let mut have_map = false;
    if flags & MB1_FLAG_MMAP != 0 {
        let (len, addr) = (field(MB1_MMAP_LENGTH) as usize, field(MB1_MMAP_ADDR) as u64);
        match mem.bytes(addr, len) {
            Some(map) => {
                // Each entry: size (of the rest), base, length, type; the next starts size + 4 on.
                let mut dropped = 0;
                let mut off = 0;
                while off + 24 <= map.len() {
                    let size = le32(map, off).unwrap_or(0) as usize;
                    let r = Region {
                        base: le64(map, off + 4).unwrap_or(0),
                        len: le64(map, off + 12).unwrap_or(0),
                        kind: le32(map, off + 20).unwrap_or(0),
                    };
                    b.push_region(r, &mut dropped);
                    off += size.max(20) + 4;
                }
                have_map = b.region_count > 0;
                if dropped > 0 {
                    b.problem(Problem::RegionsDropped { dropped });
                }
            }
            None => b.problem(Problem::Unreadable { what: "memory map", addr }),
        }
    }
    if !have_map {
        if flags & MB1_FLAG_MEM == 0 {
            return Err(Fatal::NoMemory { protocol: Protocol::Multiboot1 });
        }
        b.problem(Problem::NoMemoryMap);
        b.basic_regions(field(MB1_MEM_LOWER), field(MB1_MEM_UPPER));
    }
    Ok(b)
}

// Multiboot 2 tag types used.
const TAG_END: u32 = 0;
const TAG_CMDLINE: u32 = 1;
const TAG_LOADER_NAME: u32 = 2;
const TAG_BASIC_MEMINFO: u32 = 4;
const TAG_MMAP: u32 = 6;
const TAG_ACPI_OLD: u32 = 14;
const TAG_ACPI_NEW: u32 = 15;

/// Multiboot 2: `info` is the whole information (its first word is its total size), a list of
/// 8-byte-aligned tags (type, size, payload) ended by a tag of type 0.
pub fn parse_multiboot2(info: &[u8]) -> Result<BootInfo, Fatal> {
    let mut b = BootInfo::new(Protocol::Multiboot2);
    let total = (le32(info, 0).unwrap_or(0) as usize).min(info.len());
    let mut meminfo: Option<(u32, u32)> = None;
    let mut map_seen = false;
    let mut acpi_new: Option<&[u8]> = None;
    let mut acpi_old: Option<&[u8]> = None;
    let mut dropped = 0;
    let mut off = 8;
    loop {
        let (Some(kind), Some(size)) = (le32(&info[..total], off), le32(&info[..total], off + 4)) else {
            b.problem(Problem::TruncatedTags { offset: off, total });
            break;
        };
        let size = size as usize;
        if size < 8 || off + size > total {
            b.problem(Problem::TruncatedTags { offset: off, total });
            break;
        }
        let tag = &info[off..off + size];
        let payload = &tag[8..];
        match kind {
            TAG_END => break,
            TAG_CMDLINE => b.set_cmdline(payload),
            TAG_LOADER_NAME => b.set_loader(payload),
            TAG_BASIC_MEMINFO => {
                if let (Some(lo), Some(hi)) = (le32(tag, 8), le32(tag, 12)) {
                    meminfo = Some((lo, hi));
                }
            }
            TAG_MMAP => {
                let entry_size = le32(tag, 8).unwrap_or(0);
                if entry_size < 24 {
                    b.problem(Problem::BadMemoryMap { entry_size });
                } else {
                    map_seen = true;
                    let mut e = 16;
                    while e + 24 <= tag.len() {
                        let r = Region {
                            base: le64(tag, e).unwrap_or(0),
                            len: le64(tag, e + 8).unwrap_or(0),
                            kind: le32(tag, e + 16).unwrap_or(0),
                        };
                        b.push_region(r, &mut dropped);
                        e += entry_size as usize;
                    }
                }
            }
            TAG_ACPI_OLD => {
                b.acpi_tags += 1;
                acpi_old = Some(payload);
            }
            TAG_ACPI_NEW => {
                b.acpi_tags += 1;
                acpi_new = Some(payload);
            }
            _ => {}
        }
        off += size.next_multiple_of(8);
    }
    if dropped > 0 {
        b.problem(Problem::RegionsDropped { dropped });
    }
    if !map_seen || b.region_count == 0 {
        let Some((lo, hi)) = meminfo else {
            return Err(Fatal::NoMemory { protocol: Protocol::Multiboot2 });
        };
        b.problem(Problem::NoMemoryMap);
        b.region_count = 0;
        b.basic_regions(lo, hi);
    }
    // The new RSDP first (its XSDT has 64-bit addresses), then the old.
    for (source, bytes) in [(RsdpSource::Multiboot2New, acpi_new), (RsdpSource::Multiboot2Old, acpi_old)] {
        let Some(bytes) = bytes else { continue };
        match rsdp_from_tag(source, bytes) {
            Ok(r) => {
                b.rsdp = Some(r);
                break;
            }
            Err(fault) => b.problem(Problem::BadRsdp { source, fault }),
        }
    }
    Ok(b)
}

/// Validates an ACPI tag's RSDP and makes the copy the table parser gets. The old tag holds the
/// 20 bytes of the 1.0 structure, even when the firmware's RSDP is a 2.0 one: its revision is
/// then set to 0 (and the checksum adjusted), so the parser uses the RSDT and reads nothing past
/// those 20 bytes.
fn rsdp_from_tag(source: RsdpSource, bytes: &[u8]) -> Result<Rsdp, RsdpFault> {
    let mut copy = [0u8; RSDP_MAX];
    match source {
        RsdpSource::Multiboot2New => {
            let revision = check_rsdp(bytes)?;
            let len = if revision > 0 { le32(bytes, 20).unwrap_or(36) as usize } else { 20 };
            copy[..len].copy_from_slice(&bytes[..len]);
            Ok(Rsdp { bytes: copy, len, source, revision })
        }
        RsdpSource::Multiboot2Old => {
            // Only the 1.0 part is checked: the tag need not hold more.
            check_rsdp_v1(bytes)?;
            let v1 = &bytes[..20];
            copy[..20].copy_from_slice(v1);
            if copy[15] != 0 {
                copy[8] = copy[8].wrapping_add(copy[15]);
                copy[15] = 0;
            }
            Ok(Rsdp { bytes: copy, len: 20, source, revision: 0 })
        }
    }
}

#[cfg(test)]
mod tests;
