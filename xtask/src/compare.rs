//! `cargo xtask compare --base S --new S WORKLOAD`: the same workload under
//! two kernel command-line settings (runs interleaved base/new so host load
//! drifts hit both), printed like mmtests' compare-kernels: Hmean for
//! higher-is-better metrics, Amean otherwise, the change signed so positive
//! is better, and `*` marks where Welch's two-sided t-test (runs as samples)
//! gives p < 0.05.

use std::fmt::Write as _;

use serde::Serialize;

use crate::bench::{cmdline, out_dir, progress, Boot};
use crate::results::{self, RunRecord};
use crate::stats;
use crate::workload_args::BootArgs;

/// Significance level of the t-test.
pub const ALPHA: f64 = 0.05;

#[derive(clap::Args)]
pub struct CompareArgs {
    /// Workload name (kernel/src/workloads/), e.g. hackbench.
    pub workload: String,
    /// Extra kernel command line of the baseline (may be empty).
    #[arg(long, default_value = "")]
    pub base: String,
    /// Extra kernel command line of the new side.
    #[arg(long)]
    pub new: String,
    /// `param=v1,v2,...`: one comparison per value of a workload parameter (added to --params).
    #[arg(long)]
    pub sweep: Option<String>,
    // --params (common to every run), --smp, --timeout; no --append: --base and --new are the
    // two sides' extra command lines.
    #[command(flatten)]
    pub boot: BootArgs,
    /// Boots per side and sweep point.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Deterministic instruction-counted time (-icount).
    #[arg(long)]
    pub icount: bool,
}

/// `param=v1,v2` → [`param=v1`, `param=v2`]; none → one empty point.
pub fn sweep_points(sweep: Option<&str>) -> Result<Vec<String>, String> {
    let Some(s) = sweep else { return Ok(vec![String::new()]) };
    let (k, vs) = s.split_once('=').ok_or_else(|| format!("--sweep {s:?} is not param=v1,v2,..."))?;
    let pts: Vec<String> = vs.split(',').filter(|v| !v.is_empty()).map(|v| format!("{k}={v}")).collect();
    if k.is_empty() || pts.is_empty() {
        return Err(format!("--sweep {s:?} is not param=v1,v2,..."));
    }
    Ok(pts)
}

/// One table row: a metric at a sweep point.
#[derive(Debug, Serialize)]
pub struct Row {
    pub point: String,
    pub metric: String,
    pub unit: String,
    pub higher_is_better: bool,
    /// `Hmean` or `Amean`.
    pub mean_kind: &'static str,
    pub base: f64,
    pub new: f64,
    pub base_stddev: f64,
    pub new_stddev: f64,
    pub pdiff: f64,
    pub p_value: Option<f64>,
    pub significant: bool,
    pub n_base: usize,
    pub n_new: usize,
}

pub fn rows(point: &str, base: &[RunRecord], new: &[RunRecord]) -> Vec<Row> {
    let nb = results::by_metric(new);
    results::by_metric(base)
        .into_iter()
        .filter_map(|s| {
            let (f, b) = (s.figure, s.values);
            let n = nb.iter().find(|g| g.figure.metric == f.metric)?.values.clone();
            let mean = |x: &[f64]| if f.higher_is_better { stats::hmean(x) } else { stats::amean(x) };
            let (mb, mn) = (mean(&b), mean(&n));
            let p = stats::welch_p(&b, &n);
            Some(Row {
                point: point.to_string(),
                metric: f.metric.clone(),
                unit: f.unit.clone(),
                higher_is_better: f.higher_is_better,
                mean_kind: if f.higher_is_better { "Hmean" } else { "Amean" },
                base: mb,
                new: mn,
                base_stddev: stats::stddev(&b),
                new_stddev: stats::stddev(&n),
                pdiff: stats::pdiff(mb, mn, f.higher_is_better),
                p_value: p,
                significant: p.is_some_and(|p| p < ALPHA),
                n_base: b.len(),
                n_new: n.len(),
            })
        })
        .collect()
}

/// The table, mmtests style: `(x.xx%)` normally, `* x.xx%*` when significant.
pub fn table(rows: &[Row]) -> String {
    let mut s = format!("{:<6} {:<14} {:<14} {:>23} {:>23}  {:<8} {}\n", "", "metric", "point", "base", "new", "unit", "p");
    for r in rows {
        let new = if r.significant {
            format!("{:>12.3} *{:>7.2}%*", r.new, r.pdiff)
        } else {
            format!("{:>12.3} ({:>7.2}%)", r.new, r.pdiff)
        };
        let p = r.p_value.map_or("-".to_string(), |p| format!("{p:.4}"));
        let _ = writeln!(
            s,
            "{:<6} {:<14} {:<14} {:>12.3} ({:>7.2}%) {:>23}  {:<8} {}",
            r.mean_kind,
            r.metric,
            if r.point.is_empty() { "-" } else { &r.point },
            r.base,
            0.0,
            new,
            r.unit,
            p
        );
    }
    s
}

#[derive(Serialize)]
struct CompareJson<'a> {
    workload: &'a str,
    base: &'a str,
    new: &'a str,
    smp: &'a str,
    icount: bool,
    test: String,
    rows: &'a [Row],
    base_runs: &'a [(String, Vec<RunRecord>)],
    new_runs: &'a [(String, Vec<RunRecord>)],
}

fn params_with(common: &str, point: &str) -> String {
    [common, point].iter().filter(|s| !s.is_empty()).cloned().collect::<Vec<_>>().join(",")
}

pub fn compare(a: CompareArgs) -> Result<(), String> {
    let points = sweep_points(a.sweep.as_deref())?;
    let boot = Boot::prepare(&a.boot.smp, a.icount, a.boot.timeout)?;
    let dir = out_dir(&format!("compare-{}", a.workload))?;
    let pb = progress((points.len() * a.runs * 2) as u64);
    let (mut all_base, mut all_new, mut all_rows) = (Vec::new(), Vec::new(), Vec::new());
    let mut failed = 0;
    for pt in &points {
        let params = params_with(&a.boot.params, pt);
        let lines = [cmdline(&a.workload, &params, &a.base), cmdline(&a.workload, &params, &a.new)];
        pb.println(format!("base: {}\nnew:  {}", lines[0], lines[1]));
        let (mut base, mut new) = (Vec::new(), Vec::new());
        for i in 0..a.runs {
            for (side, line) in lines.iter().enumerate() {
                let (rec, log) = boot.run(i, line)?;
                let tag = if side == 0 { "base" } else { "new" };
                let name = format!("{tag}-{}-{i}.log", if pt.is_empty() { "default" } else { pt });
                std::fs::write(dir.join(name), log.raw()).map_err(|e| e.to_string())?;
                if !rec.ok {
                    failed += 1;
                    pb.println(format!("{tag} run {i} {pt}: {}", rec.exit));
                }
                pb.set_message(format!("{pt} {tag} {i}"));
                pb.inc(1);
                if side == 0 { base.push(rec) } else { new.push(rec) }
            }
        }
        all_rows.extend(rows(pt, &base, &new));
        all_base.push((pt.clone(), base));
        all_new.push((pt.clone(), new));
    }
    pb.finish_and_clear();
    println!(
        "{} -smp {}{}, {} runs per side and point\n  base: {:?}\n  new:  {:?}\n",
        a.workload,
        a.boot.smp,
        if a.icount { " --icount" } else { "" },
        a.runs,
        a.base,
        a.new
    );
    print!("{}", table(&all_rows));
    let test = format!(
        "Hmean for higher-is-better metrics, Amean otherwise; % is the change, positive = better; \
         * = significant: Welch's two-sided t-test, p < {ALPHA} (runs as samples)"
    );
    println!("\n{test}");
    for (label, runs) in [("base", &all_base), ("new", &all_new)] {
        let flat: Vec<RunRecord> = runs
            .iter()
            .flat_map(|(pt, rs)| rs.iter().map(move |r| RunRecord { exit: format!("{pt} {}", r.exit), ..r.clone() }))
            .collect();
        let sub = dir.join(label);
        std::fs::create_dir_all(&sub).map_err(|e| e.to_string())?;
        crate::bench::write_csv(&sub, &flat, Some(label))?;
    }
    let json = CompareJson {
        workload: &a.workload,
        base: &a.base,
        new: &a.new,
        smp: &a.boot.smp,
        icount: a.icount,
        test,
        rows: &all_rows,
        base_runs: &all_base,
        new_runs: &all_new,
    };
    std::fs::write(dir.join("compare.json"), serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    println!("wrote {}", dir.display());
    if failed > 0 {
        return Err(format!("xtask: {failed} runs failed"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Figure;

    fn run(vals: &[(&str, f64, bool)]) -> RunRecord {
        RunRecord {
            run: 0,
            exit: String::new(),
            ok: true,
            wall_s: 0.0,
            results: vals
                .iter()
                .map(|&(m, v, h)| Figure { workload: "w".into(), metric: m.into(), value: v, unit: "u".into(), higher_is_better: h })
                .collect(),
            schedstat_delta: vec![],
            hist: vec![],
        }
    }

    #[test]
    fn sweep_parsing() {
        assert_eq!(sweep_points(None).unwrap(), vec![""]);
        assert_eq!(sweep_points(Some("groups=1,2")).unwrap(), vec!["groups=1", "groups=2"]);
        assert!(sweep_points(Some("groups")).is_err());
        assert_eq!(params_with("loops=5", "groups=1"), "loops=5,groups=1");
        assert_eq!(params_with("", "groups=1"), "groups=1");
    }

    #[test]
    fn rows_use_hmean_for_rates_and_mark_significance() {
        let base: Vec<_> = [1.0, 1.1, 0.9].iter().map(|&t| run(&[("time", t, false), ("rps", 100.0 + t, true)])).collect();
        let new: Vec<_> = [(2.0, 101.1), (2.1, 100.9), (1.9, 101.0)]
            .iter()
            .map(|&(t, r)| run(&[("time", t, false), ("rps", r, true)]))
            .collect();
        let r = rows("groups=1", &base, &new);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].mean_kind, "Amean");
        assert!((r[0].pdiff + 100.0).abs() < 1e-9, "twice the time is 100% worse");
        assert!(r[0].significant);
        assert_eq!(r[1].mean_kind, "Hmean");
        assert!(!r[1].significant, "rps did not move beyond noise");
        let t = table(&r);
        assert!(t.contains("*-100.00%*"), "{t}");
        assert!(t.contains("(   0.00%)"), "{t}");
    }
}
