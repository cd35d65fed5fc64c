//! What population needs of the database it runs in, as a trait the instance implements
//! ([`PopulationHost`]): the column store, the dictionary, the sessions' registry (each
//! worker is a session), the population's parameters as they are now, the current SCN,
//! and a worker's access context (the cache, undo, locks and space its consistent reads
//! go through). Population sees the database only through it, so the column store sits
//! below the instance that starts it.

use super::InMemoryStore;
use crate::access::AccessContext;
use crate::catalog::Catalog;
use crate::stats::{Registry, SessionStats};
use std::sync::Weak;

/// The database, as population sees it.
pub trait PopulationHost: Send + Sync {
    /// The column store.
    fn store(&self) -> &InMemoryStore;

    /// The dictionary: which tables are marked INMEMORY.
    fn catalog(&self) -> &Catalog;

    /// The sessions' registry, where each worker registers as a session.
    fn sessions(&self) -> &Registry;

    /// The population's parameters, as they are now (ALTER SYSTEM changes them).
    fn settings(&self) -> PopulationSettings;

    /// The database's current system change number.
    fn current_scn(&self) -> u64;

    /// The access context of a worker with statistics `stats`, reading as of `snapshot`
    /// with the database's multiblock read count.
    fn worker_context<'a>(&'a self, stats: &'a SessionStats, snapshot: u64) -> AccessContext<'a>;

    /// The host held weakly: what an idle worker holds, so that it never keeps the
    /// database open.
    fn weak(&self) -> Weak<dyn PopulationHost>;
}

/// The parameters population follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PopulationSettings {
    /// `inmemory_size`: the column store's bytes (0: the store is off).
    pub inmemory_size: u64,
    /// `pre_page_sga`: touch the In-Memory Area's pages when it is mapped.
    pub pre_page_sga: bool,
    /// `inmemory_max_populate_servers`: how many workers populate.
    pub max_populate_servers: usize,
    /// `_inmemory_imcu_target_rows`: about how many rows a unit holds.
    pub imcu_target_rows: u64,
}
