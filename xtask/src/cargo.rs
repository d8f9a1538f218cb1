//! Building the kernel and running the host unit tests through cargo.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::workspace_root;

pub const KERNEL_PACKAGE: &str = "fairway-kernel";
/// The policy crate's criterion benchmarks: `cargo bench -p fairway-sched-bench`, not built by the
/// host tests (criterion and its dependencies were about 25 CPU-s of every clean test build).
pub const SCHED_BENCH_PACKAGE: &str = "fairway-sched-bench";
pub const TARGET: &str = "x86_64-unknown-linux-gnu";

fn cargo() -> Command {
    cargo_in(&workspace_root())
}

/// The cargo that runs xtask (`$CARGO`), in `dir`.
pub fn cargo_in(dir: &Path) -> Command {
    let mut c = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    c.current_dir(dir);
    c
}

/// The workspace's target directory (`$CARGO_TARGET_DIR` or `target/`), absolute.
pub fn target_dir() -> PathBuf {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"));
    if target_dir.is_absolute() {
        target_dir
    } else {
        workspace_root().join(target_dir)
    }
}

/// The cargo profile the kernel is built with (`[profile.kernel]` in the
/// workspace Cargo.toml: release plus fat LTO).
pub const KERNEL_PROFILE: &str = "kernel";

/// Where the kernel ELF lands.
pub fn kernel_elf() -> PathBuf {
    elf_in(&target_dir())
}

/// Where a kernel build into the target directory `target` leaves the ELF.
fn elf_in(target: &Path) -> PathBuf {
    target.join(TARGET).join(KERNEL_PROFILE).join(KERNEL_PACKAGE)
}

/// `cargo build --profile kernel -p fairway-kernel` of the working tree; returns the ELF's path.
pub fn build_kernel() -> Result<PathBuf, String> {
    build_kernel_in(&workspace_root(), None).map_err(|e| format!("xtask: {e}"))
}

/// As [`build_kernel`], with the kernel's cargo `features` (`lockdep`: the lock-order checker,
/// which the scenarios run with and the measuring commands without).
pub fn build_kernel_features(features: &[&str]) -> Result<PathBuf, String> {
    build_kernel_in_with(&workspace_root(), None, features).map_err(|e| format!("xtask: {e}"))
}

/// The same build of the tree at `root` (another revision's, say), into the target directory
/// `target` instead of cargo's own choice when given; returns the ELF's path, or what failed
/// (cargo's errors are on the terminal).
pub fn build_kernel_in(root: &Path, target: Option<&Path>) -> Result<PathBuf, String> {
    build_kernel_in_with(root, target, &[])
}

fn build_kernel_in_with(root: &Path, target: Option<&Path>, features: &[&str]) -> Result<PathBuf, String> {
    let mut c = cargo_in(root);
    c.args(["build", "--profile", KERNEL_PROFILE, "-p", KERNEL_PACKAGE]).stdin(Stdio::null());
    if !features.is_empty() {
        c.args(["--features", &features.join(",")]);
    }
    if let Some(t) = target {
        c.env("CARGO_TARGET_DIR", t);
    }
    let st = c.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !st.success() {
        return Err(format!("building the kernel failed ({st})"));
    }
    let elf = target.map_or_else(kernel_elf, elf_in);
    if !elf.is_file() {
        return Err(format!("the kernel build succeeded but {} does not exist", elf.display()));
    }
    Ok(elf)
}

/// Counts of the host unit tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HostTests {
    pub passed: u32,
    pub failed: u32,
    /// cargo exited non-zero without any failed test to show for it (a build error, a crash).
    pub cargo_failed: bool,
}

/// Parses cargo's `test result: ok. 21 passed; 0 failed; 0 ignored; ...` line.
pub fn parse_test_result(line: &str) -> Option<(u32, u32)> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let count = |what: &str| {
        rest.split(';').find_map(|part| {
            let (n, w) = part.trim().rsplit_once(' ')?;
            let n = n.rsplit(' ').next()?;
            (w == what).then(|| n.parse::<u32>().ok()).flatten()
        })
    };
    Some((count("passed")?, count("failed")?))
}

/// `cargo test --workspace --exclude fairway-kernel --exclude fairway-sched-bench --no-fail-fast`,
/// streamed to stdout.
pub fn host_tests() -> HostTests {
    let mut t = HostTests::default();
    let child = cargo()
        .args([
            "test",
            "--workspace",
            "--exclude",
            KERNEL_PACKAGE,
            "--exclude",
            SCHED_BENCH_PACKAGE,
            "--no-fail-fast",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            println!("xtask: cannot run cargo test: {e}");
            t.cargo_failed = true;
            return t;
        }
    };
    let out = BufReader::new(child.stdout.take().expect("piped"));
    for line in out.lines().map_while(Result::ok) {
        println!("{line}");
        if let Some((p, f)) = parse_test_result(&line) {
            t.passed += p;
            t.failed += f;
        }
    }
    let ok = child.wait().map(|s| s.success()).unwrap_or(false);
    if !ok && t.failed == 0 {
        t.cargo_failed = true;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_result_lines() {
        assert_eq!(
            parse_test_result("test result: ok. 21 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.04s"),
            Some((21, 0))
        );
        assert_eq!(
            parse_test_result("test result: FAILED. 20 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s"),
            Some((20, 1))
        );
        assert_eq!(parse_test_result("test foo ... ok"), None);
        assert_eq!(parse_test_result("running 3 tests"), None);
    }

    #[test]
    fn kernel_path() {
        let p = kernel_elf();
        assert!(
            p.ends_with("x86_64-unknown-linux-gnu/kernel/fairway-kernel"),
            "{}",
            p.display()
        );
    }
}
