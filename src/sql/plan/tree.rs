//! The physical plan: a tree of row sources, each node knowing its operation, the object
//! it reads, its predicates, its estimate, and where its rows leave the pipeline that
//! runs it: after which of the pipeline's stages (the stages between a node's child's
//! exit and its own are the node's work). EXPLAIN walks the tree from the root; the
//! planner finds the nodes it rewrites by id, never by their text; row-source
//! statistics are gathered for nodes, a probe at each node's exit.
//!
//! ```text
//!   SELECT COUNT(*) FROM t WHERE k BETWEEN 1 AND 9 AND v > 0      (stages: Filter v > 0,
//!                                                                  Aggregate, Collect)
//!   node  operation                    object  rows at        rule
//!   0     TABLE ACCESS BY INDEX ROWID  T       Stage(1)       Source(optimizer's rows)
//!   1     INDEX RANGE SCAN             T_K     InsideSource   Source(index entries)
//!   2     SORT AGGREGATE                       Stage(2)       Groups(1)
//!   3     SELECT STATEMENT                     Result         Same
//!
//!   root 3 ─► 2 ─► 0 ─► 1     EXPLAIN's ids: pre-order from the root (3 is Id 0, 1 is Id 3)
//! ```
//!
//! Invariants: the tree is reachable from its root; a node is a child of at most one
//! node; `RowsAt::Stage(n)` of a node is never below that of a node under it (rows flow
//! up the pipeline); a node spliced out of the tree is never reached again (its slot
//! stays, ids do not move).

use crate::index::IndexScanKind;
use std::fmt;

/// A node's index in its tree.
pub type NodeId = usize;

/// What a row source does, named as Oracle's plans name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    SelectStatement,
    TableAccessFull,
    TableAccessInMemoryFull,
    TableAccessByIndexRowid,
    Index { kind: IndexScanKind, descending: bool },
    FixedTableFull,
    FastDual,
    ConnectByWithoutFiltering,
    CollectionIterator,
    Filter,
    CountStopkey,
    Count,
    SortAggregate,
    HashGroupBy,
    HashUnique,
    SortOrderBy,
    Limit,
}

impl Operation {
    /// The operation as EXPLAIN PLAN prints it.
    pub fn name(self) -> &'static str {
        match self {
            Operation::SelectStatement => "SELECT STATEMENT",
            Operation::TableAccessFull => "TABLE ACCESS FULL",
            Operation::TableAccessInMemoryFull => "TABLE ACCESS INMEMORY FULL",
            Operation::TableAccessByIndexRowid => "TABLE ACCESS BY INDEX ROWID",
            Operation::Index { kind, descending } => kind.operation(descending),
            Operation::FixedTableFull => "FIXED TABLE FULL",
            Operation::FastDual => "FAST DUAL",
            Operation::ConnectByWithoutFiltering => "CONNECT BY WITHOUT FILTERING",
            Operation::CollectionIterator => "COLLECTION ITERATOR",
            Operation::Filter => "FILTER",
            Operation::CountStopkey => "COUNT STOPKEY",
            Operation::Count => "COUNT",
            Operation::SortAggregate => "SORT AGGREGATE",
            Operation::HashGroupBy => "HASH GROUP BY",
            Operation::HashUnique => "HASH UNIQUE",
            Operation::SortOrderBy => "SORT ORDER BY",
            Operation::Limit => "LIMIT",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A predicate of a node, for EXPLAIN's predicate section.
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// What bounds the rows the node reads (an index's key range).
    Access(String),
    /// What the node checks of each row it reads.
    Filter(String),
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::Access(text) => write!(f, "access({text})"),
            Predicate::Filter(text) => write!(f, "filter({text})"),
        }
    }
}

/// Where a node's rows leave the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowsAt {
    /// After the pipeline's first `n` stages.
    Stage(usize),
    /// The statement's result.
    Result,
    /// Inside the pipeline's source, which gathers the node's figures itself (the index
    /// scan under a table access by rowid).
    InsideSource,
}

/// How a node's estimated rows follow from its child's.
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

/// The optimizer's estimate for one node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub rows: f64,
    pub cost: f64,
}

/// One row source of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanNode {
    pub operation: Operation,
    /// The table, index or view it reads (empty for none).
    pub object: String,
    pub predicates: Vec<Predicate>,
    pub rows_at: RowsAt,
    pub rows_rule: RowsRule,
    pub estimate: Option<Estimate>,
    /// The row sources it reads from.
    pub children: Vec<NodeId>,
}

impl PlanNode {
    /// A node of `operation` reading `object`, its rows as many as its child's, leaving
    /// the pipeline at `rows_at`.
    pub fn new(operation: Operation, object: &str, rows_at: RowsAt) -> PlanNode {
        PlanNode {
            operation,
            object: object.into(),
            predicates: Vec::new(),
            rows_at,
            rows_rule: RowsRule::Same,
            estimate: None,
            children: Vec::new(),
        }
    }
}

/// A plan's row sources, as a tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanTree {
    nodes: Vec<PlanNode>,
    root: Option<NodeId>,
}

impl PlanTree {
    /// The top of the tree.
    pub fn root(&self) -> Option<NodeId> {
        self.root
    }

    pub fn node(&self, id: NodeId) -> &PlanNode {
        &self.nodes[id]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut PlanNode {
        &mut self.nodes[id]
    }

    /// Adds `node` on top of the tree: it reads from the old root and becomes the root.
    pub fn push_above(&mut self, mut node: PlanNode) -> NodeId {
        let id = self.nodes.len();
        node.children.extend(self.root);
        self.nodes.push(node);
        self.root = Some(id);
        id
    }

    /// Adds `node` under `parent`, as its first child.
    pub fn push_below(&mut self, parent: NodeId, node: PlanNode) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(node);
        self.nodes[parent].children.insert(0, id);
        id
    }

    /// Takes node `id` out of the tree: its parent reads from its children instead.
    pub fn splice_out(&mut self, id: NodeId) {
        let children = std::mem::take(&mut self.nodes[id].children);
        if self.root == Some(id) {
            assert!(children.len() <= 1, "a root spliced out has at most one child");
            self.root = children.first().copied();
            return;
        }
        if let Some(parent) = self.nodes.iter_mut().find(|n| n.children.contains(&id)) {
            let at = parent.children.iter().position(|&c| c == id).expect("found by it");
            parent.children.splice(at..=at, children);
        }
    }

    /// The reachable nodes from the root down, each with its depth: EXPLAIN's order,
    /// where a node's position is its Oracle plan line id.
    pub fn pre_order(&self) -> Vec<(NodeId, usize)> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut pending: Vec<(NodeId, usize)> = self.root.map(|r| (r, 0)).into_iter().collect();
        while let Some((id, depth)) = pending.pop() {
            out.push((id, depth));
            pending.extend(self.nodes[id].children.iter().rev().map(|&c| (c, depth + 1)));
        }
        out
    }

    /// Every node's `RowsAt::Stage` after the `at`th stage moves down one:
    /// that stage was taken out of the pipeline.
    pub fn stage_removed(&mut self, at: usize) {
        for node in &mut self.nodes {
            if let RowsAt::Stage(n) = &mut node.rows_at
                && *n > at
            {
                *n -= 1;
            }
        }
    }

    /// Fills each node's estimate from its first child's, following the nodes' rules,
    /// children first. The cost of every node is its child's (lioscope adds no cost for
    /// operations done in memory).
    pub fn estimate(&mut self) {
        let order = self.pre_order();
        for &(id, _) in order.iter().rev() {
            let below = self.nodes[id].children.first().and_then(|&c| self.nodes[c].estimate);
            self.nodes[id].estimate = node_estimate(&self.nodes[id], below);
        }
    }
}

/// A node's estimate from its rule and its child's estimate.
fn node_estimate(node: &PlanNode, below: Option<Estimate>) -> Option<Estimate> {
    match (&node.rows_rule, below) {
        (RowsRule::Unknown, _) => None,
        (RowsRule::Source(rows), _) => node.estimate.or(Some(Estimate { rows: *rows, cost: 0.0 })),
        (_, None) => None,
        (RowsRule::Same, Some(e)) => Some(e),
        (RowsRule::Fraction(f), Some(e)) => Some(Estimate { rows: e.rows * f, ..e }),
        (RowsRule::AtMost(n), Some(e)) => Some(Estimate { rows: e.rows.min(*n as f64), ..e }),
        (RowsRule::Groups(g), Some(e)) => Some(Estimate { rows: g.map_or(e.rows, |g| g.min(e.rows.max(1.0))), ..e }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(ops: &[Operation]) -> PlanTree {
        let mut tree = PlanTree::default();
        for (i, &op) in ops.iter().enumerate() {
            tree.push_above(PlanNode::new(op, "", RowsAt::Stage(i)));
        }
        tree
    }

    #[test]
    fn pre_order_walks_from_the_root_down_with_depths() {
        let mut tree =
            chain(&[Operation::TableAccessByIndexRowid, Operation::SortAggregate, Operation::SelectStatement]);
        let index = Operation::Index { kind: IndexScanKind::Range, descending: false };
        tree.push_below(0, PlanNode::new(index, "T_K", RowsAt::InsideSource));
        let order: Vec<(Operation, usize)> =
            tree.pre_order().into_iter().map(|(id, depth)| (tree.node(id).operation, depth)).collect();
        assert_eq!(
            order,
            [
                (Operation::SelectStatement, 0),
                (Operation::SortAggregate, 1),
                (Operation::TableAccessByIndexRowid, 2),
                (index, 3)
            ]
        );
    }

    #[test]
    fn a_node_spliced_out_is_never_reached_and_its_child_takes_its_place() {
        let mut tree = chain(&[Operation::TableAccessFull, Operation::SortOrderBy, Operation::SelectStatement]);
        tree.splice_out(1);
        let ops: Vec<Operation> = tree.pre_order().into_iter().map(|(id, _)| tree.node(id).operation).collect();
        assert_eq!(ops, [Operation::SelectStatement, Operation::TableAccessFull]);
        tree.splice_out(2);
        assert_eq!(tree.root(), Some(0));
    }

    #[test]
    fn stage_removed_moves_later_exits_down_only() {
        let mut tree = chain(&[Operation::TableAccessFull, Operation::Filter, Operation::SortOrderBy]);
        tree.stage_removed(1);
        let exits: Vec<RowsAt> = (0..3).map(|id| tree.node(id).rows_at).collect();
        assert_eq!(exits, [RowsAt::Stage(0), RowsAt::Stage(1), RowsAt::Stage(1)]);
    }

    #[test]
    fn estimates_follow_each_rule_from_the_source_up() {
        let mut tree = PlanTree::default();
        let rules = [
            RowsRule::Source(1000.0),
            RowsRule::Fraction(0.1),
            RowsRule::AtMost(50),
            RowsRule::Groups(Some(7.0)),
            RowsRule::Same,
        ];
        for (i, rule) in rules.into_iter().enumerate() {
            let mut node = PlanNode::new(Operation::Filter, "", RowsAt::Stage(i));
            node.rows_rule = rule;
            tree.push_above(node);
        }
        tree.node_mut(0).estimate = Some(Estimate { rows: 1000.0, cost: 12.0 });
        tree.estimate();
        let rows: Vec<f64> = (0..5).map(|id| tree.node(id).estimate.expect("estimated").rows).collect();
        assert_eq!(rows, [1000.0, 100.0, 50.0, 7.0, 7.0]);
        assert!((0..5).all(|id| tree.node(id).estimate.expect("estimated").cost == 12.0));
        tree.node_mut(0).rows_rule = RowsRule::Unknown;
        tree.node_mut(0).estimate = None;
        tree.estimate();
        assert!((0..5).all(|id| tree.node(id).estimate.is_none()), "no estimate above an unknown source");
    }

    #[test]
    fn predicates_print_as_oracle_shows_them() {
        assert_eq!(Predicate::Access("\"K\">=1".into()).to_string(), "access(\"K\">=1)");
        assert_eq!(Predicate::Filter("ROWNUM<=5".into()).to_string(), "filter(ROWNUM<=5)");
        let index = Operation::Index { kind: IndexScanKind::Range, descending: true };
        assert_eq!(index.name(), "INDEX RANGE SCAN DESCENDING");
    }
}
