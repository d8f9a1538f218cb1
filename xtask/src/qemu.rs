//! A typed builder of QEMU command lines, shared by `run` and `test`.
//!
//! QEMU runs in the kernel's directory and is given the kernel as `./fairway-kernel`: its
//! multiboot loader puts the kernel's path in front of the command line the kernel reads, and
//! the length of that line shifts where the guest's ticks fall (the kernel scans it at boot), so
//! under `-icount` a checkout at another path would measure other figures from the same
//! kernel. The pipe's round trip moved by 18 instructions between two paths of the same ELF.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `-icount` for `--icount`: one guest instruction is one nanosecond (`shift=0`), and when every
/// vCPU halts the clock jumps to the next timer instead of waiting for the host (`sleep=off`).
pub const ICOUNT: &str = "shift=0,sleep=off";

/// `-icount` for `--icount` at one CPU: [`ICOUNT`] under record mode, whose log nobody reads.
/// The jump of the clock when every vCPU halts is decided by QEMU's main-loop thread
/// (`main_loop_wait()` -> `icount_start_warp_timer()`), which reads the instruction count the
/// vCPU thread last published; between the vCPU's `hlt` and its return from `cpu_exec()` the
/// instructions of that last slice are not yet counted, so a main loop that looks just then
/// jumps that many nanoseconds past the timer, and the guest sees a later time (measured:
/// `storm,threads=2,ms=1000` at `-smp 1`, 4 boots at once on a loaded host, 2 differed from the
/// others by 1 ns and 931 ns of a task's `sum_exec_runtime`, and by a context switch). Record
/// mode takes its replay mutex around the vCPU's execution and around the main loop's work, so
/// the main loop can no longer look inside a slice. QEMU 10 refuses record mode with more than
/// one CPU; there the race stays (docs/BENCHMARKS.md, "What is deterministic").
pub const ICOUNT_ONE_CPU: &str = "shift=0,sleep=off,rr=record,rrfile=/dev/null";

/// What `--icount` adds to the kernel's command line at 2 and more CPUs, where record mode is
/// refused: idle CPUs halt except the last one, which polls until an interrupt, so QEMU never
/// sees every vCPU halted and its main loop never moves the clock (`kernel/src/arch/wait.rs`;
/// docs/BENCHMARKS.md, "What is deterministic"). A command line that names `idle=` keeps its own.
pub const ICOUNT_IDLE: &str = "idle=last_polls";

/// Whether the kernel at `elf` takes `idle=last_polls` (its parser's message names the value);
/// a kernel that cannot be read is taken to (the one being built).
fn knows_last_polls(elf: &Path) -> bool {
    std::fs::read(elf).map_or(true, |b| b.windows(b"last_polls".len()).any(|w| w == b"last_polls"))
}

/// The most CPUs QEMU's default x86 machine (`pc`, i440fx) takes: "Invalid SMP CPUs 256. The
/// max CPUs supported by machine 'pc-i440fx-10.0' is 255". Above it the harness asks for `q35`,
/// which takes 4,096 (APIC IDs above 255 need x2APIC, so `-cpu max`: QEMU refuses `qemu64` with
/// "APIC ID 255 requires x2APIC feature in CPU").
pub const PC_MAX_CPUS: u32 = 255;

/// Everything that decides how the kernel is booted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QemuConfig {
    pub qemu: PathBuf,
    pub kernel: PathBuf,
    /// `-smp` value, e.g. `8` or `8,sockets=2,cores=2,threads=2`.
    pub smp: String,
    pub cpu: String,
    pub memory_mib: u32,
    pub append: String,
    /// Deterministic instruction-counted time and a fixed RTC.
    pub icount: bool,
    /// With `icount` at 2+ CPUs, add [`ICOUNT_IDLE`] to `append` unless it names `idle=`
    /// (on by default; the scenarios say what they boot, so theirs is off).
    pub icount_idle: bool,
    /// NUMA nodes splitting CPUs and memory evenly; 0 or 1 = none.
    pub numa_nodes: u32,
    /// Boot without ACPI tables. (QEMU 10 dropped `-no-acpi`; `-machine acpi=off` replaces it.)
    pub no_acpi: bool,
    /// Boot this GRUB image (`-cdrom`) instead of the kernel through QEMU's own Multiboot 1
    /// loader (`-kernel`); its command line then comes from the image's `grub.cfg`, so
    /// `append` must be empty. A path in the kernel's directory is given as `./NAME`.
    pub cdrom: Option<PathBuf>,
    /// Firmware instead of SeaBIOS (`-bios`): OVMF for a UEFI boot.
    pub bios: Option<PathBuf>,
    /// Appended verbatim after everything else.
    pub extra: Vec<String>,
    /// TCG runs every vCPU in one host thread, in turn (`-accel tcg,thread=single`), instead of
    /// one thread per vCPU: the boot takes one host core whatever its `-smp`.
    pub tcg_single_thread: bool,
    /// Slashes added to the kernel's path as `-kernel` gets it (`.///fairway-kernel` for 2):
    /// the same file, but a command line that many bytes longer, which the boot scans, so the
    /// workload starts at another phase of the guest's tick (`cargo xtask test --boot-shift`,
    /// which looks for checks that hold at one layout only). 0 for every figure and scenario.
    pub path_pad: u32,
}

impl QemuConfig {
    /// The defaults of `cargo xtask run`: `-cpu max -smp 4 -m 512`.
    pub fn new(qemu: PathBuf, kernel: PathBuf) -> Self {
        QemuConfig {
            qemu,
            kernel,
            smp: "4".into(),
            cpu: "max".into(),
            memory_mib: 512,
            append: String::new(),
            icount: false,
            icount_idle: true,
            numa_nodes: 0,
            no_acpi: false,
            cdrom: None,
            bios: None,
            extra: Vec::new(),
            tcg_single_thread: false,
            path_pad: 0,
        }
    }

    /// The argument list (without the program).
    pub fn args(&self) -> Result<Vec<String>, String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        push(&[
            "-accel",
            if self.tcg_single_thread { "tcg,thread=single" } else { "tcg" },
            "-cpu",
            &self.cpu,
            "-smp",
            &self.smp,
            "-m",
            &self.memory_mib.to_string(),
        ]);
        if smp_cpus(&self.smp)? > PC_MAX_CPUS {
            push(&["-machine", "q35"]);
        }
        push(&[
            "-nodefaults",
            "-display",
            "none",
            "-no-reboot",
            "-serial",
            "stdio",
        ]);
        push(&["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]);
        if self.no_acpi {
            push(&["-machine", "acpi=off"]);
        }
        if self.icount {
            let icount = if smp_cpus(&self.smp)? == 1 {
                ICOUNT_ONE_CPU
            } else {
                ICOUNT
            };
            push(&["-icount", icount, "-rtc", "base=2020-01-01,clock=vm"]);
        }
        if self.numa_nodes > 1 {
            let n = self.numa_nodes;
            let cpus = smp_cpus(&self.smp)?;
            if !cpus.is_multiple_of(n) {
                return Err(format!(
                    "{cpus} CPUs (-smp {}) do not split evenly into {n} NUMA nodes",
                    self.smp
                ));
            }
            if !self.memory_mib.is_multiple_of(n) {
                return Err(format!(
                    "{} MiB do not split evenly into {n} NUMA nodes",
                    self.memory_mib
                ));
            }
            let (per_cpu, per_mem) = (cpus / n, self.memory_mib / n);
            for i in 0..n {
                let (lo, hi) = (i * per_cpu, (i + 1) * per_cpu - 1);
                let range = if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}-{hi}")
                };
                push(&[
                    "-object",
                    &format!("memory-backend-ram,id=m{i},size={per_mem}M"),
                ]);
                push(&[
                    "-numa",
                    &format!("node,nodeid={i},cpus={range},memdev=m{i}"),
                ]);
            }
        }
        if let Some(bios) = &self.bios {
            push(&["-bios", &bios.to_string_lossy()]);
        }
        match &self.cdrom {
            Some(iso) => {
                if !self.append.is_empty() {
                    return Err(format!(
                        "a GRUB image takes its command line from its grub.cfg, not -append `{}`",
                        self.append
                    ));
                }
                push(&["-cdrom", &self.in_kernel_dir(iso)]);
            }
            None => {
                push(&["-kernel", &self.kernel_name()]);
                let append = self.kernel_append()?;
                if !append.is_empty() {
                    push(&["-append", &append]);
                }
            }
        }
        a.extend(self.extra.iter().cloned());
        Ok(a)
    }

    /// The kernel's command line as booted: `append`, and under `-icount` at 2+ CPUs
    /// [`ICOUNT_IDLE`] after it unless it names `idle=`, `icount_idle` is off, or the kernel is
    /// of a revision before `idle=last_polls` (which would refuse it: `--rev` boots those).
    pub fn kernel_append(&self) -> Result<String, String> {
        let names_idle = self.append.split_whitespace().any(|w| w.starts_with("idle="));
        if self.icount && self.icount_idle && !names_idle && smp_cpus(&self.smp)? > 1 && knows_last_polls(&self.kernel) {
            Ok(if self.append.is_empty() { ICOUNT_IDLE.to_string() } else { format!("{} {ICOUNT_IDLE}", self.append) })
        } else {
            Ok(self.append.clone())
        }
    }

    pub fn command(&self) -> Result<Command, String> {
        let mut c = Command::new(&self.qemu);
        c.args(self.args()?);
        if let Some(dir) = self.kernel_dir() {
            c.current_dir(dir);
        }
        Ok(c)
    }

    /// The kernel's directory, where QEMU runs (see the module docs); `None` for a bare name.
    fn kernel_dir(&self) -> Option<&Path> {
        self.kernel.parent().filter(|d| !d.as_os_str().is_empty())
    }

    /// The kernel as `-kernel` gets it: `./` and its file name when QEMU runs in its directory,
    /// with [`QemuConfig::path_pad`] more slashes. The `/` matters: the kernel drops the first
    /// word of its command line, QEMU's kernel path, only when it looks like a path
    /// (`kernel/bootinfo`: `BootInfo::cmdline`).
    fn kernel_name(&self) -> String {
        let pad = "/".repeat(self.path_pad as usize);
        match (self.kernel_dir(), self.kernel.file_name()) {
            (Some(_), Some(name)) => format!(".{pad}/{}", name.to_string_lossy()),
            _ if self.path_pad > 0 => format!(".{pad}/{}", self.kernel.to_string_lossy()),
            _ => self.kernel.to_string_lossy().into_owned(),
        }
    }

    /// `path` as QEMU (running in the kernel's directory) is given it: `./NAME` for a file in
    /// that directory, else unchanged.
    fn in_kernel_dir(&self, path: &Path) -> String {
        match (self.kernel_dir(), path.parent(), path.file_name()) {
            (Some(k), Some(p), Some(name)) if k == p => format!("./{}", name.to_string_lossy()),
            _ => path.to_string_lossy().into_owned(),
        }
    }

    /// The command line as a shell would take it (for logs and copy-paste), after a `cd` to
    /// the kernel's directory.
    pub fn display(&self) -> String {
        let mut s = match self.kernel_dir() {
            Some(d) => format!("cd {} && ", shell_quote(&d.to_string_lossy())),
            None => String::new(),
        };
        s.push_str(&shell_quote(&self.qemu.to_string_lossy()));
        match self.args() {
            Ok(args) => {
                for a in args {
                    s.push(' ');
                    s.push_str(&shell_quote(&a));
                }
            }
            Err(e) => s.push_str(&format!(" <invalid: {e}>")),
        }
        s
    }
}

/// The number of CPUs of an `-smp` value: its leading count (or `cpus=`), else the product of
/// the topology fields given.
pub fn smp_cpus(spec: &str) -> Result<u32, String> {
    let mut product = 1u32;
    for (i, part) in spec.split(',').enumerate() {
        let bad = || format!("bad -smp value `{spec}`");
        match part.split_once('=') {
            None if i == 0 => return part.parse().map_err(|_| bad()),
            None => return Err(bad()),
            Some(("cpus", v)) => return v.parse().map_err(|_| bad()),
            Some(("maxcpus", _)) => {}
            Some((_, v)) => product *= v.parse::<u32>().map_err(|_| bad())?,
        }
    }
    Ok(product)
}

pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=,./:+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> QemuConfig {
        QemuConfig::new("qemu-system-x86_64".into(), "/k/fairway-kernel".into())
    }

    #[test]
    fn default_command_line() {
        let c = cfg();
        assert_eq!(
            c.args().unwrap().join(" "),
            "-accel tcg -cpu max -smp 4 -m 512 -nodefaults -display none -no-reboot -serial stdio \
             -device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel ./fairway-kernel"
        );
    }

    #[test]
    fn one_host_thread_for_every_vcpu_when_asked() {
        let mut c = cfg();
        c.smp = "8".into();
        c.tcg_single_thread = true;
        assert!(c.args().unwrap().join(" ").starts_with("-accel tcg,thread=single -cpu max -smp 8 "));
    }

    #[test]
    fn a_padded_path_is_the_same_kernel_on_a_longer_command_line() {
        let mut c = cfg();
        c.append = "workload=pipe".into();
        c.path_pad = 3;
        let args = c.args().unwrap().join(" ");
        assert!(args.ends_with(" -kernel .////fairway-kernel -append workload=pipe"), "{args}");
        assert_eq!(c.command().unwrap().get_current_dir(), Some(Path::new("/k")));
        let mut bare = QemuConfig::new("qemu-system-x86_64".into(), "fairway-kernel".into());
        bare.path_pad = 1;
        assert!(bare.args().unwrap().join(" ").ends_with(" -kernel .//fairway-kernel"));
    }

    #[test]
    fn more_cpus_than_the_pc_machine_takes_boot_on_q35() {
        let mut c = cfg();
        c.smp = "255".into();
        assert!(!c.args().unwrap().join(" ").contains("-machine"));
        c.smp = "288,sockets=2,cores=72,threads=2".into();
        assert!(c.args().unwrap().join(" ").contains(" -m 512 -machine q35 -nodefaults "));
        c.smp = "sockets=4,cores=128,threads=2".into();
        assert!(c.args().unwrap().join(" ").contains(" -machine q35 "));
    }

    #[test]
    fn qemu_runs_in_the_kernels_directory_so_the_path_is_the_same_everywhere() {
        let a = QemuConfig::new("qemu-system-x86_64".into(), "/some/checkout/target/k/fairway-kernel".into());
        let b = QemuConfig::new("qemu-system-x86_64".into(), "/elsewhere/target/k/fairway-kernel".into());
        assert_eq!(a.args().unwrap(), b.args().unwrap());
        let cmd = a.command().unwrap();
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/some/checkout/target/k")));
        assert!(a.display().starts_with("cd /some/checkout/target/k && qemu-system-x86_64 "), "{}", a.display());
        let bare = QemuConfig::new("qemu-system-x86_64".into(), "fairway-kernel".into());
        assert_eq!(bare.command().unwrap().get_current_dir(), None);
        assert!(bare.display().starts_with("qemu-system-x86_64 "));
    }

    #[test]
    fn all_options() {
        let mut c = cfg();
        c.smp = "8,sockets=2,cores=4".into();
        c.cpu = "qemu64".into();
        c.memory_mib = 1024;
        c.append = "log=debug hz=100".into();
        c.icount = true;
        c.numa_nodes = 2;
        c.no_acpi = true;
        c.extra = vec!["-d".into(), "int".into()];
        let a = c.args().unwrap();
        let s = a.join(" ");
        assert!(s.starts_with("-accel tcg -cpu qemu64 -smp 8,sockets=2,cores=4 -m 1024 "));
        assert!(s.contains(" -machine acpi=off "));
        assert!(s.contains(" -icount shift=0,sleep=off -rtc base=2020-01-01,clock=vm "));
        assert!(s.contains(
            " -object memory-backend-ram,id=m0,size=512M -numa node,nodeid=0,cpus=0-3,memdev=m0 \
             -object memory-backend-ram,id=m1,size=512M -numa node,nodeid=1,cpus=4-7,memdev=m1 "
        ));
        // -append stays one argument (with `--icount`'s idle at 8 CPUs), extra args come last.
        assert!(a
            .windows(2)
            .any(|w| w[0] == "-append" && w[1] == "log=debug hz=100 idle=last_polls"));
        assert_eq!(&a[a.len() - 2..], &["-d", "int"]);
        assert!(c.display().contains("-append 'log=debug hz=100 idle=last_polls'"));
    }

    #[test]
    fn icount_at_one_cpu_records_so_the_main_loop_cannot_warp_inside_a_slice() {
        let mut c = cfg();
        c.icount = true;
        for smp in ["1", "1,sockets=1,cores=1,threads=1"] {
            c.smp = smp.into();
            let s = c.args().unwrap().join(" ");
            assert!(s.contains(" -icount shift=0,sleep=off,rr=record,rrfile=/dev/null -rtc "), "{s}");
        }
        // QEMU 10: "Record/replay is not supported with multiple CPUs".
        for smp in ["2", "4", "2,sockets=2"] {
            c.smp = smp.into();
            let s = c.args().unwrap().join(" ");
            assert!(s.contains(" -icount shift=0,sleep=off -rtc ") && !s.contains("rr="), "{s}");
        }
    }

    /// `--icount` at 2+ CPUs boots `idle=last_polls` unless the command line names `idle=`.
    #[test]
    fn icount_at_two_cpus_or_more_keeps_one_idle_cpu_polling() {
        let mut c = cfg();
        c.append = "workload=storm,threads=6,ms=150".into();
        let append = |c: &QemuConfig| {
            let a = c.args().unwrap();
            a.windows(2).find(|w| w[0] == "-append").map(|w| w[1].clone()).unwrap_or_default()
        };
        c.icount = true;
        c.smp = "2".into();
        assert_eq!(append(&c), "workload=storm,threads=6,ms=150 idle=last_polls");
        c.smp = "1".into();
        assert_eq!(append(&c), "workload=storm,threads=6,ms=150", "one CPU: record mode instead");
        c.smp = "4".into();
        c.append = "idle=halt workload=storm".into();
        assert_eq!(append(&c), "idle=halt workload=storm", "a command line's own idle= stays");
        c.append = String::new();
        assert_eq!(append(&c), "idle=last_polls");
        c.icount_idle = false;
        assert_eq!(append(&c), "");
        c.icount_idle = true;
        c.icount = false;
        assert_eq!(append(&c), "", "real time: nothing added");
        // a kernel of a revision that does not know the value boots without it
        let dir = std::env::temp_dir().join(format!("fairway-lastpolls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        c.icount = true;
        c.kernel = dir.join("fairway-kernel");
        std::fs::write(&c.kernel, b"\x7fELF ... idle= halt poll ...").unwrap();
        assert_eq!(append(&c), "");
        std::fs::write(&c.kernel, b"\x7fELF ... idle= halt poll last_polls ...").unwrap();
        assert_eq!(append(&c), "idle=last_polls");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_iso_boots_by_cdrom_with_the_chosen_firmware_and_no_append() {
        let mut c = cfg();
        c.cdrom = Some("/k/fairway.iso".into());
        assert_eq!(
            c.args().unwrap().join(" "),
            "-accel tcg -cpu max -smp 4 -m 512 -nodefaults -display none -no-reboot -serial stdio \
             -device isa-debug-exit,iobase=0xf4,iosize=0x04 -cdrom ./fairway.iso"
        );
        c.bios = Some("/usr/share/ovmf/OVMF.fd".into());
        c.cdrom = Some("/elsewhere/f.iso".into());
        let s = c.args().unwrap().join(" ");
        assert!(s.ends_with(" -bios /usr/share/ovmf/OVMF.fd -cdrom /elsewhere/f.iso"), "{s}");
        c.append = "hz=100".into();
        assert!(c.args().unwrap_err().contains("grub.cfg"));
    }

    #[test]
    fn numa_must_split_evenly() {
        let mut c = cfg();
        c.smp = "6".into();
        c.numa_nodes = 4;
        assert!(c.args().is_err());
        c.smp = "4".into();
        c.memory_mib = 510;
        assert!(c.args().is_err());
        c.memory_mib = 512;
        let s = c.args().unwrap().join(" ");
        assert!(s.contains("-numa node,nodeid=3,cpus=3,memdev=m3"), "{s}");
        assert!(s.contains("size=128M"));
    }

    #[test]
    fn smp_counts() {
        assert_eq!(smp_cpus("8").unwrap(), 8);
        assert_eq!(smp_cpus("8,sockets=2,cores=2,threads=2").unwrap(), 8);
        assert_eq!(smp_cpus("sockets=2,cores=3,threads=2").unwrap(), 12);
        assert_eq!(smp_cpus("cpus=6,sockets=3").unwrap(), 6);
        assert!(smp_cpus("x").is_err());
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("abc"), "abc");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
