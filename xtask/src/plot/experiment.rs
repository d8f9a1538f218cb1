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
/// The plotting area of a forest plot, right of its row labels.
const FOREST_PLOT_PX: u32 = 660;
/// The legend of verdicts, threshold and claimed value in a figure's head.
const LEGEND_PX: u32 = 620;

/// The width in pixels of `s` in the figures' sans-serif font at `size` (plotters' size: it
/// writes size S as an SVG font-size of S / 1.24): 0.62 em per character of the written size,
/// above the average advance of DejaVu Sans (0.55 em over these labels' mix of letters, digits
/// and punctuation) and of Arial (0.5 em), so that a label the layout sizes by it is not cut at
/// the figure's edge by either font.
pub fn text_px(s: &str, size: u32) -> u32 {
    (s.chars().count() as f64 * f64::from(size) / 1.24 * 0.62).ceil() as u32
}

/// The width a figure's head needs: its title (18 px), subtitle (13 px) and legend, with the
/// left margin.
fn head_px(title: &str, subtitle: &str) -> u32 {
    24 + text_px(title, 18).max(text_px(subtitle, 13)).max(LEGEND_PX)
}

/// The forest plot's row-label area: the longest label and a gap before the axis.
pub fn forest_label_px(rows: &[ForestRow]) -> u32 {
    rows.iter().map(|r| text_px(&r.label, 13)).max().unwrap_or(0).max(100) + 24
}

/// The forest plot's size: wide enough for the longest row label beside the plotting area, and
/// for the head's title, subtitle and legend.
pub fn forest_size(f: &Forest) -> (u32, u32) {
    let n = f.rows.len().max(1) as u32;
    let width = (12 + forest_label_px(&f.rows) + FOREST_PLOT_PX + 24).max(head_px(&f.title, &f.subtitle));
    (width, 150 + ROW_PX * n)
}

/// The forest plot as an SVG document: per row the threshold band (grey), the interval
/// (whisker) and the estimate (dot) in the verdict's colour, the claimed value (a hollow
/// diamond), and a line at 0; a legend of the verdicts' colours.
pub fn forest_svg(f: &Forest) -> Result<String, String> {
    let n = f.rows.len().max(1);
    let (width, height) = forest_size(f);
    let label_px = forest_label_px(&f.rows);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
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
            .y_label_area_size(label_px)
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
    let layout = map_layout(m);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (layout.width, layout.height)).into_drawing_area();
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
            .y_label_area_size(layout.y_label_px)
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

/// A sweep map's sizes in pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapLayout {
    pub width: u32,
    pub height: u32,
    /// The area left of the grid: the y values and the rotated y description.
    pub y_label_px: u32,
    /// One grid cell's width and height.
    pub cell_w: u32,
    pub cell_h: u32,
}

/// A sweep map's layout from its texts: each cell wide enough for its effect and its x value,
/// the grid wide enough for the x description and tall enough for the rotated y description,
/// the y label area for the longest y value, the figure for its head.
pub fn map_layout(m: &SweepMap) -> MapLayout {
    let (nx, ny) = (m.xs.len().max(1) as u32, m.ys.len().max(1) as u32);
    let cell_text = m.cells.iter().flatten().flatten().map(|c| text_px(&c.text, 13)).max().unwrap_or(0);
    let x_text = m.xs.iter().map(|x| text_px(x, 13)).max().unwrap_or(0);
    let cell_w = (cell_text.max(x_text) + 20).max(110).max(text_px(&m.x_desc, 14).div_ceil(nx) + 8);
    let cell_h = 56u32.max((text_px(&m.y_desc, 14) + 16).div_ceil(ny));
    let y_label_px = m.ys.iter().map(|y| text_px(y, 13)).max().unwrap_or(0) + 14 + 14 + 20;
    // margins (12 each side), the x label area (44), the head (78)
    let width = (24 + y_label_px + nx * cell_w).max(head_px(&m.title, &m.subtitle));
    MapLayout { width, height: 78 + 24 + 44 + ny * cell_h, y_label_px, cell_w, cell_h }
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
        let legend = d.series.iter().map(|(l, _)| 50 + text_px(l, 13)).max().unwrap_or(0);
        let width = 1000u32.max(head_px(&d.title, &d.subtitle)).max(legend);
        let root = SVGBackend::with_string(&mut out, (width, 560 + 18 * ns as u32)).into_drawing_area();
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

    /// The figure's width in an SVG document's head.
    fn svg_width(svg: &str) -> u32 {
        attr(svg.split("<svg").nth(1).unwrap(), "width") as u32
    }

    /// The texts an SVG draws: the text, its anchor (x, y), its anchor kind, its size in
    /// plotters' units (the SVG's font-size x 1.24), whether it is rotated.
    fn texts(svg: &str) -> Vec<(String, i32, i32, String, u32, bool)> {
        svg.split("<text").skip(1).map(|e| {
            let field = |k: &str| e.split(&format!(" {k}=\"")).nth(1).map(|v| v[..v.find('"').unwrap()].to_string());
            let size = field("font-size").map_or(13.0, |v| v.parse::<f64>().unwrap() * 1.24).round() as u32;
            let body = e[e.find('>').unwrap() + 1..e.find("</text>").unwrap()].trim();
            let body = body.replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
            (body, attr(e, "x"), attr(e, "y"), field("text-anchor").unwrap_or_else(|| "start".into()), size, e.contains("rotate("))
        }).collect()
    }

    /// Every text of the figure lies inside it, its width [`text_px`]'s (the bound the layout is
    /// made with): along x for a level text, along y for a rotated one.
    fn assert_no_text_cut(svg: &str) {
        let head = svg.split("<svg").nth(1).unwrap();
        let (width, height) = (attr(head, "width"), attr(head, "height"));
        for (body, x, y, anchor, size, rotated) in texts(svg) {
            let w = text_px(&body, size) as i32;
            let (at, edge) = if rotated { (y, height) } else { (x, width) };
            let (lo, hi) = match anchor.as_str() {
                "end" => (at - w, at),
                "middle" => (at - w / 2, at + w / 2),
                _ => (at, at + w),
            };
            assert!(lo >= 0 && hi <= edge, "{body:?} at {at} ({anchor}, {w} px, rotated {rotated}) is cut by the figure's edges 0..{edge}");
        }
    }

    #[test]
    fn long_labels_widen_the_figures_instead_of_being_cut() {
        let long = "Ken's OLTP, CPU-domain flags off @ oltp:procs=24,io_us=800,ms=500";
        let f = Forest {
            title: "wake-balance (sim): each claim's effect, variant against baseline".into(),
            subtitle: "dot: the estimate; whisker: its 99.00% bootstrap interval (5 comparisons, Bonferroni); grey: ± the threshold".into(),
            x_desc: "effect (%)".into(),
            rows: vec![row(long, 2.0, Some((1.0, 3.0)), Shade::NoEffect), row("short", 25.0, Some((15.0, 35.0)), Shade::Reproduced)],
        };
        let svg = forest_svg(&f).unwrap();
        assert!(texts(&svg).iter().any(|t| t.0 == long), "the long label is drawn whole");
        assert_no_text_cut(&svg);
        // the label area is the longest label's: a short label gives a narrower figure
        let short = forest_svg(&Forest { rows: vec![row("short", 25.0, Some((15.0, 35.0)), Shade::Reproduced)], ..f.clone() }).unwrap();
        assert!(svg_width(&svg) > svg_width(&short) + 300, "{} vs {}", svg_width(&svg), svg_width(&short));
        assert_no_text_cut(&short);

        let cell = |text: &str| Some(MapCell { shade: Shade::NoEffect, text: text.into() });
        let m = SweepMap {
            title: "avg-idle (sim): where \"Jason's avg clamp 1.5x, fserver\" holds".into(),
            subtitle: "each cell: the claim's verdict and effect there (98.33% intervals, 3 comparisons, Bonferroni; 10 runs per cell)".into(),
            x_desc: "lines per CPU examined (snapshot_lines)".into(),
            y_desc: "line across the sockets (line_other_node_ns)".into(),
            xs: vec!["2".into(), "32".into()],
            ys: vec!["73".into(), "300".into()],
            cells: vec![vec![cell("+0.11 [-0.90, +1.41]"), cell("+0.0")], vec![cell("-0.5"), None]],
        };
        let svg = sweep_map_svg(&m).unwrap();
        assert_no_text_cut(&svg);
        // the rotated y description fits the grid's height, the x description its width
        let l = map_layout(&m);
        assert!(l.cell_h * 2 >= text_px(&m.y_desc, 14) && l.cell_w * 2 >= text_px(&m.x_desc, 14), "{l:?}");
        assert!(l.cell_w >= text_px("+0.11 [-0.90, +1.41]", 13), "{l:?}");
        assert!(texts(&svg).iter().any(|t| t.0.contains("line across the sockets") && t.5), "the y description is drawn, rotated");
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
