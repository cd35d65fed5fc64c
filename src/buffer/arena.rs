//! Aligned block memory: the buffers of the cache, and scratch blocks for writes.
//!
//! Buffers are aligned to 4 KiB so that `O_DIRECT` reads and writes can target them.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// Alignment of every block buffer.
pub const BLOCK_ALIGN: usize = 4096;

/// `count` zeroed, aligned blocks of `block_size` bytes.
pub struct Arena {
    ptr: NonNull<u8>,
    layout: Layout,
    block_size: usize,
}

// SAFETY: the arena is plain memory; who may touch which block is decided by the buffer
// cache's pins and content locks, not by the arena.
unsafe impl Send for Arena {}
// SAFETY: as above; the arena only hands out raw pointers.
unsafe impl Sync for Arena {}

impl Arena {
    pub fn new(count: usize, block_size: usize) -> Arena {
        assert!(count > 0 && block_size > 0, "an arena holds at least one block");
        let layout = Layout::from_size_align(count * block_size, BLOCK_ALIGN).expect("arena size fits in isize");
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        Arena { ptr, layout, block_size }
    }

    /// Pointer to the first byte of block `i`.
    pub fn block_ptr(&self, i: usize) -> *mut u8 {
        assert!((i + 1) * self.block_size <= self.layout.size(), "block {i} is inside the arena");
        // SAFETY: the offset is within the allocation (asserted above).
        unsafe { self.ptr.as_ptr().add(i * self.block_size) }
    }

    /// Block `i` as a slice, for an arena owned by one user (scratch blocks).
    pub fn block_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: `&mut self` gives exclusive access to the whole arena; the block is in bounds.
        unsafe { std::slice::from_raw_parts_mut(self.block_ptr(i), self.block_size) }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this exact layout, freed once.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}
