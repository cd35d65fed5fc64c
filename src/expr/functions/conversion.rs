//! Conversions: TO_CHAR, TO_DATE and TO_NUMBER, with or without a format mask.

use super::*;

/// TO_CHAR(value [, mask]): a DATE with a date mask, a number (or numeric string) with a
/// number mask; without a mask, the implicit conversion.
pub(super) fn to_char(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "TO_CHAR";
    let value = arg(args, 0);
    if args.len() < 2 {
        return Ok(text(value).map_or(Datum::Null, |t| Datum::string(t.into_owned())));
    }
    let Some(mask) = text(arg(args, 1)) else { return Ok(Datum::Null) };
    match value {
        Datum::Null => Ok(Datum::Null),
        Datum::Date(seconds) => format_date_mask(*seconds, &mask, NAME).map(Datum::string),
        other => {
            let Some(d) = number(other, NAME)? else { return Ok(Datum::Null) };
            Ok(Datum::string(NumberMask::parse(&mask, NAME)?.format(d)))
        }
    }
}

/// TO_DATE(text [, mask]): without a mask, the default format (YYYY-MM-DD [HH24:MI:SS]).
pub(super) fn to_date(args: &[Datum<'_>], now: i64) -> Result<Value> {
    const NAME: &str = "TO_DATE";
    let value = arg(args, 0);
    if let Datum::Date(d) = value {
        return Ok(Datum::Date(*d));
    }
    let Some(input) = text(value) else { return Ok(Datum::Null) };
    if args.len() < 2 {
        return parse_date(&input, None).map(Datum::Date).map_err(|m| Error::value(NAME, m));
    }
    let Some(mask) = text(arg(args, 1)) else { return Ok(Datum::Null) };
    parse_date_with_mask(&input, &mask, now).map(Datum::Date)
}

/// TO_NUMBER(text [, mask]).
pub(super) fn to_number(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "TO_NUMBER";
    let value = arg(args, 0);
    let mask = if args.len() > 1 {
        match text(arg(args, 1)) {
            Some(m) => Some(NumberMask::parse(&m, NAME)?),
            None => return Ok(Datum::Null),
        }
    } else {
        None
    };
    match (value, mask) {
        (Datum::Null, _) => Ok(Datum::Null),
        (Datum::Date(_), _) => Err(Error::value(NAME, "expected NUMBER, got DATE")),
        (Datum::Str(s), Some(mask)) => mask.read(s, NAME),
        (Datum::Str(s), None) => Datum::parse_number(s.trim()).map_err(|m| Error::value(NAME, m)),
        (number, _) => Ok(owned(number)),
    }
}
