//! Aligned block memory: the buffers of the cache, and scratch blocks for writes.
//!
//! Buffers are aligned to 4 KiB so that `O_DIRECT` reads and writes can target them. The
//! memory is an anonymous mapping, zero until first touched. An arena of 2 MiB or more
//! starts on a 2 MiB boundary and asks the kernel for transparent huge pages (as Oracle
//! puts its SGA in huge pages): a scan of a large cache then misses the TLB once per
//! 2 MiB instead of once per 4 KiB page, and filling the cache faults 512 times fewer
//! pages. Where the kernel declines, the arena works the same on 4 KiB pages.

use std::ptr::NonNull;

/// Alignment of every block buffer.
pub const BLOCK_ALIGN: usize = 4096;

/// Size and alignment of a transparent huge page on x86-64 and arm64.
const HUGE_PAGE: usize = 2 << 20;

/// `count` zeroed, aligned blocks of `block_size` bytes.
pub struct Arena {
    /// The mapping as made (its start may precede `ptr` by the alignment slack).
    mapping: NonNull<u8>,
    mapping_len: usize,
    /// The first block.
    ptr: NonNull<u8>,
    size: usize,
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
        let size = count.checked_mul(block_size).filter(|&s| s <= isize::MAX as usize / 2).expect("arena size fits");
        let huge = size >= HUGE_PAGE;
        let slack = if huge { HUGE_PAGE } else { 0 };
        let mapping_len = size + slack;
        // SAFETY: an anonymous private mapping of a non-zero length; the result is checked.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapping_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if raw == libc::MAP_FAILED {
            let layout = std::alloc::Layout::from_size_align(size, BLOCK_ALIGN).expect("arena layout");
            std::alloc::handle_alloc_error(layout);
        }
        let mapping = NonNull::new(raw.cast::<u8>()).expect("mmap does not return null on success");
        let offset = if huge { (HUGE_PAGE - (mapping.as_ptr() as usize) % HUGE_PAGE) % HUGE_PAGE } else { 0 };
        // SAFETY: offset < slack, so the arena lies inside the mapping.
        let ptr = unsafe { mapping.add(offset) };
        if huge {
            // A hint: failure (no THP support) leaves ordinary pages, which work the same.
            // SAFETY: the range is inside the mapping made above.
            unsafe { libc::madvise(ptr.as_ptr().cast(), size, libc::MADV_HUGEPAGE) };
        }
        Arena { mapping, mapping_len, ptr, size, block_size }
    }

    /// Pointer to the first byte of block `i`.
    #[inline]
    pub fn block_ptr(&self, i: usize) -> *mut u8 {
        assert!((i + 1) * self.block_size <= self.size, "block {i} is inside the arena");
        // SAFETY: the offset is within the arena (asserted above).
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
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.mapping.as_ptr().cast(), self.mapping_len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_zeroed_and_disjoint() {
        for (count, block_size) in [(3, 8192), (300, 8192), (1, 2048)] {
            let mut arena = Arena::new(count, block_size);
            assert_eq!(arena.block_ptr(0) as usize % BLOCK_ALIGN, 0);
            if count * block_size >= HUGE_PAGE {
                assert_eq!(arena.block_ptr(0) as usize % HUGE_PAGE, 0);
            }
            for i in 0..count {
                let block = arena.block_mut(i);
                assert!(block.iter().all(|&b| b == 0));
                block.fill(i as u8 + 1);
            }
            for i in 0..count {
                assert!(arena.block_mut(i).iter().all(|&b| b == i as u8 + 1));
            }
        }
    }
}
