//! The relations of `pg_catalog`: `pg_class` (tables, indexes, views, sequences),
//! `pg_attribute`, `pg_type`, `pg_index`, `pg_indexes`, `pg_constraint`, `pg_tables`,
//! `pg_views`, `pg_sequences`, `pg_sequence` and `pg_depend`, from the dictionary's
//! tables, indexes, views and sequences.

use super::super::fixed_rows::{Rows, cols, text};
use super::{
    BTREE_AM, DEFAULT_COLLATION, HEAP_AM, PG_CATALOG_OID, PUBLIC_OID, SYS_OID, constraint_oid, flag, number, oid,
    pg_name, sequence_oid, user_oid, view_oid,
};
use crate::catalog::{Catalog, ConstraintKind, DeleteRule, TableDef};
use crate::types::pg_types::{self, BASE_TYPES, PgType};
use crate::types::{Datum, Value};

/// A `pg_class` row's values that differ between kinds of relation.
struct Relation {
    oid: u32,
    name: String,
    kind: &'static str,
    /// The owner's name, as the catalogs show it.
    owner: String,
    access_method: u32,
    columns: usize,
    checks: usize,
    has_index: bool,
    has_triggers: bool,
    tuples: f64,
    pages: i64,
}

impl Relation {
    /// A relation of `kind` with no constraints, indexes or triggers of its own.
    fn plain(oid: u32, name: &str, kind: &'static str, owner: String, columns: usize) -> Relation {
        Relation {
            oid,
            name: pg_name(name),
            kind,
            owner,
            access_method: 0,
            columns,
            checks: 0,
            has_index: false,
            has_triggers: false,
            tuples: -1.0,
            pages: 0,
        }
    }
}

fn relations(catalog: &Catalog) -> Vec<Relation> {
    let mut out = Vec::new();
    let tables = catalog.tables();
    // The parents of foreign keys, found in one pass over the tables.
    let referenced: std::collections::HashSet<&str> = tables
        .iter()
        .flat_map(|t| &t.constraints)
        .filter_map(|c| match &c.kind {
            ConstraintKind::ForeignKey { parent, .. } => Some(parent.as_str()),
            _ => None,
        })
        .collect();
    for t in &tables {
        out.push(Relation {
            oid: t.object_id,
            name: pg_name(&t.name),
            kind: "r",
            owner: catalog.owner_of(&t.name),
            access_method: HEAP_AM,
            columns: t.columns.len(),
            checks: t.constraints.iter().filter(|c| matches!(c.kind, ConstraintKind::Check { .. })).count(),
            has_index: !catalog.indexes_of(t.object_id).is_empty(),
            // PostgreSQL enforces foreign keys with triggers; psql lists a table's
            // foreign keys (and those referencing it) only when it has some.
            has_triggers: referenced.contains(t.name.as_str())
                || t.constraints.iter().any(|c| matches!(c.kind, ConstraintKind::ForeignKey { .. })),
            tuples: t.stats.as_ref().map_or(-1.0, |s| s.num_rows as f64),
            pages: t.stats.as_ref().map_or(0, |s| s.blocks as i64),
        });
    }
    for i in catalog.indexes() {
        out.push(Relation {
            access_method: BTREE_AM,
            tuples: i.stats.as_ref().map_or(-1.0, |s| s.num_rows as f64),
            pages: i.stats.as_ref().map_or(0, |s| s.leaf_blocks as i64),
            ..Relation::plain(i.object_id, &i.name, "i", catalog.owner_of(&i.name), i.columns.len())
        });
    }
    for v in catalog.views() {
        out.push(Relation::plain(view_oid(&v.name), &v.name, "v", catalog.owner_of(&v.name), v.columns.len()));
    }
    for s in catalog.sequences() {
        out.push(Relation {
            tuples: 1.0,
            pages: 1,
            ..Relation::plain(sequence_oid(&s.name), &s.name, "S", catalog.owner_of(&s.name), 3)
        });
    }
    out
}

pub(super) fn classes(catalog: &Catalog) -> Rows {
    let rows = relations(catalog)
        .into_iter()
        .map(|r| {
            vec![
                oid(r.oid),
                text(r.name),
                oid(PUBLIC_OID),
                number(0),
                number(0),
                oid(user_oid(&r.owner)),
                oid(r.access_method),
                oid(r.oid),
                number(0),
                number(r.pages),
                Datum::from_decimal(rust_decimal::Decimal::from_f64_retain(r.tuples).unwrap_or_default()),
                number(0),
                number(0),
                flag(r.has_index),
                flag(false),
                text("p"),
                text(r.kind),
                number(r.columns as i64),
                number(r.checks as i64),
                flag(false),
                flag(r.has_triggers),
                flag(false),
                flag(false),
                flag(false),
                flag(true),
                text("d"),
                flag(false),
                Datum::Null,
                Datum::Null,
                Datum::Null,
            ]
        })
        .collect();
    (
        cols(&[
            "OID",
            "RELNAME",
            "RELNAMESPACE",
            "RELTYPE",
            "RELOFTYPE",
            "RELOWNER",
            "RELAM",
            "RELFILENODE",
            "RELTABLESPACE",
            "RELPAGES",
            "RELTUPLES",
            "RELALLVISIBLE",
            "RELTOASTRELID",
            "RELHASINDEX",
            "RELISSHARED",
            "RELPERSISTENCE",
            "RELKIND",
            "RELNATTS",
            "RELCHECKS",
            "RELHASRULES",
            "RELHASTRIGGERS",
            "RELHASSUBCLASS",
            "RELROWSECURITY",
            "RELFORCEROWSECURITY",
            "RELISPOPULATED",
            "RELREPLIDENT",
            "RELISPARTITION",
            "RELPARTBOUND",
            "RELOPTIONS",
            "RELACL",
        ]),
        rows,
    )
}

/// One `pg_attribute` row: column `number` (from 1) of relation `relation`.
fn attribute(
    relation: u32,
    name: &str,
    number_: usize,
    t: PgType,
    not_null: bool,
    identity: Option<&str>,
) -> Vec<Value> {
    let base = pg_types::base_type(t.oid);
    vec![
        oid(relation),
        text(pg_name(name)),
        oid(t.oid),
        number(-1),
        number(base.map_or(-1, |b| b.len.into())),
        number(number_ as i64),
        number(0),
        number(-1),
        number(t.modifier.into()),
        flag(base.is_some_and(|b| (1..=8).contains(&b.len))),
        text(if base.is_some_and(|b| b.len == 8) { "d" } else { "i" }),
        text(if base.is_some_and(|b| b.len > 0) { "p" } else { "x" }),
        Datum::Null,
        flag(not_null),
        flag(false),
        flag(false),
        identity.map_or(Datum::Null, text),
        Datum::Null,
        flag(false),
        flag(true),
        number(0),
        oid(if base.is_some_and(|b| b.collatable) { DEFAULT_COLLATION } else { 0 }),
        Datum::Null,
        Datum::Null,
    ]
}

pub(super) fn attributes(catalog: &Catalog) -> Rows {
    let mut rows = Vec::new();
    let text_type = PgType { oid: pg_types::TEXT, modifier: -1 };
    for t in catalog.tables() {
        for (i, c) in t.columns.iter().enumerate() {
            let identity = t.identity.as_ref().filter(|id| id.column == i).map(|id| if id.always { "a" } else { "d" });
            rows.push(attribute(t.object_id, &c.name, i + 1, pg_types::pg_type(&c.data_type), !c.nullable, identity));
        }
        for index in catalog.indexes_of(t.object_id) {
            for (position, &column) in index.columns.iter().enumerate() {
                let c = &t.columns[column];
                rows.push(attribute(
                    index.object_id,
                    &c.name,
                    position + 1,
                    pg_types::pg_type(&c.data_type),
                    false,
                    None,
                ));
            }
        }
    }
    for v in catalog.views() {
        for (i, column) in v.columns.iter().enumerate() {
            rows.push(attribute(view_oid(&v.name), column, i + 1, text_type, false, None));
        }
    }
    (
        cols(&[
            "ATTRELID",
            "ATTNAME",
            "ATTTYPID",
            "ATTSTATTARGET",
            "ATTLEN",
            "ATTNUM",
            "ATTNDIMS",
            "ATTCACHEOFF",
            "ATTTYPMOD",
            "ATTBYVAL",
            "ATTALIGN",
            "ATTSTORAGE",
            "ATTCOMPRESSION",
            "ATTNOTNULL",
            "ATTHASDEF",
            "ATTHASMISSING",
            "ATTIDENTITY",
            "ATTGENERATED",
            "ATTISDROPPED",
            "ATTISLOCAL",
            "ATTINHCOUNT",
            "ATTCOLLATION",
            "ATTACL",
            "ATTOPTIONS",
        ]),
        rows,
    )
}

pub(super) fn types() -> Rows {
    let rows = BASE_TYPES
        .iter()
        .map(|t| {
            vec![
                oid(t.oid),
                text(t.name),
                oid(PG_CATALOG_OID),
                oid(SYS_OID),
                number(t.len.into()),
                flag((1..=8).contains(&t.len)),
                text("b"),
                text(t.category.to_string()),
                flag(false),
                flag(true),
                text(","),
                number(0),
                number(0),
                oid(t.array),
                flag(false),
                number(0),
                number(-1),
                number(0),
                oid(if t.collatable { DEFAULT_COLLATION } else { 0 }),
                Datum::Null,
            ]
        })
        .collect();
    (
        cols(&[
            "OID",
            "TYPNAME",
            "TYPNAMESPACE",
            "TYPOWNER",
            "TYPLEN",
            "TYPBYVAL",
            "TYPTYPE",
            "TYPCATEGORY",
            "TYPISPREFERRED",
            "TYPISDEFINED",
            "TYPDELIM",
            "TYPRELID",
            "TYPELEM",
            "TYPARRAY",
            "TYPNOTNULL",
            "TYPBASETYPE",
            "TYPTYPMOD",
            "TYPNDIMS",
            "TYPCOLLATION",
            "TYPDEFAULT",
        ]),
        rows,
    )
}

/// The name of the constraint index `index` enforces, with whether it is the primary key.
fn key_of(table: &TableDef, index: &str) -> Option<(&'static str, String)> {
    table.constraints.iter().find_map(|c| {
        let key = c.kind.key_index()?;
        (key.index.as_deref() == Some(index))
            .then(|| (if matches!(c.kind, ConstraintKind::PrimaryKey(_)) { "p" } else { "u" }, c.name.clone()))
    })
}

pub(super) fn indexes(catalog: &Catalog) -> Rows {
    let mut rows = Vec::new();
    for t in catalog.tables() {
        for i in catalog.indexes_of(t.object_id) {
            let primary = key_of(&t, &i.name).is_some_and(|(kind, _)| kind == "p");
            let key: Vec<String> = i.columns.iter().map(|c| (c + 1).to_string()).collect();
            rows.push(vec![
                oid(i.object_id),
                oid(t.object_id),
                number(i.columns.len() as i64),
                number(i.columns.len() as i64),
                flag(i.unique),
                flag(primary),
                flag(false),
                flag(true),
                flag(false),
                flag(true),
                flag(false),
                flag(true),
                flag(true),
                flag(false),
                flag(false),
                text(key.join(" ")),
                Datum::Null,
                Datum::Null,
            ]);
        }
    }
    (
        cols(&[
            "INDEXRELID",
            "INDRELID",
            "INDNATTS",
            "INDNKEYATTS",
            "INDISUNIQUE",
            "INDISPRIMARY",
            "INDISEXCLUSION",
            "INDIMMEDIATE",
            "INDISCLUSTERED",
            "INDISVALID",
            "INDCHECKXMIN",
            "INDISREADY",
            "INDISLIVE",
            "INDISREPLIDENT",
            "INDNULLSNOTDISTINCT",
            "INDKEY",
            "INDEXPRS",
            "INDPRED",
        ]),
        rows,
    )
}

/// `column, column` of `table`, in `positions` order, as PostgreSQL names them.
fn column_list(table: &TableDef, positions: &[usize]) -> String {
    positions.iter().map(|&p| pg_name(&table.columns[p].name)).collect::<Vec<_>>().join(", ")
}

/// `pg_indexes`, with the index's OID (`INDEXRELID`) beside PostgreSQL's columns: the
/// server reads `pg_get_indexdef(oid)` here.
pub(super) fn index_definitions(catalog: &Catalog) -> Rows {
    let mut rows = Vec::new();
    for t in catalog.tables() {
        for i in catalog.indexes_of(t.object_id) {
            let definition = format!(
                "CREATE {}INDEX {} ON public.{} USING btree ({})",
                if i.unique { "UNIQUE " } else { "" },
                pg_name(&i.name),
                pg_name(&t.name),
                column_list(&t, &i.columns)
            );
            rows.push(vec![
                text("public"),
                text(pg_name(&t.name)),
                text(pg_name(&i.name)),
                Datum::Null,
                text(definition),
                oid(i.object_id),
            ]);
        }
    }
    (cols(&["SCHEMANAME", "TABLENAME", "INDEXNAME", "TABLESPACE", "INDEXDEF", "INDEXRELID"]), rows)
}

/// `pg_constraint`: primary keys, unique keys, foreign keys and check constraints (a
/// NOT NULL is `pg_attribute.attnotnull`, as in PostgreSQL), with each one's definition
/// (`CONDEF`) beside PostgreSQL's columns: the server reads `pg_get_constraintdef` here.
pub(super) fn constraints(catalog: &Catalog) -> Rows {
    let mut rows = Vec::new();
    for t in catalog.tables() {
        for c in &t.constraints {
            let columns = column_list(&t, &c.columns);
            let numbers = |positions: &[usize]| {
                format!("{{{}}}", positions.iter().map(|p| (p + 1).to_string()).collect::<Vec<_>>().join(","))
            };
            let index_oid = |index: Option<&str>| index.and_then(|i| catalog.index(i)).map_or(0, |i| i.object_id);
            let (kind, index, parent, parent_key, delete, definition) = match &c.kind {
                ConstraintKind::NotNull => continue,
                ConstraintKind::Check { condition } => ("c", 0, 0, None, "a", format!("CHECK ({condition})")),
                ConstraintKind::PrimaryKey(key) => {
                    ("p", index_oid(key.index.as_deref()), 0, None, "a", format!("PRIMARY KEY ({columns})"))
                }
                ConstraintKind::Unique(key) => {
                    ("u", index_oid(key.index.as_deref()), 0, None, "a", format!("UNIQUE ({columns})"))
                }
                ConstraintKind::ForeignKey { parent, parent_constraint, on_delete } => {
                    let Some(parent_table) = catalog.table(parent) else { continue };
                    let Some(parent_key) = parent_table.constraint(parent_constraint) else { continue };
                    let (delete, clause) = match on_delete {
                        DeleteRule::NoAction => ("a", ""),
                        DeleteRule::Cascade => ("c", " ON DELETE CASCADE"),
                        DeleteRule::SetNull => ("n", " ON DELETE SET NULL"),
                    };
                    let definition = format!(
                        "FOREIGN KEY ({columns}) REFERENCES {}({}){clause}",
                        pg_name(parent),
                        column_list(&parent_table, &parent_key.columns)
                    );
                    let index = index_oid(parent_key.kind.key_index().and_then(|k| k.index.as_deref()));
                    ("f", index, parent_table.object_id, Some(numbers(&parent_key.columns)), delete, definition)
                }
            };
            rows.push(vec![
                oid(constraint_oid(&t.name, &c.name)),
                text(pg_name(&c.name)),
                oid(PUBLIC_OID),
                text(kind),
                flag(false),
                flag(false),
                flag(c.enabled),
                oid(t.object_id),
                number(0),
                oid(index),
                number(0),
                oid(parent),
                text(if kind == "f" { "a" } else { " " }),
                text(if kind == "f" { delete } else { " " }),
                text(if kind == "f" { "s" } else { " " }),
                flag(true),
                number(0),
                flag(false),
                // A CHECK's columns are not kept apart from its condition.
                if c.columns.is_empty() { Datum::Null } else { text(numbers(&c.columns)) },
                parent_key.map_or(Datum::Null, text),
                Datum::Null,
                text(definition),
            ]);
        }
    }
    (
        cols(&[
            "OID",
            "CONNAME",
            "CONNAMESPACE",
            "CONTYPE",
            "CONDEFERRABLE",
            "CONDEFERRED",
            "CONVALIDATED",
            "CONRELID",
            "CONTYPID",
            "CONINDID",
            "CONPARENTID",
            "CONFRELID",
            "CONFUPDTYPE",
            "CONFDELTYPE",
            "CONFMATCHTYPE",
            "CONISLOCAL",
            "CONINHCOUNT",
            "CONNOINHERIT",
            "CONKEY",
            "CONFKEY",
            "CONBIN",
            "CONDEF",
        ]),
        rows,
    )
}

pub(super) fn tables(catalog: &Catalog) -> Rows {
    let rows = relations(catalog)
        .into_iter()
        .filter(|r| r.kind == "r")
        .map(|r| {
            vec![
                text("public"),
                text(r.name),
                text(pg_name(&r.owner)),
                Datum::Null,
                flag(r.has_index),
                flag(false),
                flag(r.has_triggers),
                flag(false),
            ]
        })
        .collect();
    (
        cols(&[
            "SCHEMANAME",
            "TABLENAME",
            "TABLEOWNER",
            "TABLESPACE",
            "HASINDEXES",
            "HASRULES",
            "HASTRIGGERS",
            "ROWSECURITY",
        ]),
        rows,
    )
}

pub(super) fn views(catalog: &Catalog) -> Rows {
    let rows = catalog
        .views()
        .into_iter()
        .map(|v| {
            vec![
                text("public"),
                text(pg_name(&v.name)),
                text(pg_name(&catalog.owner_of(&v.name))),
                text(v.text.clone()),
            ]
        })
        .collect();
    (cols(&["SCHEMANAME", "VIEWNAME", "VIEWOWNER", "DEFINITION"]), rows)
}

pub(super) fn sequences(catalog: &Catalog) -> Rows {
    let clamp = |v: i128| Datum::Int(i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX }));
    let rows = catalog
        .sequences()
        .into_iter()
        .map(|s| {
            vec![
                text("public"),
                text(pg_name(&s.name)),
                text(pg_name(&catalog.owner_of(&s.name))),
                text("bigint"),
                clamp(s.min_value),
                clamp(s.max_value),
                clamp(s.increment_by),
                flag(s.cycle),
                number(s.cache_size.max(1).into()),
            ]
        })
        .collect();
    (
        cols(&[
            "SCHEMANAME",
            "SEQUENCENAME",
            "SEQUENCEOWNER",
            "DATA_TYPE",
            "MIN_VALUE",
            "MAX_VALUE",
            "INCREMENT_BY",
            "CYCLE",
            "CACHE_SIZE",
        ]),
        rows,
    )
}

/// `pg_sequence`. lioscope, as Oracle, does not keep a sequence's START WITH: `seqstart`
/// is where it would start again, its MINVALUE (MAXVALUE for a descending one).
pub(super) fn sequence_catalog(catalog: &Catalog) -> Rows {
    let clamp = |v: i128| Datum::Int(i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX }));
    let rows = catalog
        .sequences()
        .into_iter()
        .map(|s| {
            let start = if s.increment_by < 0 { s.max_value } else { s.min_value };
            vec![
                oid(sequence_oid(&s.name)),
                oid(pg_types::INT8),
                clamp(start),
                clamp(s.increment_by),
                clamp(s.max_value),
                clamp(s.min_value),
                number(s.cache_size.max(1).into()),
                flag(s.cycle),
            ]
        })
        .collect();
    (cols(&["SEQRELID", "SEQTYPID", "SEQSTART", "SEQINCREMENT", "SEQMAX", "SEQMIN", "SEQCACHE", "SEQCYCLE"]), rows)
}

/// `pg_depend`: what lioscope's dictionary ties together that PostgreSQL's clients look
/// up here, an identity column's sequence (dependency type `i`, internal).
pub(super) fn dependencies(catalog: &Catalog) -> Rows {
    const PG_CLASS_OID: u32 = 1259;
    let rows = catalog
        .tables()
        .into_iter()
        .filter_map(|t| {
            let identity = t.identity.as_ref()?;
            Some(vec![
                oid(PG_CLASS_OID),
                oid(sequence_oid(&identity.sequence)),
                number(0),
                oid(PG_CLASS_OID),
                oid(t.object_id),
                number(identity.column as i64 + 1),
                text("i"),
            ])
        })
        .collect();
    (cols(&["CLASSID", "OBJID", "OBJSUBID", "REFCLASSID", "REFOBJID", "REFOBJSUBID", "DEPTYPE"]), rows)
}
