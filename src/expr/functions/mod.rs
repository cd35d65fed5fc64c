//! Oracle's scalar functions and operators on values. Here: the catalog of functions
//! ([`ScalarFunction`]: names, arities, dispatch), the per-statement context and the
//! argument helpers; each kind in its own file: `arithmetic` (the operators), `string`,
//! `numeric`, `date`, `choice` (GREATEST, LEAST, DECODE), `hash` (ORA_HASH), `random`
//! (DBMS_RANDOM), `conversion` (TO_CHAR, TO_DATE, TO_NUMBER) with the format masks of
//! `date_mask` and `number_mask`, and `date_literal` (the text of `DATE '...'` and
//! `TIMESTAMP '...'` literals, which the binder makes DATE values).
//!
//! This module owns:
//! - the operators `+ - * /` ([`arithmetic`]) and unary minus ([`negate`]); CONCAT()
//!   ([`concat()`]), whose operator form `||` the expression evaluator builds in place;
//! - the scalar functions of [`ScalarFunction`]: strings (SUBSTR, INSTR, LPAD, RPAD, TRIM,
//!   REPLACE, UPPER, ...), numbers (MOD, ROUND, TRUNC, POWER, SQRT, ...), conversions
//!   (TO_CHAR, TO_DATE, TO_NUMBER), dates (ADD_MONTHS, LAST_DAY, MONTHS_BETWEEN,
//!   NEXT_DAY, ROUND/TRUNC of a DATE, and for the binder EXTRACT and DATE ± INTERVAL),
//!   choices (NVL, NVL2, COALESCE, DECODE, GREATEST, LEAST), ORA_HASH and
//!   DBMS_RANDOM.VALUE / DBMS_RANDOM.STRING;
//! - NEXTVAL and CURRVAL of sequences (`sequence`: one value a row of a statement);
//! - [`FunctionContext`]: what a function may need from its statement (SYSDATE, read from
//!   the clock at the statement's first use of it and one value for the rest of the
//!   statement, and a seeded pseudo-random generator, so that a statement is
//!   reproducible from its seed).
//!
//! Rules, as in Oracle:
//! - NULL in gives NULL out. The exceptions are Oracle's: NVL, NVL2 and COALESCE (they
//!   exist to replace NULL), DECODE (NULL matches NULL), `||` and CONCAT (NULL is an empty string),
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

mod arithmetic;
mod choice;
mod conversion;
mod date;
mod date_literal;
mod date_mask;
mod hash;
mod number_mask;
mod numeric;
mod random;
mod sequence;
mod string;

pub use arithmetic::{ArithOp, arithmetic, concat, negate};
use choice::*;
use conversion::*;
use date::*;
pub use date_literal::{date_literal, timestamp_literal};
use date_mask::*;
pub use hash::WholeNumberHash;
use hash::*;
use number_mask::*;
use numeric::*;
pub use random::RandomState;
use random::*;
pub use sequence::{SequenceSource, nextval_sequences, sequence_value};
use string::*;
pub use string::{pad_ascii, pad_into};

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
    /// The statement's time, local, microseconds since 1970: SYSTIMESTAMP, and SYSDATE
    /// to the second. Read from the clock when the statement first asks for it (see
    /// [`FunctionContext::at_first_use`]), the same for the rest of the statement.
    now: std::cell::OnceCell<i64>,
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
    /// The answers of the statement's subqueries, by slot (see [`Expr::Subquery`]), set
    /// when the statement runs them.
    ///
    /// [`Expr::Subquery`]: crate::expr::Expr::Subquery
    pub subqueries: Vec<std::sync::Arc<SubqueryAnswer>>,
    /// The subquery slots planning gave out so far.
    pub subquery_slots: std::cell::Cell<usize>,
    /// The values of the outer row's columns a correlated subquery reads, by slot (see
    /// [`Expr::Outer`]), set before each run of the subquery.
    ///
    /// [`Expr::Outer`]: crate::expr::Expr::Outer
    pub outer: Vec<Value>,
    /// The outer slots planning gave out so far.
    pub outer_slots: std::cell::Cell<usize>,
    /// The query blocks (views, WITH queries, subqueries) planning made so far.
    pub query_blocks: std::cell::Cell<usize>,
    /// Where NEXTVAL and CURRVAL come from (the session's sequences); `None` where no
    /// sequence may be read.
    pub sequences: Option<std::sync::Arc<dyn SequenceSource>>,
    /// Whether the expression being bound stands where Oracle takes a sequence number
    /// (the select list of a statement's top query, VALUES, an UPDATE's SET): set by the
    /// planner around those expressions only (ORA-02287 elsewhere).
    pub sequence_refs_allowed: std::cell::Cell<bool>,
    /// Set for a statement whose top query's select list may read sequences (a query,
    /// INSERT ... SELECT); the first query block planned takes it.
    pub sequence_top: std::cell::Cell<bool>,
    /// The row being made, for NEXTVAL's once-a-row rule ([`FunctionContext::sequence`]).
    pub sequence_row: u64,
    /// The sequence values rows of the statement took, the last row's of each sequence.
    pub sequence_values: Vec<sequence::RowSequenceValue>,
}

/// What a subquery gave, as the expressions reading it ask it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SubqueryAnswer {
    /// Not run yet.
    #[default]
    NotRun,
    /// Its one value, NULL for no row.
    Scalar(Value),
    /// More than one row where one value was asked for: an error once an expression
    /// reads it (not before: a CASE branch never taken reads nothing).
    TooManyRows,
    /// Its distinct values: whether it gave a row, whether one of them is NULL, and the
    /// kinds of the others ([`value_kind`] bits).
    Values { values: std::collections::HashSet<Value>, any: bool, has_null: bool, kinds: u8 },
    /// Its distinct rows (a multi-column IN): those without a NULL, those with one, and
    /// the kinds of each column's values ([`value_kind`] bits).
    Rows { rows: std::collections::HashSet<Vec<Value>>, with_null: Vec<Vec<Value>>, kinds: Vec<u8> },
    /// All its rows, in the order it gave them (a materialized WITH query's).
    Table(Vec<Vec<Value>>),
}

/// The kind of a value as IN tells them apart: a value of another kind than those an
/// answer holds is compared with Oracle's conversions, not looked up.
pub fn value_kind(v: &crate::types::Datum<'_>) -> u8 {
    match v {
        crate::types::Datum::Null => 0,
        crate::types::Datum::Int(_) | crate::types::Datum::Num(_) => 1,
        crate::types::Datum::Str(_) => 2,
        crate::types::Datum::Date(_) => 4,
        crate::types::Datum::Timestamp(_) => 8,
        crate::types::Datum::YearMonth(_) => 16,
        crate::types::Datum::DaySecond(_) => 32,
    }
}

impl SubqueryAnswer {
    pub fn scalar(&self) -> Result<&Value> {
        match self {
            SubqueryAnswer::Scalar(v) => Ok(v),
            SubqueryAnswer::TooManyRows => Err(crate::error::Error::InvalidValue {
                context: "subquery".into(),
                message: "ORA-01427: single-row subquery returns more than one row".into(),
            }),
            _ => Err(crate::error::Error::unsupported("a subquery's value read before it ran")),
        }
    }

    /// Whether the subquery gave a row.
    pub fn exists(&self) -> bool {
        matches!(self, SubqueryAnswer::Values { any: true, .. })
    }

    /// Whether its rows hold the row `values`: true when one equals it column by
    /// column, unknown when none differs from it in a column but some NULL leaves one
    /// open (so NOT IN is never true then, as in Oracle), false otherwise. A value of
    /// another kind than its column's (text against numbers) compares with Oracle's
    /// conversions, as `=` does; a column `blank_padded` says is a CHAR one compares texts
    /// without their trailing blanks.
    pub fn holds_row(&self, values: &[Value], blank_padded: &[bool]) -> Result<Option<bool>> {
        let SubqueryAnswer::Rows { rows, with_null, kinds } = self else { return Ok(Some(false)) };
        let padded = blank_padded.iter().any(|&p| p);
        let exact = !padded && values.iter().zip(kinds).all(|(v, &k)| !v.is_null() && k & !value_kind(v) == 0);
        if !values.iter().any(|v| v.is_null()) && rows.contains(values) {
            return Ok(Some(true));
        }
        let compare = |i: usize, v: &Value, x: &Value| -> Result<Option<std::cmp::Ordering>> {
            match (v, x) {
                (crate::types::Datum::Str(a), crate::types::Datum::Str(b)) if blank_padded.get(i) == Some(&true) => {
                    Ok(Some(a.trim_end_matches(' ').cmp(b.trim_end_matches(' '))))
                }
                _ => v.sql_cmp(x),
            }
        };
        // Looked up, the row is not among those without a NULL: only those with one can
        // leave the answer open. Otherwise every row is compared.
        let without_null = (!exact).then(|| rows.iter());
        let mut unknown = false;
        for row in without_null.into_iter().flatten().chain(with_null) {
            let mut equal = Some(true);
            for (i, (v, x)) in values.iter().zip(row).enumerate() {
                match compare(i, v, x)? {
                    Some(std::cmp::Ordering::Equal) => {}
                    Some(_) => {
                        equal = Some(false);
                        break;
                    }
                    None => equal = None,
                }
            }
            match equal {
                Some(true) => return Ok(Some(true)),
                None => unknown = true,
                Some(false) => {}
            }
        }
        Ok(if unknown { None } else { Some(false) })
    }

    /// Whether `v` compares as `holds` says with any (`all` false) or every (`all`) of its
    /// values: unknown where a NULL (`v`, or one of the values) leaves it open. Of no
    /// value, ANY is false and ALL true, whatever `v`.
    pub fn compares(&self, v: &Value, holds: impl Fn(std::cmp::Ordering) -> bool, all: bool) -> Result<Option<bool>> {
        let SubqueryAnswer::Values { values, any, has_null, .. } = self else { return Ok(Some(all)) };
        if !any {
            return Ok(Some(all));
        }
        let mut unknown = *has_null || v.is_null();
        for value in values {
            match v.sql_cmp(value)?.map(&holds) {
                Some(true) if !all => return Ok(Some(true)),
                Some(false) if all => return Ok(Some(false)),
                None => unknown = true,
                _ => {}
            }
        }
        Ok(if unknown { None } else { Some(all) })
    }

    /// Whether its values hold `v`: unknown when `v` is NULL and there are values, or
    /// when `v` is not among them and one of them is NULL (so NOT IN of a list holding a
    /// NULL is never true, as in Oracle).
    pub fn holds(&self, v: &Value, blank_padded: bool) -> Result<Option<bool>> {
        let SubqueryAnswer::Values { values, any, has_null, kinds } = self else { return Ok(Some(false)) };
        if !any {
            return Ok(Some(false));
        }
        if v.is_null() {
            return Ok(None);
        }
        if values.contains(v) {
            return Ok(Some(true));
        }
        // A CHAR value equals a text that differs from it in trailing blanks only.
        if blank_padded && let crate::types::Datum::Str(text) = v {
            let trimmed = text.trim_end_matches(' ');
            let same = |x: &Value| matches!(x, crate::types::Datum::Str(t) if t.trim_end_matches(' ') == trimmed);
            if values.iter().any(same) {
                return Ok(Some(true));
            }
        }
        // A value of another kind (text against numbers) compares with Oracle's
        // conversions, as `=` does.
        let kind = value_kind(v);
        if kinds & !kind != 0 {
            for other in values.iter().filter(|x| value_kind(x) != kind) {
                if v.sql_cmp(other)? == Some(std::cmp::Ordering::Equal) {
                    return Ok(Some(true));
                }
            }
        }
        Ok(if *has_null { None } else { Some(false) })
    }
}

/// The values of one execution a plan holds as constants: a plan kept for later
/// executions is good for another only when these are the same.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanInputs {
    /// SYSDATE was folded into the plan.
    pub sysdate: bool,
    /// SYSTIMESTAMP was folded into the plan.
    pub systimestamp: bool,
    /// Bind slots whose values size the plan (ROWNUM <= :n, FETCH FIRST :n ROWS).
    pub binds: Vec<usize>,
}

impl FunctionContext {
    /// A context for a statement started at `now` (microseconds since 1970, local time)
    /// whose random numbers derive from `seed`.
    pub fn new(now: i64, seed: u64) -> Self {
        FunctionContext { now: std::cell::OnceCell::from(now), ..Self::at_first_use(seed) }
    }

    /// A context whose time is read from the clock when first asked for, not before:
    /// most statements never ask, and the local time costs hundreds of instructions.
    pub fn at_first_use(seed: u64) -> Self {
        FunctionContext {
            now: std::cell::OnceCell::new(),
            random: RandomState::new(seed),
            binds: Vec::new(),
            bind_names: std::sync::Arc::from([]),
            taken: Default::default(),
            subqueries: Vec::new(),
            subquery_slots: Default::default(),
            outer: Vec::new(),
            outer_slots: Default::default(),
            query_blocks: Default::default(),
            sequences: None,
            sequence_refs_allowed: Default::default(),
            sequence_top: Default::default(),
            sequence_row: 0,
            sequence_values: Vec::new(),
        }
    }

    /// SYSDATE (seconds since 1970), noted as a constant of the plan being made.
    pub fn sysdate_constant(&self) -> i64 {
        self.taken.borrow_mut().sysdate = true;
        self.now_seconds()
    }

    /// SYSTIMESTAMP (microseconds since 1970), noted as a constant of the plan being made.
    pub fn systimestamp_constant(&self) -> i64 {
        self.taken.borrow_mut().systimestamp = true;
        self.now()
    }

    /// The statement's time (see the field's doc).
    pub fn now(&self) -> i64 {
        *self.now.get_or_init(crate::types::local_now_micros)
    }

    /// The statement's start to the second.
    pub fn now_seconds(&self) -> i64 {
        crate::types::datetime::timestamp_seconds(self.now())
    }

    /// The slot of bind variable `name` (as written: `:lo`, `:1`); `None` when the
    /// statement has no such bind variable.
    pub fn bind_slot(&self, name: &str) -> Option<usize> {
        let name = normalized_bind_name(name);
        self.bind_names.iter().position(|n| *n == name)
    }

    /// The value of the bind variable in `slot` (called `name` in the statement).
    /// The answer of the subquery in `slot`.
    pub fn subquery(&self, slot: usize) -> Result<&SubqueryAnswer> {
        self.subqueries.get(slot).map(|a| &**a).ok_or_else(|| Error::unsupported("a subquery read before it ran"))
    }

    /// The outer row's value in `slot`, for a correlated subquery's run.
    pub fn outer_value(&self, slot: usize, name: &str) -> Result<Value> {
        self.outer.get(slot).cloned().ok_or_else(|| Error::InvalidValue {
            context: name.to_owned(),
            message: "a correlated subquery ran without its outer row".into(),
        })
    }

    /// Sets the answer of the subquery in `slot`.
    pub fn set_subquery(&mut self, slot: usize, answer: std::sync::Arc<SubqueryAnswer>) {
        if self.subqueries.len() <= slot {
            self.subqueries.resize_with(slot + 1, Default::default);
        }
        self.subqueries[slot] = answer;
    }

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
    let rest = name.strip_prefix(':').unwrap_or(name).trim_matches('"');
    let mut normalized = String::with_capacity(rest.len() + 1);
    normalized.push(':');
    if rest.is_ascii() {
        normalized.extend(rest.chars().map(|c| c.to_ascii_uppercase()));
    } else {
        normalized.push_str(&rest.to_uppercase());
    }
    normalized
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
    Nvl2 => "NVL2";
    NullIf => "NULLIF";
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
    MonthsBetween => "MONTHS_BETWEEN";
    NextDay => "NEXT_DAY";
    Decode => "DECODE";
    ToTimestamp => "TO_TIMESTAMP";
    ToYmInterval => "TO_YMINTERVAL";
    ToDsInterval => "TO_DSINTERVAL";
    NumToYmInterval => "NUMTOYMINTERVAL";
    NumToDsInterval => "NUMTODSINTERVAL";
    // The binder's, for syntax that is not a call: EXTRACT(YEAR FROM d) is
    // EXTRACT('YEAR', d).
    Extract => "EXTRACT";
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
            .find(|f| !f.is_syntax() && f.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownObject { kind: "function", name: name.to_ascii_uppercase() })?;
        function.arity().check(function.name(), arg_count)?;
        Ok(function)
    }

    /// Whether the function stands for syntax that is not a call (EXTRACT): the binder
    /// makes it, and no statement calls it by name.
    pub fn is_syntax(&self) -> bool {
        matches!(self, ScalarFunction::Extract)
    }

    fn arity(&self) -> Arity {
        use Arity::*;
        use ScalarFunction::*;
        match self {
            Upper | Lower | Length | Trim | Abs | Floor | Ceil | Sqrt | Sign | Chr | Ascii | LastDay => Exact(1),
            ToYmInterval | ToDsInterval => Exact(1),
            Mod | Nvl | NullIf | Power | Concat | AddMonths | RandomString | MonthsBetween | NextDay => Exact(2),
            Extract | NumToYmInterval | NumToDsInterval => Exact(2),
            Ltrim | Rtrim | Round | Trunc | ToChar | ToDate | ToNumber | ToTimestamp => Between(1, 2),
            Rpad | Lpad | Substr | Replace => Between(2, 3),
            Nvl2 => Exact(3),
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
            Nvl2 => Ok(owned(if arg(args, 0).is_null() { arg(args, 2) } else { arg(args, 1) })),
            NullIf => null_if(args),
            Abs => abs(args),
            Round => round_or_trunc(args, true, name),
            Trunc => round_or_trunc(args, false, name),
            Floor => floor_or_ceil(args, true, name),
            Ceil => floor_or_ceil(args, false, name),
            Power => power(args),
            Sqrt => sqrt(args),
            Sign => sign(args),
            ToChar => to_char(args),
            ToDate => to_date(args, ctx.now_seconds()),
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
            MonthsBetween => months_between(args),
            NextDay => next_day(args),
            Decode => decode(args),
            Extract => extract(args),
            ToTimestamp => to_timestamp(args, ctx.now_seconds()),
            ToYmInterval => to_interval(args, true),
            ToDsInterval => to_interval(args, false),
            NumToYmInterval => number_to_interval(args, true),
            NumToDsInterval => number_to_interval(args, false),
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
        (Datum::Date(_), Datum::Timestamp(t)) => Datum::Date(crate::types::datetime::timestamp_seconds(*t)),
        (Datum::Timestamp(_), Datum::Timestamp(t)) => Datum::Timestamp(*t),
        (Datum::Timestamp(_), Datum::Date(d)) => {
            Datum::Timestamp(crate::types::datetime::date_micros(*d).ok_or_else(|| date_out_of_range(name))?)
        }
        (Datum::Timestamp(_), Datum::Str(s)) => {
            Datum::Timestamp(crate::types::datetime::parse_timestamp(s).map_err(|m| Error::value(name, m))?)
        }
        (Datum::YearMonth(_), Datum::YearMonth(m)) => Datum::YearMonth(*m),
        (Datum::DaySecond(_), Datum::DaySecond(us)) => Datum::DaySecond(*us),
        (model @ (Datum::Date(_) | Datum::Timestamp(_) | Datum::YearMonth(_) | Datum::DaySecond(_)), other) => {
            return Err(Error::value(name, format!("expected {}, got {}", model.type_name(), other.type_name())));
        }
        (Datum::Str(_) | Datum::Null, v) => text(v).map_or(Datum::Null, |t| Datum::string(t.into_owned())),
    })
}

#[cfg(test)]
mod tests;
