//! WITH queries, inlined or materialized. An inlined WITH query is planned anew where
//! each reference reads it, as a view (module `query_block`). A materialized one is
//! planned once and run once: its rows are loaded into a temporary table held in memory
//! for the execution, and each reference reads that table, as Oracle's temp table
//! transformation does:
//!
//! ```text
//!   WITH t AS (SELECT d, SUM(v) s FROM f GROUP BY d)
//!   SELECT * FROM t a, t b WHERE a.s < b.s
//!
//!   SELECT STATEMENT
//!     TEMP TABLE TRANSFORMATION
//!       LOAD AS SELECT (CURSOR DURATION MEMORY)  SYS_TEMP_0FD9D6600   (run first)
//!         HASH GROUP BY
//!           TABLE ACCESS FULL                    F
//!       NESTED LOOPS                                                 (the query)
//!         VIEW                                   T
//!           TABLE ACCESS FULL                    SYS_TEMP_0FD9D6600
//!         VIEW                                   T
//!           TABLE ACCESS FULL                    SYS_TEMP_0FD9D6600
//! ```
//!
//! Which WITH queries are materialized ([`materializes`]): one its query names two or
//! more times, or one whose query carries the MATERIALIZE hint (or is written
//! `AS MATERIALIZED`), unless it carries INLINE (`AS NOT MATERIALIZED`); never one no
//! reference reads. A WITH query never reads the row of a query around it (its columns
//! are not in its scope, as in Oracle), so a load is run once each time the query
//! defining it runs: once for the statement, or once for each run of a correlated
//! subquery that defines it.
//!
//! The loads are init plans of kind `InitKind::Table` ([`Load`]), each set in a slot of
//! the statement's function context; the TEMP TABLE TRANSFORMATION line is the source
//! of the query that defines the WITH, running the loads in order (a later WITH query may
//! read an earlier one's table) before the query's own plan, which is wrapped as a block
//! under it ([`with_temp_tables`]). Invariant: a reference's slot is always loaded
//! before anything that reads it runs: the references sit inside the block the loads
//! precede, or inside a later load.

use super::query_block::{Materialized, NamedQuery, PlannedBlock, as_block, plan_block, rename_columns};
use super::*;
use crate::exec::query_block::{InitKind, InitPlan, QueryBlock, TempTableTransformation};
use crate::sql::optimizer::hints::HintKind;
use sqlparser::ast::Visit;
use std::ops::ControlFlow;
use std::rc::Rc;

/// The load of a materialized WITH query: its plan, its lines and its table's name.
pub(super) struct Load {
    plan: InitPlan,
    tree: PlanTree,
    temp_name: String,
    estimate: Option<Estimate>,
}

/// Plans the loads of the WITH queries of `query` (those of `with`, now the last of
/// `visible`, from `own_start` on) that are materialized, marking each in `visible` so
/// that its references read its table.
pub(super) fn plan_loads(
    query: &ast::Query,
    with: &ast::With,
    visible: &mut [NamedQuery<'_>],
    own_start: usize,
    session: &Session,
    f: &FunctionContext,
    notes: &mut Vec<String>,
) -> Result<Vec<Load>> {
    let mut loads = Vec::new();
    for (cte, at) in with.cte_tables.iter().zip(own_start..) {
        let name = visible[at].name.clone();
        let asked = asked_for(cte);
        if !materializes(asked, references(query, with, at - own_start, &name)) {
            if asked == Some(true) {
                notes.push(format!("hint not used: MATERIALIZE (no reference reads {name})"));
            }
            continue;
        }
        let sees = visible[at].sees;
        let (mut block, block_notes) = plan_block(&cte.query, session, f, &visible[..sees], None)?;
        for note in block_notes {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        rename_columns(&mut block, &visible[at].columns, &name)?;
        let slot = f.subquery_slots.get();
        f.subquery_slots.set(slot + 1);
        // Named by its slot: unique in the statement.
        let temp_name = format!("SYS_TEMP_0FD9D66{slot:02X}");
        let PlannedBlock { block, tree, columns, families, char_lengths, estimate } = block;
        let model = cost_model(session);
        let read = estimate.map(|e| Estimate { rows: e.rows, cost: model.cpu(e.rows * optimizer::cost::SCAN_ROW_NS) });
        visible[at].materialized = Some(Rc::new(Materialized {
            slot,
            temp_name: temp_name.clone(),
            columns,
            families,
            char_lengths,
            estimate: read,
        }));
        loads.push(Load { plan: InitPlan { block, slot, kind: InitKind::Table }, tree, temp_name, estimate });
    }
    Ok(loads)
}

/// Whether a WITH query named `references` times is materialized: `asked` is what its
/// hint (or `AS [NOT] MATERIALIZED`) asks, if anything.
fn materializes(asked: Option<bool>, references: usize) -> bool {
    references > 0 && asked.unwrap_or(references > 1)
}

/// What WITH query `cte` asks: `Some(true)` for the MATERIALIZE hint in its first
/// query block or `AS MATERIALIZED`, `Some(false)` for INLINE or `AS NOT MATERIALIZED`.
fn asked_for(cte: &ast::Cte) -> Option<bool> {
    match cte.materialized {
        Some(ast::CteAsMaterialized::Materialized) => return Some(true),
        Some(ast::CteAsMaterialized::NotMaterialized) => return Some(false),
        None => {}
    }
    let mut body = &*cte.query.body;
    let select = loop {
        match body {
            ast::SetExpr::Select(select) => break select,
            ast::SetExpr::Query(q) => body = &q.body,
            ast::SetExpr::SetOperation { left, .. } => body = left,
            _ => return None,
        }
    };
    let texts: Vec<&str> = select.optimizer_hints.iter().map(|h| h.text.as_str()).collect();
    hints::parse(&texts).hints.iter().rev().find_map(|h| match h.kind {
        HintKind::Materialize(on) => Some(on),
        _ => None,
    })
}

/// How many times `query` names WITH query `at` of its WITH clause `with`, named
/// `name`: the tables of one part of that name, except where the name means something
/// else (the bodies of that WITH query and of those before it, which do not see it, and
/// queries whose own WITH clause names another query so).
fn references(query: &ast::Query, with: &ast::With, at: usize, name: &str) -> usize {
    let hidden = with.cte_tables[..=at].iter().map(|c| &*c.query as *const ast::Query).collect();
    let mut refs = References { name, top: query, hidden, hiding: Vec::new(), count: 0 };
    let _ = query.visit(&mut refs);
    refs.count
}

/// The walk [`references`] makes.
struct References<'n> {
    name: &'n str,
    top: *const ast::Query,
    /// Queries under which the name does not mean the WITH query.
    hidden: Vec<*const ast::Query>,
    /// For each query the walk is inside, whether it hides the name.
    hiding: Vec<bool>,
    count: usize,
}

impl ast::Visitor for References<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, query: &ast::Query) -> ControlFlow<()> {
        let at: *const ast::Query = query;
        let redefines =
            || query.with.as_ref().is_some_and(|w| w.cte_tables.iter().any(|c| ident_name(&c.alias.name) == self.name));
        let hides = at != self.top && (self.hidden.contains(&at) || redefines());
        self.hiding.push(hides);
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &ast::Query) -> ControlFlow<()> {
        self.hiding.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ast::ObjectName) -> ControlFlow<()> {
        if !self.hiding.contains(&true)
            && relation.0.len() == 1
            && crate::sql::bind::function_name(relation) == self.name
        {
            self.count += 1;
        }
        ControlFlow::Continue(())
    }
}

impl Builder<'_> {
    /// The block a reference to materialized WITH query `named` reads: its temporary
    /// table's rows.
    pub(super) fn materialized_block(&mut self, m: &Materialized) -> PlannedBlock {
        let width = m.columns.len();
        let mut tree = PlanTree::default();
        let mut node = PlanNode::new(Operation::TableAccessFull, &m.temp_name);
        node.rows_rule = m.estimate.map_or(RowsRule::Unknown, |e| RowsRule::Source(e.rows));
        node.estimate = m.estimate;
        tree.push_above(node);
        // The one line leaves after no stage: its probe is the block's first.
        let block =
            QueryBlock::new(Source::Materialized { slot: m.slot }, Vec::new(), width, vec![0], vec![0], Vec::new());
        PlannedBlock {
            block,
            tree,
            columns: m.columns.clone(),
            families: m.families.clone(),
            char_lengths: m.char_lengths.clone(),
            estimate: m.estimate,
        }
    }
}

/// The plan of a query whose WITH queries `loads` are materialized: TEMP TABLE
/// TRANSFORMATION runs the loads, then the query's own plan (as a block under it).
pub(super) fn with_temp_tables(planned: Planned<'static>, loads: Vec<Load>, f: &FunctionContext) -> Planned<'static> {
    let gather = planned.gather_plan_statistics;
    let (body, notes) = as_block(planned, f);
    let PlannedBlock { block, tree: body_tree, columns, families, char_lengths, estimate } = body;
    let width = columns.len();
    let mut tree = PlanTree::default();
    let top = tree.push_above(PlanNode::new(Operation::TempTableTransformation, ""));
    let mut plans = Vec::with_capacity(loads.len());
    let mut cost = estimate.map_or(0.0, |e| e.cost);
    for load in loads {
        let mut node = PlanNode::new(Operation::LoadAsSelectCursorDuration, &load.temp_name);
        node.rows_rule = load.estimate.map_or(RowsRule::Unknown, |e| RowsRule::Source(e.rows));
        node.estimate = load.estimate;
        cost += load.estimate.map_or(0.0, |e| e.cost);
        let line = tree.add(node);
        let below = tree.adopt(load.tree);
        tree.node_mut(line).children.extend(below);
        tree.node_mut(top).children.push(line);
        plans.push(load.plan);
    }
    let body_top = tree.adopt(body_tree);
    tree.node_mut(top).children.extend(body_top);
    let node = tree.node_mut(top);
    node.rows_rule = estimate.map_or(RowsRule::Unknown, |e| RowsRule::Source(e.rows));
    node.estimate = estimate.map(|e| Estimate { rows: e.rows, cost });
    node.work.source = Some(Source::TempTable(Box::new(TempTableTransformation { loads: plans, body: block })));
    let mut statement = PlanNode::new(Operation::SelectStatement, "");
    statement.work.stages.push(Stage::Collect(CollectStage::new(width)));
    tree.push_above(statement);
    tree.estimate();
    let reading_line = tree.reading_line().map(|(line, op)| (u16::try_from(line).unwrap_or(u16::MAX), op.code()));
    let (source, stages) = tree.build_pipeline();
    Planned {
        source,
        stages,
        columns,
        families,
        char_lengths,
        tree,
        notes,
        gather_plan_statistics: gather,
        rebind: None,
        reading_line,
        init: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(sql: &str) -> ast::Query {
        query_in(&sqlparser::dialect::OracleDialect {}, sql)
    }

    fn query_in(dialect: &dyn sqlparser::dialect::Dialect, sql: &str) -> ast::Query {
        *sqlparser::parser::Parser::new(dialect).try_with_sql(sql).unwrap().parse_query().unwrap()
    }

    fn counts(sql: &str) -> Vec<usize> {
        let q = query(sql);
        let with = q.with.as_ref().unwrap();
        (0..with.cte_tables.len())
            .map(|at| references(&q, with, at, &ident_name(&with.cte_tables[at].alias.name)))
            .collect()
    }

    #[test]
    fn references_count_where_the_name_means_the_with_query() {
        let both = "WITH a AS (SELECT 1 x FROM dual), b AS (SELECT * FROM a) \
                    SELECT * FROM a, b WHERE EXISTS (SELECT 1 FROM a WHERE a.x = b.x)";
        assert_eq!(counts(both), [3, 1]);
        // Its own body names the table it hides; an inner WITH hides it in its query.
        assert_eq!(counts("WITH t AS (SELECT * FROM t WHERE id < 3) SELECT COUNT(*) FROM t"), [1]);
        let inner = "WITH w AS (SELECT id FROM t) SELECT * FROM (WITH w AS (SELECT id FROM x) SELECT * FROM w) a, \
                     (WITH w AS (SELECT id FROM x) SELECT * FROM w) b, w c";
        assert_eq!(counts(inner), [1]);
        // A WITH query before it does not see it: a name there is a table's.
        assert_eq!(counts("WITH a AS (SELECT * FROM b), b AS (SELECT 1 x FROM dual) SELECT * FROM b"), [0, 1]);
    }

    #[test]
    fn a_with_query_named_twice_is_materialized_unless_asked_not_to() {
        assert!(!materializes(None, 1));
        assert!(materializes(None, 2));
        assert!(materializes(Some(true), 1));
        assert!(!materializes(Some(false), 3));
        assert!(!materializes(Some(true), 0), "nothing reads it");
    }

    #[test]
    fn hints_and_as_materialized_ask_for_it() {
        let q = query(
            "WITH a AS (SELECT /*+ MATERIALIZE */ 1 x FROM dual), b AS (SELECT /*+ inline */ 2 y FROM dual), \
             e AS (SELECT 5 FROM dual UNION ALL SELECT /*+ MATERIALIZE */ 6 FROM dual), \
             f AS (SELECT /*+ MATERIALIZE */ 7 FROM dual UNION ALL SELECT 8 FROM dual) SELECT 1 FROM dual",
        );
        let asked: Vec<Option<bool>> = q.with.as_ref().unwrap().cte_tables.iter().map(asked_for).collect();
        assert_eq!(asked, [Some(true), Some(false), None, Some(true)]);
        // PostgreSQL's spelling, which the Oracle dialect does not parse.
        let q = query_in(
            &sqlparser::dialect::PostgreSqlDialect {},
            "WITH c AS MATERIALIZED (SELECT 3), d AS NOT MATERIALIZED (SELECT /*+ MATERIALIZE */ 4) SELECT 1",
        );
        let asked: Vec<Option<bool>> = q.with.as_ref().unwrap().cte_tables.iter().map(asked_for).collect();
        assert_eq!(asked, [Some(true), Some(false)]);
    }
}
