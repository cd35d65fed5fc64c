//! The instance as the column store's population sees it: [`PopulationHost`] for
//! [`DbInner`], which hands population the store, the dictionary, the sessions' registry,
//! the parameters it follows and its workers' access contexts, and nothing else.

use super::{DbInner, params};
use crate::access::AccessContext;
use crate::catalog::Catalog;
use crate::inmemory::InMemoryStore;
use crate::inmemory::host::{PopulationHost, PopulationSettings};
use crate::stats::{Registry, SessionStats};
use std::sync::Weak;

impl PopulationHost for DbInner {
    fn store(&self) -> &InMemoryStore {
        &self.inmemory
    }

    fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    fn sessions(&self) -> &Registry {
        &self.registry
    }

    fn settings(&self) -> PopulationSettings {
        let parameters = self.parameters.read();
        PopulationSettings {
            inmemory_size: parameters.get_u64(params::INMEMORY_SIZE),
            pre_page_sga: parameters.get_bool(params::PRE_PAGE_SGA),
            max_populate_servers: parameters.get_u64(params::INMEMORY_MAX_POPULATE_SERVERS) as usize,
            imcu_target_rows: parameters.get_u64(params::INMEMORY_IMCU_TARGET_ROWS),
        }
    }

    fn current_scn(&self) -> u64 {
        self.clock.current()
    }

    fn worker_context<'a>(&'a self, stats: &'a SessionStats, snapshot: u64) -> AccessContext<'a> {
        let mbrc = self.parameters.read().get_u64(params::MBRC) as u32;
        self.access_context(stats, mbrc, self.clock.current(), crate::txn::Reader { snapshot, own: None })
    }

    fn weak(&self) -> Weak<dyn PopulationHost> {
        self.this.clone()
    }
}
