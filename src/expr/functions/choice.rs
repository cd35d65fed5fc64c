//! Choices among values: GREATEST, LEAST, DECODE (where NULL matches NULL) and NULLIF.

use super::*;

/// GREATEST / LEAST: the arguments are converted to the type of the first; any NULL gives
/// NULL; on ties the first wins.
pub(super) fn extreme(args: &[Datum<'_>], wanted: Ordering, name: &str) -> Result<Value> {
    if args.iter().any(Datum::is_null) {
        return Ok(Datum::Null);
    }
    let model = arg(args, 0);
    let mut best = coerce_like(model, model, name)?;
    for candidate in args.iter().skip(1) {
        let candidate = coerce_like(model, candidate, name)?;
        if candidate.sql_cmp(&best)? == Some(wanted) {
            best = candidate;
        }
    }
    Ok(best)
}

/// DECODE(expr, search1, result1, ... [, default]): NULL matches NULL; expr and the searches
/// are compared as the type of the first search, and the result has the type of the first
/// result (a string when that is NULL), as in Oracle.
pub(super) fn decode(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "DECODE";
    let first_search = arg(args, 1);
    let expr = coerce_like(first_search, arg(args, 0), NAME)?;
    let rest = args.get(1..).unwrap_or(&[]);
    let mut chosen: &Datum<'_> = if rest.len() % 2 == 1 { arg(rest, rest.len() - 1) } else { &NULL };
    for pair in rest.chunks_exact(2) {
        let search = coerce_like(first_search, arg(pair, 0), NAME)?;
        let matched = match (&expr, &search) {
            (Datum::Null, Datum::Null) => true,
            (Datum::Null, _) | (_, Datum::Null) => false,
            (e, s) => e.sql_cmp(s)? == Some(Ordering::Equal),
        };
        if matched {
            chosen = arg(pair, 1);
            break;
        }
    }
    // The result takes the first result's type, as Oracle converts it.
    coerce_like(arg(args, 2), chosen, NAME)
}

/// NULLIF(a, b): NULL where `a` equals `b`, else `a` (so NULL where `a` is; a NULL `b`
/// equals nothing), `a` computed once. The two compare as `=` compares them (the binder
/// pads a literal `b` to a CHAR `a`'s length, as for `=`).
pub(super) fn null_if(args: &[Datum<'_>]) -> Result<Value> {
    let (a, b) = (arg(args, 0), arg(args, 1));
    Ok(if a.sql_cmp(b)? == Some(Ordering::Equal) { Datum::Null } else { owned(a) })
}
