//! `cargo xtask sim`: the simulator's machines. Today it shows a modelled machine, a debate's
//! preset or any `-smp` value, as the kernel would see it: every CPU's place and the sched
//! domains the policy crate builds (`fairway_sim::Machine`). The scheduler's mechanism crate
//! (`kernel/mech`) runs on the simulator (`sim/src/platform`, host-tested in `sim/tests`), and the
//! workloads are a crate beside it (`kernel/workloads`), but the simulator does not yet boot them,
//! so a workload name is refused with that reason rather than run by other code.

use fairway_sim::{presets, PRESETS};

#[derive(clap::Args)]
pub struct SimArgs {
    /// A workload to run on the machine (refused until the workloads are a crate: see above).
    pub workload: Option<String>,
    /// A preset (`--list`) or a QEMU -smp value, e.g. `8,sockets=2,cores=2,threads=2`.
    #[arg(long)]
    pub machine: Option<String>,
    /// NUMA nodes splitting the CPUs evenly (with an -smp value), like `run --numa`.
    #[arg(long, default_value_t = 0)]
    pub numa: u32,
    /// List the presets.
    #[arg(long)]
    pub list: bool,
}

pub fn sim(a: SimArgs) -> Result<(), String> {
    if a.list {
        for p in PRESETS {
            println!("{:<14} -smp {:<34} numa {:<2} {}", p.name, p.smp, p.numa.max(1), p.about);
        }
        return Ok(());
    }
    if let Some(w) = &a.workload {
        return Err(format!(
            "the simulator cannot run `{w}` yet: the scheduler's mechanism (kernel/mech) runs on it \
             (sim/src/platform) and the workloads are a crate beside it (kernel/workloads), but the simulator \
             does not yet run them; `cargo xtask sim --machine M` shows machine M's topology and domains"
        ));
    }
    let name = a.machine.ok_or("give --machine PRESET|SMP (or --list for the presets)")?;
    let m = presets::machine(&name, a.numa).map_err(|e| e.to_string())?;
    let report = m.topology_report().map_err(|e| format!("{}: no sched domains: {e:?}", m.describe()))?;
    println!("{}", m.describe());
    print!("{report}");
    Ok(())
}
