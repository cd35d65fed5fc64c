//! Population: background workers that cut marked tables into units and fill each unit's
//! IMCU from the table's blocks, read with consistent gets as of a population SCN.
//!
//! ```text
//!  ALTER TABLE … INMEMORY PRIORITY HIGH ─┐      a scan of a PRIORITY NONE table ─┐
//!                                        ▼                                       ▼
//!                          queue: Plan(table) ──► worker: cut new blocks into units
//!                                                         queue Populate(table, unit) …
//!  workers W000… (inmemory_max_populate_servers) take the highest priority first
//! ```
//!
//! Planning cuts the table's blocks, in full-scan order, into units of at most 64 MiB of
//! blocks and about `_inmemory_imcu_target_rows` rows, the rows counted in one block of
//! every sixteen the buffer cache holds (planning reads nothing from disk), and queues
//! each unit as it is cut.
//!
//! Populating a unit: start its building journal, take the population SCN, read its
//! blocks with multiblock reads, and for each block: note whether a transaction the SCN
//! does not see holds it ([`crate::txn::cr::changes_after`]: its rows will change, so the
//! block starts out journaled), take the block as of the SCN (CR clones where needed) and
//! gather every live row, following chained rows (`table fetch continued row`, and their
//! single-block reads wait as `db file sequential read`). Then the unit is encoded and
//! installed if it fits in `inmemory_size`; its journal becomes what changed since the
//! population began.
//!
//! Population sees the database through [`PopulationHost`], which the instance
//! implements.
//!
//! Where a unit's time goes is counted by phase, in microseconds of wall time on the
//! worker (`IM populate time ...` statistics, lioscope's own): reading blocks (the
//! multiblock reads and consistent gets, timed a read call and a block at a time),
//! decoding rows (walking a block's rows into the gather buffers), following chained
//! rows (finding and reading a chained or migrated row's pieces, timed a row at a time),
//! building dictionaries (hashing keys and finding the distinct ones) and compressing
//! (storing the codes at the unit's packing), both timed a column at a time by
//! [`super::cu::take_build_phases`], and encoding (the rest of building the unit).
//!
//! Each worker is a session (`v$session` type `W000`, `W001`, …) with its own statistics
//! and waits (active while it works on a task, flagged IN_INMEMORY_POPULATE, or
//! IN_INMEMORY_REPOPULATE for a unit that had an IMCU, for Active Session History), and
//! its own performance counters, opened on its first unit: each unit's
//! counts go into the store's sum before the unit is installed, so a POPULATE_WAIT that
//! sees the unit populated also sees its counts ([`population_counts`]). Workers hold
//! the database only weakly while idle, so closing it is never held up by them; dropping
//! the database stops and joins them.
//!
//! A worker gathers unit after unit into the same buffers ([`GatherBuffers`]), freed
//! after two seconds without work, and writes each unit's large arrays into the In-Memory Area
//! ([`super::area`]), whose pages outlive the units: fresh memory costs a page fault
//! every 4 KiB, and on a virtual machine whose host has taken back the guest's free
//! memory each of those faults also waits for the host to back the page (measured on
//! this project's VM: about 4 s a GiB touched, against 0.6 s for memory the host still
//! backs).

use super::host::PopulationHost;
use super::imcu::{GatherBuffers, ImcuBuilder, packing};
use super::store::{ImSegment, InMemoryStore, Shared, Task, UnitSlot};
use crate::access::AccessContext;
use crate::catalog::Priority;
use crate::error::Result;
use crate::stats::activity::flags;
use crate::stats::hwcounters::{Reading, ThreadCounters};
use crate::stats::{SessionInfo, Stat};
use crate::storage::block::DataBlock;
use crate::storage::row::ColumnSpan;
use crate::storage::segment::ExtentRun;
use crate::types::encoding::PayloadKind;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Bytes of the table's blocks one unit covers at most: 8,192 blocks of 8 KiB, about
/// 420,000 rows of the customers table.
pub const UNIT_BYTES: usize = 64 << 20;

/// How long an idle worker keeps its gather buffers for the next unit: the units of
/// one population, and repopulations queued one by one as DML journals changes, then
/// gather into memory already touched instead of faulting in tens of MiB again.
const KEEP_GATHER_BUFFERS: Duration = Duration::from_secs(2);

/// At open: maps the In-Memory Area, and queues the planning of every table marked with
/// a priority other than NONE, when the column store is on. An area this machine
/// refuses (see [`super::area::InMemoryArea::new`]) is reported on stderr, and the units
/// are then built on the heap: the database still opens. (ALTER SYSTEM refuses such a
/// size before it is set.)
pub fn on_open(host: &dyn PopulationHost) {
    let settings = host.settings();
    let store = host.store();
    if let Err(e) = store.size_area(settings.inmemory_size, settings.pre_page_sga) {
        eprintln!("lioscope: no In-Memory Area, column units go on the heap: {e}");
    }
    if settings.inmemory_size == 0 {
        return;
    }
    store.retry_out_of_memory();
    let mut any = false;
    for table in host.catalog().tables() {
        if table.inmemory.as_ref().is_some_and(|s| s.priority > Priority::None)
            && let Some(segment) = store.segment_for(&table)
        {
            store.queue_plan(&segment);
            any = true;
        }
    }
    if any {
        ensure_workers(host);
    }
}

/// Starts workers up to `inmemory_max_populate_servers` (they end by themselves when
/// the parameter is lowered).
pub fn ensure_workers(host: &dyn PopulationHost) {
    let wanted = host.settings().max_populate_servers;
    let mut workers = host.store().workers.lock();
    workers.retain(|(handle, _)| !handle.is_finished());
    for index in workers.len()..wanted {
        let (weak, shared) = (host.weak(), host.store().shared.clone());
        let spawned =
            std::thread::Builder::new().name(format!("lioscope-w{index:03}")).spawn(move || work(weak, shared, index));
        // A worker that cannot start leaves population to the others (or to none).
        if let Ok(handle) = spawned {
            let id = handle.thread().id();
            workers.push((handle, id));
        }
    }
}

/// Stops the workers and waits for them (unless called on one of them).
pub fn stop_workers(store: &InMemoryStore) {
    store.shared.stop.store(true, Ordering::Release);
    store.shared.work.notify_all();
    let me = std::thread::current().id();
    for (handle, id) in store.workers.lock().drain(..) {
        if id != me {
            let _ = handle.join();
        }
    }
}

/// A worker's life: wait for a task, do it with the database (if it is still open).
fn work(host: Weak<dyn PopulationHost>, shared: Arc<Shared>, index: usize) {
    let name: &'static str = Box::leak(format!("W{index:03}").into_boxed_str());
    let mut session: Option<Arc<SessionInfo>> = None;
    // Kept from unit to unit, and for KEEP_GATHER_BUFFERS after the last one.
    let mut buffers = GatherBuffers::default();
    loop {
        let task = {
            let mut queue = shared.queue.lock();
            let mut idle_since = None;
            loop {
                if shared.stop.load(Ordering::Acquire) {
                    break None;
                }
                if let Some(task) = queue.pop() {
                    break Some(task);
                }
                if !buffers.is_empty() {
                    let since = *idle_since.get_or_insert_with(std::time::Instant::now);
                    let left = KEEP_GATHER_BUFFERS.saturating_sub(since.elapsed());
                    if left.is_zero() {
                        let idle = std::mem::take(&mut buffers);
                        parking_lot::MutexGuard::unlocked(&mut queue, || drop(idle));
                    } else {
                        shared.work.wait_for(&mut queue, left);
                    }
                    continue;
                }
                if shared.work.wait_for(&mut queue, Duration::from_millis(500)).timed_out() && host.strong_count() == 0
                {
                    break None;
                }
            }
        };
        let Some(task) = task else { break };
        let Some(db) = host.upgrade() else { break };
        let db = db.as_ref();
        let over = db.settings().max_populate_servers <= index;
        let info = session.get_or_insert_with(|| db.sessions().register(name)).clone();
        if !over {
            info.active.store(true, Ordering::Relaxed);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(db, &info, task, &mut buffers)));
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(_)) if shared.stop.load(Ordering::Acquire) => {}
                Ok(Err(e)) => eprintln!("lioscope: in-memory population ({task:?}) by {name}: {e}"),
                Err(_) => eprintln!("lioscope: in-memory population ({task:?}) by {name} panicked"),
            }
            info.active.store(false, Ordering::Relaxed);
            info.reading_since.store(0, Ordering::Release);
        } else {
            // Lowered below this worker: hand the task back to the others.
            let priority = task_priority(db.store(), task);
            db.store().queue(task, priority);
        }
        db.store().task_done();
        if over {
            break;
        }
    }
    if let (Some(info), Some(db)) = (session, host.upgrade()) {
        db.sessions().unregister(info.sid);
    }
}

fn task_priority(store: &InMemoryStore, task: Task) -> Priority {
    let (Task::Plan { object_id } | Task::Populate { object_id, .. }) = task;
    store.segment(object_id).map_or(Priority::None, |s| s.spec.priority)
}

fn run(db: &dyn PopulationHost, info: &SessionInfo, task: Task, buffers: &mut GatherBuffers) -> Result<()> {
    match task {
        Task::Plan { object_id } => {
            let Some(segment) = db.store().segment(object_id) else { return Ok(()) };
            let result = plan(db, info, &segment);
            db.store().planned(&segment);
            result
        }
        Task::Populate { object_id, unit } => populate(db, info, object_id, unit as usize, buffers),
    }
}

/// Cuts the blocks the segment's units do not cover yet into units of at most
/// [`UNIT_BYTES`] of blocks and about `_inmemory_imcu_target_rows` rows (a unit ends after
/// the block that brings it there: units of short rows are then no larger than units of
/// long ones, about half a million rows as Oracle's IMCUs), and queues the population of
/// every unit without an IMCU.
fn plan(db: &dyn PopulationHost, info: &SessionInfo, segment: &super::store::ImSegment) -> Result<()> {
    let _populating = info.stats.activity().enter(flags::IN_INMEMORY_POPULATE, 0);
    let ctx = db.worker_context(&info.stats, db.current_scn());
    let map = crate::access::segments::read_map(&ctx, &segment.table)?;
    let blocks: Vec<u32> =
        map.scan_runs(ctx.space.extent_blocks).iter().flat_map(|r| r.first..r.first + r.blocks).collect();
    segment.segment_blocks.store(blocks.len() as u64, Ordering::Release);
    let per_unit = (UNIT_BYTES / ctx.space.block_size).max(1);
    let unit_rows_target = db.settings().imcu_target_rows;
    let mut rows = RowCount::default();
    let mut position = segment.planned_positions() as usize;
    // Units planned before (one may have failed, or found no room) first; each new unit is
    // queued as soon as it is cut, so other workers start while planning goes on.
    queue_unpopulated(db.store(), segment, 0..segment.units.read().len());
    while position < blocks.len() {
        let (mut end, mut unit_rows) = (position, 0);
        while end < blocks.len() && end - position < per_unit && unit_rows < unit_rows_target {
            unit_rows += rows.of_block(&ctx, &segment.table, end, blocks[end]);
            end += 1;
        }
        let unit = segment.add_unit(position as u32, blocks[position..end].to_vec());
        queue_unpopulated(db.store(), segment, unit..unit + 1);
        position = end;
    }
    Ok(())
}

/// Queues the population of each unit in `units` that has no IMCU and none queued.
fn queue_unpopulated(store: &InMemoryStore, segment: &ImSegment, units: std::ops::Range<usize>) {
    let slots: Vec<_> = segment.units.read()[units.clone()].to_vec();
    for (i, unit) in units.zip(slots) {
        let mut state = unit.state.lock();
        if state.imcu.is_none() && !state.queued && !state.out_of_memory {
            state.queued = true;
            drop(state);
            store.queue(Task::Populate { object_id: segment.table.object_id, unit: i as u32 }, segment.spec.priority);
        }
    }
}

/// Planning counts the rows of one block in this many (the first of each run of this
/// many in scan order, and the first it plans); the others count as the last block
/// counted.
const ROW_COUNT_SAMPLE: usize = 16;

/// The rows of a table's blocks as planning counts them, to cut units by rows. The rows
/// of one block in [`ROW_COUNT_SAMPLE`] are counted: the visible heads in its row
/// directory, if the cache holds it (one consistent get, no CR: a count to cut by, not a
/// result); a block not cached counts as the mean of those counted so far (0 before any),
/// so that planning never reads the table from disk. Every other block counts as the
/// last block counted: units are cut within a few blocks of their target, at a sixteenth
/// of the cost of reading every block (planning a 50 M-row table reads 61,000 blocks,
/// not 980,000).
#[derive(Debug, Default)]
struct RowCount {
    rows: u64,
    blocks: u64,
    /// What the last block counted counts as (none before the first).
    last: Option<u64>,
}

impl RowCount {
    /// The rows of the block at scan position `position`, address `rdba`.
    fn of_block(
        &mut self,
        ctx: &AccessContext<'_>,
        table: &crate::catalog::TableDef,
        position: usize,
        rdba: u32,
    ) -> u64 {
        if let Some(last) = self.last
            && !position.is_multiple_of(ROW_COUNT_SAMPLE)
        {
            return last;
        }
        let Some(block) = ctx.cache.consistent_get_if_cached(ctx.stats, rdba) else {
            let mean = self.rows.checked_div(self.blocks).unwrap_or(0);
            self.last = Some(mean);
            return mean;
        };
        let data = DataBlock(&block);
        // A block that is not a sound block of the table counts no row (population reports it).
        let heads = if ctx.check_table_block(table, rdba, &block).is_ok() {
            (0..data.row_count())
                .filter_map(|slot| data.piece_bytes(slot))
                .filter(|piece| piece.len() >= 2 && crate::storage::row::is_visible_head(piece[0], piece[1]))
                .count() as u64
        } else {
            0
        };
        self.rows += heads;
        self.blocks += 1;
        self.last = Some(heads);
        heads
    }
}

/// Populates (or repopulates) unit `index` of table `object_id`. A population that fails
/// leaves the unit as it was (and free to be queued again).
fn populate(
    db: &dyn PopulationHost,
    info: &SessionInfo,
    object_id: u32,
    index: usize,
    buffers: &mut GatherBuffers,
) -> Result<()> {
    let Some(segment) = db.store().segment(object_id) else { return Ok(()) };
    let Some(unit) = segment.units.read().get(index).cloned() else { return Ok(()) };
    let result = populate_unit(db, info, &segment, &unit, buffers);
    let mut state = unit.state.lock();
    state.queued = false;
    if result.is_err() {
        state.building = None;
    }
    result
}

fn populate_unit(
    db: &dyn PopulationHost,
    info: &SessionInfo,
    segment: &ImSegment,
    unit: &UnitSlot,
    buffers: &mut GatherBuffers,
) -> Result<()> {
    let store = db.store();
    let repopulating = unit.state.lock().imcu.is_some();
    let phase = if repopulating { flags::IN_INMEMORY_REPOPULATE } else { flags::IN_INMEMORY_POPULATE };
    let _populating = info.stats.activity().enter(phase, 0);
    // Opens the worker's counters on its first unit (and credits what it did between units).
    credit_counters(store);
    let cpu_started = crate::stats::osstat::thread_cpu_time_ns();
    let table = &segment.table;
    // DML now journals into the new unit too; the SCN is taken after that, so every
    // change it does not see is journaled.
    store.begin_population(unit);
    let scn = db.current_scn();
    info.reading_since.store(scn.max(1), Ordering::Release);
    let ctx = db.worker_context(&info.stats, scn);
    let locks = ctx.locks.table(table.object_id);
    let _visible = locks.visibility.read_recursive();
    let mut builder = ImcuBuilder::new(table, &segment.spec.excluded, unit.blocks.len(), buffers);
    let reads = builder.reads();
    let width = reads.iter().rposition(|&r| r).map_or(0, |last| last + 1);
    let kinds: Vec<PayloadKind> = table.columns[..width].iter().map(|c| PayloadKind::from(c.data_type)).collect();
    let mut spans = vec![ColumnSpan::NULL; width];
    let mut scratch = Vec::new();
    let mut stale = BTreeSet::new();
    let max_read = ctx.multiblock_read_count.clamp(1, (ctx.cache.buffer_count() / 4).max(1) as u32);
    let mut block_index = 0u32;
    // Where the unit's time goes: reading blocks (multiblock reads, consistent gets) and
    // decoding their rows, timed a block at a time, and following chained rows' pieces
    // (inside decoding; taken out of it below), timed a chained row at a time.
    let mut phases = Phases::default();
    for ExtentRun { first, blocks: count } in ExtentRun::adjacent(&unit.blocks) {
        let mut at = first;
        while at < first + count {
            if store.shared.stop.load(Ordering::Acquire) {
                return Err(crate::error::Error::Transaction {
                    message: "population stopped: the database is closing".into(),
                });
            }
            let n = max_read.min(first + count - at);
            let read_started = std::time::Instant::now();
            let mut run = ctx.cache.pin_multiblock(ctx.stats, at, n)?;
            phases.read += read_started.elapsed();
            at = run.end();
            while let Some(current) = run.next_block(ctx.stats).transpose()? {
                let read_started = std::time::Instant::now();
                let rdba = current.rdba();
                let block = crate::txn::cr::consistent_get_pinned(&ctx, current, |b| {
                    ctx.check_table_block(table, rdba, b)?;
                    if crate::txn::cr::changes_after(&ctx, b, scn)? {
                        stale.insert(block_index);
                    }
                    Ok(())
                })?;
                let decode_started = std::time::Instant::now();
                phases.read += decode_started - read_started;
                // The piece block of the last chained row, kept for the next one's pieces
                // while this block's rows are read; let go before the next block.
                let mut piece_block = None;
                for slot in 0..DataBlock(&block).row_count() {
                    let row = crate::access::row_at::whole_row_keeping(
                        &ctx,
                        &block,
                        rdba,
                        slot,
                        &kinds,
                        &mut spans,
                        &mut scratch,
                        &mut piece_block,
                        Some(&mut phases.chained),
                    )?;
                    if let Some(row) = row {
                        builder.row(rdba, |i| row.column_payload(i))?;
                    }
                }
                drop(piece_block);
                builder.end_block();
                phases.decode += decode_started.elapsed();
                block_index += 1;
            }
        }
    }
    if let Some((block, column)) = builder.invalid_text() {
        let rdba = unit.blocks[block];
        return Err(crate::access::row_view::column_corrupt(rdba, column, "string column is not valid UTF-8"));
    }
    let rows = builder.rows();
    let build_started = std::time::Instant::now();
    super::cu::take_build_phases();
    let imcu = builder.build(scn, packing(segment.spec.compression), store.area().as_ref(), buffers);
    let build = build_started.elapsed();
    let limit = db.settings().inmemory_size;
    credit_counters(store);
    let installed = store.install(segment, unit, imcu, stale, limit);
    let stats = ctx.stats;
    if installed {
        stats.add(if repopulating { Stat::ImRepopulateCus } else { Stat::ImPopulateCus }, 1);
        stats.add(Stat::ImPopulateRows, rows as u64);
    }
    stats.add(Stat::ImPopulateBytesFromStorage, (unit.blocks.len() * ctx.space.block_size) as u64);
    let built = super::cu::take_build_phases();
    let us = |d: std::time::Duration| d.as_micros() as u64;
    stats.add(Stat::ImPopulateReadTime, us(phases.read));
    stats.add(Stat::ImPopulateDecodeTime, us(phases.decode.saturating_sub(phases.chained)));
    stats.add(Stat::ImPopulateChainedTime, us(phases.chained));
    stats.add(Stat::ImPopulateDictionaryTime, us(built.dictionary));
    stats.add(Stat::ImPopulateEncodeTime, us(build.saturating_sub(built.dictionary + built.compressing)));
    stats.add(Stat::ImPopulateCompressTime, us(built.compressing));
    let cpu_us = crate::stats::osstat::thread_cpu_time_ns().saturating_sub(cpu_started) / 1000;
    stats.add_time_and_centiseconds(crate::stats::TimeModel::DbCpu, Stat::ImPopulateCpuTime, cpu_us);
    Ok(())
}

/// Where one unit's population spent its time, before the unit is built.
#[derive(Debug, Default)]
struct Phases {
    /// Multiblock reads and consistent gets (CR clones included).
    read: std::time::Duration,
    /// Walking each block's rows into the gather buffers, chained pieces followed.
    decode: std::time::Duration,
    /// The part of `decode` spent assembling chained and migrated rows: finding and
    /// reading their pieces (`table fetch continued row`, single-block reads).
    chained: std::time::Duration,
}

thread_local! {
    /// A worker's performance counters, and their reading when last credited.
    static WORKER_COUNTERS: std::cell::RefCell<Option<(ThreadCounters, Reading)>> = const { std::cell::RefCell::new(None) };
}

/// Adds what this worker's counters counted since it last did to the store's sum, opening
/// them on the first call.
fn credit_counters(store: &InMemoryStore) {
    WORKER_COUNTERS.with_borrow_mut(|counters| {
        let (thread, last) = counters.get_or_insert_with(|| {
            let thread = ThreadCounters::open();
            let opened = thread.read();
            (thread, opened)
        });
        let now = thread.read();
        store.population_counts.lock().add(&now.since(last));
        *last = now;
    });
}

/// What the population workers' counters counted in all, over the units they built.
pub fn population_counts(store: &InMemoryStore) -> Reading {
    store.population_counts.lock().clone()
}

/// What POPULATE_WAIT found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Every segment at or above the priority is populated to the percentage.
    Populated,
    /// The timeout passed first.
    Timeout,
    /// A unit found no room in `inmemory_size`.
    OutOfMemory,
    /// No segment at or above the priority.
    NoSegments,
    /// `inmemory_size` is 0: the column store is off.
    Inactive,
}

impl WaitOutcome {
    /// Oracle's return code of DBMS_INMEMORY_ADMIN.POPULATE_WAIT.
    pub fn code(self) -> i64 {
        match self {
            WaitOutcome::Timeout => -1,
            WaitOutcome::Populated => 0,
            WaitOutcome::OutOfMemory => 1,
            WaitOutcome::NoSegments => 2,
            WaitOutcome::Inactive => 3,
        }
    }

    pub fn meaning(self) -> &'static str {
        match self {
            WaitOutcome::Timeout => "POPULATE_TIMEOUT",
            WaitOutcome::Populated => "POPULATE_SUCCESS",
            WaitOutcome::OutOfMemory => "POPULATE_OUT_OF_MEMORY",
            WaitOutcome::NoSegments => "POPULATE_NO_INMEMORY_OBJECTS",
            WaitOutcome::Inactive => "POPULATE_INACTIVE",
        }
    }
}

/// Waits until every marked table at `priority` or above is populated to `percentage`
/// of its blocks, or `timeout` passes. Queues the planning of those tables first (a
/// table of PRIORITY NONE is populated too when NONE is asked for). A table's size is
/// read from its segment header (`ctx`, one consistent get) on every look, so a table
/// that grew is waited for; repopulation queued by ongoing changes is not (the units it
/// will replace are populated).
pub fn populate_wait(
    db: &dyn PopulationHost,
    ctx: &AccessContext<'_>,
    priority: Priority,
    percentage: f64,
    timeout: Duration,
) -> Result<WaitOutcome> {
    if db.settings().inmemory_size == 0 {
        return Ok(WaitOutcome::Inactive);
    }
    let store = db.store();
    let tables: Vec<_> = db
        .catalog()
        .tables()
        .into_iter()
        .filter(|t| t.inmemory.as_ref().is_some_and(|s| s.priority >= priority))
        .collect();
    if tables.is_empty() {
        return Ok(WaitOutcome::NoSegments);
    }
    ensure_workers(db);
    let segments: Vec<_> = tables.iter().filter_map(|t| store.segment_for(t)).collect();
    for s in &segments {
        store.queue_plan(s);
    }
    let deadline = std::time::Instant::now() + timeout;
    let shared = store.shared.clone();
    loop {
        let mut populated = true;
        for s in &segments {
            let total = u64::from(crate::access::segments::read_map(ctx, &s.table)?.hwm.saturating_sub(1));
            if u64::from(s.planned_positions()) < total {
                store.queue_plan(s);
                populated = false;
                continue;
            }
            let sum = s.summary();
            populated &= if percentage >= 100.0 {
                // As v$im_segments says COMPLETED: not while a unit's population is still
                // ending (its IMCU installed, its worker not yet done with it).
                sum.completed(total, u64::from(s.planned_positions()))
            } else {
                total == 0 || sum.blocks as f64 * 100.0 >= percentage * total as f64
            };
        }
        if populated {
            return Ok(WaitOutcome::Populated);
        }
        let mut queue = shared.queue.lock();
        if queue.is_idle() {
            if segments.iter().any(|s| s.summary().out_of_memory) {
                return Ok(WaitOutcome::OutOfMemory);
            }
            // Nothing queued, yet not populated (a population failed): plan again.
            drop(queue);
            segments.iter().for_each(|s| store.queue_plan(s));
            queue = shared.queue.lock();
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return Ok(WaitOutcome::Timeout);
        }
        shared.progress.wait_for(&mut queue, (deadline - now).min(Duration::from_millis(100)));
    }
}
