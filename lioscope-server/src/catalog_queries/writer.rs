//! Writing a catalog query again, clause by clause and expression by expression, in
//! lioscope's dialect (see the folder's module documentation for what is written how).
//! An expression is written after its operands, so a replacement is built from operands
//! already in lioscope's SQL.

use super::functions::{array_of, format_type, keeping_parameters, lookup, pg_user, size_pretty, table_size};
use super::patterns::like_of_regex;
use super::{ARRAY_COLUMNS, function_name, is_boolean_column, name_parts, parsed, pg_column_name, string, type_name};
use sqlparser::ast::{
    AccessExpr, BinaryOperator, CastKind, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, JoinOperator,
    Query, Select, SelectItem, SetExpr, Subscript, TableAlias, TableFactor, TableWithJoins, UnaryOperator, Value,
};
use sqlparser::dialect::PostgreSqlDialect;
use sqlparser::parser::Parser;

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

pub(super) struct Writer {
    pub(super) user: String,
    /// The label of the one table the select being written reads, if it reads one: an
    /// unqualified column given to a lookup (`pg_get_constraintdef(oid)`) is qualified
    /// with it, so the lookup's own table does not capture it.
    pub(super) only_table: Option<String>,
}

impl Writer {
    pub(super) fn query(&mut self, query: &mut Query) -> Result<(), String> {
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
                // A condition: AND's and OR's operands are conditions, a comparison's values.
                BinaryOperator::And
                | BinaryOperator::Or
                | BinaryOperator::Eq
                | BinaryOperator::NotEq
                | BinaryOperator::Lt
                | BinaryOperator::LtEq
                | BinaryOperator::Gt
                | BinaryOperator::GtEq => {
                    let operands_are_conditions = matches!(op, BinaryOperator::And | BinaryOperator::Or);
                    self.expr(left, operands_are_conditions)?;
                    self.expr(right, operands_are_conditions)?;
                    self.as_value(condition, e)?
                }
                BinaryOperator::PGRegexMatch
                | BinaryOperator::PGRegexNotMatch
                | BinaryOperator::PGRegexIMatch
                | BinaryOperator::PGRegexNotIMatch
                | BinaryOperator::PGLikeMatch
                | BinaryOperator::PGNotLikeMatch
                | BinaryOperator::PGCustomBinaryOperator(_) => {
                    let matched = parsed(&self.pattern_match(left, op, right)?)?;
                    Some(self.as_value(condition, &matched)?.unwrap_or(matched))
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
            // `(current_schemas(true))[1]`, as JDBC's schema list asks: one of the
            // search path's schemas.
            Expr::CompoundFieldAccess { root, access_chain } => match (search_path(root), access_chain.as_slice()) {
                (Some(schemas), [AccessExpr::Subscript(Subscript::Index { index })]) => {
                    let n = index
                        .to_string()
                        .parse::<usize>()
                        .map_err(|_| format!("{e}: the subscript must be a number"))?;
                    let schema = n.checked_sub(1).and_then(|i| schemas.get(i));
                    Some(parsed(&schema.map_or_else(|| "CAST(NULL AS VARCHAR2(1))".into(), |s| string(s)))?)
                }
                _ => return Err(format!("{e}: lioscope has no arrays")),
            },
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
            "pg_size_pretty" => size_pretty(&arg(0)?),
            // A table's one segment: its size with or without the forks lioscope has not.
            "pg_table_size" | "pg_relation_size" => keeping_parameters(table_size(&arg(0)?), &args[1..]),
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

/// The schemas `current_schemas(implicit)` (`e`, in parentheses or not) gives: the
/// one schema, after `pg_catalog` when the implicit ones are asked for.
fn search_path(e: &Expr) -> Option<&'static [&'static str]> {
    match e {
        Expr::Nested(inner) => search_path(inner),
        Expr::Function(f) if function_name(&f.name) == "current_schemas" => {
            let FunctionArguments::List(list) = &f.args else { return None };
            match list.args.as_slice() {
                [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] => match v.value {
                    Value::Boolean(true) => Some(&["pg_catalog", "public"]),
                    Value::Boolean(false) => Some(&["public"]),
                    _ => None,
                },
                _ => None,
            }
        }
        _ => None,
    }
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
