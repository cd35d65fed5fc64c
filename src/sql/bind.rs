//! Name resolution: turns sqlparser expressions into bound [`Expr`]s over a [`Scope`]
//! (the columns of the row source), folding constant sub-expressions. A bind variable
//! (`:name`, `:1`) becomes [`Expr::Bind`] with its slot among the statement's
//! ([`FunctionContext::bind_names`]); SYSDATE and TO_DATE, folded, are noted as constants
//! the plan takes from this execution ([`FunctionContext::taken`]).
//!
//! In an aggregate query the select list, HAVING and ORDER BY are bound *after*
//! aggregation: an expression equal to a GROUP BY expression becomes that key's column, an
//! aggregate call becomes its result column (registered in [`Grouping`]), and any other
//! column reference is Oracle's "not a GROUP BY expression".
//!
//! What binding cannot do alone it asks the planner through [`SubqueryPlanner`]: a
//! subquery is planned as a plan of its own and becomes [`Expr::Subquery`] (its answer's
//! slot); a name the query's FROM clause does not know, in a subquery, may be a column of
//! the query around it ([`Expr::Outer`]); an analytic function (with its window frame)
//! becomes a column the window stage appends ([`WINDOW_COLUMNS`]).
//!
//! `name.NEXTVAL` / `name.CURRVAL`, where no column has the name, is a sequence's value
//! ([`Expr::Sequence`]), bound only where the planner says a sequence may stand
//! ([`FunctionContext::sequence_refs_allowed`], ORA-02287 elsewhere). `CAST(x AS type)`
//! becomes [`Expr::Cast`] to one of the column types.

use crate::error::{Error, Result};
use crate::expr::aggregate::{AggCall, AggFunc, Listagg, OrderKey};
use crate::expr::functions::{ArithOp, FunctionContext, ScalarFunction};
use crate::expr::{CmpOp, Expr, LikePattern, SubqueryTest};
use crate::types::{Datum, Value};
use sqlparser::ast::{self, BinaryOperator, FunctionArg, FunctionArgExpr, FunctionArguments, Spanned, UnaryOperator};
use std::cell::RefCell;

/// The columns a row source offers to expressions.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Column names, upper case unless quoted; `Expr::Column(i)` is `names[i]`.
    pub names: Vec<String>,
    /// Names the source may be qualified with (table name and alias), upper case.
    pub qualifiers: Vec<String>,
    /// Column of the LEVEL pseudo-column (a CONNECT BY row generator).
    pub level: Option<usize>,
    /// Column of the ROWNUM pseudo-column, once the plan provides it.
    pub rownum: Option<usize>,
    /// Length of each CHAR(n) column (`None` for other types or unknown), for Oracle's
    /// blank-padded comparison of CHAR values with string literals.
    pub char_lengths: Vec<Option<u32>>,
    /// For a FROM clause of several items (a join): each item's qualifiers and columns.
    /// Empty for one item, whose qualifiers are [`Scope::qualifiers`].
    pub relations: Vec<ScopeRelation>,
    /// The columns `USING` clauses (and NATURAL joins) join on, as the unqualified names
    /// mean them, in the order they were joined: `SELECT *` lists them first, as Oracle
    /// does.
    pub joined_columns: Vec<usize>,
    /// The value the unqualified name of a column of [`Scope::joined_columns`] means when
    /// it is not the column itself: after a FULL join, the COALESCE of both sides' copies
    /// (a row only the right side has takes the right's value), as in Oracle.
    pub joined_values: Vec<(usize, Expr)>,
    /// Every copy (either side's) of a column a USING clause or a NATURAL join joins on,
    /// and which of the two joined it: its qualified name is refused, as Oracle refuses it
    /// (ORA-25154, ORA-25155).
    pub join_column_copies: Vec<(usize, JoinedBy)>,
}

/// What joined a column of [`Scope::join_column_copies`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinedBy {
    Using,
    Natural,
}

/// One FROM item of a join's scope.
#[derive(Debug, Clone, Default)]
pub struct ScopeRelation {
    /// Names the item may be qualified with (its alias, or its table's name), upper case.
    pub qualifiers: Vec<String>,
    /// Its columns in the scope.
    pub columns: std::ops::Range<usize>,
    /// Its columns an unqualified name does not find: the right-hand copy of a column a
    /// `USING` clause joins on, which the unqualified name means once.
    pub unqualified_hidden: Vec<usize>,
}

impl Scope {
    /// The value the unqualified name of column `c` means: the column, or for a FULL
    /// join's USING column the COALESCE of its copies ([`Scope::joined_values`]).
    pub fn column_value(&self, c: usize) -> Expr {
        self.joined_values.iter().find(|(k, _)| *k == c).map_or(Expr::Column(c), |(_, v)| v.clone())
    }

    /// The FROM item column `c` belongs to, for a join's scope.
    pub fn relation_of(&self, c: usize) -> Option<usize> {
        self.relations.iter().position(|r| r.columns.contains(&c))
    }

    /// The columns `SELECT *` (or `q.*` when `qualifier` is given) stands for, in order.
    pub fn wildcard_columns(&self, qualifier: Option<&str>) -> Result<Vec<usize>> {
        let all = (0..self.names.len()).filter(|&i| Some(i) != self.rownum);
        match (qualifier, self.relations.is_empty()) {
            (None, true) => Ok(all.collect()),
            (None, false) => Ok(self
                .joined_columns
                .iter()
                .copied()
                .chain(
                    all.filter(|i| self.relations.iter().all(|r| !r.unqualified_hidden.contains(i)))
                        .filter(|i| !self.joined_columns.contains(i))
                        .filter(|&i| self.relation_of(i).is_some()),
                )
                .collect()),
            (Some(q), true) if self.qualifiers.iter().any(|n| n == q) => Ok(all.collect()),
            (Some(q), false) => match self.relations.iter().find(|r| r.qualifiers.iter().any(|n| n == q)) {
                Some(r) => Ok(r.columns.clone().collect()),
                None => Err(Error::UnknownName { kind: "table or alias", name: q.into(), position: None }),
            },
            (Some(q), true) => Err(Error::UnknownName { kind: "table or alias", name: q.into(), position: None }),
        }
    }

    /// The column an unqualified or qualified name finds: unknown, one, or (unqualified,
    /// in a join) several, which is an error naming them.
    pub(crate) fn resolve(&self, qualifier: Option<&str>, name: &str, e: &ast::Expr) -> Result<usize> {
        let unknown = || Error::UnknownName {
            kind: "column",
            name: qualifier.map_or(name.to_owned(), |q| format!("{q}.{name}")),
            position: position_of(e),
        };
        if self.relations.is_empty() {
            if let Some(q) = qualifier
                && !self.qualifiers.iter().any(|n| n == q)
            {
                return Err(Error::UnknownName { kind: "table or alias", name: q.into(), position: position_of(e) });
            }
            return self.names.iter().position(|n| n == name).ok_or_else(unknown);
        }
        if let Some(q) = qualifier {
            let Some(r) = self.relations.iter().find(|r| r.qualifiers.iter().any(|n| n == q)) else {
                return Err(Error::UnknownName { kind: "table or alias", name: q.into(), position: position_of(e) });
            };
            let column = r.columns.clone().find(|&i| self.names[i] == name).ok_or_else(unknown)?;
            return match self.join_column_copies.iter().find(|(c, _)| *c == column) {
                None => Ok(column),
                Some((_, by)) => {
                    let what = match by {
                        JoinedBy::Using => "column part of USING clause cannot have qualifier (ORA-25154)",
                        JoinedBy::Natural => "column used in NATURAL join cannot have qualifier (ORA-25155)",
                    };
                    Err(Error::Parse { message: format!("{what}: {q}.{name}"), position: position_of(e) })
                }
            };
        }
        let found: Vec<usize> = (0..self.names.len())
            .filter(|&i| self.names[i] == name)
            .filter(|i| self.relations.iter().all(|r| !r.unqualified_hidden.contains(i)))
            .collect();
        match found[..] {
            [] => Err(unknown()),
            [one] => Ok(one),
            _ => {
                let owners: Vec<String> = found
                    .iter()
                    .filter_map(|&i| self.relation_of(i))
                    .map(|r| self.relations[r].qualifiers.last().cloned().unwrap_or_default())
                    .collect();
                Err(Error::Parse {
                    message: format!(
                        "column ambiguously defined (ORA-00918): {name} is a column of {}; qualify it",
                        owners.join(" and ")
                    ),
                    position: position_of(e),
                })
            }
        }
    }
}

/// The post-aggregation view: GROUP BY keys first, then aggregate results.
#[derive(Debug, Default)]
pub struct Grouping {
    /// Canonical text of each GROUP BY expression.
    pub keys: Vec<String>,
    /// Each key as a column reference binds over the source (`None` for any other key):
    /// `t.c` and `c` name the same key however each is written.
    pub key_columns: Vec<Option<Expr>>,
    pub aggregates: RefCell<Vec<AggCall>>,
}

impl Grouping {
    /// The key that a column's value is, where one is (`value` is the column as bound
    /// over the source: a plain column, or a FULL join's USING column's COALESCE).
    pub fn key_of(&self, value: &Expr) -> Option<usize> {
        self.key_columns.iter().position(|k| k.as_ref() == Some(value))
    }
}

/// Binds expressions over a scope.
pub struct Binder<'a> {
    pub scope: &'a Scope,
    /// The statement's context: SYSDATE and its bind variables' names.
    pub f: &'a FunctionContext,
    /// Set when binding after aggregation.
    pub grouping: Option<&'a Grouping>,
    /// Plans the subqueries the expressions hold (`None` where none may stand: a CHECK
    /// condition, a DML statement's own expressions).
    pub subqueries: Option<&'a dyn SubqueryPlanner>,
}

/// Plans a subquery an expression holds, for the planner (which the binder cannot
/// reach): returns the slot its answer will be in and its columns' count.
pub trait SubqueryPlanner {
    /// Plans `query`, whose names the query around it resolves over `scope` where the
    /// subquery's own FROM clause does not.
    fn plan_subquery(
        &self,
        query: &ast::Query,
        kind: crate::exec::query_block::InitKind,
        scope: &Scope,
    ) -> Result<(usize, usize)>;

    /// The column `qualifier.name` of the row of the query around this one, for a
    /// correlated subquery (`None` when this query is no subquery or the name is not that
    /// query's either).
    fn outer_column(&self, qualifier: Option<&str>, name: &str, e: &ast::Expr) -> Option<Result<Expr>>;

    /// The length of the CHAR column of the query around this one that outer value
    /// `slot` reads, for the blank-padded comparison of literals with it.
    fn outer_char_length(&self, slot: usize) -> Option<u32>;

    /// Takes an analytic function call of the select list, returning its number among
    /// the query's (its value is column [`WINDOW_COLUMNS`] + that number until the
    /// planner places the columns); `None` where no analytic function may stand.
    fn window_call(&self, call: crate::exec::window::WindowCall) -> Option<usize>;
}

/// Where the columns of analytic functions' values start while a select list is bound
/// (the planner moves them after the row's own once it knows its width).
pub const WINDOW_COLUMNS: usize = 1 << 24;

/// "line L, column C" of an AST node, when sqlparser knows it.
pub fn position_of(e: &impl Spanned) -> Option<String> {
    let start = e.span().start;
    (start.line > 0).then(|| format!("line {}, column {}", start.line, start.column))
}

/// The upper-cased (unless quoted) name of an identifier, as Oracle stores it.
pub fn ident_name(ident: &ast::Ident) -> String {
    if ident.quote_style.is_some() { ident.value.clone() } else { ident.value.to_ascii_uppercase() }
}

/// The text of a window frame, as written.
fn frame_text(frame: &ast::WindowFrame) -> String {
    let end = frame.end_bound.as_ref().map(|b| format!(" AND {b}")).unwrap_or_default();
    format!("{} BETWEEN {}{end}", frame.units, frame.start_bound)
}

/// Canonical text of an expression, for matching GROUP BY keys and aggregate calls.
pub fn canonical(e: &ast::Expr) -> String {
    // Unquoted names are case-insensitive; what is inside quotes ('a' and 'A', "a" and
    // "A") is not, so `COUNT(DECODE(s, 'a', 1))` and `COUNT(DECODE(s, 'A', 1))` differ.
    let mut quote = None;
    e.to_string()
        .chars()
        .map(|c| match quote {
            Some(q) if c == q => {
                quote = None;
                c
            }
            Some(_) => c,
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                c
            }
            None => c.to_ascii_uppercase(),
        })
        .collect()
}

/// Whether an expression contains an aggregate call.
pub fn contains_aggregate(e: &ast::Expr) -> bool {
    match e {
        // An analytic function is no aggregate, but what its window reads may hold one.
        ast::Expr::Function(f) if f.over.is_some() => {
            function_args(f).iter().any(|a| a.is_some_and(contains_aggregate))
                || matches!(&f.over, Some(ast::WindowType::WindowSpec(w))
                    if w.partition_by.iter().any(contains_aggregate) || w.order_by.iter().any(|o| contains_aggregate(&o.expr)))
        }
        ast::Expr::Function(f) => {
            AggFunc::from_name(&function_name(&f.name)).is_some()
                || function_args(f).iter().any(|a| a.is_some_and(contains_aggregate))
        }
        ast::Expr::BinaryOp { left, right, .. } => contains_aggregate(left) || contains_aggregate(right),
        ast::Expr::UnaryOp { expr, .. }
        | ast::Expr::Nested(expr)
        | ast::Expr::IsNull(expr)
        | ast::Expr::IsNotNull(expr) => contains_aggregate(expr),
        ast::Expr::Case { operand, conditions, else_result, .. } => {
            operand.as_deref().is_some_and(contains_aggregate)
                || else_result.as_deref().is_some_and(contains_aggregate)
                || conditions.iter().any(|c| contains_aggregate(&c.condition) || contains_aggregate(&c.result))
        }
        ast::Expr::Between { expr, low, high, .. } => [expr, low, high].iter().any(|e| contains_aggregate(e)),
        ast::Expr::InList { expr, list, .. } => contains_aggregate(expr) || list.iter().any(contains_aggregate),
        ast::Expr::Extract { expr, .. }
        | ast::Expr::Cast { expr, .. }
        | ast::Expr::Ceil { expr, .. }
        | ast::Expr::Floor { expr, .. }
        | ast::Expr::InSubquery { expr, .. } => contains_aggregate(expr),
        ast::Expr::Like { expr, pattern, .. } => contains_aggregate(expr) || contains_aggregate(pattern),
        ast::Expr::Trim { expr, trim_what, .. } => {
            contains_aggregate(expr) || trim_what.as_deref().is_some_and(contains_aggregate)
        }
        ast::Expr::Substring { expr, substring_from, substring_for, .. } => {
            contains_aggregate(expr)
                || substring_from.as_deref().is_some_and(contains_aggregate)
                || substring_for.as_deref().is_some_and(contains_aggregate)
        }
        _ => false,
    }
}

/// `e` without the parentheses around it.
fn unnested(e: &ast::Expr) -> &ast::Expr {
    match e {
        ast::Expr::Nested(inner) => unnested(inner),
        other => other,
    }
}

/// The dotted, upper-case name of a function.
pub fn function_name(name: &ast::ObjectName) -> String {
    name.0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => ident_name(i),
            other => other.to_string().to_ascii_uppercase(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// The arguments of a call: `Some(expr)` per plain argument, `None` for `*`.
fn function_args(f: &ast::Function) -> Vec<Option<&ast::Expr>> {
    match &f.args {
        FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|a| match a {
                FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Some(e),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Binder<'_> {
    /// Binds one expression.
    pub fn bind(&self, e: &ast::Expr) -> Result<Expr> {
        if let Some(g) = self.grouping {
            let text = canonical(e);
            if let Some(k) = g.keys.iter().position(|t| *t == text) {
                return Ok(Expr::Column(k));
            }
        }
        let bound = match e {
            ast::Expr::Identifier(ident) => self.bind_name(None, ident, e)?,
            ast::Expr::CompoundIdentifier(parts) => self.bind_compound(parts, e)?,
            ast::Expr::Value(v) => match &v.value {
                ast::Value::Placeholder(name) => self.bind_variable(name, e)?,
                other => Expr::Literal(literal(other, e)?),
            },
            ast::Expr::TypedString(t) => Expr::Literal(typed_literal(t, e)?),
            ast::Expr::Nested(inner) => self.bind(inner)?,
            ast::Expr::Subquery(query) => self.subquery(query, SubqueryTest::Scalar, e)?,
            ast::Expr::Exists { subquery, negated } => {
                self.subquery(subquery, SubqueryTest::Exists { negated: *negated }, e)?
            }
            ast::Expr::AnyOp { left, compare_op, right, .. } | ast::Expr::AllOp { left, compare_op, right } => {
                let all = matches!(e, ast::Expr::AllOp { .. });
                let ast::Expr::Subquery(query) = unnested(right) else {
                    // Of a list: the comparison with each item, OR-ed (ANY) or AND-ed
                    // (ALL), as Oracle expands it.
                    let items = match unnested(right) {
                        ast::Expr::Tuple(items) => items.iter().collect(),
                        one => vec![one],
                    };
                    let mut compared = items.into_iter().map(|item| self.bind_binary(left, compare_op, item, e));
                    let first = compared.next().expect("a list has an item")?;
                    return compared.try_fold(first, |acc, next| {
                        let (a, b) = (Box::new(acc), Box::new(next?));
                        Ok(fold_constants(if all { Expr::And(a, b) } else { Expr::Or(a, b) }, self.f))
                    });
                };
                let op = match compare_op {
                    BinaryOperator::Eq => CmpOp::Eq,
                    BinaryOperator::NotEq => CmpOp::NotEq,
                    BinaryOperator::Lt => CmpOp::Lt,
                    BinaryOperator::LtEq => CmpOp::LtEq,
                    BinaryOperator::Gt => CmpOp::Gt,
                    BinaryOperator::GtEq => CmpOp::GtEq,
                    other => return Err(unsupported(format!("operator {other} with ANY or ALL"), e)),
                };
                let subject = Box::new(self.bind(left)?);
                self.subquery(query, SubqueryTest::Quantified { expr: subject, op, all }, e)?
            }
            ast::Expr::InSubquery { expr, subquery, negated } if matches!(unnested(expr), ast::Expr::Tuple(_)) => {
                let ast::Expr::Tuple(items) = unnested(expr) else { unreachable!("matched above") };
                let exprs = items.iter().map(|x| self.bind(x)).collect::<Result<Vec<_>>>()?;
                let blank_padded = exprs.iter().map(|x| self.char_length_of(x).is_some()).collect();
                self.subquery(subquery, SubqueryTest::InRow { exprs, negated: *negated, blank_padded }, e)?
            }
            ast::Expr::InList { expr, list, negated } if matches!(unnested(expr), ast::Expr::Tuple(_)) => {
                self.bind_row_in_list(expr, list, *negated, e)?
            }
            ast::Expr::InSubquery { expr, subquery, negated } => {
                let subject = Box::new(self.bind(expr)?);
                let blank_padded = self.char_length_of(&subject).is_some();
                self.subquery(subquery, SubqueryTest::In { expr: subject, negated: *negated, blank_padded }, e)?
            }
            ast::Expr::BinaryOp { left, op, right } => self.bind_binary(left, op, right, e)?,
            ast::Expr::UnaryOp { op, expr } => match op {
                UnaryOperator::Minus => Expr::Negate(Box::new(self.bind(expr)?)),
                UnaryOperator::Plus => self.bind(expr)?,
                UnaryOperator::Not => Expr::Not(Box::new(self.bind(expr)?)),
                other => return Err(unsupported(format!("operator {other}"), e)),
            },
            ast::Expr::IsNull(x) => Expr::IsNull { expr: Box::new(self.bind(x)?), negated: false },
            ast::Expr::IsNotNull(x) => Expr::IsNull { expr: Box::new(self.bind(x)?), negated: true },
            ast::Expr::InList { expr, list, negated } => {
                let subject = self.bind(expr)?;
                let mut items = list.iter().map(|x| self.bind(x)).collect::<Result<Vec<_>>>()?;
                for item in &mut items {
                    if let Expr::Literal(v) = item {
                        *item = self.padded(&subject, v);
                    }
                }
                Expr::InList { expr: Box::new(subject), list: items, negated: *negated }
            }
            ast::Expr::Between { expr, negated, low, high } => {
                let subject = self.bind(expr)?;
                let (mut low, mut high) = (self.bind(low)?, self.bind(high)?);
                for bound in [&mut low, &mut high] {
                    if let Expr::Literal(v) = bound {
                        *bound = self.padded(&subject, v);
                    }
                }
                Expr::Between { expr: Box::new(subject), low: Box::new(low), high: Box::new(high), negated: *negated }
            }
            ast::Expr::Like { negated, any: false, expr, pattern, escape_char } => {
                self.bind_like(*negated, expr, pattern, escape_char.as_deref(), e)?
            }
            ast::Expr::Case { operand, conditions, else_result, .. } => Expr::Case {
                operand: operand.as_deref().map(|o| self.bind(o)).transpose()?.map(Box::new),
                branches: conditions
                    .iter()
                    .map(|c| Ok((self.bind(&c.condition)?, self.bind(&c.result)?)))
                    .collect::<Result<_>>()?,
                otherwise: else_result.as_deref().map(|x| self.bind(x)).transpose()?.map(Box::new),
            },
            ast::Expr::Function(f) => self.bind_function(f, e)?,
            ast::Expr::Substring { expr, substring_from, substring_for, .. } => {
                let mut args = vec![
                    self.bind(expr)?,
                    substring_from.as_deref().map_or(Ok(Expr::Literal(Datum::Int(1))), |x| self.bind(x))?,
                ];
                if let Some(len) = substring_for {
                    args.push(self.bind(len)?);
                }
                Expr::Function { func: ScalarFunction::lookup("SUBSTR", args.len())?, args }
            }
            ast::Expr::Trim { expr, trim_where, trim_what, trim_characters } => {
                let func = match trim_where {
                    Some(ast::TrimWhereField::Leading) => "LTRIM",
                    Some(ast::TrimWhereField::Trailing) => "RTRIM",
                    _ if trim_what.is_some() || trim_characters.is_some() => "TRIM_BOTH",
                    _ => "TRIM",
                };
                let mut args = vec![self.bind(expr)?];
                if let Some(what) = trim_what {
                    args.push(self.bind(what)?);
                }
                if let Some(chars) = trim_characters {
                    for c in chars {
                        args.push(self.bind(c)?);
                    }
                }
                match (func, args.len()) {
                    ("TRIM", 1) => Expr::Function { func: ScalarFunction::Trim, args },
                    ("LTRIM" | "RTRIM", 1 | 2) => {
                        Expr::Function { func: ScalarFunction::lookup(func, args.len())?, args }
                    }
                    // TRIM(c FROM s): trim the character from both ends.
                    (_, 2) => {
                        let left = Expr::Function { func: ScalarFunction::Ltrim, args: args.clone() };
                        Expr::Function { func: ScalarFunction::Rtrim, args: vec![left, args[1].clone()] }
                    }
                    _ => return Err(unsupported(format!("{e}"), e)),
                }
            }
            ast::Expr::Ceil { expr, field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) } => {
                Expr::Function { func: ScalarFunction::Ceil, args: vec![self.bind(expr)?] }
            }
            ast::Expr::Floor { expr, field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) } => {
                Expr::Function { func: ScalarFunction::Floor, args: vec![self.bind(expr)?] }
            }
            ast::Expr::Extract { field, expr, .. } => {
                let name = match field {
                    ast::DateTimeField::Year => "YEAR",
                    ast::DateTimeField::Month => "MONTH",
                    ast::DateTimeField::Day => "DAY",
                    ast::DateTimeField::Hour => "HOUR",
                    ast::DateTimeField::Minute => "MINUTE",
                    ast::DateTimeField::Second => "SECOND",
                    other => return Err(unsupported(format!("EXTRACT({other} FROM ...)"), e)),
                };
                Expr::Function {
                    func: ScalarFunction::Extract,
                    args: vec![Expr::Literal(Datum::string(name.to_owned())), self.bind(expr)?],
                }
            }
            ast::Expr::Cast { kind: ast::CastKind::Cast, expr, data_type, format: None, .. } => {
                let to = super::data_types::data_type(data_type).map_err(|why| Error::Unsupported {
                    construct: format!("CAST to {data_type}: {why}"),
                    position: position_of(e),
                })?;
                Expr::Cast { expr: Box::new(self.bind(expr)?), to }
            }
            ast::Expr::Interval(interval) => Expr::Literal(super::interval::read(interval)?),
            other => return Err(unsupported(format!("expression {other}"), e)),
        };
        Ok(fold_constants(bound, self.f))
    }

    /// A bind variable: its slot among the statement's.
    fn bind_variable(&self, name: &str, e: &ast::Expr) -> Result<Expr> {
        match self.f.bind_slot(name) {
            Some(slot) => Ok(Expr::Bind { slot, name: crate::expr::functions::normalized_bind_name(name).into() }),
            None if name == "?" => Err(unsupported("bind variable ? (name it: :1, :name)".into(), e)),
            None => Err(Error::InvalidValue {
                context: format!(
                    "bind variable {name}{}",
                    position_of(e).map(|p| format!(" at {p}")).unwrap_or_default()
                ),
                message:
                    "has no value: bind values come with the executions of a prepared statement (Session::prepare)"
                        .into(),
            }),
        }
    }

    /// A subquery asked `test` of: planned as a plan of its own, run once when the
    /// statement starts, or for each row when it reads a column of the query around it
    /// (a correlated subquery, which only a WHERE clause may hold).
    fn subquery(&self, query: &ast::Query, test: SubqueryTest, e: &ast::Expr) -> Result<Expr> {
        use crate::exec::query_block::InitKind;
        let Some(planner) = self.subqueries else {
            return Err(unsupported(format!("a subquery here: {e}"), e));
        };
        let kind = match test {
            SubqueryTest::Scalar => InitKind::Scalar,
            SubqueryTest::Exists { .. } => InitKind::Exists,
            SubqueryTest::In { .. } | SubqueryTest::Quantified { .. } => InitKind::Values,
            SubqueryTest::InRow { .. } => InitKind::Rows,
        };
        let (slot, width) = planner.plan_subquery(query, kind, self.scope)?;
        if let SubqueryTest::InRow { exprs, .. } = &test
            && width != exprs.len()
        {
            let (number, words) = match width > exprs.len() {
                true => ("ORA-00913", "too many values"),
                false => ("ORA-00947", "not enough values"),
            };
            return Err(Error::Parse {
                message: format!(
                    "{number}: {words} (the subquery gives {width} columns where {} are compared)",
                    exprs.len()
                ),
                position: position_of(e),
            });
        }
        if width != 1 && !matches!(kind, InitKind::Exists | InitKind::Rows) {
            return Err(Error::Parse {
                message: format!(
                    "ORA-00913: too many values (the subquery gives {width} columns where one is compared)"
                ),
                position: position_of(e),
            });
        }
        Ok(Expr::Subquery { slot, test, text: query.to_string().into() })
    }

    /// `(a, b) [NOT] IN ((1, 2), (3, 4))`: the OR of each row's equalities column by
    /// column (whose NULL rules are IN's), negated for NOT IN.
    fn bind_row_in_list(&self, expr: &ast::Expr, list: &[ast::Expr], negated: bool, e: &ast::Expr) -> Result<Expr> {
        let ast::Expr::Tuple(items) = unnested(expr) else { return Err(unsupported(format!("{expr} IN"), e)) };
        let subject = items.iter().map(|x| self.bind(x)).collect::<Result<Vec<_>>>()?;
        let mut rows = Vec::with_capacity(list.len());
        for row in list {
            let ast::Expr::Tuple(values) = unnested(row) else {
                return Err(Error::Parse {
                    message: format!(
                        "ORA-00920: invalid relational operator (a row of {} values is compared with {row})",
                        subject.len()
                    ),
                    position: position_of(row),
                });
            };
            if values.len() != subject.len() {
                let number = if values.len() > subject.len() {
                    "ORA-00913: too many values"
                } else {
                    "ORA-00947: not enough values"
                };
                return Err(Error::Parse { message: format!("{number} ({row})"), position: position_of(row) });
            }
            let equalities = subject.iter().zip(values).map(|(s, v)| {
                let mut value = self.bind(v)?;
                if let Expr::Literal(literal) = &value {
                    value = self.padded(s, literal);
                }
                Ok(Expr::Compare { op: CmpOp::Eq, left: Box::new(s.clone()), right: Box::new(value) })
            });
            let row =
                equalities.collect::<Result<Vec<_>>>()?.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b)));
            rows.extend(row);
        }
        let any = rows
            .into_iter()
            .reduce(|a, b| Expr::Or(Box::new(a), Box::new(b)))
            .ok_or_else(|| unsupported("IN of no row".into(), e))?;
        Ok(if negated { Expr::Not(Box::new(any)) } else { any })
    }

    fn bind_name(&self, qualifier: Option<&ast::Ident>, ident: &ast::Ident, e: &ast::Expr) -> Result<Expr> {
        let name = ident_name(ident);
        if qualifier.is_none() && ident.quote_style.is_none() {
            match name.as_str() {
                "SYSDATE" => return Ok(Expr::Literal(Datum::Date(self.f.sysdate_constant()))),
                "SYSTIMESTAMP" | "LOCALTIMESTAMP" | "CURRENT_TIMESTAMP" => {
                    return Ok(Expr::Literal(Datum::Timestamp(self.f.systimestamp_constant())));
                }
                "ROWNUM" | "LEVEL" if self.grouping.is_some() && (name == "ROWNUM" || self.scope.level.is_some()) => {
                    return Err(not_group_by(name, e));
                }
                "ROWNUM" => {
                    return self
                        .scope
                        .rownum
                        .map(Expr::Column)
                        .ok_or_else(|| unsupported("ROWNUM in this position".into(), e));
                }
                "LEVEL" if self.scope.level.is_some() => return Ok(Expr::Column(self.scope.level.expect("checked"))),
                "NULL" => return Ok(Expr::Literal(Datum::Null)),
                _ => {}
            }
        }
        let q = qualifier.map(ident_name);
        let column = match self.scope.resolve(q.as_deref(), &name, e) {
            Ok(column) => column,
            // A name this query's FROM clause does not know may be the query around it's
            // (a correlated subquery), unless its qualifier names an item here: a column
            // missing from that item is missing, not the outer query's.
            Err(unknown @ Error::UnknownName { kind, .. }) if q.is_none() || kind == "table or alias" => {
                return self.subqueries.and_then(|s| s.outer_column(q.as_deref(), &name, e)).unwrap_or(Err(unknown));
            }
            Err(other) => return Err(other),
        };
        let value = if q.is_none() { self.scope.column_value(column) } else { Expr::Column(column) };
        match self.grouping {
            None => Ok(value),
            Some(g) => g.key_of(&value).map(Expr::Column).ok_or_else(|| not_group_by(name, e)),
        }
    }

    fn bind_compound(&self, parts: &[ast::Ident], e: &ast::Expr) -> Result<Expr> {
        match parts {
            [q, c] if ident_name(q) == "DBMS_RANDOM" => {
                let func = ScalarFunction::lookup(&format!("DBMS_RANDOM.{}", ident_name(c)), 0)?;
                Ok(Expr::Function { func, args: Vec::new() })
            }
            [q, c] => match self.bind_name(Some(q), c, e) {
                Err(Error::UnknownName { .. }) if matches!(ident_name(c).as_str(), "NEXTVAL" | "CURRVAL") => {
                    self.bind_sequence(&ident_name(q), ident_name(c) == "NEXTVAL", e)
                }
                bound => bound,
            },
            _ => Err(unsupported(format!("name {e}"), e)),
        }
    }

    /// `name.NEXTVAL` or `name.CURRVAL`, where no column has that name: a sequence's value,
    /// where Oracle takes one (ORA-02287 elsewhere; a query that aggregates takes none).
    fn bind_sequence(&self, name: &str, next: bool, e: &ast::Expr) -> Result<Expr> {
        let not_here = || Error::InvalidValue {
            context: format!("{e}{}", position_of(e).map(|p| format!(" at {p}")).unwrap_or_default()),
            message: "ORA-02287: sequence number not allowed here".into(),
        };
        // Where no sequence can be read at all (a CHECK condition), whatever the name.
        let Some(sequences) = self.f.sequences.as_ref() else { return Err(not_here()) };
        if !sequences.exists(name) {
            return Err(Error::UnknownName {
                kind: "sequence",
                name: format!("{name} (ORA-02289)"),
                position: position_of(e),
            });
        }
        if !self.f.sequence_refs_allowed.get() || self.grouping.is_some() {
            return Err(not_here());
        }
        sequences.may_read(name)?;
        Ok(Expr::Sequence { name: name.into(), next })
    }

    fn bind_binary(&self, left: &ast::Expr, op: &BinaryOperator, right: &ast::Expr, e: &ast::Expr) -> Result<Expr> {
        let (mut l, mut r) = (Box::new(self.bind(left)?), Box::new(self.bind(right)?));
        if matches!(
            op,
            BinaryOperator::Eq
                | BinaryOperator::NotEq
                | BinaryOperator::Lt
                | BinaryOperator::LtEq
                | BinaryOperator::Gt
                | BinaryOperator::GtEq
        ) {
            // A string compared with a CHAR(n) column is blank-padded to n first; two
            // string literals (CHAR values in Oracle) and two CHAR columns of different
            // lengths compare with the shorter padded to the longer.
            match (&*l, &*r) {
                (Expr::Literal(Datum::Str(a)), Expr::Literal(Datum::Str(b)))
                    if a.chars().count() != b.chars().count() =>
                {
                    let n = a.chars().count().max(b.chars().count());
                    let pad = |s: &str| Box::new(Expr::Literal(Datum::Str(format!("{s:<n$}").into())));
                    (l, r) = (pad(a), pad(b));
                }
                (subject, Expr::Literal(v)) => r = Box::new(self.padded(subject, v)),
                (Expr::Literal(v), subject) => l = Box::new(self.padded(subject, v)),
                (a, b) => {
                    if let (Some(n), Some(m)) = (self.char_length_of(a), self.char_length_of(b))
                        && n != m
                    {
                        let rpad = |x: Box<Expr>, to: u32| {
                            let width = Expr::Literal(Datum::Int(i64::from(to)));
                            Box::new(Expr::Function { func: ScalarFunction::Rpad, args: vec![*x, width] })
                        };
                        if n < m {
                            l = rpad(l, m);
                        } else {
                            r = rpad(r, n);
                        }
                    }
                }
            }
        }
        let arith = |op| Expr::Arith { op, left: l.clone(), right: r.clone() };
        let cmp = |op: CmpOp| match (&*l, &*r) {
            // Keep the column on the left so the fast path applies.
            (Expr::Literal(_), Expr::Column(_)) => {
                Expr::Compare { op: op.flipped(), left: r.clone(), right: l.clone() }
            }
            _ => Expr::Compare { op, left: l.clone(), right: r.clone() },
        };
        Ok(match op {
            BinaryOperator::Plus => arith(ArithOp::Add),
            BinaryOperator::Minus => arith(ArithOp::Sub),
            BinaryOperator::Multiply => arith(ArithOp::Mul),
            BinaryOperator::Divide => arith(ArithOp::Div),
            BinaryOperator::Modulo => Expr::Function { func: ScalarFunction::Mod, args: vec![*l, *r] },
            BinaryOperator::StringConcat => Expr::Concat(l, r),
            BinaryOperator::Eq => cmp(CmpOp::Eq),
            BinaryOperator::NotEq => cmp(CmpOp::NotEq),
            BinaryOperator::Lt => cmp(CmpOp::Lt),
            BinaryOperator::LtEq => cmp(CmpOp::LtEq),
            BinaryOperator::Gt => cmp(CmpOp::Gt),
            BinaryOperator::GtEq => cmp(CmpOp::GtEq),
            BinaryOperator::And => Expr::And(l, r),
            BinaryOperator::Or => Expr::Or(l, r),
            other => return Err(unsupported(format!("operator {other}"), e)),
        })
    }

    /// The CHAR length of `subject` when it is a CHAR column (of this query or, in a
    /// correlated subquery, of the query around it).
    fn char_length_of(&self, subject: &Expr) -> Option<u32> {
        match subject {
            Expr::Column(c) if self.grouping.is_none() => self.scope.char_lengths.get(*c).copied().flatten(),
            Expr::Outer { slot, .. } => self.subqueries.and_then(|s| s.outer_char_length(*slot)),
            _ => None,
        }
    }

    /// A string literal compared with `subject`, blank-padded to n where it is a CHAR(n)
    /// column, as Oracle compares CHAR values; anything else unchanged.
    fn padded(&self, subject: &Expr, literal: &Value) -> Expr {
        match (self.char_length_of(subject), literal) {
            (Some(n), Datum::Str(s)) if s.len() < n as usize => {
                let mut padded = s.to_string();
                padded.extend(std::iter::repeat_n(' ', n as usize - s.len()));
                Expr::Literal(Datum::Str(padded.into()))
            }
            _ => Expr::Literal(literal.clone()),
        }
    }

    fn bind_like(
        &self,
        negated: bool,
        expr: &ast::Expr,
        pattern: &ast::Expr,
        escape: Option<&ast::Expr>,
        e: &ast::Expr,
    ) -> Result<Expr> {
        let Expr::Literal(p) = self.bind(pattern)? else {
            return Err(unsupported("LIKE with a pattern that is not a constant".into(), e));
        };
        let escape = match escape.map(|x| self.bind(x)).transpose()? {
            None => None,
            Some(Expr::Literal(Datum::Str(s))) if s.chars().count() == 1 => s.chars().next(),
            Some(_) => return Err(Error::value("LIKE", "ESCAPE takes a single character")),
        };
        Ok(Expr::Like {
            expr: Box::new(self.bind(expr)?),
            pattern: LikePattern::compile(p.into_text().as_deref(), escape),
            negated,
        })
    }

    /// An analytic function call: the column its value will be in, numbered from
    /// [`WINDOW_COLUMNS`] until the planner moves it after the row's own columns.
    fn bind_window(&self, f: &ast::Function, over: &ast::WindowType, e: &ast::Expr) -> Result<Expr> {
        use crate::exec::window::{WindowCall, WindowFunc};
        let name = function_name(&f.name);
        let ast::WindowType::WindowSpec(spec) = over else {
            return Err(unsupported(format!("a named window in {name}(...) OVER"), e));
        };
        if spec.window_name.is_some() {
            return Err(unsupported(format!("a named window in {e}"), e));
        }
        let star = matches!(&f.args, FunctionArguments::List(l) if matches!(l.args.as_slice(), [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]));
        let distinct = matches!(&f.args, FunctionArguments::List(l) if l.duplicate_treatment.is_some());
        let Some(func) = WindowFunc::from_name(&name, star) else {
            return Err(unsupported(format!("analytic function {name}"), e));
        };
        if distinct || f.filter.is_some() || !f.within_group.is_empty() || f.null_treatment.is_some() {
            return Err(unsupported(format!("{e}"), e));
        }
        let raw = if star { Vec::new() } else { function_args(f) };
        let (least, most) = func.arity();
        if raw.len() < least || raw.len() > most || raw.iter().any(Option::is_none) {
            return Err(Error::Parse {
                message: format!("ORA-00909: invalid number of arguments for {name}"),
                position: position_of(e),
            });
        }
        // An analytic call's expressions take no sequence number (ORA-02287): the window
        // reads them all before any row is made.
        let sequences = self.f.sequence_refs_allowed.replace(false);
        let bound = self.bind_window_exprs(raw.into_iter().flatten(), spec);
        self.f.sequence_refs_allowed.set(sequences);
        let (args, partition, order) = bound?;
        if func.reads_order() && order.is_empty() {
            return Err(Error::Parse {
                message: format!("ORA-30485: missing ORDER BY expression in the window specification of {name}"),
                position: position_of(e),
            });
        }
        let frame =
            spec.window_frame.as_ref().map(|frame| self.bind_frame(frame, func, &order, &name, e)).transpose()?;
        let call = WindowCall { func, args, partition, order, frame, text: e.to_string().into() };
        match self.subqueries.and_then(|s| s.window_call(call)) {
            Some(i) => Ok(Expr::Column(WINDOW_COLUMNS + i)),
            None => Err(unsupported(format!("analytic function {name}(...) OVER (...) outside the select list"), e)),
        }
    }

    /// An analytic call's arguments, PARTITION BY and ORDER BY, bound.
    #[allow(clippy::type_complexity)]
    fn bind_window_exprs<'a>(
        &self,
        args: impl Iterator<Item = &'a ast::Expr>,
        spec: &ast::WindowSpec,
    ) -> Result<(Vec<Expr>, Vec<Expr>, Vec<crate::exec::window::WindowOrder>)> {
        let args = args.map(|a| self.bind(a)).collect::<Result<Vec<_>>>()?;
        let partition = spec.partition_by.iter().map(|p| self.bind(p)).collect::<Result<Vec<_>>>()?;
        let mut order = Vec::with_capacity(spec.order_by.len());
        for o in &spec.order_by {
            let descending = matches!(o.options.sort, Some(ast::OrderBySort::Desc));
            let nulls_first = o.options.nulls_first.unwrap_or(descending);
            order.push(crate::exec::window::WindowOrder { expr: self.bind(&o.expr)?, descending, nulls_first });
        }
        Ok((args, partition, order))
    }

    /// A call's `ROWS | RANGE BETWEEN ...`: for an aggregate, FIRST_VALUE or LAST_VALUE
    /// with an ORDER BY (ORA-30485), offsets of constant numbers of 0 or more (whole
    /// numbers of ROWS), RANGE offsets measuring one order key (ORA-30486).
    fn bind_frame(
        &self,
        frame: &ast::WindowFrame,
        func: crate::exec::window::WindowFunc,
        order: &[crate::exec::window::WindowOrder],
        name: &str,
        e: &ast::Expr,
    ) -> Result<crate::exec::window::WindowFrame> {
        use crate::exec::window::{FrameBound, WindowFrame};
        let wrong = |message: String| Error::Parse { message, position: position_of(e) };
        if func.reads_order() {
            return Err(wrong(format!("{name} takes no window frame (ROWS or RANGE)")));
        }
        if order.is_empty() {
            return Err(wrong(format!("ORA-30485: missing ORDER BY expression in the window specification of {name}")));
        }
        let range = match frame.units {
            ast::WindowFrameUnits::Rows => false,
            ast::WindowFrameUnits::Range => true,
            ast::WindowFrameUnits::Groups => return Err(unsupported(format!("GROUPS frames in {e}"), e)),
        };
        let offset = |x: &ast::Expr| -> Result<Value> {
            let value = match self.bind(x)? {
                Expr::Literal(v @ (Datum::Int(_) | Datum::Num(_))) => v,
                // An interval measures a RANGE over dates or timestamps.
                Expr::Literal(v @ (Datum::YearMonth(n) | Datum::DaySecond(n))) if range => {
                    if n < 0 {
                        return Err(wrong(format!(
                            "ORA-01428: argument '{v}' is out of range (a window frame's offset is 0 or more)"
                        )));
                    }
                    return Ok(v);
                }
                other => {
                    return Err(wrong(format!(
                        "a window frame's offset is a constant number, or an interval for RANGE, not {}",
                        other.display(&self.scope.names)
                    )));
                }
            };
            let whole = matches!(value, Datum::Int(_));
            if value.sql_cmp(&Datum::Int(0))? == Some(std::cmp::Ordering::Less) || (!range && !whole) {
                return Err(wrong(format!(
                    "ORA-01428: argument '{value}' is out of range (a window frame's offset is {} of 0 or more)",
                    if range { "a number" } else { "a whole number" }
                )));
            }
            Ok(value)
        };
        let bound = |b: &ast::WindowFrameBound| -> Result<FrameBound> {
            Ok(match b {
                ast::WindowFrameBound::CurrentRow => FrameBound::CurrentRow,
                ast::WindowFrameBound::Preceding(None) => FrameBound::UnboundedPreceding,
                ast::WindowFrameBound::Following(None) => FrameBound::UnboundedFollowing,
                ast::WindowFrameBound::Preceding(Some(x)) => FrameBound::Preceding(offset(x)?),
                ast::WindowFrameBound::Following(Some(x)) => FrameBound::Following(offset(x)?),
            })
        };
        let start = bound(&frame.start_bound)?;
        let end = frame.end_bound.as_ref().map_or(Ok(FrameBound::CurrentRow), bound)?;
        // Oracle's order of bounds: a frame cannot start at UNBOUNDED FOLLOWING nor end at
        // UNBOUNDED PRECEDING; one starting at CURRENT ROW ends there or after; one
        // starting after the row ends after it too (the short form ends at CURRENT ROW).
        let rank = |b: &FrameBound| match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::Preceding(_) => 1,
            FrameBound::CurrentRow => 2,
            FrameBound::Following(_) => 3,
            FrameBound::UnboundedFollowing => 4,
        };
        let backwards = rank(&start) > rank(&end) || (rank(&start) == 2 && rank(&end) < 2);
        if start == FrameBound::UnboundedFollowing || end == FrameBound::UnboundedPreceding || backwards {
            return Err(wrong(format!(
                "ORA-00905: missing keyword: a window frame runs from its start to its end, and {} does not",
                frame_text(frame)
            )));
        }
        let offsets = |b: &FrameBound| matches!(b, FrameBound::Preceding(_) | FrameBound::Following(_));
        if range && (offsets(&start) || offsets(&end)) && order.len() != 1 {
            return Err(wrong(format!(
                "ORA-30486: invalid window aggregation group in the window specification: a RANGE offset measures \
                 one ORDER BY key, not {}",
                order.len()
            )));
        }
        Ok(WindowFrame { range, start, end })
    }

    fn bind_function(&self, f: &ast::Function, e: &ast::Expr) -> Result<Expr> {
        let name = function_name(&f.name);
        if let Some(over) = &f.over {
            return self.bind_window(f, over, e);
        }
        if matches!(f.args, FunctionArguments::None) {
            // The session's clock, as SYSDATE and SYSTIMESTAMP read it (lioscope's session
            // time zone is the server's).
            match name.as_str() {
                "CURRENT_TIMESTAMP" | "LOCALTIMESTAMP" => {
                    return Ok(Expr::Literal(Datum::Timestamp(self.f.systimestamp_constant())));
                }
                "CURRENT_DATE" => return Ok(Expr::Literal(Datum::Date(self.f.sysdate_constant()))),
                _ => {}
            }
        }
        let listagg = name == "LISTAGG";
        if f.filter.is_some()
            || (!f.within_group.is_empty() && !listagg)
            || !matches!(f.parameters, FunctionArguments::None)
        {
            return Err(unsupported(format!("{e}"), e));
        }
        if let FunctionArguments::List(list) = &f.args {
            // LISTAGG's ON OVERFLOW ERROR is what it does anyway.
            let error_on_overflow = |c: &&ast::FunctionArgumentClause| {
                listagg && matches!(c, ast::FunctionArgumentClause::OnOverflow(ast::ListAggOnOverflow::Error))
            };
            if let Some(clause) = list.clauses.iter().find(|c| !error_on_overflow(c)) {
                return Err(unsupported(format!("{clause} in {name}(...)"), e));
            }
        }
        if let Some(agg) = AggFunc::from_name(&name) {
            return self.bind_aggregate(agg, f, e);
        }
        let args = function_args(f);
        if args.iter().any(Option::is_none) {
            return Err(unsupported(format!("arguments of {name}"), e));
        }
        if name == "NULLIF" {
            return self.bind_nullif(&args.into_iter().flatten().collect::<Vec<_>>(), e);
        }
        let func = ScalarFunction::lookup(&name, args.len())?;
        let args = args.into_iter().flatten().map(|a| self.bind(a)).collect::<Result<Vec<_>>>()?;
        Ok(Expr::Function { func, args })
    }

    /// `NULLIF(a, b)`: NULL where `a = b`, else `a`, computed once. Its comparison is
    /// `=`'s: a literal `b` is blank-padded to a CHAR `a`'s length.
    fn bind_nullif(&self, args: &[&ast::Expr], e: &ast::Expr) -> Result<Expr> {
        let &[a, b] = args else {
            return Err(Error::value("NULLIF", format!("expects 2 arguments, got {}", args.len())));
        };
        if matches!(a, ast::Expr::Value(v) if matches!(v.value, ast::Value::Null)) {
            return Err(Error::InvalidValue {
                context: format!("{e}{}", position_of(e).map(|p| format!(" at {p}")).unwrap_or_default()),
                message: "ORA-00932: inconsistent datatypes: NULLIF's first argument cannot be the literal NULL".into(),
            });
        }
        let subject = self.bind(a)?;
        let other = match self.bind(b)? {
            Expr::Literal(v) => self.padded(&subject, &v),
            other => other,
        };
        Ok(Expr::Function { func: ScalarFunction::NullIf, args: vec![subject, other] })
    }

    fn bind_aggregate(&self, func: AggFunc, f: &ast::Function, e: &ast::Expr) -> Result<Expr> {
        let Some(grouping) = self.grouping else {
            return Err(Error::InvalidValue {
                context: func.name().into(),
                message: format!(
                    "group function is not allowed here{}",
                    position_of(e).map(|p| format!(" at {p}")).unwrap_or_default()
                ),
            });
        };
        let distinct = matches!(&f.args, FunctionArguments::List(l) if matches!(l.duplicate_treatment, Some(ast::DuplicateTreatment::Distinct)));
        let args = function_args(f);
        let source = Binder { scope: self.scope, f: self.f, grouping: None, subqueries: self.subqueries };
        let mut listagg = None;
        let (func, arg) = match (func, args.as_slice()) {
            (AggFunc::Count, [None]) => (AggFunc::CountStar, None),
            (AggFunc::Listagg, [Some(a), delimiter @ ..]) if delimiter.len() <= 1 => {
                if std::iter::once(a).chain(delimiter.iter().flatten()).any(|x| contains_aggregate(x)) {
                    return Err(Error::value(func.name(), "aggregate calls cannot be nested"));
                }
                let delimiter = match delimiter {
                    [Some(d)] => match source.bind(d)? {
                        Expr::Literal(v) => v.into_text().map(|t| t.into_owned()).unwrap_or_default(),
                        _ => {
                            return Err(Error::value(
                                "LISTAGG",
                                format!("the delimiter {d} must be a constant (a string literal)"),
                            ));
                        }
                    },
                    _ => String::new(),
                };
                let order_by = f
                    .within_group
                    .iter()
                    .map(|item| {
                        let descending = match &item.options.sort {
                            Some(ast::OrderBySort::Desc) => true,
                            None | Some(ast::OrderBySort::Asc) => false,
                            Some(ast::OrderBySort::Using(_)) => {
                                return Err(unsupported(format!("ORDER BY {}", item.options), e));
                            }
                        };
                        if contains_aggregate(&item.expr) {
                            return Err(Error::value(func.name(), "aggregate calls cannot be nested"));
                        }
                        let expr = source.bind(&item.expr)?;
                        Ok(OrderKey { expr, descending, nulls_first: item.options.nulls_first.unwrap_or(descending) })
                    })
                    .collect::<Result<Vec<_>>>()?;
                listagg = Some(Box::new(Listagg { delimiter, order_by }));
                (func, Some(source.bind(a)?))
            }
            (AggFunc::Listagg, _) => {
                return Err(Error::value(func.name(), format!("expects 1 or 2 arguments, got {}", args.len())));
            }
            (func, [Some(a)]) => {
                if contains_aggregate(a) {
                    return Err(Error::value(func.name(), "aggregate calls cannot be nested"));
                }
                (func, Some(source.bind(a)?))
            }
            _ => return Err(Error::value(func.name(), format!("expects one argument, got {}", args.len()))),
        };
        let text = canonical(e);
        let mut aggs = grouping.aggregates.borrow_mut();
        let index = match aggs.iter().position(|a| a.text == text) {
            Some(i) => i,
            None => {
                aggs.push(AggCall { func, arg, distinct, text, listagg });
                aggs.len() - 1
            }
        };
        Ok(Expr::Column(grouping.keys.len() + index))
    }
}

fn not_group_by(name: String, e: &ast::Expr) -> Error {
    Error::InvalidValue {
        context: name,
        message: format!("not a GROUP BY expression{}", position_of(e).map(|p| format!(" at {p}")).unwrap_or_default()),
    }
}

fn unsupported(construct: String, e: &impl Spanned) -> Error {
    Error::Unsupported { construct, position: position_of(e) }
}

/// A literal value from the AST.
pub fn literal(v: &ast::Value, e: &impl Spanned) -> Result<Value> {
    match v {
        ast::Value::Number(n, _) => {
            Datum::parse_number(n).map_err(|m| Error::Parse { message: m, position: position_of(e) })
        }
        ast::Value::SingleQuotedString(s) | ast::Value::NationalStringLiteral(s) => Ok(Datum::string(s.clone())),
        ast::Value::Null => Ok(Datum::Null),
        other => Err(unsupported(format!("literal {other}"), e)),
    }
}

/// `DATE '...'` and `TIMESTAMP '...'`: a DATE and a TIMESTAMP (no time zone). A bad
/// literal's error names it and where it stands.
fn typed_literal(t: &ast::TypedString, e: &ast::Expr) -> Result<Value> {
    let ast::Value::SingleQuotedString(text) = &t.value.value else {
        return Err(unsupported(format!("literal {e}"), e));
    };
    let value = match &t.data_type {
        ast::DataType::Date => crate::expr::functions::date_literal(text).map(Datum::Date),
        ast::DataType::Timestamp(None, ast::TimezoneInfo::None) => {
            crate::expr::functions::timestamp_literal(text).map(Datum::Timestamp)
        }
        _ => return Err(unsupported(format!("literal {e}"), e)),
    };
    value.map_err(|message| Error::InvalidValue {
        context: format!("{e}{}", position_of(e).map(|p| format!(" at {p}")).unwrap_or_default()),
        message,
    })
}

/// Replaces a deterministic expression whose operands are all literals by its value. A
/// TO_DATE folded takes the current year and month where its format leaves them out: the
/// plan then holds the statement's time, as it does when SYSDATE is folded.
fn fold_constants(e: Expr, f: &FunctionContext) -> Expr {
    let foldable = match &e {
        Expr::Arith { left, right, .. } | Expr::Concat(left, right) => is_literal(left) && is_literal(right),
        Expr::Negate(x) | Expr::Cast { expr: x, .. } => is_literal(x),
        Expr::Function { func, args } => func.is_deterministic() && args.iter().all(is_literal),
        _ => false,
    };
    if !foldable {
        return e;
    }
    if matches!(e, Expr::Function { func: ScalarFunction::ToDate, .. }) {
        f.sysdate_constant();
    }
    let mut ctx = FunctionContext::new(f.now(), 0);
    let empty: &[Value] = &[];
    match e.eval(empty, &mut ctx) {
        Ok(v) => Expr::Literal(v.into_owned()),
        // Leave errors (e.g. division by zero) to surface when the statement runs.
        Err(_) => e,
    }
}

fn is_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal(_))
}
