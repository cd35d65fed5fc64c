//! Rows in a temporary file: the runs a spilling hash join writes, one per partition and
//! side, interleaved in one file in chunks of whole rows.
//!
//! ```text
//!  file:    [chunk][chunk][chunk] ...      each chunk one write call, of one run
//!  chunk:   row row row ...
//!  row:     body length u32 LE | column count u16 LE | columns
//!  column:  0 NULL | 1 i64 LE | 2 decimal (16 bytes) | 3 len u32 LE, UTF-8 | 4 DATE i64 LE
//! ```
//!
//! Invariants: a run's rows are read back in the order they were written, each exactly
//! as it was; a chunk is written in one call (`direct path write temp`) and read in one
//! (`direct path read temp`), each counted in the database's blocks as `physical writes
//! | reads direct temporary tablespace` (and in `physical writes | reads`, as Oracle
//! counts direct I/O). Bytes that do not decode are reported as a damaged temporary file.

use super::workarea::TempSpace;
use crate::error::{Error, Result};
use crate::stats::{SessionStats, Stat, WaitEvent};
use crate::storage::temp::TempFile;
use crate::types::{Datum, Value};
use rust_decimal::Decimal;

const NULL: u8 = 0;
const INT: u8 = 1;
const NUM: u8 = 2;
const STR: u8 = 3;
const DATE: u8 = 4;
const TIMESTAMP: u8 = 5;
const YEAR_MONTH: u8 = 6;
const DAY_SECOND: u8 = 7;

/// One operation's temporary file, and the statistics its I/O counts in.
pub struct TempRows<'a> {
    file: TempFile,
    stats: &'a SessionStats,
    block_size: u64,
}

impl<'a> TempRows<'a> {
    pub fn create(space: TempSpace<'_>, purpose: &'static str, stats: &'a SessionStats) -> Result<TempRows<'a>> {
        let file = TempFile::create(space.io, space.dir, purpose)?;
        Ok(TempRows { file, stats, block_size: space.block_size.max(1) as u64 })
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.file.bytes_written()
    }

    fn blocks(&self, bytes: usize) -> u64 {
        (bytes as u64).div_ceil(self.block_size)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<u64> {
        let at = {
            let _wait = self.stats.begin_wait(WaitEvent::DirectPathWriteTemp);
            self.file.append(bytes)?
        };
        let blocks = self.blocks(bytes.len());
        self.stats.add(Stat::PhysicalWritesDirectTemporary, blocks);
        self.stats.add(Stat::PhysicalWrites, blocks);
        self.stats.add(Stat::PhysicalWriteIoRequests, 1);
        self.stats.add(Stat::PhysicalWriteBytes, bytes.len() as u64);
        Ok(at)
    }

    fn read(&mut self, buf: &mut [u8], offset: u64) -> Result<()> {
        {
            let _wait = self.stats.begin_wait(WaitEvent::DirectPathReadTemp);
            self.file.read_exact_at(buf, offset, "a chunk of spilled rows")?;
        }
        let blocks = self.blocks(buf.len());
        self.stats.add(Stat::PhysicalReadsDirectTemporary, blocks);
        self.stats.add(Stat::PhysicalReads, blocks);
        self.stats.add(Stat::PhysicalReadIoRequests, 1);
        self.stats.add(Stat::PhysicalReadBytes, buf.len() as u64);
        Ok(())
    }

    fn damaged(&self, reason: &str) -> Error {
        Error::Corrupt {
            file: self.file.path().to_owned(),
            block: None,
            reason: format!("temporary file of spilled rows: {reason}"),
        }
    }
}

/// One run of rows in a [`TempRows`] file: the chunks written so far and the rows not
/// yet written.
#[derive(Default)]
pub struct RowRun {
    /// Where each written chunk lies: its offset and length.
    chunks: Vec<(u64, u32)>,
    pending: Vec<u8>,
    /// Rows in the run.
    pub rows: u64,
}

impl RowRun {
    /// Adds `row`, writing the rows gathered as one chunk once they pass `chunk_bytes`.
    pub fn push(&mut self, row: &[Datum<'_>], file: &mut TempRows<'_>, chunk_bytes: usize) -> Result<()> {
        encode_row(row, &mut self.pending);
        self.rows += 1;
        if self.pending.len() >= chunk_bytes { self.flush(file) } else { Ok(()) }
    }

    /// Writes the rows gathered.
    pub fn flush(&mut self, file: &mut TempRows<'_>) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let len = u32::try_from(self.pending.len()).map_err(|_| Error::value("spilled rows", "a chunk passes 4 GB"))?;
        let at = file.write(&self.pending)?;
        self.chunks.push((at, len));
        self.pending.clear();
        Ok(())
    }

    /// The chunks written.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Hands every row of the run (it must be flushed) to `visit`, in order, stopping
    /// when `visit` returns false.
    pub fn for_each(&self, file: &mut TempRows<'_>, mut visit: impl FnMut(&[Value]) -> Result<bool>) -> Result<()> {
        for chunk in 0..self.chunks.len() {
            if !self.for_each_in_chunk(file, chunk, &mut visit)? {
                break;
            }
        }
        Ok(())
    }

    /// Hands the rows of chunk `chunk` to `visit`, in order, stopping when `visit`
    /// returns false; returns false when it did.
    pub fn for_each_in_chunk(
        &self,
        file: &mut TempRows<'_>,
        chunk: usize,
        mut visit: impl FnMut(&[Value]) -> Result<bool>,
    ) -> Result<bool> {
        debug_assert!(self.pending.is_empty(), "a run is flushed before it is read");
        let (at, len) = self.chunks[chunk];
        let mut buf = vec![0; len as usize];
        file.read(&mut buf, at)?;
        let mut row = Vec::new();
        let mut rest = buf.as_slice();
        while !rest.is_empty() {
            rest = decode_row(rest, &mut row).map_err(|reason| file.damaged(reason))?;
            if !visit(&row)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Appends the record of `row` to `out`.
fn encode_row(row: &[Datum<'_>], out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(row.len() as u16).to_le_bytes());
    for v in row {
        match v {
            Datum::Null => out.push(NULL),
            Datum::Int(i) => {
                out.push(INT);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Datum::Num(d) => {
                out.push(NUM);
                out.extend_from_slice(&d.serialize());
            }
            Datum::Str(s) => {
                out.push(STR);
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            Datum::Date(x) | Datum::Timestamp(x) | Datum::YearMonth(x) | Datum::DaySecond(x) => {
                out.push(match v {
                    Datum::Date(_) => DATE,
                    Datum::Timestamp(_) => TIMESTAMP,
                    Datum::YearMonth(_) => YEAR_MONTH,
                    _ => DAY_SECOND,
                });
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    let body = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&body.to_le_bytes());
}

/// Takes `n` bytes off the front of `bytes`.
fn take<'b>(bytes: &mut &'b [u8], n: usize) -> std::result::Result<&'b [u8], &'static str> {
    if bytes.len() < n {
        return Err("a row ends inside a column");
    }
    let (head, rest) = bytes.split_at(n);
    *bytes = rest;
    Ok(head)
}

/// Decodes the row at the front of `bytes` into `row`; returns what follows it.
fn decode_row<'b>(bytes: &'b [u8], row: &mut Vec<Value>) -> std::result::Result<&'b [u8], &'static str> {
    row.clear();
    let mut at = bytes;
    let body = u32::from_le_bytes(take(&mut at, 4)?.try_into().expect("4 bytes")) as usize;
    if at.len() < body {
        return Err("a row's length passes the end of its chunk");
    }
    let (mut body, rest) = at.split_at(body);
    let columns = u16::from_le_bytes(take(&mut body, 2)?.try_into().expect("2 bytes"));
    for _ in 0..columns {
        let tag = take(&mut body, 1)?[0];
        let eight = |body: &mut &[u8]| take(body, 8).map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")));
        row.push(match tag {
            NULL => Datum::Null,
            INT => Datum::Int(eight(&mut body)?),
            NUM => Datum::Num(Decimal::deserialize(take(&mut body, 16)?.try_into().expect("16 bytes"))),
            STR => {
                let len = u32::from_le_bytes(take(&mut body, 4)?.try_into().expect("4 bytes")) as usize;
                let text = std::str::from_utf8(take(&mut body, len)?).map_err(|_| "a string is not UTF-8")?;
                Datum::Str(text.to_owned().into())
            }
            DATE => Datum::Date(eight(&mut body)?),
            TIMESTAMP => Datum::Timestamp(eight(&mut body)?),
            YEAR_MONTH => Datum::YearMonth(eight(&mut body)?),
            DAY_SECOND => Datum::DaySecond(eight(&mut body)?),
            _ => return Err("a column has an unknown type tag"),
        });
    }
    if !body.is_empty() {
        return Err("a row has bytes after its last column");
    }
    Ok(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_give_back_their_rows_in_order_whatever_the_chunking() {
        let dir = tempfile::tempdir().unwrap();
        let io = crate::storage::io::os();
        let stats = SessionStats::default();
        let mut file =
            TempRows::create(TempSpace { dir: dir.path(), io: &*io, block_size: 8192 }, "hash", &stats).unwrap();
        let row = |i: i64| -> Vec<Value> {
            vec![
                Datum::Int(i),
                if i % 3 == 0 { Datum::Null } else { Datum::Str(format!("row {i} é").into()) },
                Datum::Num(Decimal::new(i * 7 + 1, 2)),
                Datum::Date(i * 86_400),
                Datum::Timestamp(i * 1_000_001),
                Datum::YearMonth(-i),
                Datum::DaySecond(i << 30),
            ]
        };
        let (mut a, mut b) = (RowRun::default(), RowRun::default());
        for i in 0..1000 {
            let run = if i % 2 == 0 { &mut a } else { &mut b };
            run.push(&row(i), &mut file, 700).unwrap();
        }
        a.flush(&mut file).unwrap();
        b.flush(&mut file).unwrap();
        let mut seen = Vec::new();
        b.for_each(&mut file, |r| {
            seen.push(r.to_vec());
            Ok(true)
        })
        .unwrap();
        assert_eq!(seen, (0..1000).filter(|i| i % 2 == 1).map(row).collect::<Vec<_>>());
        assert!(stats.get(Stat::PhysicalWritesDirectTemporary) > 0);
        assert!(stats.get(Stat::PhysicalReadsDirectTemporary) > 0);
        assert!(stats.event(WaitEvent::DirectPathReadTemp).waits > 0);
    }

    #[test]
    fn damaged_bytes_are_an_error_naming_the_file_not_a_panic() {
        let mut row = Vec::new();
        let mut good = Vec::new();
        encode_row(&[Datum::Int(5), Datum::Str("abc".into())], &mut good);
        for cut in 0..good.len() {
            assert!(decode_row(&good[..cut], &mut row).is_err(), "cut at {cut}");
        }
        let mut bad_tag = good.clone();
        bad_tag[6] = 9;
        assert_eq!(decode_row(&bad_tag, &mut row), Err("a column has an unknown type tag"));
        assert_eq!(decode_row(&good, &mut row), Ok(&[][..]));
        assert_eq!(row, vec![Datum::Int(5), Datum::Str("abc".into())]);
    }
}
