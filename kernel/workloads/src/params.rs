//! The parameters each workload takes (`workload=NAME,key=value,...`),
//! declared once beside the workload's code: name, accepted values, default
//! and a line of help.
//!
//! The command line is checked against these declarations when it is parsed
//! (`cmdline::parse`): an unknown key, a value that is no number, a number
//! out of its range or a word that is not one of its choices is reported on
//! the console (`cmdline: ...` and `@fw cmdline_problem`) and the default is
//! used, as for every other option. A workload reads its parameters through
//! [`crate::cmdline::Workload::num`] and [`crate::cmdline::Workload::text`],
//! which know the defaults from here, so a default is written in one place.

/// What a parameter accepts.
#[derive(Clone, Copy, Debug)]
pub enum Accepts {
    /// A whole number in `min..=max`.
    Num { min: u64, max: u64, default: NumDefault },
    /// One of these words; the first is the default.
    Choice(&'static [&'static str]),
}

/// The default of a numeric parameter.
#[derive(Clone, Copy, Debug)]
pub enum NumDefault {
    Fixed(u64),
    /// This many times the number of online CPUs (known only after boot),
    /// kept within the parameter's range.
    PerCpu(u64),
}

/// One parameter of a workload.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    pub key: &'static str,
    pub accepts: Accepts,
    /// What it sets, for messages and `workload=help`.
    pub help: &'static str,
}

/// A workload's name and its parameters.
#[derive(Debug)]
pub struct Spec {
    pub name: &'static str,
    /// What it runs, one line, for `workload=help`.
    pub about: &'static str,
    pub params: &'static [&'static [Param]],
}

impl Spec {
    /// Every parameter, the workload's own and the shared ones it takes.
    pub fn all(&self) -> impl Iterator<Item = &'static Param> {
        self.params.iter().flat_map(|group| group.iter())
    }

    /// The declaration of `key`, if this workload takes it.
    pub fn param(&self, key: &str) -> Option<&'static Param> {
        self.all().find(|p| p.key == key)
    }
}

/// A number parameter with a fixed default.
pub const fn num(key: &'static str, min: u64, max: u64, default: u64, help: &'static str) -> Param {
    Param { key, accepts: Accepts::Num { min, max, default: NumDefault::Fixed(default) }, help }
}

/// A number parameter whose default is `per_cpu` times the online CPUs.
pub const fn num_per_cpu(key: &'static str, min: u64, max: u64, per_cpu: u64, help: &'static str) -> Param {
    Param { key, accepts: Accepts::Num { min, max, default: NumDefault::PerCpu(per_cpu) }, help }
}

/// A word parameter; `choices[0]` is the default.
pub const fn choice(key: &'static str, choices: &'static [&'static str], help: &'static str) -> Param {
    Param { key, accepts: Accepts::Choice(choices), help }
}

/// Longest run any timed workload accepts (ms): ten minutes.
pub const MAX_MS: u64 = 600_000;
/// Most threads (or pairs, groups' members, clients) a workload may start:
/// each takes a 32 KiB stack. The stack arena holds this many (and the
/// kernel's own) when memory allows: from about 390 MiB (QEMU's `-m`).
pub const MAX_THREADS: u64 = 1024;

/// The highest CPU number a parameter may name (whether that CPU is online
/// is checked when the workload starts: `Workload::cpu`).
pub const MAX_CPU: u64 = mech::MAX_CPUS as u64 - 1;

/// Taken by every benchmark workload that starts a crew (`crew::place`).
pub const SPREAD: &[Param] = &[num("spread", 0, 1, 0, "1: start thread i on CPU i mod CPUs instead of where fork balancing puts it")];

/// Taken by the workloads whose work is calibrated loops (`schbench::calibrate`).
pub const CALIBRATION: &[Param] =
    &[num("loops_per_us", 0, 1_000_000, 0, "loops of calibrated work per microsecond (0: measure at start)")];

/// The working set each of a workload's threads declares
/// (`mech::platform::set_working_set`), in KiB, with the workload's own
/// default: the memory its loop touches each time it runs. Only the
/// simulator's cache model reads it (docs/SIMULATOR.md, "The hardware cost
/// model"); on real hardware the caches see what the threads really touch.
pub const fn wss_kb(default: u64) -> Param {
    num("wss_kb", 0, 1 << 20, default, "working set of each thread (KiB): what the simulator's caches refill when a thread runs where its data is not")
}

/// How `value` fails `p`, or `None` when it is accepted.
pub fn reject(p: &Param, value: &str) -> Option<alloc::string::String> {
    use core::fmt::Write;
    let mut why = alloc::string::String::new();
    match p.accepts {
        Accepts::Num { min, max, .. } => match value.parse::<u64>() {
            Ok(v) if (min..=max).contains(&v) => return None,
            _ => {
                let _ = write!(why, "{}={:?} is not a number from {} to {}", p.key, value, min, max);
            }
        },
        Accepts::Choice(choices) => {
            if choices.contains(&value) {
                return None;
            }
            let _ = write!(why, "{}={:?} is not one of {}", p.key, value, choices.join(", "));
        }
    }
    Some(why)
}

/// `default` as the message shows it: `100000`, `same`, or `2 per CPU`.
pub fn describe_default(p: &Param) -> alloc::string::String {
    use alloc::string::ToString;
    match p.accepts {
        Accepts::Num { default: NumDefault::Fixed(v), .. } => v.to_string(),
        Accepts::Num { default: NumDefault::PerCpu(1), .. } => "one per CPU".to_string(),
        Accepts::Num { default: NumDefault::PerCpu(k), .. } => {
            let mut s = alloc::string::String::new();
            let _ = core::fmt::Write::write_fmt(&mut s, format_args!("{} per CPU", k));
            s
        }
        Accepts::Choice(c) => c[0].to_string(),
    }
}

/// The default of a numeric parameter on `cpus` online CPUs.
pub fn num_default(p: &Param, cpus: u64) -> u64 {
    match p.accepts {
        Accepts::Num { min, max, default: NumDefault::Fixed(v) } => v.clamp(min, max),
        Accepts::Num { min, max, default: NumDefault::PerCpu(k) } => k.saturating_mul(cpus).clamp(min, max),
        Accepts::Choice(_) => 0,
    }
}

/// `workload=help`: every workload and its parameters, for the reader, and
/// one `@fw workload_param` record per parameter (the README's tables are
/// checked against these by the `workload-help` scenario).
pub fn print_help(specs: &[Spec]) {
    use core::fmt::Write;
    mech::kprintln!("workloads (workload=NAME[,key=value...]):");
    for spec in specs {
        mech::kprintln!("  {:<10} {}", spec.name, spec.about);
        for p in spec.all() {
            let mut accepts = alloc::string::String::new();
            match p.accepts {
                Accepts::Num { min, max, .. } => {
                    let _ = write!(accepts, "{}={}..{}", p.key, min, max);
                }
                Accepts::Choice(c) => {
                    let _ = write!(accepts, "{}={}", p.key, c.join("|"));
                }
            }
            let default = describe_default(p);
            mech::kprintln!("  {:<10}   {:<26} {} (default {})", "", accepts, p.help, default);
            mech::record!("workload_param", "workload={} key={} accepts={} default={}", spec.name, p.key, &accepts[p.key.len() + 1..], default.replace(' ', "_"));
        }
    }
}
