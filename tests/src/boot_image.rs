//! The checks of the scenarios that boot the GRUB image (`cargo xtask image`) with SeaBIOS or
//! with OVMF (UEFI): the kernel came in through Multiboot 2, took its RSDP from the ACPI tag the
//! firmware's ACPI revision implies, brought every CPU up and ran the default workload (`demo`).

use crate::boot_checks::{ensure, healthy_boot, selfchecks_ok};
use crate::log::Log;
use crate::scenarios::{CheckResult, Firmware};
use crate::topology::Topology;

/// The kernel booted by QEMU's `-kernel` (the other scenarios): Multiboot 1, memory map and
/// command line from it, no RSDP passed, so ACPI came from the BIOS-area scan.
pub fn booted_by_qemu(log: &Log) -> CheckResult {
    let b = log.one("boot")?;
    for (key, want) in [("protocol", "multiboot1"), ("memory", "mmap"), ("cmdline", "1"), ("rsdp", "none")] {
        ensure(b.get(key) == Some(want), || format!("`{b}`: expected {key}={want}"))?;
    }
    if let Some(p) = log.records("boot_problem").next() {
        return Err(format!("a problem with QEMU's boot information: `{p}`"));
    }
    let acpi = log.one("acpi")?;
    ensure(acpi.get("rsdp_source") == Some("bios_scan"), || format!("`{acpi}`: expected rsdp_source=bios_scan"))
}

/// What the firmware's RSDP makes GRUB pass: QEMU's ACPI tables for SeaBIOS have a revision 0
/// RSDP (GRUB passes only the old tag), OVMF installs a revision 2 one (GRUB passes both tags,
/// and the kernel takes the new). `(acpi_tags, rsdp source)`.
pub fn expected_rsdp(firmware: Firmware) -> (u64, &'static str) {
    match firmware {
        Firmware::SeaBios => (1, "mb2_old"),
        Firmware::Ovmf => (2, "mb2_new"),
    }
}

/// The kernel's `@fw boot` record says Multiboot 2, the memory map and GRUB's command line, the
/// RSDP from the tag `firmware` implies, and no problem with the boot information; ACPI was read
/// from that RSDP.
pub fn booted_by_grub(log: &Log, firmware: Firmware) -> CheckResult {
    let (tags, source) = expected_rsdp(firmware);
    let b = log.one("boot")?;
    for (key, want) in [("protocol", "multiboot2"), ("memory", "mmap"), ("cmdline", "1"), ("rsdp", source)] {
        ensure(b.get(key) == Some(want), || format!("`{b}`: expected {key}={want}"))?;
    }
    ensure(b.num("acpi_tags")? == tags, || format!("`{b}`: expected acpi_tags={tags}"))?;
    if let Some(p) = log.records("boot_problem").next() {
        return Err(format!("a problem with GRUB's boot information: `{p}`"));
    }
    let acpi = log.one("acpi")?;
    ensure(acpi.get("rsdp_source") == Some(source), || format!("`{acpi}`: expected rsdp_source={source}"))
}

/// The default workload ran to its end on every CPU: `demo` on `cpus` CPUs, each CPU's line of
/// its three hogs, the pipe pair's 2000 rounds, success.
pub fn demo_ran(log: &Log, cpus: u32) -> CheckResult {
    let w = log.one("workload")?;
    ensure(w.get("name") == Some("demo") && w.num("cpus")? == cpus as u64, || {
        format!("`{w}`: expected name=demo cpus={cpus}")
    })?;
    for c in 0..cpus {
        let prefix = format!("CPU {c}:");
        let line = log.lines_starting_with(&prefix).next().ok_or_else(|| format!("no `{prefix}` line of the demo's hogs"))?;
        for hog in ["hog-5 ", "hog0 ", "hog+5 "] {
            ensure(line.contains(hog), || format!("`{line}`: no {hog}"))?;
        }
    }
    let p = log.one("pipe")?;
    ensure(p.get("mode") == Some("same") && p.num("rounds")? == 2000, || format!("`{p}`: expected mode=same rounds=2000"))?;
    let done = log.one("workload_done")?;
    ensure(done.get("name") == Some("demo") && done.get("ok") == Some("1"), || format!("`{done}`: expected name=demo ok=1"))
}

/// The whole check of an image boot at `smp` with `firmware`.
pub fn image_boot(log: &Log, smp: &str, firmware: Firmware) -> CheckResult {
    healthy_boot(log, smp, 0)?;
    booted_by_grub(log, firmware)?;
    demo_ran(log, Topology::from_smp(smp, 0)?.cpus())
}

pub(crate) fn check_image_bios_smp4(log: &Log) -> CheckResult {
    image_boot(log, "4", Firmware::SeaBios)
}

pub(crate) fn check_image_bios_2s2c2t(log: &Log) -> CheckResult {
    image_boot(log, "8,sockets=2,cores=2,threads=2", Firmware::SeaBios)
}

pub(crate) fn check_image_uefi_smp4(log: &Log) -> CheckResult {
    image_boot(log, "4", Firmware::Ovmf)
}

pub(crate) fn check_image_uefi_2s2c2t(log: &Log) -> CheckResult {
    image_boot(log, "8,sockets=2,cores=2,threads=2", Firmware::Ovmf)
}

/// No ACPI at all (`-machine acpi=off`): GRUB finds no RSDP and passes no tag; the kernel says
/// so, its BIOS-area scan finds none either, and it runs the demo on the boot CPU alone.
pub(crate) fn check_image_bios_no_acpi(log: &Log) -> CheckResult {
    let b = log.one("boot")?;
    ensure(
        b.get("protocol") == Some("multiboot2") && b.get("rsdp") == Some("none") && b.num("acpi_tags")? == 0,
        || format!("`{b}`: expected protocol=multiboot2 rsdp=none acpi_tags=0"),
    )?;
    let acpi = log.one("acpi")?;
    ensure(acpi.get("none") == Some("1"), || format!("`{acpi}`: expected none=1"))?;
    crate::boot_checks::cpus_online(log, 1)?;
    selfchecks_ok(log)?;
    demo_ran(log, 1)
}

/// Why the image boots through Multiboot 2: under UEFI, GRUB's `multiboot` (Multiboot 1) passes
/// no RSDP and none lies in the BIOS areas, so the kernel finds no ACPI tables and, of the 4 CPUs
/// QEMU has, brings up the boot CPU alone (then runs the demo on it).
pub(crate) fn check_image_uefi_multiboot1(log: &Log) -> CheckResult {
    let b = log.one("boot")?;
    ensure(
        b.get("protocol") == Some("multiboot1") && b.get("rsdp") == Some("none") && b.num("acpi_tags")? == 0,
        || format!("`{b}`: expected protocol=multiboot1 rsdp=none acpi_tags=0"),
    )?;
    let acpi = log.one("acpi")?;
    ensure(acpi.get("none") == Some("1"), || format!("`{acpi}`: expected none=1 (no RSDP in the BIOS areas under UEFI)"))?;
    crate::boot_checks::cpus_online(log, 1)?;
    selfchecks_ok(log)?;
    demo_ran(log, 1)
}
