//! The scenarios and their checks.

#[allow(unused_imports)]
use crate::boot_checks::*;
pub use crate::boot_checks::{
    cpu_lines, cpu_placement, cpus_online, domains, healthy_boot, names_word, selfchecks_ok,
    CRASH_ADDRESS, MALFORMED, MICROVM_APPEND, MALFORMED_OPTIONS, SMP64_ONLINE_WITHIN,
};
use crate::boot_image::{
    check_image_bios_2s2c2t, check_image_bios_no_acpi, check_image_bios_smp4, check_image_uefi_2s2c2t,
    check_image_uefi_multiboot1, check_image_uefi_smp4,
};
use crate::exit::{Outcome, QemuExit};
use crate::log::Log;
use crate::topology::Topology;
use crate::watchdog_checks::{
    check_hard_lockup, check_lockdep_inversion, check_lockdep_irqs_on, check_lockdep_rq_descending, check_lockdep_schedule_held,
    check_lost_sleep, check_lost_wakeup, check_soft_lockup, HARD_LOCKUP, LOCKDEP_INVERSION, LOCKDEP_IRQS_ON,
    LOCKDEP_RQ_DESCENDING, LOCKDEP_SCHEDULE_HELD,
    LOST_SLEEP, LOST_WAKEUP, SOFT_LOCKUP,
};
use crate::workload_params::{
    check_400_threads, check_schbench_no_sample, check_too_many_threads, check_too_much_heap, check_workload_help, check_workload_params_malformed,
    TOO_MANY_THREADS_MIB, WORKLOAD_400_THREADS, WORKLOAD_SCHBENCH_NO_SAMPLE, WORKLOAD_PARAMS_MALFORMED, WORKLOAD_TOO_MANY_THREADS, WORKLOAD_TOO_MUCH_HEAP,
};
use crate::workloads::{
    check_affinity, check_capacity, check_ebizzy, check_features, check_features_bogus, check_features_linux_only, check_torture_no_ttwu_queue, check_shares_pressure,
    check_delay_dequeue, check_fserver, check_hackbench, check_latency, check_renice, check_overflow, check_pipe, check_pipes, check_regs, check_trace_pipe,
    check_prodcons, check_schbench, check_shares, check_spread, check_spread_nohz, check_spread_smt, check_storm, check_torture, check_torture_pressure,
    check_periodic_pull, check_tbench, check_three_on_two, check_tickless, check_deterministic_boot, compare_identical, compare_snap_delta, compare_wake_affine,
    check_newidle_off, check_newidle_pull, compare_capacity_push, compare_nohz_on_off, workload_ran, NOHZ_PULL_SMP,
    compare_newidle_push, check_new_dst_cpu, PINNED_SMP, check_misfit_util_est, check_group_imbalanced, GROUP_IMBALANCED,
    check_idle_wait_fserver, check_clamp_gate, compare_newidle_on_off,
    check_ebizzy_ran, compare_capacity_pressure, compare_fork_placement,
    check_sis_aged, check_sis_prop_scans, check_sis_util, check_sis_util_contradiction, check_wake_2005, check_wake_affine_sync, compare_sis_aged,
    compare_sis_prop_cost, compare_sis_altscan, compare_sis_util, SIS_UTIL_CONTRADICTION,
    check_fault_malformed, check_storm_faults, check_torture_faults, compare_ipi_delay, FAULT_MALFORMED, FAULT_SEED_ALONE,
    check_idle_ipi_coming, IPI_COMING,
};

/// What a check returns: `Err` carries the reason for people.
pub type CheckResult = Result<(), String>;

/// One QEMU boot and what must hold afterwards.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Unique, filterable name (`cargo xtask test NAME-PART`).
    pub name: &'static str,
    /// QEMU's `-smp` value: `8` or `8,sockets=2,cores=2,threads=2`.
    pub smp: &'static str,
    /// QEMU's `-cpu` model.
    pub cpu: &'static str,
    /// The kernel command line (`-append`).
    pub append: &'static str,
    /// NUMA nodes splitting CPUs and memory evenly (0 or 1: no NUMA).
    pub numa_nodes: u32,
    /// Boot without ACPI tables (`-machine acpi=off`).
    pub no_acpi: bool,
    /// Extra QEMU arguments, after the harness's own (as `cargo xtask run -- ARGS`): another
    /// machine type, e.g. `-machine microvm`. xtask's `test::config` copies them.
    pub qemu_extra: &'static [&'static str],
    /// How the kernel is loaded: QEMU's own Multiboot 1 loader, or GRUB from the image.
    pub boot: Boot,
    pub memory_mib: u32,
    /// Guest time counted in instructions (`-icount shift=0,sleep=off`, as `cargo xtask run
    /// --icount`): for checks on measured latencies, which host load would otherwise decide
    /// (under TCG the guest clock is the host's wall clock, and a descheduled vCPU thread looks
    /// like a late wakeup). xtask's `test::config` must copy it into `QemuConfig::icount`.
    pub icount: bool,
    /// Hard wall-clock limit; QEMU is killed after it.
    pub timeout_s: u64,
    /// All vCPUs in one host thread, in turn (`-accel tcg,thread=single`): a wall-clock boot of
    /// many vCPUs that takes one of the 2 slots instead of every host core. xtask's
    /// `test::config` must copy it into `QemuConfig::tcg_single_thread`.
    pub tcg_single_thread: bool,
    /// How many of the harness's 2 parallel slots this scenario takes (2 = runs alone).
    pub slots: u32,
    /// The kernel outcome QEMU's exit status must report.
    pub expect: Outcome,
    /// The scenario's own assertions on the serial log (of each boot, when there are two).
    pub check: fn(&Log) -> CheckResult,
    /// A second boot to compare this one with (`None`: one boot).
    pub versus: Option<Versus>,
    /// The command line is bad on purpose, and the check judges the kernel's complaints. Every
    /// other scenario fails on any `@fw cmdline_problem`: a misspelt parameter would otherwise
    /// run the defaults and test something else than it says.
    pub complaints: bool,
    /// Only with `cargo xtask test --long`: a check that repeats what a default scenario already
    /// covers at more cost than the 10-minute budget of the default run allows.
    pub long: bool,
}

/// How a scenario's kernel is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boot {
    /// QEMU's Multiboot 1 loader (`-kernel`, `-append`).
    Kernel,
    /// The GRUB image of `cargo xtask image` (`-cdrom`), which the harness builds; its default
    /// menu entry boots the kernel through Multiboot 2 with the default command line, so the
    /// scenario's `append` must be empty.
    Image(Firmware),
    /// The same image with its Multiboot 1 entry as the default (the harness builds that
    /// variant too): GRUB's `multiboot`, which passes no RSDP.
    ImageMultiboot1(Firmware),
}

/// The firmware an image boots under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Firmware {
    /// QEMU's default BIOS.
    SeaBios,
    /// UEFI (`-bios` OVMF.fd, the `ovmf` package).
    Ovmf,
}

impl std::fmt::Display for Boot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Boot::Kernel => write!(f, "kernel"),
            Boot::Image(Firmware::SeaBios) => write!(f, "image-bios"),
            Boot::Image(Firmware::Ovmf) => write!(f, "image-uefi"),
            Boot::ImageMultiboot1(Firmware::SeaBios) => write!(f, "image-mb1-bios"),
            Boot::ImageMultiboot1(Firmware::Ovmf) => write!(f, "image-mb1-uefi"),
        }
    }
}

/// A second boot of a scenario, with another kernel command line, and a check comparing the two
/// logs: what one boot cannot show, e.g. that a setting changes a count (`avg_idle_clamp=snap`
/// vs `delta`). Both boots use the scenario's `-smp`, `-cpu`, memory, `icount`, timeout (each)
/// and expected outcome, and both logs must pass its `check`; then `compare` judges the pair.
/// The harness runs the two boots one after the other in the scenario's slot(s).
#[derive(Debug, Clone, Copy)]
pub struct Versus {
    /// The second boot's `-append`.
    pub append: &'static str,
    /// Asserts on (the first boot's log, the second boot's log).
    pub compare: fn(&Log, &Log) -> CheckResult,
}

/// The watchdogs' thresholds for real-time boots of 32 or more vCPUs. Under TCG such a machine
/// time-shares the host's few cores, and a vCPU can wait seconds for one: CI saw a vCPU of
/// `smp-64` go 4.2 s without a timer interrupt and a sleeper's timer fire 5.1 s late, on a
/// healthy kernel. Linux's own defaults (soft lockup after 2 x 10 s, hung task after 120 s; the
/// kernel's are 2 x 2 s and 5 s for quick reports) leave such a machine room; the provoked
/// watchdog scenarios keep their 1 s.
const TCG_CROWD_WATCHDOGS: &str = "watchdog_thresh=10 hung_task_timeout_secs=120";

/// The defaults every scenario starts from.
pub const BASE: Scenario = Scenario {
    name: "",
    smp: "4",
    cpu: "max",
    append: "",
    numa_nodes: 0,
    no_acpi: false,
    qemu_extra: &[],
    boot: Boot::Kernel,
    memory_mib: 512,
    icount: false,
    timeout_s: 90,
    tcg_single_thread: false,
    slots: 1,
    expect: Outcome::Success,
    check: |_| Ok(()),
    versus: None,
    complaints: false,
    long: false,
};

impl Scenario {
    /// Judges a finished run: the exit status must be the expected kernel outcome, an `@fw exit`
    /// line (when printed) must agree with it, and the scenario's check must pass. All failures are
    /// reported together.
    pub fn evaluate(&self, exit: &QemuExit, log: &Log) -> CheckResult {
        let mut problems = Vec::new();
        if exit.outcome() != Some(self.expect) {
            problems.push(format!("expected exit `{}`, got: {exit}", self.expect));
        }
        if let Some(r) = log.records("exit").last() {
            if let Some(code) = r.get("code") {
                if exit.outcome().is_some_and(|o| o.code() != code) {
                    problems.push(format!("`{r}` disagrees with QEMU's exit status ({exit})"));
                }
            }
        }
        if !self.complaints {
            for r in log.records("cmdline_problem") {
                problems.push(format!("the kernel rejected part of the command line: `{r}`"));
            }
        }
        // The watchdogs are on in every boot and the lock checker wherever it is on: only the
        // scenarios that provoke them may see a report.
        if self.expect != Outcome::Watchdog {
            for r in log.records("watchdog") {
                problems.push(format!("a watchdog fired: `{r}`"));
            }
        }
        if !self.append.contains("test_lockdep=") {
            for r in log.records("lockdep") {
                problems.push(format!("the lock checker found a violation: `{r}`"));
            }
        }
        problems.extend(newidle_totals_match_domains(log).err());
        if let Err(e) = (self.check)(log) {
            problems.push(e);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// The second boot of a [`Versus`] scenario, as a scenario of its own (its `append` is the
    /// second command line); `None` for a one-boot scenario.
    pub fn second_boot(&self) -> Option<Scenario> {
        self.versus.map(|v| Scenario {
            append: v.append,
            versus: None,
            ..self.clone()
        })
    }

    /// Judges the two finished boots of a [`Versus`] scenario: each as [`Scenario::evaluate`]
    /// does (its reasons prefixed with the boot's command line), then the comparison. All
    /// failures are reported together. A one-boot scenario is judged on `first` alone.
    pub fn evaluate_versus(
        &self,
        first: (&QemuExit, &Log),
        second: (&QemuExit, &Log),
    ) -> CheckResult {
        let (Some(v), Some(other)) = (self.versus, self.second_boot()) else {
            return self.evaluate(first.0, first.1);
        };
        let mut problems = Vec::new();
        for (s, (exit, log)) in [(self, first), (&other, second)] {
            if let Err(e) = s.evaluate(exit, log) {
                problems.push(format!("boot `{}`: {e}", s.append));
            }
        }
        if let Err(e) = (v.compare)(first.1, second.1) {
            problems.push(format!("`{}` vs `{}`: {e}", self.append, v.append));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }

    /// The topology this scenario gives QEMU.
    pub fn topology(&self) -> Result<Topology, String> {
        Topology::from_smp(self.smp, self.numa_nodes)
    }
}

/// `icount-deterministic-WORKLOAD-smpN`: `append` booted twice at `-smp N` under `-icount`; each
/// boot must have run the workload ([`check_deterministic_boot`]) and the two serial logs must
/// be identical line for line ([`compare_identical`], which names the first line that differs).
/// Booted with `idle=last_polls`, as `--icount` boots every command line at 2+ CPUs
/// (`xtask/src/qemu.rs` `ICOUNT_IDLE`; at one CPU it halts as `idle=halt`).
/// With `icount-deterministic-smp4` (hackbench) they boot every workload `workload=` knows; a
/// host test holds the list to kernel/workloads/src/lib.rs.
macro_rules! deterministic {
    ($w:literal, $smp:literal, $append:literal) => {
        deterministic!($w, $smp, $append, Outcome::Success, true)
    };
    ($w:literal, $smp:literal, $append:literal, default) => {
        deterministic!($w, $smp, $append, Outcome::Success, false)
    };
    ($w:literal, $smp:literal, $append:literal, $expect:expr) => {
        deterministic!($w, $smp, $append, $expect, true)
    };
    ($w:literal, $smp:literal, $append:literal, $expect:expr, $long:expr) => {
        Scenario {
            long: $long,
            name: concat!("icount-deterministic-", $w, "-smp", $smp),
            icount: true,
            smp: stringify!($smp),
            append: concat!($append, " idle=last_polls"),
            expect: $expect,
            check: |log| check_deterministic_boot(log, $w, $smp),
            versus: Some(Versus { append: concat!($append, " idle=last_polls"), compare: compare_identical }),
            ..BASE
        }
    };
}

/// Every scenario, in the order they are listed.
// The scenarios by family, in the order `all()` lists them (the macro above is in scope in each).
mod boot;
mod image;
mod watchdog;
mod workloads;
mod faults;
mod balance;
mod bench;
mod determinism;

pub fn all() -> Vec<Scenario> {
    let mut v = Vec::new();
    v.extend(boot::scenarios());
    v.extend(image::scenarios());
    v.extend(watchdog::scenarios());
    v.extend(workloads::scenarios());
    v.extend(faults::scenarios());
    v.extend(balance::scenarios());
    v.extend(bench::scenarios());
    v.extend(determinism::scenarios());
    v.retain(|s| !s.name.is_empty());
    v
}

/// The command lines of the benchmark scenarios (`bench-*`), read by their checks too.
/// hackbench: 2 groups of 20 senders and 20 receivers, 100 messages of 100 bytes from each
/// sender to each receiver (200 KB per receiver through a 64 KiB pipe: senders block).
pub const BENCH_HACKBENCH: &str =
    "sched_debug=1 workload=hackbench,groups=2,loops=100,datasize=100,fds=20,pipe_kb=64";
/// `icount-deterministic-smp4`'s hackbench: one group, 20 loops (each boot ~4 s of wall time),
/// with `idle=last_polls` as `--icount` boots it at 2+ CPUs (see `deterministic!`).
pub const BENCH_HACKBENCH_SHORT: &str =
    "sched_debug=1 workload=hackbench,groups=1,loops=20,datasize=100,fds=20,pipe_kb=64 idle=last_polls";
pub const BENCH_SCHBENCH: &str =
    "sched_debug=1 workload=schbench,threads=2,workers=4,runtime_ms=300,work_us=200,sleep_us=100";
pub const BENCH_EBIZZY: &str =
    "sched_debug=1 workload=ebizzy,threads=2,chunks=10,records=1024,ms=300";
pub const BENCH_TBENCH: &str =
    "sched_debug=1 workload=tbench,clients=2,req=256,reply=4096,server_us=5,ms=300";
pub const BENCH_FSERVER: &str =
    "sched_debug=1 workload=fserver,threads=4,burst_us=50,sleep_us=100,ms=300";

/// `balance-idle-wait-newidle-on-vs-off`'s two command lines (only `newidle=` differs).
pub const IDLE_WAIT_NEWIDLE_ON: &str =
    "sched_debug=1 newidle=on workload=fserver,threads=5,burst_us=2000,sleep_us=1000,ms=2000";
pub const IDLE_WAIT_NEWIDLE_OFF: &str =
    "sched_debug=1 newidle=off workload=fserver,threads=5,burst_us=2000,sleep_us=1000,ms=2000";
/// How much of newidle=off's idle-while-others-wait time newidle=on may keep, at most (%): 2 s
/// runs measured 60.8-69.1% over seven code layouts (see the scenario), 100% when newidle does
/// nothing.
pub const IDLE_WAIT_ON_MAX_PERCENT: u64 = 80;

/// The `-smp` of `balance-smt-1s4c2t`: one socket, 4 cores of 2 threads.
pub const SMT_SMP: &str = "8,sockets=1,cores=4,threads=2";

/// The two boots of `balance-newidle-pull-on-vs-off`: the same fserver run, traced, with
/// newidle balancing on and off.
pub const NEWIDLE_PULL_ON: &str =
    "sched_debug=1 trace=1 newidle=on workload=fserver,threads=8,burst_us=50,sleep_us=100,ms=300";
pub const NEWIDLE_PULL_OFF: &str =
    "sched_debug=1 trace=1 newidle=off workload=fserver,threads=8,burst_us=50,sleep_us=100,ms=300";

/// The two boots of `balance-newidle-active-push`: with and without `cpu_capacity=1:512`
/// (`ms=NEWIDLE_PUSH_MS`, the sleeper's cycle `NEWIDLE_PUSH_CYCLE_US`).
pub const NEWIDLE_PUSH_CAP: &str = "sched_debug=1 trace=1 cpu_capacity=1:512 \
    workload=spread,hogs=1,start_cpu=1,ms=300,sleeper_cpu=0,sleeper_busy_us=900,sleeper_sleep_us=100";
pub const NEWIDLE_PUSH_FLAT: &str = "sched_debug=1 trace=1 \
    workload=spread,hogs=1,start_cpu=1,ms=300,sleeper_cpu=0,sleeper_busy_us=900,sleeper_sleep_us=100";

/// The SMT topology of the `wake-2005-*` scenarios: two packages of one core of two threads.
pub const WAKE_2005_SMP: &str = "4,sockets=2,cores=1,threads=2";

/// `pairs=` and `ms=` of `balance-newidle-snap-vs-delta`'s prodcons (both boots).
pub const PRODCONS_PAIRS: u64 = 5;
pub const PRODCONS_MS: u64 = 1000;

fn check_smt(log: &Log) -> CheckResult {
    check_spread_smt::<4>(log, SMT_SMP)
}

/// `cpu_capacity=1:512`, one hog started on CPU 1 (alone there, it runs there first, becomes a
/// misfit): it must end on CPU 0 and have run on both.
fn check_capacity_smp2(log: &Log) -> CheckResult {
    check_capacity::<2, 1, 1, true>(log, &[1])
}

/// `cpu_capacity=0:512,1:512`, two hogs started on CPU 0: they must end on CPUs 2 and 3.
fn check_capacity_smp4(log: &Log) -> CheckResult {
    check_capacity::<4, 2, 0, false>(log, &[0, 1])
}

#[cfg(test)]
#[path = "scenarios_tests.rs"]
mod tests;

/// Every boot: each CPU's `@fw newidle` `cost_stops` and `random_skips` are the sums of its
/// `@fw newidle_sd` lines (a CPU figure that stayed 0 while its domains counted was a counter
/// that never moved).
fn newidle_totals_match_domains(log: &Log) -> CheckResult {
    for r in log.records("newidle") {
        let cpu = r.num("cpu")?;
        for key in ["cost_stops", "random_skips"] {
            let mut sum = 0;
            for d in log.records("newidle_sd").filter(|d| d.num("cpu").ok() == Some(cpu)) {
                sum += d.num(key)?;
            }
            let total = r.num(key)?;
            if total != sum {
                return Err(format!("`{r}`: {key}={total}, but CPU {cpu}'s `newidle_sd` lines sum to {sum}"));
            }
        }
    }
    Ok(())
}
