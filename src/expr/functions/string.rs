//! String functions: SUBSTR, INSTR, LPAD and RPAD ([`pad_into`] builds in a caller's
//! buffer), TRIM, REPLACE, UPPER and LOWER, LENGTH, CHR, ASCII. Positions and lengths
//! count characters.

use super::*;

/// LPAD / RPAD(str, n [, pad]): pads to n characters, or cuts to the first n.
pub(super) fn pad(args: &[Datum<'_>], left: bool, name: &str) -> Result<Value> {
    let mut out = String::new();
    Ok(if pad_into(args, left, name, &mut out)? { Datum::string(out) } else { Datum::Null })
}

/// LPAD / RPAD writing its text into `out` (cleared first, and reused by a caller that
/// evaluates row after row): `Ok(false)` when the result is NULL, else the result is
/// `Datum::string(out)`. A whole-number first argument is written as text on the stack.
pub fn pad_into(args: &[Datum<'_>], left: bool, name: &str, out: &mut String) -> Result<bool> {
    out.clear();
    let mut digits = itoa::Buffer::new();
    let s = match arg(args, 0) {
        Datum::Int(i) => Cow::Borrowed(digits.format(*i)),
        other => match text(other) {
            Some(s) => s,
            None => return Ok(false),
        },
    };
    let Some(n) = int_arg(arg(args, 1), name)? else { return Ok(false) };
    let Some(fill) = text_or(args, 2, " ") else { return Ok(false) };
    if n <= 0 {
        return Ok(false);
    }
    let n = result_length(n, name)?;
    if s.is_ascii() && fill.is_ascii() && !fill.is_empty() {
        pad_ascii(&s, n, &fill, left, out);
        return Ok(true);
    }
    let have = s.chars().count();
    if have >= n {
        out.extend(s.chars().take(n));
        return Ok(true);
    }
    let padding = fill.chars().cycle().take(n - have);
    if left {
        out.extend(padding);
        out.push_str(&s);
    } else {
        out.push_str(&s);
        out.extend(padding);
    }
    Ok(true)
}

/// [`pad_into`] when every character is one byte (`fill` not empty): counts and cuts
/// bytes, and appends the result to `out`.
pub fn pad_ascii(s: &str, n: usize, fill: &str, left: bool, out: &mut String) {
    if s.len() >= n {
        out.push_str(&s[..n]);
        return;
    }
    out.reserve(n);
    if !left {
        out.push_str(s);
    }
    let missing = n - s.len();
    if let &[byte] = fill.as_bytes() {
        // The usual fill, one character: pushed byte by byte, not copied as a string.
        out.extend(std::iter::repeat_n(char::from(byte), missing));
    } else {
        for _ in 0..missing / fill.len() {
            out.push_str(fill);
        }
        out.push_str(&fill[..missing % fill.len()]);
    }
    if left {
        out.push_str(s);
    }
}

/// SUBSTR(s, pos [, len]): 1-based, pos 0 is 1, a negative pos counts from the end.
pub(super) fn substr(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "SUBSTR";
    let Some(s) = text(arg(args, 0)) else { return Ok(Datum::Null) };
    let Some(pos) = int_arg(arg(args, 1), NAME)? else { return Ok(Datum::Null) };
    let Some(len) = int_or(args, 2, i64::MAX, NAME)? else { return Ok(Datum::Null) };
    if len < 1 {
        return Ok(Datum::Null);
    }
    let count = i64::try_from(s.chars().count()).unwrap_or(i64::MAX);
    let start = match pos {
        0 => 0,
        p if p > 0 => p - 1,
        p => count + p,
    };
    if start < 0 || start >= count {
        return Ok(Datum::Null);
    }
    let (start, len) = (usize::try_from(start).unwrap_or(0), usize::try_from(len).unwrap_or(usize::MAX));
    Ok(Datum::string(s.chars().skip(start).take(len).collect::<String>()))
}

pub(super) fn change_case(args: &[Datum<'_>], upper: bool) -> Result<Value> {
    Ok(text(arg(args, 0))
        .map_or(Datum::Null, |s| Datum::string(if upper { s.to_uppercase() } else { s.to_lowercase() })))
}

pub(super) fn length(args: &[Datum<'_>]) -> Result<Value> {
    Ok(text(arg(args, 0)).map_or(Datum::Null, |s| Datum::Int(i64::try_from(s.chars().count()).unwrap_or(i64::MAX))))
}

/// TRIM(s) trims blanks from both ends; LTRIM / RTRIM(s [, set]) trim characters of `set`.
pub(super) fn trim(args: &[Datum<'_>], leading: bool, trailing: bool) -> Result<Value> {
    let Some(s) = text(arg(args, 0)) else { return Ok(Datum::Null) };
    let Some(set) = text_or(args, 1, " ") else { return Ok(Datum::Null) };
    let mut rest: &str = &s;
    if leading {
        rest = rest.trim_start_matches(|c| set.contains(c));
    }
    if trailing {
        rest = rest.trim_end_matches(|c| set.contains(c));
    }
    Ok(Datum::string(rest.to_string()))
}

/// INSTR(s, sub [, pos [, occurrence]]): character position of the occurrence-th match
/// (overlapping matches count), searching backwards from the end when pos < 0; 0 when none.
pub(super) fn instr(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "INSTR";
    let (Some(s), Some(sub)) = (text(arg(args, 0)), text(arg(args, 1))) else { return Ok(Datum::Null) };
    let (Some(pos), Some(nth)) = (int_or(args, 2, 1, NAME)?, int_or(args, 3, 1, NAME)?) else {
        return Ok(Datum::Null);
    };
    if nth < 1 {
        return Err(out_of_range(NAME, nth));
    }
    if pos == 0 {
        return Ok(Datum::Int(0));
    }
    let hay: Vec<char> = s.chars().collect();
    let needle: Vec<char> = sub.chars().collect();
    let Some(last_start) = hay.len().checked_sub(needle.len()) else { return Ok(Datum::Int(0)) };
    let matches_at = |i: &usize| hay.get(*i..*i + needle.len()) == Some(&needle[..]);
    let found = if pos > 0 {
        let first = usize::try_from(pos - 1).unwrap_or(usize::MAX);
        (first..=last_start).filter(matches_at).nth(occurrence_index(nth))
    } else {
        let from_end = usize::try_from(pos.unsigned_abs()).unwrap_or(usize::MAX);
        match hay.len().checked_sub(from_end) {
            None => None,
            Some(start) => (0..=start.min(last_start)).rev().filter(matches_at).nth(occurrence_index(nth)),
        }
    };
    Ok(Datum::Int(found.map_or(0, |i| i64::try_from(i).unwrap_or(i64::MAX).saturating_add(1))))
}

pub(super) fn occurrence_index(nth: i64) -> usize {
    usize::try_from(nth - 1).unwrap_or(usize::MAX)
}

/// REPLACE(s, from [, to]): a NULL `from` changes nothing; a NULL or missing `to` removes.
pub(super) fn replace(args: &[Datum<'_>]) -> Result<Value> {
    let Some(s) = text(arg(args, 0)) else { return Ok(Datum::Null) };
    let Some(from) = text(arg(args, 1)) else { return Ok(Datum::string(s.into_owned())) };
    let to = text(arg(args, 2)).unwrap_or_default();
    Ok(Datum::string(s.replace(from.as_ref(), &to)))
}

/// CHR(n): the character whose UTF-8 bytes, read as a big-endian number, are n (Oracle in
/// an AL32UTF8 database: CHR(65) = 'A', CHR(50089) = 'é').
pub(super) fn chr(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "CHR";
    let Some(n) = int_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let code = u32::try_from(n).map_err(|_| out_of_range(NAME, n))?;
    let bytes = code.to_be_bytes();
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len() - 1);
    let s = bytes
        .get(first..)
        .and_then(|b| std::str::from_utf8(b).ok())
        .ok_or_else(|| Error::value(NAME, format!("{n} is not the UTF-8 code of a character")))?;
    Ok(Datum::Str(Cow::Owned(s.to_string())))
}

/// ASCII(s): the first character's UTF-8 bytes read as a big-endian number.
pub(super) fn ascii(args: &[Datum<'_>]) -> Result<Value> {
    let Some(c) = text(arg(args, 0)).and_then(|s| s.chars().next()) else { return Ok(Datum::Null) };
    let mut buf = [0u8; 4];
    let code = c.encode_utf8(&mut buf).bytes().fold(0i64, |acc, b| (acc << 8) | i64::from(b));
    Ok(Datum::Int(code))
}
