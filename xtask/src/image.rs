//! `cargo xtask image`: a bootable hybrid ISO (GRUB for BIOS and for UEFI, made by
//! `grub-mkrescue`) holding the kernel and a GRUB menu; it boots from a CD/DVD, a USB stick it
//! is written to, or QEMU's `-cdrom` (with SeaBIOS, or with OVMF as `-bios`).
//!
//! The menu's entries are the kernel under `multiboot2` (the protocol that passes the ACPI RSDP,
//! which a UEFI machine keeps nowhere else the kernel could find it) with the default command
//! line and a few common variants, and one under `multiboot` (Multiboot 1, the BIOS-area RSDP
//! scan). GRUB talks on the first serial port as well as the screen.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{cargo, install};

/// The kernel's path inside the image.
pub const KERNEL_IN_IMAGE: &str = "/boot/fairway-kernel";
/// Seconds the menu waits before booting the default entry.
pub const DEFAULT_TIMEOUT: u32 = 3;

/// One GRUB menu entry: its title, whether it uses Multiboot 1, and the kernel command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub title: &'static str,
    pub multiboot1: bool,
    pub cmdline: &'static str,
}

/// The menu, the default first. The default's command line is empty: the kernel's defaults
/// (the `demo` workload), as `cargo xtask run` boots it.
pub const ENTRIES: &[Entry] = &[
    Entry { title: "fairway (default command line: the demo workload)", multiboot1: false, cmdline: "" },
    Entry { title: "fairway: pipe ping-pong across two CPUs", multiboot1: false, cmdline: "workload=pipe,mode=cross" },
    Entry { title: "fairway: hackbench", multiboot1: false, cmdline: "workload=hackbench" },
    Entry { title: "fairway: tick at 250 Hz, never stopped", multiboot1: false, cmdline: "hz=250 nohz=off" },
    Entry { title: "fairway: scheduler invariant checks, debug log", multiboot1: false, cmdline: "sched_debug=1 log=debug" },
    Entry { title: "fairway: list the workloads and their parameters", multiboot1: false, cmdline: "workload=help" },
    Entry { title: "fairway via Multiboot 1 (RSDP from the BIOS-area scan; none on UEFI)", multiboot1: true, cmdline: "" },
];

/// The menu entry that boots through Multiboot 1.
pub fn multiboot1_entry() -> usize {
    ENTRIES.iter().position(|e| e.multiboot1).expect("the menu has a Multiboot 1 entry")
}

/// The image's `grub.cfg`, booting entry `default` when the menu times out.
pub fn grub_cfg(timeout: u32, default: usize) -> String {
    let mut s = String::from(
        "# fairway's boot menu (written by `cargo xtask image`).\n\
         # GRUB on the first serial port (115200 8N1) as well as the screen; where there is no\n\
         # serial port, `serial` fails and the screen alone is used.\n\
         serial --unit=0 --speed=115200 --word=8 --parity=no --stop=1\n\
         terminal_input serial console\n\
         terminal_output serial console\n",
    );
    s.push_str(&format!("set timeout={timeout}\nset default={default}\n"));
    for e in ENTRIES {
        let command = if e.multiboot1 { "multiboot" } else { "multiboot2" };
        let line = if e.cmdline.is_empty() {
            format!("{command} {KERNEL_IN_IMAGE}")
        } else {
            format!("{command} {KERNEL_IN_IMAGE} {}", e.cmdline)
        };
        s.push_str(&format!("\nmenuentry \"{}\" {{\n    {line}\n    boot\n}}\n", e.title));
    }
    s
}

/// Where `cargo xtask image` writes the ISO and its staging tree.
pub fn image_dir() -> PathBuf {
    cargo::target_dir().join("image")
}

pub fn default_iso() -> PathBuf {
    image_dir().join("fairway.iso")
}

/// The `grub-mkrescue` command that makes `iso` from the tree at `root`.
pub fn mkrescue_command(root: &Path, iso: &Path) -> Command {
    let mut c = Command::new("grub-mkrescue");
    c.arg("-o").arg(iso).arg(root);
    c
}

/// Builds the ISO at `iso` around the kernel ELF `elf`, its menu booting entry `default` after
/// `timeout` seconds, installing the tools first where the harness can (see
/// `install::ensure_image_tools`).
pub fn build_iso(elf: &Path, iso: &Path, timeout: u32, default: usize) -> Result<(), String> {
    install::ensure_image_tools(false)?;
    let root = iso.with_extension("root");
    let _ = std::fs::remove_dir_all(&root);
    let grub = root.join("boot/grub");
    std::fs::create_dir_all(&grub).map_err(|e| format!("xtask: creating {}: {e}", grub.display()))?;
    let kernel = root.join(KERNEL_IN_IMAGE.trim_start_matches('/'));
    std::fs::copy(elf, &kernel).map_err(|e| format!("xtask: copying the kernel to {}: {e}", kernel.display()))?;
    std::fs::write(grub.join("grub.cfg"), grub_cfg(timeout, default)).map_err(|e| format!("xtask: writing grub.cfg: {e}"))?;
    let out = mkrescue_command(&root, iso)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("xtask: grub-mkrescue: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "xtask: grub-mkrescue failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// `cargo xtask image`: builds the kernel and the ISO; prints the ISO's path.
pub fn image(out: Option<PathBuf>, timeout: u32) -> Result<(), String> {
    let elf = cargo::build_kernel()?;
    let iso = out.unwrap_or_else(default_iso);
    if let Some(dir) = iso.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("xtask: creating {}: {e}", dir.display()))?;
    }
    build_iso(&elf, &iso, timeout, 0)?;
    println!("{}", iso.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_menu_boots_the_default_command_line_first_under_multiboot2() {
        let cfg = grub_cfg(3, 0);
        assert!(cfg.contains("set timeout=3\nset default=0\n"), "{cfg}");
        assert!(cfg.contains("serial --unit=0 --speed=115200"), "{cfg}");
        assert!(cfg.contains("terminal_output serial console\n"), "{cfg}");
        let first = cfg.find("menuentry").unwrap();
        assert!(
            cfg[first..].starts_with(
                "menuentry \"fairway (default command line: the demo workload)\" {\n    multiboot2 /boot/fairway-kernel\n    boot\n}\n"
            ),
            "{cfg}"
        );
        assert_eq!(cfg.matches("menuentry ").count(), ENTRIES.len());
        assert_eq!(cfg.matches("    multiboot /boot/fairway-kernel\n").count(), 1, "one Multiboot 1 entry");
        assert!(cfg.contains("    multiboot2 /boot/fairway-kernel workload=pipe,mode=cross\n"));
        assert_eq!(ENTRIES[multiboot1_entry()].cmdline, "", "the Multiboot 1 entry has the default command line");
        assert!(grub_cfg(0, multiboot1_entry()).contains(&format!("set timeout=0\nset default={}\n", multiboot1_entry())));
    }

    /// Every entry's command line is one the kernel accepts without a complaint: the options and
    /// workloads named are in docs/OPTIONS.md's tables (the kernel rejects anything else, `cmdline:`).
    #[test]
    fn the_entries_name_documented_options() {
        let readme = std::fs::read_to_string(crate::workspace_root().join("docs/OPTIONS.md")).unwrap();
        for e in ENTRIES {
            for word in e.cmdline.split_whitespace() {
                let (key, value) = word.split_once('=').unwrap();
                assert!(readme.contains(&format!("| `{key}=` |")), "{key}= is not in docs/OPTIONS.md's option table");
                if key == "workload" {
                    let name = value.split(',').next().unwrap();
                    assert!(readme.contains(&format!("| `{name}` |")), "workload {name} is not in docs/OPTIONS.md's table");
                }
            }
            assert!(!e.title.contains('"'), "a title may not contain a quote: {}", e.title);
        }
    }

    #[test]
    fn mkrescue_gets_the_tree_and_the_output() {
        let c = mkrescue_command(Path::new("/t/root"), Path::new("/t/f.iso"));
        let args: Vec<_> = c.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(c.get_program(), "grub-mkrescue");
        assert_eq!(args, ["-o", "/t/f.iso", "/t/root"]);
    }
}
