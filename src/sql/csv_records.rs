//! Splitting a CSV file into records for COPY, without copying fields.
//!
//! The file is read in large chunks into one buffer; a record is parsed only once it lies
//! whole in the buffer (a record cut by the end of the buffer is parsed again after the
//! next read), so an unquoted field, or a quoted one without doubled quotes, is a range
//! of the buffer. Only a quoted field that must be rewritten (a doubled quote, or text
//! after the closing quote) is built in a scratch buffer.
//!
//! The dialect is RFC 4180 with a configurable delimiter and quote, read leniently as
//! the `csv` crate reads it:
//!
//! - a record ends at `\n`, `\r` or `\r\n`; blank lines are skipped;
//! - a field that starts with the quote runs to the next single quote, across line ends;
//!   a doubled quote inside it is one quote; text between the closing quote and the next
//!   delimiter is kept (`"ab"c` is `abc`); a quote later in an unquoted field is text;
//! - the end of the file ends an open quoted field and the record;
//! - records may have different numbers of fields (the caller checks the count).
//!
//! Most records have no quote at all. For those, [`CsvRecords::next_record`] finds the
//! line end with one `memchr3` over line ends and the quote (which scans many bytes a
//! step and, hitting the quote first, sends the record to the general parser), then
//! splits the record at every delimiter, found 64 bytes at a time (`byte_mask`). A record with a
//! quote before its line end, or whose line end is not in the buffer yet, is read by the
//! general parser; both give the same fields.
//!
//! Each read also finds how far the buffer is plain ASCII (32 bytes a step): records
//! within that prefix skip their own UTF-8 check, which the others still get.
//!
//! Invariant: `buf[pos..filled]` holds the bytes of the file not yet returned, `pos`
//! always at a record boundary; `line` counts the `\n` line ends before `buf[pos]` (so
//! a file that ends its lines with a bare `\r` has every record reported on line 1).

use super::byte_mask::{BLOCK, byte_mask, partial_byte_mask};
use memchr::memchr3;
use std::io::Read;

/// First size of the read buffer; it grows only for a record longer than it.
const CHUNK: usize = 1 << 20;

/// Where one field's bytes are: a range of the read buffer or of the scratch buffer.
#[derive(Debug, Clone, Copy)]
struct FieldSpan {
    start: usize,
    end: usize,
    in_scratch: bool,
}

/// Reads CSV records from `input`.
pub struct CsvRecords<R> {
    input: R,
    delimiter: u8,
    quote: u8,
    /// Whether quote-free records may take the fast path: the delimiter and the quote
    /// are neither line ends nor the same byte (otherwise only the general parser reads
    /// them right).
    fast_path: bool,
    buf: Vec<u8>,
    /// Start of the first record not yet returned.
    pos: usize,
    /// End of the bytes read.
    filled: usize,
    /// The input has no more bytes.
    eof: bool,
    /// File offset of `buf[0]`.
    buf_offset: u64,
    /// Line ends (`\n`) before `buf[pos]`.
    line: u64,
    /// `buf[..ascii_end]` is all ASCII (found once per read): a record within it, and the
    /// rewritten fields made of its bytes, need no UTF-8 check of their own.
    ascii_end: usize,
    /// The fields of the record last parsed.
    fields: Vec<FieldSpan>,
    /// Rewritten quoted fields of the record last parsed.
    scratch: Vec<u8>,
}

/// One record, borrowed from the reader until the next is read.
pub struct CsvRecord<'r> {
    buf: &'r [u8],
    /// The record's bytes in `buf` (line end excluded).
    span: std::ops::Range<usize>,
    scratch: &'r [u8],
    fields: &'r [FieldSpan],
    /// The record's bytes (and so its rewritten fields) are known to be ASCII.
    ascii: bool,
    /// The line the record starts on, counting from 1.
    pub line: u64,
    /// The file offset where the record starts.
    pub byte: u64,
}

impl<'r> CsvRecord<'r> {
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// The bytes of field `i` (0-based).
    pub fn field(&self, i: usize) -> &'r [u8] {
        let f = self.fields[i];
        if f.in_scratch { &self.scratch[f.start..f.end] } else { &self.buf[f.start..f.end] }
    }

    /// Appends the fields as text to `out`; `Err(i)` names the first field (0-based) that
    /// is not UTF-8. The record is checked as a whole, field by field only if that fails.
    pub fn texts<A: smallvec::Array<Item = &'r str>>(&self, out: &mut smallvec::SmallVec<A>) -> Result<(), usize> {
        let (record, scratch) = (&self.buf[self.span.clone()], self.scratch);
        if !self.ascii && (std::str::from_utf8(record).is_err() || std::str::from_utf8(scratch).is_err()) {
            return self.texts_one_by_one(out);
        }
        out.extend(self.fields.iter().map(|f| {
            let bytes = if f.in_scratch { &scratch[f.start..f.end] } else { &self.buf[f.start..f.end] };
            debug_assert!(f.in_scratch || self.span.start <= f.start && f.end <= self.span.end);
            // SAFETY: a field lies in the record or in the scratch buffer, both valid UTF-8
            // (checked above, or all ASCII: the scratch buffer holds only bytes of the
            // record), and starts and ends at the record's ends or next to a
            // delimiter or quote, which are ASCII: on character boundaries.
            unsafe { std::str::from_utf8_unchecked(bytes) }
        }));
        Ok(())
    }

    fn texts_one_by_one<A: smallvec::Array<Item = &'r str>>(
        &self,
        out: &mut smallvec::SmallVec<A>,
    ) -> Result<(), usize> {
        for i in 0..self.len() {
            out.push(std::str::from_utf8(self.field(i)).map_err(|_| i)?);
        }
        Ok(())
    }
}

/// The outcome of parsing at `pos`.
enum Parsed {
    /// A record at `start..end`, the position after its line end and the line ends it
    /// consumed.
    Record { start: usize, end: usize, next: usize, lines_before: u64, lines: u64 },
    /// No record left in the file.
    End,
    /// The buffer ends inside the record: read more and parse again.
    NeedMore,
}

impl<R: Read> CsvRecords<R> {
    pub fn new(input: R, delimiter: u8, quote: u8) -> CsvRecords<R> {
        let is_line_end = |c: u8| c == b'\n' || c == b'\r';
        CsvRecords {
            input,
            delimiter,
            quote,
            fast_path: !is_line_end(delimiter) && !is_line_end(quote) && delimiter != quote,
            buf: vec![0; CHUNK],
            pos: 0,
            filled: 0,
            eof: false,
            buf_offset: 0,
            line: 0,
            ascii_end: 0,
            fields: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// The next record, or `None` at the end of the file.
    pub fn next_record(&mut self) -> std::io::Result<Option<CsvRecord<'_>>> {
        loop {
            match self.parse() {
                Parsed::Record { start, end, next, lines_before, lines } => {
                    let line = self.line + lines_before + 1;
                    let byte = self.buf_offset + start as u64;
                    self.pos = next;
                    self.line += lines;
                    return Ok(Some(CsvRecord {
                        buf: &self.buf[..self.filled],
                        span: start..end,
                        scratch: &self.scratch,
                        fields: &self.fields,
                        ascii: end <= self.ascii_end,
                        line,
                        byte,
                    }));
                }
                Parsed::End => return Ok(None),
                Parsed::NeedMore => self.refill()?,
            }
        }
    }

    /// Moves the unread bytes to the front (growing the buffer if they fill it) and reads
    /// more after them.
    fn refill(&mut self) -> std::io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.filled, 0);
            self.buf_offset += self.pos as u64;
            self.filled -= self.pos;
            self.ascii_end = self.ascii_end.saturating_sub(self.pos);
            self.pos = 0;
        }
        if self.filled == self.buf.len() {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        loop {
            match self.input.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.filled += n;
                    self.ascii_end += ascii_prefix(&self.buf[self.ascii_end..self.filled]);
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Parses the record at `pos` into `fields` (and `scratch`).
    fn parse(&mut self) -> Parsed {
        let b = &self.buf[..self.filled];
        let (delimiter, quote, eof) = (self.delimiter, self.quote, self.eof);
        let is_end = |c: u8| c == b'\n' || c == b'\r';
        let mut i = self.pos;
        let mut lines = 0;
        while i < b.len() && is_end(b[i]) {
            lines += u64::from(b[i] == b'\n');
            i += 1;
        }
        if i == b.len() {
            return if eof { Parsed::End } else { Parsed::NeedMore };
        }
        let (start, lines_before) = (i, lines);
        self.fields.clear();
        self.scratch.clear();
        if self.fast_path
            && let Some(end) = split_unquoted(b, start, delimiter, quote, &mut self.fields)
        {
            let lines = lines + u64::from(b[end] == b'\n');
            return Parsed::Record { start, end, next: end + 1, lines_before, lines };
        }
        loop {
            let field = if b.get(i) == Some(&quote) {
                match quoted_field(b, i + 1, delimiter, quote, eof, &mut self.scratch) {
                    Some((field, after, newlines)) => {
                        lines += newlines;
                        i = after;
                        field
                    }
                    None => return Parsed::NeedMore,
                }
            } else {
                let end = unquoted_end(b, i, delimiter);
                if end == b.len() && !eof {
                    return Parsed::NeedMore;
                }
                let field = FieldSpan { start: i, end, in_scratch: false };
                i = end;
                field
            };
            self.fields.push(field);
            match b.get(i) {
                Some(&c) if c == delimiter => i += 1,
                Some(&c) => {
                    lines += u64::from(c == b'\n');
                    return Parsed::Record { start, end: i, next: i + 1, lines_before, lines };
                }
                None => return Parsed::Record { start, end: i, next: i, lines_before, lines },
            }
        }
    }
}

/// Splits the record starting at `start` into `fields` when no quote comes before its
/// line end, and returns the position of that line end; `None` (with `fields` left
/// empty) when there is a quote or the buffer has no line end after `start`.
#[inline]
fn split_unquoted(b: &[u8], start: usize, delimiter: u8, quote: u8, fields: &mut Vec<FieldSpan>) -> Option<usize> {
    let end = start + memchr3(b'\n', b'\r', quote, &b[start..])?;
    if b[end] == quote {
        return None;
    }
    let mut field_start = start;
    let mut i = start;
    while i < end {
        // The last block may reach past `end` (into the line end and beyond): its
        // delimiters there are masked off.
        let mut hits = match b.get(i..i + BLOCK) {
            Some(block) => byte_mask(block.try_into().expect("a block"), delimiter),
            None => partial_byte_mask(&b[i..end], delimiter),
        };
        if end - i < BLOCK {
            hits &= (1 << (end - i)) - 1;
        }
        while hits != 0 {
            let at = i + hits.trailing_zeros() as usize;
            fields.push(FieldSpan { start: field_start, end: at, in_scratch: false });
            field_start = at + 1;
            hits &= hits - 1;
        }
        i += BLOCK;
    }
    fields.push(FieldSpan { start: field_start, end, in_scratch: false });
    Some(end)
}

/// The length of a prefix of `b` that is all ASCII: up to the first non-ASCII byte or up
/// to 31 bytes short of it (it looks 32 bytes at a time), or all of `b`.
#[inline]
fn ascii_prefix(b: &[u8]) -> usize {
    let mut n = 0;
    for chunk in b.chunks_exact(32) {
        if chunk.iter().fold(0, |acc, &c| acc | c) >= 0x80 {
            return n;
        }
        n += 32;
    }
    n + b[n..].iter().take_while(|c| c.is_ascii()).count()
}

/// The end of an unquoted field starting at `i`: the next delimiter or line end, or the
/// end of the buffer. Looks at eight bytes at a time.
#[inline]
fn unquoted_end(b: &[u8], mut i: usize, delimiter: u8) -> usize {
    let (d, n, r) = (splat(delimiter), splat(b'\n'), splat(b'\r'));
    while let Some(word) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let hits = zero_bytes(w ^ d) | zero_bytes(w ^ n) | zero_bytes(w ^ r);
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && !matches!(b[i], b'\n' | b'\r') && b[i] != delimiter {
        i += 1;
    }
    i
}

/// The position of the next `quote` at or after `i`, or the end of the buffer.
#[inline]
fn next_quote(b: &[u8], mut i: usize, quote: u8) -> usize {
    let q = splat(quote);
    while let Some(word) = b.get(i..i + 8) {
        let hits = zero_bytes(u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ q);
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] != quote {
        i += 1;
    }
    i
}

/// `c` in each byte of a word.
const fn splat(c: u8) -> u64 {
    u64::from_le_bytes([c; 8])
}

/// A word whose lowest set bit is the high bit of the lowest zero byte of `x` (zero if
/// no byte is zero). Bits above it may be set spuriously; only the lowest is exact.
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(splat(1)) & !x & splat(0x80)
}

/// A quoted field whose text starts at `i` (just after the opening quote): the field,
/// the position after it (at the delimiter or line end that follows), and the line ends
/// inside it. `None` if the buffer ends before the field does and the file goes on.
fn quoted_field(
    b: &[u8],
    mut i: usize,
    delimiter: u8,
    quote: u8,
    eof: bool,
    scratch: &mut Vec<u8>,
) -> Option<(FieldSpan, usize, u64)> {
    let start = i;
    let scratch_start = scratch.len();
    let mut rewritten = false;
    let mut newlines = 0;
    let mut segment = i;
    let close = loop {
        let next = next_quote(b, i, quote);
        newlines += b[i..next].iter().filter(|&&c| c == b'\n').count() as u64;
        i = next;
        if i == b.len() {
            if !eof {
                return None;
            }
            break i;
        }
        match b.get(i + 1) {
            Some(&c) if c == quote => {
                // A doubled quote: keep one.
                scratch.extend_from_slice(&b[segment..=i]);
                rewritten = true;
                i += 2;
                segment = i;
            }
            None if !eof => return None,
            _ => break i,
        }
    };
    // After the closing quote, anything up to the delimiter or line end is kept.
    let after_quote = (close + 1).min(b.len());
    let end = unquoted_end(b, after_quote, delimiter);
    if end == b.len() && !eof {
        return None;
    }
    if !rewritten && end == after_quote {
        return Some((FieldSpan { start, end: close, in_scratch: false }, end, newlines));
    }
    scratch.extend_from_slice(&b[segment..close]);
    scratch.extend_from_slice(&b[after_quote..end]);
    Some((FieldSpan { start: scratch_start, end: scratch.len(), in_scratch: true }, end, newlines))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads every record with a tiny first buffer so that records are cut by refills.
    fn records_with(input: &[u8], delimiter: u8, quote: u8, chunk: usize) -> Vec<(u64, u64, Vec<String>)> {
        read_all(CsvRecords::new(input, delimiter, quote), chunk)
    }

    /// [`records_with`] by the general parser alone.
    fn records_without_fast_path(input: &[u8], chunk: usize) -> Vec<(u64, u64, Vec<String>)> {
        let mut reader = CsvRecords::new(input, b',', b'"');
        reader.fast_path = false;
        read_all(reader, chunk)
    }

    fn read_all(mut reader: CsvRecords<&[u8]>, chunk: usize) -> Vec<(u64, u64, Vec<String>)> {
        reader.buf = vec![0; chunk];
        let mut out = Vec::new();
        while let Some(r) = reader.next_record().unwrap() {
            let mut texts: smallvec::SmallVec<[&str; 4]> = smallvec::SmallVec::new();
            r.texts(&mut texts).expect("UTF-8 input");
            let fields: Vec<String> = texts.iter().map(|t| t.to_string()).collect();
            let bytes: Vec<String> = (0..r.len()).map(|i| String::from_utf8_lossy(r.field(i)).into_owned()).collect();
            assert_eq!(fields, bytes, "texts and field agree");
            out.push((r.line, r.byte, fields));
        }
        out
    }

    fn fields(input: &str) -> Vec<Vec<String>> {
        records_with(input.as_bytes(), b',', b'"', CHUNK).into_iter().map(|(_, _, f)| f).collect()
    }

    fn v(fields: &[&str]) -> Vec<String> {
        fields.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn plain_records_and_line_ends() {
        assert_eq!(fields("a,b\nc,d\n"), vec![v(&["a", "b"]), v(&["c", "d"])]);
        assert_eq!(fields("a,b\r\nc,d"), vec![v(&["a", "b"]), v(&["c", "d"])]);
        assert_eq!(fields("a\rb\n\n\r\nc"), vec![v(&["a"]), v(&["b"]), v(&["c"])]);
        assert_eq!(fields("a,,\n,\n"), vec![v(&["a", "", ""]), v(&["", ""])]);
        assert_eq!(fields("a,"), vec![v(&["a", ""])]);
        assert!(fields("").is_empty());
        assert!(fields("\n\r\n").is_empty());
    }

    #[test]
    fn quoted_fields() {
        assert_eq!(fields("\"a,b\",c\n"), vec![v(&["a,b", "c"])]);
        assert_eq!(fields("\"say \"\"hi\"\"\",x"), vec![v(&["say \"hi\"", "x"])]);
        assert_eq!(fields("\"two\nlines\",1\r\n2"), vec![v(&["two\nlines", "1"]), v(&["2"])]);
        assert_eq!(fields("\"ab\"cd,e"), vec![v(&["abcd", "e"])]);
        assert_eq!(fields("a\"b,c"), vec![v(&["a\"b", "c"])]);
        assert_eq!(fields("\"\",\"\"\"\""), vec![v(&["", "\""])]);
        assert_eq!(fields("\"open\nto the end"), vec![v(&["open\nto the end"])]);
    }

    #[test]
    fn lines_and_offsets_name_where_records_start() {
        let got = records_with(b"1,\"a\nb\"\n\n2,c\n3,d", b',', b'"', CHUNK);
        let at: Vec<(u64, u64)> = got.iter().map(|(l, b, _)| (*l, *b)).collect();
        assert_eq!(at, vec![(1, 0), (4, 9), (5, 13)]);
    }

    #[test]
    fn invalid_utf8_names_its_field() {
        let mut reader = CsvRecords::new(&b"a,\"\xff\",b\n"[..], b',', b'"');
        let record = reader.next_record().unwrap().unwrap();
        let mut texts: smallvec::SmallVec<[&str; 4]> = smallvec::SmallVec::new();
        assert_eq!(record.texts(&mut texts), Err(1));
    }

    #[test]
    fn other_delimiter_and_quote() {
        let got = records_with(b"'a;b';c\n", b';', b'\'', CHUNK);
        assert_eq!(got[0].2, v(&["a;b", "c"]));
    }

    #[test]
    fn line_end_or_shared_bytes_as_delimiter_and_quote_take_the_general_parser() {
        for (delimiter, quote) in [(b'\n', b'"'), (b',', b'\r'), (b'"', b'"')] {
            assert!(!CsvRecords::new(&b""[..], delimiter, quote).fast_path);
        }
        assert_eq!(records_with(b"a\nb\n", b'\n', b'"', CHUNK)[0].2, v(&["a", "b", ""]));
    }

    #[test]
    fn long_quote_free_records_split_across_blocks() {
        let field = "x".repeat(70);
        let line = [field.as_str(), "", "y", field.as_str()].join(",");
        let text = format!("{line}\n{line}\r\n{line}");
        let expected = v(&[&field, "", "y", &field]);
        assert_eq!(fields(&text), vec![expected.clone(), expected.clone(), expected]);
    }

    /// A field as a CSV writer quotes it.
    fn quote_field(s: &str) -> String {
        if s.contains([',', '"', '\n', '\r']) || s.is_empty() {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_owned()
        }
    }

    /// What the `csv` crate reads from the same bytes.
    fn csv_crate_fields(input: &[u8]) -> Vec<Vec<String>> {
        let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(input);
        reader
            .byte_records()
            .map(|r| r.unwrap().iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect())
            .collect()
    }

    proptest! {
        #[test]
        fn reads_any_bytes_as_the_csv_crate_does(text in "[ab,\"\r\né]{0,60}", chunk in 1usize..16) {
            let got: Vec<Vec<String>> =
                records_with(text.as_bytes(), b',', b'"', chunk).into_iter().map(|(_, _, f)| f).collect();
            prop_assert_eq!(got, csv_crate_fields(text.as_bytes()));
        }

        #[test]
        fn the_fast_path_reads_as_the_general_parser(
            text in "([ab,]{0,40}[\r\n]{0,2}){0,12}\"?[ab,\n]{0,20}",
            chunk in 1usize..200,
        ) {
            let got = records_with(text.as_bytes(), b',', b'"', chunk);
            prop_assert_eq!(&got, &records_without_fast_path(text.as_bytes(), chunk));
            let fields: Vec<Vec<String>> = got.into_iter().map(|(_, _, f)| f).collect();
            prop_assert_eq!(fields, csv_crate_fields(text.as_bytes()));
        }

        #[test]
        fn written_records_read_back_whatever_the_buffer_size(
            records in proptest::collection::vec(proptest::collection::vec("[a-c,\"\n\r ]{0,6}", 1..5), 0..20),
            chunk in 1usize..40,
            crlf in any::<bool>(),
        ) {
            let end = if crlf { "\r\n" } else { "\n" };
            let text: String = records
                .iter()
                .map(|r| r.iter().map(|f| quote_field(f)).collect::<Vec<_>>().join(",") + end)
                .collect();
            let got: Vec<Vec<String>> =
                records_with(text.as_bytes(), b',', b'"', chunk).into_iter().map(|(_, _, f)| f).collect();
            prop_assert_eq!(&got, &records);
            let whole: Vec<Vec<String>> = fields(&text);
            prop_assert_eq!(got, whole);
        }
    }

    /// Records before, at and after a non-ASCII byte, read with buffers of every size
    /// from tiny to whole: the ASCII prefix never lets a bad record through, and valid
    /// UTF-8 past it still reads.
    #[test]
    fn utf8_is_checked_past_the_ascii_prefix() {
        let mut input = b"a,b\n\"q\"\"x\",c\n".repeat(5);
        input.extend_from_slice("é,ü\n".as_bytes());
        input.extend_from_slice(b"x,\xff\n");
        input.extend_from_slice(&b"d,e\n".repeat(5));
        for chunk in [4, 7, 16, 33, 64, CHUNK] {
            let mut reader = CsvRecords::new(&input[..], b',', b'"');
            reader.buf = vec![0; chunk];
            let mut outcomes = Vec::new();
            while let Some(r) = reader.next_record().unwrap() {
                let mut texts: smallvec::SmallVec<[&str; 4]> = smallvec::SmallVec::new();
                outcomes.push(r.texts(&mut texts).map(|()| texts.join("|")));
            }
            let mut expected: Vec<Result<String, usize>> =
                (0..5).flat_map(|_| [Ok("a|b".to_owned()), Ok("q\"x|c".to_owned())]).collect();
            expected.push(Ok("é|ü".to_owned()));
            expected.push(Err(1));
            expected.extend(std::iter::repeat_n(Ok("d|e".to_owned()), 5));
            assert_eq!(outcomes, expected, "buffer of {chunk} bytes");
        }
    }

    proptest! {
        #[test]
        fn ascii_prefix_stops_short_of_the_first_non_ascii_byte(
            b in proptest::collection::vec(prop_oneof![9 => 0u8..0x80, 1 => 0x80u8..=0xff], 0..200),
        ) {
            let n = ascii_prefix(&b);
            prop_assert!(b[..n].is_ascii());
            let first = b.iter().position(|c| !c.is_ascii()).unwrap_or(b.len());
            prop_assert!(n <= first && first - n < 32);
        }
    }
}
