//! The planner: turns a SELECT into a row source and a chain of pipeline stages, and
//! records the plan as Oracle's EXPLAIN PLAN shows it.
//!
//! The stage order follows SQL's logical order, as Oracle's row sources do:
//!
//! ```text
//!  source ─► FILTER (WHERE) ─► COUNT STOPKEY (ROWNUM <= n) ─► COUNT (ROWNUM)
//!         ─► SORT AGGREGATE / HASH GROUP BY (+ HAVING) ─► project ─► HASH UNIQUE (DISTINCT)
//!         ─► SORT ORDER BY ─► FETCH FIRST / OFFSET ─► result
//! ```
//!
//! A WHERE clause over a full scan runs inside the scan's pipeline on rows still in their
//! block, and EXPLAIN shows it as the `filter(...)` of TABLE ACCESS FULL, as Oracle does.
//!
//! Once the stages are built, the optimizer chooses how to read the table
//! (`Builder::choose_access`): for an index path the source becomes an
//! index access, the conjuncts the key range answers leave the filter (shown as
//! `access(...)`), the table's line becomes the index's line (under TABLE ACCESS BY INDEX
//! ROWID when rows are fetched), and a sort the index order makes needless is dropped.
//! Each [`PlanLine`] records where its rows leave the pipeline (for row-source probes) and
//! how its estimated rows follow from its child's ([`RowsRule`]).
//!
//! A plan may run again (a cursor keeps it): its stages are reset, and an index path
//! whose range bind variables give keeps the conjuncts to compute the range anew from
//! each execution's values ([`Planned::rebind_range`]). What planning took as constants
//! from one execution (SYSDATE, binds that size the plan) is recorded in the statement's
//! [`FunctionContext::taken`] for the cursor to check.

use super::bind::{Binder, Grouping, Scope, canonical, contains_aggregate, ident_name, literal, position_of};
use super::optimizer::{self, hints, hints::Hints};
use super::views;
use crate::catalog::TableDef;
use crate::db::Session;
use crate::error::{Error, Result};
use crate::exec::pipeline::ConsumeRow;
use crate::exec::{
    AggregateStage, CollectStage, FilterStage, LimitStage, ProjectStage, RowSink, RownumStage, SortKey, SortStage,
    Source, Stage,
};
use crate::expr::Expr;
use crate::expr::functions::FunctionContext;
use crate::expr::predicates;
use crate::index::KeyBound;
use crate::types::{Datum, Value};
use sqlparser::ast::{self, BinaryOperator, Spanned};
use std::sync::Arc;

/// One line of a plan, as EXPLAIN PLAN prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanLine {
    pub operation: String,
    pub name: String,
    /// `access(...)` / `filter(...)` texts for the predicate section.
    pub predicates: Vec<String>,
    /// Where the line's rows leave the pipeline: after `stages[..output_stage]`
    /// ([`RESULT_ROWS`] for the statement's result, [`SOURCE_ROWS`] for a row source inside
    /// the pipeline's source, such as the index scan under a table access by rowid).
    pub output_stage: usize,
    /// How the line's estimated rows follow from those of the line below it.
    pub rows_rule: RowsRule,
    /// The optimizer's estimate: rows, and cost in single-block reads.
    pub estimate: Option<Estimate>,
}

/// `output_stage` of the line whose rows are the statement's result.
pub const RESULT_ROWS: usize = usize::MAX;
/// `output_stage` of a line whose figures its source gathers itself.
pub const SOURCE_ROWS: usize = usize::MAX - 1;

/// How a line's estimated rows follow from its child's.
#[derive(Debug, Clone, PartialEq)]
pub enum RowsRule {
    /// No estimate (a table without statistics whose plan had nothing to choose).
    Unknown,
    /// The source's own estimate.
    Source(f64),
    /// As many as the child.
    Same,
    /// The child's times a selectivity.
    Fraction(f64),
    /// At most this many.
    AtMost(u64),
    /// At most this many groups (or one row for an aggregate without GROUP BY).
    Groups(Option<f64>),
}

/// The optimizer's estimate for one line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub rows: f64,
    pub cost: f64,
}

impl PlanLine {
    fn new(operation: &str, name: &str) -> PlanLine {
        PlanLine {
            operation: operation.into(),
            name: name.into(),
            predicates: Vec::new(),
            output_stage: 0,
            rows_rule: RowsRule::Same,
            estimate: None,
        }
    }
}

/// A planned query, ready to run.
pub struct Planned<'a> {
    pub source: Source,
    pub stages: Vec<Stage<'a>>,
    pub columns: Vec<String>,
    /// Plan lines from the source up (the last is the top of the tree).
    pub lines: Vec<PlanLine>,
    pub notes: Vec<String>,
    /// The statement asked for row-source statistics (`GATHER_PLAN_STATISTICS`).
    pub gather_plan_statistics: bool,
    /// How the index path's key range follows from bind variables, when it does.
    pub rebind: Option<RangeRebind>,
}

/// An index path whose key range bind variables give: a later execution computes the
/// range again from its own values ([`Planned::rebind_range`]).
pub struct RangeRebind {
    /// The WHERE clause's conjuncts, their bounds those of the last values.
    conjuncts: Vec<predicates::Conjunct>,
    /// The index's key column types.
    types: Vec<crate::types::DataType>,
    /// The conjuncts the planned range used, and those it answers (left out of the
    /// filter): the range of other values must use and answer the same.
    used: Vec<usize>,
    answered: Vec<usize>,
}

impl<'a> Planned<'a> {
    /// Sets the index path's key range for an execution with bind values `binds`.
    /// Returns false when these values give a range of another shape (a conjunct the
    /// plan answers with the range no longer bounds it, as `col > :lo` with a NULL): the
    /// plan does not fit them and the statement must be planned again.
    pub fn rebind_range(&mut self, binds: &[Value]) -> Result<bool> {
        let (Some(rebind), Source::Index(access)) = (&mut self.rebind, &mut self.source) else { return Ok(true) };
        predicates::rebind(&mut rebind.conjuncts, binds);
        let range = optimizer::key_range(&rebind.types, &rebind.conjuncts, &access.index);
        if range.used[..] != rebind.used[..] || range.answered[..] != rebind.answered[..] {
            return Ok(false);
        }
        rekey_bound(&mut access.lower, &range.lower, &rebind.types)?;
        rekey_bound(&mut access.upper, &range.upper, &rebind.types)?;
        Ok(true)
    }

    /// The same plan with its result rows handed to `consume` instead of collected.
    pub fn into_sink(mut self, consume: Box<dyn ConsumeRow + 'a>) -> Planned<'a> {
        let last = self.stages.last_mut().expect("a plan ends with its collect stage");
        assert!(matches!(last, Stage::Collect(_)), "a plan ends with its collect stage");
        *last = Stage::Sink(RowSink { visible: self.columns.len(), consume });
        self
    }
}

/// Plans a query; its result rows are collected (see [`Planned::into_sink`]).
pub fn plan_query<'a>(query: &ast::Query, session: &Session, f: &FunctionContext) -> Result<Planned<'a>> {
    reject_unsupported_query_parts(query)?;
    let ast::SetExpr::Select(select) = &*query.body else {
        return Err(unsupported(format!("query form {}", query.body), &*query.body));
    };
    reject_unsupported_select_parts(select)?;
    let mut b =
        Builder { session, f, stages: Vec::new(), lines: Vec::new(), notes: Vec::new(), table: None, rebind: None };
    let (source, mut scope) = b.source(select)?;
    b.where_clause(select, &mut scope)?;
    b.rownum(select, query, &mut scope);
    let order_by: Vec<&ast::Expr> = match query.order_by.as_ref().map(|o| &o.kind) {
        Some(ast::OrderByKind::Expressions(items)) => items.iter().map(|i| &i.expr).collect(),
        _ => Vec::new(),
    };
    let (exprs, columns, grouping) = b.aggregate(select, &scope, &order_by)?;
    b.project_order_and_limit(query, select, &scope, grouping.as_ref(), exprs, &columns)?;
    let hints = hints::parse(&select.optimizer_hints.iter().map(|h| h.text.as_str()).collect::<Vec<_>>());
    let mut source = source;
    if let Source::TableScan { table, columns_read } = &mut source {
        *columns_read = columns_read_by(&b.stages, table.columns.len());
        let table = table.clone();
        let columns_read = columns_read.clone();
        if let Some(index_source) = b.choose_access(&table, select, &hints)? {
            source = index_source;
        } else if let Some(inmemory) = b.inmemory_access(&table, select, columns_read, &hints) {
            source = inmemory;
        }
    } else {
        b.notes.extend(
            hints
                .hints
                .iter()
                .filter(|h| h.table.is_some())
                .map(|h| format!("hint not used: {} (no table to apply it to)", h.text)),
        );
        b.notes.extend(hints.ignored.iter().cloned());
    }
    let visible = columns.len();
    b.stages.push(Stage::Collect(CollectStage::new(visible)));
    b.line("SELECT STATEMENT", "", RowsRule::Same).output_stage = RESULT_ROWS;
    estimate_lines(&mut b.lines);
    let gather = hints.gather_plan_statistics();
    Ok(Planned {
        source,
        stages: b.stages,
        columns,
        lines: b.lines,
        notes: b.notes,
        gather_plan_statistics: gather,
        rebind: b.rebind,
    })
}

/// Fills each line's estimate from the source's up, following the lines' rules. The cost
/// of every line is its source's (lioscope adds no cost for in-memory operations).
fn estimate_lines(lines: &mut [PlanLine]) {
    let mut below: Option<Estimate> = None;
    for line in lines.iter_mut() {
        let estimate = match (&line.rows_rule, below) {
            (RowsRule::Unknown, _) => None,
            (RowsRule::Source(rows), _) => line.estimate.or(Some(Estimate { rows: *rows, cost: 0.0 })),
            (_, None) => None,
            (RowsRule::Same, Some(e)) => Some(e),
            (RowsRule::Fraction(f), Some(e)) => Some(Estimate { rows: e.rows * f, ..e }),
            (RowsRule::AtMost(n), Some(e)) => Some(Estimate { rows: e.rows.min(*n as f64), ..e }),
            (RowsRule::Groups(g), Some(e)) => {
                Some(Estimate { rows: g.map_or(e.rows, |g| g.min(e.rows.max(1.0))), ..e })
            }
        };
        line.estimate = estimate;
        below = estimate;
    }
}

struct Builder<'s, 'a> {
    session: &'s Session,
    /// The statement's context: SYSDATE and the bind variables (their values peeked at
    /// for the optimizer's estimates, as Oracle peeks at binds when it plans).
    f: &'s FunctionContext,
    stages: Vec<Stage<'a>>,
    lines: Vec<PlanLine>,
    notes: Vec<String>,
    /// The table the query reads, if it reads one.
    table: Option<Arc<TableDef>>,
    /// Set when the index path's range comes from bind variables.
    rebind: Option<RangeRebind>,
}

/// The source columns after the project stage, and how they are bound.
struct GroupingScope {
    grouping: Grouping,
}

impl<'a> Builder<'_, 'a> {
    /// Adds a line whose rows are what leaves the stages pushed so far.
    fn line(&mut self, operation: &str, name: &str, rows_rule: RowsRule) -> &mut PlanLine {
        let mut line = PlanLine::new(operation, name);
        line.output_stage = self.stages.len();
        line.rows_rule = rows_rule;
        self.lines.push(line);
        self.lines.last_mut().expect("just pushed")
    }

    /// The last line's rows are what leaves the stages pushed so far (its stage was
    /// pushed after the line).
    fn ends_here(&mut self) {
        let end = self.stages.len();
        if let Some(l) = self.lines.last_mut() {
            l.output_stage = end;
        }
    }

    fn source(&mut self, select: &ast::Select) -> Result<(Source, Scope)> {
        let relation = match select.from.as_slice() {
            [] => None,
            [one] if one.joins.is_empty() => Some(&one.relation),
            [one] => return Err(unsupported("JOIN".into(), &one.joins[0])),
            [_, second, ..] => return Err(unsupported("more than one table in FROM (joins)".into(), second)),
        };
        let Some(ast::TableFactor::Table { name, alias, args, .. }) = relation else {
            return match relation {
                None => self.dual(select, Vec::new()),
                Some(other) => Err(unsupported(format!("FROM {other}"), other)),
            };
        };
        let table_name = super::bind::function_name(name);
        let mut qualifiers = vec![table_name.clone()];
        if let Some(a) = alias {
            qualifiers.push(ident_name(&a.name));
        }
        if let Some(args) = args {
            return self.table_function(&table_name, args, alias.as_ref(), qualifiers, name);
        }
        if table_name == "DUAL" {
            return self.dual(select, qualifiers);
        }
        if !select.connect_by.is_empty() {
            return Err(unsupported("CONNECT BY other than the DUAL row generator".into(), name));
        }
        if let Some((columns, rows)) = views::fixed_view(&table_name, self.session)? {
            self.line("FIXED TABLE FULL", &table_name, RowsRule::Source(rows.len() as f64));
            return Ok((Source::Rows(rows), Scope { names: columns, qualifiers, ..Default::default() }));
        }
        let table = self.session.db.catalog.table(&table_name).ok_or_else(|| Error::UnknownName {
            kind: "table or view",
            name: table_name.clone(),
            position: position_of(name),
        })?;
        let names = table.columns.iter().map(|c| c.name.clone()).collect();
        let char_lengths = table
            .columns
            .iter()
            .map(|c| match c.data_type {
                crate::types::DataType::Char { len } => Some(len),
                _ => None,
            })
            .collect();
        self.line("TABLE ACCESS FULL", &table.name, RowsRule::Unknown);
        self.table = Some(table.clone());
        let width = table.columns.len();
        Ok((
            Source::TableScan { table, columns_read: vec![true; width] },
            Scope { names, qualifiers, char_lengths, ..Default::default() },
        ))
    }

    /// At most how many groups GROUP BY `keys` makes: the product of the columns'
    /// distinct values when every key is a column of an analyzed table.
    fn group_estimate(&self, keys: &[Expr]) -> Option<f64> {
        let stats = self.table.as_ref()?.stats.as_ref()?;
        keys.iter().try_fold(1.0, |product, k| match k {
            Expr::Column(c) => stats.columns.get(*c).map(|s| product * (s.num_distinct.max(1) as f64)),
            _ => None,
        })
    }

    /// Chooses how to read `table` (the plan's source is its full scan so far), records
    /// the estimates and notes, and rewrites the source and its lines for an index path.
    fn choose_access(&mut self, table: &Arc<TableDef>, select: &ast::Select, hints: &Hints) -> Result<Option<Source>> {
        let indexes = self.session.db.catalog.indexes_of(table.object_id);
        // One path only: nothing to choose, and no statistics to estimate rows from. The
        // optimizer still judges the hints, for the notes.
        let full_scan_only = table.stats.is_none() && indexes.is_empty();
        let segment_blocks =
            if full_scan_only { None } else { blocks_to_estimate_from(&self.session.access_context(), table)? };
        let conjuncts = match self.stages.first() {
            Some(Stage::Filter(f)) => predicates::conjuncts(&f.predicate, &self.f.binds),
            _ => Vec::new(),
        };
        // Every table column the query reads: an index holding them all answers alone.
        let columns_read = columns_read_by(&self.stages, table.columns.len());
        let alias = match select.from.first().map(|f| &f.relation) {
            Some(ast::TableFactor::Table { alias: Some(a), .. }) => Some(ident_name(&a.name)),
            _ => None,
        };
        let model = cost_model(self.session);
        let order_by = sorted_columns(&self.stages);
        let query = optimizer::Query {
            table,
            alias: alias.as_deref(),
            segment_blocks,
            conjuncts: &conjuncts,
            columns_read: &columns_read,
            order_by: &order_by,
        };
        let decision = optimizer::choose(&query, &indexes, hints, &model);
        self.notes.extend(decision.notes.iter().cloned());
        if full_scan_only {
            return Ok(None);
        }
        let estimate = Estimate { rows: decision.rows, cost: decision.path.cost() };
        let scan_line = self.lines.iter_mut().find(|l| l.operation == "TABLE ACCESS FULL").expect("the table's line");
        scan_line.rows_rule = RowsRule::Source(decision.rows);
        scan_line.estimate = Some(estimate);
        match decision.path {
            optimizer::AccessPath::Full { .. } => Ok(None),
            optimizer::AccessPath::Index(path) => {
                self.index_path(table, *path, &conjuncts, columns_read, estimate).map(Some)
            }
        }
    }

    /// TABLE ACCESS INMEMORY FULL in place of the full scan the optimizer chose, when the
    /// table is marked INMEMORY, the column store is on (`inmemory_size` above 0), every
    /// column the query reads is in memory, and no NO_INMEMORY hint names the table. An
    /// INMEMORY hint that cannot be followed is noted, as other hints are.
    fn inmemory_access(
        &mut self,
        table: &Arc<TableDef>,
        select: &ast::Select,
        columns_read: Vec<bool>,
        hints: &Hints,
    ) -> Option<Source> {
        let alias = match select.from.first().map(|f| &f.relation) {
            Some(ast::TableFactor::Table { alias: Some(a), .. }) => Some(ident_name(&a.name)),
            _ => None,
        };
        let ours =
            |h: &&hints::Hint| h.table.as_deref().is_some_and(|t| t == table.name || Some(t) == alias.as_deref());
        let table_hints: Vec<&hints::Hint> = hints.hints.iter().filter(ours).collect();
        let asked = table_hints.iter().find(|h| h.kind == hints::HintKind::InMemory);
        if table_hints.iter().any(|h| h.kind == hints::HintKind::NoInMemory) {
            return None;
        }
        let size = self.session.parameter_u64(crate::db::params::INMEMORY_SIZE);
        let refusal = if table.inmemory.is_none() {
            Some(format!("{} is not INMEMORY", table.name))
        } else if size == 0 {
            Some("inmemory_size is 0: the column store is off".to_owned())
        } else if !crate::exec::inmemory_source::columns_in_memory(table, &columns_read) {
            Some(format!("the query reads a column of {} that is NO INMEMORY", table.name))
        } else {
            None
        };
        if let Some(why) = refusal {
            if let Some(h) = asked {
                self.notes.push(format!("hint not used: {} ({why})", h.text));
            }
            return None;
        }
        let prune = !table_hints.iter().any(|h| h.kind == hints::HintKind::InMemoryPruning(false));
        if let Some(line) = self.lines.iter_mut().find(|l| l.operation == "TABLE ACCESS FULL") {
            line.operation = "TABLE ACCESS INMEMORY FULL".into();
        }
        Some(Source::InMemory(Box::new(crate::exec::inmemory_source::InMemoryAccess {
            table: table.clone(),
            columns_read,
            prune,
        })))
    }

    /// Rewrites the plan for an index path: the WHERE clause loses the conjuncts the key
    /// range answers, and the table's line becomes the index's (and TABLE ACCESS BY INDEX
    /// ROWID above it when rows are fetched from the table). Returns the new source.
    fn index_path(
        &mut self,
        table: &Arc<TableDef>,
        path: optimizer::IndexPath,
        conjuncts: &[predicates::Conjunct],
        columns_read: Vec<bool>,
        estimate: Estimate,
    ) -> Result<Source> {
        let names: Vec<String> = table.columns.iter().map(|c| c.name.clone()).collect();
        let types = path.index.key_types(table);
        let (lower, upper) = (key_bound(&path.lower, &types)?, key_bound(&path.upper, &types)?);
        let mut binds_bound = false;
        for &i in &path.bounds {
            conjuncts[i].expr.visit_binds(&mut |_| binds_bound = true);
        }
        if binds_bound {
            self.rebind = Some(RangeRebind {
                conjuncts: conjuncts.to_vec(),
                types: types.clone(),
                used: path.bounds.clone(),
                answered: path.access.clone(),
            });
        }
        let access_text: Vec<String> =
            path.bounds.iter().map(|&i| conjuncts[i].expr.display(&names).to_string()).collect();
        let residual: Vec<Expr> = conjuncts
            .iter()
            .enumerate()
            .filter(|(i, _)| !path.access.contains(i))
            .map(|(_, c)| c.expr.clone())
            .collect();
        let filter_text = residual.iter().map(|e| e.display(&names).to_string()).collect::<Vec<_>>().join(" AND ");
        // The WHERE clause keeps only what the range does not answer.
        if matches!(self.stages.first(), Some(Stage::Filter(_))) {
            match residual.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b))) {
                Some(p) => self.stages[0] = Stage::Filter(FilterStage::new(p)),
                None => {
                    self.stages.remove(0);
                    for l in &mut self.lines {
                        if l.output_stage >= 1 && l.output_stage < SOURCE_ROWS {
                            l.output_stage -= 1;
                        }
                    }
                }
            }
        }
        if path.ordered {
            self.drop_sort();
        }
        let scan_at = self.lines.iter().position(|l| l.operation == "TABLE ACCESS FULL").expect("the table's line");
        let output = self.lines[scan_at].output_stage;
        let mut index_line = PlanLine::new(path.kind.operation(path.descending), &path.index.name);
        if !access_text.is_empty() {
            index_line.predicates.push(format!("access({})", access_text.join(" AND ")));
        }
        let filter = (!filter_text.is_empty()).then(|| format!("filter({filter_text})"));
        if path.table_access {
            let by_rowid = &mut self.lines[scan_at];
            by_rowid.operation = "TABLE ACCESS BY INDEX ROWID".into();
            by_rowid.predicates = filter.into_iter().collect();
            index_line.output_stage = SOURCE_ROWS;
            index_line.rows_rule = RowsRule::Source(path.entries);
            index_line.estimate = Some(Estimate { rows: path.entries, cost: path.index_cost });
            self.lines.insert(scan_at, index_line);
        } else {
            index_line.predicates.extend(filter);
            index_line.output_stage = output;
            index_line.rows_rule = RowsRule::Source(estimate.rows);
            index_line.estimate = Some(estimate);
            self.lines[scan_at] = index_line;
        }
        Ok(Source::Index(Box::new(crate::exec::index_source::IndexAccess {
            table: table.clone(),
            index: path.index.clone(),
            kind: path.kind,
            lower,
            upper,
            descending: path.descending,
            table_access: path.table_access,
            columns_read,
            figures: Default::default(),
            rowid_buffer: Default::default(),
        })))
    }

    /// Removes the ORDER BY's sort (its stage and SORT ORDER BY line): the access path
    /// delivers the order.
    fn drop_sort(&mut self) {
        let Some(at) = self.stages.iter().position(|s| matches!(s, Stage::Sort(_))) else { return };
        self.stages.remove(at);
        self.lines.retain(|l| l.operation != "SORT ORDER BY");
        for l in &mut self.lines {
            if l.output_stage > at && l.output_stage < SOURCE_ROWS {
                l.output_stage -= 1;
            }
        }
    }

    /// DUAL, or the `CONNECT BY LEVEL <= n` row generator over it.
    fn dual(&mut self, select: &ast::Select, qualifiers: Vec<String>) -> Result<(Source, Scope)> {
        match select.connect_by.as_slice() {
            [] => {
                self.line("FAST DUAL", "", RowsRule::Source(1.0));
                Ok((Source::Dual, Scope { names: vec!["DUMMY".into()], qualifiers, ..Default::default() }))
            }
            [ast::ConnectByKind::ConnectBy { relationships, .. }] if relationships.len() == 1 => {
                let rows = level_limit(&relationships[0], self.f)?;
                self.line("FAST DUAL", "", RowsRule::Source(1.0));
                self.line("CONNECT BY WITHOUT FILTERING", "", RowsRule::Source(rows as f64));
                let scope = Scope { names: vec!["LEVEL".into()], qualifiers, level: Some(0), ..Default::default() };
                Ok((Source::ConnectBy { rows }, scope))
            }
            _ => Err(Error::unsupported("CONNECT BY other than CONNECT BY LEVEL <= n over DUAL")),
        }
    }

    fn table_function(
        &mut self,
        name: &str,
        args: &ast::TableFunctionArgs,
        alias: Option<&ast::TableAlias>,
        qualifiers: Vec<String>,
        at: &ast::ObjectName,
    ) -> Result<(Source, Scope)> {
        if name != "GENERATE_SERIES" {
            return Err(Error::UnknownName { kind: "table function", name: name.into(), position: position_of(at) });
        }
        let bounds = args
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => constant_int(e, self.f, "GENERATE_SERIES"),
                other => Err(unsupported(format!("argument {other}"), at)),
            })
            .collect::<Result<Vec<_>>>()?;
        let [start, stop] = bounds[..] else {
            return Err(Error::value(
                "GENERATE_SERIES",
                format!("expects (start, stop), got {} arguments", bounds.len()),
            ));
        };
        let column = alias
            .and_then(|a| a.columns.first())
            .map(|c| ident_name(&c.name))
            .unwrap_or_else(|| "GENERATE_SERIES".into());
        self.line("COLLECTION ITERATOR", "GENERATE_SERIES", RowsRule::Source((stop - start + 1).max(0) as f64));
        Ok((Source::Series { start, stop }, Scope { names: vec![column], qualifiers, ..Default::default() }))
    }

    fn where_clause(&mut self, select: &ast::Select, scope: &mut Scope) -> Result<()> {
        let Some(selection) = &select.selection else { return Ok(()) };
        let mut conjuncts = Vec::new();
        split_and(selection, &mut conjuncts);
        let mut stopkey: Option<u64> = None;
        let mut rest = Vec::new();
        for c in conjuncts {
            match rownum_limit(c, self.f)? {
                Some(n) => stopkey = Some(stopkey.map_or(n, |s| s.min(n))),
                None => rest.push(c),
            }
        }
        let binder = Binder { scope, f: self.f, grouping: None };
        let mut predicate: Option<Expr> = None;
        for c in rest {
            let e = binder.bind(c)?;
            predicate = Some(match predicate {
                None => e,
                Some(p) => Expr::And(Box::new(p), Box::new(e)),
            });
        }
        if let Some(p) = predicate {
            if !p.is_condition() {
                return Err(Error::InvalidValue {
                    context: "WHERE".into(),
                    message: format!(
                        "{} is a value, not a condition",
                        p.display(&scope.names).to_string().replace('"', "")
                    ),
                });
            }
            let text = format!("filter({})", p.display(&scope.names));
            match self.lines.last_mut() {
                Some(line) if line.operation == "TABLE ACCESS FULL" || line.operation == "FIXED TABLE FULL" => {
                    line.predicates.push(text);
                    // A table's estimate comes from the optimizer, which sees the WHERE
                    // clause; a fixed view's rows are narrowed by the default selectivity.
                    if let RowsRule::Source(rows) = line.rows_rule {
                        line.rows_rule =
                            RowsRule::Source(rows * super::optimizer::selectivity::default_selectivity(&p));
                    }
                }
                _ => {
                    let fraction = super::optimizer::selectivity::default_selectivity(&p);
                    self.line("FILTER", "", RowsRule::Fraction(fraction)).predicates.push(text);
                }
            }
            self.stages.push(Stage::Filter(FilterStage::new(p)));
            self.ends_here();
        }
        if let Some(n) = stopkey {
            self.stages.push(Stage::Limit(LimitStage::new(0, Some(n))));
            self.line("COUNT STOPKEY", "", RowsRule::AtMost(n)).predicates.push(format!("filter(ROWNUM<={n})"));
        }
        Ok(())
    }

    /// Adds the ROWNUM column when the select list or ORDER BY reads it.
    fn rownum(&mut self, select: &ast::Select, query: &ast::Query, scope: &mut Scope) {
        let mut texts: Vec<String> = select.projection.iter().map(|p| p.to_string()).collect();
        if let Some(o) = &query.order_by {
            texts.push(o.to_string());
        }
        if !texts.iter().any(|t| mentions_rownum(t)) {
            return;
        }
        let width = scope.names.len();
        self.stages.push(Stage::Rownum(RownumStage { width, next: 0 }));
        self.line("COUNT", "", RowsRule::Same);
        scope.names.push("ROWNUM".into());
        scope.rownum = Some(width);
    }

    /// Adds aggregation, if the query aggregates; returns the select-list expressions (over
    /// the aggregate's output when it does), the output column names and the grouping.
    fn aggregate(
        &mut self,
        select: &ast::Select,
        scope: &Scope,
        order_by: &[&ast::Expr],
    ) -> Result<(Vec<Expr>, Vec<String>, Option<GroupingScope>)> {
        let group_by: &[ast::Expr] = match &select.group_by {
            ast::GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs,
            other => return Err(Error::unsupported(format!("GROUP BY form {other}"))),
        };
        let aggregate = !group_by.is_empty()
            || select.having.is_some()
            || select.projection.iter().any(|p| matches!(p, ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } if contains_aggregate(e)));
        let source_binder = Binder { scope, f: self.f, grouping: None };
        let (exprs, names, grouping) = if aggregate {
            let grouping = Grouping { keys: group_by.iter().map(canonical).collect(), ..Default::default() };
            let keys = group_by.iter().map(|g| source_binder.bind(g)).collect::<Result<Vec<_>>>()?;
            let post = Binder { scope, f: self.f, grouping: Some(&grouping) };
            let (exprs, names) = self.select_list(select, &post, scope)?;
            let having = select.having.as_ref().map(|h| post.bind(h)).transpose()?;
            // ORDER BY may name aggregates the select list does not: register them now,
            // while the aggregate stage is still being built.
            for e in order_by.iter().filter(|e| contains_aggregate(e)) {
                post.bind(e)?;
            }
            let calls = grouping.aggregates.borrow().clone();
            let groups = if keys.is_empty() { Some(1.0) } else { self.group_estimate(&keys) };
            self.line(if keys.is_empty() { "SORT AGGREGATE" } else { "HASH GROUP BY" }, "", RowsRule::Groups(groups));
            if let Some(h) = &having {
                let mut names: Vec<String> = group_by.iter().map(canonical).collect();
                names.extend(calls.iter().map(|c| c.text.replace(' ', "")));
                self.lines
                    .last_mut()
                    .expect("just pushed")
                    .predicates
                    .push(format!("filter({})", h.display(&names).to_string().replace('"', "")));
            }
            self.stages.push(Stage::Aggregate(AggregateStage::new(keys, calls, having)));
            self.ends_here();
            (exprs, names, Some(GroupingScope { grouping }))
        } else {
            let (exprs, names) = self.select_list(select, &source_binder, scope)?;
            (exprs, names, None)
        };
        Ok((exprs, names, grouping))
    }
    fn select_list(
        &self,
        select: &ast::Select,
        binder: &Binder<'_>,
        scope: &Scope,
    ) -> Result<(Vec<Expr>, Vec<String>)> {
        let mut exprs = Vec::new();
        let mut names = Vec::new();
        for item in &select.projection {
            match item {
                ast::SelectItem::UnnamedExpr(e) => {
                    exprs.push(binder.bind(e)?);
                    names.push(output_name(e));
                }
                ast::SelectItem::ExprWithAlias { expr, alias } => {
                    exprs.push(binder.bind(expr)?);
                    names.push(ident_name(alias));
                }
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    if binder.grouping.is_some() {
                        return Err(Error::InvalidValue {
                            context: "*".into(),
                            message: "not a GROUP BY expression".into(),
                        });
                    }
                    for (i, n) in scope.names.iter().enumerate() {
                        if Some(i) != scope.rownum {
                            exprs.push(Expr::Column(i));
                            names.push(n.clone());
                        }
                    }
                }
                other => return Err(Error::unsupported(format!("select item {other}"))),
            }
        }
        Ok((exprs, names))
    }

    /// Adds the projection (select list plus hidden ORDER BY keys), DISTINCT, the sort
    /// and FETCH FIRST / OFFSET / LIMIT.
    fn project_order_and_limit(
        &mut self,
        query: &ast::Query,
        select: &ast::Select,
        scope: &Scope,
        grouping: Option<&GroupingScope>,
        mut exprs: Vec<Expr>,
        columns: &[String],
    ) -> Result<()> {
        let visible = exprs.len();
        let mut keys = Vec::new();
        if let Some(order_by) = &query.order_by {
            let ast::OrderByKind::Expressions(items) = &order_by.kind else {
                return Err(Error::unsupported(format!("{order_by}")));
            };
            for item in items {
                let descending = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                let nulls_first = item.options.nulls_first.unwrap_or(descending);
                let column = self.order_key(&item.expr, scope, grouping, &mut exprs, columns, visible)?;
                keys.push(SortKey { column, descending, nulls_first });
            }
        }
        let distinct = match &select.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(other) => return Err(Error::unsupported(format!("{other}"))),
        };
        if distinct && exprs.len() > visible {
            return Err(Error::InvalidValue {
                context: "ORDER BY".into(),
                message: "ORDER BY items must appear in the select list if SELECT DISTINCT is specified".into(),
            });
        }
        let width = exprs.len();
        self.stages.push(Stage::Project(ProjectStage::new(exprs)));
        if distinct {
            let keys = (0..visible).map(Expr::Column).collect();
            self.stages.push(Stage::Aggregate(AggregateStage::new(keys, Vec::new(), None)));
            self.line("HASH UNIQUE", "", RowsRule::Groups(None));
        }
        if !keys.is_empty() {
            self.stages.push(Stage::Sort(SortStage { keys, width, rows: Vec::new(), sorted: 0 }));
            self.line("SORT ORDER BY", "", RowsRule::Same);
        }
        self.limit(query)
    }

    /// The output column an ORDER BY item sorts on: a select-list position, an output
    /// name, a select-list expression, or a hidden column added for it.
    fn order_key(
        &self,
        e: &ast::Expr,
        scope: &Scope,
        grouping: Option<&GroupingScope>,
        exprs: &mut Vec<Expr>,
        columns: &[String],
        visible: usize,
    ) -> Result<usize> {
        if let ast::Expr::Value(v) = e
            && let Datum::Int(k) = literal(&v.value, e)?
        {
            return usize::try_from(k).ok().filter(|k| (1..=visible).contains(k)).map(|k| k - 1).ok_or_else(|| {
                Error::InvalidValue {
                    context: "ORDER BY".into(),
                    message: format!("position {k} is not in the select list"),
                }
            });
        }
        if let ast::Expr::Identifier(ident) = e {
            let name = ident_name(ident);
            if let Some(i) = columns.iter().position(|c| *c == name) {
                return Ok(i);
            }
        }
        let binder = Binder { scope, f: self.f, grouping: grouping.map(|g| &g.grouping) };
        let bound = binder.bind(e)?;
        if let Some(i) = exprs[..visible].iter().position(|x| *x == bound) {
            return Ok(i);
        }
        exprs.push(bound);
        Ok(exprs.len() - 1)
    }

    fn limit(&mut self, query: &ast::Query) -> Result<()> {
        let (mut limit, mut offset) = (None, 0u64);
        match &query.limit_clause {
            None => {}
            Some(ast::LimitClause::LimitOffset { limit: l, offset: o, limit_by }) if limit_by.is_empty() => {
                limit = l.as_ref().map(|e| constant_count(e, self.f, "LIMIT")).transpose()?;
                offset = o.as_ref().map(|o| constant_count(&o.value, self.f, "OFFSET")).transpose()?.unwrap_or(0);
            }
            Some(other) => return Err(Error::unsupported(format!("{other}"))),
        }
        if let Some(fetch) = &query.fetch {
            if fetch.percent || fetch.with_ties {
                return Err(Error::unsupported("FETCH FIRST ... PERCENT / WITH TIES"));
            }
            let n = fetch.quantity.as_ref().map(|e| constant_count(e, self.f, "FETCH FIRST")).transpose()?.unwrap_or(1);
            limit = Some(limit.map_or(n, |l| l.min(n)));
        }
        if limit.is_some() || offset > 0 {
            self.stages.push(Stage::Limit(LimitStage::new(offset, limit)));
            let rule = limit.map_or(RowsRule::Same, RowsRule::AtMost);
            self.line("LIMIT", "", rule).predicates.push(format!(
                "filter(row number between {} and {})",
                offset + 1,
                limit.map_or("end".into(), |l| (offset + l).to_string())
            ));
        }
        Ok(())
    }
}

/// The ORDER BY as table columns (column, descending), when the plan is a filter, a
/// projection and a sort whose every key is a projected column in its default NULLS
/// order (NULLS LAST ascending, FIRST descending: the order an index gives); otherwise
/// empty.
fn sorted_columns(stages: &[Stage<'_>]) -> Vec<(usize, bool)> {
    let mut project = None;
    for stage in stages {
        match stage {
            Stage::Filter(_) => {}
            Stage::Project(p) => project = Some(p),
            Stage::Sort(sort) => {
                let Some(p) = project else { return Vec::new() };
                let keys: Option<Vec<(usize, bool)>> = sort
                    .keys
                    .iter()
                    .map(|k| match p.exprs.get(k.column) {
                        Some(Expr::Column(c)) if k.nulls_first == k.descending => Some((*c, k.descending)),
                        _ => None,
                    })
                    .collect();
                return keys.unwrap_or_default();
            }
            _ => return Vec::new(),
        }
    }
    Vec::new()
}

/// Which source columns the plan reads: those any stage reads before the first stage
/// that builds new rows (the scan locates only these). A stage not known here counts as
/// reading every column.
fn columns_read_by(stages: &[Stage<'_>], width: usize) -> Vec<bool> {
    let mut read = vec![false; width];
    let mut see = |i: usize| {
        if let Some(r) = read.get_mut(i) {
            *r = true;
        }
    };
    for stage in stages {
        match stage {
            Stage::Filter(f) => f.predicate.visit_columns(&mut see),
            Stage::Limit(_) => {}
            Stage::Aggregate(a) => {
                a.group_by.iter().for_each(|e| e.visit_columns(&mut see));
                a.calls.iter().filter_map(|c| c.arg.as_ref()).for_each(|e| e.visit_columns(&mut see));
                return read;
            }
            Stage::Project(p) => {
                p.exprs.iter().for_each(|e| e.visit_columns(&mut see));
                return read;
            }
            _ => return vec![true; width],
        }
    }
    read
}

fn reject_unsupported_select_parts(select: &ast::Select) -> Result<()> {
    let unsupported_part = |name: &str| Err(Error::unsupported(name.to_owned()));
    if select.top.is_some() {
        return unsupported_part("TOP");
    }
    if select.into.is_some() {
        return unsupported_part("SELECT ... INTO");
    }
    if !select.lateral_views.is_empty()
        || select.prewhere.is_some()
        || !select.cluster_by.is_empty()
        || !select.distribute_by.is_empty()
    {
        return unsupported_part("LATERAL VIEW / PREWHERE / CLUSTER BY / DISTRIBUTE BY");
    }
    if !select.sort_by.is_empty()
        || !select.named_window.is_empty()
        || select.qualify.is_some()
        || select.value_table_mode.is_some()
    {
        return unsupported_part("SORT BY / WINDOW / QUALIFY / AS VALUE");
    }
    if select.exclude.is_some() || select.select_modifiers.is_some() {
        return unsupported_part("select modifiers");
    }
    for from in &select.from {
        if let ast::TableFactor::Table {
            sample,
            with_hints,
            version,
            partitions,
            json_path,
            index_hints,
            with_ordinality,
            ..
        } = &from.relation
        {
            if sample.is_some() {
                return unsupported_part("SAMPLE");
            }
            if !with_hints.is_empty()
                || version.is_some()
                || !partitions.is_empty()
                || json_path.is_some()
                || !index_hints.is_empty()
                || *with_ordinality
            {
                return Err(Error::unsupported(format!("table clause in FROM {}", from.relation)));
            }
        }
    }
    Ok(())
}

fn reject_unsupported_query_parts(query: &ast::Query) -> Result<()> {
    if let Some(with) = &query.with {
        return Err(unsupported("WITH".into(), with));
    }
    if !query.locks.is_empty() {
        return Err(Error::unsupported("FOR UPDATE"));
    }
    if query.for_clause.is_some()
        || query.settings.is_some()
        || query.format_clause.is_some()
        || !query.pipe_operators.is_empty()
    {
        return Err(Error::unsupported(format!("clause of {query}")));
    }
    Ok(())
}

fn unsupported(construct: String, at: &impl Spanned) -> Error {
    Error::Unsupported { construct, position: position_of(at) }
}

/// Flattens a tree of ANDs.
pub(crate) fn split_and<'e>(e: &'e ast::Expr, out: &mut Vec<&'e ast::Expr>) {
    match e {
        ast::Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            split_and(left, out);
            split_and(right, out);
        }
        ast::Expr::Nested(inner) => split_and(inner, out),
        other => out.push(other),
    }
}

fn is_ident(e: &ast::Expr, name: &str) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case(name))
}

/// `ROWNUM <= n`, `ROWNUM < n`, `n >= ROWNUM`, `n > ROWNUM`: the row limit n.
pub(crate) fn rownum_limit(e: &ast::Expr, f: &FunctionContext) -> Result<Option<u64>> {
    let ast::Expr::BinaryOp { left, op, right } = e else { return Ok(None) };
    let (op, bound) = if is_ident(left, "ROWNUM") {
        (op.clone(), right)
    } else if is_ident(right, "ROWNUM") {
        let flipped = match op {
            BinaryOperator::GtEq => BinaryOperator::LtEq,
            BinaryOperator::Gt => BinaryOperator::Lt,
            other => other.clone(),
        };
        (flipped, left)
    } else {
        return Ok(None);
    };
    let n = constant_int(bound, f, "ROWNUM")?;
    match op {
        BinaryOperator::LtEq => Ok(Some(n.max(0) as u64)),
        BinaryOperator::Lt => Ok(Some(n.saturating_sub(1).max(0) as u64)),
        _ => Err(unsupported("a ROWNUM condition other than ROWNUM < n or ROWNUM <= n".into(), e)),
    }
}

/// `LEVEL <= n` or `LEVEL < n` of the CONNECT BY row generator.
fn level_limit(e: &ast::Expr, f: &FunctionContext) -> Result<i64> {
    if let ast::Expr::BinaryOp { left, op, right } = e
        && is_ident(left, "LEVEL")
    {
        {
            let n = constant_int(right, f, "CONNECT BY")?;
            match op {
                // Oracle's generator always returns its root row.
                BinaryOperator::LtEq => return Ok(n.max(1)),
                BinaryOperator::Lt => return Ok(n.saturating_sub(1).max(1)),
                _ => {}
            }
        }
    }
    Err(unsupported("CONNECT BY other than LEVEL <= n".into(), e))
}

/// The blocks a table never analyzed has below its high-water mark, which the optimizer
/// estimates its rows from (`None` when it was analyzed): one consistent get of the
/// segment header, counted in the statement's statistics.
pub(super) fn blocks_to_estimate_from(ctx: &crate::access::AccessContext<'_>, table: &TableDef) -> Result<Option<u64>> {
    if table.stats.is_some() {
        return Ok(None);
    }
    Ok(Some(u64::from(crate::access::segments::read_map(ctx, table)?.hwm.saturating_sub(1))))
}

/// The session's cost model: the database's block size and its multiblock read count.
pub(super) fn cost_model(session: &Session) -> optimizer::cost::CostModel {
    optimizer::cost::CostModel {
        block_size: session.db.block_size as u32,
        multiblock_read_count: session.multiblock_read_count(),
    }
}

/// One end of an index key range as the scan takes it: the key encoded.
pub(super) fn key_bound(end: &Option<optimizer::KeyEnd>, types: &[crate::types::DataType]) -> Result<KeyBound> {
    let mut bound = KeyBound::Unbounded;
    rekey_bound(&mut bound, end, types)?;
    Ok(bound)
}

/// Sets `bound` to the key bound of `end`, encoding into the key buffer `bound` already
/// has (a kept plan's new range for each execution allocates nothing once warm).
fn rekey_bound(bound: &mut KeyBound, end: &Option<optimizer::KeyEnd>, types: &[crate::types::DataType]) -> Result<()> {
    let mut key = match std::mem::replace(bound, KeyBound::Unbounded) {
        KeyBound::Included(key) | KeyBound::Excluded(key) => key,
        KeyBound::Unbounded => Vec::new(),
    };
    let Some(end) = end else { return Ok(()) };
    key.clear();
    crate::index::encode_key(&end.values, &types[..end.values.len()], &mut key)?;
    *bound = if end.inclusive { KeyBound::Included(key) } else { KeyBound::Excluded(key) };
    Ok(())
}

/// A constant whole-number expression. Bind variables in it take this execution's values,
/// and the plan notes that it holds them ([`FunctionContext::taken`]).
fn constant_int(e: &ast::Expr, f: &FunctionContext, context: &str) -> Result<i64> {
    let scope = Scope::default();
    let bound = Binder { scope: &scope, f, grouping: None }.bind(e)?;
    // Constant when it reads no column and calls no function with effects (literals alone
    // were folded by the binder; what is left is bind variables and what uses them).
    let mut constant = true;
    bound.visit_nodes(&mut |e| match e {
        Expr::Column(_) => constant = false,
        Expr::Function { func, .. } if !func.is_deterministic() => constant = false,
        _ => {}
    });
    let value = match &bound {
        Expr::Literal(v) => v.clone(),
        _ if constant => {
            bound.visit_binds(&mut |slot| f.taken.borrow_mut().binds.push(slot));
            let mut values = FunctionContext::new(f.now, 0);
            values.binds = f.binds.clone();
            let empty: &[Datum] = &[];
            bound.eval(empty, &mut values)?.into_owned()
        }
        _ => return Err(Error::value(context, format!("expects a constant, got {e}"))),
    };
    value.to_i64(context)?.ok_or_else(|| Error::value(context, "expects a number, got NULL"))
}

fn constant_count(e: &ast::Expr, f: &FunctionContext, context: &str) -> Result<u64> {
    let n = constant_int(e, f, context)?;
    u64::try_from(n).map_err(|_| Error::value(context, format!("{n} is negative")))
}

fn mentions_rownum(text: &str) -> bool {
    text.to_ascii_uppercase()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '#'))
        .any(|w| w == "ROWNUM")
}

/// The heading of an unaliased select item, as Oracle shows it.
fn output_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Identifier(i) => ident_name(i),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident_name).unwrap_or_default(),
        other => heading_text(&other.to_string()),
    }
}

/// An expression as a column heading: upper case and without blanks, except inside
/// quoted strings.
fn heading_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quoted = false;
    for c in text.chars() {
        if c == '\'' {
            quoted = !quoted;
        }
        match c {
            ' ' if !quoted => {}
            c if quoted => out.push(c),
            c => out.push(c.to_ascii_uppercase()),
        }
    }
    out
}

/// Formats plan lines (source first) as DBMS_XPLAN shows them: the tree with each
/// line's estimated rows and cost (blank where the optimizer made no estimate).
pub fn format_plan(lines: &[PlanLine], notes: &[String]) -> Vec<String> {
    let top_down: Vec<&PlanLine> = lines.iter().rev().collect();
    let ops: Vec<String> =
        top_down.iter().enumerate().map(|(depth, l)| format!("{}{}", " ".repeat(depth), l.operation)).collect();
    let rows: Vec<String> =
        top_down.iter().map(|l| l.estimate.map_or_else(String::new, |e| oracle_count(e.rows))).collect();
    let costs: Vec<String> =
        top_down.iter().map(|l| l.estimate.map_or_else(String::new, |e| format!("{:.0}", e.cost.ceil()))).collect();
    let op_w = ops.iter().map(String::len).max().unwrap_or(9).max(9);
    let name_w = top_down.iter().map(|l| l.name.len()).max().unwrap_or(4).max(4);
    let rows_w = rows.iter().map(String::len).max().unwrap_or(0).max(4);
    let cost_w = costs.iter().map(String::len).max().unwrap_or(0).max(4);
    let rule = "-".repeat(op_w + name_w + rows_w + cost_w + 19);
    let mut out = vec![
        rule.clone(),
        format!("| Id  | {:<op_w$} | {:<name_w$} | {:>rows_w$} | {:>cost_w$} |", "Operation", "Name", "Rows", "Cost"),
        rule.clone(),
    ];
    for (id, (l, op)) in top_down.iter().zip(&ops).enumerate() {
        let star = if l.predicates.is_empty() { ' ' } else { '*' };
        out.push(format!(
            "|{star}{id:>3} | {op:<op_w$} | {:<name_w$} | {:>rows_w$} | {:>cost_w$} |",
            l.name, rows[id], costs[id]
        ));
    }
    out.push(rule);
    let predicates: Vec<String> = top_down
        .iter()
        .enumerate()
        .flat_map(|(id, l)| l.predicates.iter().map(move |p| format!("{id:>4} - {p}")))
        .collect();
    if !predicates.is_empty() {
        out.push(String::new());
        out.push("Predicate Information (identified by operation id):".into());
        out.push("---------------------------------------------------".into());
        out.extend(predicates);
    }
    if !notes.is_empty() {
        out.push(String::new());
        out.push("Note".into());
        out.push("-----".into());
        out.extend(notes.iter().map(|n| format!("   - {n}")));
    }
    out
}

/// A row count as DBMS_XPLAN prints it: whole, at least 1, with K or M past five digits.
fn oracle_count(rows: f64) -> String {
    let n = rows.round().max(1.0) as u64;
    match n {
        0..=99_999 => n.to_string(),
        100_000..=99_999_999 => format!("{}K", n / 1000),
        _ => format!("{}M", n / 1_000_000),
    }
}
