//! The parts of PostgreSQL's catalog functions written in lioscope's SQL: a lookup in a
//! catalog view, `format_type` as a CASE over the types lioscope presents, `ARRAY(SELECT
//! ...)` as the array's text, and the parameters of left-out arguments kept.

use super::parsed;
use sqlparser::ast::{Expr, Query, SelectItem, SetExpr};

/// `(SELECT wanted FROM pg_catalog.view WHERE key = value)`: a lookup in a catalog view.
/// Its alias is one no client writes: a value that is itself a lookup is a subquery of its own,
/// and the client's names are qualified before they get here (`Writer::correlated`).
pub(super) fn lookup(view: &str, wanted: &str, key: &str, value: &str) -> String {
    format!(
        "(SELECT lioscope_lookup.{wanted} FROM pg_catalog.{view} lioscope_lookup WHERE lioscope_lookup.{key} = {value})"
    )
}

/// `ARRAY(SELECT x FROM ...)` (the subquery already written) as the text of the array
/// PostgreSQL would send: `{a,b}` of the subquery's values in order.
pub(super) fn array_of(query: &Query) -> Result<String, String> {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Err(format!("ARRAY({query}): one SELECT only"));
    };
    let [SelectItem::UnnamedExpr(item) | SelectItem::ExprWithAlias { expr: item, .. }] = select.projection.as_slice()
    else {
        return Err(format!("ARRAY({query}): one column only"));
    };
    let mut aggregated = select.as_ref().clone();
    aggregated.projection =
        vec![SelectItem::UnnamedExpr(parsed(&format!("LISTAGG({item}, ',') WITHIN GROUP (ORDER BY {item})"))?)];
    Ok(format!("'{{' || ({aggregated}) || '}}'"))
}

/// `text`, which leaves out some of `args`, still naming every parameter (`$n`) they
/// name: the client sends a value for each, and the statement must take them all.
pub(super) fn keeping_parameters(mut text: String, args: &[Expr]) -> String {
    for arg in args {
        let written = arg.to_string();
        let dropped = parameters(&written).into_iter().any(|p| !parameters(&text).contains(&p));
        if dropped {
            text = format!("CASE WHEN {written} IS NULL THEN {text} ELSE {text} END");
        }
    }
    text
}

/// The parameters (`$1`) named in `text`.
fn parameters(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('$') {
        let digits = bytes[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if digits > 0 {
            out.push(text[i..i + 1 + digits].to_string());
        }
    }
    out
}

/// A user's name as the catalogs show it (`SCOTT` as `scott`).
pub(super) fn pg_user(user: &str) -> String {
    if user.chars().any(char::is_lowercase) { user.to_string() } else { user.to_lowercase() }
}

/// PostgreSQL's `format_type(oid, typmod)` for the types lioscope presents, as a CASE.
pub(super) fn format_type(oid: &str, typmod: &str) -> String {
    format!(
        "CASE {oid} \
         WHEN 16 THEN 'boolean' WHEN 19 THEN 'name' WHEN 20 THEN 'bigint' WHEN 21 THEN 'smallint' \
         WHEN 23 THEN 'integer' WHEN 25 THEN 'text' WHEN 26 THEN 'oid' WHEN 701 THEN 'double precision' \
         WHEN 1082 THEN 'date' WHEN 1186 THEN 'interval' \
         WHEN 1043 THEN CASE WHEN {typmod} >= 4 THEN 'character varying(' || ({typmod} - 4) || ')' ELSE 'character varying' END \
         WHEN 1042 THEN CASE WHEN {typmod} >= 4 THEN 'character(' || ({typmod} - 4) || ')' ELSE 'character' END \
         WHEN 1700 THEN CASE WHEN {typmod} >= 4 THEN 'numeric(' || TRUNC(({typmod} - 4) / 65536) || ',' || MOD({typmod} - 4, 65536) || ')' ELSE 'numeric' END \
         WHEN 1114 THEN CASE WHEN {typmod} >= 0 THEN 'timestamp(' || {typmod} || ') without time zone' ELSE 'timestamp without time zone' END \
         WHEN 1184 THEN CASE WHEN {typmod} >= 0 THEN 'timestamp(' || {typmod} || ') with time zone' ELSE 'timestamp with time zone' END \
         ELSE '???' END"
    )
}
