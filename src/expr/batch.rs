//! Batch evaluation of a projection over the row generator: each output expression is
//! evaluated over a vector of `LEVEL` values at once, into one column buffer per
//! expression node, so that a load such as INSERT ... SELECT over `CONNECT BY` walks each
//! expression tree once per batch instead of once per row, and moves no `Result<Datum>`
//! between nodes.
//!
//! ```text
//!  LEVEL  [1, 2, 3, ...]                    input: one whole number per row
//!  MOD(LEVEL, 1000)          → ints  [1, 2, 3, ...]
//!  'F-' || MOD(LEVEL, 1000)  → text  "F-1F-2F-3..."  ends [3, 6, 9, ...]
//!  CASE WHEN ... THEN 'M' ELSE 'F' END → choice [1, 0, 1, ...] of ['M', 'F']
//! ```
//!
//! Only a subset of expressions compiles ([`BatchProjection::compile`]): `LEVEL` (column
//! 0 of the generator row), literals, `+ - *` and unary minus, MOD, ABS and ORA_HASH on
//! whole numbers, concatenations, LPAD and RPAD with literal length and fill, and
//! searched CASE whose conditions compare whole numbers and whose results are literals.
//! Everything it compiles is deterministic and has no effects. A projection with any
//! other expression is evaluated row by row as before.
//!
//! Invariant: for every row not marked for fallback, [`BatchProjection::datum`] gives
//! exactly what [`Expr::eval_buffered`] gives for that row. A row is marked for fallback
//! when any whole-number step of it leaves the whole numbers (an overflow, an argument
//! out of range) or a pad fails; its caller then evaluates that row the general way,
//! which gives the value or raises the error the row path always did. Batch evaluation
//! itself raises no error, so rows keep their order and the first error is the same.

use crate::expr::functions::{ArithOp, MAX_RESULT_CHARS, ScalarFunction, WholeNumberHash, pad_ascii, pad_into};
use crate::expr::{CmpOp, Expr};
use crate::types::{Datum, Value};
use std::borrow::Cow;

/// Rows evaluated together.
pub const BATCH: usize = 1024;

/// A projection compiled for batches of generator rows.
#[derive(Debug)]
pub struct BatchProjection {
    columns: Vec<Node>,
    /// Per row of the batch: true when the row must be evaluated the general way.
    fallback: Vec<bool>,
}

/// A compiled expression node and the buffer of its values for the current batch.
#[derive(Debug)]
enum Node {
    /// The generator's value (`LEVEL`), read from the input.
    Level,
    Int(i64),
    /// A non-NULL string literal.
    Str(String),
    Null,
    Arith {
        op: ArithOp,
        left: Box<Node>,
        right: Box<Node>,
        out: Vec<i64>,
    },
    Negate {
        operand: Box<Node>,
        out: Vec<i64>,
    },
    /// MOD by a positive literal below 2^32: a remainder by multiplication.
    ModConst {
        dividend: Box<Node>,
        divisor: u64,
        inverse: u64,
        out: Vec<i64>,
    },
    /// ORA_HASH with literal bucket count and seed.
    Hash {
        value: Box<Node>,
        hash: WholeNumberHash,
        out: Vec<i64>,
    },
    /// Any other function of whole numbers ([`ScalarFunction::call_whole`]).
    Whole {
        func: ScalarFunction,
        args: Vec<Node>,
        out: Vec<i64>,
    },
    /// A chain of `||`, operand by operand.
    Concat {
        parts: Vec<Node>,
        out: TextColumn,
    },
    /// LPAD or RPAD with literal length and fill.
    Pad {
        func: ScalarFunction,
        subject: Box<Node>,
        rest: Vec<Value>,
        /// The padding of a whole number to a valid length with ASCII fill, done without
        /// building arguments row by row; `None` for any other pad.
        whole: Option<WholePad>,
        scratch: String,
        out: TextColumn,
    },
    /// Searched CASE: the first branch whose comparison holds gives its literal.
    Case {
        branches: Vec<(CmpOp, Node, Node)>,
        results: Vec<Value>,
        out: Vec<u16>,
    },
}

/// LPAD or RPAD of a whole number to `n` characters (1 to the longest result) with a
/// non-empty ASCII `fill`: every row gives the number's digits padded or cut by
/// [`pad_ascii`], which is what [`pad_into`] does for these arguments.
#[derive(Debug)]
struct WholePad {
    left: bool,
    n: usize,
    fill: String,
}

impl WholePad {
    /// The fast form of LPAD or RPAD(whole number, `rest`...), when it applies.
    fn compile(func: ScalarFunction, subject: &Node, rest: &[Value]) -> Option<WholePad> {
        if subject.kind() != Kind::Whole {
            return None;
        }
        let n = match rest.first()? {
            &Datum::Int(n) => usize::try_from(n).ok().filter(|n| (1..=MAX_RESULT_CHARS).contains(n))?,
            _ => return None,
        };
        let fill = match rest.get(1) {
            None => " ".to_owned(),
            Some(Datum::Str(f)) if !f.is_empty() && f.is_ascii() => f.to_string(),
            Some(_) => return None,
        };
        Some(WholePad { left: func == ScalarFunction::Lpad, n, fill })
    }
}

/// Texts of one batch, one after the other; an empty text is NULL (`Datum::string`).
#[derive(Debug, Default)]
struct TextColumn {
    text: String,
    /// Where each row's text ends in `text`.
    ends: Vec<u32>,
}

impl TextColumn {
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    #[inline]
    fn end_row(&mut self) {
        self.ends.push(self.text.len() as u32);
    }

    #[inline]
    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }
}

/// What a node gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Whole,
    Other,
}

impl Node {
    fn kind(&self) -> Kind {
        match self {
            Node::Level
            | Node::Int(_)
            | Node::Arith { .. }
            | Node::Negate { .. }
            | Node::ModConst { .. }
            | Node::Hash { .. }
            | Node::Whole { .. } => Kind::Whole,
            _ => Kind::Other,
        }
    }

    /// Compiles `e`, or `None` when it is outside the compiled subset.
    fn compile(e: &Expr) -> Option<Node> {
        Some(match e {
            Expr::Column(0) => Node::Level,
            Expr::Literal(Datum::Int(i)) => Node::Int(*i),
            Expr::Literal(Datum::Str(s)) if !s.is_empty() => Node::Str(s.to_string()),
            Expr::Literal(Datum::Null) => Node::Null,
            Expr::Arith { op: op @ (ArithOp::Add | ArithOp::Sub | ArithOp::Mul), left, right } => Node::Arith {
                op: *op,
                left: Box::new(Node::compile_whole(left)?),
                right: Box::new(Node::compile_whole(right)?),
                out: Vec::new(),
            },
            Expr::Negate(operand) => Node::Negate { operand: Box::new(Node::compile_whole(operand)?), out: Vec::new() },
            Expr::Function { func, args } if func.has_whole_number_form() => Node::compile_function(*func, args)?,
            Expr::Function { func: func @ (ScalarFunction::Lpad | ScalarFunction::Rpad), args } => {
                func.check_arg_count(args.len()).ok()?;
                let rest = args[1..]
                    .iter()
                    .map(|a| match a {
                        Expr::Literal(v) => Some(v.clone()),
                        _ => None,
                    })
                    .collect::<Option<Vec<Value>>>()?;
                let subject = Box::new(Node::compile(&args[0])?);
                Node::Pad {
                    func: *func,
                    whole: WholePad::compile(*func, &subject, &rest),
                    subject,
                    rest,
                    scratch: String::new(),
                    out: TextColumn::default(),
                }
            }
            Expr::Concat(..) => {
                let mut parts = Vec::new();
                Node::compile_concat(e, &mut parts)?;
                Node::Concat { parts, out: TextColumn::default() }
            }
            Expr::Case { operand: None, branches, otherwise } => {
                let mut compiled = Vec::new();
                let mut results = Vec::new();
                for (when, then) in branches {
                    let Expr::Compare { op, left, right } = when else { return None };
                    compiled.push((*op, Node::compile_whole(left)?, Node::compile_whole(right)?));
                    results.push(literal(then)?);
                }
                results.push(match otherwise {
                    Some(e) => literal(e)?,
                    None => Datum::Null,
                });
                Node::Case { branches: compiled, results, out: Vec::new() }
            }
            _ => return None,
        })
    }

    /// Compiles `e` when it gives whole numbers.
    fn compile_whole(e: &Expr) -> Option<Node> {
        Node::compile(e).filter(|n| n.kind() == Kind::Whole)
    }

    fn compile_function(func: ScalarFunction, args: &[Expr]) -> Option<Node> {
        let whole = args.iter().map(Node::compile_whole).collect::<Option<Vec<Node>>>()?;
        let fits = matches!((func, whole.len()), (ScalarFunction::Mod, 2) | (ScalarFunction::Abs, 1))
            || func == ScalarFunction::OraHash && (1..=3).contains(&whole.len());
        if !fits {
            return None;
        }
        let mut args = whole.into_iter();
        Some(match (func, args.as_slice()) {
            (ScalarFunction::Mod, [_, Node::Int(d)]) if (1..=i64::from(u32::MAX)).contains(d) => {
                let divisor = *d as u64;
                Node::ModConst {
                    dividend: Box::new(args.next()?),
                    divisor,
                    inverse: (u64::MAX / divisor).wrapping_add(1),
                    out: Vec::new(),
                }
            }
            (ScalarFunction::OraHash, [_, rest @ ..]) if rest.iter().all(|a| matches!(a, Node::Int(_))) => {
                let int = |i: usize, default: i64| match rest.get(i) {
                    Some(&Node::Int(v)) => v,
                    _ => default,
                };
                let hash = WholeNumberHash::new(int(0, i64::from(u32::MAX)), int(1, 0))?;
                Node::Hash { value: Box::new(args.next()?), hash, out: Vec::new() }
            }
            _ => Node::Whole { func, args: args.collect(), out: Vec::new() },
        })
    }

    /// Flattens a chain of `||` into its operands, as `Expr::append_text` walks it.
    fn compile_concat(e: &Expr, parts: &mut Vec<Node>) -> Option<()> {
        match e {
            Expr::Concat(l, r) => {
                Node::compile_concat(l, parts)?;
                Node::compile_concat(r, parts)
            }
            e => {
                parts.push(Node::compile(e)?);
                Some(())
            }
        }
    }

    /// Evaluates the node over `input`, marking in `fallback` the rows it cannot give.
    fn eval(&mut self, input: &[i64], fallback: &mut [bool]) {
        match self {
            Node::Level | Node::Int(_) | Node::Str(_) | Node::Null => {}
            Node::Arith { op, left, right, out } => {
                left.eval(input, fallback);
                right.eval(input, fallback);
                let (l, r) = (&**left, &**right);
                let f = match op {
                    ArithOp::Add => i64::checked_add,
                    ArithOp::Sub => i64::checked_sub,
                    _ => i64::checked_mul,
                };
                fill_whole(out, input, fallback, |i| f(l.int(input, i), r.int(input, i)));
            }
            Node::Negate { operand, out } => {
                operand.eval(input, fallback);
                let o = &**operand;
                fill_whole(out, input, fallback, |i| o.int(input, i).checked_neg());
            }
            Node::ModConst { dividend, divisor, inverse, out } => {
                dividend.eval(input, fallback);
                let (d, divisor, inverse) = (&**dividend, *divisor, *inverse);
                fill_whole(out, input, fallback, |i| {
                    let a = d.int(input, i);
                    Some(match u32::try_from(a) {
                        Ok(a) => remainder_u32(a, divisor, inverse),
                        Err(_) => a % divisor as i64,
                    })
                });
            }
            Node::Hash { value, hash, out } => {
                value.eval(input, fallback);
                let (v, hash) = (&**value, *hash);
                fill_whole(out, input, fallback, |i| Some(hash.hash(v.int(input, i))));
            }
            Node::Whole { func, args, out } => {
                args.iter_mut().for_each(|a| a.eval(input, fallback));
                let (func, args) = (*func, &*args);
                fill_whole(out, input, fallback, |i| {
                    let mut values = [0; 3];
                    for (v, a) in values.iter_mut().zip(args) {
                        *v = a.int(input, i);
                    }
                    func.call_whole(&values[..args.len()])
                });
            }
            Node::Concat { parts, out } => {
                parts.iter_mut().for_each(|p| p.eval(input, fallback));
                out.clear();
                for i in 0..input.len() {
                    for p in parts.iter() {
                        p.write_text(input, i, &mut out.text);
                    }
                    out.end_row();
                }
            }
            Node::Pad { whole: Some(pad), subject, out, .. } => {
                subject.eval(input, fallback);
                out.clear();
                let mut digits = itoa::Buffer::new();
                for i in 0..input.len() {
                    pad_ascii(digits.format(subject.int(input, i)), pad.n, &pad.fill, pad.left, &mut out.text);
                    out.end_row();
                }
            }
            Node::Pad { func, subject, rest, scratch, out, whole: None } => {
                subject.eval(input, fallback);
                out.clear();
                let (left, name) = (*func == ScalarFunction::Lpad, func.name());
                let mut args: Vec<Datum<'_>> = Vec::with_capacity(1 + rest.len());
                for (i, fell_back) in fallback.iter_mut().enumerate() {
                    args.clear();
                    args.push(subject.datum(input, i));
                    args.extend(rest.iter().map(Datum::reborrow));
                    match pad_into(&args, left, name, scratch) {
                        Ok(true) => out.text.push_str(scratch),
                        Ok(false) => {}
                        Err(_) => *fell_back = true,
                    }
                    out.end_row();
                }
            }
            Node::Case { branches, results, out } => {
                for (_, l, r) in branches.iter_mut() {
                    l.eval(input, fallback);
                    r.eval(input, fallback);
                }
                let otherwise = (results.len() - 1) as u16;
                out.clear();
                out.extend((0..input.len()).map(|i| {
                    let hit = branches.iter().position(|(op, l, r)| op.holds(l.int(input, i).cmp(&r.int(input, i))));
                    hit.map_or(otherwise, |b| b as u16)
                }));
            }
        }
    }

    /// The whole number of row `i` (a node of kind [`Kind::Whole`]).
    #[inline]
    fn int(&self, input: &[i64], i: usize) -> i64 {
        match self {
            Node::Level => input[i],
            Node::Int(v) => *v,
            Node::Arith { out, .. }
            | Node::Negate { out, .. }
            | Node::ModConst { out, .. }
            | Node::Hash { out, .. }
            | Node::Whole { out, .. } => out[i],
            other => unreachable!("only whole-number nodes are read as whole numbers: {other:?}"),
        }
    }

    /// The value of row `i`, as `Expr::eval_buffered` gives it.
    #[inline]
    fn datum<'a>(&'a self, input: &[i64], i: usize) -> Datum<'a> {
        match self {
            Node::Str(s) => Datum::Str(Cow::Borrowed(s)),
            Node::Null => Datum::Null,
            Node::Concat { out, .. } | Node::Pad { out, .. } => Datum::string(out.get(i)),
            Node::Case { results, out, .. } => results[usize::from(out[i])].reborrow(),
            whole => Datum::Int(whole.int(input, i)),
        }
    }

    /// Appends the text of row `i` as `||` converts it.
    #[inline]
    fn write_text(&self, input: &[i64], i: usize, text: &mut String) {
        match self {
            Node::Str(s) => text.push_str(s),
            Node::Null => {}
            Node::Concat { out, .. } | Node::Pad { out, .. } => text.push_str(out.get(i)),
            Node::Case { results, out, .. } => results[usize::from(out[i])].write_text(text),
            whole => text.push_str(itoa::Buffer::new().format(whole.int(input, i))),
        }
    }
}

/// One row of an evaluated batch, read column by column without building values.
#[derive(Clone, Copy)]
pub struct BatchRow<'a> {
    projection: &'a BatchProjection,
    input: &'a [i64],
    row: usize,
    columns: usize,
}

/// A value of a [`BatchRow`]: what [`BatchRow::datum`] would give, unbuilt.
#[derive(Debug, Clone, Copy)]
pub enum Cell<'a> {
    Int(i64),
    /// Text; the empty text is NULL.
    Text(&'a str),
    Value(&'a Value),
}

impl<'a> BatchRow<'a> {
    /// The number of columns.
    pub fn len(&self) -> usize {
        self.columns
    }

    /// Column `c` as a cell.
    #[inline]
    pub fn cell(&self, c: usize) -> Cell<'a> {
        let (input, i) = (self.input, self.row);
        match &self.projection.columns[c] {
            Node::Str(s) => Cell::Text(s),
            Node::Null => Cell::Text(""),
            Node::Concat { out, .. } | Node::Pad { out, .. } => Cell::Text(out.get(i)),
            Node::Case { results, out, .. } => Cell::Value(&results[usize::from(out[i])]),
            whole => Cell::Int(whole.int(input, i)),
        }
    }

    /// Column `c` as a value.
    #[inline]
    pub fn datum(&self, c: usize) -> Datum<'a> {
        self.projection.columns[c].datum(self.input, self.row)
    }
}

impl Cell<'_> {
    #[cfg(test)]
    /// The cell as a value.
    #[inline]
    pub fn datum(&self) -> Datum<'_> {
        match *self {
            Cell::Int(i) => Datum::Int(i),
            Cell::Text(s) => Datum::string(s),
            Cell::Value(v) => v.reborrow(),
        }
    }
}

/// A literal CASE result.
fn literal(e: &Expr) -> Option<Value> {
    match e {
        Expr::Literal(v) => Some(v.clone()),
        _ => None,
    }
}

/// Fills `out` with one whole number per input row; a row where `value` gives `None`
/// is marked for fallback (its slot holds 0).
#[inline]
fn fill_whole(out: &mut Vec<i64>, input: &[i64], fallback: &mut [bool], value: impl Fn(usize) -> Option<i64>) {
    out.clear();
    out.extend((0..input.len()).map(|i| match value(i) {
        Some(v) => v,
        None => {
            fallback[i] = true;
            0
        }
    }));
}

/// `a % divisor` for a divisor in `1..2^32`, with `inverse` = `u64::MAX / divisor + 1`
/// (wrapping): Lemire's direct remainder, exact for every 32-bit dividend.
#[inline]
fn remainder_u32(a: u32, divisor: u64, inverse: u64) -> i64 {
    let low = inverse.wrapping_mul(u64::from(a));
    ((u128::from(low) * u128::from(divisor)) >> 64) as i64
}

impl BatchProjection {
    /// Compiles the expressions of a projection over the generator's one-column rows;
    /// `None` when any of them is outside the compiled subset.
    pub fn compile(exprs: &[Expr]) -> Option<BatchProjection> {
        let columns = exprs.iter().map(Node::compile).collect::<Option<Vec<Node>>>()?;
        Some(BatchProjection { columns, fallback: Vec::new() })
    }

    /// Evaluates every expression over `input` (at most [`BATCH`] generator values).
    pub fn eval(&mut self, input: &[i64]) {
        self.fallback.clear();
        self.fallback.resize(input.len(), false);
        for c in &mut self.columns {
            c.eval(input, &mut self.fallback);
        }
    }

    /// Whether row `i` of the last batch must be evaluated the general way.
    #[inline]
    pub fn falls_back(&self, i: usize) -> bool {
        self.fallback[i]
    }

    #[cfg(test)]
    /// The value of expression `column` for row `i` of the last batch (not a fallback
    /// row), where `input` is the batch's input.
    #[inline]
    pub fn datum<'a>(&'a self, input: &[i64], column: usize, i: usize) -> Datum<'a> {
        self.columns[column].datum(input, i)
    }

    /// Row `i` of the last batch (not a fallback row), its first `columns` expressions,
    /// where `input` is the batch's input.
    #[inline]
    pub fn row<'a>(&'a self, input: &'a [i64], i: usize, columns: usize) -> BatchRow<'a> {
        debug_assert!(!self.fallback[i] && columns <= self.columns.len());
        BatchRow { projection: self, input, row: i, columns }
    }

    /// The number of expressions.
    pub fn len(&self) -> usize {
        self.columns.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::functions::FunctionContext;
    use proptest::prelude::*;

    fn int(i: i64) -> Expr {
        Expr::Literal(Datum::Int(i))
    }

    fn text(s: &str) -> Expr {
        Expr::Literal(Datum::Str(s.to_owned().into()))
    }

    fn call(func: ScalarFunction, args: Vec<Expr>) -> Expr {
        Expr::Function { func, args }
    }

    /// The row path: `Expr::eval_buffered` on the generator row `[LEVEL]`.
    fn row_values(exprs: &[Expr], level: i64) -> Result<Vec<Value>, String> {
        let mut f = FunctionContext::new(0, 1);
        let row = [Datum::Int(level)];
        let mut buffer = String::new();
        exprs
            .iter()
            .map(|e| e.eval_buffered(row.as_slice(), &mut f, &mut buffer).map(Datum::into_owned))
            .collect::<crate::Result<Vec<Value>>>()
            .map_err(|e| e.to_string())
    }

    /// Checks that every row not marked for fallback has the row path's values, and that
    /// a row the row path fails on is marked.
    fn agrees(exprs: &[Expr], input: &[i64]) -> Result<(), TestCaseError> {
        let Some(mut batch) = BatchProjection::compile(exprs) else { return Ok(()) };
        batch.eval(input);
        for (i, &level) in input.iter().enumerate() {
            let expected = row_values(exprs, level);
            if batch.falls_back(i) {
                continue;
            }
            let got: Vec<Value> = (0..batch.len()).map(|c| batch.datum(input, c, i).into_owned()).collect();
            let row = batch.row(input, i, batch.len());
            let cells: Vec<Value> = (0..row.len()).map(|c| row.cell(c).datum().into_owned()).collect();
            prop_assert_eq!(&cells, &got);
            prop_assert_eq!(Ok(got), expected, "row {} (LEVEL {})", i, level);
        }
        Ok(())
    }

    /// The customers generator's projection.
    fn customers() -> Vec<Expr> {
        use ScalarFunction::{Lpad, Mod, OraHash};
        let level = || Expr::Column(0);
        let concat = |a: Expr, b: Expr| Expr::Concat(Box::new(a), Box::new(b));
        let case = |m: i64, then: &str, otherwise: &str| Expr::Case {
            operand: None,
            branches: vec![(
                Expr::Compare {
                    op: CmpOp::Eq,
                    left: Box::new(call(Mod, vec![level(), int(m)])),
                    right: Box::new(int(0)),
                },
                text(then),
            )],
            otherwise: Some(Box::new(text(otherwise))),
        };
        let add = |a: Expr, b: Expr| Expr::Arith { op: ArithOp::Add, left: Box::new(a), right: Box::new(b) };
        vec![
            level(),
            concat(text("Firstname-"), call(Mod, vec![level(), int(1000)])),
            concat(text("Lastname-of-the-customer-"), call(OraHash, vec![level(), int(99_999), int(1)])),
            case(2, "M", "F"),
            add(int(1920), call(Mod, vec![level(), int(80)])),
            call(Lpad, vec![call(OraHash, vec![level(), int(99_999), int(2)]), int(5), text("0")]),
            concat(text("Customer City of "), call(OraHash, vec![level(), int(619), int(3)])),
            case(10, "I", "A"),
            Expr::Arith {
                op: ArithOp::Mul,
                left: Box::new(int(1000)),
                right: Box::new(add(int(1), call(Mod, vec![level(), int(15)]))),
            },
            concat(
                concat(
                    concat(concat(text("firstname.lastname"), level()), text("@company")),
                    call(Mod, vec![level(), int(100)]),
                ),
                text(".example.com"),
            ),
        ]
    }

    #[test]
    fn the_customers_projection_compiles_and_agrees() {
        let exprs = customers();
        assert!(BatchProjection::compile(&exprs).is_some());
        let input: Vec<i64> = (1..=BATCH as i64).chain([0, -1, -999, i64::MAX, i64::MIN, 4_294_967_296]).collect();
        agrees(&exprs, &input[..BATCH]).unwrap();
        agrees(&exprs, &input[BATCH..]).unwrap();
    }

    #[test]
    fn other_columns_and_functions_do_not_compile() {
        assert!(BatchProjection::compile(&[Expr::Column(1)]).is_none());
        assert!(BatchProjection::compile(&[call(ScalarFunction::Upper, vec![text("a")])]).is_none());
        let div = Expr::Arith { op: ArithOp::Div, left: Box::new(Expr::Column(0)), right: Box::new(int(2)) };
        assert!(BatchProjection::compile(&[div]).is_none());
    }

    #[test]
    fn lemire_remainders_are_exact() {
        for divisor in [1u64, 2, 3, 7, 10, 15, 80, 1000, 99_999, u64::from(u32::MAX)] {
            let inverse = (u64::MAX / divisor).wrapping_add(1);
            for a in [0u32, 1, 2, 9, 10, 999, 1000, 65_535, 5_000_000, u32::MAX - 1, u32::MAX] {
                assert_eq!(remainder_u32(a, divisor, inverse), i64::from(a) % divisor as i64, "{a} % {divisor}");
            }
        }
    }

    fn leaf() -> impl Strategy<Value = Expr> {
        prop_oneof![
            Just(Expr::Column(0)),
            prop_oneof![any::<i64>(), -20i64..20, Just(i64::from(u32::MAX)), Just(0)].prop_map(int),
            prop_oneof![Just("x"), Just("ab"), Just("é*")].prop_map(text),
            Just(Expr::Literal(Datum::Null)),
        ]
    }

    fn expr() -> impl Strategy<Value = Expr> {
        use ScalarFunction::{Abs, Lpad, Mod, OraHash, Rpad};
        leaf().prop_recursive(4, 24, 3, |inner| {
            let op = prop_oneof![Just(ArithOp::Add), Just(ArithOp::Sub), Just(ArithOp::Mul)];
            let cmp = prop_oneof![Just(CmpOp::Eq), Just(CmpOp::Lt), Just(CmpOp::GtEq)];
            prop_oneof![
                (op, inner.clone(), inner.clone()).prop_map(|(op, l, r)| Expr::Arith {
                    op,
                    left: Box::new(l),
                    right: Box::new(r)
                }),
                inner.clone().prop_map(|e| Expr::Negate(Box::new(e))),
                (inner.clone(), prop_oneof![inner.clone(), (-5i64..2000).prop_map(int)])
                    .prop_map(|(a, b)| call(Mod, vec![a, b])),
                inner.clone().prop_map(|a| call(Abs, vec![a])),
                (inner.clone(), proptest::collection::vec(prop_oneof![(0i64..5000).prop_map(int), leaf()], 0..=2))
                    .prop_map(|(v, mut rest)| {
                        rest.insert(0, v);
                        call(OraHash, rest)
                    }),
                (inner.clone(), inner.clone()).prop_map(|(a, b)| Expr::Concat(Box::new(a), Box::new(b))),
                (any::<bool>(), inner.clone(), -3i64..12, prop_oneof![Just("0"), Just("ab"), Just("é")])
                    .prop_map(|(left, s, n, fill)| call(if left { Lpad } else { Rpad }, vec![s, int(n), text(fill)])),
                (cmp, inner.clone(), inner.clone(), leaf(), leaf()).prop_map(|(op, l, r, then, otherwise)| {
                    Expr::Case {
                        operand: None,
                        branches: vec![(Expr::Compare { op, left: Box::new(l), right: Box::new(r) }, then)],
                        otherwise: Some(Box::new(otherwise)),
                    }
                }),
            ]
        })
    }

    proptest! {
        /// The whole-number pad (digits padded without building arguments) gives what the
        /// row path gives, with or without a fill, for lengths that cut, pad or are
        /// invalid; fills it does not take (empty, NULL, not ASCII) keep the general pad.
        #[test]
        fn whole_number_pads_equal_row_evaluation(
            left in any::<bool>(),
            subject in prop_oneof![Just(Expr::Column(0)), Just(call(ScalarFunction::OraHash, vec![Expr::Column(0), int(99_999)]))],
            n in prop_oneof![-3i64..30, Just(MAX_RESULT_CHARS as i64), Just(MAX_RESULT_CHARS as i64 + 1)],
            fill in proptest::option::of(prop_oneof![
                Just(text("0")), Just(text("ab*")), Just(text("é")), Just(text("")), Just(Expr::Literal(Datum::Null)),
            ]),
            start in prop_oneof![-50i64..50, any::<i64>()],
        ) {
            let func = if left { ScalarFunction::Lpad } else { ScalarFunction::Rpad };
            let mut args = vec![subject, int(n)];
            args.extend(fill.clone());
            let exprs = [call(func, args)];
            let batch = BatchProjection::compile(&exprs).expect("a pad of a whole number compiles");
            let fast = matches!(&batch.columns[0], Node::Pad { whole: Some(_), .. });
            let ascii_fill = match &fill {
                None => true,
                Some(Expr::Literal(Datum::Str(f))) => !f.is_empty() && f.is_ascii(),
                Some(_) => false,
            };
            prop_assert_eq!(fast, ascii_fill && (1..=MAX_RESULT_CHARS as i64).contains(&n));
            let input: Vec<i64> = (0..8).map(|k| start.wrapping_add(k)).collect();
            agrees(&exprs, &input)?;
        }

        #[test]
        fn batch_evaluation_equals_row_evaluation(
            exprs in proptest::collection::vec(expr(), 1..4),
            start in prop_oneof![-50i64..50, any::<i64>(), Just(i64::MAX - 20)],
            len in 1usize..40,
        ) {
            let input: Vec<i64> = (0..len as i64).map(|k| start.wrapping_add(k)).collect();
            agrees(&exprs, &input)?;
        }
    }
}
