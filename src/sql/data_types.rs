//! Declared column types, by SQL's and Oracle's names (`INTEGER`, `NUMBER(p, s)`,
//! `NUMERIC`, `VARCHAR2(n)`, `CHAR(n)`, `DATE`, ...), as lioscope's types: for CREATE
//! TABLE's columns and CAST expressions (whose types also type CREATE TABLE ... AS
//! SELECT's columns). A type lioscope does not take (a length in characters, an unbounded
//! length, a precision out of range) is refused with the reason, never narrowed.

use crate::types::{DEFAULT_FRACTION_DIGITS, DataType};
use sqlparser::ast::{self, CharacterLength, DataType as AstType, ExactNumberInfo};

/// Maps a declared type to lioscope's types; `Err` says why it is not accepted.
pub(super) fn data_type(t: &AstType) -> std::result::Result<DataType, String> {
    match t {
        AstType::Int(_) | AstType::Integer(_) => Ok(DataType::Integer),
        AstType::Numeric(info) | AstType::Decimal(info) => number_type(info_args(info)),
        AstType::Varchar(len) | AstType::CharVarying(len) | AstType::Nvarchar(len) => string_type(len, true),
        AstType::Char(len) | AstType::Character(len) => string_type(len, false),
        AstType::Date => Ok(DataType::Date),
        AstType::Timestamp(precision, ast::TimezoneInfo::None | ast::TimezoneInfo::WithoutTimeZone) => {
            match precision.unwrap_or(u64::from(DEFAULT_FRACTION_DIGITS)) {
                p @ 0..=6 => Ok(DataType::Timestamp { precision: p as u8 }),
                p @ 7..=9 => Err(format!(
                    "TIMESTAMP({p}): lioscope keeps fractional seconds to the microsecond, TIMESTAMP(6) at most"
                )),
                p => Err(format!("TIMESTAMP({p}): the fractional seconds precision must be between 0 and 9")),
            }
        }
        AstType::Timestamp(..) => Err("time zones are not supported: TIMESTAMP has no time zone in lioscope".into()),
        // Oracle's ANSI floating types are NUMBERs (FLOAT(p) with a binary precision of
        // 1 to 126 bits, REAL FLOAT(63), DOUBLE PRECISION FLOAT(126)); lioscope keeps the
        // value as NUMBER does, to 28 significant digits, without rounding to p bits.
        AstType::Float(info) => match info_args(info)[..] {
            [] => Ok(DataType::Number { precision: None, scale: None }),
            [p] if (1..=126).contains(&p) => Ok(DataType::Number { precision: None, scale: None }),
            [p] => Err(format!("FLOAT({p}): the binary precision must be between 1 and 126")),
            _ => Err("FLOAT takes one precision, in bits".into()),
        },
        AstType::Real | AstType::DoublePrecision => Ok(DataType::Number { precision: None, scale: None }),
        AstType::Custom(name, args) => match name.to_string().to_ascii_uppercase().as_str() {
            "NUMBER" => {
                let parsed: std::result::Result<Vec<i64>, _> = args.iter().map(|a| a.trim().parse::<i64>()).collect();
                number_type(
                    parsed.map_err(|_| {
                        format!("NUMBER({}) has a precision or scale that is not a number", args.join(","))
                    })?,
                )
            }
            "VARCHAR2" | "NVARCHAR2" => {
                if args.first().is_some_and(|a| a.to_ascii_uppercase().ends_with("CHAR")) {
                    return Err(
                        "lengths in characters (n CHAR) are not supported: lioscope lengths are bytes (n BYTE)".into(),
                    );
                }
                let n = args.first().and_then(|a| a.split_whitespace().next()?.parse::<u64>().ok());
                match n {
                    Some(n) => string_type(&Some(CharacterLength::IntegerLength { length: n, unit: None }), true),
                    None => Err("VARCHAR2 needs a length, e.g. VARCHAR2(20)".into()),
                }
            }
            super::oracle_types::YEAR_TO_MONTH => match precisions(args)?[..] {
                [p] => Ok(DataType::IntervalYearMonth { year_precision: leading(p, "YEAR")? }),
                _ => Err("INTERVAL YEAR TO MONTH takes one precision, the years' digits".into()),
            },
            super::oracle_types::DAY_TO_SECOND => match precisions(args)?[..] {
                [p, s] if s <= u64::from(DEFAULT_FRACTION_DIGITS) => {
                    Ok(DataType::IntervalDaySecond { day_precision: leading(p, "DAY")?, second_precision: s as u8 })
                }
                [_, s] if s <= 9 => Err(format!(
                    "INTERVAL DAY TO SECOND({s}): lioscope keeps fractional seconds to the microsecond, SECOND(6) at most"
                )),
                _ => Err("INTERVAL DAY TO SECOND: the fractional seconds precision must be between 0 and 9".into()),
            },
            other => Err(format!("data type {other} is not supported")),
        },
        AstType::Interval { .. } => {
            Err("an INTERVAL type names its fields: INTERVAL YEAR TO MONTH or INTERVAL DAY TO SECOND".into())
        }
        other => Err(format!("data type {other} is not supported")),
    }
}

/// The precisions of a rewritten interval type (see [`super::oracle_types`]).
fn precisions(args: &[String]) -> std::result::Result<Vec<u64>, String> {
    args.iter().map(|a| a.trim().parse::<u64>().map_err(|_| format!("{a} is not a precision"))).collect()
}

/// An interval's leading precision: 0 to 9 digits of `field`.
fn leading(p: u64, field: &str) -> std::result::Result<u8, String> {
    if p <= 9 { Ok(p as u8) } else { Err(format!("{field}({p}): the leading precision must be between 0 and 9")) }
}

fn info_args(info: &ExactNumberInfo) -> Vec<i64> {
    match info {
        ExactNumberInfo::None => vec![],
        ExactNumberInfo::Precision(p) => vec![*p as i64],
        ExactNumberInfo::PrecisionAndScale(p, s) => vec![*p as i64, *s],
    }
}

fn number_type(args: Vec<i64>) -> std::result::Result<DataType, String> {
    let check_p = |p: i64| {
        if (1..=38).contains(&p) { Ok(p as u8) } else { Err(format!("NUMBER precision {p} is outside 1..38")) }
    };
    match args.as_slice() {
        [] => Ok(DataType::Number { precision: None, scale: None }),
        [p] => Ok(DataType::Number { precision: Some(check_p(*p)?), scale: Some(0) }),
        [p, s] => {
            let p = check_p(*p)?;
            let max_scale = i64::from(crate::types::MAX_NUMBER_DIGITS);
            if !(0..=i64::from(p)).contains(s) || *s > max_scale {
                return Err(format!(
                    "NUMBER scale {s} is outside 0..{} (lioscope stores scales up to {max_scale})",
                    i64::from(p).min(max_scale)
                ));
            }
            Ok(DataType::Number { precision: Some(p), scale: Some(*s as u8) })
        }
        _ => Err("NUMBER takes at most a precision and a scale".into()),
    }
}

fn string_type(len: &Option<CharacterLength>, varying: bool) -> std::result::Result<DataType, String> {
    let n = match len {
        Some(CharacterLength::IntegerLength { unit: Some(ast::CharLengthUnits::Characters), .. }) => {
            return Err("lengths in characters (n CHAR) are not supported: lioscope lengths are bytes (n BYTE)".into());
        }
        Some(CharacterLength::IntegerLength { length, .. }) => *length,
        Some(CharacterLength::Max) => return Err("MAX lengths are not supported; give a length up to 4000".into()),
        None if varying => return Err("VARCHAR2 needs a length, e.g. VARCHAR2(20)".into()),
        None => 1,
    };
    if n == 0 || n > u64::from(crate::types::MAX_STRING_BYTES) {
        return Err(format!("length {n} is outside 1..{}", crate::types::MAX_STRING_BYTES));
    }
    let n = n as u32;
    Ok(if varying { DataType::Varchar2 { max_bytes: n } } else { DataType::Char { len: n } })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(sql_type: &str) -> std::result::Result<DataType, String> {
        let sql = format!("CREATE TABLE t (c {sql_type})");
        let statements = crate::sql::oracle_types::parse_statements(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let ast::Statement::CreateTable(create) = &statements[0] else { panic!("{sql}: not a CREATE TABLE") };
        data_type(&create.columns[0].data_type)
    }

    #[test]
    fn the_ansi_floating_types_are_numbers_and_a_bad_precision_is_refused() {
        let number = DataType::Number { precision: None, scale: None };
        for t in ["FLOAT", "FLOAT(126)", "FLOAT(1)", "REAL", "DOUBLE PRECISION"] {
            assert_eq!(parsed(t), Ok(number), "{t}");
        }
        for t in ["FLOAT(0)", "FLOAT(127)"] {
            let e = parsed(t).expect_err(t);
            assert!(e.contains("between 1 and 126"), "{t}: {e}");
        }
        assert!(parsed("TEXT").expect_err("not an Oracle type").contains("TEXT"));
    }
}
