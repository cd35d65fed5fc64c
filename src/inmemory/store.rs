//! The column store's bookkeeping: which tables have a segment in it, the units each
//! segment is cut into, what each unit holds (its IMCU, if populated) and which of its
//! blocks changed since (the journal), the memory the units take against
//! `inmemory_size`, the In-Memory Area their large arrays live in, and the queue of
//! population work.
//!
//! ```text
//!  InMemoryStore ─ segments: object id → ImSegment
//!                                         ├ units: [UnitSlot 0][UnitSlot 1]…   in scan order
//!                                         │          ├ positions [first, first + blocks)
//!                                         │          └ state: IMCU?, journal, building journal
//!                                         └ by_rdba: block address → (unit, block in unit)
//! ```
//!
//! The store observes row changes: it is the `txn::RowObserver` every statement's context
//! tells of a changed table block, which it journals and, once a unit has collected
//! enough changes, queues for repopulation. It cannot start population workers itself (a
//! worker works with the whole instance): the instance registers what starts them
//! ([`InMemoryStore::register_worker_starter`]).
//!
//! Invariants:
//! - A unit covers a fixed run of the segment's blocks in full-scan order, decided when
//!   the segment is planned (`positions` never change; a grown table gets new units).
//! - Every change to a row in a block a unit covers is journaled while the change still
//!   holds the block exclusively ([`InMemoryStore::journal_block`]): into the unit's
//!   journal, and into the journal of a population in progress, which reads each block
//!   under its shared lock. A scan takes a journaled block's rows from the buffer cache,
//!   never from the IMCU.
//! - An IMCU is used only by a snapshot at or after its population SCN; its rows are then
//!   the rows of every block not journaled, as that snapshot sees them.
//! - `used` is the sum of the bytes of installed IMCUs; a unit is installed only while
//!   that stays within `inmemory_size`.
//! - `area` is the In-Memory Area of the current `inmemory_size` (none while it is 0); an
//!   area it replaces is retired (see [`super::area`]) and lives on only in the units
//!   populated in it.
//! - `population_counts`, the population workers' performance counters summed, holds a
//!   unit's counts before the unit is installed (see [`super::populate`]).

use super::area::{AreaFigures, InMemoryArea};
use super::imcu::Imcu;
use crate::catalog::{InMemorySpec, Priority, TableDef};
use parking_lot::{Condvar, Mutex, RwLock};
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Changes a unit has seen since its IMCU's population began.
#[derive(Debug, Default, Clone)]
pub struct Journal {
    /// Blocks (by their index in the unit) whose rows changed.
    pub blocks: BTreeSet<u32>,
    /// Row changes recorded (a whole-block mark counts one).
    pub changes: u64,
}

impl Journal {
    fn record(&mut self, block: u32) {
        self.blocks.insert(block);
        self.changes += 1;
    }
}

/// What a unit holds now.
#[derive(Debug, Default)]
pub struct UnitState {
    pub imcu: Option<Arc<Imcu>>,
    /// Changes since `imcu`'s population began.
    pub journal: Journal,
    /// Changes since the population in progress began, if one is.
    pub building: Option<Journal>,
    /// A population task for the unit is queued or running.
    pub queued: bool,
    /// The last population found no room in `inmemory_size`.
    pub out_of_memory: bool,
}

/// One unit of a segment: a run of its blocks in scan order.
#[derive(Debug)]
pub struct UnitSlot {
    /// Scan position of the unit's first block.
    pub first_position: u32,
    /// The blocks, by address, in scan order.
    pub blocks: Vec<u32>,
    pub state: Mutex<UnitState>,
}

/// A table in the column store.
#[derive(Debug)]
pub struct ImSegment {
    /// The table's definition when it was marked (columns, INMEMORY attributes).
    pub table: Arc<TableDef>,
    pub spec: InMemorySpec,
    pub units: RwLock<Vec<Arc<UnitSlot>>>,
    by_rdba: RwLock<HashMap<u32, (u32, u32)>>,
    /// Blocks below the high-water mark when the segment was last planned.
    pub segment_blocks: AtomicU64,
    /// A planning task is queued or running.
    planning: AtomicBool,
    /// The segment left the store (its memory was given back): nothing more is installed.
    dropped: AtomicBool,
}

impl ImSegment {
    fn new(table: Arc<TableDef>, spec: InMemorySpec) -> ImSegment {
        ImSegment {
            table,
            spec,
            units: RwLock::new(Vec::new()),
            by_rdba: RwLock::new(HashMap::new()),
            segment_blocks: AtomicU64::new(0),
            planning: AtomicBool::new(false),
            dropped: AtomicBool::new(false),
        }
    }

    /// Scan positions the units cover, from 0.
    pub fn planned_positions(&self) -> u32 {
        self.units.read().last().map_or(0, |u| u.first_position + u.blocks.len() as u32)
    }

    /// Adds a unit for the blocks `blocks` (scan positions from `first_position`, which
    /// must be where the planned units end).
    pub fn add_unit(&self, first_position: u32, blocks: Vec<u32>) -> usize {
        let mut units = self.units.write();
        debug_assert_eq!(first_position, units.last().map_or(0, |u| u.first_position + u.blocks.len() as u32));
        let index = units.len();
        {
            let mut by_rdba = self.by_rdba.write();
            for (i, &rdba) in blocks.iter().enumerate() {
                by_rdba.insert(rdba, (index as u32, i as u32));
            }
        }
        units.push(Arc::new(UnitSlot { first_position, blocks, state: Mutex::new(UnitState::default()) }));
        index
    }

    /// The unit (its index and slot) and block index of block `rdba`, if a unit covers
    /// it. Takes the segment's locks and lets them go before returning: a caller may then
    /// lock the unit's state (the order is always `units`, then a unit's state).
    pub fn locate(&self, rdba: u32) -> Option<(u32, Arc<UnitSlot>, u32)> {
        let (unit, block) = *self.by_rdba.read().get(&rdba)?;
        Some((unit, self.units.read()[unit as usize].clone(), block))
    }

    /// What the units hold now, looked at unit by unit.
    pub fn summary(&self) -> SegmentSummary {
        let mut sum = SegmentSummary::default();
        for unit in self.units.read().iter() {
            let state = unit.state.lock();
            if let Some(imcu) = &state.imcu {
                sum.bytes += imcu.bytes as u64;
                sum.rows += imcu.rows as u64;
                sum.blocks += unit.blocks.len() as u64;
                sum.units += 1;
            }
            sum.journaled_blocks += state.journal.blocks.len() as u64;
            sum.busy |= state.queued;
            sum.out_of_memory |= state.out_of_memory;
        }
        sum
    }
}

impl SegmentSummary {
    /// Whether the segment is fully populated (`v$im_segments` says COMPLETED, and
    /// POPULATE_WAIT at 100% returns): units planned for all `blocks` blocks below the
    /// high-water mark, every one populated, none queued or being populated (a unit's
    /// population ends after its IMCU is installed).
    pub fn completed(&self, blocks: u64, planned_positions: u64) -> bool {
        !self.busy && self.blocks >= blocks && planned_positions >= blocks
    }
}

/// A segment's units at one moment ([`ImSegment::summary`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct SegmentSummary {
    /// Bytes, rows and blocks of the populated units, and how many there are.
    pub bytes: u64,
    pub rows: u64,
    pub blocks: u64,
    pub units: u64,
    /// Blocks the units' journals send to the buffer cache.
    pub journaled_blocks: u64,
    /// A population of some unit is queued or running.
    pub busy: bool,
    /// Some unit found no room in the last population.
    pub out_of_memory: bool,
}

/// Work for the population workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Task {
    /// Cut the segment's unplanned blocks into units and queue their population.
    Plan { object_id: u32 },
    /// Populate (or repopulate) one unit.
    Populate { object_id: u32, unit: u32 },
}

/// The queue: highest priority first, then first come.
#[derive(Debug, Default)]
pub struct TaskQueue {
    heap: BinaryHeap<(Priority, std::cmp::Reverse<u64>, Task)>,
    next: u64,
    /// Tasks taken by a worker and not finished.
    pub running: usize,
}

impl TaskQueue {
    pub fn pop(&mut self) -> Option<Task> {
        let (_, _, task) = self.heap.pop()?;
        self.running += 1;
        Some(task)
    }

    pub fn is_idle(&self) -> bool {
        self.heap.is_empty() && self.running == 0
    }
}

/// What the workers share with the store; outlives the database (a worker holds it while
/// it waits, and the database only weakly).
#[derive(Debug, Default)]
pub struct Shared {
    pub queue: Mutex<TaskQueue>,
    /// Wakes workers when work is queued or they must stop.
    pub work: Condvar,
    /// Wakes POPULATE_WAIT when a task ends.
    pub progress: Condvar,
    pub stop: AtomicBool,
}

/// The column store of one database.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    segments: RwLock<HashMap<u32, Arc<ImSegment>>>,
    /// Whether any segment exists: DML skips the journal lookup when not.
    any: AtomicBool,
    /// Bytes of the installed IMCUs.
    used: AtomicU64,
    /// The In-Memory Area of the current `inmemory_size` (none while it is 0).
    area: Mutex<Option<InMemoryArea>>,
    pub shared: Arc<Shared>,
    pub(super) workers: Mutex<Vec<(std::thread::JoinHandle<()>, std::thread::ThreadId)>>,
    /// The population workers' performance counters, summed over every unit they built
    /// (each unit's counts are added before the unit is installed).
    pub(super) population_counts: Mutex<crate::stats::hwcounters::Reading>,
    /// Starts the population workers when too few run: registered by the database at
    /// open (a worker works with the whole database, which the store does not hold).
    starter: std::sync::OnceLock<WorkerStarter>,
}

/// What starts the population workers (see [`InMemoryStore::register_worker_starter`]).
pub struct WorkerStarter(Box<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for WorkerStarter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WorkerStarter")
    }
}

/// The column store's journal observes every change to the rows of a table block: the
/// block is journaled in the unit covering it (see [`InMemoryStore::journal_block`]), and
/// the unit's repopulation is queued once it has collected enough changes. Costs one
/// atomic load when the column store is empty.
impl crate::txn::RowObserver for InMemoryStore {
    fn rows_changed(&self, object_id: u32, rdba: u32) {
        if let Some((unit, _)) = self.journal_block(object_id, rdba) {
            let priority = self.segment(object_id).map_or(Priority::None, |s| s.spec.priority);
            self.queue(Task::Populate { object_id, unit }, priority);
            self.start_workers();
        }
    }
}

impl InMemoryStore {
    /// Registers what starts the population workers when a journaled change queues a
    /// repopulation (the first registration holds).
    pub fn register_worker_starter(&self, start: impl Fn() + Send + Sync + 'static) {
        let _ = self.starter.set(WorkerStarter(Box::new(start)));
    }

    /// Starts population workers up to `inmemory_max_populate_servers`, through what the
    /// database registered (nothing before it did).
    pub fn start_workers(&self) {
        if let Some(starter) = self.starter.get() {
            (starter.0)();
        }
    }

    /// Makes the In-Memory Area `bytes` large (none for 0), pre-paged when `pre_page`
    /// is set; nothing changes when it already is that size, or when the new area is
    /// refused (see [`InMemoryArea::new`]). Units populated in the area it replaces keep
    /// that memory until they are dropped.
    pub fn size_area(&self, bytes: u64, pre_page: bool) -> crate::Result<()> {
        let mut area = self.area.lock();
        let wanted = (bytes > 0).then(|| InMemoryArea::whole_extents(bytes));
        if area.as_ref().map(InMemoryArea::size) != wanted {
            let new = if bytes > 0 { Some(InMemoryArea::new(bytes, pre_page)?) } else { None };
            if let Some(old) = std::mem::replace(&mut *area, new) {
                old.retire();
            }
        }
        Ok(())
    }

    /// The In-Memory Area population builds units in, if the column store is on.
    pub fn area(&self) -> Option<InMemoryArea> {
        self.area.lock().clone()
    }

    /// The area's figures for `v$inmemory_area`.
    pub fn area_figures(&self) -> Option<AreaFigures> {
        self.area.lock().as_ref().map(InMemoryArea::figures)
    }

    /// The segment of table `object_id`, if it has one.
    pub fn segment(&self, object_id: u32) -> Option<Arc<ImSegment>> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        self.segments.read().get(&object_id).cloned()
    }

    pub fn segments(&self) -> Vec<Arc<ImSegment>> {
        self.segments.read().values().cloned().collect()
    }

    /// The segment of `table` (marked INMEMORY), created empty if it has none or if its
    /// attributes changed since.
    pub fn segment_for(&self, table: &Arc<TableDef>) -> Option<Arc<ImSegment>> {
        let spec = table.inmemory.as_ref()?;
        let serves = |s: &ImSegment| &s.spec == spec && s.table.columns == table.columns;
        if let Some(s) = self.segment(table.object_id).filter(|s| serves(s)) {
            return Some(s);
        }
        let mut segments = self.segments.write();
        let slot =
            segments.entry(table.object_id).or_insert_with(|| Arc::new(ImSegment::new(table.clone(), spec.clone())));
        if !serves(slot) {
            self.release(slot);
            *slot = Arc::new(ImSegment::new(table.clone(), spec.clone()));
        }
        self.any.store(true, Ordering::Release);
        Some(slot.clone())
    }

    /// Takes table `object_id` out of the column store (NO INMEMORY, TRUNCATE, DROP),
    /// giving its memory back: units of other tables that did not fit may fit now.
    pub fn drop_segment(&self, object_id: u32) {
        let mut segments = self.segments.write();
        if let Some(s) = segments.remove(&object_id) {
            self.release(&s);
        }
        self.any.store(!segments.is_empty(), Ordering::Release);
        drop(segments);
        self.retry_out_of_memory();
    }

    /// Lets the units that found no room be populated again (by the next planning of
    /// their segment): memory was given back or `inmemory_size` raised.
    pub fn retry_out_of_memory(&self) {
        for segment in self.segments() {
            for unit in segment.units.read().iter() {
                unit.state.lock().out_of_memory = false;
            }
        }
    }

    fn release(&self, segment: &ImSegment) {
        segment.dropped.store(true, Ordering::Release);
        for unit in segment.units.read().iter() {
            if let Some(imcu) = unit.state.lock().imcu.take() {
                self.used.fetch_sub(imcu.bytes as u64, Ordering::AcqRel);
            }
        }
    }

    /// Records that the rows of block `rdba` of table `object_id` changed (the caller
    /// still holds the block exclusively): a scan takes them from the buffer cache from now
    /// on. Returns the journal's
    /// size when the unit has collected enough changes to be worth repopulating.
    pub fn journal_block(&self, object_id: u32, rdba: u32) -> Option<(u32, u64)> {
        let segment = self.segment(object_id)?;
        let (index, unit, block) = segment.locate(rdba)?;
        let mut state = unit.state.lock();
        state.journal.record(block);
        if let Some(building) = &mut state.building {
            building.record(block);
        }
        let stale = state.imcu.is_some() && !state.queued && state.journal.blocks.len() * 10 >= unit.blocks.len();
        stale.then(|| {
            state.queued = true;
            (index, state.journal.changes)
        })
    }

    /// Installs `imcu` in `unit` if it fits in `limit` bytes (with what the unit held
    /// before given back); the journal becomes what changed since its population began,
    /// plus `stale` blocks. Returns false (the unit keeps what it had) when it does not fit,
    /// or when the segment left the store meanwhile.
    pub fn install(&self, segment: &ImSegment, unit: &UnitSlot, imcu: Imcu, stale: BTreeSet<u32>, limit: u64) -> bool {
        let mut state = unit.state.lock();
        // Checked under the unit's lock, which `release` takes after setting the mark.
        if segment.dropped.load(Ordering::Acquire) {
            state.building = None;
            return false;
        }
        let mut building = state.building.take().unwrap_or_default();
        let old = state.imcu.as_ref().map_or(0, |i| i.bytes as u64);
        let new = imcu.bytes as u64;
        // Reserve the growth; give it back if it does not fit.
        let before = self.used.fetch_add(new, Ordering::AcqRel);
        if before + new - old > limit {
            self.used.fetch_sub(new, Ordering::AcqRel);
            state.out_of_memory = true;
            return false;
        }
        self.used.fetch_sub(old, Ordering::AcqRel);
        building.changes += stale.len() as u64;
        building.blocks.extend(stale);
        state.journal = building;
        state.imcu = Some(Arc::new(imcu));
        state.out_of_memory = false;
        true
    }

    /// Starts journaling changes to `unit` for a population that begins now.
    pub fn begin_population(&self, unit: &UnitSlot) {
        unit.state.lock().building = Some(Journal::default());
    }

    /// Queues `task` at `priority` and wakes a worker.
    pub fn queue(&self, task: Task, priority: Priority) {
        let mut q = self.shared.queue.lock();
        if q.heap.iter().any(|(_, _, t)| *t == task) {
            return;
        }
        let seq = q.next;
        q.next += 1;
        q.heap.push((priority, std::cmp::Reverse(seq), task));
        drop(q);
        self.shared.work.notify_one();
    }

    /// Queues the planning of `segment` unless one is queued already.
    pub fn queue_plan(&self, segment: &ImSegment) {
        if !segment.planning.swap(true, Ordering::AcqRel) {
            self.queue(Task::Plan { object_id: segment.table.object_id }, segment.spec.priority);
        }
    }

    /// A planning task of `segment` ended.
    pub fn planned(&self, segment: &ImSegment) {
        segment.planning.store(false, Ordering::Release);
    }

    /// Marks a task done and wakes whoever waits for population.
    pub fn task_done(&self) {
        let mut q = self.shared.queue.lock();
        q.running = q.running.saturating_sub(1);
        drop(q);
        self.shared.progress.notify_all();
    }
}
