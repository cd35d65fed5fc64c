//! The parts of PostgreSQL's catalog functions written in lioscope's SQL: a lookup in a
//! catalog view, `format_type` as a CASE over the types lioscope presents, `ARRAY(SELECT
//! ...)` as the array's text, the sizes of relations (`pg_table_size`, `pg_size_pretty`),
//! and the parameters of left-out arguments kept.

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

/// PostgreSQL's `pg_table_size(oid)` (and `pg_relation_size`): the bytes of the table's
/// segment, from `user_segments` (its allocated blocks), matched by the name `pg_class`
/// gives it (`pg_name`'s rule: a name without lower-case letters shown in lower case).
/// NULL for what `user_segments` does not list: indexes, views, sequences, and tables
/// of other users. lioscope keeps a table in one segment, so PostgreSQL's extra forks
/// (TOAST, free space map, visibility map) have nothing to add.
pub(super) fn table_size(oid: &str) -> String {
    format!(
        "(SELECT lioscope_size.bytes FROM user_segments lioscope_size \
         WHERE CASE WHEN lioscope_size.segment_name = UPPER(lioscope_size.segment_name) \
         THEN LOWER(lioscope_size.segment_name) ELSE lioscope_size.segment_name END = {})",
        lookup("pg_class", "relname", "oid", oid)
    )
}

/// PostgreSQL's `pg_size_pretty(bytes)` as a CASE, rounding as it does: bytes below
/// 10 kB; then the count of half units of the next size, kept while below 20,479 and
/// rounded half up to whole units (`10240` is `10 kB`, `10485247` is `10239 kB`,
/// `10485248` is `10 MB`).
pub(super) fn size_pretty(bytes: &str) -> String {
    let halves = |bits: u32| format!("TRUNC(({bytes}) / {})", 1u64 << bits);
    let mut text = format!("CASE WHEN ({bytes}) IS NULL THEN NULL WHEN ({bytes}) < 10240 THEN ({bytes}) || ' bytes'");
    for (bits, unit) in [(9, "kB"), (19, "MB"), (29, "GB"), (39, "TB")] {
        let half = halves(bits);
        text += &format!(" WHEN {half} < 20479 THEN TRUNC(({half} + 1) / 2) || ' {unit}'");
    }
    text + &format!(" ELSE TRUNC(({} + 1) / 2) || ' PB' END", halves(49))
}
