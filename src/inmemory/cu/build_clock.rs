//! Where building column units spends its time, for population's phase statistics: a
//! per-thread clock that the builders add to and population takes once a unit.
//!
//! Two of a unit's build phases are timed where they happen, a column at a time (never
//! a row at a time, so the clock costs a few reads of the monotonic clock a column):
//! building dictionaries (hashing the keys, estimating and finding the distinct ones) and
//! compressing (storing the codes at the unit's packing: byte lanes, bit-packing,
//! run-length encoding). The rest of a build (domains, mapping values to codes, plain
//! keys, NULL bitmaps) is encoding, which population finds as what is left.
//!
//! Invariant: the clock only ever grows between takes, and a take starts it at zero; it
//! is per thread, so workers building units at once never mix their phases.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// What one thread spent on the timed build phases since it last took them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildPhases {
    /// Hashing keys, estimating and finding the distinct ones.
    pub dictionary: Duration,
    /// Storing codes at the unit's packing.
    pub compressing: Duration,
}

thread_local! {
    static CLOCK: Cell<BuildPhases> = const { Cell::new(BuildPhases { dictionary: Duration::ZERO, compressing: Duration::ZERO }) };
}

/// Adds `spent` to this thread's dictionary phase.
pub(super) fn add_dictionary(spent: Duration) {
    CLOCK.with(|c| c.set(BuildPhases { dictionary: c.get().dictionary + spent, ..c.get() }));
}

/// Runs `compress` and adds its time to this thread's compressing phase.
#[inline]
pub(super) fn compressing<T>(compress: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = compress();
    let spent = started.elapsed();
    CLOCK.with(|c| c.set(BuildPhases { compressing: c.get().compressing + spent, ..c.get() }));
    out
}

/// This thread's build phases since the last take, and starts them again at zero.
pub fn take_build_phases() -> BuildPhases {
    CLOCK.with(|c| c.replace(BuildPhases::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up_per_thread_and_a_take_starts_again() {
        take_build_phases();
        add_dictionary(Duration::from_micros(5));
        add_dictionary(Duration::from_micros(7));
        let slept = compressing(|| {
            std::thread::sleep(Duration::from_millis(2));
            42
        });
        assert_eq!(slept, 42);
        let other = std::thread::spawn(take_build_phases).join().unwrap();
        assert_eq!(other, BuildPhases::default(), "another thread's clock is its own");
        let taken = take_build_phases();
        assert_eq!(taken.dictionary, Duration::from_micros(12));
        assert!(taken.compressing >= Duration::from_millis(2));
        assert_eq!(take_build_phases(), BuildPhases::default());
    }
}
