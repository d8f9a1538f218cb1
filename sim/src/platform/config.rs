//! How a run is configured ([`SimConfig`]) and what it reports ([`SimReport`]).

use super::CpuStats;
use crate::engine::cost::CostModel;
use crate::hw::locks::ClassStats;
use crate::hw::{HwCpuStats, HwProfile};

/// The machine and how to run it.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seeds the order of simultaneous events.
    pub seed: u64,
    pub cost: CostModel,
    /// The hardware cost model on top of `cost` (`icount`: none).
    pub hw: HwProfile,
    /// The tick rate (`hz=`).
    pub hz: u32,
    /// Tickless idle (`nohz=`).
    pub nohz: bool,
    /// The invariant checks (`sched_debug=1`).
    pub sched_debug: bool,
    /// Stop at this virtual time if the init task has not finished.
    pub until_ns: u64,
    /// Print each console line on stdout as well.
    pub echo: bool,
    /// Keep an event log line per event ([`SimReport::log`]).
    pub log: bool,
    /// Each context's coroutine stack (the mechanism's code runs on it, so
    /// debug builds need more than a task body alone).
    pub stack_bytes: usize,
    /// The balancing configuration (the kernel's from its command line).
    pub balance: sched::balance::BalanceConfig,
    /// `sched_features=` applied (`None`: the defaults).
    pub features: Option<sched::Features>,
    /// `trace=N`: record up to N scheduler events per CPU from the boot on
    /// (0: off); the `init` thread dumps them (`mech::entry::workload_done`).
    pub trace: usize,
    /// `fault=MODES` with its seed (`None`: off), configured at boot as the
    /// kernel does; injection starts with `mech::entry::workload_starts`.
    /// Only the modes in [`SIM_FAULTS`] run here.
    pub faults: Option<(u8, u64)>,
    /// `idle=poll`: idle CPUs poll for work instead of halting.
    pub idle_poll: bool,
}

/// The `fault=` modes the simulator runs. The others spin until the clock
/// moves (`cpu_stall` with interrupts off, the idle loop holding IPIs back
/// for `ipi_delay`/`ipi_reorder` and holding its interrupts off for
/// `idle_irqs_off`), and a simulated CPU's clock does not
/// move while its code runs: they would never end.
pub const SIM_FAULTS: u8 = mech::fault::SPURIOUS_WAKE | mech::fault::PREEMPT_POINTS;

impl Default for SimConfig {
    fn default() -> SimConfig {
        SimConfig {
            seed: 0,
            cost: CostModel::ICOUNT,
            hw: HwProfile::icount(),
            hz: 1000,
            nohz: true,
            sched_debug: false,
            until_ns: 60_000_000_000,
            echo: false,
            log: false,
            stack_bytes: 256 * 1024,
            balance: sched::balance::BalanceConfig::default(),
            features: None,
            trace: 0,
            faults: None,
            idle_poll: false,
        }
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct SimReport {
    /// The console lines, in order.
    pub output: Vec<String>,
    /// Why the run ended: "finished" (the init task's body returned), the
    /// mechanism's exit, "until" (time limit) or "idle" (no event left: every
    /// CPU halted with no timer armed).
    pub end: String,
    /// Virtual time at the end.
    pub end_ns: u64,
    pub events: u64,
    /// FNV-1a over every processed event's time, kind and CPU.
    pub digest: u64,
    pub cpus: Vec<CpuStats>,
    pub log: Vec<String>,
    /// What the hardware model added on each CPU, and per lock class
    /// (named, those taken at least once).
    pub hw: Vec<HwCpuStats>,
    pub locks: Vec<(&'static str, ClassStats)>,
}
