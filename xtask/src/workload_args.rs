//! The flags that every command booting a workload shares (`bench`, `compare`, `trace`,
//! `profile`), declared once so their names, defaults and help cannot drift apart.
//!
//! Two layers, because not every command takes all of them:
//! - [`BootArgs`]: `--params`, `--smp`, `--timeout`. All four commands.
//! - [`WorkloadArgs`]: the `WORKLOAD` positional, [`BootArgs`], `--append` and [`RevArg`]
//!   (`--rev`). `bench` and `profile`. `compare` has no `--append` (its two command lines are
//!   `--base` and `--new`), and `trace`'s `WORKLOAD` is optional (`--from LOG` boots nothing), so
//!   those two declare the workload themselves and flatten [`BootArgs`] only (`trace` and `run`
//!   flatten [`RevArg`] too; `compare` has one per side, `--base-rev` and `--new-rev`).
//!
//! `--icount` stays with each command: `bench` checks determinism with it, `profile` always runs
//! under `-icount` and has no such flag. `cargo xtask run`'s `--smp`, `--append` and `--timeout`
//! stay in `RunArgs`: it boots no workload and its `--smp` defaults to 4.

use crate::revision::{Kernel, Revision};

/// How a workload is booted: its parameters, the machine, the time limit.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct BootArgs {
    /// Workload parameters, `k=v,k=v` (appended to `workload=NAME,`).
    #[arg(long, default_value = "")]
    pub params: String,
    /// QEMU -smp value.
    #[arg(long, default_value = "2")]
    pub smp: String,
    /// Hard timeout per boot, in seconds (at least 1).
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
}

/// A workload, how to boot it, and extra kernel command line.
#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct WorkloadArgs {
    /// Workload name (kernel/workloads/src/), e.g. pipe or hackbench.
    pub workload: String,
    #[command(flatten)]
    pub boot: BootArgs,
    /// Extra kernel command line (e.g. `sched_features=NO_DELAY_DEQUEUE`).
    #[arg(long, default_value = "")]
    pub append: String,
    #[command(flatten)]
    pub kernel: RevArg,
}

/// `--rev REV`: which kernel boots. In [`WorkloadArgs`] (`bench`, `profile`), and flattened by
/// `trace` and `run`; `compare` has one per side, `--base-rev` and `--new-rev`.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct RevArg {
    /// Boot the kernel of this git revision (branch, tag, commit; built once into target/revs/)
    /// instead of the working tree's.
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
}

impl RevArg {
    /// The kernel `--rev` names (resolved, then built or found in `target/revs/`), or the
    /// working tree's, built here, without one.
    pub fn kernel(&self) -> Result<Kernel, String> {
        match &self.rev {
            Some(r) => Revision::resolve("--rev", r)?.kernel(),
            None => Ok(crate::revision::working_tree(crate::cargo::build_kernel()?)),
        }
    }
}
