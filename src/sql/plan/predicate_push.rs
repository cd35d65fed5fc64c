//! Filter predicate pushing: a WHERE conjunct that reads the columns of one view of the
//! FROM clause (an inline view, a WITH query planned where it is read, a stored view) is
//! checked inside that view, on the rows it reads, instead of on the rows it gives:
//!
//! ```text
//!   CREATE VIEW ev AS SELECT empno, sal * 2 dbl FROM emp WHERE sal > 100;
//!   SELECT * FROM ev WHERE empno = 42 AND dbl > 500
//!
//!   VIEW  filter("EMPNO"=42 AND "DBL">500)          VIEW EV
//!     TABLE ACCESS FULL EMP  filter("SAL">100)  ─►    TABLE ACCESS BY INDEX ROWID EMP  filter("SAL">100 AND "SAL"*2>500)
//!                                                       INDEX UNIQUE SCAN PK_EMP  access("EMPNO"=42)
//! ```
//!
//! The conjunct's view columns are replaced by the expressions the view's select list
//! gives them, and it is added to the view's WHERE clause, after the view's own
//! conjuncts. The view's plan then has it as any of its own: an index's access
//! predicate, a scan's filter, a join's condition.
//!
//! It is the same rows only under these rules, checked before anything is pushed:
//! - the view is one SELECT, or a set operation of SELECTs (UNION [ALL], INTERSECT,
//!   MINUS: a filter of their rows is that filter of each branch's rows, added to each
//!   over its own columns), without a row limit (FETCH FIRST, OFFSET); each SELECT is
//!   without ROWNUM, CONNECT BY, analytic functions or DISTINCT ON; one that aggregates
//!   takes conjuncts on its GROUP BY keys alone (a filter of groups by their key is a
//!   filter of the rows by it), and one that aggregates without GROUP BY takes none;
//! - the conjunct reads only that view's columns, each by a name that cannot mean
//!   anything else here (known names of every FROM item, an unqualified one in one item
//!   alone), and each such column is an expression of the view's FROM clause without a
//!   subquery, an aggregate, an analytic function, a sequence or DBMS_RANDOM;
//! - the conjunct holds no subquery, ROWNUM, LEVEL, sequence, aggregate or analytic call;
//! - the query has no outer join (a conjunct such as `v.x IS NULL` on a view an outer
//!   join pads with NULLs is not the view's filter);
//! - the view is not a materialized WITH query, whose rows every reference shares;
//! - a set operation's branches take conjuncts only where none can hold a CHAR value:
//!   its columns compare without blank padding, a CHAR branch column with it.
//!
//! Anything else stays in the query's WHERE clause, checked on the view's rows.
//!
//! A pushed conjunct is checked after the view's own WHERE conjuncts on its rows, but
//! before the view's joins and HAVING: one that can fail (`100 / b`, `TO_NUMBER(s)`) may
//! now fail on a row a join or HAVING of the view would have removed, as it may in
//! Oracle, which pushes the same way.

use super::query_block::view_query;
use super::*;
use crate::expr::aggregate::AggFunc;
use crate::sql::bind::{canonical, contains_aggregate};
use std::ops::ControlFlow;

/// Conjuncts of a query's WHERE clause pushed into the view its FROM clause names
/// `label`: for each SELECT of the view (one, or each branch of a set operation), the
/// conjuncts over that SELECT's FROM clause.
pub(super) struct Pushed {
    pub(super) label: String,
    pub(super) branches: Vec<Vec<ast::Expr>>,
}

/// What a FROM item offers the WHERE clause, as far as it is known before planning.
struct Item {
    label: String,
    /// Its column names; `None` where they are not known here (a `v$` view, DUAL, a
    /// table function, a view with `*`), so an unqualified name may be one of them.
    names: Option<Vec<String>>,
    /// For a view conjuncts may be pushed into, for each of its SELECTs: the expression
    /// of each column, where a conjunct reading it may be pushed.
    branches: Option<Vec<Vec<Option<ast::Expr>>>>,
}

/// Names that are never a FROM item's column where they stand unquoted.
const CONSTANT_NAMES: &[&str] = &["SYSDATE", "SYSTIMESTAMP", "LOCALTIMESTAMP", "CURRENT_TIMESTAMP", "NULL"];

impl Builder<'_> {
    /// Takes the WHERE conjuncts of `select` that can be checked inside a view of its
    /// FROM clause (see the module doc): returns the select without them, or `None`
    /// where none can, and keeps them for the planning of their views.
    pub(super) fn push_predicates(&mut self, select: &ast::Select) -> Result<Option<ast::Select>> {
        let Some(selection) = &select.selection else { return Ok(None) };
        let mut conjuncts = Vec::new();
        split_and(selection, &mut conjuncts);
        if conjuncts.iter().any(|c| super::join::has_outer_join_mark(c)) || !select.connect_by.is_empty() {
            return Ok(None);
        }
        let mut items = Vec::new();
        for from in &select.from {
            items.push(self.item(&from.relation));
            for join in &from.joins {
                use ast::JoinOperator as J;
                if !matches!(join.join_operator, J::Join(_) | J::Inner(_) | J::CrossJoin(_)) {
                    return Ok(None);
                }
                items.push(self.item(&join.relation));
            }
        }
        if items.iter().all(|i| i.branches.is_none()) {
            return Ok(None);
        }
        let mut kept = Vec::new();
        for conjunct in conjuncts {
            let Some((item, forms)) = pushed_form(conjunct, &items) else {
                kept.push(conjunct.clone());
                continue;
            };
            let label = &items[item].label;
            let at = match self.pushed.iter().position(|p| p.label == *label) {
                Some(at) => at,
                None => {
                    self.pushed.push(Pushed { label: label.clone(), branches: vec![Vec::new(); forms.len()] });
                    self.pushed.len() - 1
                }
            };
            for (branch, form) in self.pushed[at].branches.iter_mut().zip(forms) {
                branch.push(form);
            }
        }
        if self.pushed.is_empty() {
            return Ok(None);
        }
        let mut rest = select.clone();
        rest.selection = kept.into_iter().reduce(and);
        Ok(Some(rest))
    }

    /// `query`, the view the FROM clause names `label`, with the conjuncts pushed into
    /// it added to each of its SELECTs' WHERE clauses, after their own; `None` where
    /// none were.
    pub(super) fn pushed_query(&mut self, label: &str, query: &ast::Query) -> Option<ast::Query> {
        let at = self.pushed.iter().position(|p| p.label == label)?;
        let pushed = self.pushed.swap_remove(at);
        let mut query = query.clone();
        let mut selects = Vec::new();
        selects_of_mut(&mut query.body, &mut selects);
        debug_assert_eq!(selects.len(), pushed.branches.len(), "a form for each SELECT of the view");
        for (select, conjuncts) in selects.into_iter().zip(pushed.branches) {
            let own = select.selection.take().map(|w| ast::Expr::Nested(Box::new(w)));
            let added = conjuncts.into_iter().map(|c| ast::Expr::Nested(Box::new(c)));
            select.selection = own.into_iter().chain(added).reduce(and);
        }
        Some(query)
    }

    /// What FROM item `factor` offers the WHERE clause.
    fn item(&self, factor: &ast::TableFactor) -> Item {
        let unknown = |label: String| Item { label, names: None, branches: None };
        match factor {
            ast::TableFactor::Derived { lateral: false, subquery, alias, sample: None } => {
                let label = alias.as_ref().map_or_else(String::new, |a| ident_name(&a.name));
                let renamed: Vec<String> =
                    alias.iter().flat_map(|a| a.columns.iter().map(|c| ident_name(&c.name))).collect();
                self.view_item(label, subquery, &renamed)
            }
            ast::TableFactor::Table { name, alias, args: None, .. } if name.0.len() == 1 => {
                let object = crate::sql::bind::function_name(name);
                let label = alias.as_ref().map_or_else(|| object.clone(), |a| ident_name(&a.name));
                if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                    return unknown(label);
                }
                if let Some(found) = self.named.iter().rposition(|n| n.name == object) {
                    let definition = &self.named[found];
                    let mut item = self.view_item(label, definition.query, &definition.columns);
                    if definition.materialized.is_some() {
                        item.branches = None;
                    }
                    return item;
                }
                if let Some(view) = self.session.db.catalog.view(&object) {
                    // A view whose text does not parse is reported where it is planned.
                    return match view_query(&view) {
                        Ok(query) => self.view_item(label, &query, &view.columns),
                        Err(_) => unknown(label),
                    };
                }
                match self.session.db.catalog.table(&object) {
                    Some(table) => Item {
                        label,
                        names: Some(table.columns.iter().map(|c| c.name.clone()).collect()),
                        branches: None,
                    },
                    None => unknown(label),
                }
            }
            _ => unknown(String::new()),
        }
    }

    /// A view's item: its column names (the first SELECT's, renamed by `renamed`, first
    /// columns first) and, where conjuncts may be pushed into it, its SELECTs' columns'
    /// expressions. A set operation's branches take conjuncts only where each is
    /// [`Builder::char_free`].
    fn view_item(&self, label: String, query: &ast::Query, renamed: &[String]) -> Item {
        let unknown = |label| Item { label, names: None, branches: None };
        let mut selects = Vec::new();
        if !selects_of(&query.body, &mut selects) {
            return unknown(label);
        }
        let Some(mut names) = selects.first().and_then(|s| column_names(s)) else { return unknown(label) };
        for (name, new) in names.iter_mut().zip(renamed) {
            name.clone_from(new);
        }
        let row_limit = query.limit_clause.is_some() || query.fetch.is_some();
        let blank_padding_differs = selects.len() > 1 && !selects.iter().all(|s| self.char_free(s));
        let branches: Option<Vec<_>> = if row_limit || blank_padding_differs {
            None
        } else {
            selects.iter().map(|s| pushable_columns(s, names.len())).collect()
        };
        Item { label, names: Some(names), branches }
    }

    /// Whether a SELECT's columns can hold no CHAR value: it reads only tables without
    /// CHAR columns (or DUAL) and casts nothing. A set operation's columns are not CHAR
    /// (they compare without blank padding) where a branch's may be: a conjunct pushed
    /// into such a branch would compare as CHAR, so none is.
    fn char_free(&self, select: &ast::Select) -> bool {
        let table_char_free = |factor: &ast::TableFactor| match factor {
            ast::TableFactor::Table { name, args: None, .. } => {
                let object = crate::sql::bind::function_name(name);
                object == "DUAL"
                    || self.session.db.catalog.table(&object).is_some_and(|t| {
                        !t.columns.iter().any(|c| matches!(c.data_type, crate::types::DataType::Char { .. }))
                    })
            }
            _ => false,
        };
        let casts = ast::visit_expressions(&select.projection, |e| match e {
            ast::Expr::Cast { .. } => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        });
        casts.is_continue()
            && select
                .from
                .iter()
                .all(|f| table_char_free(&f.relation) && f.joins.iter().all(|j| table_char_free(&j.relation)))
    }
}

/// The output names of a SELECT's columns; `None` where a `*` stands for columns.
fn column_names(select: &ast::Select) -> Option<Vec<String>> {
    select
        .projection
        .iter()
        .map(|item| match item {
            ast::SelectItem::UnnamedExpr(e) => Some(output_name(e)),
            ast::SelectItem::ExprWithAlias { alias, .. } => Some(ident_name(alias)),
            _ => None,
        })
        .collect()
}

/// The expression of each of a SELECT's `width` columns where a conjunct reading it may
/// be checked in the SELECT's WHERE clause (see the module doc); `None` where none may.
fn pushable_columns(select: &ast::Select, width: usize) -> Option<Vec<Option<ast::Expr>>> {
    let exprs: Vec<&ast::Expr> = select
        .projection
        .iter()
        .map(|item| match item {
            ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } => Some(e),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let keys: Vec<String> = match &select.group_by {
        ast::GroupByExpr::Expressions(keys, modifiers) if modifiers.is_empty() => keys.iter().map(canonical).collect(),
        _ => return None,
    };
    let aggregates = select.having.is_some() || exprs.iter().any(|e| contains_aggregate(e));
    let takes_conjuncts = exprs.len() == width
        && select.connect_by.is_empty()
        && select.top.is_none()
        && !matches!(select.distinct, Some(ast::Distinct::On(_)))
        && !reads_rownum(select)
        && !exprs.iter().any(|e| holds_analytic(e))
        && (!keys.is_empty() || !aggregates);
    takes_conjuncts.then(|| {
        exprs
            .iter()
            .map(|e| (pushable(e) && (keys.is_empty() || keys.contains(&canonical(e)))).then(|| (*e).clone()))
            .collect()
    })
}

/// The SELECTs of a query's body, left to right: the one, or each branch of its set
/// operations (a filter of a UNION, INTERSECT or MINUS is that filter of each branch's
/// rows). False where a branch is something else (VALUES, a parenthesized query with
/// its own ORDER BY or row limit).
fn selects_of<'q>(body: &'q ast::SetExpr, out: &mut Vec<&'q ast::Select>) -> bool {
    match body {
        ast::SetExpr::Select(select) => {
            out.push(select);
            true
        }
        ast::SetExpr::SetOperation { left, right, .. } => selects_of(left, out) && selects_of(right, out),
        ast::SetExpr::Query(q)
            if q.order_by.is_none() && q.limit_clause.is_none() && q.fetch.is_none() && q.with.is_none() =>
        {
            selects_of(&q.body, out)
        }
        _ => false,
    }
}

/// The SELECTs of a query's body, as [`selects_of`] finds them, to be changed.
fn selects_of_mut<'q>(body: &'q mut ast::SetExpr, out: &mut Vec<&'q mut ast::Select>) {
    match body {
        ast::SetExpr::Select(select) => out.push(select),
        ast::SetExpr::SetOperation { left, right, .. } => {
            selects_of_mut(left, out);
            selects_of_mut(right, out);
        }
        ast::SetExpr::Query(q) => selects_of_mut(&mut q.body, out),
        _ => {}
    }
}

/// `conjunct` as each SELECT of the view it reads would check it, and that view's item;
/// `None` where it may not be pushed.
fn pushed_form(conjunct: &ast::Expr, items: &[Item]) -> Option<(usize, Vec<ast::Expr>)> {
    if !pushable(conjunct) {
        return None;
    }
    let mut item = None;
    let mut agree = true;
    let flow = ast::visit_expressions(conjunct, |e| {
        match column_of(e, items) {
            Reference::None => {}
            Reference::Column(i, c) => {
                let substitutable = items[i].branches.as_ref().is_some_and(|b| b.iter().all(|cols| cols[c].is_some()));
                agree &= substitutable && item.is_none_or(|seen| seen == i);
                item = Some(i);
            }
            Reference::Unknown => agree = false,
        }
        if agree { ControlFlow::Continue(()) } else { ControlFlow::Break(()) }
    });
    let item = item.filter(|_| agree && flow.is_continue())?;
    let forms = items[item]
        .branches
        .as_ref()?
        .iter()
        .map(|columns| {
            let mut inner = conjunct.clone();
            let _ = ast::visit_expressions_mut(&mut inner, |e| {
                if let Reference::Column(_, c) = column_of(e, items) {
                    *e = ast::Expr::Nested(Box::new(columns[c].clone().expect("checked substitutable")));
                }
                ControlFlow::<()>::Continue(())
            });
            inner
        })
        .collect();
    Some((item, forms))
}

enum Reference {
    /// Not a name.
    None,
    /// Column `c` of item `i`.
    Column(usize, usize),
    /// A name that may be more than one thing, or is not a column here.
    Unknown,
}

/// What the name `e` is (other expressions are [`Reference::None`]).
fn column_of(e: &ast::Expr, items: &[Item]) -> Reference {
    let position = |names: &Option<Vec<String>>, name: &str| {
        let names = names.as_ref()?;
        let mut at = names.iter().enumerate().filter(|(_, n)| *n == name).map(|(c, _)| c);
        match (at.next(), at.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        }
    };
    match e {
        ast::Expr::Identifier(ident) => {
            let name = ident_name(ident);
            if ident.quote_style.is_none() && CONSTANT_NAMES.contains(&name.as_str()) {
                return Reference::None;
            }
            if items.iter().any(|i| i.names.is_none()) {
                return Reference::Unknown;
            }
            let mut found = items
                .iter()
                .enumerate()
                .filter_map(|(i, item)| item.names.as_ref().is_some_and(|n| n.contains(&name)).then_some(i));
            match (found.next(), found.next()) {
                (Some(i), None) => {
                    position(&items[i].names, &name).map_or(Reference::Unknown, |c| Reference::Column(i, c))
                }
                _ => Reference::Unknown,
            }
        }
        ast::Expr::CompoundIdentifier(parts) => match parts.as_slice() {
            [q, c] => {
                let (label, name) = (ident_name(q), ident_name(c));
                let mut found = items.iter().enumerate().filter(|(_, item)| item.label == label);
                match (found.next(), found.next()) {
                    (Some((i, item)), None) => {
                        position(&item.names, &name).map_or(Reference::Unknown, |c| Reference::Column(i, c))
                    }
                    _ => Reference::Unknown,
                }
            }
            _ => Reference::Unknown,
        },
        _ => Reference::None,
    }
}

/// Whether `e` may be checked elsewhere than where it is written: no subquery, ROWNUM,
/// LEVEL, sequence, aggregate, analytic function or DBMS_RANDOM.
fn pushable(e: &ast::Expr) -> bool {
    ast::visit_expressions(e, |x| {
        let refused = match x {
            ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => true,
            ast::Expr::Identifier(i) => {
                i.quote_style.is_none() && matches!(ident_name(i).as_str(), "ROWNUM" | "LEVEL" | "ROWID")
            }
            ast::Expr::CompoundIdentifier(parts) => parts.last().is_some_and(|p| {
                p.quote_style.is_none() && matches!(ident_name(p).as_str(), "NEXTVAL" | "CURRVAL" | "ROWID")
            }),
            ast::Expr::Function(f) => {
                let name = crate::sql::bind::function_name(&f.name);
                f.over.is_some() || AggFunc::from_name(&name).is_some() || name.starts_with("DBMS_RANDOM")
            }
            _ => false,
        };
        if refused { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })
    .is_continue()
}

/// Whether `e` holds an analytic function.
fn holds_analytic(e: &ast::Expr) -> bool {
    ast::visit_expressions(e, |x| match x {
        ast::Expr::Function(f) if f.over.is_some() => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

/// Whether a SELECT reads ROWNUM anywhere (its select list, WHERE, GROUP BY, HAVING).
fn reads_rownum(select: &ast::Select) -> bool {
    ast::visit_expressions(select, |x| match x {
        ast::Expr::Identifier(i) if i.quote_style.is_none() && ident_name(i) == "ROWNUM" => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    })
    .is_break()
}

fn and(left: ast::Expr, right: ast::Expr) -> ast::Expr {
    ast::Expr::BinaryOp { left: Box::new(left), op: ast::BinaryOperator::And, right: Box::new(right) }
}
