//! The index probe of an unnested subquery's table: a semi or anti join run as a nested
//! loop that, for each row of the query, looks up the subquery's rows by an index of
//! its table instead of reading them all (`NESTED LOOPS SEMI` over `TABLE ACCESS BY
//! INDEX ROWID` over `INDEX RANGE SCAN`):
//!
//! ```text
//!   SELECT ... FROM orders o WHERE o_orderdate = DATE '1995-03-01'
//!     AND EXISTS (SELECT * FROM lineitem l WHERE l.l_orderkey = o.o_orderkey AND ...)
//!
//!   NESTED LOOPS SEMI
//!     TABLE ACCESS FULL ORDERS                       filter(...)
//!     TABLE ACCESS BY INDEX ROWID LINEITEM           filter(...)
//!       INDEX RANGE SCAN LINEITEM_PK                 access("L_ORDERKEY"="O"."O_ORDERKEY")
//! ```
//!
//! A probe is possible where the subquery reads one table through filters and an index
//! of that table leads with columns the join's keys equal to the query's values; the
//! index columns the keys give, from the first, make the probe's key, the other keys
//! are checked on each row found. It is chosen where the query's rows times the probe's
//! cost is less than the subquery's one run (`optimizer::join::index_probe` costs a
//! probe as a join's), or where `NL_SJ` / `NL_AJ` asks for a nested loop.
//!
//! Invariants: the probe's rows meet the subquery's filters (checked on each, the probe
//! not running its source's filters), and the keys it does not cover become conditions
//! on each pair, so the join gives exactly the rows the hash join would.

use super::*;
use crate::catalog::IndexDef;
use crate::exec::index_source::IndexAccess;
use crate::exec::join::NestedInner;
use crate::index::{IndexScanKind, KeyBound};
use crate::sql::optimizer::join as join_cost;

/// An index probe of the subquery's table, found for a semi or anti join.
pub(super) struct SemiProbe {
    index: Arc<IndexDef>,
    table: Arc<TableDef>,
    /// Which of the join's key pairs the probe's key is made of, in the index's column
    /// order.
    covered: Vec<usize>,
    /// The cost of one probe and the rows it finds, estimated.
    pub(super) cost: f64,
    pub(super) rows: f64,
    /// The subquery's filter over the table's row (the probe does not run its source's
    /// filters: each row found is checked), and its text as the table's line shows it.
    filter: Option<Expr>,
    filter_text: Vec<String>,
    /// The table columns the join reads and those the filter reads: the probe fetches
    /// them, and the join's inner input must hand them on.
    used: Vec<bool>,
}

/// What the subquery reads its table through: its filter (over the table's row) and
/// that filter's text, and the table columns the join reads.
pub(super) struct ProbedRead {
    pub(super) filter: Option<Expr>,
    pub(super) filter_text: Vec<String>,
    pub(super) used: Vec<bool>,
}

impl Builder<'_> {
    /// The cheapest index probe of `table` by the join's keys (`right_keys` over the
    /// table's columns), if an index leads with columns they give.
    pub(super) fn semi_probe(&self, table: &Arc<TableDef>, right_keys: &[Expr], read: ProbedRead) -> Option<SemiProbe> {
        let key_columns: Vec<Option<usize>> =
            right_keys.iter().map(|e| if let Expr::Column(c) = e { Some(*c) } else { None }).collect();
        let model = cost_model(self.session);
        let mut best: Option<(Arc<IndexDef>, Vec<usize>, f64, f64)> = None;
        for index in self.session.db.catalog.indexes_of(table.object_id) {
            let leading: Vec<usize> =
                index.columns.iter().copied().take_while(|c| key_columns.contains(&Some(*c))).collect();
            if leading.is_empty() {
                continue;
            }
            let Some((cost, rows)) = join_cost::index_probe(table, &index, &leading, 0, &model) else { continue };
            if best.as_ref().is_some_and(|b| b.2 <= cost) {
                continue;
            }
            let covered =
                leading.iter().map(|c| key_columns.iter().position(|k| *k == Some(*c)).expect("a key")).collect();
            best = Some((index, covered, cost, rows));
        }
        let (index, covered, cost, rows) = best?;
        let ProbedRead { filter, filter_text, mut used } = read;
        used.resize(table.columns.len(), false);
        if let Some(f) = &filter {
            f.visit_columns(&mut |c| used[c] = true);
        }
        Some(SemiProbe { index, table: table.clone(), covered, cost, rows, filter, filter_text, used })
    }
}

impl SemiProbe {
    /// The table columns the probe reads: the join's inner input hands them on.
    pub(super) fn used(&self) -> &[bool] {
        &self.used
    }

    /// The nested loop's inner side: the probe, its lines (TABLE ACCESS BY INDEX ROWID
    /// over the index's scan, the subquery's filter on the first), and the key pairs it
    /// leaves to be checked on each pair, as indexes into the keys. `left_keys` are over
    /// the query's row.
    pub(super) fn inner(self, left_keys: &[Expr], keys_text: &[String]) -> (NestedInner, PlanTree, Vec<usize>) {
        let SemiProbe { index, table, covered, cost, rows, filter, filter_text, used } = self;
        let keys = covered.iter().map(|&i| left_keys[i].clone()).collect();
        let types = index.key_types(&table)[..covered.len()].to_vec();
        let unique = index.unique && covered.len() == index.columns.len();
        let kind = if unique { IndexScanKind::Unique } else { IndexScanKind::Range };
        let mut tree = PlanTree::default();
        let mut index_line = PlanNode::new(Operation::Index { kind, descending: false }, &index.name);
        let access: Vec<&str> = covered.iter().map(|&i| keys_text[i].as_str()).collect();
        index_line.predicates.push(Predicate::Access(access.join(" AND ")));
        index_line.rows_rule = RowsRule::Source(rows);
        index_line.estimate = Some(Estimate { rows, cost });
        tree.push_above(index_line);
        let mut by_rowid = PlanNode::new(Operation::TableAccessByIndexRowid, &table.name);
        if !filter_text.is_empty() {
            by_rowid.predicates.push(Predicate::Filter(filter_text.join(" AND ")));
        }
        by_rowid.rows_rule = RowsRule::Source(rows);
        by_rowid.estimate = Some(Estimate { rows, cost });
        tree.push_above(by_rowid);
        let access = IndexAccess {
            table,
            index,
            kind,
            lower: KeyBound::Unbounded,
            upper: KeyBound::Unbounded,
            descending: false,
            table_access: true,
            columns_read: used,
            figures: Default::default(),
            totals: Default::default(),
            rowid_buffer: Default::default(),
            measured: true,
        };
        let left_over = (0..left_keys.len()).filter(|i| !covered.contains(i)).collect();
        (NestedInner::Index { access: Box::new(access), keys, types, filter }, tree, left_over)
    }
}
