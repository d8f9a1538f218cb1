//! Finding QEMU and, where needed, installing QEMU 10; the same for the tools that build and
//! boot the GRUB image (`grub-mkrescue` and the GRUB platforms, xorriso, mtools, OVMF).
//!
//! The decisions ([`decide`], [`decide_image_tools`]) are pure functions of what was found
//! (version or missing tools, /etc/os-release, the machine's Debian deb822 source, whether we
//! are root), so they are unit-tested; [`ensure`] and [`ensure_image_tools`] gather those facts
//! and carry the plan out.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const QEMU: &str = "qemu-system-x86_64";
pub const MIN_MAJOR: u32 = 10;
pub const BACKPORTS_SOURCE: &str = "/etc/apt/sources.list.d/bookworm-backports.sources";
pub const DEBIAN_SOURCES: &str = "/etc/apt/sources.list.d/debian.sources";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Parses `QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2...)`.
pub fn parse_version(out: &str) -> Option<Version> {
    let rest = out
        .lines()
        .find_map(|l| l.split_once("version ").map(|(_, r)| r))?;
    let word = rest.split(|c: char| c.is_whitespace() || c == '(').next()?;
    let mut it = word
        .split('.')
        .map(|p| p.trim_matches(|c: char| !c.is_ascii_digit()).parse::<u32>());
    let major = it.next()?.ok()?;
    let minor = it.next().and_then(|r| r.ok()).unwrap_or(0);
    let patch = it.next().and_then(|r| r.ok()).unwrap_or(0);
    Some(Version(major, minor, patch))
}

/// The operating systems the installer knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Os {
    Bookworm,
    Trixie,
    Other(String),
}

pub fn parse_os_release(text: &str) -> Os {
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_string())
    };
    let id = get("ID").unwrap_or_default();
    let version = get("VERSION_ID").unwrap_or_default();
    let codename = get("VERSION_CODENAME").unwrap_or_default();
    match (id.as_str(), version.as_str(), codename.as_str()) {
        ("debian", "12", _) | ("debian", _, "bookworm") => Os::Bookworm,
        ("debian", "13", _) | ("debian", _, "trixie") => Os::Trixie,
        _ => Os::Other(get("PRETTY_NAME").unwrap_or(id)),
    }
}

/// The deb822 stanza for bookworm-backports, with the `URIs:` and `Signed-By:` fields (including
/// continuation lines) of the first stanza whose `Suites:` contains `bookworm`.
pub fn backports_source(debian_sources: &str) -> Result<String, String> {
    for stanza in debian_sources.split("\n\n") {
        // Fields with their continuation lines; comment lines dropped.
        let mut fields: Vec<(String, String)> = Vec::new();
        for line in stanza.lines().filter(|l| !l.trim_start().starts_with('#')) {
            if line.starts_with([' ', '\t']) {
                if let Some(last) = fields.last_mut() {
                    last.1.push('\n');
                    last.1.push_str(line);
                }
            } else if let Some((k, v)) = line.split_once(':') {
                fields.push((k.trim().to_string(), v.trim().to_string()));
            }
        }
        let get = |k: &str| {
            fields
                .iter()
                .find(|(f, _)| f.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.as_str())
        };
        let is_bookworm =
            get("Suites").is_some_and(|s| s.split_whitespace().any(|x| x == "bookworm"));
        if !is_bookworm {
            continue;
        }
        let uris = get("URIs").ok_or("the bookworm stanza has no URIs: line")?;
        let mut out =
            format!("Types: deb\nURIs: {uris}\nSuites: bookworm-backports\nComponents: main\n");
        if let Some(signed) = get("Signed-By") {
            out.push_str(&format!("Signed-By: {signed}\n"));
        }
        return Ok(out);
    }
    Err("no stanza with Suites: bookworm in the Debian sources".into())
}

/// One step of an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    WriteFile { path: String, contents: String },
    Run(Vec<String>),
}

impl Step {
    fn run(args: &[&str]) -> Step {
        Step::Run(args.iter().map(|s| s.to_string()).collect())
    }

    /// The step as a shell command.
    pub fn shell(&self) -> String {
        match self {
            Step::WriteFile { path, contents } => format!("cat > {path} <<'EOF'\n{contents}EOF"),
            Step::Run(a) => {
                let mut a = a.clone();
                if a.first().map(String::as_str) == Some("apt-get")
                    && a.get(1).map(String::as_str) == Some("install")
                {
                    a.insert(0, "DEBIAN_FRONTEND=noninteractive".into());
                }
                a.iter()
                    .map(|s| crate::qemu::shell_quote(s))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
    }
}

/// What to do about QEMU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// A good enough QEMU is there.
    Ready(Version),
    /// Install it with these steps (we are root on a known Debian).
    Install { why: String, steps: Vec<Step> },
    /// We cannot install it ourselves: tell the person what to run.
    Manual { why: String, commands: Vec<String> },
}

/// Decides what to do, from what was found.
pub fn decide(found: Option<Version>, os: &Os, debian_sources: Option<&str>, root: bool) -> Plan {
    let why = match found {
        Some(v) if v.0 >= MIN_MAJOR => return Plan::Ready(v),
        Some(v) => format!("{QEMU} {v} is older than {MIN_MAJOR}.0"),
        None => format!("{QEMU} was not found (or its version could not be read)"),
    };
    let steps = match os {
        Os::Bookworm => {
            let contents = match debian_sources.map(backports_source) {
                Some(Ok(c)) => c,
                Some(Err(e)) => return Plan::Manual { why: format!("{why}; cannot derive the backports source: {e}"), commands: vec![] },
                None => return Plan::Manual { why: format!("{why}; {DEBIAN_SOURCES} is missing, so the backports source cannot be derived"), commands: vec![] },
            };
            vec![
                Step::WriteFile {
                    path: BACKPORTS_SOURCE.into(),
                    contents,
                },
                Step::run(&["apt-get", "update"]),
                Step::run(&[
                    "apt-get",
                    "install",
                    "-y",
                    "-t",
                    "bookworm-backports",
                    "qemu-system-x86",
                ]),
            ]
        }
        Os::Trixie => vec![
            Step::run(&["apt-get", "update"]),
            Step::run(&["apt-get", "install", "-y", "qemu-system-x86"]),
        ],
        Os::Other(name) => {
            return Plan::Manual {
                why: format!(
                    "{why}; automatic install is only done on Debian 12/13 (this is {name})"
                ),
                commands: vec![format!(
                    "install QEMU >= {MIN_MAJOR} ({QEMU}) with your system's package manager"
                )],
            }
        }
    };
    if root {
        Plan::Install { why, steps }
    } else {
        Plan::Manual {
            why: format!("{why}; not root, so run as root:"),
            commands: steps.iter().map(Step::shell).collect(),
        }
    }
}

/// `qemu-system-x86_64` on PATH (or `$FAIRWAY_QEMU`).
pub fn find_qemu() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAIRWAY_QEMU") {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(QEMU))
        .find(|p| p.is_file())
}

pub fn qemu_version(qemu: &Path) -> Option<Version> {
    let out = Command::new(qemu).arg("--version").output().ok()?;
    parse_version(&String::from_utf8_lossy(&out.stdout))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Makes sure QEMU >= 10 is there, installing it when we can; returns its path.
pub fn ensure(verbose: bool) -> Result<PathBuf, String> {
    if let Some(q) = std::env::var_os("FAIRWAY_QEMU").map(PathBuf::from) {
        // An explicit choice is used as it is, never "fixed" by installing another QEMU.
        return match qemu_version(&q) {
            Some(v) if v.0 >= MIN_MAJOR => Ok(q),
            v => Err(format!(
                "xtask: FAIRWAY_QEMU={} is not QEMU >= {MIN_MAJOR} (version {v:?})",
                q.display()
            )),
        };
    }
    let qemu = find_qemu();
    let version = qemu.as_deref().and_then(qemu_version);
    let os = parse_os_release(&std::fs::read_to_string("/etc/os-release").unwrap_or_default());
    let sources = std::fs::read_to_string(DEBIAN_SOURCES).ok();
    match decide(version, &os, sources.as_deref(), is_root()) {
        Plan::Ready(v) => {
            let q = qemu.expect("a version implies a binary");
            if verbose {
                println!("xtask: {} is QEMU {v}", q.display());
            }
            Ok(q)
        }
        Plan::Manual { why, commands } => {
            let mut msg = format!("xtask: {why}");
            for c in commands {
                msg.push_str(&format!("\n    {}", c.replace('\n', "\n    ")));
            }
            Err(msg)
        }
        Plan::Install { why, steps } => {
            eprintln!("xtask: {why}; installing QEMU {MIN_MAJOR}");
            carry_out(&steps)?;
            let q = find_qemu()
                .ok_or_else(|| format!("xtask: {QEMU} still not found after the install"))?;
            match qemu_version(&q) {
                Some(v) if v.0 >= MIN_MAJOR => {
                    eprintln!("xtask: installed QEMU {v} at {}", q.display());
                    Ok(q)
                }
                v => Err(format!(
                    "xtask: after the install {} reports version {v:?}",
                    q.display()
                )),
            }
        }
    }
}

/// Runs install steps in order; stops at the first that fails.
fn carry_out(steps: &[Step]) -> Result<(), String> {
    for step in steps {
        eprintln!("xtask: + {}", step.shell());
        match step {
            Step::WriteFile { path, contents } => {
                std::fs::write(path, contents).map_err(|e| format!("xtask: writing {path}: {e}"))?
            }
            Step::Run(a) => {
                let st = Command::new(&a[0])
                    .args(&a[1..])
                    .env("DEBIAN_FRONTEND", "noninteractive")
                    .stdin(std::process::Stdio::null())
                    .status()
                    .map_err(|e| format!("xtask: {}: {e}", a[0]))?;
                if !st.success() {
                    return Err(format!("xtask: `{}` failed ({st})", step.shell()));
                }
            }
        }
    }
    Ok(())
}

/// What the GRUB image and its UEFI boots need, each as (how it is found, the Debian package
/// that provides it): a command on PATH, a directory (a GRUB platform's modules), or `OVMF`
/// (the firmware file, see [`find_ovmf`]).
pub const IMAGE_TOOLS: &[(&str, &str)] = &[
    ("grub-mkrescue", "grub-common"),
    ("/usr/lib/grub/i386-pc", "grub-pc-bin"),
    ("/usr/lib/grub/x86_64-efi", "grub-efi-amd64-bin"),
    ("xorriso", "xorriso"),
    ("mformat", "mtools"),
    ("OVMF", "ovmf"),
];

/// UEFI firmware for QEMU's `-bios`: `$FAIRWAY_OVMF`, else the first of these that exists.
pub const OVMF_CANDIDATES: &[&str] = &["/usr/share/ovmf/OVMF.fd", "/usr/share/qemu/OVMF.fd"];

pub fn find_ovmf() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FAIRWAY_OVMF") {
        return Some(PathBuf::from(p));
    }
    OVMF_CANDIDATES.iter().map(PathBuf::from).find(|p| p.is_file())
}

fn on_path(cmd: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
}

/// The packages whose tools are missing here, in [`IMAGE_TOOLS`] order.
pub fn missing_image_packages() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = IMAGE_TOOLS
        .iter()
        .filter(|(what, _)| match *what {
            "OVMF" => find_ovmf().is_none(),
            w if w.starts_with('/') => !Path::new(w).is_dir(),
            w => !on_path(w),
        })
        .map(|&(_, pkg)| pkg)
        .collect();
    v.dedup();
    v
}

/// What to do about the image tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolPlan {
    Ready,
    Install { why: String, steps: Vec<Step> },
    Manual { why: String, commands: Vec<String> },
}

/// Decides what to do about the missing image packages (`missing`: Debian package names).
pub fn decide_image_tools(missing: &[&str], os: &Os, root: bool) -> ToolPlan {
    if missing.is_empty() {
        return ToolPlan::Ready;
    }
    let why = format!("the GRUB image needs the Debian packages {}", missing.join(" "));
    if let Os::Other(name) = os {
        return ToolPlan::Manual {
            why: format!("{why}; automatic install is only done on Debian 12/13 (this is {name})"),
            commands: vec![format!(
                "install grub-mkrescue with the GRUB platforms i386-pc and x86_64-efi, xorriso, mtools and OVMF \
                 with your system's package manager (or set FAIRWAY_OVMF to an OVMF.fd)"
            )],
        };
    }
    let mut install = vec!["apt-get", "install", "-y", "--no-install-recommends"];
    install.extend_from_slice(missing);
    let steps = vec![Step::run(&["apt-get", "update"]), Step::run(&install)];
    if root {
        ToolPlan::Install { why, steps }
    } else {
        ToolPlan::Manual { why: format!("{why}; not root, so run as root:"), commands: steps.iter().map(Step::shell).collect() }
    }
}

/// Makes sure the image tools are there, installing them when we can.
pub fn ensure_image_tools(verbose: bool) -> Result<(), String> {
    let os = parse_os_release(&std::fs::read_to_string("/etc/os-release").unwrap_or_default());
    match decide_image_tools(&missing_image_packages(), &os, is_root()) {
        ToolPlan::Ready => {
            if verbose {
                println!("xtask: the GRUB image tools are installed (OVMF: {})", find_ovmf().unwrap_or_default().display());
            }
            Ok(())
        }
        ToolPlan::Manual { why, commands } => {
            let mut msg = format!("xtask: {why}");
            for c in commands {
                msg.push_str(&format!("\n    {c}"));
            }
            Err(msg)
        }
        ToolPlan::Install { why, steps } => {
            eprintln!("xtask: {why}; installing them");
            carry_out(&steps)?;
            match missing_image_packages() {
                m if m.is_empty() => Ok(()),
                m => Err(format!("xtask: after the install, still missing: {}", m.join(" "))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOKWORM: &str =
        "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\n\
VERSION_ID=\"12\"\nVERSION=\"12 (bookworm)\"\nVERSION_CODENAME=bookworm\nID=debian\n";
    const TRIXIE: &str = "PRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nVERSION_ID=\"13\"\nVERSION_CODENAME=trixie\nID=debian\n";
    const UBUNTU: &str =
        "PRETTY_NAME=\"Ubuntu 24.04 LTS\"\nID=ubuntu\nVERSION_ID=\"24.04\"\nID_LIKE=debian\n";

    const SOURCES: &str = "Types: deb\n\
# http://snapshot.debian.org/archive/debian/20250520T000000Z\n\
URIs: http://deb.debian.org/debian\n\
Suites: bookworm bookworm-updates\n\
Components: main\n\
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\
\n\
Types: deb\n\
URIs: http://deb.debian.org/debian-security\n\
Suites: bookworm-security\n\
Components: main\n\
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n";

    #[test]
    fn versions() {
        assert_eq!(
            parse_version(
                "QEMU emulator version 10.0.2 (Debian 1:10.0.2+ds-2+deb13u1~bpo12+1)\nCopyright"
            ),
            Some(Version(10, 0, 2))
        );
        assert_eq!(
            parse_version("QEMU emulator version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u13)"),
            Some(Version(7, 2, 15))
        );
        assert_eq!(
            parse_version("QEMU emulator version 9.1.50"),
            Some(Version(9, 1, 50))
        );
        assert_eq!(
            parse_version("QEMU emulator version 11.0"),
            Some(Version(11, 0, 0))
        );
        assert_eq!(parse_version("garbage"), None);
        assert!(Version(10, 0, 0) > Version(9, 2, 3));
    }

    #[test]
    fn os_release() {
        assert_eq!(parse_os_release(BOOKWORM), Os::Bookworm);
        assert_eq!(parse_os_release(TRIXIE), Os::Trixie);
        assert_eq!(
            parse_os_release(UBUNTU),
            Os::Other("Ubuntu 24.04 LTS".into())
        );
        assert_eq!(parse_os_release(""), Os::Other(String::new()));
    }

    #[test]
    fn backports_stanza_copies_uris_and_signed_by() {
        assert_eq!(
            backports_source(SOURCES).unwrap(),
            "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\n\
             Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        );
        // Only the exact suite `bookworm` counts; the first such stanza wins; continuation lines
        // (an inline key) are kept.
        let src = "Types: deb\nURIs: http://mirror.example/sec\nSuites: bookworm-security\n\n\
Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\nComponents: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n abc\n\n\
Types: deb\nURIs: http://other/debian\nSuites: bookworm\n";
        let out = backports_source(src).unwrap();
        assert!(
            out.contains("URIs: http://mirror.example/debian\n"),
            "{out}"
        );
        assert!(
            out.contains("Signed-By: \n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n abc\n"),
            "{out}"
        );
        assert!(backports_source("Types: deb\nURIs: x\nSuites: trixie\n").is_err());
    }

    #[test]
    fn ready_when_new_enough() {
        assert_eq!(
            decide(Some(Version(10, 0, 2)), &Os::Other("x".into()), None, false),
            Plan::Ready(Version(10, 0, 2))
        );
        assert_eq!(
            decide(Some(Version(11, 1, 0)), &Os::Bookworm, None, true),
            Plan::Ready(Version(11, 1, 0))
        );
    }

    #[test]
    fn bookworm_root_installs_from_backports() {
        for found in [None, Some(Version(7, 2, 15))] {
            let Plan::Install { steps, .. } = decide(found, &Os::Bookworm, Some(SOURCES), true)
            else {
                panic!()
            };
            assert_eq!(steps.len(), 3);
            assert!(matches!(&steps[0], Step::WriteFile { path, contents }
                if path == BACKPORTS_SOURCE && contents.contains("Suites: bookworm-backports\n")));
            assert_eq!(steps[1].shell(), "apt-get update");
            assert_eq!(
                steps[2].shell(),
                "DEBIAN_FRONTEND=noninteractive apt-get install -y -t bookworm-backports qemu-system-x86"
            );
        }
    }

    #[test]
    fn trixie_installs_plain_package() {
        let Plan::Install { steps, .. } = decide(None, &Os::Trixie, None, true) else {
            panic!()
        };
        assert_eq!(
            steps.iter().map(Step::shell).collect::<Vec<_>>(),
            vec![
                "apt-get update",
                "DEBIAN_FRONTEND=noninteractive apt-get install -y qemu-system-x86",
            ]
        );
    }

    #[test]
    fn not_root_or_other_os_prints_commands() {
        let Plan::Manual { why, commands } =
            decide(Some(Version(7, 2, 0)), &Os::Bookworm, Some(SOURCES), false)
        else {
            panic!()
        };
        assert!(why.contains("7.2.0") && why.contains("not root"), "{why}");
        assert!(commands[0].starts_with(&format!("cat > {BACKPORTS_SOURCE} <<'EOF'\nTypes: deb\n")));
        assert!(commands[0].ends_with("debian-archive-keyring.gpg\nEOF"));
        assert_eq!(commands.len(), 3);
        let Plan::Manual { why, .. } = decide(None, &Os::Other("Fedora".into()), None, true) else {
            panic!()
        };
        assert!(why.contains("Fedora"));
        assert!(matches!(
            decide(None, &Os::Bookworm, None, true),
            Plan::Manual { .. }
        ));
    }

    #[test]
    fn image_tools_install_on_debian_as_root_only_what_is_missing() {
        assert_eq!(decide_image_tools(&[], &Os::Other("x".into()), false), ToolPlan::Ready);
        for os in [Os::Bookworm, Os::Trixie] {
            let ToolPlan::Install { why, steps } = decide_image_tools(&["grub-pc-bin", "ovmf"], &os, true) else {
                panic!()
            };
            assert!(why.contains("grub-pc-bin ovmf"), "{why}");
            assert_eq!(
                steps.iter().map(Step::shell).collect::<Vec<_>>(),
                [
                    "apt-get update",
                    "DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends grub-pc-bin ovmf"
                ]
            );
        }
        let ToolPlan::Manual { commands, .. } = decide_image_tools(&["xorriso"], &Os::Bookworm, false) else {
            panic!()
        };
        assert_eq!(commands.len(), 2);
        let ToolPlan::Manual { why, .. } = decide_image_tools(&["xorriso"], &Os::Other("Fedora".into()), true) else {
            panic!()
        };
        assert!(why.contains("Fedora"));
    }

    #[test]
    fn every_image_tool_names_its_package() {
        let pkgs: Vec<_> = IMAGE_TOOLS.iter().map(|t| t.1).collect();
        assert_eq!(pkgs, ["grub-common", "grub-pc-bin", "grub-efi-amd64-bin", "xorriso", "mtools", "ovmf"]);
    }
}
