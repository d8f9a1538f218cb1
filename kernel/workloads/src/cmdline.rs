//! The kernel command line (`-append`), parsed into typed options.
//!
//! Options are space-separated `key=value` words. Bad input never stops the
//! boot: an unknown option, a value that does not parse, or a workload
//! parameter its declaration (`workloads::params`) does not accept produces
//! one `cmdline: ...` line naming it and saying what is used instead, and an
//! `@fw cmdline_problem` record ([`report_problem`]) that the harness refuses
//! to take figures from.
//!
//! The parsing is the platform's as much as the workloads': every platform
//! (the kernel, the simulator) takes the same options with the same words.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::{params, params::Param, params::Spec};

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
    const ALL: [(&'static str, Crash); 5] = [
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

/// A workload and its parameters, e.g. `workload=pipe,rounds=1000,mode=cross`.
///
/// Invariant: every parameter in `params` is declared by `spec` and its
/// value is accepted by the declaration (`parse` drops the others, with a
/// message), so reading one never fails.
#[derive(Clone, Debug)]
pub struct Workload {
    pub name: String,
    pub spec: &'static Spec,
    pub params: Vec<(String, String)>,
    /// The run's seed (`seed=`, or the simulator's `--seed`): mixed into
    /// every random stream the workload draws from ([`Workload::rng`]).
    pub seed: u64,
}

impl Workload {
    /// `spec`'s workload with all parameters at their defaults.
    pub fn with_defaults(spec: &'static Spec) -> Workload {
        Workload { name: String::from(spec.name), spec, params: Vec::new(), seed: 0 }
    }

    /// The random stream `stream` of this run: seed 0 gives the stream a
    /// workload drew from before it took a seed (`Rng::new(stream)`), so
    /// runs without `seed=` are the runs they always were; every other seed
    /// gives other draws, the same for the same seed.
    pub fn rng(&self, stream: u64) -> crate::Rng {
        crate::Rng::new(stream ^ self.seed.wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    /// The declaration of `key`. A workload reading a parameter it does not
    /// declare is a bug in that workload, not bad input.
    fn declared(&self, key: &str) -> &'static Param {
        match self.spec.param(key) {
            Some(p) => p,
            None => panic!("workload {} reads parameter {:?}, which its declaration lacks", self.name, key),
        }
    }

    /// The numeric parameter `key`: the value given last, or its declared
    /// default.
    pub fn num(&self, key: &str) -> u64 {
        let p = self.declared(key);
        match self.params.iter().rev().find(|(k, _)| k == key) {
            // validated by `parse`: a number within the declared range
            Some((_, v)) => v.parse().unwrap_or(0),
            None => params::num_default(p, mech::rq::online_mask().weight() as u64),
        }
    }

    /// The word parameter `key`: the value given last, or its declared
    /// default (the first choice).
    pub fn text(&self, key: &str) -> &str {
        let p = self.declared(key);
        match self.params.iter().rev().find(|(k, _)| k == key) {
            Some((_, v)) => v.as_str(),
            None => match p.accepts {
                params::Accepts::Choice(c) => c[0],
                params::Accepts::Num { .. } => "",
            },
        }
    }

    /// The CPU parameter `key`, which must name one of the online `cpus`
    /// (ascending). Its default falls back to the last online CPU quietly
    /// (`cpu=1` on a one-CPU machine is CPU 0, as documented); a CPU given
    /// on the command line that is not online is reported, and the last
    /// online CPU is used.
    pub fn cpu(&self, key: &str, cpus: &[usize]) -> usize {
        let want = self.num(key) as usize;
        let last = cpus.last().copied().unwrap_or(0);
        if cpus.contains(&want) {
            return want;
        }
        if self.params.iter().any(|(k, _)| k == key) {
            report_problem(format_args!(
                "workload={}: {}={} is not an online CPU (online: {} CPUs); using CPU {}",
                self.name,
                key,
                want,
                cpus.len(),
                last
            ));
        }
        last
    }
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

/// One `cpu_capacity=` entry checked once the CPUs are counted (the parser
/// has already checked the capacity's range): `None` when `cpu` is online,
/// else the problem to report (the CPU keeps 1024). The kernel's boot and
/// the simulator both apply the option through it. The problem is a value
/// to display, not a `String`: the kernel's boot formats it straight into
/// its report.
pub fn cpu_capacity_offline(cpu: usize, cap: u64, online: usize) -> Option<CpuCapacityOffline> {
    (cpu >= online).then_some(CpuCapacityOffline { cpu, cap, online })
}

/// A `cpu_capacity=` entry that names a CPU that is not online.
pub struct CpuCapacityOffline {
    cpu: usize,
    cap: u64,
    online: usize,
}

impl core::fmt::Display for CpuCapacityOffline {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let CpuCapacityOffline { cpu, cap, online } = self;
        write!(
            f,
            "cpu_capacity: CPU {cpu} capacity {cap} is not an online CPU (online: {online}) with a capacity of 1..1024; CPU {cpu} keeps 1024"
        )
    }
}

/// Reports one problem with the command line: a `cmdline: ` line for the
/// reader and an `@fw cmdline_problem` record, which `cargo xtask bench`,
/// `compare`, `profile` and `trace` refuse to take figures from.
/// `msg` is anything displayable: a parse's message, or `format_args!` at the
/// call site (no `String` to build first).
pub fn report_problem(msg: impl core::fmt::Display) {
    mech::kprintln!("cmdline: {}", msg);
    mech::record!("cmdline_problem", "msg={}", msg);
}

/// The parsed options and one message per problem found.
pub struct Parsed {
    pub options: Options,
    pub problems: Vec<String>,
}

/// Parses a command line. Never fails: problems are reported and defaults kept.
pub fn parse(line: &str) -> Parsed {
    let mut options = Options::default();
    let mut problems = Vec::new();
    // `sis_util=`/`ni_random=` and `sched_features=` set the same features.
    let mut ledger = sched::balance::config::SwitchLedger::default();
    for word in line.split_ascii_whitespace() {
        let (key, value) = match word.split_once('=') {
            Some((k, v)) => (k, v),
            None => (word, ""),
        };
        let mut problem = String::new();
        match key {
            "log" => match parse_level(value) {
                Some(l) => options.log = l,
                None => {
                    let _ = write!(
                        problem,
                        "log={:?} is not a log level (off, error, warn, info, debug, trace); using log={}",
                        value,
                        level_name(options.log)
                    );
                }
            },
            "hz" => match parse_range(value, 10, 10_000) {
                Some(v) => options.hz = v,
                None => {
                    let _ = write!(problem, "hz={:?} is not a number from 10 to 10000; using hz={}", value, options.hz);
                }
            },
            "selfcheck_ticks" => match parse_range(value, 1, 1000) {
                Some(v) => options.selfcheck_ticks = v,
                None => {
                    let _ = write!(
                        problem,
                        "selfcheck_ticks={:?} is not a number from 1 to 1000; using selfcheck_ticks={}",
                        value, options.selfcheck_ticks
                    );
                }
            },
            "test_crash" => match Crash::ALL.iter().find(|(n, _)| *n == value) {
                Some((_, c)) => options.test_crash = Some(*c),
                None => {
                    let _ = write!(
                        problem,
                        "test_crash={:?} is not one of page_fault, divide_error, invalid_opcode, panic, oom; {}",
                        value,
                        if options.test_crash.is_some() { "keeping the earlier test_crash" } else { "no crash" }
                    );
                }
            },
            "sched_features" => {
                let mut f = options.sched_features;
                match f.apply(&value.replace(',', " ")) {
                    Ok(()) => {
                        options.sched_features = f;
                        for tok in value.split(',') {
                            let (name, on) = tok.strip_prefix("NO_").map_or((tok, true), |n| (n, false));
                            if let Some(msg) = sched::Feature::from_name(name).and_then(|feat| ledger.note(feat, on, false)) {
                                problems.push(msg);
                            }
                        }
                    }
                    Err(e) => {
                        let _ = write!(
                            problem,
                            "sched_features: unknown feature {:?}; keeping the features as they were",
                            e.name()
                        );
                    }
                }
            }
            "trace" => match value.parse::<usize>() {
                Ok(0) => options.trace = 0,
                Ok(1) => options.trace = 16384,
                Ok(n) if n <= 1 << 20 => options.trace = n,
                _ => {
                    let _ = write!(
                        problem,
                        "trace={:?} is not 0, 1 or an event count up to 1048576; using trace={}",
                        value, options.trace
                    );
                }
            },
            "nohz" => match value {
                "on" => options.nohz = true,
                "off" => options.nohz = false,
                _ => {
                    let _ = write!(problem, "nohz={:?} is not on or off; using nohz={}", value, if options.nohz { "on" } else { "off" });
                }
            },
            "idle" => match value {
                "halt" => (options.idle_poll, options.idle_last_polls) = (false, false),
                "poll" => (options.idle_poll, options.idle_last_polls) = (true, false),
                "last_polls" => (options.idle_poll, options.idle_last_polls) = (false, true),
                _ => {
                    let _ = write!(
                        problem,
                        "idle={:?} is not halt, poll or last_polls; using idle={}",
                        value,
                        options.idle_name()
                    );
                }
            },
            "phase_ns" => match parse_range(value, 0, 100_000_000) {
                Some(n) => options.phase_ns = n as u64,
                None => {
                    let _ = write!(
                        problem,
                        "phase_ns={:?} is not a number of nanoseconds up to 100000000; using phase_ns={}",
                        value, options.phase_ns
                    );
                }
            },
            "stats_ms" => match parse_range(value, 0, 3_600_000) {
                Some(n) => options.stats_ms = n as u64,
                None => {
                    let _ = write!(
                        problem,
                        "stats_ms={:?} is not a number of milliseconds up to 3600000; using stats_ms={}",
                        value, options.stats_ms
                    );
                }
            },
            "sched_debug" => match value {
                "0" => options.sched_debug = false,
                "1" => options.sched_debug = true,
                _ => {
                    let _ = write!(
                        problem,
                        "sched_debug={:?} is not 0 or 1; using sched_debug={}",
                        value, options.sched_debug as u8
                    );
                }
            },
            "lockdep" => match value {
                "0" => options.lockdep = Some(false),
                "1" => options.lockdep = Some(true),
                _ => {
                    let _ = write!(problem, "lockdep={:?} is not 0 or 1; lockdep follows sched_debug", value);
                    options.lockdep = None;
                }
            },
            "test_lockdep" => match mech::lockdep_provoke::Provoke::ALL.iter().find(|(n, _)| *n == value) {
                Some((_, p)) => options.test_lockdep = Some(*p),
                None => {
                    let _ = write!(problem, "test_lockdep={:?} is not one of inversion, rq_descending, irqs_on; nothing provoked", value);
                    options.test_lockdep = None;
                }
            },
            "nmi_watchdog" => match value {
                "0" => options.nmi_watchdog = false,
                "1" => options.nmi_watchdog = true,
                _ => {
                    let _ = write!(problem, "nmi_watchdog={:?} is not 0 or 1; using nmi_watchdog={}", value, options.nmi_watchdog as u8);
                }
            },
            "watchdog_thresh" => match parse_range(value, 0, 60) {
                Some(n) => options.watchdog_thresh = n,
                None => {
                    let _ = write!(
                        problem,
                        "watchdog_thresh={:?} is not a number of seconds from 0 (off) to 60; using watchdog_thresh={}",
                        value, options.watchdog_thresh
                    );
                }
            },
            "hung_task_timeout_secs" => match parse_range(value, 0, 3600) {
                Some(n) => options.hung_task_timeout_secs = n,
                None => {
                    let _ = write!(
                        problem,
                        "hung_task_timeout_secs={:?} is not a number of seconds from 0 (off) to 3600; using hung_task_timeout_secs={}",
                        value, options.hung_task_timeout_secs
                    );
                }
            },
            "test_watchdog" => match mech::watchdog::Provoke::ALL.iter().find(|(n, _)| *n == value) {
                Some((_, p)) => options.test_watchdog = Some(*p),
                None => {
                    let _ = write!(
                        problem,
                        "test_watchdog={:?} is not one of soft_lockup, hard_lockup, lost_wakeup, lost_sleep; nothing provoked",
                        value
                    );
                    options.test_watchdog = None;
                }
            },
            "workload" => match parse_workload(value, &mut problems) {
                Ok(w) => options.workload = w,
                Err(e) => {
                    let _ = write!(problem, "workload={:?}: {}; running workload={}", value, e, options.workload.name);
                }
            },
            "fault" => match mech::fault::parse_modes(value) {
                Ok(m) => options.fault = m,
                Err(bad) => {
                    let known: Vec<&str> = mech::fault::MODES.iter().map(|(n, _)| *n).collect();
                    let _ = write!(
                        problem,
                        "fault={:?}: {:?} is not a fault mode ({}); injecting {}",
                        value,
                        bad,
                        known.join(", "),
                        if options.fault == 0 { String::from("no faults") } else { mech::fault::names(options.fault) }
                    );
                }
            },
            "fault_seed" => match value.parse::<u64>() {
                Ok(n) => options.fault_seed = Some(n),
                Err(_) => {
                    let _ = write!(
                        problem,
                        "fault_seed={:?} is not a number from 0 to 18446744073709551615; using fault_seed={}",
                        value,
                        options.fault_seed.unwrap_or(mech::fault::DEFAULT_SEED)
                    );
                }
            },
            "seed" => match value.parse::<u64>() {
                Ok(n) => options.seed = Some(n),
                Err(_) => {
                    let _ = write!(
                        problem,
                        "seed={:?} is not a number from 0 to 18446744073709551615; using seed={}",
                        value,
                        options.seed.unwrap_or(0)
                    );
                }
            },
            "cpu_capacity" => match parse_capacities(value) {
                Some(list) => options.cpu_capacity = list,
                None => {
                    let _ = write!(
                        problem,
                        "cpu_capacity={:?} is not a list of CPU:CAPACITY pairs (e.g. 1:512,3:768, capacity 1..1024); all CPUs keep 1024",
                        value
                    );
                }
            },
            _ => match options.balance.apply(key, value) {
                Ok(true) => {
                    // A balancing switch that is a feature acts on the features.
                    if let Some(&(_, feat)) = sched::balance::config::SHARED_SWITCHES.iter().find(|(k, _)| *k == key) {
                        let on = options.balance.features.has(feat);
                        options.sched_features.set(feat, on);
                        if let Some(msg) = ledger.note(feat, on, true) {
                            problems.push(msg);
                        }
                    }
                }
                Ok(false) => {
                    let _ = write!(problem, "unknown option {:?} ignored", word);
                }
                Err(e) => {
                    let _ = write!(problem, "{}; keeping {}={}", e, key, balance_value(&options.balance, key));
                }
            },
        }
        if !problem.is_empty() {
            problems.push(problem);
        }
    }
    if options.fault == 0 {
        if let Some(seed) = options.fault_seed {
            // A seed alone would be silently ignored.
            let mut problem = String::new();
            let _ = write!(problem, "fault_seed={} without fault=: no fault is injected", seed);
            problems.push(problem);
        }
    }
    // One set of features for the policy core and the balancer.
    options.balance.features = options.sched_features;
    // The seed reaches the workload however the words were ordered.
    options.workload.seed = options.seed.unwrap_or(0);
    Parsed { options, problems }
}

/// `workload=NAME[,key=value...]`: the workload, with the parameters its
/// declaration accepts; one message per parameter dropped (added to
/// `problems`). An unknown workload or a parameter that is not `key=value`
/// rejects the whole option; an empty parameter (a trailing or doubled
/// comma, `workload=pipe,rounds=5,`) is no parameter and is skipped.
fn parse_workload(value: &str, problems: &mut Vec<String>) -> Result<Workload, String> {
    let mut parts = value.split(',');
    let name = parts.next().unwrap_or("");
    let Some(spec) = crate::spec(name) else {
        let mut e = String::new();
        let names: Vec<&str> = crate::SPECS.iter().map(|s| s.name).collect();
        let _ = write!(e, "unknown workload (known: {})", names.join(", "));
        return Err(e);
    };
    let mut w = Workload::with_defaults(spec);
    for p in parts.filter(|p| !p.is_empty()) {
        let (k, v) = match p.split_once('=') {
            Some((k, v)) if !k.is_empty() => (k, v),
            _ => {
                let mut e = String::new();
                let _ = write!(e, "parameter {:?} is not key=value", p);
                return Err(e);
            }
        };
        let mut problem = String::new();
        match spec.param(k) {
            None => {
                let keys: Vec<&str> = spec.all().map(|p| p.key).collect();
                let _ = write!(problem, "workload={}: unknown parameter {:?} ({} ", name, k, name);
                if keys.is_empty() {
                    let _ = write!(problem, "takes no parameters); ignored");
                } else {
                    let _ = write!(problem, "takes {}); ignored", keys.join(", "));
                }
            }
            Some(decl) => match params::reject(decl, v) {
                None => w.params.push((String::from(k), String::from(v))),
                Some(why) => {
                    let _ = write!(problem, "workload={}: {}; using {}={}", name, why, k, params::describe_default(decl));
                }
            },
        }
        if !problem.is_empty() {
            problems.push(problem);
        }
    }
    Ok(w)
}

fn parse_capacities(value: &str) -> Option<Vec<(usize, u64)>> {
    value
        .split(',')
        .map(|pair| {
            let (cpu, cap) = pair.split_once(':')?;
            let cap: u64 = cap.parse().ok()?;
            ((1..=1024).contains(&cap)).then_some(())?;
            Some((cpu.parse().ok()?, cap))
        })
        .collect()
}

/// The current value of a balancing switch, for the "keeping" message.
fn balance_value(cfg: &sched::balance::BalanceConfig, key: &str) -> String {
    let mut all = String::new();
    let _ = write!(all, "{}", cfg);
    all.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key).and_then(|r| r.strip_prefix('=')).map(String::from))
        .unwrap_or_else(|| String::from("its default"))
}

/// `log=`'s words, in `LogLevel`'s order.
const LEVELS: [(&str, LogLevel); 6] = [
    ("off", LogLevel::Off),
    ("error", LogLevel::Error),
    ("warn", LogLevel::Warn),
    ("info", LogLevel::Info),
    ("debug", LogLevel::Debug),
    ("trace", LogLevel::Trace),
];

fn level_name(l: LogLevel) -> &'static str {
    LEVELS.iter().find(|(_, v)| *v == l).map_or("info", |(n, _)| n)
}

fn parse_level(v: &str) -> Option<LogLevel> {
    LEVELS.iter().find(|(n, _)| *n == v).map(|(_, l)| *l)
}

fn parse_range(v: &str, lo: u32, hi: u32) -> Option<u32> {
    v.parse::<u32>().ok().filter(|n| (lo..=hi).contains(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `log=` takes Linux's level words into the crate's own `LogLevel`
    /// (the kernel maps it to the `log` crate's filter); a bad word is one
    /// problem naming the level kept.
    #[test]
    fn log_levels_parse_and_a_bad_one_is_reported_with_the_level_kept() {
        for (word, level) in LEVELS {
            let p = parse(&alloc::format!("log={word}"));
            assert_eq!(p.options.log, level);
            assert!(p.problems.is_empty(), "{:?}", p.problems);
        }
        let p = parse("log=debug log=loud");
        assert_eq!(p.options.log, LogLevel::Debug);
        assert_eq!(
            p.problems,
            ["log=\"loud\" is not a log level (off, error, warn, info, debug, trace); using log=debug"]
        );
        assert_eq!(parse("").options.log, LogLevel::Info);
    }

    /// A workload and its parameters parse without the machine: an unknown
    /// parameter is dropped with a message, the rest kept.
    #[test]
    fn a_workload_parses_with_its_declared_parameters() {
        let p = parse("workload=pipe,rounds=5,bogus=1");
        assert_eq!(p.options.workload.name, "pipe");
        assert_eq!(p.options.workload.params, [(String::from("rounds"), String::from("5"))]);
        assert_eq!(p.problems.len(), 1);
        assert!(p.problems[0].starts_with("workload=pipe: unknown parameter \"bogus\""), "{:?}", p.problems);
    }

    /// `seed=` reaches the workload before or after `workload=`; a bad one is
    /// reported with the seed kept; seed 0 draws the streams of a run without
    /// a seed, another seed other numbers, the same seed the same numbers.
    #[test]
    fn the_seed_reaches_the_workload_and_changes_its_draws() {
        let a = parse("seed=7 workload=fserver").options.workload;
        let b = parse("workload=fserver seed=7").options.workload;
        assert_eq!((a.seed, b.seed), (7, 7));
        let none = parse("workload=fserver").options;
        assert_eq!((none.seed, none.workload.seed), (None, 0));
        let bad = parse("seed=x workload=fserver");
        assert_eq!(bad.problems, ["seed=\"x\" is not a number from 0 to 18446744073709551615; using seed=0"]);
        let draws = |w: &Workload| {
            let mut r = w.rng(5);
            (0..4).map(|_| r.next()).collect::<Vec<u64>>()
        };
        let mut plain = crate::Rng::new(5);
        let unseeded: Vec<u64> = (0..4).map(|_| plain.next()).collect();
        assert_eq!(draws(&none.workload), unseeded, "seed 0 is the stream of a run without a seed");
        assert_eq!(draws(&a), draws(&b));
        assert_ne!(draws(&a), unseeded);
    }
}
