//! Subquery unnesting: a correlated `EXISTS`, `NOT EXISTS` or `IN` conjunct of the
//! WHERE clause run as a semi or anti join of the query's rows with the subquery's, and
//! a comparison with a correlated scalar subquery of an aggregate as a join with the
//! subquery's groups (`VW_SQ` over a HASH GROUP BY on the columns the correlation
//! reads), instead of a run of the subquery for each row in the FILTER:
//!
//! ```text
//!   SELECT ... FROM orders o WHERE EXISTS (SELECT * FROM lineitem l
//!                                          WHERE l.l_orderkey = o.o_orderkey AND ...)
//!
//!   FILTER  filter(EXISTS (...))            HASH JOIN RIGHT SEMI  access("L_ORDERKEY"="O"."O_ORDERKEY")
//!     TABLE ACCESS FULL ORDERS      ─►        TABLE ACCESS FULL LINEITEM
//!     TABLE ACCESS FULL LINEITEM              TABLE ACCESS FULL ORDERS
//!       (once an order)
//! ```
//!
//! The subquery was planned twice as it was bound (`query_block::Unnesting`): as the
//! FILTER runs it, and without the conjuncts that read the outer row, whose columns it
//! then gives. Those conjuncts become the join's conditions: an equality of an outer
//! expression and a subquery one, of one type family, a key; the rest checked on each
//! pair. `x IN (subquery)` adds the key of `x` and the subquery's value. For a scalar
//! subquery every condition must be a key (the groups are the keys' values), and its
//! aggregate must be NULL over no rows (SUM, AVG, MIN, MAX and arithmetic on them, never
//! COUNT or NVL): a row whose key has no group then fails the comparison either way.
//! One group a key, the inner join gives each row at most once. A subquery that reads one
//! table through filters is the join's input as it is, its table's line under the
//! join's (its columns those of the table's rows); any other, a grouped one, a join, is
//! read under a `VIEW VW_SQ_n` line.
//!
//! A semi join is unnested where the optimizer finds it cheaper than the FILTER (the
//! subquery's one run against a run for each row reaching the FILTER), or where the
//! subquery's hint asks (UNNEST, or HASH_SJ / NL_SJ / MERGE_SJ and their _AJ forms,
//! which also choose the method); NO_UNNEST keeps the FILTER. A nested loop probes an
//! index of the subquery's table where one fits (module `semi_probe`), chosen also
//! without a hint where the probes cost less than the subquery's one run. A hash join builds on the
//! input estimated smaller, unless the subquery's SWAP_JOIN_INPUTS / NO_SWAP_JOIN_INPUTS
//! names the side. A hash join whose probe input is a full scan of one table takes a
//! join filter on it where the cost says it pays and no unmatched probe row is given
//! (not a `HASH JOIN RIGHT ANTI`), as the joins of the FROM clause do: JOIN FILTER
//! CREATE over the build input, JOIN FILTER USE over the scan; a grouped `VW_SQ_n`
//! probing with its GROUP BY's columns has the filter checked on its table's rows,
//! before they are grouped (`QueryBlock::group_key_columns`). Left as the FILTER: `NOT IN` (its NULL rules are not an anti
//! join's), a subquery with no equality to key on, and any conjunct when the plan below
//! the FILTER is more than one line reading the rows through its filters.
//!
//! Invariants: the joined rows leave with the query's columns alone, in the scope's
//! order (`Join::output`), so the lines above read them as they read the FILTER's; an
//! unnested subquery's FILTER plan is dropped, and the FILTER itself goes when nothing
//! is left for it to run.

use super::family::{Family, expr_family};
use super::join;
use super::query_block::UnnestPlan;
use super::semi_probe::{ProbedRead, SemiProbe};
use super::*;
use crate::exec::join::{Join, JoinFilterSpec, JoinInput, JoinKind, JoinMethod, NestedInner};
use crate::expr::{CmpOp, SubqueryTest};
use crate::sql::optimizer::hints::{HintKind, SubqueryJoinMethod};
use crate::sql::optimizer::join::{self as join_cost, Input};
use crate::sql::optimizer::selectivity::default_selectivity;

/// What a conjunct of the FILTER asks of its subquery, where a join can answer it.
struct Test {
    slot: usize,
    kind: JoinKind,
    /// IN's value, or the value compared with a scalar subquery, over the query's row.
    subject: Option<Expr>,
    /// How the subject compares with the scalar subquery's value (`None`: IN's equality).
    compare: Option<CmpOp>,
}

impl Test {
    fn of(e: &Expr) -> Option<Test> {
        let (inner, flip) = match e {
            Expr::Not(inner) => (&**inner, true),
            other => (other, false),
        };
        let holds_subquery = |e: &Expr| {
            let mut found = false;
            e.visit_nodes(&mut |x| found |= matches!(x, Expr::Subquery { .. }));
            found
        };
        match inner {
            Expr::Subquery { slot, test: SubqueryTest::Exists { negated }, .. } => {
                let kind = if *negated != flip { JoinKind::Anti } else { JoinKind::Semi };
                Some(Test { slot: *slot, kind, subject: None, compare: None })
            }
            Expr::Subquery { slot, test: SubqueryTest::In { expr, negated: false, blank_padded: false }, .. }
                if !flip && !holds_subquery(expr) =>
            {
                Some(Test { slot: *slot, kind: JoinKind::Semi, subject: Some((**expr).clone()), compare: None })
            }
            Expr::Compare { op, left, right } if !flip => {
                let (subject, slot, op) = match (&**left, &**right) {
                    (l, Expr::Subquery { slot, test: SubqueryTest::Scalar, .. }) => (l, *slot, *op),
                    (Expr::Subquery { slot, test: SubqueryTest::Scalar, .. }, r) => (r, *slot, op.flipped()),
                    _ => return None,
                };
                // One group of the subquery's a key: an inner join gives a row at most once.
                (!holds_subquery(subject)).then(|| Test {
                    slot,
                    kind: JoinKind::Inner,
                    subject: Some(subject.clone()),
                    compare: Some(op),
                })
            }
            _ => None,
        }
    }
}

/// A semi or anti join's conditions over the joined row (the query's `width` columns,
/// then the subquery's): its key pairs, each over its own input's row, and the rest.
struct Conditions {
    left_keys: Vec<Expr>,
    right_keys: Vec<Expr>,
    keys_text: Vec<String>,
    residual: Vec<Expr>,
    residual_text: Vec<String>,
}

/// The line a semi join's filter puts over the query's rows: JOIN FILTER CREATE where
/// they build, JOIN FILTER USE (and the check in their scan's predicate) where they probe.
enum LeftFilter {
    Create(String),
    Use { name: String, key_text: String, pass: f64 },
}

/// A conjunct chosen to be unnested.
struct Chosen {
    test: Test,
    plan: UnnestPlan,
    conditions: Conditions,
    /// The conjunct's share of the rows, as the FILTER estimated it.
    fraction: f64,
}

impl Builder<'_> {
    /// Unnests what it can of the FILTER of correlated subqueries into semi and anti
    /// joins under it (see the module doc); what is left stays the FILTER's.
    pub(super) fn unnest_subqueries(&mut self) {
        let mut unnestable = self.subqueries.take_unnestable();
        if unnestable.is_empty() {
            return;
        }
        // Where the plan below the FILTER is one line reading rows through its filters,
        // and no ORDER BY counts on that line's order (a join would change it).
        let chain = self.tree.pipeline_nodes();
        let found = match (&self.subquery_filter, &chain[..]) {
            (Some(plan), [reader, above, ..]) if *above == plan.node && !self.order_from_access => plan
                .predicate
                .clone()
                .filter(|_| self.tree.node(*reader).work.stages.iter().all(|s| matches!(s, Stage::Filter(_))))
                .map(|p| (p, *reader, plan.node, plan.width, plan.names.clone())),
            _ => None,
        };
        let Some((predicate, reader, node, width, names)) = found else {
            for u in unnestable {
                self.note_unused(u);
            }
            return;
        };
        self.tree.estimate();
        let reader_estimate = self.tree.node(reader).estimate;
        let mut conjuncts = Vec::new();
        split_conjuncts(predicate, &mut conjuncts);
        let (mut chosen, mut rest) = (Vec::new(), Vec::new());
        for c in conjuncts {
            let found = Test::of(&c).and_then(|test| {
                let i = unnestable.iter().position(|u| u.slot == test.slot)?;
                let conditions = self.conditions(&test, &unnestable[i], width, &names)?;
                worth_unnesting(&unnestable[i], reader_estimate.map(|e| e.rows)).then_some((test, i, conditions))
            });
            match found {
                Some((test, i, conditions)) => {
                    let fraction = default_selectivity(&c);
                    chosen.push(Chosen { test, plan: unnestable.swap_remove(i), conditions, fraction })
                }
                None => rest.push(c),
            }
        }
        // The hints of subqueries left to the FILTER went unused.
        for u in unnestable {
            self.note_unused(u);
        }
        if chosen.is_empty() {
            return;
        }
        for c in &chosen {
            self.subqueries.drop_correlated(c.plan.slot);
        }
        let keep_filter = !rest.is_empty() || self.subqueries.has_correlated();
        // The query's columns the lines above read, and those the joins read.
        let mut needed =
            columns_read_by(chain[1..].iter().flat_map(|&id| self.tree.node(id).work.stages.iter()), width);
        self.read_by_subquery_filter(&mut needed);
        for c in &chosen {
            let conditions = c.conditions.left_keys.iter().chain(&c.conditions.residual);
            conditions
                .for_each(|e| e.visit_columns(&mut |col| needed.get_mut(col).into_iter().for_each(|n| *n = true)));
        }
        let reader_node = self.tree.node_mut(reader);
        let source = reader_node.work.source.take().expect("the plan's reading line has its source");
        let filters = std::mem::take(&mut reader_node.work.stages)
            .into_iter()
            .filter_map(|s| match s {
                Stage::Filter(f) => Some(f.predicate),
                _ => None,
            })
            .collect();
        let mut left = JoinInput::new(source, and_all(filters), width, width).using(&needed);
        // Without statistics (an estimate missing) the joins have none either.
        let (mut left_line, mut estimate) = (reader, reader_estimate);
        let (count, mut views) = (chosen.len(), 0);
        for (n, c) in chosen.into_iter().enumerate() {
            let top = n + 1 == count;
            let (join, mut line, right_estimate, left_filter) =
                self.semi_join(c.test.kind, c.plan, c.conditions, (left, estimate.map(|e| e.rows)), width, &mut views);
            left_line = self.filter_left(left_line, left_filter);
            // A nested loop runs the subquery once a row.
            let runs =
                |e: &Estimate| if matches!(join.method, JoinMethod::NestedLoops(_)) { e.rows.max(1.0) } else { 1.0 };
            estimate = estimate
                .zip(right_estimate)
                .map(|(e, r)| Estimate { rows: e.rows * c.fraction, cost: e.cost + runs(&e) * r.cost });
            line.rows_rule = estimate.map_or(RowsRule::Unknown, |e| RowsRule::Source(e.rows));
            line.estimate = estimate;
            let right_line = line.children.pop().expect("a join line's right input");
            line.children = match &join.method {
                JoinMethod::Hash { build_right: true } => vec![right_line, left_line],
                JoinMethod::Merge => vec![self.sort_join(left_line), self.sort_join(right_line)],
                _ => vec![left_line, right_line],
            };
            if top && !keep_filter {
                // The FILTER's line becomes the root join's.
                let at = self.tree.node_mut(node);
                (at.operation, at.predicates, at.children) = (line.operation, line.predicates, line.children);
                (at.rows_rule, at.estimate) = (line.rows_rule, line.estimate);
                at.work.source = Some(Source::Join(Box::new(join)));
                self.subquery_filter = None;
                return;
            }
            left_line = self.tree.add(line);
            if top {
                self.tree.node_mut(left_line).work.source = Some(Source::Join(Box::new(join)));
                break;
            }
            left = JoinInput::new(Source::Join(Box::new(join)), None, width, width);
        }
        // The FILTER keeps the rest, over the joins.
        let predicate = and_all(rest);
        let filter = self.tree.node_mut(node);
        filter.children = vec![left_line];
        filter.predicates = predicate.iter().map(|p| Predicate::Filter(p.display(&names).to_string())).collect();
        filter.rows_rule = predicate.as_ref().map_or(RowsRule::Same, |p| RowsRule::Fraction(default_selectivity(p)));
        self.subquery_filter.as_mut().expect("checked above").predicate = predicate;
    }

    /// The conditions of the join unnesting `test` (a subquery planned as `plan`) under
    /// a query of `width` columns named `names`; `None` when no key pairs them, or when
    /// the subquery is grouped by its key and a condition is not a key.
    fn conditions(&self, test: &Test, plan: &UnnestPlan, width: usize, names: &[String]) -> Option<Conditions> {
        if plan.grouped != test.compare.is_some() {
            return None;
        }
        let mut all: Vec<(Expr, String)> = Vec::new();
        // The subject's condition: IN's equality (a key), or the comparison with the
        // scalar subquery's value (checked on each pair).
        let subject = test.subject.as_ref().map(|subject| {
            let op = test.compare.unwrap_or(CmpOp::Eq);
            let e = Expr::Compare { op, left: Box::new(subject.clone()), right: Box::new(Expr::Column(width)) };
            let mut joined_names = names.to_vec();
            joined_names.push(plan.block.columns[0].clone());
            let text = e.display_conjunct(&joined_names).to_string();
            (e, text)
        });
        if test.compare.is_none() {
            all.extend(subject.clone());
        }
        for (e, text) in &plan.conditions {
            let mut e = e.clone();
            e.visit_nodes_mut(&mut |x| match x {
                Expr::Column(k) => *k += width,
                Expr::Outer { slot, .. } => {
                    let (_, value) = plan.outer.iter().find(|(s, _)| s == slot).expect("an outer value read");
                    *x = value.clone();
                }
                _ => {}
            });
            all.push((e, text.clone()));
        }
        let family = |c: usize| -> Option<Family> {
            if c < width {
                self.families.get(c).copied().flatten()
            } else {
                plan.block.families.get(c - width).copied().flatten()
            }
        };
        // Which side of the join an expression reads: the query's (false) or the
        // subquery's (true), `None` for both or neither.
        let side = |e: &Expr| -> Option<bool> {
            let (mut left, mut right) = (false, false);
            e.visit_columns(&mut |c| if c < width { left = true } else { right = true });
            (left != right).then_some(right)
        };
        let mut out = Conditions {
            left_keys: Vec::new(),
            right_keys: Vec::new(),
            keys_text: Vec::new(),
            residual: Vec::new(),
            residual_text: Vec::new(),
        };
        for (e, text) in all {
            let pair = match &e {
                Expr::Compare { op: CmpOp::Eq, left, right }
                    if expr_family(left, &family).is_some_and(|f| Some(f) == expr_family(right, &family)) =>
                {
                    match (side(left), side(right)) {
                        (Some(false), Some(true)) => Some((left, right)),
                        (Some(true), Some(false)) => Some((right, left)),
                        _ => None,
                    }
                }
                _ => None,
            };
            match pair {
                // The groups of a grouped subquery are its key columns' values: a key of
                // an expression would find several groups.
                Some((_, inner)) if plan.grouped && !matches!(**inner, Expr::Column(_)) => return None,
                Some((outer, inner)) => {
                    let mut inner = (**inner).clone();
                    inner.remap_columns(&|c| c - width);
                    out.left_keys.push((**outer).clone());
                    out.right_keys.push(inner);
                    out.keys_text.push(text);
                }
                None => {
                    out.residual.push(e);
                    out.residual_text.push(text);
                }
            }
        }
        if plan.grouped && !out.residual.is_empty() {
            return None;
        }
        if let (Some(_), Some((e, text))) = (test.compare, subject) {
            out.residual.push(e);
            out.residual_text.push(text);
        }
        (!out.left_keys.is_empty()).then_some(out)
    }

    /// The semi or anti join (`kind`) of `left`, the query's rows (`width` columns, the
    /// rows, when estimated), and the subquery planned as `plan`: the join, its line
    /// (whose one child is the subquery's), and the subquery's estimate. A subquery that
    /// reads one table through filters is the join's input as it is (its table's line
    /// under the join's), any other under a `VIEW VW_SQ_n` line (`views` counts them).
    fn semi_join(
        &mut self,
        kind: JoinKind,
        plan: UnnestPlan,
        mut conditions: Conditions,
        (left, left_rows): (JoinInput, Option<f64>),
        width: usize,
        views: &mut usize,
    ) -> (Join, PlanNode, Option<Estimate>, Option<LeftFilter>) {
        let UnnestPlan { block, hints, swap_notes, .. } = plan;
        let right_estimate = block.estimate;
        let right_width = block.columns.len();
        let mut tree = block.tree;
        let reads_table = tree.root().is_some_and(|r| {
            let line = tree.node(r);
            matches!(
                line.operation,
                Operation::TableAccessFull | Operation::TableAccessInMemoryFull | Operation::TableAccessByIndexRowid
            ) && line.children.iter().all(|&c| tree.node(c).rows_at == RowsAt::InsideSource)
        });
        // The subquery's filter, as its table's line shows it (an index probe's table
        // line shows it again).
        let filter_text: Vec<String> = tree.root().map_or_else(Vec::new, |r| {
            tree.node(r)
                .predicates
                .iter()
                .filter_map(|p| match p {
                    Predicate::Filter(f) => Some(f.clone()),
                    _ => None,
                })
                .collect()
        });
        let block = Box::new(block.block);
        let read = if reads_table { block.into_table_read() } else { Err(block) };
        let mut probe = None;
        let mut right = match read {
            Ok(read) => {
                // The subquery's columns are its table's: the conditions read them there.
                let at = &read.columns;
                conditions.right_keys.iter_mut().for_each(|e| e.remap_columns(&|k| at[k]));
                let joined = |c: usize| if c >= width { width + at[c - width] } else { c };
                conditions.residual.iter_mut().for_each(|e| e.remap_columns(&joined));
                let mut used = vec![false; read.width];
                let mut mark = |c: usize| used[c] = true;
                conditions.right_keys.iter().for_each(|e| e.visit_columns(&mut mark));
                let mut mark_joined = |c: usize| {
                    if c >= width {
                        used[c - width] = true;
                    }
                };
                conditions.residual.iter().for_each(|e| e.visit_columns(&mut mark_joined));
                // A full scan's table may be probed by an index instead, its filters
                // all in the block's (an index path's bounds are not).
                if let Source::TableScan { table, .. } = &read.source {
                    let probed = ProbedRead { filter: read.filter.clone(), filter_text, used: used.clone() };
                    probe = self.semi_probe(table, &conditions.right_keys, probed);
                }
                JoinInput::new(read.source, read.filter, read.width, read.width).using(&used)
            }
            Err(block) => {
                *views += 1;
                let mut view = PlanNode::new(Operation::View, &format!("VW_SQ_{views}"));
                view.rows_rule = right_estimate.map_or(RowsRule::Unknown, |e| RowsRule::Source(e.rows));
                view.estimate = right_estimate;
                tree.push_above(view);
                JoinInput::new(Source::View(block), None, right_width, right_width)
            }
        };
        let asked = hints.hints.iter().find_map(|h| match h.kind {
            HintKind::SubqueryJoin(m) => Some(m),
            _ => None,
        });
        let swap = hints.hints.iter().find_map(|h| match h.kind {
            HintKind::SwapJoinInputs => Some(true),
            HintKind::NoSwapJoinInputs => Some(false),
            _ => None,
        });
        let named = |semi: Operation, anti: Operation, inner: Operation| match kind {
            JoinKind::Semi => semi,
            JoinKind::Anti => anti,
            _ => inner,
        };
        // A nested loop probing an index: where asked, or where the query's rows' probes
        // cost less than the subquery's one run.
        let probe_cheaper = |p: &SemiProbe| match (left_rows, right_estimate) {
            (Some(rows), Some(once)) => rows.max(1.0) * p.cost < once.cost,
            _ => false,
        };
        let by_probe = match (&asked, &probe) {
            (Some(SubqueryJoinMethod::NestedLoops), Some(_)) => true,
            (None, Some(p)) => probe_cheaper(p) && swap.is_none(),
            _ => false,
        };
        let mut right_estimate = right_estimate;
        let mut probe_tree = None;
        let (method, operation) = match asked {
            _ if by_probe => {
                let p = probe.take().expect("checked");
                right_estimate = Some(Estimate { rows: p.rows, cost: p.cost });
                // The probe's rows meet the filter where the join reads them: its
                // columns must be there too.
                right = right.using(p.used());
                let (inner, lines, left_over) = p.inner(&conditions.left_keys, &conditions.keys_text);
                // The keys the probe does not cover are checked on each pair.
                for i in left_over.into_iter().rev() {
                    let outer = conditions.left_keys.remove(i);
                    let mut inner_key = conditions.right_keys.remove(i);
                    inner_key.remap_columns(&|c| c + width);
                    conditions.residual.push(Expr::Compare {
                        op: CmpOp::Eq,
                        left: Box::new(outer),
                        right: Box::new(inner_key),
                    });
                    conditions.residual_text.push(conditions.keys_text.remove(i));
                }
                probe_tree = Some(lines);
                (
                    JoinMethod::NestedLoops(Box::new(inner)),
                    named(Operation::NestedLoopsSemi, Operation::NestedLoopsAnti, Operation::NestedLoops),
                )
            }
            Some(SubqueryJoinMethod::NestedLoops) => (
                JoinMethod::NestedLoops(Box::new(NestedInner::Rescan)),
                named(Operation::NestedLoopsSemi, Operation::NestedLoopsAnti, Operation::NestedLoops),
            ),
            Some(SubqueryJoinMethod::Merge) => {
                (JoinMethod::Merge, named(Operation::MergeJoinSemi, Operation::MergeJoinAnti, Operation::MergeJoin))
            }
            Some(SubqueryJoinMethod::Hash) | None => {
                // Unknown sizes: the subquery builds, as the FILTER would have run it.
                let smaller = match (right_estimate, left_rows) {
                    (Some(r), Some(l)) => r.rows < l,
                    _ => true,
                };
                let build_right = swap.unwrap_or(smaller);
                let operation = if build_right {
                    named(Operation::HashJoinRightSemi, Operation::HashJoinRightAnti, Operation::HashJoin)
                } else {
                    named(Operation::HashJoinSemi, Operation::HashJoinAnti, Operation::HashJoin)
                };
                (JoinMethod::Hash { build_right }, operation)
            }
        };
        if !matches!(method, JoinMethod::Hash { .. }) {
            self.note_all(swap_notes.into_iter().map(|n| n.replace("the query joins no tables", "not a hash join")));
        }
        let filter = match method {
            JoinMethod::Hash { build_right } => {
                let estimates = (left_rows, right_estimate.map(|e| e.rows));
                self.semi_join_filter(
                    kind,
                    build_right,
                    [&left, &right],
                    [&conditions.left_keys, &conditions.right_keys],
                    estimates,
                )
            }
            _ => None,
        };
        // The join filter's lines: over the subquery's, and what the caller puts over
        // the query's rows.
        let mut join_filter = None;
        let mut left_filter = None;
        if let (Some(plan), JoinMethod::Hash { build_right }) = (filter, &method) {
            let number =
                (self.tree.count(Operation::JoinFilterCreate) + tree.count(Operation::JoinFilterCreate)) as u32;
            let name = join::filter_name(number);
            let below = tree.root().and_then(|r| tree.node(r).estimate);
            if *build_right {
                tree.push_above(join::filter_create_line(&name, below));
                left_filter = Some(LeftFilter::Use { name, key_text: plan.key_text, pass: plan.pass });
            } else {
                // The table's line: the subquery's top line, or the one a grouped view
                // reads.
                let mut scan = tree.root();
                while let Some(at) = scan
                    && !matches!(
                        tree.node(at).operation,
                        Operation::TableAccessFull | Operation::TableAccessInMemoryFull
                    )
                {
                    scan = tree.node(at).children.first().copied();
                }
                if let Some(scan) = scan {
                    join::add_bloom_predicate(tree.node_mut(scan), &name, &plan.key_text);
                }
                tree.push_above(join::filter_use_line(&name, below, plan.pass));
                left_filter = Some(LeftFilter::Create(name));
            }
            join_filter = Some(JoinFilterSpec { number, probe_columns: plan.probe_columns });
        }
        let mut line = PlanNode::new(operation, "");
        let Conditions { left_keys, right_keys, keys_text, residual, residual_text } = conditions;
        let keys_text = keys_text.join(" AND ");
        if probe_tree.is_some() {
            // The keys are the index line's access; the rest is checked on each pair.
            if !residual_text.is_empty() {
                line.predicates.push(Predicate::Filter(residual_text.join(" AND ")));
            }
        } else if matches!(method, JoinMethod::NestedLoops(_)) {
            let all: Vec<String> = std::iter::once(keys_text).chain(residual_text).collect();
            line.predicates.push(Predicate::Filter(all.join(" AND ")));
        } else {
            line.predicates.push(Predicate::Access(keys_text));
            if !residual_text.is_empty() {
                line.predicates.push(Predicate::Filter(residual_text.join(" AND ")));
            }
        }
        let inner_lines = probe_tree.unwrap_or(tree);
        line.children.push(self.tree.adopt(inner_lines).expect("a subquery's plan has lines"));
        let join = Join {
            kind,
            method,
            left,
            right,
            left_keys,
            right_keys,
            residual: and_all(residual),
            probe_figures: Default::default(),
            workarea: Default::default(),
            emitted: Default::default(),
            join_filter,
            output: Some((0..width).collect()),
        };
        (join, line, right_estimate, left_filter)
    }

    /// The join filter of a semi or anti join (`kind`) hashing on its right input when
    /// `build_right`: where the probe input is a full scan of one table whose key
    /// columns are plain columns, the join keeps no probe row that joins nothing (never
    /// NOT EXISTS probing with the query's rows, whose unmatched rows it gives), and the
    /// cost says the filter pays, as for any hash join (`optimizer::join::join_filter_pays`).
    /// `inputs` and `keys` are the left's and the right's, `rows` their estimates.
    fn semi_join_filter(
        &self,
        kind: JoinKind,
        build_right: bool,
        inputs: [&JoinInput; 2],
        keys: [&Vec<Expr>; 2],
        rows: (Option<f64>, Option<f64>),
    ) -> Option<join::FilterPlan> {
        let probe_side = usize::from(!build_right);
        let probe_kept = build_right && kind == JoinKind::Anti;
        if probe_kept {
            return None;
        }
        let columns: Vec<usize> = keys[probe_side]
            .iter()
            .map(|k| match k {
                Expr::Column(c) => Some(*c),
                _ => None,
            })
            .collect::<Option<_>>()?;
        if columns.is_empty() {
            return None;
        }
        let scanned = |source: &Source| match source {
            Source::TableScan { table, .. } => Some(table.clone()),
            Source::InMemory(access) => Some(access.table.clone()),
            _ => None,
        };
        // A grouped view probes with its groups' keys: the filter is checked on its
        // table's rows, before they are grouped.
        let (table, probe_columns) = match &inputs[probe_side].source {
            Source::View(block) => (scanned(&block.source)?, block.group_key_columns(&columns)?),
            other => (scanned(other)?, columns),
        };
        if probe_columns.iter().any(|&c| c >= table.columns.len()) {
            return None;
        }
        let (build_rows, mut probe_rows) = if build_right { (rows.1?, rows.0?) } else { (rows.0?, rows.1?) };
        let table_rows = table.stats.as_ref().map_or(probe_rows, |s| s.num_rows as f64);
        if matches!(inputs[probe_side].source, Source::View(_)) {
            // The filter spares the view's GROUP BY the table rows it drops.
            probe_rows = probe_rows.max(table_rows);
        }
        // The build side's keys are taken to be as many as its rows (at most as many as
        // the probe column's values), each one of the probe key's values: of a key of
        // several columns, the product of the columns' shares, as for the FROM clause's
        // joins.
        let pass = join_cost::join_filter_pass(probe_columns.iter().map(|&c| {
            let values = join_cost::table_column_ndv(&table, c, table_rows);
            (build_rows.min(values), values)
        }));
        let model = cost_model(self.session);
        let (build, probe) = (Input { rows: build_rows, cost: 0.0 }, Input { rows: probe_rows, cost: 0.0 });
        if !join_cost::join_filter_pays(&model, build, probe, pass) {
            return None;
        }
        let key_text =
            probe_columns.iter().map(|&c| format!("\"{}\"", table.columns[c].name)).collect::<Vec<_>>().join(",");
        Some(join::FilterPlan { probe_columns, key_text, pass })
    }

    /// `left_line` (the query's rows, as a semi join reads them) under the line of its
    /// join filter, if the join has one.
    fn filter_left(&mut self, left_line: NodeId, filter: Option<LeftFilter>) -> NodeId {
        let below = self.tree.node(left_line).estimate;
        let mut line = match filter {
            None => return left_line,
            Some(LeftFilter::Create(name)) => join::filter_create_line(&name, below),
            Some(LeftFilter::Use { name, key_text, pass }) => {
                join::add_bloom_predicate(self.tree.node_mut(left_line), &name, &key_text);
                join::filter_use_line(&name, below, pass)
            }
        };
        line.children.push(left_line);
        self.tree.add(line)
    }

    /// Notes the hints of `plan`, a subquery left to the FILTER, as unused.
    fn note_unused(&mut self, plan: UnnestPlan) {
        self.note_all(super::query_block::unnest_hints_unused(&plan.hints));
        self.note_all(plan.swap_notes);
    }

    /// Adds `notes` to the plan's, each once.
    fn note_all(&mut self, notes: impl IntoIterator<Item = String>) {
        for note in notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
    }

    /// A SORT JOIN line over `line` (a merge join's input).
    fn sort_join(&mut self, line: NodeId) -> NodeId {
        let mut sort = PlanNode::new(Operation::SortJoin, "");
        sort.children.push(line);
        sort.rows_rule = RowsRule::Same;
        self.tree.add(sort)
    }
}

/// Whether unnesting `plan` is worth it for `rows` rows reaching the FILTER: as its hints
/// ask, else when its one run costs less than a run for each row; where an estimate is
/// missing (a table without statistics), always: a join reads the subquery's rows once,
/// the FILTER up to once a row.
fn worth_unnesting(plan: &UnnestPlan, rows: Option<f64>) -> bool {
    let asked = plan.hints.hints.iter().any(|h| matches!(h.kind, HintKind::Unnest(true) | HintKind::SubqueryJoin(_)));
    match (plan.block.estimate, rows, plan.run_cost) {
        _ if asked => true,
        (Some(once), Some(rows), Some(run)) => once.cost < rows.max(1.0) * run,
        _ => true,
    }
}
