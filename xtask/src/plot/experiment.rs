//! The experiments' figures (SVG beside each report in docs/experiments/): each claim's effect
//! with its interval, row by row (a forest plot); a map of verdicts over a grid of two swept
//! parameters; and a mechanism's distribution per variant.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{colour, err, Categories};

/// What a verdict is drawn in (Okabe and Ito's colour-blind-safe palette, 2008).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shade {
    Reproduced,
    Opposite,
    NoEffect,
    Inconclusive,
}

impl Shade {
    pub fn colour(self) -> RGBColor {
        match self {
            Shade::Reproduced => RGBColor(0, 114, 178),
            Shade::Opposite => RGBColor(213, 94, 0),
            Shade::NoEffect => RGBColor(120, 120, 120),
            Shade::Inconclusive => RGBColor(230, 159, 0),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shade::Reproduced => "reproduced",
            Shade::Opposite => "opposite",
            Shade::NoEffect => "no effect",
            Shade::Inconclusive => "inconclusive",
        }
    }

    const ALL: [Shade; 4] = [Shade::Reproduced, Shade::Opposite, Shade::NoEffect, Shade::Inconclusive];
}

/// One row of a forest plot: an effect, its interval (none: the estimate alone), the claimed
/// value and the threshold around 0 (the band within which an effect is "no effect").
#[derive(Clone, Debug)]
pub struct ForestRow {
    pub label: String,
    pub estimate: f64,
    pub interval: Option<(f64, f64)>,
    pub claimed: Option<f64>,
    pub band: f64,
    pub shade: Shade,
}

/// A forest plot: title, what the x axis is, the rows top to bottom.
#[derive(Clone, Debug)]
pub struct Forest {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub rows: Vec<ForestRow>,
}

/// The x range of a forest plot: every interval, estimate, claimed value and band, and 0,
/// with a margin.
pub fn forest_x_range(rows: &[ForestRow]) -> (f64, f64) {
    let vals: Vec<f64> = rows
        .iter()
        .flat_map(|r| {
            let mut v = vec![r.estimate, r.band, -r.band, 0.0];
            if let Some((lo, hi)) = r.interval {
                v.extend([lo, hi]);
            }
            v.extend(r.claimed);
            v
        })
        .filter(|v| v.is_finite())
        .collect();
    let lo = vals.iter().copied().fold(0.0, f64::min);
    let hi = vals.iter().copied().fold(0.0, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    (lo - 0.06 * span, hi + 0.06 * span)
}

const ROW_PX: u32 = 34;
const LABEL_PX: u32 = 330;

/// The forest plot as an SVG document: per row the threshold band (grey), the interval
/// (whisker) and the estimate (dot) in the verdict's colour, the claimed value (a hollow
/// diamond), and a line at 0; a legend of the verdicts' colours.
pub fn forest_svg(f: &Forest) -> Result<String, String> {
    let n = f.rows.len().max(1);
    let height = 150 + ROW_PX * n as u32;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (1000, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (head, body) = root.split_vertically(78);
        head.draw(&Text::new(f.title.clone(), (12, 8), ("sans-serif", 18).into_font())).map_err(err)?;
        head.draw(&Text::new(f.subtitle.clone(), (12, 32), ("sans-serif", 13).into_font())).map_err(err)?;
        let small = ("sans-serif", 13).into_font();
        let mut x = 12;
        for s in Shade::ALL {
            head.draw(&Circle::new((x + 5, 62), 5, s.colour().filled())).map_err(err)?;
            head.draw(&Text::new(s.name(), (x + 14, 55), small.clone())).map_err(err)?;
            x += 24 + 8 * s.name().len() as i32;
        }
        head.draw(&Rectangle::new([(x, 56), (x + 22, 68)], RGBColor(225, 225, 225).filled())).map_err(err)?;
        head.draw(&Text::new("± threshold", (x + 28, 55), small.clone())).map_err(err)?;
        x += 120;
        let diamond = |c: (i32, i32), size: i32| PathElement::new(vec![(c.0, c.1 - size), (c.0 + size, c.1), (c.0, c.1 + size), (c.0 - size, c.1), (c.0, c.1 - size)], BLACK.stroke_width(2));
        head.draw(&diamond((x + 6, 62), 6)).map_err(err)?;
        head.draw(&Text::new("claimed", (x + 18, 55), small.clone())).map_err(err)?;
        let (x0, x1) = forest_x_range(&f.rows);
        let labels: Vec<String> = f.rows.iter().map(|r| r.label.clone()).collect();
        let y_label = move |y: &f64| {
            let i = y.round();
            if (y - i).abs() < 1e-6 && i >= 0.0 { labels.get(n - 1 - i as usize).cloned().unwrap_or_default() } else { String::new() }
        };
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(LABEL_PX)
            .build_cartesian_2d(x0..x1, Categories(n))
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(RGBColor(245, 245, 245))
            .y_label_formatter(&y_label)
            .y_label_style(("sans-serif", 13))
            .x_label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .x_desc(f.x_desc.clone())
            .draw()
            .map_err(err)?;
        let y = |i: usize| (n - 1 - i) as f64;
        chart
            .draw_series(f.rows.iter().enumerate().filter(|(_, r)| r.band > 0.0).map(|(i, r)| {
                Rectangle::new([(-r.band, y(i) - 0.38), (r.band, y(i) + 0.38)], RGBColor(225, 225, 225).filled())
            }))
            .map_err(err)?;
        chart.draw_series(std::iter::once(PathElement::new(vec![(0.0, -0.5), (0.0, n as f64 - 0.5)], BLACK.mix(0.6).stroke_width(1)))).map_err(err)?;
        let cap = 0.18;
        chart
            .draw_series(f.rows.iter().enumerate().filter_map(|(i, r)| r.interval.map(|iv| (i, r, iv))).flat_map(|(i, r, (lo, hi))| {
                let c = r.shade.colour();
                [
                    PathElement::new(vec![(lo, y(i)), (hi, y(i))], c.stroke_width(3)),
                    PathElement::new(vec![(lo, y(i) - cap), (lo, y(i) + cap)], c.stroke_width(2)),
                    PathElement::new(vec![(hi, y(i) - cap), (hi, y(i) + cap)], c.stroke_width(2)),
                ]
            }))
            .map_err(err)?;
        chart
            .draw_series(f.rows.iter().enumerate().filter(|(_, r)| r.estimate.is_finite()).map(|(i, r)| Circle::new((r.estimate, y(i)), 6, r.shade.colour().filled())))
            .map_err(err)?;
        chart
            .draw_series(f.rows.iter().enumerate().filter_map(|(i, r)| r.claimed.map(|c| (i, c))).map(|(i, c)| {
                EmptyElement::at((c, y(i))) + diamond((0, 0), 7)
            }))
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// A grid of results over two swept parameters: `cells[iy][ix]` the result at (`xs[ix]`,
/// `ys[iy]`), `None` where nothing ran.
#[derive(Clone, Debug)]
pub struct SweepMap {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub y_desc: String,
    pub xs: Vec<String>,
    pub ys: Vec<String>,
    pub cells: Vec<Vec<Option<MapCell>>>,
}

/// One grid cell: its verdict and the text written in it (the effect).
#[derive(Clone, Debug)]
pub struct MapCell {
    pub shade: Shade,
    pub text: String,
}

/// The sweep map as an SVG document: one rectangle per grid cell, coloured by its verdict,
/// its effect written in it; empty cells left white; a legend of the verdicts' colours.
pub fn sweep_map_svg(m: &SweepMap) -> Result<String, String> {
    let (nx, ny) = (m.xs.len().max(1), m.ys.len().max(1));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (140 + 110 * nx as u32, 170 + 56 * ny as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (head, body) = root.split_vertically(78);
        head.draw(&Text::new(m.title.clone(), (12, 8), ("sans-serif", 18).into_font())).map_err(err)?;
        head.draw(&Text::new(m.subtitle.clone(), (12, 32), ("sans-serif", 13).into_font())).map_err(err)?;
        let mut x = 12;
        for s in Shade::ALL {
            head.draw(&Rectangle::new([(x, 56), (x + 14, 68)], s.colour().mix(0.75).filled())).map_err(err)?;
            head.draw(&Text::new(s.name(), (x + 20, 55), ("sans-serif", 13).into_font())).map_err(err)?;
            x += 30 + 8 * s.name().len() as i32;
        }
        let (xs, ys) = (m.xs.clone(), m.ys.clone());
        let xl = move |v: &f64| cat_label(&xs, *v);
        let yl = move |v: &f64| cat_label(&ys, *v);
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(90)
            .build_cartesian_2d(Categories(nx), Categories(ny))
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_label_formatter(&xl)
            .y_label_formatter(&yl)
            .label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .x_desc(m.x_desc.clone())
            .y_desc(m.y_desc.clone())
            .draw()
            .map_err(err)?;
        let text = ("sans-serif", 13).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
        for (iy, row) in m.cells.iter().enumerate() {
            for (ix, cell) in row.iter().enumerate() {
                let (cx, cy) = (ix as f64, iy as f64);
                let corners = [(cx - 0.48, cy - 0.46), (cx + 0.48, cy + 0.46)];
                match cell {
                    Some(c) => {
                        chart.draw_series(std::iter::once(Rectangle::new(corners, c.shade.colour().mix(0.75).filled()))).map_err(err)?;
                        chart.draw_series(std::iter::once(Text::new(c.text.clone(), (cx, cy), text.clone()))).map_err(err)?;
                    }
                    None => {
                        chart.draw_series(std::iter::once(Rectangle::new(corners, BLACK.mix(0.2).stroke_width(1)))).map_err(err)?;
                    }
                }
            }
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn cat_label(labels: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() < 1e-6 && i >= 0.0 { labels.get(i as usize).cloned().unwrap_or_default() } else { String::new() }
}

/// A distribution per variant over the same bins, in order: `series[k] = (label, counts)`.
#[derive(Clone, Debug)]
pub struct Distribution {
    pub title: String,
    pub subtitle: String,
    pub x_desc: String,
    pub bins: Vec<String>,
    pub series: Vec<(String, Vec<f64>)>,
}

/// Beyond this many bins a distribution is drawn as cumulative shares, not bars.
pub const DIST_MAX_BARS: usize = 12;

/// Each series' counts as shares of its total, in %; a series with no count stays at 0.
pub fn shares(counts: &[f64]) -> Vec<f64> {
    let total: f64 = counts.iter().sum();
    counts.iter().map(|c| if total > 0.0 { 100.0 * c / total } else { 0.0 }).collect()
}

/// The distribution as an SVG document: grouped bars of each variant's share per bin, or, with
/// more than [`DIST_MAX_BARS`] bins, each variant's cumulative share (the empirical
/// distribution function over the bins' upper edges), one colour per variant.
pub fn distribution_svg(d: &Distribution) -> Result<String, String> {
    let nb = d.bins.len().max(1);
    let ns = d.series.len().max(1);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (1000, 560 + 18 * ns as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (head, body) = root.split_vertically(60 + 18 * ns as i32);
        head.draw(&Text::new(d.title.clone(), (12, 8), ("sans-serif", 18).into_font())).map_err(err)?;
        head.draw(&Text::new(d.subtitle.clone(), (12, 32), ("sans-serif", 13).into_font())).map_err(err)?;
        for (k, (label, _)) in d.series.iter().enumerate() {
            let y = 56 + 18 * k as i32;
            head.draw(&Rectangle::new([(14, y + 1), (30, y + 11)], colour(k).filled())).map_err(err)?;
            head.draw(&Text::new(label.clone(), (38, y), ("sans-serif", 13).into_font())).map_err(err)?;
        }
        let bins = d.bins.clone();
        let xl = move |v: &f64| {
            // With many bins, every other label would crowd the axis.
            let i = v.round();
            let step = (bins.len() / 12).max(1);
            if (i as usize).is_multiple_of(step) { cat_label(&bins, *v) } else { String::new() }
        };
        let cumulative = d.bins.len() > DIST_MAX_BARS;
        let mut chart = ChartBuilder::on(&body)
            .margin(14)
            .x_label_area_size(60)
            .y_label_area_size(70)
            .build_cartesian_2d(Categories(nb), 0f64..if cumulative { 100.0 } else { 105.0 })
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(RGBColor(245, 245, 245))
            .x_label_formatter(&xl)
            .x_label_style(("sans-serif", 12))
            .y_label_style(("sans-serif", 13))
            .axis_desc_style(("sans-serif", 14))
            .y_desc(if cumulative { "cumulative share (%)" } else { "share (%)" })
            .x_desc(d.x_desc.clone())
            .draw()
            .map_err(err)?;
        let width = 0.8 / ns as f64;
        for (k, (_, counts)) in d.series.iter().enumerate() {
            let sh = shares(counts);
            if cumulative {
                let pts: Vec<(f64, f64)> = sh.iter().scan(0.0, |acc, s| {
                    *acc += s;
                    Some(*acc)
                }).enumerate().map(|(i, c)| (i as f64, c)).collect();
                chart.draw_series(LineSeries::new(pts, colour(k).stroke_width(2))).map_err(err)?;
            } else {
                chart
                    .draw_series(sh.iter().enumerate().map(|(i, s)| {
                        let x = i as f64 - 0.4 + width * k as f64;
                        Rectangle::new([(x, 0.0), (x + width * 0.9, *s)], colour(k).filled())
                    }))
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(label: &str, estimate: f64, interval: Option<(f64, f64)>, shade: Shade) -> ForestRow {
        ForestRow { label: label.into(), estimate, interval, claimed: Some(20.0), band: 10.0, shade }
    }

    /// The `cx` of the circles filled in `c`.
    fn circles(svg: &str, c: RGBColor) -> Vec<i32> {
        let fill = format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2);
        svg.split("<circle ").skip(1).filter(|e| e.contains(&fill)).map(|e| attr(e, "cx")).collect()
    }

    fn attr(elem: &str, name: &str) -> i32 {
        let v = elem.split(&format!(" {name}=\"")).nth(1).or_else(|| elem.strip_prefix(&format!("{name}=\""))).unwrap();
        v[..v.find('"').unwrap()].parse().unwrap()
    }

    #[test]
    fn a_forest_plot_draws_each_row_in_its_verdicts_colour_at_its_estimate() {
        let f = Forest {
            title: "avg-idle: the claims".into(),
            subtitle: "99% intervals".into(),
            x_desc: "effect (%)".into(),
            rows: vec![
                row("Jason clamp, threads=4", 25.0, Some((15.0, 35.0)), Shade::Reproduced),
                row("Jason clamp, threads=8", -20.0, Some((-30.0, -12.0)), Shade::Opposite),
                row("one run", 3.0, None, Shade::Inconclusive),
            ],
        };
        let svg = forest_svg(&f).unwrap();
        for label in ["avg-idle: the claims", "99% intervals", "effect (%)", "Jason clamp, threads=4", "one run", "reproduced", "inconclusive", "claimed"] {
            assert!(svg.contains(label), "{label} missing");
        }
        // one estimate dot per row (the legend's dots aside), and the +25 one right of the -20 one
        let (r, o) = (circles(&svg, Shade::Reproduced.colour()), circles(&svg, Shade::Opposite.colour()));
        assert_eq!((r.len(), o.len(), circles(&svg, Shade::Inconclusive.colour()).len()), (2, 2, 2), "{svg}");
        assert!(r.iter().max() > o.iter().max(), "{r:?} {o:?}");
        let (lo, hi) = forest_x_range(&f.rows);
        assert!(lo < -30.0 && hi > 35.0 && lo < -10.0, "{lo}..{hi}");
    }

    #[test]
    fn a_sweep_map_colours_every_cell_that_ran_and_writes_its_effect() {
        let cell = |shade, text: &str| Some(MapCell { shade, text: text.into() });
        let m = SweepMap {
            title: "where the +20% holds".into(),
            subtitle: "fserver ops/s".into(),
            x_desc: "newidle pass cost (us)".into(),
            y_desc: "remote line (ns)".into(),
            xs: vec!["1".into(), "10".into(), "100".into()],
            ys: vec!["50".into(), "200".into()],
            cells: vec![
                vec![cell(Shade::NoEffect, "+1%"), cell(Shade::Inconclusive, "+8%"), cell(Shade::Reproduced, "+22%")],
                vec![cell(Shade::NoEffect, "+0%"), None, cell(Shade::Reproduced, "+31%")],
            ],
        };
        let svg = sweep_map_svg(&m).unwrap();
        for label in ["where the +20% holds", "newidle pass cost (us)", "remote line (ns)", "+22%", "+31%", "100", "200"] {
            assert!(svg.contains(label), "{label} missing");
        }
        let filled = |s: Shade| {
            let c = s.colour();
            svg.matches(&format!("fill=\"#{:02X}{:02X}{:02X}\"", c.0, c.1, c.2)).count()
        };
        // each verdict's cells, plus its legend square
        assert_eq!((filled(Shade::Reproduced), filled(Shade::NoEffect), filled(Shade::Inconclusive), filled(Shade::Opposite)), (3, 3, 2, 1));
    }

    #[test]
    fn a_distribution_is_bars_of_shares_or_with_many_bins_cumulative_lines() {
        let few = Distribution {
            title: "avg_idle at the gate".into(),
            subtitle: "all points".into(),
            x_desc: "avg_idle".into(),
            bins: vec!["lt_125us".into(), "lt_250us".into(), "ge_2ms".into()],
            series: vec![("snap".into(), vec![1.0, 1.0, 2.0]), ("delta".into(), vec![4.0, 0.0, 0.0])],
        };
        let svg = distribution_svg(&few).unwrap();
        assert!(svg.contains("share (%)") && svg.contains("lt_250us") && svg.contains("snap") && svg.contains("delta"));
        assert_eq!(shares(&[1.0, 1.0, 2.0]), vec![25.0, 25.0, 50.0]);
        assert_eq!(shares(&[0.0, 0.0]), vec![0.0, 0.0]);
        let many = Distribution { bins: (0..30).map(|i| format!("{i} us")).collect(), series: vec![("a".into(), vec![1.0; 30])], ..few };
        let svg = distribution_svg(&many).unwrap();
        assert!(svg.contains("cumulative share (%)") && svg.contains("<polyline"), "{svg}");
    }
}
