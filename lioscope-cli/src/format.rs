//! Printing results: an aligned text table (numbers right-aligned, as SQL*Plus), CSV or
//! JSON, with or without the feedback lines SQL*Plus's SET FEEDBACK controls.

use comfy_table::{CellAlignment, ContentArrangement, Table, presets};
use lioscope::QueryResult;
use lioscope::types::Datum;

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Csv,
    Json,
}

/// Renders a result as text. With `feedback`, a table ends with "n rows selected." and
/// a statement without rows prints its message ("Table created.", "3 rows updated.");
/// without, neither.
pub fn render(result: &QueryResult, format: OutputFormat, feedback: bool) -> String {
    if result.columns.is_empty() {
        return if feedback { result.message.clone().map(|m| m + "\n").unwrap_or_default() } else { String::new() };
    }
    match format {
        OutputFormat::Table if feedback => format!("{}{}\n", table(result), rows_selected(result.rows.len())),
        OutputFormat::Table => table(result),
        OutputFormat::Csv => csv(result),
        OutputFormat::Json => json(result),
    }
}

fn table(result: &QueryResult) -> String {
    let mut t = Table::new();
    t.load_style(presets::ASCII_MARKDOWN).set_content_arrangement(ContentArrangement::Disabled).force_no_tty();
    t.set_header(&result.columns);
    for row in &result.rows {
        t.add_row(row.iter().map(|v| {
            let cell = comfy_table::Cell::new(v.to_string());
            if matches!(v, Datum::Int(_) | Datum::Num(_)) { cell.set_alignment(CellAlignment::Right) } else { cell }
        }));
    }
    format!("{t}\n")
}

/// What SQL*Plus prints after a query's rows: "1 row selected." or "{n} rows selected.".
pub fn rows_selected(n: usize) -> String {
    if n == 1 { "1 row selected.".to_owned() } else { format!("{n} rows selected.") }
}

fn csv(result: &QueryResult) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(&result.columns);
    for row in &result.rows {
        let _ = w.write_record(row.iter().map(|v| v.to_string()));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn json(result: &QueryResult) -> String {
    let rows: Vec<serde_json::Map<String, serde_json::Value>> = result
        .rows
        .iter()
        .map(|row| result.columns.iter().cloned().zip(row.iter().map(json_value)).collect())
        .collect();
    serde_json::to_string_pretty(&rows).unwrap_or_default() + "\n"
}

fn json_value(v: &Datum<'_>) -> serde_json::Value {
    match v {
        Datum::Null => serde_json::Value::Null,
        Datum::Int(i) => (*i).into(),
        // Exact decimals as JSON numbers written in full, never through a float.
        Datum::Num(d) => {
            serde_json::Value::Number(serde_json::Number::from_string_unchecked(d.normalize().to_string()))
        }
        other => other.to_string().into(),
    }
}
