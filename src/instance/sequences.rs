//! The sequences' caches, which every session shares, and each session's CURRVAL.
//!
//! A sequence's cache holds the values the last refill took: `cache_size` of them (one
//! for NOCACHE), handed out in order. A refill writes the sequence's new `last_number` to
//! the dictionary, durably, before handing out the first of them, so a crash skips the
//! values a cache still held and never repeats one; a clean close writes the first unused
//! value back ([`SequenceCache::write_back`]), so that a close skips none. ALTER and DROP
//! SEQUENCE empty the cache, under its lock, as they change the definition. A session
//! reads a sequence only if its user may (`SequenceSource::may_read`: the owner, SELECT on
//! it, or SELECT ANY SEQUENCE).
//!
//! Invariant: a value is handed out at most once, by the holder of its sequence's cache
//! lock; the dictionary's `last_number` is past every value a cache holds.

use super::DbInner;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::expr::functions::SequenceSource;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// The values of one sequence a refill took and no NEXTVAL has handed out yet.
#[derive(Debug, Default)]
struct Cached {
    next: i128,
    left: u64,
    increment: i128,
}

/// Every sequence's cache, by name.
#[derive(Debug, Default)]
pub(crate) struct SequenceCache {
    caches: Mutex<HashMap<String, Arc<Mutex<Cached>>>>,
}

fn unknown(name: &str) -> Error {
    Error::UnknownObject { kind: "sequence", name: name.to_owned() }
}

impl SequenceCache {
    fn cache_of(&self, name: &str) -> Arc<Mutex<Cached>> {
        self.caches.lock().entry(name.to_owned()).or_default().clone()
    }

    /// The next value of sequence `name`, refilling its cache from `catalog` when empty.
    pub(crate) fn next_value(&self, catalog: &Catalog, name: &str) -> Result<i128> {
        let cache = self.cache_of(name);
        let mut c = cache.lock();
        if c.left == 0 {
            let def = catalog.sequence(name).ok_or_else(|| unknown(name))?;
            let (values, last_number) = def.take_values()?;
            catalog.set_sequence_last_number(name, last_number)?;
            *c = Cached { next: values.first, left: values.count, increment: def.increment_by };
        }
        let value = c.next;
        c.next += c.increment;
        c.left -= 1;
        Ok(value)
    }

    /// Runs `change` holding sequence `name`'s cache, given the value the cache would
    /// hand out next (`None` when empty), and empties the cache if `change` succeeds.
    pub(crate) fn emptied<R>(&self, name: &str, change: impl FnOnce(Option<i128>) -> Result<R>) -> Result<R> {
        let cache = self.cache_of(name);
        let mut c = cache.lock();
        let result = change((c.left > 0).then_some(c.next))?;
        *c = Cached::default();
        Ok(result)
    }

    /// Writes each cache's first unused value back as its sequence's `last_number`, and
    /// empties the caches: a clean close skips no value.
    pub(crate) fn write_back(&self, catalog: &Catalog) -> Result<()> {
        let caches: Vec<(String, Arc<Mutex<Cached>>)> =
            self.caches.lock().iter().map(|(n, c)| (n.clone(), c.clone())).collect();
        for (name, cache) in caches {
            let mut c = cache.lock();
            if c.left > 0 && catalog.sequence(&name).is_some() {
                catalog.set_sequence_last_number(&name, c.next)?;
            }
            *c = Cached::default();
        }
        Ok(())
    }
}

/// One session's view of the sequences: NEXTVAL through the shared caches, and the value
/// each sequence's last NEXTVAL gave this session (CURRVAL).
#[derive(Debug)]
pub(crate) struct SessionSequences {
    db: Weak<DbInner>,
    /// The session's: whose privileges a NEXTVAL needs.
    info: Arc<crate::stats::SessionInfo>,
    current: Mutex<HashMap<String, i128>>,
}

impl SessionSequences {
    pub(crate) fn new(db: &Arc<DbInner>, info: Arc<crate::stats::SessionInfo>) -> SessionSequences {
        SessionSequences { db: Arc::downgrade(db), info, current: Mutex::default() }
    }

    fn db(&self) -> Result<Arc<DbInner>> {
        self.db.upgrade().ok_or_else(|| Error::InstanceFailed { reason: "the database is closed".into() })
    }
}

impl SequenceSource for SessionSequences {
    fn exists(&self, name: &str) -> bool {
        self.db().is_ok_and(|db| db.catalog.sequence(name).is_some())
    }

    fn may_read(&self, name: &str) -> Result<()> {
        use crate::catalog::{ObjectPrivilege, SystemPrivilege};
        let user = self.info.user.lock().clone();
        if self.db()?.catalog.holds(&user, name, ObjectPrivilege::Select, Some(SystemPrivilege::SelectAnySequence)) {
            return Ok(());
        }
        Err(Error::InsufficientPrivileges { what: format!("{user} may not read sequence {name}") })
    }

    fn next_value(&self, name: &str) -> Result<i128> {
        let db = self.db()?;
        db.check_alive()?;
        let value = db.sequences.next_value(&db.catalog, name)?;
        self.current.lock().insert(name.to_owned(), value);
        Ok(value)
    }

    fn current_value(&self, name: &str) -> Result<i128> {
        self.current.lock().get(name).copied().ok_or_else(|| Error::InvalidValue {
            context: format!("{name}.CURRVAL"),
            message: format!("ORA-08002: sequence {name}.CURRVAL is not yet defined in this session"),
        })
    }
}
