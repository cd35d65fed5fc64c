//! The lab's report files: a CSV per table, and a self-contained HTML page with the
//! environment, the parameters, the tables and the charts as inline SVG (drawn by
//! plotters), readable offline.
//!
//! ```text
//!  <h1>title</h1>
//!  environment table · parameters table
//!  tables (median [min..max] cells) · figures (<svg> chart + how it was derived)
//!  derivations of every figure
//!  <script> marks each figure with its drawn size (for the headless-browser check)
//! ```
//!
//! Invariants: nothing is fetched (no fonts, scripts or styles from elsewhere); every
//! chart says how its figures were derived; a figure that is not available is drawn as
//! "n/a", never as zero; text from the data is escaped. A chart whose positive values
//! span more than [`LOG_SPAN`] times draws them on a log axis (the in-memory scans'
//! 0.1 ms beside the index path's 800 ms would otherwise be invisible bars), and every
//! bar carries its value.

use lioscope::{Error, Result};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A figure for a table: whole numbers and those of 10 or more without decimals, others
/// with three.
pub fn round(v: f64) -> String {
    if v.fract() == 0.0 || v.abs() >= 10.0 { format!("{v:.0}") } else { format!("{v:.3}") }
}

/// A figure on an axis: at most two decimals, without trailing zeros.
fn axis_label(v: f64) -> String {
    if v.abs() >= 100.0 {
        return format!("{v:.0}");
    }
    let text = format!("{v:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// A table cell of a figure over runs: `median [min..max]`, or the median alone when the
/// runs agree.
pub fn spread_cell(median: f64, min: f64, max: f64) -> String {
    if min == max { round(median) } else { format!("{} [{}..{}]", round(median), round(min), round(max)) }
}

/// A table cell of a figure that may be missing: [`spread_cell`], or "n/a".
pub fn cell(f: Option<super::stats::Spread>) -> String {
    f.map_or("n/a".to_owned(), |f| spread_cell(f.median, f.min, f.max))
}

/// A table cell of a ratio derived from medians (a scaling factor, a throughput): two
/// decimals, or "n/a".
pub fn ratio_cell(ratio: Option<f64>) -> String {
    ratio.map_or("n/a".to_owned(), |r| format!("{r:.2}"))
}

/// Prints `rows` under `header` as the lab's terminal tables are printed (Markdown-style,
/// whatever standard output is).
pub fn print_table(header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) {
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::ASCII_MARKDOWN).force_no_tty();
    table.set_header(header);
    for row in rows {
        table.add_row(row);
    }
    println!("{table}");
}

/// Prints that each figure is the median of `repeat` runs, then how each is derived.
pub fn print_derivations(repeat: &serde_json::Value, derivations: &BTreeMap<&'static str, &'static str>) {
    println!("Each figure: the median of {repeat} runs [min..max]. Derivations:");
    for (key, how) in derivations {
        println!("  {key}: {how}");
    }
}

/// Writes `rows` under `header` as CSV to `path` (atomically).
pub fn write_csv(path: &std::path::Path, header: &[&str], rows: &[Vec<String>]) -> Result<()> {
    let io = |e: csv::Error| Error::io("write", path, std::io::Error::other(e));
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record(header).map_err(io)?;
    for row in rows {
        csv.write_record(row).map_err(io)?;
    }
    let bytes = csv.into_inner().map_err(|e| Error::io("write", path, std::io::Error::other(e.to_string())))?;
    write_atomically(path, &bytes)
}

/// Replaces `path` with `contents` so that a crash leaves the old file or the new one,
/// never a torn one: the engine's own atomic replace (write beside, sync, rename, sync
/// the directory), through the operating system's I/O layer.
pub fn write_atomically(path: &std::path::Path, contents: &[u8]) -> Result<()> {
    lioscope::io::os().replace(path, contents)
}

/// Replaces the JSON document at `path` with `value`, atomically.
pub fn write_json<T: serde::Serialize>(path: &std::path::Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::io("write", path, std::io::Error::other(e.to_string())))?;
    write_atomically(path, text.as_bytes())
}

/// The cells of a CSV line of one figure: median, min and max, empty when not available.
pub fn figure_cells(f: Option<super::stats::Spread>) -> [String; 3] {
    let cell = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    [cell(f.map(|f| f.median)), cell(f.map(|f| f.min)), cell(f.map(|f| f.max))]
}

/// One point of a series: x, the median, and the min..max of the runs when they differ.
pub type Point = (f64, f64, Option<(f64, f64)>);

/// One series of a chart; for a bar chart x is the category's index, and a missing index
/// is drawn "n/a".
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

impl Series {
    pub fn new(name: &str, points: Vec<Point>) -> Series {
        Series { name: name.to_owned(), points }
    }
}

/// What a chart draws its series as.
#[derive(Debug, Clone)]
enum Kind {
    /// Lines through the points, over a numeric x axis.
    Lines,
    /// The points alone (a scatter plot), over a numeric x axis.
    Points,
    /// Grouped bars, one group per category.
    Bars { categories: Vec<String> },
}

/// One chart of a report.
#[derive(Debug, Clone)]
pub struct Chart {
    title: String,
    x_label: String,
    y_label: String,
    kind: Kind,
    series: Vec<Series>,
    /// How the figures drawn were derived.
    note: String,
}

const WIDTH: u32 = 960;
const HEIGHT: u32 = 420;

/// Highest over lowest positive value from which a chart's y axis is logarithmic.
pub const LOG_SPAN: f64 = 100.0;

/// How a chart maps its values to heights: as they are, or by their base-10 logarithm
/// (every value then positive).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Axis {
    Linear,
    Log,
}

impl Axis {
    /// The axis for `values`: log when every one is positive and they span more than
    /// [`LOG_SPAN`] times.
    fn for_values(values: impl IntoIterator<Item = f64>) -> Axis {
        let (mut lo, mut hi, mut any) = (f64::INFINITY, 0.0_f64, false);
        for v in values {
            if v <= 0.0 || !v.is_finite() {
                return Axis::Linear;
            }
            (lo, hi, any) = (lo.min(v), hi.max(v), true);
        }
        if any && hi / lo > LOG_SPAN { Axis::Log } else { Axis::Linear }
    }

    /// Where value `v` is drawn.
    fn place(self, v: f64) -> f64 {
        match self {
            Axis::Linear => v,
            Axis::Log => v.log10(),
        }
    }
}

/// A value as a label: three significant digits, without exponent below a million.
pub fn short_value(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".to_owned()
    } else if a >= 1e6 {
        format!("{v:.3e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let digits = (-a.log10().floor()) as usize + 2;
        format!("{v:.digits$}")
    }
}

/// `bytes` in binary units (`381.5 MiB`), exact below 1 KiB.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if v.fract() == 0.0 { format!("{v:.0} {}", UNITS[unit]) } else { format!("{v:.1} {}", UNITS[unit]) }
}

impl Chart {
    pub fn lines(title: &str, x_label: &str, y_label: &str, series: Vec<Series>, note: &str) -> Chart {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            kind: Kind::Lines,
            series,
            note: note.into(),
        }
    }

    /// A scatter plot: each series' points, unjoined.
    pub fn points(title: &str, x_label: &str, y_label: &str, series: Vec<Series>, note: &str) -> Chart {
        Chart { kind: Kind::Points, ..Chart::lines(title, x_label, y_label, series, note) }
    }

    pub fn bars(title: &str, y_label: &str, categories: &[&str], series: Vec<Series>, note: &str) -> Chart {
        Chart {
            title: title.into(),
            x_label: String::new(),
            y_label: y_label.into(),
            kind: Kind::Bars { categories: categories.iter().map(|c| c.to_string()).collect() },
            series,
            note: note.into(),
        }
    }

    /// The chart as an SVG document.
    pub fn svg(&self) -> Result<String> {
        let mut svg = String::new();
        self.draw(&mut svg).map_err(|e| Error::InvalidValue {
            context: format!("lab report: chart '{}'", self.title),
            message: e.to_string(),
        })?;
        Ok(svg)
    }

    fn draw(&self, out: &mut String) -> std::result::Result<(), Box<dyn std::error::Error>> {
        let root = SVGBackend::with_string(out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let values = || {
            self.series
                .iter()
                .flat_map(|s| &s.points)
                .flat_map(|&(_, y, range)| [Some(y), range.map(|r| r.0), range.map(|r| r.1)].into_iter().flatten())
        };
        let axis = Axis::for_values(values());
        let (bottom, top) = match axis {
            Axis::Linear => {
                let highest = values().fold(0.0_f64, f64::max);
                (0.0, if highest > 0.0 { highest * 1.12 } else { 1.0 })
            }
            Axis::Log => {
                let (lo, hi) = values().fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
                // Half a decade at least below the lowest value, so that its bar shows.
                let (lo, hi) = ((lo.log10() - 0.5).floor(), hi.log10());
                (lo, hi + (hi - lo) * 0.12)
            }
        };
        let y_desc = match axis {
            Axis::Linear => self.y_label.clone(),
            Axis::Log => format!("{} (log scale)", self.y_label),
        };
        let (x_range, categories) = match &self.kind {
            Kind::Lines | Kind::Points => {
                let xs = self.series.iter().flat_map(|s| &s.points).map(|p| p.0);
                let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
                let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
                let pad = ((hi - lo) * 0.05).max(0.5);
                ((lo - pad)..(hi + pad), None)
            }
            Kind::Bars { categories } => (-0.5..(categories.len() as f64 - 0.5), Some(categories)),
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range, bottom..top)?;
        let label_category = |x: &f64| {
            categories
                .and_then(|c| (x.fract().abs() < 1e-9 && *x >= 0.0).then(|| c.get(*x as usize)).flatten())
                .cloned()
                .unwrap_or_default()
        };
        let whole_xs = self.series.iter().flat_map(|s| &s.points).all(|p| p.0.fract() == 0.0);
        let whole_x = |x: &f64| if x.fract() == 0.0 { format!("{x:.0}") } else { String::new() };
        let mut mesh = chart.configure_mesh();
        let y_label = |y: &f64| match axis {
            Axis::Linear => axis_label(*y),
            // Labels at whole powers of ten only.
            Axis::Log if (y - y.round()).abs() < 1e-9 => format!("{}", 10f64.powi(y.round() as i32)),
            Axis::Log => String::new(),
        };
        mesh.y_desc(&y_desc).x_desc(&self.x_label).disable_x_mesh().light_line_style(WHITE).y_label_formatter(&y_label);
        if let Some(c) = categories {
            mesh.x_labels(c.len() * 2 + 1).x_label_formatter(&label_category);
        } else if whole_xs {
            mesh.x_label_formatter(&whole_x);
        }
        mesh.draw()?;
        let groups = self.series.len().max(1) as f64;
        for (i, series) in self.series.iter().enumerate() {
            let color = Palette99::pick(i).to_rgba();
            let whisker = |x: f64, lo: f64, hi: f64| {
                PathElement::new(vec![(x, axis.place(lo)), (x, axis.place(hi))], BLACK.stroke_width(1))
            };
            match &self.kind {
                Kind::Lines => {
                    let points: Vec<(f64, f64)> = series.points.iter().map(|p| (p.0, axis.place(p.1))).collect();
                    chart
                        .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))?
                        .label(&series.name)
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
                    chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled())))?;
                    chart.draw_series(
                        series.points.iter().filter_map(|&(x, _, r)| r.map(|(lo, hi)| whisker(x, lo, hi))),
                    )?;
                }
                Kind::Points => {
                    let points: Vec<(f64, f64)> = series.points.iter().map(|p| (p.0, axis.place(p.1))).collect();
                    chart
                        .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?
                        .label(&series.name)
                        .legend(move |(x, y)| Circle::new((x + 6, y), 4, color.filled()));
                }
                Kind::Bars { categories } => {
                    let width = 0.8 / groups;
                    let left = |x: f64| x - 0.4 + width * i as f64;
                    chart
                        .draw_series(series.points.iter().map(|&(x, y, _)| {
                            Rectangle::new(
                                [(left(x) + 0.02, bottom), (left(x) + width - 0.02, axis.place(y))],
                                color.filled(),
                            )
                        }))?
                        .label(&series.name)
                        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
                    let centre = |x: f64| left(x) + width / 2.0;
                    chart.draw_series(
                        series.points.iter().filter_map(|&(x, _, r)| r.map(|(lo, hi)| whisker(centre(x), lo, hi))),
                    )?;
                    // Each bar's value above it (above its whisker when it has one).
                    let raise = (top - bottom) * 0.045;
                    let values = series.points.iter().map(|&(x, y, r)| {
                        let at = axis.place(r.map_or(y, |(_, hi)| hi.max(y))) + raise;
                        Text::new(short_value(y), (left(x) + 0.03, at.min(top)), ("sans-serif", 12))
                    });
                    chart.draw_series(values)?;
                    let missing =
                        (0..categories.len()).filter(|&c| !series.points.iter().any(|p| p.0 == c as f64)).map(|c| {
                            let at = bottom + (top - bottom) * 0.04;
                            Text::new("n/a", (centre(c as f64) - 0.04, at), ("sans-serif", 13))
                        });
                    chart.draw_series(missing)?;
                }
            }
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
        root.present()?;
        Ok(())
    }
}

/// Table cells longer than this are text, aligned left; shorter ones are figures or
/// names, aligned right.
const TEXT_CELL: usize = 40;

/// A report page under construction.
pub struct Html {
    title: String,
    body: String,
    charts: usize,
}

/// `text` with HTML's special characters escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

impl Html {
    /// A page titled `title`, opening with the machine and the experiment's parameters.
    pub fn new(
        title: &str,
        environment: &super::environment::Environment,
        parameters: &BTreeMap<&'static str, serde_json::Value>,
    ) -> Html {
        let mut html = Html { title: title.to_owned(), body: String::new(), charts: 0 };
        let environment = serde_json::to_value(environment).unwrap_or_default();
        let rows = environment.as_object().into_iter().flatten().map(|(k, v)| vec![k.clone(), plain(v)]);
        html.table_from("Environment", &["", ""], rows);
        html.table_from(
            "Parameters",
            &["", ""],
            parameters.iter().map(|(k, v)| vec![k.to_string(), parameter_cell(k, v)]),
        );
        html
    }

    /// A paragraph of text.
    pub fn paragraph(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", escape(text));
    }

    /// A table titled `title`.
    pub fn table_from(&mut self, title: &str, header: &[&str], rows: impl IntoIterator<Item = Vec<String>>) {
        let _ = writeln!(self.body, "<h2>{}</h2>\n<table>", escape(title));
        if header.iter().any(|h| !h.is_empty()) {
            // A long figure name may break after its underscores, nowhere else.
            let cells: String =
                header.iter().map(|h| format!("<th>{}</th>", escape(h).replace('_', "_<wbr>"))).collect();
            let _ = writeln!(self.body, "<tr>{cells}</tr>");
        }
        for row in rows {
            // Sentences align left; a figure's `median [min..max]` wraps only at its blank.
            let cells: String = row
                .iter()
                .map(|c| match c.len() > TEXT_CELL {
                    true => format!("<td class=\"text\">{}</td>", escape(c)),
                    false => format!("<td>{}</td>", escape(c)),
                })
                .collect();
            let _ = writeln!(self.body, "<tr>{cells}</tr>");
        }
        self.body.push_str("</table>\n");
    }

    /// A chart, drawn now, with how its figures were derived below it.
    pub fn chart(&mut self, chart: Chart) -> Result<()> {
        self.charts += 1;
        let svg = chart.svg()?;
        // plotters writes an XML-free SVG element: it can go inline as it is.
        let _ = writeln!(
            self.body,
            "<figure class=\"chart\" id=\"chart-{}\">\n{svg}\n<figcaption>{}</figcaption>\n</figure>",
            self.charts,
            escape(&chart.note)
        );
        Ok(())
    }

    /// The derivation of every figure.
    pub fn derivations(&mut self, derivations: &BTreeMap<&'static str, &'static str>) {
        self.table_from(
            "How each figure is derived",
            &["figure", "derivation"],
            derivations.iter().map(|(k, v)| vec![k.to_string(), v.to_string()]),
        );
    }

    /// The whole page.
    pub fn render(&self) -> String {
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n\
             <style>\nbody {{ font-family: sans-serif; margin: 2em; max-width: 1000px; }}\n\
             table {{ border-collapse: collapse; margin-bottom: 1em; max-width: 100%; font-size: 0.85em; }}\n\
             td, th {{ border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: right; }}\n\
             td.text {{ text-align: left; }}\n\
             td:first-child {{ text-align: left; }}\nfigure {{ margin: 1.5em 0; }}\n\
             figcaption {{ font-size: 0.85em; color: #444; }}\n</style>\n</head>\n<body>\n\
             <h1>{title}</h1>\n{body}\
             <script>\n// Marks each chart with the size the browser drew it at, for the report's test.\n\
             for (const f of document.querySelectorAll('figure.chart')) {{\n\
             \x20 const svg = f.querySelector('svg');\n\
             \x20 const box = svg ? svg.getBBox() : {{ width: 0, height: 0 }};\n\
             \x20 f.dataset.drawnWidth = Math.round(box.width);\n\
             \x20 f.dataset.drawnHeight = Math.round(box.height);\n\
             \x20 f.dataset.marks = svg ? svg.querySelectorAll('rect, line, polyline, path, circle').length : 0;\n\
             }}\ndocument.body.dataset.chartsChecked = document.querySelectorAll('figure.chart').length;\n\
             </script>\n</body>\n</html>\n",
            title = escape(&self.title),
            body = self.body,
        )
    }
}

/// A JSON value as a table cell: strings without quotes, `null` as "n/a".
fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "n/a".into(),
        other => other.to_string(),
    }
}

/// A parameter as a table cell: sizes in bytes (`*_size`, `*_bytes`) in binary units with
/// the exact count beside them, anything else as [`plain`].
fn parameter_cell(name: &str, v: &serde_json::Value) -> String {
    match v.as_u64() {
        Some(bytes) if (name.ends_with("_size") || name.ends_with("_bytes")) && bytes >= 1024 => {
            format!("{} ({bytes} bytes)", human_bytes(bytes))
        }
        _ => plain(v),
    }
}

/// Writes the page to `path` (atomically).
pub fn write_html(path: &std::path::Path, html: &Html) -> Result<()> {
    write_atomically(path, html.render().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_chart_draws_its_bars_and_marks_missing_figures() {
        let chart = Chart::bars(
            "cpu",
            "ms",
            &["A", "B", "C"],
            vec![Series::new("cpu ms", vec![(0.0, 5.0, Some((4.0, 6.0))), (2.0, 1.0, None)])],
            "how",
        );
        let svg = chart.svg().unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("n/a"), "category B has no figure");
        for label in ["A", "C", "cpu ms", "ms"] {
            assert!(svg.contains(&format!(">\n{label}\n<")) || svg.contains(label), "{label}");
        }
    }

    #[test]
    fn values_spanning_orders_of_magnitude_go_on_a_log_axis_and_every_bar_says_its_value() {
        assert_eq!(Axis::for_values([0.5, 40.0]), Axis::Linear);
        assert_eq!(Axis::for_values([0.07, 155.0]), Axis::Log);
        assert_eq!(Axis::for_values([0.0, 155.0]), Axis::Linear, "a zero has no logarithm");
        let chart = Chart::bars(
            "cpu",
            "ms",
            &["INDEX", "FULL", "INMEMORY"],
            vec![Series::new("cpu ms", vec![(0.0, 812.0, None), (1.0, 155.2, None), (2.0, 0.071, None)])],
            "how",
        );
        let svg = chart.svg().unwrap();
        assert!(svg.contains("(log scale)"), "the axis says it is logarithmic");
        for value in ["812", "155", "0.071"] {
            assert!(svg.contains(value), "{value} printed on its bar");
        }
    }

    #[test]
    fn sizes_and_values_print_in_human_units() {
        assert_eq!(human_bytes(400_000_000), "381.5 MiB");
        assert_eq!(human_bytes(32 << 20), "32 MiB");
        assert_eq!(human_bytes(1000), "1000 B");
        assert_eq!(parameter_cell("db_cache_size", &serde_json::json!(400_000_000u64)), "381.5 MiB (400000000 bytes)");
        assert_eq!(parameter_cell("rows", &serde_json::json!(400_000_000u64)), "400000000");
        assert_eq!(short_value(0.0712), "0.0712");
        assert_eq!(short_value(155.24), "155");
        assert_eq!(short_value(2.5e9), "2.500e9");
    }

    #[test]
    fn text_from_the_data_is_escaped() {
        assert_eq!(escape("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
        let env = super::super::environment::Environment::read();
        let mut html = Html::new("<t>", &env, &BTreeMap::new());
        html.table_from("x", &["<h>"], [vec!["<td>".to_owned()]]);
        let page = html.render();
        assert!(page.contains("&lt;t&gt;") && page.contains("&lt;td&gt;") && !page.contains("<td><td>"));
    }

    #[test]
    fn a_scatter_plot_draws_its_points_unjoined() {
        let points = vec![(0.0, 10.0, None), (1.0, 90.0, None), (2.0, 40.0, None)];
        let series = || vec![Series::new("W000", points.clone())];
        let svg = Chart::points("cpu", "s", "%", series(), "how").svg().unwrap();
        assert_eq!(svg.matches("<circle").count(), 3 + 1, "three points and the legend's mark: {svg}");
        let lines = Chart::lines("cpu", "s", "%", series(), "how").svg().unwrap();
        assert!(svg.matches("<polyline").count() < lines.matches("<polyline").count(), "no line joins them");
    }

    #[test]
    fn a_chart_of_nothing_still_draws() {
        let chart = Chart::lines("empty", "x", "y", vec![Series::new("none", Vec::new())], "how");
        assert!(chart.svg().unwrap().contains("empty"));
    }
}
