//! `compare --sweep`'s plots: one chart per `@fw result` metric against the sweep points
//! (written as `sweep-<metric>.svg` by [`super::compare`]).

use super::{test_name, Method, Row, ALPHA, RESULT};
use crate::plot::{Spread, SweepChart, SweepPoint};

/// Added to a chart's subtitle when one of its points is [`Row::exact`] (the table's `exact`):
/// such a point is never starred, and its whiskers are flat. Two lines, as the chart is 900
/// pixels wide.
const EXACT_LINES: &str = "\nexact points (flat whiskers, no *): every run of each side gave the same figure (--icount is deterministic),\n\
     so the change is exact for the tick phases run and no test applies; --phases runs each at another phase";

/// `s` with its characters other than letters, digits, `-` and `_` as `_`, for a file name.
pub(super) fn file_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// `sweep-<metric>.svg`, the metric made [`file_safe`].
fn sweep_file_name(metric: &str) -> String {
    format!("sweep-{}.svg", file_safe(metric))
}

/// One chart per `@fw result` metric of `rows` (the counters are left out) against the sweep
/// `points` in their order, with its file name; none unless there are at least two points.
/// `title` names the workload and the common settings; `base` and `new` are the sides' settings.
pub fn sweep_charts(title: &str, base: &str, new: &str, points: &[String], rows: &[Row], method: Method) -> Vec<(String, SweepChart)> {
    if points.len() < 2 {
        return Vec::new();
    }
    let param = points[0].split_once('=').map_or("", |(k, _)| k);
    let side = |tag: &str, s: &str| if s.is_empty() { format!("{tag}: (no extra settings)") } else { format!("{tag}: {s}") };
    let mut metrics: Vec<&str> = Vec::new();
    for r in rows.iter().filter(|r| r.kind == RESULT) {
        if !metrics.contains(&r.metric.as_str()) {
            metrics.push(&r.metric);
        }
    }
    metrics
        .into_iter()
        .map(|m| {
            let mine: Vec<&Row> = rows.iter().filter(|r| r.kind == RESULT && r.metric == m).collect();
            let first = mine[0];
            let pts: Vec<SweepPoint> = points
                .iter()
                .filter_map(|pt| {
                    let r = mine.iter().find(|r| &r.point == pt)?;
                    Some(SweepPoint {
                        label: pt.split_once('=').map_or(pt.as_str(), |(_, v)| v).to_string(),
                        base: Spread { centre: r.base, min: r.base_min, max: r.base_max },
                        new: Spread { centre: r.new, min: r.new_min, max: r.new_max },
                        significant: r.significant,
                    })
                })
                .collect();
            let n = mine[0].n_base;
            let runs = if mine.iter().all(|r| r.n_base == n && r.n_new == n) { format!("{n} runs") } else { "runs".to_string() };
            let better = if first.higher_is_better == Some(true) { "higher is better" } else { "lower is better" };
            let mut subtitle = format!(
                "points: {} of each side's {runs}; whiskers: min-max of the runs; * = significant ({}, p < {ALPHA})",
                first.central,
                test_name(method)
            );
            if mine.iter().any(|r| r.exact) {
                subtitle.push_str(EXACT_LINES);
            }
            let chart = SweepChart {
                title: format!("{title}: {m}"),
                subtitle,
                x_desc: param.to_string(),
                y_desc: format!("{m} ({}), {better}", first.unit),
                base_label: side("base", base),
                new_label: side("new", new),
                points: pts,
            };
            (sweep_file_name(m), chart)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::run;
    use super::super::{rows, RunRecord};
    use super::*;

    #[test]
    fn sweep_charts_one_per_result_metric_in_sweep_order_and_none_for_one_point() {
        let side = |ts: &[f64]| -> Vec<RunRecord> { ts.iter().map(|&t| run(&[("time", t, false), ("rps", 100.0 / t, true)])).collect() };
        let points = vec!["groups=4".to_string(), "groups=1".to_string()];
        let mut all = rows("groups=4", &side(&[1.0, 1.1, 0.9]), &side(&[2.0, 2.2, 1.8]), Method::Means, false);
        all.extend(rows("groups=1", &side(&[1.0, 1.1, 0.9]), &side(&[1.0, 1.2, 0.9]), Method::Means, false));
        let charts = sweep_charts("hackbench, -smp 2", "", "sched_features=NO_DELAY_DEQUEUE", &points, &all, Method::Means);
        let names: Vec<&str> = charts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["sweep-time.svg", "sweep-rps.svg"]);
        let (time, rps) = (&charts[0].1, &charts[1].1);
        assert_eq!(time.points.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(), ["4", "1"], "in the order given");
        assert_eq!((time.x_desc.as_str(), time.y_desc.as_str()), ("groups", "time (u), lower is better"));
        assert_eq!(rps.y_desc, "rps (u), higher is better");
        assert_eq!((time.base_label.as_str(), time.new_label.as_str()), ("base: (no extra settings)", "new: sched_features=NO_DELAY_DEQUEUE"));
        assert!(time.subtitle.starts_with("points: Amean of each side's 3 runs; whiskers: min-max of the runs"), "{}", time.subtitle);
        assert!(rps.subtitle.contains("Hmean") && rps.subtitle.contains("Welch"), "{}", rps.subtitle);
        let p4 = &time.points[0];
        assert!((p4.new.centre - 2.0).abs() < 1e-9 && p4.new.min == 1.8 && p4.new.max == 2.2, "{p4:?}");
        assert!(p4.significant && !time.points[1].significant);
        assert_eq!(rps.points[0].significant, all.iter().find(|r| r.metric == "rps" && r.point == "groups=4").unwrap().significant);
        assert_eq!(sweep_file_name("wakeup p99/us"), "sweep-wakeup_p99_us.svg");
        let one = rows("groups=1", &side(&[1.0, 1.1]), &side(&[2.0, 2.1]), Method::Robust, false);
        assert!(sweep_charts("t", "", "x", &points[..1], &one, Method::Robust).is_empty(), "no plot for one point");
        assert!(sweep_charts("t", "", "x", &[String::new()], &one, Method::Robust).is_empty(), "nor without --sweep");
        let robust = sweep_charts("t", "a", "b", &["groups=1".into(), "groups=2".into()], &one, Method::Robust);
        assert!(robust[0].1.subtitle.contains("Median") && robust[0].1.subtitle.contains("Mann-Whitney"));
        assert_eq!(robust[0].1.points.len(), 1, "a point where the metric is missing is left out");
        assert!(!time.subtitle.contains("exact"), "no exact point, no word on it: {}", time.subtitle);
    }

    #[test]
    fn exact_points_are_not_starred_and_the_subtitle_says_why() {
        // --icount: every run of a side the same; new 10% slower at groups=2 and the same at 1.
        let side = |t: f64| -> Vec<RunRecord> { (0..3).map(|_| run(&[("time", t, false)])).collect() };
        let points = vec!["groups=1".to_string(), "groups=2".to_string()];
        let mut all = rows("groups=1", &side(1.0), &side(1.0), Method::Means, true);
        all.extend(rows("groups=2", &side(2.0), &side(2.2), Method::Means, true));
        let charts = sweep_charts("hackbench, -smp 2, --icount", "", "x", &points, &all, Method::Means);
        let time = &charts[0].1;
        assert!(time.points.iter().all(|p| !p.significant), "{:?}", time.points);
        assert_eq!((time.points[1].new.min, time.points[1].new.max), (2.2, 2.2), "flat whisker");
        let lines: Vec<&str> = time.subtitle.lines().collect();
        assert_eq!(lines.len(), 3, "{}", time.subtitle);
        assert!(lines[1].starts_with("exact points (flat whiskers, no *): every run of each side gave the same figure"), "{}", lines[1]);
        assert!(lines[2].contains("exact for the tick phases run and no test applies; --phases"), "{}", lines[2]);
        assert!(lines.iter().all(|l| l.len() <= 120), "each line fits the chart's width: {lines:?}");
    }
}
