//! SVG pictures (plotters, SVG backend): a per-CPU timeline of a trace and
//! a latency distribution from `@fw hist` buckets.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::results::Bucket;
use crate::trace::{Slice, Trace};

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
    let mut kinds: Vec<String> = Vec::new();
    let mut sums: BTreeMap<(String, u64, u64), u64> = BTreeMap::new();
    for b in buckets {
        if !kinds.contains(&b.kind) {
            kinds.push(b.kind.clone());
        }
        *sums.entry((b.kind.clone(), b.lo_us, b.hi_us)).or_default() += b.count;
    }
    let root = SVGBackend::new(path, (1000, 320 * kinds.len().max(1) as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let panels = root.split_evenly((kinds.len().max(1), 1));
    for (kind, area) in kinds.iter().zip(panels.iter()) {
        let bs: Vec<(f64, f64, u64)> = sums
            .iter()
            .filter(|((k, _, _), _)| k == kind)
            .map(|((_, lo, hi), &c)| ((*lo as f64).max(0.5), *hi as f64, c))
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

#[cfg(test)]
mod tests {
    use super::log_ticks;

    #[test]
    fn log_ticks_cover_every_decade_in_range() {
        assert_eq!(log_ticks(3.0, 600.0), vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]);
        assert_eq!(log_ticks(1.0, 1.0), vec![1.0]);
        assert!(log_ticks(0.5, 0.9).iter().all(|&t| (0.5..=0.9).contains(&t)));
    }
}
