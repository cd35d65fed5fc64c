//! The queries PostgreSQL's clients send about the database itself (psql's `\d`
//! commands, drivers' and browsers' table and column lists), read in PostgreSQL's
//! dialect and written again in lioscope's over the engine's `pg_catalog` and
//! `information_schema` views.
//!
//! What is written again:
//! - casts: `'emp'::regclass` is the OID of `emp` and `c.oid::regclass` its name (as
//!   subqueries of `pg_class`; `regtype` and `regnamespace` likewise), `'1'::oid` a
//!   number, `x::text` a string; `COLLATE ...` is dropped (lioscope compares binary);
//! - PostgreSQL's regular expression operators (`~`, `!~`, `OPERATOR(pg_catalog.~)`,
//!   `~*`) and `~~`, when the pattern is one LIKE can say (`^(emp.*)$`: what psql's
//!   patterns are), as LIKE; any other pattern is refused, never matched wrongly;
//! - PostgreSQL's functions on the catalogs: `pg_get_userbyid`, `format_type`,
//!   `pg_get_indexdef`, `pg_get_constraintdef`, `pg_get_expr`, `pg_table_is_visible`,
//!   `pg_encoding_to_char`, `array_to_string` of an ACL (always NULL here),
//!   `obj_description`, `current_database`, `current_schema`, `current_user`,
//!   `pg_table_size` and `pg_relation_size` (a table's segment, from `user_segments`),
//!   `pg_size_pretty`;
//! - booleans: a catalog's boolean column (`t`/`f` in lioscope) tested as a condition
//!   is compared with `'t'`; `true`/`false` are `'t'`/`'f'` as values and always-true and
//!   always-false conditions as conditions; a condition in the select list is a CASE
//!   giving `t` or `f`. The result columns that are booleans are reported, so the server
//!   describes them as `bool`;
//! - `x = ANY (ARRAY[...])` as `x IN (...)`; `(current_schemas(b))[n]` (JDBC's schema
//!   list) as the schema's name; `pg_catalog.pg_class.relname` as `pg_class.relname`
//!   (the table given its own name as alias); `E'...'` strings.
//!
//! A query whose every branch joins a catalog lioscope has nothing in (inheritance,
//! row security, extended statistics, publications, triggers: `ALWAYS_EMPTY`) has no
//! rows whatever else it says, and is answered so without the engine: such queries use
//! arrays, which lioscope's SQL does not have.
//!
//! The folder: `writer` writes a query clause by clause, `functions` PostgreSQL's
//! catalog functions, `patterns` regular expressions as LIKE.
//!
//! Invariant: a query is written again only when its text names a catalog or uses
//! PostgreSQL's own syntax (`needs_translation`); a client's other statements reach the
//! engine as sent.

mod functions;
mod patterns;
mod writer;

use sqlparser::ast::{Expr, JoinOperator, ObjectName, SelectItem, SetExpr, Statement, TableFactor, Value};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;
use writer::Writer;

/// The catalogs lioscope has no rows in: a branch that joins one has none.
const ALWAYS_EMPTY: &[&str] = &[
    "pg_inherits",
    "pg_policy",
    "pg_statistic_ext",
    "pg_publication",
    "pg_publication_rel",
    "pg_publication_namespace",
    "pg_trigger",
    "pg_rewrite",
    "pg_attrdef",
    "pg_description",
    "pg_extension",
    "pg_enum",
    "pg_partitioned_table",
    "pg_foreign_table",
];

/// The array columns of the catalog views: NULL in every row.
pub(crate) const ARRAY_COLUMNS: &[&str] =
    &["reloptions", "relacl", "datacl", "attacl", "attoptions", "nspacl", "polroles", "rolconfig", "useconfig"];

/// The boolean columns of the catalog views (`t` or `f`).
const BOOLEAN_COLUMNS: &[&str] = &[
    "relhasindex",
    "relisshared",
    "relhasrules",
    "relhastriggers",
    "relhassubclass",
    "relrowsecurity",
    "relforcerowsecurity",
    "relispopulated",
    "relispartition",
    "attbyval",
    "attnotnull",
    "atthasdef",
    "atthasmissing",
    "attisdropped",
    "attislocal",
    "indisunique",
    "indisprimary",
    "indisexclusion",
    "indimmediate",
    "indisclustered",
    "indisvalid",
    "indcheckxmin",
    "indisready",
    "indislive",
    "indisreplident",
    "indnullsnotdistinct",
    "condeferrable",
    "condeferred",
    "convalidated",
    "conislocal",
    "connoinherit",
    "rolsuper",
    "rolinherit",
    "rolcreaterole",
    "rolcreatedb",
    "rolcanlogin",
    "rolreplication",
    "rolbypassrls",
    "usecreatedb",
    "usesuper",
    "userepl",
    "usebypassrls",
    "datistemplate",
    "datallowconn",
    "typbyval",
    "typisdefined",
    "typispreferred",
    "typnotnull",
    "hasindexes",
    "hasrules",
    "hastriggers",
    "rowsecurity",
    "admin_option",
    "cycle",
    "puballtables",
    "inhdetachpending",
    "polpermissive",
];

/// A client's query as lioscope runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translated {
    /// lioscope's text, and which of its result columns are booleans.
    Query { sql: String, booleans: Vec<bool> },
    /// No rows, whatever the engine holds: the result's column names.
    Empty { columns: Vec<String> },
}

/// Whether `sql` may need writing again: it names a catalog or uses PostgreSQL's syntax.
/// A word counts where it starts a name (`pg_class`, not `mpg_ratio`); `::` and `~`
/// anywhere outside a string literal. One pass over the bytes, nothing allocated: every
/// statement a client sends is asked.
pub fn needs_translation(sql: &str) -> bool {
    const WORDS: [&[u8]; 6] =
        [b"pg_", b"information_schema", b"current_schema", b"current_database", b"current_user", b"session_user"];
    let bytes = sql.as_bytes();
    let mut quoted = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' => quoted = !quoted,
            _ if quoted => {}
            b'~' => return true,
            b':' if bytes.get(i + 1) == Some(&b':') => return true,
            _ => {
                let starts_name =
                    i == 0 || !matches!(bytes[i - 1], b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'$');
                if starts_name
                    && WORDS.iter().any(|w| bytes.get(i..i + w.len()).is_some_and(|at| at.eq_ignore_ascii_case(w)))
                {
                    return true;
                }
            }
        }
    }
    false
}

/// `sql` written in lioscope's dialect for user `user`; `None` when it needs nothing
/// (not a catalog query, or not one query PostgreSQL's parser reads: the engine then
/// says what is wrong with it), an error naming what cannot be translated.
pub fn translate(sql: &str, user: &str) -> Option<Result<Translated, String>> {
    if !needs_translation(sql) {
        return None;
    }
    let mut statements = Parser::parse_sql(&PostgreSqlDialect {}, sql).ok()?;
    if statements.len() != 1 {
        return None;
    }
    let Statement::Query(mut query) = statements.remove(0) else { return None };
    if always_empty(&query.body)
        && let Some(columns) = column_names(&query.body)
    {
        return Some(Ok(Translated::Empty { columns }));
    }
    let mut writer = Writer { user: user.to_string(), only_table: None };
    Some(writer.query(&mut query).map(|()| {
        let booleans = boolean_columns(&query.body);
        Translated::Query { sql: query.to_string(), booleans }
    }))
}

/// Whether every branch of `body` joins a catalog with no rows.
fn always_empty(body: &SetExpr) -> bool {
    match body {
        SetExpr::Select(select) => select.from.iter().any(|from| {
            names_empty(&from.relation)
                || from.joins.iter().any(|j| {
                    matches!(
                        j.join_operator,
                        JoinOperator::Join(_) | JoinOperator::Inner(_) | JoinOperator::CrossJoin(_)
                    ) && names_empty(&j.relation)
                })
        }),
        SetExpr::SetOperation { left, right, op, .. } => match op {
            sqlparser::ast::SetOperator::Union => always_empty(left) && always_empty(right),
            _ => always_empty(left),
        },
        SetExpr::Query(q) => always_empty(&q.body),
        _ => false,
    }
}

fn names_empty(factor: &TableFactor) -> bool {
    match factor {
        TableFactor::Table { name, args: None, .. } => {
            let parts = name_parts(name);
            let schema_ok = parts.len() == 1 || (parts.len() == 2 && parts[0] == "pg_catalog");
            schema_ok && parts.last().is_some_and(|t| ALWAYS_EMPTY.contains(&t.as_str()))
        }
        _ => false,
    }
}

pub(crate) fn name_parts(name: &ObjectName) -> Vec<String> {
    name.0.iter().map(|p| p.as_ident().map_or_else(String::new, |i| i.value.to_lowercase())).collect()
}

/// The first branch's select list, as PostgreSQL names its columns; `None` with a `*`.
fn column_names(body: &SetExpr) -> Option<Vec<String>> {
    match body {
        SetExpr::Select(select) => select
            .projection
            .iter()
            .map(|item| match item {
                SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
                SelectItem::UnnamedExpr(e) => Some(pg_column_name(e)),
                _ => None,
            })
            .collect(),
        SetExpr::SetOperation { left, .. } => column_names(left),
        SetExpr::Query(q) => column_names(&q.body),
        _ => None,
    }
}

/// The name PostgreSQL gives a result column of `e` that has no alias.
pub(crate) fn pg_column_name(e: &Expr) -> String {
    match e {
        Expr::Identifier(i) => i.value.to_lowercase(),
        Expr::CompoundIdentifier(parts) => parts.last().map_or_else(|| "?column?".into(), |i| i.value.to_lowercase()),
        Expr::Cast { expr, data_type, .. } => match expr.as_ref() {
            Expr::Value(_) => type_name(data_type).rsplit('.').next().unwrap_or("?column?").to_string(),
            inner => pg_column_name(inner),
        },
        Expr::Nested(inner) | Expr::Collate { expr: inner, .. } => pg_column_name(inner),
        Expr::Function(f) => function_name(&f.name),
        Expr::Case { .. } => "case".into(),
        _ => "?column?".into(),
    }
}

/// The result columns of the first branch that are booleans: by what each select item
/// is, or (a `*`) by the column's name.
fn boolean_columns(body: &SetExpr) -> Vec<bool> {
    match body {
        SetExpr::Select(select) => {
            if select
                .projection
                .iter()
                .any(|i| matches!(i, SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)))
            {
                return Vec::new();
            }
            select
                .projection
                .iter()
                .map(|item| match item {
                    SelectItem::ExprWithAlias { expr, .. } | SelectItem::UnnamedExpr(expr) => is_boolean_value(expr),
                    _ => false,
                })
                .collect()
        }
        SetExpr::SetOperation { left, .. } => boolean_columns(left),
        SetExpr::Query(q) => boolean_columns(&q.body),
        _ => Vec::new(),
    }
}

/// Whether a result column named `name` is one of the catalogs' booleans (for a `*`).
pub fn is_boolean_column(name: &str) -> bool {
    BOOLEAN_COLUMNS.contains(&name.to_ascii_lowercase().as_str())
}

/// Whether a written select item gives `t`/`f`: a boolean column, or a condition made a
/// CASE of `'t'` and `'f'`.
fn is_boolean_value(e: &Expr) -> bool {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => is_boolean_column(&pg_column_name(e)),
        Expr::Nested(inner) => is_boolean_value(inner),
        Expr::Case { conditions, else_result: Some(else_result), .. } => {
            let flag = |e: &Expr| matches!(e, Expr::Value(v) if matches!(&v.value, Value::SingleQuotedString(s) if s == "t" || s == "f"));
            conditions.iter().all(|c| flag(&c.result)) && flag(else_result) && conditions.len() == 1
        }
        Expr::Value(v) => matches!(&v.value, Value::SingleQuotedString(s) if s == "t" || s == "f"),
        _ => false,
    }
}

pub(crate) fn function_name(name: &ObjectName) -> String {
    name_parts(name).last().cloned().unwrap_or_default()
}

pub(crate) fn type_name(t: &sqlparser::ast::DataType) -> String {
    let text = t.to_string().to_lowercase();
    text.strip_prefix("pg_catalog.").unwrap_or(&text).to_string()
}

/// An expression of lioscope's text (built from already written parts).
pub(crate) fn parsed(text: &str) -> Result<Expr, String> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| format!("writing {text}: {e}"))
}

pub(crate) fn string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sql(text: &str) -> String {
        match translate(text, "SCOTT") {
            Some(Ok(Translated::Query { sql, .. })) => sql,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn psql_patterns_become_like() {
        let text = sql(
            "SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(emp)$' COLLATE pg_catalog.default AND n.nspname !~ '^pg_toast'",
        );
        assert!(text.contains("c.relname LIKE 'emp' ESCAPE '\\'"), "{text}");
        assert!(text.contains("NOT LIKE 'pg\\_toast%'"), "{text}");
        assert!(matches!(translate("SELECT 1 FROM pg_class WHERE relname ~ '^(a|b)$'", "X"), Some(Err(_))));
    }

    #[test]
    fn booleans_are_compared_as_conditions_and_reported_as_values() {
        let Some(Ok(Translated::Query { sql, booleans })) = translate(
            "SELECT a.attname, a.attnotnull, false AS relhasoids, a.attnum > 0 FROM pg_catalog.pg_attribute a WHERE NOT a.attisdropped AND a.atthasdef",
            "SCOTT",
        ) else {
            panic!()
        };
        assert_eq!(booleans, vec![false, true, true, true]);
        assert!(sql.contains("NOT a.attisdropped = 't'") && sql.contains("a.atthasdef = 't'"), "{sql}");
        assert!(sql.contains("'f' AS relhasoids"), "{sql}");
    }

    #[test]
    fn casts_functions_and_schemas() {
        let text = sql(
            "SELECT pg_catalog.pg_class.relname, c.oid::pg_catalog.regclass, pg_catalog.lower(x) FROM pg_catalog.pg_class WHERE attrelid = 'emp'::regclass AND c.oid = '16384'",
        );
        assert!(text.contains("FROM pg_catalog.pg_class pg_class"), "{text}");
        assert!(text.contains("SELECT pg_class.relname"), "{text}");
        assert!(text.contains("lioscope_lookup.relname = 'emp'"), "{text}");
        assert!(text.contains("lower(x)") && !text.contains("pg_catalog.lower"), "{text}");
        let text = sql(
            "SELECT current_schema(), current_user, pg_catalog.pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.relkind = ANY (ARRAY['r', 'v'])",
        );
        assert!(text.contains("'public'") && text.contains("'scott'"), "{text}");
        assert!(text.contains("c.relkind IN ('r', 'v')"), "{text}");
    }

    #[test]
    fn a_schema_of_the_search_path_is_a_literal() {
        let text = sql(
            "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = (pg_catalog.current_schemas(true))[1] OR nspname = current_schemas(false)[1] OR nspname = (current_schemas(true))[3]",
        );
        assert!(text.contains("nspname = 'pg_catalog'"), "{text}");
        assert!(text.contains("nspname = 'public'"), "{text}");
        assert!(text.contains("nspname = CAST(NULL AS VARCHAR2(1))"), "{text}");
        let refused = translate("SELECT (current_schemas(true))[1:2] FROM pg_catalog.pg_namespace", "SCOTT");
        assert!(matches!(refused, Some(Err(ref e)) if e.contains("no arrays")), "{refused:?}");
    }

    #[test]
    fn a_parameter_of_a_left_out_argument_is_still_taken() {
        let text = sql(
            "SELECT pg_catalog.pg_get_constraintdef(c.oid, $1), c.conname FROM pg_constraint c WHERE c.contype = $2",
        );
        assert!(text.contains("$1") && text.contains("$2"), "{text}");
    }

    #[test]
    fn only_catalog_names_and_postgresql_syntax_call_for_writing_again() {
        assert!(needs_translation("SELECT relname FROM pg_class"));
        assert!(needs_translation("SELECT * FROM information_schema.tables"));
        assert!(needs_translation("SELECT 'emp'::regclass"));
        assert!(needs_translation("SELECT 1 FROM t WHERE a ~ 'x'"));
        assert!(!needs_translation("SELECT mpg_ratio FROM cars"), "a name that holds pg_ inside");
        assert!(!needs_translation("SELECT 'a~b', 'pg_class' FROM dual"), "inside literals");
        assert!(!needs_translation("SELECT v$pg_x FROM dual"));
    }

    #[test]
    fn escapes_values_arrays_and_format_type() {
        let text =
            sql("SELECT pg_catalog.array_to_string(d.datacl, E'\\n') AS acl, E'a\\tb' FROM pg_catalog.pg_database d");
        assert!(text.contains("CAST(NULL AS VARCHAR2(1)) AS acl") && text.contains("'a\tb'"), "{text}");
        let text = sql(
            "SELECT conname FROM pg_constraint c WHERE confrelid IN (SELECT pg_catalog.pg_partition_ancestors('7') UNION ALL VALUES ('7'::pg_catalog.regclass))",
        );
        assert!(text.contains("UNION ALL SELECT") && !text.contains("VALUES"), "{text}");
        let text = sql(
            "SELECT ARRAY(SELECT b.rolname FROM pg_catalog.pg_roles b WHERE b.oid = r.oid) AS memberof FROM pg_catalog.pg_roles r",
        );
        assert!(text.contains("LISTAGG(b.rolname, ',') WITHIN GROUP (ORDER BY b.rolname)"), "{text}");
        let text = sql("SELECT pg_catalog.format_type(a.atttypid, a.atttypmod) FROM pg_attribute a");
        assert!(text.contains("WHEN 1043 THEN") && text.ends_with("AS \"format_type\" FROM pg_attribute a"), "{text}");
        assert!(matches!(translate("SELECT array_to_string(ARRAY[1, 2], ',') FROM pg_class", "X"), Some(Err(_))));
    }

    #[test]
    fn a_query_joining_an_empty_catalog_has_no_rows() {
        assert_eq!(
            translate(
                "SELECT pol.polname, pol.polpermissive FROM pg_catalog.pg_policy pol WHERE pol.polrelid = '1' ORDER BY 1",
                "X"
            ),
            Some(Ok(Translated::Empty { columns: vec!["polname".into(), "polpermissive".into()] }))
        );
        assert!(
            matches!(
                translate("SELECT c.relname FROM pg_class c LEFT JOIN pg_inherits i ON i.inhrelid = c.oid", "X"),
                Some(Ok(Translated::Query { .. }))
            ),
            "an outer join keeps the other side's rows"
        );
        assert_eq!(translate("SELECT * FROM emp", "X"), None);
    }
}
