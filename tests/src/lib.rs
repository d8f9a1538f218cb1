//! fairway's QEMU integration scenarios: data plus check functions, run by `cargo xtask test`.
//!
//! Each [`Scenario`] says how to boot the kernel (`-kernel` or the GRUB image under SeaBIOS or
//! OVMF, `-smp`, `-cpu`, `-append`, NUMA nodes, ACPI,
//! memory, timeout, parallel slots), which kernel outcome QEMU's exit status must report
//! ([`Outcome`]), and a `check` function that asserts exact things on the parsed serial [`Log`]
//! (the `@fw` lines of docs/CONSOLE.md). The harness boots each scenario, decodes the exit status
//! ([`QemuExit`]) and calls [`Scenario::evaluate`].
//!
//! # How to add a scenario
//! 1. Write its check in `src/scenarios.rs`: a `fn check_x(log: &Log) -> CheckResult` built from
//!    the helpers there (`cpus_online`, `cpu_lines`, `domains`, `selfchecks_ok`, `healthy_boot`,
//!    `names_word`) and the log API (`log.records("sd")`, `log.one("fault")?`,
//!    `record.field("name")?`, `record.num("cr2")?`, `record.cpus("span")?`,
//!    `log.lines_starting_with("cmdline: ")`, `log.last_stage()`). Return `Err(reason)`: the
//!    reason is printed above the serial log when it fails. A check must be able to fail: assert
//!    exact values, computed from the scenario's inputs, not copied from kernel output.
//! 2. Add an entry to [`all()`]: `Scenario { name: "my-case", smp: "4", append: "...",
//!    expect: Outcome::Success, check: check_x, ..BASE }`. Give it `slots: 2` when it boots many
//!    vCPUs (it then runs alone on the 2-core machine), and keep `timeout_s` within 60–120 s.
//! 3. Extend the unit tests in `scenarios.rs`: make `synthetic()` print what a correct kernel
//!    prints for it, and add a mutation to `every_scenario_fails_when_its_key_line_is_wrong` that
//!    shows the check catches a wrong log.
//! 4. `cargo test -p fairway-scenarios`, then `cargo xtask test my-case`.

pub mod boot_checks;
pub mod boot_image;
pub mod docs;
pub mod layers;
pub mod exit;
pub mod liveness;
pub mod log;
pub mod scenarios;
pub mod topology;
pub mod watchdog_checks;
pub mod workload_params;
pub mod workloads;

pub use exit::{Outcome, QemuExit};
pub use log::{
    format_cpulist, format_groups, parse_cpulist, parse_groups, Line, Log, Record, STAGES,
};
pub use scenarios::{all, Boot, CheckResult, Firmware, Scenario, Versus, BASE};
pub use topology::{Level, Topology};
