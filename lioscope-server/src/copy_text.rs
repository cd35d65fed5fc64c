//! PostgreSQL's text format of COPY, as `psql`'s `\copy` and drivers send it, turned into
//! the CSV lioscope's COPY reads: one row a line, fields split at the delimiter (a tab
//! unless told), the NULL string (`\N` unless told) for a NULL, and backslash escapes
//! decoded (`\\`, `\t`, `\n`, `\r`, `\b`, `\f`, `\v`, octal `\ooo`, hex `\xhh`; a backslash
//! before any other character stands for that character). A line `\.` ends the rows.
//!
//! In the CSV written, every value is quoted (so a comma, quote or line break in it
//! stays data) and a NULL is an empty unquoted field. (An empty string is NULL in
//! lioscope, as in Oracle.)

use std::io::{BufRead, Write};

/// Copies the rows of `input`, in the text format with `delimiter` and `null`, to
/// `output` as CSV (delimiter `,`, quote `"`).
pub fn to_csv(mut input: impl BufRead, mut output: impl Write, delimiter: u8, null: &str) -> std::io::Result<()> {
    let mut line = Vec::new();
    let mut field = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let mut row: &[u8] = &line;
        row = row.strip_suffix(b"\n").unwrap_or(row);
        row = row.strip_suffix(b"\r").unwrap_or(row);
        if row == b"\\." {
            break;
        }
        for (i, raw) in split_fields(row, delimiter).into_iter().enumerate() {
            if i > 0 {
                output.write_all(b",")?;
            }
            if raw == null.as_bytes() {
                continue;
            }
            field.clear();
            decode(raw, &mut field);
            output.write_all(b"\"")?;
            for (i, part) in field.split(|b| *b == b'"').enumerate() {
                if i > 0 {
                    output.write_all(b"\"\"")?;
                }
                output.write_all(part)?;
            }
            output.write_all(b"\"")?;
        }
        output.write_all(b"\n")?;
    }
    output.flush()
}

/// The raw fields of `row`: split at each `delimiter` not escaped by a backslash.
fn split_fields(row: &[u8], delimiter: u8) -> Vec<&[u8]> {
    let mut fields = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < row.len() {
        match row[i] {
            b'\\' => i += 2,
            b if b == delimiter => {
                fields.push(&row[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    fields.push(&row[start.min(row.len())..]);
    fields
}

/// Appends `raw` with its backslash escapes decoded to `out`.
fn decode(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < raw.len() {
        if raw[i] != b'\\' || i + 1 == raw.len() {
            out.push(raw[i]);
            i += 1;
            continue;
        }
        let c = raw[i + 1];
        i += 2;
        match c {
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'0'..=b'7' => {
                let mut value = u32::from(c - b'0');
                for _ in 0..2 {
                    match raw.get(i) {
                        Some(d @ b'0'..=b'7') => {
                            value = value * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(value as u8);
            }
            b'x' if raw.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                let mut value = 0u32;
                for _ in 0..2 {
                    match raw.get(i).and_then(|d| (*d as char).to_digit(16)) {
                        Some(d) => {
                            value = value * 16 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(value as u8);
            }
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> String {
        let mut out = Vec::new();
        to_csv(text.as_bytes(), &mut out, b'\t', "\\N").unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escapes_nulls_and_the_end_marker_are_read_as_postgresql_writes_them() {
        assert_eq!(csv("1\tplain\n2\t\\N\n"), "\"1\",\"plain\"\n\"2\",\n");
        assert_eq!(csv("a\\tb\tline\\nbreak\n"), "\"a\tb\",\"line\nbreak\"\n");
        assert_eq!(csv("back\\\\slash\t\\101\\x42\\q\n"), "\"back\\slash\",\"ABq\"\n");
        assert_eq!(csv("say \"hi\", then go\n"), "\"say \"\"hi\"\", then go\"\n");
        assert_eq!(csv("tab\\\there\n"), "\"tab\there\"\n", "an escaped delimiter is data");
        assert_eq!(csv("1\r\n2\n\\.\n3\n"), "\"1\"\n\"2\"\n", "rows end at \\.");
        assert_eq!(csv("\\N\n"), "\n");
    }
}
