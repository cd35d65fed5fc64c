//! HASH GROUP BY folded a column at a time from one unit of a columnar scan (an IMCU,
//! or a decompressed compression unit). When every GROUP BY key is a column and every
//! aggregate is COUNT(*), COUNT(column), or SUM / AVG of `+ - *` over number columns and
//! literals ([`GroupedShape`]), a unit's kept rows are not pushed one by one but folded
//! 4,096 rows at a time ([`fold_unit`]): each row's group is found from its key columns'
//! codes (a combination of codes is one slot, whose keys are made and looked up in the
//! stage's table once per unit; a one-column whole-number key's slot finds its group by
//! the number it stands for, so a key met in an earlier unit is not made again), each
//! number column is gathered once as mantissas at one
//! scale (a dictionary of numbers decoded once per unit, [`UnitNumbers`]), each
//! aggregate's argument is computed over the whole chunk, and the values are added to
//! their groups' accumulators
//! ([`crate::exec::aggregate::AggregateStage::fold_columns`]).
//!
//! Invariant: the groups and their sums are exactly those the rows pushed one by one
//! give. Each value is the number [`crate::expr::Expr::fixed_point`] computes for its
//! row (the same [`Fixed`] operations, at a scale at least the row's). A unit whose key
//! columns are not held as codes of a small enough domain, or whose number column holds
//! something else than numbers, is left whole to the row path; a chunk where a value
//! does not fit a 64-bit mantissa at the chunk's scale is left to the row path with the
//! rest of the unit, before any of its rows is folded ([`fold_unit`] says from which row).

use crate::error::Result;
use crate::exec::aggregate::{AggregateStage, ColumnInput, SlotMap};
use crate::expr::Expr;
use crate::expr::aggregate::AggFunc;
use crate::expr::functions::ArithOp;
use crate::inmemory::bitmap::Bitmap;
use crate::inmemory::cu::CuValue;
use crate::inmemory::imcu::{ImColumn, Imcu, UnitNumbers, ValueKind};
use crate::types::{Fixed, Value};
use smallvec::SmallVec;
use std::ops::Range;

/// Slots (combinations of the key columns' codes, NULL counted as a code) a unit's rows
/// are always grouped by, whatever it keeps; past it and past the rows it keeps, a slot
/// table would cost more than it saves.
const SLOTS_ALWAYS: u64 = 1 << 16;

/// An aggregate's argument over a unit's gathered number columns.
#[derive(Debug, Clone, PartialEq)]
enum Term {
    /// The `n`th of [`GroupedShape::numbers`].
    Column(usize),
    Literal(Fixed),
    Arith(ArithOp, Box<Term>, Box<Term>),
    Negate(Box<Term>),
}

/// What one call folds, as [`GroupedShape`] reads it.
#[derive(Debug, Clone, PartialEq)]
enum CallTerm {
    /// COUNT(*).
    Rows,
    /// COUNT(column), the table column.
    NotNull(usize),
    /// SUM or AVG.
    Sum(Term),
}

/// A HASH GROUP BY a unit can fold a column at a time: its key columns, the number
/// columns its sums read, and what each call folds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GroupedShape {
    keys: Vec<usize>,
    numbers: Vec<usize>,
    calls: Vec<CallTerm>,
}

impl GroupedShape {
    /// The shape of `stage`, when it groups by columns and every call is one a unit can
    /// fold a column at a time; `None` otherwise (no GROUP BY, MIN, MAX, DISTINCT,
    /// LISTAGG, a key or argument that is another expression, a division).
    pub(crate) fn of(stage: &AggregateStage) -> Option<GroupedShape> {
        if stage.group_by().is_empty() {
            return None;
        }
        let keys = stage
            .group_by()
            .iter()
            .map(|e| if let Expr::Column(c) = e { Some(*c) } else { None })
            .collect::<Option<_>>()?;
        let mut numbers = Vec::new();
        let calls = stage
            .calls()
            .iter()
            .map(|call| match (call.func, &call.arg, call.distinct || call.listagg.is_some()) {
                (_, _, true) => None,
                (_, None, false) => Some(CallTerm::Rows),
                (AggFunc::Count, Some(Expr::Column(c)), false) => Some(CallTerm::NotNull(*c)),
                (AggFunc::Sum | AggFunc::Avg, Some(arg), false) => term(arg, &mut numbers).map(CallTerm::Sum),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(GroupedShape { keys, numbers, calls })
    }
}

/// `e` as a term over number columns (each added to `numbers` once); `None` for anything
/// [`crate::expr::Expr::fixed_point`] does not compute the same way.
fn term(e: &Expr, numbers: &mut Vec<usize>) -> Option<Term> {
    Some(match e {
        Expr::Column(c) => Term::Column(numbers.iter().position(|n| n == c).unwrap_or_else(|| {
            numbers.push(*c);
            numbers.len() - 1
        })),
        Expr::Literal(v) => Term::Literal(Fixed::of(v)?),
        Expr::Arith { op: op @ (ArithOp::Add | ArithOp::Sub | ArithOp::Mul), left, right } => {
            Term::Arith(*op, Box::new(term(left, numbers)?), Box::new(term(right, numbers)?))
        }
        Expr::Negate(inner) => Term::Negate(Box::new(term(inner, numbers)?)),
        _ => return None,
    })
}

/// Numbers of a run of rows: row `i`'s is `mantissas[i]` × 10^-`scale`, or NULL where
/// `nulls[i]` (a NULL row's mantissa is 0).
#[derive(Debug, Clone)]
struct Numbers {
    mantissas: Vec<i64>,
    scale: u8,
    nulls: Option<Vec<bool>>,
}

/// A term's value over a run: one number for every row, or a number a row (a gathered
/// column's, or one computed).
enum Values<'n> {
    Scalar(Fixed),
    Column(&'n Numbers),
    Computed(Numbers),
}

impl Values<'_> {
    fn numbers(&self) -> Option<&Numbers> {
        match self {
            Values::Column(n) => Some(n),
            Values::Computed(n) => Some(n),
            Values::Scalar(_) => None,
        }
    }

    fn at(&self, i: usize) -> Fixed {
        match self.numbers() {
            Some(n) => Fixed { mantissa: n.mantissas[i], scale: n.scale },
            None => self.scalar(),
        }
    }

    fn nulls(&self) -> Option<&[bool]> {
        self.numbers().and_then(|n| n.nulls.as_deref())
    }

    /// The scale of every value.
    fn at_scale(&self) -> u8 {
        self.numbers().map_or_else(|| self.scalar().scale, |n| n.scale)
    }

    fn scalar(&self) -> Fixed {
        match self {
            Values::Scalar(f) => *f,
            _ => unreachable!("a number a row is no scalar"),
        }
    }
}

/// `op` of two runs' values, row by row, with [`Fixed`]'s own checked operations: the
/// scale of every row's result is the same (it depends on the operands' scales alone).
/// `None` when a row's result does not fit.
fn combine(rows: usize, a: &Values<'_>, b: &Values<'_>, op: impl Fn(Fixed, Fixed) -> Option<Fixed>) -> Option<Numbers> {
    let nulls = match (a.nulls(), b.nulls()) {
        (None, None) => None,
        (Some(n), None) | (None, Some(n)) => Some(n.to_vec()),
        (Some(x), Some(y)) => Some(x.iter().zip(y).map(|(x, y)| *x || *y).collect()),
    };
    let scale = op(Fixed { mantissa: 0, scale: a.at_scale() }, Fixed { mantissa: 0, scale: b.at_scale() })?.scale;
    let mut mantissas = Vec::with_capacity(rows);
    for i in 0..rows {
        if nulls.as_ref().is_some_and(|n| n[i]) {
            mantissas.push(0);
            continue;
        }
        let r = op(a.at(i), b.at(i))?;
        debug_assert_eq!(r.scale, scale);
        mantissas.push(r.mantissa);
    }
    Some(Numbers { mantissas, scale, nulls })
}

/// `t`'s values over a run of `rows` rows whose number columns are `columns`.
fn evaluate<'n>(t: &Term, columns: &'n [Numbers], rows: usize) -> Option<Values<'n>> {
    Some(match t {
        Term::Column(n) => Values::Column(&columns[*n]),
        Term::Literal(f) => Values::Scalar(*f),
        Term::Negate(inner) => {
            let v = evaluate(inner, columns, rows)?;
            let zero = Values::Scalar(Fixed::whole(0));
            Values::Computed(combine(rows, &zero, &v, |_, x| x.checked_neg())?)
        }
        Term::Arith(op, left, right) => {
            let (a, b) = (evaluate(left, columns, rows)?, evaluate(right, columns, rows)?);
            if let (Values::Scalar(x), Values::Scalar(y)) = (&a, &b) {
                return Some(Values::Scalar(arith(*op, *x, *y)?));
            }
            Values::Computed(combine(rows, &a, &b, |x, y| arith(*op, x, y))?)
        }
    })
}

fn arith(op: ArithOp, a: Fixed, b: Fixed) -> Option<Fixed> {
    match op {
        ArithOp::Add => a.checked_add(b),
        ArithOp::Sub => a.checked_sub(b),
        ArithOp::Mul => a.checked_mul(b),
        ArithOp::Div => None,
    }
}

/// Words of a unit's selection folded at a time (4,096 rows): a chunk's vectors stay in
/// the caches, and a value that does not fit hands only the rows from its chunk on to
/// the row path.
const CHUNK_WORDS: usize = 64;

/// The NULL flags of the rows set in `keep` among its words `words`, in row order;
/// `None` when none is NULL.
fn selected_nulls(col: &ImColumn, keep: &Bitmap, words: Range<usize>) -> Option<Vec<bool>> {
    let nulls = col.unit.null_bitmap()?;
    Some(keep.iter_ones_in(words).map(|row| nulls.get(row)).collect())
}

/// Where a number column's values come from in one unit.
enum NumberSource<'u> {
    /// Whole numbers, read from each row's code.
    Ints(&'u ImColumn),
    /// A dictionary of numbers decoded once, at its largest scale.
    Dictionary { col: &'u ImColumn, mantissas: Vec<i64>, scale: u8 },
    /// Numbers held as keys, each row's decoded.
    Keys(&'u ImColumn),
}

impl<'u> NumberSource<'u> {
    /// Column `i` of `imcu`; `None` when the unit holds its values otherwise (dates,
    /// text), or its dictionary (decoded by `numbers` when worth it) holds a number that
    /// does not fit a 64-bit mantissa at the dictionary's largest scale.
    fn of(imcu: &'u Imcu, i: usize, numbers: &UnitNumbers) -> Option<NumberSource<'u>> {
        let col = imcu.columns.get(i)?.as_ref()?;
        match col.kind {
            ValueKind::Int => Some(NumberSource::Ints(col)),
            ValueKind::NumberKey => match numbers.dictionary(imcu, i) {
                Some(values) => {
                    let values = values.iter().copied().collect::<Option<Vec<_>>>()?;
                    let (mantissas, scale) = at_one_scale(&values)?;
                    Some(NumberSource::Dictionary { col, mantissas, scale })
                }
                None => Some(NumberSource::Keys(col)),
            },
            _ => None,
        }
    }

    /// The values of the rows set in `keep` among its words `words` (`rows` of them);
    /// `None` when one is not a number with a 64-bit mantissa at the run's scale.
    fn gather(&self, keep: &Bitmap, words: Range<usize>, rows: usize) -> Option<Numbers> {
        let mut mantissas = Vec::with_capacity(rows);
        let (col, scale) = match self {
            NumberSource::Ints(col) => {
                let mut keys = false;
                let unit = &col.unit;
                let gathered = unit.for_each_selected_code(keep, words.clone(), |code| match unit.code_value(code) {
                    CuValue::Int(v) => mantissas.push(v),
                    CuValue::Key(_) => keys = true,
                });
                if !gathered || keys {
                    return None;
                }
                (col, 0)
            }
            NumberSource::Dictionary { col, mantissas: dictionary, scale } => {
                col.unit.for_each_selected_code(keep, words.clone(), |code| mantissas.push(dictionary[code as usize]));
                (col, *scale)
            }
            NumberSource::Keys(col) => {
                let values = keep
                    .iter_ones_in(words.clone())
                    .map(|row| key_fixed(col.unit.value(row)))
                    .collect::<Option<Vec<_>>>()?;
                let scale;
                (mantissas, scale) = at_one_scale(&values)?;
                (col, scale)
            }
        };
        let nulls = selected_nulls(col, keep, words);
        if let Some(nulls) = &nulls {
            mantissas.iter_mut().zip(nulls).filter(|(_, null)| **null).for_each(|(m, _)| *m = 0);
        }
        Some(Numbers { mantissas, scale, nulls })
    }
}

/// A value of a number column held as keys, as [`crate::expr::Expr::fixed_point`] reads
/// it (NULL as 0: its flag says it is NULL); `None` past a 64-bit mantissa.
fn key_fixed(value: Option<CuValue<'_>>) -> Option<Fixed> {
    match value {
        Some(CuValue::Key(key)) => crate::index::key::number_key_fixed(key),
        Some(CuValue::Int(_)) => None,
        None => Some(Fixed::whole(0)),
    }
}

/// `values` as mantissas at their largest scale; `None` when one does not fit.
fn at_one_scale(values: &[Fixed]) -> Option<(Vec<i64>, u8)> {
    let scale = values.iter().map(|f| f.scale).max().unwrap_or(0);
    let mantissas = values
        .iter()
        .map(|f| f.checked_add(Fixed { mantissa: 0, scale }).map(|f| f.mantissa))
        .collect::<Option<_>>()?;
    Some((mantissas, scale))
}

/// Folds the rows of `imcu` set in `keep` into `stage`, a chunk at a time; gives the row
/// from which the rest must go through the row path: the unit's rows when every row was
/// folded, 0 when the unit cannot be folded this way, else the first row (a multiple of
/// 64) of the chunk where a value did not fit. Nothing of that chunk or later is folded.
pub(crate) fn fold_unit(imcu: &Imcu, keep: &Bitmap, shape: &GroupedShape, stage: &mut AggregateStage) -> Result<usize> {
    let column = |c: usize| imcu.columns.get(c).and_then(Option::as_ref);
    let kept = keep.count_ones() as usize;
    let mut spaces = Vec::with_capacity(shape.keys.len());
    let mut slot_count = 1u64;
    for &c in &shape.keys {
        // One code more than the unit's: NULL.
        let Some(space) = column(c).and_then(|col| col.unit.code_space()).and_then(|s| s.checked_add(1)) else {
            return Ok(0);
        };
        match slot_count.checked_mul(space).filter(|&n| n <= SLOTS_ALWAYS.max(kept as u64)) {
            Some(n) => slot_count = n,
            None => return Ok(0),
        }
        spaces.push(space);
    }
    let counted = shape.calls.iter().all(|call| !matches!(call, CallTerm::NotNull(c) if column(*c).is_none()));
    let decoded = UnitNumbers::new(imcu, kept);
    let sources = shape.numbers.iter().map(|&c| NumberSource::of(imcu, c, &decoded)).collect::<Option<Vec<_>>>();
    let Some(sources) = sources.filter(|_| counted) else { return Ok(0) };
    let mut map = SlotMap::new(slot_count as usize);
    let units = UnitGroups { imcu, keys: &shape.keys, spaces: &spaces };
    let words = keep.words().len();
    for start in (0..words).step_by(CHUNK_WORDS) {
        let chunk = start..(start + CHUNK_WORDS).min(words);
        let rows = keep.count_ones_in(chunk.clone()) as usize;
        if rows == 0 {
            continue;
        }
        let slots = units.slots(keep, chunk.clone(), rows);
        let Some(numbers) = sources.iter().map(|s| s.gather(keep, chunk.clone(), rows)).collect::<Option<Vec<_>>>()
        else {
            return Ok(start * 64);
        };
        // Each call's values: COUNT(column)'s NULL flags, a SUM's numbers (a constant's
        // repeated a row).
        let mut flags = Vec::with_capacity(shape.calls.len());
        let mut sums = Vec::with_capacity(shape.calls.len());
        for call in &shape.calls {
            flags.push(match call {
                CallTerm::NotNull(c) => selected_nulls(column(*c).expect("checked above"), keep, chunk.clone()),
                _ => None,
            });
            sums.push(match call {
                CallTerm::Sum(t) => match evaluate(t, &numbers, rows) {
                    Some(Values::Scalar(f)) => Some(Values::Computed(Numbers {
                        mantissas: vec![f.mantissa; rows],
                        scale: f.scale,
                        nulls: None,
                    })),
                    Some(v) => Some(v),
                    None => return Ok(start * 64),
                },
                _ => None,
            });
        }
        let inputs: SmallVec<[ColumnInput<'_>; 8]> = shape
            .calls
            .iter()
            .zip(flags.iter().zip(&sums))
            .map(|(call, (nulls, sum))| match (call, sum.as_ref().and_then(Values::numbers)) {
                (CallTerm::Rows, _) => ColumnInput::Rows,
                (CallTerm::NotNull(_), _) => ColumnInput::NotNull(nulls.as_deref()),
                (CallTerm::Sum(_), Some(n)) => {
                    ColumnInput::Numbers { mantissas: &n.mantissas, scale: n.scale, nulls: n.nulls.as_deref() }
                }
                (CallTerm::Sum(_), None) => unreachable!("a SUM's values are a number a row"),
            })
            .collect();
        stage.fold_columns(&slots, &mut map, |slot| units.slot_key(slot), |slot| units.slot_int(slot), &inputs)?;
    }
    Ok(imcu.rows)
}

/// How a unit's rows are grouped: its key columns and their code spaces (each column's
/// codes, and one more for NULL).
struct UnitGroups<'u> {
    imcu: &'u Imcu,
    keys: &'u [usize],
    spaces: &'u [u64],
}

impl UnitGroups<'_> {
    /// Each row's slot (its key columns' codes combined, the first the most
    /// significant), for the rows set in `keep` among its words `words`.
    fn slots(&self, keep: &Bitmap, words: Range<usize>, rows: usize) -> Vec<u32> {
        let mut slots = vec![0u32; rows];
        for (&c, &space) in self.keys.iter().zip(self.spaces) {
            let col = self.imcu.columns[c].as_ref().expect("fold_unit checked the key columns");
            let space = space as u32;
            let mut i = 0;
            col.unit.for_each_selected_code(keep, words.clone(), |code| {
                slots[i] = slots[i] * space + code as u32;
                i += 1;
            });
            if let Some(nulls) = selected_nulls(col, keep, words.clone()) {
                for (slot, _) in slots.iter_mut().zip(nulls).filter(|(_, null)| *null) {
                    // The NULL code in place of the code just added for this column.
                    *slot = *slot - *slot % space + (space - 1);
                }
            }
        }
        slots
    }

    /// The whole number a one-column key's `slot` stands for, the same in every unit of
    /// the column; `None` for NULL, for a key of several columns, or one not held as
    /// whole numbers.
    fn slot_int(&self, slot: u32) -> Option<i64> {
        let (&[c], &[space]) = (self.keys, self.spaces) else { return None };
        if u64::from(slot) + 1 >= space {
            return None;
        }
        match self.imcu.columns[c].as_ref()?.unit.code_value(u64::from(slot)) {
            CuValue::Int(v) => Some(v),
            CuValue::Key(_) => None,
        }
    }

    /// The GROUP BY keys of `slot`.
    fn slot_key(&self, slot: u32) -> Result<SmallVec<[Value; 4]>> {
        let mut codes: SmallVec<[u64; 4]> = SmallVec::new();
        let mut rest = u64::from(slot);
        for &space in self.spaces.iter().rev() {
            codes.push(rest % space);
            rest /= space;
        }
        codes.reverse();
        let mut key = SmallVec::new();
        for ((&c, &space), code) in self.keys.iter().zip(self.spaces).zip(codes) {
            let col = self.imcu.columns[c].as_ref().expect("fold_unit checked the key columns");
            key.push(col.to_datum((code + 1 < space).then(|| col.unit.code_value(code)))?);
        }
        Ok(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::TableDef;
    use crate::exec::pipeline::{self, Stage};
    use crate::exec::{CollectStage, aggregate::AggregateStage};
    use crate::expr::aggregate::AggCall;
    use crate::expr::functions::FunctionContext;
    use crate::inmemory::cu::Packing;
    use crate::inmemory::imcu::{GatherBuffers, ImcuBuilder, UnitRow};
    use crate::types::{DataType, Datum};
    use proptest::prelude::*;

    /// Columns: a small whole-number key, a text key, a NUMBER with fractions, a whole
    /// NUMBER.
    fn table() -> TableDef {
        TableDef::of_columns(&[
            (DataType::Integer, true),
            (DataType::Varchar2 { max_bytes: 8 }, true),
            (DataType::Number { precision: None, scale: None }, true),
            (DataType::Number { precision: None, scale: None }, true),
        ])
    }

    fn unit(rows: &[Vec<Value>], packing: Packing) -> Imcu {
        let table = table();
        let mut buffers = GatherBuffers::default();
        let mut builder = ImcuBuilder::new(&table, &[], 1, &mut buffers);
        for row in rows {
            builder.values(row).expect("values of the columns' types");
        }
        builder.end_block();
        builder.build(1, packing, None, &mut buffers)
    }

    fn call(func: AggFunc, arg: Option<Expr>) -> AggCall {
        AggCall { func, arg, distinct: false, text: format!("{func:?}"), listagg: None }
    }

    fn column(c: usize) -> Box<Expr> {
        Box::new(Expr::Column(c))
    }

    fn literal(text: &str) -> Box<Expr> {
        Box::new(Expr::Literal(Datum::parse_number(text).expect("a number")))
    }

    /// Every kind of call the fold takes: COUNT(*), COUNT(c), SUM and AVG of columns,
    /// of `+ - *` with literals, of a negation and of a constant; grouped by columns 0
    /// and 1, or by column 0 alone (`one_key`: a whole-number key, whose groups the
    /// fold finds by value from one unit to the next).
    fn stage(one_key: bool) -> AggregateStage {
        let calls = vec![
            call(AggFunc::CountStar, None),
            call(AggFunc::Count, Some(Expr::Column(2))),
            call(AggFunc::Sum, Some(Expr::Column(2))),
            call(AggFunc::Avg, Some(Expr::Column(3))),
            call(AggFunc::Sum, Some(Expr::Arith { op: ArithOp::Mul, left: column(2), right: column(3) })),
            call(
                AggFunc::Avg,
                Some(Expr::Arith {
                    op: ArithOp::Sub,
                    left: literal("1.5"),
                    right: Box::new(Expr::Negate(Box::new(Expr::Arith {
                        op: ArithOp::Mul,
                        left: column(2),
                        right: literal("0.25"),
                    }))),
                }),
            ),
            call(AggFunc::Sum, Some(Expr::Literal(Datum::Int(3)))),
        ];
        let group_by = if one_key { vec![Expr::Column(0)] } else { vec![Expr::Column(0), Expr::Column(1)] };
        AggregateStage::new(group_by, calls, None)
    }

    /// The stage's groups, sorted, after `fold` gave it the rows.
    fn groups(one_key: bool, fold: impl FnOnce(&mut [Stage<'_>], &mut FunctionContext)) -> Vec<Vec<Value>> {
        let mut stages = vec![Stage::Aggregate(stage(one_key)), Stage::Collect(CollectStage::new(9))];
        let mut f = FunctionContext::new(0, 1);
        fold(&mut stages, &mut f);
        pipeline::finish(&mut stages, &mut f).expect("finishes");
        let Stage::Collect(c) = &mut stages[1] else { unreachable!() };
        let mut rows = c.take_rows();
        rows.sort_by_key(|row| format!("{row:?}"));
        rows
    }

    /// Pushes the rows of `imcu` set in `keep` from `first` on, one by one.
    fn push_rows(stages: &mut [Stage<'_>], f: &mut FunctionContext, imcu: &Imcu, keep: &Bitmap, first: usize) {
        let numbers = UnitNumbers::new(imcu, keep.count_ones() as usize);
        for row in keep.iter_ones().filter(|&r| r >= first) {
            pipeline::push(stages, &UnitRow { imcu, row, numbers: &numbers }, f).expect("folds");
        }
    }

    fn number() -> impl Strategy<Value = Value> {
        prop_oneof![
            4 => (-500i64..500, 0u32..=3).prop_map(|(m, s)| Datum::from_decimal(rust_decimal::Decimal::new(m, s))),
            1 => Just(Datum::Null),
        ]
    }

    fn rows() -> impl Strategy<Value = Vec<Vec<Value>>> {
        let row = (
            prop_oneof![4 => (-3i64..5).prop_map(Datum::Int), 1 => Just(Datum::Null)],
            prop_oneof![4 => (0u8..3).prop_map(|k| Datum::string(format!("k{k}"))), 1 => Just(Datum::Null)],
            number(),
            prop_oneof![4 => (-20i64..20).prop_map(Datum::Int), 1 => Just(Datum::Null)],
        )
            .prop_map(|(a, b, c, d)| vec![a, b, c, d]);
        prop::collection::vec(row, 0..6000)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Units folded a column at a time, chunk by chunk, leave the groups their rows
        /// pushed one by one leave: the same keys (NULL keys too), counts and exact sums
        /// (decimal ones where a sum leaves the exact range), with chunks handed back to
        /// the row path where a value does not fit.
        #[test]
        fn units_folded_by_columns_group_as_their_rows_pushed_one_by_one(
            first in rows(),
            second in rows(),
            wide_at in proptest::option::of(0usize..6000),
            tiny in any::<bool>(),
            dropped in prop::collection::vec(any::<bool>(), 64),
            packing in prop_oneof![Just(Packing::ByteAligned), Just(Packing::Tight), Just(Packing::Smallest)],
            one_key in any::<bool>(),
            shift in 0i64..4,
        ) {
            // A few numbers at scale 28 in the first unit's groups (which it leaves to
            // the row path): the second unit's sums of those groups, at that scale,
            // leave the exact range, and go on as decimals.
            let (mut first, mut second) = (first, second);
            // The second unit's keys from another least value: other codes for the
            // same numbers.
            for row in &mut second {
                if let Datum::Int(k) = row[0] {
                    row[0] = Datum::Int(k + shift);
                }
            }
            if tiny {
                first.iter_mut().step_by(97).for_each(|row| row[2] = Datum::from_decimal(rust_decimal::Decimal::new(7, 28)));
            }
            // A product past 64 bits: its chunk and the rest of the unit go through the
            // row path.
            if let Some(row) = wide_at.and_then(|i| second.get_mut(i)) {
                row[3] = Datum::Int(4_000_000_000_000_000_000);
            }
            let units = [unit(&first, packing), unit(&second, packing)];
            let keeps = units.each_ref().map(|imcu| Bitmap::from_fn(imcu.rows, |r| !dropped[r % 64] || r % 3 == 0));
            let one_by_one = groups(one_key, |stages, f| {
                units.iter().zip(&keeps).for_each(|(imcu, keep)| push_rows(stages, f, imcu, keep, 0))
            });
            let by_columns = groups(one_key, |stages, f| {
                for (imcu, keep) in units.iter().zip(&keeps) {
                    let Stage::Aggregate(a) = &mut stages[0] else { unreachable!() };
                    let shape = GroupedShape::of(a).expect("a shape the fold takes");
                    let folded = fold_unit(imcu, keep, &shape, a).expect("folds");
                    push_rows(stages, f, imcu, keep, folded);
                }
            });
            prop_assert_eq!(by_columns, one_by_one);
        }
    }

    #[test]
    fn only_columns_and_sums_of_arithmetic_are_folded_by_columns() {
        let of =
            |group_by: Vec<Expr>, calls: Vec<AggCall>| GroupedShape::of(&AggregateStage::new(group_by, calls, None));
        assert!(of(vec![Expr::Column(0)], vec![call(AggFunc::Sum, Some(Expr::Column(2)))]).is_some());
        assert!(of(vec![], vec![call(AggFunc::Sum, Some(Expr::Column(2)))]).is_none(), "no GROUP BY");
        assert!(of(vec![Expr::Column(0)], vec![call(AggFunc::Max, Some(Expr::Column(2)))]).is_none(), "MAX");
        let div = Expr::Arith { op: ArithOp::Div, left: column(2), right: column(3) };
        assert!(of(vec![Expr::Column(0)], vec![call(AggFunc::Sum, Some(div))]).is_none(), "a division");
        let key = Expr::Arith { op: ArithOp::Add, left: column(0), right: literal("1") };
        assert!(of(vec![key], vec![call(AggFunc::CountStar, None)]).is_none(), "a key that is an expression");
        let mut distinct = call(AggFunc::Sum, Some(Expr::Column(2)));
        distinct.distinct = true;
        assert!(of(vec![Expr::Column(0)], vec![distinct]).is_none(), "DISTINCT");
    }
}
