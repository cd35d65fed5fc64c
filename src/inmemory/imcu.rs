//! An In-Memory Compression Unit: the rows of a run of a table's blocks, as of one SCN,
//! stored column by column in [`ColumnUnit`]s, and how SQL values go in and come out.
//!
//! ```text
//!  Imcu { population SCN, rows, block_rows: [0, 51, 102, …, rows] }
//!   ├ column 0  ColumnUnit (FOR 23-bit)        ValueKind::Int
//!   ├ column 1  ColumnUnit (DICT 1000 × 10-bit) ValueKind::Text
//!   ├ column 2  None (NO INMEMORY)
//!   └ …
//! ```
//!
//! Rows are in scan order: the live rows of the unit's first block by slot, then the
//! second block's, and so on; `block_rows[b]..block_rows[b + 1]` are block `b`'s rows.
//! A value goes into a column unit as a whole number (INTEGER and NUMBER columns whose
//! values in the unit are all whole, DATE as seconds) or as bytes that sort as SQL sorts
//! the values (VARCHAR2 and CHAR as their bytes; a NUMBER column holding fractions as
//! the index key encoding of its values, see [`crate::index::key`]). Population hands
//! the builder each row's stored payloads: strings go in as their bytes (checked for
//! UTF-8 one column at a time before the unit is built), small whole numbers are read
//! straight from the payload, anything else is decoded as a scan decodes it. The
//! builder gathers into buffers it takes from, and gives back to, a worker's
//! [`GatherBuffers`], so that unit after unit fills memory already touched; a buffer in
//! that pool is always empty.
//!
//! Values come out one column at a time ([`ImColumn::datum_ref`]) or as a row read in
//! place ([`UnitRow`]): a scan hands on a kept row without copying it, and a number
//! column held as keys is read, as a fixed-point number or as a value, from its
//! dictionary decoded once per unit ([`UnitNumbers`]).

use super::area::InMemoryArea;
use super::cu::{ColumnInput, ColumnUnit, CuValue, KeyColumnBuilder, Packing};
use crate::access::RowAccess;
use crate::catalog::{MemCompress, TableDef};
use crate::error::Result;
use crate::types::encoding::{PayloadKind, read_payload, read_small_int};
use crate::types::{DataType, Datum, Fixed, Value};
use std::cell::OnceCell;

/// How a column's values are held in its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Whole numbers.
    Int,
    /// DATE as seconds since 1970.
    Date,
    /// TIMESTAMP as microseconds since 1970.
    Timestamp,
    /// INTERVAL YEAR TO MONTH as months.
    YearMonth,
    /// INTERVAL DAY TO SECOND as microseconds.
    DaySecond,
    /// VARCHAR2 or CHAR as their bytes.
    Text,
    /// NUMBER values as index keys (order-preserving bytes).
    NumberKey,
}

/// One column of an IMCU.
#[derive(Debug)]
pub struct ImColumn {
    pub unit: ColumnUnit,
    pub kind: ValueKind,
    pub data_type: DataType,
}

impl ImColumn {
    /// The value of row `row`.
    #[cfg(test)]
    pub fn datum(&self, row: usize) -> Result<Value> {
        self.datum_ref(row).map(Datum::into_owned)
    }

    /// The value of row `row`, a string borrowed from the unit.
    pub fn datum_ref(&self, row: usize) -> Result<Datum<'_>> {
        self.to_datum_ref(self.unit.value(row))
    }

    /// A value of the unit (`None` for NULL) as SQL sees it.
    pub fn to_datum(&self, value: Option<CuValue<'_>>) -> Result<Value> {
        self.to_datum_ref(value).map(Datum::into_owned)
    }

    /// [`ImColumn::to_datum`], a string borrowed from `value`.
    fn to_datum_ref<'v>(&self, value: Option<CuValue<'v>>) -> Result<Datum<'v>> {
        Ok(match (self.kind, value) {
            (_, None) => Datum::Null,
            (ValueKind::Int, Some(CuValue::Int(v))) => Datum::Int(v),
            (ValueKind::Date, Some(CuValue::Int(v))) => Datum::Date(v),
            (ValueKind::Timestamp, Some(CuValue::Int(v))) => Datum::Timestamp(v),
            (ValueKind::YearMonth, Some(CuValue::Int(v))) => Datum::YearMonth(v),
            (ValueKind::DaySecond, Some(CuValue::Int(v))) => Datum::DaySecond(v),
            (ValueKind::Text, Some(CuValue::Key(bytes))) => Datum::Str(super::cu::key_text(bytes)),
            (ValueKind::NumberKey, Some(CuValue::Key(key))) => {
                let mut out = Datum::Null;
                crate::index::key::decode_key(key, &[self.data_type], |_, v| out = v)?;
                out
            }
            (kind, Some(_)) => unreachable!("a {kind:?} column unit holds values of its kind"),
        })
    }
}

/// Row `row` of a unit read in place, as expressions see a row: a column is decoded
/// when an expression asks for it (a string borrowed from the unit), and a number is
/// read as a whole or fixed-point number without becoming a value. A column the unit
/// leaves out (NO INMEMORY) reads as NULL: a unit scan asks only for the columns it holds.
pub struct UnitRow<'u> {
    pub imcu: &'u Imcu,
    pub row: usize,
    /// The unit's dictionaries of numbers, decoded as rows ask for them.
    pub numbers: &'u UnitNumbers,
}

impl UnitRow<'_> {
    #[inline]
    fn column_unit(&self, i: usize) -> Option<&ImColumn> {
        self.imcu.columns.get(i)?.as_ref()
    }
}

impl UnitRow<'_> {
    /// The row's number in column `i` (held as keys) from the dictionary the scan
    /// decoded: `None` when the column has none decoded; inside, `None` for NULL or a
    /// number past 64 bits.
    #[inline]
    fn decoded_number(&self, col: &ImColumn, i: usize) -> Option<Option<Fixed>> {
        if col.kind != ValueKind::NumberKey {
            return None;
        }
        let values = self.numbers.dictionary(self.imcu, i)?;
        Some(col.unit.code(self.row).and_then(|code| *values.get(code as usize)?))
    }
}

impl RowAccess for UnitRow<'_> {
    #[inline]
    fn column(&self, i: usize) -> Result<Datum<'_>> {
        let Some(col) = self.column_unit(i) else { return Ok(Datum::Null) };
        match self.decoded_number(col, i) {
            Some(Some(number)) => Ok(number.into_datum()),
            _ => col.datum_ref(self.row),
        }
    }

    #[inline]
    fn is_null(&self, i: usize) -> bool {
        self.column_unit(i).is_none_or(|col| col.unit.is_null(self.row))
    }

    #[inline]
    fn small_int(&self, i: usize) -> Option<i64> {
        let col = self.column_unit(i)?;
        match (col.kind, col.unit.value(self.row)?) {
            (ValueKind::Int, CuValue::Int(v)) => Some(v),
            _ => None,
        }
    }

    #[inline]
    fn small_fixed(&self, i: usize) -> Option<Fixed> {
        let col = self.column_unit(i)?;
        match col.kind {
            ValueKind::Int => match col.unit.value(self.row)? {
                CuValue::Int(v) => Some(Fixed::whole(v)),
                CuValue::Key(_) => None,
            },
            ValueKind::NumberKey => match self.decoded_number(col, i) {
                Some(number) => number,
                None => match col.unit.value(self.row)? {
                    CuValue::Key(key) => crate::index::key::number_key_fixed(key),
                    CuValue::Int(_) => None,
                },
            },
            _ => None,
        }
    }
}

/// The numbers of a unit's dictionaries of number keys as fixed-point numbers, each
/// dictionary decoded once, when a row first asks for a number of its column, and only
/// when the scan keeps at least half as many rows as the dictionary has keys (else each
/// row's key is decoded as it is asked for).
pub struct UnitNumbers {
    rows_kept: usize,
    /// One per table column; `None` inside when the column's values are not worth
    /// decoding ahead or have no dictionary.
    columns: Vec<OnceCell<Option<Vec<Option<Fixed>>>>>,
}

impl UnitNumbers {
    pub fn new(imcu: &Imcu, rows_kept: usize) -> UnitNumbers {
        UnitNumbers { rows_kept, columns: imcu.columns.iter().map(|_| OnceCell::new()).collect() }
    }

    /// Column `i`'s dictionary, decoded: a code's number, `None` for one past 64 bits;
    /// `None` when the column has no dictionary of numbers or it is not worth decoding.
    #[inline]
    pub fn dictionary(&self, imcu: &Imcu, i: usize) -> Option<&[Option<Fixed>]> {
        self.columns
            .get(i)?
            .get_or_init(|| {
                let keys = imcu.columns[i].as_ref()?.unit.dictionary_keys()?;
                (keys.len() <= 2 * self.rows_kept).then(|| keys.map(crate::index::key::number_key_fixed).collect())
            })
            .as_deref()
    }
}

/// An In-Memory Compression Unit.
#[derive(Debug, Default)]
pub struct Imcu {
    /// The SCN its rows are as of.
    pub population_scn: u64,
    pub rows: usize,
    /// Where each block's rows start, one entry per block and one past the end.
    pub block_rows: Vec<u32>,
    /// One entry per table column; `None` for a column left out (NO INMEMORY).
    pub columns: Vec<Option<ImColumn>>,
    /// Memory the unit takes.
    pub bytes: usize,
}

/// How hard `compression` packs.
pub fn packing(compression: MemCompress) -> Packing {
    match compression {
        MemCompress::Dml | MemCompress::QueryLow => Packing::ByteAligned,
        MemCompress::QueryHigh => Packing::Tight,
        MemCompress::CapacityLow | MemCompress::CapacityHigh => Packing::Smallest,
    }
}

/// The values of one column gathered during population.
#[derive(Debug)]
enum Gathered {
    Ints(Vec<Option<i64>>),
    /// Keys, their dictionary collected as they arrive.
    Keys(KeyColumnBuilder),
}

/// The gathering buffers a population worker keeps from one unit to the next: a unit's
/// buffers hold about as many bytes as its rows, and buffers already filled once are
/// filled again without the page faults (and, on a virtual machine, the host's work)
/// that fresh memory costs every 4 KiB. Taken by [`ImcuBuilder::new`], given back by
/// [`ImcuBuilder::build`]; dropping it frees them.
#[derive(Debug, Default)]
pub struct GatherBuffers {
    ints: Vec<Vec<Option<i64>>>,
    keys: Vec<KeyColumnBuilder>,
}

impl GatherBuffers {
    /// Whether it holds no buffers.
    pub fn is_empty(&self) -> bool {
        self.ints.is_empty() && self.keys.is_empty()
    }

    fn ints(&mut self) -> Vec<Option<i64>> {
        self.ints.pop().unwrap_or_default()
    }

    fn keys(&mut self) -> KeyColumnBuilder {
        self.keys.pop().unwrap_or_default()
    }

    fn give_back(&mut self, gathered: Gathered) {
        match gathered {
            Gathered::Ints(mut values) => {
                values.clear();
                self.ints.push(values);
            }
            // `finish` left it empty.
            Gathered::Keys(keys) => self.keys.push(keys),
        }
    }
}

/// Gathers a table's column values row by row, then builds the IMCU.
#[derive(Debug)]
pub struct ImcuBuilder {
    columns: Vec<Option<(ValueKind, DataType, Gathered)>>,
    block_rows: Vec<u32>,
    rows: usize,
    key: Vec<u8>,
    /// Blocks the unit covers, to size the buffers once the first block's rows are in.
    blocks: usize,
}

impl ImcuBuilder {
    /// A builder for the columns of `table` not in `excluded`, for a unit of `blocks`
    /// blocks, gathering into buffers taken from `buffers`.
    pub fn new(table: &TableDef, excluded: &[usize], blocks: usize, buffers: &mut GatherBuffers) -> ImcuBuilder {
        let columns = table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                (!excluded.contains(&i)).then(|| {
                    let kind = match c.data_type {
                        DataType::Integer | DataType::Number { .. } => ValueKind::Int,
                        DataType::Date => ValueKind::Date,
                        DataType::Timestamp { .. } => ValueKind::Timestamp,
                        DataType::IntervalYearMonth { .. } => ValueKind::YearMonth,
                        DataType::IntervalDaySecond { .. } => ValueKind::DaySecond,
                        DataType::Varchar2 { .. } | DataType::Char { .. } => ValueKind::Text,
                    };
                    let gathered = match kind {
                        ValueKind::Int
                        | ValueKind::Date
                        | ValueKind::Timestamp
                        | ValueKind::YearMonth
                        | ValueKind::DaySecond => Gathered::Ints(buffers.ints()),
                        _ => Gathered::Keys(buffers.keys()),
                    };
                    (kind, c.data_type, gathered)
                })
            })
            .collect();
        let mut block_rows = Vec::with_capacity(blocks + 1);
        block_rows.push(0);
        ImcuBuilder { columns, block_rows, rows: 0, key: Vec::new(), blocks }
    }

    /// Which columns the builder reads (the rest need not be decoded).
    pub fn reads(&self) -> Vec<bool> {
        self.columns.iter().map(Option::is_some).collect()
    }

    /// Adds one row from its stored form: `payload(i)` gives column i's payload bytes as
    /// the row format stores them ([`crate::types::encoding`]), `None` for NULL. Strings
    /// are taken as their bytes and small whole numbers read directly; anything else is
    /// decoded as a scan decodes it. A payload that does not decode is an error
    /// naming the column (`rdba` names the block).
    pub fn row<'r>(&mut self, rdba: u32, mut payload: impl FnMut(usize) -> Option<&'r [u8]>) -> Result<()> {
        for (i, slot) in self.columns.iter_mut().enumerate() {
            let Some((kind, data_type, gathered)) = slot else { continue };
            let Some(bytes) = payload(i) else {
                push_value(kind, *data_type, gathered, &Datum::Null, &mut self.key)?;
                continue;
            };
            match (&mut *gathered, *kind) {
                // Checked for UTF-8 all at once before the unit is built (see
                // `ImcuBuilder::invalid_text`).
                (Gathered::Keys(keys), ValueKind::Text) => keys.push(Some(bytes)),
                (Gathered::Ints(values), ValueKind::Int) if let Some(v) = read_small_int(bytes) => values.push(Some(v)),
                _ => {
                    let value = read_payload(PayloadKind::from(*data_type), bytes)
                        .map_err(|reason| crate::access::row_view::column_corrupt(rdba, i, reason))?;
                    push_value(kind, *data_type, gathered, &value, &mut self.key)?;
                }
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Adds one row from its values, one a table column (a direct-path load's rows, which
    /// come from a query rather than from blocks). A value of the wrong type for its
    /// column is an error naming it.
    pub fn values(&mut self, values: &[Datum<'_>]) -> Result<()> {
        for (slot, value) in self.columns.iter_mut().zip(values) {
            if let Some((kind, data_type, gathered)) = slot {
                push_value(kind, *data_type, gathered, value, &mut self.key)?;
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Ends the rows of one block. After the first block that holds rows, every column's
    /// buffers are sized for the whole unit at that block's density (with a tenth more),
    /// so that gathering does not copy them over and over as they grow.
    pub fn end_block(&mut self) {
        self.block_rows.push(self.rows as u32);
        if self.rows > 0 && self.block_rows[self.block_rows.len() - 2] == 0 {
            let blocks_left = self.blocks.saturating_sub(self.block_rows.len() - 1);
            let scale = |n: usize| n * blocks_left * 11 / 10;
            let rows = scale(self.rows);
            for (_, _, gathered) in self.columns.iter_mut().flatten() {
                match gathered {
                    Gathered::Ints(values) => values.reserve(rows),
                    Gathered::Keys(keys) => keys.reserve(rows, scale(keys.key_bytes())),
                }
            }
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The first string that is not valid UTF-8, as (block index in the unit, column):
    /// a scan of the block would report it corrupt, so population must too. Each string
    /// column is checked in one pass over its buffer.
    pub fn invalid_text(&self) -> Option<(usize, usize)> {
        self.columns.iter().enumerate().find_map(|(i, column)| match column {
            Some((ValueKind::Text, _, Gathered::Keys(keys))) => keys.first_invalid_utf8().map(|row| {
                let block = self.block_rows.partition_point(|&start| start as usize <= row) - 1;
                (block, i)
            }),
            _ => None,
        })
    }

    /// Encodes the gathered columns into an IMCU as of `population_scn`, its large arrays
    /// in `area` where it has room, giving the gathering buffers back to `buffers`.
    pub fn build(
        self,
        population_scn: u64,
        packing: Packing,
        area: Option<&InMemoryArea>,
        buffers: &mut GatherBuffers,
    ) -> Imcu {
        let rows = self.rows;
        let columns: Vec<Option<ImColumn>> = self
            .columns
            .into_iter()
            .map(|c| {
                c.map(|(kind, data_type, mut gathered)| {
                    let unit = match &mut gathered {
                        Gathered::Ints(v) => ColumnUnit::build(ColumnInput::Ints(v), packing, area),
                        Gathered::Keys(keys) => keys.finish(packing, area),
                    };
                    buffers.give_back(gathered);
                    ImColumn { unit, kind, data_type }
                })
            })
            .collect();
        let bytes = columns.iter().flatten().map(|c| c.unit.bytes()).sum::<usize>()
            + self.block_rows.len() * std::mem::size_of::<u32>();
        Imcu { population_scn, rows, block_rows: self.block_rows, columns, bytes }
    }
}

/// Appends `value` to a column's gathered values; a NUMBER column meeting its first
/// value that is not whole switches to keys.
fn push_value(
    kind: &mut ValueKind,
    data_type: DataType,
    gathered: &mut Gathered,
    value: &Datum<'_>,
    key: &mut Vec<u8>,
) -> Result<()> {
    match (&mut *gathered, value) {
        (_, Datum::Null) => match gathered {
            Gathered::Ints(v) => v.push(None),
            Gathered::Keys(keys) => keys.push(None),
        },
        (Gathered::Ints(v), Datum::Int(i)) if *kind == ValueKind::Int => v.push(Some(*i)),
        (Gathered::Ints(v), Datum::Date(d)) if *kind == ValueKind::Date => v.push(Some(*d)),
        (Gathered::Ints(v), Datum::Timestamp(x)) if *kind == ValueKind::Timestamp => v.push(Some(*x)),
        (Gathered::Ints(v), Datum::YearMonth(x)) if *kind == ValueKind::YearMonth => v.push(Some(*x)),
        (Gathered::Ints(v), Datum::DaySecond(x)) if *kind == ValueKind::DaySecond => v.push(Some(*x)),
        (Gathered::Ints(v), _) if *kind == ValueKind::Int => {
            // The first fraction: the whole numbers so far become keys too.
            let mut keys = KeyColumnBuilder::new();
            keys.reserve(v.capacity(), 0);
            for i in v.iter() {
                match i {
                    Some(i) => {
                        key.clear();
                        crate::index::key::encode_value(&Datum::Int(*i), data_type, key)?;
                        keys.push(Some(key));
                    }
                    None => keys.push(None),
                }
            }
            *gathered = Gathered::Keys(keys);
            *kind = ValueKind::NumberKey;
            return push_value(kind, data_type, gathered, value, key);
        }
        (Gathered::Keys(keys), v) => match kind {
            ValueKind::Text => match v {
                Datum::Str(s) => keys.push(Some(s.as_bytes())),
                other => keys.push(Some(other.to_string().as_bytes())),
            },
            _ => {
                key.clear();
                crate::index::key::encode_value(v, data_type, key)?;
                keys.push(Some(key));
            }
        },
        (Gathered::Ints(_), other) => {
            return Err(crate::error::Error::value(
                "in-memory population",
                format!("a {} value in a {data_type} column", other.type_name()),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::encoding::{payload_len, put_payload};

    fn table() -> TableDef {
        TableDef::of_columns(&[
            (DataType::Integer, true),
            (DataType::Varchar2 { max_bytes: 40 }, true),
            (DataType::Number { precision: None, scale: None }, true),
            (DataType::Date, true),
        ])
    }

    /// Unit `u`'s rows: each unit differs in row count, values, NULLs, and whether the
    /// NUMBER column meets a fraction (which turns its whole numbers into keys).
    fn unit_rows(u: u64) -> Vec<Vec<Value>> {
        let rows = [900, 40, 1500, 0, 7][u as usize];
        (0..rows)
            .map(|r: u64| {
                let number = if u == 2 && r == 700 {
                    Datum::parse_number("3.25").unwrap()
                } else {
                    Datum::Int((r * (u + 1)) as i64 - 50)
                };
                vec![
                    if r % 11 == 3 { Datum::Null } else { Datum::Int((r % (7 + u)) as i64) },
                    if r.is_multiple_of(5) {
                        Datum::Null
                    } else {
                        Datum::Str(format!("k{}-{}", u, r % (3 + 40 * u)).into())
                    },
                    number,
                    Datum::Date(86_400 * (r / 10) as i64),
                ]
            })
            .collect()
    }

    fn build(u: u64, buffers: &mut GatherBuffers) -> Imcu {
        let table = table();
        let rows = unit_rows(u);
        let mut builder = ImcuBuilder::new(&table, &[], 3, buffers);
        let payloads: Vec<Vec<Option<Vec<u8>>>> = rows
            .iter()
            .map(|row| {
                row.iter()
                    .map(|v| {
                        (!matches!(v, Datum::Null)).then(|| {
                            let mut bytes = vec![0; payload_len(v)];
                            put_payload(v, &mut bytes);
                            bytes
                        })
                    })
                    .collect()
            })
            .collect();
        for (r, row) in payloads.iter().enumerate() {
            builder.row(7, |i| row[i].as_deref()).unwrap();
            if r % 300 == 299 {
                builder.end_block();
            }
        }
        builder.end_block();
        builder.build(1, Packing::Tight, None, buffers)
    }

    fn described(imcu: &Imcu) -> Vec<String> {
        let mut out = vec![format!("{} rows, {} bytes, blocks {:?}", imcu.rows, imcu.bytes, imcu.block_rows)];
        for column in imcu.columns.iter().flatten() {
            out.push(format!("{:?} {:?} {}", column.kind, column.unit.encoding(), column.unit.bytes()));
            out.extend((0..imcu.rows).map(|row| format!("{:?}", column.datum(row).unwrap())));
        }
        out
    }

    #[test]
    fn reused_buffers_build_what_fresh_ones_build() {
        let mut kept = GatherBuffers::default();
        for u in 0..5 {
            let fresh = build(u, &mut GatherBuffers::default());
            let reused = build(u, &mut kept);
            assert_eq!(described(&reused), described(&fresh), "unit {u}");
            assert_eq!(reused.rows, unit_rows(u).len());
            assert!(!kept.is_empty(), "the buffers come back after unit {u}");
        }
        // A unit's values come out as they went in.
        let unit = build(2, &mut kept);
        let column = unit.columns[2].as_ref().unwrap();
        assert_eq!(column.kind, ValueKind::NumberKey);
        assert_eq!(column.datum(700).unwrap(), Datum::parse_number("3.25").unwrap());
        assert_eq!(column.datum(701).unwrap(), Datum::Int(3 * 701 - 50));
        assert_eq!(unit.columns[1].as_ref().unwrap().datum(0).unwrap(), Datum::Null);
    }
}
