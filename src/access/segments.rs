//! A table's or index's segment: reading its header (extent map, high-water mark) with a
//! consistent get, creating, truncating and dropping the segment, and handing out its
//! blocks above the high-water mark to a direct-path writer ([`SegmentSpace`]).

use crate::buffer::WriteGuard;
use crate::catalog::TableDef;
use crate::error::{Error, Result};
use crate::storage::block::set_scn;
use crate::storage::segment::SegmentMap;
use crate::txn::TxnContext;

/// Reads the segment header of `table`: its extent map and high-water mark.
pub fn read_map(ctx: &TxnContext<'_>, table: &TableDef) -> Result<SegmentMap> {
    read_segment_map(ctx, table.segment_header, &table.name)
}

/// Reads the segment header at `header` of the object called `owner` (named in errors).
pub fn read_segment_map(ctx: &TxnContext<'_>, header: u32, owner: &str) -> Result<SegmentMap> {
    let block = ctx.cache.consistent_get(ctx.stats, header)?;
    SegmentMap::read(&block).map_err(|r| ctx.corrupt(header, format!("segment header of {owner}: {r}")))
}

/// Allocates the first extent of a new segment and formats its header block (segment
/// block 0, so the high-water mark starts at 1). Returns the header's block address.
pub fn create_segment(ctx: &TxnContext<'_>, object_id: u32) -> Result<u32> {
    let first = ctx.space.allocate_extent()?;
    format_header(ctx, first, object_id)?;
    Ok(first)
}

/// Formats a segment header at `first` for a segment of one extent (starting there)
/// holding nothing: the high-water mark is 1, the header itself.
fn format_header(ctx: &TxnContext<'_>, first: u32, object_id: u32) -> Result<()> {
    let mut map = SegmentMap { hwm: 1, allocated: 0, runs: Vec::new() };
    map.add_extent(first, ctx.space.extent_blocks, ctx.space.block_size);
    let mut header = ctx.cache.new_block(ctx.stats, first, object_id)?;
    map.write(&mut header, first, object_id);
    crate::storage::block::set_scn(&mut header, ctx.scn);
    Ok(())
}

/// Frees every extent of a dropped table and forgets its cached blocks.
pub fn drop_segment(ctx: &TxnContext<'_>, table: &TableDef) -> Result<()> {
    drop_object_segment(ctx, table.object_id, table.segment_header, &table.name)
}

/// Frees every extent of the segment with header `header` of the dropped object
/// `object_id` (called `owner` in errors) and forgets its cached blocks.
pub fn drop_object_segment(ctx: &TxnContext<'_>, object_id: u32, header: u32, owner: &str) -> Result<()> {
    let map = read_segment_map(ctx, header, owner)?;
    ctx.cache.invalidate_object(ctx.stats, object_id);
    ctx.space.free_extents(extent_firsts(&map, ctx.space.extent_blocks));
    Ok(())
}

/// Empties a table: keeps its first extent, frees the others, resets the high-water mark.
pub fn truncate_segment(ctx: &TxnContext<'_>, table: &TableDef) -> Result<()> {
    let map = read_map(ctx, table)?;
    let firsts = extent_firsts(&map, ctx.space.extent_blocks);
    ctx.cache.invalidate_object(ctx.stats, table.object_id);
    format_header(ctx, table.segment_header, table.object_id)?;
    ctx.space.free_extents(firsts.into_iter().filter(|&f| f != table.segment_header));
    Ok(())
}

/// The first block address of every extent in a map.
fn extent_firsts(map: &SegmentMap, extent_blocks: u32) -> Vec<u32> {
    map.runs.iter().flat_map(|r| (0..r.blocks / extent_blocks).map(move |i| r.first + i * extent_blocks)).collect()
}

/// Blocks of a segment handed out above its high-water mark, for a writer that formats
/// them itself (an index's bulk build and splits, a direct-path load of compression
/// units); the segment header (high-water mark, extents) is written by
/// [`SegmentSpace::header`] or [`SegmentSpace::finish`], so nothing written is reachable
/// before it is.
pub struct SegmentSpace {
    map: SegmentMap,
    header: u32,
    object_id: u32,
    owner: String,
}

impl SegmentSpace {
    /// The space of the segment whose header is at `header`, of object `object_id` called
    /// `owner` (named in errors).
    pub fn open(ctx: &TxnContext<'_>, header: u32, object_id: u32, owner: &str) -> Result<SegmentSpace> {
        let map = read_segment_map(ctx, header, owner)?;
        Ok(SegmentSpace { map, header, object_id, owner: owner.to_owned() })
    }

    /// The next block above the high-water mark, allocating an extent when none is left,
    /// held for writing as the cache gives a new block (its bytes are the caller's to
    /// format).
    pub fn next_block<'c>(&mut self, ctx: &TxnContext<'c>) -> Result<WriteGuard<'c>> {
        if self.map.hwm >= self.map.allocated {
            let first = ctx.space.allocate_extent()?;
            if !self.map.add_extent(first, ctx.space.extent_blocks, ctx.space.block_size) {
                ctx.space.free_extents([first]);
                return Err(Error::InvalidValue {
                    context: self.owner.clone(),
                    message: "segment extent map is full; create the database with a larger extent size".into(),
                });
            }
        }
        let rdba = self.map.block_address(self.map.hwm).expect("the block at the high-water mark is allocated");
        self.map.hwm += 1;
        ctx.cache.new_block(ctx.stats, rdba, self.object_id)
    }

    /// The data object id stamped in the segment's blocks.
    pub fn object_id(&self) -> u32 {
        self.object_id
    }

    /// Writes the segment header (high-water mark, extents) and keeps it held, for a
    /// change that releases it together with the blocks it covers.
    pub fn header<'c>(self, ctx: &TxnContext<'c>) -> Result<WriteGuard<'c>> {
        let mut header = ctx.cache.current_get(ctx.stats, self.header)?;
        self.map.write(&mut header, self.header, self.object_id);
        set_scn(&mut header, ctx.scn);
        Ok(header)
    }

    /// Writes the segment header (high-water mark, extents).
    pub fn finish(self, ctx: &TxnContext<'_>) -> Result<()> {
        self.header(ctx).map(drop)
    }
}
