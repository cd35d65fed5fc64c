//! A buffer's header: the block it holds, its flags, and one atomic word that carries the
//! buffer's pins, its content lock and its claim together. A consistent get of a cached
//! block pins and share-locks its buffer with one atomic operation, and lets both go with
//! one more.
//!
//! ```text
//!  word (u64): 59 QUEUED | 58 CLAIMED | 57 PARKED | 56 EXCLUSIVE | 47..24 shared holders | 23..0 pins
//! ```
//!
//! - A *pin* keeps the buffer from being claimed (evicted or reused). Pins are taken under
//!   the latch of the buffer's chain, or without it by [`BufferHeader::try_pin_shared_as`],
//!   which checks what the buffer holds only once its pin is in.
//! - The *content lock*: shared holders read the bytes, the one exclusive holder writes
//!   them. A writer waits until no one shares the block; a session that sleeps for the
//!   lock either way is in `buffer busy waits` (once per get, from the moment it first
//!   sleeps; P1 and P2 name the block); a commit cleanout only tries it, and leaves a
//!   held block alone. Pins taken and let go beside the lock change the same word: a
//!   writer whose exchange they foil tries again while no one holds the lock, and one
//!   that finds the lock free after a short spin did not wait.
//! - QUEUED: a writer waits for the block's shared holders. New shared gets wait behind
//!   it (a latch-free one finds the bit in the word its one atomic operation returns and
//!   goes to the latch), so the holders drain and the writer gets in: readers that keep
//!   a hot block shared, one overlapping the next, cannot starve it.
//!
//!   A session may hold a block shared while it gets it again (a scan following a
//!   chained row into the next block it holds), and its second get would wait for a
//!   writer that waits for its first. So a writer that has waited [`ADMIT_AFTER`]
//!   without getting in *admits* the readers waiting behind it, and waits twice as long
//!   before it admits the next ones (up to [`MAX_ADMIT_AFTER`]): no reader waits behind
//!   a queued writer for good, and once the admissions are further apart than the
//!   readers' visits the writer gets in.
//!
//! ```text
//!  time ────────────────────────────────────────────────────────────────────►
//!  R1  ██ shared ████ gets it again: waits ┐ admitted ████ lets both go
//!  R2  ██ shared ██ lets go                │
//!  W        waits, sets QUEUED ────────────┴ 1 ms: admits ──── gets it ███
//!  R3            new get: waits ───────────┘ admitted ██
//!  R4                                        new get: waits for W ───────── ██
//! ```
//!
//! - CLAIMED: a session took the buffer from nothing (a word of 0) to one pin, its own,
//!   to give it a new identity; the bit stays until `rdba` and `state` say what the buffer
//!   holds now. A latch-free pin that finds it backs off.
//! - PARKED: a session sleeps for the content lock; whoever releases the lock wakes it
//!   (a waiting writer also wakes the readers it admits).
//!
//! Invariants:
//! - a claim succeeds only on a word of 0: while any pin is held, nobody changes the
//!   buffer's `rdba`, takes it out of its chain to reuse it, or reads a block into it;
//! - a claim ends with a release after `rdba` and `state` are set, and a latch-free pin
//!   is an acquire on the same word, so a pin that found no CLAIMED sees them;
//! - every shared holder and the exclusive holder hold a pin of their own as well;
//! - QUEUED is set only while no one holds the block exclusive, by a writer waiting for
//!   its shared holders, and cleared only by the writer that then takes it exclusive.

use super::{CR, IN_CHAIN, MAX_TOUCH, READING, VALID};
use crate::stats::{SessionStats, WaitEvent, WaitTimer};
use parking_lot_core::{DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN, ParkResult, UnparkToken};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const PIN: u64 = 1;
const PIN_MASK: u64 = (1 << 24) - 1;
const SHARED: u64 = 1 << 24;
const SHARED_MASK: u64 = PIN_MASK << 24;
const EXCLUSIVE: u64 = 1 << 56;
const PARKED: u64 = 1 << 57;
const CLAIMED: u64 = 1 << 58;
const QUEUED: u64 = 1 << 59;

/// How long a writer waits for a block's shared holders before it first admits the
/// readers waiting behind it (then twice as long each time, up to [`MAX_ADMIT_AFTER`]):
/// far longer than a block visit, so that readers are admitted only when a holder waits
/// for something itself.
const ADMIT_AFTER: Duration = Duration::from_millis(1);
/// The longest a reader waits behind a queued writer before it is admitted; readers
/// whose visits of one block overlap for longer than this can still keep a writer out.
const MAX_ADMIT_AFTER: Duration = Duration::from_millis(64);

/// Wakes the readers waiting behind a queued writer with leave to take the lock shared
/// while the writer still waits.
const ADMIT: UnparkToken = UnparkToken(1);

/// Looks at a held content lock this many times before sleeping on it: holders keep it
/// for the length of one block visit or change.
const SPINS: u32 = 64;

/// How a wait for the content lock ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waited {
    /// Woken, or never asleep: look at the word again.
    Retry,
    /// Woken by a queued writer that lets the readers waiting behind it in.
    Admitted,
    /// The deadline given passed.
    TimedOut,
}

/// The header of one buffer.
pub(super) struct BufferHeader {
    /// The block held; changed only by the session that claimed the buffer, under the
    /// latch of the chain it is (or will be) in.
    pub rdba: AtomicU32,
    /// Data object id of the block's segment, for invalidating a dropped object's blocks.
    pub object_id: AtomicU32,
    /// Clock replacement's usage count (racy updates are fine: it is a hint).
    pub touch: AtomicU8,
    /// VALID / READING / DIRTY / IN_CHAIN / CR / VERIFIED flags; CR changes only under
    /// the chain latch.
    pub state: AtomicU8,
    /// The buffer has never been claimed: its bytes are the zeros the arena was mapped
    /// with. The first claim clears it for good.
    pub zeroed: AtomicBool,
    /// Pins, content lock and claim (see the module documentation).
    word: AtomicU64,
}

impl BufferHeader {
    pub fn new() -> BufferHeader {
        BufferHeader {
            rdba: AtomicU32::new(0),
            object_id: AtomicU32::new(0),
            touch: AtomicU8::new(0),
            state: AtomicU8::new(0),
            zeroed: AtomicBool::new(true),
            word: AtomicU64::new(0),
        }
    }

    pub fn has(&self, flag: u8) -> bool {
        self.state.load(Ordering::Acquire) & flag != 0
    }

    /// Counts a use of the buffer for clock replacement (up to `MAX_TOUCH`).
    #[inline]
    pub fn touch_once(&self) {
        let touch = self.touch.load(Ordering::Relaxed);
        if touch < MAX_TOUCH {
            self.touch.store(touch + 1, Ordering::Relaxed);
        }
    }

    /// Pins held right now (a latch-free get that backs off holds one for a moment).
    pub fn pins(&self) -> u32 {
        (self.word.load(Ordering::Relaxed) & PIN_MASK) as u32
    }

    /// Takes a pin; the caller holds the latch of the buffer's chain.
    #[inline]
    pub fn pin(&self) {
        self.word.fetch_add(PIN, Ordering::Acquire);
    }

    /// Releases a pin that holds no lock.
    #[inline]
    pub fn unpin(&self) {
        self.word.fetch_sub(PIN, Ordering::Release);
    }

    /// Claims the buffer if no one holds it: one pin, ours, and CLAIMED until
    /// [`BufferHeader::end_claim`] or [`BufferHeader::unclaim`].
    pub fn try_claim(&self) -> bool {
        self.word.compare_exchange(0, CLAIMED | PIN, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Ends a claim once `rdba` and `state` say what the buffer holds; the pin stays.
    pub fn end_claim(&self) {
        self.word.fetch_and(!CLAIMED, Ordering::Release);
    }

    /// Ends a claim and lets the buffer go (it holds nothing, or is left free).
    pub fn unclaim(&self) {
        self.word.fetch_sub(CLAIMED | PIN, Ordering::Release);
    }

    /// Pins and share-locks the buffer without the chain latch if it holds the current
    /// version of `rdba`, valid and in its chain, and no one writes, waits to write or
    /// claims it. On `false` nothing is held and the caller looks the block up under the
    /// latch.
    #[inline]
    pub fn try_pin_shared_as(&self, rdba: u32) -> bool {
        let before = self.word.fetch_add(PIN | SHARED, Ordering::Acquire);
        if before & (EXCLUSIVE | CLAIMED | QUEUED) == 0
            && self.state.load(Ordering::Acquire) & (VALID | READING | IN_CHAIN | CR) == VALID | IN_CHAIN
            && self.rdba.load(Ordering::Relaxed) == rdba
        {
            return true;
        }
        self.unlock_shared_unpin();
        false
    }

    /// Takes the content lock shared; the caller holds a pin. Waits while a writer
    /// holds it, or waits for it until that writer admits the readers behind it.
    #[inline]
    pub fn lock_shared(&self, stats: &SessionStats) {
        if self.word.fetch_add(SHARED, Ordering::Acquire) & (EXCLUSIVE | QUEUED) != 0 {
            self.lock_shared_contended(stats);
        }
    }

    #[cold]
    fn lock_shared_contended(&self, stats: &SessionStats) {
        self.release(SHARED);
        let mut wait = None;
        let mut blocked_by = EXCLUSIVE | QUEUED;
        loop {
            let word = self.word.load(Ordering::Relaxed);
            if word & blocked_by == 0 {
                if self.word.compare_exchange_weak(word, word + SHARED, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    return;
                }
                continue;
            }
            if self.wait_while(|w| w & blocked_by != 0, None, || self.begin_busy_wait(stats), &mut wait)
                == Waited::Admitted
            {
                blocked_by = EXCLUSIVE;
            }
        }
    }

    /// Takes the content lock exclusive; the caller holds a pin. Waits until no one else
    /// holds it, queued ahead of new shared gets while it waits for the shared holders.
    /// Pins come and go beside the lock in the same word: while no one holds the lock, a
    /// failed exchange (a pin taken or let go meanwhile) is tried again, not waited for.
    pub fn lock_exclusive(&self, stats: &SessionStats) {
        let mut word = self.word.load(Ordering::Relaxed);
        while word & (EXCLUSIVE | SHARED_MASK) == 0 {
            match self.word.compare_exchange_weak(
                word,
                (word | EXCLUSIVE) & !QUEUED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(now) => word = now,
            }
        }
        self.lock_exclusive_contended(stats);
    }

    /// Takes the content lock exclusive only if no one holds it, waits for it or sleeps
    /// on it; the caller holds a pin. Never waits.
    pub fn try_lock_exclusive(&self) -> bool {
        let mut word = self.word.load(Ordering::Relaxed);
        while word & (EXCLUSIVE | SHARED_MASK | QUEUED | PARKED) == 0 {
            match self.word.compare_exchange_weak(word, word | EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => word = now,
            }
        }
        false
    }

    #[cold]
    fn lock_exclusive_contended(&self, stats: &SessionStats) {
        let mut wait = None;
        let mut patience = ADMIT_AFTER;
        let mut admit_at = Instant::now() + patience;
        loop {
            let word = self.word.load(Ordering::Relaxed);
            if word & (EXCLUSIVE | SHARED_MASK) == 0 {
                let locked = (word | EXCLUSIVE) & !QUEUED;
                if self.word.compare_exchange_weak(word, locked, Ordering::Acquire, Ordering::Relaxed).is_ok() {
                    return;
                }
                continue;
            }
            // Queue only behind shared holders: behind another writer, the readers
            // waiting for it have their turn when it lets go.
            if word & (EXCLUSIVE | QUEUED) == 0
                && self.word.compare_exchange_weak(word, word | QUEUED, Ordering::Relaxed, Ordering::Relaxed).is_err()
            {
                continue;
            }
            let blocked = |w| w & (EXCLUSIVE | SHARED_MASK) != 0;
            let begin = || self.begin_busy_wait(stats);
            if self.wait_while(blocked, Some(admit_at), begin, &mut wait) == Waited::TimedOut {
                self.wake(ADMIT);
                patience = (patience * 2).min(MAX_ADMIT_AFTER);
                admit_at = Instant::now() + patience;
            }
        }
    }

    /// Starts a session's `buffer busy waits` for this buffer's block, with Oracle's
    /// parameters: P1 the file, P2 the block (so ASH shows the block waited for), P3 the
    /// block's class, which lioscope does not record (0).
    fn begin_busy_wait<'s>(&self, stats: &'s SessionStats) -> WaitTimer<'s> {
        let parameters = super::block_wait_parameters(self.rdba.load(Ordering::Relaxed), 0);
        stats.begin_wait_with(WaitEvent::BufferBusyWaits, parameters)
    }

    /// Lets a shared lock and its pin go.
    #[inline]
    pub fn unlock_shared_unpin(&self) {
        let before = self.word.fetch_sub(SHARED | PIN, Ordering::Release);
        if before & PARKED != 0 && before & SHARED_MASK == SHARED {
            self.wake(DEFAULT_UNPARK_TOKEN);
        }
    }

    /// Lets the exclusive lock and its pin go.
    pub fn unlock_exclusive_unpin(&self) {
        self.release(EXCLUSIVE | PIN);
    }

    /// Lets the exclusive lock go, keeping the pin.
    pub fn unlock_exclusive(&self) {
        self.release(EXCLUSIVE);
    }

    /// Turns the exclusive lock into a shared one, letting no writer in between.
    pub fn downgrade(&self) {
        let before = self.word.fetch_add(SHARED.wrapping_sub(EXCLUSIVE), Ordering::Release);
        if before & PARKED != 0 {
            self.wake(DEFAULT_UNPARK_TOKEN);
        }
    }

    /// Subtracts `held` (bits the caller holds) and wakes sleepers, who look again.
    #[inline]
    fn release(&self, held: u64) {
        if self.word.fetch_sub(held, Ordering::Release) & PARKED != 0 {
            self.wake(DEFAULT_UNPARK_TOKEN);
        }
    }

    /// Wakes every session sleeping on the content lock, with `token`
    /// (`DEFAULT_UNPARK_TOKEN`, or `ADMIT` from a queued writer).
    #[cold]
    fn wake(&self, token: UnparkToken) {
        self.word.fetch_and(!PARKED, Ordering::Relaxed);
        // SAFETY: the key is this header's address, used only for its own waiters.
        unsafe { parking_lot_core::unpark_all(self.key(), token) };
    }

    /// Waits while `blocked(word)` holds: spins a little, then sleeps until a release
    /// wakes it, or until `until` if given. Returns for the caller to try again (it may
    /// have been woken for nothing), saying how the wait ended. The session's `buffer busy
    /// waits` starts (`begin` into `wait`, once per lock get) only when it goes to sleep:
    /// a lock that came free while it spun was not waited for.
    #[cold]
    fn wait_while<'s>(
        &self,
        blocked: impl Fn(u64) -> bool,
        until: Option<Instant>,
        begin: impl FnOnce() -> WaitTimer<'s>,
        wait: &mut Option<WaitTimer<'s>>,
    ) -> Waited {
        for _ in 0..SPINS {
            if !blocked(self.word.load(Ordering::Relaxed)) {
                return Waited::Retry;
            }
            std::hint::spin_loop();
        }
        if until.is_some_and(|until| Instant::now() >= until) {
            return Waited::TimedOut;
        }
        let word = self.word.load(Ordering::Relaxed);
        if !blocked(word) {
            return Waited::Retry;
        }
        if word & PARKED == 0
            && self.word.compare_exchange(word, word | PARKED, Ordering::Relaxed, Ordering::Relaxed).is_err()
        {
            return Waited::Retry;
        }
        wait.get_or_insert_with(begin);
        let validate = || {
            let word = self.word.load(Ordering::Relaxed);
            word & PARKED != 0 && blocked(word)
        };
        // SAFETY: the key is this header's address; `validate` and the no-op callbacks
        // neither panic nor park.
        match unsafe { parking_lot_core::park(self.key(), validate, || {}, |_, _| {}, DEFAULT_PARK_TOKEN, until) } {
            ParkResult::Unparked(ADMIT) => Waited::Admitted,
            ParkResult::TimedOut => Waited::TimedOut,
            ParkResult::Unparked(_) | ParkResult::Invalid => Waited::Retry,
        }
    }

    fn key(&self) -> usize {
        (&raw const self.word) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;

    fn current(rdba: u32) -> BufferHeader {
        let h = BufferHeader::new();
        h.rdba.store(rdba, Ordering::Relaxed);
        h.state.store(VALID | IN_CHAIN, Ordering::Relaxed);
        h
    }

    #[test]
    fn a_latch_free_pin_takes_only_the_current_valid_version_it_asked_for() {
        let h = current(7);
        assert!(h.try_pin_shared_as(7));
        assert_eq!(h.pins(), 1);
        h.unlock_shared_unpin();
        assert!(!h.try_pin_shared_as(8), "another block");
        for state in [VALID | IN_CHAIN | CR, VALID | IN_CHAIN | READING, VALID, IN_CHAIN] {
            h.state.store(state, Ordering::Relaxed);
            assert!(!h.try_pin_shared_as(7), "state {state:#b}");
        }
        assert_eq!(h.word.load(Ordering::Relaxed), 0, "every refusal lets its pin go");
    }

    #[test]
    fn a_claim_needs_an_idle_buffer_and_keeps_latch_free_pins_out_until_it_ends() {
        let h = current(7);
        h.pin();
        assert!(!h.try_claim(), "pinned");
        h.unpin();
        assert!(h.try_claim());
        assert!(!h.try_pin_shared_as(7), "claimed");
        h.end_claim();
        assert!(h.try_pin_shared_as(7));
        h.unlock_shared_unpin();
        h.unpin();
        assert!(h.try_claim());
        h.unclaim();
        assert_eq!(h.word.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_writer_keeps_latch_free_readers_out_and_a_downgrade_lets_them_in() {
        let h = current(7);
        h.pin();
        h.lock_exclusive(&SessionStats::default());
        assert!(!h.try_pin_shared_as(7));
        h.downgrade();
        assert!(h.try_pin_shared_as(7));
        h.unlock_shared_unpin();
        h.unlock_shared_unpin();
        assert_eq!(h.word.load(Ordering::Relaxed), 0);
    }

    /// A writer waiting for a reader sets QUEUED: latch-free gets back off, and a shared
    /// get waits behind the writer until the writer admits it, so that the reader taking
    /// the block again (which the writer waits for) gets it. Both waits are `buffer busy
    /// waits`.
    #[test]
    fn a_queued_writer_turns_new_readers_away_until_it_admits_those_waiting() {
        let h = Arc::new(current(7));
        let reader = SessionStats::default();
        h.pin();
        h.lock_shared(&reader);
        let writer = {
            let h = Arc::clone(&h);
            std::thread::spawn(move || {
                let stats = SessionStats::default();
                h.pin();
                h.lock_exclusive(&stats);
                h.unlock_exclusive_unpin();
                stats.event(WaitEvent::BufferBusyWaits).waits
            })
        };
        let queued = Instant::now();
        while h.word.load(Ordering::Relaxed) & QUEUED == 0 {
            assert!(queued.elapsed() < Duration::from_secs(10), "the writer never queued");
            std::thread::yield_now();
        }
        assert!(!h.try_pin_shared_as(7), "a latch-free get backs off behind a queued writer");
        h.pin();
        h.lock_shared(&reader);
        assert_eq!(reader.event(WaitEvent::BufferBusyWaits).waits, 1, "the second get waited, and was admitted");
        assert_eq!(h.word.load(Ordering::Relaxed) & EXCLUSIVE, 0, "the writer still waits");
        h.unlock_shared_unpin();
        h.unlock_shared_unpin();
        assert_eq!(writer.join().unwrap(), 1, "the writer waited once");
        assert_eq!(h.word.load(Ordering::Relaxed) & !PARKED, 0, "every pin and lock let go");
    }

    /// A session waiting for a block's content lock shows the block in its wait's
    /// parameters (P1 file, P2 block), as ASH and `v$session` read them.
    #[test]
    fn a_busy_wait_names_the_block_waited_for() {
        let rdba = crate::storage::block::rdba(3, 4242);
        let h = current(rdba);
        let holder = SessionStats::default();
        h.pin();
        h.lock_exclusive(&holder);
        let waiter = SessionStats::default();
        let reading = std::thread::scope(|s| {
            s.spawn(|| {
                h.pin();
                h.lock_exclusive(&waiter);
                h.unlock_exclusive_unpin();
            });
            let started = Instant::now();
            let reading = loop {
                match waiter.activity().read() {
                    Some(r) if r.state.wait_event() == Some(WaitEvent::BufferBusyWaits) => break Some(r),
                    _ if started.elapsed() > Duration::from_secs(10) => break None,
                    _ => std::thread::yield_now(),
                }
            };
            // Let the waiter in before judging, so that a failure cannot leave it waiting.
            h.unlock_exclusive_unpin();
            reading
        });
        let reading = reading.expect("the waiter slept on the lock");
        assert_eq!(reading.wait.map(|w| w.p), Some([3, 4242, 0]));
        assert_eq!(waiter.event(WaitEvent::BufferBusyWaits).waits, 1);
    }

    /// Pins taken and let go by another thread change the word a writer exchanges, but
    /// hold no lock: the writer tries again and never waits. The writer goes on until the
    /// pinner has pinned a million times beside it (on a busy machine the two threads
    /// may seldom run at once), bounded by a number of rounds.
    #[test]
    fn pins_beside_a_writer_are_not_buffer_busy_waits() {
        let h = Arc::new(current(7));
        let stop = Arc::new(AtomicBool::new(false));
        let pins = Arc::new(AtomicUsize::new(0));
        let pinner = {
            let (h, stop, pins) = (Arc::clone(&h), Arc::clone(&stop), Arc::clone(&pins));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    h.pin();
                    h.unpin();
                    pins.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let writer = SessionStats::default();
        h.pin();
        let from = pins.load(Ordering::Relaxed);
        for round in 0..20_000_000 {
            h.lock_exclusive(&writer);
            h.unlock_exclusive();
            if round % 1024 == 0 && pins.load(Ordering::Relaxed) - from >= 1_000_000 {
                break;
            }
        }
        h.unpin();
        stop.store(true, Ordering::Relaxed);
        pinner.join().unwrap();
        assert_eq!(writer.event(WaitEvent::BufferBusyWaits).waits, 0, "no one held the lock the writer took");
        assert_eq!(h.word.load(Ordering::Relaxed), 0, "every pin let go");
    }

    /// A holder that keeps the lock makes a writer sleep: one wait, however long.
    #[test]
    fn a_writer_behind_a_holder_waits_once() {
        let h = Arc::new(current(7));
        h.pin();
        h.lock_exclusive(&SessionStats::default());
        let writer = {
            let h = Arc::clone(&h);
            std::thread::spawn(move || {
                let stats = SessionStats::default();
                h.pin();
                h.lock_exclusive(&stats);
                h.unlock_exclusive_unpin();
                stats.event(WaitEvent::BufferBusyWaits).waits
            })
        };
        let parked = Instant::now();
        while h.word.load(Ordering::Relaxed) & PARKED == 0 {
            assert!(parked.elapsed() < Duration::from_secs(10), "the writer never slept");
            std::thread::yield_now();
        }
        h.unlock_exclusive_unpin();
        assert_eq!(writer.join().unwrap(), 1, "the writer waited once");
        assert_eq!(h.word.load(Ordering::Relaxed) & !PARKED, 0, "every pin and lock let go");
    }

    #[test]
    fn writers_and_readers_exclude_each_other_across_threads() {
        let h = Arc::new(current(7));
        let inside = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let (h, inside) = (Arc::clone(&h), Arc::clone(&inside));
                std::thread::spawn(move || {
                    for i in 0..20_000 {
                        if (t + i) % 4 == 0 {
                            h.pin();
                            h.lock_exclusive(&SessionStats::default());
                            assert_eq!(inside.swap(usize::MAX, Ordering::SeqCst), 0, "a writer among others");
                            inside.store(0, Ordering::SeqCst);
                            h.unlock_exclusive_unpin();
                        } else if h.try_pin_shared_as(7) || {
                            h.pin();
                            h.lock_shared(&SessionStats::default());
                            true
                        } {
                            assert_ne!(inside.fetch_add(1, Ordering::SeqCst), usize::MAX, "a reader beside a writer");
                            inside.fetch_sub(1, Ordering::SeqCst);
                            h.unlock_shared_unpin();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(h.word.load(Ordering::Relaxed) & !PARKED, 0, "every pin and lock let go");
    }
}
