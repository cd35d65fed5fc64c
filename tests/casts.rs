//! CAST against SQLite (an independent engine) on random tables with NULLs, where both
//! engines mean the same (whole numbers, text); where Oracle differs (INTEGER rounds a
//! fraction, SQLite truncates it) the golden file `cast.sql` shows Oracle's answers.

mod common;

use common::sqlite::{answers_as_sqlite, table_rows};

/// (lioscope's query, SQLite's): every ORDER BY orders the rows completely.
const QUERIES: &[(&str, &str)] = &[
    (
        "SELECT k, CAST(n AS INTEGER), CAST(NULL AS INTEGER), CAST(n * 2 AS NUMBER(4)) FROM a \
         ORDER BY k NULLS FIRST, 2 NULLS FIRST",
        "SELECT k, CAST(n AS INTEGER), CAST(NULL AS INTEGER), CAST(n * 2 AS INTEGER) FROM a ORDER BY k, 2",
    ),
    (
        "SELECT CAST(k AS VARCHAR2(5)) || '-' || v FROM a WHERE k IS NOT NULL AND v IS NOT NULL ORDER BY 1",
        "SELECT CAST(k AS TEXT) || '-' || v FROM a WHERE k IS NOT NULL AND v IS NOT NULL ORDER BY 1",
    ),
    (
        "SELECT k, SUM(CAST(n AS NUMBER)) FROM a WHERE k IS NOT NULL GROUP BY k ORDER BY k",
        "SELECT k, SUM(CAST(n AS INTEGER)) FROM a WHERE k IS NOT NULL GROUP BY k ORDER BY k",
    ),
    (
        "SELECT a.k, b.v FROM a JOIN b ON CAST(a.k AS VARCHAR2(3)) = CAST(b.k AS VARCHAR2(3)) \
         WHERE b.v IS NOT NULL ORDER BY 1, 2",
        "SELECT a.k, b.v FROM a JOIN b ON CAST(a.k AS TEXT) = CAST(b.k AS TEXT) WHERE b.v IS NOT NULL ORDER BY 1, 2",
    ),
    (
        "SELECT COUNT(*) FROM a WHERE CAST(CAST(n AS VARCHAR2(4)) AS INTEGER) = n",
        "SELECT COUNT(*) FROM a WHERE CAST(CAST(n AS TEXT) AS INTEGER) = n",
    ),
];

#[test]
fn casts_answer_as_sqlite_does() {
    answers_as_sqlite(file!(), 30, table_rows(4, true, 20), QUERIES);
}
