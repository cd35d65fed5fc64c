//! A FROM clause of several items: the join's scope, then, once the rest of the query is
//! planned, its join tree.
//!
//! 1. [`Builder::join_scope`] resolves each FROM item (a table, a `v$` view, DUAL) into
//!    the query's scope, its columns after the items before it; binds each ANSI join's
//!    ON (or USING) condition; and adds the node the join tree will hang from (its line chosen last).
//!    The WHERE clause is then bound over that scope as for one table, as a FILTER above
//!    the join's node.
//! 2. [`Builder::plan_join`] splits the WHERE clause and the ON conditions into
//!    conjuncts and places each: on one item's rows (its scan's filter) where no outer
//!    join could make them NULL, as a join condition at the join that brings their last
//!    item in (an equality of an expression of each side, of one type family, becomes a
//!    key of that join), or left in the FILTER above the joins. An OR over several
//!    items also gives each item the filter it implies for that item's rows alone, as
//!    Q7's and Q19's do (`expr::or_factoring::implied_filter`). Each item gets its access path from the optimizer
//!    as a lone table would (with the filter placed on it). Then the join order: the
//!    FROM order when the query has outer joins or an `ORDERED` hint, a `LEADING` hint's
//!    tables first, else the cheapest left-deep order (every order up to
//!    [`EXHAUSTIVE_ITEMS`] items, greedily beyond). Each join takes the cheapest method
//!    its keys allow (module `optimizer::join`), unless a hint names one.
//!
//! The joined rows hold the columns of the join order; the root join hands them on in
//! the scope's order, so the stages above the join are bound once, whatever the order.
//! Each input, a table's or a join's below, marks the columns the plan above it uses:
//! only those are decoded, and a hash join building on it keeps only those. A column
//! only a table's own filter reads (a WHERE or ON conjunct on that table alone, checked
//! in its scan) is read there and handed on to nothing; an index probe, which checks
//! that filter on the rows the input hands on, keeps it.

use super::family::{Family, expr_family};
use super::*;
use crate::exec::index_source::IndexAccess;
use crate::exec::join::{Join, JoinFilterSpec, JoinInput, JoinKind, JoinMethod, NestedInner};
use crate::expr::or_factoring::implied_filter;
use crate::sql::bind::{JoinedBy, ScopeRelation};
use crate::sql::optimizer::cost::CostModel;
use crate::sql::optimizer::hints::HintKind;
use crate::sql::optimizer::join::{self as join_cost, Input};
use crate::types::DataType;
use std::cell::{Cell, RefCell};
use std::ops::Range;

/// Join orders searched exhaustively up to this many FROM items; greedily beyond.
pub(super) const EXHAUSTIVE_ITEMS: usize = 6;

/// What the order search adds for each join without a condition: more than any order
/// of joins with conditions can cost.
const CARTESIAN_PENALTY: f64 = 1e15;

/// Most FROM items of one query.
const MAX_ITEMS: usize = 64;

/// A FROM item of a join.
pub(super) struct Relation {
    /// The table's or view's name, as plan lines show it.
    object: String,
    /// The name it is qualified by: its alias, else its name.
    label: String,
    access: RelationAccess,
    /// Its columns in the query's scope, and their names.
    columns: Range<usize>,
    names: Vec<String>,
    /// Each column's family of types (join keys pair columns of one family).
    families: Vec<Option<Family>>,
}

enum RelationAccess {
    Table(Arc<TableDef>),
    /// A `v$` view's rows, computed when the statement is planned.
    Fixed(Vec<Vec<Value>>),
    Dual,
    /// A query read as a row source (an inline view, a WITH query), planned when the
    /// scope was built: its block, taken when the item is planned, and its estimated rows.
    View {
        block: RefCell<Option<Box<super::query_block::PlannedBlock>>>,
        rows: f64,
    },
}

impl RelationAccess {
    /// The distinct values a column of a fixed view or a view is taken to have: as many
    /// as its rows.
    fn rows_as_distinct(&self) -> f64 {
        match self {
            RelationAccess::Table(_) | RelationAccess::Dual => 1.0,
            RelationAccess::Fixed(rows) => (rows.len() as f64).max(1.0),
            RelationAccess::View { rows, .. } => rows.max(1.0),
        }
    }
}

/// How a FROM item joins the items before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepKind {
    Inner,
    Left,
    Right,
    Full,
}

/// The FROM clause of a join, as the scope was built from it.
pub(super) struct JoinQuery {
    relations: Vec<Relation>,
    /// For each item: how it joins the items before it in `order` (the first's is
    /// Inner), and the conjuncts of its ON condition (bound over the scope).
    kind: Vec<StepKind>,
    on: Vec<Vec<Expr>>,
    /// The order outer joins are taken in: the FROM order, or for Oracle's `(+)` an order
    /// where each outer-joined item follows the items its conditions read.
    order: Vec<usize>,
    /// The node the join tree hangs from; its operation is set once the root join is planned.
    node: NodeId,
    /// Join filters planned so far (the next is `:BF` and this number), and the items
    /// whose scans got one.
    join_filters: Cell<u32>,
    filtered_items: RefCell<Vec<usize>>,
    /// WHERE conjuncts (ORs over several items) whose implied filters were added to
    /// their items' own: what they keep is then in those items' estimated rows, and the
    /// joins count them as keeping every pair.
    implied: Vec<Expr>,
}

impl JoinQuery {
    fn has_outer_joins(&self) -> bool {
        self.kind.iter().any(|k| *k != StepKind::Inner)
    }

    /// Of the items in `items`, the one joined last in `order`.
    fn last_of(&self, items: u64) -> usize {
        *self.order.iter().rev().find(|&&r| items & (1 << r) != 0).expect("an item")
    }

    fn relation_of(&self, c: usize) -> usize {
        self.relations.iter().position(|r| r.columns.contains(&c)).expect("a column of the join's scope")
    }

    /// The items an expression reads, as a bit set.
    fn items_of(&self, e: &Expr) -> u64 {
        let mut mask = 0u64;
        e.visit_columns(&mut |c| mask |= 1 << self.relation_of(c));
        mask
    }
}

/// One FROM item, planned on its own: its input to a join and its plan lines.
struct PlannedItem {
    input: JoinInput,
    tree: PlanTree,
    estimate: Input,
    /// The scope columns its input gives, in order.
    layout: Vec<usize>,
    /// The object of an index probe, when a nested loop may probe its table through an
    /// index: the table, its needed columns, its filter (relation-local).
    table: Option<(Arc<TableDef>, Vec<bool>, Option<Expr>)>,
    segment_blocks: u64,
}

/// A conjunct waiting for its place.
struct Conjunct {
    expr: Expr,
    items: u64,
}

impl Builder<'_> {
    /// Builds the scope of a FROM clause of several items (or of ANSI joins) and the
    /// node of its join tree; see the module doc.
    pub(super) fn join_scope(&mut self, select: &ast::Select) -> Result<Scope> {
        let mut relations: Vec<Relation> = Vec::new();
        let mut scope = Scope::default();
        let mut constraints: Vec<(StepKind, Option<&ast::JoinConstraint>, &ast::TableFactor)> = Vec::new();
        for (n, item) in select.from.iter().enumerate() {
            self.add_relation(&item.relation, &mut relations, &mut scope)?;
            if n > 0 {
                constraints.push((StepKind::Inner, None, &item.relation));
            }
            for join in &item.joins {
                use ast::JoinOperator as J;
                let (kind, constraint) = match &join.join_operator {
                    J::Join(c) | J::Inner(c) => (StepKind::Inner, c),
                    J::Left(c) | J::LeftOuter(c) => (StepKind::Left, c),
                    J::Right(c) | J::RightOuter(c) => (StepKind::Right, c),
                    J::FullOuter(c) => (StepKind::Full, c),
                    J::CrossJoin(c) => (StepKind::Inner, c),
                    other => return Err(unsupported(format!("join {other:?}"), &join.relation)),
                };
                self.add_relation(&join.relation, &mut relations, &mut scope)?;
                constraints.push((kind, Some(constraint), &join.relation));
            }
        }
        if relations.len() > MAX_ITEMS {
            return Err(Error::unsupported(format!("a FROM clause of more than {MAX_ITEMS} items")));
        }
        let n = relations.len();
        let (mut kinds, mut ons) = (vec![StepKind::Inner; n], vec![Vec::new(); n]);
        for (i, (kind, constraint, factor)) in constraints.into_iter().enumerate() {
            let item = i + 1;
            let on = match constraint {
                None | Some(ast::JoinConstraint::None) => {
                    if kind != StepKind::Inner {
                        return Err(Error::Parse {
                            message: format!("an outer join of {} needs an ON or USING clause", relations[item].label),
                            position: position_of(factor),
                        });
                    }
                    Vec::new()
                }
                Some(ast::JoinConstraint::On(e)) => self.bind_on(e, item, &relations, &scope)?,
                Some(ast::JoinConstraint::Using(columns)) => {
                    let names: Vec<(String, Option<String>)> =
                        columns.iter().map(|c| (crate::sql::bind::function_name(c), position_of(c))).collect();
                    using(&names, item, kind, JoinedBy::Using, &relations, &mut scope)?
                }
                Some(ast::JoinConstraint::Natural) => {
                    // The columns of the joined item whose names an item before it has,
                    // in the item's order: none makes a cross join, as in Oracle.
                    let item_columns = relations[item].columns.clone();
                    let names: Vec<(String, Option<String>)> = item_columns
                        .map(|c| scope.names[c].clone())
                        .filter(|name| {
                            relations[..item].iter().any(|r| r.columns.clone().any(|c| scope.names[c] == *name))
                        })
                        .map(|name| (name, position_of(factor)))
                        .collect();
                    using(&names, item, kind, JoinedBy::Natural, &relations, &mut scope)?
                }
            };
            kinds[item] = kind;
            ons[item] = on;
        }
        self.families = relations.iter().flat_map(|r| r.families.iter().copied()).collect();
        let order = self.oracle_outer_joins(select, &relations, &scope, &mut kinds, &mut ons)?;
        let node = self.node(Operation::HashJoin, "", RowsRule::Unknown);
        self.join = Some(JoinQuery {
            relations,
            kind: kinds,
            on: ons,
            order,
            node,
            join_filters: Cell::new(0),
            filtered_items: RefCell::new(Vec::new()),
            implied: Vec::new(),
        });
        Ok(scope)
    }

    /// Adds one FROM item to the join's items and scope.
    fn add_relation(
        &mut self,
        factor: &ast::TableFactor,
        relations: &mut Vec<Relation>,
        scope: &mut Scope,
    ) -> Result<()> {
        if let ast::TableFactor::Derived { alias, .. } = factor {
            let (mut block, label) = self.derived_block(factor)?;
            let Some(label) = label else {
                return Err(Error::Parse {
                    message: "a subquery in a join's FROM clause needs an alias".into(),
                    position: position_of(factor),
                });
            };
            let names: Vec<String> = alias.iter().flat_map(|a| a.columns.iter().map(|c| ident_name(&c.name))).collect();
            super::query_block::rename_columns(&mut block, &names, &label)?;
            return self.add_view_relation(String::new(), label, block, factor, relations, scope);
        }
        let ast::TableFactor::Table { name, alias, args, .. } = factor else {
            return Err(unsupported(format!("FROM item {factor} in a join"), factor));
        };
        if args.is_some() {
            return Err(unsupported("a table function in a join".into(), factor));
        }
        if let Some(a) = alias
            && !a.columns.is_empty()
        {
            return Err(unsupported("a table alias's column list in a join".into(), factor));
        }
        let object = crate::sql::bind::function_name(name);
        let label = alias.as_ref().map_or_else(|| object.clone(), |a| ident_name(&a.name));
        if relations.iter().any(|r| r.label == label) {
            return Err(Error::Parse {
                message: format!("{label} names two items of the FROM clause: give them aliases of their own"),
                position: position_of(factor),
            });
        }
        if let Some(block) = self.named_block_of(name, &label)? {
            return self.add_view_relation(object, label, block, factor, relations, scope);
        }
        let (access, names, families, char_lengths): (_, Vec<String>, Vec<Option<Family>>, Vec<Option<u32>>) =
            if object == "DUAL" {
                (RelationAccess::Dual, vec!["DUMMY".into()], vec![Some(Family::Text)], vec![None])
            } else if let Some((columns, rows)) = views::fixed_view(&object, self.session)? {
                let families =
                    (0..columns.len()).map(|c| rows.iter().find_map(|r| r.get(c).and_then(Family::of_value))).collect();
                let n = columns.len();
                (RelationAccess::Fixed(rows), columns, families, vec![None; n])
            } else {
                let table = self.session.db.catalog.table(&object).ok_or_else(|| Error::UnknownName {
                    kind: "table or view",
                    name: object.clone(),
                    position: position_of(name),
                })?;
                crate::sql::privileges::require_on(self.session, &table.name, crate::catalog::ObjectPrivilege::Select)?;
                let names = table.columns.iter().map(|c| c.name.clone()).collect();
                let families = table.columns.iter().map(|c| Some(Family::of_type(c.data_type))).collect();
                let lengths = table
                    .columns
                    .iter()
                    .map(|c| match c.data_type {
                        DataType::Char { len } => Some(len),
                        _ => None,
                    })
                    .collect();
                (RelationAccess::Table(table), names, families, lengths)
            };
        let start = scope.names.len();
        scope.names.extend(names.iter().cloned());
        scope.char_lengths.extend(char_lengths);
        let columns = start..scope.names.len();
        scope.relations.push(ScopeRelation {
            qualifiers: vec![label.clone()],
            columns: columns.clone(),
            unqualified_hidden: Vec::new(),
        });
        relations.push(Relation { object, label, access, columns, names, families });
        Ok(())
    }

    /// Adds a query block (a view named `object`, empty for a subquery) as a FROM item
    /// of the join, qualified by `label`.
    fn add_view_relation(
        &mut self,
        object: String,
        label: String,
        block: super::query_block::PlannedBlock,
        factor: &ast::TableFactor,
        relations: &mut Vec<Relation>,
        scope: &mut Scope,
    ) -> Result<()> {
        if relations.iter().any(|r| r.label == label) {
            return Err(Error::Parse {
                message: format!("{label} names two items of the FROM clause: give them aliases of their own"),
                position: position_of(factor),
            });
        }
        let start = scope.names.len();
        scope.names.extend(block.columns.iter().cloned());
        scope.char_lengths.extend(block.char_lengths.iter().copied());
        let columns = start..scope.names.len();
        scope.relations.push(ScopeRelation {
            qualifiers: vec![label.clone()],
            columns: columns.clone(),
            unqualified_hidden: Vec::new(),
        });
        let (names, families) = (block.columns.clone(), block.families.clone());
        let rows = block.estimate.map_or(1.0, |e| e.rows);
        let access = RelationAccess::View { block: RefCell::new(Some(Box::new(block))), rows };
        relations.push(Relation { object, label, access, columns, names, families });
        Ok(())
    }

    /// Binds the ON condition of the join of item `item`, which may read that item and
    /// the ones before it.
    fn bind_on(&self, e: &ast::Expr, item: usize, relations: &[Relation], scope: &Scope) -> Result<Vec<Expr>> {
        let bound = Binder { scope, f: self.f, grouping: None, subqueries: Some(&self.subqueries) }.bind(e)?;
        if !bound.is_condition() {
            return Err(Error::InvalidValue {
                context: "ON".into(),
                message: format!("{e} is a value, not a condition"),
            });
        }
        let mut late = None;
        bound.visit_columns(&mut |c| {
            if c >= relations[item].columns.end {
                late = relations.iter().find(|r| r.columns.contains(&c)).map(|r| r.label.clone());
            }
        });
        if let Some(label) = late {
            return Err(Error::Parse {
                message: format!(
                    "the ON clause of the join of {} reads {label}, which is joined after it",
                    relations[item].label
                ),
                position: position_of(e),
            });
        }
        let mut out = Vec::new();
        split_conjuncts(bound, &mut out);
        Ok(out)
    }

    /// Plans the join tree under the join's node; see the module doc.
    pub(super) fn plan_join(&mut self, mut query: JoinQuery, hints: &Hints, scope: &Scope) -> Result<()> {
        let width = query.relations.iter().map(|r| r.columns.end).max().unwrap_or(0);
        // The WHERE clause's conjuncts leave the FILTER above the join for their places.
        let mut pool: Vec<Conjunct> = Vec::new();
        let where_node = self.where_node.filter(|&w| self.tree.node(w).children.first() == Some(&query.node));
        let where_filter =
            where_node.and_then(|w| self.tree.node(w).work.stages.first()).filter(|s| matches!(s, Stage::Filter(_)));
        if let Some(Stage::Filter(f)) = where_filter {
            let mut parts = Vec::new();
            split_conjuncts(f.predicate.clone(), &mut parts);
            pool.extend(parts.into_iter().map(|expr| Conjunct { items: query.items_of(&expr), expr }));
        }
        // The columns the plan above the join reads. The WHERE clause's conjuncts are
        // counted where they land: one checked in an item's scan reads its columns
        // there (`plan_item`), and a join hands them on to nothing above it.
        let above = self.tree.stages().filter(|s| !where_filter.is_some_and(|w| std::ptr::eq(*s, w)));
        let mut needed = columns_read_by(above, width);
        self.read_by_subquery_filter(&mut needed);
        let n = query.relations.len();
        let outer = query.has_outer_joins();
        // Where each conjunct goes.
        let mut local: Vec<Vec<Expr>> = vec![Vec::new(); n];
        let mut at_join: Vec<Vec<Expr>> = vec![Vec::new(); n];
        let mut top: Vec<Expr> = Vec::new();
        let nulled = nulled_items(&query);
        // An OR over several items implies, for each item every branch filters on its
        // own, the OR of those filters (`or_factoring::implied_filter`): checked at the
        // item's scan it drops rows before any join, and it sizes the item's estimate.
        // Only for items no outer join NULLs, as a conjunct of one item goes there.
        for c in &pool {
            if c.items.count_ones() < 2 {
                continue;
            }
            let mut implied_any = false;
            for r in (0..n).filter(|&r| c.items & (1 << r) != 0 && nulled[r] == NulledAt::Never) {
                if let Some(filter) = implied_filter(&c.expr, |e| query.items_of(e) == 1 << r) {
                    local[r].push(filter);
                    implied_any = true;
                }
            }
            if implied_any {
                query.implied.push(c.expr.clone());
            }
        }
        for c in pool {
            if c.items == 0 {
                top.push(c.expr);
                continue;
            }
            let last = query.last_of(c.items);
            if c.items.count_ones() == 1 && nulled[last] == NulledAt::Never {
                local[last].push(c.expr);
            } else if !outer
                || (query.kind[last] == StepKind::Inner
                    && (0..n).filter(|r| c.items & (1 << r) != 0).all(|r| nulled[r] == NulledAt::Never))
            {
                // At the inner join that brings its last item in: the same as checking
                // it after every join, since no outer join NULLs its items.
                at_join[last].push(c.expr);
            } else {
                top.push(c.expr);
            }
        }
        // ON conditions: an inner or left join's conditions on its own item alone filter
        // that item's rows (a row they refuse joins nothing either way).
        for (item, on) in query.on.iter().enumerate() {
            let kind = query.kind[item];
            for e in on {
                if query.items_of(e) == 1 << item && matches!(kind, StepKind::Inner | StepKind::Left) {
                    local[item].push(e.clone());
                } else {
                    at_join[item].push(e.clone());
                }
            }
        }
        // What a join or the FILTER above them checks reads its columns from the joined
        // rows.
        for e in at_join.iter().flatten().chain(&top) {
            e.visit_columns(&mut |c| needed[c] = true);
        }
        // Each item planned alone.
        let model = cost_model(self.session);
        let mut items = Vec::with_capacity(n);
        for (r, relation) in query.relations.iter().enumerate() {
            let filter = and_all(std::mem::take(&mut local[r]));
            items.push(self.plan_item(relation, filter, &needed, hints)?);
        }
        let order = self.join_order(&query, &items, &at_join, hints, outer);
        for h in &hints.hints {
            if matches!(
                h.kind,
                HintKind::UseNl
                    | HintKind::UseHash
                    | HintKind::UseMerge
                    | HintKind::SwapJoinInputs
                    | HintKind::NoSwapJoinInputs
            ) && names_item(h, &query.relations[order[0]])
            {
                let label = &query.relations[order[0]].label;
                self.notes.push(format!("hint not used: {} ({label} is the first table of the join order)", h.text));
            }
            if h.kind.is_join_hint()
                && let Some(t) = &h.table
                && !query.relations.iter().any(|r| r.label == *t || r.object == *t)
            {
                self.notes.push(format!("hint not used: {} (no table {t} in FROM)", h.text));
            }
        }
        let names = qualified_names(&query, scope);
        let mut items: Vec<Option<PlannedItem>> = items.into_iter().map(Some).collect();
        let first = items[order[0]].take().expect("each item once");
        let mut joined = 1u64 << order[0];
        let (mut left, mut left_tree, mut left_est, mut layout) =
            (first.input, first.tree, first.estimate, first.layout);
        for (step, &r) in order.iter().enumerate().skip(1) {
            let item = items[r].take().expect("each item once");
            let kind = if outer { query.kind[r] } else { StepKind::Inner };
            let now = joined | (1 << r);
            let mut conditions = Vec::new();
            for (i, list) in at_join.iter_mut().enumerate() {
                if outer && i != r {
                    continue;
                }
                let (mine, rest): (Vec<Expr>, Vec<Expr>) = list.drain(..).partition(|e| query.items_of(e) & !now == 0);
                conditions.extend(mine);
                *list = rest;
            }
            let planned = self.join_step(JoinStep {
                query: &query,
                kind,
                left,
                left_tree: std::mem::take(&mut left_tree),
                left_est,
                layout: &layout,
                right: item,
                right_index: r,
                conditions,
                hints,
                model: &model,
                names: &names,
            })?;
            joined = now;
            layout = planned.layout;
            left_est = planned.estimate;
            let estimate = Estimate { rows: left_est.rows, cost: left_est.cost };
            let mut join = planned.join;
            if step == order.len() - 1 {
                // The root: the join's node takes the root join's line and children,
                // and the rows leave in the scope's order.
                let main = self.tree.node_mut(query.node);
                main.operation = planned.node.operation;
                main.predicates = planned.node.predicates;
                main.rows_rule = RowsRule::Source(estimate.rows);
                main.estimate = Some(estimate);
                let children: Vec<NodeId> = planned
                    .children
                    .into_iter()
                    .map(|c| self.tree.adopt(c).expect("a child's plan has a root"))
                    .collect();
                self.tree.node_mut(query.node).children = children;
                if layout != (0..width).collect::<Vec<_>>() {
                    join.output = Some(
                        (0..width).map(|c| layout.iter().position(|&l| l == c).expect("every column joined")).collect(),
                    );
                }
                self.tree.node_mut(query.node).work.source = Some(Source::Join(Box::new(join)));
                left = JoinInput::new(Source::Dual, None, width, width);
            } else {
                let mut tree = PlanTree::default();
                let id = tree.push_above(planned.node);
                let children: Vec<NodeId> =
                    planned.children.into_iter().map(|c| tree.adopt(c).expect("a child's plan has a root")).collect();
                let node = tree.node_mut(id);
                node.children = children;
                node.rows_rule = RowsRule::Source(estimate.rows);
                node.estimate = Some(estimate);
                left_tree = tree;
                // The joined row's columns the joins after it and the plan above use: a
                // hash join building on it keeps only those.
                let w = layout.len();
                let used: Vec<bool> = layout.iter().map(|&c| needed[c]).collect();
                left = JoinInput::new(Source::Join(Box::new(join)), None, w, w).using(&used);
            }
        }
        drop(left);
        for h in hints.hints.iter().filter(|h| h.kind == HintKind::PxJoinFilter) {
            let filtered = query.filtered_items.borrow();
            if let Some(r) = query.relations.iter().position(|r| names_item(h, r))
                && !filtered.contains(&r)
            {
                self.notes.push(format!(
                    "hint not used: {} ({} is not the probe side's full scan of a hash join that keeps no probe row joining none)",
                    h.text, query.relations[r].label
                ));
            }
        }
        // What no join could take stays in the FILTER above them, or the FILTER goes.
        if let Some(w) = where_node {
            match and_all(top) {
                Some(p) => {
                    let text = p.display(&names).to_string();
                    let node = self.tree.node_mut(w);
                    node.predicates = vec![Predicate::Filter(text)];
                    node.work.stages[0] = Stage::Filter(FilterStage::new(p));
                }
                None => {
                    // The node's other stages (a projection run there) move down to the
                    // join's node, which the FILTER's parent now reads from.
                    let mut stages = std::mem::take(&mut self.tree.node_mut(w).work.stages);
                    stages.remove(0);
                    self.tree.node_mut(query.node).work.stages.extend(stages);
                    self.tree.splice_out(w);
                }
            }
        }
        Ok(())
    }
}

/// Where an outer join first makes an item's columns NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NulledAt {
    Never,
    /// At its own join (the right item of a LEFT or FULL join).
    Own,
    /// At a later join (a RIGHT or FULL join of an item after it).
    Later,
}

/// For each item, where an outer join first NULLs it, the joins taken in `order`.
fn nulled_items(query: &JoinQuery) -> Vec<NulledAt> {
    let mut out = vec![NulledAt::Never; query.relations.len()];
    for (p, &item) in query.order.iter().enumerate().skip(1) {
        let kind = query.kind[item];
        if matches!(kind, StepKind::Left | StepKind::Full) && out[item] == NulledAt::Never {
            out[item] = NulledAt::Own;
        }
        if matches!(kind, StepKind::Right | StepKind::Full) {
            for &before in &query.order[..p] {
                if out[before] == NulledAt::Never {
                    out[before] = NulledAt::Later;
                }
            }
        }
    }
    out
}

/// The scope's columns named as join predicates show them: `"E"."DEPTNO"` (the quotes
/// around the whole are the display's).
fn qualified_names(query: &JoinQuery, scope: &Scope) -> Vec<String> {
    let mut names = scope.names.clone();
    for r in &query.relations {
        for c in r.columns.clone() {
            names[c] = format!("{}\".\"{}", r.label, scope.names[c]);
        }
    }
    names
}

/// The join of a USING clause (or a NATURAL join's common columns), `columns` being the
/// names and where each was written: each named column of the joined item equals what
/// the unqualified name means in the items before it (one item's column, or an earlier
/// FULL join's COALESCE of its copies); the unqualified name then means the preserved
/// side's column, or after a FULL join the COALESCE of both sides' (Oracle's), which
/// `SELECT *` lists first. Either copy's qualified name is refused from then on.
fn using(
    columns: &[(String, Option<String>)],
    item: usize,
    kind: StepKind,
    joined_by: JoinedBy,
    relations: &[Relation],
    scope: &mut Scope,
) -> Result<Vec<Expr>> {
    let mut out = Vec::new();
    for (name, position) in columns {
        let (name, position) = (name.clone(), position.clone());
        let right =
            relations[item].columns.clone().find(|&c| scope.names[c] == name).ok_or_else(|| Error::UnknownName {
                kind: "column",
                name: format!("{}.{name}", relations[item].label),
                position: position.clone(),
            })?;
        // The column the unqualified name finds before this item: an earlier USING
        // column's hidden copy is not one.
        let lefts: Vec<usize> = (0..item)
            .filter_map(|r| {
                relations[r]
                    .columns
                    .clone()
                    .find(|&c| scope.names[c] == name && !scope.relations[r].unqualified_hidden.contains(&c))
            })
            .collect();
        let left = match lefts[..] {
            [one] => one,
            [] => {
                return Err(Error::UnknownName { kind: "column", name: name.clone(), position: position.clone() });
            }
            _ => {
                return Err(Error::Parse {
                    message: format!(
                        "column ambiguously defined (ORA-00918): USING ({name}) names a column of several items before {}",
                        relations[item].label
                    ),
                    position,
                });
            }
        };
        let left_value = scope.column_value(left);
        let (hidden, shown) = if kind == StepKind::Right { (left, right) } else { (right, left) };
        let owner = scope.relation_of(hidden).expect("a column of the scope");
        scope.relations[owner].unqualified_hidden.push(hidden);
        // A column an earlier USING joined on keeps its place among the joined columns.
        match scope.joined_columns.iter().position(|&c| c == left) {
            Some(p) => scope.joined_columns[p] = shown,
            None => scope.joined_columns.push(shown),
        }
        // An inner or left join keeps what the name meant; a right join's name is the
        // right copy; a full join's, the first non-NULL of the two.
        if matches!(kind, StepKind::Right | StepKind::Full) {
            scope.joined_values.retain(|(c, _)| *c != left);
        }
        if kind == StepKind::Full {
            let value = Expr::Function {
                func: crate::expr::functions::ScalarFunction::Coalesce,
                args: vec![left_value.clone(), Expr::Column(right)],
            };
            scope.joined_values.push((shown, value));
        }
        for copy in [left, right] {
            if !scope.join_column_copies.iter().any(|(c, _)| *c == copy) {
                scope.join_column_copies.push((copy, joined_by));
            }
        }
        out.push(Expr::Compare {
            op: crate::expr::CmpOp::Eq,
            left: Box::new(left_value),
            right: Box::new(Expr::Column(right)),
        });
    }
    Ok(out)
}

/// What planning one join of the tree takes.
struct JoinStep<'q> {
    query: &'q JoinQuery,
    kind: StepKind,
    /// The rows joined so far, their plan, their estimate and their columns (in order).
    left: JoinInput,
    left_tree: PlanTree,
    left_est: Input,
    layout: &'q [usize],
    /// The item joined now, and its index in the FROM clause.
    right: PlannedItem,
    right_index: usize,
    /// The conditions this join checks (over the scope's columns).
    conditions: Vec<Expr>,
    hints: &'q Hints,
    model: &'q CostModel,
    names: &'q [String],
}

/// One join of the tree, planned.
struct StepPlan {
    join: Join,
    /// The join's plan line, and its children's plans in the order EXPLAIN shows them.
    node: PlanNode,
    children: Vec<PlanTree>,
    estimate: Input,
    layout: Vec<usize>,
}

/// The methods a join can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MethodChoice {
    Hash {
        build_right: bool,
    },
    Merge,
    /// A nested loop probing the right item's index (at this position of its table's
    /// indexes).
    NestedIndex(usize),
    NestedRescan,
}

impl Builder<'_> {
    /// Plans one FROM item as a lone table would be, with `filter` (over the scope's
    /// columns) on its rows.
    fn plan_item(
        &mut self,
        relation: &Relation,
        filter: Option<Expr>,
        needed: &[bool],
        hints: &Hints,
    ) -> Result<PlannedItem> {
        let start = relation.columns.start;
        let filter = filter.map(|mut p| {
            p.remap_columns(&|c| c - start);
            p
        });
        let mut read: Vec<bool> = needed[relation.columns.clone()].to_vec();
        if let Some(p) = &filter {
            p.visit_columns(&mut |c| read[c] = true);
        }
        let layout: Vec<usize> = relation.columns.clone().collect();
        let width = layout.len();
        let local_filter = filter.clone();
        let read_width = read.iter().rposition(|&r| r).map_or(0, |last| last + 1);
        let local_names = &relation.names;
        let mut tree = PlanTree::default();
        let (source, estimate) = match &relation.access {
            RelationAccess::Table(table) => {
                let mut sub = Builder::new(self.session, self.f, self.named, None);
                sub.table = Some(table.clone());
                let scan = sub.node(Operation::TableAccessFull, &table.name, RowsRule::Unknown);
                sub.table_node = Some(scan);
                if let Some(p) = &filter {
                    sub.tree.node_mut(scan).predicates.push(Predicate::Filter(p.display(local_names).to_string()));
                    sub.run_in_top(Stage::Filter(FilterStage::new(p.clone())));
                }
                let own = hints_for(hints, relation);
                let source = match sub.choose_access(table, Some(&relation.label), &own, &read, true)? {
                    Some(index) => index,
                    None => match sub.inmemory_access(table, Some(&relation.label), read.clone(), &own) {
                        Some(inmemory) => inmemory,
                        None => Source::TableScan { table: table.clone(), columns_read: read.clone() },
                    },
                };
                sub.tree.node_mut(scan).work.source = Some(source);
                if sub.rebind.is_some()
                    && let Some(p) = &filter
                {
                    // The range's bounds are this execution's values: another execution
                    // with other values is planned again.
                    p.visit_binds(&mut |slot| self.f.taken.borrow_mut().binds.push(slot));
                }
                self.notes.append(&mut sub.notes);
                sub.tree.estimate();
                let root = sub.tree.root().expect("the item's node");
                let estimate = sub
                    .tree
                    .node(root)
                    .estimate
                    .map_or(Input { rows: 1.0, cost: 1.0 }, |e| Input { rows: e.rows.max(0.0), cost: e.cost });
                let (source, stages) = sub.tree.build_pipeline();
                let tree = sub.tree;
                let residual = match stages.into_iter().next() {
                    Some(Stage::Filter(f)) => Some(f.predicate),
                    _ => None,
                };
                let blocks = blocks_to_estimate_from(&self.session.access_context(), table)?.unwrap_or(0);
                let used = &needed[relation.columns.clone()];
                let input = JoinInput::new(source, residual, width, read_width).using(used);
                return Ok(PlannedItem {
                    input,
                    tree,
                    estimate,
                    layout,
                    table: Some((table.clone(), read, local_filter)),
                    segment_blocks: blocks,
                });
            }
            RelationAccess::Fixed(rows) => {
                let fraction = filter.as_ref().map_or(1.0, super::super::optimizer::selectivity::default_selectivity);
                let rows_out = rows.len() as f64 * fraction;
                let mut node = PlanNode::new(Operation::FixedTableFull, &relation.object);
                if let Some(p) = &filter {
                    node.predicates.push(Predicate::Filter(p.display(local_names).to_string()));
                }
                node.rows_rule = RowsRule::Source(rows_out);
                node.estimate = Some(Estimate { rows: rows_out, cost: 0.0 });
                tree.push_above(node);
                (Source::Rows(rows.clone()), Input { rows: rows_out, cost: 0.0 })
            }
            RelationAccess::View { block, .. } => {
                let block = block.borrow_mut().take().expect("a join plans each of its items once");
                let fraction = filter.as_ref().map_or(1.0, super::super::optimizer::selectivity::default_selectivity);
                let inner = block.estimate.unwrap_or(Estimate { rows: 1.0, cost: 0.0 });
                let estimate = Estimate { rows: inner.rows * fraction, cost: inner.cost };
                let mut node = PlanNode::new(Operation::View, &relation.object);
                if let Some(p) = &filter {
                    node.predicates.push(Predicate::Filter(p.display(local_names).to_string()));
                }
                node.rows_rule = RowsRule::Source(estimate.rows);
                node.estimate = Some(estimate);
                let view = tree.push_above(node);
                let top = tree.adopt(block.tree);
                tree.node_mut(view).children.extend(top);
                (Source::View(Box::new(block.block)), Input { rows: estimate.rows, cost: estimate.cost })
            }
            RelationAccess::Dual => {
                let mut node = PlanNode::new(Operation::FastDual, "");
                if let Some(p) = &filter {
                    node.predicates.push(Predicate::Filter(p.display(local_names).to_string()));
                }
                node.rows_rule = RowsRule::Source(1.0);
                node.estimate = Some(Estimate { rows: 1.0, cost: 0.0 });
                tree.push_above(node);
                (Source::Dual, Input { rows: 1.0, cost: 0.0 })
            }
        };
        let input = JoinInput::new(source, filter, width, read_width);
        Ok(PlannedItem { input, tree, estimate, layout, table: None, segment_blocks: 0 })
    }
}

impl Builder<'_> {
    /// The order the items are joined in: see the module doc.
    fn join_order(
        &mut self,
        query: &JoinQuery,
        items: &[PlannedItem],
        at_join: &[Vec<Expr>],
        hints: &Hints,
        outer: bool,
    ) -> Vec<usize> {
        let n = items.len();
        let from_order: Vec<usize> = (0..n).collect();
        if outer {
            if hints.hints.iter().any(|h| matches!(h.kind, HintKind::Leading(_))) {
                self.notes.push("hint not used: LEADING (the query has outer joins: their order is kept)".into());
            }
            return query.order.clone();
        }
        if hints.hints.iter().any(|h| h.kind == HintKind::Ordered) {
            return from_order;
        }
        let conditions = self.order_conditions(query, items, at_join);
        let rows_of = |mask: u64| -> f64 {
            let mut rows: f64 =
                (0..n).filter(|r| mask & (1 << r) != 0).map(|r| items[r].estimate.rows.max(1.0)).product();
            for (items_read, sel) in &conditions {
                if items_read & !mask == 0 {
                    rows *= sel;
                }
            }
            rows.max(1.0)
        };
        let connected = |mask: u64, r: usize| conditions.iter().any(|(m, _)| m & (1 << r) != 0 && m & mask != 0);
        // A join's cost as the order search sees it: the cheaper of a hash join and a
        // nested loop over the item's own access, plus reading what was joined so far.
        // A join method a hint asks for the item's join, if any.
        let asked = |r: usize| {
            hints.hints.iter().find_map(|h| match h.kind {
                HintKind::UseNl | HintKind::UseHash | HintKind::UseMerge if names_item(h, &query.relations[r]) => {
                    Some(h.kind.clone())
                }
                _ => None,
            })
        };
        let model = cost_model(self.session);
        let step = |left: Input, r: usize| -> f64 {
            let right = items[r].estimate;
            let hash = join_cost::hash(&model, right, left).min(join_cost::hash(&model, left, right));
            let nested = join_cost::nested_loops(left, right.cost.min(index_probe_guess(&items[r], &model)));
            match asked(r) {
                Some(HintKind::UseNl) => nested,
                Some(HintKind::UseHash) => hash,
                Some(HintKind::UseMerge) => join_cost::merge(&model, left, right),
                _ => hash.min(nested),
            }
        };
        let mut prefix: Vec<usize> = Vec::new();
        for h in &hints.hints {
            if let HintKind::Leading(labels) = &h.kind {
                for label in labels {
                    match query.relations.iter().position(|r| r.label == *label) {
                        Some(r) if !prefix.contains(&r) => prefix.push(r),
                        _ => self.notes.push(format!("hint not used: {} (no table {label} in FROM)", h.text)),
                    }
                }
                break;
            }
        }
        let full_mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        if prefix.is_empty() && n <= EXHAUSTIVE_ITEMS {
            // Every left-deep order: the cheapest way to join each set of items, its
            // last item joined to the cheapest way to join the others.
            let mut best: Vec<Option<(f64, Vec<usize>)>> = vec![None; 1 << n];
            for r in 0..n {
                // An item whose join a hint names is joined to others, not first.
                let first = if asked(r).is_some() { CARTESIAN_PENALTY / 2.0 } else { 0.0 };
                best[1 << r] = Some((items[r].estimate.cost + first, vec![r]));
            }
            for mask in 1..=full_mask {
                if mask.count_ones() < 2 {
                    continue;
                }
                let mut choice: Option<(f64, Vec<usize>)> = None;
                for r in (0..n).filter(|r| mask & (1 << r) != 0) {
                    let rest = mask & !(1 << r);
                    let Some((cost, order)) = &best[rest as usize] else { continue };
                    // Cartesian products last: a connected join first when one exists.
                    // A join with no condition (a Cartesian product) only where none
                    // is left to choose: each costs more than any connected order.
                    let penalty = if connected(rest, r) { 0.0 } else { CARTESIAN_PENALTY };
                    let total = step(Input { rows: rows_of(rest), cost: *cost }, r) + penalty;
                    if choice.as_ref().is_none_or(|(c, _)| total < *c) {
                        let mut o = order.clone();
                        o.push(r);
                        choice = Some((total, o));
                    }
                }
                best[mask as usize] = choice;
            }
            return best[full_mask as usize].take().map(|(_, o)| o).unwrap_or(from_order);
        }
        // Greedy: from the LEADING tables (or the item cheapest to read), add the item
        // whose join costs least, a connected one first.
        let mut order = prefix;
        if order.is_empty() {
            let first = (0..n).min_by(|&a, &b| items[a].estimate.rows.total_cmp(&items[b].estimate.rows)).unwrap_or(0);
            order.push(first);
        }
        let mut cost: f64 = order.iter().map(|&r| items[r].estimate.cost).sum();
        while order.len() < n {
            let mask = order.iter().fold(0u64, |m, &r| m | (1 << r));
            let left = Input { rows: rows_of(mask), cost };
            let candidates: Vec<usize> = (0..n).filter(|r| mask & (1 << r) == 0).collect();
            let pool: Vec<usize> = match candidates.iter().copied().filter(|&r| connected(mask, r)).collect::<Vec<_>>()
            {
                c if c.is_empty() => candidates,
                c => c,
            };
            let next = pool.into_iter().min_by(|&a, &b| step(left, a).total_cmp(&step(left, b))).expect("an item left");
            cost = step(left, next);
            order.push(next);
        }
        order
    }

    /// The join conditions as the order search weighs them: each as the items it reads
    /// and the fraction of their pairs it keeps. The equalities of columns between the
    /// same two tables are weighed together when one side's columns hold a primary or
    /// unique key of its table: each row of the other side then finds one row of it at
    /// most, so together they keep one pair in as many as that table has rows (the
    /// larger table's where both sides hold a key), as `join_step` estimates the join
    /// (lineitem's `l_partkey` and `l_suppkey` against partsupp's key, not the product
    /// of the two columns' selectivities).
    fn order_conditions(&self, query: &JoinQuery, items: &[PlannedItem], at_join: &[Vec<Expr>]) -> Vec<(u64, f64)> {
        let mut conditions: Vec<(u64, f64)> = Vec::new();
        // Column equalities between two items, by the pair: (first item, its columns),
        // (second item, its columns), and the product of their own selectivities.
        type Side = (usize, Vec<usize>);
        let mut pairs: Vec<(Side, Side, f64)> = Vec::new();
        for e in at_join.iter().flatten() {
            let sel = self.condition_selectivity(query, items, e);
            if let Expr::Compare { op: crate::expr::CmpOp::Eq, left, right } = e
                && let (Expr::Column(a), Expr::Column(b)) = (&**left, &**right)
                && let (ra, rb) = (query.relation_of(*a), query.relation_of(*b))
                && ra != rb
            {
                let ((ra, a), (rb, b)) = if ra < rb { ((ra, *a), (rb, *b)) } else { ((rb, *b), (ra, *a)) };
                match pairs.iter_mut().find(|(x, y, _)| x.0 == ra && y.0 == rb) {
                    Some((x, y, product)) => {
                        x.1.push(a);
                        y.1.push(b);
                        *product *= sel;
                    }
                    None => pairs.push(((ra, vec![a]), (rb, vec![b]), sel)),
                }
                continue;
            }
            conditions.push((query.items_of(e), sel));
        }
        for ((ra, a), (rb, b), product) in pairs {
            let unique_rows = |r: usize, columns: &[usize]| -> Option<f64> {
                let relation = &query.relations[r];
                let RelationAccess::Table(t) = &relation.access else { return None };
                let own: Vec<usize> = columns.iter().map(|c| c - relation.columns.start).collect();
                join_cost::composite_key_rows(t, &own, Some(items[r].estimate.rows))
            };
            let sel = match (unique_rows(ra, &a), unique_rows(rb, &b)) {
                (None, None) => product,
                (x, y) => 1.0 / x.unwrap_or(1.0).max(y.unwrap_or(1.0)),
            };
            conditions.push(((1 << ra) | (1 << rb), sel));
        }
        conditions
    }

    /// The fraction of the pairs of its items a join condition keeps.
    fn condition_selectivity(&self, query: &JoinQuery, items: &[PlannedItem], e: &Expr) -> f64 {
        if let Expr::Compare { op: crate::expr::CmpOp::Eq, left, right } = e
            && let (Expr::Column(a), Expr::Column(b)) = (&**left, &**right)
        {
            let ndv = |c: usize| {
                let r = query.relation_of(c);
                let relation = &query.relations[r];
                match &relation.access {
                    RelationAccess::Table(t) => {
                        let rows = t.stats.as_ref().map_or(items[r].estimate.rows, |s| s.num_rows as f64);
                        join_cost::table_column_ndv(t, c - relation.columns.start, rows)
                    }
                    other => other.rows_as_distinct(),
                }
            };
            return 1.0 / ndv(*a).max(ndv(*b)).max(1.0);
        }
        residual_selectivity(query, e)
    }
}

/// The fraction of the pairs a join condition that is not an equality of two columns
/// keeps: Oracle's default, or all of them for an OR whose implied filters already
/// filtered its items (their estimates hold what it keeps).
fn residual_selectivity(query: &JoinQuery, e: &Expr) -> f64 {
    if query.implied.contains(e) { 1.0 } else { join_cost::OTHER_JOIN_SELECTIVITY }
}

/// A guess of one index probe of an item, for the order search: a selective key's blevel,
/// leaf and table block, or nothing (an item not a table is read whole).
fn index_probe_guess(item: &PlannedItem, model: &CostModel) -> f64 {
    let Some((table, _, _)) = &item.table else { return f64::INFINITY };
    let rows = table.stats.as_ref().map_or(item.estimate.rows, |s| s.num_rows as f64).max(1.0);
    join_cost::probe_guess(model, table, item.segment_blocks, rows.log(200.0).ceil().max(1.0) + 2.0)
}

/// The hints that name `relation` (by its alias or name): those its own access path
/// follows.
fn hints_for(hints: &Hints, relation: &Relation) -> Hints {
    let names_it = |t: &Option<String>| t.as_deref().is_some_and(|t| t == relation.label || t == relation.object);
    Hints {
        hints: hints.hints.iter().filter(|h| names_it(&h.table) && !h.kind.is_join_hint()).cloned().collect(),
        ignored: Vec::new(),
    }
}

impl Builder<'_> {
    /// Plans one join: its keys and residual condition, its method (by cost, or as a
    /// hint asks), its plan line and its children.
    fn join_step(&mut self, step: JoinStep<'_>) -> Result<StepPlan> {
        let JoinStep {
            query,
            kind,
            left,
            left_tree,
            left_est,
            layout,
            right,
            right_index,
            conditions,
            hints,
            model,
            names,
        } = step;
        let relation = &query.relations[right_index];
        let start = relation.columns.start;
        let family = |c: usize| {
            let r = &query.relations[query.relation_of(c)];
            r.families[c - r.columns.start]
        };
        // Key pairs: an equality of an expression of the rows joined so far and one of this
        // item, of one family of types. Everything else is checked on the joined pair.
        let joined_mask = layout.iter().fold(0u64, |m, &c| m | 1 << query.relation_of(c));
        let (mut left_keys, mut right_keys, mut key_columns, mut key_text) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut key_pairs = Vec::new();
        let mut left_scope_keys = Vec::new();
        let mut residual = Vec::new();
        let (mut selectivity, mut key_selectivity) = (1.0, 1.0);
        let mut left_key_columns = Vec::new();
        for e in conditions {
            let pair = key_sides(&e, query, joined_mask, right_index)
                .filter(|(l, r)| expr_family(l, &family).is_some_and(|f| Some(f) == expr_family(r, &family)));
            match pair {
                Some((l, r)) => {
                    key_selectivity *= match (l, r) {
                        (Expr::Column(l), Expr::Column(r)) => {
                            1.0 / self.column_ndv(query, *l).max(self.column_ndv(query, *r)).max(1.0)
                        }
                        // An expression's distinct values are unknown: a condition's default.
                        _ => join_cost::OTHER_JOIN_SELECTIVITY,
                    };
                    if let Expr::Column(l) = l {
                        left_key_columns.push(*l);
                    }
                    let mut left_key = l.clone();
                    left_key.remap_columns(&|c| layout.iter().position(|&p| p == c).expect("joined"));
                    left_keys.push(left_key);
                    let mut right_key = r.clone();
                    right_key.remap_columns(&|c| c - start);
                    key_columns.push(match r {
                        Expr::Column(c) => Some(c - start),
                        _ => None,
                    });
                    if let (Expr::Column(l), Expr::Column(r)) = (l, r) {
                        key_pairs.push((*l, *r));
                    }
                    right_keys.push(right_key);
                    left_scope_keys.push(l.clone());
                    key_text.push(e.display_conjunct(names).to_string());
                }
                None => {
                    selectivity *= residual_selectivity(query, &e);
                    residual.push(e);
                }
            }
        }
        // A join filter hashes the probe rows' key columns: only keys that are all columns.
        if key_pairs.len() != left_keys.len() {
            key_pairs.clear();
        }
        let key_columns_plain: Vec<usize> = key_columns.iter().flatten().copied().collect();
        // Keys that hold a primary or unique key of a table (this item's, or the one
        // table the left keys come from) find at most one of its rows each: each pair of
        // key values joins one row in as many as the table has, whatever the product of
        // the columns' distinct values says; where both sides hold a key, the larger
        // table's rows, whichever side is joined first.
        let right_rows = match &relation.access {
            RelationAccess::Table(t) => join_cost::composite_key_rows(t, &key_columns_plain, Some(right.estimate.rows)),
            _ => None,
        };
        let left_rows = if let Some(&first) = left_key_columns.first()
            && let owner = query.relation_of(first)
            && left_key_columns.iter().all(|&l| query.relation_of(l) == owner)
            && let RelationAccess::Table(t) = &query.relations[owner].access
        {
            let start = query.relations[owner].columns.start;
            let columns: Vec<usize> = left_key_columns.iter().map(|&l| l - start).collect();
            join_cost::composite_key_rows(t, &columns, None)
        } else {
            None
        };
        if right_rows.is_some() || left_rows.is_some() {
            key_selectivity = 1.0 / right_rows.unwrap_or(1.0).max(left_rows.unwrap_or(1.0)).max(1.0);
        }
        selectivity *= key_selectivity;
        let joined_layout: Vec<usize> = layout.iter().copied().chain(relation.columns.clone()).collect();
        let residual_text =
            residual.iter().map(|e| e.display_conjunct(names).to_string()).collect::<Vec<_>>().join(" AND ");
        let residual = and_all(residual).map(|mut e| {
            e.remap_columns(&|c| joined_layout.iter().position(|&l| l == c).expect("a joined column"));
            e
        });
        let right_est = right.estimate;
        let inner_rows = (left_est.rows.max(1.0) * right_est.rows.max(1.0) * selectivity).max(1.0);
        // An outer join gives at least each preserved row once.
        let rows = match kind {
            StepKind::Inner => inner_rows,
            StepKind::Left => inner_rows.max(left_est.rows),
            StepKind::Right => inner_rows.max(right_est.rows),
            StepKind::Full => inner_rows.max(left_est.rows).max(right_est.rows),
        };
        // The methods this join may take, with their costs.
        let mut candidates: Vec<(MethodChoice, f64)> = Vec::new();
        let keyed = !left_keys.is_empty();
        let swap = hints.hints.iter().any(|h| h.kind == HintKind::SwapJoinInputs && names_item(h, relation));
        let keep_order = hints.hints.iter().any(|h| h.kind == HintKind::NoSwapJoinInputs && names_item(h, relation));
        // The smaller input builds, unless a hint swaps or keeps the order (SWAP winning
        // where both are given); a product buffers its second.
        let build_right = swap || !keyed || (!keep_order && right_est.rows < left_est.rows);
        let (build_est, probe_est) = if build_right { (right_est, left_est) } else { (left_est, right_est) };
        let probe_item = if build_right { query.relation_of(layout[0]) } else { right_index };
        let join_filter = self.join_filter_plan(FilterAsk {
            query,
            pairs: &key_pairs,
            probe: if build_right { &left } else { &right.input },
            probe_item,
            build_right,
            probe_kept: if build_right {
                matches!(kind, StepKind::Left | StepKind::Full)
            } else {
                matches!(kind, StepKind::Right | StepKind::Full)
            },
            hints,
            model,
            build: build_est,
            probe_est,
            names,
        });
        candidates.push((
            MethodChoice::Hash { build_right },
            match &join_filter {
                Some(f) => join_cost::hash_with_filter(model, build_est, probe_est, f.pass),
                None => join_cost::hash(model, build_est, probe_est),
            },
        ));
        if keyed && kind != StepKind::Right {
            candidates.push((MethodChoice::Merge, join_cost::merge(model, left_est, right_est)));
        }
        if matches!(kind, StepKind::Inner | StepKind::Left) {
            candidates.push((
                MethodChoice::NestedRescan,
                join_cost::nested_loops(
                    left_est,
                    right_est.cost.max(model.cpu(right_est.rows * crate::sql::optimizer::cost::SCAN_ROW_NS)),
                ),
            ));
            // An index probe finds rows by the item's key columns: every key of the item
            // must be a column (the outer side's may be any expression).
            if let Some((table, _, _)) = &right.table
                && key_columns_plain.len() == key_columns.len()
            {
                for (i, ix) in self.session.db.catalog.indexes_of(table.object_id).iter().enumerate() {
                    if let Some((per_probe, _)) =
                        join_cost::index_probe(table, ix, &key_columns_plain, right.segment_blocks, model)
                    {
                        candidates.push((MethodChoice::NestedIndex(i), join_cost::nested_loops(left_est, per_probe)));
                    }
                }
            }
        }
        let chosen = self.choose_method(&candidates, hints, relation);
        let cost = candidates.iter().find(|(m, _)| *m == chosen).map_or(0.0, |(_, c)| *c);
        let keyless = !keyed;
        let estimate = Input { rows, cost };
        let exec_kind = match kind {
            StepKind::Inner => JoinKind::Inner,
            StepKind::Left => JoinKind::Left,
            StepKind::Right => JoinKind::Right,
            StepKind::Full => JoinKind::Full,
        };
        let access_text = key_text.join(" AND ");
        let mut node = PlanNode::new(Operation::HashJoin, "");
        let mut children = Vec::new();
        let PlannedItem { input: mut right_input, tree: right_tree, table: right_table, .. } = right;
        let mut join_filter_spec = None;
        let method = match chosen {
            MethodChoice::Hash { build_right } => {
                let (build_kept, probe_kept) = if build_right {
                    (
                        exec_kind == JoinKind::Right || exec_kind == JoinKind::Full,
                        exec_kind == JoinKind::Left || exec_kind == JoinKind::Full,
                    )
                } else {
                    (
                        exec_kind == JoinKind::Left || exec_kind == JoinKind::Full,
                        exec_kind == JoinKind::Right || exec_kind == JoinKind::Full,
                    )
                };
                node.operation = match (keyless && exec_kind == JoinKind::Inner, build_kept, probe_kept) {
                    (true, _, _) => Operation::MergeJoinCartesian,
                    (_, true, true) => Operation::HashJoinFullOuter,
                    (_, true, false) => Operation::HashJoinRightOuter,
                    (_, false, true) => Operation::HashJoinOuter,
                    _ => Operation::HashJoin,
                };
                if node.operation == Operation::MergeJoinCartesian {
                    // The product buffers its second input, as Oracle's BUFFER SORT does.
                    children.push(left_tree);
                    children.push(wrapped(right_tree, Operation::BufferSort));
                } else {
                    let (mut build_tree, mut probe_tree) =
                        if build_right { (right_tree, left_tree) } else { (left_tree, right_tree) };
                    if let Some(plan) = &join_filter {
                        let number = query.join_filters.get();
                        query.join_filters.set(number + 1);
                        query.filtered_items.borrow_mut().push(probe_item);
                        (build_tree, probe_tree) = plan.lines(number, build_tree, probe_tree);
                        join_filter_spec = Some(JoinFilterSpec { number, probe_columns: plan.probe_columns.clone() });
                    }
                    children.push(build_tree);
                    children.push(probe_tree);
                }
                JoinMethod::Hash { build_right }
            }
            MethodChoice::Merge => {
                node.operation = match exec_kind {
                    JoinKind::Inner => Operation::MergeJoin,
                    JoinKind::Left => Operation::MergeJoinOuter,
                    _ => Operation::MergeJoinFullOuter,
                };
                children.push(wrapped(left_tree, Operation::SortJoin));
                children.push(wrapped(right_tree, Operation::SortJoin));
                JoinMethod::Merge
            }
            MethodChoice::NestedRescan => {
                node.operation =
                    if exec_kind == JoinKind::Left { Operation::NestedLoopsOuter } else { Operation::NestedLoops };
                children.push(left_tree);
                children.push(right_tree);
                JoinMethod::NestedLoops(Box::new(NestedInner::Rescan))
            }
            MethodChoice::NestedIndex(i) => {
                node.operation =
                    if exec_kind == JoinKind::Left { Operation::NestedLoopsOuter } else { Operation::NestedLoops };
                let (table, read, filter) = right_table.expect("an index probe reads a table");
                // The probe checks the filter on rows the input hands on, so these keep
                // the filter's columns.
                if let (Some(f), Some(used)) = (&filter, right_input.used.as_mut()) {
                    f.visit_columns(&mut |c| used[c] = true);
                }
                let ix = self.session.db.catalog.indexes_of(table.object_id)[i].clone();
                // An INDEX hint the table's own access path could not take (a scan of the
                // index would miss rows whose keys are all NULL) is taken by the probe,
                // whose key is never NULL: its note goes.
                for h in hints.hints.iter().filter(|h| names_item(h, relation)) {
                    if let HintKind::Index { choice, .. } = &h.kind
                        && crate::sql::optimizer::matches_choice(choice, &ix, &table)
                    {
                        let unused = format!("hint not used: {} (", h.text);
                        self.notes.retain(|n| !n.starts_with(&unused));
                    }
                }
                let k = ix.columns.iter().take_while(|c| key_columns_plain.contains(c)).count();
                let key_at = |c: usize| key_columns.iter().position(|k| *k == Some(c)).expect("a key column");
                let keys: Vec<Expr> = ix.columns[..k].iter().map(|&c| left_keys[key_at(c)].clone()).collect();
                let types = ix.key_types(&table)[..k].to_vec();
                let unique = ix.unique && k == ix.columns.len();
                let kind =
                    if unique { crate::index::IndexScanKind::Unique } else { crate::index::IndexScanKind::Range };
                let (probe_cost, probe_rows) =
                    join_cost::index_probe(&table, &ix, &key_columns_plain, 0, model).unwrap_or((0.0, 1.0));
                // TABLE ACCESS BY INDEX ROWID over the index's scan, once per outer row.
                let mut inner = PlanTree::default();
                let mut index_node = PlanNode::new(Operation::Index { kind, descending: false }, &ix.name);
                let key_names: Vec<String> = ix.columns[..k]
                    .iter()
                    .map(|&c| format!("\"{}\"={}", names[start + c], left_scope_keys[key_at(c)].display(names)))
                    .collect();
                index_node.predicates.push(Predicate::Access(key_names.join(" AND ")));
                index_node.rows_rule = RowsRule::Source(probe_rows);
                index_node.estimate = Some(Estimate { rows: probe_rows, cost: probe_cost });
                let index_id = inner.push_above(index_node);
                let mut by_rowid = PlanNode::new(Operation::TableAccessByIndexRowid, &table.name);
                if let Some(f) = &filter {
                    by_rowid.predicates.push(Predicate::Filter(f.display(&relation.names).to_string()));
                }
                by_rowid.rows_rule = RowsRule::Source(probe_rows);
                by_rowid.estimate = Some(Estimate { rows: probe_rows, cost: probe_cost });
                let top = inner.push_above(by_rowid);
                debug_assert_eq!(inner.node(top).children, [index_id]);
                children.push(left_tree);
                children.push(inner);
                let access = IndexAccess {
                    table: table.clone(),
                    index: ix.clone(),
                    kind,
                    lower: crate::index::KeyBound::Unbounded,
                    upper: crate::index::KeyBound::Unbounded,
                    descending: false,
                    table_access: true,
                    columns_read: read,
                    figures: Default::default(),
                    totals: Default::default(),
                    rowid_buffer: Default::default(),
                    measured: true,
                };
                drop(right_tree);
                JoinMethod::NestedLoops(Box::new(NestedInner::Index { access: Box::new(access), keys, types, filter }))
            }
        };
        if !access_text.is_empty() && !matches!(chosen, MethodChoice::NestedIndex(_) | MethodChoice::NestedRescan) {
            node.predicates.push(Predicate::Access(access_text.clone()));
        }
        if matches!(chosen, MethodChoice::NestedRescan) && !access_text.is_empty() {
            node.predicates.push(Predicate::Filter(access_text));
        }
        if !residual_text.is_empty() {
            node.predicates.push(Predicate::Filter(residual_text));
        }
        let join = Join {
            kind: exec_kind,
            method,
            left,
            right: right_input,
            left_keys,
            right_keys,
            residual,
            probe_figures: Default::default(),
            workarea: Default::default(),
            emitted: Default::default(),
            join_filter: join_filter_spec,
            output: None,
        };
        Ok(StepPlan { join, node, children, estimate, layout: joined_layout })
    }

    /// The distinct values of scope column `c`, as the join's cardinality takes them.
    fn column_ndv(&self, query: &JoinQuery, c: usize) -> f64 {
        let relation = &query.relations[query.relation_of(c)];
        match &relation.access {
            RelationAccess::Table(t) => {
                let rows = t.stats.as_ref().map_or(1.0, |s| s.num_rows as f64);
                join_cost::table_column_ndv(t, c - relation.columns.start, rows)
            }
            other => other.rows_as_distinct(),
        }
    }

    /// The method a join of `relation` takes: the one a hint naming it asks for, when
    /// it is among `candidates`, else the cheapest not excluded by a NO_USE_ hint.
    fn choose_method(
        &mut self,
        candidates: &[(MethodChoice, f64)],
        hints: &Hints,
        relation: &Relation,
    ) -> MethodChoice {
        let fits = |kind: &HintKind, m: &MethodChoice| match kind {
            HintKind::UseNl | HintKind::NoUseNl => {
                matches!(m, MethodChoice::NestedIndex(_) | MethodChoice::NestedRescan)
            }
            HintKind::UseHash | HintKind::NoUseHash => matches!(m, MethodChoice::Hash { .. }),
            HintKind::UseMerge | HintKind::NoUseMerge => matches!(m, MethodChoice::Merge),
            _ => false,
        };
        let cheapest = |pool: &mut dyn Iterator<Item = &(MethodChoice, f64)>| {
            pool.min_by(|a, b| a.1.total_cmp(&b.1)).map(|(m, _)| *m)
        };
        let own: Vec<&hints::Hint> = hints.hints.iter().filter(|h| names_item(h, relation)).collect();
        for h in &own {
            if matches!(h.kind, HintKind::UseNl | HintKind::UseHash | HintKind::UseMerge) {
                match cheapest(&mut candidates.iter().filter(|(m, _)| fits(&h.kind, m))) {
                    Some(m) => return m,
                    None => self.notes.push(format!("hint not used: {} (this join cannot take that method)", h.text)),
                }
            }
        }
        let excluded = |m: &MethodChoice| {
            own.iter().any(|h| {
                matches!(h.kind, HintKind::NoUseNl | HintKind::NoUseHash | HintKind::NoUseMerge) && fits(&h.kind, m)
            })
        };
        cheapest(&mut candidates.iter().filter(|(m, _)| !excluded(m)))
            .or_else(|| cheapest(&mut candidates.iter()))
            .expect("a hash join is always a candidate")
    }
}

/// Whether hint `h` names `relation`.
fn names_item(h: &hints::Hint, relation: &Relation) -> bool {
    h.table.as_deref().is_some_and(|t| t == relation.label || t == relation.object)
}

/// The sides of equality `e` as a key pair of the join of item `right` to the items of
/// `joined`: (the side reading only items joined so far, the side reading only `right`),
/// each reading at least one column, neither holding a function whose value changes from
/// call to call.
fn key_sides<'e>(e: &'e Expr, query: &JoinQuery, joined: u64, right: usize) -> Option<(&'e Expr, &'e Expr)> {
    let Expr::Compare { op: crate::expr::CmpOp::Eq, left: a, right: b } = e else { return None };
    if !deterministic(a) || !deterministic(b) {
        return None;
    }
    let (ia, ib) = (query.items_of(a), query.items_of(b));
    let on_left = |items: u64| items != 0 && items & !joined == 0;
    let on_right = |items: u64| items == 1 << right;
    if on_left(ia) && on_right(ib) {
        Some((a, b))
    } else if on_left(ib) && on_right(ia) {
        Some((b, a))
    } else {
        None
    }
}

/// Whether `e` gives the same value each time it is evaluated over the same row (no
/// DBMS_RANDOM call): a key is evaluated once per row, a residual once per pair.
pub(crate) fn deterministic(e: &Expr) -> bool {
    use crate::expr::functions::ScalarFunction as F;
    match e {
        Expr::Function { func: F::RandomValue | F::RandomString, .. } => false,
        Expr::Function { args, .. } => args.iter().all(deterministic),
        Expr::Arith { left, right, .. } | Expr::Concat(left, right) => deterministic(left) && deterministic(right),
        Expr::Negate(x) => deterministic(x),
        Expr::Column(_) | Expr::Literal(_) | Expr::Bind { .. } => true,
        _ => false,
    }
}

/// What deciding a hash join's join filter takes.
struct FilterAsk<'a> {
    query: &'a JoinQuery,
    /// The join's key pairs: (column joined so far, column of the item joined now), in
    /// the scope's numbering; empty when a key is an expression (no filter then).
    pairs: &'a [(usize, usize)],
    /// The probe input, and its FROM item when it reads one.
    probe: &'a JoinInput,
    probe_item: usize,
    build_right: bool,
    /// Whether the join keeps the probe input's rows that join none.
    probe_kept: bool,
    hints: &'a Hints,
    model: &'a CostModel,
    build: Input,
    probe_est: Input,
    names: &'a [String],
}

/// A join filter a hash join uses, if it is the join's method.
pub(super) struct FilterPlan {
    /// The probe input's columns of the keys, in the keys' order.
    pub(super) probe_columns: Vec<usize>,
    /// The key as the probe scan's predicate names it: `"O"."CUST_ID"`.
    pub(super) key_text: String,
    /// The share of the probe rows it is estimated to pass.
    pub(super) pass: f64,
}

impl FilterPlan {
    /// The plan lines of filter `:BF` `number`: JOIN FILTER CREATE over the build input,
    /// JOIN FILTER USE over the probe input, whose scan checks `SYS_OP_BLOOM_FILTER`.
    fn lines(&self, number: u32, build: PlanTree, mut probe: PlanTree) -> (PlanTree, PlanTree) {
        let name = filter_name(number);
        if let Some(scan) = probe.root() {
            add_bloom_predicate(probe.node_mut(scan), &name, &self.key_text);
        }
        let below = probe.root().and_then(|r| probe.node(r).estimate);
        probe.push_above(filter_use_line(&name, below, self.pass));
        let below = build.root().and_then(|r| build.node(r).estimate);
        let mut build = build;
        build.push_above(filter_create_line(&name, below));
        (build, probe)
    }
}

/// The name of the statement's join filter `number`: `:BF0000`.
pub(super) fn filter_name(number: u32) -> String {
    format!(":BF{number:04}")
}

/// Adds the check of join filter `name` on the key `key_text` (`"O"."CUST_ID"`) to the
/// filter predicate of `scan`, the probe input's scan line.
pub(super) fn add_bloom_predicate(scan: &mut PlanNode, name: &str, key_text: &str) {
    let bloom = format!("SYS_OP_BLOOM_FILTER({name},{key_text})");
    match scan.predicates.iter_mut().find(|p| matches!(p, Predicate::Filter(_))) {
        Some(Predicate::Filter(text)) => *text = format!("{text} AND {bloom}"),
        _ => scan.predicates.push(Predicate::Filter(bloom)),
    }
}

/// JOIN FILTER USE of filter `name`, over a probe input estimated at `below`, passing
/// the share `pass` of its rows; the caller gives it its child.
pub(super) fn filter_use_line(name: &str, below: Option<Estimate>, pass: f64) -> PlanNode {
    let mut line = PlanNode::new(Operation::JoinFilterUse, name);
    line.estimate = below.map(|e| Estimate { rows: e.rows * pass, ..e });
    line.rows_rule = RowsRule::Fraction(pass);
    line
}

/// JOIN FILTER CREATE of filter `name`, over a build input estimated at `below`; the
/// caller gives it its child.
pub(super) fn filter_create_line(name: &str, below: Option<Estimate>) -> PlanNode {
    let mut line = PlanNode::new(Operation::JoinFilterCreate, name);
    line.estimate = below;
    line
}

impl Builder<'_> {
    /// Whether a hash join uses a join filter on its probe input, and which: when the
    /// join has keys, keeps no probe row that joins none, and its probe input is a full
    /// scan of one table (row blocks, compression units or the column store); then a
    /// `PX_JOIN_FILTER` hint naming that table asks for it, `NO_PX_JOIN_FILTER` refuses
    /// it, and without either the cost decides (`optimizer::join::join_filter_pays`).
    fn join_filter_plan(&mut self, ask: FilterAsk<'_>) -> Option<FilterPlan> {
        let FilterAsk {
            query,
            pairs,
            probe,
            probe_item,
            build_right,
            probe_kept,
            hints,
            model,
            build,
            probe_est,
            names,
        } = ask;
        let relation = &query.relations[probe_item];
        let hinted = |kind: HintKind| hints.hints.iter().any(|h| h.kind == kind && names_item(h, relation));
        let scan = matches!(probe.source, Source::TableScan { .. } | Source::InMemory(_));
        if pairs.is_empty() || probe_kept || !scan || hinted(HintKind::NoPxJoinFilter) {
            return None;
        }
        let (build_columns, probe_columns): (Vec<usize>, Vec<usize>) =
            pairs.iter().map(|&(l, r)| if build_right { (r, l) } else { (l, r) }).unzip();
        let table_rows = match &relation.access {
            RelationAccess::Table(t) => t.stats.as_ref().map_or(probe_est.rows, |s| s.num_rows as f64),
            _ => probe_est.rows,
        };
        // Each key column's distinct values on either side, at most that side's rows.
        let distinct = |c: usize, rows: f64| self.column_ndv(query, c).min(rows.max(1.0));
        let pass = join_cost::join_filter_pass(
            build_columns.iter().zip(&probe_columns).map(|(&b, &p)| (distinct(b, build.rows), distinct(p, table_rows))),
        );
        if !hinted(HintKind::PxJoinFilter) && !join_cost::join_filter_pays(model, build, probe_est, pass) {
            return None;
        }
        let key_text = probe_columns.iter().map(|&c| format!("\"{}\"", names[c])).collect::<Vec<_>>().join(",");
        let start = relation.columns.start;
        Some(FilterPlan { probe_columns: probe_columns.iter().map(|c| c - start).collect(), key_text, pass })
    }
}

/// `tree` under a new node of `operation` (SORT JOIN, BUFFER SORT).
fn wrapped(mut tree: PlanTree, operation: Operation) -> PlanTree {
    let below = tree.root().and_then(|r| tree.node(r).estimate);
    let id = tree.push_above(PlanNode::new(operation, ""));
    tree.node_mut(id).estimate = below;
    tree
}

impl Builder<'_> {
    /// Oracle's outer-join operator: each WHERE conjunct with a column marked `(+)`
    /// becomes part of the ON condition of a LEFT join of the marked column's item, which
    /// is joined after the items the conjunct reads. Returns the order the joins are
    /// taken in (the FROM order when nothing is marked).
    fn oracle_outer_joins(
        &self,
        select: &ast::Select,
        relations: &[Relation],
        scope: &Scope,
        kinds: &mut [StepKind],
        ons: &mut [Vec<Expr>],
    ) -> Result<Vec<usize>> {
        let n = relations.len();
        let mut conjuncts = Vec::new();
        if let Some(w) = &select.selection {
            split_and(w, &mut conjuncts);
        }
        let marked: Vec<&ast::Expr> = conjuncts.into_iter().filter(|c| has_outer_join_mark(c)).collect();
        if marked.is_empty() {
            return Ok((0..n).collect());
        }
        if select.from.iter().any(|f| !f.joins.is_empty()) {
            return Err(Error::Parse {
                message: "old style outer join (+) cannot be used with ANSI joins (ORA-25156)".into(),
                position: position_of(marked[0]),
            });
        }
        let binder = Binder { scope, f: self.f, grouping: None, subqueries: Some(&self.subqueries) };
        let mut after: Vec<u64> = vec![0; n];
        for c in marked {
            let mut marks = Vec::new();
            let stripped = strip_outer_join_marks(c, &mut marks)?;
            let mut outer_items = 0u64;
            for m in marks {
                binder.bind(m)?.visit_columns(&mut |col| {
                    outer_items |= 1 << scope.relation_of(col).expect("a column of the join's scope")
                });
            }
            if outer_items.count_ones() != 1 {
                return Err(Error::Parse {
                    message: format!("a predicate may reference only one outer-joined table (ORA-01468): {c}"),
                    position: position_of(c),
                });
            }
            let item = outer_items.trailing_zeros() as usize;
            let bound = binder.bind(&stripped)?;
            let mut reads = 0u64;
            bound.visit_columns(&mut |col| reads |= 1 << scope.relation_of(col).expect("a column of the scope"));
            after[item] |= reads & !(1 << item);
            kinds[item] = StepKind::Left;
            split_conjuncts(bound, &mut ons[item]);
        }
        // Each outer-joined item after the items its conditions read, else in FROM order.
        let mut order = Vec::with_capacity(n);
        let mut placed = 0u64;
        while order.len() < n {
            let next =
                (0..n).find(|&r| placed & (1 << r) == 0 && after[r] & !placed == 0).ok_or_else(|| Error::Parse {
                    message: "two tables cannot be outer-joined to each other (ORA-01416)".into(),
                    position: select.selection.as_ref().and_then(position_of),
                })?;
            order.push(next);
            placed |= 1 << next;
        }
        // The first item joins nothing: outer-joined to nothing, its conditions filter it.
        kinds[order[0]] = StepKind::Inner;
        Ok(order)
    }
}

/// Whether `e` has a column marked with Oracle's `(+)`.
pub(super) fn has_outer_join_mark(e: &ast::Expr) -> bool {
    let mut marks = Vec::new();
    match strip_outer_join_marks(e, &mut marks) {
        Ok(_) => !marks.is_empty(),
        Err(_) => true,
    }
}

/// `e` without its `(+)` marks, each marked expression added to `marks`. A mark in an
/// operand of OR or IN is Oracle's ORA-01719; one inside a form not read here is an error
/// naming it.
fn strip_outer_join_marks<'e>(e: &'e ast::Expr, marks: &mut Vec<&'e ast::Expr>) -> Result<ast::Expr> {
    use ast::Expr as E;
    let marked_text = |x: &ast::Expr| x.to_string().contains("(+)");
    if matches!(e, E::BinaryOp { op: ast::BinaryOperator::Or, .. } | E::InList { .. } | E::InSubquery { .. })
        && marked_text(e)
    {
        return Err(Error::Parse {
            message: format!("outer join operator (+) not allowed in operand of OR or IN (ORA-01719): {e}"),
            position: position_of(e),
        });
    }
    let mut strip = |x: &'e ast::Expr| strip_outer_join_marks(x, marks).map(Box::new);
    Ok(match e {
        E::OuterJoin(inner) => {
            marks.push(inner);
            (**inner).clone()
        }
        E::BinaryOp { left, op, right } => E::BinaryOp { left: strip(left)?, op: op.clone(), right: strip(right)? },
        E::Nested(x) => E::Nested(strip(x)?),
        E::UnaryOp { op, expr } => E::UnaryOp { op: *op, expr: strip(expr)? },
        E::IsNull(x) => E::IsNull(strip(x)?),
        E::IsNotNull(x) => E::IsNotNull(strip(x)?),
        E::Between { expr, negated, low, high } => {
            E::Between { expr: strip(expr)?, negated: *negated, low: strip(low)?, high: strip(high)? }
        }
        // A literal's text may hold "(+)"; it is no mark.
        E::Value(_) => e.clone(),
        // A marked column may be an argument of a function, as in Oracle (UPPER(d.dname(+))).
        E::Function(f) => {
            let ast::FunctionArguments::List(list) = &f.args else {
                return if marked_text(e) {
                    Err(unsupported(format!("the (+) operator in {e}"), e))
                } else {
                    Ok(e.clone())
                };
            };
            let mut args = Vec::with_capacity(list.args.len());
            for arg in &list.args {
                args.push(match arg {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(x)) => {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(*strip(x)?))
                    }
                    other if other.to_string().contains("(+)") => {
                        return Err(unsupported(format!("the (+) operator in {e}"), e));
                    }
                    other => other.clone(),
                });
            }
            let mut f = f.clone();
            if let ast::FunctionArguments::List(list) = &mut f.args {
                list.args = args;
            }
            E::Function(f)
        }
        other if marked_text(other) => {
            return Err(unsupported(format!("the (+) operator in {other}"), other));
        }
        other => other.clone(),
    })
}
