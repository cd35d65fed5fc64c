//! What the tests of the layers from here up work with: the transactions' fixture
//! (`txn::fixture`), with the access context of one of its sessions.

use super::AccessContext;
use crate::txn::fixture::FixtureSession;

/// One multiblock read asks for this many blocks (the default of
/// `db_file_multiblock_read_count`).
pub const MULTIBLOCK_READ_COUNT: u32 = 128;

/// The access context of `session`'s next statement. It has no column store, so it reads
/// no compression units (the tests of this layer and the index's make none).
pub fn context<'a>(session: &'a FixtureSession<'_>) -> AccessContext<'a> {
    AccessContext { txn: session.context(), multiblock_read_count: MULTIBLOCK_READ_COUNT, cus: None }
}
