//! The physical plan: a tree of row sources, each node knowing its operation, the object
//! it reads, its predicates, its estimate, and its work in the pipeline that runs the
//! plan ([`Work`]): the pipeline's source for the node that reads the rows, and the
//! stages the node runs on them. The pipeline is built from the tree
//! ([`PlanTree::build_pipeline`]): the source of the node that reads, then each node's
//! stages from there up to the root; building it records where each node's rows leave
//! ([`RowsAt`]). EXPLAIN walks the tree from the root; the planner finds the nodes it
//! rewrites by id, never by their text; row-source statistics are gathered for nodes, a
//! probe at each node's exit.
//!
//! ```text
//!   SELECT COUNT(*) FROM t WHERE k BETWEEN 1 AND 9 AND v > 0
//!
//!   node  operation                    object  work                      rows at
//!   0     TABLE ACCESS BY INDEX ROWID  T       source Index, Filter v>0  Stage(1)
//!   1     INDEX RANGE SCAN             T_K     (inside the source)       InsideSource
//!   2     SORT AGGREGATE                       Aggregate                 Stage(2)
//!   3     SELECT STATEMENT                     Collect                   Result
//!
//!   root 3 ─► 2 ─► 0 ─► 1     EXPLAIN's ids: pre-order from the root (3 is Id 0, 1 is Id 3)
//!   pipeline: Index source ─► Filter ─► Aggregate ─► Collect
//! ```
//!
//! A select list runs as a projection stage of the node below the first operation that
//! works on its output (DISTINCT, the sort, the limit, or the statement), as Oracle's
//! row sources project their columns themselves.
//!
//! Invariants: the tree is reachable from its root; a node is a child of at most one
//! node; the pipeline runs along the first children from the root down to the one node
//! with a source, and nodes under that node run inside the source (they have no work);
//! a node spliced out of the tree is never reached again (its slot stays, ids do not
//! move), and its work leaves the pipeline with it.

use super::Operation;
use crate::exec::{Source, Stage};
use std::fmt;

/// A node's index in its tree.
pub type NodeId = usize;

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

/// Where a node's rows leave the pipeline: set when the pipeline is built from the tree.
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

/// What a node does in the pipeline that runs its plan, until the pipeline is built
/// from the tree (which takes it).
#[derive(Default)]
pub struct Work {
    /// The pipeline's source: set on the one node that reads the rows.
    pub source: Option<Source>,
    /// The stages the node runs on its rows, in order.
    pub stages: Vec<Stage<'static>>,
}

impl fmt::Debug for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Work").field("source", &self.source.is_some()).field("stages", &self.stages.len()).finish()
    }
}

/// One row source of a plan.
#[derive(Debug)]
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
    pub work: Work,
}

impl PlanNode {
    /// A node of `operation` reading `object`, its rows as many as its child's, with no
    /// work yet.
    pub fn new(operation: Operation, object: &str) -> PlanNode {
        PlanNode {
            operation,
            object: object.into(),
            predicates: Vec::new(),
            rows_at: RowsAt::InsideSource,
            rows_rule: RowsRule::Same,
            estimate: None,
            children: Vec::new(),
            work: Work::default(),
        }
    }
}

/// A plan's row sources, as a tree.
#[derive(Debug, Default)]
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

    /// How many of the tree's nodes, attached or not, run `operation`.
    pub fn count(&self, operation: Operation) -> usize {
        self.nodes.iter().filter(|n| n.operation == operation).count()
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

    /// Adds `node`, whose children are this tree's nodes, outside the tree; the caller
    /// makes it a child of one of this tree's nodes.
    pub fn add(&mut self, node: PlanNode) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Moves every node of `other` into this tree (their ids shifted past this tree's),
    /// returning where `other`'s root went; the caller makes it a child of one of this
    /// tree's nodes.
    pub fn adopt(&mut self, other: PlanTree) -> Option<NodeId> {
        let shift = self.nodes.len();
        let root = other.root.map(|r| r + shift);
        for mut node in other.nodes {
            node.children.iter_mut().for_each(|c| *c += shift);
            self.nodes.push(node);
        }
        root
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

    /// The nodes under `top`, `top` first, in EXPLAIN's order.
    pub fn pre_order_from(&self, top: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut pending = vec![top];
        while let Some(id) = pending.pop() {
            out.push(id);
            pending.extend(self.nodes[id].children.iter().rev());
        }
        out
    }

    /// The node that reads the rows (the pipeline's source), as its plan line id and its
    /// operation: what Active Session History shows a query working in. Asked before the
    /// pipeline is built (building takes the source).
    pub fn reading_line(&self) -> Option<(usize, Operation)> {
        let reader = *self.pipeline_nodes().first()?;
        let line = self.pre_order().iter().position(|&(id, _)| id == reader)?;
        Some((line, self.nodes[reader].operation))
    }

    /// The nodes the pipeline runs through, in its order: from the node that reads the
    /// rows (the first on the chain of first children from the root that has a source, or
    /// the chain's last) up to the root.
    pub fn pipeline_nodes(&self) -> Vec<NodeId> {
        let mut chain = Vec::new();
        let mut at = self.root;
        while let Some(id) = at {
            chain.push(id);
            let node = &self.nodes[id];
            at = if node.work.source.is_some() { None } else { node.children.first().copied() };
        }
        chain.reverse();
        chain
    }

    /// The stages of the pipeline the tree would build, in their order.
    pub fn stages(&self) -> impl Iterator<Item = &Stage<'static>> + '_ {
        self.pipeline_nodes().into_iter().flat_map(move |id| self.nodes[id].work.stages.iter())
    }

    /// Builds the pipeline that runs the plan and records where each node's rows leave:
    /// the source of the node that reads, then each node's stages up to the root, whose
    /// rows are the result. Nodes under the reading one run inside its source (work they
    /// were given is dropped). Takes every node's work; the tree keeps what EXPLAIN and
    /// row-source statistics read.
    ///
    /// # Panics
    /// When no node on the pipeline's chain has a source: the planner gives every plan one.
    pub fn build_pipeline(&mut self) -> (Source, Vec<Stage<'static>>) {
        let chain = self.pipeline_nodes();
        let reader = *chain.first().expect("a plan has nodes");
        let source = self.nodes[reader].work.source.take().expect("the planner gives every plan a source");
        let mut stages = Vec::new();
        for &id in &chain {
            stages.append(&mut self.nodes[id].work.stages);
            self.nodes[id].rows_at = RowsAt::Stage(stages.len());
        }
        for (id, node) in self.nodes.iter_mut().enumerate() {
            node.work = Work::default();
            if !chain.contains(&id) {
                node.rows_at = RowsAt::InsideSource;
            }
        }
        if let Some(root) = self.root {
            self.nodes[root].rows_at = RowsAt::Result;
        }
        (source, stages)
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
    use crate::index::IndexScanKind;

    fn chain(ops: &[Operation]) -> PlanTree {
        let mut tree = PlanTree::default();
        for &op in ops {
            tree.push_above(PlanNode::new(op, ""));
        }
        tree
    }

    fn limit(n: u64) -> Stage<'static> {
        Stage::Limit(crate::exec::LimitStage::new(0, Some(n)))
    }

    fn limits<'s>(stages: impl IntoIterator<Item = &'s Stage<'static>>) -> Vec<Option<u64>> {
        stages.into_iter().map(|s| if let Stage::Limit(l) = s { l.limit } else { None }).collect()
    }

    #[test]
    fn pre_order_walks_from_the_root_down_with_depths() {
        let mut tree =
            chain(&[Operation::TableAccessByIndexRowid, Operation::SortAggregate, Operation::SelectStatement]);
        let index = Operation::Index { kind: IndexScanKind::Range, descending: false };
        tree.push_below(0, PlanNode::new(index, "T_K"));
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
    fn the_pipeline_runs_from_the_reading_node_up_and_records_each_exit() {
        // TABLE ACCESS BY INDEX ROWID (source, one stage) over an index node, a node with
        // no stage of its own, a node with two, and the statement.
        let mut tree = chain(&[
            Operation::TableAccessByIndexRowid,
            Operation::Count,
            Operation::CountStopkey,
            Operation::SelectStatement,
        ]);
        let index = tree
            .push_below(0, PlanNode::new(Operation::Index { kind: IndexScanKind::Range, descending: false }, "T_K"));
        tree.node_mut(0).work = Work { source: Some(Source::Dual), stages: vec![limit(1)] };
        tree.node_mut(2).work.stages = vec![limit(2), limit(3)];
        tree.node_mut(3).work.stages = vec![limit(4)];
        tree.node_mut(index).work.stages = vec![limit(99)];
        assert_eq!(tree.pipeline_nodes(), [0, 1, 2, 3]);
        assert_eq!(limits(tree.stages()), [Some(1), Some(2), Some(3), Some(4)]);
        let (source, stages) = tree.build_pipeline();
        assert!(matches!(source, Source::Dual));
        assert_eq!(limits(&stages), [Some(1), Some(2), Some(3), Some(4)], "the index's work is not on the pipeline");
        let exits: Vec<RowsAt> = [0, 1, 2, 3, index].map(|id| tree.node(id).rows_at).to_vec();
        assert_eq!(exits, [RowsAt::Stage(1), RowsAt::Stage(1), RowsAt::Stage(3), RowsAt::Result, RowsAt::InsideSource]);
        assert!(tree.stages().next().is_none(), "building takes the stages");
    }

    #[test]
    fn a_spliced_out_node_takes_its_stages_off_the_pipeline() {
        let mut tree = chain(&[Operation::TableAccessFull, Operation::SortOrderBy, Operation::Limit]);
        tree.node_mut(0).work.source = Some(Source::Dual);
        for id in 0..3 {
            tree.node_mut(id).work.stages = vec![limit(id as u64)];
        }
        tree.splice_out(1);
        let (_, stages) = tree.build_pipeline();
        assert_eq!(limits(&stages), [Some(0), Some(2)]);
        assert_eq!(tree.node(0).rows_at, RowsAt::Stage(1));
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
        for rule in rules {
            let mut node = PlanNode::new(Operation::Filter, "");
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
