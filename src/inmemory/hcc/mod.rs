//! Hybrid Columnar Compression in the column store's encodings: a direct-path load that
//! cuts a query's rows into compression units (CUs) and writes them into a table's
//! segment, and the decoding of a CU's columns back into the column store's units, so
//! that a scan of a compressed table runs the column store's kernels on them.
//!
//! ```text
//!  rows ─► ImcuBuilder (gathers by column) ─► ColumnUnit per column (encoded at the
//!          level's packing) ─► bytes (cu::serial) ─► compressed (storage::hcc) ─►
//!          head block + piece blocks above the high-water mark ─► segment header
//!
//!  scan: head block ─► payload assembled from its pieces ─► the columns the statement
//!        reads, decompressed ─► ColumnUnits ─► an Imcu of one CU (the rest None)
//! ```
//!
//! A CU takes rows until its columns' raw bytes reach a budget, or as many rows as its
//! head block's deleted-row bitmap may cover ([`max_cu_rows`]). The budget starts at
//! four times the level's target of compressed bytes and then follows the compression
//! the last CU achieved, so that CUs come out near the target (about 32 KiB at QUERY
//! LOW, 64 KiB at QUERY HIGH, 256 KiB at the ARCHIVE levels).
//!
//! The blocks are above the high-water mark, which moves when the load ends, so nothing
//! of a load that fails is ever reachable. A load into a new table (CREATE TABLE AS
//! SELECT, ALTER TABLE MOVE) writes no undo: nobody sees the table before it is whole.
//! A load inside a transaction (`INSERT /*+ APPEND */`) writes one undo record a CU
//! (`access::cu::undo::CuChange::Loaded`) and names the transaction in the head's first ITL slot,
//! before the head is written: until the transaction commits, a reader's CR clone of the
//! head, and a rollback, mark every row of the CU deleted.
//!
//! The load is opened through the access layer's one seam for loads (`access::load`,
//! [`open_load`]). Beside it: `rows` decompresses a CU whole, or the columns a full scan
//! gathered of one, and hands its rows out one at a time in the row format (for fetches
//! by rowid, DML, index builds and MOVE); with [`open_load`] it is the codec every access
//! context carries (`access::cu::CuCodec`, [`rows::CODEC`]). The rows of CUs are changed (marked
//! deleted) by the access layer's one change protocol (`access::change`), whose undo
//! record (`access::cu::undo`) a transaction's load writes too.

pub mod rows;

use super::cu::{ColumnUnit, Packing, UnitBuffers};
use super::imcu::{GatherBuffers, ImColumn, Imcu, ImcuBuilder, ValueKind};
use crate::access::AccessContext;
use crate::access::load::{LoadedRows, SegmentLoad};
use crate::access::segments::SegmentSpace;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::stats::Stat;
use crate::storage::block::{BlockType, format_block, set_scn};
use crate::storage::hcc::{CompressedCu, CuInfo, HccLevel, PayloadAssembly, max_cu_rows};
use crate::storage::itl::{self, Itl};
use crate::storage::row::PieceAddr;
use crate::types::encoding::PayloadKind;
use crate::types::{DataType, Datum};

/// How hard each level packs its codes before the byte compressor runs.
pub fn packing(level: HccLevel) -> Packing {
    match level {
        HccLevel::QueryLow => Packing::ByteAligned,
        HccLevel::QueryHigh | HccLevel::ArchiveLow => Packing::Tight,
        HccLevel::ArchiveHigh => Packing::Smallest,
    }
}

/// The code a CU's column directory stores for a value kind.
fn kind_code(kind: ValueKind) -> u8 {
    match kind {
        ValueKind::Int => 0,
        ValueKind::Date => 1,
        ValueKind::Text => 2,
        ValueKind::NumberKey => 3,
        ValueKind::Timestamp => 4,
        ValueKind::YearMonth => 5,
        ValueKind::DaySecond => 6,
    }
}

/// The value kind of `code`, if a column of `data_type` can hold it.
fn kind_of(code: u8, data_type: DataType) -> Option<ValueKind> {
    let kind = match code {
        0 => ValueKind::Int,
        1 => ValueKind::Date,
        2 => ValueKind::Text,
        3 => ValueKind::NumberKey,
        4 => ValueKind::Timestamp,
        5 => ValueKind::YearMonth,
        6 => ValueKind::DaySecond,
        _ => return None,
    };
    let fits = match data_type {
        DataType::Integer => kind == ValueKind::Int,
        DataType::Number { .. } => matches!(kind, ValueKind::Int | ValueKind::NumberKey),
        DataType::Date => kind == ValueKind::Date,
        DataType::Timestamp { .. } => kind == ValueKind::Timestamp,
        DataType::IntervalYearMonth { .. } => kind == ValueKind::YearMonth,
        DataType::IntervalDaySecond { .. } => kind == ValueKind::DaySecond,
        DataType::Varchar2 { .. } | DataType::Char { .. } => kind == ValueKind::Text,
    };
    fits.then_some(kind)
}

/// What a direct-path load wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Loaded {
    pub rows: u64,
    pub cus: u64,
    /// Blocks the CUs took (heads and pieces).
    pub blocks: u64,
    pub compressed_bytes: u64,
    pub decompressed_bytes: u64,
    /// Each CU written: its head's block address and its rows.
    pub units: Vec<(u32, u32)>,
}

/// A direct-path load of rows into CUs of one table, above its high-water mark.
pub struct HccLoader<'a, 'c> {
    ctx: &'a AccessContext<'c>,
    /// The table's writer lock, held for the whole load: an INSERT waits for it, so the
    /// two never format the same blocks above the high-water mark.
    _writer: parking_lot::ArcMutexGuard<parking_lot::RawMutex, ()>,
    table: &'a TableDef,
    level: HccLevel,
    space: SegmentSpace,
    builder: Option<ImcuBuilder>,
    buffers: GatherBuffers,
    /// Raw bytes of the rows gathered into the current CU, and the budget that cuts it.
    raw: usize,
    raw_budget: usize,
    loaded: Loaded,
    /// The transaction of an `INSERT /*+ APPEND */`; `None` for a load into a new table.
    transaction: Option<crate::txn::Xid>,
    /// Whether the caller wants the loaded rows' rowids (for the table's indexes).
    track_rowids: bool,
}

/// Opens a direct-path load of `table` into CUs at `level`: the column store's side of
/// `access::load` ([`crate::access::cu::CuCodec::load`]). Inside transaction
/// `transaction` when given (`INSERT /*+ APPEND */`: one undo record a CU), else into a
/// segment nobody reaches before the load ends (no undo).
pub fn open_load<'a>(
    ctx: &'a AccessContext<'a>,
    table: &'a TableDef,
    level: HccLevel,
    transaction: Option<crate::txn::Xid>,
) -> Result<Box<dyn SegmentLoad + 'a>> {
    Ok(Box::new(HccLoader::new(ctx, table, level, transaction)?))
}

impl<'a, 'c> HccLoader<'a, 'c> {
    /// A load into `table`, compressed at `level`, inside `transaction` when given (whose
    /// undo undoes it).
    pub fn new(
        ctx: &'a AccessContext<'c>,
        table: &'a TableDef,
        level: HccLevel,
        transaction: Option<crate::txn::Xid>,
    ) -> Result<HccLoader<'a, 'c>> {
        let writer = ctx.locks.table(table.object_id).insert_lock(ctx.stats);
        let space = SegmentSpace::open(ctx, table.segment_header, table.object_id, &table.name)?;
        Ok(HccLoader {
            ctx,
            _writer: writer,
            table,
            level,
            space,
            builder: None,
            buffers: GatherBuffers::default(),
            raw: 0,
            raw_budget: 4 * level.target_payload(),
            loaded: Loaded::default(),
            transaction,
            track_rowids: false,
        })
    }

    /// Adds a row, one value a table column; writes a CU when the row fills one.
    pub fn push(&mut self, values: &[Datum<'_>]) -> Result<()> {
        let builder = match &mut self.builder {
            Some(b) => b,
            None => self.builder.insert(ImcuBuilder::new(self.table, &[], 1, &mut self.buffers)),
        };
        builder.values(values)?;
        self.raw += values.iter().map(raw_len).sum::<usize>();
        if builder.rows() >= max_cu_rows(self.ctx.space.block_size) || self.raw >= self.raw_budget {
            self.write_cu()?;
        }
        Ok(())
    }

    /// Writes the last CU and the segment header, which makes the CUs part of the table.
    pub fn finish(mut self) -> Result<Loaded> {
        self.write_cu()?;
        self.space.finish(self.ctx)?;
        Ok(self.loaded)
    }

    /// Encodes, compresses and writes the rows gathered so far as one CU.
    fn write_cu(&mut self) -> Result<()> {
        let Some(mut builder) = self.builder.take() else { return Ok(()) };
        let rows = builder.rows();
        if rows == 0 {
            return Ok(());
        }
        builder.end_block();
        let imcu = builder.build(self.ctx.scn, packing(self.level), None, &mut self.buffers);
        let columns: Vec<(u8, Vec<u8>)> = imcu
            .columns
            .iter()
            .map(|c| {
                let c = c.as_ref().expect("a load gathers every column");
                let mut bytes = Vec::new();
                c.unit.write_to(&mut bytes);
                (kind_code(c.kind), bytes)
            })
            .collect();
        let cu = CompressedCu::new(self.level, rows, &columns);
        let block_size = self.ctx.space.block_size;
        let pieces = cu.pieces(block_size).ok_or_else(|| Error::InvalidValue {
            context: self.table.name.clone(),
            message: format!(
                "a compression unit of {} columns and {rows} rows does not fit the header of a {block_size}-byte block",
                self.table.columns.len()
            ),
        })?;
        let mut blocks = Vec::with_capacity(pieces);
        for _ in 0..pieces {
            blocks.push(self.space.next_block(self.ctx)?);
        }
        let addresses: Vec<u32> = blocks.iter().map(|b| b.rdba()).collect();
        // The undo first: whoever sees the head sees the slot whose chain undoes it.
        let owner = match self.transaction {
            None => None,
            Some(xid) => {
                let mut body = Vec::new();
                crate::access::cu::undo::CuUndo {
                    itl: 0,
                    change: crate::access::cu::undo::CuChange::Loaded,
                    object_id: self.table.object_id,
                    rdba: addresses[0],
                    prev_itl: Itl::default(),
                }
                .encode(&mut body);
                let uba = self.ctx.undo.append(self.ctx, xid, &body)?;
                Some(Itl { xid, uba, ..Itl::default() })
            }
        };
        for (number, block) in blocks.iter_mut().enumerate() {
            let kind = if number == 0 { BlockType::CuHead } else { BlockType::CuPiece };
            format_block(block, kind, addresses[number], self.table.object_id);
            cu.write_piece(number, &addresses, block);
            if let (0, Some(owner)) = (number, &owner) {
                itl::put(block, 0, owner);
            }
            set_scn(block, self.ctx.scn);
        }
        drop(blocks);
        let stats = self.ctx.stats;
        stats.add(Stat::HccLoadDirectCus, 1);
        stats.add(Stat::HccLoadDirectRows, rows as u64);
        stats.add(Stat::RowsInserted, rows as u64);
        self.loaded.rows += rows as u64;
        self.loaded.cus += 1;
        self.loaded.blocks += pieces as u64;
        self.loaded.compressed_bytes += cu.payload.len() as u64;
        self.loaded.decompressed_bytes += cu.decompressed_len();
        self.loaded.units.push((addresses[0], rows as u32));
        // The next CU's budget follows this one's compression, towards the target.
        let ratio = self.raw as f64 / cu.payload.len().max(1) as f64;
        self.raw_budget = ((self.level.target_payload() as f64 * ratio) as usize).clamp(16 << 10, 64 << 20);
        self.raw = 0;
        Ok(())
    }
}

impl SegmentLoad for HccLoader<'_, '_> {
    fn takes_encoded(&self) -> bool {
        false
    }

    fn insert(&mut self, values: &[Datum<'_>]) -> Result<()> {
        self.push(values)
    }

    /// A row encoded in the row format is read back into its values first (the load
    /// gathers values by column); [`SegmentLoad::takes_encoded`] tells callers to hand
    /// values instead.
    fn insert_encoded(&mut self, image: &[u8]) -> Result<()> {
        let kinds: Vec<PayloadKind> = self.table.columns.iter().map(|c| PayloadKind::from(c.data_type)).collect();
        let mut spans = vec![crate::storage::row::ColumnSpan::NULL; kinds.len()];
        let row = rows::located(image, &kinds, &mut spans, 0, 0).ok_or_else(|| Error::InvalidValue {
            context: self.table.name.clone(),
            message: "a row handed to a direct-path load is not a whole row".into(),
        })?;
        let values: Vec<Datum<'_>> =
            (0..kinds.len()).map(|c| crate::access::row_view::RowAccess::column(&row, c)).collect::<Result<_>>()?;
        self.push(&values)
    }

    fn track_rowids(&mut self) {
        self.track_rowids = true;
    }

    /// The CUs' heads go to the transaction for its cleanout at commit; a load into a
    /// new segment leaves no ITL entry to clean.
    fn finish(self: Box<Self>) -> Result<LoadedRows> {
        let (transaction, track) = (self.transaction, self.track_rowids);
        let loaded = HccLoader::finish(*self)?;
        let touched = match transaction {
            Some(_) => loaded.units.iter().map(|&(head, _)| head).collect(),
            None => Vec::new(),
        };
        let rowids = match track {
            true => loaded
                .units
                .iter()
                .flat_map(|&(rdba, rows)| (0..rows).map(move |r| PieceAddr { rdba, slot: r as u16 }))
                .collect(),
            false => Vec::new(),
        };
        Ok(LoadedRows { rows: loaded.rows, touched, rowids })
    }

    /// The CUs written stay above the high-water mark, never reached; a transaction's
    /// undo records for them are the statement's to roll back.
    fn rollback(self: Box<Self>) -> Result<()> {
        Ok(())
    }
}

/// About the bytes a value takes in a row: what a CU's budget counts.
fn raw_len(value: &Datum<'_>) -> usize {
    match value {
        Datum::Null => 1,
        Datum::Str(s) => s.len() + 1,
        _ => 8,
    }
}

/// The columns `needed` of the CU described by `head`, whose wanted columns `assembly`
/// gathered, decompressed into the column store's units (`None` for the others), counted
/// in the EHCC statistics: an IMCU of the CU's rows.
pub fn decode(
    ctx: &AccessContext<'_>,
    table: &TableDef,
    head: &CuInfo,
    assembly: &PayloadAssembly,
    needed: &[bool],
    scratch: &mut Vec<u8>,
) -> std::result::Result<Imcu, String> {
    let mut imcu = Imcu::default();
    decode_into(
        ctx,
        table,
        head,
        assembly,
        needed,
        &mut CuBuffers { scratch, units: &mut UnitBuffers::default() },
        &mut imcu,
    )?;
    Ok(imcu)
}

/// Where a CU's columns are decompressed: `scratch` takes a column's bytes, and the
/// units read from them take their arrays from `units`.
pub struct CuBuffers<'b> {
    pub scratch: &'b mut Vec<u8>,
    pub units: &'b mut UnitBuffers,
}

/// [`decode`] into `imcu`, whose units (of the CU decoded before) give their arrays to
/// `buffers` first: a scan that decodes CU after CU this way allocates for the first ones
/// only. On an error `imcu` holds some of the CU's columns.
pub fn decode_into(
    ctx: &AccessContext<'_>,
    table: &TableDef,
    head: &CuInfo,
    assembly: &PayloadAssembly,
    needed: &[bool],
    buffers: &mut CuBuffers<'_>,
    imcu: &mut Imcu,
) -> std::result::Result<(), String> {
    let rows = head.rows as usize;
    clear_unit(imcu, rows, buffers.units);
    if head.columns.len() != table.columns.len() {
        return Err(format!("{} columns in a CU of a table of {}", head.columns.len(), table.columns.len()));
    }
    let level = head.level.ok_or("a CU without a level")?;
    let (mut decompressed, mut compressed, mut count) = (0u64, 0u64, 0u64);
    for (c, column) in table.columns.iter().enumerate() {
        if !needed.get(c).copied().unwrap_or(false) {
            imcu.columns.push(None);
            continue;
        }
        let entry = head.columns[c];
        let kind = kind_of(entry.kind, column.data_type).ok_or_else(|| {
            format!("column {c} holds values of kind {} in a {} column", entry.kind, column.data_type)
        })?;
        assembly.column(level, entry, buffers.scratch).map_err(|e| format!("column {c}: {e}"))?;
        let unit = ColumnUnit::read_reusing(buffers.scratch, buffers.units).map_err(|e| format!("column {c}: {e}"))?;
        if unit.rows() != rows {
            return Err(format!("column {c} holds {} rows of a CU of {rows}", unit.rows()));
        }
        count += 1;
        compressed += u64::from(entry.compressed_len);
        decompressed += u64::from(entry.decompressed_len);
        imcu.columns.push(Some(ImColumn { unit, kind, data_type: column.data_type }));
    }
    imcu.bytes = decompressed as usize;
    let stats = ctx.stats;
    stats.add(Stat::EhccCusDecompressed, 1);
    stats.add(
        match level {
            HccLevel::QueryLow => Stat::EhccQueryLowCusDecompressed,
            HccLevel::QueryHigh => Stat::EhccQueryHighCusDecompressed,
            HccLevel::ArchiveLow => Stat::EhccArchiveLowCusDecompressed,
            HccLevel::ArchiveHigh => Stat::EhccArchiveHighCusDecompressed,
        },
        1,
    );
    stats.add(Stat::EhccTotalRowsForDecompression, rows as u64);
    stats.add(Stat::EhccColumnsDecompressed, count);
    stats.add(Stat::EhccCompressedLengthDecompressed, compressed);
    stats.add(Stat::EhccDecompressedLengthDecompressed, decompressed);
    Ok(())
}

/// Makes `imcu` a unit of `rows` rows (in one block) with no column yet, its units'
/// arrays given to `spare`.
pub fn clear_unit(imcu: &mut Imcu, rows: usize, spare: &mut UnitBuffers) {
    imcu.columns.drain(..).flatten().for_each(|column| column.unit.recycle(spare));
    imcu.block_rows.clear();
    imcu.block_rows.extend([0, rows as u32]);
    (imcu.population_scn, imcu.rows, imcu.bytes) = (0, rows, 0);
}
