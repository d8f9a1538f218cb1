//! The per-unit report: the table of functions, the layers, the kernel's own clock as a
//! cross-check, and its text and JSON forms.

use std::fmt::Write as _;

use fairway_scenarios::Log;
use serde::Serialize;

use crate::results::Figure;

use super::against::Against;
use super::counts::*;
use super::inline::Inlined;
use super::ProfileArgs;

// ---------------------------------------------------------------------------------------------
// The report

#[derive(Debug, Serialize)]
pub struct Report {
    pub workload: String,
    pub smp: String,
    pub vary: String,
    pub base: u64,
    /// The kernel command lines of the two boots.
    pub cmdlines: [String; 2],
    /// What the kernel was built from (`working tree (HEAD ...)`, or `<commit> <subject>` with
    /// `--rev`); empty until the caller sets it.
    pub kernel: String,
    /// Instructions the second boot executed beyond the first (all vCPUs).
    pub total: i64,
    pub per_unit: f64,
    pub layers: Vec<(Layer, f64)>,
    pub library_crates: Vec<(String, f64)>,
    pub functions: Vec<FnCount>,
    /// The `@fw result` figures the kernel printed in each boot.
    pub kernel_figures: [Vec<Figure>; 2],
    /// The workload's own `total_ns` in each boot (`@fw pipe`, `@fw yield`), when it prints one.
    pub kernel_total_ns: Option<[u64; 2]>,
    /// The inline-aware tables (`--inlined`, `--within`): `inlined` and `lines` in the JSON.
    #[serde(flatten)]
    pub inline: Option<Inlined>,
    /// `--against`: this profile beside a previous one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub against: Option<Against>,
}

impl Report {
    pub fn new(
        a: &ProfileArgs,
        base: u64,
        cmdlines: [String; 2],
        fns: Vec<FnCount>,
        kernel_figures: [Vec<Figure>; 2],
        kernel_total_ns: Option<[u64; 2]>,
    ) -> Report {
        let unit = base as f64;
        let total: i64 = fns.iter().map(|f| f.insns).sum();
        let (layers, crates) = group(&fns);
        Report {
            workload: a.run.workload.clone(),
            smp: a.run.boot.smp.clone(),
            vary: a.vary.clone(),
            base,
            cmdlines,
            kernel: String::new(),
            total,
            per_unit: total as f64 / unit,
            layers: layers.into_iter().map(|(l, n)| (l, n as f64 / unit)).collect(),
            library_crates: crates.into_iter().map(|(c, n)| (c, n as f64 / unit)).collect(),
            functions: fns,
            kernel_figures,
            kernel_total_ns,
            inline: None,
            against: None,
        }
    }

    /// The text `cargo xtask profile` prints.
    pub fn render(&self, top: usize) -> String {
        let unit = self.base as f64;
        let pct = |n: f64| if self.per_unit != 0.0 { 100.0 * n / self.per_unit } else { 0.0 };
        let v = &self.vary;
        let u = unit_name(v);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{}: {v}={} vs {v}={}, -smp {}, -icount: {} more guest instructions",
            self.workload,
            self.base,
            2 * self.base,
            self.smp,
            self.total
        );
        if !self.kernel.is_empty() {
            let _ = writeln!(s, "kernel: {}", self.kernel);
        }
        let _ = writeln!(s, "total: {:.1} instructions per {u}", self.per_unit);
        for (i, figs) in self.kernel_figures.iter().enumerate() {
            if !figs.is_empty() {
                let f: Vec<String> = figs.iter().map(|f| format!("{}={} {}", f.metric, f.value, f.unit)).collect();
                let _ = writeln!(s, "kernel's figures at {v}={}: {}", self.base * (i as u64 + 1), f.join(", "));
            }
        }
        if let Some([a, b]) = self.kernel_total_ns {
            let _ = writeln!(
                s,
                "kernel's clock: total_ns {a} and {b}, {:.1} ns per {u} more (1 ns = 1 instruction \
                 under -icount shift=0, but the clock skips ahead while every vCPU is idle)",
                (b as f64 - a as f64) / unit
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(s, "{:>12} {:>6}  function", format!("insns/{u}"), "%");
        for f in self.functions.iter().take(top) {
            let n = f.insns as f64 / unit;
            let _ = writeln!(s, "{n:>12.1} {:>5.1}%  {}", pct(n), shorten(&f.name, 110));
        }
        let rest = &self.functions[self.functions.len().min(top)..];
        if !rest.is_empty() {
            let n = rest.iter().map(|f| f.insns).sum::<i64>() as f64 / unit;
            let _ = writeln!(s, "{n:>12.1} {:>5.1}%  ({} more functions)", pct(n), rest.len());
        }
        let _ = writeln!(s, "\nby layer:");
        for (layer, n) in &self.layers {
            let _ = write!(s, "{n:>12.1} {:>5.1}%  {}", pct(*n), layer.label());
            if *layer == Layer::Library {
                let c: Vec<String> =
                    self.library_crates.iter().take(5).map(|(c, n)| format!("{c} {n:.1}")).collect();
                let _ = write!(s, ": {}", c.join(", "));
            }
            let _ = writeln!(s);
        }
        if let Some(inline) = &self.inline {
            s.push_str(&inline.render(self.base, u, top));
        }
        if let Some(against) = &self.against {
            s.push_str(&against.render(v, top));
        }
        s
    }
}

/// The unit of a parameter: `round` for `rounds`, `ms` for `ms`.
pub fn unit_name(param: &str) -> &str {
    match param.strip_suffix('s') {
        Some(one) if one.len() > 1 => one,
        _ => param,
    }
}

/// The `total_ns` of the workload's own record (`@fw pipe ... total_ns=`), if it prints one.
pub fn kernel_total_ns(log: &Log, workload: &str) -> Option<u64> {
    log.records(workload).find_map(|r| r.num("total_ns").ok())
}

/// The kernel's `cmdline: ` complaints (an unknown workload, a bad option), once each.
pub fn rejected_options(logs: &[&Log]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for log in logs {
        for l in log.lines_starting_with("cmdline: ") {
            if !v.iter().any(|x| x == l) {
                v.push(l.to_string());
            }
        }
    }
    v
}

/// At most `max` characters, with `…` in place of the rest.
pub(super) fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}
