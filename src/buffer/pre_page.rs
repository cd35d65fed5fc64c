//! Pre-paging the buffer cache: a background thread that makes the kernel back the
//! cache's memory with real pages before the cache needs them (Oracle's PRE_PAGE_SGA).
//!
//! The cache's arena is an anonymous mapping, so the first write to each page faults,
//! and the kernel zeroes a fresh page (a 2 MiB huge page at once) under that write. A load
//! that fills new blocks would otherwise pay for zeroing every page of the cache it
//! reaches; the pre-pager pays instead, on another core, right after the database opens.
//!
//! ```text
//!   open ──► arena mapped ──► pager thread: [chunk 0][chunk 1][chunk 2] ... [last]
//!                │                              ▲ stop flag checked between chunks
//!                └─► Database::open returns at once; sessions use the cache meanwhile
//! ```
//!
//! The pages are populated by the kernel, never written from user space: with
//! `madvise(MADV_POPULATE_WRITE)` (Linux 5.14), else by locking and unlocking each chunk
//! (`mlock` populates a private writable mapping for writing; this needs a large enough
//! `RLIMIT_MEMLOCK`). Populating a page that is already present changes nothing, so the
//! pager needs no lock of the engine and cannot disturb a block a session is using.
//! Where neither call works, the pager gives up and the cache is populated by first touch,
//! as without it.
//!
//! Invariants: the thread touches only `[start, start + len)`, which its owner keeps mapped
//! until [`PrePager`] is dropped; dropping it sets the stop flag and joins the thread,
//! which ends after at most one more chunk.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Bytes populated by one call, between checks of the stop flag: small enough that
/// closing the database waits a few milliseconds at most, large enough that the calls
/// cost nothing next to the zeroing (and a multiple of the 2 MiB huge page).
pub const CHUNK: usize = 16 << 20;

/// A running pre-pager; dropping it stops the thread and waits for it.
pub struct PrePager {
    /// Set by the owner to end the thread early (the database is closing).
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PrePager {
    /// Starts populating `len` bytes from `start` in the background.
    ///
    /// # Safety
    /// `[start, start + len)` must be one private anonymous read-write mapping (or part of
    /// one) that stays mapped until the returned pager is dropped.
    pub unsafe fn start(start: *mut u8, len: usize) -> PrePager {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let address = start as usize;
        let thread = std::thread::Builder::new().name("lioscope-pre-page".into()).spawn(move || {
            // SAFETY: the caller keeps the range mapped until the pager is dropped, and
            // dropping it joins this thread first.
            unsafe { populate(address as *mut u8, len, &flag) };
        });
        // A thread that cannot be started leaves the cache to be populated by first touch.
        PrePager { stop, thread: thread.ok() }
    }

    /// Asks the thread to stop after the chunk it is on (it is not waited for).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Whether the thread has ended (done, stopped, or never started).
    pub fn finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

impl Drop for PrePager {
    fn drop(&mut self) {
        self.stop();
        if let Some(thread) = self.thread.take() {
            // The thread cannot panic short of a bug; its memory is released either way.
            let _ = thread.join();
        }
    }
}

/// How a chunk was populated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Madvise,
    Mlock,
}

/// Populates `[start, start + len)` chunk by chunk until done or `stop` is set; returns
/// the bytes populated.
///
/// # Safety
/// The range must be part of a private anonymous read-write mapping that stays mapped
/// while this runs.
pub unsafe fn populate(start: *mut u8, len: usize, stop: &AtomicBool) -> usize {
    let mut method = Method::Madvise;
    let mut done = 0;
    while done < len && !stop.load(Ordering::Relaxed) {
        let n = CHUNK.min(len - done);
        // SAFETY: `done + n <= len`, inside the range the caller vouches for.
        let chunk = unsafe { start.add(done) };
        let populated = loop {
            // SAFETY: as above; both methods only ask the kernel to back the chunk.
            if unsafe { populate_chunk(chunk, n, method) } {
                break true;
            }
            match method {
                // Before Linux 5.14 madvise does not know POPULATE_WRITE.
                Method::Madvise => method = Method::Mlock,
                Method::Mlock => break false,
            }
        };
        if !populated {
            break;
        }
        done += n;
    }
    done
}

/// Populates one chunk for writing; false if the kernel refuses this method.
///
/// # Safety
/// The chunk must lie inside a private anonymous read-write mapping.
unsafe fn populate_chunk(chunk: *mut u8, len: usize, method: Method) -> bool {
    match method {
        // SAFETY: the caller vouches for the range; POPULATE_WRITE faults pages in as a
        // write would, without changing the bytes of pages already present.
        Method::Madvise => unsafe { libc::madvise(chunk.cast(), len, libc::MADV_POPULATE_WRITE) == 0 },
        // SAFETY: as above; mlock faults in the pages of a private writable mapping for
        // writing, and munlock leaves them in place.
        Method::Mlock => unsafe {
            libc::mlock(chunk.cast(), len) == 0 && {
                libc::munlock(chunk.cast(), len);
                true
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An anonymous mapping of `len` bytes, unmapped on drop.
    struct Mapping {
        ptr: *mut u8,
        len: usize,
    }

    impl Mapping {
        fn new(len: usize) -> Mapping {
            // SAFETY: an anonymous private mapping; the result is checked.
            let raw = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(raw, libc::MAP_FAILED, "test mapping");
            Mapping { ptr: raw.cast(), len }
        }

        /// Pages of the mapping that are resident.
        fn resident_pages(&self) -> usize {
            let page = 4096;
            let mut vec = vec![0u8; self.len.div_ceil(page)];
            // SAFETY: the mapping is page-aligned and `vec` has one byte per page.
            let rc = unsafe { libc::mincore(self.ptr.cast(), self.len, vec.as_mut_ptr()) };
            assert_eq!(rc, 0, "mincore");
            vec.iter().filter(|&&b| b & 1 != 0).count()
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: mapped in `new`, unmapped once.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }

    #[test]
    fn populates_every_page_without_changing_bytes() {
        let len = CHUNK + 5 * 4096;
        let m = Mapping::new(len);
        // SAFETY: inside the mapping.
        unsafe { *m.ptr.add(4096) = 7 };
        // SAFETY: the mapping outlives the call.
        let done = unsafe { populate(m.ptr, len, &AtomicBool::new(false)) };
        assert_eq!(done, len);
        assert_eq!(m.resident_pages(), len / 4096);
        // SAFETY: inside the mapping, which is populated and zero but for the byte above.
        let bytes = unsafe { std::slice::from_raw_parts(m.ptr, len) };
        assert_eq!(bytes[4096], 7);
        assert_eq!(bytes.iter().map(|&b| usize::from(b)).sum::<usize>(), 7);
    }

    #[test]
    fn a_stopped_pager_populates_nothing_more() {
        let m = Mapping::new(2 * CHUNK);
        // SAFETY: the mapping outlives the call.
        let done = unsafe { populate(m.ptr, m.len, &AtomicBool::new(true)) };
        assert_eq!(done, 0);
        assert_eq!(m.resident_pages(), 0);
    }

    #[test]
    fn dropping_the_pager_waits_for_its_thread() {
        let m = Mapping::new(4 * CHUNK);
        // SAFETY: the mapping outlives the pager (dropped first, below).
        let pager = unsafe { PrePager::start(m.ptr, m.len) };
        drop(pager);
        let resident = m.resident_pages();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(m.resident_pages(), resident, "nothing is populated after the pager is dropped");
    }
}
