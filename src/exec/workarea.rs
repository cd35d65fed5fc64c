//! The work area a statement's memory-bound operators (the hash join's table) may fill,
//! sized as Oracle sizes a serial work area, and the temporary space they spill to
//! beyond it.
//!
//! - `workarea_size_policy = auto`: a work area may take 20% of `pga_aggregate_target`,
//!   and at most 1 GB (Oracle's bound for one serial work area under a target of up to
//!   500 MB, `_smm_max_size`, applied at every target).
//! - `workarea_size_policy = manual`: `hash_area_size` bytes.
//!
//! Invariant: an operator holds at most [`WorkArea::limit`] bytes of rows and buffers,
//! as it estimates them, or spills; a work area without temporary space never spills
//! and is unbounded.

use crate::storage::io::Io;
use std::path::Path;

/// The most memory one serial work area takes under the automatic policy.
pub const MAX_AUTO_BYTES: u64 = 1 << 30;
/// The share of `pga_aggregate_target` one serial work area takes under the automatic
/// policy, in percent.
pub const AUTO_PERCENT: u64 = 20;

/// How a work area was sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// From `pga_aggregate_target`.
    Auto,
    /// From `hash_area_size`.
    Manual,
}

impl Policy {
    /// `v$sql_workarea.POLICY`.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Auto => "AUTO",
            Policy::Manual => "MANUAL",
        }
    }
}

/// Where spilled rows go: the database directory, through its I/O layer.
#[derive(Clone, Copy)]
pub struct TempSpace<'a> {
    pub dir: &'a Path,
    pub io: &'a dyn Io,
    /// The database's block size: temporary I/O is counted in blocks of it.
    pub block_size: usize,
}

/// What a statement's memory-bound operator may use.
#[derive(Clone, Copy)]
pub struct WorkArea<'a> {
    pub policy: Policy,
    /// Bytes of memory.
    pub limit: usize,
    /// Where it spills; `None`: it does not, and has no limit.
    pub temp: Option<TempSpace<'a>>,
}

impl<'a> WorkArea<'a> {
    /// A work area bounded only by the machine: for statements run without a session's
    /// parameters.
    pub fn unbounded() -> WorkArea<'a> {
        WorkArea { policy: Policy::Auto, limit: usize::MAX, temp: None }
    }

    /// The work area the parameters give: `manual` with `hash_area_size`, else 20% of
    /// `pga_aggregate_target`, at most [`MAX_AUTO_BYTES`].
    pub fn sized(manual: bool, pga_aggregate_target: u64, hash_area_size: u64, temp: TempSpace<'a>) -> WorkArea<'a> {
        let (policy, bytes) = if manual {
            (Policy::Manual, hash_area_size)
        } else {
            (Policy::Auto, (pga_aggregate_target / 100 * AUTO_PERCENT).min(MAX_AUTO_BYTES))
        };
        WorkArea { policy, limit: usize::try_from(bytes).unwrap_or(usize::MAX), temp: Some(temp) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_decides_what_sizes_the_area() {
        let io = crate::storage::io::os();
        let temp = TempSpace { dir: Path::new("/"), io: &*io, block_size: 8192 };
        let auto = WorkArea::sized(false, 100 << 20, 64 << 10, temp);
        assert_eq!((auto.policy, auto.limit), (Policy::Auto, 20 << 20));
        let capped = WorkArea::sized(false, 100 << 30, 64 << 10, temp);
        assert_eq!(capped.limit, 1 << 30);
        let manual = WorkArea::sized(true, 100 << 20, 64 << 10, temp);
        assert_eq!((manual.policy, manual.limit), (Policy::Manual, 64 << 10));
    }
}
