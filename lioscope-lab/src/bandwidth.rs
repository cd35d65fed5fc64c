//! The one-core memory read bandwidth probe: how many bytes a second one core of this
//! machine reads from memory when it does nothing else, so that a scan's own bytes a
//! second can be read as a fraction of what the machine can give it ("how close is
//! this scan to what the machine can do?").
//!
//! The probe sums an array far larger than the caches, 64-bit words in eight
//! independent accumulators (so the sum is bound by the loads, not by one chain of
//! additions; the compiler vectorises it), on the calling thread, after one pass that
//! writes every page so none is left to fault in. Each timed pass is one sample; the
//! report carries them all with their spread, so the fraction's own noise is visible.
//! The array is freed before the probe returns.

use super::stats::{Spread, spread};
use std::time::Instant;

/// The array's default size: far past any last-level cache.
pub const DEFAULT_BYTES: usize = 1 << 30;

/// What the probe measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BandwidthProbe {
    /// The array's size.
    pub bytes: usize,
    /// Each timed pass's bytes a second, in GB (10^9 bytes) a second.
    pub samples_gb_per_s: Vec<f64>,
    /// Median, min and max of the samples.
    pub gb_per_s: Spread,
    /// How the figure is made.
    pub method: &'static str,
}

/// How [`probe`] measures, for the report.
pub const METHOD: &str = "one thread sums an array of `bytes` bytes as 64-bit words in eight independent \
     accumulators after writing every page once; each timed pass is bytes / wall-clock seconds";

/// The probe's array, written once: each [`ProbeArray::pass`] reads it all.
pub struct ProbeArray {
    words: Vec<u64>,
}

impl ProbeArray {
    /// An array of about `bytes` bytes (at least one 64-byte line), every page written.
    pub fn new(bytes: usize) -> ProbeArray {
        let words = (bytes / 8).next_multiple_of(8).max(8);
        ProbeArray { words: (0..words as u64).collect() }
    }

    /// Its size in bytes.
    pub fn bytes(&self) -> usize {
        self.words.len() * 8
    }

    /// One timed pass: the GB a second it read.
    pub fn pass(&self) -> f64 {
        let started = Instant::now();
        std::hint::black_box(sum(std::hint::black_box(&self.words)));
        self.bytes() as f64 / started.elapsed().as_secs_f64().max(1e-9) / 1e9
    }

    /// The report of the passes taken (`samples`, not empty).
    pub fn report(&self, samples: Vec<f64>) -> BandwidthProbe {
        BandwidthProbe {
            bytes: self.bytes(),
            gb_per_s: spread(samples.clone()),
            samples_gb_per_s: samples,
            method: METHOD,
        }
    }
}

/// Runs `passes` (at least 1) timed passes over an array of about `bytes` bytes.
pub fn probe(bytes: usize, passes: usize) -> BandwidthProbe {
    let array = ProbeArray::new(bytes);
    let samples = (0..passes.max(1)).map(|_| array.pass()).collect();
    array.report(samples)
}

/// The wrapping sum of `words`, in eight lanes so that no addition waits for the one
/// before it.
#[inline(never)]
fn sum(words: &[u64]) -> u64 {
    let mut lanes = [0u64; 8];
    for chunk in words.chunks_exact(8) {
        for (lane, word) in lanes.iter_mut().zip(chunk) {
            *lane = lane.wrapping_add(*word);
        }
    }
    let rest: u64 = words.chunks_exact(8).remainder().iter().fold(0, |a, w| a.wrapping_add(*w));
    lanes.iter().fold(rest, |a, l| a.wrapping_add(*l))
}

/// The probe's option, shared by the experiments that run it (`lab scan`, `lab mbrc`,
/// `lab lio`).
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ProbeOptions {
    /// MiB of the one-core memory read bandwidth probe's array (far past the caches),
    /// read once before each measurement: each one's bytes a second are reported as a
    /// fraction of the passes' median.
    #[arg(long = "probe-mib", default_value_t = DEFAULT_BYTES >> 20)]
    pub mib: usize,
}

impl ProbeOptions {
    /// The probe's array, written once.
    pub fn array(&self) -> ProbeArray {
        ProbeArray::new(self.mib.max(1) << 20)
    }
}

impl BandwidthProbe {
    /// `gb_per_s` as a fraction of the probe's median (`None` without a figure).
    pub fn fraction(&self, gb_per_s: Option<f64>) -> Option<f64> {
        gb_per_s.map(|gb| gb / self.gb_per_s.median.max(f64::MIN_POSITIVE))
    }

    /// The probe as a sentence: its median and spread over its passes, and the
    /// fraction's derivation.
    pub fn line(&self) -> String {
        format!(
            "memory bandwidth probe (one core): {:.2} GB/s median [{:.2}..{:.2}] over {} passes of {} MiB, one before \
             each measurement; bandwidth_fraction = read_gb_per_s / {:.2}",
            self.gb_per_s.median,
            self.gb_per_s.min,
            self.gb_per_s.max,
            self.samples_gb_per_s.len(),
            self.bytes >> 20,
            self.gb_per_s.median
        )
    }
}

/// The derivation of every experiment's `bandwidth_fraction`.
pub const FRACTION: &str = "read_gb_per_s / the median of the same run's one-core memory read bandwidth probe \
                            (bandwidth_probe in the report: one pass before each measurement)";

/// `read` bytes in `millis` milliseconds, in GB a second (`None` for no time).
pub fn gb_per_s(read: f64, millis: f64) -> Option<f64> {
    (millis > 0.0).then(|| read / 1e9 / (millis / 1000.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sum_is_every_word_added_once() {
        let words: Vec<u64> = (0..1003).map(|i| i * 7 + 1).collect();
        assert_eq!(sum(&words), words.iter().sum::<u64>());
        assert_eq!(sum(&[]), 0);
    }

    #[test]
    fn a_probe_reports_each_pass_and_their_spread() {
        let p = probe(1 << 20, 3);
        assert_eq!((p.bytes, p.samples_gb_per_s.len()), (1 << 20, 3));
        assert!(p.samples_gb_per_s.iter().all(|s| *s > 0.0 && s.is_finite()));
        assert!(p.gb_per_s.min <= p.gb_per_s.median && p.gb_per_s.median <= p.gb_per_s.max);
        assert_eq!(gb_per_s(2e9, 1000.0), Some(2.0));
        assert_eq!(gb_per_s(1.0, 0.0), None);
    }
}
