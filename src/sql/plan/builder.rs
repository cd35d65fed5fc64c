//! The builder of a SELECT's plan tree: its nodes in SQL's logical order, each with the
//! stages it runs, and then the access path the optimizer chooses
//! (`Builder::choose_access`), which rewrites the nodes of the table it reads.

use super::*;

pub(super) struct Builder<'s> {
    pub(super) session: &'s Session,
    /// Whether this is the statement's top query block, whose select list may read
    /// sequences (when it has no DISTINCT, GROUP BY, aggregate or ORDER BY).
    pub(super) sequences_top: bool,
    /// The statement's context: SYSDATE and the bind variables (their values peeked at
    /// for the optimizer's estimates, as Oracle peeks at binds when it plans).
    pub(super) f: &'s FunctionContext,
    /// The WITH queries the query sees, innermost last.
    pub(super) named: &'s [NamedQuery<'s>],
    pub(super) tree: PlanTree,
    pub(super) notes: Vec<String>,
    /// The table the query reads, if it reads one, and its node in the plan.
    pub(super) table: Option<Arc<TableDef>>,
    pub(super) table_node: Option<NodeId>,
    /// The node of the ORDER BY's sort, if there is one.
    pub(super) sort_node: Option<NodeId>,
    /// Set when the access path delivers the ORDER BY's order and its sort was dropped:
    /// no join may then come between that path and the lines above it.
    pub(super) order_from_access: bool,
    /// Set when the index path's range comes from bind variables.
    pub(super) rebind: Option<RangeRebind>,
    /// The FROM clause of a join, once its scope is built (its tree is planned last).
    pub(super) join: Option<super::join::JoinQuery>,
    /// The FILTER node of the WHERE clause, when it is not a scan's own filter.
    pub(super) where_node: Option<NodeId>,
    /// The family of each column of the FROM clause's scope, where it is known.
    pub(super) families: Vec<Option<Family>>,
    /// The subqueries its expressions hold, planned as they are bound.
    pub(super) subqueries: Subqueries<'s>,
    /// The FILTER of the WHERE clause's conjuncts that hold correlated subqueries, once
    /// the WHERE clause is planned (it gets its source last, wrapping the plan below it).
    pub(super) subquery_filter: Option<SubqueryFilterPlan>,
    /// The FILTER of the correlated subqueries above aggregation or analytic functions
    /// (module `subquery_filter`).
    pub(super) upper_filter: Option<UpperFilter>,
    /// The WHERE conjuncts to be checked inside the views of the FROM clause, until
    /// each view is planned (module `predicate_push`).
    pub(super) pushed: Vec<super::predicate_push::Pushed>,
}

/// The source columns after the project stage, and how they are bound.
pub(super) struct GroupingScope {
    pub(super) grouping: Grouping,
    /// The GROUP BY keys, bound over the FROM clause's scope.
    pub(super) keys: Vec<Expr>,
    /// The names of the aggregation's output columns: its keys', then its calls'.
    pub(super) names: Vec<String>,
}

impl Builder<'_> {
    /// Adds a node on top of the plan, reading from the old top.
    pub(super) fn node(&mut self, operation: Operation, object: &str, rows_rule: RowsRule) -> NodeId {
        let mut node = PlanNode::new(operation, object);
        node.rows_rule = rows_rule;
        self.tree.push_above(node)
    }

    /// Adds a node on top of the plan that reads its rows from `source`.
    pub(super) fn reading(
        &mut self,
        operation: Operation,
        object: &str,
        rows_rule: RowsRule,
        source: Source,
    ) -> NodeId {
        let id = self.node(operation, object, rows_rule);
        self.tree.node_mut(id).work.source = Some(source);
        id
    }

    /// Adds a node on top of the plan that runs `stage` on its child's rows.
    pub(super) fn running(&mut self, operation: Operation, rows_rule: RowsRule, stage: Stage<'static>) -> NodeId {
        let id = self.node(operation, "", rows_rule);
        self.run_in_top(stage);
        id
    }

    /// Adds a node on top of the plan with one predicate that runs `stage`.
    pub(super) fn running_with(
        &mut self,
        operation: Operation,
        rows_rule: RowsRule,
        predicate: Predicate,
        stage: Stage<'static>,
    ) -> NodeId {
        let id = self.running(operation, rows_rule, stage);
        self.tree.node_mut(id).predicates.push(predicate);
        id
    }

    /// Adds `stage` to the work of the plan's top node, after what it runs already.
    pub(super) fn run_in_top(&mut self, stage: Stage<'static>) {
        let top = self.tree.root().expect("a plan's source is planned first");
        self.tree.node_mut(top).work.stages.push(stage);
    }

    /// Plans the FROM clause: the node that reads the rows (and the one it reads inside
    /// its source, for CONNECT BY over DUAL), and the scope its columns are named in.
    /// A table alias's column list (`FROM t x(a, b)`) renames the source's first columns.
    pub(super) fn source(&mut self, select: &ast::Select) -> Result<Scope> {
        if select.from.len() > 1 || select.from.first().is_some_and(|f| !f.joins.is_empty()) {
            if !select.connect_by.is_empty() {
                return Err(Error::unsupported("CONNECT BY in a join"));
            }
            return self.join_scope(select);
        }
        let mut scope = self.unaliased_source(select)?;
        let alias = match select.from.first().map(|f| &f.relation) {
            Some(ast::TableFactor::Table { alias: Some(a), .. } | ast::TableFactor::Derived { alias: Some(a), .. }) => {
                a
            }
            _ => return Ok(scope),
        };
        if alias.columns.len() > scope.names.len() {
            return Err(Error::Parse {
                message: format!(
                    "table alias {} names {} columns, but its source has {}",
                    ident_name(&alias.name),
                    alias.columns.len(),
                    scope.names.len()
                ),
                position: ident_position(&alias.columns[scope.names.len()].name),
            });
        }
        for (name, column) in scope.names.iter_mut().zip(&alias.columns) {
            if column.data_type.is_some() {
                return Err(Error::Unsupported {
                    construct: format!("a data type in table alias {}'s column list", alias.name),
                    position: ident_position(&column.name),
                });
            }
            *name = ident_name(&column.name);
        }
        Ok(scope)
    }

    /// The FROM clause's source and scope, its columns named as the source names them.
    fn unaliased_source(&mut self, select: &ast::Select) -> Result<Scope> {
        let relation = select.from.first().map(|f| &f.relation);
        if let Some(factor @ ast::TableFactor::Derived { .. }) = relation {
            if !select.connect_by.is_empty() {
                return Err(unsupported("CONNECT BY over an inline view".into(), factor));
            }
            let (block, label) = self.derived_block(factor)?;
            return Ok(self.view_source(block, "", label.into_iter().collect()));
        }
        let Some(ast::TableFactor::Table { name, alias, args, .. }) = relation else {
            return match relation {
                None => {
                    self.families = vec![Some(super::family::Family::Text)];
                    self.dual(select, Vec::new())
                }
                Some(other) => Err(unsupported(format!("FROM {other}"), other)),
            };
        };
        let table_name = crate::sql::bind::function_name(name);
        // An aliased table is named by its alias alone, as in Oracle (so a correlated
        // subquery's `t.col` past an inner `FROM t x` reaches the outer `t`).
        let qualifiers = vec![alias.as_ref().map_or_else(|| table_name.clone(), |a| ident_name(&a.name))];
        if let Some(args) = args {
            return self.table_function(&table_name, args, qualifiers, name);
        }
        if table_name == "DUAL" && name.0.len() == 1 && !self.named.iter().any(|n| n.name == "DUAL") {
            self.families = vec![Some(super::family::Family::Text)];
            return self.dual(select, qualifiers);
        }
        if !select.connect_by.is_empty() {
            return Err(unsupported("CONNECT BY other than the DUAL row generator".into(), name));
        }
        if let Some(block) = self.named_block_of(name, &qualifiers[0])? {
            return Ok(self.view_source(block, &table_name, qualifiers));
        }
        if let Some((columns, rows)) = views::fixed_view(&table_name, self.session)? {
            self.families = fixed_families(columns.len(), &rows);
            let estimate = RowsRule::Source(rows.len() as f64);
            self.reading(Operation::FixedTableFull, &table_name, estimate, Source::Rows(rows));
            return Ok(Scope { names: columns, qualifiers, ..Default::default() });
        }
        let table = self.session.db.catalog.table(&table_name).ok_or_else(|| Error::UnknownName {
            kind: "table or view",
            name: table_name.clone(),
            position: position_of(name),
        })?;
        crate::sql::privileges::require_on(self.session, &table.name, crate::catalog::ObjectPrivilege::Select)?;
        let names = table.columns.iter().map(|c| c.name.clone()).collect();
        self.families = table.columns.iter().map(|c| Some(super::family::Family::of_type(c.data_type))).collect();
        let char_lengths = table
            .columns
            .iter()
            .map(|c| match c.data_type {
                crate::types::DataType::Char { len } => Some(len),
                _ => None,
            })
            .collect();
        // The access path is chosen once the query's other nodes are planned
        // (`plan_query`): until then the table's node has no source.
        self.table_node = Some(self.node(Operation::TableAccessFull, &table.name, RowsRule::Unknown));
        self.table = Some(table);
        Ok(Scope { names, qualifiers, char_lengths, ..Default::default() })
    }

    /// At most how many groups GROUP BY `keys` makes: the product of the columns'
    /// distinct values when every key is a column of an analyzed table.
    pub(super) fn group_estimate(&self, keys: &[Expr]) -> Option<f64> {
        let stats = self.table.as_ref()?.stats.as_ref()?;
        keys.iter().try_fold(1.0, |product, k| match k {
            Expr::Column(c) => stats.columns.get(*c).map(|s| product * (s.num_distinct.max(1) as f64)),
            _ => None,
        })
    }

    /// Chooses how to read `table` (the plan's source is its full scan so far), records
    /// the estimates and notes, and rewrites the source and its lines for an index path.
    pub(super) fn choose_access(
        &mut self,
        table: &Arc<TableDef>,
        alias: Option<&str>,
        hints: &Hints,
        columns_read: &[bool],
        estimate_always: bool,
    ) -> Result<Option<Source>> {
        let indexes = self.session.db.catalog.indexes_of(table.object_id);
        // One path only: nothing to choose, and no statistics to estimate rows from. The
        // optimizer still judges the hints, for the notes. (A join's item is always
        // estimated: the join's order and methods are chosen from it.)
        let full_scan_only = !estimate_always && table.stats.is_none() && indexes.is_empty();
        let segment_blocks =
            if full_scan_only { None } else { blocks_to_estimate_from(&self.session.access_context(), table)? };
        let conjuncts = match self.tree.stages().next() {
            Some(Stage::Filter(f)) => predicates::conjuncts(&f.predicate, &self.f.binds),
            _ => Vec::new(),
        };
        let model = cost_model(self.session);
        let order_by = sorted_columns(self.tree.stages());
        let query =
            optimizer::Query { table, alias, segment_blocks, conjuncts: &conjuncts, columns_read, order_by: &order_by };
        let decision = optimizer::choose(&query, &indexes, hints, &model);
        self.notes.extend(decision.notes.iter().cloned());
        if full_scan_only {
            return Ok(None);
        }
        let estimate = Estimate { rows: decision.rows, cost: decision.path.cost() };
        let scan = self.tree.node_mut(self.table_node.expect("a table's plan has its node"));
        scan.rows_rule = RowsRule::Source(decision.rows);
        scan.estimate = Some(estimate);
        match decision.path {
            optimizer::AccessPath::Full { .. } => Ok(None),
            optimizer::AccessPath::Index(path) => {
                self.index_path(table, *path, &conjuncts, columns_read.to_vec(), estimate).map(Some)
            }
        }
    }

    /// TABLE ACCESS INMEMORY FULL in place of the full scan the optimizer chose, when the
    /// table is marked INMEMORY, the column store is on (`inmemory_size` above 0), every
    /// column the query reads is in memory, and no NO_INMEMORY hint names the table. An
    /// INMEMORY hint that cannot be followed is noted, as other hints are.
    pub(super) fn inmemory_access(
        &mut self,
        table: &Arc<TableDef>,
        alias: Option<&str>,
        columns_read: Vec<bool>,
        hints: &Hints,
    ) -> Option<Source> {
        let ours = |h: &&hints::Hint| h.table.as_deref().is_some_and(|t| t == table.name || Some(t) == alias);
        let table_hints: Vec<&hints::Hint> = hints.hints.iter().filter(ours).collect();
        let asked = table_hints.iter().find(|h| h.kind == hints::HintKind::InMemory);
        if table_hints.iter().any(|h| h.kind == hints::HintKind::NoInMemory) {
            return None;
        }
        let size = self.session.parameter_u64(crate::instance::params::INMEMORY_SIZE);
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
        if let Some(scan) = self.table_node {
            self.tree.node_mut(scan).operation = Operation::TableAccessInMemoryFull;
        }
        Some(Source::InMemory(Box::new(crate::exec::inmemory_source::InMemoryAccess {
            table: table.clone(),
            columns_read,
            prune,
        })))
    }

    /// Rewrites the plan for an index path: the WHERE clause loses the conjuncts the key
    /// range answers, and the table's node becomes the index's (and TABLE ACCESS BY INDEX
    /// ROWID above it when rows are fetched from the table). Returns the new source, for
    /// the table's node.
    pub(super) fn index_path(
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
            self.rebind = Some(RangeRebind::new(conjuncts.to_vec(), types.clone(), &path));
        }
        let access_text: Vec<String> =
            path.bounds.iter().map(|&i| conjuncts[i].expr.display_conjunct(&names).to_string()).collect();
        let residual: Vec<Expr> = conjuncts
            .iter()
            .enumerate()
            .filter(|(i, _)| !path.access.contains(i))
            .map(|(_, c)| c.expr.clone())
            .collect();
        let filter_text =
            residual.iter().map(|e| e.display_conjunct(&names).to_string()).collect::<Vec<_>>().join(" AND ");
        // The WHERE clause (the first stage of the table's node) keeps only what the
        // range does not answer.
        let scan = self.table_node.expect("a table's plan has its node");
        let scan_stages = &mut self.tree.node_mut(scan).work.stages;
        if matches!(scan_stages.first(), Some(Stage::Filter(_))) {
            match residual.into_iter().reduce(|a, b| Expr::And(Box::new(a), Box::new(b))) {
                Some(p) => scan_stages[0] = Stage::Filter(FilterStage::new(p)),
                None => drop(scan_stages.remove(0)),
            }
        }
        if path.ordered {
            self.drop_sort();
        }
        let operation = Operation::Index { kind: path.kind, descending: path.descending };
        let mut index_node = PlanNode::new(operation, &path.index.name);
        if !access_text.is_empty() {
            index_node.predicates.push(Predicate::Access(access_text.join(" AND ")));
        }
        let filter = (!filter_text.is_empty()).then_some(Predicate::Filter(filter_text));
        if path.table_access {
            let by_rowid = self.tree.node_mut(scan);
            by_rowid.operation = Operation::TableAccessByIndexRowid;
            by_rowid.predicates = filter.into_iter().collect();
            index_node.rows_rule = RowsRule::Source(path.entries);
            index_node.estimate = Some(Estimate { rows: path.entries, cost: path.index_cost });
            self.tree.push_below(scan, index_node);
        } else {
            // The index answers alone: its node takes the table's place and work.
            let table_node = self.tree.node_mut(scan);
            index_node.predicates.extend(filter);
            index_node.work = std::mem::take(&mut table_node.work);
            index_node.rows_rule = RowsRule::Source(estimate.rows);
            index_node.estimate = Some(estimate);
            index_node.children = std::mem::take(&mut table_node.children);
            *table_node = index_node;
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
            totals: Default::default(),
            rowid_buffer: Default::default(),
            measured: false,
        })))
    }

    /// Removes the ORDER BY's sort (the SORT ORDER BY node, and its stage with it): the
    /// access path delivers the order.
    pub(super) fn drop_sort(&mut self) {
        if let Some(sort) = self.sort_node.take() {
            self.tree.splice_out(sort);
            self.order_from_access = true;
        }
    }

    /// DUAL, or the `CONNECT BY LEVEL <= n` row generator over it.
    pub(super) fn dual(&mut self, select: &ast::Select, qualifiers: Vec<String>) -> Result<Scope> {
        match select.connect_by.as_slice() {
            [] => {
                self.reading(Operation::FastDual, "", RowsRule::Source(1.0), Source::Dual);
                Ok(Scope { names: vec!["DUMMY".into()], qualifiers, ..Default::default() })
            }
            [ast::ConnectByKind::ConnectBy { relationships, .. }] if relationships.len() == 1 => {
                let rows = level_limit(&relationships[0], self.f)?;
                // The row generator reads DUAL inside its source.
                self.node(Operation::FastDual, "", RowsRule::Source(1.0));
                let estimate = RowsRule::Source(rows as f64);
                self.families = vec![Some(super::family::Family::Number)];
                self.reading(Operation::ConnectByWithoutFiltering, "", estimate, Source::ConnectBy { rows });
                Ok(Scope { names: vec!["LEVEL".into()], qualifiers, level: Some(0), ..Default::default() })
            }
            _ => Err(Error::unsupported("CONNECT BY other than CONNECT BY LEVEL <= n over DUAL")),
        }
    }

    pub(super) fn table_function(
        &mut self,
        name: &str,
        args: &ast::TableFunctionArgs,
        qualifiers: Vec<String>,
        at: &ast::ObjectName,
    ) -> Result<Scope> {
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
        let rows = (stop - start + 1).max(0) as f64;
        self.reading(
            Operation::CollectionIterator,
            "GENERATE_SERIES",
            RowsRule::Source(rows),
            Source::Series { start, stop },
        );
        self.families = vec![Some(super::family::Family::Number)];
        Ok(Scope { names: vec!["GENERATE_SERIES".into()], qualifiers, ..Default::default() })
    }

    pub(super) fn where_clause(&mut self, select: &ast::Select, scope: &mut Scope) -> Result<()> {
        let Some(selection) = &select.selection else { return Ok(()) };
        let mut conjuncts = Vec::new();
        split_and(selection, &mut conjuncts);
        let mut stopkey: Option<u64> = None;
        let mut rest = Vec::new();
        for c in conjuncts {
            // A conjunct with Oracle's (+) is part of an outer join's ON condition.
            if self.join.is_some() && super::join::has_outer_join_mark(c) {
                continue;
            }
            match rownum_limit(c, self.f)? {
                Some(n) => stopkey = Some(stopkey.map_or(n, |s| s.min(n))),
                None => rest.push(c),
            }
        }
        let binder = Binder { scope, f: self.f, grouping: None, subqueries: Some(&self.subqueries) };
        let mut predicate: Option<Expr> = None;
        let mut correlated: Option<Expr> = None;
        for c in rest {
            // A conjunct every OR branch repeats (a join condition) becomes one of its own.
            self.subqueries.correlated_allowed.set(true);
            self.subqueries.in_where.set(true);
            let bound = binder.bind(c);
            self.subqueries.in_where.set(false);
            self.subqueries.correlated_allowed.set(false);
            let e = crate::expr::or_factoring::factor_or(bound?);
            if let Some(u) = self.subqueries.unnesting()
                && u.take_conjunct(&e, &scope.names)
            {
                continue;
            }
            let into = if self.subqueries.holds_correlated(&e) { &mut correlated } else { &mut predicate };
            *into = Some(match into.take() {
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
            let text = Predicate::Filter(p.display(&scope.names).to_string());
            let fraction = super::optimizer::selectivity::default_selectivity(&p);
            let top = self.tree.root().map(|r| self.tree.node_mut(r));
            match top {
                // A scan checks the WHERE clause itself, on the rows it reads.
                Some(line)
                    if matches!(
                        line.operation,
                        Operation::TableAccessFull | Operation::FixedTableFull | Operation::View
                    ) =>
                {
                    line.predicates.push(text);
                    // A view's estimate is its query's (the optimizer never sees the
                    // WHERE clause above it).
                    if let Some(e) = &mut line.estimate {
                        e.rows *= fraction;
                    }
                    // A table's estimate comes from the optimizer, which sees the WHERE
                    // clause; a fixed view's rows and a view's are narrowed by the
                    // default selectivity.
                    if let RowsRule::Source(rows) = line.rows_rule {
                        line.rows_rule = RowsRule::Source(rows * fraction);
                    }
                    self.push_rank(&p);
                    self.run_in_top(Stage::Filter(FilterStage::new(p)));
                }
                _ => {
                    let stage = Stage::Filter(FilterStage::new(p));
                    self.where_node =
                        Some(self.running_with(Operation::Filter, RowsRule::Fraction(fraction), text, stage));
                }
            }
        }
        if let Some(p) = correlated {
            if !p.is_condition() {
                return Err(Error::InvalidValue {
                    context: "WHERE".into(),
                    message: format!("{} is a value, not a condition", p.display(&scope.names)),
                });
            }
            let text = Predicate::Filter(p.display(&scope.names).to_string());
            let fraction = super::optimizer::selectivity::default_selectivity(&p);
            let node = self.node(Operation::Filter, "", RowsRule::Fraction(fraction));
            self.tree.node_mut(node).predicates.push(text);
            self.subquery_filter = Some(SubqueryFilterPlan {
                node,
                predicate: Some(p),
                width: scope.names.len(),
                names: scope.names.clone(),
            });
        }
        if let Some(n) = stopkey {
            if let Some(u) = self.subqueries.unnesting() {
                u.refuse();
            }
            let stage = Stage::Limit(LimitStage::new(0, Some(n)));
            let predicate = Predicate::Filter(format!("ROWNUM<={n}"));
            self.running_with(Operation::CountStopkey, RowsRule::AtMost(n), predicate, stage);
        }
        Ok(())
    }

    /// WINDOW SORT PUSHED RANK: a conjunct of `predicate` (the WHERE clause over a VIEW
    /// line) that bounds a column of the view that is a ranking function's value (`rn <=
    /// 3`, `rn < 4`, `rn = 1`) is pushed into the view's window stage, whose line then
    /// shows it; the WHERE clause still checks it above the view.
    fn push_rank(&mut self, predicate: &Expr) {
        let Some(view) = self.tree.root().filter(|&r| self.tree.node(r).operation == Operation::View) else {
            return;
        };
        for c in predicate.conjuncts() {
            let Expr::Compare { op, left, right } = c else { continue };
            use crate::expr::CmpOp;
            let (column, op, n) = match (&**left, &**right) {
                (Expr::Column(j), Expr::Literal(Datum::Int(n))) => (*j, *op, *n),
                (Expr::Literal(Datum::Int(n)), Expr::Column(j)) => (*j, op.flipped(), *n),
                _ => continue,
            };
            let limit = match op {
                CmpOp::LtEq | CmpOp::Eq => n,
                CmpOp::Lt => match n.checked_sub(1) {
                    Some(limit) => limit,
                    None => continue,
                },
                _ => continue,
            };
            let Some(Source::View(block)) = &self.tree.node(view).work.source else { return };
            let Some(text) = block.push_rank(column, limit) else { continue };
            let window = self.tree.pre_order_from(view).into_iter().find(|&id| {
                matches!(self.tree.node(id).operation, Operation::WindowSort | Operation::WindowSortPushedRank)
            });
            if let Some(id) = window {
                let node = self.tree.node_mut(id);
                node.operation = Operation::WindowSortPushedRank;
                node.predicates.push(Predicate::Filter(format!("{text}<={limit}")));
            }
        }
    }

    /// Adds the ROWNUM column when the select list or ORDER BY reads it.
    pub(super) fn rownum(&mut self, select: &ast::Select, query: &ast::Query, scope: &mut Scope) {
        let mut texts: Vec<String> = select.projection.iter().map(|p| p.to_string()).collect();
        if let Some(o) = &query.order_by {
            texts.push(o.to_string());
        }
        if !texts.iter().any(|t| mentions_rownum(t)) {
            return;
        }
        let width = scope.names.len();
        self.running(Operation::Count, RowsRule::Same, Stage::Rownum(RownumStage { width, next: 0 }));
        scope.names.push("ROWNUM".into());
        scope.rownum = Some(width);
    }

    /// Adds aggregation, if the query aggregates; returns the select-list expressions (over
    /// the aggregate's output when it does), the output column names and the grouping.
    pub(super) fn aggregate(
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
        let source_binder = Binder { scope, f: self.f, grouping: None, subqueries: Some(&self.subqueries) };
        // The correlated subqueries of the select list (and HAVING) are those planned
        // from here on.
        let before = self.subqueries.correlated_count();
        let (exprs, names, grouping) = if aggregate {
            let mut keys = group_by.iter().map(|g| source_binder.bind(g)).collect::<Result<Vec<_>>>()?;
            let mut grouping = Grouping {
                keys: group_by.iter().map(canonical).collect(),
                key_columns: group_by
                    .iter()
                    .zip(&keys)
                    .map(|(g, k)| {
                        let mut g = g;
                        while let ast::Expr::Nested(inner) = g {
                            g = inner;
                        }
                        matches!(g, ast::Expr::Identifier(_) | ast::Expr::CompoundIdentifier(_)).then(|| k.clone())
                    })
                    .collect(),
                ..Default::default()
            };
            // A subquery planned to be unnested is grouped by the columns its correlated
            // conjuncts read too, after its own keys, under names no expression has.
            if let Some(u) = self.subqueries.unnesting() {
                for c in u.group_columns() {
                    grouping.keys.push(format!("\u{0}unnested {c}"));
                    grouping.key_columns.push(None);
                    keys.push(Expr::Column(c));
                }
            }
            let post = Binder { scope, f: self.f, grouping: Some(&grouping), subqueries: Some(&self.subqueries) };
            self.subqueries.windows_allowed.set(true);
            self.subqueries.correlated_allowed.set(true);
            let bound = self.select_list(select, &post, scope).and_then(|(exprs, names)| {
                let in_select_list = self.subqueries.correlated_count() > before;
                let having = select.having.as_ref().map(|h| post.bind(h)).transpose()?;
                // ORDER BY may name aggregates the select list does not: register them
                // now, while the aggregate stage is still being built. Its subqueries are
                // planned where its keys are bound: those planned here are dropped.
                let planned = self.subqueries.correlated_count();
                for e in order_by.iter().filter(|e| contains_aggregate(e)) {
                    post.bind(e)?;
                }
                self.refuse_correlated_in_calls(&grouping.aggregates.borrow())?;
                drop(self.subqueries.take_correlated_from(planned));
                Ok((exprs, names, having, in_select_list))
            });
            self.subqueries.correlated_allowed.set(false);
            self.subqueries.windows_allowed.set(false);
            let (exprs, names, having, in_select_list) = bound?;
            let calls = grouping.aggregates.borrow().clone();
            let groups = if keys.is_empty() { Some(1.0) } else { self.group_estimate(&keys) };
            let operation = if keys.is_empty() { Operation::SortAggregate } else { Operation::HashGroupBy };
            let mut output_names: Vec<String> = group_by.iter().map(canonical).collect();
            output_names.extend(calls.iter().map(|c| c.text.replace(' ', "")));
            // A HAVING clause holding a correlated subquery is the upper FILTER's
            // condition, right above the aggregation.
            let having_correlated = having.as_ref().is_some_and(|h| self.subqueries.holds_correlated(h));
            let mut correlated = self.subqueries.take_correlated_from(before);
            subquery_filter::correlation_over_groups(&mut correlated, &keys, scope)?;
            let (having, filter_having) = if having_correlated { (None, having) } else { (having, None) };
            let text = having.as_ref().map(|h| h.display(&output_names).to_string().replace('"', ""));
            let width = keys.len() + calls.len();
            let stage = Stage::Aggregate(AggregateStage::new(keys.clone(), calls, having));
            let node = self.running(operation, RowsRule::Groups(groups), stage);
            if let Some(text) = text {
                self.tree.node_mut(node).predicates.push(Predicate::Filter(text));
            }
            if filter_having.is_some() {
                if in_select_list && !self.subqueries.windows.borrow().is_empty() {
                    return Err(Error::unsupported(
                        "correlated subqueries in both the HAVING clause and the select list of a query with \
                         analytic functions",
                    ));
                }
                let correlated = std::mem::take(&mut correlated);
                self.upper_filter(correlated, filter_having, width, output_names.clone(), false);
            }
            self.subqueries.restore_correlated(correlated);
            (exprs, names, Some(GroupingScope { grouping, keys, names: output_names }))
        } else {
            self.subqueries.correlated_allowed.set(true);
            self.subqueries.windows_allowed.set(true);
            let sequences = self.sequences_top && select.distinct.is_none() && order_by.is_empty();
            self.f.sequence_refs_allowed.set(sequences);
            let bound = self.select_list(select, &source_binder, scope);
            self.f.sequence_refs_allowed.set(false);
            self.subqueries.correlated_allowed.set(false);
            self.subqueries.windows_allowed.set(false);
            let (exprs, names) = bound?;
            self.refuse_correlated_in_calls(&[])?;
            (exprs, names, None)
        };
        let exprs = self.window_sort(exprs, scope, grouping.as_ref());
        // The select list's correlated subqueries run above an aggregation or analytic
        // functions, which hold rows back: in the upper FILTER.
        if grouping.is_some() || self.windowed() {
            let correlated = self.subqueries.take_correlated_from(before);
            let (width, names) = self.row_shape(scope, grouping.as_ref());
            self.upper_filter(correlated, None, width, names, grouping.is_none());
        }
        Ok((exprs, names, grouping))
    }

    /// Whether the plan has a WINDOW SORT or WINDOW BUFFER line.
    pub(super) fn windowed(&self) -> bool {
        self.tree.stages().any(|s| matches!(s, Stage::Window(_)))
    }

    /// The width and names of the rows the select list reads: the aggregation's output
    /// (or the FROM clause's rows), and analytic values after them.
    pub(super) fn row_shape(&self, scope: &Scope, grouping: Option<&GroupingScope>) -> (usize, Vec<String>) {
        let mut names = grouping.map_or_else(|| scope.names.clone(), |g| g.names.clone());
        if let Some(Stage::Window(w)) = self.tree.stages().filter(|s| matches!(s, Stage::Window(_))).last() {
            names.extend(w.calls.iter().map(|c| c.text.to_string()));
        }
        (names.len(), names)
    }

    /// WINDOW SORT (WINDOW BUFFER when no window sorts) for the select list's analytic
    /// functions, if it has any: their values
    /// become columns after the row's own (the aggregate's output, or the FROM clause's
    /// columns), which the select list's expressions are renumbered to read.
    fn window_sort(&mut self, mut exprs: Vec<Expr>, scope: &Scope, grouping: Option<&GroupingScope>) -> Vec<Expr> {
        let calls = self.subqueries.windows.take();
        if calls.is_empty() {
            return exprs;
        }
        let width = match grouping {
            Some(g) => g.grouping.keys.len() + g.grouping.aggregates.borrow().len(),
            None => scope.names.len(),
        };
        let base = crate::sql::bind::WINDOW_COLUMNS;
        for e in &mut exprs {
            e.remap_columns(&|c| if c >= base { width + (c - base) } else { c });
        }
        // Windows of the whole input (`OVER ()`) need no sort: Oracle's WINDOW BUFFER.
        let operation = match calls.iter().all(|c| c.partition.is_empty() && c.order.is_empty()) {
            true => Operation::WindowBuffer,
            false => Operation::WindowSort,
        };
        let stage = Stage::Window(crate::exec::window::WindowStage::new(width, calls));
        self.running(operation, RowsRule::Same, stage);
        exprs
    }
    pub(super) fn select_list(
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
                    refuse_string_alias(expr, alias)?;
                    exprs.push(binder.bind(expr)?);
                    names.push(ident_name(alias));
                }
                ast::SelectItem::Wildcard(_) | ast::SelectItem::QualifiedWildcard(..) => {
                    let qualifier = match item {
                        ast::SelectItem::QualifiedWildcard(
                            ast::SelectItemQualifiedWildcardKind::ObjectName(name),
                            _,
                        ) => Some(crate::sql::bind::function_name(name)),
                        ast::SelectItem::QualifiedWildcard(kind, _) => {
                            return Err(Error::unsupported(format!("select item {kind}.*")));
                        }
                        _ => None,
                    };
                    for i in scope.wildcard_columns(qualifier.as_deref())? {
                        // `*` shows a FULL join's USING column as its unqualified name
                        // means it; `q.*` shows q's own copy.
                        let value = if qualifier.is_none() { scope.column_value(i) } else { Expr::Column(i) };
                        // After aggregation, each column `*` spreads must be a key.
                        let value = match binder.grouping {
                            None => value,
                            Some(g) => g.key_of(&value).map(Expr::Column).ok_or_else(|| Error::InvalidValue {
                                context: format!("* ({})", scope.names[i]),
                                message: "not a GROUP BY expression".into(),
                            })?,
                        };
                        exprs.push(value);
                        names.push(scope.names[i].clone());
                    }
                }
                other => return Err(Error::unsupported(format!("select item {other}"))),
            }
        }
        Ok((exprs, names))
    }

    /// Adds the projection (select list plus hidden ORDER BY keys), DISTINCT, the sort
    /// and FETCH FIRST / OFFSET / LIMIT.
    pub(super) fn project_order_and_limit(
        &mut self,
        query: &ast::Query,
        distinct: bool,
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
            // The select list as written, one item a column (none where a `*` spreads):
            // an ORDER BY item holding a subquery written as one of them sorts on its
            // column, its subqueries planned and run once.
            let written: Vec<String> = match &*query.body {
                ast::SetExpr::Select(select) if select.projection.len() == visible => select
                    .projection
                    .iter()
                    .map(|p| match p {
                        ast::SelectItem::UnnamedExpr(x) | ast::SelectItem::ExprWithAlias { expr: x, .. } => {
                            x.to_string()
                        }
                        _ => String::new(),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let before = self.subqueries.correlated_count();
            self.subqueries.correlated_allowed.set(true);
            let mut bound = Ok(());
            for item in items {
                let descending = matches!(item.options.sort, Some(ast::OrderBySort::Desc));
                let nulls_first = item.options.nulls_first.unwrap_or(descending);
                let text = item.expr.to_string();
                if let Some(column) =
                    written.iter().position(|w| !w.is_empty() && *w == text).filter(|_| holds_subquery(&item.expr))
                {
                    keys.push(SortKey { column, descending, nulls_first });
                    continue;
                }
                match self.order_key(&item.expr, scope, grouping, &mut exprs, columns, visible) {
                    Ok(column) => keys.push(SortKey { column, descending, nulls_first }),
                    Err(e) => {
                        bound = Err(e);
                        break;
                    }
                }
            }
            self.subqueries.correlated_allowed.set(false);
            bound?;
            self.order_by_subqueries(before, scope, grouping)?;
        }
        if distinct && exprs.len() > visible {
            return Err(Error::InvalidValue {
                context: "ORDER BY".into(),
                message: "ORDER BY items must appear in the select list if SELECT DISTINCT is specified".into(),
            });
        }
        let width = exprs.len();
        // The node below projects the select list (plus the hidden sort keys).
        self.run_in_top(Stage::Project(ProjectStage::new(exprs)));
        if distinct {
            let keys = (0..visible).map(Expr::Column).collect();
            let stage = Stage::Aggregate(AggregateStage::new(keys, Vec::new(), None));
            self.running(Operation::HashUnique, RowsRule::Groups(None), stage);
        }
        if !keys.is_empty() {
            let stage = Stage::Sort(SortStage { keys, width, rows: Vec::new(), sorted: 0 });
            self.sort_node = Some(self.running(Operation::SortOrderBy, RowsRule::Same, stage));
        }
        self.limit(query)
    }

    /// Places the correlated subqueries the ORDER BY planned (after the first `before`)
    /// in a FILTER below the projection that computes the sort keys.
    fn order_by_subqueries(&mut self, before: usize, scope: &Scope, grouping: Option<&GroupingScope>) -> Result<()> {
        let mut planned = self.subqueries.take_correlated_from(before);
        if planned.is_empty() {
            return Ok(());
        }
        if let Some(g) = grouping {
            subquery_filter::correlation_over_groups(&mut planned, &g.keys, scope)?;
        }
        if grouping.is_none() && !self.windowed() {
            self.subqueries.restore_correlated(planned);
            self.subquery_filter_for_select_list(scope.names.len(), &scope.names);
            return Ok(());
        }
        if !self.upper_filter_on_top() {
            return Err(Error::unsupported(
                "correlated subqueries in both the HAVING clause and the ORDER BY of a query with analytic functions",
            ));
        }
        let (width, names) = self.row_shape(scope, grouping);
        self.upper_filter(planned, None, width, names, grouping.is_none());
        Ok(())
    }

    /// The output column an ORDER BY item sorts on: a select-list position, an output
    /// name, a select-list expression, or a hidden column added for it.
    pub(super) fn order_key(
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
        let binder =
            Binder { scope, f: self.f, grouping: grouping.map(|g| &g.grouping), subqueries: Some(&self.subqueries) };
        let bound = binder.bind(e)?;
        if let Some(i) = exprs[..visible].iter().position(|x| *x == bound) {
            return Ok(i);
        }
        exprs.push(bound);
        Ok(exprs.len() - 1)
    }

    pub(super) fn limit(&mut self, query: &ast::Query) -> Result<()> {
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
            let rule = limit.map_or(RowsRule::Same, RowsRule::AtMost);
            let last = limit.map_or("end".into(), |l| (offset + l).to_string());
            let predicate = Predicate::Filter(format!("row number between {} and {last}", offset + 1));
            self.running_with(Operation::Limit, rule, predicate, Stage::Limit(LimitStage::new(offset, limit)));
        }
        Ok(())
    }
}

/// The ORDER BY as table columns (column, descending), when the plan is a filter, a
/// projection and a sort whose every key is a projected column in its default NULLS
/// order (NULLS LAST ascending, FIRST descending: the order an index gives); otherwise
/// empty.
pub(super) fn sorted_columns<'s>(stages: impl IntoIterator<Item = &'s Stage<'static>>) -> Vec<(usize, bool)> {
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
pub(super) fn columns_read_by<'s>(stages: impl IntoIterator<Item = &'s Stage<'static>>, width: usize) -> Vec<bool> {
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
                a.calls.iter().flat_map(|c| c.exprs()).for_each(|e| e.visit_columns(&mut see));
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

/// Whether `e` holds a subquery.
fn holds_subquery(e: &ast::Expr) -> bool {
    let found = ast::visit_expressions(e, |x| match x {
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
            std::ops::ControlFlow::Break(())
        }
        _ => std::ops::ControlFlow::Continue(()),
    });
    found.is_break()
}

/// A quoted string after a select item is not a column alias, as in Oracle (ORA-00923):
/// `SELECT 'a' 'b' FROM dual` is a syntax error, reported where the item ends.
fn refuse_string_alias(expr: &ast::Expr, alias: &ast::Ident) -> Result<()> {
    if alias.quote_style != Some('\'') {
        return Ok(());
    }
    let end = expr.span().end;
    Err(Error::Parse {
        message: format!(
            "FROM keyword not found where expected: the string '{}' after {expr} is not a column alias (a column \
             alias is a name, quoted with \" if need be)",
            alias.value
        ),
        position: (end.line > 0).then(|| format!("line {}, column {}", end.line, end.column)),
    })
}
