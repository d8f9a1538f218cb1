//! The test kernel's build, run beside the host tests: its output is kept and shown only when
//! it fails, so that it does not interleave with the host tests' streamed output.

use std::path::PathBuf;
use std::process::Stdio;

use crate::cargo::{self, KERNEL_PACKAGE, KERNEL_PROFILE};
use crate::workspace_root;

/// `cargo build --profile kernel -p fairway-kernel --features FEATURES`, quietly; the ELF's
/// path, or cargo's whole output under a first line saying the build failed.
pub fn build(features: &[&str]) -> Result<PathBuf, String> {
    let mut c = cargo::cargo_in(&workspace_root());
    c.args(["build", "--profile", KERNEL_PROFILE, "-p", KERNEL_PACKAGE]).stdin(Stdio::null());
    if !features.is_empty() {
        c.args(["--features", &features.join(",")]);
    }
    let out = c.output().map_err(|e| format!("xtask: building the kernel failed: cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "xtask: building the kernel failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let elf = cargo::kernel_elf();
    if !elf.is_file() {
        return Err(format!("xtask: building the kernel failed: the build succeeded but {} does not exist", elf.display()));
    }
    Ok(elf)
}
