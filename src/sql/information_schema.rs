//! The SQL standard's `information_schema` over lioscope's dictionary, as PostgreSQL
//! spells it (what generic database browsers and drivers read): `tables`, `columns`,
//! `views`, `schemata`, `table_constraints` and `key_column_usage`. Names are shown as
//! `pg_catalog` shows them (`EMP` as `emp`, in schema `public`), types as PostgreSQL
//! names them (`character varying`, `numeric`, `bigint`, ...).
//!
//! Invariant: as the standard asks, a user sees only the tables and views it may use:
//! those it owns or holds a privilege on, or all of them with SELECT ANY TABLE.

use super::fixed_rows::{Rows, cols, int, text};
use super::pg_catalog::pg_name;
use crate::catalog::{ConstraintKind, ObjectPrivilege, SystemPrivilege, TableDef};
use crate::instance::Session;
use crate::types::pg_types::{self, base_type};
use crate::types::{DataType, Datum, Value};

/// The rows of view `name` (`INFORMATION_SCHEMA.TABLES`), if it is one of these.
pub(super) fn view(name: &str, session: &Session) -> Option<Rows> {
    Some(match name.strip_prefix("INFORMATION_SCHEMA.")? {
        "TABLES" => tables(session),
        "COLUMNS" => columns(session),
        "VIEWS" => views(session),
        "SCHEMATA" => schemata(session),
        "TABLE_CONSTRAINTS" => table_constraints(session),
        "KEY_COLUMN_USAGE" => key_column_usage(session),
        _ => return None,
    })
}

/// Whether the session's user may use table or view `name`.
fn usable(session: &Session, name: &str) -> bool {
    let user = session.user();
    ObjectPrivilege::ALL
        .into_iter()
        .any(|p| session.db.catalog.holds(&user, name, p, Some(SystemPrivilege::SelectAnyTable)))
}

/// The catalog (database) name: the database's directory's.
fn catalog_name(session: &Session) -> Value {
    text(super::pg_catalog::database_name(session))
}

fn yes_no(on: bool) -> Value {
    text(if on { "YES" } else { "NO" })
}

fn usable_tables(session: &Session) -> Vec<std::sync::Arc<TableDef>> {
    session.db.catalog.tables().into_iter().filter(|t| usable(session, &t.name)).collect()
}

fn tables(session: &Session) -> Rows {
    let catalog = catalog_name(session);
    let row = |name: &str, kind: &str| {
        vec![
            catalog.clone(),
            text("public"),
            text(pg_name(name)),
            text(kind),
            Datum::Null,
            Datum::Null,
            Datum::Null,
            Datum::Null,
            Datum::Null,
            yes_no(kind == "BASE TABLE"),
            text("NO"),
            Datum::Null,
        ]
    };
    let mut rows: Vec<Vec<Value>> = usable_tables(session).iter().map(|t| row(&t.name, "BASE TABLE")).collect();
    let views = session.db.catalog.views();
    rows.extend(views.iter().filter(|v| usable(session, &v.name)).map(|v| row(&v.name, "VIEW")));
    (
        cols(&[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "TABLE_TYPE",
            "SELF_REFERENCING_COLUMN_NAME",
            "REFERENCE_GENERATION",
            "USER_DEFINED_TYPE_CATALOG",
            "USER_DEFINED_TYPE_SCHEMA",
            "USER_DEFINED_TYPE_NAME",
            "IS_INSERTABLE_INTO",
            "IS_TYPED",
            "COMMIT_ACTION",
        ]),
        rows,
    )
}

/// The standard's description of a column of type `t`: data_type, character maximum
/// length, numeric precision, radix and scale, datetime precision, udt_name.
fn described(t: &DataType) -> (String, Value, Value, Value, Value, Value, String) {
    let pg = pg_types::pg_type(t);
    let udt = base_type(pg.oid).map_or("text", |b| b.name).to_string();
    let data_type = match pg.oid {
        pg_types::TIMESTAMP => "timestamp without time zone".to_string(),
        oid => base_type(oid).map_or("text", |b| b.formatted).to_string(),
    };
    let n = |v: i64| Datum::Int(v);
    let null = || Datum::Null;
    match *t {
        DataType::Varchar2 { max_bytes } => (data_type, n(max_bytes.into()), null(), null(), null(), null(), udt),
        DataType::Char { len } => (data_type, n(len.into()), null(), null(), null(), null(), udt),
        DataType::Number { precision: Some(p), scale } if pg.oid == pg_types::NUMERIC => {
            (data_type, null(), n(p.into()), n(10), n(scale.unwrap_or(0).into()), null(), udt)
        }
        DataType::Number { .. } | DataType::Integer if pg.oid == pg_types::INT8 => {
            (data_type, null(), n(64), n(2), n(0), null(), udt)
        }
        DataType::Number { .. } | DataType::Integer => (data_type, null(), null(), n(10), null(), null(), udt),
        DataType::Date => (data_type, null(), null(), null(), null(), n(0), udt),
        DataType::Timestamp { precision } => (data_type, null(), null(), null(), null(), n(precision.into()), udt),
        DataType::IntervalYearMonth { .. } => (data_type, null(), null(), null(), null(), n(0), udt),
        DataType::IntervalDaySecond { second_precision, .. } => {
            (data_type, null(), null(), null(), null(), n(second_precision.into()), udt)
        }
    }
}

fn columns(session: &Session) -> Rows {
    let catalog = catalog_name(session);
    let mut rows = Vec::new();
    for t in usable_tables(session) {
        for (i, c) in t.columns.iter().enumerate() {
            let (data_type, length, precision, radix, scale, datetime, udt) = described(&c.data_type);
            let identity = t.identity.as_ref().filter(|id| id.column == i);
            rows.push(vec![
                catalog.clone(),
                text("public"),
                text(pg_name(&t.name)),
                text(pg_name(&c.name)),
                int(i as u64 + 1),
                Datum::Null,
                yes_no(c.nullable),
                text(data_type),
                length.clone(),
                length,
                precision,
                radix,
                scale,
                datetime,
                catalog.clone(),
                text("pg_catalog"),
                text(udt),
                yes_no(identity.is_some()),
                identity.map_or(Datum::Null, |id| text(id.generation())),
                text("NEVER"),
                text("YES"),
            ]);
        }
    }
    for v in session.db.catalog.views().into_iter().filter(|v| usable(session, &v.name)) {
        for (i, c) in v.columns.iter().enumerate() {
            rows.push(vec![
                catalog.clone(),
                text("public"),
                text(pg_name(&v.name)),
                text(pg_name(c)),
                int(i as u64 + 1),
                Datum::Null,
                text("YES"),
                text("text"),
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                Datum::Null,
                catalog.clone(),
                text("pg_catalog"),
                text("text"),
                text("NO"),
                Datum::Null,
                text("NEVER"),
                text("NO"),
            ]);
        }
    }
    (
        cols(&[
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "COLUMN_NAME",
            "ORDINAL_POSITION",
            "COLUMN_DEFAULT",
            "IS_NULLABLE",
            "DATA_TYPE",
            "CHARACTER_MAXIMUM_LENGTH",
            "CHARACTER_OCTET_LENGTH",
            "NUMERIC_PRECISION",
            "NUMERIC_PRECISION_RADIX",
            "NUMERIC_SCALE",
            "DATETIME_PRECISION",
            "UDT_CATALOG",
            "UDT_SCHEMA",
            "UDT_NAME",
            "IS_IDENTITY",
            "IDENTITY_GENERATION",
            "IS_GENERATED",
            "IS_UPDATABLE",
        ]),
        rows,
    )
}

fn views(session: &Session) -> Rows {
    let catalog = catalog_name(session);
    let rows = session
        .db
        .catalog
        .views()
        .into_iter()
        .filter(|v| usable(session, &v.name))
        .map(|v| {
            vec![
                catalog.clone(),
                text("public"),
                text(pg_name(&v.name)),
                text(v.text.clone()),
                text("NONE"),
                text("NO"),
            ]
        })
        .collect();
    (cols(&["TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "VIEW_DEFINITION", "CHECK_OPTION", "IS_UPDATABLE"]), rows)
}

fn schemata(session: &Session) -> Rows {
    let catalog = catalog_name(session);
    let rows = ["pg_catalog", "public", "information_schema"]
        .into_iter()
        .map(|schema| vec![catalog.clone(), text(schema), text("sys")])
        .collect();
    (cols(&["CATALOG_NAME", "SCHEMA_NAME", "SCHEMA_OWNER"]), rows)
}

/// The standard's name of a constraint's kind; `None` for NOT NULL, which the standard
/// lists as a CHECK lioscope does not show.
fn constraint_type(kind: &ConstraintKind) -> Option<&'static str> {
    match kind {
        ConstraintKind::NotNull => None,
        ConstraintKind::Check { .. } => Some("CHECK"),
        ConstraintKind::PrimaryKey(_) => Some("PRIMARY KEY"),
        ConstraintKind::Unique(_) => Some("UNIQUE"),
        ConstraintKind::ForeignKey { .. } => Some("FOREIGN KEY"),
    }
}

/// The columns that name a constraint and its table: catalog, schema and name of each.
fn constraint_of(catalog: &Value, constraint: &str, table: &str) -> Vec<Value> {
    let name = |s: &str| text(pg_name(s));
    vec![catalog.clone(), text("public"), name(constraint), catalog.clone(), text("public"), name(table)]
}

fn table_constraints(session: &Session) -> Rows {
    let catalog = catalog_name(session);
    let mut rows = Vec::new();
    for t in usable_tables(session) {
        for c in &t.constraints {
            let Some(kind) = constraint_type(&c.kind) else { continue };
            let mut row = constraint_of(&catalog, &c.name, &t.name);
            row.extend([text(kind), text("NO"), text("NO"), yes_no(c.enabled)]);
            rows.push(row);
        }
    }
    (
        cols(&[
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "CONSTRAINT_TYPE",
            "IS_DEFERRABLE",
            "INITIALLY_DEFERRED",
            "ENFORCED",
        ]),
        rows,
    )
}

/// Each column of each primary, unique and foreign key, with its place in the key (and,
/// for a foreign key, the place of the column it refers to in the parent's key).
fn key_column_usage(session: &Session) -> Rows {
    let catalog = catalog_name(session);
    let mut rows = Vec::new();
    for t in usable_tables(session) {
        for c in &t.constraints {
            if !matches!(
                c.kind,
                ConstraintKind::PrimaryKey(_) | ConstraintKind::Unique(_) | ConstraintKind::ForeignKey { .. }
            ) {
                continue;
            }
            for (position, &column) in c.columns.iter().enumerate() {
                let in_unique = matches!(c.kind, ConstraintKind::ForeignKey { .. }).then_some(position as u64 + 1);
                let mut row = constraint_of(&catalog, &c.name, &t.name);
                row.extend([
                    text(pg_name(&t.columns[column].name)),
                    int(position as u64 + 1),
                    in_unique.map_or(Datum::Null, int),
                ]);
                rows.push(row);
            }
        }
    }
    (
        cols(&[
            "CONSTRAINT_CATALOG",
            "CONSTRAINT_SCHEMA",
            "CONSTRAINT_NAME",
            "TABLE_CATALOG",
            "TABLE_SCHEMA",
            "TABLE_NAME",
            "COLUMN_NAME",
            "ORDINAL_POSITION",
            "POSITION_IN_UNIQUE_CONSTRAINT",
        ]),
        rows,
    )
}
