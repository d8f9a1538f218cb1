//! `--sweep`: where a claim holds. A sweep names a claim and two parameters, each with its
//! values and what a value adds to every run (a kernel command-line word, or a `fairway-sim`
//! argument such as a hardware cost); at every point of the grid the claim's baseline and
//! variant run at the claim's points, and the claim is decided there as in the report's table,
//! every interval of the map Bonferroni-corrected over the map's comparisons. The result is a
//! map of verdicts (`plot::experiment::sweep_map_svg`) and its table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::claims::{self, Claim, Verdict, POOLED};
use super::{read_cells, run_cells, runs, Form, Matrix, Mode, Runner, Spec, Variant};
use crate::plot::experiment::{sweep_map_svg, MapCell, Shade, SweepMap};
use crate::stats::bootstrap::Bootstrap;

/// A map of where a claim holds over two swept parameters.
pub struct Sweep {
    /// The claim's name (one of the experiment's claims).
    pub claim: &'static str,
    pub x: Axis,
    pub y: Axis,
    /// Seeds per cell of the grid on the simulator, if fewer than the matrix's (a grid of many
    /// points costs that many matrices; the report says how many each point had).
    pub seeds: Option<usize>,
}

impl Sweep {
    /// The mode of the grid's runs: the matrix's, with this sweep's seeds on the simulator.
    pub fn mode(&self, m: Mode) -> Mode {
        match (m, self.seeds) {
            (Mode::Sim(n), Some(s)) => Mode::Sim(s.clamp(1, n)),
            _ => m,
        }
    }
}

/// One swept parameter.
pub struct Axis {
    /// Its name and unit, for the map's axis.
    pub name: &'static str,
    pub values: &'static [&'static str],
    pub arg: Arg,
}

/// What an axis value adds to a run; `{}` in the pattern stands for the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A kernel command-line word (both engines), e.g. `hz={}` (no declared sweep sets one).
    #[cfg_attr(not(test), allow(dead_code))]
    Cmdline(&'static str),
    /// A workload parameter, added to every point's (both engines), e.g. `work_us={}`.
    Param(&'static str),
    /// `fairway-sim` arguments (the simulator only; space-separated), e.g. a hardware cost on
    /// top of the run's profile (`--hw-set idle_exit_ns={}`; both axes may set one).
    Sim(&'static str),
}

impl Arg {
    /// The value's (kernel command-line words, workload parameters, simulator arguments).
    fn with(self, value: &str) -> (String, String, String) {
        let v = |p: &str| p.replace("{}", value);
        match self {
            Arg::Cmdline(p) => (v(p), String::new(), String::new()),
            Arg::Param(p) => (String::new(), v(p), String::new()),
            Arg::Sim(p) => (String::new(), String::new(), v(p)),
        }
    }
}

/// The decided grid of one sweep: `cells[iy][ix]`, each the claim's row (pooled over its
/// points where it has several).
pub struct SweepResult {
    pub cells: Vec<Vec<Option<claims::ClaimRow>>>,
    pub level: f64,
    pub comparisons: usize,
    /// Runs per cell of each grid point (seeds on the simulator).
    pub runs: usize,
    /// The grid points whose runs did not finish, each with why (`-` on the map).
    pub unfinished: Vec<String>,
}

/// The directory of one grid point's logs.
fn cell_dir(dir: &Path, k: usize, ix: usize, iy: usize) -> PathBuf {
    dir.join(format!("sweep{k}")).join(format!("x{ix}-y{iy}"))
}

/// The sweep's claim, the form at the claim's points, and the variants of grid point (`x`, `y`):
/// the claim's baseline and variant with the point's arguments added.
fn grid_point(spec: &Spec, sw: &Sweep, form: &Form, runner_is_sim: bool, x: &str, y: &str) -> Result<(Claim, Form, Vec<Variant>), String> {
    let claim = spec
        .claims
        .iter()
        .find(|c| c.name == sw.claim)
        .ok_or_else(|| format!("xtask: {}'s sweep names the claim {:?}, which it does not declare", spec.name, sw.claim))?
        .clone();
    for axis in [&sw.x, &sw.y] {
        if matches!(axis.arg, Arg::Sim(_)) && !runner_is_sim {
            return Err(format!("xtask: the sweep of {:?} sets {} in the simulator (--engine sim)", sw.claim, axis.name));
        }
    }
    let ((xc, xp, xs), (yc, yp, ys)) = (sw.x.arg.with(x), sw.y.arg.with(y));
    let points: Vec<&'static str> = form
        .points
        .iter()
        .filter(|p| claim.points.is_empty() || claim.points.iter().any(|s| p.contains(s)))
        .map(|p| leak([*p, xp.as_str(), yp.as_str()].iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join(",")))
        .collect();
    if points.is_empty() {
        return Err(format!("xtask: the sweep of {:?} has none of the claim's points in this form", sw.claim));
    }
    let join = |a: &str, b: &str, c: &str| [a, b, c].iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join(" ");
    let variants = [claim.baseline, claim.variant]
        .iter()
        .map(|label| {
            let v = spec.variants.iter().find(|v| v.label == *label).ok_or_else(|| format!("xtask: no variant {label:?} in {}", spec.name))?;
            Ok(Variant {
                append: leak(join(v.append, &xc, &yc)),
                sim_args: leak(join(v.sim_args, &xs, &ys)),
                ..v.clone()
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok((claim, Form { points: Box::leak(points.into_boxed_slice()), ..form.clone() }, variants))
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Runs (`from` empty) or reads every sweep of `spec` on `form`, and decides each grid point.
#[allow(clippy::too_many_arguments)]
pub fn sweeps(spec: &Spec, form: &Form, runner: Option<&Runner>, runner_is_sim: bool, mode: Mode, dir: &Path, from: &[PathBuf], jobs: usize) -> Result<Vec<SweepResult>, String> {
    let boot = Bootstrap::default();
    let mut out = Vec::new();
    for (k, sw) in spec.sweeps.iter().enumerate() {
        let mode = sw.mode(mode);
        let mut grids: Vec<Vec<Option<(Claim, Matrix)>>> = Vec::new();
        let mut unfinished = Vec::new();
        for (iy, y) in sw.y.values.iter().enumerate() {
            let mut row = Vec::new();
            for (ix, x) in sw.x.values.iter().enumerate() {
                let (claim, f, variants) = grid_point(spec, sw, form, runner_is_sim, x, y)?;
                let m = match runner {
                    Some(r) if from.is_empty() => run_cells(spec, &variants, &f, r, mode, &cell_dir(dir, k, ix, iy), true, jobs),
                    _ => read_cells(spec, &variants, &f, &from.iter().map(|d| cell_dir(d, k, ix, iy)).collect::<Vec<_>>(), mode),
                };
                // A grid point whose runs did not finish (the workload made no progress in the
                // run's time at those costs) is a finding of the map, not a failure of it.
                match m {
                    Ok(m) => row.push(Some((claim, m))),
                    Err(e) if e.contains("did not finish") => {
                        // The log's name and why, without the directory (the report names it).
                        let why = e.rsplit_once('/').map_or(e.as_str(), |(_, w)| w);
                        unfinished.push(format!("{} {x}, {} {y} ({why})", sw.x.name, sw.y.name));
                        row.push(None);
                    }
                    Err(e) => return Err(e),
                }
            }
            grids.push(row);
        }
        // One family: every grid point's rows.
        let comparisons: usize = grids.iter().flatten().flatten().map(|(c, m)| {
            let n = c.point_indices(m).len();
            n + usize::from(n > 1)
        }).sum();
        let level = 1.0 - claims::FAMILY_ALPHA / comparisons.max(1) as f64;
        let cells = grids
            .iter()
            .map(|row| {
                row.iter()
                    .map(|cell| {
                        let (c, m) = cell.as_ref()?;
                        let d = claims::decide_all_at(std::slice::from_ref(c), m, &boot, level);
                        d.rows.iter().find(|r| r.point == POOLED).or(d.rows.first()).cloned()
                    })
                    .collect()
            })
            .collect();
        out.push(SweepResult { cells, level, comparisons, runs: mode.boots(), unfinished });
    }
    Ok(out)
}

/// The job list of every sweep of `spec` (as `runs::write_jobs` of the matrix).
pub fn write_jobs(spec: &Spec, form: &Form, runner: &Runner, mode: Mode, dir: &Path, jobs: &mut String) -> Result<usize, String> {
    let mut n = 0;
    for (k, sw) in spec.sweeps.iter().enumerate() {
        for (iy, y) in sw.y.values.iter().enumerate() {
            for (ix, x) in sw.x.values.iter().enumerate() {
                let (_, f, variants) = grid_point(spec, sw, form, matches!(runner, Runner::Sim { .. }), x, y)?;
                n += runs::write_cell_jobs(spec, &variants, &f, runner, sw.mode(mode), &cell_dir(dir, k, ix, iy), jobs)?;
            }
        }
    }
    Ok(n)
}

fn shade(v: Verdict) -> Shade {
    match v {
        Verdict::Reproduced => Shade::Reproduced,
        Verdict::Opposite => Shade::Opposite,
        Verdict::NoEffect => Shade::NoEffect,
        Verdict::Inconclusive => Shade::Inconclusive,
    }
}

/// The map of one decided sweep.
pub fn map(spec: &Spec, sw: &Sweep, r: &SweepResult, engine: &str) -> SweepMap {
    SweepMap {
        title: format!("{} ({engine}): where \"{}\" holds", spec.name, sw.claim),
        subtitle: format!(
            "each cell: the claim's verdict and effect there ({} runs per cell, {:.2}% intervals, {} comparisons, Bonferroni)",
            r.runs,
            100.0 * r.level,
            r.comparisons
        ),
        x_desc: sw.x.name.into(),
        y_desc: sw.y.name.into(),
        xs: sw.x.values.iter().map(|s| s.to_string()).collect(),
        ys: sw.y.values.iter().map(|s| s.to_string()).collect(),
        cells: r
            .cells
            .iter()
            .map(|row| row.iter().map(|c| c.as_ref().map(|c| MapCell { shade: shade(c.verdict), text: format!("{:+.1}", c.estimate) })).collect())
            .collect(),
    }
}

/// The sweeps' section of a report: per sweep its map (written beside the report) and its table.
pub fn markdown(spec: &Spec, results: &[SweepResult], report: &Path, engine: &str, level: &str) -> Result<String, String> {
    let mut s = String::new();
    if results.is_empty() {
        return Ok(s);
    }
    let _ = writeln!(s, "{level} Where the claims hold (sweeps)\n");
    let dir = report.parent().unwrap_or(Path::new("."));
    let stem = report.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| spec.name.into());
    for (k, (sw, r)) in spec.sweeps.iter().zip(results).enumerate() {
        let file = format!("{stem}-{engine}-map-{k}.svg");
        let path = dir.join(&file);
        std::fs::write(&path, sweep_map_svg(&map(spec, sw, r, engine))?).map_err(|e| format!("{}: {e}", path.display()))?;
        let _ = writeln!(
            s,
            "\"{}\" over {} and {}: verdict and effect at each grid point ({} run(s) per cell; {:.2}% intervals, Bonferroni-corrected over the map's {} comparisons).\n\n![where \"{}\" holds]({file})\n",
            sw.claim, sw.x.name, sw.y.name, r.runs, 100.0 * r.level, r.comparisons, sw.claim
        );
        let _ = writeln!(s, "| {} \\ {} | {} |", sw.y.name, sw.x.name, sw.x.values.join(" | "));
        let _ = writeln!(s, "|---|{}", "---|".repeat(sw.x.values.len()));
        for (y, row) in sw.y.values.iter().zip(&r.cells) {
            let cells: Vec<String> = row
                .iter()
                .map(|c| c.as_ref().map_or("-".into(), |c| format!("{} {}", c.verdict.text(), claims::fmt_effect(c.estimate, c.interval.as_ref(), ""))))
                .collect();
            let _ = writeln!(s, "| {y} | {} |", cells.join(" | "));
        }
        for u in &r.unfinished {
            let _ = writeln!(s, "\n`-`: did not finish at {u}");
        }
        s.push('\n');
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::super::claims::Figure;
    use super::super::find;
    use super::*;

    /// The fewest seeds per grid point a declared map may run on the simulator: fewer leave a
    /// point's interval too wide to tell "no effect" from "inconclusive".
    const MIN_MAP_SEEDS: usize = 5;

    /// A map's verdicts need intervals that can separate "no effect" from "inconclusive": every
    /// declared map runs at least [`MIN_MAP_SEEDS`] seeds per grid point in a full simulator run,
    /// and the matrix's own where it declares no fewer (checked: `seeds: Some(3)` on any map
    /// fails it).
    #[test]
    fn every_declared_map_runs_enough_seeds_per_grid_point() {
        use super::super::sim::MIN_SEEDS;
        for spec in super::super::all() {
            let seeds = super::super::sim_plans::plan(spec.name).seeds.max(MIN_SEEDS);
            for sw in &spec.sweeps {
                let n = sw.mode(Mode::Sim(seeds)).boots();
                assert!(n >= MIN_MAP_SEEDS, "{}: the map of {:?} runs {n} seeds a point", spec.name, sw.claim);
                assert_eq!(sw.seeds.is_none(), n == seeds, "{}", spec.name);
            }
        }
    }

    #[test]
    fn a_grid_point_adds_its_values_to_the_claims_two_variants_at_the_claims_points() {
        let mut spec = find("delayed-dequeue").unwrap();
        spec.claims = vec![Claim::change("p99", Figure::Result("wakeup_p99"), "NO_DELAY_DEQUEUE", "DELAY_DEQUEUE+DELAY_ZERO", 24.0).at(&["threads=2"])];
        let sw = Sweep {
            claim: "p99",
            x: Axis { name: "hz", values: &["100", "1000"], arg: Arg::Cmdline("hz={}") },
            y: Axis { name: "switch cost", values: &["1"], arg: Arg::Sim("--cost switch_ns={}") },
            seeds: None,
        };
        let (c, f, vs) = grid_point(&spec, &sw, &spec.full, true, "100", "1").unwrap();
        assert_eq!(c.name, "p99");
        assert!(f.points.iter().all(|p| p.contains("threads=2")) && !f.points.is_empty(), "{:?}", f.points);
        // a workload parameter goes into every point
        let param = Sweep { y: Axis { name: "work", values: &["50"], arg: Arg::Param("work_us={}") }, ..sw };
        let (_, f, _) = grid_point(&spec, &param, &spec.full, false, "100", "50").unwrap();
        assert!(f.points.iter().all(|p| p.contains("threads=2") && p.ends_with(",work_us=50")), "{:?}", f.points);
        let sw = Sweep { y: Axis { name: "switch cost", values: &["1"], arg: Arg::Sim("--cost switch_ns={}") }, ..param };
        assert_eq!(vs.len(), 2);
        assert_eq!((vs[0].label, vs[0].append, vs[0].sim_args), ("NO_DELAY_DEQUEUE", "sched_features=NO_DELAY_DEQUEUE hz=100", "--cost switch_ns=1"));
        assert_eq!((vs[1].label, vs[1].append), ("DELAY_DEQUEUE+DELAY_ZERO", "hz=100"));
        // a simulator argument on QEMU, an unknown claim, a claim without a point here: refused by name
        assert!(grid_point(&spec, &sw, &spec.full, false, "100", "1").err().unwrap().contains("sets switch cost in the simulator"));
        let unknown = Sweep { claim: "nope", ..sw };
        assert!(grid_point(&spec, &unknown, &spec.full, true, "100", "1").err().unwrap().contains("does not declare"));
    }

    #[test]
    fn the_map_shows_each_grid_points_verdict_and_effect() {
        let spec = find("avg-idle").unwrap();
        let sw = Sweep {
            claim: "x",
            x: Axis { name: "a", values: &["1", "2"], arg: Arg::Cmdline("a={}") },
            y: Axis { name: "b", values: &["10"], arg: Arg::Cmdline("b={}") },
            seeds: Some(5),
        };
        let row = |verdict, estimate| claims::ClaimRow { claim: 0, point: "p".into(), base: 1.0, new: 1.0, runs: (3, 3), estimate, interval: None, verdict };
        let r = SweepResult { cells: vec![vec![Some(row(Verdict::Reproduced, 22.0)), None]], level: 0.99, comparisons: 5, runs: 5, unfinished: Vec::new() };
        assert_eq!((sw.mode(Mode::Sim(10)), sw.mode(Mode::Sim(3)), sw.mode(Mode::Icount)), (Mode::Sim(5), Mode::Sim(3), Mode::Icount));
        let m = map(&spec, &sw, &r, "sim");
        assert_eq!((m.xs.len(), m.ys.len()), (2, 1));
        let c = m.cells[0][0].as_ref().unwrap();
        assert_eq!((c.shade, c.text.as_str()), (Shade::Reproduced, "+22.0"));
        assert!(m.cells[0][1].is_none() && m.subtitle.contains("5 comparisons"));
    }
}
