//! The operations of a plan's row sources ([`Operation`]), named as Oracle's plans name
//! them: EXPLAIN prints a node's name, and a running statement publishes the operation
//! of the plan line reading its rows as one byte ([`Operation::code`]) in its session's
//! activity, which `v$active_session_history` names again ([`Operation::from_code`]).

use crate::index::IndexScanKind;
use std::fmt;

/// What a row source does, named as Oracle's plans name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    SelectStatement,
    TableAccessFull,
    TableAccessInMemoryFull,
    TableAccessByIndexRowid,
    Index {
        kind: IndexScanKind,
        descending: bool,
    },
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
    HashJoin,
    /// The probe input's rows (the second child) that join none are kept.
    HashJoinOuter,
    /// The build input's rows (the first child) that join none are kept.
    HashJoinRightOuter,
    HashJoinFullOuter,
    NestedLoops,
    NestedLoopsOuter,
    MergeJoin,
    MergeJoinOuter,
    MergeJoinFullOuter,
    MergeJoinCartesian,
    SortJoin,
    BufferSort,
    /// A hash join's join filter made from its build input's keys (`:BF0000`).
    JoinFilterCreate,
    /// The join filter checked on the probe input's rows, in its scan.
    JoinFilterUse,
    /// A query read as a row source (an inline view, a WITH query, a stored view).
    View,
    UnionAll,
    IntersectionHash,
    MinusHash,
    /// Analytic functions' values, each over the rows sorted by its window.
    WindowSort,
    /// Analytic functions' values over windows of the whole input (`OVER ()`): the rows
    /// held, never sorted.
    WindowBuffer,
    /// WINDOW SORT whose rows ranked past a limit (the filter of the query reading it on
    /// a ROW_NUMBER, RANK or DENSE_RANK) stop here.
    WindowSortPushedRank,
    /// An unnested `EXISTS` or `IN`: the outer rows that join a row of the subquery,
    /// each once. The hash table is built on the first child: the outer rows (SEMI), or
    /// the subquery's (RIGHT SEMI).
    HashJoinSemi,
    HashJoinRightSemi,
    /// An unnested `NOT EXISTS`: the outer rows that join no row of the subquery.
    HashJoinAnti,
    HashJoinRightAnti,
    NestedLoopsSemi,
    NestedLoopsAnti,
    MergeJoinSemi,
    MergeJoinAnti,
    /// WITH queries loaded into temporary tables (its first children) before the query
    /// (its last child) reads them.
    TempTableTransformation,
    /// One WITH query's rows loaded into a temporary table held for the cursor's
    /// execution, in memory.
    LoadAsSelectCursorDuration,
    /// The statement lines of EXPLAIN PLAN of INSERT, UPDATE and DELETE.
    InsertStatement,
    UpdateStatement,
    DeleteStatement,
    /// INSERT's rows loaded into the table's blocks through the buffer cache.
    LoadTableConventional,
    /// INSERT /*+ APPEND */ ... SELECT: a direct-path load above the high-water mark.
    LoadAsSelect,
    /// The rows an UPDATE or DELETE changes, found by the line under it.
    Update,
    Delete,
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
            Operation::HashJoin => "HASH JOIN",
            Operation::HashJoinOuter => "HASH JOIN OUTER",
            Operation::HashJoinRightOuter => "HASH JOIN RIGHT OUTER",
            Operation::HashJoinFullOuter => "HASH JOIN FULL OUTER",
            Operation::NestedLoops => "NESTED LOOPS",
            Operation::NestedLoopsOuter => "NESTED LOOPS OUTER",
            Operation::MergeJoin => "MERGE JOIN",
            Operation::MergeJoinOuter => "MERGE JOIN OUTER",
            Operation::MergeJoinFullOuter => "MERGE JOIN FULL OUTER",
            Operation::MergeJoinCartesian => "MERGE JOIN CARTESIAN",
            Operation::SortJoin => "SORT JOIN",
            Operation::BufferSort => "BUFFER SORT",
            Operation::JoinFilterCreate => "JOIN FILTER CREATE",
            Operation::JoinFilterUse => "JOIN FILTER USE",
            Operation::View => "VIEW",
            Operation::UnionAll => "UNION-ALL",
            Operation::IntersectionHash => "INTERSECTION HASH",
            Operation::MinusHash => "MINUS HASH",
            Operation::WindowSort => "WINDOW SORT",
            Operation::WindowBuffer => "WINDOW BUFFER",
            Operation::WindowSortPushedRank => "WINDOW SORT PUSHED RANK",
            Operation::HashJoinSemi => "HASH JOIN SEMI",
            Operation::HashJoinRightSemi => "HASH JOIN RIGHT SEMI",
            Operation::HashJoinAnti => "HASH JOIN ANTI",
            Operation::HashJoinRightAnti => "HASH JOIN RIGHT ANTI",
            Operation::NestedLoopsSemi => "NESTED LOOPS SEMI",
            Operation::NestedLoopsAnti => "NESTED LOOPS ANTI",
            Operation::MergeJoinSemi => "MERGE JOIN SEMI",
            Operation::MergeJoinAnti => "MERGE JOIN ANTI",
            Operation::TempTableTransformation => "TEMP TABLE TRANSFORMATION",
            Operation::LoadAsSelectCursorDuration => "LOAD AS SELECT (CURSOR DURATION MEMORY)",
            Operation::InsertStatement => "INSERT STATEMENT",
            Operation::UpdateStatement => "UPDATE STATEMENT",
            Operation::DeleteStatement => "DELETE STATEMENT",
            Operation::LoadTableConventional => "LOAD TABLE CONVENTIONAL",
            Operation::LoadAsSelect => "LOAD AS SELECT",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

impl Operation {
    /// Whether the operation joins two row sources.
    pub fn is_join(self) -> bool {
        matches!(
            self,
            Operation::HashJoin
                | Operation::HashJoinOuter
                | Operation::HashJoinRightOuter
                | Operation::HashJoinFullOuter
                | Operation::NestedLoops
                | Operation::NestedLoopsOuter
                | Operation::MergeJoin
                | Operation::MergeJoinOuter
                | Operation::MergeJoinFullOuter
                | Operation::MergeJoinCartesian
                | Operation::HashJoinSemi
                | Operation::HashJoinRightSemi
                | Operation::HashJoinAnti
                | Operation::HashJoinRightAnti
                | Operation::NestedLoopsSemi
                | Operation::NestedLoopsAnti
                | Operation::MergeJoinSemi
                | Operation::MergeJoinAnti
        )
    }

    /// Every operation, in the order of their codes.
    const ALL: [Operation; 60] = [
        Operation::SelectStatement,
        Operation::TableAccessFull,
        Operation::TableAccessInMemoryFull,
        Operation::TableAccessByIndexRowid,
        Operation::Index { kind: IndexScanKind::Unique, descending: false },
        Operation::Index { kind: IndexScanKind::Unique, descending: true },
        Operation::Index { kind: IndexScanKind::Range, descending: false },
        Operation::Index { kind: IndexScanKind::Range, descending: true },
        Operation::Index { kind: IndexScanKind::Full, descending: false },
        Operation::Index { kind: IndexScanKind::Full, descending: true },
        Operation::Index { kind: IndexScanKind::FastFull, descending: false },
        Operation::Index { kind: IndexScanKind::FastFull, descending: true },
        Operation::FixedTableFull,
        Operation::FastDual,
        Operation::ConnectByWithoutFiltering,
        Operation::CollectionIterator,
        Operation::Filter,
        Operation::CountStopkey,
        Operation::Count,
        Operation::SortAggregate,
        Operation::HashGroupBy,
        Operation::HashUnique,
        Operation::HashJoin,
        Operation::HashJoinOuter,
        Operation::HashJoinRightOuter,
        Operation::HashJoinFullOuter,
        Operation::NestedLoops,
        Operation::NestedLoopsOuter,
        Operation::MergeJoin,
        Operation::MergeJoinOuter,
        Operation::MergeJoinFullOuter,
        Operation::MergeJoinCartesian,
        Operation::SortJoin,
        Operation::BufferSort,
        Operation::JoinFilterCreate,
        Operation::JoinFilterUse,
        Operation::View,
        Operation::UnionAll,
        Operation::IntersectionHash,
        Operation::MinusHash,
        Operation::WindowSort,
        Operation::HashJoinSemi,
        Operation::HashJoinRightSemi,
        Operation::HashJoinAnti,
        Operation::HashJoinRightAnti,
        Operation::NestedLoopsSemi,
        Operation::NestedLoopsAnti,
        Operation::MergeJoinSemi,
        Operation::MergeJoinAnti,
        Operation::WindowBuffer,
        Operation::WindowSortPushedRank,
        Operation::TempTableTransformation,
        Operation::LoadAsSelectCursorDuration,
        Operation::InsertStatement,
        Operation::UpdateStatement,
        Operation::DeleteStatement,
        Operation::LoadTableConventional,
        Operation::LoadAsSelect,
        Operation::Update,
        Operation::Delete,
    ];

    /// The operation as one byte, which a session publishes for Active Session History
    /// (`SortOrderBy` and `Limit` follow the list).
    pub fn code(self) -> u8 {
        match self {
            Operation::SortOrderBy => Operation::ALL.len() as u8,
            Operation::Limit => Operation::ALL.len() as u8 + 1,
            op => Operation::ALL.iter().position(|&o| o == op).expect("every other operation is listed") as u8,
        }
    }

    /// The operation of code `code`, if it is one.
    pub fn from_code(code: u8) -> Option<Operation> {
        let n = Operation::ALL.len();
        match usize::from(code) {
            c if c < n => Some(Operation::ALL[c]),
            c if c == n => Some(Operation::SortOrderBy),
            c if c == n + 1 => Some(Operation::Limit),
            _ => None,
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_codes_round_trip() {
        let mut seen = Vec::new();
        for code in 0..=u8::MAX {
            if let Some(op) = Operation::from_code(code) {
                assert_eq!(op.code(), code, "{op}");
                assert!(!seen.contains(&op), "{op} has one code");
                seen.push(op);
            }
        }
        assert_eq!(seen.len(), Operation::ALL.len() + 2, "every operation has a code");
    }
}
