//! SVG pictures (plotters, SVG backend): a per-CPU timeline of a trace,
//! `compare --sweep` charts of base and new against the sweep points, and
//! a latency distribution from `@fw hist` buckets; the experiments' figures
//! are [`experiment`]'s.

pub mod experiment;

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::results::Bucket;
use crate::trace::events::{Slice, Trace};

/// Tasks named in the legend; the rest share one grey.
const LEGEND_MAX: usize = 24;

fn colour(i: usize) -> RGBColor {
    // Golden-ratio hue steps give neighbouring tasks distinct colours.
    let h = (i as f64 * 0.618_033_988_75).fract();
    let (r, g, b) = hsl_to_rgb(h, 0.65, if i.is_multiple_of(2) { 0.45 } else { 0.6 });
    RGBColor(r, g, b)
}

fn hsl_to_rgb(h: f64, s: f64, l: f64) -> (u8, u8, u8) {
    let c = (1.0 - (2.0 * l - 1.0).abs()) * s;
    let hp = h * 6.0;
    let x = c * (1.0 - (hp % 2.0 - 1.0).abs());
    let (r, g, b) = match hp as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = l - c / 2.0;
    let to = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    (to(r), to(g), to(b))
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plotting: {e:?}")
}

/// Per-CPU rows, one coloured bar per run interval, a legend of the tasks
/// that ran longest.
pub fn timeline_svg(path: &Path, t: &Trace, slices: &[Slice]) -> Result<(), String> {
    let ncpu = t.cpus.keys().max().map_or(1, |&c| c as usize + 1).max(slices.iter().map(|s| s.cpu as usize + 1).max().unwrap_or(1));
    let (t0, t1) = t.span();
    let span_ms = ((t1 - t0) as f64 / 1e6).max(1e-3);
    let mut runtime: BTreeMap<u64, u64> = BTreeMap::new();
    for s in slices {
        *runtime.entry(s.pid).or_default() += s.end - s.start;
    }
    let mut order: Vec<(u64, u64)> = runtime.into_iter().collect();
    order.sort_by_key(|&(pid, ns)| (std::cmp::Reverse(ns), pid));
    let index: BTreeMap<u64, usize> = order.iter().enumerate().map(|(i, &(pid, _))| (pid, i)).collect();
    let pick = |pid: u64| match index.get(&pid) {
        Some(&i) if i < LEGEND_MAX => colour(i),
        _ => RGBColor(160, 160, 160),
    };
    let height = (120 + 50 * ncpu as u32).max(24 * LEGEND_MAX.min(order.len()) as u32 / 2 + 120);
    let root = SVGBackend::new(path, (1400, height)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (left, right) = root.split_horizontally(1160);
    let mut chart = ChartBuilder::on(&left)
        .caption("fairway: tasks on each CPU", ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..span_ms, 0f64..ncpu as f64)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(2 * ncpu + 1)
        .y_label_formatter(&|y| {
            let c = y - 0.5;
            if (c - c.round()).abs() < 1e-6 && c >= 0.0 { format!("CPU {}", c.round() as usize) } else { String::new() }
        })
        .x_desc(format!("ms after {:.3} ms", t0 as f64 / 1e6))
        .draw()
        .map_err(err)?;
    let ms = |ns: u64| (ns - t0) as f64 / 1e6;
    chart
        .draw_series(slices.iter().map(|s| {
            let y = s.cpu as f64;
            Rectangle::new([(ms(s.start), y + 0.1), (ms(s.end), y + 0.9)], pick(s.pid).filled())
        }))
        .map_err(err)?;
    legend(&right, t, &order, &pick)?;
    root.present().map_err(err)
}

fn legend(area: &DrawingArea<SVGBackend<'_>, Shift>, t: &Trace, order: &[(u64, u64)], pick: &dyn Fn(u64) -> RGBColor) -> Result<(), String> {
    let font = ("sans-serif", 13).into_font();
    for (i, &(pid, ns)) in order.iter().take(LEGEND_MAX).enumerate() {
        let y = 40 + 18 * i as i32;
        area.draw(&Rectangle::new([(5, y), (17, y + 12)], pick(pid).filled())).map_err(err)?;
        let label = format!("{} [{}] ({:.2} ms)", t.name(pid), pid, ns as f64 / 1e6);
        area.draw(&Text::new(label, (22, y), font.clone())).map_err(err)?;
    }
    if order.len() > LEGEND_MAX {
        let y = 40 + 18 * LEGEND_MAX as i32;
        area.draw(&Rectangle::new([(5, y), (17, y + 12)], RGBColor(160, 160, 160).filled())).map_err(err)?;
        area.draw(&Text::new(format!("{} other tasks", order.len() - LEGEND_MAX), (22, y), font)).map_err(err)?;
    }
    Ok(())
}

/// Labels for a logarithmic axis over `lo..hi`: 1, 2 and 5 times every
/// power of ten inside it (plotters alone labels only some decades).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powi(lo.max(1e-3).log10().floor() as i32);
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            if t >= lo && t <= hi {
                ticks.push(t);
            }
        }
        decade *= 10.0;
    }
    ticks
}

/// One panel per histogram kind (e.g. wakeup, request): sample counts per
/// log-linear bucket on a logarithmic microsecond axis. Buckets of several
/// runs are added up.
pub fn latency_svg(path: &Path, workload: &str, buckets: &[Bucket]) -> Result<(), String> {
    let kinds = crate::results::bucket_kinds(buckets);
    let root = SVGBackend::new(path, (1000, 320 * kinds.len().max(1) as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let panels = root.split_evenly((kinds.len().max(1), 1));
    for (kind, area) in kinds.iter().zip(panels.iter()) {
        let bs: Vec<(f64, f64, u64)> = crate::results::pool_buckets(buckets, kind)
            .into_iter()
            .map(|(lo, hi, c)| ((lo as f64).max(0.5), hi as f64, c))
            .collect();
        let total: u64 = bs.iter().map(|b| b.2).sum();
        let x0 = bs.iter().map(|b| b.0).fold(f64::INFINITY, f64::min).max(0.5);
        let x1 = bs.iter().map(|b| b.1).fold(1.0, f64::max);
        let ymax = bs.iter().map(|b| b.2).max().unwrap_or(1) as f64 * 1.1;
        let mut chart = ChartBuilder::on(area)
            .caption(format!("{workload}: {kind} latency ({total} samples)"), ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((x0..x1 * 1.05).log_scale().with_key_points(log_ticks(x0, x1 * 1.05)), 0f64..ymax)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| format!("{v}"))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_desc("latency (usec, log scale)")
            .y_desc("samples")
            .draw()
            .map_err(err)?;
        chart
            .draw_series(bs.iter().map(|&(lo, hi, c)| Rectangle::new([(lo, 0.0), (hi, c as f64)], BLUE.mix(0.6).filled())))
            .map_err(err)?;
    }
    root.present().map_err(err)
}

/// One side at one sweep point: the central value of its runs and their range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub centre: f64,
    pub min: f64,
    pub max: f64,
}

/// Both sides at one sweep point; `significant` puts a `*` above it.
#[derive(Clone, Debug)]
pub struct SweepPoint {
    /// The x-axis label: the swept parameter's value.
    pub label: String,
    pub base: Spread,
    pub new: Spread,
    pub significant: bool,
}

/// Everything one `sweep-<metric>.svg` shows.
#[derive(Clone, Debug)]
pub struct SweepChart {
    pub title: String,
    /// What the points, whiskers and `*` are; one line per `\n`.
    pub subtitle: String,
    /// The swept parameter's name.
    pub x_desc: String,
    /// Metric, unit and direction.
    pub y_desc: String,
    pub base_label: String,
    pub new_label: String,
    /// In sweep order (the x axis is categorical).
    pub points: Vec<SweepPoint>,
}

const BASE_COLOUR: RGBColor = RGBColor(31, 119, 180);
const NEW_COLOUR: RGBColor = RGBColor(230, 97, 1);
/// How far each side's marks sit left (base) and right (new) of their category, in categories.
const SIDE_OFFSET: f64 = 0.12;

/// A categorical x axis: category `i` at `i`, over `-0.5..n - 0.5`, one tick per category,
/// while the marks of each side may sit a fraction off it.
struct Categories(usize);

impl Ranged for Categories {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let r = self.range();
        let f = (v - r.start) / (r.end - r.start);
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _: H) -> Vec<f64> {
        (0..self.0).map(|i| i as f64).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        -0.5..self.0 as f64 - 0.5
    }
}

/// The y range of a sweep chart: every whisker end and centre, a margin below and room above
/// for the `*`; it starts at 0 when it would otherwise dip below with non-negative data.
pub fn sweep_y_range(points: &[SweepPoint]) -> (f64, f64) {
    let vals: Vec<f64> = points
        .iter()
        .flat_map(|p| [p.base, p.new])
        .flat_map(|s| [s.centre, s.min, s.max])
        .filter(|v| v.is_finite())
        .collect();
    if vals.is_empty() {
        return (0.0, 1.0);
    }
    let lo = vals.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { (hi.abs() * 0.1).max(1.0) };
    let bottom = lo - 0.08 * span;
    let bottom = if lo >= 0.0 && bottom < 0.0 { 0.0 } else { bottom };
    (bottom, hi + 0.18 * span)
}

/// The head of a base-against-new chart (title, subtitle, one legend line per side in its
/// colour) drawn into the top of `root`; returns the area below it for the plot. Each line of
/// `subtitle` is drawn on its own, the head growing by one line for each beyond the first.
fn base_new_header<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    title: &str,
    subtitle: &str,
    base_label: &str,
    new_label: &str,
) -> Result<DrawingArea<SVGBackend<'a>, Shift>, String> {
    const LINE: i32 = 16;
    let extra = subtitle.lines().count().saturating_sub(1) as i32 * LINE;
    let (head, body) = root.split_vertically(92 + extra);
    let small = ("sans-serif", 13).into_font();
    head.draw(&Text::new(title.to_string(), (12, 8), ("sans-serif", 18).into_font())).map_err(err)?;
    for (i, line) in subtitle.lines().enumerate() {
        head.draw(&Text::new(line.to_string(), (12, 32 + LINE * i as i32), small.clone())).map_err(err)?;
    }
    for (i, (label, colour)) in [(base_label, BASE_COLOUR), (new_label, NEW_COLOUR)].into_iter().enumerate() {
        let y = 56 + extra + 18 * i as i32;
        head.draw(&PathElement::new(vec![(14, y + 6), (40, y + 6)], colour.stroke_width(3))).map_err(err)?;
        head.draw(&Text::new(label.to_string(), (48, y), small.clone())).map_err(err)?;
    }
    Ok(body)
}

/// [`sweep_chart_svg`] into `path`.
pub fn sweep_svg(path: &Path, c: &SweepChart) -> Result<(), String> {
    std::fs::write(path, sweep_chart_svg(c)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// base and new against the sweep points: each point the side's central value, a whisker over
/// its runs' min-max, a line through each side's points, and a `*` above the points where the
/// table marks a significant difference.
pub fn sweep_chart_svg(c: &SweepChart) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let body = base_new_header(&root, &c.title, &c.subtitle, &c.base_label, &c.new_label)?;
        let n = c.points.len();
        let (y0, y1) = sweep_y_range(&c.points);
        let labels: Vec<String> = c.points.iter().map(|p| p.label.clone()).collect();
        let x_label = move |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 { labels.get(i as usize).cloned().unwrap_or_default() } else { String::new() }
        };
        let mut chart = ChartBuilder::on(&body)
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(Categories(n), y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&x_label)
            .x_desc(c.x_desc.clone())
            .y_desc(c.y_desc.clone())
            .draw()
            .map_err(err)?;
        for (side, colour, dx) in [(0, BASE_COLOUR, -SIDE_OFFSET), (1, NEW_COLOUR, SIDE_OFFSET)] {
            let pts: Vec<(f64, Spread)> = c
                .points
                .iter()
                .enumerate()
                .map(|(i, p)| (i as f64 + dx, if side == 0 { p.base } else { p.new }))
                .filter(|(_, s)| s.centre.is_finite())
                .collect();
            chart.draw_series(LineSeries::new(pts.iter().map(|&(x, s)| (x, s.centre)), colour.mix(0.5).stroke_width(1))).map_err(err)?;
            let cap = 0.04;
            chart
                .draw_series(pts.iter().filter(|(_, s)| s.min.is_finite() && s.max.is_finite()).flat_map(|&(x, s)| {
                    [
                        PathElement::new(vec![(x, s.min), (x, s.max)], colour.stroke_width(2)),
                        PathElement::new(vec![(x - cap, s.min), (x + cap, s.min)], colour.stroke_width(2)),
                        PathElement::new(vec![(x - cap, s.max), (x + cap, s.max)], colour.stroke_width(2)),
                    ]
                }))
                .map_err(err)?;
            chart.draw_series(pts.iter().map(|&(x, s)| Circle::new((x, s.centre), 5, colour.filled()))).map_err(err)?;
        }
        let star = ("sans-serif", 22).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
        let lift = 0.03 * (y1 - y0);
        chart
            .draw_series(c.points.iter().enumerate().filter(|(_, p)| p.significant).map(|(i, p)| {
                let top = [p.base.max, p.new.max, p.base.centre, p.new.centre].into_iter().filter(|v| v.is_finite()).fold(y0, f64::max);
                Text::new("*", (i as f64, top + lift), star.clone())
            }))
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// One side of a [`CcdfChart`]: its name and its curve, `(x, fraction of samples >= x)` with
/// x in microseconds, x rising and the fraction falling (it may end at 0).
#[derive(Clone, Debug)]
pub struct CcdfSeries {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// Everything one `latency-<kind>.svg` of `compare` shows: both sides' complementary CDFs.
#[derive(Clone, Debug)]
pub struct CcdfChart {
    pub title: String,
    /// How the curves were made.
    pub subtitle: String,
    pub x_desc: String,
    pub base: CcdfSeries,
    pub new: CcdfSeries,
}

/// The bottom of a CCDF's logarithmic y axis: the power of ten strictly below the smallest
/// fraction above 0 (one sample of the larger side), where a curve's drop to 0 ends.
pub fn ccdf_y_floor(series: &[&CcdfSeries]) -> f64 {
    let least = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|&y| y > 0.0).fold(1.0, f64::min);
    10f64.powi((least * 0.999).log10().floor() as i32)
}

/// A fraction as a percentage without trailing zeros: 1 → `100%`, 0.005 → `0.5%`.
fn percent(v: f64) -> String {
    let s = format!("{:.4}", v * 100.0);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}%")
}

/// [`ccdf_chart_svg`] into `path`.
pub fn ccdf_svg(path: &Path, c: &CcdfChart) -> Result<(), String> {
    std::fs::write(path, ccdf_chart_svg(c)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// base and new as two curves of the fraction of samples at or above x, both axes
/// logarithmic, so a tail of 1% of the samples is a step as tall as the other 99%; a curve's
/// drop to 0 after its slowest bucket ends at the bottom of the axis ([`ccdf_y_floor`]).
pub fn ccdf_chart_svg(c: &CcdfChart) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let body = base_new_header(&root, &c.title, &c.subtitle, &c.base.label, &c.new.label)?;
        let floor = ccdf_y_floor(&[&c.base, &c.new]);
        let xs = || [&c.base, &c.new].into_iter().flat_map(|s| s.points.iter().map(|p| p.0.max(0.5)));
        let x0 = xs().fold(f64::INFINITY, f64::min).min(1e9);
        let x1 = xs().fold(1.0, f64::max) * 1.05;
        let x0 = if x0 < x1 { x0 } else { x1 / 2.0 };
        let mut chart = ChartBuilder::on(&body)
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(
                (x0..x1).log_scale().with_key_points(log_ticks(x0, x1)),
                (floor..1.0).log_scale().with_key_points(log_ticks(floor, 1.0)),
            )
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|v| format!("{v}"))
            .y_label_formatter(&|v| percent(*v))
            .x_desc(c.x_desc.clone())
            .y_desc("samples at or above x (log scale)")
            .draw()
            .map_err(err)?;
        // base wider and paler beneath new: where the two curves coincide, both show.
        for (s, style) in [(&c.base, BASE_COLOUR.mix(0.7).stroke_width(5)), (&c.new, NEW_COLOUR.stroke_width(2))] {
            let pts = s.points.iter().map(|&(x, y)| (x.max(x0), y.max(floor)));
            chart.draw_series(LineSeries::new(pts, style)).map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spread(centre: f64, min: f64, max: f64) -> Spread {
        Spread { centre, min, max }
    }

    /// groups=1: no difference; groups=2: new slower, significant, its slowest run far up.
    fn two_points() -> SweepChart {
        SweepChart {
            title: "hackbench loops=20, -smp 2: time".into(),
            subtitle: "points: Amean of each side's 3 runs; whiskers: min-max of the runs".into(),
            x_desc: "groups".into(),
            y_desc: "time (s), lower is better".into(),
            base_label: "base: (no extra settings)".into(),
            new_label: "new: sched_features=NO_DELAY_DEQUEUE".into(),
            points: vec![
                SweepPoint { label: "1".into(), base: spread(1.0, 0.9, 1.1), new: spread(1.0, 0.95, 1.05), significant: false },
                SweepPoint { label: "2".into(), base: spread(2.0, 1.9, 2.1), new: spread(3.0, 2.8, 4.5), significant: true },
            ],
        }
    }

    /// The `x` attributes of the `<text>` elements whose content is `content`.
    fn text_xs(svg: &str, content: &str) -> Vec<i32> {
        svg.split("<text ")
            .skip(1)
            .filter(|t| t.split_once('>').is_some_and(|(_, rest)| rest.trim_start().starts_with(&format!("{content}\n</text>"))))
            .map(|t| attr(t, "x"))
            .collect()
    }

    fn attr(elem: &str, name: &str) -> i32 {
        let v = elem.split(&format!(" {name}=\"")).nth(1).or_else(|| elem.strip_prefix(&format!("{name}=\""))).unwrap();
        v[..v.find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn sweep_chart_has_labels_both_series_every_point_and_a_star_only_where_significant() {
        let c = two_points();
        let svg = sweep_chart_svg(&c).unwrap();
        for label in [
            "hackbench loops=20, -smp 2: time",
            "whiskers: min-max of the runs",
            "groups",
            "time (s), lower is better",
            "base: (no extra settings)",
            "new: sched_features=NO_DELAY_DEQUEUE",
        ] {
            assert!(svg.contains(label), "{label} missing");
        }
        assert_eq!(text_xs(&svg, "1").len(), 1, "one x label per category");
        assert_eq!(text_xs(&svg, "2").len(), 1, "one x label per category");
        // One dot per side and point, in the two series' colours.
        let circles: Vec<&str> = svg.split("<circle ").skip(1).collect();
        assert_eq!(circles.len(), 4, "{svg}");
        let fill = |c: RGBColor| format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        assert_eq!(circles.iter().filter(|e| e.contains(&fill(BASE_COLOUR))).count(), 2);
        assert_eq!(circles.iter().filter(|e| e.contains(&fill(NEW_COLOUR))).count(), 2);
        // The star sits over the second category: midway between its two dots, right of the first's.
        let mut cx: Vec<i32> = circles.iter().map(|e| attr(e, "cx")).collect();
        cx.sort_unstable();
        let stars = text_xs(&svg, "*");
        assert_eq!(stars.len(), 1, "{svg}");
        assert!((stars[0] - (cx[2] + cx[3]) / 2).abs() <= 1, "star at {} dots at {cx:?}", stars[0]);
        assert!((text_xs(&svg, "1")[0] - (cx[0] + cx[1]) / 2).abs() <= 1, "x label under its dots");
        // Nothing significant, no star.
        let mut none = two_points();
        none.points[1].significant = false;
        assert!(text_xs(&sweep_chart_svg(&none).unwrap(), "*").is_empty());
    }

    /// The `y` attribute of the `<text>` element whose content is `content`.
    fn text_y(svg: &str, content: &str) -> i32 {
        let t = svg.split("<text ").find(|t| t.split_once('>').is_some_and(|(_, rest)| rest.trim_start().starts_with(content))).unwrap();
        attr(t, "y")
    }

    #[test]
    fn a_subtitle_of_two_lines_draws_both_above_the_legend() {
        let one = sweep_chart_svg(&two_points()).unwrap();
        let mut c = two_points();
        c.subtitle.push_str("\nexact points: the second line");
        let two = sweep_chart_svg(&c).unwrap();
        let (first, second) = (text_y(&two, "points: Amean"), text_y(&two, "exact points: the second line"));
        assert!(second > first, "{first} {second}");
        assert_eq!(text_y(&two, "points: Amean"), text_y(&one, "points: Amean"), "the first line stays");
        let (base_one, base_two) = (text_y(&one, "base: (no"), text_y(&two, "base: (no"));
        assert!(base_two > second && base_two == base_one + 16, "the legend moves down one line: {base_one} {base_two}");
        assert!(!two.contains("of the runs\nexact"), "no line break inside a text element");
    }

    #[test]
    fn sweep_y_range_covers_every_whisker_and_leaves_room_for_the_star() {
        let c = two_points();
        let (lo, hi) = sweep_y_range(&c.points);
        for s in c.points.iter().flat_map(|p| [p.base, p.new]) {
            assert!(lo <= s.min && s.max <= hi, "{s:?} outside {lo}..{hi}");
        }
        assert!(hi > 4.5 + 0.1 * (4.5 - 0.9), "room above the highest whisker: {hi}");
        assert_eq!(lo, 0.9 - 0.08 * (4.5 - 0.9), "a margin below, not 0: {lo}");
        let flat = [SweepPoint { label: "1".into(), base: spread(5.0, 5.0, 5.0), new: spread(5.0, 5.0, 5.0), significant: false }];
        let (lo, hi) = sweep_y_range(&flat);
        assert!(lo < 5.0 && hi > 5.0, "identical runs still get a range: {lo}..{hi}");
        let negative = [SweepPoint { label: "1".into(), base: spread(-1.0, -2.0, 0.5), new: spread(0.0, -0.5, 0.2), significant: false }];
        let (lo, hi) = sweep_y_range(&negative);
        assert!(lo < -2.0 && hi > 0.5, "{lo}..{hi}");
    }

    #[test]
    fn log_ticks_cover_every_decade_in_range() {
        assert_eq!(log_ticks(3.0, 600.0), vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]);
        assert_eq!(log_ticks(1.0, 1.0), vec![1.0]);
        assert!(log_ticks(0.5, 0.9).iter().all(|&t| (0.5..=0.9).contains(&t)));
    }

    fn ccdf_two() -> CcdfChart {
        CcdfChart {
            title: "latency cpu=0, -smp 1: wakeup latency".into(),
            subtitle: "pooled over the runs of each side".into(),
            x_desc: "wakeup latency (us, log scale)".into(),
            base: CcdfSeries { label: "base: sched_features=NO_PREEMPT_SHORT".into(), points: vec![(2.0, 1.0), (3.0, 0.25), (4.0, 0.01), (960.0, 0.01), (1024.0, 0.0)] },
            new: CcdfSeries { label: "new: (no extra settings)".into(), points: vec![(2.0, 1.0), (3.0, 0.2), (4.0, 0.0)] },
        }
    }

    #[test]
    fn ccdf_chart_has_both_series_log_axes_and_percent_labels() {
        let c = ccdf_two();
        let svg = ccdf_chart_svg(&c).unwrap();
        for label in [
            "latency cpu=0, -smp 1: wakeup latency",
            "pooled over the runs of each side",
            "base: sched_features=NO_PREEMPT_SHORT",
            "new: (no extra settings)",
            "wakeup latency (us, log scale)",
            "samples at or above x (log scale)",
        ] {
            assert!(svg.contains(label), "{label} missing");
        }
        // The y axis reaches down to the power of ten below 1%, labelled in percent.
        for tick in ["100%", "10%", "1%", "0.1%"] {
            assert_eq!(text_xs(&svg, tick).len(), 1, "{tick}: {svg}");
        }
        assert!(text_xs(&svg, "0.01%").is_empty(), "no decade below the floor");
        for tick in ["2", "1000"] {
            assert_eq!(text_xs(&svg, tick).len(), 1, "x tick {tick}");
        }
        // One curve per side (base wide beneath new; the legend's strokes are 3 wide); each
        // falls from the 100% tick and ends on the axis bottom, the 0.1% tick; base's 1%
        // plateau sits on the 1% tick.
        let curve = |c: RGBColor| -> Vec<(i32, i32)> {
            let width = if c == BASE_COLOUR { 5 } else { 2 };
            let stroke = format!("stroke=\"#{:02X}{:02X}{:02X}\" stroke-width=\"{width}\"", c.0, c.1, c.2);
            let found: Vec<&str> = svg.split("<polyline ").skip(1).filter(|e| e.contains(&stroke)).collect();
            assert_eq!(found.len(), 1, "{svg}");
            let pts = found[0].split("points=\"").nth(1).unwrap().split('"').next().unwrap();
            pts.split_whitespace().map(|p| p.split_once(',').map(|(x, y)| (x.parse().unwrap(), y.parse().unwrap())).unwrap()).collect()
        };
        let tick_y = |label: &str| {
            let t = svg.split("<text ").find(|t| t.split_once('>').is_some_and(|(_, r)| r.trim_start().starts_with(&format!("{label}\n</text>")))).unwrap();
            attr(t, "y")
        };
        let (base, new) = (curve(BASE_COLOUR), curve(NEW_COLOUR));
        assert_eq!((base.len(), new.len()), (5, 3));
        for c in [&base, &new] {
            assert_eq!(c[0].1, tick_y("100%"));
            assert_eq!(c[c.len() - 1].1, tick_y("0.1%"));
        }
        assert_eq!((base[2].1, base[3].1), (tick_y("1%"), tick_y("1%")));
        assert!(base[3].0 > base[2].0 + 500, "the plateau runs out to 960 us: {base:?}");
    }

    #[test]
    fn ccdf_floor_is_the_power_of_ten_below_one_sample() {
        let c = ccdf_two();
        assert_eq!(ccdf_y_floor(&[&c.base, &c.new]), 0.001, "0.01 is the least: one decade below");
        let one_in_600 = CcdfSeries { label: String::new(), points: vec![(1.0, 1.0), (2.0, 1.0 / 600.0), (3.0, 0.0)] };
        assert_eq!(ccdf_y_floor(&[&one_in_600]), 0.001);
        let none_above = CcdfSeries { label: String::new(), points: vec![(1.0, 1.0), (2.0, 0.0)] };
        assert_eq!(ccdf_y_floor(&[&none_above]), 0.1);
        assert_eq!((percent(1.0), percent(0.005), percent(0.1), percent(0.0001)), ("100%".into(), "0.5%".into(), "10%".into(), "0.01%".into()));
    }
}
