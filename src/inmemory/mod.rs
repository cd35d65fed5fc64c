//! The in-memory column store: tables marked `INMEMORY` are copied, a run of blocks at a
//! time, into In-Memory Compression Units (column by column, encoded), by background
//! population workers. Its column encodings also serve the compression units that
//! tables compressed `FOR QUERY|ARCHIVE` keep in their blocks ([`hcc`]). The scan that answers from the units (TABLE ACCESS INMEMORY
//! FULL) is a source of the pipeline, `exec::inmemory_source`: it runs the kernels here
//! on the encoded values, and takes from the buffer cache whatever the units do not hold
//! as the scan's snapshot sees it.
//!
//! ```text
//!  store     which tables, which units, their IMCUs and journals, the memory they take
//!  area      the In-Memory Area: the mapping the units' large arrays live in
//!  populate  workers: plan a table's units, fill each unit from consistent reads
//!  host      what population needs of the database (the instance implements it)
//!  imcu      one unit's columns, and SQL values in and out of them
//!  cu        one column unit: encodings, decoding, predicates on encoded values, and a
//!            unit as bytes
//!  hcc       compressed tables' units (Hybrid Columnar Compression): the direct-path
//!            load that writes them into blocks, decoding them back into units, a
//!            unit's rows one by one (rows), DELETE's marks and UPDATE's moves out of a
//!            unit (change), and the undo of both (undo)
//!  simd      the predicate kernels: AVX-512, AVX2 or scalar, chosen at run time
//!  bitmap    one bit per row: which rows a scan keeps
//! ```
//!
//! Consistency: a unit is as of its population SCN; every change to a row of a block it
//! covers is journaled (by block) while the change holds the block exclusively (the
//! store is the `RowObserver` that `TxnContext::rows_changed` tells), and a block a
//! transaction the population SCN does not see was holding starts out journaled. A scan uses a unit only
//! when its snapshot is at or after the population SCN, and reads the unit's journaled
//! blocks, the units it cannot use, and the blocks no unit covers from the buffer cache
//! with consistent gets: so an in-memory scan returns exactly what a row-store scan at the
//! same snapshot returns.

pub mod area;
pub mod bitmap;
pub mod cu;
pub mod hcc;
pub mod host;
pub mod imcu;
pub mod populate;
pub mod simd;
pub mod store;

pub use store::InMemoryStore;
