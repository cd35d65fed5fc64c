//! The data dictionary: tables, their columns and segments.
//!
//! Kept in memory behind a lock and written whole to `dictionary.json` in the database
//! directory (temporary file, fsync, rename) after every DDL statement. Names are stored
//! as Oracle stores them: unquoted identifiers in upper case.

use crate::error::{Error, Result};
use crate::types::DataType;
use parking_lot::RwLock;
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

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Dictionary {
    next_object_id: u32,
    tables: BTreeMap<String, TableDef>,
}

/// The dictionary of one open database.
#[derive(Debug)]
pub struct Catalog {
    path: PathBuf,
    dictionary: RwLock<Dictionary>,
    /// Shared handles to the current definitions, rebuilt on DDL.
    tables: RwLock<BTreeMap<String, Arc<TableDef>>>,
}

impl Catalog {
    /// An empty dictionary for a new database.
    pub fn create(dir: &Path) -> Result<Catalog> {
        let catalog =
            Catalog::from_dictionary(dir, Dictionary { next_object_id: FIRST_USER_OBJECT_ID, tables: BTreeMap::new() });
        catalog.save()?;
        Ok(catalog)
    }

    /// Reads the dictionary of the database in `dir`.
    pub fn open(dir: &Path) -> Result<Catalog> {
        let path = dir.join(DICTIONARY_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io("read", &path, e))?;
        let dictionary: Dictionary = serde_json::from_str(&text).map_err(|e| Error::NotADatabase {
            path: dir.to_owned(),
            reason: format!("{DICTIONARY_FILE} is not valid: {e}"),
        })?;
        Ok(Catalog::from_dictionary(dir, dictionary))
    }

    fn from_dictionary(dir: &Path, dictionary: Dictionary) -> Catalog {
        let tables = dictionary.tables.iter().map(|(k, v)| (k.clone(), Arc::new(v.clone()))).collect();
        Catalog { path: dir.join(DICTIONARY_FILE), dictionary: RwLock::new(dictionary), tables: RwLock::new(tables) }
    }

    fn save(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&*self.dictionary.read()).expect("the dictionary serialises");
        crate::storage::write_atomically(&self.path, text.as_bytes())
    }

    fn refresh(&self) {
        let d = self.dictionary.read();
        *self.tables.write() = d.tables.iter().map(|(k, v)| (k.clone(), Arc::new(v.clone()))).collect();
    }

    /// The table called `name` (already upper-cased or quoted-exact).
    pub fn table(&self, name: &str) -> Option<Arc<TableDef>> {
        self.tables.read().get(name).cloned()
    }

    /// All tables by name.
    pub fn tables(&self) -> Vec<Arc<TableDef>> {
        self.tables.read().values().cloned().collect()
    }

    /// Reserves a new data object id.
    pub fn next_object_id(&self) -> u32 {
        let mut d = self.dictionary.write();
        let id = d.next_object_id;
        d.next_object_id += 1;
        id
    }

    /// Adds a table and saves the dictionary.
    pub fn add_table(&self, table: TableDef) -> Result<()> {
        {
            let mut d = self.dictionary.write();
            if d.tables.contains_key(&table.name) {
                return Err(Error::ObjectExists { kind: "table", name: table.name });
            }
            d.tables.insert(table.name.clone(), table);
        }
        self.refresh();
        self.save()
    }

    /// Removes a table and saves the dictionary.
    pub fn remove_table(&self, name: &str) -> Result<TableDef> {
        let removed = self
            .dictionary
            .write()
            .tables
            .remove(name)
            .ok_or_else(|| Error::UnknownObject { kind: "table", name: name.to_owned() })?;
        self.refresh();
        self.save()?;
        Ok(removed)
    }
}
