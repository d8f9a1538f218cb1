//! `profile --against PATH`: this profile beside a previous `profile.json`, per unit of the
//! varied parameter: the totals and the functions that changed most. This is how two builds, or
//! two `--append` settings, are compared: profile once, then again `--against` the first.
//!
//! The previous file is read and checked before anything is built or booted. Profiles of another
//! workload, `--vary` parameter or `-smp` are compared all the same, under a warning.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::counts::{layer_of, Layer};
use super::report::{shorten, unit_name, Report};

/// What the comparison needs of one profile: the fields of `profile.json` it reads (the others
/// are ignored, so files written before `--against` existed are read too).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Side {
    pub workload: String,
    pub smp: String,
    pub vary: String,
    /// The varied parameter's value in the first boot: figures are per `base` units.
    pub base: u64,
    /// The kernel command lines of the two boots.
    pub cmdlines: [String; 2],
    /// What the kernel was built from (empty in files written before `--rev` existed).
    #[serde(default)]
    pub kernel: String,
    /// Instructions of the second boot beyond the first.
    pub total: i64,
    pub functions: Vec<SideFn>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SideFn {
    pub name: String,
    pub insns: i64,
}

impl Side {
    /// The side of the profile just measured.
    pub fn of(r: &Report) -> Side {
        Side {
            workload: r.workload.clone(),
            smp: r.smp.clone(),
            vary: r.vary.clone(),
            base: r.base,
            cmdlines: r.cmdlines.clone(),
            kernel: r.kernel.clone(),
            total: r.total,
            functions: r.functions.iter().map(|f| SideFn { name: f.name.clone(), insns: f.insns }).collect(),
        }
    }

    fn per_unit(&self, insns: i64) -> f64 {
        insns as f64 / self.base as f64
    }
}

/// Parses a `profile.json`; refuses JSON that `cargo xtask profile` did not write (another
/// tool's, a `bench.json`, a hand-edited file whose functions do not add up to its total).
pub fn parse_side(text: &str) -> Result<Side, String> {
    let s: Side = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if s.base == 0 {
        return Err("its `base` is 0, so it has no per-unit figures".into());
    }
    let sum: i64 = s.functions.iter().map(|f| f.insns).sum();
    if sum != s.total {
        return Err(format!("its functions add up to {sum} instructions, its `total` says {}", s.total));
    }
    Ok(s)
}

/// Reads the profile at `path`: a `profile.json` (any name), or a directory holding one. Returns
/// the file read (absolute when it can be) and its side.
pub fn load(path: &Path) -> Result<(PathBuf, Side), String> {
    let refuse = |why: &dyn std::fmt::Display| {
        format!(
            "xtask profile --against {}: {why}; give a previous run's target/profile/<timestamp>-<workload>/ \
             or its profile.json",
            path.display()
        )
    };
    let meta = std::fs::metadata(path).map_err(|e| refuse(&e))?;
    let file = if meta.is_dir() { path.join("profile.json") } else { path.to_path_buf() };
    if meta.is_dir() && !file.is_file() {
        return Err(refuse(&"the directory has no profile.json"));
    }
    // Name the file only when it is not `path` itself.
    let which = if meta.is_dir() { format!("{}: ", file.display()) } else { String::new() };
    let text = std::fs::read_to_string(&file).map_err(|e| refuse(&format!("{which}{e}")))?;
    let side = parse_side(&text)
        .map_err(|e| refuse(&format!("{which}not a profile.json of `cargo xtask profile` ({e})")))?;
    Ok((file.canonicalize().unwrap_or(file), side))
}

/// A figure per unit in both profiles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub before: f64,
    pub after: f64,
    /// `after - before`.
    pub diff: f64,
}

impl Change {
    fn new(before: f64, after: f64) -> Change {
        Change { before, after, diff: after - before }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FnChange {
    pub name: String,
    #[serde(flatten)]
    pub change: Change,
}

/// The comparison: `"against"` in profile.json. Figures are instructions per unit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Against {
    /// The previous profile.json (absolute when it could be resolved).
    pub path: PathBuf,
    /// What differs in what the two profiles measured (workload, --vary, -smp).
    pub warnings: Vec<String>,
    /// The first boot's kernel command line of each.
    pub cmdline_before: String,
    pub cmdline_after: String,
    /// What each kernel was built from (empty when the previous profile.json does not say).
    pub kernel_before: String,
    pub kernel_after: String,
    pub total: Change,
    /// Every function of either profile (0 where one lacks it), largest |diff| first.
    pub functions: Vec<FnChange>,
    /// The same split by layer (policy crate, kernel, libraries, stubs), in the order of the
    /// profile's own layer table; the layers of either profile.
    pub layers: Vec<LayerChange>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerChange {
    pub layer: Layer,
    #[serde(flatten)]
    pub change: Change,
}

/// What makes two profiles measure different things; one line each.
pub fn mismatches(before: &Side, after: &Side) -> Vec<String> {
    let mut w = Vec::new();
    let mut differ = |what: &str, b: &str, a: &str| {
        if b != a {
            w.push(format!("{what} differs: {b} in the --against profile, {a} in this one"));
        }
    };
    differ("the workload", &before.workload, &after.workload);
    differ("--vary (the unit of every figure)", &before.vary, &after.vary);
    differ("-smp", &before.smp, &after.smp);
    w
}

/// `after` beside `before` (read from `path`).
pub fn compare(path: &Path, before: &Side, after: &Side) -> Against {
    let mut names: Vec<&str> =
        before.functions.iter().chain(&after.functions).map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let of = |side: &Side, name: &str| {
        side.per_unit(side.functions.iter().filter(|f| f.name == name).map(|f| f.insns).sum())
    };
    let mut functions: Vec<FnChange> = names
        .into_iter()
        .map(|n| FnChange { name: n.to_string(), change: Change::new(of(before, n), of(after, n)) })
        .collect();
    let layer_total = |side: &Side, l: Layer| {
        side.per_unit(side.functions.iter().filter(|f| layer_of(&f.name) == l).map(|f| f.insns).sum())
    };
    let mut present: Vec<Layer> = before.functions.iter().chain(&after.functions).map(|f| layer_of(&f.name)).collect();
    present.sort_unstable();
    present.dedup();
    let layers = present
        .into_iter()
        .map(|l| LayerChange { layer: l, change: Change::new(layer_total(before, l), layer_total(after, l)) })
        .collect();
    // By |diff|, largest first; ties by name (the sort is stable and the names are sorted).
    functions.sort_by(|x, y| y.change.diff.abs().total_cmp(&x.change.diff.abs()));
    Against {
        path: path.to_path_buf(),
        warnings: mismatches(before, after),
        cmdline_before: before.cmdlines[0].clone(),
        cmdline_after: after.cmdlines[0].clone(),
        kernel_before: before.kernel.clone(),
        kernel_after: after.kernel.clone(),
        total: Change::new(before.per_unit(before.total), after.per_unit(after.total)),
        functions,
        layers,
    }
}

impl Against {
    /// The comparison's text: the warnings above it, the totals, the `top` functions that
    /// changed most. `vary` names the unit.
    pub fn render(&self, vary: &str, top: usize) -> String {
        let u = unit_name(vary);
        // Shown relative to the workspace when it is under it (the JSON keeps it absolute).
        let root = crate::workspace_root();
        let shown = self.path.strip_prefix(&root).unwrap_or(&self.path);
        let mut s = format!("\nagainst {} (instructions per {u}):\n", shown.display());
        let _ = writeln!(s, "  before: {}", self.cmdline_before);
        let _ = writeln!(s, "  after:  {}", self.cmdline_after);
        if !self.kernel_before.is_empty() || !self.kernel_after.is_empty() {
            let or_unknown = |k: &str| if k.is_empty() { "(not recorded)".to_string() } else { k.to_string() };
            let _ = writeln!(s, "  kernel before: {}", or_unknown(&self.kernel_before));
            let _ = writeln!(s, "  kernel after:  {}", or_unknown(&self.kernel_after));
        }
        for w in &self.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        let row = |s: &mut String, c: &Change, what: &str| {
            let _ = writeln!(s, "{:>12.1} {:>12.1} {:>+12.1}  {what}", c.before, c.after, c.diff);
        };
        let _ = writeln!(s, "{:>12} {:>12} {:>12}", "before", "after", "diff");
        let t = &self.total;
        let pct = if t.before != 0.0 { format!(" ({:+.1}%)", 100.0 * t.diff / t.before.abs()) } else { String::new() };
        row(&mut s, t, &format!("total{pct}"));
        let changed: Vec<&FnChange> = self.functions.iter().filter(|f| f.change.diff != 0.0).collect();
        for f in changed.iter().take(top) {
            row(&mut s, &f.change, &shorten(&f.name, 110));
        }
        let rest = &changed[changed.len().min(top)..];
        if !rest.is_empty() {
            let sum = |g: fn(&Change) -> f64| rest.iter().map(|f| g(&f.change)).sum::<f64>();
            let c = Change { before: sum(|c| c.before), after: sum(|c| c.after), diff: sum(|c| c.diff) };
            row(&mut s, &c, &format!("({} more functions that changed)", rest.len()));
        }
        let same = self.functions.len() - changed.len();
        if same > 0 {
            let _ = writeln!(s, "({same} functions unchanged)");
        }
        let _ = writeln!(s, "by layer:");
        for l in &self.layers {
            row(&mut s, &l.change, l.layer.label());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(workload: &str, smp: &str, vary: &str, base: u64, fns: &[(&str, i64)]) -> Side {
        Side {
            workload: workload.into(),
            smp: smp.into(),
            vary: vary.into(),
            base,
            cmdlines: [format!("workload={workload},{vary}={base}"), format!("workload={workload},{vary}={}", 2 * base)],
            kernel: String::new(),
            total: fns.iter().map(|f| f.1).sum(),
            functions: fns.iter().map(|&(n, i)| SideFn { name: n.into(), insns: i }).collect(),
        }
    }

    fn rows(c: &Against) -> Vec<(&str, f64, f64, f64)> {
        c.functions.iter().map(|f| (f.name.as_str(), f.change.before, f.change.after, f.change.diff)).collect()
    }

    #[test]
    fn kernels_are_named_when_either_profile_records_one() {
        let mut before = side("pipe", "1", "rounds", 10, &[("a", 100)]);
        let after = side("pipe", "1", "rounds", 10, &[("a", 90)]);
        let text = compare(Path::new("/p/profile.json"), &before, &after).render("rounds", 5);
        assert!(!text.contains("kernel"), "{text}");
        before.kernel = "0123456789ab subject".into();
        let text = compare(Path::new("/p/profile.json"), &before, &after).render("rounds", 5);
        assert!(text.contains("  kernel before: 0123456789ab subject\n  kernel after:  (not recorded)\n"), "{text}");
        // a profile.json from before `kernel` was recorded still reads, with none
        let old = serde_json::json!({"workload": "pipe", "smp": "1", "vary": "rounds", "base": 10,
            "cmdlines": ["a", "b"], "total": 5, "functions": [{"name": "f", "insns": 5}]});
        assert_eq!(parse_side(&old.to_string()).unwrap().kernel, "");
    }

    #[test]
    fn rows_by_absolute_difference_with_one_sided_functions_as_zero() {
        let before = side("pipe", "1", "rounds", 10, &[("a", 1000), ("b", 500), ("gone", 300), ("same", 70)]);
        let after = side("pipe", "1", "rounds", 20, &[("a", 2200), ("b", 600), ("new", 40), ("same", 140)]);
        let c = compare(Path::new("/p/profile.json"), &before, &after);
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
        // Per unit: the first profile's counts are over 10 rounds, the second's over 20.
        assert_eq!(c.total, Change { before: 187.0, after: 149.0, diff: -38.0 });
        assert_eq!(
            rows(&c),
            vec![
                ("gone", 30.0, 0.0, -30.0),
                ("b", 50.0, 30.0, -20.0),
                ("a", 100.0, 110.0, 10.0),
                ("new", 0.0, 2.0, 2.0),
                ("same", 7.0, 7.0, 0.0),
            ]
        );
        // The rows' differences add up to the totals' (every function of either side is a row).
        let sum: f64 = c.functions.iter().map(|f| f.change.diff).sum();
        assert!((sum - c.total.diff).abs() < 1e-9, "{sum} vs {}", c.total.diff);
        assert_eq!((c.cmdline_before.as_str(), c.cmdline_after.as_str()), ("workload=pipe,rounds=10", "workload=pipe,rounds=20"));
    }

    #[test]
    fn equal_differences_keep_name_order_and_negative_counts_compare() {
        let before = side("w", "2", "loops", 1, &[("z", 5), ("m", -3), ("a", 0)]);
        let after = side("w", "2", "loops", 1, &[("z", 0), ("m", 2), ("a", -5)]);
        let c = compare(Path::new("x"), &before, &after);
        let names: Vec<&str> = rows(&c).iter().map(|r| r.0).collect();
        assert_eq!(names, ["a", "m", "z"], "all three moved by 5");
        assert_eq!(c.total, Change { before: 2.0, after: -3.0, diff: -5.0 });
    }

    #[test]
    fn warns_when_the_profiles_measure_different_things() {
        let base = side("pipe", "1", "rounds", 2000, &[("a", 1)]);
        assert!(mismatches(&base, &base.clone()).is_empty());
        // Another base value or --append is what one compares: no warning.
        let mut other = side("pipe", "1", "rounds", 1000, &[("a", 1)]);
        other.cmdlines[0].push_str(" sched_features=NO_DELAY_DEQUEUE");
        assert!(mismatches(&base, &other).is_empty());
        let w = mismatches(&base, &side("yield", "2", "loops", 2000, &[]));
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(w[0], "the workload differs: pipe in the --against profile, yield in this one");
        assert!(w[1].starts_with("--vary (the unit of every figure) differs: rounds ") && w[1].contains("loops in this one"), "{w:?}");
        assert_eq!(w[2], "-smp differs: 1 in the --against profile, 2 in this one");
        // The comparison is still made, with the warning printed above the table.
        let c = compare(Path::new("p"), &base, &side("pipe", "2", "rounds", 2000, &[("a", 3)]));
        assert_eq!(c.warnings, ["-smp differs: 1 in the --against profile, 2 in this one"]);
        let text = c.render("rounds", 10);
        let (head, table) = text.split_once("warning: -smp differs").unwrap();
        assert!(head.contains("against p (instructions per round):"), "{text}");
        assert!(table.contains("total (+200.0%)"), "{text}");
    }

    #[test]
    fn renders_totals_top_rows_and_the_rest() {
        let before = side("pipe", "1", "rounds", 10, &[("a", 1000), ("b", 500), ("gone", 300), ("same", 70)]);
        let after = side("pipe", "1", "rounds", 20, &[("a", 2200), ("b", 600), ("new", 40), ("same", 140)]);
        let text = compare(Path::new("/p/profile.json"), &before, &after).render("rounds", 2);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "",
                "against /p/profile.json (instructions per round):",
                "  before: workload=pipe,rounds=10",
                "  after:  workload=pipe,rounds=20",
                "      before        after         diff",
                "       187.0        149.0        -38.0  total (-20.3%)",
                "        30.0          0.0        -30.0  gone",
                "        50.0         30.0        -20.0  b",
                "       100.0        112.0        +12.0  (2 more functions that changed)",
                "(1 functions unchanged)",
                "by layer:",
                "       187.0        149.0        -38.0  assembly stubs and other unmangled symbols",
            ],
            "{text}"
        );
        // A profile under the workspace is shown relative to it.
        let inside = crate::workspace_root().join("target/profile/t-pipe/profile.json");
        let text = compare(&inside, &before, &after).render("rounds", 2);
        assert!(text.starts_with("\nagainst target/profile/t-pipe/profile.json (instructions per round):\n"), "{text}");
    }

    #[test]
    fn layers_add_up_each_sides_functions_by_crate() {
        let before = side("pipe", "1", "rounds", 10, &[("sched::pick", 100), ("fairway_kernel::wakeup::a", 300), ("memcpy", 10)]);
        let after = side("pipe", "1", "rounds", 10, &[("sched::pick", 80), ("sched::place", 30), ("core::ptr::copy", 20), ("memcpy", 10)]);
        let c = compare(Path::new("/p"), &before, &after);
        let got: Vec<(Layer, f64, f64)> = c.layers.iter().map(|l| (l.layer, l.change.before, l.change.after)).collect();
        assert_eq!(
            got,
            [(Layer::Policy, 10.0, 11.0), (Layer::Kernel, 30.0, 0.0), (Layer::Library, 0.0, 2.0), (Layer::Other, 1.0, 1.0)]
        );
        let text = c.render("rounds", 5);
        assert!(text.contains("by layer:\n        10.0         11.0         +1.0  policy crate (sched::)\n"), "{text}");
    }

    fn json_of(s: &Side) -> String {
        let fns: Vec<_> = s
            .functions
            .iter()
            .map(|f| serde_json::json!({"name": f.name, "layer": "kernel", "insns": f.insns}))
            .collect();
        serde_json::json!({
            "workload": s.workload, "smp": s.smp, "vary": s.vary, "base": s.base, "cmdlines": s.cmdlines,
            "total": s.total, "per_unit": s.total as f64 / s.base as f64, "layers": [], "library_crates": [],
            "functions": fns, "kernel_figures": [[], []], "kernel_total_ns": null
        })
        .to_string()
    }

    #[test]
    fn reads_a_profile_json_and_refuses_anything_else() {
        let good = side("pipe", "1", "rounds", 2000, &[("a", 6000), ("b", -10)]);
        assert_eq!(parse_side(&json_of(&good)).unwrap(), good);
        let bad = |text: &str| parse_side(text).unwrap_err();
        assert!(bad("").contains("EOF"), "{}", bad(""));
        let plugin_file = bad("fairway-qemu-profile v1\n1000 5\nend insns=5\n");
        assert!(plugin_file.contains("at line 1 column"), "{plugin_file}");
        // A bench.json has a workload and an smp, but no --vary nor functions.
        let bench = r#"{"workload": "pipe", "cmdline": "workload=pipe", "smp": "2", "icount": false, "runs": []}"#;
        assert!(bad(bench).contains("missing field `vary`"), "{}", bad(bench));
        let mut zero = good.clone();
        zero.base = 0;
        assert!(bad(&json_of(&zero)).contains("`base` is 0"));
        let mut edited = good.clone();
        edited.total += 1;
        assert!(bad(&json_of(&edited)).contains("functions add up to 5990 instructions, its `total` says 5991"));

        let dir = std::env::temp_dir().join(format!("xtask-against-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("run")).unwrap();
        let missing = load(&dir.join("nope")).unwrap_err();
        assert!(missing.starts_with("xtask profile --against ") && missing.contains("nope: No such file"), "{missing}");
        let empty = load(&dir.join("run")).unwrap_err();
        assert!(empty.contains("the directory has no profile.json"), "{empty}");
        std::fs::write(dir.join("run/profile.json"), json_of(&good)).unwrap();
        std::fs::write(dir.join("bench.json"), bench).unwrap();
        let not = load(&dir.join("bench.json")).unwrap_err();
        assert!(not.contains("bench.json: not a profile.json of `cargo xtask profile` (missing field `vary`"), "{not}");
        std::fs::write(dir.join("run/profile.json"), bench).unwrap();
        let in_dir = load(&dir.join("run")).unwrap_err();
        assert!(in_dir.contains("run: ") && in_dir.contains("run/profile.json: not a profile.json"), "{in_dir}");
        std::fs::write(dir.join("run/profile.json"), json_of(&good)).unwrap();
        // The directory or the file itself.
        let (path, s) = load(&dir.join("run")).unwrap();
        assert_eq!((path.file_name().unwrap(), &s), (std::ffi::OsStr::new("profile.json"), &good));
        assert_eq!(load(&dir.join("run/profile.json")).unwrap(), (path, good));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
