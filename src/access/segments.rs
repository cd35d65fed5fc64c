//! A table's or index's segment: reading its header (extent map, high-water mark) with a
//! consistent get, and creating, truncating and dropping the segment.

use crate::catalog::TableDef;
use crate::error::Result;
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
