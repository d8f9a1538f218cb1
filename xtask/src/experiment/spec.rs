//! What an experiment declares: its variants (kernel command lines), its forms (machine and
//! points), its seed's setup, the mechanism figures and distributions it reads, and the rules
//! that read the matrix.

use fairway_scenarios::Log;

use super::{sweep, Claim, Matrix};

/// One column of the matrix: a kernel command line, and the machine when it is not the form's
/// (`smp` empty: the form's; e.g. an SMT shape against the form's flat one).
#[derive(Clone, Debug)]
pub struct Variant {
    pub label: &'static str,
    pub append: &'static str,
    pub smp: &'static str,
    /// More `fairway-sim` arguments (space-separated; the simulator only), e.g. a sweep's cost.
    pub sim_args: &'static str,
}

impl Variant {
    /// The `-smp` this variant boots with under `form`.
    pub fn smp<'a>(&'a self, form: &'a Form) -> &'a str {
        if self.smp.is_empty() { form.smp } else { self.smp }
    }
}

/// A mechanism figure read from each boot's log (summed over its records), shown under the table.
pub struct Mech {
    pub label: &'static str,
    pub unit: &'static str,
    pub read: fn(&Log) -> f64,
}

/// The size of one form (full or quick) of an experiment.
#[derive(Clone, Debug)]
pub struct Form {
    pub smp: &'static str,
    /// Parameters common to every point.
    pub params: &'static str,
    /// The workload points (`key=value`, or `WORKLOAD:key=value` for another workload than the
    /// experiment's), one matrix row each.
    pub points: &'static [&'static str],
    pub timeout_s: u64,
}

/// One row of an experiment's workload-to-seed mapping, printed in its report: what the
/// seed thread ran or claimed (its figures quoted), what this experiment runs for it, and what
/// is still different.
pub struct SeedSetup {
    /// The seed thread's side.
    pub seed: &'static str,
    /// What runs here for it (a point, a variant, a machine).
    pub here: &'static str,
    /// What is still not the seed's.
    pub differs: &'static str,
}

/// One experiment: the debate, the matrix, and the rules that read it.
pub struct Spec {
    pub name: &'static str,
    /// The debate in one line: who, when, what was claimed, on which machine.
    pub claim: &'static str,
    /// What the matrix asks.
    pub asks: &'static str,
    /// The seed thread's setup, row by row, against this experiment's (the report's table
    /// "The seed's setup and this one").
    pub setup: &'static [SeedSetup],
    pub workload: &'static str,
    pub variants: Vec<Variant>,
    pub full: Form,
    pub quick: Form,
    /// Why the QEMU machine is what it is (when the debate's machine is beyond it).
    pub machine_note: &'static str,
    pub mechs: Vec<Mech>,
    /// Host-side part of the report (computed with the policy crate), if any.
    pub host: Option<fn() -> String>,
    /// The reading: generated from the measured matrix.
    pub read: fn(&Matrix) -> Reading,
    /// The debate's claims, each decided with intervals (`claims.rs`).
    pub claims: Vec<Claim>,
    /// The mechanism's distributions worth a plot (`avg_idle` at the gate, wakeup latencies).
    pub dists: Vec<Dist>,
    /// Maps of where a claim holds over two swept parameters (`--sweep`, `sweep.rs`).
    pub sweeps: Vec<sweep::Sweep>,
}

/// What the experiment's rules read from the matrix beside the claims' verdicts: the
/// mechanism's figures in words, and the checks the quick form must pass (only where the
/// effect is large enough to be stable).
pub struct Reading {
    pub why: Vec<String>,
    /// Checked by the test suite on the quick form.
    pub checks: Vec<Check>,
}

/// One check of a reading: what it asserts, whether it holds, and the case in which it fails
/// (a variant of the matrix or a change to the code: a check that cannot fail checks nothing).
#[derive(Clone, Debug)]
pub struct Check {
    pub what: String,
    pub holds: bool,
    pub fails_with: &'static str,
}

impl Check {
    pub fn new(what: impl Into<String>, holds: bool, fails_with: &'static str) -> Check {
        Check { what: what.into(), holds, fails_with }
    }
}

/// A distribution a mechanism figure has in each run's log (`@fw` histogram counters):
/// bins in order, each with its count; plotted per variant beside the report.
pub struct Dist {
    pub label: &'static str,
    /// What the bins count, for the axis.
    pub counts: &'static str,
    pub read: fn(&Log) -> Vec<(String, f64)>,
}

