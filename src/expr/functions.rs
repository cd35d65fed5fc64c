//! Oracle's scalar functions and operators on values.
//!
//! This module owns:
//! - the operators `+ - * /` ([`arithmetic`]) and unary minus ([`negate`]); CONCAT()
//!   ([`concat()`]), whose operator form `||` the expression evaluator builds in place;
//! - the scalar functions of [`ScalarFunction`]: strings (SUBSTR, INSTR, LPAD, RPAD, TRIM,
//!   REPLACE, UPPER, ...), numbers (MOD, ROUND, TRUNC, POWER, SQRT, ...), conversions
//!   (TO_CHAR, TO_DATE, TO_NUMBER), dates (ADD_MONTHS, LAST_DAY, ROUND/TRUNC of a DATE),
//!   choices (NVL, COALESCE, DECODE, GREATEST, LEAST), ORA_HASH and
//!   DBMS_RANDOM.VALUE / DBMS_RANDOM.STRING;
//! - [`FunctionContext`]: what a function may need from its statement (SYSDATE and a seeded
//!   pseudo-random generator, so that a statement is reproducible from its seed).
//!
//! Rules, as in Oracle:
//! - NULL in gives NULL out. The exceptions are Oracle's: NVL and COALESCE (they exist to
//!   replace NULL), DECODE (NULL matches NULL), `||` and CONCAT (NULL is an empty string),
//!   REPLACE (a NULL search string changes nothing, a NULL replacement removes) and
//!   DBMS_RANDOM.STRING (a NULL option means 'U').
//! - The empty string is NULL: a function whose result would be '' returns NULL.
//! - Numbers are exact decimals of 28 significant digits ([`Datum::from_decimal`] keeps a
//!   whole result that fits in `i64` as `Datum::Int`). Integer arithmetic that overflows
//!   `i64` moves to a decimal; a decimal overflow is an error ("numeric overflow"). Division
//!   is decimal division. Only POWER with a non-integer exponent and SQRT go through `f64`,
//!   keeping 15 significant digits.
//! - DATE arithmetic counts in days: DATE ± n adds n days (a fraction of a day becomes
//!   seconds, rounded); DATE - DATE is the number of days between them, possibly fractional.
//!   A DATE made by this module lies in the years 1 to 9999 (proleptic Gregorian calendar;
//!   Oracle also has BC dates and uses the Julian calendar before 1582).
//! - A string meeting a number is converted implicitly; one that is not a number is an error
//!   ("invalid number 'x'").
//! - Positions and lengths count characters, not bytes.
//! - Errors are [`Error::InvalidValue`] whose context is the function's SQL name
//!   ("arithmetic" for the operators). No input makes a function panic; a string result is
//!   at most [`MAX_RESULT_CHARS`] characters.
//!
//! Known differences from Oracle: ORA_HASH gives different (but deterministic) values; CHR
//! and ASCII use the UTF-8 bytes of a character as a number, as Oracle does in an AL32UTF8
//! database; TO_CHAR and TO_DATE use English names and the American week (Sunday is day 1).

use crate::error::{Error, Result};
use crate::types::{Datum, Value, parse_date};
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};
use std::borrow::Cow;
use std::cmp::Ordering;

/// Longest string (in characters) a function builds; longer requests are an error.
pub const MAX_RESULT_CHARS: usize = 32_767;

const ARITHMETIC: &str = "arithmetic";
const SECONDS_PER_DAY: i64 = 86_400;
/// 0001-01-01 00:00:00, the first DATE this module makes.
const MIN_DATE: i64 = -62_135_596_800;
/// 9999-12-31 23:59:59, the last DATE this module makes.
const MAX_DATE: i64 = 253_402_300_799;
/// Julian day number of 0000-12-31 (day 0 of chrono's "days from CE").
const JULIAN_DAY_OF_CE: i64 = 1_721_425;
/// Longest string DBMS_RANDOM.STRING returns, as Oracle.
const MAX_RANDOM_STRING: i64 = 4000;

// ---------------------------------------------------------------------------------------
// Per-statement state
// ---------------------------------------------------------------------------------------

/// Per-statement state a function may need.
#[derive(Debug, Clone)]
pub struct FunctionContext {
    /// SYSDATE for this statement, seconds since 1970.
    pub now: i64,
    /// The statement's generator for DBMS_RANDOM.
    pub random: RandomState,
    /// The values of the statement's bind variables, by slot (see [`Expr::Bind`]).
    ///
    /// [`Expr::Bind`]: crate::expr::Expr::Bind
    pub binds: Vec<Value>,
    /// The bind variables' names, by slot, as the binder resolves them (`:LO`, `:1`).
    pub bind_names: std::sync::Arc<[String]>,
    /// What planning took from this context as constants of the plan.
    pub taken: std::cell::RefCell<PlanInputs>,
}

/// The values of one execution a plan holds as constants: a plan kept for later
/// executions is good for another only when these are the same.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanInputs {
    /// SYSDATE was folded into the plan.
    pub sysdate: bool,
    /// Bind slots whose values size the plan (ROWNUM <= :n, FETCH FIRST :n ROWS).
    pub binds: Vec<usize>,
}

impl FunctionContext {
    /// A context for a statement started at `now` whose random numbers derive from `seed`.
    pub fn new(now: i64, seed: u64) -> Self {
        FunctionContext {
            now,
            random: RandomState::new(seed),
            binds: Vec::new(),
            bind_names: std::sync::Arc::from([]),
            taken: Default::default(),
        }
    }

    /// SYSDATE, noted as a constant of the plan being made.
    pub fn sysdate_constant(&self) -> i64 {
        self.taken.borrow_mut().sysdate = true;
        self.now
    }

    /// The slot of bind variable `name` (as written: `:lo`, `:1`); `None` when the
    /// statement has no such bind variable.
    pub fn bind_slot(&self, name: &str) -> Option<usize> {
        let name = normalized_bind_name(name);
        self.bind_names.iter().position(|n| *n == name)
    }

    /// The value of the bind variable in `slot` (called `name` in the statement).
    pub fn bind(&self, slot: usize, name: &str) -> Result<Value> {
        self.binds.get(slot).cloned().ok_or_else(|| Error::InvalidValue {
            context: format!("bind variable {name}"),
            message: "no value was bound to it".into(),
        })
    }
}

/// A bind variable's name as slots are told apart: `:lo`, `:LO` and `:"lo"` are one
/// variable (upper case, without quotes).
pub fn normalized_bind_name(name: &str) -> String {
    let rest = name.strip_prefix(':').unwrap_or(name);
    format!(":{}", rest.trim_matches('"').to_uppercase())
}

/// A seeded pseudo-random generator (splitmix64). Same seed → same sequence.
#[derive(Debug, Clone)]
pub struct RandomState {
    state: u64,
}

impl RandomState {
    pub fn new(seed: u64) -> Self {
        RandomState { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    #[cfg(test)]
    /// A number in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number in [0, n) (0 when n is 0).
    pub fn next_below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// The splitmix64 finalizer: a bijection that spreads every input bit over the output.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

/// One side of an operator after implicit conversion.
#[derive(Debug, Clone, Copy)]
enum Operand {
    Int(i64),
    Dec(Decimal),
    Date(i64),
}

impl Operand {
    /// `None` for NULL; a string becomes a number.
    fn of(d: &Datum<'_>, context: &str) -> Result<Option<Operand>> {
        Ok(Some(match d {
            Datum::Null => return Ok(None),
            Datum::Int(i) => Operand::Int(*i),
            Datum::Num(n) => Operand::Dec(*n),
            Datum::Date(s) => Operand::Date(*s),
            Datum::Str(s) => match Datum::parse_number(s.trim()).map_err(|m| Error::value(context, m))? {
                Datum::Int(i) => Operand::Int(i),
                Datum::Num(n) => Operand::Dec(n),
                _ => return Ok(None),
            },
        }))
    }

    fn decimal(self) -> Decimal {
        match self {
            Operand::Int(i) => Decimal::from(i),
            Operand::Dec(d) => d,
            Operand::Date(_) => Decimal::ZERO,
        }
    }
}

/// `+ - * /` with Oracle's rules: exact integers (moving to a decimal on `i64` overflow),
/// exact decimal division, DATE ± days, DATE - DATE in days, strings converted to numbers.
/// NULL on either side gives NULL.
pub fn arithmetic(op: ArithOp, left: &Datum<'_>, right: &Datum<'_>) -> Result<Value> {
    if left.is_null() || right.is_null() {
        return Ok(Datum::Null);
    }
    let (Some(l), Some(r)) = (Operand::of(left, ARITHMETIC)?, Operand::of(right, ARITHMETIC)?) else {
        return Ok(Datum::Null);
    };
    match (op, l, r) {
        (ArithOp::Sub, Operand::Date(a), Operand::Date(b)) => Ok(days_between(a, b)),
        (ArithOp::Add, Operand::Date(_), Operand::Date(_)) => {
            Err(Error::value(ARITHMETIC, "DATE + DATE is not allowed"))
        }
        (ArithOp::Add, Operand::Date(d), n) | (ArithOp::Add, n, Operand::Date(d)) => shift_date(d, n, false),
        (ArithOp::Sub, Operand::Date(d), n) => shift_date(d, n, true),
        (_, Operand::Date(_), _) | (_, _, Operand::Date(_)) => {
            Err(Error::value(ARITHMETIC, format!("expected NUMBER, got DATE (DATE {} is not allowed)", symbol(op))))
        }
        (op, a, b) => numeric(op, a, b),
    }
}

fn symbol(op: ArithOp) -> &'static str {
    match op {
        ArithOp::Add => "+",
        ArithOp::Sub => "-",
        ArithOp::Mul => "*",
        ArithOp::Div => "/",
    }
}

fn numeric(op: ArithOp, a: Operand, b: Operand) -> Result<Value> {
    if let (Operand::Int(x), Operand::Int(y)) = (a, b) {
        let exact = match op {
            ArithOp::Add => x.checked_add(y),
            ArithOp::Sub => x.checked_sub(y),
            ArithOp::Mul => x.checked_mul(y),
            ArithOp::Div => None,
        };
        if let Some(v) = exact {
            return Ok(Datum::Int(v));
        }
    }
    let (x, y) = (a.decimal(), b.decimal());
    let result = match op {
        ArithOp::Add => x.checked_add(y),
        ArithOp::Sub => x.checked_sub(y),
        ArithOp::Mul => x.checked_mul(y),
        ArithOp::Div if y.is_zero() => return Err(Error::value(ARITHMETIC, "divisor is equal to zero")),
        ArithOp::Div => x.checked_div(y),
    };
    result.map(Datum::from_decimal).ok_or_else(|| overflow(ARITHMETIC))
}

/// DATE ± `days` (fractions of a day become seconds, rounded half away from zero).
fn shift_date(date: i64, days: Operand, subtract: bool) -> Result<Value> {
    let seconds = match days {
        Operand::Int(d) => d.checked_mul(SECONDS_PER_DAY),
        other => other
            .decimal()
            .checked_mul(Decimal::from(SECONDS_PER_DAY))
            .and_then(|s| i64::try_from(s.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero)).ok()),
    };
    let seconds = if subtract { seconds.and_then(i64::checked_neg) } else { seconds };
    let shifted = seconds.and_then(|s| date.checked_add(s)).ok_or_else(|| date_out_of_range(ARITHMETIC))?;
    Ok(Datum::Date(in_date_range(shifted, ARITHMETIC)?))
}

fn days_between(a: i64, b: i64) -> Value {
    let seconds = Decimal::from(i128::from(a) - i128::from(b));
    // |seconds| < 2^65 and the divisor is not zero: neither step can fail.
    seconds.checked_div(Decimal::from(SECONDS_PER_DAY)).map_or(Datum::Null, Datum::from_decimal)
}

/// `||`: NULLs are treated as empty strings (Oracle); a result '' is NULL.
pub fn concat(left: &Datum<'_>, right: &Datum<'_>) -> Value {
    let mut text = String::new();
    left.write_text(&mut text);
    right.write_text(&mut text);
    Datum::string(text)
}

/// Unary minus.
pub fn negate(v: &Datum<'_>) -> Result<Value> {
    Ok(match Operand::of(v, ARITHMETIC)? {
        None => Datum::Null,
        Some(Operand::Int(i)) => i.checked_neg().map_or_else(|| Datum::from_decimal(-Decimal::from(i)), Datum::Int),
        Some(Operand::Dec(d)) => Datum::from_decimal(-d),
        Some(Operand::Date(_)) => {
            return Err(Error::value(ARITHMETIC, "expected NUMBER, got DATE (-DATE is not allowed)"));
        }
    })
}

// ---------------------------------------------------------------------------------------
// The function catalog
// ---------------------------------------------------------------------------------------

/// Declares the functions with their SQL names in one place: the enum, the list used
/// for lookup by name, and [`ScalarFunction::name`].
macro_rules! scalar_functions {
    ($($variant:ident => $name:literal;)*) => {
        /// A scalar function, by its SQL name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ScalarFunction { $($variant),* }

        /// Every function, for lookup by name.
        const ALL_FUNCTIONS: &[ScalarFunction] = &[$(ScalarFunction::$variant),*];

        impl ScalarFunction {
            /// The function's SQL name, upper case ("DBMS_RANDOM.VALUE" is one name).
            pub fn name(&self) -> &'static str {
                match self { $(ScalarFunction::$variant => $name),* }
            }
        }
    };
}

scalar_functions! {
    Mod => "MOD";
    Rpad => "RPAD";
    Lpad => "LPAD";
    Substr => "SUBSTR";
    Upper => "UPPER";
    Lower => "LOWER";
    Length => "LENGTH";
    Trim => "TRIM";
    Ltrim => "LTRIM";
    Rtrim => "RTRIM";
    Nvl => "NVL";
    Coalesce => "COALESCE";
    Abs => "ABS";
    Round => "ROUND";
    Trunc => "TRUNC";
    Floor => "FLOOR";
    Ceil => "CEIL";
    Power => "POWER";
    Sqrt => "SQRT";
    Sign => "SIGN";
    ToChar => "TO_CHAR";
    ToDate => "TO_DATE";
    ToNumber => "TO_NUMBER";
    OraHash => "ORA_HASH";
    RandomValue => "DBMS_RANDOM.VALUE";
    RandomString => "DBMS_RANDOM.STRING";
    Chr => "CHR";
    Ascii => "ASCII";
    Instr => "INSTR";
    Replace => "REPLACE";
    Greatest => "GREATEST";
    Least => "LEAST";
    Concat => "CONCAT";
    AddMonths => "ADD_MONTHS";
    LastDay => "LAST_DAY";
    Decode => "DECODE";
}

/// How many arguments a function accepts.
#[derive(Debug, Clone, Copy)]
enum Arity {
    Exact(usize),
    /// One count or the other (and nothing between).
    Either(usize, usize),
    Between(usize, usize),
    AtLeast(usize),
}

impl Arity {
    fn accepts(self, n: usize) -> bool {
        match self {
            Arity::Exact(a) => n == a,
            Arity::Either(a, b) => n == a || n == b,
            Arity::Between(a, b) => (a..=b).contains(&n),
            Arity::AtLeast(a) => n >= a,
        }
    }

    #[inline]
    fn check(self, name: &str, n: usize) -> Result<()> {
        if self.accepts(n) { Ok(()) } else { Err(self.mismatch(name, n)) }
    }

    #[cold]
    fn mismatch(self, name: &str, n: usize) -> Error {
        let (expected, last) = match self {
            Arity::Exact(a) => (a.to_string(), a),
            Arity::Either(a, b) => (format!("{a} or {b}"), b),
            Arity::Between(a, b) if b == a + 1 => (format!("{a} or {b}"), b),
            Arity::Between(a, b) => (format!("{a} to {b}"), b),
            Arity::AtLeast(a) => (format!("at least {a}"), a),
        };
        let noun = if last == 1 { "argument" } else { "arguments" };
        Error::value(name, format!("expects {expected} {noun}, got {n}"))
    }
}

impl ScalarFunction {
    /// Looks a function up by its SQL name (case-insensitive; "DBMS_RANDOM.VALUE" is one
    /// name) and checks the argument count.
    pub fn lookup(name: &str, arg_count: usize) -> Result<ScalarFunction> {
        let function = ALL_FUNCTIONS
            .iter()
            .copied()
            .find(|f| f.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownObject { kind: "function", name: name.to_ascii_uppercase() })?;
        function.arity().check(function.name(), arg_count)?;
        Ok(function)
    }

    fn arity(&self) -> Arity {
        use Arity::*;
        use ScalarFunction::*;
        match self {
            Upper | Lower | Length | Trim | Abs | Floor | Ceil | Sqrt | Sign | Chr | Ascii | LastDay => Exact(1),
            Mod | Nvl | Power | Concat | AddMonths | RandomString => Exact(2),
            Ltrim | Rtrim | Round | Trunc | ToChar | ToDate | ToNumber => Between(1, 2),
            Rpad | Lpad | Substr | Replace => Between(2, 3),
            OraHash => Between(1, 3),
            Instr => Between(2, 4),
            RandomValue => Either(0, 2),
            Coalesce => AtLeast(2),
            Greatest | Least => AtLeast(1),
            Decode => AtLeast(3),
        }
    }

    /// Checks an argument count as [`ScalarFunction::call`] does, for callers that
    /// compute a function without it.
    #[inline]
    pub fn check_arg_count(&self, n: usize) -> Result<()> {
        self.arity().check(self.name(), n)
    }

    /// False for DBMS_RANDOM.*: their result changes from call to call.
    pub fn is_deterministic(&self) -> bool {
        !matches!(self, ScalarFunction::RandomValue | ScalarFunction::RandomString)
    }

    /// Whether [`ScalarFunction::call_whole`] may compute this function.
    #[inline]
    pub fn has_whole_number_form(&self) -> bool {
        matches!(self, ScalarFunction::Mod | ScalarFunction::Abs | ScalarFunction::OraHash)
    }

    /// The function of whole-number arguments, without building values: `Some(r)`
    /// exactly when [`ScalarFunction::call`] on `Datum::Int` arguments gives
    /// `Datum::Int(r)`; `None` when it would fail or give anything else (the caller then
    /// calls the function the general way). `args` has a count the function accepts.
    #[inline]
    pub fn call_whole(&self, args: &[i64]) -> Option<i64> {
        match (self, args) {
            (ScalarFunction::Mod, &[a, b]) => Some(if b == 0 { a } else { a.checked_rem(b).unwrap_or(0) }),
            (ScalarFunction::Abs, &[a]) => a.checked_abs(),
            (ScalarFunction::OraHash, &[v]) => ora_hash_whole(v, ORA_HASH_LIMIT, 0),
            (ScalarFunction::OraHash, &[v, max_bucket]) => ora_hash_whole(v, max_bucket, 0),
            (ScalarFunction::OraHash, &[v, max_bucket, seed]) => ora_hash_whole(v, max_bucket, seed),
            _ => None,
        }
    }

    /// Evaluates the function on `args`.
    pub fn call(&self, args: &[Datum<'_>], ctx: &mut FunctionContext) -> Result<Value> {
        use ScalarFunction::*;
        let name = self.name();
        self.arity().check(name, args.len())?;
        match self {
            Mod => modulo(args),
            Rpad => pad(args, false, name),
            Lpad => pad(args, true, name),
            Substr => substr(args),
            Upper => change_case(args, true),
            Lower => change_case(args, false),
            Length => length(args),
            Trim => trim(args, true, true),
            Ltrim => trim(args, true, false),
            Rtrim => trim(args, false, true),
            Nvl | Coalesce => Ok(args.iter().find(|a| !a.is_null()).map_or(Datum::Null, owned)),
            Abs => abs(args),
            Round => round_or_trunc(args, true, name),
            Trunc => round_or_trunc(args, false, name),
            Floor => floor_or_ceil(args, true, name),
            Ceil => floor_or_ceil(args, false, name),
            Power => power(args),
            Sqrt => sqrt(args),
            Sign => sign(args),
            ToChar => to_char(args),
            ToDate => to_date(args, ctx.now),
            ToNumber => to_number(args),
            OraHash => ora_hash(args),
            RandomValue => random_value(args, &mut ctx.random),
            RandomString => random_string(args, &mut ctx.random),
            Chr => chr(args),
            Ascii => ascii(args),
            Instr => instr(args),
            Replace => replace(args),
            Greatest => extreme(args, Ordering::Greater, name),
            Least => extreme(args, Ordering::Less, name),
            Concat => Ok(concat(arg(args, 0), arg(args, 1))),
            AddMonths => add_months(args),
            LastDay => last_day(args),
            Decode => decode(args),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Argument helpers
// ---------------------------------------------------------------------------------------

static NULL: Datum<'static> = Datum::Null;

/// Argument `i`, NULL when missing.
fn arg<'x, 'a>(args: &'x [Datum<'a>], i: usize) -> &'x Datum<'a> {
    args.get(i).unwrap_or(&NULL)
}

fn owned(d: &Datum<'_>) -> Value {
    d.clone().into_owned()
}

/// The value as text (`None` for NULL), converted as Oracle does implicitly.
fn text<'b>(d: &'b Datum<'_>) -> Option<Cow<'b, str>> {
    d.reborrow().into_text()
}

/// An optional text argument: `Ok(default)` when absent, `None` when NULL.
fn text_or<'b>(args: &'b [Datum<'_>], i: usize, default: &'static str) -> Option<Cow<'b, str>> {
    if args.len() > i { text(arg(args, i)) } else { Some(Cow::Borrowed(default)) }
}

fn number(d: &Datum<'_>, name: &str) -> Result<Option<Decimal>> {
    d.to_decimal(name)
}

/// A whole-number argument (position, length, count): truncated, and saturated to `i64`.
fn int_arg(d: &Datum<'_>, name: &str) -> Result<Option<i64>> {
    if let Datum::Int(i) = d {
        return Ok(Some(*i));
    }
    Ok(number(d, name)?
        .map(|n| i64::try_from(n.trunc()).unwrap_or(if n.is_sign_negative() { i64::MIN } else { i64::MAX })))
}

/// An optional whole-number argument: `Some(default)` when absent, `None` when NULL.
fn int_or(args: &[Datum<'_>], i: usize, default: i64, name: &str) -> Result<Option<i64>> {
    if args.len() > i { int_arg(arg(args, i), name) } else { Ok(Some(default)) }
}

fn overflow(name: &str) -> Error {
    Error::value(name, "numeric overflow")
}

fn out_of_range(name: &str, value: impl std::fmt::Display) -> Error {
    Error::value(name, format!("argument '{value}' is out of range"))
}

/// A string length checked against [`MAX_RESULT_CHARS`].
fn result_length(n: i64, name: &str) -> Result<usize> {
    usize::try_from(n).ok().filter(|&n| n <= MAX_RESULT_CHARS).ok_or_else(|| {
        Error::value(name, format!("a result of {n} characters is longer than the maximum of {MAX_RESULT_CHARS}"))
    })
}

/// Converts `v` to the type of `model`, as Oracle converts the arguments of GREATEST, LEAST
/// and DECODE to the type of the first one (NULL counts as a string).
fn coerce_like(model: &Datum<'_>, v: &Datum<'_>, name: &str) -> Result<Value> {
    Ok(match (model, v) {
        (_, Datum::Null) => Datum::Null,
        (Datum::Int(_) | Datum::Num(_), v) => number(v, name)?.map_or(Datum::Null, Datum::from_decimal),
        (Datum::Date(_), Datum::Date(d)) => Datum::Date(*d),
        (Datum::Date(_), Datum::Str(s)) => Datum::Date(parse_date(s, None).map_err(|m| Error::value(name, m))?),
        (Datum::Date(_), other) => {
            return Err(Error::value(name, format!("expected DATE, got {}", other.type_name())));
        }
        (Datum::Str(_) | Datum::Null, v) => text(v).map_or(Datum::Null, |t| Datum::string(t.into_owned())),
    })
}

// ---------------------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------------------

/// LPAD / RPAD(str, n [, pad]): pads to n characters, or cuts to the first n.
fn pad(args: &[Datum<'_>], left: bool, name: &str) -> Result<Value> {
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
pub(super) fn pad_ascii(s: &str, n: usize, fill: &str, left: bool, out: &mut String) {
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
fn substr(args: &[Datum<'_>]) -> Result<Value> {
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

fn change_case(args: &[Datum<'_>], upper: bool) -> Result<Value> {
    Ok(text(arg(args, 0))
        .map_or(Datum::Null, |s| Datum::string(if upper { s.to_uppercase() } else { s.to_lowercase() })))
}

fn length(args: &[Datum<'_>]) -> Result<Value> {
    Ok(text(arg(args, 0)).map_or(Datum::Null, |s| Datum::Int(i64::try_from(s.chars().count()).unwrap_or(i64::MAX))))
}

/// TRIM(s) trims blanks from both ends; LTRIM / RTRIM(s [, set]) trim characters of `set`.
fn trim(args: &[Datum<'_>], leading: bool, trailing: bool) -> Result<Value> {
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
fn instr(args: &[Datum<'_>]) -> Result<Value> {
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

fn occurrence_index(nth: i64) -> usize {
    usize::try_from(nth - 1).unwrap_or(usize::MAX)
}

/// REPLACE(s, from [, to]): a NULL `from` changes nothing; a NULL or missing `to` removes.
fn replace(args: &[Datum<'_>]) -> Result<Value> {
    let Some(s) = text(arg(args, 0)) else { return Ok(Datum::Null) };
    let Some(from) = text(arg(args, 1)) else { return Ok(Datum::string(s.into_owned())) };
    let to = text(arg(args, 2)).unwrap_or_default();
    Ok(Datum::string(s.replace(from.as_ref(), &to)))
}

/// CHR(n): the character whose UTF-8 bytes, read as a big-endian number, are n (Oracle in
/// an AL32UTF8 database: CHR(65) = 'A', CHR(50089) = 'é').
fn chr(args: &[Datum<'_>]) -> Result<Value> {
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
fn ascii(args: &[Datum<'_>]) -> Result<Value> {
    let Some(c) = text(arg(args, 0)).and_then(|s| s.chars().next()) else { return Ok(Datum::Null) };
    let mut buf = [0u8; 4];
    let code = c.encode_utf8(&mut buf).bytes().fold(0i64, |acc, b| (acc << 8) | i64::from(b));
    Ok(Datum::Int(code))
}

// ---------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------

/// MOD(a, b) = a - b * TRUNC(a / b) (the sign of a); MOD(a, 0) = a.
fn modulo(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "MOD";
    if let (Datum::Int(a), Datum::Int(b)) = (arg(args, 0), arg(args, 1)) {
        return Ok(Datum::Int(if *b == 0 { *a } else { a.checked_rem(*b).unwrap_or(0) }));
    }
    let (Some(a), Some(b)) = (number(arg(args, 0), NAME)?, number(arg(args, 1), NAME)?) else {
        return Ok(Datum::Null);
    };
    if b.is_zero() {
        return Ok(Datum::from_decimal(a));
    }
    a.checked_rem(b).map(Datum::from_decimal).ok_or_else(|| overflow(NAME))
}

fn abs(args: &[Datum<'_>]) -> Result<Value> {
    Ok(match arg(args, 0) {
        Datum::Int(i) => i.checked_abs().map_or_else(|| Datum::from_decimal(Decimal::from(*i).abs()), Datum::Int),
        other => number(other, "ABS")?.map_or(Datum::Null, |d| Datum::from_decimal(d.abs())),
    })
}

fn sign(args: &[Datum<'_>]) -> Result<Value> {
    Ok(match number(arg(args, 0), "SIGN")? {
        None => Datum::Null,
        Some(d) if d.is_zero() => Datum::Int(0),
        Some(d) => Datum::Int(if d.is_sign_negative() { -1 } else { 1 }),
    })
}

fn floor_or_ceil(args: &[Datum<'_>], floor: bool, name: &str) -> Result<Value> {
    Ok(match arg(args, 0) {
        Datum::Int(i) => Datum::Int(*i),
        other => {
            number(other, name)?.map_or(Datum::Null, |d| Datum::from_decimal(if floor { d.floor() } else { d.ceil() }))
        }
    })
}

/// ROUND / TRUNC of a number to `digits` (negative: left of the point) or of a DATE to a
/// unit given by a format ('DD' by default).
fn round_or_trunc(args: &[Datum<'_>], round: bool, name: &str) -> Result<Value> {
    if let Datum::Date(seconds) = arg(args, 0) {
        let Some(format) = text_or(args, 1, "DD") else { return Ok(Datum::Null) };
        let unit = DateUnit::parse(&format, name)?;
        return round_date(*seconds, unit, round, name).map(Datum::Date);
    }
    let Some(d) = number(arg(args, 0), name)? else { return Ok(Datum::Null) };
    let Some(digits) = int_or(args, 1, 0, name)? else { return Ok(Datum::Null) };
    if let (Datum::Int(i), true) = (arg(args, 0), digits >= 0) {
        return Ok(Datum::Int(*i));
    }
    round_decimal(d, digits, round, name).map(Datum::from_decimal)
}

/// Rounds (half away from zero) or truncates `d` to `digits` after the point.
fn round_decimal(d: Decimal, digits: i64, round: bool, name: &str) -> Result<Decimal> {
    let strategy = if round { RoundingStrategy::MidpointAwayFromZero } else { RoundingStrategy::ToZero };
    if digits >= 0 {
        let dp = u32::try_from(digits.min(28)).unwrap_or(28);
        return Ok(d.round_dp_with_strategy(dp, strategy));
    }
    let places = digits.unsigned_abs();
    if places > 28 {
        // 10^29 and above exceed Decimal: ROUND(x, -29) is 10^29 (an overflow) when
        // |x| >= 5e28, and every other result is 0.
        let half = Decimal::try_from_i128_with_scale(5 * 10_i128.pow(28), 0).unwrap_or(Decimal::MAX);
        return if round && places == 29 && d.abs() >= half { Err(overflow(name)) } else { Ok(Decimal::ZERO) };
    }
    let factor = Decimal::try_from_i128_with_scale(10_i128.pow(u32::try_from(places).unwrap_or(28)), 0)
        .map_err(|_| overflow(name))?;
    let whole = d.trunc();
    let rem = whole.checked_rem(factor).ok_or_else(|| overflow(name))?;
    let base = whole.checked_sub(rem).ok_or_else(|| overflow(name))?;
    let low = rem.checked_add(d.fract()).ok_or_else(|| overflow(name))?;
    let half = factor.checked_div(Decimal::TWO).ok_or_else(|| overflow(name))?;
    if !round || low.abs() < half {
        return Ok(base);
    }
    let step = if d.is_sign_negative() { -factor } else { factor };
    base.checked_add(step).ok_or_else(|| overflow(name))
}

/// POWER(a, b): exact for an integer b (repeated multiplication), through f64 otherwise.
fn power(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "POWER";
    let (Some(base), Some(exponent)) = (number(arg(args, 0), NAME)?, number(arg(args, 1), NAME)?) else {
        return Ok(Datum::Null);
    };
    if let (true, Ok(e)) = (exponent.fract().is_zero(), i64::try_from(exponent)) {
        return integer_power(base, e).map(Datum::from_decimal);
    }
    if base.is_sign_negative() && !base.is_zero() {
        return Err(out_of_range(NAME, base));
    }
    let (Some(b), Some(e)) = (base.to_f64(), exponent.to_f64()) else { return Err(overflow(NAME)) };
    f64_to_decimal(b.powf(e), NAME).map(Datum::from_decimal)
}

fn integer_power(base: Decimal, exponent: i64) -> Result<Decimal> {
    const NAME: &str = "POWER";
    if base.is_zero() && exponent < 0 {
        return Err(Error::value(NAME, "divisor is equal to zero"));
    }
    let mut result = Decimal::ONE;
    let mut square = base;
    let mut e = exponent.unsigned_abs();
    while e > 0 {
        if e & 1 == 1 {
            result = result.checked_mul(square).ok_or_else(|| overflow(NAME))?;
        }
        e >>= 1;
        if e > 0 {
            square = square.checked_mul(square).ok_or_else(|| overflow(NAME))?;
        }
    }
    if exponent >= 0 {
        return Ok(result);
    }
    if result.is_zero() {
        return Err(overflow(NAME));
    }
    Decimal::ONE.checked_div(result).ok_or_else(|| overflow(NAME))
}

/// SQRT through f64 (15 significant digits); a negative argument is an error.
fn sqrt(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "SQRT";
    let Some(d) = number(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    if d.is_sign_negative() && !d.is_zero() {
        return Err(out_of_range(NAME, d));
    }
    let x = d.to_f64().ok_or_else(|| overflow(NAME))?;
    f64_to_decimal(x.sqrt(), NAME).map(Datum::from_decimal)
}

/// A finite f64 as a decimal rounded to 15 significant digits (below 1e-28: 0).
fn f64_to_decimal(x: f64, name: &str) -> Result<Decimal> {
    if !x.is_finite() {
        return Err(overflow(name));
    }
    if x == 0.0 {
        return Ok(Decimal::ZERO);
    }
    match Decimal::from_scientific_lossy(&format!("{x:.14e}")) {
        Ok(d) => Ok(d.normalize()),
        Err(_) if x.abs() < 1.0 => Ok(Decimal::ZERO),
        Err(_) => Err(overflow(name)),
    }
}

// ---------------------------------------------------------------------------------------
// Choices: GREATEST, LEAST, DECODE
// ---------------------------------------------------------------------------------------

/// GREATEST / LEAST: the arguments are converted to the type of the first; any NULL gives
/// NULL; on ties the first wins.
fn extreme(args: &[Datum<'_>], wanted: Ordering, name: &str) -> Result<Value> {
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
fn decode(args: &[Datum<'_>]) -> Result<Value> {
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
    match arg(args, 2) {
        Datum::Date(_) => Ok(owned(chosen)),
        first_result => coerce_like(first_result, chosen, NAME),
    }
}

// ---------------------------------------------------------------------------------------
// ORA_HASH and DBMS_RANDOM
// ---------------------------------------------------------------------------------------

/// 64-bit FNV-1a.
struct Fnv(u64);

impl Fnv {
    /// The state after the seed, where every ORA_HASH starts.
    fn seeded(seed: i64) -> Fnv {
        let mut h = Fnv(0xCBF2_9CE4_8422_2325);
        h.write(&seed.to_le_bytes());
        h
    }

    /// The hash, mixed, reduced to `0..=max_bucket` (which is in `0..=u32::MAX`).
    fn bucket(&self, max_bucket: i64) -> i64 {
        let buckets = u64::try_from(max_bucket).unwrap_or(0) + 1;
        i64::try_from(mix64(self.0) % buckets).unwrap_or(0)
    }

    /// A whole number's canonical bytes: a number of scale 0 and its 128-bit mantissa.
    fn write_whole_number(&mut self, i: i64) {
        self.write(&[b'N', 0]);
        self.write(&i128::from(i).to_le_bytes());
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(FNV_PRIME);
        }
    }
}

/// ORA_HASH(expr [, max_bucket [, seed]]): FNV-1a over the seed and the value's canonical
/// bytes, finished by the splitmix64 mixer, reduced to 0..=max_bucket. Deterministic, but
/// the values differ from Oracle's.
fn ora_hash(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "ORA_HASH";
    let value = arg(args, 0);
    if value.is_null() {
        return Ok(Datum::Null);
    }
    let (Some(max_bucket), Some(seed)) = (int_or(args, 1, ORA_HASH_LIMIT, NAME)?, int_or(args, 2, 0, NAME)?) else {
        return Ok(Datum::Null);
    };
    if let Some(v) = [max_bucket, seed].into_iter().find(|v| !(0..=ORA_HASH_LIMIT).contains(v)) {
        return Err(out_of_range(NAME, v));
    }
    let mut h = Fnv::seeded(seed);
    match value {
        Datum::Null => {}
        Datum::Int(i) => h.write_whole_number(*i),
        Datum::Num(d) => {
            let d = d.normalize();
            h.write(&[b'N', u8::try_from(d.scale()).unwrap_or(u8::MAX)]);
            h.write(&d.mantissa().to_le_bytes());
        }
        Datum::Str(s) => {
            h.write(b"S");
            h.write(s.as_bytes());
        }
        Datum::Date(d) => {
            h.write(b"D");
            h.write(&d.to_le_bytes());
        }
    }
    Ok(Datum::Int(h.bucket(max_bucket)))
}

/// Largest bucket and seed ORA_HASH accepts (and the default bucket).
const ORA_HASH_LIMIT: i64 = u32::MAX as i64;

/// [`ora_hash`] of a whole number, with whole-number bucket and seed: `None` when they
/// are out of range (the general path reports that).
fn ora_hash_whole(value: i64, max_bucket: i64, seed: i64) -> Option<i64> {
    Some(WholeNumberHash::new(max_bucket, seed)?.hash(value))
}

/// ORA_HASH of whole numbers with one bucket count and seed, prepared once: the hash
/// state after the seed and a whole number's two leading bytes is kept, and the zero
/// bytes that end a non-negative number's 16 canonical bytes are one multiplication
/// (an FNV-1a step of a zero byte multiplies by the prime, so `k` of them multiply by
/// its `k`-th power). Gives exactly what ORA_HASH gives a whole number.
#[derive(Debug, Clone, Copy)]
pub struct WholeNumberHash {
    /// The FNV state after the seed and the tag bytes of a whole number.
    start: u64,
    max_bucket: i64,
}

/// The 64-bit FNV prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01B3;

/// `FNV_PRIME` to the power `k`, for `k` in `0..=16`.
const FNV_PRIME_POWERS: [u64; 17] = {
    let mut powers = [1u64; 17];
    let mut k = 1;
    while k < 17 {
        powers[k] = powers[k - 1].wrapping_mul(FNV_PRIME);
        k += 1;
    }
    powers
};

impl WholeNumberHash {
    /// `None` when the bucket or seed is out of range (the general path reports that).
    pub fn new(max_bucket: i64, seed: i64) -> Option<WholeNumberHash> {
        if !(0..=ORA_HASH_LIMIT).contains(&max_bucket) || !(0..=ORA_HASH_LIMIT).contains(&seed) {
            return None;
        }
        let mut h = Fnv::seeded(seed);
        h.write(&[b'N', 0]);
        Some(WholeNumberHash { start: h.0, max_bucket })
    }

    /// ORA_HASH(`value`, max_bucket, seed).
    #[inline]
    pub fn hash(&self, value: i64) -> i64 {
        let mut h = Fnv(self.start);
        if value < 0 {
            h.write(&i128::from(value).to_le_bytes());
        } else {
            // Bytes past the significant ones are zero, up to the 16th.
            let significant = (64 - value.leading_zeros() as usize).div_ceil(8);
            h.write(&value.to_le_bytes()[..significant]);
            h.0 = h.0.wrapping_mul(FNV_PRIME_POWERS[16 - significant]);
        }
        h.bucket(self.max_bucket)
    }
}

/// DBMS_RANDOM.VALUE: [0, 1) with 15 random decimal places; VALUE(lo, hi): [lo, hi).
fn random_value(args: &[Datum<'_>], random: &mut RandomState) -> Result<Value> {
    const NAME: &str = "DBMS_RANDOM.VALUE";
    const PLACES: u64 = 1_000_000_000_000_000;
    let fraction = Decimal::new(i64::try_from(random.next_below(PLACES)).unwrap_or(0), 15);
    if args.is_empty() {
        return Ok(Datum::from_decimal(fraction));
    }
    let (Some(low), Some(high)) = (number(arg(args, 0), NAME)?, number(arg(args, 1), NAME)?) else {
        return Ok(Datum::Null);
    };
    let value = high
        .checked_sub(low)
        .and_then(|span| span.checked_mul(fraction))
        .and_then(|offset| low.checked_add(offset))
        .ok_or_else(|| overflow(NAME))?;
    // Decimal rounding can reach `high` when it has many more digits than the span.
    let value = if low < high && value >= high { low } else { value };
    Ok(Datum::from_decimal(value))
}

/// DBMS_RANDOM.STRING(opt, len): 'U' upper case letters, 'L' lower case, 'A' both, 'X'
/// upper case letters and digits, 'P' any printable ASCII; anything else (or NULL) is 'U'.
/// Lengths above 4000 give 4000 characters, as Oracle.
fn random_string(args: &[Datum<'_>], random: &mut RandomState) -> Result<Value> {
    const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
    const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    const PRINTABLE: &[u8] =
        b" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
    let option = text(arg(args, 0)).and_then(|s| s.chars().next()).unwrap_or('U');
    let Some(len) = int_arg(arg(args, 1), "DBMS_RANDOM.STRING")? else { return Ok(Datum::Null) };
    let alphabet = match option.to_ascii_uppercase() {
        'L' => LOWER,
        'A' => ALPHA,
        'X' => ALNUM,
        'P' => PRINTABLE,
        _ => UPPER,
    };
    let len = usize::try_from(len.clamp(0, MAX_RANDOM_STRING)).unwrap_or(0);
    let s: String = (0..len)
        .map(|_| {
            let i = usize::try_from(random.next_below(alphabet.len() as u64)).unwrap_or(0);
            char::from(alphabet.get(i).copied().unwrap_or(b'A'))
        })
        .collect();
    Ok(Datum::string(s))
}

// ---------------------------------------------------------------------------------------
// Dates
// ---------------------------------------------------------------------------------------

fn date_out_of_range(name: &str) -> Error {
    Error::value(name, "date out of range (the year must be between 1 and 9999)")
}

fn in_date_range(seconds: i64, name: &str) -> Result<i64> {
    if (MIN_DATE..=MAX_DATE).contains(&seconds) { Ok(seconds) } else { Err(date_out_of_range(name)) }
}

fn naive(seconds: i64, name: &str) -> Result<NaiveDateTime> {
    DateTime::from_timestamp(seconds, 0).map(|d| d.naive_utc()).ok_or_else(|| date_out_of_range(name))
}

fn seconds_of(date: NaiveDate, time: NaiveTime) -> i64 {
    date.and_time(time).and_utc().timestamp()
}

/// A DATE argument: a DATE, or a string in the default format.
fn date_arg(d: &Datum<'_>, name: &str) -> Result<Option<i64>> {
    match d {
        Datum::Null => Ok(None),
        Datum::Date(s) => Ok(Some(*s)),
        Datum::Str(s) => parse_date(s, None).map(Some).map_err(|m| Error::value(name, m)),
        other => Err(Error::value(name, format!("expected DATE, got {}", other.type_name()))),
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Midnight on the first day of month `month0` (0-based, may exceed 11) of `year`.
fn month_start(year: i64, month0: i64, name: &str) -> Result<i64> {
    let total = year.checked_mul(12).and_then(|t| t.checked_add(month0)).ok_or_else(|| date_out_of_range(name))?;
    let (y, m) = (total.div_euclid(12), total.rem_euclid(12) + 1);
    let date = i32::try_from(y)
        .ok()
        .zip(u32::try_from(m).ok())
        .and_then(|(y, m)| NaiveDate::from_ymd_opt(y, m, 1))
        .ok_or_else(|| date_out_of_range(name))?;
    in_date_range(seconds_of(date, NaiveTime::MIN), name)
}

/// ADD_MONTHS(date, n): the same day n months later; the last day of a month, or a day the
/// target month lacks, gives the target month's last day. The time is kept.
fn add_months(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "ADD_MONTHS";
    let Some(seconds) = date_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let Some(months) = int_arg(arg(args, 1), NAME)? else { return Ok(Datum::Null) };
    let dt = naive(seconds, NAME)?;
    let total = i64::from(dt.year())
        .checked_mul(12)
        .and_then(|t| t.checked_add(i64::from(dt.month0())))
        .and_then(|t| t.checked_add(months))
        .ok_or_else(|| date_out_of_range(NAME))?;
    let (year, month) = (total.div_euclid(12), u32::try_from(total.rem_euclid(12) + 1).unwrap_or(1));
    let last = days_in_month(year, month);
    let day = if dt.day() == days_in_month(i64::from(dt.year()), dt.month()) { last } else { dt.day().min(last) };
    let date = i32::try_from(year)
        .ok()
        .and_then(|y| NaiveDate::from_ymd_opt(y, month, day))
        .ok_or_else(|| date_out_of_range(NAME))?;
    Ok(Datum::Date(in_date_range(seconds_of(date, dt.time()), NAME)?))
}

/// LAST_DAY(date): the last day of the date's month, same time.
fn last_day(args: &[Datum<'_>]) -> Result<Value> {
    const NAME: &str = "LAST_DAY";
    let Some(seconds) = date_arg(arg(args, 0), NAME)? else { return Ok(Datum::Null) };
    let dt = naive(seconds, NAME)?;
    let date =
        dt.date().with_day(days_in_month(i64::from(dt.year()), dt.month())).ok_or_else(|| date_out_of_range(NAME))?;
    Ok(Datum::Date(seconds_of(date, dt.time())))
}

/// The unit of ROUND / TRUNC on a DATE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DateUnit {
    Year,
    Quarter,
    Month,
    /// ISO week, starting on Monday.
    IsoWeek,
    /// The week starting on Sunday (Oracle's 'DAY' with an American territory).
    Week,
    Day,
    Hour,
    Minute,
}

impl DateUnit {
    fn parse(format: &str, name: &str) -> Result<DateUnit> {
        Ok(match format.trim().to_ascii_uppercase().as_str() {
            "SYYYY" | "YYYY" | "YEAR" | "SYEAR" | "YYY" | "YY" | "Y" => DateUnit::Year,
            "Q" => DateUnit::Quarter,
            "MONTH" | "MON" | "MM" | "RM" => DateUnit::Month,
            "IW" => DateUnit::IsoWeek,
            "DAY" | "DY" | "D" => DateUnit::Week,
            "DDD" | "DD" | "J" => DateUnit::Day,
            "HH" | "HH12" | "HH24" => DateUnit::Hour,
            "MI" => DateUnit::Minute,
            _ => return Err(Error::value(name, format!("bad precision specifier '{format}'"))),
        })
    }
}

/// TRUNC(date, unit) is the start of the unit; ROUND(date, unit) moves to the next start
/// from the unit's middle (a day at noon, a month on the 16th, a year on July 1st, a quarter
/// on the 16th of its second month).
fn round_date(seconds: i64, unit: DateUnit, round: bool, name: &str) -> Result<i64> {
    let dt = naive(seconds, name)?;
    let (year, month0, day) = (i64::from(dt.year()), i64::from(dt.month0()), dt.day());
    let result = match unit {
        DateUnit::Minute => step(seconds, 60, round),
        DateUnit::Hour => step(seconds, 3600, round),
        DateUnit::Day => step(seconds, SECONDS_PER_DAY, round),
        DateUnit::Month => month_start(year, month0 + i64::from(round && day >= 16), name)?,
        DateUnit::Year => month_start(year, if round && month0 >= 6 { 12 } else { 0 }, name)?,
        DateUnit::Quarter => {
            let (first, within) = (month0 - month0 % 3, month0 % 3);
            let up = round && (within == 2 || (within == 1 && day >= 16));
            month_start(year, first + if up { 3 } else { 0 }, name)?
        }
        DateUnit::IsoWeek | DateUnit::Week => {
            let back = if unit == DateUnit::IsoWeek {
                dt.weekday().num_days_from_monday()
            } else {
                dt.weekday().num_days_from_sunday()
            };
            let start = step(seconds, SECONDS_PER_DAY, false) - i64::from(back) * SECONDS_PER_DAY;
            let up = round && (seconds - start) * 2 >= 7 * SECONDS_PER_DAY;
            start + if up { 7 * SECONDS_PER_DAY } else { 0 }
        }
    };
    in_date_range(result, name)
}

/// `seconds` truncated (or rounded, half up) to a multiple of `unit`.
fn step(seconds: i64, unit: i64, round: bool) -> i64 {
    let rem = seconds.rem_euclid(unit);
    let base = seconds - rem;
    if round && rem * 2 >= unit { base.saturating_add(unit) } else { base }
}

// ---------------------------------------------------------------------------------------
// Date format masks (TO_CHAR of a DATE, TO_DATE)
// ---------------------------------------------------------------------------------------

const MONTH_NAMES: [&str; 12] = [
    "JANUARY",
    "FEBRUARY",
    "MARCH",
    "APRIL",
    "MAY",
    "JUNE",
    "JULY",
    "AUGUST",
    "SEPTEMBER",
    "OCTOBER",
    "NOVEMBER",
    "DECEMBER",
];
const DAY_NAMES: [&str; 7] = ["SUNDAY", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY"];
/// Width of MONTH and DAY without FM: the longest name.
const NAME_WIDTH: usize = 9;

/// How a mask element is written: 'MON' → JAN, 'Mon' → Jan, 'mon' → jan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Upper,
    Capital,
    Lower,
}

impl Case {
    fn of(element: &[char]) -> Case {
        match element {
            [first, ..] if first.is_lowercase() => Case::Lower,
            [_, second, ..] if second.is_lowercase() => Case::Capital,
            _ => Case::Upper,
        }
    }

    fn apply(self, s: &str) -> String {
        match self {
            Case::Upper => s.to_uppercase(),
            Case::Lower => s.to_lowercase(),
            Case::Capital => {
                let mut chars = s.chars();
                chars
                    .next()
                    .map(|c| c.to_uppercase().collect::<String>() + &chars.as_str().to_lowercase())
                    .unwrap_or_default()
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Year4,
    Year3,
    Year2,
    Year1,
    /// RRRR: four digits, or two read with the RR rule.
    RoundYear4,
    /// RR: two digits, the century chosen to be near the current year.
    RoundYear2,
    Month,
    MonthName,
    MonthAbbr,
    DayOfYear,
    DayName,
    DayAbbr,
    Day,
    DayOfWeek,
    Hour24,
    Hour12,
    Minute,
    SecondsOfDay,
    Second,
    Meridian,
    MeridianDots,
    Quarter,
    Julian,
}

/// The mask elements, longest first where one is a prefix of another.
const DATE_FIELDS: &[(&str, Field)] = &[
    ("SSSSS", Field::SecondsOfDay),
    ("SS", Field::Second),
    ("YYYY", Field::Year4),
    ("YYY", Field::Year3),
    ("YY", Field::Year2),
    ("Y", Field::Year1),
    ("RRRR", Field::RoundYear4),
    ("RR", Field::RoundYear2),
    ("MONTH", Field::MonthName),
    ("MON", Field::MonthAbbr),
    ("MM", Field::Month),
    ("MI", Field::Minute),
    ("DDD", Field::DayOfYear),
    ("DAY", Field::DayName),
    ("DD", Field::Day),
    ("DY", Field::DayAbbr),
    ("D", Field::DayOfWeek),
    ("HH24", Field::Hour24),
    ("HH12", Field::Hour12),
    ("HH", Field::Hour12),
    ("A.M.", Field::MeridianDots),
    ("P.M.", Field::MeridianDots),
    ("AM", Field::Meridian),
    ("PM", Field::Meridian),
    ("Q", Field::Quarter),
    ("J", Field::Julian),
];

#[derive(Debug, Clone, PartialEq, Eq)]
enum DateElement {
    Field(Field, Case),
    /// Punctuation, blanks and "quoted text", copied as they are.
    Literal(String),
    /// FM: toggles fill mode (no padding of numbers and names).
    FillMode,
    /// FX: exact matching; accepted and ignored.
    Exact,
}

fn starts_with_ignore_case(chars: &[char], key: &str) -> bool {
    key.len() <= chars.len() && key.chars().zip(chars).all(|(k, c)| c.to_ascii_uppercase() == k)
}

/// Splits a date format mask into elements (case-insensitive).
fn parse_date_mask(mask: &str, name: &str) -> Result<Vec<DateElement>> {
    let chars: Vec<char> = mask.chars().collect();
    let mut elements = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let rest = chars.get(i..).unwrap_or(&[]);
        if c == '"' {
            let quoted = rest.get(1..).unwrap_or(&[]);
            let end = quoted
                .iter()
                .position(|&q| q == '"')
                .ok_or_else(|| Error::value(name, format!("unterminated quoted text in format '{mask}'")))?;
            elements.push(DateElement::Literal(quoted.iter().take(end).collect()));
            i += end + 2;
        } else if !c.is_alphanumeric() {
            elements.push(DateElement::Literal(c.to_string()));
            i += 1;
        } else if starts_with_ignore_case(rest, "FM") {
            elements.push(DateElement::FillMode);
            i += 2;
        } else if starts_with_ignore_case(rest, "FX") {
            elements.push(DateElement::Exact);
            i += 2;
        } else {
            let (key, field) = DATE_FIELDS
                .iter()
                .find(|(key, _)| starts_with_ignore_case(rest, key))
                .ok_or_else(|| Error::value(name, format!("date format not recognized: '{mask}'")))?;
            elements.push(DateElement::Field(*field, Case::of(rest)));
            i += key.len();
        }
    }
    Ok(elements)
}

/// TO_CHAR(date, mask).
fn format_date_mask(seconds: i64, mask: &str, name: &str) -> Result<String> {
    let elements = parse_date_mask(mask, name)?;
    let dt = naive(seconds, name)?;
    let mut out = String::new();
    let mut fill_mode = false;
    for element in &elements {
        match element {
            DateElement::FillMode => fill_mode = !fill_mode,
            DateElement::Exact => {}
            DateElement::Literal(s) => out.push_str(s),
            DateElement::Field(field, case) => write_field(&mut out, *field, *case, &dt, fill_mode),
        }
    }
    Ok(out)
}

fn write_number(out: &mut String, value: i64, width: usize, fill_mode: bool) {
    if fill_mode {
        out.push_str(&value.to_string());
    } else {
        out.push_str(&format!("{value:0width$}"));
    }
}

fn write_name(out: &mut String, name: &str, case: Case, fill_mode: bool, width: usize) {
    let s = case.apply(name);
    if fill_mode { out.push_str(&s) } else { out.push_str(&format!("{s:<width$}")) }
}

fn write_field(out: &mut String, field: Field, case: Case, dt: &NaiveDateTime, fill_mode: bool) {
    let year = i64::from(dt.year());
    let month_name = MONTH_NAMES.get(dt.month0() as usize).copied().unwrap_or_default();
    let day_name = DAY_NAMES.get(dt.weekday().num_days_from_sunday() as usize).copied().unwrap_or_default();
    let (pm, hour12) = dt.hour12();
    match field {
        Field::Year4 | Field::RoundYear4 => write_number(out, year, 4, fill_mode),
        Field::Year3 => write_number(out, year.rem_euclid(1000), 3, fill_mode),
        Field::Year2 | Field::RoundYear2 => write_number(out, year.rem_euclid(100), 2, fill_mode),
        Field::Year1 => write_number(out, year.rem_euclid(10), 1, fill_mode),
        Field::Month => write_number(out, i64::from(dt.month()), 2, fill_mode),
        Field::MonthName => write_name(out, month_name, case, fill_mode, NAME_WIDTH),
        Field::MonthAbbr => write_name(out, month_name.get(..3).unwrap_or_default(), case, true, 3),
        Field::DayOfYear => write_number(out, i64::from(dt.ordinal()), 3, fill_mode),
        Field::DayName => write_name(out, day_name, case, fill_mode, NAME_WIDTH),
        Field::DayAbbr => write_name(out, day_name.get(..3).unwrap_or_default(), case, true, 3),
        Field::Day => write_number(out, i64::from(dt.day()), 2, fill_mode),
        Field::DayOfWeek => write_number(out, i64::from(dt.weekday().number_from_sunday()), 1, fill_mode),
        Field::Hour24 => write_number(out, i64::from(dt.hour()), 2, fill_mode),
        Field::Hour12 => write_number(out, i64::from(hour12), 2, fill_mode),
        Field::Minute => write_number(out, i64::from(dt.minute()), 2, fill_mode),
        Field::Second => write_number(out, i64::from(dt.second()), 2, fill_mode),
        Field::SecondsOfDay => write_number(out, i64::from(dt.num_seconds_from_midnight()), 5, fill_mode),
        Field::Meridian => out.push_str(&case.apply(if pm { "PM" } else { "AM" })),
        Field::MeridianDots => out.push_str(&case.apply(if pm { "P.M." } else { "A.M." })),
        Field::Quarter => write_number(out, i64::from(dt.month0() / 3 + 1), 1, fill_mode),
        Field::Julian => {
            write_number(out, i64::from(dt.num_days_from_ce()) + JULIAN_DAY_OF_CE, 7, fill_mode);
        }
    }
}

/// The year as written in a TO_DATE input, resolved against the current year.
#[derive(Debug, Clone, Copy)]
enum YearInput {
    Full(i64),
    /// The last `digits` digits of a year in the current millennium/century/decade.
    Last {
        value: i64,
        modulus: i64,
    },
    /// RR: two digits, the century chosen so that the year is near the current one.
    Near(i64),
}

/// The fields read by TO_DATE.
#[derive(Debug, Default)]
struct DateInput {
    year: Option<YearInput>,
    month: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    julian: Option<i64>,
    hour24: Option<i64>,
    hour12: Option<i64>,
    pm: Option<bool>,
    minute: Option<i64>,
    second: Option<i64>,
    seconds_of_day: Option<i64>,
}

/// A position in a TO_DATE input.
struct Cursor {
    chars: Vec<char>,
    pos: usize,
}

impl Cursor {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.chars.len()
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// 1 to `max` digits.
    fn digits(&mut self, max: usize) -> Option<(i64, usize)> {
        self.skip_blanks();
        let mut value: i64 = 0;
        let mut count = 0;
        while count < max {
            let Some(d) = self.peek().and_then(|c| c.to_digit(10)) else { break };
            value = value.checked_mul(10)?.checked_add(i64::from(d))?;
            count += 1;
            self.pos += 1;
        }
        (count > 0).then_some((value, count))
    }

    fn number(&mut self, max: usize) -> Option<i64> {
        self.digits(max).map(|(v, _)| v)
    }

    /// The index of the first of `words` the input continues with (case-insensitive).
    fn word(&mut self, words: &[&str]) -> Option<usize> {
        self.skip_blanks();
        let rest = self.chars.get(self.pos..)?;
        let (index, word) = words.iter().enumerate().find(|(_, w)| starts_with_ignore_case(rest, w))?;
        self.pos += word.len();
        Some(index)
    }

    /// A month or day name, full or abbreviated to three letters; its 0-based index.
    fn name(&mut self, names: &[&str]) -> Option<usize> {
        let abbreviations: Vec<&str> = names.iter().map(|n| n.get(..3).unwrap_or(n)).collect();
        self.word(names).or_else(|| self.word(&abbreviations))
    }

    /// Mask punctuation matches any punctuation; a blank matches any run of blanks;
    /// other text matches itself, ignoring case.
    fn literal(&mut self, text: &str) -> Option<()> {
        for expected in text.chars() {
            if expected.is_whitespace() {
                self.skip_blanks();
                continue;
            }
            let found = self.peek()?;
            let punctuation = |c: char| !c.is_alphanumeric() && !c.is_whitespace();
            if found.to_lowercase().eq(expected.to_lowercase()) || (punctuation(expected) && punctuation(found)) {
                self.pos += 1;
            } else {
                return None;
            }
        }
        Some(())
    }

    fn field(&mut self, field: Field, input: &mut DateInput) -> Option<()> {
        match field {
            Field::Year4 => input.year = Some(YearInput::Full(self.number(4)?)),
            Field::Year3 => input.year = Some(YearInput::Last { value: self.number(3)?, modulus: 1000 }),
            Field::Year2 => input.year = Some(YearInput::Last { value: self.number(2)?, modulus: 100 }),
            Field::Year1 => input.year = Some(YearInput::Last { value: self.number(1)?, modulus: 10 }),
            Field::RoundYear4 => {
                let (value, count) = self.digits(4)?;
                input.year = Some(if count <= 2 { YearInput::Near(value) } else { YearInput::Full(value) });
            }
            Field::RoundYear2 => input.year = Some(YearInput::Near(self.number(2)?)),
            Field::Month => input.month = Some(self.number(2)?),
            Field::MonthName | Field::MonthAbbr => {
                input.month = Some(i64::try_from(self.name(&MONTH_NAMES)?).ok()? + 1)
            }
            Field::DayOfYear => input.day_of_year = Some(self.number(3)?),
            Field::DayName | Field::DayAbbr => {
                self.name(&DAY_NAMES)?;
            }
            Field::Day => input.day = Some(self.number(2)?),
            Field::DayOfWeek => {
                self.number(1)?;
            }
            Field::Hour24 => input.hour24 = Some(self.number(2)?),
            Field::Hour12 => input.hour12 = Some(self.number(2)?),
            Field::Minute => input.minute = Some(self.number(2)?),
            Field::Second => input.second = Some(self.number(2)?),
            Field::SecondsOfDay => input.seconds_of_day = Some(self.number(5)?),
            Field::Meridian | Field::MeridianDots => {
                input.pm = Some(self.word(&["A.M.", "P.M.", "AM", "PM"])? % 2 == 1);
            }
            Field::Quarter => return None,
            Field::Julian => input.julian = Some(self.number(7)?),
        }
        Some(())
    }
}

/// TO_DATE(text, mask). Missing trailing fields default as in Oracle: the current year and
/// month, day 1, midnight.
fn parse_date_with_mask(input: &str, mask: &str, now: i64) -> Result<i64> {
    const NAME: &str = "TO_DATE";
    let elements = parse_date_mask(mask, NAME)?;
    if elements.iter().any(|e| matches!(e, DateElement::Field(Field::Quarter, _))) {
        return Err(Error::value(NAME, "format code 'Q' cannot appear in date input format"));
    }
    let mismatch = || Error::value(NAME, format!("'{input}' does not match format '{mask}'"));
    let mut cursor = Cursor { chars: input.trim().chars().collect(), pos: 0 };
    if cursor.at_end() {
        return Err(mismatch());
    }
    let mut fields = DateInput::default();
    for element in &elements {
        if cursor.at_end() {
            break;
        }
        match element {
            DateElement::FillMode | DateElement::Exact => {}
            DateElement::Literal(text) => cursor.literal(text).ok_or_else(mismatch)?,
            DateElement::Field(field, _) => cursor.field(*field, &mut fields).ok_or_else(mismatch)?,
        }
    }
    cursor.skip_blanks();
    if !cursor.at_end() {
        return Err(mismatch());
    }
    let today = DateTime::from_timestamp(now, 0).map(|d| d.naive_utc()).unwrap_or_default();
    resolve_date(&fields, &today)
}

/// Checks the fields read by TO_DATE and builds the DATE.
fn resolve_date(input: &DateInput, today: &NaiveDateTime) -> Result<i64> {
    const NAME: &str = "TO_DATE";
    let fail = |message: &str| Err(Error::value(NAME, message.to_string()));
    let current = i64::from(today.year());
    let year = match input.year {
        None => current,
        Some(YearInput::Full(y)) => y,
        Some(YearInput::Last { value, modulus }) => current - current.rem_euclid(modulus) + value,
        Some(YearInput::Near(yy)) => {
            let century = current - current.rem_euclid(100);
            match (yy < 50, current.rem_euclid(100) < 50) {
                (true, false) => century + 100 + yy,
                (false, true) => century - 100 + yy,
                _ => century + yy,
            }
        }
    };
    if !(1..=9999).contains(&year) {
        return fail("year must be between 1 and 9999");
    }
    let y = i32::try_from(year).unwrap_or(1);
    let date = if let Some(j) = input.julian {
        let days = i32::try_from(j - JULIAN_DAY_OF_CE).ok();
        match days.and_then(NaiveDate::from_num_days_from_ce_opt) {
            Some(d) if (1..=9999).contains(&d.year()) => d,
            _ => return fail("julian date must be between 1721426 and 5373484"),
        }
    } else if let Some(ordinal) = input.day_of_year {
        match u32::try_from(ordinal).ok().and_then(|o| NaiveDate::from_yo_opt(y, o)) {
            Some(d) => d,
            None => return fail("day of year must be between 1 and 365 (366 for leap year)"),
        }
    } else {
        let month = input.month.unwrap_or(i64::from(today.month()));
        let Some(month) = u32::try_from(month).ok().filter(|m| (1..=12).contains(m)) else {
            return fail("not a valid month");
        };
        let day = u32::try_from(input.day.unwrap_or(1)).unwrap_or(0);
        match NaiveDate::from_ymd_opt(y, month, day) {
            Some(d) => d,
            None => return fail("day of month must be between 1 and last day of month"),
        }
    };
    let (mut hour, mut minute, mut second) = (0, 0, 0);
    if let Some(s) = input.seconds_of_day {
        if !(0..SECONDS_PER_DAY).contains(&s) {
            return fail("seconds in day must be between 0 and 86399");
        }
        (hour, minute, second) = (s / 3600, s / 60 % 60, s % 60);
    }
    if let Some(h) = input.hour24 {
        if !(0..=23).contains(&h) {
            return fail("hour must be between 0 and 23");
        }
        hour = h;
    } else if let Some(h) = input.hour12 {
        if !(1..=12).contains(&h) {
            return fail("hour must be between 1 and 12");
        }
        hour = h % 12 + if input.pm == Some(true) { 12 } else { 0 };
    }
    if let Some(m) = input.minute {
        if !(0..=59).contains(&m) {
            return fail("minutes must be between 0 and 59");
        }
        minute = m;
    }
    if let Some(s) = input.second {
        if !(0..=59).contains(&s) {
            return fail("seconds must be between 0 and 59");
        }
        second = s;
    }
    let time = NaiveTime::from_num_seconds_from_midnight_opt(
        u32::try_from(hour * 3600 + minute * 60 + second).unwrap_or(0),
        0,
    )
    .unwrap_or(NaiveTime::MIN);
    in_date_range(seconds_of(date, time), NAME)
}

// ---------------------------------------------------------------------------------------
// Number format masks (TO_CHAR of a number, TO_NUMBER)
// ---------------------------------------------------------------------------------------

/// Where a number format puts the sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SignMode {
    /// '-' before the first digit, a blank for positive numbers (no blank with FM).
    Default,
    /// S at the start: '+' or '-' before the number.
    Leading,
    /// S at the end: '+' or '-' after the number.
    Trailing,
    /// MI at the end: '-' or a blank after the number.
    TrailingMinus,
}

/// A position left of the decimal point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IntPosition {
    /// '9': a digit, blank when a leading zero.
    Nine,
    /// '0': a digit, also when a leading zero (and every position right of it).
    Zero,
    /// ',' or 'G': shown only between shown digits.
    Group,
}

/// A parsed number format: FM, $, S, MI, 9, 0, ',', 'G', '.', 'D', and TM / TM9.
#[derive(Debug, Clone)]
struct NumberMask {
    fill_mode: bool,
    dollar: bool,
    /// TM or TM9: the shortest text, as TO_CHAR without a format.
    text_minimum: bool,
    sign: SignMode,
    int: Vec<IntPosition>,
    point: bool,
    /// Positions right of the point: true for '0', false for '9'.
    frac: Vec<bool>,
}

impl NumberMask {
    fn parse(mask: &str, name: &str) -> Result<NumberMask> {
        let upper = mask.trim().to_ascii_uppercase();
        let invalid = || Error::value(name, format!("invalid number format model '{mask}'"));
        let mut m = NumberMask {
            fill_mode: false,
            dollar: false,
            text_minimum: false,
            sign: SignMode::Default,
            int: Vec::new(),
            point: false,
            frac: Vec::new(),
        };
        let body = match upper.strip_prefix("FM") {
            Some(rest) => {
                m.fill_mode = true;
                rest
            }
            None => upper.as_str(),
        };
        if body == "TM" || body == "TM9" {
            m.text_minimum = true;
            return Ok(m);
        }
        let bytes = body.as_bytes();
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            let at_end = i + 1 == bytes.len();
            let has_digits = m.point || m.int.iter().any(|p| *p != IntPosition::Group);
            match b {
                b'9' | b'0' if m.point => m.frac.push(b == b'0'),
                b'9' => m.int.push(IntPosition::Nine),
                b'0' => m.int.push(IntPosition::Zero),
                b',' | b'G' if !m.point && has_digits => m.int.push(IntPosition::Group),
                b'.' | b'D' if !m.point => m.point = true,
                b'$' if !m.dollar => m.dollar = true,
                b'S' if m.sign == SignMode::Default && !has_digits => m.sign = SignMode::Leading,
                b'S' if m.sign == SignMode::Default && at_end => m.sign = SignMode::Trailing,
                b'M' if m.sign == SignMode::Default && bytes.get(i + 1) == Some(&b'I') && i + 2 == bytes.len() => {
                    m.sign = SignMode::TrailingMinus;
                    i += 1;
                }
                _ => return Err(invalid()),
            }
            i += 1;
        }
        if m.frac.is_empty() && !m.int.iter().any(|p| *p != IntPosition::Group) {
            return Err(invalid());
        }
        Ok(m)
    }

    /// Width of the result without FM, which is also the width of the '#' overflow string.
    fn width(&self) -> usize {
        self.int.len() + usize::from(self.point) + self.frac.len() + usize::from(self.dollar) + 1
    }

    fn format(&self, d: Decimal) -> String {
        if self.text_minimum {
            return Datum::from_decimal(d).to_string();
        }
        let scale = u32::try_from(self.frac.len().min(28)).unwrap_or(28);
        let rounded = d.round_dp_with_strategy(scale, RoundingStrategy::MidpointAwayFromZero);
        let negative = rounded.is_sign_negative() && !rounded.is_zero();
        let plain = rounded.abs().normalize().to_string();
        let (int_digits, frac_digits) = plain.split_once('.').unwrap_or((plain.as_str(), ""));
        let int_digits: Vec<char> = if int_digits == "0" { Vec::new() } else { int_digits.chars().collect() };
        let positions = self.int.iter().filter(|p| **p != IntPosition::Group).count();
        if int_digits.len() > positions {
            return "#".repeat(self.width());
        }

        // Left of the point: digits right-aligned, leading zeros where a '0' asks for them.
        let first_zero = self.int.iter().position(|p| *p == IntPosition::Zero);
        let mut shown: Vec<Option<char>> = vec![None; self.int.len()];
        let mut k = 0;
        for (i, position) in self.int.iter().enumerate().rev() {
            if *position == IntPosition::Group {
                continue;
            }
            shown[i] = match int_digits.len().checked_sub(k + 1) {
                Some(j) => int_digits.get(j).copied(),
                None if first_zero.is_some_and(|z| i >= z) => Some('0'),
                None => None,
            };
            k += 1;
        }
        if int_digits.is_empty() && self.frac.is_empty() && shown.iter().all(Option::is_none) {
            // Zero with no decimals shows one '0' in the last digit position.
            if let Some(last) = self.int.iter().rposition(|p| *p != IntPosition::Group) {
                shown[last] = Some('0');
            }
        }
        for i in 0..self.int.len() {
            if self.int[i] == IntPosition::Group && shown[..i].iter().any(Option::is_some) {
                shown[i] = Some(',');
            }
        }
        let blanks = shown.iter().filter(|c| c.is_none()).count();
        let mut body: String = shown.iter().flatten().collect();

        // Right of the point: rounded digits, padded with zeros; FM drops trailing '9' zeros.
        if self.point {
            let mut frac: Vec<char> = frac_digits.chars().chain(std::iter::repeat('0')).take(self.frac.len()).collect();
            if self.fill_mode {
                while frac.last() == Some(&'0') && self.frac.get(frac.len() - 1) == Some(&false) {
                    frac.pop();
                }
            }
            body.push('.');
            body.extend(frac);
        }

        let sign = if negative { "-" } else { "+" };
        let quiet_sign = if negative {
            "-"
        } else if self.fill_mode {
            ""
        } else {
            " "
        };
        let (before, after) = match self.sign {
            SignMode::Default => (quiet_sign, ""),
            SignMode::Leading => (sign, ""),
            SignMode::Trailing => ("", sign),
            SignMode::TrailingMinus => ("", quiet_sign),
        };
        let padding = if self.fill_mode { String::new() } else { " ".repeat(blanks) };
        let dollar = if self.dollar { "$" } else { "" };
        format!("{padding}{before}{dollar}{body}{after}")
    }

    /// Reads `text` written with this mask (group separators, '$' and a trailing sign).
    fn read(&self, text: &str, name: &str) -> Result<Value> {
        let invalid = || Error::value(name, format!("invalid number '{text}'"));
        let has_group = self.int.contains(&IntPosition::Group);
        let mut cleaned: String =
            text.trim().chars().filter(|&c| !((has_group && c == ',') || (self.dollar && c == '$'))).collect();
        if matches!(self.sign, SignMode::Trailing | SignMode::TrailingMinus) {
            if let Some(rest) = cleaned.strip_suffix('-') {
                cleaned = format!("-{rest}");
            } else if let Some(rest) = cleaned.strip_suffix('+') {
                cleaned = rest.to_string();
            }
        }
        let value = Datum::parse_number(cleaned.trim()).map_err(|_| invalid())?;
        if self.text_minimum {
            return Ok(value);
        }
        let d = value.to_decimal(name)?.unwrap_or_default();
        if d.normalize().scale() as usize > self.frac.len() || self.format(d).starts_with('#') {
            return Err(invalid());
        }
        Ok(value)
    }
}

// ---------------------------------------------------------------------------------------
// Conversions
// ---------------------------------------------------------------------------------------

/// TO_CHAR(value [, mask]): a DATE with a date mask, a number (or numeric string) with a
/// number mask; without a mask, the implicit conversion.
fn to_char(args: &[Datum<'_>]) -> Result<Value> {
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
fn to_date(args: &[Datum<'_>], now: i64) -> Result<Value> {
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
fn to_number(args: &[Datum<'_>]) -> Result<Value> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::format_date;
    use proptest::prelude::*;
    use std::str::FromStr;

    fn ctx() -> FunctionContext {
        // 2024-03-15 10:30:00
        FunctionContext::new(parse_date("2024-03-15 10:30:00", None).unwrap(), 42)
    }

    fn call(name: &str, args: &[Value]) -> Result<Value> {
        ScalarFunction::lookup(name, args.len())?.call(args, &mut ctx())
    }

    fn ok(name: &str, args: &[Value]) -> Value {
        call(name, args).unwrap_or_else(|e| panic!("{name}({args:?}): {e}"))
    }

    fn err(name: &str, args: &[Value]) -> String {
        match call(name, args) {
            Ok(v) => panic!("{name}({args:?}) gave {v:?}, expected an error"),
            Err(e) => e.to_string(),
        }
    }

    fn s(x: &str) -> Value {
        Datum::string(x.to_string())
    }

    fn n(x: &str) -> Value {
        Datum::parse_number(x).unwrap()
    }

    fn i(x: i64) -> Value {
        Datum::Int(x)
    }

    fn date(x: &str) -> Value {
        Datum::Date(parse_date(x, None).unwrap())
    }

    const NULL_V: Value = Datum::Null;

    fn arith(op: ArithOp, a: Value, b: Value) -> Value {
        arithmetic(op, &a, &b).unwrap()
    }

    // ---- catalog ----

    #[test]
    fn lookup_is_case_insensitive_and_checks_arity() {
        assert_eq!(ScalarFunction::lookup("substr", 2).unwrap(), ScalarFunction::Substr);
        assert_eq!(ScalarFunction::lookup("dbms_random.value", 0).unwrap(), ScalarFunction::RandomValue);
        assert_eq!(ScalarFunction::lookup("DBMS_Random.String", 2).unwrap(), ScalarFunction::RandomString);
        assert!(matches!(
            ScalarFunction::lookup("nosuch", 1),
            Err(Error::UnknownObject { kind: "function", ref name }) if name == "NOSUCH"
        ));
        assert_eq!(ScalarFunction::lookup("rpad", 1).unwrap_err().to_string(), "RPAD: expects 2 or 3 arguments, got 1");
        assert_eq!(ScalarFunction::lookup("upper", 2).unwrap_err().to_string(), "UPPER: expects 1 argument, got 2");
        assert_eq!(ScalarFunction::lookup("mod", 3).unwrap_err().to_string(), "MOD: expects 2 arguments, got 3");
        assert_eq!(
            ScalarFunction::lookup("instr", 5).unwrap_err().to_string(),
            "INSTR: expects 2 to 4 arguments, got 5"
        );
        assert_eq!(
            ScalarFunction::lookup("decode", 2).unwrap_err().to_string(),
            "DECODE: expects at least 3 arguments, got 2"
        );
        assert!(ScalarFunction::lookup("dbms_random.value", 1).is_err());
        assert!(ScalarFunction::lookup("coalesce", 1).is_err());
        assert!(ScalarFunction::lookup("greatest", 5).is_ok());
    }

    #[test]
    fn every_function_is_listed_once_under_its_name() {
        let mut names: Vec<&str> = ALL_FUNCTIONS.iter().map(|f| f.name()).collect();
        for &f in ALL_FUNCTIONS {
            assert_eq!(ScalarFunction::lookup(f.name(), minimal_arity(f)).unwrap(), f);
            assert_eq!(f.name(), f.name().to_ascii_uppercase());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL_FUNCTIONS.len());
        assert!(!ScalarFunction::RandomValue.is_deterministic());
        assert!(!ScalarFunction::RandomString.is_deterministic());
        assert!(ScalarFunction::OraHash.is_deterministic());
    }

    fn minimal_arity(f: ScalarFunction) -> usize {
        (0..10).find(|n| f.arity().accepts(*n)).unwrap()
    }

    #[test]
    fn call_checks_arity_and_never_indexes_out_of_bounds() {
        for &f in ALL_FUNCTIONS {
            for count in 0..6 {
                let args = vec![Datum::Null; count];
                let result = f.call(&args, &mut ctx());
                if !f.arity().accepts(count) {
                    assert!(result.is_err(), "{} with {count} arguments", f.name());
                }
            }
        }
    }

    // ---- operators ----

    #[test]
    fn integer_arithmetic_is_exact_and_overflows_into_decimal() {
        assert_eq!(arith(ArithOp::Add, i(2), i(3)), i(5));
        assert_eq!(arith(ArithOp::Sub, i(2), i(3)), i(-1));
        assert_eq!(arith(ArithOp::Mul, i(4), i(-3)), i(-12));
        assert_eq!(arith(ArithOp::Add, i(i64::MAX), i(1)), n("9223372036854775808"));
        assert_eq!(arith(ArithOp::Mul, i(i64::MAX), i(-2)), n("-18446744073709551614"));
        assert_eq!(arith(ArithOp::Sub, i(i64::MIN), i(1)), n("-9223372036854775809"));
        assert!(arithmetic(ArithOp::Mul, &i(i64::MAX), &i(i64::MAX)).is_err());
        let e = arithmetic(ArithOp::Mul, &n("100000000000000000000"), &n("100000000000000000000")).unwrap_err();
        assert_eq!(e.to_string(), "arithmetic: numeric overflow");
    }

    #[test]
    fn division_is_exact_decimal() {
        assert_eq!(arith(ArithOp::Div, i(6), i(3)), i(2));
        assert_eq!(arith(ArithOp::Div, i(1), i(4)), n("0.25"));
        assert_eq!(arith(ArithOp::Div, i(1), i(3)), n("0.3333333333333333333333333333"));
        assert_eq!(arith(ArithOp::Div, n("7.5"), n("2.5")), i(3));
        let e = arithmetic(ArithOp::Div, &i(1), &i(0)).unwrap_err().to_string();
        assert_eq!(e, "arithmetic: divisor is equal to zero");
        assert!(arithmetic(ArithOp::Div, &n("1.5"), &s("0")).is_err());
    }

    #[test]
    fn arithmetic_converts_strings_and_propagates_null() {
        assert_eq!(arith(ArithOp::Add, s("2"), i(3)), i(5));
        assert_eq!(arith(ArithOp::Mul, s(" 1.5 "), s("2")), i(3));
        assert_eq!(arith(ArithOp::Add, NULL_V, i(3)), NULL_V);
        assert_eq!(arith(ArithOp::Div, i(3), NULL_V), NULL_V);
        assert_eq!(arith(ArithOp::Div, NULL_V, i(0)), NULL_V);
        let e = arithmetic(ArithOp::Add, &s("abc"), &i(1)).unwrap_err().to_string();
        assert_eq!(e, "arithmetic: invalid number 'abc'");
    }

    #[test]
    fn date_arithmetic_counts_days() {
        let d = date("2024-01-31 12:00:00");
        assert_eq!(arith(ArithOp::Add, d.clone(), i(1)), date("2024-02-01 12:00:00"));
        assert_eq!(arith(ArithOp::Add, i(1), d.clone()), date("2024-02-01 12:00:00"));
        assert_eq!(arith(ArithOp::Sub, d.clone(), n("0.5")), date("2024-01-31 00:00:00"));
        assert_eq!(arith(ArithOp::Add, d.clone(), s("0.25")), date("2024-01-31 18:00:00"));
        // 1/3 day = 28800 s exactly after rounding
        assert_eq!(arith(ArithOp::Add, d.clone(), arith(ArithOp::Div, i(1), i(3))), date("2024-01-31 20:00:00"));
        assert_eq!(arith(ArithOp::Sub, date("2024-03-01"), date("2024-02-01")), i(29));
        assert_eq!(arith(ArithOp::Sub, date("2024-03-01 12:00:00"), date("2024-03-01")), n("0.5"));
        assert!(arithmetic(ArithOp::Add, &d, &d).is_err());
        assert!(arithmetic(ArithOp::Mul, &d, &i(2)).is_err());
        assert!(arithmetic(ArithOp::Sub, &i(2), &d).is_err());
        assert!(arithmetic(ArithOp::Add, &d, &i(5_000_000)).unwrap_err().to_string().contains("date out of range"));
        assert!(arithmetic(ArithOp::Add, &d, &i(i64::MAX)).is_err());
        assert!(arithmetic(ArithOp::Sub, &d, &n("1e27")).is_err());
    }

    #[test]
    fn concat_treats_null_as_empty() {
        assert_eq!(concat(&s("ab"), &s("cd")), s("abcd"));
        assert_eq!(concat(&NULL_V, &s("cd")), s("cd"));
        assert_eq!(concat(&s("ab"), &NULL_V), s("ab"));
        assert_eq!(concat(&NULL_V, &NULL_V), NULL_V);
        assert_eq!(concat(&i(1), &n("2.5")), s("12.5"));
        assert_eq!(concat(&s("d="), &date("2024-01-02")), s("d=2024-01-02 00:00:00"));
        assert_eq!(ok("CONCAT", &[NULL_V, s("x")]), s("x"));
    }

    #[test]
    fn negate_numbers() {
        assert_eq!(negate(&i(5)).unwrap(), i(-5));
        assert_eq!(negate(&i(i64::MIN)).unwrap(), n("9223372036854775808"));
        assert_eq!(negate(&n("1.5")).unwrap(), n("-1.5"));
        assert_eq!(negate(&s("2")).unwrap(), i(-2));
        assert_eq!(negate(&NULL_V).unwrap(), NULL_V);
        assert!(negate(&date("2024-01-01")).is_err());
        assert!(negate(&s("x")).is_err());
    }

    // ---- strings ----

    #[test]
    fn pads() {
        assert_eq!(ok("RPAD", &[s("ab"), i(5)]), s("ab   "));
        assert_eq!(ok("LPAD", &[s("ab"), i(5), s("xy")]), s("xyxab"));
        assert_eq!(ok("RPAD", &[s("ab"), i(5), s("xy")]), s("abxyx"));
        assert_eq!(ok("LPAD", &[s("abcdef"), i(3)]), s("abc"));
        assert_eq!(ok("RPAD", &[s("abcdef"), i(3)]), s("abc"));
        assert_eq!(ok("LPAD", &[i(7), i(3), s("0")]), s("007"));
        assert_eq!(ok("LPAD", &[s("héllo"), i(7), s("é")]), s("ééhéllo"));
        assert_eq!(ok("LPAD", &[s("ab"), i(9), s("xyz")]), s("xyzxyzxab"));
        assert_eq!(ok("RPAD", &[s("ab"), i(7), s("xyz")]), s("abxyzxy"));
        assert_eq!(ok("RPAD", &[s("ab"), i(6), s("é")]), s("abéééé"));
        assert_eq!(ok("LPAD", &[s("ab"), i(0)]), NULL_V);
        assert_eq!(ok("LPAD", &[s("ab"), i(-3)]), NULL_V);
        assert_eq!(ok("LPAD", &[s("ab"), n("2.9")]), s("ab"));
        assert_eq!(ok("LPAD", &[NULL_V, i(3)]), NULL_V);
        assert_eq!(ok("LPAD", &[s("a"), NULL_V]), NULL_V);
        assert_eq!(ok("LPAD", &[s("a"), i(3), NULL_V]), NULL_V);
        assert!(err("RPAD", &[s("a"), i(1_000_000_000_000)]).starts_with("RPAD:"));
    }

    #[test]
    fn substrings() {
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), i(3)]), s("bcd"));
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(0), i(2)]), s("ab"));
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(1)]), s("abcdef"));
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(-2)]), s("ef"));
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(-3), i(2)]), s("de"));
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(-7)]), NULL_V);
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(7)]), NULL_V);
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), i(0)]), NULL_V);
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), i(-1)]), NULL_V);
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(5), i(100)]), s("ef"));
        assert_eq!(ok("SUBSTR", &[s("abcdef"), n("2.7"), n("1.9")]), s("b"));
        assert_eq!(ok("SUBSTR", &[s("abcdef"), i(2), n("79228162514264337593543950335")]), s("bcdef"));
        assert_eq!(ok("SUBSTR", &[s("żółw"), i(2), i(2)]), s("ół"));
        assert_eq!(ok("SUBSTR", &[i(12345), i(2), i(3)]), s("234"));
        assert_eq!(ok("SUBSTR", &[NULL_V, i(1)]), NULL_V);
        assert_eq!(ok("SUBSTR", &[s("abc"), NULL_V]), NULL_V);
        assert_eq!(ok("SUBSTR", &[s("abc"), i(1), NULL_V]), NULL_V);
        assert_eq!(ok("SUBSTR", &[s("abc"), i(i64::MIN), i(i64::MAX)]), NULL_V);
    }

    #[test]
    fn case_length_and_trims() {
        assert_eq!(ok("UPPER", &[s("aBc")]), s("ABC"));
        assert_eq!(ok("LOWER", &[s("ÀBC")]), s("àbc"));
        assert_eq!(ok("UPPER", &[NULL_V]), NULL_V);
        assert_eq!(ok("LENGTH", &[s("héllo")]), i(5));
        assert_eq!(ok("LENGTH", &[i(-120)]), i(4));
        assert_eq!(ok("LENGTH", &[NULL_V]), NULL_V);
        assert_eq!(ok("TRIM", &[s("  a b  ")]), s("a b"));
        assert_eq!(ok("TRIM", &[s("   ")]), NULL_V);
        assert_eq!(ok("LTRIM", &[s("  ab  ")]), s("ab  "));
        assert_eq!(ok("RTRIM", &[s("  ab  ")]), s("  ab"));
        assert_eq!(ok("LTRIM", &[s("xxyabcx"), s("xy")]), s("abcx"));
        assert_eq!(ok("RTRIM", &[s("xabcxyx"), s("xy")]), s("xabc"));
        assert_eq!(ok("RTRIM", &[s("xyx"), s("xy")]), NULL_V);
        assert_eq!(ok("LTRIM", &[s("abc"), NULL_V]), NULL_V);
        assert_eq!(ok("TRIM", &[NULL_V]), NULL_V);
    }

    #[test]
    fn instr_finds_characters() {
        assert_eq!(ok("INSTR", &[s("hello world"), s("o")]), i(5));
        assert_eq!(ok("INSTR", &[s("hello world"), s("o"), i(6)]), i(8));
        assert_eq!(ok("INSTR", &[s("hello world"), s("o"), i(1), i(2)]), i(8));
        assert_eq!(ok("INSTR", &[s("hello world"), s("o"), i(1), i(3)]), i(0));
        assert_eq!(ok("INSTR", &[s("abcabc"), s("c"), i(-1)]), i(6));
        assert_eq!(ok("INSTR", &[s("abcabc"), s("bc"), i(-1)]), i(5));
        assert_eq!(ok("INSTR", &[s("abcabc"), s("bc"), i(-1), i(2)]), i(2));
        assert_eq!(ok("INSTR", &[s("abcabc"), s("a"), i(-10)]), i(0));
        assert_eq!(ok("INSTR", &[s("aaa"), s("aa"), i(1), i(2)]), i(2));
        assert_eq!(ok("INSTR", &[s("żółw"), s("w")]), i(4));
        assert_eq!(ok("INSTR", &[s("abc"), s("abcd")]), i(0));
        assert_eq!(ok("INSTR", &[s("abc"), s("b"), i(0)]), i(0));
        assert_eq!(ok("INSTR", &[s("abc"), s("b"), i(100)]), i(0));
        assert_eq!(ok("INSTR", &[s("abc"), NULL_V]), NULL_V);
        assert_eq!(ok("INSTR", &[NULL_V, s("a")]), NULL_V);
        assert!(err("INSTR", &[s("abc"), s("b"), i(1), i(0)]).contains("out of range"));
    }

    #[test]
    fn replace_chr_ascii() {
        assert_eq!(ok("REPLACE", &[s("banana"), s("an"), s("AN")]), s("bANANa"));
        assert_eq!(ok("REPLACE", &[s("banana"), s("a")]), s("bnn"));
        assert_eq!(ok("REPLACE", &[s("banana"), s("a"), NULL_V]), s("bnn"));
        assert_eq!(ok("REPLACE", &[s("banana"), NULL_V, s("x")]), s("banana"));
        assert_eq!(ok("REPLACE", &[s("aaa"), s("a")]), NULL_V);
        assert_eq!(ok("REPLACE", &[NULL_V, s("a")]), NULL_V);
        assert_eq!(ok("CHR", &[i(65)]), s("A"));
        assert_eq!(ok("CHR", &[i(50089)]), s("é"));
        assert_eq!(ok("CHR", &[NULL_V]), NULL_V);
        assert!(err("CHR", &[i(-1)]).starts_with("CHR:"));
        assert!(err("CHR", &[i(200)]).starts_with("CHR:"));
        assert!(err("CHR", &[i(i64::MAX)]).starts_with("CHR:"));
        assert_eq!(ok("ASCII", &[s("Abc")]), i(65));
        assert_eq!(ok("ASCII", &[s("é")]), i(50089));
        assert_eq!(ok("ASCII", &[NULL_V]), NULL_V);
        assert_eq!(ok("CHR", &[ok("ASCII", &[s("€")])]), s("€"));
    }

    // ---- numbers ----

    #[test]
    fn modulo_follows_oracle() {
        assert_eq!(ok("MOD", &[i(11), i(4)]), i(3));
        assert_eq!(ok("MOD", &[i(-11), i(4)]), i(-3));
        assert_eq!(ok("MOD", &[i(11), i(-4)]), i(3));
        assert_eq!(ok("MOD", &[i(11), i(0)]), i(11));
        assert_eq!(ok("MOD", &[i(i64::MIN), i(-1)]), i(0));
        assert_eq!(ok("MOD", &[n("10.5"), i(3)]), n("1.5"));
        assert_eq!(ok("MOD", &[n("-10.5"), i(3)]), n("-1.5"));
        assert_eq!(ok("MOD", &[n("10.5"), i(0)]), n("10.5"));
        assert_eq!(ok("MOD", &[s("7"), i(2)]), i(1));
        assert_eq!(ok("MOD", &[NULL_V, i(2)]), NULL_V);
        assert_eq!(ok("MOD", &[i(2), NULL_V]), NULL_V);
        assert!(err("MOD", &[s("x"), i(2)]).contains("invalid number"));
    }

    #[test]
    fn abs_sign_floor_ceil() {
        assert_eq!(ok("ABS", &[i(-3)]), i(3));
        assert_eq!(ok("ABS", &[i(i64::MIN)]), n("9223372036854775808"));
        assert_eq!(ok("ABS", &[n("-1.5")]), n("1.5"));
        assert_eq!(ok("ABS", &[NULL_V]), NULL_V);
        assert_eq!(ok("SIGN", &[n("-0.1")]), i(-1));
        assert_eq!(ok("SIGN", &[i(0)]), i(0));
        assert_eq!(ok("SIGN", &[i(7)]), i(1));
        assert_eq!(ok("SIGN", &[NULL_V]), NULL_V);
        assert_eq!(ok("FLOOR", &[n("-1.5")]), i(-2));
        assert_eq!(ok("FLOOR", &[n("1.5")]), i(1));
        assert_eq!(ok("CEIL", &[n("1.2")]), i(2));
        assert_eq!(ok("CEIL", &[n("-1.2")]), i(-1));
        assert_eq!(ok("CEIL", &[i(4)]), i(4));
        assert_eq!(ok("FLOOR", &[NULL_V]), NULL_V);
        assert!(err("ABS", &[date("2024-01-01")]).starts_with("ABS:"));
    }

    #[test]
    fn round_and_trunc_numbers() {
        assert_eq!(ok("ROUND", &[n("2.5")]), i(3));
        assert_eq!(ok("ROUND", &[n("-2.5")]), i(-3));
        assert_eq!(ok("ROUND", &[n("1.2345"), i(2)]), n("1.23"));
        assert_eq!(ok("ROUND", &[n("1.235"), i(2)]), n("1.24"));
        assert_eq!(ok("TRUNC", &[n("1.239"), i(2)]), n("1.23"));
        assert_eq!(ok("TRUNC", &[n("-1.9")]), i(-1));
        assert_eq!(ok("ROUND", &[i(1250), i(-2)]), i(1300));
        assert_eq!(ok("ROUND", &[i(1249), i(-2)]), i(1200));
        assert_eq!(ok("ROUND", &[n("1249.99"), i(-2)]), i(1200));
        assert_eq!(ok("ROUND", &[n("-1250"), i(-2)]), i(-1300));
        assert_eq!(ok("TRUNC", &[n("1299.9"), i(-2)]), i(1200));
        assert_eq!(ok("TRUNC", &[n("-1299.9"), i(-2)]), i(-1200));
        assert_eq!(ok("ROUND", &[n("555"), i(-3)]), i(1000));
        assert_eq!(ok("ROUND", &[n("555"), i(-4)]), i(0));
        assert_eq!(ok("ROUND", &[n("555"), i(-40)]), i(0));
        assert_eq!(ok("ROUND", &[n("1.5"), i(40)]), n("1.5"));
        assert_eq!(ok("ROUND", &[i(17), i(2)]), i(17));
        assert_eq!(ok("ROUND", &[s("2.5")]), i(3));
        assert_eq!(ok("ROUND", &[NULL_V]), NULL_V);
        assert_eq!(ok("ROUND", &[i(1), NULL_V]), NULL_V);
        assert!(err("ROUND", &[n("79228162514264337593543950335"), i(-28)]).contains("numeric overflow"));
        assert_eq!(ok("ROUND", &[n("49228162514264337593543950335"), i(-28)]), n("50000000000000000000000000000"));
    }

    #[test]
    fn round_extremes_do_not_panic() {
        assert!(err("ROUND", &[n("79228162514264337593543950335"), i(-29)]).contains("overflow"));
        assert_eq!(ok("TRUNC", &[n("79228162514264337593543950335"), i(-29)]), i(0));
        assert_eq!(ok("ROUND", &[n("-79228162514264337593543950335"), i(i64::MIN)]), i(0));
        assert_eq!(
            ok("TRUNC", &[n("0.0000000000000000000000000001"), i(i64::MAX)]),
            n("0.0000000000000000000000000001")
        );
        assert!(call("ROUND", &[n("79228162514264337593543950335"), i(-1)]).is_err());
    }

    #[test]
    fn power_and_sqrt() {
        assert_eq!(ok("POWER", &[i(2), i(10)]), i(1024));
        assert_eq!(ok("POWER", &[i(2), i(-2)]), n("0.25"));
        assert_eq!(ok("POWER", &[n("1.1"), i(2)]), n("1.21"));
        assert_eq!(ok("POWER", &[i(2), i(70)]), n("1180591620717411303424"));
        assert_eq!(ok("POWER", &[i(-2), i(3)]), i(-8));
        assert_eq!(ok("POWER", &[i(0), i(0)]), i(1));
        assert_eq!(ok("POWER", &[i(4), n("0.5")]), i(2));
        assert_eq!(ok("POWER", &[i(2), n("0.5")]), n("1.41421356237310"));
        assert_eq!(ok("POWER", &[n("0.5"), i(1000)]), i(0));
        assert_eq!(ok("POWER", &[i(1), i(i64::MAX)]), i(1));
        assert_eq!(ok("POWER", &[NULL_V, i(2)]), NULL_V);
        assert!(err("POWER", &[i(10), i(100)]).contains("numeric overflow"));
        assert!(err("POWER", &[i(10), n("100.5")]).contains("numeric overflow"));
        assert!(err("POWER", &[i(-8), n("0.5")]).contains("out of range"));
        assert!(err("POWER", &[i(0), i(-1)]).starts_with("POWER:"));
        assert!(err("POWER", &[n("0.1"), i(-100)]).starts_with("POWER:"));
        assert_eq!(ok("POWER", &[i(10), n("-40.5")]), i(0));
        assert_eq!(ok("SQRT", &[i(16)]), i(4));
        assert_eq!(ok("SQRT", &[n("0.01")]), n("0.1"));
        assert_eq!(ok("SQRT", &[i(2)]), n("1.41421356237310"));
        assert_eq!(ok("SQRT", &[i(0)]), i(0));
        assert_eq!(ok("SQRT", &[NULL_V]), NULL_V);
        assert_eq!(err("SQRT", &[i(-1)]), "SQRT: argument '-1' is out of range");
    }

    // ---- choices ----

    #[test]
    fn nvl_and_coalesce() {
        assert_eq!(ok("NVL", &[NULL_V, i(2)]), i(2));
        assert_eq!(ok("NVL", &[i(1), i(2)]), i(1));
        assert_eq!(ok("NVL", &[NULL_V, NULL_V]), NULL_V);
        assert_eq!(ok("COALESCE", &[NULL_V, NULL_V, s("c")]), s("c"));
        assert_eq!(ok("COALESCE", &[NULL_V, NULL_V]), NULL_V);
    }

    #[test]
    fn greatest_and_least() {
        assert_eq!(ok("GREATEST", &[i(1), i(3), i(2)]), i(3));
        assert_eq!(ok("LEAST", &[i(1), i(3), n("0.5")]), n("0.5"));
        assert_eq!(ok("GREATEST", &[i(1), s("2.5")]), n("2.5"));
        assert_eq!(ok("GREATEST", &[s("10"), i(9)]), s("9"));
        assert_eq!(ok("LEAST", &[s("b"), s("a"), s("c")]), s("a"));
        assert_eq!(ok("GREATEST", &[date("2024-01-01"), s("2024-02-01")]), date("2024-02-01"));
        assert_eq!(ok("GREATEST", &[i(1), NULL_V, i(3)]), NULL_V);
        assert_eq!(ok("LEAST", &[i(5)]), i(5));
        assert!(err("GREATEST", &[i(1), s("x")]).starts_with("GREATEST:"));
    }

    #[test]
    fn decode_matches_null_and_converts() {
        assert_eq!(ok("DECODE", &[i(2), i(1), s("one"), i(2), s("two"), s("other")]), s("two"));
        assert_eq!(ok("DECODE", &[i(3), i(1), s("one"), i(2), s("two"), s("other")]), s("other"));
        assert_eq!(ok("DECODE", &[i(3), i(1), s("one"), i(2), s("two")]), NULL_V);
        assert_eq!(ok("DECODE", &[NULL_V, i(1), s("one"), NULL_V, s("null")]), s("null"));
        assert_eq!(ok("DECODE", &[i(1), NULL_V, s("null"), i(1), s("one")]), s("one"));
        assert_eq!(ok("DECODE", &[s("1.0"), i(1), s("one")]), s("one"));
        assert_eq!(ok("DECODE", &[i(1), i(1), NULL_V, i(2), i(5)]), NULL_V);
        assert_eq!(ok("DECODE", &[i(2), i(1), NULL_V, i(2), i(5)]), s("5"));
        assert_eq!(ok("DECODE", &[i(2), i(1), i(10), i(2), s("20")]), i(20));
        assert!(err("DECODE", &[s("x"), i(1), s("one")]).contains("invalid number"));
    }

    // ---- ORA_HASH and DBMS_RANDOM ----

    #[test]
    fn ora_hash_is_deterministic_and_bounded() {
        let h = ok("ORA_HASH", &[s("abc")]);
        assert_eq!(ok("ORA_HASH", &[s("abc")]), h);
        assert_ne!(ok("ORA_HASH", &[s("abc"), i(4294967295), i(1)]), h);
        let Datum::Int(v) = h else { panic!("{h:?}") };
        assert!((0..=4294967295).contains(&v));
        for x in 0..200 {
            let Datum::Int(b) = ok("ORA_HASH", &[i(x), i(9)]) else { panic!() };
            assert!((0..=9).contains(&b));
        }
        assert_eq!(ok("ORA_HASH", &[i(5), i(0)]), i(0));
        assert_eq!(ok("ORA_HASH", &[NULL_V]), NULL_V);
        assert_eq!(ok("ORA_HASH", &[i(1), NULL_V]), NULL_V);
        assert_eq!(ok("ORA_HASH", &[n("1.50")]), ok("ORA_HASH", &[n("1.5")]));
        assert!(err("ORA_HASH", &[i(1), i(-1)]).contains("out of range"));
        assert!(err("ORA_HASH", &[i(1), i(10), i(4294967296)]).contains("out of range"));
    }

    #[test]
    fn random_value_is_seeded_and_in_range() {
        let f = ScalarFunction::lookup("DBMS_RANDOM.VALUE", 0).unwrap();
        let mut a = FunctionContext::new(0, 7);
        let mut b = FunctionContext::new(0, 7);
        let low = n("-5.5");
        let high = i(10);
        for _ in 0..500 {
            let x = f.call(&[], &mut a).unwrap();
            assert_eq!(x, f.call(&[], &mut b).unwrap());
            assert!(x.sql_cmp(&i(0)).unwrap() != Some(Ordering::Less));
            assert_eq!(x.sql_cmp(&i(1)).unwrap(), Some(Ordering::Less));
            let y = f.call(&[low.clone(), high.clone()], &mut a).unwrap();
            assert_eq!(y, f.call(&[low.clone(), high.clone()], &mut b).unwrap());
            assert!(y.sql_cmp(&low).unwrap() != Some(Ordering::Less));
            assert_eq!(y.sql_cmp(&high).unwrap(), Some(Ordering::Less));
        }
        assert_eq!(f.call(&[NULL_V, i(1)], &mut a).unwrap(), NULL_V);
        assert_eq!(f.call(&[i(3), i(3)], &mut a).unwrap(), i(3));
        let big = n("79228162514264337593543950335");
        assert!(f.call(&[negate(&big).unwrap(), big], &mut a).is_err());
        let mut r = RandomState::new(1);
        for _ in 0..1000 {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
    }

    #[test]
    fn random_string_options() {
        let f = ScalarFunction::lookup("DBMS_RANDOM.STRING", 2).unwrap();
        let mut c = ctx();
        let check = |c: &mut FunctionContext, opt: Value, ok: fn(char) -> bool| {
            let Datum::Str(v) = f.call(&[opt, i(50)], c).unwrap() else { panic!() };
            assert_eq!(v.chars().count(), 50);
            assert!(v.chars().all(ok), "{v}");
        };
        check(&mut c, s("U"), |ch| ch.is_ascii_uppercase());
        check(&mut c, s("l"), |ch| ch.is_ascii_lowercase());
        check(&mut c, s("a"), |ch| ch.is_ascii_alphabetic());
        check(&mut c, s("X"), |ch| ch.is_ascii_uppercase() || ch.is_ascii_digit());
        check(&mut c, s("p"), |ch| (' '..='~').contains(&ch));
        check(&mut c, NULL_V, |ch| ch.is_ascii_uppercase());
        check(&mut c, s("?"), |ch| ch.is_ascii_uppercase());
        assert_eq!(f.call(&[s("U"), i(0)], &mut c).unwrap(), NULL_V);
        assert_eq!(f.call(&[s("U"), NULL_V], &mut c).unwrap(), NULL_V);
        let Datum::Str(long) = f.call(&[s("U"), i(i64::MAX)], &mut c).unwrap() else { panic!() };
        assert_eq!(long.len(), 4000);
    }

    // ---- conversions ----

    #[test]
    fn to_char_numbers() {
        assert_eq!(ok("TO_CHAR", &[n("1.50")]), s("1.5"));
        assert_eq!(ok("TO_CHAR", &[i(42), s("FM0000")]), s("0042"));
        assert_eq!(ok("TO_CHAR", &[i(42), s("999999")]), s("     42"));
        assert_eq!(ok("TO_CHAR", &[i(-42), s("999999")]), s("    -42"));
        assert_eq!(ok("TO_CHAR", &[n("3.14159"), s("99.99")]), s("  3.14"));
        assert_eq!(ok("TO_CHAR", &[n("3.145"), s("99.99")]), s("  3.15"));
        assert_eq!(ok("TO_CHAR", &[n("1.5"), s("99.99")]), s("  1.50"));
        assert_eq!(ok("TO_CHAR", &[n("1.5"), s("FM99.99")]), s("1.5"));
        assert_eq!(ok("TO_CHAR", &[i(1), s("FM99.99")]), s("1."));
        assert_eq!(ok("TO_CHAR", &[n("1.5"), s("FM99.90")]), s("1.50"));
        assert_eq!(ok("TO_CHAR", &[n("0.5"), s("990.99")]), s("   0.50"));
        assert_eq!(ok("TO_CHAR", &[n("0.5"), s("999.99")]), s("    .50"));
        assert_eq!(ok("TO_CHAR", &[i(0), s("999")]), s("   0"));
        assert_eq!(ok("TO_CHAR", &[i(1234567), s("9,999,999")]), s(" 1,234,567"));
        assert_eq!(ok("TO_CHAR", &[i(123), s("9,999")]), s("   123"));
        assert_eq!(ok("TO_CHAR", &[i(1234), s("FM9G999D00")]), s("1,234.00"));
        assert_eq!(ok("TO_CHAR", &[i(123), s("99")]), s("###"));
        assert_eq!(ok("TO_CHAR", &[n("9.99"), s("9.9")]), s("####"));
        assert_eq!(ok("TO_CHAR", &[i(12345), s("FM999")]), s("####"));
        assert_eq!(ok("TO_CHAR", &[i(5), s("$999")]), s("   $5"));
        assert_eq!(ok("TO_CHAR", &[n("1234.56"), s("$9,999.99")]), s(" $1,234.56"));
        assert_eq!(ok("TO_CHAR", &[n("-1234.56"), s("$9,999.99")]), s("-$1,234.56"));
        assert_eq!(ok("TO_CHAR", &[i(-5), s("S999")]), s("  -5"));
        assert_eq!(ok("TO_CHAR", &[i(5), s("S999")]), s("  +5"));
        assert_eq!(ok("TO_CHAR", &[i(-5), s("999MI")]), s("  5-"));
        assert_eq!(ok("TO_CHAR", &[i(5), s("FM999MI")]), s("5"));
        assert_eq!(ok("TO_CHAR", &[n("-0.001"), s("9.99")]), s("  .00"));
        assert_eq!(ok("TO_CHAR", &[n("2.5"), s("TM9")]), s("2.5"));
        assert_eq!(ok("TO_CHAR", &[s("12"), s("FM000")]), s("012"));
        assert_eq!(ok("TO_CHAR", &[i(5), NULL_V]), NULL_V);
        assert_eq!(ok("TO_CHAR", &[NULL_V, s("999")]), NULL_V);
        assert_eq!(ok("TO_CHAR", &[NULL_V]), NULL_V);
        assert!(err("TO_CHAR", &[i(5), s("99X")]).contains("invalid number format model"));
        assert!(err("TO_CHAR", &[i(5), s("9.9.9")]).contains("invalid number format model"));
        assert!(err("TO_CHAR", &[i(5), s("FM")]).contains("invalid number format model"));
        assert!(err("TO_CHAR", &[s("abc"), s("999")]).contains("invalid number"));
    }

    #[test]
    fn to_char_dates() {
        let d = date("2024-03-05 14:07:09");
        assert_eq!(ok("TO_CHAR", std::slice::from_ref(&d)), s("2024-03-05 14:07:09"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("YYYY-MM-DD HH24:MI:SS")]), s("2024-03-05 14:07:09"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("yyyy/mm/dd hh:mi am")]), s("2024/03/05 02:07 pm"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("DD-MON-YY")]), s("05-MAR-24"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("Mon DD, YYYY")]), s("Mar 05, 2024"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("Month")]), s("March    "));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("FMMonth DD")]), s("March 5"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("DAY")]), s("TUESDAY  "));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("Dy D DDD Q")]), s("Tue 3 065 1"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("\"Date: \"YYYY\"!\"")]), s("Date: 2024!"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), s("HH12 A.M. SSSSS")]), s("02 P.M. 50829"));
        assert_eq!(ok("TO_CHAR", &[date("1970-01-01"), s("J")]), s("2440588"));
        assert_eq!(ok("TO_CHAR", &[d.clone(), NULL_V]), NULL_V);
        assert!(err("TO_CHAR", &[d.clone(), s("YYYY-XX")]).contains("date format not recognized"));
        assert!(err("TO_CHAR", &[d, s("\"open")]).starts_with("TO_CHAR:"));
    }

    #[test]
    fn to_date_with_masks() {
        assert_eq!(ok("TO_DATE", &[s("2024-03-05")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("2024-03-05"), s("YYYY-MM-DD")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("20240305"), s("YYYYMMDD")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[i(20240305), s("YYYYMMDD")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("05-mar-2024"), s("DD-MON-YYYY")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("5 March 2024"), s("DD MONTH YYYY")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("2024/3/5"), s("YYYY-MM-DD")]), date("2024-03-05"));
        assert_eq!(
            ok("TO_DATE", &[s("2024-03-05 02:07:09 PM"), s("YYYY-MM-DD HH:MI:SS AM")]),
            date("2024-03-05 14:07:09")
        );
        assert_eq!(ok("TO_DATE", &[s("2024-03-05 12:00 a.m."), s("YYYY-MM-DD HH12:MI P.M.")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("2024-03-05 23:59:59"), s("yyyy-mm-dd hh24:mi:ss")]), date("2024-03-05 23:59:59"));
        assert_eq!(ok("TO_DATE", &[s("2024-03-05"), s("YYYY-MM-DD HH24:MI:SS")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("Tue 2024-03-05"), s("DY YYYY-MM-DD")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("2024"), s("YYYY")]), date("2024-03-01"));
        assert_eq!(ok("TO_DATE", &[s("24-03-05"), s("YY-MM-DD")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("99-03-05"), s("RR-MM-DD")]), date("1999-03-05"));
        assert_eq!(ok("TO_DATE", &[s("49-03-05"), s("RR-MM-DD")]), date("2049-03-05"));
        assert_eq!(ok("TO_DATE", &[s("2024-065"), s("YYYY-DDD")]), date("2024-03-05"));
        assert_eq!(ok("TO_DATE", &[s("2440588"), s("J")]), date("1970-01-01"));
        assert_eq!(ok("TO_DATE", &[s("T2024"), s("\"T\"YYYY")]), date("2024-03-01"));
        assert_eq!(ok("TO_DATE", &[NULL_V, s("YYYY")]), NULL_V);
        assert_eq!(ok("TO_DATE", &[s("2024"), NULL_V]), NULL_V);
        assert_eq!(ok("TO_DATE", &[date("2024-01-01"), s("YYYY")]), date("2024-01-01"));
        assert_eq!(err("TO_DATE", &[s("x"), s("YYYY-MM-DD")]), "TO_DATE: 'x' does not match format 'YYYY-MM-DD'");
        assert!(err("TO_DATE", &[s("2024-03-05 10"), s("YYYY-MM-DD")]).contains("does not match"));
        assert!(err("TO_DATE", &[s("2024-13-05"), s("YYYY-MM-DD")]).contains("not a valid month"));
        assert!(err("TO_DATE", &[s("2023-02-29"), s("YYYY-MM-DD")]).contains("day of month"));
        assert!(err("TO_DATE", &[s("2024-02-01 24:00"), s("YYYY-MM-DD HH24:MI")]).contains("hour"));
        assert!(err("TO_DATE", &[s("2024-02-01 13"), s("YYYY-MM-DD HH")]).contains("hour"));
        assert!(err("TO_DATE", &[s("2024-02-01 10:60"), s("YYYY-MM-DD HH24:MI")]).contains("minutes"));
        assert!(err("TO_DATE", &[s("0000-01-01"), s("YYYY-MM-DD")]).contains("year"));
        assert!(err("TO_DATE", &[s("1"), s("Q")]).starts_with("TO_DATE:"));
        assert!(err("TO_DATE", &[s("yesterday")]).starts_with("TO_DATE:"));
    }

    #[test]
    fn to_number_parses() {
        assert_eq!(ok("TO_NUMBER", &[s(" 42 ")]), i(42));
        assert_eq!(ok("TO_NUMBER", &[s("-1.50")]), n("-1.5"));
        assert_eq!(ok("TO_NUMBER", &[i(3)]), i(3));
        assert_eq!(ok("TO_NUMBER", &[NULL_V]), NULL_V);
        assert_eq!(ok("TO_NUMBER", &[s("1,234.5"), s("9,999.99")]), n("1234.5"));
        assert_eq!(ok("TO_NUMBER", &[s("$12"), s("$99")]), i(12));
        assert_eq!(ok("TO_NUMBER", &[s("12-"), s("99MI")]), i(-12));
        assert_eq!(ok("TO_NUMBER", &[s("12"), NULL_V]), NULL_V);
        assert_eq!(err("TO_NUMBER", &[s("abc")]), "TO_NUMBER: invalid number 'abc'");
        assert!(err("TO_NUMBER", &[s("1234"), s("99")]).contains("invalid number"));
        assert!(err("TO_NUMBER", &[s("1.234"), s("9.99")]).contains("invalid number"));
        assert!(err("TO_NUMBER", &[date("2024-01-01")]).starts_with("TO_NUMBER:"));
    }

    // ---- dates ----

    #[test]
    fn round_and_trunc_dates() {
        let d = date("2024-08-16 13:45:50");
        let t = |f: &str| ok("TRUNC", &[d.clone(), s(f)]);
        let r = |f: &str| ok("ROUND", &[d.clone(), s(f)]);
        assert_eq!(ok("TRUNC", std::slice::from_ref(&d)), date("2024-08-16"));
        assert_eq!(ok("ROUND", std::slice::from_ref(&d)), date("2024-08-17"));
        assert_eq!(ok("ROUND", &[date("2024-08-16 11:59:59")]), date("2024-08-16"));
        assert_eq!(t("MM"), date("2024-08-01"));
        assert_eq!(r("MM"), date("2024-09-01"));
        assert_eq!(ok("ROUND", &[date("2024-08-15 23:00:00"), s("MM")]), date("2024-08-01"));
        assert_eq!(t("yyyy"), date("2024-01-01"));
        assert_eq!(r("YYYY"), date("2025-01-01"));
        assert_eq!(ok("ROUND", &[date("2024-06-30"), s("YEAR")]), date("2024-01-01"));
        assert_eq!(t("DD"), date("2024-08-16"));
        assert_eq!(r("DD"), date("2024-08-17"));
        assert_eq!(t("Q"), date("2024-07-01"));
        assert_eq!(r("Q"), date("2024-10-01"));
        assert_eq!(ok("ROUND", &[date("2024-08-15"), s("Q")]), date("2024-07-01"));
        assert_eq!(t("HH24"), date("2024-08-16 13:00:00"));
        assert_eq!(r("HH"), date("2024-08-16 14:00:00"));
        assert_eq!(t("MI"), date("2024-08-16 13:45:00"));
        assert_eq!(r("MI"), date("2024-08-16 13:46:00"));
        assert_eq!(t("IW"), date("2024-08-12"));
        assert_eq!(r("IW"), date("2024-08-19"));
        assert_eq!(t("DAY"), date("2024-08-11"));
        assert_eq!(ok("TRUNC", &[d.clone(), NULL_V]), NULL_V);
        assert!(err("TRUNC", &[d.clone(), s("XX")]).contains("bad precision specifier"));
        assert!(err("ROUND", &[date("9999-12-31"), s("YYYY")]).contains("date out of range"));
        assert_eq!(ok("TRUNC", &[date("0001-01-01 05:00:00")]), date("0001-01-01"));
    }

    #[test]
    fn add_months_and_last_day() {
        assert_eq!(ok("ADD_MONTHS", &[date("2024-01-31"), i(1)]), date("2024-02-29"));
        assert_eq!(ok("ADD_MONTHS", &[date("2024-02-29"), i(1)]), date("2024-03-31"));
        assert_eq!(ok("ADD_MONTHS", &[date("2024-01-15 10:00:00"), i(-13)]), date("2022-12-15 10:00:00"));
        assert_eq!(ok("ADD_MONTHS", &[date("2024-01-15"), n("1.9")]), date("2024-02-15"));
        assert_eq!(ok("ADD_MONTHS", &[s("2024-01-15"), i(12)]), date("2025-01-15"));
        assert_eq!(ok("ADD_MONTHS", &[NULL_V, i(1)]), NULL_V);
        assert_eq!(ok("ADD_MONTHS", &[date("2024-01-15"), NULL_V]), NULL_V);
        assert!(err("ADD_MONTHS", &[date("9999-12-01"), i(1)]).contains("date out of range"));
        assert!(err("ADD_MONTHS", &[date("2024-01-01"), i(i64::MAX)]).contains("date out of range"));
        assert!(err("ADD_MONTHS", &[i(5), i(1)]).starts_with("ADD_MONTHS:"));
        assert_eq!(ok("LAST_DAY", &[date("2023-02-10 08:00:00")]), date("2023-02-28 08:00:00"));
        assert_eq!(ok("LAST_DAY", &[date("2000-02-01")]), date("2000-02-29"));
        assert_eq!(ok("LAST_DAY", &[date("1900-02-01")]), date("1900-02-28"));
        assert_eq!(ok("LAST_DAY", &[date("2024-12-05")]), date("2024-12-31"));
        assert_eq!(ok("LAST_DAY", &[NULL_V]), NULL_V);
    }

    #[test]
    fn dates_far_out_of_range_do_not_panic() {
        for secs in [i64::MIN, i64::MAX, MIN_DATE - 1, MAX_DATE + 1] {
            let d = Datum::Date(secs);
            for f in ["TRUNC", "ROUND", "LAST_DAY", "TO_CHAR"] {
                let _ = call(f, std::slice::from_ref(&d));
            }
            let _ = call("ADD_MONTHS", &[d.clone(), i(1)]);
            let _ = call("TO_CHAR", &[d.clone(), s("YYYY J")]);
            let _ = arithmetic(ArithOp::Sub, &d, &Datum::Date(0));
            let _ = arithmetic(ArithOp::Add, &d, &i(1));
        }
    }

    #[test]
    fn f64_conversion_edges() {
        assert_eq!(f64_to_decimal(1e-40, "X").unwrap(), Decimal::ZERO);
        assert_eq!(f64_to_decimal(1.5e-27, "X").unwrap(), Decimal::from_str("0.0000000000000000000000000015").unwrap());
        assert!(f64_to_decimal(1e29, "X").is_err());
        assert!(f64_to_decimal(f64::NAN, "X").is_err());
        assert_eq!(f64_to_decimal(-2.5, "X").unwrap(), Decimal::from_str("-2.5").unwrap());
    }

    // ---- properties ----

    const DATE_MASK_PIECES: &[&str] = &[
        "YYYY", "YYY", "YY", "Y", "RRRR", "RR", "MM", "MON", "Month", "DD", "DDD", "Dy", "day", "D", "HH24", "HH",
        "HH12", "MI", "SS", "SSSSS", "AM", "p.m.", "Q", "J", "FM", "FX", "-", " ", ":", "\"at\"", "/",
    ];

    fn any_datum() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Datum::Null),
            any::<i64>().prop_map(Datum::Int),
            (any::<i64>(), 0u32..=28).prop_map(|(m, s)| Datum::from_decimal(Decimal::new(m, s))),
            ".{0,12}".prop_map(Datum::string),
            (MIN_DATE - 10..MAX_DATE + 10).prop_map(Datum::Date),
        ]
    }

    /// ORA_HASH of a whole number the byte-by-byte way, as [`ora_hash`] computes it.
    fn ora_hash_bytewise(value: i64, max_bucket: i64, seed: i64) -> i64 {
        let mut h = Fnv::seeded(seed);
        h.write_whole_number(value);
        h.bucket(max_bucket)
    }

    #[test]
    fn prepared_whole_number_hash_is_the_bytewise_hash() {
        for v in [0, 1, 255, 256, 65_535, 65_536, i64::MAX, -1, -256, i64::MIN, 5_000_000] {
            let prepared = WholeNumberHash::new(99_999, 1).unwrap();
            assert_eq!(prepared.hash(v), ora_hash_bytewise(v, 99_999, 1), "{v}");
        }
        assert!(WholeNumberHash::new(-1, 0).is_none());
        assert!(WholeNumberHash::new(1, ORA_HASH_LIMIT + 1).is_none());
    }

    proptest! {
        #[test]
        fn prepared_whole_number_hash_agrees(
            value in prop_oneof![any::<i64>(), 0i64..70_000, -300i64..300],
            max_bucket in prop_oneof![0..=ORA_HASH_LIMIT, Just(ORA_HASH_LIMIT), 0i64..1000],
            seed in prop_oneof![0..=ORA_HASH_LIMIT, 0i64..4],
        ) {
            let prepared = WholeNumberHash::new(max_bucket, seed).expect("in range");
            prop_assert_eq!(prepared.hash(value), ora_hash_bytewise(value, max_bucket, seed));
            prop_assert_eq!(ok("ORA_HASH", &[i(value), i(max_bucket), i(seed)]), i(prepared.hash(value)));
        }

        #[test]
        fn pads_have_the_requested_length(text in ".{0,30}", fill in ".{1,5}", len in 1i64..200, left in any::<bool>()) {
            let name = if left { "LPAD" } else { "RPAD" };
            let out = call(name, &[s(&text), i(len), Datum::Str(fill.into())]).unwrap();
            let expected = if text.is_empty() { Datum::Null } else { out.clone() };
            prop_assert_eq!(&out, &expected);
            if let Datum::Str(v) = out {
                prop_assert_eq!(v.chars().count() as i64, len);
            }
        }

        #[test]
        fn substr_never_panics(text in ".{0,20}", pos in any::<i64>(), len in proptest::option::of(any::<i64>())) {
            let mut args = vec![s(&text), i(pos)];
            if let Some(l) = len { args.push(i(l)); }
            let out = call("SUBSTR", &args).unwrap();
            if let Datum::Str(v) = out {
                prop_assert!(text.contains(v.as_ref()));
            }
        }

        #[test]
        fn add_then_sub_round_trips(a in any::<i64>(), b in any::<i64>()) {
            let sum = arith(ArithOp::Add, i(a), i(b));
            prop_assert_eq!(arith(ArithOp::Sub, sum.clone(), i(b)), i(a));
            let diff = arith(ArithOp::Sub, i(a), i(b));
            prop_assert_eq!(arith(ArithOp::Add, diff, i(b)), i(a));
        }

        #[test]
        fn to_char_to_date_round_trip(secs in MIN_DATE..=MAX_DATE) {
            let mask = s("YYYY-MM-DD HH24:MI:SS");
            let text = call("TO_CHAR", &[Datum::Date(secs), mask.clone()]).unwrap();
            prop_assert_eq!(&text, &Datum::string(format_date(secs)));
            prop_assert_eq!(call("TO_DATE", &[text, mask]).unwrap(), Datum::Date(secs));
        }

        #[test]
        fn no_function_panics(args in proptest::collection::vec(any_datum(), 0..5), masks in proptest::collection::vec("[A-Za-z0-9.,$ \"-]{0,8}", 1..3)) {
            let mut c = ctx();
            for &f in ALL_FUNCTIONS {
                if f.arity().accepts(args.len()) {
                    let _ = f.call(&args, &mut c);
                }
                for m in &masks {
                    let mut with_mask = args.iter().take(1).cloned().collect::<Vec<_>>();
                    with_mask.push(s(m));
                    if f.arity().accepts(2) {
                        let _ = f.call(&with_mask, &mut c);
                    }
                }
            }
            for (a, b) in args.iter().zip(args.iter().skip(1)) {
                for op in [ArithOp::Add, ArithOp::Sub, ArithOp::Mul, ArithOp::Div] {
                    let _ = arithmetic(op, a, b);
                }
                let _ = concat(a, b);
                let _ = negate(a);
            }
        }

        #[test]
        fn date_masks_never_panic(
            secs in any::<i64>(),
            mask in proptest::collection::vec(proptest::sample::select(DATE_MASK_PIECES), 0..8),
            input in "[0-9A-Za-z .:/-]{0,20}",
            now in any::<i64>(),
        ) {
            let mask: String = mask.concat();
            let _ = format_date_mask(secs, &mask, "TO_CHAR");
            let _ = parse_date_with_mask(&input, &mask, now);
            if let Ok(text) = format_date_mask(secs, &mask, "TO_CHAR") {
                let _ = parse_date_with_mask(&text, &mask, now);
            }
        }

        #[test]
        fn number_masks_never_panic(m in any::<i64>(), scale in 0u32..=28, mask in "(FM)?[S$]?[90,]{0,8}([.D][90]{0,5})?(MI|S)?") {
            let d = Decimal::new(m, scale);
            if let Ok(parsed) = NumberMask::parse(&mask, "TO_CHAR") {
                let out = parsed.format(d);
                if !out.starts_with('#') && !parsed.fill_mode {
                    prop_assert_eq!(out.chars().count(), parsed.width());
                }
            }
        }
    }
}
