//! The rows of one compression unit, decompressed and handed out one at a time in the
//! row format: for the paths that take a CU's rows one by one (a fetch by rowid, an
//! UPDATE or DELETE, and, from a full scan, an index build or MOVE) and then read them as
//! they read a row of a block. This and the load are the column store's codec the access
//! layer reaches CUs through ([`CODEC`]).
//!
//! ```text
//!  head block (as the reader's snapshot sees it: its deleted-row bitmap)
//!    + piece blocks (consistent gets) ─► every column decompressed ─► Imcu   (read_cu)
//!  or the columns a full scan gathered of a CU ─► those decompressed ─► Imcu (decode_cu)
//!  row r ─► its first columns' values ─► a whole-row piece (storage::row)
//!        ─► BlockRow { rdba: head, slot: r }
//! ```
//!
//! Invariant: the caller sees only rows the head version it read does not mark deleted
//! (it asks `is_deleted`); a row's rowid is the head's block address and its row number;
//! a row is handed out only with columns that were decompressed (asking for one that was
//! not is an error, never a NULL).

use crate::access::AccessContext;
use crate::access::cu::scan::ScannedCu;
use crate::access::cu::{CuCodec, DecodedCu};
use crate::access::row_view::BlockRow;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::inmemory::imcu::Imcu;
use crate::storage::block::{BlockHeader, BlockType};
use crate::storage::hcc::{CuHead, CuInfo, PayloadAssembly, read_piece};
use crate::storage::row::{self, ColumnSpan, PIECE_HEADER};
use crate::types::Datum;
use crate::types::encoding::PayloadKind;
use smallvec::SmallVec;

/// Columns of a row built on the stack; a wider row's values go to the heap.
const INLINE_COLUMNS: usize = 16;

/// A CU decompressed whole; read through [`DecodedCu`].
pub struct CuRows {
    /// Block address of the CU's head.
    pub rdba: u32,
    info: CuInfo,
    imcu: Imcu,
}

impl CuRows {
    /// Reads the CU whose head block `rdba` is `head` (the version the caller's reader
    /// sees), its pieces through the buffer cache, and decompresses every column.
    pub fn read(ctx: &AccessContext<'_>, table: &TableDef, rdba: u32, head: &[u8]) -> Result<CuRows> {
        let cu = CuHead::read(head).map_err(|e| ctx.corrupt(rdba, e))?;
        let mut info = CuInfo::default();
        cu.keep_into(&mut info);
        let all = vec![true; table.columns.len()];
        let mut assembly = PayloadAssembly::default();
        assembly.start(&cu, &all);
        for (number, &piece) in info.pieces.iter().enumerate().skip(1) {
            let guard = ctx.cache.consistent_get(ctx.stats, piece)?;
            if BlockHeader(&guard).block_type() != Some(BlockType::CuPiece)
                || BlockHeader(&guard).object_id() != table.object_id
            {
                return Err(
                    ctx.corrupt(piece, format!("piece {number} of the compression unit at {rdba:#x} is not one"))
                );
            }
            let (of, n, bytes) = read_piece(&guard).map_err(|e| ctx.corrupt(piece, e))?;
            if of != rdba || n != number {
                return Err(ctx.corrupt(
                    piece,
                    format!("piece {n} of the compression unit at {of:#x} where piece {number} of {rdba:#x} belongs"),
                ));
            }
            assembly.add_piece(bytes);
        }
        if !assembly.complete() {
            return Err(ctx.corrupt(rdba, "the compression unit's pieces hold fewer bytes than its payload"));
        }
        let imcu =
            super::decode(ctx, table, &info, &assembly, &all, &mut Vec::new()).map_err(|e| ctx.corrupt(rdba, e))?;
        Ok(CuRows { rdba, info, imcu })
    }

    /// Decompresses the columns a scan gathered of `cu`, a CU of `table` it met.
    pub fn decode(ctx: &AccessContext<'_>, table: &TableDef, cu: &ScannedCu<'_>) -> Result<CuRows> {
        let imcu = super::decode(ctx, table, cu.head, cu.payload, cu.columns, &mut Vec::new())
            .map_err(|e| ctx.corrupt(cu.rdba, e))?;
        Ok(CuRows { rdba: cu.rdba, info: cu.head.clone(), imcu })
    }

    /// The values of the first `width` columns of row `row`, strings borrowed from the
    /// units (no allocation up to `INLINE_COLUMNS` columns); a column not decompressed is
    /// corruption of the caller's making, reported as an error rather than read as NULL.
    fn values(&self, row: usize, width: usize) -> Result<SmallVec<[Datum<'_>; INLINE_COLUMNS]>> {
        self.imcu.columns[..width.min(self.imcu.columns.len())]
            .iter()
            .enumerate()
            .map(|(c, unit)| match unit {
                Some(unit) => unit.datum_ref(row),
                None => Err(Error::InvalidValue {
                    context: format!("row {row} of the compression unit at {:#x}", self.rdba),
                    message: format!("column {c} was not decompressed"),
                }),
            })
            .collect()
    }
}

/// The column store's codec the instance gives every access context
/// ([`crate::access::cu::CuCodec`]).
pub const CODEC: CuCodec = CuCodec { read: read_cu, decode: decode_cu, load: super::open_load };

/// Reads the CU of `table` whose head block `rdba` is `head` and decompresses it whole.
fn read_cu(ctx: &AccessContext<'_>, table: &TableDef, rdba: u32, head: &[u8]) -> Result<Box<dyn DecodedCu>> {
    Ok(Box::new(CuRows::read(ctx, table, rdba, head)?))
}

/// Decompresses the columns a scan gathered of a CU it met.
fn decode_cu(ctx: &AccessContext<'_>, table: &TableDef, cu: &ScannedCu<'_>) -> Result<Box<dyn DecodedCu>> {
    Ok(Box::new(CuRows::decode(ctx, table, cu)?))
}

impl DecodedCu for CuRows {
    fn rdba(&self) -> u32 {
        self.rdba
    }

    fn rows(&self) -> usize {
        self.info.rows as usize
    }

    fn pieces(&self) -> &[u32] {
        &self.info.pieces
    }

    fn is_deleted(&self, row: usize) -> bool {
        self.info.is_deleted(row)
    }

    /// The columns never change, the marks do: a head of another shape is corruption.
    fn refresh_marks(&mut self, ctx: &AccessContext<'_>, head: &[u8]) -> Result<()> {
        let cu = CuHead::read(head).map_err(|e| ctx.corrupt(self.rdba, e))?;
        if cu.rows != self.info.rows || cu.pieces() != self.info.pieces.len() {
            return Err(ctx.corrupt(self.rdba, "the compression unit's head changed shape"));
        }
        cu.keep_into(&mut self.info);
        Ok(())
    }

    fn row<'b>(
        &self,
        row: usize,
        kinds: &'b [PayloadKind],
        spans: &'b mut [ColumnSpan],
        piece: &'b mut Vec<u8>,
    ) -> Result<BlockRow<'b>> {
        let values = self.values(row, kinds.len())?;
        row::encode_whole_row(&values, piece);
        located(piece, kinds, spans, self.rdba, row).ok_or_else(|| Error::InvalidValue {
            context: format!("row {row} of the compression unit at {:#x}", self.rdba),
            message: "its values do not make a row".into(),
        })
    }
}

/// The whole-row piece `piece` read as the row at (`rdba`, `row`).
pub fn located<'b>(
    piece: &'b [u8],
    kinds: &'b [PayloadKind],
    spans: &'b mut [ColumnSpan],
    rdba: u32,
    row: usize,
) -> Option<BlockRow<'b>> {
    spans.fill(ColumnSpan::NULL);
    let count = usize::from(*piece.get(2)?).min(spans.len());
    let stream = &piece[PIECE_HEADER..];
    row::locate_columns(stream, count, spans)?;
    Some(BlockRow { stream, spans, kinds, rdba, slot: row as u16 })
}
