//! `BalanceConfig`: every balancing variant the project's experiments
//! compare, parsed from the kernel command line and printed at boot.
//!
//! # Keys (command-line `key=value` tokens; other tokens are ignored)
//!
//! | key | values (default first) | meaning |
//! |---|---|---|
//! | `avg_idle_clamp` | `avg`, `snap`, `delta` | [`AvgIdleClamp`] |
//! | `avg_idle_ceiling` | `200`, `150` | ceiling in percent of `max_idle_balance_cost` (2× is Linux's; 1.5× is the project's variant) |
//! | `sis_prop` | `off`, `legacy`, `per_cpu_cost`, `altscan`, `aged` | [`SisProp`] |
//! | `sis_util` | `on`, `off` | the SIS_UTIL feature |
//! | `wake_balance` | `linux`, `idle_only`, `off`, `2005`, `2005_cpu_off`, `2005_none`, `2005_idle_gate` | [`WakeBalance`] |
//! | `wake_affine` | `on`, `off` | try pulling wakees toward the waker |
//! | `ni_random` | `on`, `off` | the NI_RANDOM feature |
//! | `newidle` | `on`, `off` | newidle balancing at all |
//! | `group_capacity` | `util`, `factor` | [`GroupCapacity`]: how a group's task capacity is judged |
//! | `newidle_gate` | `cost`, `migration_cost` | what `avg_idle` must reach for a newidle balance: the lowest domain's measured `max_newidle_lb_cost` (since 3.13, default) or the fixed `sysctl_sched_migration_cost` (before 3.13, the setting of the 2013 avg_idle thread) |
//!
//! `Display` prints every key in this order, space-separated, in a form
//! `apply_cmdline` accepts back.

use alloc::string::String;
use core::fmt::Write;
use core::fmt;
use core::str::FromStr;

use crate::features::{Feature, Features};

pub use super::avg_idle::AvgIdleClamp;

/// `sysctl_sched_nr_migrate` / `SCHED_NR_MIGRATE_BREAK`: the most tasks one balancing pass
/// examines, and how many it examines between two lock breaks. Here, not in `migrate.rs` which
/// uses it, because the defaults below need it and `migrate.rs` sits above this module.
pub const SCHED_NR_MIGRATE_BREAK: u32 = 32;

/// SIS_PROP scan-depth accounting (reference §4.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SisProp {
    /// Not used (v6.7+, and the default since 6.0).
    #[default]
    Off,
    /// v4.x–5.13 (the 2021 thread's `baseline`): `avg_idle/512`, span
    /// scaling, min 4; whole-scan cost averaged only for scans that were
    /// not cut short.
    Legacy,
    /// Peter Zijlstra's RFC 1/5 of Dec 2020 (the thread's `acctscan`): the
    /// same depth, a scan may examine `nr` CPUs, and every scan, truncated
    /// ones too, folds its time divided by the CPUs it examined.
    PerCpuCost,
    /// Mel Gorman's change on top of it, as posted on 2021-01-08 (the
    /// thread's `altscan`): `nr = (avg_idle/512) / (avg_scan_cost + 1)`,
    /// min 4, without the span scaling; the loop counter starts at 1 and a
    /// scan fails when it reaches `nr` (at most `nr - 1` CPUs examined); a
    /// scan that finds an idle CPU shifts the counter left by 2 (`loops <<=
    /// 2`) before its time is divided by it, so a success folds a quarter
    /// of its per-CPU cost.
    Altscan,
    /// 5.14 (94aafc3ee31d "Age the average idle time"): `wake_avg_idle`
    /// halved per jiffy since the wakeup and consumed by scans.
    Aged,
}

/// Wakeup migration policy (reference §4.1, §4.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum WakeBalance {
    /// Today's Linux: wake_affine, then select_idle_sibling.
    #[default]
    Linux,
    /// The 2005 rule (Ingo Molnar, patch #3): consider moving the wakee only
    /// when the waking CPU or one of its SMT siblings is idle; otherwise
    /// wake on the previous CPU or, as the 2005 `wake_idle` did there, on an
    /// idle allowed SMT sibling of a busy previous CPU.
    IdleOnly,
    /// No wake balancing: always the previous CPU (if still allowed).
    Off,
    /// 2.6.12's `try_to_wake_up` (the 2005 thread's baseline, Ken Chen's
    /// kernel): in the lowest domain of the waking CPU that holds the
    /// wakee's previous CPU, `SD_WAKE_AFFINE` pulls the wakee to the waking
    /// CPU when that is cheap by `imbalance_pct`, else `SD_WAKE_BALANCE`
    /// does when the previous CPU is loaded enough ("passive balancing");
    /// then `wake_idle`: the chosen CPU if idle, else the first idle CPU of
    /// the domains with `SD_WAKE_IDLE` above it. Flags as 2.6.12's generic
    /// topology had them: SMT siblings AFFINE and IDLE; the CPU domain (MC,
    /// PKG) AFFINE, IDLE and BALANCE; NUMA levels BALANCE. Loads are
    /// runnable tasks × 1024 (the O(1) scheduler's `SCHED_LOAD_SCALE` per
    /// task, without its `cpu_load[]` averages).
    V2005,
    /// Ken Chen's first change: `SD_WAKE_AFFINE` and `SD_WAKE_BALANCE` off
    /// in the CPU domain (his diff to `SD_CPU_INIT`; SMT siblings keep
    /// AFFINE); the rest as [`WakeBalance::V2005`].
    V2005CpuOff,
    /// Ingo Molnar's removal ("deleting all the code in try_to_wake_up()
    /// pertain to load balancing", Ken's further +0.2%): the previous CPU
    /// through 2.6.12's `wake_idle`.
    V2005None,
    /// Ingo Molnar's patch #3 on [`WakeBalance::V2005`]: no wake balancing
    /// unless the waking CPU is idle or `wake_idle` finds it an idle
    /// sibling (`!idle_cpu(this_cpu) && this_cpu == wake_idle(this_cpu, p)`
    /// goes to the previous CPU), the rule Ken measured at +2.2%.
    V2005IdleGate,
}

/// How the balancer judges how many tasks a group holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum GroupCapacity {
    /// 3.18 on (Vincent Guittot's consolidation): a group holds as many
    /// tasks as it has CPUs, and its utilisation against its capacity
    /// tells whether it is full (`group_has_capacity`, `group_is_overloaded`).
    #[default]
    Util,
    /// Before 3.18: `sg_capacity_factor()`, the group's capacity as a number
    /// of task slots by rounding (`min(cpus / ceil(1024 · cpus /
    /// capacity_orig), round(capacity / 1024))`, `fix_small_capacity` for an
    /// SMT domain's single threads), with `smt_gain` (each of a core's `w`
    /// SMT threads has `1178 / w` of the capacity: 589 for two); a group is
    /// overloaded when it runs more tasks than slots and has spare capacity
    /// when fewer. The rest of the balancer stays v6.19's.
    Factor,
}

impl WakeBalance {
    /// One of the 2005 rules (2.6.12's `try_to_wake_up` and its changes).
    pub const fn is_2005(self) -> bool {
        matches!(self, WakeBalance::V2005 | WakeBalance::V2005CpuOff | WakeBalance::V2005None | WakeBalance::V2005IdleGate)
    }
}

/// What closes the newidle gate (see the module table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewidleGate {
    /// v6.19: nothing overloaded (`rd->overloaded`, 3.16 on), or `avg_idle <
    /// max_newidle_lb_cost` of the lowest domain (3.13 on); the walk stops
    /// where its cost so far and the next domain's would exceed `avg_idle`,
    /// and the walks' costs raise `max_idle_balance_cost`, so the ceiling.
    Cost,
    /// The 3.10 rule the 2013 avg_idle thread measured: `avg_idle <
    /// sysctl_sched_migration_cost` alone closes it (nothing else: a CPU
    /// tries even when no runqueue has a second task), the walk goes up
    /// every domain until it pulls, and the ceiling stays a multiple of the
    /// migration cost (no walk cost raises it).
    MigrationCost,
}

impl NewidleGate {
    /// Whether this is the 3.10 rule ([`NewidleGate::MigrationCost`]): no
    /// overload test, no cost stop in the walk, no cost tracking.
    pub const fn is_2013(self) -> bool {
        matches!(self, NewidleGate::MigrationCost)
    }
}

/// All switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BalanceConfig {
    /// avg_idle clamp rule.
    pub avg_idle_clamp: AvgIdleClamp,
    /// avg_idle ceiling, percent of max_idle_balance_cost (150 or 200).
    pub avg_idle_ceiling_pct: u32,
    /// SIS_PROP variant.
    pub sis_prop: SisProp,
    /// Wake balancing mode.
    pub wake_balance: WakeBalance,
    /// wake_affine on/off.
    pub wake_affine: bool,
    /// Newidle balancing on/off.
    pub newidle: bool,
    /// The newidle gate's threshold.
    pub newidle_gate: NewidleGate,
    /// How a group's task capacity is judged.
    pub group_capacity: GroupCapacity,
    /// Feature bits read here: WA_IDLE, WA_WEIGHT, WA_BIAS, SIS_UTIL,
    /// NI_RANDOM, LB_MIN, PLACE_LAG.
    pub features: Features,
    /// `sysctl_sched_migration_cost` (ns).
    pub migration_cost: u64,
    /// `sysctl_sched_nr_migrate`.
    pub nr_migrate: u32,
}

impl Default for BalanceConfig {
    fn default() -> Self {
        BalanceConfig {
            avg_idle_clamp: AvgIdleClamp::Avg,
            avg_idle_ceiling_pct: 200,
            sis_prop: SisProp::Off,
            wake_balance: WakeBalance::Linux,
            wake_affine: true,
            newidle: true,
            newidle_gate: NewidleGate::Cost,
            group_capacity: GroupCapacity::Util,
            features: Features::default(),
            migration_cost: super::avg_idle::SYSCTL_SCHED_MIGRATION_COST,
            nr_migrate: SCHED_NR_MIGRATE_BREAK,
        }
    }
}

/// A bad `key=value`: names the key, the value and the accepted values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The key.
    pub key: &'static str,
    /// The rejected value.
    pub value: String,
    /// What would have been accepted.
    pub accepted: &'static str,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "balance config: bad value `{}` for `{}` (accepted: {})", self.value, self.key, self.accepted)
    }
}

fn pick<T: Copy>(key: &'static str, value: &str, table: &[(&str, T)], accepted: &'static str) -> Result<T, ConfigError> {
    table
        .iter()
        .find(|(n, _)| *n == value)
        .map(|(_, v)| *v)
        .ok_or_else(|| ConfigError { key, value: String::from(value), accepted })
}

const ON_OFF: &[(&str, bool)] = &[("on", true), ("off", false), ("1", true), ("0", false)];
const CLAMPS: &[(&str, AvgIdleClamp)] = &[("snap", AvgIdleClamp::Snap), ("avg", AvgIdleClamp::Avg), ("delta", AvgIdleClamp::Delta)];
const CEILINGS: &[(&str, u32)] = &[("200", 200), ("150", 150)];
const GATES: &[(&str, NewidleGate)] = &[("cost", NewidleGate::Cost), ("migration_cost", NewidleGate::MigrationCost)];
const GROUP_CAPACITY: &[(&str, GroupCapacity)] = &[("util", GroupCapacity::Util), ("factor", GroupCapacity::Factor)];
const SIS: &[(&str, SisProp)] = &[
    ("off", SisProp::Off),
    ("legacy", SisProp::Legacy),
    ("per_cpu_cost", SisProp::PerCpuCost),
    ("altscan", SisProp::Altscan),
    ("aged", SisProp::Aged),
];
const WAKE: &[(&str, WakeBalance)] = &[
    ("linux", WakeBalance::Linux),
    ("idle_only", WakeBalance::IdleOnly),
    ("off", WakeBalance::Off),
    ("2005", WakeBalance::V2005),
    ("2005_cpu_off", WakeBalance::V2005CpuOff),
    ("2005_none", WakeBalance::V2005None),
    ("2005_idle_gate", WakeBalance::V2005IdleGate),
];

fn name_of<T: PartialEq + Copy>(table: &[(&'static str, T)], v: T) -> &'static str {
    table.iter().find(|(_, x)| *x == v).map_or("?", |(n, _)| n)
}

impl BalanceConfig {
    /// Applies one `key=value`. `Ok(false)` if the key is not ours.
    pub fn apply(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        match key {
            "avg_idle_clamp" => self.avg_idle_clamp = pick("avg_idle_clamp", value, CLAMPS, "snap|avg|delta")?,
            "avg_idle_ceiling" => self.avg_idle_ceiling_pct = pick("avg_idle_ceiling", value, CEILINGS, "200|150")?,
            "sis_prop" => self.sis_prop = pick("sis_prop", value, SIS, "off|legacy|per_cpu_cost|altscan|aged")?,
            "sis_util" => self.features.set(Feature::SisUtil, pick("sis_util", value, ON_OFF, "on|off")?),
            "wake_balance" => self.wake_balance = pick("wake_balance", value, WAKE, "linux|idle_only|off|2005|2005_cpu_off|2005_none|2005_idle_gate")?,
            "wake_affine" => self.wake_affine = pick("wake_affine", value, ON_OFF, "on|off")?,
            "ni_random" => self.features.set(Feature::NiRandom, pick("ni_random", value, ON_OFF, "on|off")?),
            "newidle" => self.newidle = pick("newidle", value, ON_OFF, "on|off")?,
            "newidle_gate" => self.newidle_gate = pick("newidle_gate", value, GATES, "cost|migration_cost")?,
            "group_capacity" => self.group_capacity = pick("group_capacity", value, GROUP_CAPACITY, "util|factor")?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Applies every `key=value` token of a command line that names one of
    /// our keys; stops at the first bad value (earlier tokens stay applied).
    pub fn apply_cmdline(&mut self, cmdline: &str) -> Result<(), ConfigError> {
        for tok in cmdline.split_whitespace() {
            if let Some((k, v)) = tok.split_once('=') {
                self.apply(k, v)?;
            }
        }
        Ok(())
    }
}

impl FromStr for BalanceConfig {
    type Err = ConfigError;
    /// The defaults with [`BalanceConfig::apply_cmdline`] applied.
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let mut c = BalanceConfig::default();
        c.apply_cmdline(s)?;
        Ok(c)
    }
}

impl fmt::Display for BalanceConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on = |b: bool| if b { "on" } else { "off" };
        write!(
            f,
            "avg_idle_clamp={} avg_idle_ceiling={} sis_prop={} sis_util={} wake_balance={} wake_affine={} ni_random={} newidle={} newidle_gate={} group_capacity={}",
            self.avg_idle_clamp.name(),
            self.avg_idle_ceiling_pct,
            name_of(SIS, self.sis_prop),
            on(self.features.has(Feature::SisUtil)),
            name_of(WAKE, self.wake_balance),
            on(self.wake_affine),
            on(self.features.has(Feature::NiRandom)),
            on(self.newidle),
            name_of(GATES, self.newidle_gate),
            name_of(GROUP_CAPACITY, self.group_capacity),
        )
    }
}

/// The features that a balancing switch and `sched_features=` both set:
/// `sis_util=` is SIS_UTIL, `ni_random=` is NI_RANDOM.
pub const SHARED_SWITCHES: [(&str, Feature); 2] = [("sis_util", Feature::SisUtil), ("ni_random", Feature::NiRandom)];

/// What each way set each of [`SHARED_SWITCHES`] to last on a command
/// line, so that a contradiction between the two ways is reported. Both
/// ways act, in command-line order: the later one wins, like any option
/// given twice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchLedger {
    /// Per shared feature: [by `sched_features=`, by the balancing switch].
    last: [[Option<bool>; 2]; 2],
}

impl SwitchLedger {
    /// Records that `f` was set to `on`, by its balancing switch
    /// (`by_switch`) or by `sched_features=`. Returns the message to report
    /// when the other way set it the other way earlier; features that are
    /// not shared are ignored.
    pub fn note(&mut self, f: Feature, on: bool, by_switch: bool) -> Option<String> {
        let i = SHARED_SWITCHES.iter().position(|&(_, g)| g == f)?;
        let key = SHARED_SWITCHES[i].0;
        self.last[i][by_switch as usize] = Some(on);
        let other = self.last[i][!by_switch as usize]?;
        if other == on {
            return None;
        }
        let onoff = |b: bool| if b { "on" } else { "off" };
        let no = |b: bool| if b { "" } else { "NO_" };
        let name = f.name();
        let mut m = String::new();
        // (`write!` into a String: `format!` would link the prebuilt alloc's unwinding.)
        let _ = if by_switch {
            write!(m, "{key}={} contradicts sched_features={}{name} given earlier", onoff(on), no(other))
        } else {
            write!(m, "sched_features={}{name} contradicts {key}={} given earlier", no(on), onoff(other))
        };
        let _ = write!(m, "; the later one wins: {key}={} ({}{name})", onoff(on), no(on));
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn switch_ledger_reports_contradictions_and_the_later_wins() {
        let mut l = SwitchLedger::default();
        assert_eq!(l.note(Feature::SisUtil, false, true), None, "first setter");
        assert_eq!(l.note(Feature::SisUtil, false, false), None, "agreeing");
        assert_eq!(
            l.note(Feature::SisUtil, true, false).as_deref(),
            Some("sched_features=SIS_UTIL contradicts sis_util=off given earlier; the later one wins: sis_util=on (SIS_UTIL)")
        );
        assert_eq!(
            l.note(Feature::SisUtil, false, true).as_deref(),
            Some("sis_util=off contradicts sched_features=SIS_UTIL given earlier; the later one wins: sis_util=off (NO_SIS_UTIL)")
        );
        assert_eq!(l.note(Feature::SisUtil, true, true), None, "agrees with sched_features=SIS_UTIL");
        assert_eq!(l.note(Feature::NiRandom, true, false), None);
        assert!(l.note(Feature::NiRandom, false, true).unwrap().starts_with("ni_random=off contradicts sched_features=NI_RANDOM"));
        assert_eq!(l.note(Feature::WaIdle, false, true), None, "not a shared feature");
    }

    #[test]
    fn parse_display_round_trip_and_errors() {
        let c: BalanceConfig = "console=ttyS0 avg_idle_clamp=delta avg_idle_ceiling=150 sis_prop=aged wake_balance=idle_only wake_affine=off sis_util=off".parse().unwrap();
        assert_eq!(c.avg_idle_clamp, AvgIdleClamp::Delta);
        assert_eq!(c.avg_idle_ceiling_pct, 150);
        assert_eq!(c.sis_prop, SisProp::Aged);
        assert_eq!(c.wake_balance, WakeBalance::IdleOnly);
        assert!(!c.wake_affine);
        assert!(!c.features.has(Feature::SisUtil));
        let s = c.to_string();
        assert_eq!(s.parse::<BalanceConfig>().unwrap(), c);
        assert_eq!(
            BalanceConfig::default().to_string(),
            "avg_idle_clamp=avg avg_idle_ceiling=200 sis_prop=off sis_util=on wake_balance=linux wake_affine=on ni_random=on newidle=on newidle_gate=cost group_capacity=util"
        );
        let e = "avg_idle_clamp=clamp".parse::<BalanceConfig>().unwrap_err();
        assert_eq!(e.to_string(), "balance config: bad value `clamp` for `avg_idle_clamp` (accepted: snap|avg|delta)");
        let e = "wake_balance=2006".parse::<BalanceConfig>().unwrap_err();
        assert_eq!(e.key, "wake_balance");
        assert!(e.to_string().contains("2005_idle_gate"), "{e}");
        assert_eq!("wake_balance=2005_cpu_off".parse::<BalanceConfig>().unwrap().wake_balance, WakeBalance::V2005CpuOff);
        assert!("avg_idle_ceiling=175".parse::<BalanceConfig>().is_err());
    }
}
