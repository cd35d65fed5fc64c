//! lioscope's types and values as PostgreSQL's: the type OID a column is described
//! with, each value's text and binary encodings, and bind values decoded from what a
//! client sends.
//!
//! Which PostgreSQL type each lioscope type is, the engine says (`lioscope::types::pg_types`:
//! NUMBER(p ≤ 18) as `int8`, other NUMBERs `numeric`, VARCHAR2 `varchar`, CHAR `bpchar`,
//! DATE and TIMESTAMP `timestamp`, INTERVALs `interval`; a column whose type is not
//! derived is `text`), so the catalog views a client reads agree with the rows it gets.
//!
//! Invariant: a value is encoded as the type its column was described with, so a client
//! that prepared a statement decodes every row of it; a value that does not fit that
//! type (a number in a column described `int8` that needs a fraction) is an error, never
//! bytes of another type.

use bytes::{BufMut, BytesMut};
use chrono::{DateTime, NaiveDate, NaiveDateTime};
use lioscope::types::{DataType, Datum, Value, pg_types};
use pgwire::api::Type;
use postgres_types::{FromSql, ToSql};
use rust_decimal::Decimal;
use std::str::FromStr;

/// Microseconds from 1970-01-01 to PostgreSQL's epoch, 2000-01-01.
const PG_EPOCH_MICROS: i64 = 946_684_800_000_000;

/// The PostgreSQL type a column of type `t` is described with (`text` when not known):
/// the engine's one mapping (`lioscope::types::pg_types`), which its catalog views show.
pub fn pg_type(t: Option<&DataType>) -> Type {
    t.and_then(|t| Type::from_oid(pg_types::pg_type(t).oid)).unwrap_or(Type::TEXT)
}

/// The type modifier PostgreSQL describes a column of type `t` with (-1: none).
pub fn type_modifier(t: Option<&DataType>) -> i32 {
    t.map_or(-1, |t| pg_types::pg_type(t).modifier)
}

/// A result column's name as a PostgreSQL client expects it: lower case for a name
/// Oracle's rules made upper case (`ENAME`), a name with lower case letters as it is
/// (`"Name"`).
pub fn column_name(name: &str) -> String {
    if name.chars().any(char::is_lowercase) { name.to_string() } else { name.to_lowercase() }
}

/// The type a column is described with when only its values are known (the simple
/// protocol, for a column whose type the text does not give): the one kind all its
/// non-NULL values share, else `text`.
pub fn type_of_values<'a>(values: impl Iterator<Item = &'a Value>) -> Type {
    let mut kind: Option<Type> = None;
    for v in values {
        let this = match v {
            Datum::Null => continue,
            Datum::Int(_) | Datum::Num(_) => Type::NUMERIC,
            Datum::Str(_) => Type::TEXT,
            Datum::Date(_) | Datum::Timestamp(_) => Type::TIMESTAMP,
            Datum::YearMonth(_) | Datum::DaySecond(_) => Type::INTERVAL,
        };
        match &kind {
            None => kind = Some(this),
            Some(k) if *k == this => {}
            Some(_) => return Type::TEXT,
        }
    }
    kind.unwrap_or(Type::TEXT)
}

/// Appends `value` as a DataRow field of type `t` (its length, then its bytes; -1 for
/// NULL), in binary when `binary`, else as text.
pub fn put_field(out: &mut BytesMut, value: &Value, t: &Type, binary: bool) -> Result<(), String> {
    if value.is_null() {
        out.put_i32(-1);
        return Ok(());
    }
    let at = out.len();
    out.put_i32(0);
    if binary {
        put_binary(out, value, t)?;
    } else {
        put_text(out, value);
    }
    let length = (out.len() - at - 4) as i32;
    out[at..at + 4].copy_from_slice(&length.to_be_bytes());
    Ok(())
}

/// `value` in PostgreSQL's text form.
#[cfg(test)]
fn text_of(value: &Value) -> String {
    let mut out = BytesMut::new();
    put_text(&mut out, value);
    String::from_utf8(out.to_vec()).unwrap_or_default()
}

fn put_text(out: &mut BytesMut, value: &Value) {
    let text = match value {
        Datum::Null => return,
        Datum::Int(i) => {
            // Straight into the message: no string for the commonest value.
            let _ = std::fmt::Write::write_fmt(out, format_args!("{i}"));
            return;
        }
        Datum::Num(d) => d.normalize().to_string(),
        Datum::Str(s) => {
            out.put_slice(s.as_bytes());
            return;
        }
        Datum::Date(seconds) => timestamp_text(seconds.saturating_mul(1_000_000)),
        Datum::Timestamp(micros) => timestamp_text(*micros),
        Datum::YearMonth(months) => year_month_text(*months),
        Datum::DaySecond(micros) => day_second_text(*micros),
    };
    out.put_slice(text.as_bytes());
}

fn put_binary(out: &mut BytesMut, value: &Value, t: &Type) -> Result<(), String> {
    let mismatch = || format!("a {} value in a column described as {}", value.type_name(), t.name());
    match *t {
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => put_text(out, value),
        Type::BOOL => match value {
            Datum::Str(s) if s == "t" || s == "f" => out.put_u8(u8::from(s == "t")),
            _ => return Err(mismatch()),
        },
        Type::INT8 => match value {
            Datum::Int(i) => out.put_i64(*i),
            _ => return Err(mismatch()),
        },
        Type::NUMERIC => {
            let decimal = match value {
                Datum::Int(i) => Decimal::from(*i),
                Datum::Num(d) => *d,
                _ => return Err(mismatch()),
            };
            decimal.to_sql(&Type::NUMERIC, out).map_err(|e| e.to_string())?;
        }
        Type::TIMESTAMP => match value {
            Datum::Date(s) => out.put_i64(s.saturating_mul(1_000_000) - PG_EPOCH_MICROS),
            Datum::Timestamp(us) => out.put_i64(us - PG_EPOCH_MICROS),
            _ => return Err(mismatch()),
        },
        Type::INTERVAL => match value {
            Datum::YearMonth(months) => {
                out.put_i64(0);
                out.put_i32(0);
                out.put_i32(i32::try_from(*months).map_err(|_| mismatch())?);
            }
            Datum::DaySecond(us) => {
                let days = us / 86_400_000_000;
                out.put_i64(us % 86_400_000_000);
                out.put_i32(i32::try_from(days).map_err(|_| mismatch())?);
                out.put_i32(0);
            }
            _ => return Err(mismatch()),
        },
        _ => return Err(mismatch()),
    }
    Ok(())
}

/// A timestamp as PostgreSQL writes it: `2026-12-02 05:44:15`, with the fraction's
/// digits up to the last that is not zero.
fn timestamp_text(micros: i64) -> String {
    let Some(at) = DateTime::from_timestamp_micros(micros).map(|d| d.naive_utc()) else {
        return micros.to_string();
    };
    let mut text = at.format("%Y-%m-%d %H:%M:%S").to_string();
    let fraction = micros.rem_euclid(1_000_000);
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text
}

fn year_month_text(months: i64) -> String {
    let (years, months) = (months / 12, months % 12);
    let mut parts = Vec::new();
    if years != 0 {
        parts.push(format!("{years} year{}", if years.abs() == 1 { "" } else { "s" }));
    }
    if months != 0 || years == 0 {
        parts.push(format!("{months} mon{}", if months.abs() == 1 { "" } else { "s" }));
    }
    parts.join(" ")
}

fn day_second_text(micros: i64) -> String {
    let days = micros / 86_400_000_000;
    let rest = micros % 86_400_000_000;
    let sign = if rest < 0 { "-" } else { "" };
    let rest = rest.unsigned_abs();
    let (h, m, s, f) = (rest / 3_600_000_000, rest / 60_000_000 % 60, rest / 1_000_000 % 60, rest % 1_000_000);
    let mut text = String::new();
    if days != 0 {
        text.push_str(&format!("{days} day{} ", if days.abs() == 1 { "" } else { "s" }));
    }
    text.push_str(&format!("{sign}{h:02}:{m:02}:{s:02}"));
    if f != 0 {
        text.push('.');
        text.push_str(format!("{f:06}").trim_end_matches('0'));
    }
    text
}

/// A bind value a client sent, of type `t` (`None`: the client left it to the server),
/// in binary or text.
pub fn decode_parameter(bytes: Option<&[u8]>, t: Option<&Type>, binary: bool) -> Result<Value, String> {
    let Some(bytes) = bytes else { return Ok(Datum::Null) };
    let t = t.cloned().unwrap_or(Type::UNKNOWN);
    let wrong = |e: Box<dyn std::error::Error + Sync + Send>| format!("a {} parameter: {e}", t.name());
    if binary {
        return Ok(match t {
            Type::INT2 => Datum::Int(i16::from_sql(&t, bytes).map_err(wrong)?.into()),
            Type::INT4 => Datum::Int(i32::from_sql(&t, bytes).map_err(wrong)?.into()),
            Type::INT8 => Datum::Int(i64::from_sql(&t, bytes).map_err(wrong)?),
            Type::OID => Datum::Int(u32::from_sql(&t, bytes).map_err(wrong)?.into()),
            Type::BOOL => Datum::Int(i64::from(bool::from_sql(&t, bytes).map_err(wrong)?)),
            Type::FLOAT4 => float(f64::from(f32::from_sql(&t, bytes).map_err(wrong)?))?,
            Type::FLOAT8 => float(f64::from_sql(&t, bytes).map_err(wrong)?)?,
            Type::NUMERIC => Datum::from_decimal(Decimal::from_sql(&t, bytes).map_err(wrong)?),
            Type::TIMESTAMP | Type::TIMESTAMPTZ => {
                Datum::Timestamp(i64::from_sql(&Type::INT8, bytes).map_err(wrong)? + PG_EPOCH_MICROS)
            }
            Type::DATE => {
                let days = i32::from_sql(&Type::INT4, bytes).map_err(wrong)?;
                Datum::Date((i64::from(days) * 86_400_000_000 + PG_EPOCH_MICROS) / 1_000_000)
            }
            _ => Datum::string(String::from_sql(&Type::TEXT, bytes).map_err(wrong)?),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|_| format!("a {} parameter is not UTF-8", t.name()))?;
    Ok(match t {
        Type::INT2 | Type::INT4 | Type::INT8 | Type::OID | Type::NUMERIC | Type::FLOAT4 | Type::FLOAT8 => {
            Datum::parse_number(text.trim())?
        }
        Type::BOOL => Datum::Int(i64::from(matches!(text.trim(), "t" | "true" | "1" | "on" | "yes"))),
        // A zone given to a timestamp without one is ignored, as PostgreSQL ignores it;
        // one with a zone is taken to UTC, the server's TimeZone.
        Type::TIMESTAMP => Datum::Timestamp(parse_timestamp(text)?.0),
        Type::TIMESTAMPTZ => {
            let (local, offset) = parse_timestamp(text)?;
            Datum::Timestamp(local - offset * 1_000_000)
        }
        Type::DATE => Datum::Date(parse_timestamp(text)?.0 / 1_000_000),
        _ => Datum::string(text.to_string()),
    })
}

fn float(f: f64) -> Result<Value, String> {
    Decimal::from_f64_retain(f).map(Datum::from_decimal).ok_or_else(|| format!("the number {f} has no decimal value"))
}

/// `2026-12-02`, `2026-12-02 05:44:15` or with a fraction, as microseconds since 1970,
/// and the zone's offset east of UTC in seconds where one follows (`+00`, `-08:00`,
/// `+0530`, `Z`; JDBC's drivers send one with every timestamp), else 0.
fn parse_timestamp(text: &str) -> Result<(i64, i64), String> {
    let text = text.trim();
    let invalid = || format!("invalid timestamp '{text}'");
    let (text, offset) = match text.strip_suffix('Z') {
        Some(local) => (local, 0),
        None => match text.rfind(['+', '-']).filter(|&at| at >= 10) {
            Some(at) => (&text[..at], zone_offset(&text[at..]).ok_or_else(invalid)?),
            None => (text, 0),
        },
    };
    let at = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
        .or_else(|_| NaiveDate::from_str(text).map(|d| d.and_hms_opt(0, 0, 0).expect("midnight")))
        .map_err(|_| invalid())?;
    Ok((at.and_utc().timestamp_micros(), offset))
}

/// The seconds east of UTC of a zone written `+HH`, `+HH:MM` or `+HHMM` (or with `-`).
fn zone_offset(zone: &str) -> Option<i64> {
    let sign = if zone.starts_with('-') { -1 } else { 1 };
    let digits: String = zone[1..].chars().filter(|&c| c != ':').collect();
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !matches!(digits.len(), 2 | 4) {
        return None;
    }
    let hours: i64 = digits[..2].parse().ok()?;
    let minutes: i64 = if digits.len() == 4 { digits[2..].parse().ok()? } else { 0 };
    (hours <= 15 && minutes < 60).then_some(sign * (hours * 3600 + minutes * 60))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Value) -> String {
        text_of(&v)
    }

    #[test]
    fn values_read_as_postgresql_writes_them() {
        assert_eq!(text(Datum::Int(-42)), "-42");
        assert_eq!(text(Datum::from_decimal(Decimal::from_str("0.50").unwrap())), "0.5");
        assert_eq!(text(Datum::Date(0)), "1970-01-01 00:00:00");
        assert_eq!(text(Datum::Timestamp(1_500_000)), "1970-01-01 00:00:01.5");
        assert_eq!(text(Datum::YearMonth(14)), "1 year 2 mons");
        assert_eq!(text(Datum::DaySecond(86_400_000_000 + 3_661_250_000)), "1 day 01:01:01.25");
    }

    #[test]
    fn binary_values_round_trip_through_the_driver_types() {
        let mut out = BytesMut::new();
        put_field(&mut out, &Datum::Int(7), &Type::NUMERIC, true).unwrap();
        assert_eq!(Decimal::from_sql(&Type::NUMERIC, &out[4..]).unwrap(), Decimal::from(7));
        let decoded = decode_parameter(Some(&out[4..]), Some(&Type::NUMERIC), true).unwrap();
        assert_eq!(decoded.to_string(), "7");
        let mut out = BytesMut::new();
        put_field(&mut out, &Datum::Timestamp(1_000_001), &Type::TIMESTAMP, true).unwrap();
        let at = NaiveDateTime::from_sql(&Type::TIMESTAMP, &out[4..]).unwrap();
        assert_eq!(at.and_utc().timestamp_micros(), 1_000_001);
        assert!(put_field(&mut BytesMut::new(), &Datum::string("x"), &Type::INT8, true).is_err());
    }

    #[test]
    fn text_parameters_take_the_type_the_client_gave() {
        assert_eq!(decode_parameter(Some(b"12"), Some(&Type::INT4), false).unwrap().to_string(), "12");
        assert!(matches!(decode_parameter(Some(b"12"), None, false).unwrap(), Datum::Str(_)));
        assert!(decode_parameter(Some(b"x"), Some(&Type::INT4), false).is_err());
        let at = decode_parameter(Some(b"2026-12-02 05:44:15.5"), Some(&Type::TIMESTAMP), false).unwrap();
        assert_eq!(text(at), "2026-12-02 05:44:15.5");
        assert!(decode_parameter(None, Some(&Type::INT4), false).unwrap().is_null());
    }

    #[test]
    fn a_timestamp_parameters_zone_is_ignored_without_a_zone_type_and_applied_with_one() {
        let decode = |t: &Type, s: &str| decode_parameter(Some(s.as_bytes()), Some(t), false).map(text);
        assert_eq!(decode(&Type::TIMESTAMP, "2026-12-02 10:00:00+00").unwrap(), "2026-12-02 10:00:00");
        assert_eq!(decode(&Type::TIMESTAMP, "2026-12-02 10:00:00.25-08:00").unwrap(), "2026-12-02 10:00:00.25");
        assert_eq!(decode(&Type::TIMESTAMPTZ, "2026-12-02 10:00:00+0530").unwrap(), "2026-12-02 04:30:00");
        assert_eq!(decode(&Type::TIMESTAMPTZ, "2026-12-02T10:00:00-02").unwrap(), "2026-12-02 12:00:00");
        assert_eq!(decode(&Type::TIMESTAMPTZ, "2026-12-02 10:00:00Z").unwrap(), "2026-12-02 10:00:00");
        assert_eq!(decode(&Type::DATE, "2026-12-02+00").unwrap(), "2026-12-02 00:00:00");
        for bad in ["2026-12-02 10:00:00+1", "2026-12-02 10:00:00+ab", "2026-12-02 10:00:00+24"] {
            let e = decode(&Type::TIMESTAMP, bad).unwrap_err();
            assert!(e.contains("invalid timestamp") && e.contains(bad), "{bad}: {e}");
        }
    }
}
