//! Host tests: boot information built byte by byte as the loaders lay it out.

use alloc::vec;
use alloc::vec::Vec;

use super::*;

/// Physical memory as a few segments at fixed addresses.
struct Mem(Vec<(u64, Vec<u8>)>);

impl PhysMem for Mem {
    fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]> {
        self.0.iter().find_map(|(base, data)| {
            let off = addr.checked_sub(*base)? as usize;
            data.get(off..off.checked_add(len)?)
        })
    }
}

/// A Multiboot 2 information structure, tag by tag.
struct Mb2(Vec<u8>);

impl Mb2 {
    fn new() -> Self {
        Mb2(vec![0; 8])
    }
    fn tag(mut self, kind: u32, payload: &[u8]) -> Self {
        self.0.extend_from_slice(&kind.to_le_bytes());
        self.0.extend_from_slice(&(8 + payload.len() as u32).to_le_bytes());
        self.0.extend_from_slice(payload);
        while !self.0.len().is_multiple_of(8) {
            self.0.push(0);
        }
        self
    }
    fn mmap(self, regions: &[(u64, u64, u32)]) -> Self {
        let mut p = Vec::new();
        p.extend_from_slice(&24u32.to_le_bytes());
        p.extend_from_slice(&0u32.to_le_bytes());
        for &(base, len, kind) in regions {
            p.extend_from_slice(&base.to_le_bytes());
            p.extend_from_slice(&len.to_le_bytes());
            p.extend_from_slice(&kind.to_le_bytes());
            p.extend_from_slice(&0u32.to_le_bytes());
        }
        self.tag(TAG_MMAP, &p)
    }
    fn string(self, kind: u32, s: &str) -> Self {
        let mut p = s.as_bytes().to_vec();
        p.push(0);
        self.tag(kind, &p)
    }
    /// Ends the list and sets the total size.
    fn end(self) -> Vec<u8> {
        let mut v = self.tag(TAG_END, &[]).0;
        let n = v.len() as u32;
        v[..4].copy_from_slice(&n.to_le_bytes());
        v
    }
}

/// An RSDP of `revision` (20 bytes for 0, 36 otherwise) with correct checksums.
fn rsdp(revision: u8, rsdt: u32, xsdt: u64) -> Vec<u8> {
    let mut r = b"RSD PTR ".to_vec();
    r.push(0);
    r.extend_from_slice(b"FWTEST");
    r.push(revision);
    r.extend_from_slice(&rsdt.to_le_bytes());
    if revision > 0 {
        r.extend_from_slice(&36u32.to_le_bytes());
        r.extend_from_slice(&xsdt.to_le_bytes());
        r.extend_from_slice(&[0; 4]);
    }
    r[8] = 0u8.wrapping_sub(sum(&r[..20]));
    if revision > 0 {
        r[32] = 0u8.wrapping_sub(sum(&r[..36]));
    }
    r
}

const RAM: &[(u64, u64, u32)] = &[(0, 0x9fc00, 1), (0x9fc00, 0x400, 2), (0x100000, 0x1fee0000, 1), (0xfffc0000, 0x40000, 2)];

#[test]
fn multiboot2_from_grub_takes_map_cmdline_and_the_new_rsdp() {
    let info = Mb2::new()
        .string(TAG_CMDLINE, "workload=demo hz=250")
        .string(TAG_LOADER_NAME, "GRUB 2.06-13+deb12u2")
        .tag(TAG_BASIC_MEMINFO, &[0x7f, 2, 0, 0, 0x80, 0xfb, 7, 0])
        .mmap(RAM)
        .tag(TAG_ACPI_OLD, &rsdp(0, 0x1fee1234, 0))
        .tag(TAG_ACPI_NEW, &rsdp(2, 0x1fee1234, 0x1fee5678))
        .end();
    let b = parse_multiboot2(&info).unwrap();
    assert_eq!(b.protocol, Protocol::Multiboot2);
    assert_eq!(b.memory_source, MemorySource::MemoryMap);
    assert_eq!(b.regions().len(), 4);
    assert_eq!(b.regions()[2], Region { base: 0x100000, len: 0x1fee0000, kind: USABLE });
    assert_eq!(b.cmdline(), "workload=demo hz=250");
    assert_eq!(b.loader_name(), "GRUB 2.06-13+deb12u2");
    let r = b.rsdp.unwrap();
    assert_eq!((r.source, r.revision), (RsdpSource::Multiboot2New, 2));
    assert_eq!(r.bytes(), &rsdp(2, 0x1fee1234, 0x1fee5678)[..]);
    assert_eq!(b.acpi_tags, 2);
    assert_eq!(b.problems().count(), 0);
}

#[test]
fn through_parse_and_physical_memory() {
    let info = Mb2::new().string(TAG_CMDLINE, "a=1").mmap(RAM).end();
    let mem = Mem(vec![(0x10000, info)]);
    let b = parse(MULTIBOOT2_MAGIC, 0x10000, &mem).unwrap();
    assert_eq!((b.protocol, b.regions().len(), b.cmdline().as_str()), (Protocol::Multiboot2, 4, "a=1"));
    assert_eq!(parse(MULTIBOOT2_MAGIC, 0x20000, &mem).unwrap_err(), Fatal::InfoUnreadable { addr: 0x20000 });
    assert_eq!(parse(0x1234, 0x10000, &mem).unwrap_err(), Fatal::NotMultiboot { magic: 0x1234 });
}

#[test]
fn only_the_old_rsdp_gives_a_revision_0_copy() {
    // GRUB puts the 20 bytes of a 2.0 RSDP into the old tag when the firmware's is 2.0.
    let v2 = rsdp(2, 0xabc0, 0xdef0);
    let info = Mb2::new().mmap(RAM).tag(TAG_ACPI_OLD, &v2[..20]).end();
    let b = parse_multiboot2(&info).unwrap();
    let r = b.rsdp.unwrap();
    assert_eq!((r.source, r.revision), (RsdpSource::Multiboot2Old, 0));
    assert_eq!(r.bytes().len(), 36);
    assert_eq!(check_rsdp(r.bytes()), Ok(0), "the copy passes a full check as a 1.0 RSDP");
    assert_eq!(&r.bytes()[16..20], &0xabc0u32.to_le_bytes(), "RSDT address kept");
    assert!(r.bytes()[20..].iter().all(|&x| x == 0));
}

#[test]
fn a_bad_new_rsdp_falls_back_to_the_old_one_and_says_so() {
    let mut bad = rsdp(2, 0x1000, 0x2000);
    bad[30] ^= 0xff; // inside the XSDT address: only the extended checksum fails
    let info = Mb2::new().mmap(RAM).tag(TAG_ACPI_NEW, &bad).tag(TAG_ACPI_OLD, &rsdp(0, 0x1000, 0)).end();
    let b = parse_multiboot2(&info).unwrap();
    assert_eq!(b.rsdp.unwrap().source, RsdpSource::Multiboot2Old);
    let p: Vec<_> = b.problems().copied().collect();
    assert_eq!(p, [Problem::BadRsdp { source: RsdpSource::Multiboot2New, fault: RsdpFault::ExtendedChecksum }]);
    assert!(alloc::format!("{}", p[0]).contains("new (ACPI 2.0+) RSDP tag is invalid (bad extended checksum)"));
}

#[test]
fn bad_checksums_in_both_tags_leave_no_rsdp_for_the_bios_scan() {
    let mut old = rsdp(0, 0x1000, 0);
    old[9] ^= 1; // OEM id: the 1.0 checksum fails
    let mut new = rsdp(2, 0x1000, 0x2000);
    new[0] = b'X';
    let info = Mb2::new().mmap(RAM).tag(TAG_ACPI_NEW, &new).tag(TAG_ACPI_OLD, &old).end();
    let b = parse_multiboot2(&info).unwrap();
    assert_eq!(b.rsdp, None);
    assert_eq!(b.acpi_tags, 2);
    let p: Vec<_> = b.problems().copied().collect();
    assert_eq!(
        p,
        [
            Problem::BadRsdp { source: RsdpSource::Multiboot2New, fault: RsdpFault::Signature },
            Problem::BadRsdp { source: RsdpSource::Multiboot2Old, fault: RsdpFault::Checksum },
        ]
    );
}

#[test]
fn no_acpi_tag_at_all_is_no_problem_and_no_rsdp() {
    let b = parse_multiboot2(&Mb2::new().mmap(RAM).end()).unwrap();
    assert_eq!((b.rsdp, b.acpi_tags, b.problems().count()), (None, 0, 0));
}

#[test]
fn rsdp_checks() {
    assert_eq!(check_rsdp(&rsdp(0, 1, 0)), Ok(0));
    assert_eq!(check_rsdp(&rsdp(2, 1, 2)), Ok(2));
    assert_eq!(check_rsdp(&rsdp(2, 1, 2)[..30]), Err(RsdpFault::Short { len: 30 }));
    assert_eq!(check_rsdp(&[0; 10]), Err(RsdpFault::Short { len: 10 }));
    let mut r = rsdp(2, 1, 2);
    r[20] = 20; // length field below 36 (checksums made right again)
    r[8] = 0;
    r[8] = 0u8.wrapping_sub(sum(&r[..20]));
    assert_eq!(check_rsdp(&r), Err(RsdpFault::Length { field: 20 }));
    // a short new tag is rejected, never read past its end
    let info = Mb2::new().mmap(RAM).tag(TAG_ACPI_NEW, &rsdp(2, 1, 2)[..24]).end();
    let b = parse_multiboot2(&info).unwrap();
    assert_eq!(b.rsdp, None);
    assert_eq!(b.problems().next(), Some(&Problem::BadRsdp { source: RsdpSource::Multiboot2New, fault: RsdpFault::Short { len: 24 } }));
}

#[test]
fn a_truncated_tag_list_keeps_the_tags_before_the_cut() {
    let full = Mb2::new().string(TAG_CMDLINE, "x=1").mmap(RAM).tag(TAG_ACPI_OLD, &rsdp(0, 5, 0)).end();
    // The total size says less than the tags need: the ACPI tag (at 136: 8 of header, 16 of
    // command line, 112 of map) runs past 140.
    let mut cut = full.clone();
    cut[..4].copy_from_slice(&140u32.to_le_bytes());
    let b = parse_multiboot2(&cut).unwrap();
    assert_eq!(b.cmdline(), "x=1");
    assert_eq!(b.regions().len(), 4);
    assert_eq!(b.rsdp, None);
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::TruncatedTags { offset: 136, total: 140 }]);
    // No end tag: the list runs out.
    let no_end = &full[..full.len() - 8];
    let mut no_end = no_end.to_vec();
    let n = no_end.len() as u32;
    no_end[..4].copy_from_slice(&n.to_le_bytes());
    let b = parse_multiboot2(&no_end).unwrap();
    assert!(b.rsdp.is_some());
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::TruncatedTags { offset: n as usize, total: n as usize }]);
    // A tag claiming fewer than 8 bytes would loop forever: it ends the list.
    let mut zero = full.clone();
    zero[12..16].copy_from_slice(&0u32.to_le_bytes());
    let e = parse_multiboot2(&zero).unwrap_err();
    assert_eq!(e, Fatal::NoMemory { protocol: Protocol::Multiboot2 }, "the map came after the cut");
    // A total size below the header: nothing but the complaint.
    assert_eq!(parse_multiboot2(&[4, 0, 0, 0]).unwrap_err(), Fatal::NoMemory { protocol: Protocol::Multiboot2 });
}

#[test]
fn an_oversized_total_is_read_only_up_to_the_cap() {
    let mut info = Mb2::new().mmap(RAM).end();
    info[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    info.resize(MB2_INFO_MAX, 0);
    let mem = Mem(vec![(0x5000, info)]);
    let b = parse(MULTIBOOT2_MAGIC, 0x5000, &mem).unwrap();
    assert_eq!(b.regions().len(), 4);
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::InfoTooLong { claimed: u32::MAX }]);
}

#[test]
fn no_memory_map_falls_back_to_the_basic_sizes_or_stops() {
    let info = Mb2::new().tag(TAG_BASIC_MEMINFO, &[0x7f, 2, 0, 0, 0x00, 0xfc, 7, 0]).end();
    let b = parse_multiboot2(&info).unwrap();
    assert_eq!(b.memory_source, MemorySource::BasicMeminfo);
    assert_eq!(
        b.regions(),
        [
            Region { base: 0, len: 639 * 1024, kind: USABLE },
            Region { base: 0x100000, len: 0x7fc00 * 1024, kind: USABLE },
        ]
    );
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::NoMemoryMap]);
    assert_eq!(parse_multiboot2(&Mb2::new().string(TAG_CMDLINE, "a").end()).unwrap_err(), Fatal::NoMemory { protocol: Protocol::Multiboot2 });
    // A map with entries too short to hold a region is ignored, then the sizes are used.
    let mut bad = Mb2::new().mmap(RAM).tag(TAG_BASIC_MEMINFO, &[1, 0, 0, 0, 2, 0, 0, 0]).end();
    bad[16..20].copy_from_slice(&16u32.to_le_bytes());
    let b = parse_multiboot2(&bad).unwrap();
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::BadMemoryMap { entry_size: 16 }, Problem::NoMemoryMap]);
    assert_eq!(b.regions()[1], Region { base: 0x100000, len: 2048, kind: USABLE });
}

#[test]
fn too_many_regions_are_counted() {
    let many: Vec<(u64, u64, u32)> = (0..MAX_REGIONS as u64 + 7).map(|i| (i << 20, 1 << 20, 1)).collect();
    let b = parse_multiboot2(&Mb2::new().mmap(&many).end()).unwrap();
    assert_eq!(b.regions().len(), MAX_REGIONS);
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::RegionsDropped { dropped: 7 }]);
}

#[test]
fn a_long_command_line_is_cut_and_reported() {
    let long = "x".repeat(CMDLINE_MAX + 10);
    let b = parse_multiboot2(&Mb2::new().string(TAG_CMDLINE, &long).mmap(RAM).end()).unwrap();
    assert_eq!(b.cmdline().len(), CMDLINE_MAX);
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::CmdlineCut]);
}

/// A Multiboot 1 information structure at 0x9000, its command line at 0xa000 and map at 0xb000,
/// as QEMU's `-kernel` lays them out.
fn mb1(flags: u32, cmdline: &str, map: &[(u64, u64, u32)]) -> Mem {
    let mut info = vec![0u8; MB1_FIXED_LEN];
    let mut put = |at: usize, v: u32| info[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(MB1_FLAGS, flags);
    put(MB1_MEM_LOWER, 639);
    put(MB1_MEM_UPPER, 523_264);
    put(MB1_CMDLINE, 0xa000);
    let mut m = Vec::new();
    for &(base, len, kind) in map {
        m.extend_from_slice(&20u32.to_le_bytes());
        m.extend_from_slice(&base.to_le_bytes());
        m.extend_from_slice(&len.to_le_bytes());
        m.extend_from_slice(&kind.to_le_bytes());
    }
    put(MB1_MMAP_LENGTH, m.len() as u32);
    put(MB1_MMAP_ADDR, 0xb000);
    put(MB1_LOADER_NAME, 0xc000);
    let mut c = cmdline.as_bytes().to_vec();
    c.push(0);
    Mem(vec![(0x9000, info), (0xa000, c), (0xb000, m), (0xc000, b"qemu\0".to_vec())])
}

#[test]
fn multiboot1_as_qemu_passes_it() {
    let mem = mb1(MB1_FLAG_MEM | MB1_FLAG_CMDLINE | MB1_FLAG_MMAP | MB1_FLAG_LOADER_NAME, "./fairway-kernel  workload=pipe  hz=100", RAM);
    let b = parse(MULTIBOOT1_MAGIC, 0x9000, &mem).unwrap();
    assert_eq!((b.protocol, b.memory_source), (Protocol::Multiboot1, MemorySource::MemoryMap));
    assert_eq!(b.regions(), RAM.iter().map(|&(base, len, kind)| Region { base, len, kind }).collect::<Vec<_>>());
    assert_eq!(b.cmdline(), "workload=pipe hz=100", "the kernel path is dropped");
    assert_eq!(b.loader_name(), "qemu");
    assert_eq!((b.rsdp, b.problems().count()), (None, 0));
}

/// `cargo xtask test --boot-shift 3` boots `.////fairway-kernel`: the same command line.
#[test]
fn a_padded_kernel_path_is_dropped_too() {
    let mem = mb1(MB1_FLAG_MEM | MB1_FLAG_CMDLINE | MB1_FLAG_MMAP, ".////fairway-kernel workload=pipe", RAM);
    assert_eq!(parse(MULTIBOOT1_MAGIC, 0x9000, &mem).unwrap().cmdline(), "workload=pipe");
}

#[test]
fn multiboot1_without_a_map_uses_the_sizes_or_stops() {
    let b = parse(MULTIBOOT1_MAGIC, 0x9000, &mb1(MB1_FLAG_MEM, "", RAM)).unwrap();
    assert_eq!(b.memory_source, MemorySource::BasicMeminfo);
    assert_eq!(b.regions()[1], Region { base: 0x100000, len: 523_264 * 1024, kind: USABLE });
    assert!(!b.has_cmdline);
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::NoMemoryMap]);
    assert_eq!(parse(MULTIBOOT1_MAGIC, 0x9000, &mb1(0, "", RAM)).unwrap_err(), Fatal::NoMemory { protocol: Protocol::Multiboot1 });
    // a map pointer into nothing
    let mut mem = mb1(MB1_FLAG_MEM | MB1_FLAG_MMAP, "", RAM);
    mem.0.retain(|(base, _)| *base != 0xb000);
    let b = parse(MULTIBOOT1_MAGIC, 0x9000, &mem).unwrap();
    assert_eq!(
        b.problems().copied().collect::<Vec<_>>(),
        [Problem::Unreadable { what: "memory map", addr: 0xb000 }, Problem::NoMemoryMap]
    );
}

#[test]
fn a_command_line_at_the_end_of_memory_is_read_up_to_there() {
    let mut mem = mb1(MB1_FLAG_CMDLINE | MB1_FLAG_MMAP, "", RAM);
    mem.0.retain(|(base, _)| *base != 0xa000);
    mem.0.push((0xa000, b"hz=100\0".to_vec()));
    let b = parse(MULTIBOOT1_MAGIC, 0x9000, &mem).unwrap();
    assert_eq!(b.cmdline(), "hz=100");
}

#[test]
fn multiboot1_long_or_unreadable_command_lines() {
    let long = "y".repeat(CMDLINE_MAX + 1);
    let b = parse(MULTIBOOT1_MAGIC, 0x9000, &mb1(MB1_FLAG_CMDLINE | MB1_FLAG_MMAP, &long, RAM)).unwrap();
    assert_eq!(b.cmdline().len(), CMDLINE_MAX);
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::CmdlineCut]);
    let mut mem = mb1(MB1_FLAG_CMDLINE | MB1_FLAG_MMAP, "", RAM);
    mem.0.retain(|(base, _)| *base != 0xa000);
    let b = parse(MULTIBOOT1_MAGIC, 0x9000, &mem).unwrap();
    assert_eq!(b.problems().copied().collect::<Vec<_>>(), [Problem::Unreadable { what: "command line", addr: 0xa000 }]);
}
