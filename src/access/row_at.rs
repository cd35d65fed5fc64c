//! A live row of a row block read by its address (a rowid's slot): for a fetch by rowid,
//! an UPDATE or DELETE, and the column store's population. Which slots hold a live row,
//! and which are corrupt, is the full scan's rule (`full_scan::live_row`), so that every
//! path that reads a row by its address agrees with a scan.

use super::AccessContext;
use super::full_scan::{LiveRow, live_row};
use super::row_view::BlockRow;
use crate::error::Result;
use crate::storage::block::DataBlock;
use crate::storage::row::{ColumnSpan, locate_columns};
use crate::types::encoding::PayloadKind;

/// The live row whose head is in `slot`, columns located (a chained or migrated row is
/// assembled into `scratch`); `None` for an empty, deleted or continuation slot. Which
/// slots hold a live row, and which are corrupt, is the full scan's rule
/// (`live_row`), so every path that reads a row by its address agrees with it.
/// (Inline: it is a fetch by rowid's per-row work.)
#[inline]
pub(crate) fn whole_row<'b>(
    ctx: &AccessContext<'_>,
    bytes: &'b [u8],
    rdba: u32,
    slot: usize,
    kinds: &'b [PayloadKind],
    spans: &'b mut [ColumnSpan],
    scratch: &'b mut Vec<u8>,
) -> Result<Option<BlockRow<'b>>> {
    whole_row_keeping(ctx, bytes, rdba, slot, kinds, spans, scratch, &mut None, None)
}

/// [`whole_row`] for a caller that reads many rows of one block: a chained row's piece
/// block stays in `piece_block` for the next row's pieces (see
/// [`super::full_scan::assemble_row_keeping`]), and the time spent assembling chained
/// rows is added to `chained_time` when given (population's phase; a row stored whole
/// reads no clock).
#[allow(clippy::too_many_arguments)]
pub(crate) fn whole_row_keeping<'b, 'c>(
    ctx: &AccessContext<'c>,
    bytes: &'b [u8],
    rdba: u32,
    slot: usize,
    kinds: &'b [PayloadKind],
    spans: &'b mut [ColumnSpan],
    scratch: &'b mut Vec<u8>,
    piece_block: &mut Option<crate::buffer::ReadGuard<'c>>,
    chained_time: Option<&mut std::time::Duration>,
) -> Result<Option<BlockRow<'b>>> {
    let Some(entry) = DataBlock(bytes).directory().get(2 * slot..2 * slot + 2) else { return Ok(None) };
    let (stream, column_count): (&[u8], usize) = match live_row(ctx, rdba, bytes, slot, entry)? {
        None => return Ok(None),
        Some(LiveRow::Whole { stream, column_count }) => (stream, column_count),
        Some(LiveRow::Chained { column_count, fragment, next }) => {
            let started = chained_time.is_some().then(std::time::Instant::now);
            super::full_scan::assemble_row_keeping(ctx, rdba, bytes, fragment, next, scratch, piece_block)?;
            if let (Some(spent), Some(started)) = (chained_time, started) {
                *spent += started.elapsed();
            }
            (scratch, column_count)
        }
    };
    spans.fill(ColumnSpan::NULL);
    locate_columns(stream, column_count, spans)
        .ok_or_else(|| ctx.corrupt(rdba, format!("row {slot} runs past its block")))?;
    Ok(Some(BlockRow { stream, spans, kinds, rdba, slot: slot as u16 }))
}
