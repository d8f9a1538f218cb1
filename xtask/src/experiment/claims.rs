//! Claims: what a debate asserted, as a comparison the matrix decides.
//!
//! A claim names a figure (a workload's `@fw result`, or a figure read from each run's log), a
//! baseline and a variant, the points it is read at, and the size the debate claimed (signed:
//! +20 = the variant's figure 20% above the baseline's). Each point's effect is the relative (or
//! absolute) difference of the two cells' centres, with a bootstrap interval over the cells'
//! runs ([`crate::stats::bootstrap`]); a claim read at several points also gets the mean of the
//! points' effects, with an interval that resamples every cell. Every interval of a report is
//! at level 1 - 0.05/m, m the report's comparisons (Bonferroni on the interval's level), so
//! that all of them hold together with 95% confidence.
//!
//! The verdict compares the interval with a threshold proportional to the claim's size
//! (`threshold` × |claimed|, half by default):
//! - *reproduced*: the whole interval lies beyond the threshold in the claimed direction;
//! - *opposite*: the whole interval lies beyond it in the other direction;
//! - *no effect*: the whole interval lies within ± the threshold;
//! - *inconclusive*: anything else, and a cell of one run (no interval).
//!
//! A claim that the figure does *not* move (`Claim::no_change`, e.g. "throughput within 1%")
//! is reproduced when the interval lies within ± its margin, opposite when it lies wholly beyond
//! it, and inconclusive otherwise.
//!
//! No check that cannot fail: every claim names the case in which it fails ([`FailsWith`]): a
//! variant of the matrix, which the report evaluates in the variant's place (it must give
//! another verdict, or the report says the check did not show it can fail), or a change to the
//! code, named for whoever wants to run it.

use std::fmt::Write as _;

use fairway_scenarios::Log;

use super::Matrix;
use crate::stats::bootstrap::{relative_change, Bootstrap, Interval};

/// The family-wise error rate of a report's intervals.
pub const FAMILY_ALPHA: f64 = 0.05;
/// The default threshold, as a fraction of the claimed size.
pub const DEFAULT_THRESHOLD: f64 = 0.5;

/// What a claim compares, per run.
#[derive(Clone, Copy)]
pub enum Figure {
    /// `@fw result metric=NAME` of each run.
    Result(&'static str),
    /// A figure read from each run's log (a mechanism's counters), named `label`.
    Log { label: &'static str, read: fn(&Log) -> f64 },
}

impl Figure {
    pub fn name(&self) -> &'static str {
        match self {
            Figure::Result(m) => m,
            Figure::Log { label, .. } => label,
        }
    }

    /// The figure of each run of cell (`point`, `variant`); runs without it are left out.
    pub fn runs(&self, m: &Matrix, point: usize, variant: &str) -> Vec<f64> {
        let c = &m.cells[point][m.vi(variant)];
        let v: Vec<f64> = match self {
            Figure::Result(metric) => c
                .recs
                .iter()
                .filter(|r| r.ok)
                .filter_map(|r| r.results.iter().find(|f| f.metric == *metric).map(|f| f.value))
                .collect(),
            Figure::Log { read, .. } => c.logs.iter().map(read).collect(),
        };
        v.into_iter().filter(|x| x.is_finite()).collect()
    }
}

/// How an effect is expressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// `100 (variant / baseline - 1)`, in %.
    Relative,
    /// `variant - baseline`, in the figure's unit.
    Absolute,
}

/// The statistic of each cell's runs an effect compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Centre {
    Mean,
    /// For tails (a p99 per run) and figures with outlying runs.
    Median,
}

impl Centre {
    fn of(self) -> fn(&[f64]) -> f64 {
        match self {
            Centre::Mean => crate::stats::amean,
            Centre::Median => crate::stats::median,
        }
    }
}

/// What the claim expects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expect {
    /// A change of this size, signed (in the claim's scale).
    Change(f64),
    /// No change beyond ± this margin (in the claim's scale).
    NoChange(f64),
}

/// Where a claim's check fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailsWith {
    /// This variant of the matrix in the claim's variant's place must not give the claim's
    /// verdict (`why`: what it lacks). `moved`: a second variant that moves the figure, for a
    /// claim whose verdict is *no effect* as the first's is: it shows that the comparison can
    /// say more than *no effect* here, so that the verdict is the claimed change's, not a figure
    /// that never moves.
    Variant { label: &'static str, why: &'static str, moved: Option<(&'static str, &'static str)> },
    /// A change to the code under which the claim would not hold; named, not run.
    Mutation(&'static str),
    /// Nothing named: the report says so.
    Unnamed,
}

/// One claim of a debate (build it with [`Claim::change`] or [`Claim::no_change`] and the
/// setters; every field has a default but the figure, the two variants and the size).
#[derive(Clone)]
pub struct Claim {
    /// Short name, for the report's table.
    pub name: &'static str,
    /// Who claimed it, with the seed's own numbers.
    pub source: &'static str,
    pub figure: Figure,
    pub baseline: &'static str,
    pub variant: &'static str,
    /// The points the claim is read at: those containing one of these strings; all if empty.
    pub points: &'static [&'static str],
    pub scale: Scale,
    pub centre: Centre,
    pub expect: Expect,
    /// The threshold as a fraction of |claimed| ([`Expect::Change`] only).
    pub threshold: f64,
    pub fails_with: FailsWith,
}

impl Claim {
    /// `variant` changes `figure` by `claimed` % against `baseline`.
    pub fn change(name: &'static str, figure: Figure, baseline: &'static str, variant: &'static str, claimed: f64) -> Claim {
        Claim {
            name,
            source: "",
            figure,
            baseline,
            variant,
            points: &[],
            scale: Scale::Relative,
            centre: Centre::Mean,
            expect: Expect::Change(claimed),
            threshold: DEFAULT_THRESHOLD,
            fails_with: FailsWith::Unnamed,
        }
    }

    /// `variant` leaves `figure` within ± `margin` % of `baseline`'s.
    pub fn no_change(name: &'static str, figure: Figure, baseline: &'static str, variant: &'static str, margin: f64) -> Claim {
        Claim { expect: Expect::NoChange(margin), ..Claim::change(name, figure, baseline, variant, 0.0) }
    }

    pub fn source(self, source: &'static str) -> Claim {
        Claim { source, ..self }
    }
    pub fn at(self, points: &'static [&'static str]) -> Claim {
        Claim { points, ..self }
    }
    /// The difference in the figure's unit instead of in %.
    pub fn absolute(self) -> Claim {
        Claim { scale: Scale::Absolute, ..self }
    }
    pub fn median(self) -> Claim {
        Claim { centre: Centre::Median, ..self }
    }
    pub fn threshold(self, fraction: f64) -> Claim {
        Claim { threshold: fraction, ..self }
    }
    pub fn fails_with_variant(self, label: &'static str, why: &'static str) -> Claim {
        Claim { fails_with: FailsWith::Variant { label, why, moved: None }, ..self }
    }
    /// With [`Claim::fails_with_variant`]: a variant that moves the claim's figure (`why`: how),
    /// evaluated in the variant's place too ([`FailsWith::Variant`]'s `moved`).
    pub fn or_moved_by_variant(self, label: &'static str, why: &'static str) -> Claim {
        match self.fails_with {
            FailsWith::Variant { label: l, why: w, .. } => Claim { fails_with: FailsWith::Variant { label: l, why: w, moved: Some((label, why)) }, ..self },
            _ => panic!("or_moved_by_variant follows fails_with_variant"),
        }
    }
    pub fn fails_with_mutation(self, what: &'static str) -> Claim {
        Claim { fails_with: FailsWith::Mutation(what), ..self }
    }

    /// The threshold in the claim's scale: `threshold` × |claimed|, or the margin.
    pub fn bound(&self) -> f64 {
        match self.expect {
            Expect::Change(c) => self.threshold * c.abs(),
            Expect::NoChange(m) => m,
        }
    }

    fn unit(&self) -> &'static str {
        match self.scale {
            Scale::Relative => "%",
            Scale::Absolute => "",
        }
    }

    /// The matrix's points this claim is read at.
    pub fn point_indices(&self, m: &Matrix) -> Vec<usize> {
        (0..m.points.len()).filter(|&p| self.points.is_empty() || self.points.iter().any(|s| m.points[p].contains(s))).collect()
    }
}

/// A claim's verdict at one point (or pooled).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Reproduced,
    Opposite,
    NoEffect,
    Inconclusive,
}

impl Verdict {
    pub fn text(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Opposite => "opposite",
            Verdict::NoEffect => "no effect",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}

/// The verdict of an effect's interval against what the claim expects (see the module docs).
pub fn decide(interval: Option<&Interval>, expect: Expect, bound: f64) -> Verdict {
    let Some(i) = interval else { return Verdict::Inconclusive };
    match expect {
        Expect::Change(claimed) => {
            // In the claimed direction's coordinates: positive = the way the claim went.
            let d = if claimed < 0.0 { -1.0 } else { 1.0 };
            let (lo, hi) = if d > 0.0 { (i.lo, i.hi) } else { (-i.hi, -i.lo) };
            if lo > bound {
                Verdict::Reproduced
            } else if hi < -bound {
                Verdict::Opposite
            } else if lo >= -bound && hi <= bound {
                Verdict::NoEffect
            } else {
                Verdict::Inconclusive
            }
        }
        Expect::NoChange(margin) => {
            if i.lo >= -margin && i.hi <= margin {
                Verdict::Reproduced
            } else if i.lo > margin || i.hi < -margin {
                Verdict::Opposite
            } else {
                Verdict::Inconclusive
            }
        }
    }
}

/// One row of a report's claims: a claim at one point, or pooled over its points.
#[derive(Clone, Debug)]
pub struct ClaimRow {
    /// Index into the claims.
    pub claim: usize,
    /// The point's text, or `all points (mean)` for the pooled row.
    pub point: String,
    /// The baseline's and the variant's centres, and their run counts (the pooled row: NaN, and
    /// the fewest runs of any cell).
    pub base: f64,
    pub new: f64,
    pub runs: (usize, usize),
    /// The effect: the estimate alone where there is no interval.
    pub estimate: f64,
    pub interval: Option<Interval>,
    pub verdict: Verdict,
}

/// A claim's failing case, evaluated where it is a variant of the matrix.
#[derive(Clone, Debug)]
pub struct FailingRow {
    pub claim: usize,
    pub point: String,
    pub label: &'static str,
    pub estimate: f64,
    pub interval: Option<Interval>,
    pub verdict: Verdict,
}

/// Every claim of a report, decided.
#[derive(Clone, Debug)]
pub struct Decided {
    pub rows: Vec<ClaimRow>,
    pub failing: Vec<FailingRow>,
    /// The level of every interval (1 - alpha / comparisons).
    pub level: f64,
    pub comparisons: usize,
}

impl Decided {
    /// The claim's overall verdict: its pooled row's where it has one, else its only row's.
    pub fn verdict(&self, claim: usize) -> Option<Verdict> {
        let rows: Vec<&ClaimRow> = self.rows.iter().filter(|r| r.claim == claim).collect();
        rows.iter().find(|r| r.point == POOLED).or(rows.first()).map(|r| r.verdict)
    }
}

/// The pooled row's point text.
pub const POOLED: &str = "all points (mean)";

/// The effect statistic of a claim over samples laid out baseline, variant, baseline, variant,
/// ... (one pair per point): each pair's difference, then their mean.
fn effect_stat(scale: Scale, centre: Centre) -> impl Fn(&[Vec<f64>]) -> f64 {
    let c = centre.of();
    move |s: &[Vec<f64>]| {
        let per: Vec<f64> = s
            .chunks(2)
            .map(|pair| match scale {
                Scale::Relative => relative_change(&pair[0], &pair[1], c),
                Scale::Absolute => c(&pair[1]) - c(&pair[0]),
            })
            .collect();
        per.iter().sum::<f64>() / per.len() as f64
    }
}

/// The effect of `variant` against `claim.baseline` over `points`: the estimate and its
/// interval at `level` (none where a cell has fewer than two runs).
fn effect(claim: &Claim, m: &Matrix, points: &[usize], variant: &str, boot: &Bootstrap, level: f64) -> (f64, Option<Interval>, (usize, usize)) {
    let mut samples: Vec<Vec<f64>> = Vec::new();
    for &p in points {
        samples.push(claim.figure.runs(m, p, claim.baseline));
        samples.push(claim.figure.runs(m, p, variant));
    }
    let stat = effect_stat(claim.scale, claim.centre);
    let runs = (
        samples.iter().step_by(2).map(Vec::len).min().unwrap_or(0),
        samples.iter().skip(1).step_by(2).map(Vec::len).min().unwrap_or(0),
    );
    if samples.iter().any(Vec::is_empty) {
        return (f64::NAN, None, runs);
    }
    let estimate = stat(&samples);
    let refs: Vec<&[f64]> = samples.iter().map(Vec::as_slice).collect();
    (estimate, boot.interval(&refs, stat, level), runs)
}

/// Decides every claim on `m`: one row per claim and point, one pooled row per claim read at
/// more than one point, every interval at 1 - [`FAMILY_ALPHA`] / (the number of rows). Claims
/// naming a variant or point the matrix lacks are left out (a quick form has fewer).
pub fn decide_all(claims: &[Claim], m: &Matrix, boot: &Bootstrap) -> Decided {
    let comparisons: usize = usable(claims, m).iter().map(|(_, ps)| ps.len() + usize::from(ps.len() > 1)).sum();
    decide_all_at(claims, m, boot, 1.0 - FAMILY_ALPHA / comparisons.max(1) as f64)
}

/// The claims this matrix can decide (its variants and points), with their points.
fn usable(claims: &[Claim], m: &Matrix) -> Vec<(usize, Vec<usize>)> {
    let has = |label: &str| m.variants.iter().any(|v| v.label == label);
    claims
        .iter()
        .enumerate()
        .filter(|(_, c)| has(c.baseline) && has(c.variant))
        .map(|(i, c)| (i, c.point_indices(m)))
        .filter(|(_, ps)| !ps.is_empty())
        .collect()
}

/// [`decide_all`] with every interval at `level` (a family larger than this matrix's rows: a
/// sweep's grid).
pub fn decide_all_at(claims: &[Claim], m: &Matrix, boot: &Bootstrap, level: f64) -> Decided {
    let has = |label: &str| m.variants.iter().any(|v| v.label == label);
    let usable = usable(claims, m);
    let comparisons: usize = usable.iter().map(|(_, ps)| ps.len() + usize::from(ps.len() > 1)).sum();
    let centre = |c: &Claim, p: usize, v: &str| {
        let x = c.figure.runs(m, p, v);
        if x.is_empty() { f64::NAN } else { (c.centre.of())(&x) }
    };
    let (mut rows, mut failing) = (Vec::new(), Vec::new());
    for (ci, ps) in &usable {
        let c = &claims[*ci];
        let mut groups: Vec<(String, Vec<usize>)> = ps.iter().map(|&p| (m.points[p].clone(), vec![p])).collect();
        if ps.len() > 1 {
            groups.push((POOLED.to_string(), ps.clone()));
        }
        for (point, group) in groups {
            let (estimate, interval, runs) = effect(c, m, &group, c.variant, boot, level);
            let (base, new) = if group.len() == 1 { (centre(c, group[0], c.baseline), centre(c, group[0], c.variant)) } else { (f64::NAN, f64::NAN) };
            rows.push(ClaimRow { claim: *ci, point: point.clone(), base, new, runs, estimate, interval, verdict: decide(interval.as_ref(), c.expect, c.bound()) });
            if let FailsWith::Variant { label, moved, .. } = c.fails_with {
                for label in std::iter::once(label).chain(moved.map(|(l, _)| l)).filter(|l| has(l)) {
                    let (estimate, interval, _) = effect(c, m, &group, label, boot, level);
                    failing.push(FailingRow { claim: *ci, point: point.clone(), label, estimate, interval, verdict: decide(interval.as_ref(), c.expect, c.bound()) });
                }
            }
        }
    }
    Decided { rows, failing, level, comparisons }
}

fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        "-".into()
    } else if x.abs() >= 1000.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

/// An effect with its interval: `+12.3% [+8.1, +16.0]`, or the estimate alone.
pub fn fmt_effect(estimate: f64, interval: Option<&Interval>, unit: &str) -> String {
    if !estimate.is_finite() {
        return "n/a".into();
    }
    match interval {
        Some(i) => format!("{:+.2}{unit} [{:+.2}, {:+.2}]", estimate, i.lo, i.hi),
        None => format!("{estimate:+.2}{unit} (no interval)"),
    }
}

/// What a claim expects, in words: `+20%` (threshold ±10%), or `within ±1%`.
pub fn fmt_expect(c: &Claim) -> String {
    match c.expect {
        Expect::Change(x) => format!("{}{} (threshold {}{})", short(x, true), c.unit(), short(c.bound(), false), c.unit()),
        Expect::NoChange(m) => format!("within ±{}{}", short(m, false), c.unit()),
    }
}

/// A declared size with at most two decimals, without trailing zeros: `+24`, `-16.67`, `2.15`.
fn short(x: f64, signed: bool) -> String {
    let s = format!("{:.2}", x.abs());
    let s = s.trim_end_matches('0').trim_end_matches('.');
    let sign = if x < 0.0 { "-" } else if signed { "+" } else { "" };
    format!("{sign}{s}")
}

/// The claims' section of a report (markdown): the table of verdicts, what each claim is and
/// where it fails, and the failing cases' verdicts.
pub fn markdown(claims: &[Claim], d: &Decided) -> String {
    let mut s = String::new();
    if d.rows.is_empty() {
        s += "No claim of this experiment is read at these points and variants.\n";
        return s;
    }
    let _ = writeln!(
        s,
        "Each effect is the variant's centre (mean or median of the runs, as the claim says) against the baseline's, with its {:.2}% bootstrap interval (BCa, 4,000 resamples \
         over the runs of each cell, seed 1): {} comparisons, Bonferroni-corrected so that all hold together at 95%. \
         Verdict: *reproduced* when the whole interval lies beyond the threshold in the claimed direction, *opposite* when \
         beyond it the other way, *no effect* when within ± the threshold, *inconclusive* otherwise (and for cells of one \
         run, which have no interval).\n",
        100.0 * d.level,
        d.comparisons
    );
    s += "| claim | point | baseline → variant | runs | effect [interval] | claimed | verdict |\n|---|---|---|---|---|---|---|\n";
    for r in &d.rows {
        let c = &claims[r.claim];
        let _ = writeln!(
            s,
            "| {} | {} | {} → {} | {}+{} | {} | {} | **{}** |",
            c.name,
            r.point,
            fmt_num(r.base),
            fmt_num(r.new),
            r.runs.0,
            r.runs.1,
            fmt_effect(r.estimate, r.interval.as_ref(), c.unit()),
            fmt_expect(c),
            r.verdict.text()
        );
    }
    s += "\nThe claims, and where each fails:\n\n";
    for (i, c) in claims.iter().enumerate() {
        if !d.rows.iter().any(|r| r.claim == i) {
            continue;
        }
        let _ = write!(
            s,
            "- **{}**: `{}` of `{}` against `{}`, {} of the runs{}. {}",
            c.name,
            c.figure.name(),
            c.variant,
            c.baseline,
            match c.centre {
                Centre::Mean => "mean",
                Centre::Median => "median",
            },
            if c.points.is_empty() { String::new() } else { format!(", at the points with {}", c.points.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(" or ")) },
            if c.source.is_empty() { String::new() } else { format!("Source: {}. ", c.source) }
        );
        match c.fails_with {
            FailsWith::Variant { label, why, moved } => {
                let rows: Vec<&FailingRow> = d.failing.iter().filter(|f| f.claim == i).collect();
                let own = |point: &str| d.rows.iter().find(|r| r.claim == i && r.point == point).map(|r| r.verdict);
                // The check shows it can fail where some named variant gives another verdict than
                // the claim's own (an inconclusive own verdict shows nothing either way).
                let shown_to_fail = rows.iter().any(|f| own(&f.point).is_some_and(|v| v != f.verdict || v == Verdict::Inconclusive));
                let show = |label: &str| -> Vec<String> {
                    rows.iter()
                        .filter(|f| f.label == label)
                        .map(|f| format!("{} with `{}` {} → {}", f.point, f.label, fmt_effect(f.estimate, f.interval.as_ref(), c.unit()), f.verdict.text()))
                        .collect()
                };
                let _ = write!(s, "Fails with `{label}` in the variant's place ({why})");
                let first = show(label);
                if first.is_empty() {
                    s += ": that variant is not in this matrix";
                } else {
                    let _ = write!(s, ": {}", first.join("; "));
                }
                if let Some((m, mwhy)) = moved {
                    let second = show(m);
                    if !second.is_empty() {
                        let _ = write!(s, "; the figure moves with `{m}` in the variant's place ({mwhy}): {}", second.join("; "));
                    }
                }
                if !rows.is_empty() && !shown_to_fail {
                    s += " — the same verdict: this check did not show here that it can fail";
                }
                s += ".\n";
            }
            FailsWith::Mutation(what) => {
                let _ = writeln!(s, "Fails under this change to the code (not run here): {what}.");
            }
            FailsWith::Unnamed => s += "**Names no case in which it fails.**\n",
        }
    }
    s
}

/// The claims' verdicts in one line per claim, for the terminal and the test suite.
pub fn summary(claims: &[Claim], d: &Decided) -> Vec<String> {
    (0..claims.len())
        .filter_map(|i| {
            let v = d.verdict(i)?;
            let row = d.rows.iter().filter(|r| r.claim == i).find(|r| r.point == POOLED).or_else(|| d.rows.iter().find(|r| r.claim == i))?;
            Some(format!("{}: {} ({}; claimed {})", claims[i].name, v.text(), fmt_effect(row.estimate, row.interval.as_ref(), claims[i].unit()), fmt_expect(&claims[i])))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo: f64, hi: f64) -> Interval {
        Interval { estimate: (lo + hi) / 2.0, lo, hi, level: 0.95 }
    }

    /// The four outcomes of a claimed +20% (threshold 10%) and of a claimed -20%, at the edges.
    #[test]
    fn each_of_the_four_verdicts_follows_the_interval() {
        let up = Expect::Change(20.0);
        assert_eq!(decide(Some(&iv(12.0, 30.0)), up, 10.0), Verdict::Reproduced);
        assert_eq!(decide(Some(&iv(-30.0, -11.0)), up, 10.0), Verdict::Opposite);
        assert_eq!(decide(Some(&iv(-4.0, 9.0)), up, 10.0), Verdict::NoEffect);
        assert_eq!(decide(Some(&iv(5.0, 25.0)), up, 10.0), Verdict::Inconclusive, "straddles the threshold");
        assert_eq!(decide(Some(&iv(-25.0, 5.0)), up, 10.0), Verdict::Inconclusive, "straddles the other threshold");
        assert_eq!(decide(Some(&iv(-25.0, 25.0)), up, 10.0), Verdict::Inconclusive, "too wide to say");
        assert_eq!(decide(None, up, 10.0), Verdict::Inconclusive, "one run: no interval");
        // Beyond means beyond: an interval ending on the threshold is not past it.
        assert_eq!(decide(Some(&iv(10.0, 20.0)), up, 10.0), Verdict::Inconclusive);
        assert_eq!(decide(Some(&iv(-10.0, 10.0)), up, 10.0), Verdict::NoEffect);
        // The same intervals mirrored under a claimed decrease.
        let down = Expect::Change(-20.0);
        assert_eq!(decide(Some(&iv(-30.0, -12.0)), down, 10.0), Verdict::Reproduced);
        assert_eq!(decide(Some(&iv(11.0, 30.0)), down, 10.0), Verdict::Opposite);
        assert_eq!(decide(Some(&iv(-9.0, 4.0)), down, 10.0), Verdict::NoEffect);
        assert_eq!(decide(Some(&iv(-25.0, -5.0)), down, 10.0), Verdict::Inconclusive);
    }

    #[test]
    fn a_claim_of_no_change_holds_within_its_margin() {
        let flat = Expect::NoChange(1.0);
        assert_eq!(decide(Some(&iv(-0.5, 0.8)), flat, 1.0), Verdict::Reproduced);
        assert_eq!(decide(Some(&iv(1.5, 3.0)), flat, 1.0), Verdict::Opposite);
        assert_eq!(decide(Some(&iv(-3.0, -1.2)), flat, 1.0), Verdict::Opposite);
        assert_eq!(decide(Some(&iv(0.5, 2.0)), flat, 1.0), Verdict::Inconclusive);
    }

    #[test]
    fn what_a_claim_expects_reads_as_declared() {
        let f = Figure::Result("x");
        assert_eq!(fmt_expect(&Claim::change("a", f, "b", "v", 24.0)), "+24% (threshold 12%)");
        assert_eq!(fmt_expect(&Claim::change("a", f, "b", "v", 50.0 / 3.0 - 33.333_333).absolute()), "-16.67 (threshold 8.33)");
        assert_eq!(fmt_expect(&Claim::no_change("a", f, "b", "v", 1.0)), "within ±1%");
    }

    /// A claim of no effect whose fails-with variant gives no effect too shows it can fail only
    /// through a variant that moves the figure; without one, the report says the check did not
    /// show it (checked: dropping the moved variant's rows from `shown_to_fail` fails it).
    #[test]
    fn a_no_effect_verdict_shows_it_can_fail_through_a_variant_that_moves_the_figure() {
        let spec = super::super::find("avg-idle").unwrap();
        let jason = spec.claims.iter().position(|c| c.name.starts_with("Jason's avg clamp")).unwrap();
        let today = "v6.19: avg 2x, cost gate";
        let report = |today_moves: bool| {
            let m = super::super::tests::synthetic_runs(&spec, &["threads=16,io_pct=10"], 5, |_, v, run| {
                let ops = if v == today && today_moves { 150 + run } else { 100 + run };
                format!("@fw result workload=fserver metric=ops_per_s value={ops} unit=ops/s better=higher\n")
            });
            let d = decide_all(&spec.claims, &m, &Bootstrap::default());
            assert_eq!(d.verdict(jason), Some(Verdict::NoEffect));
            markdown(&spec.claims, &d)
        };
        let line = |r: &str| r.lines().find(|l| l.contains("**Jason's avg clamp")).unwrap().to_string();
        let moved = line(&report(true));
        assert!(moved.contains(&format!("the figure moves with `{today}`")) && moved.contains("→ reproduced"), "{moved}");
        assert!(!moved.contains("did not show"), "{moved}");
        let flat = line(&report(false));
        assert!(flat.contains("did not show here that it can fail"), "{flat}");
    }

    #[test]
    fn the_threshold_is_proportional_to_the_claimed_size() {
        let f = Figure::Result("x");
        assert_eq!(Claim::change("a", f, "b", "v", 20.0).bound(), 10.0);
        assert_eq!(Claim::change("a", f, "b", "v", -2.15).threshold(0.4).bound(), 0.4 * 2.15);
        assert_eq!(Claim::no_change("a", f, "b", "v", 1.0).bound(), 1.0);
    }
}
