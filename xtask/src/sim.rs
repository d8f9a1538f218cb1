//! `cargo xtask sim`: the simulator. Without a workload it shows a modelled machine, a debate's
//! preset or any `-smp` value, as the kernel would see it: every CPU's place and the sched
//! domains the policy crate builds (`fairway_sim::Machine`). With one
//! (`cargo xtask sim pipe --machine 2 --params rounds=1000 --append 'hz=250'`) it builds the
//! `fairway-sim` binary (sim/src/bin) and runs the kernel's own workload code (`kernel/workloads`)
//! over the kernel's mechanism (`kernel/mech`) on the simulated machine, one process per run,
//! printing the kernel's `@fw` lines (docs/SIMULATOR.md, "Running a workload").

use fairway_sim::hw::HwProfile;
use fairway_sim::{presets, PRESETS};

#[derive(clap::Args)]
pub struct SimArgs {
    /// A workload to run on the machine (kernel/workloads/src/), e.g. pipe or schbench.
    pub workload: Option<String>,
    /// Workload parameters, `k=v,k=v` (appended to `workload=NAME,`).
    #[arg(long, default_value = "")]
    pub params: String,
    /// Extra kernel command line (e.g. `hz=250 sched_features=NO_DELAY_DEQUEUE`).
    #[arg(long, default_value = "")]
    pub append: String,
    /// Seeds the order of simultaneous events (the same seed replays the same run).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Build and run the simulator optimised (the `sim` profile: release with whole-program LTO), for long runs and for timing the simulator itself.
    #[arg(long)]
    pub release: bool,
    /// A preset (`--list`) or a QEMU -smp value, e.g. `8,sockets=2,cores=2,threads=2`.
    #[arg(long)]
    pub machine: Option<String>,
    /// NUMA nodes splitting the CPUs evenly (with an -smp value), like `run --numa`.
    #[arg(long, default_value_t = 0)]
    pub numa: u32,
    /// The hardware cost model's profile, `icount` (the default: no hardware costs) or a
    /// machine's (`--list`), with `,KEY=VALUE` overrides, e.g. `dd-2024,refill_scale=2`
    /// (docs/SIMULATOR.md, "The hardware cost model"). Without a workload: prints its figures.
    #[arg(long, value_name = "PROFILE[,KEY=VALUE...]")]
    pub hw: Option<String>,
    /// List the presets and the hardware profiles.
    #[arg(long)]
    pub list: bool,
    /// Print CPU 0's per-CPU lines and hold back the other CPUs', then one table per record:
    /// each field's sum, smallest (its CPU), median and largest (its CPU) over the CPUs.
    #[arg(long)]
    pub summary: bool,
}

pub fn sim(a: SimArgs) -> Result<(), String> {
    if a.list {
        for p in PRESETS {
            println!("{:<14} -smp {:<34} numa {:<2} {}", p.name, p.smp, p.numa.max(1), p.about);
        }
        println!("\nhardware profiles (--hw): {}", HwProfile::NAMES.join(", "));
        return Ok(());
    }
    let hw = match &a.hw {
        Some(h) => Some(HwProfile::parse(h).map_err(|e| format!("xtask: {e}"))?),
        None => None,
    };
    if let (None, None, Some(hw)) = (&a.workload, &a.machine, &hw) {
        println!("@fw hw {}", hw.record());
        return Ok(());
    }
    let name = a.machine.clone().ok_or("give --machine PRESET|SMP (or --list for the presets and hardware profiles)")?;
    if let Some(w) = &a.workload {
        return run_workload(w, &name, &a);
    }
    if let Some(hw) = &hw {
        println!("@fw hw {}", hw.record());
    }
    let m = presets::machine(&name, a.numa).map_err(|e| e.to_string())?;
    let report = m.topology_report().map_err(|e| format!("{}: no sched domains: {e:?}", m.describe()))?;
    println!("{}", m.describe());
    print!("{report}");
    Ok(())
}

/// The kernel command line of a run: `workload=NAME[,PARAMS] APPEND`.
pub fn cmdline(workload: &str, params: &str, append: &str) -> String {
    let mut line = format!("workload={workload}");
    if !params.is_empty() {
        line.push(',');
        line.push_str(params);
    }
    if !append.trim().is_empty() {
        line.push(' ');
        line.push_str(append.trim());
    }
    line
}

/// The `fairway-sim` binary, built now: debug, or optimised with the workspace's `sim` profile
/// (release with whole-program LTO, Cargo.toml says why).
pub fn build_binary(release: bool) -> Result<std::path::PathBuf, String> {
    let mut c = crate::cargo::cargo_in(&crate::workspace_root());
    c.args(["build", "-q", "-p", "fairway-sim", "--bin", "fairway-sim"]);
    if release {
        c.args(["--profile", "sim"]);
    }
    let st = c.status().map_err(|e| format!("cargo build -p fairway-sim: {e}"))?;
    if !st.success() {
        return Err("cargo build -p fairway-sim failed".into());
    }
    let profile = if release { "sim" } else { "debug" };
    Ok(crate::cargo::target_dir().join(crate::cargo::TARGET).join(profile).join("fairway-sim"))
}

fn run_workload(workload: &str, machine: &str, a: &SimArgs) -> Result<(), String> {
    let bin = build_binary(a.release)?;
    let mut c = std::process::Command::new(&bin);
    c.args(["--machine", machine, "--numa", &a.numa.to_string(), "--seed", &a.seed.to_string()]);
    if let Some(h) = &a.hw {
        c.args(["--hw", h]);
    }
    c.arg("--");
    c.arg(cmdline(workload, &a.params, &a.append));
    let t = std::time::Instant::now();
    let st = if a.summary {
        use std::io::BufRead;
        c.stdout(std::process::Stdio::piped());
        let mut child = c.spawn().map_err(|e| format!("{}: {e}", bin.display()))?;
        let mut summary = crate::percpu_summary::PerCpuSummary::new();
        let out = child.stdout.take().expect("piped");
        for line in std::io::BufReader::new(out).lines() {
            let line = line.map_err(|e| format!("{}: reading its output: {e}", bin.display()))?;
            if summary.line(&line) {
                println!("{line}");
            }
        }
        print!("{}", summary.finish());
        child.wait().map_err(|e| format!("{}: {e}", bin.display()))?
    } else {
        c.status().map_err(|e| format!("{}: {e}", bin.display()))?
    };
    eprintln!("sim: {:.3} s of host time", t.elapsed().as_secs_f64());
    match st.code() {
        Some(0) => Ok(()),
        Some(1) => Err(format!("sim: workload {workload} failed its own checks")),
        Some(2) => Err("sim: bad input, or the run did not finish (see above)".into()),
        _ => Err(format!("sim: {} ended with {st}", bin.display())),
    }
}
