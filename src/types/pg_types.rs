//! lioscope's types as PostgreSQL names them: the type OID and type modifier a column of
//! each [`DataType`] is presented with (to PostgreSQL's clients by the server, and in the
//! `pg_catalog` and `information_schema` views), the name `format_type` gives it, and
//! the PostgreSQL types those views describe.
//!
//! | lioscope                          | PostgreSQL                                   |
//! |-----------------------------------|----------------------------------------------|
//! | NUMBER(p) / NUMBER(p,0), p ≤ 18   | `bigint` (`int8`)                            |
//! | NUMBER(p,s), NUMBER, INTEGER      | `numeric(p,s)`, `numeric`                    |
//! | VARCHAR2(n)                       | `character varying(n)`                       |
//! | CHAR(n)                           | `character(n)`                               |
//! | DATE                              | `timestamp(0) without time zone` (a DATE holds a time) |
//! | TIMESTAMP(p)                      | `timestamp(p) without time zone`             |
//! | INTERVAL ...                      | `interval`                                   |
//!
//! Invariant: one mapping for everything that shows a type to a PostgreSQL client, so a
//! column's catalog type is the type its values arrive as.

use super::DataType;

/// A PostgreSQL type as a column is described with it: its OID and type modifier (-1:
/// none; for `varchar(n)` and `bpchar(n)` n + 4; for `numeric(p,s)` ((p << 16) | s) + 4;
/// for `timestamp(p)` p).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgType {
    pub oid: u32,
    pub modifier: i32,
}

pub const BOOL: u32 = 16;
pub const NAME: u32 = 19;
pub const INT8: u32 = 20;
pub const INT2: u32 = 21;
pub const INT4: u32 = 23;
pub const TEXT: u32 = 25;
pub const OID: u32 = 26;
pub const FLOAT8: u32 = 701;
pub const BPCHAR: u32 = 1042;
pub const VARCHAR: u32 = 1043;
pub const DATE: u32 = 1082;
pub const TIMESTAMP: u32 = 1114;
pub const TIMESTAMPTZ: u32 = 1184;
pub const INTERVAL: u32 = 1186;
pub const NUMERIC: u32 = 1700;

/// A PostgreSQL base type the catalog views describe.
#[derive(Debug, Clone, Copy)]
pub struct BaseType {
    pub oid: u32,
    /// `typname`.
    pub name: &'static str,
    /// What `format_type` calls it without a modifier.
    pub formatted: &'static str,
    /// Bytes of a value; -1 for variable length.
    pub len: i16,
    /// `typcategory`: B boolean, N numeric, S string, D date/time, T timespan, U user.
    pub category: char,
    /// The OID of the array of it.
    pub array: u32,
    /// Whether its values sort by a collation.
    pub collatable: bool,
}

const fn base(
    oid: u32,
    name: &'static str,
    formatted: &'static str,
    len: i16,
    category: char,
    array: u32,
    collatable: bool,
) -> BaseType {
    BaseType { oid, name, formatted, len, category, array, collatable }
}

/// The types lioscope's values and catalog views are presented as, in OID order.
pub const BASE_TYPES: &[BaseType] = &[
    base(BOOL, "bool", "boolean", 1, 'B', 1000, false),
    base(NAME, "name", "name", 64, 'S', 1003, true),
    base(INT8, "int8", "bigint", 8, 'N', 1016, false),
    base(INT2, "int2", "smallint", 2, 'N', 1005, false),
    base(INT4, "int4", "integer", 4, 'N', 1007, false),
    base(TEXT, "text", "text", -1, 'S', 1009, true),
    base(OID, "oid", "oid", 4, 'N', 1028, false),
    base(FLOAT8, "float8", "double precision", 8, 'N', 1022, false),
    base(BPCHAR, "bpchar", "character", -1, 'S', 1014, true),
    base(VARCHAR, "varchar", "character varying", -1, 'S', 1015, true),
    base(DATE, "date", "date", 4, 'D', 1182, false),
    base(TIMESTAMP, "timestamp", "timestamp without time zone", 8, 'D', 1115, false),
    base(TIMESTAMPTZ, "timestamptz", "timestamp with time zone", 8, 'D', 1185, false),
    base(INTERVAL, "interval", "interval", 16, 'T', 1187, false),
    base(NUMERIC, "numeric", "numeric", -1, 'N', 1231, false),
];

/// The base type of OID `oid`, if it is one of [`BASE_TYPES`].
pub fn base_type(oid: u32) -> Option<&'static BaseType> {
    BASE_TYPES.iter().find(|t| t.oid == oid)
}

/// The PostgreSQL type a column of type `t` is presented as.
pub fn pg_type(t: &DataType) -> PgType {
    let of = |oid, modifier| PgType { oid, modifier };
    match *t {
        DataType::Number { precision: Some(p), scale: None | Some(0) } if p <= 18 => of(INT8, -1),
        DataType::Number { precision: Some(p), scale } => {
            of(NUMERIC, ((i32::from(p) << 16) | i32::from(scale.unwrap_or(0))) + 4)
        }
        DataType::Number { precision: None, .. } | DataType::Integer => of(NUMERIC, -1),
        DataType::Varchar2 { max_bytes } => of(VARCHAR, max_bytes as i32 + 4),
        DataType::Char { len } => of(BPCHAR, len as i32 + 4),
        DataType::Date => of(TIMESTAMP, 0),
        DataType::Timestamp { precision } => of(TIMESTAMP, i32::from(precision)),
        DataType::IntervalYearMonth { .. } | DataType::IntervalDaySecond { .. } => of(INTERVAL, -1),
    }
}

/// The type as PostgreSQL's `format_type(oid, modifier)` writes it: `numeric(7,2)`,
/// `character varying(10)`, `timestamp(0) without time zone`; `???` for an OID it
/// does not know, as PostgreSQL.
pub fn format_type(oid: u32, modifier: i32) -> String {
    let Some(t) = base_type(oid) else { return "???".into() };
    match (oid, modifier) {
        (VARCHAR | BPCHAR, m) if m >= 4 => format!("{}({})", t.formatted, m - 4),
        (NUMERIC, m) if m >= 4 => format!("numeric({},{})", (m - 4) >> 16, (m - 4) & 0xffff),
        (TIMESTAMP, m) if m >= 0 => format!("timestamp({m}) without time zone"),
        (TIMESTAMPTZ, m) if m >= 0 => format!("timestamp({m}) with time zone"),
        _ => t.formatted.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lioscope_type_has_a_known_postgresql_type() {
        let cases = [
            (DataType::Number { precision: Some(4), scale: None }, "bigint"),
            (DataType::Number { precision: Some(18), scale: Some(0) }, "bigint"),
            (DataType::Number { precision: Some(19), scale: None }, "numeric(19,0)"),
            (DataType::Number { precision: Some(7), scale: Some(2) }, "numeric(7,2)"),
            (DataType::Number { precision: None, scale: None }, "numeric"),
            (DataType::Integer, "numeric"),
            (DataType::Varchar2 { max_bytes: 10 }, "character varying(10)"),
            (DataType::Char { len: 1 }, "character(1)"),
            (DataType::Date, "timestamp(0) without time zone"),
            (DataType::Timestamp { precision: 6 }, "timestamp(6) without time zone"),
            (DataType::IntervalDaySecond { day_precision: 2, second_precision: 6 }, "interval"),
            (DataType::IntervalYearMonth { year_precision: 2 }, "interval"),
        ];
        for (t, formatted) in cases {
            let p = pg_type(&t);
            assert!(base_type(p.oid).is_some(), "{t} as OID {}", p.oid);
            assert_eq!(format_type(p.oid, p.modifier), formatted, "{t}");
        }
        assert_eq!(format_type(12345, -1), "???");
        assert_eq!(format_type(VARCHAR, -1), "character varying");
    }
}
