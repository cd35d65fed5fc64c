//! The compression units (CUs) a full scan meets: a compressed table's segment holds
//! them beside its row blocks, and the one walk of a segment ([`crate::access::full_scan`])
//! hands each block here that is not a row block. A CU's head starts it, its pieces
//! follow in order, and the bytes of the columns the scan reads are gathered as they pass
//! (`storage::hcc::PayloadAssembly`); once its last piece is met the CU goes to the
//! scan's consumer whole, as a [`ScannedCu`].
//!
//! ```text
//!  CU head  ─► its directory kept (CuInfo: rows, deleted marks as the snapshot sees them)
//!  piece 1..n ─► the wanted columns' bytes gathered
//!  last piece ─► ScannedCu ─► ScanConsumer::cu (a columnar consumer decompresses the
//!                             columns it reads; the others take its rows one by one)
//! ```
//!
//! Invariant: pieces follow their head in segment order, as the direct-path load writes
//! them; a piece met anywhere else, a head met before the last CU's pieces end, or a CU
//! whose pieces end at the high-water mark is corruption naming its block.

use crate::access::AccessContext;
use crate::error::Result;
use crate::storage::block::{BlockHeader, BlockType};
use crate::storage::hcc::{CuHead, CuInfo, PayloadAssembly, read_piece};

/// A complete compression unit met by a scan: its head as the scan's snapshot sees it
/// and the gathered bytes of the columns the scan reads.
pub struct ScannedCu<'s> {
    /// Block address of the CU's head (a row's rowid is this and its row number).
    pub rdba: u32,
    pub head: &'s CuInfo,
    pub payload: &'s PayloadAssembly,
    /// The columns gathered (one flag a table column): those a consumer may decompress.
    pub columns: &'s [bool],
}

impl ScannedCu<'_> {
    /// Rows of the CU not marked deleted.
    pub fn live_rows(&self) -> u64 {
        u64::from(self.head.rows - self.head.deleted)
    }
}

/// The CU being gathered: where its head is and the next piece expected.
struct OpenCu {
    rdba: u32,
    next_piece: usize,
}

/// Gathers the CUs of one scan, a block at a time.
#[derive(Default)]
pub struct CuGathering {
    open: Option<OpenCu>,
    /// The head of the CU being gathered (its buffers reused CU after CU).
    head: CuInfo,
    payload: PayloadAssembly,
}

impl CuGathering {
    /// Takes block `rdba` (`block`, a CU head or piece of the scanned table) with the
    /// columns `wanted`; a CU its last piece completes is handed to `complete`.
    pub fn block<T>(
        &mut self,
        ctx: &AccessContext<'_>,
        rdba: u32,
        block: &[u8],
        wanted: &[bool],
        complete: impl FnOnce(&ScannedCu<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        match BlockHeader(block).block_type() {
            Some(BlockType::CuHead) => {
                if let Some(cu) = &self.open {
                    return Err(ctx.corrupt(cu.rdba, "compression unit ends before its last piece"));
                }
                let head = CuHead::read(block).map_err(|e| ctx.corrupt(rdba, e))?;
                self.payload.start(&head, wanted);
                head.keep_into(&mut self.head);
                self.open = Some(OpenCu { rdba, next_piece: 1 });
            }
            Some(BlockType::CuPiece) => {
                let (of, number, bytes) = read_piece(block).map_err(|e| ctx.corrupt(rdba, e))?;
                match &mut self.open {
                    Some(cu)
                        if cu.rdba == of && cu.next_piece == number && self.head.pieces.get(number) == Some(&rdba) =>
                    {
                        cu.next_piece += 1
                    }
                    _ => {
                        return Err(ctx.corrupt(
                            rdba,
                            format!("piece {number} of the compression unit at {of:#x} out of its place"),
                        ));
                    }
                }
                self.payload.add_piece(bytes);
            }
            other => return Err(ctx.corrupt(rdba, format!("a block of type {other:?} among compression units"))),
        }
        if !self.payload.complete() {
            return Ok(None);
        }
        let cu = self.open.take().expect("a complete CU is open");
        complete(&ScannedCu { rdba: cu.rdba, head: &self.head, payload: &self.payload, columns: wanted }).map(Some)
    }

    /// The scan reached its last block: a CU still open lost its last pieces.
    pub fn finish(&self, ctx: &AccessContext<'_>) -> Result<()> {
        match &self.open {
            Some(cu) => {
                Err(ctx.corrupt(cu.rdba, "compression unit ends at the high-water mark, before its last piece"))
            }
            None => Ok(()),
        }
    }
}
