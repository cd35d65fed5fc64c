//! The data dictionary: tables, their columns, constraints and segments, their indexes,
//! the optimizer statistics ANALYZE gathered for both, views (their query's text),
//! sequences (their options and the first value no cache has taken, [`sequence`]), and
//! the users, each object's owner and the privileges granted ([`users`]): SYS always
//! among the users; owners and grants name only objects and users that exist (dropping
//! one forgets its owner and grants; a user who owns objects is not dropped);
//! [`Catalog::holds`] is the one answer to "may this user do this to that object".
//!
//! Kept in memory behind one lock and written whole to `dictionary.json` in the database
//! directory (temporary file, fsync, rename, through the database's I/O layer) by every
//! DDL statement, once the redo so far is durable ([`Catalog::set_before_write`]): the
//! file never names a segment block that recovery could not rebuild. Names are stored as
//! Oracle stores them: unquoted identifiers in upper case.
//!
//! Opening checks the whole file before anything uses it, with an error naming
//! `dictionary.json` and the field (never a panic): names match their keys and are unique
//! across tables, indexes, views and sequences, data object ids are unique and below `next_object_id`,
//! segment headers lie in a datafile segments are made in, column types are ones CREATE
//! TABLE makes, and column positions (index keys, columns left out of the column store,
//! column statistics, constraint columns) are those of the table; constraint names are
//! unique in the database and a key's index is one of its table's.
//!
//! Invariant: the file holds every change the memory shows. DDL statements change the
//! dictionary one at a time: each builds the changed dictionary beside the current one,
//! writes it, and only then publishes it, so a failed write changes nothing and two
//! concurrent CREATEs cannot write their snapshots in the wrong order. Queries keep reading
//! the current dictionary while a change is being written.

pub mod sequence;
pub mod users;

use crate::error::{Error, Result};
use crate::types::DataType;
use parking_lot::{RwLock, RwLockUpgradableReadGuard};
pub use sequence::SequenceDef;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
pub use users::{ObjectGrants, ObjectPrivilege, Role, ScramVerifier, SystemPrivilege, UserDef};

/// The dictionary file inside a database directory.
pub const DICTIONARY_FILE: &str = "dictionary.json";

/// Object ids below this are reserved for lioscope's own objects.
pub const FIRST_USER_OBJECT_ID: u32 = 1000;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColumnDef {
    pub name: String,
    pub data_type: DataType,
    pub nullable: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableDef {
    pub name: String,
    /// Data object id stamped in every block of the table's segment.
    pub object_id: u32,
    pub columns: Vec<ColumnDef>,
    /// Percent of each block kept free for rows to grow (PCTFREE).
    pub pctfree: u8,
    /// Block address of the segment header.
    pub segment_header: u32,
    /// When the table was created (seconds since 1970).
    pub created: i64,
    /// What the last ANALYZE found, if the table was analyzed.
    #[serde(default)]
    pub stats: Option<TableStats>,
    /// The table's INMEMORY attributes, if it is marked for the column store.
    #[serde(default)]
    pub inmemory: Option<InMemorySpec>,
    /// `COMPRESS FOR ...`: the Hybrid Columnar Compression level its direct-path loads
    /// write compression units at; `None` for NOCOMPRESS.
    #[serde(default)]
    pub compression: Option<crate::storage::hcc::HccLevel>,
    /// The table's constraints, in the order they were declared (`user_constraints`).
    #[serde(default)]
    pub constraints: Vec<ConstraintDef>,
    /// Its identity column (`GENERATED ... AS IDENTITY`), if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<IdentityColumn>,
}

/// A table's identity column: the values an INSERT leaves to it come from its
/// system-generated sequence (`ISEQ$$_` and the table's object id).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IdentityColumn {
    /// Its position among the table's columns.
    pub column: usize,
    pub sequence: String,
    /// GENERATED ALWAYS: no statement gives the column a value of its own.
    pub always: bool,
    /// BY DEFAULT ON NULL: a NULL given is replaced by the sequence's next value.
    pub on_null: bool,
}

impl IdentityColumn {
    /// The name of the sequence of the identity column of the table with object id `id`.
    pub fn sequence_name(object_id: u32) -> String {
        format!("ISEQ$$_{object_id}") // the prefix CREATE SEQUENCE refuses
    }

    /// `GENERATION_TYPE` of `user_tab_identity_cols`.
    pub fn generation(&self) -> &'static str {
        if self.always { "ALWAYS" } else { "BY DEFAULT" }
    }
}

/// A stored view: the text of its query and its columns' names.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ViewDef {
    pub name: String,
    /// The query, as lioscope prints it back from its parse (what `user_views.text` shows
    /// and every query naming the view plans).
    pub text: String,
    /// The names of its columns, as CREATE VIEW made them.
    pub columns: Vec<String>,
    /// When the view was created or last replaced (seconds since 1970).
    pub created: i64,
}

/// The one schema every object belongs to: the owner Oracle's constraint errors name
/// (`unique constraint (LIOSCOPE.DEPT_PK) violated`).
pub const SCHEMA: &str = "LIOSCOPE";

/// A constraint of a table, named by the user or by the system (`SYS_C` and a number no
/// other object has, as Oracle names them).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ConstraintDef {
    /// Unique among all constraints of the database.
    pub name: String,
    pub kind: ConstraintKind,
    /// The constrained columns, as positions among the table's columns, in key order (one
    /// for NOT NULL; none for a CHECK, whose condition names its own).
    pub columns: Vec<usize>,
    /// Whether the constraint is enforced (`ENABLE`); a disabled one is kept but not
    /// checked, and a disabled key has no index of its own.
    pub enabled: bool,
    /// Whether the system chose the name (`GENERATED` in `user_constraints`).
    pub generated: bool,
}

/// What a constraint requires of a row.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ConstraintKind {
    /// The column is never NULL (Oracle's type C, `"COL" IS NOT NULL`).
    NotNull,
    /// The condition, as SQL text over the table's columns, is not FALSE (type C).
    Check { condition: String },
    /// The key columns are unique and never NULL (type P).
    PrimaryKey(KeyIndex),
    /// The key columns are unique where not all NULL (type U).
    Unique(KeyIndex),
    /// The key columns, where none is NULL, match a row of the parent table's primary or
    /// unique key `parent_constraint` (type R).
    ForeignKey { parent: String, parent_constraint: String, on_delete: DeleteRule },
}

/// The unique index that enforces a primary or unique key.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KeyIndex {
    /// The index's name; `None` while the constraint is disabled and made no index.
    pub index: Option<String>,
    /// Whether the constraint made the index (it then goes when the constraint is
    /// dropped or disabled) or uses one that existed before.
    pub own: bool,
}

/// What deleting a parent row does to its children (`DELETE_RULE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DeleteRule {
    /// Refused while a child row refers to it (ORA-02292).
    NoAction,
    Cascade,
    SetNull,
}

impl DeleteRule {
    /// Oracle's spelling in `user_constraints`.
    pub fn name(self) -> &'static str {
        match self {
            DeleteRule::NoAction => "NO ACTION",
            DeleteRule::Cascade => "CASCADE",
            DeleteRule::SetNull => "SET NULL",
        }
    }
}

impl ConstraintKind {
    /// `CONSTRAINT_TYPE` in `user_constraints`.
    pub fn code(&self) -> &'static str {
        match self {
            ConstraintKind::NotNull | ConstraintKind::Check { .. } => "C",
            ConstraintKind::PrimaryKey(_) => "P",
            ConstraintKind::Unique(_) => "U",
            ConstraintKind::ForeignKey { .. } => "R",
        }
    }

    /// The index of a primary or unique key.
    pub fn key_index(&self) -> Option<&KeyIndex> {
        match self {
            ConstraintKind::PrimaryKey(k) | ConstraintKind::Unique(k) => Some(k),
            _ => None,
        }
    }
}

/// `MEMCOMPRESS FOR ...`: how the column store encodes the table's column units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MemCompress {
    Dml,
    QueryLow,
    QueryHigh,
    CapacityLow,
    CapacityHigh,
}

impl MemCompress {
    /// Oracle's spelling, as `v$im_segments` and `user_tables` show it.
    pub fn name(self) -> &'static str {
        match self {
            MemCompress::Dml => "FOR DML",
            MemCompress::QueryLow => "FOR QUERY LOW",
            MemCompress::QueryHigh => "FOR QUERY HIGH",
            MemCompress::CapacityLow => "FOR CAPACITY LOW",
            MemCompress::CapacityHigh => "FOR CAPACITY HIGH",
        }
    }
}

/// `PRIORITY ...`: when the population workers take the table; `None` waits for its
/// first scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Priority {
    None,
    Low,
    Medium,
    High,
    Critical,
}

impl Priority {
    pub fn name(self) -> &'static str {
        match self {
            Priority::None => "NONE",
            Priority::Low => "LOW",
            Priority::Medium => "MEDIUM",
            Priority::High => "HIGH",
            Priority::Critical => "CRITICAL",
        }
    }
}

/// A table's INMEMORY attributes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InMemorySpec {
    pub compression: MemCompress,
    pub priority: Priority,
    /// Columns left out of the column store (`NO INMEMORY (col, ...)`), by position.
    pub excluded: Vec<usize>,
}

impl TableDef {
    /// Whether an UPDATE may give a row a new rowid: a row of one of the table's
    /// compression units moves out to a row block when it is updated, so every index of
    /// the table changes with it, whatever columns are assigned.
    pub fn updates_move_rows(&self) -> bool {
        self.compression.is_some()
    }

    /// Refuses attributes that do not go together: a table compressed with Hybrid Columnar
    /// Compression is not copied into the column store, so it is not also INMEMORY.
    pub fn check_attributes(&self) -> Result<()> {
        match (self.compression, &self.inmemory) {
            (Some(level), Some(_)) => Err(Error::Unsupported {
                construct: format!(
                    "{} both compressed FOR {} and INMEMORY (a compressed table is not copied into the column store; ALTER TABLE {} NO INMEMORY, or MOVE NOCOMPRESS, first)",
                    self.name,
                    level.name(),
                    self.name
                ),
                position: None,
            }),
            _ => Ok(()),
        }
    }

    /// Position of a column by (upper-case) name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }

    /// A table `T` (object 1) of columns `C0`, `C1`, … of these types and nullability,
    /// for tests of code that reads only a definition.
    #[cfg(test)]
    pub fn of_columns(columns: &[(crate::types::DataType, bool)]) -> TableDef {
        TableDef {
            name: "T".into(),
            object_id: 1,
            columns: columns
                .iter()
                .enumerate()
                .map(|(i, &(data_type, nullable))| ColumnDef { name: format!("C{i}"), data_type, nullable })
                .collect(),
            pctfree: 10,
            segment_header: 0,
            created: 0,
            stats: None,
            inmemory: None,
            compression: None,
            constraints: Vec::new(),
            identity: None,
        }
    }

    /// The constraint called `name`.
    pub fn constraint(&self, name: &str) -> Option<&ConstraintDef> {
        self.constraints.iter().find(|c| c.name == name)
    }

    /// Whether the columns `columns` (positions among the table's) hold every column of
    /// an enabled primary or unique key: then no two rows have the same values in them
    /// (where none is NULL).
    pub fn is_unique_on(&self, columns: &[usize]) -> bool {
        self.constraints
            .iter()
            .any(|c| c.enabled && c.kind.key_index().is_some() && c.columns.iter().all(|k| columns.contains(k)))
    }

    /// Whether an enabled NOT NULL or primary key constraint other than `except` keeps
    /// column `column` from being NULL.
    pub fn column_kept_not_null(&self, column: usize, except: &str) -> bool {
        self.constraints.iter().any(|c| {
            c.enabled
                && c.name != except
                && matches!(c.kind, ConstraintKind::NotNull | ConstraintKind::PrimaryKey(_))
                && c.columns.contains(&column)
        })
    }
}

/// A B-tree index on one or more columns of a table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IndexDef {
    pub name: String,
    /// The indexed table's name.
    pub table: String,
    /// The indexed table's data object id (an index outlives no table: DROP TABLE drops it).
    pub table_object_id: u32,
    /// Data object id stamped in every block of the index's segment.
    pub object_id: u32,
    /// Block address of the segment header.
    pub segment_header: u32,
    /// The key columns, as positions among the table's columns, in key order.
    pub columns: Vec<usize>,
    /// Whether two rows may not share a key (rows whose key columns are all NULL excepted,
    /// as they are not indexed).
    pub unique: bool,
    /// Percent of each leaf block a bulk build leaves free for later inserts.
    pub pctfree: u8,
    /// When the index was created (seconds since 1970).
    pub created: i64,
    /// What the last ANALYZE (or the build) found.
    #[serde(default)]
    pub stats: Option<IndexStats>,
}

impl IndexDef {
    /// The types of the key columns of `table` (the indexed table), in key order: what
    /// encodes and decodes the index's keys.
    pub fn key_types(&self, table: &TableDef) -> Vec<crate::types::DataType> {
        self.columns.iter().map(|&c| table.columns[c].data_type).collect()
    }
}

/// Optimizer statistics of a table (`user_tables`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableStats {
    pub num_rows: u64,
    /// Formatted blocks below the high-water mark, the segment header not counted.
    pub blocks: u64,
    /// Average stored row length in bytes (row header and length bytes included).
    pub avg_row_len: u64,
    /// Rows read to compute the statistics (all of them for COMPUTE).
    pub sample_size: u64,
    /// When (seconds since 1970).
    pub analyzed: i64,
    /// One entry per table column, in column order.
    pub columns: Vec<ColumnStats>,
}

/// Optimizer statistics of one column (`user_tab_columns`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColumnStats {
    pub num_distinct: u64,
    pub num_nulls: u64,
    pub low_value: Option<StatValue>,
    pub high_value: Option<StatValue>,
    /// Average stored length in bytes, the length byte included (as Oracle's AVG_COL_LEN).
    pub avg_col_len: u64,
}

impl ColumnStats {
    /// The fraction of the non-NULL rows one value holds, if values are spread evenly
    /// (`1 / NUM_DISTINCT`; 0 for a column with no values).
    pub fn density(&self) -> f64 {
        if self.num_distinct == 0 { 0.0 } else { 1.0 / self.num_distinct as f64 }
    }
}

/// A column value kept in the dictionary (low and high values).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum StatValue {
    /// A number, as its exact decimal text.
    Number(String),
    Text(String),
    /// Seconds since 1970.
    Date(i64),
    /// Microseconds since 1970.
    Timestamp(i64),
    /// Months.
    YearMonth(i64),
    /// Microseconds.
    DaySecond(i64),
}

impl StatValue {
    pub fn from_datum(d: &crate::types::Datum<'_>) -> Option<StatValue> {
        use crate::types::Datum;
        match d {
            Datum::Null => None,
            Datum::Int(i) => Some(StatValue::Number(i.to_string())),
            Datum::Num(n) => Some(StatValue::Number(n.to_string())),
            Datum::Str(s) => Some(StatValue::Text(s.to_string())),
            Datum::Date(t) => Some(StatValue::Date(*t)),
            Datum::Timestamp(t) => Some(StatValue::Timestamp(*t)),
            Datum::YearMonth(m) => Some(StatValue::YearMonth(*m)),
            Datum::DaySecond(us) => Some(StatValue::DaySecond(*us)),
        }
    }

    pub fn to_value(&self) -> crate::types::Value {
        use crate::types::Datum;
        match self {
            StatValue::Number(text) => text
                .parse::<rust_decimal::Decimal>()
                .map(Datum::from_decimal)
                .unwrap_or_else(|_| Datum::Str(text.clone().into())),
            StatValue::Text(s) => Datum::Str(s.clone().into()),
            StatValue::Date(t) => Datum::Date(*t),
            StatValue::Timestamp(t) => Datum::Timestamp(*t),
            StatValue::YearMonth(m) => Datum::YearMonth(*m),
            StatValue::DaySecond(us) => Datum::DaySecond(*us),
        }
    }
}

/// Optimizer statistics of an index (`user_indexes`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct IndexStats {
    /// Branch levels above the leaves (0: the root is the only leaf).
    pub blevel: u32,
    pub leaf_blocks: u64,
    /// Index entries (rows with at least one non-NULL key column).
    pub num_rows: u64,
    pub distinct_keys: u64,
    /// The number of times consecutive index entries, in key order, point to different
    /// table blocks.
    pub clustering_factor: u64,
    /// When (seconds since 1970).
    pub analyzed: i64,
}

/// The dictionary as `dictionary.json` holds it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Dictionary {
    /// The data object id the next segment gets; ids are never reused.
    next_object_id: u32,
    /// Shared handles, so a statement keeps the definition it planned with after a DROP;
    /// stored as plain definitions (serde's `rc` feature: each handle read is a new one).
    tables: BTreeMap<String, Arc<TableDef>>,
    /// Indexes by name.
    #[serde(default)]
    indexes: BTreeMap<String, Arc<IndexDef>>,
    /// Views by name.
    #[serde(default)]
    views: BTreeMap<String, Arc<ViewDef>>,
    /// Sequences by name.
    #[serde(default)]
    sequences: BTreeMap<String, Arc<SequenceDef>>,
    /// Users by name; `SYS` is always among them (added on opening a dictionary of a
    /// build that had no users).
    #[serde(default)]
    users: BTreeMap<String, UserDef>,
    /// The owner of each table, view and sequence that is not SYS's (an index is its
    /// table's owner's).
    #[serde(default)]
    owners: BTreeMap<String, String>,
    /// The object privileges granted on each table, view or sequence that has any.
    #[serde(default)]
    grants: BTreeMap<String, ObjectGrants>,
}

impl Dictionary {
    /// The kind of object that has `name`, if one has: tables, indexes, views and
    /// sequences share one namespace (ORA-00955).
    fn holder_of(&self, name: &str) -> Option<&'static str> {
        if self.tables.contains_key(name) {
            Some("table")
        } else if self.indexes.contains_key(name) {
            Some("index")
        } else if self.views.contains_key(name) {
            Some("view")
        } else {
            self.sequences.contains_key(name).then_some("sequence")
        }
    }

    /// Records `owner` as the owner of the new object `name` (SYS's are not recorded).
    fn set_owner(&mut self, name: &str, owner: &str) {
        if owner == users::SYS {
            self.owners.remove(name);
        } else {
            self.owners.insert(name.to_owned(), owner.to_owned());
        }
    }

    /// Forgets the owner of and the grants on the dropped object `name`.
    fn forget_object(&mut self, name: &str) {
        self.owners.remove(name);
        self.grants.remove(name);
    }

    /// The owner of table, view or sequence `name` (an index: of its table).
    fn owner_of(&self, name: &str) -> &str {
        let object = self.indexes.get(name).map_or(name, |i| i.table.as_str());
        self.owners.get(object).map_or(users::SYS, String::as_str)
    }

    /// Refuses `name` when an object has it.
    fn check_name_free(&self, name: &str) -> Result<()> {
        match self.holder_of(name) {
            Some(kind) => Err(Error::ObjectExists { kind, name: name.to_owned() }),
            None => Ok(()),
        }
    }

    /// Checks what opening relies on (see the module doc); the error names the field.
    fn check(&self, segment_files: &[u16]) -> std::result::Result<(), String> {
        if self.next_object_id < FIRST_USER_OBJECT_ID {
            return Err(format!("next_object_id {} is below {FIRST_USER_OBJECT_ID}", self.next_object_id));
        }
        let mut object_ids = BTreeMap::new();
        for (key, table) in &self.tables {
            let field = format!("tables.{key}");
            table.check(key, segment_files).map_err(|why| format!("{field}.{why}"))?;
            self.check_object_id(&mut object_ids, table.object_id, &field)?;
        }
        for (key, view) in &self.views {
            let field = format!("views.{key}");
            if view.name != *key {
                return Err(format!("{field}.name {} is not its key", view.name));
            }
            if self.tables.contains_key(key) || self.indexes.contains_key(key) {
                return Err(format!("{field}: a table or an index has the name {key}"));
            }
        }
        for (key, table) in &self.tables {
            if let Some(identity) = &table.identity
                && !self.sequences.contains_key(&identity.sequence)
            {
                return Err(format!("tables.{key}.identity.sequence: no sequence {}", identity.sequence));
            }
        }
        for (key, sequence) in &self.sequences {
            let field = format!("sequences.{key}");
            if sequence.name != *key {
                return Err(format!("{field}.name {} is not its key", sequence.name));
            }
            if let Some(kind) = self.holder_of(key).filter(|&k| k != "sequence") {
                return Err(format!("{field}: a {kind} has the name {key}"));
            }
            sequence.check().map_err(|e| format!("{field}: {e}"))?;
        }
        let mut constraint_names = BTreeMap::new();
        for (key, table) in &self.tables {
            for (i, c) in table.constraints.iter().enumerate() {
                let field = format!("tables.{key}.constraints[{i}]");
                if let Some(other) = constraint_names.insert(c.name.as_str(), field.clone()) {
                    return Err(format!("{field}.name {} is also the name of {other}", c.name));
                }
                if let Some(index) = c.kind.key_index().and_then(|k| k.index.as_ref())
                    && self.indexes.get(index).is_none_or(|ix| ix.table_object_id != table.object_id)
                {
                    return Err(format!("{field}: no index {index} of the table"));
                }
            }
        }
        for (key, user) in &self.users {
            user.check(key).map_err(|why| format!("users.{key}.{why}"))?;
        }
        for (object, owner) in &self.owners {
            if !self.users.contains_key(owner) {
                return Err(format!("owners.{object}: no user {owner}"));
            }
            if !matches!(self.holder_of(object), Some("table" | "view" | "sequence")) {
                return Err(format!("owners.{object}: no table, view or sequence {object}"));
            }
        }
        for (object, grants) in &self.grants {
            if !matches!(self.holder_of(object), Some("table" | "view" | "sequence")) {
                return Err(format!("grants.{object}: no table, view or sequence {object}"));
            }
            if let Some(grantee) = grants.keys().find(|g| *g != users::PUBLIC && !self.users.contains_key(*g)) {
                return Err(format!("grants.{object}: no user {grantee}"));
            }
        }
        for (key, index) in &self.indexes {
            let field = format!("indexes.{key}");
            if self.tables.contains_key(key) {
                return Err(format!("{field}: a table has the name {key}"));
            }
            let table = self.tables.get(&index.table).filter(|t| t.object_id == index.table_object_id);
            let Some(table) = table else {
                return Err(format!("{field}.table: no table {} of object id {}", index.table, index.table_object_id));
            };
            index.check(key, table, segment_files).map_err(|why| format!("{field}.{why}"))?;
            self.check_object_id(&mut object_ids, index.object_id, &field)?;
        }
        Ok(())
    }

    /// Records `id` of the object at `field`: unique, and handed out before.
    fn check_object_id(
        &self,
        seen: &mut BTreeMap<u32, String>,
        id: u32,
        field: &str,
    ) -> std::result::Result<(), String> {
        if id >= self.next_object_id {
            return Err(format!("{field}.object_id {id} is not below next_object_id {}", self.next_object_id));
        }
        if let Some(other) = seen.insert(id, field.to_owned()) {
            return Err(format!("{field}.object_id {id} is also the object id of {other}"));
        }
        Ok(())
    }
}

/// SYS as a new dictionary has it: no password, every privilege without grants.
fn sys_user() -> UserDef {
    UserDef::new(users::SYS.to_owned(), crate::types::local_now(), None)
}

/// Checks a segment header's block address: in a datafile segments are made in, past the
/// file's header block.
fn check_segment_header(rdba: u32, segment_files: &[u16]) -> std::result::Result<(), String> {
    use crate::storage::block::{rdba_block, rdba_file};
    if !segment_files.contains(&rdba_file(rdba)) || rdba_block(rdba) == 0 {
        return Err(format!(
            "segment_header {rdba} (file {}, block {}) is not a block of a datafile of segments",
            rdba_file(rdba),
            rdba_block(rdba)
        ));
    }
    Ok(())
}

/// Checks a PCTFREE.
fn check_pctfree(pctfree: u8) -> std::result::Result<(), String> {
    if pctfree > 99 {
        return Err(format!("pctfree {pctfree} is outside 0..=99"));
    }
    Ok(())
}

impl TableDef {
    /// Checks the definition stored under `key`; the error starts with the field's name.
    fn check(&self, key: &str, segment_files: &[u16]) -> std::result::Result<(), String> {
        if self.name != key {
            return Err(format!("name '{}' differs from its key", self.name));
        }
        let width = self.columns.len();
        if width == 0 || width > crate::storage::row::MAX_COLUMNS {
            return Err(format!("columns: {width} columns, not 1..={}", crate::storage::row::MAX_COLUMNS));
        }
        for (i, column) in self.columns.iter().enumerate() {
            if column.name.is_empty() || self.columns[..i].iter().any(|c| c.name == column.name) {
                return Err(format!("columns[{i}].name '{}' is empty or repeated", column.name));
            }
            check_data_type(column.data_type).map_err(|why| format!("columns[{i}].data_type {why}"))?;
        }
        check_pctfree(self.pctfree)?;
        check_segment_header(self.segment_header, segment_files)?;
        if let Some(stats) = &self.stats
            && stats.columns.len() != width
        {
            return Err(format!("stats.columns: {} entries for {width} columns", stats.columns.len()));
        }
        if let Some(spec) = &self.inmemory {
            check_positions(&spec.excluded, width).map_err(|why| format!("inmemory.excluded{why}"))?;
        }
        if let Some(identity) = &self.identity {
            let Some(column) = self.columns.get(identity.column) else {
                return Err(format!(
                    "identity.column: column position {} of a table of {width} columns",
                    identity.column
                ));
            };
            // Its values come from a sequence: a number. (Its NOT NULL is not checked: a
            // database of an earlier build may have dropped that constraint.)
            if !matches!(column.data_type, DataType::Number { .. } | DataType::Integer) {
                return Err(format!("identity.column: column {} is not a number", column.name));
            }
        }
        for (i, c) in self.constraints.iter().enumerate() {
            if c.name.is_empty() {
                return Err(format!("constraints[{i}].name is empty"));
            }
            check_positions(&c.columns, width).map_err(|why| format!("constraints[{i}].columns{why}"))?;
            let keyed = !matches!(c.kind, ConstraintKind::Check { .. });
            if keyed == c.columns.is_empty() {
                return Err(format!("constraints[{i}].columns: {} columns for a {:?}", c.columns.len(), c.kind));
            }
        }
        Ok(())
    }
}

impl IndexDef {
    /// Checks the definition stored under `key`, on `table`; the error starts with the
    /// field's name.
    fn check(&self, key: &str, table: &TableDef, segment_files: &[u16]) -> std::result::Result<(), String> {
        if self.name != key {
            return Err(format!("name '{}' differs from its key", self.name));
        }
        if self.columns.is_empty() {
            return Err("columns: an index has at least one key column".into());
        }
        check_positions(&self.columns, table.columns.len()).map_err(|why| format!("columns{why}"))?;
        check_pctfree(self.pctfree)?;
        check_segment_header(self.segment_header, segment_files)
    }
}

/// Checks column positions of a table of `width` columns: each in range, none twice.
/// The error starts with the entry's index (`[i] ...`).
fn check_positions(positions: &[usize], width: usize) -> std::result::Result<(), String> {
    for (i, &p) in positions.iter().enumerate() {
        if p >= width {
            return Err(format!("[{i}]: column position {p} of a table of {width} columns"));
        }
        if positions[..i].contains(&p) {
            return Err(format!("[{i}]: column position {p} is listed twice"));
        }
    }
    Ok(())
}

/// Checks that `data_type` is one CREATE TABLE makes.
fn check_data_type(data_type: DataType) -> std::result::Result<(), String> {
    use crate::types::{MAX_NUMBER_DIGITS, MAX_STRING_BYTES};
    let fits = match data_type {
        DataType::Number { precision: None, scale } => scale.is_none(),
        DataType::Number { precision: Some(p), scale } => {
            (1..=38).contains(&p) && scale.is_none_or(|s| s <= p && u32::from(s) <= MAX_NUMBER_DIGITS)
        }
        DataType::Varchar2 { max_bytes: n } | DataType::Char { len: n } => (1..=MAX_STRING_BYTES).contains(&n),
        DataType::Integer | DataType::Date => true,
        DataType::Timestamp { precision } => precision <= crate::types::DEFAULT_FRACTION_DIGITS,
        DataType::IntervalYearMonth { year_precision } => year_precision <= 9,
        DataType::IntervalDaySecond { day_precision, second_precision } => {
            day_precision <= 9 && second_precision <= crate::types::DEFAULT_FRACTION_DIGITS
        }
    };
    if fits { Ok(()) } else { Err(format!("{data_type:?} is not a type a column can have")) }
}

/// Refuses a constraint name another table's constraint has (`own`: the table the
/// constraint is of, whose own constraints are being replaced).
fn check_constraint_name(d: &Dictionary, name: &str, own: Option<&str>) -> Result<()> {
    let taken = d.tables.values().any(|t| Some(t.name.as_str()) != own && t.constraint(name).is_some());
    if taken { Err(Error::ConstraintNameUsed { name: name.to_owned() }) } else { Ok(()) }
}

/// Adds new indexes to `d`; tables, indexes, views and sequences share one namespace.
fn add_indexes(d: &mut Dictionary, indexes: Vec<IndexDef>) -> Result<()> {
    for index in indexes {
        d.check_name_free(&index.name)?;
        d.indexes.insert(index.name.clone(), Arc::new(index));
    }
    Ok(())
}

/// The dictionary of one open database.
pub struct Catalog {
    path: PathBuf,
    /// The I/O layer the dictionary file is replaced through.
    io: std::sync::Arc<dyn crate::storage::io::Io>,
    /// Run before each write of the dictionary: makes durable the redo of every block
    /// change the new dictionary may name (a new segment's header), so that the
    /// dictionary never names a block that recovery cannot rebuild.
    before_write: std::sync::OnceLock<Box<dyn Fn() -> Result<()> + Send + Sync>>,
    /// Read by every statement that names a table; a DDL change holds the upgradable guard
    /// while it writes the file, and the write guard only to publish the written change.
    dictionary: RwLock<Dictionary>,
    /// Changes published since the database opened: a plan made at one version is made
    /// again once the version moves on.
    version: AtomicU64,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog").field("path", &self.path).field("version", &self.version).finish_non_exhaustive()
    }
}

impl Catalog {
    /// An empty dictionary for a new database.
    pub fn create(io: std::sync::Arc<dyn crate::storage::io::Io>, dir: &Path) -> Result<Catalog> {
        let dictionary = Dictionary {
            next_object_id: FIRST_USER_OBJECT_ID,
            tables: BTreeMap::new(),
            indexes: BTreeMap::new(),
            views: BTreeMap::new(),
            sequences: BTreeMap::new(),
            users: BTreeMap::from([(users::SYS.to_owned(), sys_user())]),
            owners: BTreeMap::new(),
            grants: BTreeMap::new(),
        };
        let path = dir.join(DICTIONARY_FILE);
        crate::storage::write_json_with(io.as_ref(), &path, &dictionary)?;
        Ok(Catalog::of(io, path, dictionary))
    }

    /// Reads and checks the dictionary of the database in `dir`, whose segments are made
    /// in the datafiles numbered `segment_files`.
    pub fn open(io: std::sync::Arc<dyn crate::storage::io::Io>, dir: &Path, segment_files: &[u16]) -> Result<Catalog> {
        let mut dictionary: Dictionary = crate::storage::read_json(dir, DICTIONARY_FILE, "valid")?;
        dictionary.users.entry(users::SYS.to_owned()).or_insert_with(sys_user);
        dictionary.check(segment_files).map_err(|reason| Error::NotADatabase {
            path: dir.to_owned(),
            reason: format!("{DICTIONARY_FILE}: {reason}"),
        })?;
        Ok(Catalog::of(io, dir.join(DICTIONARY_FILE), dictionary))
    }

    fn of(io: std::sync::Arc<dyn crate::storage::io::Io>, path: PathBuf, dictionary: Dictionary) -> Catalog {
        Catalog {
            path,
            io,
            before_write: std::sync::OnceLock::new(),
            dictionary: RwLock::new(dictionary),
            version: AtomicU64::new(0),
        }
    }

    /// Sets what runs before each write of the dictionary (once).
    pub fn set_before_write(&self, hook: Box<dyn Fn() -> Result<()> + Send + Sync>) {
        let _ = self.before_write.set(hook);
    }

    /// How many changes were published since the database opened (see `version`).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The table called `name` (already upper-cased or quoted-exact).
    pub fn table(&self, name: &str) -> Option<Arc<TableDef>> {
        self.dictionary.read().tables.get(name).cloned()
    }

    /// All tables by name.
    pub fn tables(&self) -> Vec<Arc<TableDef>> {
        self.dictionary.read().tables.values().cloned().collect()
    }

    /// The index called `name`.
    pub fn index(&self, name: &str) -> Option<Arc<IndexDef>> {
        self.dictionary.read().indexes.get(name).cloned()
    }

    /// All indexes by name.
    pub fn indexes(&self) -> Vec<Arc<IndexDef>> {
        self.dictionary.read().indexes.values().cloned().collect()
    }

    /// The indexes of the table with data object id `table_object_id`, by name.
    pub fn indexes_of(&self, table_object_id: u32) -> Vec<Arc<IndexDef>> {
        self.dictionary.read().indexes.values().filter(|i| i.table_object_id == table_object_id).cloned().collect()
    }

    /// Adds an index and saves the dictionary. Index and table names share one namespace.
    pub fn add_index(&self, index: IndexDef) -> Result<()> {
        self.change(|d| add_indexes(d, vec![index]))
    }

    /// Removes an index and saves the dictionary.
    pub fn remove_index(&self, name: &str) -> Result<Arc<IndexDef>> {
        self.change(|d| {
            d.indexes.remove(name).ok_or_else(|| Error::UnknownObject { kind: "index", name: name.to_owned() })
        })
    }

    /// Replaces the definition of an existing index (a TRUNCATE gives it a new segment)
    /// and saves the dictionary.
    pub fn replace_index(&self, index: IndexDef) -> Result<()> {
        self.change(|d| match d.indexes.get_mut(&index.name) {
            Some(slot) => {
                *slot = Arc::new(index);
                Ok(())
            }
            None => Err(Error::UnknownObject { kind: "index", name: index.name }),
        })
    }

    /// Records the statistics ANALYZE gathered for a table and its indexes, and saves the
    /// dictionary. Fails if the table or an index was dropped meanwhile.
    pub fn set_statistics(&self, table: &str, stats: TableStats, indexes: Vec<(String, IndexStats)>) -> Result<()> {
        self.change(|d| {
            let t =
                d.tables.get_mut(table).ok_or_else(|| Error::UnknownObject { kind: "table", name: table.into() })?;
            Arc::make_mut(t).stats = Some(stats);
            for (name, s) in indexes {
                let i = d.indexes.get_mut(&name).ok_or(Error::UnknownObject { kind: "index", name })?;
                Arc::make_mut(i).stats = Some(s);
            }
            Ok(())
        })
    }

    /// Marks a table for the column store (`Some`) or takes the mark away (`None`), and
    /// saves the dictionary.
    pub fn set_inmemory(&self, table: &str, spec: Option<InMemorySpec>) -> Result<Arc<TableDef>> {
        self.change(|d| {
            let t =
                d.tables.get_mut(table).ok_or_else(|| Error::UnknownObject { kind: "table", name: table.into() })?;
            Arc::make_mut(t).inmemory = spec;
            Ok(t.clone())
        })
    }

    /// Reserves a new data object id (written with the next change of the dictionary).
    pub fn next_object_id(&self) -> u32 {
        let mut d = self.dictionary.write();
        let id = d.next_object_id;
        d.next_object_id += 1;
        id
    }

    /// Adds a table with the indexes of its keys and the sequence of its identity column,
    /// in one change, and saves the dictionary. Constraint names are unique in the
    /// database (ORA-02264).
    pub fn add_table_with(
        &self,
        table: TableDef,
        indexes: Vec<IndexDef>,
        sequence: Option<SequenceDef>,
        owner: &str,
    ) -> Result<()> {
        self.change(|d| {
            d.check_name_free(&table.name)?;
            if let Some(sequence) = sequence {
                d.check_name_free(&sequence.name)?;
                d.set_owner(&sequence.name, owner);
                d.sequences.insert(sequence.name.clone(), Arc::new(sequence));
            }
            d.set_owner(&table.name, owner);
            for c in &table.constraints {
                check_constraint_name(d, &c.name, None)?;
            }
            d.tables.insert(table.name.clone(), Arc::new(table));
            add_indexes(d, indexes)
        })
    }

    /// Sets the constraints of a table and its columns' NOT NULL flags to those of
    /// `table` (the rest of its definition, such as statistics, stays as the dictionary
    /// has it), adding the indexes `added` and removing those named `removed`, in one
    /// change; saves the dictionary. Each of the table's constraint names must be unused
    /// by other tables (ORA-02264).
    pub fn alter_table(&self, table: TableDef, added: Vec<IndexDef>, removed: &[String]) -> Result<()> {
        self.change(|d| {
            for c in &table.constraints {
                check_constraint_name(d, &c.name, Some(&table.name))?;
            }
            let current = d.tables.get_mut(&table.name).filter(|t| t.object_id == table.object_id);
            let Some(current) = current else {
                return Err(Error::UnknownObject { kind: "table", name: table.name.clone() });
            };
            let current = Arc::make_mut(current);
            for (column, changed) in current.columns.iter_mut().zip(&table.columns) {
                column.nullable = changed.nullable;
            }
            current.constraints = table.constraints;
            for name in removed {
                d.indexes.remove(name).ok_or_else(|| Error::UnknownObject { kind: "index", name: name.clone() })?;
            }
            add_indexes(d, added)
        })
    }

    /// The table that has the constraint called `name`.
    pub fn constraint_table(&self, name: &str) -> Option<Arc<TableDef>> {
        self.dictionary.read().tables.values().find(|t| t.constraint(name).is_some()).cloned()
    }

    /// Replaces the definition of an existing table and of its indexes in one change (a
    /// table moved into new segments) and saves the dictionary.
    pub fn replace_table(&self, table: TableDef, indexes: Vec<IndexDef>) -> Result<()> {
        self.change(|d| {
            let slot = d
                .tables
                .get_mut(&table.name)
                .ok_or_else(|| Error::UnknownObject { kind: "table", name: table.name.clone() })?;
            *slot = Arc::new(table);
            for index in indexes {
                let i = d
                    .indexes
                    .get_mut(&index.name)
                    .ok_or(Error::UnknownObject { kind: "index", name: index.name.clone() })?;
                *i = Arc::new(index);
            }
            Ok(())
        })
    }

    /// Removes a table with its indexes and the sequence of its identity column, and saves
    /// the dictionary; returns the table and its indexes.
    pub fn remove_table(&self, name: &str) -> Result<(Arc<TableDef>, Vec<Arc<IndexDef>>)> {
        self.change(|d| {
            let table =
                d.tables.remove(name).ok_or_else(|| Error::UnknownObject { kind: "table", name: name.to_owned() })?;
            if let Some(identity) = &table.identity {
                d.sequences.remove(&identity.sequence);
                d.forget_object(&identity.sequence);
            }
            d.forget_object(name);
            let names: Vec<String> =
                d.indexes.values().filter(|i| i.table_object_id == table.object_id).map(|i| i.name.clone()).collect();
            let indexes = names.iter().filter_map(|n| d.indexes.remove(n)).collect();
            Ok((table, indexes))
        })
    }

    pub fn view(&self, name: &str) -> Option<Arc<ViewDef>> {
        self.dictionary.read().views.get(name).cloned()
    }

    pub fn views(&self) -> Vec<Arc<ViewDef>> {
        self.dictionary.read().views.values().cloned().collect()
    }

    /// Adds `view`, or with `replace` puts it in the place of the view of its name; its
    /// name must not be a table's or an index's (ORA-00955).
    /// Creates (or with `replace`, replaces) a view; a new view belongs to `owner`, a
    /// replaced one keeps its owner and grants.
    pub fn create_view(&self, view: ViewDef, replace: bool, owner: &str) -> Result<()> {
        self.change(|d| {
            if !(replace && d.views.contains_key(&view.name)) {
                d.check_name_free(&view.name)?;
                d.set_owner(&view.name, owner);
            }
            d.views.insert(view.name.clone(), Arc::new(view));
            Ok(())
        })
    }

    pub fn remove_view(&self, name: &str) -> Result<Arc<ViewDef>> {
        self.change(|d| {
            let view =
                d.views.remove(name).ok_or_else(|| Error::UnknownObject { kind: "view", name: name.to_owned() })?;
            d.forget_object(name);
            Ok(view)
        })
    }

    pub fn sequence(&self, name: &str) -> Option<Arc<SequenceDef>> {
        self.dictionary.read().sequences.get(name).cloned()
    }

    pub fn sequences(&self) -> Vec<Arc<SequenceDef>> {
        self.dictionary.read().sequences.values().cloned().collect()
    }

    /// Adds `sequence`; its name must be no other object's (ORA-00955).
    pub fn create_sequence(&self, sequence: SequenceDef, owner: &str) -> Result<()> {
        self.change(|d| {
            d.check_name_free(&sequence.name)?;
            d.set_owner(&sequence.name, owner);
            d.sequences.insert(sequence.name.clone(), Arc::new(sequence));
            Ok(())
        })
    }

    /// Puts `sequence` in the place of the sequence of its name (ALTER SEQUENCE).
    pub fn replace_sequence(&self, sequence: SequenceDef) -> Result<()> {
        self.change(|d| {
            let Some(slot) = d.sequences.get_mut(&sequence.name) else {
                return Err(Error::UnknownObject { kind: "sequence", name: sequence.name });
            };
            *slot = Arc::new(sequence);
            Ok(())
        })
    }

    /// Writes a sequence's new `last_number` (values below it go to a cache), durably,
    /// without making plans again: no plan depends on it.
    pub fn set_sequence_last_number(&self, name: &str, last_number: i128) -> Result<()> {
        self.write_change(false, |d| {
            let Some(slot) = d.sequences.get_mut(name) else {
                return Err(Error::UnknownObject { kind: "sequence", name: name.to_owned() });
            };
            let sequence = Arc::make_mut(slot);
            sequence.last_number = last_number;
            sequence.used = true;
            Ok(())
        })
    }

    pub fn remove_sequence(&self, name: &str) -> Result<Arc<SequenceDef>> {
        self.change(|d| {
            let sequence = d
                .sequences
                .remove(name)
                .ok_or_else(|| Error::UnknownObject { kind: "sequence", name: name.to_owned() })?;
            d.forget_object(name);
            Ok(sequence)
        })
    }

    /// The user named `name`.
    pub fn user(&self, name: &str) -> Option<UserDef> {
        self.dictionary.read().users.get(name).cloned()
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<UserDef> {
        self.dictionary.read().users.values().cloned().collect()
    }

    /// Adds a user (ORA-01920 if a user has the name).
    pub fn create_user(&self, user: UserDef) -> Result<()> {
        self.change(|d| {
            if d.users.contains_key(&user.name) || user.name == users::PUBLIC {
                return Err(Error::ObjectExists { kind: "user", name: user.name.clone() });
            }
            d.users.insert(user.name.clone(), user);
            Ok(())
        })
    }

    /// Changes user `name` (its password, its lock, its grants) with `alter`, which sees
    /// the user as the dictionary has it. Plans made before are made again: a revoked
    /// privilege stops a kept plan.
    pub fn alter_user<R>(&self, name: &str, alter: impl FnOnce(&mut UserDef) -> Result<R>) -> Result<R> {
        self.change(|d| {
            let user =
                d.users.get_mut(name).ok_or_else(|| Error::UnknownObject { kind: "user", name: name.to_owned() })?;
            alter(user)
        })
    }

    /// Removes user `name`, with its grants on objects. The objects it owns must be gone
    /// first (the caller drops them, as `DROP USER ... CASCADE`); SYS cannot be dropped.
    pub fn drop_user(&self, name: &str) -> Result<UserDef> {
        self.change(|d| {
            if name == users::SYS {
                return Err(Error::InsufficientPrivileges { what: "SYS cannot be dropped".into() });
            }
            if let Some(object) = d.owners.iter().find(|(_, owner)| *owner == name).map(|(o, _)| o) {
                return Err(Error::InvalidValue {
                    context: name.to_owned(),
                    message: format!("ORA-01922: CASCADE must be specified to drop '{name}' (it owns {object})"),
                });
            }
            let user =
                d.users.remove(name).ok_or_else(|| Error::UnknownObject { kind: "user", name: name.to_owned() })?;
            for grants in d.grants.values_mut() {
                grants.remove(name);
            }
            d.grants.retain(|_, grants| !grants.is_empty());
            Ok(user)
        })
    }

    /// What kind of object has `name` ("table", "index", "view", "sequence"), if one has.
    pub fn kind_of(&self, name: &str) -> Option<&'static str> {
        self.dictionary.read().holder_of(name)
    }

    /// The owner of table, view or sequence `name` (of an index: its table's owner);
    /// SYS for objects nobody else created.
    pub fn owner_of(&self, name: &str) -> String {
        self.dictionary.read().owner_of(name).to_owned()
    }

    /// The tables, views and sequences `user` owns (SYS: those nobody else owns).
    pub fn objects_owned_by(&self, user: &str) -> Vec<String> {
        let d = self.dictionary.read();
        let objects = d.tables.keys().chain(d.views.keys()).chain(d.sequences.keys());
        objects.filter(|o| d.owner_of(o) == user).cloned().collect()
    }

    /// The object privileges granted on table or view `object`.
    pub fn grants_on(&self, object: &str) -> ObjectGrants {
        self.dictionary.read().grants.get(object).cloned().unwrap_or_default()
    }

    /// Every object's grants, by object.
    pub fn all_grants(&self) -> Vec<(String, ObjectGrants)> {
        self.dictionary.read().grants.iter().map(|(o, g)| (o.clone(), g.clone())).collect()
    }

    /// Whether `user` may use `privilege` on table, view or sequence `object`: SYS may,
    /// its owner may, a grant to the user or to PUBLIC lets it, and so does `any` (the
    /// system privilege that covers every such object: SELECT ANY TABLE, ...).
    pub fn holds(&self, user: &str, object: &str, privilege: ObjectPrivilege, any: Option<SystemPrivilege>) -> bool {
        let d = self.dictionary.read();
        user == users::SYS
            || d.owner_of(object) == user
            || d.grants.get(object).is_some_and(|grants| {
                [user, users::PUBLIC].iter().any(|g| grants.get(*g).is_some_and(|p| p.contains_key(&privilege)))
            })
            || any.is_some_and(|any| d.users.get(user).is_some_and(|u| u.has(any)))
    }

    /// Grants `privileges` on table, view or sequence `object` to `grantee` (a user or
    /// PUBLIC), `grantable` if WITH GRANT OPTION; a privilege granted before keeps its
    /// option if it had it. On a sequence only SELECT (its NEXTVAL and CURRVAL).
    pub fn grant_object(
        &self,
        object: &str,
        grantee: &str,
        privileges: &[ObjectPrivilege],
        grantable: bool,
    ) -> Result<()> {
        self.change(|d| {
            match d.holder_of(object) {
                Some("table" | "view") => {}
                Some("sequence") if privileges.iter().all(|p| *p == ObjectPrivilege::Select) => {}
                Some("sequence") => {
                    return Err(Error::InvalidValue {
                        context: object.to_owned(),
                        message: "ORA-02205: only SELECT privilege is valid for sequences".into(),
                    });
                }
                _ => return Err(Error::UnknownObject { kind: "table, view or sequence", name: object.to_owned() }),
            }
            if grantee != users::PUBLIC && !d.users.contains_key(grantee) {
                return Err(Error::UnknownObject { kind: "user or role", name: grantee.to_owned() });
            }
            let held = d.grants.entry(object.to_owned()).or_default().entry(grantee.to_owned()).or_default();
            for p in privileges {
                *held.entry(*p).or_insert(false) |= grantable;
            }
            Ok(())
        })
    }

    /// Revokes `privileges` on `object` from `grantee` (`None`: all it holds, as REVOKE
    /// ALL); ORA-01927 if one was not granted (none, for `None`).
    pub fn revoke_object(&self, object: &str, grantee: &str, privileges: Option<&[ObjectPrivilege]>) -> Result<()> {
        self.change(|d| {
            let held = d.grants.get_mut(object).and_then(|g| g.get_mut(grantee));
            let granted = |h: &BTreeMap<ObjectPrivilege, bool>| match privileges {
                Some(privileges) => privileges.iter().all(|p| h.contains_key(p)),
                None => !h.is_empty(),
            };
            let Some(held) = held.filter(|h| granted(h)) else {
                return Err(Error::InvalidValue {
                    context: object.to_owned(),
                    message: format!("ORA-01927: cannot REVOKE privileges you did not grant (to {grantee})"),
                });
            };
            match privileges {
                Some(privileges) => privileges.iter().for_each(|p| _ = held.remove(p)),
                None => held.clear(),
            }
            let grants = d.grants.get_mut(object).expect("found above");
            grants.retain(|_, h| !h.is_empty());
            if grants.is_empty() {
                d.grants.remove(object);
            }
            Ok(())
        })
    }

    /// Makes `change` to a copy of the dictionary, writes the copy, then publishes it; one
    /// change at a time. Nothing changes if `change` or the write fails.
    fn change<R>(&self, change: impl FnOnce(&mut Dictionary) -> Result<R>) -> Result<R> {
        self.write_change(true, change)
    }

    /// [`Catalog::change`], moving the version on (plans made before are made again)
    /// when `replans`.
    fn write_change<R>(&self, replans: bool, change: impl FnOnce(&mut Dictionary) -> Result<R>) -> Result<R> {
        let current = self.dictionary.upgradable_read();
        let mut changed = current.clone();
        let result = change(&mut changed)?;
        if let Some(hook) = self.before_write.get() {
            hook()?;
        }
        crate::storage::write_json_with(self.io.as_ref(), &self.path, &changed)?;
        *RwLockUpgradableReadGuard::upgrade(current) = changed;
        if replans {
            self.version.fetch_add(1, Ordering::Release);
        }
        Ok(result)
    }
}
