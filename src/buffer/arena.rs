//! Aligned block memory: the buffers of the cache, and scratch blocks for writes.
//!
//! Buffers are aligned to 4 KiB so that `O_DIRECT` reads and writes can target them. An
//! arena of 2 MiB or more (the cache) is an anonymous mapping, zero until first touched,
//! that starts on a 2 MiB boundary and asks the kernel for transparent huge pages (as
//! Oracle puts its SGA in huge pages): a scan of a large cache then misses the TLB once
//! per 2 MiB instead of once per 4 KiB page, and filling the cache faults 512 times fewer
//! pages. Where the kernel declines, the arena works the same on 4 KiB pages. A smaller
//! arena (a scratch block for writes, or a cache under 2 MiB) comes from the allocator,
//! which is far cheaper than a mapping for something that small.
//!
//! A mapped arena can give a range of its pages back to the kernel ([`Arena::release_blocks`],
//! used by a retired In-Memory Area); they read as zero after.
//!
//! A mapped arena may be pre-paged ([`Arena::pre_page`]): a background thread has the
//! kernel populate its pages ahead of use (see `pre_page`). The arena stops and joins
//! that thread before it unmaps its memory.

use super::pre_page::PrePager;
use std::alloc::Layout;
use std::ptr::NonNull;

/// Alignment of every block buffer.
pub const BLOCK_ALIGN: usize = 4096;

/// Size and alignment of a transparent huge page on x86-64 and arm64.
const HUGE_PAGE: usize = 2 << 20;

/// Where the pre-paging of an arena stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrePageState {
    /// Not asked for (or the arena is allocated, not mapped).
    Off,
    Running,
    /// Every page populated (or the kernel refused, and first touches will populate them).
    Done,
}

impl PrePageState {
    /// The name `v$` views show.
    pub fn name(self) -> &'static str {
        match self {
            PrePageState::Off => "OFF",
            PrePageState::Running => "RUNNING",
            PrePageState::Done => "DONE",
        }
    }
}

/// `count` zeroed, aligned blocks of `block_size` bytes.
pub struct Arena {
    memory: Memory,
    /// The first block.
    ptr: NonNull<u8>,
    size: usize,
    /// Blocks in the arena: `size / block_size`.
    count: usize,
    block_size: usize,
    /// The thread populating a mapped arena's pages, if one was started; stopped before
    /// the memory is unmapped.
    pre_pager: Option<PrePager>,
}

/// Where an arena's memory came from, to give it back the same way.
enum Memory {
    /// From the allocator, with this layout (starting at the first block).
    Allocated(Layout),
    /// An anonymous mapping; its start may precede the first block by alignment slack.
    Mapped { start: NonNull<u8>, len: usize },
}

// SAFETY: the arena is plain memory; who may touch which block is decided by the buffer
// cache's pins and content locks, not by the arena.
unsafe impl Send for Arena {}
// SAFETY: as above; the arena only hands out raw pointers.
unsafe impl Sync for Arena {}

impl Arena {
    /// An arena of `count` blocks of `block_size` bytes, every byte zero (the buffer cache
    /// relies on it: a buffer never claimed needs no zeroing before a new block).
    pub fn new(count: usize, block_size: usize) -> Arena {
        let layout = |size| Layout::from_size_align(size, BLOCK_ALIGN).expect("arena layout");
        Arena::try_new(count, block_size)
            .unwrap_or_else(|| std::alloc::handle_alloc_error(layout(count.saturating_mul(block_size))))
    }

    /// [`Arena::new`], or `None` when the kernel refuses the memory (a mapping larger than
    /// it will back).
    pub fn try_new(count: usize, block_size: usize) -> Option<Arena> {
        assert!(count > 0 && block_size > 0, "an arena holds at least one block");
        let size = count.checked_mul(block_size).filter(|&s| s <= isize::MAX as usize / 2).expect("arena size fits");
        if size < HUGE_PAGE {
            let layout = Layout::from_size_align(size, BLOCK_ALIGN).expect("arena layout");
            // SAFETY: the layout has a non-zero size.
            let raw = unsafe { std::alloc::alloc_zeroed(layout) };
            let ptr = NonNull::new(raw)?;
            return Some(Arena { memory: Memory::Allocated(layout), ptr, size, count, block_size, pre_pager: None });
        }
        let mapping_len = size + HUGE_PAGE;
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
            return None;
        }
        let mapping = NonNull::new(raw.cast::<u8>()).expect("mmap does not return null on success");
        let offset = (HUGE_PAGE - (mapping.as_ptr() as usize) % HUGE_PAGE) % HUGE_PAGE;
        // SAFETY: offset < HUGE_PAGE, the slack mapped beyond `size`.
        let ptr = unsafe { mapping.add(offset) };
        // A hint: failure (no THP support) leaves ordinary pages, which work the same.
        // SAFETY: the range is inside the mapping made above.
        unsafe { libc::madvise(ptr.as_ptr().cast(), size, libc::MADV_HUGEPAGE) };
        Some(Arena {
            memory: Memory::Mapped { start: mapping, len: mapping_len },
            ptr,
            size,
            count,
            block_size,
            pre_pager: None,
        })
    }

    /// Starts populating the pages of a mapped arena in the background, so that first
    /// writes to its blocks find pages already there. Does nothing for an allocated
    /// arena (small, and not zeroed lazily in a way worth avoiding) or if already started.
    pub fn pre_page(&mut self) {
        if matches!(self.memory, Memory::Mapped { .. }) && self.pre_pager.is_none() {
            // SAFETY: the blocks lie in the arena's private anonymous read-write mapping,
            // which `drop` unmaps only after dropping (stopping and joining) the pager.
            self.pre_pager = Some(unsafe { PrePager::start(self.ptr.as_ptr(), self.size) });
        }
    }

    /// Stops the pre-paging of the arena, if any, after its current chunk.
    pub fn stop_pre_paging(&self) {
        if let Some(pager) = &self.pre_pager {
            pager.stop();
        }
    }

    /// Gives the pages of blocks `first..first + count` back to the kernel: they read as
    /// zero after, and take no memory until written again. Only for a mapped arena whose
    /// blocks in that range no one uses.
    pub fn release_blocks(&self, first: usize, count: usize) {
        if matches!(self.memory, Memory::Mapped { .. }) && count > 0 {
            let start = self.block_ptr(first);
            // A hint: if the kernel declines, the pages simply stay.
            // SAFETY: the range is inside the mapping (block_ptr checks `first`, and the
            // caller's blocks end within the arena); no one reads or writes it now.
            unsafe { libc::madvise(start.cast(), count * self.block_size, libc::MADV_DONTNEED) };
        }
    }

    /// Whether the arena is being pre-paged.
    pub fn pre_page_state(&self) -> PrePageState {
        match &self.pre_pager {
            None => PrePageState::Off,
            Some(pager) if pager.finished() => PrePageState::Done,
            Some(_) => PrePageState::Running,
        }
    }

    /// Pointer to the first byte of block `i`. (Its check is one compare: a get of a
    /// block by rowid asks for its buffer's address several times.)
    #[inline]
    pub fn block_ptr(&self, i: usize) -> *mut u8 {
        assert!(i < self.count, "block {i} is inside the arena");
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
        // The pager must be done with the memory before it goes.
        drop(self.pre_pager.take());
        match self.memory {
            // SAFETY: allocated in `new` with this layout at `ptr`, freed once.
            Memory::Allocated(layout) => unsafe { std::alloc::dealloc(self.ptr.as_ptr(), layout) },
            // SAFETY: the mapping made in `new`, unmapped once.
            Memory::Mapped { start, len } => unsafe {
                libc::munmap(start.as_ptr().cast(), len);
            },
        }
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
                block.fill((i as u8).wrapping_add(1));
            }
            for i in 0..count {
                assert!(arena.block_mut(i).iter().all(|&b| b == (i as u8).wrapping_add(1)));
            }
        }
    }

    #[test]
    fn pre_paging_keeps_what_blocks_hold() {
        let (count, block_size) = (1024, 8192);
        let mut arena = Arena::new(count, block_size);
        arena.block_mut(3).fill(9);
        arena.pre_page();
        for i in (0..count).step_by(97) {
            arena.block_mut(i).fill(i as u8);
        }
        // Blocks written while the pager runs keep their bytes, others stay zero.
        for i in 0..count {
            let expected = if i % 97 == 0 {
                i as u8
            } else if i == 3 {
                9
            } else {
                0
            };
            assert!(arena.block_mut(i).iter().all(|&b| b == expected), "block {i}");
        }
        drop(arena);
    }
}
