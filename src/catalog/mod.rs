//! The data dictionary: tables, their columns and segments.
//!
//! Kept in memory behind one lock and written whole to `dictionary.json` in the database
//! directory (temporary file, fsync, rename) by every DDL statement. Names are stored as
//! Oracle stores them: unquoted identifiers in upper case.
//!
//! Invariant: the file holds every change the memory shows. DDL statements change the
//! dictionary one at a time: each builds the changed dictionary beside the current one,
//! writes it, and only then publishes it, so a failed write changes nothing and two
//! concurrent CREATEs cannot write their snapshots in the wrong order. Queries keep reading
//! the current dictionary while a change is being written.

use crate::error::{Error, Result};
use crate::types::DataType;
use parking_lot::{RwLock, RwLockUpgradableReadGuard};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
}

impl TableDef {
    /// Position of a column by (upper-case) name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// The dictionary as `dictionary.json` holds it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Dictionary {
    /// The data object id the next segment gets; ids are never reused.
    next_object_id: u32,
    /// Shared handles, so a statement keeps the definition it planned with after a DROP.
    #[serde(with = "shared_tables")]
    tables: BTreeMap<String, Arc<TableDef>>,
}

/// The dictionary of one open database.
#[derive(Debug)]
pub struct Catalog {
    path: PathBuf,
    /// Read by every statement that names a table; a DDL change holds the upgradable guard
    /// while it writes the file, and the write guard only to publish the written change.
    dictionary: RwLock<Dictionary>,
}

impl Catalog {
    /// An empty dictionary for a new database.
    pub fn create(dir: &Path) -> Result<Catalog> {
        let dictionary = Dictionary { next_object_id: FIRST_USER_OBJECT_ID, tables: BTreeMap::new() };
        let path = dir.join(DICTIONARY_FILE);
        crate::storage::write_json(&path, &dictionary)?;
        Ok(Catalog { path, dictionary: RwLock::new(dictionary) })
    }

    /// Reads the dictionary of the database in `dir`.
    pub fn open(dir: &Path) -> Result<Catalog> {
        let dictionary = crate::storage::read_json(dir, DICTIONARY_FILE, "valid")?;
        Ok(Catalog { path: dir.join(DICTIONARY_FILE), dictionary: RwLock::new(dictionary) })
    }

    /// The table called `name` (already upper-cased or quoted-exact).
    pub fn table(&self, name: &str) -> Option<Arc<TableDef>> {
        self.dictionary.read().tables.get(name).cloned()
    }

    /// All tables by name.
    pub fn tables(&self) -> Vec<Arc<TableDef>> {
        self.dictionary.read().tables.values().cloned().collect()
    }

    /// Reserves a new data object id (written with the next change of the dictionary).
    pub fn next_object_id(&self) -> u32 {
        let mut d = self.dictionary.write();
        let id = d.next_object_id;
        d.next_object_id += 1;
        id
    }

    /// Adds a table and saves the dictionary.
    pub fn add_table(&self, table: TableDef) -> Result<()> {
        self.change(|d| {
            if d.tables.contains_key(&table.name) {
                return Err(Error::ObjectExists { kind: "table", name: table.name });
            }
            d.tables.insert(table.name.clone(), Arc::new(table));
            Ok(())
        })
    }

    /// Removes a table and saves the dictionary.
    pub fn remove_table(&self, name: &str) -> Result<Arc<TableDef>> {
        self.change(|d| {
            d.tables.remove(name).ok_or_else(|| Error::UnknownObject { kind: "table", name: name.to_owned() })
        })
    }

    /// Makes `change` to a copy of the dictionary, writes the copy, then publishes it; one
    /// change at a time. Nothing changes if `change` or the write fails.
    fn change<R>(&self, change: impl FnOnce(&mut Dictionary) -> Result<R>) -> Result<R> {
        let current = self.dictionary.upgradable_read();
        let mut changed = current.clone();
        let result = change(&mut changed)?;
        crate::storage::write_json(&self.path, &changed)?;
        *RwLockUpgradableReadGuard::upgrade(current) = changed;
        Ok(result)
    }
}

/// (De)serialises the shared table handles as plain definitions.
mod shared_tables {
    use super::TableDef;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::collections::BTreeMap;
    use std::sync::Arc;

    pub fn serialize<S: Serializer>(tables: &BTreeMap<String, Arc<TableDef>>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(tables.iter().map(|(name, table)| (name, &**table)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, Arc<TableDef>>, D::Error> {
        let tables = BTreeMap::<String, TableDef>::deserialize(d)?;
        Ok(tables.into_iter().map(|(name, table)| (name, Arc::new(table))).collect())
    }
}
