//! The FILTER lines that run correlated subqueries, once for each row's values, and
//! set their answers for the expressions above that read them.
//!
//! A query has at most two:
//!
//! - **the lower FILTER** ([`SubqueryFilterPlan`] in `Builder::subquery_filter`): the
//!   WHERE clause's conjuncts that hold correlated subqueries, over the FROM clause's
//!   rows; it also runs the select list's and ORDER BY's subqueries when nothing that
//!   holds rows back (an aggregation, an analytic function) stands between it and the
//!   projection that reads their answers. Module `unnest` turns what it can of its
//!   conjuncts into semi and anti joins.
//! - **the upper FILTER** ([`UpperFilter`]): the subqueries of the select list, HAVING
//!   and ORDER BY of a query that aggregates, or that has analytic functions. It stands
//!   above the aggregation (for a correlated HAVING, right above it, HAVING its
//!   condition) or above the WINDOW SORT, so each row reaching the projection had its
//!   subqueries run for its own values. A subquery of an aggregating query reads GROUP
//!   BY keys of the row around it, which it takes from the aggregation's output (any
//!   other column is ORA-00979).
//!
//! ```text
//!   SELECT d, COUNT(*), (SELECT name FROM dept WHERE dept.id = e.d) FROM e GROUP BY d
//!
//!   SELECT STATEMENT
//!     FILTER                       (runs the subquery for each group's d)
//!       HASH GROUP BY
//!         TABLE ACCESS FULL E
//!       TABLE ACCESS FULL DEPT     filter("ID"=:B1)
//! ```
//!
//! Each FILTER gets its source last, once the plan below it is planned: that plan (its
//! source and the stages of the lines under the FILTER) becomes the FILTER's input block,
//! its subqueries' lines following the input's under it. The lower one is wrapped
//! first, so the upper one's input holds it.
//!
//! Invariant: a subquery's answer is read only on the row its FILTER ran it for, before
//! the next row comes: no stage between a FILTER and the expressions reading its answers
//! holds rows back.

use super::*;
use crate::exec::query_block::{CorrelatedPlan, QueryBlock, SubqueryFilter};

/// The FILTER of the conjuncts with correlated subqueries, being planned.
pub(super) struct SubqueryFilterPlan {
    pub(super) node: NodeId,
    /// Its condition: the WHERE conjuncts (or the HAVING clause) holding correlated
    /// subqueries; none when only the select list or ORDER BY holds them.
    pub(super) predicate: Option<Expr>,
    /// The columns of the rows it reads, and their names.
    pub(super) width: usize,
    pub(super) names: Vec<String>,
}

/// The FILTER above an aggregation or analytic functions, and the subqueries it runs.
pub(super) struct UpperFilter {
    plan: SubqueryFilterPlan,
    subplans: Vec<(CorrelatedPlan, PlanTree)>,
    /// Whether its rows are the FROM clause's (and analytic values after them): the
    /// outer values of its subqueries are then columns the scan must read.
    over_scope: bool,
}

impl Builder<'_> {
    /// The columns of the FROM clause's scope the FILTERs of correlated subqueries read
    /// (the lower one's condition, and what the subqueries take from the row), which the
    /// plan below them must give.
    pub(super) fn read_by_subquery_filter(&self, needed: &mut [bool]) {
        let mut mark = |c: usize| {
            if let Some(n) = needed.get_mut(c) {
                *n = true;
            }
        };
        if let Some(plan) = &self.subquery_filter {
            plan.predicate.iter().for_each(|p| p.visit_columns(&mut mark));
        }
        for (p, _) in self.subqueries.planned_correlated().iter() {
            for (_, e) in &p.correlation {
                e.visit_columns(&mut mark);
            }
        }
        self.read_by_upper_filter(&mut mark);
    }

    /// Marks the FROM clause's columns the upper FILTER's subqueries read, when its rows
    /// are the FROM clause's.
    fn read_by_upper_filter(&self, mark: &mut dyn FnMut(usize)) {
        if let Some(upper) = self.upper_filter.as_ref().filter(|u| u.over_scope) {
            for (p, _) in &upper.subplans {
                p.correlation.iter().for_each(|(_, e)| e.visit_columns(&mut |c| mark(c)));
            }
        }
    }

    /// The lower FILTER for the correlated subqueries of a select list or ORDER BY,
    /// where the WHERE clause made none: their answers are set for each row there,
    /// below the projection that reads them.
    pub(super) fn subquery_filter_for_select_list(&mut self, width: usize, names: &[String]) {
        if self.subquery_filter.is_some() || !self.subqueries.has_correlated() {
            return;
        }
        let node = self.node(Operation::Filter, "", RowsRule::Same);
        self.subquery_filter = Some(SubqueryFilterPlan { node, predicate: None, width, names: names.to_vec() });
    }

    /// Adds `subplans` to the upper FILTER, made now above the plan's top line when there
    /// is none yet, over rows of `width` columns named `names` (the rows of the FROM
    /// clause when `over_scope`). `having`: the HAVING clause holding correlated
    /// subqueries, the FILTER's condition.
    pub(super) fn upper_filter(
        &mut self,
        subplans: Vec<(CorrelatedPlan, PlanTree)>,
        having: Option<Expr>,
        width: usize,
        names: Vec<String>,
        over_scope: bool,
    ) {
        if subplans.is_empty() && having.is_none() {
            return;
        }
        if let Some(upper) = &mut self.upper_filter {
            upper.subplans.extend(subplans);
            return;
        }
        let rule = having
            .as_ref()
            .map_or(RowsRule::Same, |h| RowsRule::Fraction(optimizer::selectivity::default_selectivity(h)));
        let node = self.node(Operation::Filter, "", rule);
        if let Some(h) = &having {
            // As the aggregation's own HAVING shows: its names unquoted.
            let text = h.display(&names).to_string().replace('"', "");
            self.tree.node_mut(node).predicates.push(Predicate::Filter(text));
        }
        let plan = SubqueryFilterPlan { node, predicate: having, width, names };
        self.upper_filter = Some(UpperFilter { plan, subplans, over_scope });
    }

    /// Whether the upper FILTER, if there is one, is the plan's top line (nothing that
    /// holds rows back was added above it).
    pub(super) fn upper_filter_on_top(&self) -> bool {
        self.upper_filter.as_ref().is_none_or(|u| self.tree.root() == Some(u.plan.node))
    }

    /// Refuses a correlated subquery inside an aggregate call (of `aggregates`) or an
    /// analytic function call: the call is computed below the FILTER that would run it.
    pub(super) fn refuse_correlated_in_calls(&self, aggregates: &[crate::expr::aggregate::AggCall]) -> Result<()> {
        let windows = self.subqueries.windows.borrow();
        let in_windows =
            windows.iter().flat_map(|w| w.args.iter().chain(&w.partition).chain(w.order.iter().map(|o| &o.expr)));
        let mut exprs = aggregates.iter().flat_map(|a| a.exprs()).chain(in_windows);
        if exprs.any(|e| self.subqueries.holds_correlated(e)) {
            return Err(Error::unsupported(
                "a correlated subquery inside an aggregate or analytic function call (its value is needed below \
                 the FILTER that runs it)",
            ));
        }
        Ok(())
    }

    /// Gives the FILTERs of correlated subqueries their sources, once the plan below them
    /// is planned: the lower one (after unnesting what it can), then the upper one.
    pub(super) fn wrap_subquery_filters(&mut self) {
        self.unnest_subqueries();
        if let Some(plan) = self.subquery_filter.take() {
            let subplans = self.subqueries.take_correlated();
            self.wrap_filter(plan, subplans);
        }
        if let Some(upper) = self.upper_filter.take() {
            self.wrap_filter(upper.plan, upper.subplans);
        }
    }

    /// Gives FILTER `plan` its source: the plan below it (the source and the stages of
    /// the lines under it) as its input, and `subplans`, whose lines follow the input's
    /// under it.
    fn wrap_filter(&mut self, plan: SubqueryFilterPlan, subplans: Vec<(CorrelatedPlan, PlanTree)>) {
        let chain = self.tree.pipeline_nodes();
        let Some(at) = chain.iter().position(|&id| id == plan.node) else { return };
        // The input's columns the FILTER and the lines above it read; the others reach
        // them as NULL, never decoded.
        let mut used =
            columns_read_by(chain[at..].iter().flat_map(|&id| self.tree.node(id).work.stages.iter()), plan.width);
        let mut mark = |c: usize| {
            if let Some(n) = used.get_mut(c) {
                *n = true;
            }
        };
        plan.predicate.iter().for_each(|p| p.visit_columns(&mut mark));
        for (p, _) in &subplans {
            p.correlation.iter().for_each(|(_, e)| e.visit_columns(&mut mark));
        }
        self.read_by_upper_filter(&mut mark);
        let below = &chain[..at];
        let (Some(&reader), Some(&input_top)) = (below.first(), below.last()) else { return };
        let source = self.tree.node_mut(reader).work.source.take().expect("the plan below the FILTER has its source");
        let order = self.tree.pre_order_from(input_top);
        let (mut stages, mut positions, mut lines) = (Vec::new(), Vec::new(), Vec::new());
        for &id in below {
            stages.append(&mut self.tree.node_mut(id).work.stages);
            if let Some(line) = order.iter().position(|&n| n == id) {
                positions.push(stages.len());
                lines.push(line);
            }
        }
        let mut input = QueryBlock::new(source, stages, plan.width, positions, lines, Vec::new());
        input.used = Some(used);
        let mut plans = Vec::with_capacity(subplans.len());
        for (subplan, tree) in subplans {
            let line = self.tree.adopt(tree);
            self.tree.node_mut(plan.node).children.extend(line);
            plans.push(subplan);
        }
        let filter = SubqueryFilter { input, subplans: plans, predicate: plan.predicate };
        self.tree.node_mut(plan.node).work.source = Some(Source::SubqueryFilter(Box::new(filter)));
    }
}

/// Makes the outer values of correlated subqueries `plans` (over the FROM clause's
/// `scope`) the GROUP BY keys `keys` they are, as columns of the aggregation's output
/// (its keys first): a subquery of an aggregating query may read nothing else of the
/// row around it (ORA-00979).
pub(super) fn correlation_over_groups(
    plans: &mut [(CorrelatedPlan, PlanTree)],
    keys: &[Expr],
    scope: &Scope,
) -> Result<()> {
    for (plan, _) in plans {
        for (_, e) in &mut plan.correlation {
            let is_key = |k: &Expr| k == e || matches!(e, Expr::Column(c) if *k == scope.column_value(*c));
            let Some(key) = keys.iter().position(is_key) else {
                return Err(Error::InvalidValue {
                    context: e.display(&scope.names).to_string().replace('"', ""),
                    message: "ORA-00979: not a GROUP BY expression (a correlated subquery of a query that \
                              aggregates reads it from the row around it)"
                        .into(),
                });
            };
            *e = Expr::Column(key);
        }
    }
    Ok(())
}
