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
//!   `obj_description`, `current_database`, `current_schema`, `current_user`;
//! - booleans: a catalog's boolean column (`t`/`f` in lioscope) tested as a condition
//!   is compared with `'t'`; `true`/`false` are `'t'`/`'f'` as values and always-true and
//!   always-false conditions as conditions; a condition in the select list is a CASE
//!   giving `t` or `f`. The result columns that are booleans are reported, so the server
//!   describes them as `bool`;
//! - `x = ANY (ARRAY[...])` as `x IN (...)`; `pg_catalog.pg_class.relname` as
//!   `pg_class.relname` (the table given its own name as alias); `E'...'` strings.
//!
//! A query whose every branch joins a catalog lioscope has nothing in (inheritance,
//! row security, extended statistics, publications, triggers: `ALWAYS_EMPTY`) has no
//! rows whatever else it says, and is answered so without the engine: such queries use
//! arrays, which lioscope's SQL does not have.
//!
//! Invariant: a query is written again only when its text names a catalog or uses
//! PostgreSQL's own syntax (`needs_translation`); a client's other statements reach the
//! engine as sent.

use sqlparser::ast::{
    BinaryOperator, CastKind, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, JoinOperator, ObjectName,
    Query, Select, SelectItem, SetExpr, Statement, TableAlias, TableFactor, TableWithJoins, UnaryOperator, Value,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

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
const ARRAY_COLUMNS: &[&str] =
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
pub fn needs_translation(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    ["pg_", "information_schema", "::", "~", "current_schema", "current_database", "current_user", "session_user"]
        .iter()
        .any(|marker| lower.contains(marker))
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

fn name_parts(name: &ObjectName) -> Vec<String> {
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
fn pg_column_name(e: &Expr) -> String {
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

fn function_name(name: &ObjectName) -> String {
    name_parts(name).last().cloned().unwrap_or_default()
}

fn type_name(t: &sqlparser::ast::DataType) -> String {
    let text = t.to_string().to_lowercase();
    text.strip_prefix("pg_catalog.").unwrap_or(&text).to_string()
}

/// An expression of lioscope's text (built from already written parts).
fn parsed(text: &str) -> Result<Expr, String> {
    Parser::new(&PostgreSqlDialect {})
        .try_with_sql(text)
        .and_then(|mut p| p.parse_expr())
        .map_err(|e| format!("writing {text}: {e}"))
}

fn string(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The string literal `e` is, if it is one (through COLLATE and parentheses).
fn literal_string(e: &Expr) -> Option<String> {
    match e {
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::EscapedStringLiteral(s) => Some(s.clone()),
            _ => None,
        },
        Expr::Collate { expr, .. } | Expr::Nested(expr) => literal_string(expr),
        _ => None,
    }
}

/// A regular expression as a LIKE pattern (with `\` escaping), when it says exactly
/// what LIKE can: anchored at both ends (or open at one), literal characters, `.` and
/// `.*`, in an optional group. psql's patterns are of this form.
fn like_of_regex(regex: &str) -> Option<String> {
    let (anchored_start, rest) = match regex.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, regex),
    };
    let (anchored_end, body) = match rest.strip_suffix('$') {
        Some(body) if !body.ends_with('\\') => (true, body),
        _ => (false, rest),
    };
    let body = body.strip_prefix('(').and_then(|b| b.strip_suffix(')')).unwrap_or(body);
    let mut like = String::new();
    if !anchored_start {
        like.push('%');
    }
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '.' if chars.peek() == Some(&'*') => {
                chars.next();
                like.push('%');
            }
            '.' => like.push('_'),
            '\\' => {
                let escaped = chars.next()?;
                if escaped.is_alphanumeric() {
                    return None;
                }
                push_literal(&mut like, escaped);
            }
            '*' | '+' | '?' | '[' | ']' | '(' | ')' | '{' | '}' | '|' | '^' | '$' => return None,
            c => push_literal(&mut like, c),
        }
    }
    if !anchored_end {
        like.push('%');
    }
    Some(like)
}

fn push_literal(like: &mut String, c: char) {
    if matches!(c, '%' | '_' | '\\') {
        like.push('\\');
    }
    like.push(c);
}

struct Writer {
    user: String,
    /// The label of the one table the select being written reads, if it reads one: an
    /// unqualified column given to a lookup (`pg_get_constraintdef(oid)`) is qualified
    /// with it, so the lookup's own table does not capture it.
    only_table: Option<String>,
}

impl Writer {
    fn query(&mut self, query: &mut Query) -> Result<(), String> {
        if let Some(with) = &mut query.with {
            for cte in &mut with.cte_tables {
                self.query(&mut cte.query)?;
            }
        }
        self.set_expr(&mut query.body)?;
        if let Some(order_by) = &mut query.order_by
            && let sqlparser::ast::OrderByKind::Expressions(items) = &mut order_by.kind
        {
            for item in items {
                self.expr(&mut item.expr, false)?;
            }
        }
        Ok(())
    }

    fn set_expr(&mut self, body: &mut SetExpr) -> Result<(), String> {
        match body {
            SetExpr::Select(select) => self.select(select),
            SetExpr::Query(q) => self.query(q),
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left)?;
                self.set_expr(right)
            }
            SetExpr::Values(values) => {
                // `VALUES (a), (b)`, which lioscope's SQL has not, as `SELECT a UNION ALL SELECT b`.
                let mut selects = Vec::new();
                for row in &mut values.rows {
                    for e in row.content.iter_mut() {
                        self.expr(e, false)?;
                    }
                    let items: Vec<String> = row.content.iter().map(ToString::to_string).collect();
                    selects.push(format!("SELECT {}", items.join(", ")));
                }
                let text = selects.join(" UNION ALL ");
                let query = Parser::new(&PostgreSqlDialect {})
                    .try_with_sql(&text)
                    .and_then(|mut p| p.parse_query())
                    .map_err(|e| format!("writing {text}: {e}"))?;
                *body = *query.body;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn select(&mut self, select: &mut Select) -> Result<(), String> {
        let outer = self.only_table.take();
        self.only_table = match select.from.as_slice() {
            [TableWithJoins { relation: TableFactor::Table { name, alias, .. }, joins }] if joins.is_empty() => Some(
                alias
                    .as_ref()
                    .map_or_else(|| name_parts(name).last().cloned().unwrap_or_default(), |a| a.name.value.clone()),
            ),
            _ => None,
        };
        let written = self.select_parts(select);
        self.only_table = outer;
        written
    }

    fn select_parts(&mut self, select: &mut Select) -> Result<(), String> {
        for item in &mut select.projection {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let name = pg_column_name(e);
                    let before = e.clone();
                    self.expr(e, false)?;
                    if *e != before && !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                        *item = SelectItem::ExprWithAlias { expr: e.clone(), alias: Ident::with_quote('"', name) };
                    }
                }
                SelectItem::ExprWithAlias { expr, .. } => self.expr(expr, false)?,
                _ => {}
            }
        }
        for from in &mut select.from {
            self.table_with_joins(from)?;
        }
        if let Some(selection) = &mut select.selection {
            self.expr(selection, true)?;
        }
        if let Some(having) = &mut select.having {
            self.expr(having, true)?;
        }
        if let sqlparser::ast::GroupByExpr::Expressions(exprs, _) = &mut select.group_by {
            for e in exprs {
                self.expr(e, false)?;
            }
        }
        Ok(())
    }

    fn table_with_joins(&mut self, from: &mut TableWithJoins) -> Result<(), String> {
        self.table_factor(&mut from.relation)?;
        for join in &mut from.joins {
            self.table_factor(&mut join.relation)?;
            let constraint = match &mut join.join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c) => Some(c),
                _ => None,
            };
            if let Some(sqlparser::ast::JoinConstraint::On(on)) = constraint {
                self.expr(on, true)?;
            }
        }
        Ok(())
    }

    /// A catalog named with its schema and no alias gets its own name as alias, so
    /// `pg_catalog.pg_class.relname` can be written `pg_class.relname`.
    fn table_factor(&mut self, factor: &mut TableFactor) -> Result<(), String> {
        match factor {
            TableFactor::Table { name, alias, args: None, .. } => {
                let parts = name_parts(name);
                if alias.is_none() && parts.len() == 2 && is_schema(&parts[0]) {
                    *alias = Some(TableAlias {
                        explicit: false,
                        name: Ident::new(&parts[1]),
                        columns: Vec::new(),
                        at: None,
                    });
                }
                Ok(())
            }
            TableFactor::Derived { subquery, .. } => self.query(subquery),
            TableFactor::NestedJoin { table_with_joins, .. } => self.table_with_joins(table_with_joins),
            _ => Ok(()),
        }
    }

    /// Writes `e` again; `condition` when it stands where a condition does.
    fn expr(&mut self, e: &mut Expr, condition: bool) -> Result<(), String> {
        let replacement = match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
                if let Expr::CompoundIdentifier(parts) = e
                    && parts.len() == 3
                    && is_schema(&parts[0].value.to_lowercase())
                {
                    parts.remove(0);
                }
                (condition && is_boolean_column(&pg_column_name(e)))
                    .then(|| parsed(&format!("{e} = 't'")))
                    .transpose()?
            }
            Expr::Value(v) => match &v.value {
                Value::Boolean(b) => Some(parsed(match (condition, b) {
                    (true, true) => "1 = 1",
                    (true, false) => "1 = 0",
                    (false, true) => "'t'",
                    (false, false) => "'f'",
                })?),
                Value::EscapedStringLiteral(s) => Some(parsed(&string(s))?),
                _ => None,
            },
            Expr::Nested(inner) => {
                self.expr(inner, condition)?;
                None
            }
            Expr::Collate { expr, .. } => {
                self.expr(expr, condition)?;
                Some(expr.as_ref().clone())
            }
            Expr::UnaryOp { op: UnaryOperator::Not, expr } => {
                self.expr(expr, true)?;
                self.as_value(condition, e)?
            }
            Expr::BinaryOp { left, op, right } => match op {
                BinaryOperator::And | BinaryOperator::Or => {
                    self.expr(left, true)?;
                    self.expr(right, true)?;
                    self.as_value(condition, e)?
                }
                BinaryOperator::Eq
                | BinaryOperator::NotEq
                | BinaryOperator::Lt
                | BinaryOperator::LtEq
                | BinaryOperator::Gt
                | BinaryOperator::GtEq => {
                    self.expr(left, false)?;
                    self.expr(right, false)?;
                    self.as_value(condition, e)?
                }
                BinaryOperator::PGRegexMatch
                | BinaryOperator::PGRegexNotMatch
                | BinaryOperator::PGRegexIMatch
                | BinaryOperator::PGRegexNotIMatch
                | BinaryOperator::PGLikeMatch
                | BinaryOperator::PGNotLikeMatch
                | BinaryOperator::PGCustomBinaryOperator(_) => {
                    let matched = self.pattern_match(left, op, right)?;
                    let mut matched = parsed(&matched)?;
                    if !condition {
                        matched = parsed(&format!("CASE WHEN {matched} THEN 't' ELSE 'f' END"))?;
                    }
                    Some(matched)
                }
                _ => {
                    self.expr(left, false)?;
                    self.expr(right, false)?;
                    None
                }
            },
            Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
                self.expr(inner, false)?;
                self.as_value(condition, e)?
            }
            Expr::InList { expr, list, .. } => {
                self.expr(expr, false)?;
                for item in list {
                    self.expr(item, false)?;
                }
                self.as_value(condition, e)?
            }
            Expr::Between { expr, low, high, .. } => {
                self.expr(expr, false)?;
                self.expr(low, false)?;
                self.expr(high, false)?;
                self.as_value(condition, e)?
            }
            Expr::Like { expr, pattern, .. } | Expr::ILike { expr, pattern, .. } => {
                self.expr(expr, false)?;
                self.expr(pattern, false)?;
                self.as_value(condition, e)?
            }
            Expr::AnyOp { left, compare_op: BinaryOperator::Eq, right, .. } => {
                self.expr(left, false)?;
                let Expr::Array(array) = right.as_mut() else {
                    return Err(format!("{e}: lioscope has no arrays; = ANY takes a list (ARRAY[...]) only"));
                };
                let mut items = Vec::new();
                for item in &mut array.elem {
                    self.expr(item, false)?;
                    items.push(item.to_string());
                }
                let list = parsed(&format!("{left} IN ({})", items.join(", ")))?;
                Some(self.as_value(condition, &list)?.unwrap_or(list))
            }
            Expr::InSubquery { expr, subquery, .. } => {
                self.expr(expr, false)?;
                self.query(subquery)?;
                self.as_value(condition, e)?
            }
            Expr::Exists { subquery, .. } => {
                self.query(subquery)?;
                self.as_value(condition, e)?
            }
            Expr::Subquery(q) => {
                self.query(q)?;
                None
            }
            Expr::Case { operand, conditions, else_result, .. } => {
                if let Some(operand) = operand {
                    self.expr(operand, false)?;
                }
                let searched = operand.is_none();
                for when in conditions {
                    self.expr(&mut when.condition, searched)?;
                    self.expr(&mut when.result, false)?;
                }
                if let Some(else_result) = else_result {
                    self.expr(else_result, false)?;
                }
                None
            }
            Expr::Cast { kind: CastKind::DoubleColon | CastKind::Cast, expr, data_type, .. } => {
                let target = type_name(data_type);
                let literal = literal_string(expr);
                let textual = is_textual(expr);
                self.expr(expr, false)?;
                Some(self.cast(expr, literal, textual, &target)?)
            }
            Expr::Function(f) if function_name(&f.name) == "array_to_string" => {
                // The catalogs' arrays (ACLs, options) are all NULL here, and so is any
                // array made of them.
                let first = match &f.args {
                    FunctionArguments::List(list) => list.args.first().map(ToString::to_string).unwrap_or_default(),
                    _ => String::new(),
                };
                if !ARRAY_COLUMNS.iter().any(|c| first.to_lowercase().contains(c)) {
                    return Err(format!("{e}: lioscope has no arrays"));
                }
                Some(parsed("CAST(NULL AS VARCHAR2(1))")?)
            }
            Expr::Function(f) if function_name(&f.name) == "array" => {
                let FunctionArguments::Subquery(query) = &mut f.args else {
                    return Err(format!("{e}: lioscope has no arrays"));
                };
                self.query(query)?;
                Some(parsed(&array_of(query)?)?)
            }
            Expr::Function(f) => {
                let name = function_name(&f.name);
                let mut args = Vec::new();
                if let FunctionArguments::List(list) = &mut f.args {
                    for arg in &mut list.args {
                        if let FunctionArg::Unnamed(FunctionArgExpr::Expr(a)) = arg {
                            self.expr(a, false)?;
                            args.push(a.clone());
                        }
                    }
                }
                let bare = matches!(f.args, FunctionArguments::None);
                match self.function(&name, &args, bare, condition)? {
                    Some(text) => Some(parsed(&keeping_parameters(text, &args))?),
                    None => {
                        // lioscope's own function, written without PostgreSQL's schema.
                        if f.name.0.len() == 2 {
                            f.name.0.remove(0);
                        }
                        None
                    }
                }
            }
            _ => None,
        };
        if let Some(replacement) = replacement {
            *e = replacement;
        }
        Ok(())
    }

    /// `e` as a lookup's subquery may compare with: an unqualified column qualified
    /// with the one table the select reads, so the lookup's own table does not take it.
    fn correlated(&self, e: &Expr) -> String {
        match (e, &self.only_table) {
            (Expr::Identifier(column), Some(table)) => format!("{table}.{column}"),
            _ => e.to_string(),
        }
    }

    /// A condition standing where a value does, as PostgreSQL's boolean: `t` or `f`.
    fn as_value(&self, condition: bool, e: &Expr) -> Result<Option<Expr>, String> {
        if condition { Ok(None) } else { parsed(&format!("CASE WHEN {e} THEN 't' ELSE 'f' END")).map(Some) }
    }

    /// `left op right` for PostgreSQL's pattern operators, as LIKE.
    fn pattern_match(&mut self, left: &mut Expr, op: &BinaryOperator, right: &Expr) -> Result<String, String> {
        self.expr(left, false)?;
        let operator = match op {
            BinaryOperator::PGCustomBinaryOperator(parts) => parts.last().cloned().unwrap_or_default(),
            other => other.to_string(),
        };
        let pattern = literal_string(right)
            .ok_or_else(|| format!("{left} {operator} {right}: only a literal pattern can be matched"))?;
        let (like, negated, folded) = match operator.as_str() {
            "~" | "!~" | "~*" | "!~*" => (
                like_of_regex(&pattern).ok_or_else(|| {
                    format!(
                        "regular expression {} is not one lioscope can match (LIKE's anchors, . and .* only)",
                        string(&pattern)
                    )
                })?,
                operator.starts_with('!'),
                operator.ends_with('*'),
            ),
            "~~" | "!~~" => (pattern.clone(), operator.starts_with('!'), false),
            other => return Err(format!("operator {other} is not one lioscope has")),
        };
        let not = if negated { "NOT " } else { "" };
        Ok(if folded {
            format!("UPPER({left}) {not}LIKE UPPER({}) ESCAPE '\\'", string(&like))
        } else {
            format!("{left} {not}LIKE {} ESCAPE '\\'", string(&like))
        })
    }

    /// `inner::target` (inner already written; `literal` its string if it was one).
    /// `textual`: the value cast is a string (a name to look up, not an OID to name).
    fn cast(&self, inner: &Expr, literal: Option<String>, textual: bool, target: &str) -> Result<Expr, String> {
        let inner = self.correlated(inner);
        let unqualified = format!("LOWER(SUBSTR({inner}, INSTR({inner}, '.') + 1))");
        let relation_name = |name: &str| {
            let name = name.trim_matches('"');
            let name = name.strip_prefix("public.").or_else(|| name.strip_prefix("pg_catalog.")).unwrap_or(name);
            string(&name.to_lowercase())
        };
        let text = match (target, literal) {
            ("regclass", Some(name)) => lookup("pg_class", "oid", "relname", &relation_name(&name)),
            ("regclass", None) if textual => lookup("pg_class", "oid", "relname", &unqualified),
            ("regclass", None) => lookup("pg_class", "relname", "oid", &inner),
            ("regtype", Some(name)) => lookup("pg_type", "oid", "typname", &relation_name(&name)),
            ("regtype", None) if textual => lookup("pg_type", "oid", "typname", &unqualified),
            ("regtype", None) => lookup("pg_type", "typname", "oid", &inner),
            ("regnamespace", None) => lookup("pg_namespace", "nspname", "oid", &inner),
            ("oid" | "int2" | "int4" | "int8" | "smallint" | "integer" | "int" | "bigint" | "numeric", Some(n))
                if n.trim().parse::<i64>().is_ok() =>
            {
                n.trim().to_string()
            }
            ("oid" | "int2" | "int4" | "int8" | "smallint" | "integer" | "int" | "bigint" | "numeric", _) => {
                format!("CAST({inner} AS NUMBER)")
            }
            ("text" | "varchar" | "character varying" | "name" | "\"char\"" | "char" | "bpchar", Some(s)) => string(&s),
            ("text" | "varchar" | "character varying" | "name" | "\"char\"" | "char" | "bpchar", None) => {
                format!("CAST({inner} AS VARCHAR2(4000))")
            }
            ("bool" | "boolean", Some(s)) => {
                let on = matches!(s.to_lowercase().as_str(), "t" | "true" | "y" | "yes" | "on" | "1");
                (if on { "'t'" } else { "'f'" }).to_string()
            }
            (other, _) => return Err(format!("{inner}::{other}: lioscope has no type {other}")),
        };
        parsed(&text)
    }

    /// PostgreSQL's function `name` of `args` (already written) as lioscope's text;
    /// `None` for a function lioscope has itself. `bare`: called without parentheses
    /// (`current_user`); `condition`: standing where a condition does.
    fn function(&self, name: &str, args: &[Expr], bare: bool, condition: bool) -> Result<Option<String>, String> {
        let arg = |i: usize| {
            let a = args.get(i).ok_or_else(|| format!("{name} needs argument {}", i + 1))?;
            Ok::<_, String>(self.correlated(a))
        };
        Ok(Some(match name {
            "pg_get_userbyid" => lookup("pg_roles", "rolname", "oid", &arg(0)?),
            // One schema, on every search path: whatever exists is visible.
            "pg_table_is_visible" | "pg_type_is_visible" | "pg_function_is_visible" | "pg_collation_is_visible"
                if condition =>
            {
                format!("{} IS NOT NULL", arg(0)?)
            }
            "pg_table_is_visible" | "pg_type_is_visible" | "pg_function_is_visible" | "pg_collation_is_visible" => {
                format!("CASE WHEN {} IS NOT NULL THEN 't' ELSE 'f' END", arg(0)?)
            }
            "pg_encoding_to_char" => "'UTF8'".into(),
            "format_type" => format_type(&arg(0)?, &arg(1)?),
            // Column N of an index: its name (lioscope's indexes are of columns).
            "pg_get_indexdef" if args.get(1).is_some_and(|column| column.to_string() != "0") => format!(
                "(SELECT lioscope_lookup.attname FROM pg_catalog.pg_attribute lioscope_lookup \
                 WHERE lioscope_lookup.attrelid = {} AND lioscope_lookup.attnum = {})",
                arg(0)?,
                arg(1)?
            ),
            "pg_get_indexdef" => lookup("pg_indexes", "indexdef", "indexrelid", &arg(0)?),
            "pg_get_constraintdef" => lookup("pg_constraint", "condef", "oid", &arg(0)?),
            // The catalogs keep an expression's text where PostgreSQL keeps its tree.
            "pg_get_expr" => arg(0)?,
            "obj_description" | "col_description" | "shobj_description" => "CAST(NULL AS VARCHAR2(1))".into(),
            "current_database" => "(SELECT lioscope_lookup.datname FROM pg_catalog.pg_database lioscope_lookup)".into(),
            "current_schema" => "'public'".into(),
            "current_user" | "session_user" | "user" if bare || args.is_empty() => string(&pg_user(&self.user)),
            "to_regclass" => lookup("pg_class", "oid", "relname", &format!("LOWER({})", arg(0)?)),
            "to_regtype" => lookup("pg_type", "oid", "typname", &format!("LOWER({})", arg(0)?)),
            "pg_get_serial_sequence" => {
                let table = arg(0)?;
                format!(
                    "(SELECT 'public.' || lioscope_s.relname FROM pg_catalog.pg_depend lioscope_d \
                     JOIN pg_catalog.pg_class lioscope_s ON lioscope_s.oid = lioscope_d.objid \
                     JOIN pg_catalog.pg_class lioscope_t ON lioscope_t.oid = lioscope_d.refobjid \
                     JOIN pg_catalog.pg_attribute lioscope_a ON lioscope_a.attrelid = lioscope_t.oid AND lioscope_a.attnum = lioscope_d.refobjsubid \
                     WHERE lioscope_t.relname = LOWER(SUBSTR({table}, INSTR({table}, '.') + 1)) AND lioscope_a.attname = LOWER({}))",
                    arg(1)?
                )
            }
            "json_build_object" => {
                // JSON's text, each value a string (lioscope has no JSON type).
                let mut members = Vec::new();
                for pair in args.chunks(2) {
                    let [key, value] = pair else { return Err(format!("{name} takes keys and values in pairs")) };
                    let (key, value) = (self.correlated(key), self.correlated(value));
                    members.push(format!(
                        "'\"' || {key} || '\": ' || NVL2({value}, '\"' || REPLACE({value}, '\"', '\\\"') || '\"', 'null')"
                    ));
                }
                format!(
                    "'{{' || {} || '}}'",
                    if members.is_empty() { "''".into() } else { members.join(" || ', ' || ") }
                )
            }
            // lioscope has no partitions: a table is its own only ancestor.
            "pg_partition_ancestors" | "pg_partition_root" => format!("CAST({} AS NUMBER)", arg(0)?),
            "pg_backend_pid" => return Err("pg_backend_pid(): ask v$session for SID".into()),
            _ => return Ok(None),
        }))
    }
}

/// `(SELECT wanted FROM pg_catalog.view WHERE key = value)`: a lookup in a catalog view.
/// Its alias is one no client writes: a value that is itself a lookup is a subquery of its own,
/// and the client's names are qualified before they get here (`Writer::correlated`).
fn lookup(view: &str, wanted: &str, key: &str, value: &str) -> String {
    format!(
        "(SELECT lioscope_lookup.{wanted} FROM pg_catalog.{view} lioscope_lookup WHERE lioscope_lookup.{key} = {value})"
    )
}

/// `ARRAY(SELECT x FROM ...)` (the subquery already written) as the text of the array
/// PostgreSQL would send: `{a,b}` of the subquery's values in order.
fn array_of(query: &Query) -> Result<String, String> {
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
fn keeping_parameters(mut text: String, args: &[Expr]) -> String {
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

/// Whether `e` (as the client wrote it) is a string: a literal, a parameter, a cast to
/// a string type, or a function giving a name.
fn is_textual(e: &Expr) -> bool {
    match e {
        Expr::Value(v) => {
            matches!(v.value, Value::SingleQuotedString(_) | Value::EscapedStringLiteral(_) | Value::Placeholder(_))
        }
        Expr::Cast { data_type, .. } => {
            matches!(type_name(data_type).as_str(), "text" | "varchar" | "name" | "character varying")
        }
        Expr::Nested(inner) => is_textual(inner),
        Expr::Function(f) => {
            matches!(function_name(&f.name).as_str(), "pg_get_serial_sequence" | "quote_ident" | "format")
        }
        _ => false,
    }
}

fn is_schema(name: &str) -> bool {
    name == "pg_catalog" || name == "information_schema"
}

/// A user's name as the catalogs show it (`SCOTT` as `scott`).
fn pg_user(user: &str) -> String {
    if user.chars().any(char::is_lowercase) { user.to_string() } else { user.to_lowercase() }
}

/// PostgreSQL's `format_type(oid, typmod)` for the types lioscope presents, as a CASE.
fn format_type(oid: &str, typmod: &str) -> String {
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
        assert_eq!(like_of_regex("^(emp)$").as_deref(), Some("emp"));
        assert_eq!(like_of_regex("^(e.p.*)$").as_deref(), Some("e_p%"));
        assert_eq!(like_of_regex("^pg_toast").as_deref(), Some("pg\\_toast%"));
        assert_eq!(like_of_regex("^(a|b)$"), None, "an alternation LIKE cannot say");
        assert_eq!(like_of_regex("^x+$"), None);
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
    fn a_parameter_of_a_left_out_argument_is_still_taken() {
        let text = sql(
            "SELECT pg_catalog.pg_get_constraintdef(c.oid, $1), c.conname FROM pg_constraint c WHERE c.contype = $2",
        );
        assert!(text.contains("$1") && text.contains("$2"), "{text}");
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
