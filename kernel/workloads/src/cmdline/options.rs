//! The option types: every option's field, its default, and the words of
//! the options whose values are words (`log=`, `test_crash=`).

use alloc::vec::Vec;

use super::Workload;

/// A deliberate failure for the harness's fault-report scenarios.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crash {
    /// Read from an unmapped address (the kernel's `selfcheck::CRASH_ADDRESS`).
    PageFault,
    /// Integer division by zero.
    DivideError,
    /// An invalid opcode (`ud2`).
    InvalidOpcode,
    /// A Rust panic.
    Panic,
    /// Exhaust the kernel heap.
    Oom,
}

impl Crash {
    pub(super) const ALL: [(&'static str, Crash); 5] = [
        ("page_fault", Crash::PageFault),
        ("divide_error", Crash::DivideError),
        ("invalid_opcode", Crash::InvalidOpcode),
        ("panic", Crash::Panic),
        ("oom", Crash::Oom),
    ];
}

/// The console's log levels (`log=`), as the `log` crate's `LevelFilter`
/// orders them; the platform maps them to its logger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// Every option the kernel understands, with its default.
#[derive(Clone, Debug)]
pub struct Options {
    /// `log=off|error|warn|info|debug|trace` (default info).
    pub log: LogLevel,
    /// `hz=N`: timer interrupts per second, 10..=10000 (default 1000).
    pub hz: u32,
    /// `selfcheck_ticks=N`: timer ticks every CPU must take in the boot
    /// self-check, 1..=1000 (default 10).
    pub selfcheck_ticks: u32,
    /// `test_crash=page_fault|divide_error|invalid_opcode|panic|oom`: fail on
    /// purpose after boot (for the harness's fault-report scenarios).
    pub test_crash: Option<Crash>,
    /// `sched_features=NAME,NO_NAME,...`: Linux's feature names, applied on
    /// top of the defaults (commas stand for the spaces Linux's file uses).
    pub sched_features: sched::Features,
    /// `sched_debug=0|1`: check the scheduler's invariants at every switch.
    pub sched_debug: bool,
    /// `lockdep=0|1`: check the lock order at every lock (`mech::lock::lockdep`);
    /// `None`: as `sched_debug`.
    pub lockdep: Option<bool>,
    /// `test_lockdep=inversion|rq_descending|irqs_on`: take locks wrongly on
    /// purpose before the workload (the lockdep scenarios).
    pub test_lockdep: Option<mech::lockdep_provoke::Provoke>,
    /// `watchdog_thresh=S` (Linux's name and unit): the soft-lockup detector
    /// reports a CPU that has not switched for 2·S seconds while tasks wait
    /// (0: off; default 2).
    pub watchdog_thresh: u32,
    /// `hung_task_timeout_secs=S` (Linux's name): report a task blocked for
    /// S seconds with no wakeup coming (0: off; default 5).
    pub hung_task_timeout_secs: u32,
    /// `test_watchdog=soft_lockup|hard_lockup|lost_wakeup|lost_sleep`:
    /// create what a watchdog must report (the watchdog scenarios).
    pub test_watchdog: Option<mech::watchdog::Provoke>,
    /// `nmi_watchdog=0|1` (Linux's name): the hard-lockup check (off by default, see
    /// `watchdog::HARD_LOCKUP`).
    pub nmi_watchdog: bool,
    /// `workload=NAME[,key=value...]`: what the kernel runs (default `demo`).
    pub workload: Workload,
    /// `trace=0|1|N`: record scheduler events (1: 16384 per CPU; N: N per CPU).
    pub trace: usize,
    /// `stats_ms=N`: also print the schedstat lines every N ms (0: only at the end).
    pub stats_ms: u64,
    /// `phase_ns=N`: the init thread spins N ns before starting the workload,
    /// so that under `-icount` a run lands at another phase of the ticks
    /// (`cargo xtask bench --icount --phases`); 0 by default.
    pub phase_ns: u64,
    /// `nohz=on|off`: idle CPUs stop their tick (default on).
    pub nohz: bool,
    /// `idle=halt|poll|last_polls`: an idle CPU halts until an interrupt (default), or
    /// spins watching for work, so that wakers need send it no IPI (Linux's
    /// `idle=poll`; the tick then stays on).
    pub idle_poll: bool,
    /// `idle=last_polls`: idle CPUs halt, except one while every other CPU is
    /// idle, which spins until an interrupt instead (QEMU's `-icount` then never
    /// sees every vCPU halted; kernel/src/arch/wait.rs says why that matters).
    pub idle_last_polls: bool,
    /// The balancing experiment switches (`avg_idle_clamp=`, `avg_idle_ceiling=`,
    /// `sis_prop=`, `sis_util=`, `wake_balance=`, `wake_affine=`, `ni_random=`,
    /// `newidle=`), parsed by the policy crate.
    pub balance: sched::balance::BalanceConfig,
    /// `cpu_capacity=CPU:CAP,...`: emulated CPU capacities (1..1024).
    pub cpu_capacity: Vec<(usize, u64)>,
    /// `fault=MODE,...`: the fault injection modes (`fault::MODES`; none by
    /// default).
    pub fault: u8,
    /// `fault_seed=N`: seeds fault injection's random choices (default 1).
    pub fault_seed: Option<u64>,
    /// `seed=N`: seeds the benchmark workloads' random draws (think and
    /// service times, request sizes: `Workload::rng`); `None` when not
    /// given (the kernel then uses 0; the simulator its `--seed`).
    pub seed: Option<u64>,
}


impl Options {
    /// The `idle=` value these options stand for.
    pub fn idle_name(&self) -> &'static str {
        match (self.idle_poll, self.idle_last_polls) {
            (true, _) => "poll",
            (false, true) => "last_polls",
            (false, false) => "halt",
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            log: LogLevel::Info,
            hz: 1000,
            selfcheck_ticks: 10,
            test_crash: None,
            sched_features: sched::Features::default(),
            sched_debug: false,
            lockdep: None,
            test_lockdep: None,
            watchdog_thresh: mech::watchdog::DEFAULT_THRESH_S,
            hung_task_timeout_secs: mech::watchdog::DEFAULT_HUNG_S,
            test_watchdog: None,
            nmi_watchdog: false,
            workload: Workload::with_defaults(crate::spec("demo").expect("demo is declared")),
            trace: 0,
            stats_ms: 0,
            phase_ns: 0,
            nohz: true,
            idle_poll: false,
            idle_last_polls: false,
            balance: sched::balance::BalanceConfig::default(),
            cpu_capacity: Vec::new(),
            fault: 0,
            fault_seed: None,
            seed: None,
        }
    }
}

/// `log=`'s words, in `LogLevel`'s order.
pub(super) const LEVELS: [(&str, LogLevel); 6] = [
    ("off", LogLevel::Off),
    ("error", LogLevel::Error),
    ("warn", LogLevel::Warn),
    ("info", LogLevel::Info),
    ("debug", LogLevel::Debug),
    ("trace", LogLevel::Trace),
];


impl LogLevel {
    /// `log=`'s word for this level.
    pub(super) fn name(self) -> &'static str {
        LEVELS.iter().find(|(_, v)| *v == self).map_or("info", |(n, _)| n)
    }

    /// The level `log=` names by `word`.
    pub(super) fn parse(word: &str) -> Option<LogLevel> {
        LEVELS.iter().find(|(n, _)| *n == word).map(|(_, l)| *l)
    }
}
