//! Writing a block through an access that names the bytes it writes: [`BlockWrite`].
//!
//! The buffer cache logs each change to a block as the bytes that differ from the block
//! as it was. Comparing a whole block costs a copy of it when the change starts and a
//! pass over both at its end; a change that says which bytes it may write costs a copy
//! and a comparison of those bytes only. So the formats' writers that run at every
//! transaction (an undo record's append, a transaction table slot, an ITL slot, a row
//! changed in place) take a `BlockWrite` and ask it for each stretch they write.
//!
//! Invariant: a writer changes only bytes inside a range it asked [`BlockWrite::range_mut`]
//! for, or anything after asking for [`BlockWrite::whole_mut`]. The borrow checker holds
//! every writer to this: the slices handed out are the only mutable access there is.

use std::ops::Range;

/// Write access to one block's bytes, stretch by stretch.
pub trait BlockWrite {
    /// The whole block, to read.
    fn bytes(&self) -> &[u8];

    /// The bytes in `range`, to write: the caller changes no other byte through them.
    fn range_mut(&mut self, range: Range<usize>) -> &mut [u8];

    /// The whole block, to write anywhere (a layout change: a compaction, a format).
    /// A write guard copies the block here, once; stretches asked for after it cost
    /// nothing more, so a writer about to name many may ask for the whole block first.
    fn whole_mut(&mut self) -> &mut [u8];

    /// Writes `bytes` at `offset`.
    #[inline]
    fn put(&mut self, offset: usize, bytes: &[u8]) {
        self.range_mut(offset..offset + bytes.len()).copy_from_slice(bytes);
    }

    /// Writes the little-endian `u16` `value` at `offset`.
    #[inline]
    fn put_u16(&mut self, offset: usize, value: u16) {
        self.put(offset, &value.to_le_bytes());
    }
}

/// Plain bytes (a slice, a vector, a block being built before it is written): every
/// stretch is theirs to write, nothing is kept.
impl<T: AsRef<[u8]> + AsMut<[u8]> + ?Sized> BlockWrite for T {
    #[inline]
    fn bytes(&self) -> &[u8] {
        self.as_ref()
    }

    #[inline]
    fn range_mut(&mut self, range: Range<usize>) -> &mut [u8] {
        &mut self.as_mut()[range]
    }

    #[inline]
    fn whole_mut(&mut self) -> &mut [u8] {
        self.as_mut()
    }
}
