//! Queries inside a query: a subquery in FROM (an inline view), a WITH query, a stored
//! view, and the branches of a set operation. Each is planned as a plan of its own (its
//! query block) and read by the query around it as a row source:
//!
//! ```text
//!   SELECT ... FROM (SELECT d, COUNT(*) c FROM t GROUP BY d) v WHERE c > 1
//!
//!   SELECT STATEMENT
//!     VIEW                      filter("C">1)     (the block's rows, pushed as they come)
//!       HASH GROUP BY                             (the block's own lines)
//!         TABLE ACCESS FULL T
//! ```
//!
//! A WITH query is planned where it is read, once a reference (Oracle's inlining of a
//! WITH query); it sees the WITH queries before it and those of the queries around it,
//! never itself (WITH RECURSIVE is refused). A set operation's branches must give as
//! many columns (ORA-01789) of one family each (ORA-01790); the result takes the first
//! branch's column names, and its ORDER BY names them or their positions; the operators
//! are taken left to right, all of one precedence, as Oracle takes them.
//!
//! Subqueries in expressions are planned here as the binder meets them ([`Subqueries`],
//! the binder's `SubqueryPlanner`): one that reads no column of the query around it
//! ([`OuterQuery`]) is an init plan; a correlated one (reading a column of the query
//! around it, or of one further out through the queries in between) is run by a FILTER (module
//! `subquery_filter`: the WHERE clause's, or the one above an aggregation or analytic
//! functions for the select list, HAVING and ORDER BY), and refused elsewhere. A
//! correlated EXISTS, IN or scalar one is also planned for unnesting ([`Unnesting`]),
//! which module `unnest` turns into a join where cheaper. The collector also takes the
//! select list's analytic function calls.
//!
//! Invariants: a statement plans at most [`MAX_QUERY_BLOCKS`] blocks nested at most
//! [`MAX_BLOCK_DEPTH`] deep, and a view never expands inside itself ([`Expanding`]).

use super::family::{Family, expr_family};
use super::*;
use crate::catalog::ViewDef;
use crate::exec::query_block::{CorrelatedPlan, InitKind, InitPlan, QueryBlock, SetOperation, SetOperator};
use crate::sql::optimizer::hints::{self, HintKind, Hints};
use crate::sql::view_expansion::Expanding;
use std::cell::{Cell, RefCell};

/// The stored query of view `view`, parsed.
pub(super) fn view_query(view: &ViewDef) -> Result<ast::Query> {
    let dialect = sqlparser::dialect::OracleDialect {};
    crate::sql::oracle_types::parser(&dialect, &view.text).and_then(|mut p| p.parse_query()).map(|q| *q).map_err(|e| {
        Error::InvalidValue {
            context: view.name.clone(),
            message: format!("ORA-04063: view has errors: its stored text does not parse ({e})"),
        }
    })
}

/// Where a correlated subquery may not stand, as its refusal says.
pub(super) const CORRELATED_PLACES: &str = "a correlated subquery outside the WHERE, HAVING and ORDER BY clauses and the select list of a SELECT (in ON, \
     GROUP BY or a set operation's ORDER BY)";

/// Most query blocks (views, WITH queries, subqueries, set operations' branches) one
/// statement plans: each reference to a WITH query or a view plans it anew, so a chain
/// of WITH queries each reading the one before twice doubles them at each link.
const MAX_QUERY_BLOCKS: usize = 256;

/// Most query blocks planned inside one another: each runs inside the run of the one
/// around it, on the thread's stack.
const MAX_BLOCK_DEPTH: usize = 24;

thread_local! {
    /// How deep the query blocks being planned on this thread are nested.
    static BLOCK_DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// One level of query blocks planned inside one another, while it lives.
struct Nested(());

impl Nested {
    fn enter() -> Result<Nested> {
        BLOCK_DEPTH.with(|depth| {
            if depth.get() >= MAX_BLOCK_DEPTH {
                return Err(Error::unsupported(format!(
                    "query blocks (views, WITH queries, subqueries) nested more than {MAX_BLOCK_DEPTH} deep"
                )));
            }
            depth.set(depth.get() + 1);
            Ok(Nested(()))
        })
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        BLOCK_DEPTH.with(|depth| depth.set(depth.get() - 1));
    }
}

/// A WITH query in scope.
#[derive(Clone)]
pub(crate) struct NamedQuery<'q> {
    pub(crate) name: String,
    /// The names its column list gives its columns (none: the query's own names).
    pub(crate) columns: Vec<String>,
    pub(crate) query: &'q ast::Query,
    /// How many of the WITH queries in scope before it it sees.
    pub(crate) sees: usize,
    /// Its temporary table, when it is materialized (module `with_query`).
    pub(crate) materialized: Option<std::rc::Rc<Materialized>>,
}

/// A materialized WITH query, as its references read it (module `with_query`).
pub(crate) struct Materialized {
    /// Where its load leaves its rows in the statement's function context.
    pub(super) slot: usize,
    /// Its temporary table's name, as the plan shows it (`SYS_TEMP_0FD9D66nn`).
    pub(super) temp_name: String,
    pub(super) columns: Vec<String>,
    pub(super) families: Vec<Option<Family>>,
    pub(super) char_lengths: Vec<Option<u32>>,
    /// Its rows, estimated, and the cost of reading them from memory.
    pub(super) estimate: Option<Estimate>,
}

/// Adds the queries of `with` to those in scope.
pub(super) fn add_with<'q>(with: &'q ast::With, named: &mut Vec<NamedQuery<'q>>) -> Result<()> {
    if with.recursive {
        return Err(unsupported("WITH RECURSIVE".into(), with));
    }
    let own_start = named.len();
    for cte in &with.cte_tables {
        let name = ident_name(&cte.alias.name);
        if named[own_start..].iter().any(|n| n.name == name) {
            return Err(Error::Parse {
                message: format!("WITH names {name} twice"),
                position: ident_position(&cte.alias.name),
            });
        }
        if let Some(from) = &cte.from {
            return Err(Error::Unsupported {
                construct: format!("WITH {name} AS (...) FROM {from}"),
                position: ident_position(&cte.alias.name),
            });
        }
        let columns = cte.alias.columns.iter().map(|c| ident_name(&c.name)).collect();
        let sees = named.len();
        named.push(NamedQuery { name, columns, query: &cte.query, sees, materialized: None });
    }
    Ok(())
}

/// A query planned as a block of another's plan.
pub(super) struct PlannedBlock {
    pub(super) block: QueryBlock,
    /// Its lines, its top line the root (the block has no SELECT STATEMENT line).
    pub(super) tree: PlanTree,
    pub(super) columns: Vec<String>,
    pub(super) families: Vec<Option<Family>>,
    /// Each column's CHAR length, where it is a CHAR column's value.
    pub(super) char_lengths: Vec<Option<u32>>,
    pub(super) estimate: Option<Estimate>,
}

/// Plans `query` (seeing the WITH queries `named`) as a block of another plan; returns
/// it and its notes.
pub(super) fn plan_block(
    query: &ast::Query,
    session: &Session,
    f: &FunctionContext,
    named: &[NamedQuery<'_>],
    outer: Option<&OuterQuery<'_>>,
) -> Result<(PlannedBlock, Vec<String>)> {
    let blocks = f.query_blocks.get() + 1;
    if blocks > MAX_QUERY_BLOCKS {
        return Err(Error::unsupported(format!(
            "a statement of more than {MAX_QUERY_BLOCKS} query blocks (views, WITH queries and subqueries, each \
             reference planned anew)"
        )));
    }
    f.query_blocks.set(blocks);
    let _nested = Nested::enter()?;
    let planned = plan_query_in(query, session, f, named, outer)?;
    Ok(as_block(planned, f))
}

/// A planned query as a block of another plan (its statement's line and collect stage
/// taken off), and its notes.
pub(super) fn as_block(planned: Planned<'static>, f: &FunctionContext) -> (PlannedBlock, Vec<String>) {
    let Planned { source, mut stages, columns, families, char_lengths, mut tree, notes, rebind, init, .. } = planned;
    if rebind.is_some() {
        // An index range from bind variables is this execution's: an execution with
        // other values plans the statement again.
        f.taken.borrow_mut().binds.extend(0..f.binds.len());
    }
    let statement = tree.root().expect("a plan has its statement's line");
    tree.splice_out(statement);
    match stages.pop() {
        Some(Stage::Collect(_)) => {}
        _ => unreachable!("a planned query's pipeline ends with its collect stage"),
    }
    // The lines leaving at a stage get a probe when row-source statistics are
    // gathered; the reading line is the lowest of them on the chain from the top.
    let order = tree.pre_order();
    let mut probe_lines = Vec::new();
    let mut positions = Vec::new();
    for (line, &(id, _)) in order.iter().enumerate() {
        if let RowsAt::Stage(n) = tree.node(id).rows_at {
            probe_lines.push(line);
            positions.push(n);
        }
    }
    let estimate = tree.root().and_then(|r| tree.node(r).estimate);
    let width = columns.len();
    let block = QueryBlock::new(source, stages, width, positions, probe_lines, init);
    (PlannedBlock { block, tree, columns, families, char_lengths, estimate }, notes)
}

impl Builder<'_> {
    /// Plans `query` (seeing the WITH queries `named`) as a block of this plan.
    pub(super) fn block(&mut self, query: &ast::Query, named: &[NamedQuery<'_>]) -> Result<PlannedBlock> {
        let (block, notes) = plan_block(query, self.session, self.f, named, None)?;
        for note in notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        Ok(block)
    }

    /// Adds a VIEW line reading `block` (named `object`, empty for an inline view) as the
    /// plan's source; returns the scope its columns make, qualified by `qualifiers`.
    pub(super) fn view_source(&mut self, block: PlannedBlock, object: &str, qualifiers: Vec<String>) -> Scope {
        let PlannedBlock { block, tree, columns, families, char_lengths, estimate } = block;
        let rule = estimate.map_or(RowsRule::Unknown, |e| RowsRule::Source(e.rows));
        let node = self.reading(Operation::View, object, rule, Source::View(Box::new(block)));
        self.tree.node_mut(node).estimate = estimate;
        let top = self.tree.adopt(tree);
        self.tree.node_mut(node).children.extend(top);
        self.families = families;
        Scope { names: columns, qualifiers, char_lengths, ..Default::default() }
    }

    /// The WITH query named `name` in scope, if there is one, planned as a block, with
    /// its column list's names.
    /// `label` names it in the FROM clause (its alias, else its name): the WHERE
    /// conjuncts pushed into it are checked inside (module `predicate_push`).
    pub(super) fn named_block(&mut self, name: &str, label: &str) -> Result<Option<PlannedBlock>> {
        let named = self.named;
        let Some(found) = named.iter().rposition(|n| n.name == name) else { return Ok(None) };
        let definition = &named[found];
        if let Some(materialized) = &definition.materialized {
            return Ok(Some(self.materialized_block(materialized)));
        }
        let query = self.pushed_query(label, definition.query);
        let mut block = self.block(query.as_ref().unwrap_or(definition.query), &named[..definition.sees])?;
        rename_columns(&mut block, &definition.columns, name)?;
        Ok(Some(block))
    }

    /// The block of a subquery in FROM, and the name its alias gives it.
    pub(super) fn derived_block(&mut self, factor: &ast::TableFactor) -> Result<(PlannedBlock, Option<String>)> {
        let ast::TableFactor::Derived { lateral, subquery, alias, sample } = factor else {
            unreachable!("called for a subquery in FROM")
        };
        if *lateral || sample.is_some() {
            return Err(unsupported(format!("FROM {factor}"), factor));
        }
        let named = self.named;
        let label = alias.as_ref().map(|a| ident_name(&a.name));
        let query = self.pushed_query(label.as_deref().unwrap_or_default(), subquery);
        let block = self.block(query.as_ref().unwrap_or(subquery), named)?;
        Ok((block, label))
    }

    /// The block of the WITH query or the stored view `name` names, when it names one
    /// (a WITH query hides a view of its name), `label` naming it in the FROM clause.
    pub(super) fn named_block_of(&mut self, name: &ast::ObjectName, label: &str) -> Result<Option<PlannedBlock>> {
        if name.0.len() != 1 {
            return Ok(None);
        }
        let name = crate::sql::bind::function_name(name);
        if let Some(block) = self.named_block(&name, label)? {
            return Ok(Some(block));
        }
        let Some(view) = self.session.db.catalog.view(&name) else { return Ok(None) };
        crate::sql::privileges::require_on(self.session, &view.name, crate::catalog::ObjectPrivilege::Select)?;
        let _expanding = Expanding::enter(&view.name, Arc::from(self.session.db.catalog.owner_of(&view.name)))?;
        let query = view_query(&view)?;
        let planned = match self.pushed_query(label, &query) {
            Some(pushed) => self.block(&pushed, &[]),
            None => self.block(&query, &[]),
        };
        let mut block = match planned {
            Ok(block) => block,
            // An error of the query's own WHERE conjuncts, pushed in, is the query's: the
            // view alone plans.
            Err(e) if self.block(&query, &[]).is_ok() => return Err(e),
            Err(e) => {
                return Err(Error::InvalidValue {
                    context: view.name.clone(),
                    message: format!("ORA-04063: view has errors: {e}"),
                });
            }
        };
        rename_columns(&mut block, &view.columns, &view.name)?;
        Ok(Some(block))
    }

    /// Plans a query whose body is a set operation (or a parenthesized query with its own
    /// ORDER BY or row limit outside).
    pub(super) fn set_query<'a>(mut self, query: &ast::Query) -> Result<Planned<'a>> {
        let (columns, families) = self.set_source(&query.body)?;
        let scope = Scope { names: columns.clone(), ..Default::default() };
        let exprs = (0..columns.len()).map(Expr::Column).collect();
        self.project_order_and_limit(query, false, &scope, None, exprs, &columns)?;
        let char_lengths = vec![None; columns.len()];
        self.finish(columns, families, char_lengths, false)
    }

    /// Adds the lines of a set operation's body (the source the rest reads); returns its
    /// columns' names and families.
    fn set_source(&mut self, body: &ast::SetExpr) -> Result<(Vec<String>, Vec<Option<Family>>)> {
        if let Some(left_deep) = left_to_right(body) {
            return self.set_source(&left_deep);
        }
        let ast::SetExpr::SetOperation { op, set_quantifier, left, right } = body else {
            let query = match body {
                ast::SetExpr::Query(q) => q.as_ref().clone(),
                other => branch_query(other),
            };
            let named = self.named;
            let block = self.block(&query, named)?;
            let families = block.families.clone();
            let scope = self.view_source(block, "", Vec::new());
            return Ok((scope.names, families));
        };
        let distinct = match set_quantifier {
            ast::SetQuantifier::All => false,
            ast::SetQuantifier::Distinct | ast::SetQuantifier::None => true,
            other => return Err(unsupported(format!("{op} {other}"), body)),
        };
        let (operator, operation) = match op {
            ast::SetOperator::Union => (SetOperator::UnionAll, Operation::UnionAll),
            ast::SetOperator::Intersect if distinct => (SetOperator::Intersect, Operation::IntersectionHash),
            ast::SetOperator::Minus | ast::SetOperator::Except if distinct => {
                (SetOperator::Minus, Operation::MinusHash)
            }
            _ => return Err(unsupported(format!("{op} {set_quantifier}"), body)),
        };
        // A chain of UNIONs is one UNION-ALL of all its branches (under one HASH UNIQUE
        // when the last is UNION: it makes the rows of the whole chain distinct).
        let mut branches = vec![right.as_ref()];
        let mut at = left.as_ref();
        while operator == SetOperator::UnionAll
            && let ast::SetExpr::SetOperation { op: ast::SetOperator::Union, set_quantifier: q, left, right } = at
            && (distinct || *q == ast::SetQuantifier::All)
        {
            branches.push(right);
            at = left;
        }
        branches.push(at);
        branches.reverse();
        let mut planned = Vec::with_capacity(branches.len());
        for branch in branches {
            let query = match branch {
                ast::SetExpr::Query(q) => q.as_ref().clone(),
                other => branch_query(other),
            };
            let named = self.named;
            planned.push((self.block(&query, named)?, branch));
        }
        let (columns, families) = result_columns(&planned, op)?;
        let rows: Option<f64> = planned.iter().map(|(b, _)| b.estimate.map(|e| e.rows)).sum();
        let cost: f64 = planned.iter().filter_map(|(b, _)| b.estimate.map(|e| e.cost)).sum();
        let mut blocks = Vec::with_capacity(planned.len());
        let mut trees = Vec::with_capacity(planned.len());
        for (b, _) in planned {
            blocks.push(b.block);
            trees.push(b.tree);
        }
        let rows = match operator {
            SetOperator::UnionAll => rows,
            SetOperator::Intersect | SetOperator::Minus => rows.map(|_| trees_first_rows(&trees)),
        };
        let rule = rows.map_or(RowsRule::Unknown, RowsRule::Source);
        let node = self.reading(
            operation,
            "",
            rule,
            Source::SetOperation(Box::new(SetOperation { operator, branches: blocks })),
        );
        self.tree.node_mut(node).estimate = rows.map(|rows| Estimate { rows, cost });
        for tree in trees {
            let top = self.tree.adopt(tree);
            self.tree.node_mut(node).children.extend(top);
        }
        if distinct && operator == SetOperator::UnionAll {
            let keys = (0..columns.len()).map(Expr::Column).collect();
            let stage = Stage::Aggregate(AggregateStage::new(keys, Vec::new(), None));
            self.running(Operation::HashUnique, RowsRule::Groups(None), stage);
        }
        Ok((columns, families))
    }
}

/// The family of each of a fixed view's `width` columns: that of its first non-NULL value.
pub(super) fn fixed_families(width: usize, rows: &[Vec<Value>]) -> Vec<Option<Family>> {
    (0..width).map(|c| rows.iter().find_map(|r| r.get(c).and_then(Family::of_value))).collect()
}

/// The estimated rows of the first of `trees` (what INTERSECT and MINUS give at most).
fn trees_first_rows(trees: &[PlanTree]) -> f64 {
    trees.first().and_then(|t| t.root().and_then(|r| t.node(r).estimate)).map_or(1.0, |e| e.rows)
}

/// The set operation `body` with its operators taken left to right, as Oracle takes
/// them (all of equal precedence), when the parser bound one tighter: `A UNION B
/// INTERSECT C` is `(A UNION B) INTERSECT C`, where the parser made it `A UNION (B
/// INTERSECT C)`. A parenthesised operand is left as it is. `None` when `body` is
/// left-deep already.
fn left_to_right(body: &ast::SetExpr) -> Option<ast::SetExpr> {
    let ast::SetExpr::SetOperation { op, set_quantifier, left, right } = body else { return None };
    let ast::SetExpr::SetOperation { op: inner_op, set_quantifier: inner_q, left: middle, right: last } = &**right
    else {
        return None;
    };
    let first = ast::SetExpr::SetOperation {
        op: *op,
        set_quantifier: *set_quantifier,
        left: left.clone(),
        right: middle.clone(),
    };
    Some(ast::SetExpr::SetOperation {
        op: *inner_op,
        set_quantifier: *inner_q,
        left: Box::new(left_to_right(&first).unwrap_or(first)),
        right: last.clone(),
    })
}

/// A set operation's branch as a query of its own.
fn branch_query(body: &ast::SetExpr) -> ast::Query {
    ast::Query {
        with: None,
        body: Box::new(body.clone()),
        order_by: None,
        limit_clause: None,
        fetch: None,
        locks: Vec::new(),
        for_clause: None,
        settings: None,
        format_clause: None,
        pipe_operators: Vec::new(),
    }
}

/// A set operation's result columns: the first branch's names, and for each column the
/// family its branches give. Refuses branches of other widths (ORA-01789) or of
/// another family in a column (ORA-01790).
fn result_columns(
    branches: &[(PlannedBlock, &ast::SetExpr)],
    op: &ast::SetOperator,
) -> Result<(Vec<String>, Vec<Option<Family>>)> {
    let (first, _) = &branches[0];
    let mut families = first.families.clone();
    for (block, body) in &branches[1..] {
        if block.columns.len() != first.columns.len() {
            return Err(Error::Parse {
                message: format!(
                    "ORA-01789: query block has incorrect number of result columns ({} in a branch of {op}, {} in the first)",
                    block.columns.len(),
                    first.columns.len()
                ),
                position: position_of(*body),
            });
        }
        for (c, (known, theirs)) in families.iter_mut().zip(&block.families).enumerate() {
            match (*known, *theirs) {
                (Some(a), Some(b)) if a != b => {
                    return Err(Error::InvalidValue {
                        context: op.to_string(),
                        message: format!(
                            "ORA-01790: expression must have same datatype as corresponding expression (column {} is {} in one branch, {} in another)",
                            c + 1,
                            a.name(),
                            b.name()
                        ),
                    });
                }
                (None, Some(b)) => *known = Some(b),
                _ => {}
            }
        }
    }
    Ok((first.columns.clone(), families))
}

/// Renames a block's columns by a column list (`WITH q (a, b) AS ...`, `(...) v (a, b)`).
pub(super) fn rename_columns(block: &mut PlannedBlock, names: &[String], of: &str) -> Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    if names.len() != block.columns.len() {
        return Err(Error::InvalidValue {
            context: of.to_owned(),
            message: format!(
                "its column list names {} columns, but its query gives {}",
                names.len(),
                block.columns.len()
            ),
        });
    }
    block.columns = names.to_vec();
    Ok(())
}

impl Builder<'_> {
    /// The CHAR length of each of the select list `exprs` that is a CHAR column of the
    /// FROM clause (or a GROUP BY key that is one).
    pub(super) fn output_char_lengths(&self, exprs: &[Expr], scope: &Scope) -> Vec<Option<u32>> {
        let of_column = |c: usize| scope.char_lengths.get(c).copied().flatten();
        let aggregate =
            self.tree.stages().filter_map(|s| if let Stage::Aggregate(a) = s { Some(a) } else { None }).last();
        exprs
            .iter()
            .map(|e| match (e, aggregate) {
                (Expr::Column(c), None) => of_column(*c),
                (Expr::Column(k), Some(a)) => match a.group_by.get(*k) {
                    Some(Expr::Column(c)) => of_column(*c),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    /// The families of the select list `exprs`: over the aggregate's output (its keys,
    /// then its calls) when the query aggregates, else over the FROM clause's columns.
    pub(super) fn output_families(&self, exprs: &[Expr]) -> Vec<Option<Family>> {
        let source = |c: usize| self.families.get(c).copied().flatten();
        let aggregate =
            self.tree.stages().filter_map(|s| if let Stage::Aggregate(a) = s { Some(a) } else { None }).last();
        match aggregate {
            Some(a) => {
                let mut grouped: Vec<Option<Family>> = a.group_by.iter().map(|k| expr_family(k, &source)).collect();
                grouped.extend(a.calls.iter().map(|c| super::family::aggregate_family(c, &source)));
                exprs.iter().map(|e| expr_family(e, &|c| grouped.get(c).copied().flatten())).collect()
            }
            None => exprs.iter().map(|e| expr_family(e, &source)).collect(),
        }
    }
}

/// The query around a subquery, as the subquery's names resolve in it: its scope, and
/// the outer columns the subquery read so far (each with its slot among the statement's
/// outer values).
///
/// A name found in no scope of this query is looked for in the queries around it
/// (`enclosing`), outwards: a column two levels out is read by the query in between as
/// an outer value of its own, which this subquery takes as its correlation's value, so
/// that each level re-runs its subquery when the value changes.
pub(super) struct OuterQuery<'a> {
    scope: Scope,
    read: RefCell<Vec<(usize, Expr)>>,
    /// Set when the subquery is planned to be unnested.
    unnesting: Option<Unnesting>,
    /// The subqueries of the query around, whose own outer queries are further out.
    enclosing: Option<&'a Subqueries<'a>>,
}

/// A correlated `EXISTS` or `IN` subquery, or a scalar one of an aggregate, planned a
/// second time to be unnested into a join (module `unnest`): the conjuncts of its WHERE
/// clause that read the outer row are taken out as they are bound, to become the join's
/// conditions, and the subquery's columns they read are added to its select list (and,
/// for the aggregate, to its grouping: one row a group, for the join to find by its
/// key). The plan is refused (`refused`) where the subquery's shape would change its
/// answer so planned: a grouping of its own (for EXISTS and IN, any grouping),
/// DISTINCT, ROWNUM, a row limit, an analytic function, an outer column read anywhere
/// but in such a conjunct.
#[derive(Default)]
pub(super) struct Unnesting {
    /// Whether the subquery's own select list is kept (IN's value, the aggregate) or
    /// dropped (EXISTS).
    keeps_select_list: bool,
    /// Whether the columns the conjuncts read group the subquery's rows (a scalar
    /// subquery of an aggregate).
    groups: bool,
    /// The conjuncts taken out, over the subquery's scope, each with its text.
    conjuncts: RefCell<Vec<(Expr, String)>>,
    /// The scope columns added to the select list, in order.
    columns: RefCell<Vec<usize>>,
    refused: Cell<bool>,
}

impl Unnesting {
    /// Refuses the plan: the subquery's shape would change its answer so planned.
    pub(super) fn refuse(&self) {
        self.refused.set(true);
    }

    /// Takes WHERE conjunct `e` (over scope `names`) out when it reads the outer row.
    pub(super) fn take_conjunct(&self, e: &Expr, names: &[String]) -> bool {
        let (mut outer, mut subquery) = (false, false);
        e.visit_nodes(&mut |x| match x {
            Expr::Outer { .. } => outer = true,
            Expr::Subquery { .. } => subquery = true,
            _ => {}
        });
        if !outer {
            return false;
        }
        self.refused.set(self.refused.get() || subquery);
        self.conjuncts.borrow_mut().push((e.clone(), e.display_conjunct(names).to_string()));
        true
    }

    /// The subquery's columns the conjuncts taken out read, in order.
    fn read_columns(&self) -> Vec<usize> {
        let mut read = Vec::new();
        for (e, _) in self.conjuncts.borrow().iter() {
            e.visit_columns(&mut |c| {
                if !read.contains(&c) {
                    read.push(c);
                }
            });
        }
        read
    }

    /// The columns the subquery's rows are grouped by besides its own GROUP BY: those the
    /// conjuncts taken out read, for a scalar subquery of an aggregate.
    pub(super) fn group_columns(&self) -> Vec<usize> {
        if self.groups { self.read_columns() } else { Vec::new() }
    }

    /// The select list of the subquery planned for unnesting: its own (IN's value, the
    /// aggregate) or none (EXISTS), then the columns the conjuncts taken out read (over
    /// the aggregate's output when they group: the last of its `keys` grouping keys,
    /// as [`Unnesting::group_columns`] added them); `plain` when the query has no
    /// DISTINCT, ORDER BY, row limit or analytic function, and is grouped exactly when
    /// the columns group.
    pub(super) fn select_list(&self, exprs: &mut Vec<Expr>, columns: &mut Vec<String>, plain: bool, keys: usize) {
        if !plain || exprs.len() != columns.len() {
            self.refused.set(true);
            return;
        }
        if !self.keeps_select_list {
            exprs.clear();
            columns.clear();
        }
        let read = self.read_columns();
        let first_key = keys.saturating_sub(read.len());
        for (i, &c) in read.iter().enumerate() {
            exprs.push(Expr::Column(if self.groups { first_key + i } else { c }));
            columns.push(format!("SQ_COL{}", columns.len() + 1));
        }
        *self.columns.borrow_mut() = read;
    }

    pub(super) fn groups(&self) -> bool {
        self.groups
    }
}

/// A correlated subquery planned to be unnested, and what its semi or anti join needs.
pub(super) struct UnnestPlan {
    /// The subquery's slot (its `Expr::Subquery`).
    pub(super) slot: usize,
    /// The subquery without the conjuncts that read the outer row: its columns are IN's
    /// value (when kept) and then the columns those conjuncts read.
    pub(super) block: PlannedBlock,
    /// Those conjuncts, over the block's columns and the outer values (`Expr::Outer`),
    /// each with its text.
    pub(super) conditions: Vec<(Expr, String)>,
    /// The outer values the conditions read: their slots and expressions over the
    /// outer query's scope.
    pub(super) outer: Vec<(usize, Expr)>,
    /// The subquery's hints (UNNEST, NO_UNNEST, HASH_SJ, ...).
    pub(super) hints: Hints,
    /// Whether it is a scalar subquery of an aggregate grouped by the columns its
    /// conditions read: one row a key, joined by an inner join.
    pub(super) grouped: bool,
    /// What one run of the subquery planned as a correlated one costs, when estimated.
    pub(super) run_cost: Option<f64>,
    /// The notes of the subquery's plan on SWAP_JOIN_INPUTS hints: given when it is not
    /// unnested into a hash join, which takes them.
    pub(super) swap_notes: Vec<String>,
}

/// The subqueries a query's expressions hold, planned as the binder meets them: those
/// that read nothing of the query's rows run once when the plan starts (init plans);
/// the correlated ones run for each row, in the FILTER the WHERE clause makes of them.
pub(super) struct Subqueries<'s> {
    session: &'s Session,
    f: &'s FunctionContext,
    named: &'s [NamedQuery<'s>],
    /// The query around this one, when this one is a subquery.
    outer: Option<&'s OuterQuery<'s>>,
    planned: RefCell<PlannedSubqueries>,
    /// Whether the clause being bound may hold a correlated subquery: the WHERE clause,
    /// and the select list of a query that does not aggregate (where the FILTER running
    /// them sets their answers before the expressions read them).
    pub(super) correlated_allowed: std::cell::Cell<bool>,
    /// Set while a WHERE conjunct is bound: only a subquery met there may be unnested,
    /// and a subquery planned to be unnested reads outer columns only there.
    pub(super) in_where: std::cell::Cell<bool>,
    /// The analytic function calls of the select list, and whether the clause being bound
    /// may hold one.
    pub(super) windows: RefCell<Vec<crate::exec::window::WindowCall>>,
    pub(super) windows_allowed: std::cell::Cell<bool>,
}

/// The subqueries planned so far, with their lines, and the notes of their plans.
#[derive(Default)]
pub(super) struct PlannedSubqueries {
    pub(super) init: Vec<(InitPlan, PlanTree)>,
    pub(super) correlated: Vec<(CorrelatedPlan, PlanTree)>,
    /// Correlated subqueries also planned to be unnested.
    pub(super) unnestable: Vec<UnnestPlan>,
    pub(super) notes: Vec<String>,
}

impl<'s> Subqueries<'s> {
    pub(super) fn new(
        session: &'s Session,
        f: &'s FunctionContext,
        named: &'s [NamedQuery<'s>],
        outer: Option<&'s OuterQuery<'s>>,
    ) -> Subqueries<'s> {
        Subqueries {
            session,
            f,
            named,
            outer,
            planned: RefCell::default(),
            correlated_allowed: Default::default(),
            in_where: Default::default(),
            windows: RefCell::default(),
            windows_allowed: Default::default(),
        }
    }

    /// What was planned, leaving nothing.
    pub(super) fn take(&self) -> PlannedSubqueries {
        self.planned.take()
    }

    /// The correlated subqueries planned so far (borrowed).
    pub(super) fn planned_correlated(&self) -> std::cell::Ref<'_, Vec<(CorrelatedPlan, PlanTree)>> {
        std::cell::Ref::map(self.planned.borrow(), |p| &p.correlated)
    }

    /// The correlated subqueries, leaving none.
    pub(super) fn take_correlated(&self) -> Vec<(CorrelatedPlan, PlanTree)> {
        std::mem::take(&mut self.planned.borrow_mut().correlated)
    }

    /// How many correlated subqueries were planned here so far (and not taken).
    pub(super) fn correlated_count(&self) -> usize {
        self.planned.borrow().correlated.len()
    }

    /// The correlated subqueries planned after the first `count`, leaving those.
    pub(super) fn take_correlated_from(&self, count: usize) -> Vec<(CorrelatedPlan, PlanTree)> {
        let mut planned = self.planned.borrow_mut();
        let at = count.min(planned.correlated.len());
        planned.correlated.split_off(at)
    }

    /// Gives back correlated subqueries taken with [`Subqueries::take_correlated_from`].
    pub(super) fn restore_correlated(&self, plans: Vec<(CorrelatedPlan, PlanTree)>) {
        self.planned.borrow_mut().correlated.extend(plans);
    }

    /// The correlated subqueries also planned to be unnested, leaving none.
    pub(super) fn take_unnestable(&self) -> Vec<UnnestPlan> {
        std::mem::take(&mut self.planned.borrow_mut().unnestable)
    }

    /// Drops the correlated plan of the subquery in `slot` (it was unnested).
    pub(super) fn drop_correlated(&self, slot: usize) {
        self.planned.borrow_mut().correlated.retain(|(p, _)| p.slot != slot);
    }

    /// Where this query is a subquery planned to be unnested, what it captures.
    pub(super) fn unnesting(&self) -> Option<&Unnesting> {
        self.outer?.unnesting.as_ref()
    }

    /// Whether a correlated subquery was planned here (and not taken yet).
    pub(super) fn has_correlated(&self) -> bool {
        !self.planned.borrow().correlated.is_empty()
    }

    /// Whether `e` holds a correlated subquery planned here.
    pub(super) fn holds_correlated(&self, e: &Expr) -> bool {
        let planned = self.planned.borrow();
        let mut found = false;
        e.visit_nodes(&mut |x| {
            if let Expr::Subquery { slot, .. } = x {
                found |= planned.correlated.iter().any(|(p, _)| p.slot == *slot);
            }
        });
        found
    }
}

/// The notes on the hints of a subquery's that ask for unnesting (UNNEST, HASH_SJ, ...)
/// when it stays in the FILTER.
pub(super) fn unnest_hints_unused(hints: &Hints) -> Vec<String> {
    hints
        .hints
        .iter()
        .filter(|h| matches!(h.kind, HintKind::Unnest(true) | HintKind::SubqueryJoin(_)))
        .map(|h| format!("hint not used: {} (the subquery is run by the FILTER)", h.text))
        .collect()
}

impl Subqueries<'_> {
    /// Plans correlated subquery `query` (in `slot`, an EXISTS, IN or scalar one) again
    /// to be unnested ([`Unnesting`]); `None` where it cannot be, its hints asking for
    /// unnesting then noted as unused.
    fn plan_unnested(
        &self,
        query: &ast::Query,
        kind: InitKind,
        scope: &Scope,
        slot: usize,
        run_cost: Option<f64>,
    ) -> Option<UnnestPlan> {
        let ast::SetExpr::Select(select) = &*query.body else { return None };
        let hints = hints::parse(&select.optimizer_hints.iter().map(|h| h.text.as_str()).collect::<Vec<_>>());
        let unused = unnest_hints_unused(&hints);
        // Only a WHERE conjunct can become a join: elsewhere the second plan is not made.
        let plan = if self.in_where.get() {
            self.plan_unnested_with(query, select, hints, kind, scope, slot, run_cost)
        } else {
            None
        };
        if plan.is_none() {
            self.planned.borrow_mut().notes.extend(unused);
        }
        plan
    }

    /// [`Subqueries::plan_unnested`] of `query`, whose body is `select` and whose hints
    /// are `hints`.
    #[allow(clippy::too_many_arguments, reason = "the subquery's parts, each read")]
    fn plan_unnested_with(
        &self,
        query: &ast::Query,
        select: &ast::Select,
        hints: Hints,
        kind: InitKind,
        scope: &Scope,
        slot: usize,
        run_cost: Option<f64>,
    ) -> Option<UnnestPlan> {
        // A multi-column IN stays the FILTER's.
        if hints.hints.iter().any(|h| h.kind == HintKind::Unnest(false)) || kind == InitKind::Rows {
            return None;
        }
        let groups = kind == InitKind::Scalar;
        // A scalar subquery is unnested where no row of it and no group of the join
        // answer alike: an aggregate that is NULL over no rows, with no grouping of its
        // own.
        let ungrouped = matches!(&select.group_by, ast::GroupByExpr::Expressions(e, m) if e.is_empty() && m.is_empty());
        if groups
            && !(ungrouped
                && select.having.is_none()
                && matches!(&select.projection[..], [ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. }]
                    if null_over_no_rows(e) && contains_aggregate(e)))
        {
            return None;
        }
        let unnesting = Unnesting { keeps_select_list: kind != InitKind::Exists, groups, ..Default::default() };
        let outer = OuterQuery {
            scope: scope.clone(),
            read: RefCell::default(),
            unnesting: Some(unnesting),
            enclosing: Some(self),
        };
        // A subquery that cannot be planned so is run as the FILTER's: its error is not
        // the statement's.
        let (block, _) = plan_block(query, self.session, self.f, self.named, Some(&outer)).ok()?;
        let u = outer.unnesting.expect("set above");
        if u.refused.get() || u.conjuncts.borrow().is_empty() {
            return None;
        }
        // Each scope column the conditions read is the block's column after IN's value.
        let first = usize::from(u.keeps_select_list);
        let columns = u.columns.take();
        let conditions = u
            .conjuncts
            .take()
            .into_iter()
            .map(|(mut e, text)| {
                e.remap_columns(&|c| first + columns.iter().position(|&r| r == c).expect("a column read"));
                (e, text)
            })
            .collect();
        let outer = outer.read.take();
        Some(UnnestPlan { slot, block, conditions, outer, hints, grouped: groups, run_cost, swap_notes: Vec::new() })
    }
}

/// Whether `e`, the select item of a scalar subquery, is NULL over no rows: SUM, AVG,
/// MIN or MAX calls, numbers, and arithmetic on them (never COUNT, NVL, CASE and the
/// like, whose value over no rows is not NULL).
fn null_over_no_rows(e: &ast::Expr) -> bool {
    match e {
        ast::Expr::Nested(e) | ast::Expr::UnaryOp { expr: e, .. } => null_over_no_rows(e),
        ast::Expr::BinaryOp { left, op, right } => {
            matches!(
                op,
                ast::BinaryOperator::Plus
                    | ast::BinaryOperator::Minus
                    | ast::BinaryOperator::Multiply
                    | ast::BinaryOperator::Divide
            ) && null_over_no_rows(left)
                && null_over_no_rows(right)
        }
        ast::Expr::Value(v) => matches!(v.value, ast::Value::Number(..)),
        ast::Expr::Function(f) => {
            let name = crate::sql::bind::function_name(&f.name);
            matches!(name.as_str(), "SUM" | "AVG" | "MIN" | "MAX") && f.over.is_none()
        }
        _ => false,
    }
}

impl crate::sql::bind::SubqueryPlanner for Subqueries<'_> {
    fn plan_subquery(&self, query: &ast::Query, kind: InitKind, scope: &Scope) -> Result<(usize, usize)> {
        let outer =
            OuterQuery { scope: scope.clone(), read: RefCell::default(), unnesting: None, enclosing: Some(self) };
        let (block, notes) = plan_block(query, self.session, self.f, self.named, Some(&outer))?;
        let slot = self.f.subquery_slots.get();
        self.f.subquery_slots.set(slot + 1);
        let width = block.columns.len();
        let correlation = outer.read.take();
        if correlation.is_empty() {
            let mut planned = self.planned.borrow_mut();
            planned.init.push((InitPlan { block: block.block, slot, kind }, block.tree));
            planned.notes.extend(notes);
        } else if !self.correlated_allowed.get() {
            return Err(Error::unsupported(CORRELATED_PLACES));
        } else {
            let run_cost = block.estimate.map(|e| e.cost);
            let mut unnestable = self.plan_unnested(query, kind, scope, slot, run_cost);
            // Its notes on the build side of a hash join are the unnesting's to give.
            let (swap_notes, notes): (Vec<String>, Vec<String>) = match &mut unnestable {
                Some(_) => notes.into_iter().partition(|n| n.contains("SWAP_JOIN_INPUTS")),
                None => (Vec::new(), notes),
            };
            if let Some(u) = &mut unnestable {
                u.swap_notes = swap_notes;
            }
            let plan = CorrelatedPlan { block: block.block, slot, kind, correlation, cache: RefCell::default() };
            let mut planned = self.planned.borrow_mut();
            planned.correlated.push((plan, block.tree));
            planned.unnestable.extend(unnestable);
            planned.notes.extend(notes);
        }
        Ok((slot, width))
    }

    fn window_call(&self, call: crate::exec::window::WindowCall) -> Option<usize> {
        if !self.windows_allowed.get() {
            return None;
        }
        let mut windows = self.windows.borrow_mut();
        windows.push(call);
        Some(windows.len() - 1)
    }

    fn outer_char_length(&self, slot: usize) -> Option<u32> {
        let outer = self.outer?;
        let read = outer.read.borrow();
        match read.iter().find(|(s, _)| *s == slot) {
            Some((_, Expr::Column(c))) => outer.scope.char_lengths.get(*c).copied().flatten(),
            _ => None,
        }
    }

    fn outer_column(&self, qualifier: Option<&str>, name: &str, e: &ast::Expr) -> Option<Result<Expr>> {
        let outer = self.outer?;
        let value = match outer.scope.resolve(qualifier, name, e) {
            Ok(column) if qualifier.is_none() => outer.scope.column_value(column),
            Ok(column) => Expr::Column(column),
            // A qualifier naming an item here: a column missing from it is missing.
            Err(missing @ Error::UnknownName { kind: "column", .. }) if qualifier.is_some() => {
                return Some(Err(missing));
            }
            Err(Error::UnknownName { .. }) => {
                // A column of a query further out, read by the query around as its own
                // outer value. Neither level can then become a join: the conditions
                // taken out would read a row that the join does not have.
                let enclosing = outer.enclosing?;
                let through = match enclosing.outer_column(qualifier, name, e)? {
                    Ok(through) => through,
                    Err(other) => return Some(Err(other)),
                };
                if let Some(u) = &outer.unnesting {
                    u.refuse();
                }
                if let Some(u) = enclosing.unnesting() {
                    u.refuse();
                }
                through
            }
            Err(other) => return Some(Err(other)),
        };
        // An outer column read outside the WHERE conjuncts taken out (the select list,
        // an ON condition) would have no outer row to read once unnested.
        if let Some(u) = &outer.unnesting
            && !self.in_where.get()
        {
            u.refuse();
        }
        let mut read = outer.read.borrow_mut();
        let slot = match read.iter().find(|(_, e)| *e == value) {
            Some((slot, _)) => *slot,
            None => {
                let slot = self.f.outer_slots.get();
                self.f.outer_slots.set(slot + 1);
                read.push((slot, value));
                slot
            }
        };
        let shown = qualifier.map_or_else(|| format!("\"{name}\""), |q| format!("\"{q}\".\"{name}\""));
        Some(Ok(Expr::Outer { slot, name: shown.into() }))
    }
}
