//! The report's figures, each as PNG and SVG (plotters; text drawn with the DejaVu Sans
//! font bundled in `harness/assets/`, so no system font or fontconfig is needed):
//! - `accuracy_vs_tokens`: accuracy against response tokens per instance (for an LLM
//!   agent's runs: the model's prompt + completion tokens, which include the tool
//!   responses it read), one point per variant and level, with bootstrap intervals —
//!   the cost/benefit picture;
//! - `latency_per_tool`: call latency per variant and tool as box plots (p25–p75 box,
//!   p5–p95 whiskers, median bar, mean diamond) on a log scale;
//! - `accuracy_per_repo`: file Acc@5 and function Acc@10 per repository and variant.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::prelude::*;

use super::ReportData;
use super::agent::AGENT_COSTS;
use super::tables::{COSTS, CostStat, Stats, VariantStats, pretty_metric};
use crate::record::output::metric_columns;

/// DejaVu Sans (see `harness/assets/LICENSE-DejaVu.txt`).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Registers the bundled font as `sans-serif` once.
fn ensure_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        anyhow::bail!("the bundled font harness/assets/DejaVuSans.ttf could not be loaded")
    }
}

/// Tableau 10: distinguishable, colour-blind-friendlier than the defaults.
const PALETTE: [(u8, u8, u8); 10] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

type DrawResult = Result<(), String>;

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A figure that can be drawn on any backend.
trait Figure {
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult;
}

/// Draws `fig` as `<stem>.png` and `<stem>.svg` in `out`.
fn save<F: Figure>(
    fig: &F,
    out: &Path,
    stem: &str,
    files: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    let png = out.join(format!("{stem}.png"));
    let svg = out.join(format!("{stem}.svg"));
    {
        let root = BitMapBackend::new(&png, fig.size()).into_drawing_area();
        fig.draw(&root)
            .and_then(|_| root.present().map_err(err))
            .map_err(|e| anyhow::anyhow!("cannot draw {}: {e}", png.display()))?;
    }
    {
        let root = SVGBackend::new(&svg, fig.size()).into_drawing_area();
        fig.draw(&root)
            .and_then(|_| root.present().map_err(err))
            .map_err(|e| anyhow::anyhow!("cannot draw {}: {e}", svg.display()))?;
    }
    files.push(png);
    files.push(svg);
    Ok(())
}

/// A categorical axis: `names[i]` sits at `i`, the first at the top when used for y.
#[derive(Clone)]
struct Rows {
    names: Vec<String>,
}

impl Ranged for Rows {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let n = self.names.len().max(1) as f64;
        let frac = (value + 0.5) / n;
        // limit.1 is the top for a y axis: index 0 goes there.
        limit.1 + ((limit.0 - limit.1) as f64 * frac).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        (0..self.names.len()).map(|i| i as f64).collect()
    }

    fn range(&self) -> Range<f64> {
        -0.5..self.names.len() as f64 - 0.5
    }
}

impl ValueFormatter<f64> for Rows {
    fn format_ext(&self, value: &f64) -> String {
        let i = value.round();
        if i >= 0.0 && (i as usize) < self.names.len() && (value - i).abs() < 1e-9 {
            self.names[i as usize].clone()
        } else {
            String::new()
        }
    }
}

/// Pixels a label of `chars` characters needs at `size` (DejaVu Sans averages ~0.55 em).
fn label_px(chars: usize, size: u32) -> u32 {
    (chars as f64 * size as f64 * 0.58) as u32 + 12
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Swatch {
    Dot,
    Square,
}

/// Height of the legend strip under a figure.
const LEGEND_H: u32 = 36;

/// Splits off a strip at the bottom of `root` and draws the legend there, centred, so it
/// never hides data. Returns the area above it.
fn with_legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    items: &[(String, RGBColor, Swatch)],
) -> Result<DrawingArea<DB, Shift>, String> {
    let (w, h) = root.dim_in_pixel();
    let (main, strip) = root.split_vertically(h.saturating_sub(LEGEND_H));
    let widths: Vec<i32> = items
        .iter()
        .map(|(n, ..)| 30 + label_px(n.chars().count(), 15) as i32)
        .collect();
    let total: i32 = widths.iter().sum();
    let mut x = ((w as i32 - total) / 2).max(8);
    let y = (LEGEND_H / 2) as i32;
    for ((name, c, swatch), width) in items.iter().zip(widths) {
        match swatch {
            Swatch::Dot => strip
                .draw(&Circle::new((x + 8, y), 6, c.filled()))
                .map_err(err)?,
            Swatch::Square => strip
                .draw(&Rectangle::new([(x, y - 7), (x + 16, y + 7)], c.filled()))
                .map_err(err)?,
        }
        strip
            .draw(&Text::new(
                name.clone(),
                (x + 24, y - 8),
                ("sans-serif", 15).into_font().color(&BLACK),
            ))
            .map_err(err)?;
        x += width;
    }
    Ok(main)
}

/// One point of the cost/benefit plot.
struct AccPoint {
    variant: usize,
    tokens: f64,
    /// (metric index among LEVELS, value, lo, hi) in percent.
    values: Vec<(usize, f64, f64, f64)>,
}

/// The metrics the cost/benefit and per-repository plots show.
const PLOT_METRICS: [&str; 3] = ["file_acc_5", "module_acc_10", "function_acc_10"];

struct AccVsTokens {
    variants: Vec<String>,
    points: Vec<AccPoint>,
    /// Which tokens the x axis counts.
    axis: TokenAxis,
}

/// The x axis of the cost/benefit plot.
#[derive(Debug, Clone, Copy, PartialEq)]
enum TokenAxis {
    /// The tools' responses (scripted policies).
    Response,
    /// What the LLM agent read and wrote: prompt + completion tokens.
    Model,
}

impl TokenAxis {
    fn caption(self) -> &'static str {
        match self {
            TokenAxis::Response => "Accuracy vs response tokens per instance (95% bootstrap CI)",
            TokenAxis::Model => "Accuracy vs model tokens per instance (95% bootstrap CI)",
        }
    }

    fn label(self) -> &'static str {
        match self {
            TokenAxis::Response => "response tokens per instance (mean)",
            TokenAxis::Model => "model tokens per instance: prompt + completion (mean)",
        }
    }
}

impl Figure for AccVsTokens {
    fn size(&self) -> (u32, u32) {
        (1000, 650)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let legend: Vec<(String, RGBColor, Swatch)> = PLOT_METRICS
            .iter()
            .enumerate()
            .map(|(i, m)| (pretty_metric(m), color(i), Swatch::Dot))
            .collect();
        let root = &with_legend(root, &legend)?;
        let max_tokens = self.points.iter().map(|p| p.tokens).fold(0.0f64, f64::max);
        let x_max = if max_tokens > 0.0 {
            max_tokens * 1.25
        } else {
            1.0
        };
        let mut chart = ChartBuilder::on(root)
            .caption(self.axis.caption(), ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(64)
            .build_cartesian_2d(0f64..x_max, 0f64..105f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc(self.axis.label())
            .y_desc("accuracy (%)")
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let jitter = x_max * 0.008;
        for li in 0..PLOT_METRICS.len() {
            let c = color(li);
            let dx = (li as f64 - 1.0) * jitter;
            let pts: Vec<(f64, f64, f64, f64)> = self
                .points
                .iter()
                .filter_map(|p| {
                    p.values
                        .iter()
                        .find(|(m, ..)| *m == li)
                        .map(|(_, v, lo, hi)| (p.tokens + dx, *v, *lo, *hi))
                })
                .collect();
            chart
                .draw_series(pts.iter().map(|(x, v, lo, hi)| {
                    ErrorBar::new_vertical(*x, *lo, *v, *hi, c.stroke_width(2), 10)
                }))
                .map_err(err)?;
            chart
                .draw_series(
                    pts.iter()
                        .map(|(x, v, ..)| Circle::new((*x, *v), 6, c.filled())),
                )
                .map_err(err)?;
        }
        for p in &self.points {
            let top = p
                .values
                .iter()
                .map(|(_, _, _, hi)| *hi)
                .fold(0.0f64, f64::max);
            let name = self.variants.get(p.variant).cloned().unwrap_or_default();
            chart
                .draw_series(std::iter::once(Text::new(
                    name,
                    (p.tokens + jitter * 2.5, (top + 3.0).min(101.0)),
                    ("sans-serif", 16).into_font().color(&BLACK),
                )))
                .map_err(err)?;
        }
        Ok(())
    }
}

struct LatencyBoxes {
    variants: Vec<String>,
    /// (row label, variant index, p05, p25, p50, p75, p95, mean)
    rows: Vec<(String, usize, [f64; 6])>,
}

impl Figure for LatencyBoxes {
    fn size(&self) -> (u32, u32) {
        (1000, 140 + LEGEND_H + 36 * self.rows.len() as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let legend: Vec<(String, RGBColor, Swatch)> = self
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), color(i), Swatch::Square))
            .collect();
        let root = &with_legend(root, &legend)?;
        let positive = |x: f64| x.max(1e-3);
        let lo = self
            .rows
            .iter()
            .map(|(_, _, q)| positive(q[0]))
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .rows
            .iter()
            .flat_map(|(_, _, q)| [q[4], q[5]])
            .fold(0.0f64, f64::max);
        let (lo, hi) = if lo.is_finite() && hi > lo {
            (lo / 1.6, hi * 1.6)
        } else {
            (0.01, 1000.0)
        };
        let names: Vec<String> = self.rows.iter().map(|(n, ..)| n.clone()).collect();
        let widest = names.iter().map(|n| n.chars().count()).max().unwrap_or(4);
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Tool call latency (box p25–p75, whiskers p5–p95, | median, ◆ mean)",
                ("sans-serif", 20),
            )
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(label_px(widest, 14).min(420))
            .build_cartesian_2d((lo..hi).log_scale(), Rows { names })
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("latency per call (ms, log scale)")
            .axis_desc_style(("sans-serif", 16))
            .label_style(("sans-serif", 14))
            .x_label_formatter(&|x| {
                if *x >= 1.0 {
                    format!("{x:.0}")
                } else {
                    format!("{x:.2}")
                }
            })
            .y_labels(self.rows.len())
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        for (i, (_, v, q)) in self.rows.iter().enumerate() {
            let c = color(*v);
            let y = i as f64;
            let [p05, p25, p50, p75, p95, mean] = q.map(positive);
            let h = 0.28;
            chart
                .draw_series([
                    PathElement::new(vec![(p05, y), (p25, y)], c.stroke_width(2)),
                    PathElement::new(vec![(p75, y), (p95, y)], c.stroke_width(2)),
                    PathElement::new(
                        vec![(p05, y - h / 2.0), (p05, y + h / 2.0)],
                        c.stroke_width(2),
                    ),
                    PathElement::new(
                        vec![(p95, y - h / 2.0), (p95, y + h / 2.0)],
                        c.stroke_width(2),
                    ),
                ])
                .map_err(err)?;
            chart
                .draw_series([
                    Rectangle::new([(p25, y - h), (p75, y + h)], c.mix(0.35).filled()),
                    Rectangle::new([(p25, y - h), (p75, y + h)], c.stroke_width(2)),
                ])
                .map_err(err)?;
            chart
                .draw_series([PathElement::new(
                    vec![(p50, y - h), (p50, y + h)],
                    BLACK.stroke_width(3),
                )])
                .map_err(err)?;
            chart
                .draw_series([Polygon::new(diamond(&chart, mean, y), BLACK.filled())])
                .map_err(err)?;
        }
        Ok(())
    }
}

/// A small diamond around (x, y) in data coordinates of a log-x chart.
fn diamond<DB: DrawingBackend>(
    chart: &ChartContext<DB, Cartesian2d<plotters::coord::combinators::LogCoord<f64>, Rows>>,
    x: f64,
    y: f64,
) -> Vec<(f64, f64)> {
    // Size in pixels, converted back through the log scale.
    let (px, _) = chart.backend_coord(&(x, y));
    let (px2, _) = chart.backend_coord(&(x * 1.1, y));
    let per_px = if px2 > px {
        (1.1f64).ln() / (px2 - px) as f64
    } else {
        0.01
    };
    let dx = (6.0 * per_px).exp();
    let dy = 0.16;
    vec![(x / dx, y), (x, y - dy), (x * dx, y), (x, y + dy)]
}

/// One bar: variant index, repository index, value in percent, instances.
type Bar = (usize, usize, f64, usize);

struct RepoBars {
    variants: Vec<String>,
    repos: Vec<String>,
    /// Per metric panel: its title and bars.
    panels: Vec<(String, Vec<Bar>)>,
}

impl Figure for RepoBars {
    fn size(&self) -> (u32, u32) {
        let per_repo = 16 + 24 * self.variants.len() as u32;
        (
            1100,
            (170 + LEGEND_H + per_repo * self.repos.len() as u32).max(300),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult {
        root.fill(&WHITE).map_err(err)?;
        let legend: Vec<(String, RGBColor, Swatch)> = self
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), color(i), Swatch::Square))
            .collect();
        let root = with_legend(root, &legend)?;
        let root = root
            .titled("Accuracy per repository", ("sans-serif", 22))
            .map_err(err)?;
        let panels = root.split_evenly((1, self.panels.len().max(1)));
        let widest = self
            .repos
            .iter()
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(4);
        let nv = self.variants.len().max(1) as f64;
        let band = 0.8 / nv;
        for (pi, ((title, bars), area)) in self.panels.iter().zip(panels.iter()).enumerate() {
            let mut chart = ChartBuilder::on(area)
                .caption(title, ("sans-serif", 18))
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(if pi == 0 {
                    label_px(widest, 14).min(360)
                } else {
                    label_px(widest, 14).min(360) / 3
                })
                .build_cartesian_2d(
                    0f64..125f64,
                    Rows {
                        names: if pi == 0 {
                            self.repos.clone()
                        } else {
                            vec![String::new(); self.repos.len()]
                        },
                    },
                )
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc("accuracy (%)")
                .axis_desc_style(("sans-serif", 15))
                .label_style(("sans-serif", 14))
                .x_labels(7)
                .x_label_formatter(&|x| {
                    if *x <= 100.0 {
                        format!("{x:.0}")
                    } else {
                        String::new()
                    }
                })
                .y_labels(self.repos.len())
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(err)?;
            for (v, r, value, n) in bars {
                let c = color(*v);
                let top = *r as f64 - 0.4 + band * *v as f64;
                let bottom = top + band * 0.9;
                chart
                    .draw_series([Rectangle::new([(0.0, top), (*value, bottom)], c.filled())])
                    .map_err(err)?;
                chart
                    .draw_series([Text::new(
                        format!("{value:.0} (n={n})"),
                        (*value + 1.0, top),
                        ("sans-serif", 13).into_font().color(&BLACK),
                    )])
                    .map_err(err)?;
            }
        }
        Ok(())
    }
}

/// The model's tokens for an agent's runs (every variant an agent's); else the tools'
/// response tokens (one axis never mixes the two).
fn token_axis(stats: &Stats) -> TokenAxis {
    if !stats.variants.is_empty() && stats.variants.iter().all(|v| v.agent.is_some()) {
        TokenAxis::Model
    } else {
        TokenAxis::Response
    }
}

/// A variant's tokens per instance on `axis`.
fn tokens_of(v: &VariantStats, axis: TokenAxis) -> Option<CostStat> {
    match axis {
        TokenAxis::Response => {
            let i = COSTS.iter().position(|(c, _)| *c == "response_tokens")?;
            v.costs.get(i).copied().flatten()
        }
        TokenAxis::Model => {
            let i = AGENT_COSTS.iter().position(|(c, _)| *c == "llm_tokens")?;
            v.agent.as_ref()?.costs.get(i).copied().flatten()
        }
    }
}

/// Draws every figure the data allows into `out`; returns the files written.
pub fn draw_all(data: &ReportData, stats: &Stats, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    ensure_font()?;
    let mut files = Vec::new();
    let names = metric_columns();
    let idx: Vec<Option<usize>> = PLOT_METRICS
        .iter()
        .map(|m| names.iter().position(|n| n == m))
        .collect();

    // Cost/benefit.
    let axis = token_axis(stats);
    let mut points = Vec::new();
    for (vi, v) in stats.variants.iter().enumerate() {
        let Some(tokens) = tokens_of(v, axis) else {
            continue;
        };
        let values: Vec<(usize, f64, f64, f64)> = idx
            .iter()
            .enumerate()
            .filter_map(|(li, i)| {
                let e = (*i).and_then(|i| v.metrics.get(i).copied().flatten())?;
                Some((li, e.value * 100.0, e.lo * 100.0, e.hi * 100.0))
            })
            .collect();
        if !values.is_empty() {
            points.push(AccPoint {
                variant: vi,
                tokens: tokens.mean.value,
                values,
            });
        }
    }
    if !points.is_empty() {
        let fig = AccVsTokens {
            variants: data.variants.clone(),
            points,
            axis,
        };
        save(&fig, out, "accuracy_vs_tokens", &mut files)?;
    }

    // Latency per tool.
    let rows: Vec<(String, usize, [f64; 6])> = data
        .tool_latency
        .iter()
        .filter(|l| l.n > 0)
        .map(|l| {
            let vi = data
                .variants
                .iter()
                .position(|v| v == &l.variant)
                .unwrap_or(0);
            (
                format!("{} · {} (n={})", l.variant, l.tool, l.n),
                vi,
                [l.p05, l.p25, l.p50, l.p75, l.p95, l.mean],
            )
        })
        .collect();
    if !rows.is_empty() {
        let fig = LatencyBoxes {
            variants: data.variants.clone(),
            rows,
        };
        save(&fig, out, "latency_per_tool", &mut files)?;
    }

    // Accuracy per repository.
    let mut repos: Vec<String> = stats.repos.iter().map(|r| r.repo.clone()).collect();
    repos.dedup();
    let acc = super::tables::acc_columns();
    let mut panels = Vec::new();
    for metric in ["file_acc_5", "function_acc_10"] {
        let Some(ai) = acc.iter().position(|a| a == metric) else {
            continue;
        };
        let bars: Vec<Bar> = stats
            .repos
            .iter()
            .filter_map(|r| {
                let e = r.acc.get(ai).copied().flatten()?;
                let vi = data.variants.iter().position(|v| v == &r.variant)?;
                let ri = repos.iter().position(|x| x == &r.repo)?;
                Some((vi, ri, e.value * 100.0, r.n_scored))
            })
            .collect();
        panels.push((pretty_metric(metric), bars));
    }
    if !repos.is_empty() && panels.iter().any(|(_, b)| !b.is_empty()) {
        let fig = RepoBars {
            variants: data.variants.clone(),
            repos,
            panels,
        };
        save(&fig, out, "accuracy_per_repo", &mut files)?;
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::agent::AgentCosts;
    use crate::report::stats::Estimate;

    fn cost(x: f64) -> Option<CostStat> {
        Some(CostStat {
            mean: Estimate {
                value: x,
                lo: x,
                hi: x,
            },
            p50: x,
            p95: x,
        })
    }

    fn variant(name: &str, agent_tokens: Option<f64>) -> VariantStats {
        VariantStats {
            variant: name.into(),
            n_rows: 1,
            n_scored: 1,
            n_errors: 0,
            n_no_gold: 0,
            n_ran: 1,
            metrics: Vec::new(),
            costs: vec![cost(1.0), cost(300.0), cost(2.0), cost(3.0), cost(4.0)],
            calls: None,
            agent: agent_tokens.map(|t| AgentCosts {
                n_ran: 1,
                costs: AGENT_COSTS
                    .iter()
                    .map(|(c, _)| cost(if *c == "llm_tokens" { t } else { 0.0 }))
                    .collect(),
                n_priced: 0,
                n_estimated: 0,
                stop_reasons: Vec::new(),
            }),
            answers: None,
        }
    }

    #[test]
    fn an_agents_runs_plot_model_tokens() {
        let stats = |variants| Stats {
            variants,
            repos: Vec::new(),
            paired: Vec::new(),
            tool_help: crate::report::agent::ToolHelp::Scripted,
            trials: Vec::new(),
        };
        let agent = stats(vec![variant("text", Some(5000.0))]);
        assert_eq!(token_axis(&agent), TokenAxis::Model);
        assert_eq!(
            tokens_of(&agent.variants[0], TokenAxis::Model).map(|c| c.mean.value),
            Some(5000.0)
        );
        assert!(TokenAxis::Model.label().contains("prompt + completion"));
        let mixed = stats(vec![variant("text", Some(5000.0)), variant("bm25", None)]);
        assert_eq!(token_axis(&mixed), TokenAxis::Response);
        assert_eq!(
            tokens_of(&mixed.variants[1], TokenAxis::Response).map(|c| c.mean.value),
            Some(300.0)
        );
    }
}
