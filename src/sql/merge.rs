//! MERGE: the rows of a source (a table, a view or a subquery) joined to a target table
//! by an ON condition; a target row a source row matches is updated (`WHEN MATCHED THEN
//! UPDATE SET ... [WHERE ...] [DELETE WHERE ...]`), a source row that matches no target
//! row inserted (`WHEN NOT MATCHED THEN INSERT [(columns)] VALUES (...) [WHERE ...]`).
//!
//! ```text
//!   source query ─► its rows, gathered on the statement's snapshot, hashed by their
//!                   sides of ON's equalities with the target's columns
//!   target rows  ─► the change protocol (modify): each row's key looks up its source
//!                   rows, ON's other conditions and the WHERE checked on each pair;
//!                   the one that passes updates it (DELETE WHERE on the new values
//!                   deletes it instead)
//!   source rows no target row matched ─► INSERT's WHERE, then its VALUES inserted
//! ```
//!
//! Invariants, as in Oracle:
//! - the source is read whole, as of the statement's snapshot, before any row changes:
//!   a source reading the target sees it as the statement found it, and no inserted row
//!   is ever matched;
//! - a target row that two source rows would update is an error (ORA-30926), never
//!   updated twice;
//! - the columns ON reads are not updated (ORA-38104); INSERT's VALUES and WHERE read
//!   only the source (ORA-38101);
//! - a source row counts as matched when any target row meets ON, whatever UPDATE's
//!   WHERE says of the pair.

use super::bind::{Binder, Scope, ScopeRelation, function_name, ident_name, position_of};
use super::modify::{RowPartner, change_with_partner};
use super::optimizer::IndexScanKind;
use super::plan::{Family, StatementSubqueries, deterministic, expr_family, split_and};
use crate::access::AccessContext;
use crate::access::RowAccess;
use crate::access::row_view::{Beside, BlockRow};
use crate::catalog::{IndexDef, TableDef};
use crate::error::{Error, Result};
use crate::exec::index_source::open_scan;
use crate::expr::functions::FunctionContext;
use crate::expr::{CmpOp, Expr};
use crate::index::{KeyBound, RowId};
use crate::instance::Session;
use crate::sql::{QueryResult, StatementKind};
use crate::types::{Datum, Value};
use smallvec::SmallVec;
use sqlparser::ast;
use std::collections::HashMap;
use std::sync::Arc;

/// The source's side of a MERGE, as the change of the target's rows asks it.
struct MergeSource {
    rows: Vec<Vec<Value>>,
    /// The target's columns; the source's follow them in the pair's numbering.
    target_width: usize,
    /// ON's equalities of a target expression and a source one: the target sides ...
    target_keys: Vec<Expr>,
    /// ... and the source rows by their sides' values (a row with a NULL there meets no
    /// target row); `None` when ON has no such equality (every source row is tried).
    by_key: Option<HashMap<Vec<Value>, SmallVec<[usize; 1]>>>,
    /// ON's other conjuncts, over the target row beside a source row.
    on_rest: Vec<Expr>,
    /// Whether a target row a source row met updates (a WHEN MATCHED clause).
    updates: bool,
    /// UPDATE's WHERE, over the pair.
    update_where: Vec<Expr>,
    /// DELETE WHERE, over the updated target row beside its source row.
    delete_where: Option<Expr>,
    /// The source rows that met a target row.
    matched: Vec<bool>,
    /// The source row that updates the target row at hand.
    current: usize,
    /// The key of the target row at hand (a buffer kept from row to row).
    key: Vec<Value>,
}

impl RowPartner for MergeSource {
    /// Marks the source rows target row `row` meets, and gives whether one of them
    /// updates it (then the partner); ORA-30926 when two would.
    fn judge(&mut self, row: &BlockRow<'_>, f: &mut FunctionContext) -> Result<bool> {
        let (mut every, mut keyed);
        let candidates: &mut dyn Iterator<Item = usize> = match &self.by_key {
            None => {
                every = 0..self.rows.len();
                &mut every
            }
            Some(by_key) => {
                let found = key_values(&self.target_keys, row, f, &mut self.key)?.then(|| by_key.get(&self.key[..]));
                keyed = found.flatten().into_iter().flatten().copied();
                &mut keyed
            }
        };
        let mut chosen = None;
        for i in candidates {
            let pair = Beside { first: row, second: &self.rows[i][..], first_width: self.target_width };
            if !all_true(&self.on_rest, &pair, f)? {
                continue;
            }
            self.matched[i] = true;
            if !self.updates || !all_true(&self.update_where, &pair, f)? {
                continue;
            }
            if chosen.is_some() {
                return Err(Error::Transaction {
                    message: "ORA-30926: unable to get a stable set of rows in the source tables \
                              (two source rows match one target row)"
                        .into(),
                });
            }
            chosen = Some(i);
        }
        if let Some(i) = chosen {
            self.current = i;
        }
        Ok(chosen.is_some())
    }

    fn partner(&self) -> &[Value] {
        self.rows.get(self.current).map_or(&[], Vec::as_slice)
    }

    /// The target rows whose key the source has, through the index whose leading
    /// columns are the most of ON's keys (each a column of the target), when probing it
    /// for each distinct key costs fewer blocks than a full scan of the table (a probe
    /// taken as [`PROBE_BLOCKS`]); each row found is still judged.
    fn rows_by_index(
        &self,
        ctx: &AccessContext<'_>,
        table: &TableDef,
        indexes: &[Arc<IndexDef>],
    ) -> Result<Option<Vec<RowId>>> {
        let Some(by_key) = &self.by_key else { return Ok(None) };
        // Each key column of the target, and its place in a source row's key.
        let key_columns: Vec<Option<usize>> =
            self.target_keys.iter().map(|e| if let Expr::Column(c) = e { Some(*c) } else { None }).collect();
        let prefix = |index: &IndexDef| -> Vec<usize> {
            index.columns.iter().map_while(|c| key_columns.iter().position(|k| *k == Some(*c))).collect()
        };
        let Some((index, places)) =
            indexes.iter().map(|ix| (ix, prefix(ix))).filter(|(_, p)| !p.is_empty()).max_by_key(|(_, p)| p.len())
        else {
            return Ok(None);
        };
        let probes: std::collections::HashSet<Vec<&Value>> =
            by_key.keys().map(|key| places.iter().map(|&p| &key[p]).collect()).collect();
        let blocks = u64::from(crate::access::segments::read_map(ctx, table)?.hwm);
        if probes.len() as u64 * PROBE_BLOCKS >= blocks {
            return Ok(None);
        }
        let types = index.key_types(table);
        let kind = match index.unique && places.len() == index.columns.len() {
            true => IndexScanKind::Unique,
            false => IndexScanKind::Range,
        };
        let (mut rowids, mut leaf) = (Vec::new(), Vec::new());
        for probe in probes {
            let values: Vec<Value> = probe.into_iter().cloned().collect();
            let mut key = Vec::new();
            // A value the key cannot hold equals none it holds.
            if crate::index::encode_key(&values, &types[..values.len()], &mut key).is_err() {
                continue;
            }
            let mut scan = open_scan(index, kind, KeyBound::Included(key.clone()), KeyBound::Included(key), false);
            while scan.next_leaf_with(ctx, Some(&mut leaf))?.is_some() {
                rowids.append(&mut leaf);
            }
        }
        // In block order, each once: one visit a block.
        rowids.sort_unstable_by_key(|r: &RowId| (r.rdba, r.slot));
        rowids.dedup();
        Ok(Some(rowids))
    }

    fn may_delete(&self) -> bool {
        self.delete_where.is_some()
    }

    /// DELETE WHERE, of the updated row beside its source row.
    fn deletes(&self, values: &[Datum<'_>], f: &mut FunctionContext) -> Result<bool> {
        let Some(condition) = &self.delete_where else { return Ok(false) };
        let updated = Beside { first: values, second: self.partner(), first_width: self.target_width };
        Ok(condition.eval_condition(&updated, f)? == Some(true))
    }
}

/// The blocks one probe of an index for a key is taken to read (its descent and the
/// table block), against a full scan's blocks.
const PROBE_BLOCKS: u64 = 4;

/// Whether every one of `conditions` is true of `row`.
fn all_true<R: RowAccess + ?Sized>(conditions: &[Expr], row: &R, f: &mut FunctionContext) -> Result<bool> {
    for c in conditions {
        if c.eval_condition(row, f)? != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

pub fn merge(session: &Session, merge: &ast::Merge) -> Result<QueryResult> {
    if merge.output.is_some() {
        return Err(Error::unsupported("MERGE with OUTPUT"));
    }
    let (update, insert) = clauses(&merge.clauses)?;
    let (first, then_insert) = match update {
        Some(_) => (crate::catalog::ObjectPrivilege::Update, insert.is_some()),
        None => (crate::catalog::ObjectPrivilege::Insert, false),
    };
    let (table, target_scope) = super::modify::target(session, &merge.table, first)?;
    if then_insert {
        super::privileges::require_on(session, &table.name, crate::catalog::ObjectPrivilege::Insert)?;
    }
    let target_qualifiers = target_scope.qualifiers.clone();
    // One snapshot for the whole statement: the source, the subqueries, the target.
    let scn = session.db.clock.current();
    let functions = super::function_context(session);
    let source = read_source(session, &merge.source, scn)?;
    let target_width = table.columns.len();
    let scope = pair_scope(target_scope, &source);
    let subqueries = StatementSubqueries::new(session, &functions);
    let binder = Binder { scope: &scope, f: &functions, grouping: None, subqueries: Some(subqueries.planner()) };

    // ON: its equalities of a target and a source expression of one family are the
    // keys the source rows are found by; the rest is checked on each pair.
    let mut conjuncts = Vec::new();
    split_and(&merge.on, &mut conjuncts);
    let families: Vec<Option<Family>> = table
        .columns
        .iter()
        .map(|c| Some(Family::of_type(c.data_type)))
        .chain(source.families.iter().copied())
        .collect();
    let (mut target_keys, mut source_keys, mut on_rest, mut on_columns) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for c in conjuncts {
        let e = binder.bind(c)?;
        e.visit_columns(&mut |c| on_columns.push(c));
        match key_sides(&e, target_width, &families) {
            Some((t, s)) => {
                let mut s = s.clone();
                s.remap_columns(&|c| c - target_width);
                target_keys.push(t.clone());
                source_keys.push(s);
            }
            None => on_rest.push(e),
        }
    }

    let mut assignments = Vec::new();
    let (mut update_where, mut delete_where) = (Vec::new(), None);
    if let Some(update) = update {
        let ast::MergeUpdateKind::Set(sets) = &update.kind else {
            return Err(Error::unsupported("MERGE's UPDATE without SET"));
        };
        assignments = super::modify::bind_assignments(&binder, &table, &target_qualifiers, sets)?;
        if let Some((c, _)) = assignments.iter().find(|(c, _)| on_columns.contains(c)) {
            return Err(Error::InvalidValue {
                context: format!("{}.{}", table.name, table.columns[*c].name),
                message: "ORA-38104: Columns referenced in the ON Clause cannot be updated".into(),
            });
        }
        if let Some(w) = &update.update_predicate {
            update_where = vec![binder.bind(w)?];
        }
        delete_where = update.delete_predicate.as_ref().map(|d| binder.bind(d)).transpose()?;
    }
    // INSERT reads the source alone: a column of the target there is ORA-38101.
    let source_binder = Binder { scope: &source.scope, f: &functions, grouping: None, subqueries: None };
    let inserting = match insert {
        Some(insert) => Some(bind_insert(&source_binder, insert, &scope)?),
        None => None,
    };

    let (init, correlated) = subqueries.into_plans();
    if !correlated.is_empty() {
        return Err(Error::unsupported("a correlated subquery in MERGE"));
    }
    let functions = super::modify::with_subqueries_run(session, functions, &init, scn)?;

    let by_key = (!target_keys.is_empty())
        .then(|| index_rows(&source.rows, &source_keys, &mut functions.clone()))
        .transpose()?;
    let mut merge_source = MergeSource {
        matched: vec![false; source.rows.len()],
        rows: source.rows,
        target_width,
        target_keys,
        by_key,
        on_rest,
        updates: update.is_some(),
        update_where,
        delete_where,
        current: usize::MAX,
        key: Vec::new(),
    };
    // A MERGE that only inserts still reads the target, for the source rows it meets.
    let hints = super::modify::hints_of(&merge.optimizer_hints);
    let updated = change_with_partner(session, &table, &hints, assignments, functions.clone(), &mut merge_source, scn)?;
    let inserted = match inserting {
        Some(inserting) => inserting.run(session, &table, &merge_source, functions)?,
        None => 0,
    };
    let rows = updated + inserted;
    let noun = if rows == 1 { "row" } else { "rows" };
    let mut result = QueryResult::message(StatementKind::Change, format!("{rows} {noun} merged."));
    result.rows_affected = rows;
    Ok(result)
}

/// The WHEN clauses: at most one WHEN MATCHED THEN UPDATE and one WHEN NOT MATCHED THEN
/// INSERT, as Oracle has them.
fn clauses(clauses: &[ast::MergeClause]) -> Result<(Option<&ast::MergeUpdateExpr>, Option<&ast::MergeInsertExpr>)> {
    let (mut update, mut insert) = (None, None);
    for clause in clauses {
        if clause.predicate.is_some() {
            return Err(Error::unsupported("a condition after WHEN [NOT] MATCHED (Oracle's is the action's WHERE)"));
        }
        match (&clause.clause_kind, &clause.action) {
            (ast::MergeClauseKind::Matched, ast::MergeAction::Update(u)) if update.is_none() => update = Some(u),
            (ast::MergeClauseKind::NotMatched, ast::MergeAction::Insert(i)) if insert.is_none() => insert = Some(i),
            (ast::MergeClauseKind::Matched, ast::MergeAction::Update(_))
            | (ast::MergeClauseKind::NotMatched, ast::MergeAction::Insert(_)) => {
                return Err(Error::value("MERGE", format!("WHEN {} given twice", clause.clause_kind)));
            }
            (kind, action) => {
                return Err(Error::unsupported(format!("MERGE's WHEN {kind} THEN {action}")));
            }
        }
    }
    if update.is_none() && insert.is_none() {
        return Err(Error::value("MERGE", "no WHEN clause"));
    }
    Ok((update, insert))
}

/// The source's rows, read whole, and the scope its columns are named in.
struct SourceRows {
    rows: Vec<Vec<Value>>,
    scope: Scope,
    families: Vec<Option<Family>>,
}

/// Reads the source `factor` (a table, a view or a subquery, with its alias) as of the
/// statement's SCN `scn`.
fn read_source(session: &Session, factor: &ast::TableFactor, scn: u64) -> Result<SourceRows> {
    let qualifiers = match factor {
        ast::TableFactor::Table { name, alias, args: None, .. } => {
            let mut q = vec![function_name(name)];
            q.extend(alias.as_ref().map(|a| ident_name(&a.name)));
            q
        }
        ast::TableFactor::Derived { lateral: false, alias, .. } => {
            alias.as_ref().map(|a| vec![ident_name(&a.name)]).unwrap_or_default()
        }
        other => {
            return Err(Error::Unsupported { construct: format!("MERGE USING {other}"), position: position_of(other) });
        }
    };
    let text = format!("SELECT * FROM {factor}");
    let query = super::oracle_types::parser(&sqlparser::dialect::OracleDialect {}, &text)
        .and_then(|mut p| p.parse_query())
        .map_err(|e| Error::value("MERGE USING", e.to_string()))?;
    let functions = super::function_context(session);
    let planned = super::plan::plan_query(&query, session, &functions)?;
    let mut ctx = super::exec_context_at(session, functions, scn);
    crate::exec::query_block::run_init_plans(&planned.init, &mut ctx)?;
    let scope = Scope {
        names: planned.columns.clone(),
        qualifiers,
        char_lengths: planned.char_lengths.clone(),
        ..Default::default()
    };
    let families = planned.families.clone();
    let rows = crate::exec::run_pipeline(&planned.source, planned.stages, &mut ctx)?;
    Ok(SourceRows { rows, scope, families })
}

/// The scope of a target row beside a source row: the target's columns, then the
/// source's, each named by its own qualifiers.
fn pair_scope(target: Scope, source: &SourceRows) -> Scope {
    let width = target.names.len();
    let relations = vec![
        ScopeRelation { qualifiers: target.qualifiers.clone(), columns: 0..width, ..Default::default() },
        ScopeRelation {
            qualifiers: source.scope.qualifiers.clone(),
            columns: width..width + source.scope.names.len(),
            ..Default::default()
        },
    ];
    let mut char_lengths = target.char_lengths.clone();
    char_lengths.resize(width, None);
    char_lengths.extend(source.scope.char_lengths.iter().copied());
    Scope {
        names: target.names.into_iter().chain(source.scope.names.iter().cloned()).collect(),
        char_lengths,
        relations,
        ..Default::default()
    }
}

/// The sides of `e` when it is an equality of an expression of the target's columns
/// (those below `target_width`) and one of the source's, of one family: (target's,
/// source's).
fn key_sides<'e>(e: &'e Expr, target_width: usize, families: &[Option<Family>]) -> Option<(&'e Expr, &'e Expr)> {
    let Expr::Compare { op: CmpOp::Eq, left, right } = e else { return None };
    let side = |x: &Expr| {
        let (mut target, mut source) = (false, false);
        x.visit_columns(&mut |c| if c < target_width { target = true } else { source = true });
        match (target, source) {
            (true, false) => Some(true),
            (false, true) => Some(false),
            _ => None,
        }
    };
    let (l, r) = (side(left)?, side(right)?);
    if l == r || !deterministic(left) || !deterministic(right) {
        return None;
    }
    let family = |x: &Expr| expr_family(x, &|c| families.get(c).copied().flatten());
    let (l_family, r_family) = (family(left)?, family(right)?);
    if l_family != r_family {
        return None;
    }
    Some(if l { (left, right) } else { (right, left) })
}

/// The source rows by the values of their `keys` (those with a NULL there left out).
fn index_rows(
    rows: &[Vec<Value>],
    keys: &[Expr],
    f: &mut FunctionContext,
) -> Result<HashMap<Vec<Value>, SmallVec<[usize; 1]>>> {
    let mut by_key: HashMap<Vec<Value>, SmallVec<[usize; 1]>> = HashMap::with_capacity(rows.len());
    let mut key = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        if key_values(keys, row, f, &mut key)? {
            by_key.entry(key.clone()).or_default().push(i);
        }
    }
    Ok(by_key)
}

/// The values of `keys` over `row`, in `out` (emptied first); false when one is NULL (a
/// key holding a NULL meets no other).
fn key_values<R: RowAccess + ?Sized>(
    keys: &[Expr],
    row: &R,
    f: &mut FunctionContext,
    out: &mut Vec<Value>,
) -> Result<bool> {
    out.clear();
    for e in keys {
        let v = e.eval(row, f)?.into_owned();
        if v.is_null() {
            return Ok(false);
        }
        out.push(v);
    }
    Ok(true)
}

/// WHEN NOT MATCHED THEN INSERT, bound over the source's columns.
struct Inserting<'m> {
    insert: &'m ast::MergeInsertExpr,
    values: Vec<Expr>,
    filter: Option<Expr>,
    nextvals: Vec<std::sync::Arc<str>>,
}

/// Binds `insert` over the source's columns; a column of the target there (which `pair`,
/// the scope of both, finds) is ORA-38101.
fn bind_insert<'m>(binder: &Binder<'_>, insert: &'m ast::MergeInsertExpr, pair: &Scope) -> Result<Inserting<'m>> {
    let ast::MergeInsertKind::Values(values) = &insert.kind else {
        return Err(Error::unsupported("MERGE's INSERT ROW"));
    };
    let [row] = &values.rows[..] else {
        return Err(Error::value("MERGE", "INSERT takes one row of VALUES"));
    };
    let bind = |e: &ast::Expr| {
        binder.bind(e).map_err(|error| match error {
            Error::UnknownName { .. }
                if (Binder { scope: pair, f: binder.f, grouping: None, subqueries: None }).bind(e).is_ok() =>
            {
                Error::InvalidValue {
                    context: e.to_string(),
                    message:
                        "ORA-38101: Invalid column in the INSERT VALUES Clause: the target's columns are not there"
                            .into(),
                }
            }
            other => other,
        })
    };
    // VALUES may read sequences, NEXTVAL moving on once an inserted row.
    binder.f.sequence_refs_allowed.set(true);
    let bound = row.iter().map(bind).collect::<Result<Vec<_>>>();
    binder.f.sequence_refs_allowed.set(false);
    let values = bound?;
    let filter = insert.insert_predicate.as_ref().map(bind).transpose()?;
    let nextvals = crate::expr::functions::nextval_sequences(&values);
    Ok(Inserting { insert, values, filter, nextvals })
}

impl Inserting<'_> {
    /// Inserts the source rows no target row met (in the source's order) that pass the
    /// WHERE; returns how many.
    fn run(
        self,
        session: &Session,
        table: &Arc<TableDef>,
        source: &MergeSource,
        mut f: FunctionContext,
    ) -> Result<u64> {
        let mut rows = Vec::new();
        for (row, _) in source.rows.iter().zip(&source.matched).filter(|(_, matched)| !**matched) {
            if let Some(filter) = &self.filter
                && filter.eval_condition(row, &mut f)? != Some(true)
            {
                continue;
            }
            if !self.nextvals.is_empty() {
                f.start_sequence_row(&self.nextvals)?;
            }
            rows.push(self.values.iter().map(|e| e.eval(row, &mut f).map(Datum::into_owned)).collect::<Result<_>>()?);
        }
        super::dml::insert_values(session, table.clone(), &self.insert.columns, self.values.len(), &rows)
    }
}
