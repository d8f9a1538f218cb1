//! Hardware profiles: the figures of one machine's caches, interconnect,
//! interrupts and idle states, by name (`--hw NAME[,KEY=VALUE...]`).
//!
//! `icount` is today's machine of the cost model (QEMU's TCG under
//! `-icount`: no caches, one vCPU at a time, no idle states): every figure
//! 0, so a run under it is the run the QEMU cross-check compares. The
//! others carry the figures of the debates' machines; where each comes from
//! (a paper, a vendor's table, a published measurement) or that none was
//! found and the figure is a parameter to sweep is in docs/SIMULATOR.md
//! ("Hardware profiles"). Every figure can be overridden by key, and each
//! cost turned off (`refill=off`) or kept alone (`only=refill`), so an
//! experiment can sweep a grid of them.

use std::fmt::Write as _;

use mech::lock::level::{LockClass, CLASSES};

use crate::engine::cost::Distance;

/// The model's costs, each of which a profile can turn off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Costs {
    /// A task's working set refilled where its data is not (cache affinity).
    pub refill: bool,
    /// Another CPU's published load figures read by distance.
    pub remote: bool,
    /// Lock waits behind another CPU's hold, and the lock's line moving.
    pub locks: bool,
    /// IPI delivery by distance.
    pub ipi: bool,
    /// A halted CPU's time to run again.
    pub idle_exit: bool,
}

impl Costs {
    pub const ALL: Costs = Costs { refill: true, remote: true, locks: true, ipi: true, idle_exit: true };
    /// The names `only=`, `NAME=on|off` and `@fw hw costs=` use, in order.
    pub const NAMES: [&'static str; 5] = ["refill", "remote", "locks", "ipi", "idle_exit"];

    fn flag(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "refill" => &mut self.refill,
            "remote" => &mut self.remote,
            "locks" => &mut self.locks,
            "ipi" => &mut self.ipi,
            "idle_exit" => &mut self.idle_exit,
            _ => return None,
        })
    }

    fn get(&self, name: &str) -> bool {
        match name {
            "refill" => self.refill,
            "remote" => self.remote,
            "locks" => self.locks,
            "ipi" => self.ipi,
            _ => self.idle_exit,
        }
    }
}

/// One machine's hardware figures (ns unless the name says otherwise).
///
/// Invariants: `refill_mlp >= 1`; every figure is below 2^32 (`parse`
/// refuses more), so the products the model forms (lines × ns, bytes ×
/// percent) stay far below 2^64.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HwProfile {
    /// The profile's name (`--hw`), with the overrides given after it.
    pub name: String,
    pub costs: Costs,
    /// One cache line moved here from another CPU's caches, by how far that
    /// CPU is: another thread of this core, another core of this last-level
    /// cache, another LLC of this node, another node (a core-to-core
    /// transfer of a modified line).
    pub line_ns: [u64; 4],
    /// A line from this node's memory, and from another node's.
    pub mem_ns: u64,
    pub mem_remote_ns: u64,
    /// A core's private cache (shared by its SMT threads), KiB.
    pub private_kb: u64,
    /// The last-level cache per core of it (the LLC holds this many KiB per
    /// core it serves), KiB.
    pub llc_kb_per_core: u64,
    /// Lines a refill has in flight at once (1: one miss after another).
    pub refill_mlp: u64,
    /// The refill's cost in percent of what the model computes (a sweep's
    /// `refill_scale=`).
    pub refill_pct: u64,
    /// The working set of a task its workload does not declare, KiB.
    pub wss_default_kb: u64,
    /// Lines of another CPU's published load figures one read touches.
    pub snapshot_lines: u64,
    /// Lines a lock brings along when it moves to another CPU (the lock
    /// word and what it protects).
    pub lock_lines: u64,
    /// How long each lock class is held beyond the time its holder's clock
    /// moves inside (the critical section's own instructions, which the
    /// cost model charges after the section), by `LockClass as usize`.
    pub hold_ns: [u64; CLASSES],
    /// An IPI's delivery apart from the distance it crosses (it also pays
    /// `line_ns` of the distance).
    pub ipi_base_ns: u64,
    /// A halted CPU's time from the interrupt to running (C1's exit).
    pub idle_exit_ns: u64,
}

/// Every figure is below this (see [`HwProfile`]'s invariants).
pub const MAX_FIGURE: u64 = 1 << 32;

/// The critical sections of the mechanism's lock classes in guest
/// instructions under QEMU `-icount` (1 ns each), less the work the
/// simulator already charges inside them: what every hardware profile holds
/// a lock for beyond its holder's clock, by `LockClass as usize` (see
/// [`icount_hold_ns`]). Printed by `tools/lock-holds/run.sh`
/// (docs/SIMULATOR.md, "Lock holds").
pub const ICOUNT_HOLD_NS: [u64; CLASSES] = {
    let mut ns = [0; CLASSES];
    let mut i = 0;
    while i < CLASSES {
        ns[i] = icount_hold_ns(LockClass::ALL[i]);
        i += 1;
    }
    ns
};

/// One class's figure of [`ICOUNT_HOLD_NS`], measured on the tree of
/// `90102af` (docs/SIMULATOR.md, "Lock holds"). A class the six cells never
/// took keeps the figure of its last measurement: `wake_list` (`04453e5`,
/// when every remote wakeup took it; plain wakeups are lock-free since, and
/// only a task that changes CPU still queues under it) and the leaf levels
/// no cell took (`04453e5`'s one leaf class).
/// Every class is named, so a new level needs its figure here.
pub const fn icount_hold_ns(class: LockClass) -> u64 {
    use LockClass::*;
    match class {
        PiLock => 306,
        BalanceState => 317,
        Runqueue => 473,
        // Only the kernel's watchdog takes it (the simulator runs none).
        HungTasks => 0,
        Registry => 218,
        WakeList => 190,
        Sleepers => 34,
        WaitQueue => 29,
        // The copy's reported work, which the simulator charges inside, is
        // more than the hold.
        Pipe => 0,
        Wakee => 48,
        TaskStack => 35,
        TaskEntry => 14,
        SemaphoreCount => 13,
        Workload => 57,
        IdleWaitSlot | BlockedAt | TraceNames | HeldIpis => 59,
        TraceRing => 0,
        Memory => 143595,
        Console | Heap => 0,
    }
}

impl HwProfile {
    /// QEMU `-icount`'s machine: no cost of this model at all.
    pub fn icount() -> HwProfile {
        HwProfile {
            name: "icount".into(),
            costs: Costs::ALL,
            line_ns: [0; 4],
            mem_ns: 0,
            mem_remote_ns: 0,
            private_kb: 0,
            llc_kb_per_core: 0,
            refill_mlp: 1,
            refill_pct: 100,
            wss_default_kb: 0,
            snapshot_lines: 0,
            lock_lines: 0,
            hold_ns: [0; CLASSES],
            ipi_base_ns: 0,
            idle_exit_ns: 0,
        }
    }

    /// A hardware profile's common part: the kernel's measured holds, the
    /// default working set, the lines a snapshot and a lock move.
    fn hardware(name: &str) -> HwProfile {
        HwProfile {
            name: name.into(),
            refill_mlp: 4,
            wss_default_kb: 16,
            snapshot_lines: 2,
            lock_lines: 2,
            hold_ns: ICOUNT_HOLD_NS,
            ipi_base_ns: 500,
            ..HwProfile::icount()
        }
    }

    /// The profile named `name` (without overrides).
    pub fn named(name: &str) -> Option<HwProfile> {
        let p = |line_ns, mem_ns, mem_remote_ns, private_kb, llc_kb_per_core, idle_exit_ns| HwProfile {
            line_ns,
            mem_ns,
            mem_remote_ns,
            private_kb,
            llc_kb_per_core,
            idle_exit_ns,
            ..HwProfile::hardware(name)
        };
        Some(match name {
            "icount" => HwProfile::icount(),
            // 8-socket Westmere-EX (Xeon E7-8870-like).
            "avg-idle-2013" => p([7, 37, 37, 73], 87, 123, 256, 3072, 3000),
            // 2-socket 20-core Cascade Lake-SP-like.
            "sis-2021" => p([7, 48, 48, 136], 90, 178, 1024, 1408, 2000),
            // 2-socket 60-core Sapphire Rapids-like.
            "dd-2024" => p([8, 55, 55, 108], 90, 143, 2048, 1920, 1000),
            // 2-socket NetBurst Xeon with Hyper-Threading (Irwindale-like):
            // the two threads share the core's L1 and 2 MiB L2, the LLC.
            "wake-2005" => p([5, 120, 120, 120], 120, 120, 2048, 2048, 3000),
            // big.LITTLE (ARM TC2-like): a cluster's L2 is its LLC.
            "capacity-2014" => p([0, 40, 150, 150], 120, 120, 32, 512, 1000),
            _ => return None,
        })
    }

    /// Every profile's name, `icount` first.
    pub const NAMES: [&'static str; 6] = ["icount", "avg-idle-2013", "sis-2021", "dd-2024", "wake-2005", "capacity-2014"];

    /// `NAME[,KEY=VALUE...]`: a profile and overrides of its figures
    /// ([`HwProfile::keys`]), `COST=on|off` and `only=COST`.
    pub fn parse(spec: &str) -> Result<HwProfile, String> {
        let (name, overrides) = spec.trim().split_once(',').unwrap_or((spec.trim(), ""));
        let mut p = HwProfile::named(name).ok_or_else(|| {
            format!("--hw {spec}: unknown profile `{name}`: give one of {} (then ,KEY=VALUE to override a figure)", HwProfile::NAMES.join(", "))
        })?;
        p.apply(overrides).map_err(|e| format!("--hw {spec}: {e}"))?;
        Ok(p)
    }

    /// Sets the figures of `overrides` (`KEY=VALUE,...`, as after `--hw NAME,`) on this
    /// profile, whose name then says them (`NAME,KEY=VALUE,...`, so the `@fw hw` line reruns
    /// it): `fairway-sim --hw-set` on top of `--hw`, one sweep axis on top of another.
    pub fn apply(&mut self, overrides: &str) -> Result<(), String> {
        let mut said = Vec::new();
        for part in overrides.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').ok_or_else(|| format!("`{part}` is not KEY=VALUE (keys: {})", HwProfile::keys().join(", ")))?;
            self.set(key, value)?;
            said.push(part);
        }
        if !said.is_empty() {
            self.name = format!("{},{}", self.name, said.join(","));
        }
        Ok(())
    }

    /// Every overridable key (the figures), then the switches.
    pub fn keys() -> Vec<String> {
        let mut k: Vec<String> = [
            "line_same_core_ns",
            "line_same_llc_ns",
            "line_other_llc_ns",
            "line_other_node_ns",
            "mem_ns",
            "mem_remote_ns",
            "private_kb",
            "llc_kb_per_core",
            "refill_mlp",
            "refill_scale",
            "wss_default_kb",
            "snapshot_lines",
            "lock_lines",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        k.extend(LockClass::ALL.iter().map(|c| format!("hold_{}_ns", c.name())));
        k.extend(["ipi_base_ns", "idle_exit_ns", "only"].map(String::from));
        k.extend(Costs::NAMES.map(String::from));
        k
    }

    fn figure(&mut self, key: &str) -> Option<&mut u64> {
        Some(match key {
            "line_same_core_ns" => &mut self.line_ns[0],
            "line_same_llc_ns" => &mut self.line_ns[1],
            "line_other_llc_ns" => &mut self.line_ns[2],
            "line_other_node_ns" => &mut self.line_ns[3],
            "mem_ns" => &mut self.mem_ns,
            "mem_remote_ns" => &mut self.mem_remote_ns,
            "private_kb" => &mut self.private_kb,
            "llc_kb_per_core" => &mut self.llc_kb_per_core,
            "refill_mlp" => &mut self.refill_mlp,
            "wss_default_kb" => &mut self.wss_default_kb,
            "snapshot_lines" => &mut self.snapshot_lines,
            "lock_lines" => &mut self.lock_lines,
            "ipi_base_ns" => &mut self.ipi_base_ns,
            "idle_exit_ns" => &mut self.idle_exit_ns,
            _ => {
                let class = key.strip_prefix("hold_").and_then(|k| k.strip_suffix("_ns"))?;
                let i = LockClass::ALL.iter().position(|c| c.name() == class)?;
                &mut self.hold_ns[i]
            }
        })
    }

    /// Sets one key (see [`HwProfile::parse`]).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let keys = || HwProfile::keys().join(", ");
        if key == "only" {
            if !Costs::NAMES.contains(&value) {
                return Err(format!("only={value}: not a cost (one of {})", Costs::NAMES.join(", ")));
            }
            let mut c = Costs { refill: false, remote: false, locks: false, ipi: false, idle_exit: false };
            *c.flag(value).expect("a cost's name") = true;
            self.costs = c;
            return Ok(());
        }
        if let Some(flag) = self.costs.flag(key) {
            *flag = match value {
                "on" => true,
                "off" => false,
                _ => return Err(format!("{key}={value}: give on or off")),
            };
            return Ok(());
        }
        if key == "refill_scale" {
            self.refill_pct = parse_scale(value).ok_or_else(|| format!("refill_scale={value}: give a factor from 0 to 1000 with at most two decimals (e.g. 2 or 0.5)"))?;
            return Ok(());
        }
        let slot = self.figure(key).ok_or_else(|| format!("unknown key `{key}` (keys: {})", keys()))?;
        let v: u64 = value.parse().map_err(|_| format!("{key}={value}: not a whole number"))?;
        if v >= MAX_FIGURE {
            return Err(format!("{key}={value}: at most {}", MAX_FIGURE - 1));
        }
        if key == "refill_mlp" && v == 0 {
            return Err("refill_mlp=0: at least 1 (one line at a time)".into());
        }
        *slot = v;
        Ok(())
    }

    /// One line of another CPU's caches at distance `d` (0 for this CPU).
    #[inline]
    pub fn line(&self, d: Distance) -> u64 {
        match d {
            Distance::SameCpu => 0,
            Distance::SameCore => self.line_ns[0],
            Distance::SameLlc => self.line_ns[1],
            Distance::OtherLlc => self.line_ns[2],
            Distance::OtherNode => self.line_ns[3],
        }
    }

    /// An IPI's delivery to a CPU at distance `d`.
    pub fn ipi_ns(&self, d: Distance) -> u64 {
        self.ipi_base_ns + self.line(d)
    }

    /// The `@fw hw` line: the profile and every figure as `KEY=VALUE`, so
    /// that `--hw NAME,` followed by them reruns it.
    pub fn record(&self) -> String {
        let mut s = format!("profile={}", self.name.split(',').next().unwrap_or(""));
        let on: Vec<&str> = Costs::NAMES.iter().copied().filter(|n| self.costs.get(n)).collect();
        let _ = write!(s, " costs={}", if on.is_empty() { "none".to_string() } else { on.join(",") });
        let mut me = self.clone();
        for key in HwProfile::keys() {
            if key == "refill_scale" {
                let _ = write!(s, " refill_scale={}.{:02}", self.refill_pct / 100, self.refill_pct % 100);
            } else if let Some(v) = me.figure(&key) {
                let _ = write!(s, " {key}={v}");
            }
        }
        s
    }
}

/// A factor `N` or `N.D` or `N.DD` as percent, at most 1000.
fn parse_scale(v: &str) -> Option<u64> {
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    if whole.is_empty() || frac.len() > 2 || !whole.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let w: u64 = whole.parse().ok()?;
    let f: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<2}").parse().ok()? };
    let pct = w.checked_mul(100)?.checked_add(f)?;
    (pct <= 100_000).then_some(pct)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_profile_parses_and_icount_costs_nothing() {
        for n in HwProfile::NAMES {
            let p = HwProfile::parse(n).unwrap();
            assert_eq!(p.name, n);
            assert!(p.refill_mlp >= 1);
        }
        let i = HwProfile::parse("icount").unwrap();
        assert_eq!((i.line_ns, i.mem_ns, i.ipi_base_ns, i.idle_exit_ns, i.snapshot_lines, i.lock_lines), ([0; 4], 0, 0, 0, 0, 0));
        assert!(i.hold_ns.iter().all(|&h| h == 0));
    }

    #[test]
    fn overrides_set_figures_and_switches() {
        let p = HwProfile::parse("sis-2021,refill_scale=2,line_other_node_ns=150,hold_runqueue_ns=300,ipi=off").unwrap();
        assert_eq!((p.refill_pct, p.line_ns[3], p.hold_ns[LockClass::Runqueue as usize]), (200, 150, 300));
        assert!(!p.costs.ipi && p.costs.refill);
        assert_eq!(p.name, "sis-2021,refill_scale=2,line_other_node_ns=150,hold_runqueue_ns=300,ipi=off");
        let only = HwProfile::parse("dd-2024,only=locks").unwrap();
        assert_eq!(only.costs, Costs { refill: false, remote: false, locks: true, ipi: false, idle_exit: false });
        assert_eq!(HwProfile::parse("dd-2024,refill_scale=0.5").unwrap().refill_pct, 50);
    }

    /// `--hw-set` on top of `--hw` is the profile with both overrides, and says so in its name.
    #[test]
    fn overrides_apply_on_top_of_a_profile() {
        let mut p = HwProfile::parse("dd-2024,locks=off").unwrap();
        p.apply("idle_exit_ns=5000").unwrap();
        p.apply("ipi_base_ns=0").unwrap();
        let whole = HwProfile::parse("dd-2024,locks=off,idle_exit_ns=5000,ipi_base_ns=0").unwrap();
        assert_eq!(p.record(), whole.record());
        assert_eq!(p.name, "dd-2024,locks=off,idle_exit_ns=5000,ipi_base_ns=0");
        assert!(p.apply("colour=blue").unwrap_err().contains("unknown key `colour`"));
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let e = HwProfile::parse("big-box").unwrap_err();
        assert!(e.contains("unknown profile `big-box`") && e.contains("dd-2024"), "{e}");
        let e = HwProfile::parse("dd-2024,colour=blue").unwrap_err();
        assert!(e.contains("unknown key `colour`") && e.contains("line_same_llc_ns"), "{e}");
        assert!(HwProfile::parse("dd-2024,mem_ns=fast").unwrap_err().contains("not a whole number"));
        assert!(HwProfile::parse("dd-2024,mem_ns").unwrap_err().contains("is not KEY=VALUE"));
        assert!(HwProfile::parse("dd-2024,refill=maybe").unwrap_err().contains("give on or off"));
        assert!(HwProfile::parse("dd-2024,only=caches").unwrap_err().contains("not a cost"));
        assert!(HwProfile::parse("dd-2024,refill_mlp=0").unwrap_err().contains("at least 1"));
        assert!(HwProfile::parse("dd-2024,refill_scale=1.234").unwrap_err().contains("refill_scale"));
        assert!(HwProfile::parse("dd-2024,mem_ns=99999999999").unwrap_err().contains("at most"));
    }

    #[test]
    fn the_record_reruns_the_profile() {
        let p = HwProfile::parse("dd-2024,idle_exit_ns=7,locks=off").unwrap();
        let rec = p.record();
        assert!(rec.starts_with("profile=dd-2024 costs=refill,remote,ipi,idle_exit "), "{rec}");
        let again: String = rec
            .split(' ')
            .skip(2)
            .map(|kv| kv.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let q = HwProfile::parse(&format!("dd-2024,{again},locks=off")).unwrap();
        assert_eq!((q.line_ns, q.idle_exit_ns, q.hold_ns, q.costs), (p.line_ns, p.idle_exit_ns, p.hold_ns, p.costs));
    }
}
