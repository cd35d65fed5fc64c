//! Foreign keys (`REFERENCES parent [(cols)] [ON DELETE CASCADE | SET NULL]`): declaring
//! one (which key of the parent it refers to), and enforcing it on both tables.
//!
//! A foreign key's columns are kept in the order of the parent key's columns, so child
//! column `i` matches parent key column `i`. The parent key is an enabled primary or
//! unique key of the parent (ORA-02270 otherwise); its unique index is where a child key
//! is looked for. MATCH SIMPLE, as Oracle's: a child key with a NULL column refers to
//! nothing and always passes.
//!
//! Enforcement, in the statement that writes the rows, once the rows and their index
//! entries are written (so a statement's own rows count, as for a self-referencing key):
//! - **child rows** (INSERT, INSERT ... SELECT, COPY, UPDATE of the key columns): each new
//!   key is looked for in the parent key's index in its current state ([`holds_key`]):
//!   committed entries and the transaction's own. An entry another active transaction
//!   inserted or deleted is waited for (`enq: TX - row lock contention`), then looked at
//!   again: a child insert whose parent row is being deleted by an uncommitted
//!   transaction waits for it, and fails with ORA-02291 if it commits.
//! - **parent rows** (DELETE, UPDATE of the key columns): each key that went and that no
//!   row of the parent holds now is looked for among the child rows: through an index of
//!   the child whose leading columns are the foreign key's, waiting for any other active
//!   transaction's entry with that key; without one, after waiting for every other
//!   active transaction with changes in the child table (Oracle's share lock on an
//!   unindexed child), by a full scan of the child in current mode. Children found:
//!   ORA-02292 (NO ACTION, and always for an UPDATE), or the children are deleted (ON
//!   DELETE CASCADE) or their key set to NULL (ON DELETE SET NULL) by `modify`, in the
//!   same statement and transaction, which applies the same rules to them in turn.
//!
//! Waiting on both sides is what keeps two transactions from committing an orphan: a
//! child insert looks for its parent after its own rows are in (so a parent delete
//! that runs later finds them, or waits for them), and a parent delete looks for
//! children after its key entries are deleted (so a child insert that runs later waits
//! for it).

use super::row_checks::qualified;
use crate::access::by_rowid::RowFetcher;
use crate::access::full_scan::{FullScan, ScanConsumer};
use crate::access::{AccessContext, BlockBatch, BlockRow, Flow, RowAccess, WalkedRow};
use crate::catalog::{ConstraintDef, ConstraintKind, DeleteRule, IndexDef, TableDef};
use crate::error::{Error, Result};
use crate::index::{RowId, encode_key, holds_key};
use crate::instance::Session;
use crate::types::{DataType, Datum, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The key of `parent` that a new foreign key of `child` on `columns` refers to: the
/// primary key (`referenced` empty) or the enabled primary or unique key on exactly the
/// `referenced` columns. `settled` are `child`'s constraints being added with it (a
/// self-referencing key may refer to one). Returns the key's name and the foreign key's
/// columns reordered to match the key's.
pub(super) fn resolve(
    session: &Session,
    child: &TableDef,
    settled: &[ConstraintDef],
    parent: &str,
    columns: &[usize],
    referenced: &[String],
) -> Result<(String, Vec<usize>)> {
    let stored;
    let (parent_def, keys): (&TableDef, Vec<&ConstraintDef>) = if parent == child.name {
        (child, child.constraints.iter().chain(settled).collect())
    } else {
        stored = session
            .db
            .catalog
            .table(parent)
            .ok_or_else(|| Error::UnknownObject { kind: "table", name: parent.to_owned() })?;
        super::privileges::require_on(session, parent, crate::catalog::ObjectPrivilege::References)?;
        (&stored, stored.constraints.iter().collect())
    };
    let keys: Vec<&ConstraintDef> = keys.into_iter().filter(|c| c.enabled && c.kind.key_index().is_some()).collect();
    let wanted: Vec<usize> = if referenced.is_empty() {
        let primary = keys.iter().find(|c| matches!(c.kind, ConstraintKind::PrimaryKey(_))).ok_or_else(|| {
            Error::ForeignKeyMismatch {
                code: 2268,
                what: format!("referenced table {parent} does not have a primary key"),
            }
        })?;
        primary.columns.clone()
    } else {
        referenced
            .iter()
            .map(|name| {
                parent_def.column_index(name).ok_or_else(|| Error::UnknownName {
                    kind: "column",
                    name: format!("{parent}.{name}"),
                    position: None,
                })
            })
            .collect::<Result<_>>()?
    };
    if wanted.len() != columns.len() {
        return Err(Error::ForeignKeyMismatch {
            code: 2256,
            what: "number of referencing columns must match referenced columns".into(),
        });
    }
    let mut sorted = wanted.clone();
    sorted.sort_unstable();
    let key = keys
        .into_iter()
        .find(|k| {
            let mut cols = k.columns.clone();
            cols.sort_unstable();
            cols == sorted
        })
        .ok_or_else(|| Error::NoReferencedKey { parent: parent.to_owned() })?;
    let mut ordered = Vec::with_capacity(columns.len());
    for &kc in &key.columns {
        let j = wanted.iter().position(|&w| w == kc).expect("the key has the referenced columns");
        let (c, p) = (&child.columns[columns[j]], &parent_def.columns[kc]);
        if !comparable(c.data_type, p.data_type) {
            return Err(Error::ForeignKeyMismatch {
                code: 2267,
                what: format!(
                    "column type incompatible with referenced column type ({}.{} and {parent}.{})",
                    child.name, c.name, p.name
                ),
            });
        }
        ordered.push(columns[j]);
    }
    Ok((key.name.clone(), ordered))
}

/// Whether a child column of type `a` may refer to a parent column of type `b`: both
/// numbers, both strings, both dates, both timestamps or both intervals of one kind (the
/// index key encodings then agree).
fn comparable(a: DataType, b: DataType) -> bool {
    super::plan::Family::of_type(a) == super::plan::Family::of_type(b)
}

/// The foreign keys that refer to table `parent`: (child table, constraint), enabled or
/// not.
pub(super) fn referencing(session: &Session, parent: &str) -> Vec<(Arc<TableDef>, ConstraintDef)> {
    let mut out = Vec::new();
    for t in session.db.catalog.tables() {
        for c in &t.constraints {
            if let ConstraintKind::ForeignKey { parent: p, .. } = &c.kind
                && p == parent
            {
                out.push((t.clone(), c.clone()));
            }
        }
    }
    out
}

/// The index of the parent key that foreign key `fk` refers to, and for each of its key
/// columns the position among the foreign key's columns.
fn parent_index(session: &Session, fk: &ConstraintDef) -> Result<(Arc<IndexDef>, Vec<usize>)> {
    let ConstraintKind::ForeignKey { parent, parent_constraint, .. } = &fk.kind else {
        unreachable!("only a foreign key has a parent")
    };
    let missing = || Error::NoReferencedKey { parent: parent.clone() };
    let table = session.db.catalog.table(parent).ok_or_else(missing)?;
    let key = table.constraint(parent_constraint).filter(|k| k.enabled).ok_or_else(missing)?;
    let index = key.kind.key_index().and_then(|k| k.index.as_ref()).ok_or_else(missing)?;
    let index = session.db.catalog.index(index).ok_or_else(missing)?;
    let order = index
        .columns
        .iter()
        .map(|c| key.columns.iter().position(|k| k == c).ok_or_else(missing))
        .collect::<Result<_>>()?;
    Ok((index, order))
}

/// Encodes the values `values` (in the foreign key's column order) as a key of an
/// index whose column `k` is foreign key column `order[k]`, of type `types[k]`.
fn encode_in(values: &[Value], order: &[usize], types: &[DataType]) -> Result<Vec<u8>> {
    let picked: Vec<Datum<'_>> = order.iter().map(|&j| values[j].reborrow()).collect();
    let mut key = Vec::new();
    encode_key(&picked, types, &mut key)?;
    Ok(key)
}

/// The key values of a row's foreign key columns, in the foreign key's order; `None`
/// if any is NULL (MATCH SIMPLE: the row refers to nothing).
fn key_values<'v>(columns: &[usize], column: impl Fn(usize) -> Result<Datum<'v>>) -> Result<Option<Vec<Value>>> {
    let mut values = Vec::with_capacity(columns.len());
    for &c in columns {
        let v = column(c)?;
        if v.is_null() {
            return Ok(None);
        }
        values.push(v.into_owned());
    }
    Ok(Some(values))
}

/// The session's access context, reading as of now whatever its isolation level (a
/// serializable transaction's snapshot would hide rows committed since): how foreign
/// keys look for child rows, and how a cascade finds the rows it changes (a
/// serializable transaction that meets a row changed since its snapshot then fails
/// with "can't serialize access", as for any change).
pub(super) fn current_mode(session: &Session) -> AccessContext<'_> {
    let mut ctx = session.access_context();
    ctx.txn.reader.snapshot = session.db.clock.current();
    ctx
}

/// The transaction id of the session's transaction, claimed now if it has none.
fn xid(session: &Session) -> Result<crate::txn::Xid> {
    let ctx = session.access_context();
    session.txn.borrow_mut().xid(&ctx, session.sid())
}

/// One enabled foreign key of a child table, to check its new keys against the parent.
struct ChildKey {
    /// `SCHEMA.NAME`, as ORA-02291 names it.
    name: String,
    /// The child's columns, in the parent key's order.
    columns: Vec<usize>,
    parent_index: Arc<IndexDef>,
    /// For each column of the parent index, its position among `columns`.
    order: Vec<usize>,
    /// The parent index's key types.
    types: Vec<DataType>,
}

/// Foreign key `c`, with the index of the parent key it refers to.
fn child_key(session: &Session, c: &ConstraintDef) -> Result<ChildKey> {
    let (parent_index, order) = parent_index(session, c)?;
    let ConstraintKind::ForeignKey { parent, .. } = &c.kind else { unreachable!("only a foreign key has a parent") };
    let parent_table =
        session.db.catalog.table(parent).ok_or_else(|| Error::NoReferencedKey { parent: parent.clone() })?;
    let types = parent_index.key_types(&parent_table);
    Ok(ChildKey { name: qualified(&c.name), columns: c.columns.clone(), parent_index, order, types })
}

/// The enabled foreign keys of a table, for checking the keys of the rows it writes.
pub(super) struct ChildKeys {
    keys: Vec<ChildKey>,
    /// Columns to locate in a row to build every key (one past the last key column).
    width: usize,
}

impl ChildKeys {
    /// The enabled foreign keys of `table` with a column among `assigned` (all of them
    /// for `None`); `None` if there is none.
    pub(super) fn of(session: &Session, table: &TableDef, assigned: Option<&[usize]>) -> Result<Option<ChildKeys>> {
        let mut keys = Vec::new();
        for c in table.constraints.iter().filter(|c| c.enabled) {
            if !matches!(c.kind, ConstraintKind::ForeignKey { .. })
                || assigned.is_some_and(|a| !c.columns.iter().any(|k| a.contains(k)))
            {
                continue;
            }
            keys.push(child_key(session, c)?);
        }
        let width = keys.iter().flat_map(|k| k.columns.iter().map(|c| c + 1)).max();
        Ok(width.map(|width| ChildKeys { keys, width }))
    }

    /// Foreign key `c` of `table` alone, enabled or not (for validating it).
    pub(super) fn of_constraint(session: &Session, table: &TableDef, c: &ConstraintDef) -> Result<ChildKeys> {
        let width = c.columns.iter().map(|c| c + 1).max().unwrap_or(table.columns.len());
        Ok(ChildKeys { keys: vec![child_key(session, c)?], width })
    }

    /// Whether every one of `keys` (of the one foreign key of [`ChildKeys::of_constraint`])
    /// is a key of the parent as committed now.
    pub(super) fn committed_parents_hold(&self, session: &Session, keys: &BTreeSet<Vec<u8>>) -> Result<bool> {
        let ctx = session.access_context();
        for k in &self.keys {
            for key in keys {
                let mut scan = crate::index::IndexScan::unique(&k.parent_index, key.clone());
                if scan.next_leaf(&ctx)?.is_none() {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Each foreign key's parent key for a row whose column `c` is `column(c)` (`None`
    /// where a column is NULL).
    pub(super) fn keys<'v>(&self, column: impl Fn(usize) -> Result<Datum<'v>>) -> Result<Vec<Option<Vec<u8>>>> {
        let mut out = Vec::with_capacity(self.keys.len());
        for k in &self.keys {
            out.push(match key_values(&k.columns, &column)? {
                Some(values) => Some(encode_in(&values, &k.order, &k.types)?),
                None => None,
            });
        }
        Ok(out)
    }

    /// Refuses the first key of `keys` (per foreign key, as [`ChildKeys::keys`] gives
    /// them) that no parent row holds (ORA-02291).
    pub(super) fn check<'k>(
        &self,
        session: &Session,
        keys: impl IntoIterator<Item = &'k [Option<Vec<u8>>]>,
    ) -> Result<()> {
        let mut wanted: Vec<BTreeSet<&'k [u8]>> = vec![BTreeSet::new(); self.keys.len()];
        for row in keys {
            for (i, key) in row.iter().enumerate() {
                if let Some(key) = key {
                    wanted[i].insert(key);
                }
            }
        }
        if wanted.iter().all(BTreeSet::is_empty) {
            return Ok(());
        }
        let xid = xid(session)?;
        let ctx = session.access_context();
        for (k, keys) in self.keys.iter().zip(wanted) {
            for key in keys {
                if !holds_key(&ctx, xid, &k.parent_index, key, false)? {
                    return Err(Error::ParentKeyNotFound { constraint: k.name.clone() });
                }
            }
        }
        Ok(())
    }

    /// Checks the keys of the rows just inserted at `rowids` (read back: the
    /// transaction sees its own rows).
    pub(super) fn rows_inserted(&self, session: &Session, table: &TableDef, rowids: &[RowId]) -> Result<()> {
        let ctx = session.access_context();
        let mut keys = Vec::with_capacity(rowids.len());
        let mut fetcher = RowFetcher::new(&ctx, table, self.width);
        for &rowid in rowids {
            let row = fetcher.fetch(&ctx, rowid, |row| self.keys(|c| row.column(c)))?;
            keys.push(
                row.ok_or_else(|| ctx.corrupt(rowid.rdba, format!("row {} just inserted is not there", rowid.slot)))?,
            );
        }
        fetcher.release();
        self.check(session, keys.iter().map(Vec::as_slice))
    }
}

/// One foreign key that refers to a table, for what a parent row's delete or key
/// change does to its children.
struct Referring {
    /// `SCHEMA.NAME`, as ORA-02292 names it.
    name: String,
    child: Arc<TableDef>,
    /// The child's columns, in the parent key's order.
    child_columns: Vec<usize>,
    /// The parent key's columns.
    parent_columns: Vec<usize>,
    rule: DeleteRule,
    /// The parent key's index, and for each of its columns the position in the key.
    parent_index: (Arc<IndexDef>, Vec<usize>, Vec<DataType>),
    /// An index of the child whose leading columns are the foreign key's, and for each
    /// of those the position in the key.
    child_index: Option<(Arc<IndexDef>, Vec<usize>, Vec<DataType>)>,
}

/// The enabled foreign keys that refer to a table.
pub(super) struct ParentRules {
    refs: Vec<Referring>,
}

/// A parent key that a statement deleted (`deleted`) or moved away from: foreign key
/// `fk` of [`ParentRules`], and the key's values in the key's column order.
pub(super) struct GoneKey {
    fk: usize,
    values: Vec<Value>,
    deleted: bool,
}

/// What a deleted parent key does to its children, for `modify` to do next.
pub(super) struct ChildAction {
    pub child: Arc<TableDef>,
    /// The children's rows: those whose `columns` are `values`.
    pub matching: KeyMatch,
    /// Delete them (CASCADE), or set `columns` NULL (SET NULL).
    pub delete: bool,
}

/// Rows whose columns `columns` hold exactly `values` (compared as index keys: `5` and
/// `5.0` are equal).
pub(super) struct KeyMatch {
    pub columns: Vec<usize>,
    types: Vec<DataType>,
    key: Vec<u8>,
}

impl KeyMatch {
    fn new(table: &TableDef, columns: &[usize], values: &[Value]) -> Result<KeyMatch> {
        let types: Vec<DataType> = columns.iter().map(|&c| table.columns[c].data_type).collect();
        let order: Vec<usize> = (0..columns.len()).collect();
        let key = encode_in(values, &order, &types)?;
        Ok(KeyMatch { columns: columns.to_vec(), types, key })
    }

    /// Whether `row` holds the key.
    pub fn matches<R: RowAccess + ?Sized>(&self, row: &R) -> Result<bool> {
        let mut values = Vec::with_capacity(self.columns.len());
        for &c in &self.columns {
            let v = row.column(c)?;
            if v.is_null() {
                return Ok(false);
            }
            values.push(v);
        }
        let mut key = Vec::new();
        encode_key(&values, &self.types, &mut key)?;
        Ok(key == self.key)
    }
}

impl ParentRules {
    /// The enabled foreign keys referring to `table` with a parent key column among
    /// `assigned` (all of them for `None`, a DELETE); `None` if there is none.
    pub(super) fn of(session: &Session, table: &TableDef, assigned: Option<&[usize]>) -> Result<Option<ParentRules>> {
        let mut refs = Vec::new();
        for (child, fk) in referencing(session, &table.name) {
            let ConstraintKind::ForeignKey { parent_constraint, on_delete, .. } = &fk.kind else {
                unreachable!("referencing gives foreign keys")
            };
            let Some(key) = table.constraint(parent_constraint) else { continue };
            if !fk.enabled || assigned.is_some_and(|a| !key.columns.iter().any(|k| a.contains(k))) {
                continue;
            }
            let (index, order) = parent_index(session, &fk)?;
            let types = index.key_types(table);
            let child_index = child_index(session, &child, &fk.columns);
            refs.push(Referring {
                name: qualified(&fk.name),
                child,
                child_columns: fk.columns.clone(),
                parent_columns: key.columns.clone(),
                rule: *on_delete,
                parent_index: (index, order, types),
                child_index,
            });
        }
        Ok((!refs.is_empty()).then_some(ParentRules { refs }))
    }

    /// The parent keys a row loses: all of them when it is deleted (`new` is `None`),
    /// else those whose columns change. `old(c)` and `new(c)` are column `c` before and
    /// after.
    pub(super) fn gone<'v>(
        &self,
        old: impl Fn(usize) -> Result<Datum<'v>>,
        new: Option<&[Datum<'_>]>,
        out: &mut Vec<GoneKey>,
    ) -> Result<()> {
        for (fk, r) in self.refs.iter().enumerate() {
            let Some(values) = key_values(&r.parent_columns, &old)? else { continue };
            if let Some(new) = new {
                let same = key_values(&r.parent_columns, |c| Ok(new[c].reborrow()))?.is_some_and(|n| {
                    let types = &r.parent_index.2;
                    let order = &r.parent_index.1;
                    encode_in(&n, order, types).ok() == encode_in(&values, order, types).ok()
                });
                if same {
                    continue;
                }
            }
            out.push(GoneKey { fk, values, deleted: new.is_none() });
        }
        Ok(())
    }

    /// What the statement's gone parent keys do: ORA-02292 if children refer to one
    /// that no parent row holds now and the rule (or an UPDATE) forbids it; else the
    /// children to delete or set NULL, for the caller to do.
    pub(super) fn after_statement(&self, session: &Session, gone: Vec<GoneKey>) -> Result<Vec<ChildAction>> {
        if gone.is_empty() {
            return Ok(Vec::new());
        }
        let xid = xid(session)?;
        let mut seen: BTreeSet<(usize, Vec<u8>)> = BTreeSet::new();
        let mut actions = Vec::new();
        for g in gone {
            let r = &self.refs[g.fk];
            let (index, order, types) = &r.parent_index;
            let parent_key = encode_in(&g.values, order, types)?;
            if !seen.insert((g.fk, parent_key.clone())) {
                continue;
            }
            let ctx = session.access_context();
            // Another row of the parent has the key now (`SET id = id + 1`): nothing lost.
            if holds_key(&ctx, xid, index, &parent_key, false)? {
                continue;
            }
            let cascades = g.deleted && r.rule != DeleteRule::NoAction;
            if !self.children_exist(session, r, xid, &g.values, cascades)? {
                continue;
            }
            if !cascades {
                return Err(Error::ChildRecordFound { constraint: r.name.clone() });
            }
            actions.push(ChildAction {
                child: r.child.clone(),
                matching: KeyMatch::new(&r.child, &r.child_columns, &g.values)?,
                delete: r.rule == DeleteRule::Cascade,
            });
        }
        Ok(actions)
    }

    /// Whether a child row of `r` has the key `values`, in current mode. With `every`,
    /// every other active transaction with such a child (or perhaps with one) is waited
    /// for first, so that the rows a cascade then reads are all there are.
    fn children_exist(
        &self,
        session: &Session,
        r: &Referring,
        xid: crate::txn::Xid,
        values: &[Value],
        every: bool,
    ) -> Result<bool> {
        let ctx = session.access_context();
        if let Some((index, order, types)) = &r.child_index {
            let prefix = encode_in(values, order, types)?;
            return holds_key(&ctx, xid, index, &prefix, every);
        }
        // No index: wait for every other transaction with changes in the child, then
        // read it as of now.
        let locks = ctx.locks.table(r.child.object_id);
        loop {
            let other = locks.changers.lock().iter().copied().find(|&x| x != xid);
            match other {
                Some(holder) => {
                    ctx.enqueues.wait_for(ctx.stats, xid, holder)?;
                    if locks.changers.lock().contains(&holder) {
                        // Its enqueue is gone: it is leaving the table's changers.
                        std::thread::yield_now();
                    }
                }
                None => break,
            }
        }
        let ctx = current_mode(session);
        let matching = KeyMatch::new(&r.child, &r.child_columns, values)?;
        let mut needed = vec![false; r.child.columns.len()];
        r.child_columns.iter().for_each(|&c| needed[c] = true);
        let mut finder = ChildFinder { matching: &matching, found: false };
        FullScan::new(&r.child, &needed).run(&ctx, &mut finder)?;
        Ok(finder.found)
    }
}

/// An index of `child` whose leading columns are `columns` (in any order), with, for
/// each of those, the position among `columns`, and their types.
fn child_index(
    session: &Session,
    child: &TableDef,
    columns: &[usize],
) -> Option<(Arc<IndexDef>, Vec<usize>, Vec<DataType>)> {
    let mut wanted = columns.to_vec();
    wanted.sort_unstable();
    session.db.catalog.indexes_of(child.object_id).into_iter().find_map(|ix| {
        let leading = ix.columns.get(..columns.len())?;
        let mut sorted = leading.to_vec();
        sorted.sort_unstable();
        if sorted != wanted {
            return None;
        }
        let order = leading.iter().map(|c| columns.iter().position(|k| k == c).expect("same set")).collect();
        let types = leading.iter().map(|&c| child.columns[c].data_type).collect();
        Some((ix, order, types))
    })
}

/// Looks for a row that holds a key.
struct ChildFinder<'m> {
    matching: &'m KeyMatch,
    found: bool,
}

impl ChildFinder<'_> {
    fn visit<R: RowAccess + ?Sized>(&mut self, row: &R) -> Result<Flow> {
        self.found = self.matching.matches(row)?;
        Ok(if self.found { Flow::Stop } else { Flow::Continue })
    }
}

impl ScanConsumer for ChildFinder<'_> {
    fn batch(&mut self, batch: &BlockBatch<'_>) -> Result<Flow> {
        for i in 0..batch.len() {
            if self.visit(&batch.row(i))? == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Continue)
    }

    fn row(&mut self, row: &BlockRow<'_>) -> Result<Flow> {
        self.visit(row)
    }

    fn row_in_place(&mut self, _row: WalkedRow<'_>) -> Result<Flow> {
        unreachable!("rows_in_place is false: the scan hands whole batches")
    }
}
