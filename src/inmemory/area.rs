//! The In-Memory Area: the memory the column store keeps its large arrays in (the codes
//! of every column unit, and the keys of plain key units), reserved by `inmemory_size`
//! as Oracle reserves its In-Memory Area with the SGA.
//!
//! The area is one anonymous mapping (the buffer cache's [`Arena`]: on 2 MiB huge pages
//! where the kernel gives them, pre-paged in the background when `pre_page_sga` is TRUE),
//! cut into 64 KiB extents. An array takes a run of extents, first fit, and gives it back
//! when its unit is dropped; free runs are merged with their neighbours. Memory a
//! population frees is so taken again by the next one without a page fault, where the
//! heap would hand fresh pages from the kernel, 4 KiB at a time; on a virtual machine
//! whose host takes back the memory the guest frees, each such fault also waits for the
//! host to back the page again.
//!
//! ```text
//!   mapping (inmemory_size, 2 MiB aligned)
//!   [ext 0][ext 1][ext 2][ext 3][ext 4][ext 5][ext 6] …    64 KiB each
//!   └─ CUST_ID codes ─┘└ free ┘└── CUST_EMAIL keys ──┘     free runs: {3: 1, 7: …}
//! ```
//!
//! An array under [`MIN_AREA_BYTES`] stays on the heap (a run of one 64 KiB extent would
//! waste most of it), and so does one that finds no free run long enough; the area counts
//! the bytes it could not place ([`AreaFigures::fallback_bytes`]), so a user sees when it
//! is too small or too cut up.
//!
//! Invariants: every extent is in exactly one of the free runs or one live [`Stored`]
//! array; free runs are disjoint, never adjacent, and inside the area. An array's memory
//! is written only while it is built, by the thread building it, before anyone else can
//! see it; after that it is read only. The mapping lives as long as the area or any
//! array in it (each holds the area's `Arc`), so a resized area goes away only when the
//! last unit populated in it is dropped.

use crate::buffer::{Arena, PrePageState};
use crate::error::{Error, Result};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of one extent.
pub const EXTENT: usize = 64 << 10;
/// Arrays smaller than this stay on the heap.
pub const MIN_AREA_BYTES: usize = 16 << 10;

/// A handle on the In-Memory Area (cheap to clone: every clone is the same area).
#[derive(Clone)]
pub struct InMemoryArea {
    memory: Arc<AreaMemory>,
}

struct AreaMemory {
    arena: Arena,
    extents: u32,
    /// Free runs of extents: first extent → length.
    free: Mutex<BTreeMap<u32, u32>>,
    /// Extents held by arrays.
    used_extents: AtomicU64,
    /// Bytes of arrays that asked for room and were put on the heap instead.
    fallback_bytes: AtomicU64,
    /// Replaced by an area of another size: no new arrays, and the pages of every
    /// extent given back go back to the kernel.
    retired: std::sync::atomic::AtomicBool,
}

/// What `v$inmemory_area` shows of an area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AreaFigures {
    /// Bytes of the mapping: `inmemory_size` in whole extents.
    pub alloc_bytes: u64,
    /// Bytes of the extents arrays hold.
    pub used_bytes: u64,
    /// Free runs of extents (one when nothing is cut up).
    pub free_runs: u64,
    /// Bytes of arrays that found no free run long enough and went to the heap, since
    /// the area was made.
    pub fallback_bytes: u64,
    /// Whether the area's pages are being populated ahead of use (`pre_page_sga`).
    pub pre_page: PrePageState,
}

impl InMemoryArea {
    /// The size of an area asked to be `bytes`: whole extents, at least one.
    pub fn whole_extents(bytes: u64) -> u64 {
        u64::from(Self::extents_for(bytes)) * EXTENT as u64
    }

    fn extents_for(bytes: u64) -> u32 {
        u32::try_from(bytes / EXTENT as u64).unwrap_or(u32::MAX).max(1)
    }

    /// An area of `bytes` (rounded down to whole extents, at least one), pre-paged in the
    /// background when `pre_page` is set. Refused when it is larger than the machine's
    /// physical memory (pre-paging it would have the kernel kill the process) or the
    /// kernel will not map it.
    pub fn new(bytes: u64, pre_page: bool) -> Result<InMemoryArea> {
        let refused = |message: String| Error::InvalidParameter { name: "inmemory_size".into(), message };
        if let Some(physical) = crate::stats::osstat::physical_memory_bytes().filter(|&p| bytes > p) {
            return Err(refused(format!(
                "{bytes} bytes is more than this machine's physical memory ({physical} bytes)"
            )));
        }
        let extents = Self::extents_for(bytes);
        let mut arena = Arena::try_new(extents as usize, EXTENT)
            .ok_or_else(|| refused(format!("the kernel refused to map {bytes} bytes for the In-Memory Area")))?;
        if pre_page {
            arena.pre_page();
        }
        Ok(InMemoryArea {
            memory: Arc::new(AreaMemory {
                arena,
                extents,
                free: Mutex::new(BTreeMap::from([(0, extents)])),
                used_extents: AtomicU64::new(0),
                fallback_bytes: AtomicU64::new(0),
                retired: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    /// Retires the area when an area of another size replaces it: its pre-paging stops,
    /// the pages of its free extents go back to the kernel now, and those of the arrays
    /// still in it as each is dropped. Only the units populated in it keep memory.
    pub fn retire(&self) {
        let m = &self.memory;
        m.retired.store(true, Ordering::Release);
        m.arena.stop_pre_paging();
        let free = m.free.lock();
        for (&first, &count) in free.iter() {
            m.arena.release_blocks(first as usize, count as usize);
        }
    }

    /// Bytes of the mapping.
    pub fn size(&self) -> u64 {
        u64::from(self.memory.extents) * EXTENT as u64
    }

    pub fn figures(&self) -> AreaFigures {
        let m = &self.memory;
        AreaFigures {
            alloc_bytes: self.size(),
            used_bytes: m.used_extents.load(Ordering::Relaxed) * EXTENT as u64,
            free_runs: m.free.lock().len() as u64,
            fallback_bytes: m.fallback_bytes.load(Ordering::Relaxed),
            pre_page: m.arena.pre_page_state(),
        }
    }

    /// A run of extents for `bytes`, or `None` (counted as a fallback) when no free run
    /// is long enough.
    fn take(&self, bytes: usize) -> Option<(u32, u32)> {
        if self.memory.retired.load(Ordering::Acquire) {
            return None;
        }
        let count = u32::try_from(bytes.div_ceil(EXTENT)).ok()?;
        let mut free = self.memory.free.lock();
        let found = free.iter().find(|&(_, &len)| len >= count).map(|(&first, &len)| (first, len));
        let Some((first, len)) = found else {
            drop(free);
            self.memory.fallback_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
            return None;
        };
        free.remove(&first);
        if len > count {
            free.insert(first + count, len - count);
        }
        drop(free);
        self.memory.used_extents.fetch_add(u64::from(count), Ordering::Relaxed);
        Some((first, count))
    }
}

impl AreaMemory {
    /// Gives back a run of extents taken by [`InMemoryArea::take`], merged with the free
    /// runs either side of it.
    fn give_back(&self, first: u32, count: u32) {
        let mut free = self.free.lock();
        if self.retired.load(Ordering::Acquire) {
            self.arena.release_blocks(first as usize, count as usize);
        }
        let mut start = first;
        let mut len = count;
        if let Some((&before, &before_len)) = free.range(..first).next_back()
            && before + before_len == first
        {
            free.remove(&before);
            start = before;
            len += before_len;
        }
        if let Some(after_len) = free.remove(&(first + count)) {
            len += after_len;
        }
        debug_assert!(start + len <= self.extents, "a free run stays inside the area");
        free.insert(start, len);
        drop(free);
        self.used_extents.fetch_sub(u64::from(count), Ordering::Relaxed);
    }
}

impl fmt::Debug for InMemoryArea {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryArea").field("figures", &self.figures()).finish()
    }
}

/// An immutable array of plain values (codes, offsets, key bytes), in the area or on the
/// heap. It derefs to a slice either way.
pub enum Stored<T: Copy + 'static> {
    Heap(Vec<T>),
    Area(AreaSlice<T>),
}

/// An array in a run of the area's extents, given back when dropped.
pub struct AreaSlice<T> {
    ptr: NonNull<T>,
    len: usize,
    first: u32,
    count: u32,
    memory: Arc<AreaMemory>,
}

// SAFETY: the slice owns its extents alone and is read only once built; `T` is plain
// data shared as `&[T]`.
unsafe impl<T: Send + Sync> Send for AreaSlice<T> {}
// SAFETY: as above.
unsafe impl<T: Send + Sync> Sync for AreaSlice<T> {}

impl<T> AreaSlice<T> {
    /// An empty slice with room for `len` values in a run of `area`'s extents; `None` when
    /// there is no area, the array is under [`MIN_AREA_BYTES`], or no run is free.
    fn take(area: Option<&InMemoryArea>, len: usize) -> Option<AreaSlice<T>> {
        const { assert!(align_of::<T>() <= crate::buffer::BLOCK_ALIGN, "extents are aligned to BLOCK_ALIGN") };
        let bytes = len.checked_mul(size_of::<T>())?;
        let area = area.filter(|_| bytes >= MIN_AREA_BYTES)?;
        let (first, count) = area.take(bytes)?;
        let memory = Arc::clone(&area.memory);
        // Extents are 64 KiB aligned, so any `T` of these arrays is aligned.
        let ptr = NonNull::new(memory.arena.block_ptr(first as usize).cast::<T>()).expect("area memory is not null");
        Some(AreaSlice { ptr, len: 0, first, count, memory })
    }
}

impl<T> Drop for AreaSlice<T> {
    fn drop(&mut self) {
        self.memory.give_back(self.first, self.count);
    }
}

impl<T: Copy + 'static> Stored<T> {
    /// The values of `values`: in `area` when given and the array is large enough and
    /// finds room, else on the heap.
    pub fn collect_in(area: Option<&InMemoryArea>, values: impl ExactSizeIterator<Item = T>) -> Stored<T> {
        let len = values.len();
        let Some(mut slice) = AreaSlice::<T>::take(area, len) else { return Stored::Heap(values.collect()) };
        // Filled after it is made, so that a panic in `values` gives the extents back.
        for value in values.take(len) {
            // SAFETY: the run holds room for `len` values (see `AreaSlice::take`), and no
            // one else can reach it until the slice is returned.
            unsafe { slice.ptr.as_ptr().add(slice.len).write(value) };
            slice.len += 1;
        }
        Stored::Area(slice)
    }

    /// A copy of `values`, placed as [`Stored::collect_in`] places it.
    pub fn copy_of(area: Option<&InMemoryArea>, values: &[T]) -> Stored<T> {
        let Some(mut slice) = AreaSlice::<T>::take(area, values.len()) else { return Stored::Heap(values.to_vec()) };
        // SAFETY: the run holds room for `values.len()` values and is no one else's; the
        // two ranges cannot overlap (the area is not reachable from `values` until now).
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), slice.ptr.as_ptr(), values.len()) };
        slice.len = values.len();
        Stored::Area(slice)
    }

    /// `len` values, all zero (`T::default()`) until `fill` writes them, placed as
    /// [`Stored::collect_in`] places them.
    pub fn zeroed_in(area: Option<&InMemoryArea>, len: usize, fill: impl FnOnce(&mut [T])) -> Stored<T>
    where
        T: Default,
    {
        let Some(mut slice) = AreaSlice::<T>::take(area, len) else {
            let mut values = vec![T::default(); len];
            fill(&mut values);
            return Stored::Heap(values);
        };
        for i in 0..len {
            // SAFETY: the run holds room for `len` values and is no one else's.
            unsafe { slice.ptr.as_ptr().add(i).write(T::default()) };
        }
        slice.len = len;
        // SAFETY: `len` values were just written; the slice is ours alone until returned.
        fill(unsafe { std::slice::from_raw_parts_mut(slice.ptr.as_ptr(), len) });
        Stored::Area(slice)
    }

    #[cfg(test)]
    /// Whether the array is in the area.
    pub fn in_area(&self) -> bool {
        matches!(self, Stored::Area(_))
    }
}

impl<T: Copy + 'static> Deref for Stored<T> {
    type Target = [T];

    #[inline]
    fn deref(&self) -> &[T] {
        match self {
            Stored::Heap(values) => values,
            // SAFETY: `len` values were written when the slice was built; the run stays
            // the slice's until it is dropped.
            Stored::Area(slice) => unsafe { std::slice::from_raw_parts(slice.ptr.as_ptr(), slice.len) },
        }
    }
}

impl<T: Copy + 'static> From<Vec<T>> for Stored<T> {
    fn from(values: Vec<T>) -> Stored<T> {
        Stored::Heap(values)
    }
}

impl<T: Copy + 'static> Clone for Stored<T> {
    /// A copy on the heap (units are cloned only by tests and views).
    fn clone(&self) -> Stored<T> {
        Stored::Heap(self.to_vec())
    }
}

impl<T: Copy + fmt::Debug + 'static> fmt::Debug for Stored<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Copy + PartialEq + 'static> PartialEq for Stored<T> {
    fn eq(&self, other: &Stored<T>) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn free_runs(area: &InMemoryArea) -> Vec<(u32, u32)> {
        area.memory.free.lock().iter().map(|(&f, &l)| (f, l)).collect()
    }

    #[test]
    fn small_arrays_stay_on_the_heap_and_large_ones_take_whole_extents() {
        let area = InMemoryArea::new(8 * EXTENT as u64, false).unwrap();
        let small = Stored::collect_in(Some(&area), (0..100).map(|i| i as u32));
        assert!(!small.in_area());
        let large = Stored::collect_in(Some(&area), (0..EXTENT / 4 + 1).map(|i| i as u32));
        assert!(large.in_area());
        assert_eq!(large.len(), EXTENT / 4 + 1);
        assert!(large.iter().enumerate().all(|(i, &v)| v == i as u32));
        assert_eq!(area.figures().used_bytes, 2 * EXTENT as u64, "one extent and four bytes take two");
        drop(large);
        assert_eq!(area.figures().used_bytes, 0);
        assert_eq!(free_runs(&area), vec![(0, 8)]);
    }

    #[test]
    fn an_array_that_finds_no_room_goes_to_the_heap_and_is_counted() {
        let area = InMemoryArea::new(2 * EXTENT as u64, false).unwrap();
        let fits = Stored::collect_in(Some(&area), (0..EXTENT).map(|i| i as u8));
        let too_big = Stored::copy_of(Some(&area), &(0..2 * EXTENT).map(|i| i as u8).collect::<Vec<_>>());
        assert!(fits.in_area() && !too_big.in_area());
        assert_eq!(too_big[2 * EXTENT - 1], (2 * EXTENT - 1) as u8);
        assert_eq!(area.figures().fallback_bytes, 2 * EXTENT as u64);
    }

    #[test]
    fn a_panic_while_filling_gives_the_extents_back() {
        let area = InMemoryArea::new(4 * EXTENT as u64, false).unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Stored::collect_in(Some(&area), (0..EXTENT).map(|i| if i == 1000 { panic!("value 1000") } else { i as u8 }))
        }));
        assert!(result.is_err());
        assert_eq!(area.figures().used_bytes, 0);
        assert_eq!(free_runs(&area), vec![(0, 4)]);
    }

    #[test]
    fn arrays_outlive_their_area_handle() {
        let area = InMemoryArea::new(4 * EXTENT as u64, true).unwrap();
        let kept = Stored::collect_in(Some(&area), (0..EXTENT / 8).map(|i| i as u64 * 3));
        drop(area);
        assert_eq!(kept[EXTENT / 8 - 1], (EXTENT / 8 - 1) as u64 * 3);
    }

    /// A retired area places no new array, and its extents come back to the free runs
    /// (their pages to the kernel) as before; the arrays in it keep their values.
    #[test]
    fn a_retired_area_takes_no_new_array_and_keeps_the_old_ones() {
        let area = InMemoryArea::new(8 * EXTENT as u64, true).unwrap();
        let kept = Stored::collect_in(Some(&area), (0..2 * EXTENT).map(|i| (i % 251) as u8));
        area.retire();
        let after = Stored::collect_in(Some(&area), (0..EXTENT).map(|i| i as u8));
        assert!(kept.in_area() && !after.in_area());
        assert!(kept.iter().enumerate().all(|(i, &v)| v == (i % 251) as u8));
        drop(kept);
        assert_eq!(area.figures().used_bytes, 0);
        assert_eq!(free_runs(&area), vec![(0, 8)]);
    }

    proptest! {
        /// Any order of takes and drops: every live array keeps its values, arrays never
        /// share an extent, and once all are dropped the area is one free run again.
        #[test]
        fn extents_are_never_shared_and_free_runs_merge(
            ops in proptest::collection::vec((any::<bool>(), 1usize..5 * EXTENT, any::<u8>()), 1..60),
        ) {
            let area = InMemoryArea::new(32 * EXTENT as u64, false).unwrap();
            let mut live: Vec<(Stored<u8>, u8)> = Vec::new();
            for (keep, len, fill) in ops {
                if !keep && !live.is_empty() {
                    live.swap_remove(fill as usize % live.len());
                }
                let array = if keep { Stored::copy_of(Some(&area), &vec![fill; len]) } else { Stored::collect_in(Some(&area), (0..len).map(|_| fill)) };
                live.push((array, fill));
                for (array, fill) in &live {
                    prop_assert!(array.iter().all(|v| v == fill));
                }
                let used: u64 = live
                    .iter()
                    .filter_map(|(a, _)| match a { Stored::Area(s) => Some(u64::from(s.count)), Stored::Heap(_) => None })
                    .sum();
                prop_assert_eq!(area.figures().used_bytes, used * EXTENT as u64);
                let runs = free_runs(&area);
                for pair in runs.windows(2) {
                    prop_assert!(pair[0].0 + pair[0].1 < pair[1].0, "runs {:?} overlap or touch", runs);
                }
            }
            drop(live);
            prop_assert_eq!(free_runs(&area), vec![(0, 32)]);
        }
    }
}
