//! A column unit as bytes: how a Hybrid Columnar Compression unit stores each column
//! before compressing it ([`crate::storage::hcc`]), so that a scan of a compressed table
//! decompresses a column straight into the encoding the column store's kernels run on.
//!
//! ```text
//!  u32 rows
//!  u8  1 if NULL rows follow as a bitmap: ⌈rows / 64⌉ u64 words, else 0
//!  u8  body: 0 all NULL | 1 encoded | 2 plain keys
//!      encoded: u8 domain: 0 frame of reference (i64 base, i64 max)
//!                          1 integer dictionary (u32 n, n × i64)
//!                          2 key dictionary (keys)
//!               u8 codes:  0 lanes | 1 runs (u32 n, n × u32 run ends, lanes)
//!      plain:   keys, u32 row of the smallest key, u32 row of the largest
//!  keys:  u32 n, (n + 1) × u32 offsets, u32 bytes, the bytes
//!  lanes: u8 8 | 16 | 32 | 64: u32 n, n codes of that width
//!         u8 0 (bit-packed): u8 width, u32 codes, u32 words, the u64 words
//! ```
//!
//! All little-endian. Reading checks every invariant a unit's readers rely on to stay in
//! bounds (lengths, run ends, offsets, a dictionary's codes within it, the rows of the
//! smallest and largest plain keys), so bytes that are not a unit give an error, never a
//! panic; that a dictionary is sorted, and a frame of reference's codes within its
//! range (any code maps to some value), are left to the checksum the unit is stored
//! under.
//!
//! A reader of unit after unit (a compressed table's scan) keeps the arrays of the units
//! it is done with in [`UnitBuffers`] and reads the next into them: a unit read so never
//! holds a value of the one whose arrays it took (each array is emptied, then filled).

use super::codes::{Codes, Lanes, Runs};
use super::domain::Domain;
use super::keys::{KeyDict, StoredKeys};
use super::plain::PlainKeys;
use super::{Body, ColumnUnit};
use crate::inmemory::area::Stored;
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::simd;

impl ColumnUnit {
    /// Appends the unit's bytes to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) {
        put_u32(out, self.rows as u32);
        match &self.nulls {
            Some(nulls) => {
                out.push(1);
                nulls.words().iter().for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
            }
            None => out.push(0),
        }
        match &self.body {
            Body::AllNull => out.push(0),
            Body::Encoded { domain, codes } => {
                out.push(1);
                match domain {
                    Domain::IntOffsets { base, max } => {
                        out.push(0);
                        out.extend_from_slice(&base.to_le_bytes());
                        out.extend_from_slice(&max.to_le_bytes());
                    }
                    Domain::IntDict(values) => {
                        out.push(1);
                        put_u32(out, values.len() as u32);
                        values.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
                    }
                    Domain::KeyDict(KeyDict(keys)) => {
                        out.push(2);
                        write_keys(keys, out);
                    }
                }
                match codes {
                    Codes::Lanes(lanes) => {
                        out.push(0);
                        write_lanes(lanes, out);
                    }
                    Codes::Runs(runs) => {
                        out.push(1);
                        put_u32(out, runs.ends.len() as u32);
                        runs.ends.iter().for_each(|&e| put_u32(out, e));
                        write_lanes(&runs.codes, out);
                    }
                }
            }
            Body::Plain(plain) => {
                out.push(2);
                let (keys, min_row, max_row) = plain.parts();
                write_keys(keys, out);
                put_u32(out, min_row);
                put_u32(out, max_row);
            }
        }
    }

    /// The unit `bytes` hold (all of them), checked as the module doc says, its arrays
    /// those `spare` keeps where it has them (else new).
    pub fn read_reusing(bytes: &[u8], spare: &mut UnitBuffers) -> Result<ColumnUnit, String> {
        let mut r = Reader { bytes, at: 0, spare };
        let rows = r.u32()? as usize;
        let nulls = match r.u8()? {
            0 => None,
            1 => {
                let words = r.u64s(rows.div_ceil(64))?;
                let bitmap = Bitmap::from_words(words, rows).ok_or("NULL bitmap has bits past its rows")?;
                if bitmap.none_set() {
                    return Err("NULL bitmap with no row set".into());
                }
                Some(bitmap)
            }
            other => return Err(format!("NULL flag {other}")),
        };
        let null_count = nulls.as_ref().map_or(0, |n| n.count_ones() as usize);
        let body = match r.u8()? {
            0 if null_count == rows => Body::AllNull,
            0 => return Err(format!("an all-NULL unit of {rows} rows with {null_count} NULL")),
            1 if null_count < rows => {
                let domain = match r.u8()? {
                    0 => {
                        let (base, max) = (r.i64()?, r.i64()?);
                        if max < base {
                            return Err(format!("frame of reference from {base} to {max}"));
                        }
                        Domain::IntOffsets { base, max }
                    }
                    1 => {
                        let n = r.u32()? as usize;
                        // Collected in place: the words' array becomes the values'.
                        let values: Vec<i64> = r.u64s(n)?.into_iter().map(|v| v as i64).collect();
                        if values.is_empty() {
                            return Err("an empty integer dictionary".into());
                        }
                        Domain::IntDict(values)
                    }
                    2 => {
                        let keys = read_keys(&mut r)?;
                        if keys.len() == 0 {
                            return Err("an empty key dictionary".into());
                        }
                        Domain::KeyDict(KeyDict(keys))
                    }
                    other => return Err(format!("domain {other}")),
                };
                let codes = match r.u8()? {
                    0 => {
                        let lanes = read_lanes(&mut r)?;
                        if lanes_len(&lanes) != rows {
                            return Err(format!("{} codes for {rows} rows", lanes_len(&lanes)));
                        }
                        Codes::Lanes(lanes)
                    }
                    1 => {
                        let n = r.u32()? as usize;
                        let ends = r.u32s(n)?;
                        let ascending = ends.windows(2).all(|w| w[0] < w[1]) && ends.first().is_none_or(|&e| e > 0);
                        if !ascending || ends.last().copied() != Some(rows as u32) {
                            return Err(format!("run ends are not ascending to {rows}"));
                        }
                        let codes = read_lanes(&mut r)?;
                        if lanes_len(&codes) != n {
                            return Err(format!("{} codes for {n} runs", lanes_len(&codes)));
                        }
                        Codes::Runs(Runs { ends, codes })
                    }
                    other => return Err(format!("codes {other}")),
                };
                let lanes = match &codes {
                    Codes::Lanes(lanes) => lanes,
                    Codes::Runs(runs) => &runs.codes,
                };
                // A frame of reference maps any code to a value (wrapping); a dictionary
                // is indexed by its codes, so none may pass its last entry. Codes of a
                // width whose every value is an entry need no look.
                let bounded = matches!(domain, Domain::IntOffsets { .. })
                    || (lanes.width() < 64 && (1u64 << lanes.width()) - 1 <= domain.max_code());
                if !bounded && max_code(lanes) > domain.max_code() {
                    return Err(format!("a code above the domain's largest, {}", domain.max_code()));
                }
                Body::Encoded { domain, codes }
            }
            2 if null_count < rows => {
                let keys = read_keys(&mut r)?;
                let (min_row, max_row) = (r.u32()?, r.u32()?);
                let not_null = |row: u32| (row as usize) < rows && !nulls.as_ref().is_some_and(|n| n.get(row as usize));
                if keys.len() != rows || !not_null(min_row) || !not_null(max_row) {
                    return Err(format!("plain keys of {} rows for {rows}, or their bounds are not rows", keys.len()));
                }
                Body::Plain(PlainKeys::from_parts(keys, min_row, max_row))
            }
            other => return Err(format!("body {other} for {rows} rows of which {null_count} NULL")),
        };
        if r.at != bytes.len() {
            return Err(format!("{} bytes after the unit", bytes.len() - r.at));
        }
        Ok(ColumnUnit { rows, nulls, null_count, body })
    }

    /// Gives the unit's arrays on the heap to `spare`, for the units read after it.
    pub fn recycle(self, spare: &mut UnitBuffers) {
        if let Some(nulls) = self.nulls {
            spare.keep(nulls.into_words());
        }
        match self.body {
            Body::AllNull => {}
            Body::Encoded { domain, codes } => {
                match domain {
                    Domain::IntOffsets { .. } => {}
                    Domain::IntDict(values) => spare.keep(values.into_iter().map(|v| v as u64).collect::<Vec<u64>>()),
                    Domain::KeyDict(KeyDict(keys)) => spare.keep_keys(keys),
                }
                match codes {
                    Codes::Lanes(lanes) => spare.keep_lanes(lanes),
                    Codes::Runs(Runs { ends, codes }) => {
                        spare.keep(ends);
                        spare.keep_lanes(codes);
                    }
                }
            }
            Body::Plain(plain) => spare.keep_keys(plain.into_keys()),
        }
    }
}

/// Arrays of column units no longer used, kept to read later units into: a scan of a
/// compressed table reads a unit a column a CU, most alike in shape, so after its first
/// CUs it allocates none. Holds at most [`UnitBuffers::MAX_KEPT`] arrays of each type.
#[derive(Default)]
pub struct UnitBuffers {
    u8s: Vec<Vec<u8>>,
    u16s: Vec<Vec<u16>>,
    u32s: Vec<Vec<u32>>,
    u64s: Vec<Vec<u64>>,
}

impl UnitBuffers {
    const MAX_KEPT: usize = 64;

    fn keep<T: Spare>(&mut self, values: Vec<T>) {
        let kept = T::kept(self);
        if kept.len() < Self::MAX_KEPT && values.capacity() > 0 {
            kept.push(values);
        }
    }

    /// An empty array with the room of one kept before, or a new one.
    fn take<T: Spare>(&mut self) -> Vec<T> {
        let mut values = T::kept(self).pop().unwrap_or_default();
        values.clear();
        values
    }

    fn keep_stored<T: Spare>(&mut self, stored: Stored<T>) {
        if let Stored::Heap(values) = stored {
            self.keep(values);
        }
    }

    fn keep_keys(&mut self, keys: StoredKeys) {
        let (bytes, offsets) = keys.into_parts();
        self.keep_stored(bytes);
        self.keep_stored(offsets);
    }

    fn keep_lanes(&mut self, lanes: Lanes) {
        match lanes {
            Lanes::U8(c) => self.keep_stored(c),
            Lanes::U16(c) => self.keep_stored(c),
            Lanes::U32(c) => self.keep_stored(c),
            Lanes::U64(c) | Lanes::Packed { words: c, .. } => self.keep_stored(c),
        }
    }
}

/// An integer type whose arrays [`UnitBuffers`] keeps.
trait Spare: Copy + 'static {
    fn kept(spare: &mut UnitBuffers) -> &mut Vec<Vec<Self>>;
}

macro_rules! spare {
    ($($t:ty => $field:ident),*) => {
        $(impl Spare for $t {
            fn kept(spare: &mut UnitBuffers) -> &mut Vec<Vec<$t>> {
                &mut spare.$field
            }
        })*
    };
}
spare!(u8 => u8s, u16 => u16s, u32 => u32s, u64 => u64s);

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn write_keys(keys: &StoredKeys, out: &mut Vec<u8>) {
    let (bytes, offsets) = keys.parts();
    put_u32(out, (offsets.len() - 1) as u32);
    offsets.iter().for_each(|&o| put_u32(out, o));
    put_u32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

fn write_lanes(lanes: &Lanes, out: &mut Vec<u8>) {
    fn each<T: Copy>(out: &mut Vec<u8>, tag: u8, codes: &[T], bytes: impl Fn(T) -> Vec<u8>) {
        out.push(tag);
        put_u32(out, codes.len() as u32);
        codes.iter().for_each(|&c| out.extend_from_slice(&bytes(c)));
    }
    match lanes {
        Lanes::U8(c) => each(out, 8, c, |v| vec![v]),
        Lanes::U16(c) => each(out, 16, c, |v| v.to_le_bytes().to_vec()),
        Lanes::U32(c) => each(out, 32, c, |v| v.to_le_bytes().to_vec()),
        Lanes::U64(c) => each(out, 64, c, |v| v.to_le_bytes().to_vec()),
        Lanes::Packed { width, rows, words } => {
            out.push(0);
            out.push(*width);
            put_u32(out, *rows as u32);
            put_u32(out, words.len() as u32);
            words.iter().for_each(|w| out.extend_from_slice(&w.to_le_bytes()));
        }
    }
}

fn read_keys(r: &mut Reader<'_, '_>) -> Result<StoredKeys, String> {
    let n = r.u32()? as usize;
    let offsets = r.u32s(n.checked_add(1).ok_or("too many keys")?)?;
    let len = r.u32()? as usize;
    let bytes = r.u8s(len)?;
    if offsets[0] != 0 || offsets.windows(2).any(|w| w[0] > w[1]) || offsets[n] as usize != len {
        return Err("key offsets are not ascending to the keys' length".into());
    }
    Ok(StoredKeys::from_parts(Stored::Heap(bytes), Stored::Heap(offsets)))
}

fn read_lanes(r: &mut Reader<'_, '_>) -> Result<Lanes, String> {
    Ok(match r.u8()? {
        8 => {
            let n = r.u32()? as usize;
            Lanes::U8(Stored::Heap(r.u8s(n)?))
        }
        16 => {
            let n = r.u32()? as usize;
            Lanes::U16(Stored::Heap(r.u16s(n)?))
        }
        32 => {
            let n = r.u32()? as usize;
            Lanes::U32(Stored::Heap(r.u32s(n)?))
        }
        64 => {
            let n = r.u32()? as usize;
            Lanes::U64(Stored::Heap(r.u64s(n)?))
        }
        0 => {
            let width = r.u8()?;
            let rows = r.u32()? as usize;
            let n = r.u32()? as usize;
            if !(1..=32).contains(&width) || n != simd::packed_words(rows, width) {
                return Err(format!("{n} words of {rows} codes of {width} bits"));
            }
            Lanes::Packed { width, rows, words: Stored::Heap(r.u64s(n)?) }
        }
        other => return Err(format!("lanes of {other} bits")),
    })
}

fn lanes_len(lanes: &Lanes) -> usize {
    match lanes {
        Lanes::U8(c) => c.len(),
        Lanes::U16(c) => c.len(),
        Lanes::U32(c) => c.len(),
        Lanes::U64(c) => c.len(),
        Lanes::Packed { rows, .. } => *rows,
    }
}

/// The largest code in `lanes` (0 when empty): a pass the compiler vectorizes for byte
/// lanes.
fn max_code(lanes: &Lanes) -> u64 {
    match lanes {
        Lanes::U8(c) => c.iter().copied().max().map_or(0, u64::from),
        Lanes::U16(c) => c.iter().copied().max().map_or(0, u64::from),
        Lanes::U32(c) => c.iter().copied().max().map_or(0, u64::from),
        Lanes::U64(c) => c.iter().copied().max().unwrap_or(0),
        Lanes::Packed { rows, .. } => (0..*rows).map(|i| lanes.get(i)).max().unwrap_or(0),
    }
}

/// Reads the fields of a unit in order, every read checked against the end; its arrays
/// go into those `spare` holds.
struct Reader<'b, 's> {
    bytes: &'b [u8],
    at: usize,
    spare: &'s mut UnitBuffers,
}

impl<'b> Reader<'b, '_> {
    fn take(&mut self, n: usize) -> Result<&'b [u8], String> {
        let end = self.at.checked_add(n).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("the unit ends at byte {}, {n} more bytes expected", self.bytes.len()))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn u8s(&mut self, n: usize) -> Result<Vec<u8>, String> {
        let b = self.take(n)?;
        Ok(from_le(b, u8::from_le_bytes, self.spare.take()))
    }

    fn u16s(&mut self, n: usize) -> Result<Vec<u16>, String> {
        let b = self.take(n.checked_mul(2).ok_or("too many values")?)?;
        Ok(from_le(b, u16::from_le_bytes, self.spare.take()))
    }

    fn u32s(&mut self, n: usize) -> Result<Vec<u32>, String> {
        let b = self.take(n.checked_mul(4).ok_or("too many values")?)?;
        Ok(from_le(b, u32::from_le_bytes, self.spare.take()))
    }

    fn u64s(&mut self, n: usize) -> Result<Vec<u64>, String> {
        let b = self.take(n.checked_mul(8).ok_or("too many values")?)?;
        Ok(from_le(b, u64::from_le_bytes, self.spare.take()))
    }
}

/// The little-endian integers of `bytes` (a whole number of them), in `out` (empty):
/// one copy of the bytes on a little-endian machine, where they are already laid out as
/// the integers are.
fn from_le<T: Copy, const N: usize>(bytes: &[u8], decode: fn([u8; N]) -> T, mut out: Vec<T>) -> Vec<T> {
    debug_assert_eq!(size_of::<T>(), N);
    debug_assert_eq!(bytes.len() % N, 0);
    debug_assert!(out.is_empty());
    let n = bytes.len() / N;
    if cfg!(target_endian = "little") {
        out.reserve(n);
        // SAFETY: `T` is one of u8, u16, u32, u64 (`N` bytes, every bit pattern a value), the
        // vector is empty with room for `n` of them, the regions do not overlap, and a little-endian
        // machine stores each integer as its `N` little-endian bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), n * N);
            out.set_len(n);
        }
        return out;
    }
    out.extend(bytes.chunks_exact(N).map(|c| decode(c.try_into().expect("N bytes"))));
    out
}
