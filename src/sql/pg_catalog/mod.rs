//! PostgreSQL's system catalogs as views over lioscope's dictionary, for the clients of
//! `lioscope serve` (psql's `\d` commands, drivers' and browsers' table lists):
//! `pg_class`, `pg_namespace`, `pg_attribute`, `pg_type`, `pg_index`, `pg_indexes`,
//! `pg_constraint`, `pg_am`, `pg_database`, `pg_roles` (and `pg_user`, `pg_authid`),
//! `pg_auth_members`, `pg_tables`, `pg_views`, `pg_sequence`, `pg_sequences`, `pg_depend`
//! (an identity column's sequence), `pg_collation`, and the
//! catalogs lioscope has nothing for, empty (`pg_attrdef`, `pg_description`,
//! `pg_inherits`, `pg_trigger`, `pg_policy`, ...). Each is reachable as `pg_catalog.NAME`
//! and as `NAME`, as PostgreSQL's search path makes them.
//!
//! How lioscope's dictionary is shown:
//! - one schema, `public` (OID 2200), holds every table, view, index and sequence;
//! - a name is shown as a PostgreSQL client would write it unquoted: `EMP` as `emp`
//!   (PostgreSQL folds unquoted names to lower case where Oracle folds them to upper), a
//!   name with lower-case letters as it is;
//! - a table's or index's OID is its data object id; the OID of a view, sequence,
//!   constraint or user is a hash of its name above 2^30 (object ids stay below), the
//!   same in every statement; SYS is OID 10, PostgreSQL's bootstrap superuser;
//! - a boolean is `t` or `f` (lioscope's SQL has no BOOLEAN); an array column (ACLs,
//!   options) is NULL; `indkey`, `conkey` and `confkey` are written as PostgreSQL
//!   writes them (`1 2`, `{1,2}`);
//! - columns' types are [`pg_types`](crate::types::pg_types)'s, the types the server
//!   sends the values as. A view's columns are `text` (a view keeps its column names, not
//!   their types).
//!
//! The folder: `relations` the tables, indexes, views, sequences, columns and
//! constraints; `roles` the users and roles.
//!
//! Every user may read these views, as in PostgreSQL; they list every object, whoever
//! owns it (`information_schema` lists only what the user may use).

mod relations;
mod roles;

use super::fixed_rows::{Rows, cols, int, text};
use crate::catalog::users::SYS;
use crate::instance::Session;
use crate::types::{Datum, Value};

/// The OID of schema `pg_catalog`.
pub(super) const PG_CATALOG_OID: u32 = 11;
/// The OID of schema `public`, where all of lioscope's objects are.
pub(super) const PUBLIC_OID: u32 = 2200;
/// The OID of schema `information_schema`.
pub(super) const INFORMATION_SCHEMA_OID: u32 = 13_000;
/// The OID of the bootstrap superuser, SYS.
const SYS_OID: u32 = 10;
/// `pg_am`'s heap and btree access methods.
const HEAP_AM: u32 = 2;
const BTREE_AM: u32 = 403;
/// The OID of the default collation.
const DEFAULT_COLLATION: u32 = 100;
/// The OID of the one database.
const DATABASE_OID: u32 = 5;

/// The rows of view `name` (`PG_CATALOG.PG_CLASS` or `PG_CLASS`), if it is one of these.
pub(super) fn view(name: &str, session: &Session) -> Option<Rows> {
    let name = name.strip_prefix("PG_CATALOG.").unwrap_or(name);
    if !name.starts_with("PG_") {
        return None;
    }
    let catalog = &session.db.catalog;
    Some(match name {
        "PG_NAMESPACE" => namespaces(),
        "PG_CLASS" => relations::classes(catalog),
        "PG_ATTRIBUTE" => relations::attributes(catalog),
        "PG_TYPE" => relations::types(),
        "PG_INDEX" => relations::indexes(catalog),
        "PG_INDEXES" => relations::index_definitions(catalog),
        "PG_CONSTRAINT" => relations::constraints(catalog),
        "PG_AM" => (
            cols(&["OID", "AMNAME", "AMHANDLER", "AMTYPE"]),
            vec![
                vec![int(HEAP_AM.into()), text("heap"), text("heap_tableam_handler"), text("t")],
                vec![int(BTREE_AM.into()), text("btree"), text("bthandler"), text("i")],
            ],
        ),
        "PG_DATABASE" => database(session),
        "PG_ROLES" | "PG_AUTHID" => roles::roles(catalog),
        "PG_USER" => roles::users(catalog),
        "PG_AUTH_MEMBERS" => roles::role_members(catalog),
        "PG_TABLES" => relations::tables(catalog),
        "PG_VIEWS" => relations::views(catalog),
        "PG_SEQUENCES" => relations::sequences(catalog),
        "PG_SEQUENCE" => relations::sequence_catalog(catalog),
        "PG_DEPEND" => relations::dependencies(catalog),
        "PG_COLLATION" => (
            cols(&["OID", "COLLNAME", "COLLNAMESPACE", "COLLOWNER", "COLLPROVIDER", "COLLENCODING"]),
            vec![vec![
                oid(DEFAULT_COLLATION),
                text("default"),
                oid(PG_CATALOG_OID),
                oid(SYS_OID),
                text("d"),
                number(-1),
            ]],
        ),
        _ => return empty(name),
    })
}

/// The catalogs of what lioscope does not have (defaults, comments, inheritance,
/// triggers, rules, row security, extended statistics, publications, extensions,
/// enums): their columns, no rows.
fn empty(name: &str) -> Option<Rows> {
    let columns: &[&str] = match name {
        "PG_ATTRDEF" => &["OID", "ADRELID", "ADNUM", "ADBIN"],
        "PG_DESCRIPTION" => &["OBJOID", "CLASSOID", "OBJSUBID", "DESCRIPTION"],
        "PG_INHERITS" => &["INHRELID", "INHPARENT", "INHSEQNO", "INHDETACHPENDING"],
        "PG_TRIGGER" => &["OID", "TGRELID", "TGPARENTID", "TGNAME", "TGFOID", "TGTYPE", "TGENABLED", "TGISINTERNAL"],
        "PG_REWRITE" => &["OID", "RULENAME", "EV_CLASS", "EV_TYPE", "EV_ENABLED", "IS_INSTEAD"],
        "PG_POLICY" => {
            &["OID", "POLNAME", "POLRELID", "POLCMD", "POLPERMISSIVE", "POLROLES", "POLQUAL", "POLWITHCHECK"]
        }
        "PG_STATISTIC_EXT" => {
            &["OID", "STXRELID", "STXNAME", "STXNAMESPACE", "STXOWNER", "STXSTATTARGET", "STXKEYS", "STXKIND"]
        }
        "PG_PUBLICATION" => &["OID", "PUBNAME", "PUBOWNER", "PUBALLTABLES"],
        "PG_PUBLICATION_REL" => &["OID", "PRPUBID", "PRRELID", "PRQUAL", "PRATTRS"],
        "PG_PUBLICATION_NAMESPACE" => &["OID", "PNPUBID", "PNNSPID"],
        "PG_EXTENSION" => &["OID", "EXTNAME", "EXTOWNER", "EXTNAMESPACE", "EXTVERSION"],
        "PG_ENUM" => &["OID", "ENUMTYPID", "ENUMSORTORDER", "ENUMLABEL"],
        "PG_PARTITIONED_TABLE" => &["PARTRELID", "PARTSTRAT", "PARTNATTS", "PARTDEFID"],
        "PG_FOREIGN_TABLE" => &["FTRELID", "FTSERVER", "FTOPTIONS"],
        _ => return None,
    };
    Some((cols(columns), Vec::new()))
}

/// `name` as a PostgreSQL client writes it unquoted: lower case for a name Oracle's
/// rules made upper case.
pub(super) fn pg_name(name: &str) -> String {
    if name.chars().any(|c| c.is_lowercase()) { name.to_owned() } else { name.to_lowercase() }
}

/// A stable OID for an object without an object id: FNV-1a of its kind and name, in
/// [2^30, 2^31).
fn hashed_oid(kind: &str, name: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in kind.bytes().chain([0]).chain(name.bytes()) {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    (hash & 0x3fff_ffff) | 0x4000_0000
}

pub(super) fn user_oid(user: &str) -> u32 {
    if user == SYS { SYS_OID } else { hashed_oid("user", user) }
}

fn view_oid(name: &str) -> u32 {
    hashed_oid("view", name)
}

fn sequence_oid(name: &str) -> u32 {
    hashed_oid("sequence", name)
}

fn constraint_oid(table: &str, name: &str) -> u32 {
    hashed_oid(table, name)
}

fn oid(v: u32) -> Value {
    int(v.into())
}

fn flag(on: bool) -> Value {
    text(if on { "t" } else { "f" })
}

fn number(v: i64) -> Value {
    Datum::Int(v)
}

fn namespaces() -> Rows {
    let row = |oid_, name: &str| vec![oid(oid_), text(name), oid(SYS_OID), Datum::Null];
    (
        cols(&["OID", "NSPNAME", "NSPOWNER", "NSPACL"]),
        vec![
            row(PG_CATALOG_OID, "pg_catalog"),
            row(PUBLIC_OID, "public"),
            row(INFORMATION_SCHEMA_OID, "information_schema"),
        ],
    )
}

/// The database's name: its directory's.
pub(super) fn database_name(session: &Session) -> String {
    session.db.dir.file_name().map_or_else(|| "lioscope".into(), |n| n.to_string_lossy().into_owned())
}

/// The one database: named after its directory.
fn database(session: &Session) -> Rows {
    let name = database_name(session);
    (
        cols(&[
            "OID",
            "DATNAME",
            "DATDBA",
            "ENCODING",
            "DATLOCPROVIDER",
            "DATISTEMPLATE",
            "DATALLOWCONN",
            "DATCONNLIMIT",
            "DATCOLLATE",
            "DATCTYPE",
            "DATICULOCALE",
            "DATACL",
        ]),
        vec![vec![
            oid(DATABASE_OID),
            text(name),
            oid(SYS_OID),
            number(6),
            text("c"),
            flag(false),
            flag(true),
            number(-1),
            text("C.UTF-8"),
            text("C.UTF-8"),
            Datum::Null,
            Datum::Null,
        ]],
    )
}
