//! Answers as the engines are compared: each value normalised to a [`Cell`] (a number,
//! text, or NULL), whole numbers exactly (a count one row off differs), other numbers to
//! a relative tolerance (an absolute one below 1): [`EXACT`] between engines with
//! decimal arithmetic, [`FLOATING`] against SQLite's REAL sums; dates as `YYYY-MM-DD`,
//! text without the blanks CHAR pads it with. Also the stored expected
//! answers (`tests/tpch/answers-sf*.json` in the lab), which `lioscope bench tpch
//! --peers --save-answers` writes from DuckDB's answers.
//!
//! Invariant: a comparison names the first row and column that differ, with both values.

use lioscope::types::Value;
use lioscope::{Error, Result};
use std::collections::BTreeMap;

/// One value of an answer.
#[derive(Debug, Clone)]
pub enum Cell {
    Null,
    Number(f64),
    Text(String),
}

/// An answer: its rows in order.
pub type Answer = Vec<Vec<Cell>>;

/// The relative tolerance between engines whose sums are exact decimals (lioscope,
/// PostgreSQL, DuckDB, and the answers stored from DuckDB): only an average computed in
/// binary floating point differs, in its 15th digit.
pub const EXACT: f64 = 1e-9;

/// The relative tolerance against SQLite, whose sums of REAL values round at each row.
pub const FLOATING: f64 = 1e-6;

/// Whole numbers up to here are exact in an `f64`.
const EXACT_WHOLE: f64 = 9_007_199_254_740_992.0;

impl Cell {
    /// Whether the two values are the same answer, a number other than a whole one to
    /// the relative `tolerance`.
    pub fn matches(&self, other: &Cell, tolerance: f64) -> bool {
        match (self, other) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Number(a), Cell::Number(b)) => {
                let whole = |v: f64| v.fract() == 0.0 && v.abs() < EXACT_WHOLE;
                if whole(*a) && whole(*b) {
                    return a == b;
                }
                (a - b).abs() <= tolerance * a.abs().max(b.abs()).max(1.0)
            }
            (Cell::Text(a), Cell::Text(b)) => a == b,
            _ => false,
        }
    }
}

/// The same answer to [`FLOATING`]'s tolerance.
impl PartialEq for Cell {
    fn eq(&self, other: &Cell) -> bool {
        self.matches(other, FLOATING)
    }
}

impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Null => f.write_str("NULL"),
            Cell::Number(n) => write!(f, "{n}"),
            Cell::Text(t) => write!(f, "'{t}'"),
        }
    }
}

impl Cell {
    /// A value a peer printed as text: a number if it reads as one, a date or timestamp
    /// at midnight as its day, other text without trailing blanks.
    pub fn from_text(text: &str) -> Cell {
        let text = text.trim_end();
        if let Ok(n) = text.parse::<f64>() {
            return Cell::Number(n);
        }
        let day = text.strip_suffix(" 00:00:00").or_else(|| text.strip_suffix("T00:00:00")).unwrap_or(text);
        Cell::Text(day.to_owned())
    }

    /// A lioscope value, read from its text as a peer's is (so that text holding a
    /// number, Q22's country codes, compares as a number on every side).
    pub fn from_value(value: &Value) -> Cell {
        match value {
            Value::Null => Cell::Null,
            other => Cell::from_text(&other.to_string()),
        }
    }

    /// The value as stored: NULL as `None`, else its text ([`Cell::from_text`] reads it
    /// back; a number's text is the shortest that reads back as the same `f64`).
    fn stored(&self) -> Option<String> {
        match self {
            Cell::Null => None,
            Cell::Number(n) => Some(n.to_string()),
            Cell::Text(t) => Some(t.clone()),
        }
    }
}

/// `Ok` when `theirs` equals `ours` (numbers to the relative `tolerance`, whole numbers
/// exactly); else the first difference, in words.
pub fn compare(ours: &Answer, theirs: &Answer, tolerance: f64) -> std::result::Result<(), String> {
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        if a.len() != b.len() {
            return Err(format!("row {}: {} columns against {}", i + 1, a.len(), b.len()));
        }
        if let Some(c) = (0..a.len()).find(|&c| !a[c].matches(&b[c], tolerance)) {
            return Err(format!("row {}, column {}: {} against {}", i + 1, c + 1, a[c], b[c]));
        }
    }
    if ours.len() != theirs.len() {
        return Err(format!("{} rows against {}", ours.len(), theirs.len()));
    }
    Ok(())
}

/// Expected answers, as stored: where they came from, the scale factor, and each query's
/// answer by its label (`Q7`, `Q7 #2`), each value as text or NULL.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct StoredAnswers {
    pub source: String,
    pub scale_factor: f64,
    answers: BTreeMap<String, Vec<Vec<Option<String>>>>,
}

impl StoredAnswers {
    pub fn new(source: String, scale_factor: f64) -> StoredAnswers {
        StoredAnswers { source, scale_factor, answers: BTreeMap::new() }
    }

    pub fn insert(&mut self, label: &str, answer: &Answer) {
        let rows = answer.iter().map(|row| row.iter().map(Cell::stored).collect()).collect();
        self.answers.insert(label.to_owned(), rows);
    }

    /// The answer stored for `label`, if one is.
    pub fn get(&self, label: &str) -> Option<Answer> {
        let rows = self.answers.get(label)?;
        Some(
            rows.iter()
                .map(|row| row.iter().map(|v| v.as_deref().map_or(Cell::Null, Cell::from_text)).collect())
                .collect(),
        )
    }

    /// The labels stored.
    pub fn labels(&self) -> impl Iterator<Item = &str> {
        self.answers.keys().map(String::as_str)
    }

    pub fn read(path: &std::path::Path) -> Result<StoredAnswers> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        serde_json::from_str(&text).map_err(|e| Error::InvalidValue {
            context: path.display().to_string(),
            message: format!("not stored TPC-H answers: {e}"),
        })
    }

    pub fn write(&self, path: &std::path::Path) -> Result<()> {
        crate::report::write_json(path, self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_compare_as_normalised() {
        assert_eq!(Cell::from_text("1995-03-15 00:00:00"), Cell::Text("1995-03-15".into()));
        assert_eq!(Cell::from_text("R "), Cell::Text("R".into()));
        assert_eq!(Cell::from_text("12.000"), Cell::Number(12.0));
        assert_eq!(Cell::Number(1_000_000.1), Cell::Number(1_000_000.5));
        assert_ne!(Cell::Number(1_000_000.1), Cell::Number(1_000_002.1));
        // Whole numbers exactly: a count one row off differs however large.
        assert_ne!(Cell::Number(1_478_493.0), Cell::Number(1_478_494.0));
        assert!(Cell::Number(1_000_000.5).matches(&Cell::Number(1_000_000.5000004), EXACT));
        assert!(!Cell::Number(1_000_000.5).matches(&Cell::Number(1_000_000.6), EXACT));
        assert_ne!(Cell::Number(0.05), Cell::Number(0.0500011));
        assert_ne!(Cell::Null, Cell::Number(0.0));
        assert_eq!(Cell::from_value(&Value::Date(0)), Cell::Text("1970-01-01".into()));
        assert_eq!(Cell::from_value(&Value::Str("ASIA".into())), Cell::Text("ASIA".into()));
    }

    #[test]
    fn a_difference_is_named_by_row_and_column() {
        let answer = |v: f64| vec![vec![Cell::Text("A".into()), Cell::Number(v)]];
        assert!(compare(&answer(1.0), &answer(1.0), EXACT).is_ok());
        assert_eq!(compare(&answer(1.0), &answer(2.0), EXACT).unwrap_err(), "row 1, column 2: 1 against 2");
        assert_eq!(compare(&answer(1.0), &vec![], EXACT).unwrap_err(), "1 rows against 0");
    }

    #[test]
    fn stored_answers_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers.json");
        let answer = vec![vec![Cell::Text("A".into()), Cell::Number(0.1 + 0.2), Cell::Null]];
        let mut stored = StoredAnswers::new("test".into(), 0.01);
        stored.insert("Q1", &answer);
        stored.write(&path).unwrap();
        let back = StoredAnswers::read(&path).unwrap();
        let Cell::Number(n) = back.get("Q1").unwrap()[0][1] else { panic!() };
        assert_eq!(n, 0.1 + 0.2);
        assert_eq!(back.get("Q1").unwrap(), answer);
        assert!(back.get("Q2").is_none());
        std::fs::write(&path, "{").unwrap();
        assert!(StoredAnswers::read(&path).unwrap_err().to_string().contains("answers.json"));
    }
}
