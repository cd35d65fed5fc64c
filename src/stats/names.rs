//! The statistics lioscope counts, with Oracle's names and classes (`v$statname`).

/// Declares the `Stat` enum and its name and class tables in one place.
macro_rules! statistics {
    ($($variant:ident => $name:literal, $class:literal;)*) => {
        /// A statistic counted per session (`v$sesstat`) and for the system (`v$sysstat`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum Stat { $($variant),* }

        impl Stat {
            /// Every statistic, in `v$statname` order (`statistic#` is the index).
            pub const ALL: &'static [Stat] = &[$(Stat::$variant),*];

            /// Oracle's name for the statistic.
            pub fn name(self) -> &'static str {
                match self { $(Stat::$variant => $name),* }
            }

            /// Oracle's class bitmask: 1 user, 2 redo, 4 enqueue, 8 cache, 16 OS,
            /// 32 real application clusters, 64 SQL, 128 debug.
            pub fn class(self) -> u32 {
                match self { $(Stat::$variant => $class),* }
            }
        }
    };
}

statistics! {
    LogicalReads => "session logical reads", 1;
    ConsistentGets => "consistent gets", 8;
    ConsistentGetsFromCache => "consistent gets from cache", 8;
    DbBlockGets => "db block gets", 8;
    DbBlockGetsFromCache => "db block gets from cache", 8;
    DbBlockChanges => "db block changes", 8;
    BufferIsPinned => "buffer is pinned count", 72;
    BufferIsNotPinned => "buffer is not pinned count", 72;
    TableFetchByRowid => "table fetch by rowid", 64;
    FreeBufferRequested => "free buffer requested", 8;
    FreeBufferInspected => "free buffer inspected", 8;
    DirtyBuffersInspected => "dirty buffers inspected", 8;
    PhysicalReads => "physical reads", 8;
    PhysicalReadsCache => "physical reads cache", 8;
    PhysicalReadIoRequests => "physical read total IO requests", 8;
    PhysicalReadMultiBlockRequests => "physical read total multi block requests", 8;
    PhysicalReadBytes => "physical read total bytes", 8;
    PhysicalWrites => "physical writes", 8;
    PhysicalWritesFromCache => "physical writes from cache", 8;
    PhysicalWriteIoRequests => "physical write total IO requests", 8;
    PhysicalWriteBytes => "physical write total bytes", 8;
    TableScansLong => "table scans (long tables)", 64;
    TableScansShort => "table scans (short tables)", 64;
    TableScanBlocksGotten => "table scan blocks gotten", 64;
    TableScanRowsGotten => "table scan rows gotten", 64;
    TableFetchContinuedRow => "table fetch continued row", 64;
    UserCalls => "user calls", 1;
    ExecuteCount => "execute count", 64;
    ParseCountTotal => "parse count (total)", 64;
    SortsMemory => "sorts (memory)", 64;
    SortsDisk => "sorts (disk)", 64;
    SortsRows => "sorts (rows)", 64;
    RowsInserted => "rows inserted", 1;
    CpuUsedBySession => "CPU used by this session", 1;
    DbTime => "DB time", 1;
    RowsUpdated => "rows updated", 1;
    RowsDeleted => "rows deleted", 1;
    UserCommits => "user commits", 1;
    UserRollbacks => "user rollbacks", 1;
    ConsistentChanges => "consistent changes", 8;
    CrBlocksCreated => "CR blocks created", 8;
    CrUndoRecordsApplied => "data blocks consistent reads - undo records applied", 128;
    ConsistentGetsExamination => "consistent gets - examination", 8;
    NoWorkConsistentReadGets => "no work - consistent read gets", 128;
    CleanoutsOnlyConsistentReadGets => "cleanouts only - consistent read gets", 128;
    CleanoutsAndRollbacksConsistentReadGets => "cleanouts and rollbacks - consistent read gets", 128;
    ImmediateCrCleanouts => "immediate (CR) block cleanout applications", 128;
    CommitCleanouts => "commit cleanouts", 128;
    CommitCleanoutsCompleted => "commit cleanouts successfully completed", 128;
    CommitCleanoutFailuresCannotPin => "commit cleanout failures: cannot pin", 128;
    TransactionTablesCrUndoRecordsApplied => "transaction tables consistent reads - undo records applied", 128;
    UndoChangeVectorSize => "undo change vector size", 128;
    RollbackChangesUndoRecordsApplied => "rollback changes - undo records applied", 128;
    EnqueueWaits => "enqueue waits", 4;
    EnqueueDeadlocks => "enqueue deadlocks", 4;
    LeafNodeSplits => "leaf node splits", 128;
    LeafNode9010Splits => "leaf node 90-10 splits", 128;
    BranchNodeSplits => "branch node splits", 128;
    RootNodeSplits => "root node splits", 128;
    IndexFastFullScansFull => "index fast full scans (full)", 64;
    IndexScansKdiixs1 => "index scans kdiixs1", 64;
    IndexFetchByKey => "index fetch by key", 64;
    ImPopulateCus => "IM populate CUs", 128;
    ImPopulateRows => "IM populate rows", 128;
    ImPopulateBytesFromStorage => "IM populate bytes from storage", 128;
    ImPopulateCpuTime => "IM populate CPU time", 128;
    ImPopulateReadTime => "IM populate time reading blocks (us)", 128;
    ImPopulateDecodeTime => "IM populate time decoding rows (us)", 128;
    ImPopulateChainedTime => "IM populate time following chained rows (us)", 128;
    ImPopulateDictionaryTime => "IM populate time building dictionaries (us)", 128;
    ImPopulateEncodeTime => "IM populate time encoding (us)", 128;
    ImPopulateCompressTime => "IM populate time compressing (us)", 128;
    ImRepopulateCus => "IM repopulate CUs", 128;
    HccLoadDirectCus => "HCC load direct CUs", 128;
    HccLoadDirectRows => "HCC load direct rows", 128;
    EhccCusDecompressed => "EHCC CUs Decompressed", 128;
    EhccQueryLowCusDecompressed => "EHCC Query Low CUs Decompressed", 128;
    EhccQueryHighCusDecompressed => "EHCC Query High CUs Decompressed", 128;
    EhccArchiveLowCusDecompressed => "EHCC Archive Low CUs Decompressed", 128;
    EhccArchiveHighCusDecompressed => "EHCC Archive High CUs Decompressed", 128;
    EhccRowsNotDecompressed => "EHCC Rows Not Decompressed", 128;
    EhccTotalRowsForDecompression => "EHCC Total Rows for Decompression", 128;
    EhccColumnsDecompressed => "EHCC Columns Decompressed", 128;
    EhccCompressedLengthDecompressed => "EHCC Compressed Length Decompressed", 128;
    EhccDecompressedLengthDecompressed => "EHCC Decompressed Length Decompressed", 128;
    ImScanSegments => "IM scan segments", 128;
    ImScanCus => "IM scan CUs", 128;
    ImScanCusPruned => "IM scan CUs pruned", 128;
    ImScanRows => "IM scan rows", 128;
    ImScanRowsValid => "IM scan rows valid", 128;
    ImScanRowsJournal => "IM scan rows journal", 128;
    ImScanBlocksCache => "IM scan blocks from cache", 128;
    ParseCountHard => "parse count (hard)", 64;
    ConsistentGetsPinFastpath => "consistent gets pin (fastpath)", 8;
    RedoSize => "redo size", 2;
    RedoEntries => "redo entries", 2;
    RedoSynchWrites => "redo synch writes", 2;
    RedoSynchTime => "redo synch time", 2;
    RedoSynchTimeUsec => "redo synch time (usec)", 2;
    RedoWrites => "redo writes", 2;
    RedoBlocksWritten => "redo blocks written", 2;
    RedoWastage => "redo wastage", 2;
    RedoLogSwitches => "redo log switches", 2;
    RedoLogGroupsAdded => "redo log groups added", 2;
    CheckpointNotComplete => "checkpoint not complete", 2;
    CommitBatchNowait => "commit batch/nowait requested", 2;
    DbwrCheckpoints => "DBWR checkpoints", 8;
    DbwrCheckpointBuffersWritten => "DBWR checkpoint buffers written", 8;
    BackgroundCheckpointsCompleted => "background checkpoints completed", 8;
    RedoRecordsApplied => "recovery redo records applied", 2;
    RecoveryBlocksApplied => "recovery blocks read", 8;
    TransactionsRolledBackAtOpen => "transaction rollbacks", 1;
    // lioscope's own: where the CPU of a physical read goes, in nanoseconds, counted on
    // the read path only (a cached get never touches them).
    PhysicalReadSyscallCpuNs => "physical read syscall CPU ns", 136;
    PhysicalReadBufferClaimNs => "physical read buffer claim ns", 136;
    PhysicalReadChainInsertNs => "physical read hash chain insert ns", 136;
    PhysicalReadBlockCheckNs => "physical read block check ns", 136;
    // Oracle's, listed last so that every other statistic keeps its number: compression
    // units decompressed whole to fetch rows by rowid (an index's table access).
    EhccRowidCusDecompressed => "EHCC Rowid CUs Decompressed", 128;
    HccRowsMovedOut => "HCC rows moved out by update", 128;
    // lioscope's own: rows a count kernel passed through its filter and counted inside
    // the scan loop, never handed to the general pipeline (added once a scan).
    CountKernelRowsPassed => "count kernel rows passed", 64;
    // Oracle's: the batches of an INSERT ... SELECT's helper thread that the session
    // received from it (one a batch of rows evaluated there).
    PxLocalMessagesRecvd => "PX local messages recv'd", 32;
    // Oracle's: work areas (a hash join's) by how they ran, and the temporary blocks
    // they wrote and read back.
    WorkareaExecutionsOptimal => "workarea executions - optimal", 64;
    WorkareaExecutionsOnepass => "workarea executions - onepass", 64;
    WorkareaExecutionsMultipass => "workarea executions - multipass", 64;
    PhysicalWritesDirectTemporary => "physical writes direct temporary tablespace", 8;
    PhysicalReadsDirectTemporary => "physical reads direct temporary tablespace", 8;
    // lioscope's own: the probe rows a hash join's join filter (a Bloom filter of its
    // build keys) checked in the probe side's scan, and those it dropped there.
    JoinFilterRowsChecked => "join filter rows checked", 64;
    JoinFilterRowsRemoved => "join filter rows removed", 64;
    // A query found parsed and planned in the session cursor cache (a soft parse), and
    // the queries the cache took in.
    SessionCursorCacheHits => "session cursor cache hits", 64;
    SessionCursorCacheCount => "session cursor cache count", 64;
}

impl Stat {
    /// Looks a statistic up by its Oracle name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Stat> {
        Stat::ALL.iter().copied().find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// Number of statistics.
    pub const COUNT: usize = Stat::ALL.len();
}

/// Declares the wait events with their classes.
macro_rules! wait_events {
    ($($variant:ident => $name:literal, $class:literal;)*) => {
        /// A wait event (`v$event_name`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum WaitEvent { $($variant),* }

        impl WaitEvent {
            pub const ALL: &'static [WaitEvent] = &[$(WaitEvent::$variant),*];

            pub fn name(self) -> &'static str {
                match self { $(WaitEvent::$variant => $name),* }
            }

            /// Oracle's wait class.
            pub fn class(self) -> &'static str {
                match self { $(WaitEvent::$variant => $class),* }
            }
        }
    };
}

wait_events! {
    DbFileSequentialRead => "db file sequential read", "User I/O";
    DbFileScatteredRead => "db file scattered read", "User I/O";
    ReadByOtherSession => "read by other session", "User I/O";
    FreeBufferWaits => "free buffer waits", "Configuration";
    LatchCacheBuffersChains => "latch: cache buffers chains", "Concurrency";
    BufferBusyWaits => "buffer busy waits", "Concurrency";
    DbFileParallelWrite => "db file parallel write", "System I/O";
    DirtyBufferWriteOnEviction => "dirty buffer write on eviction", "User I/O";
    ControlFileParallelWrite => "control file parallel write", "System I/O";
    EnqTxRowLockContention => "enq: TX - row lock contention", "Application";
    EnqHwContention => "enq: HW - contention", "Configuration";
    PxDeqTableQNormal => "PX Deq: Table Q Normal", "Idle";
    LogFileSync => "log file sync", "Commit";
    LogFileParallelWrite => "log file parallel write", "System I/O";
    LogFileSwitchCompletion => "log file switch completion", "Configuration";
    LogFileSwitchCheckpointIncomplete => "log file switch (checkpoint incomplete)", "Configuration";
    LogBufferSpace => "log buffer space", "Configuration";
    LatchRedoAllocation => "latch: redo allocation", "Other";
    DirectPathWriteTemp => "direct path write temp", "User I/O";
    DirectPathReadTemp => "direct path read temp", "User I/O";
}

impl WaitEvent {
    pub const COUNT: usize = WaitEvent::ALL.len();
}

/// The time model statistics (`v$sess_time_model`, `v$sys_time_model`), in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum TimeModel {
    DbTime,
    DbCpu,
    SqlExecuteElapsed,
    ParseTimeElapsed,
}

impl TimeModel {
    pub const ALL: &'static [TimeModel] =
        &[TimeModel::DbTime, TimeModel::DbCpu, TimeModel::SqlExecuteElapsed, TimeModel::ParseTimeElapsed];
    pub const COUNT: usize = TimeModel::ALL.len();

    pub fn name(self) -> &'static str {
        match self {
            TimeModel::DbTime => "DB time",
            TimeModel::DbCpu => "DB CPU",
            TimeModel::SqlExecuteElapsed => "sql execute elapsed time",
            TimeModel::ParseTimeElapsed => "parse time elapsed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let mut names: Vec<_> = Stat::ALL.iter().map(|s| s.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Stat::COUNT);
        assert_eq!(Stat::from_name("CONSISTENT GETS"), Some(Stat::ConsistentGets));
        for (i, s) in Stat::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i, "Stat::ALL is in declaration order");
        }
    }
}
