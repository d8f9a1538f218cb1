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

use sched::balance::config::SwitchLedger;

/// `format!` for the messages: a `String` written through `core::fmt`, since
/// `alloc::format!`'s prebuilt code needs an unwinder the kernel does not link.
macro_rules! message {
    ($($arg:tt)*) => {{
        let mut s = alloc::string::String::new();
        let _ = core::fmt::Write::write_fmt(&mut s, format_args!($($arg)*));
        s
    }};
}

mod capacity;
mod checks;
mod console;
mod options;
mod scheduling;
mod workload;

pub use capacity::{cpu_capacity_offline, CpuCapacityOffline};
pub use options::{Crash, LogLevel, Options};
pub use workload::Workload;

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

/// A parse under way: the options so far and the problems found.
struct Pass {
    options: Options,
    /// One message per problem, in the order of the words.
    problems: Vec<String>,
    /// Which word last set each feature that two options share
    /// (`sis_util=`/`ni_random=` and `sched_features=`).
    ledger: SwitchLedger,
}

/// What an option group made of one `key=value` word: `None` when the key is
/// not one of its options; else `Ok`, or the problem, the value kept.
type Applied = Option<Result<(), String>>;

/// Parses a command line. Never fails: problems are reported and defaults kept.
///
/// Each word goes to the group of options that knows its key (the console's,
/// the checkers', the workload's, the scheduler's); a key none of them knows
/// is tried as a balancing switch, the policy crate's to accept or refuse.
pub fn parse(line: &str) -> Parsed {
    let mut pass = Pass { options: Options::default(), problems: Vec::new(), ledger: SwitchLedger::default() };
    for word in line.split_ascii_whitespace() {
        let (key, value) = word.split_once('=').unwrap_or((word, ""));
        let applied = console::apply(&mut pass, key, value)
            .or_else(|| checks::apply(&mut pass, key, value))
            .or_else(|| workload::apply(&mut pass, key, value))
            .or_else(|| scheduling::apply(&mut pass, key, value))
            .unwrap_or_else(|| scheduling::apply_switch(&mut pass, key, value, word));
        if let Err(problem) = applied {
            pass.problems.push(problem);
        }
    }
    checks::after_all(&mut pass);
    let mut options = pass.options;
    // One set of features for the policy core and the balancer.
    options.balance.features = options.sched_features;
    // The seed reaches the workload however the words were ordered.
    options.workload.seed = options.seed.unwrap_or(0);
    Parsed { options, problems: pass.problems }
}

/// Stores `parsed` in `slot`, or, when the value did not parse, leaves the
/// slot as it was and returns `why(slot)`, the message naming what is kept.
fn store<T>(slot: &mut T, parsed: Option<T>, why: impl FnOnce(&T) -> String) -> Result<(), String> {
    match parsed {
        Some(v) => {
            *slot = v;
            Ok(())
        }
        None => Err(why(slot)),
    }
}

/// `v` as a number from `lo` to `hi`.
fn parse_range(v: &str, lo: u32, hi: u32) -> Option<u32> {
    v.parse::<u32>().ok().filter(|n| (lo..=hi).contains(n))
}

/// `0` or `1` as a switch.
fn parse_switch(v: &str) -> Option<bool> {
    match v {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::options::LEVELS;
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

    /// `sched_features=`: a Linux feature fairway does not implement is
    /// refused by name, in either form, and the other tokens apply; an
    /// unknown name rejects the whole option.
    #[test]
    fn sched_features_refuses_a_linux_only_name_and_applies_the_rest() {
        let p = parse("sched_features=NO_DELAY_DEQUEUE,HRTICK,NO_TTWU_QUEUE,NO_RT_PUSH_IPI");
        let f = p.options.sched_features;
        assert!(!f.has(sched::Feature::DelayDequeue) && !f.has(sched::Feature::TtwuQueue), "{f}");
        assert_eq!(p.options.balance.features, f, "one set for the policy core and the balancer");
        assert_eq!(p.problems.len(), 2, "{:?}", p.problems);
        assert_eq!(
            p.problems[0],
            "sched_features: HRTICK is a Linux feature fairway does not implement (slices end at the scheduler \
             tick (hz=), with no high-resolution timer per slice); ignoring HRTICK, the other features apply"
        );
        assert!(p.problems[1].starts_with("sched_features: RT_PUSH_IPI is a Linux feature fairway does not implement (there is no real-time class); ignoring NO_RT_PUSH_IPI"));

        let p = parse("sched_features=NO_DELAY_DEQUEUE,HRTICK,BOGUS");
        assert_eq!(p.options.sched_features, sched::Features::default(), "nothing applied");
        assert_eq!(p.problems, ["sched_features: unknown feature \"BOGUS\"; keeping the features as they were"]);
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

    /// Every option's problem message for a value it refuses: what the
    /// console says and what the harness matches, word for word, with the
    /// value the option keeps.
    #[test]
    fn every_option_says_what_was_wrong_and_what_it_keeps() {
        let cases: &[(&str, &[&str])] = &[
            ("hz=9", &["hz=\"9\" is not a number from 10 to 10000; using hz=1000"]),
            ("selfcheck_ticks=0", &["selfcheck_ticks=\"0\" is not a number from 1 to 1000; using selfcheck_ticks=10"]),
            ("trace=x", &["trace=\"x\" is not 0, 1 or an event count up to 1048576; using trace=0"]),
            ("phase_ns=-1", &["phase_ns=\"-1\" is not a number of nanoseconds up to 100000000; using phase_ns=0"]),
            ("stats_ms=3600001", &["stats_ms=\"3600001\" is not a number of milliseconds up to 3600000; using stats_ms=0"]),
            ("test_crash=x", &["test_crash=\"x\" is not one of page_fault, divide_error, invalid_opcode, panic, oom; no crash"]),
            ("sched_debug=2", &["sched_debug=\"2\" is not 0 or 1; using sched_debug=0"]),
            ("lockdep=2", &["lockdep=\"2\" is not 0 or 1; lockdep follows sched_debug"]),
            ("test_lockdep=x", &["test_lockdep=\"x\" is not one of inversion, rq_descending, irqs_on; nothing provoked"]),
            ("nmi_watchdog=2", &["nmi_watchdog=\"2\" is not 0 or 1; using nmi_watchdog=0"]),
            ("watchdog_thresh=61", &["watchdog_thresh=\"61\" is not a number of seconds from 0 (off) to 60; using watchdog_thresh=2"]),
            ("hung_task_timeout_secs=3601", &["hung_task_timeout_secs=\"3601\" is not a number of seconds from 0 (off) to 3600; using hung_task_timeout_secs=5"]),
            ("test_watchdog=x", &["test_watchdog=\"x\" is not one of soft_lockup, hard_lockup, lost_wakeup, lost_sleep; nothing provoked"]),
            ("fault=x", &["fault=\"x\": \"x\" is not a fault mode (ipi_delay, ipi_reorder, spurious_wake, preempt_points, cpu_stall, idle_irqs_off); injecting no faults"]),
            ("fault_seed=x", &["fault_seed=\"x\" is not a number from 0 to 18446744073709551615; using fault_seed=1"]),
            ("fault_seed=3", &["fault_seed=3 without fault=: no fault is injected"]),
            ("seed=x", &["seed=\"x\" is not a number from 0 to 18446744073709551615; using seed=0"]),
            ("workload=nosuch", &["workload=\"nosuch\": unknown workload (known: demo, shares, storm, latency, affinity, pipe, yield, regs, overflow, hackbench, schbench, ebizzy, tbench, fserver, spread, prodcons, idleperiods, pipes, oltp, wakeplace, renice, utilest, torture, help); running workload=demo"]),
            ("workload=pipe,rounds", &["workload=\"pipe,rounds\": parameter \"rounds\" is not key=value; running workload=demo"]),
            ("workload=pipe,rounds=x", &["workload=pipe: rounds=\"x\" is not a number from 1 to 100000000; using rounds=100000"]),
            ("nohz=x", &["nohz=\"x\" is not on or off; using nohz=on"]),
            ("idle=x", &["idle=\"x\" is not halt, poll or last_polls; using idle=halt"]),
            ("cpu_capacity=1:0", &["cpu_capacity=\"1:0\" is not a list of CPU:CAPACITY pairs (e.g. 1:512,3:768, capacity 1..1024); all CPUs keep 1024"]),
            ("avg_idle_clamp=x", &["balance config: bad value `x` for `avg_idle_clamp` (accepted: snap|avg|delta); keeping avg_idle_clamp=avg"]),
            ("bogus", &["unknown option \"bogus\" ignored"]),
        ];
        for (line, problems) in cases {
            assert_eq!(parse(line).problems, *problems, "{line}");
        }
    }
}
