//! The optimizer: for a query over one table, the access path (full scan or one of the
//! index paths) with the least estimated cost, unless hints say otherwise; and the row
//! and cost estimates EXPLAIN PLAN shows.
//!
//! ```text
//!  WHERE ─► predicates (column bounds) ─► selectivity (column statistics)
//!                                    └──► index matching (equalities on leading key
//!                                         columns, then one range) ─► key bounds
//!  statistics + cost model ─► cost of full scan and each index path ─► hints ─► choice
//! ```
//!
//! Cost is counted in single-block reads, Oracle's unit, with its no-workload system
//! statistics ([`cost`]). The estimates come from ANALYZE's statistics; a table never
//! analyzed is assumed to hold 100-byte rows in its formatted blocks, and the plan's notes
//! say so, as Oracle's "dynamic statistics used" note does. Whatever the statistics, an
//! equality on every column of a unique index estimates one row at most.

pub mod cost;
pub mod facts;
pub mod hints;
pub mod join;
pub mod selectivity;

use crate::catalog::{IndexDef, TableDef};
use crate::expr::predicates::{ColumnBound, Conjunct};
pub use crate::index::IndexScanKind;
use crate::types::{DataType, Datum, Value};
use cost::CostModel;
use facts::{IndexFacts, TableFacts};
use hints::{HintKind, Hints, IndexChoice};
use smallvec::SmallVec;
use std::cmp::Ordering;
use std::sync::Arc;

/// One end of a key range: the values of the leading key columns it fixes, and whether
/// keys equal to them on those columns are in the range.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyEnd {
    pub values: KeyValues,
    pub inclusive: bool,
}

/// An index path the optimizer can take.
#[derive(Debug, Clone)]
pub struct IndexPath {
    pub index: Arc<IndexDef>,
    pub kind: IndexScanKind,
    pub lower: Option<KeyEnd>,
    pub upper: Option<KeyEnd>,
    pub descending: bool,
    /// False when the index holds every column the query reads (no table access).
    pub table_access: bool,
    /// Conjuncts the key range answers exactly (not rechecked on the rows).
    pub access: Vec<usize>,
    /// Conjuncts that bound the key range (shown as `access(...)`; those not answered
    /// exactly, such as LIKE 'ab%', are also shown and checked as `filter(...)`).
    pub bounds: Vec<usize>,
    /// Index entries expected.
    pub entries: f64,
    /// Cost of the whole path, and of the index scan alone (its own plan line).
    pub cost: f64,
    pub index_cost: f64,
    /// The path delivers rows in the ORDER BY's order: no sort is needed.
    pub ordered: bool,
}

/// The chosen access path.
#[derive(Debug, Clone)]
pub enum AccessPath {
    Full { cost: f64 },
    Index(Box<IndexPath>),
}

impl AccessPath {
    pub fn cost(&self) -> f64 {
        match self {
            AccessPath::Full { cost } => *cost,
            AccessPath::Index(p) => p.cost,
        }
    }
}

/// What the optimizer decided, with its estimates and notes.
#[derive(Debug, Clone)]
pub struct Decision {
    pub path: AccessPath,
    /// Rows expected after the whole WHERE clause.
    pub rows: f64,
    pub notes: Vec<String>,
}

/// What the query asks of its table.
pub struct Query<'q> {
    pub table: &'q TableDef,
    /// The alias the query gives the table, if any (hints may name either).
    pub alias: Option<&'q str>,
    /// For a table never analyzed, its formatted blocks below the high-water mark, which
    /// rows are estimated from; `None` when it was analyzed, or when there is nothing to
    /// choose (a full scan of a bare table): then no estimates are made.
    pub segment_blocks: Option<u64>,
    pub conjuncts: &'q [Conjunct],
    /// The table columns the query reads anywhere.
    pub columns_read: &'q [bool],
    /// The ORDER BY as table columns (column, descending), when every key is a column in
    /// its default NULLS order; empty when there is none or a path cannot deliver it.
    pub order_by: &'q [(usize, bool)],
}

/// Chooses the access path of `query` among a full scan and `indexes`.
pub fn choose(query: &Query<'_>, indexes: &[Arc<IndexDef>], hints: &Hints, model: &CostModel) -> Decision {
    let facts = TableFacts::new(query.table, query.segment_blocks.unwrap_or(0), model.block_size);
    let mut notes = Vec::new();
    if !facts.analyzed {
        notes.push(match query.segment_blocks {
            Some(blocks) => format!(
                "no statistics on {}: estimates assume 100-byte rows in its {blocks} blocks (run ANALYZE TABLE)",
                query.table.name
            ),
            None => format!("no statistics on {}: no estimates (run ANALYZE TABLE)", query.table.name),
        });
    }
    // An equality on every column of a unique index finds one row at most, whatever
    // the statistics say (or, never analyzed, guess).
    let mut selectivity = selectivity::combined(&facts, query.conjuncts);
    if indexes.iter().any(|ix| ix.unique && unique_equality(query, ix)) {
        selectivity = one_row_at_most(selectivity, facts.rows);
    }
    let rows = facts.rows * selectivity;
    let table_cached = model.cached_share(query.table.object_id, facts.blocks);
    let full = AccessPath::Full { cost: model.full_scan(facts.blocks, facts.rows, facts.cus.as_ref(), table_cached) };
    let names_table = |t: &Option<String>| {
        t.as_deref().is_some_and(|t| t == query.table.name || Some(t) == query.alias.map(str::to_uppercase).as_deref())
    };
    let mut table_hints = Vec::new();
    for h in &hints.hints {
        match (&h.kind, &h.table) {
            // A subquery's hints on its unnesting are the unnesting's to use.
            (
                HintKind::GatherPlanStatistics
                | HintKind::Append
                | HintKind::Unnest(_)
                | HintKind::SubqueryJoin(_)
                | HintKind::Materialize(_),
                _,
            ) => {}
            (kind, _) if kind.is_join_hint() => {
                notes.push(format!("hint not used: {} (the query joins no tables)", h.text))
            }
            (_, t) if names_table(t) => table_hints.push(h),
            (_, t) => {
                notes.push(format!("hint not used: {} (no table {} in FROM)", h.text, t.as_deref().unwrap_or_default()))
            }
        }
    }
    let excluded = |ix: &IndexDef| {
        table_hints.iter().any(|h| matches!(&h.kind, HintKind::NoIndex(c) if matches_choice(c, ix, query.table)))
    };
    let usable: Vec<&Arc<IndexDef>> = indexes.iter().filter(|ix| !excluded(ix)).collect();
    let mut candidates = vec![full.clone()];
    for ix in &usable {
        candidates.extend(index_paths(query, ix, &facts, model).into_iter().map(|p| AccessPath::Index(Box::new(p))));
    }
    // Hints first: the first applicable one decides.
    for h in &table_hints {
        let chosen = match &h.kind {
            HintKind::Full | HintKind::InMemory => Some(full.clone()),
            HintKind::Index { choice, descending } => {
                let fits = |p: &IndexPath| {
                    matches_choice(choice, &p.index, query.table)
                        && p.kind != IndexScanKind::FastFull
                        && descending.is_none_or(|d| d == p.descending)
                };
                cheapest(&candidates, fits)
            }
            HintKind::IndexFfs(choice) => cheapest(&candidates, |p| {
                p.kind == IndexScanKind::FastFull && matches_choice(choice, &p.index, query.table)
            }),
            HintKind::NoIndex(_)
            | HintKind::GatherPlanStatistics
            | HintKind::Append
            | HintKind::NoInMemory
            | HintKind::InMemoryPruning(_) => continue,
            _ => continue,
        };
        match chosen {
            Some(path) => {
                return Decision { path, rows, notes: with_ignored(notes, hints) };
            }
            None => notes.push(format!("hint not used: {} ({})", h.text, why_not(h, query, indexes))),
        }
    }
    // A path that does not deliver the ORDER BY pays for the sort too.
    let sort = if query.order_by.is_empty() { 0.0 } else { model.sort(rows) };
    let with_sort = |p: &AccessPath| match p {
        AccessPath::Index(ip) if ip.ordered => p.cost(),
        _ => p.cost() + sort,
    };
    let best = candidates
        .into_iter()
        .min_by(|a, b| with_sort(a).total_cmp(&with_sort(b)))
        .expect("the full scan is always a candidate");
    Decision { path: best, rows, notes: with_ignored(notes, hints) }
}

fn with_ignored(mut notes: Vec<String>, hints: &Hints) -> Vec<String> {
    notes.extend(hints.ignored.iter().cloned());
    notes
}

fn cheapest(candidates: &[AccessPath], fits: impl Fn(&IndexPath) -> bool) -> Option<AccessPath> {
    candidates
        .iter()
        .filter_map(|p| match p {
            AccessPath::Index(ip) if fits(ip) => Some(p.clone()),
            _ => None,
        })
        .min_by(|a, b| a.cost().total_cmp(&b.cost()))
}

/// Why an index hint found no path, for the note.
fn why_not(h: &hints::Hint, query: &Query<'_>, indexes: &[Arc<IndexDef>]) -> String {
    let choice = match &h.kind {
        HintKind::Index { choice, .. } | HintKind::IndexFfs(choice) => choice,
        _ => return "not applicable".into(),
    };
    let named: Vec<&Arc<IndexDef>> = indexes.iter().filter(|ix| matches_choice(choice, ix, query.table)).collect();
    if named.is_empty() {
        return format!("{} has no such index", query.table.name);
    }
    match h.kind {
        HintKind::IndexFfs(_) if !named.iter().any(|ix| covers(query, ix)) => {
            "the index does not hold every column the query reads".into()
        }
        _ => "rows whose key columns are all NULL are not in the index and the query could need them".into(),
    }
}

/// Whether `ix` holds every column the query reads (it can answer without the table).
fn covers(query: &Query<'_>, ix: &IndexDef) -> bool {
    query.columns_read.iter().enumerate().all(|(c, &read)| !read || ix.columns.contains(&c))
}

/// Whether `ix` is one the hint's choice names.
pub(crate) fn matches_choice(choice: &IndexChoice, ix: &IndexDef, table: &TableDef) -> bool {
    match choice {
        IndexChoice::Any => true,
        IndexChoice::Named(names) => names.contains(&ix.name),
        IndexChoice::Columns(cols) => {
            cols.len() <= ix.columns.len()
                && cols.iter().zip(&ix.columns).all(|(c, &i)| table.columns.get(i).is_some_and(|tc| tc.name == *c))
        }
    }
}

/// Whether the conjuncts bound every column of index `ix` by an equality.
fn unique_equality(query: &Query<'_>, ix: &IndexDef) -> bool {
    key_range(&ix.key_types(query.table), query.conjuncts, ix).eq_columns == ix.columns.len()
}

/// At most one row in `rows`: the selectivity of an equality on a whole unique key.
fn one_row_at_most(selectivity: f64, rows: f64) -> f64 {
    selectivity.min(1.0 / rows.max(1.0))
}

/// The paths `ix` offers for `query`: a unique or range scan when the WHERE clause bounds
/// its leading columns; a full scan (in key order) and a fast full scan when the index
/// holds every row the query can return.
fn index_paths(query: &Query<'_>, ix: &Arc<IndexDef>, facts: &TableFacts, model: &CostModel) -> Vec<IndexPath> {
    let table = query.table;
    let stats = IndexFacts::new(ix, facts, model.block_size);
    let cached = cost::Cached {
        index: model.cached_share(ix.object_id, stats.segment_blocks()),
        table: model.cached_share(table.object_id, facts.blocks),
    };
    let covers = covers(query, ix);
    // Rows with every key column NULL are not in the index: a path that does not bound a
    // key column can answer only if such rows cannot qualify.
    let no_all_null_rows = ix.columns.iter().any(|&c| {
        !table.columns[c].nullable
            || query.conjuncts.iter().any(|k| matches!(&k.bound, Some((col, b)) if *col == c && b.implies_not_null()))
    });
    let range = key_range(&ix.key_types(table), query.conjuncts, ix);
    let bounded = !range.used.is_empty();
    let used: Vec<Conjunct> = range.used.iter().map(|&i| query.conjuncts[i].clone()).collect();
    let unique = ix.unique && range.eq_columns == ix.columns.len();
    let mut access_selectivity = selectivity::combined(facts, &used);
    if unique {
        access_selectivity = one_row_at_most(access_selectivity, facts.rows);
    }
    let descending = descending_for(query, ix);
    let delivers = |desc: bool| order_delivered(query, ix) == Some(desc);
    let mut paths = Vec::new();
    let entries = facts.rows * access_selectivity * stats.non_null_fraction(bounded);
    if bounded {
        let kind = if unique { IndexScanKind::Unique } else { IndexScanKind::Range };
        let costs = model.index_access(&stats, access_selectivity, entries, facts.cus.as_ref(), cached);
        let (cost, index_cost) = (costs.total(covers), costs.index);
        paths.push(IndexPath {
            index: ix.clone(),
            kind,
            lower: range.lower.clone(),
            upper: range.upper.clone(),
            descending: descending.unwrap_or(false) && kind == IndexScanKind::Range,
            table_access: !covers,
            access: range.answered.to_vec(),
            bounds: range.used.to_vec(),
            entries,
            cost,
            index_cost,
            ordered: kind == IndexScanKind::Unique || delivers(descending.unwrap_or(false)),
        });
        if kind == IndexScanKind::Range && descending.is_none() {
            let mut d = paths[0].clone();
            d.descending = true;
            d.ordered = delivers(true);
            paths.push(d);
        }
    }
    if no_all_null_rows {
        let entries = stats.num_rows;
        let costs = model.index_access(&stats, 1.0, entries, facts.cus.as_ref(), cached);
        let (cost, index_cost) = (costs.total(covers), costs.index);
        for d in [false, true] {
            paths.push(IndexPath {
                index: ix.clone(),
                kind: IndexScanKind::Full,
                lower: None,
                upper: None,
                descending: d,
                table_access: !covers,
                access: Vec::new(),
                bounds: Vec::new(),
                entries,
                cost,
                index_cost,
                ordered: delivers(d),
            });
        }
        if covers {
            let cost = model.fast_full_scan(stats.leaf_blocks, entries, cached.index);
            paths.push(IndexPath {
                index: ix.clone(),
                kind: IndexScanKind::FastFull,
                lower: None,
                upper: None,
                descending: false,
                table_access: false,
                access: Vec::new(),
                bounds: Vec::new(),
                entries,
                cost,
                index_cost: cost,
                ordered: false,
            });
        }
    }
    paths
}

/// The direction in which reading `ix` delivers the whole ORDER BY (its keys are the
/// index's leading columns, all in one direction), if it does.
fn order_delivered(query: &Query<'_>, ix: &IndexDef) -> Option<bool> {
    let (_, desc) = *query.order_by.first()?;
    let fits = query.order_by.len() <= ix.columns.len()
        && query.order_by.iter().zip(&ix.columns).all(|(&(c, d), &ic)| c == ic && d == desc);
    fits.then_some(desc)
}

/// Whether ORDER BY asks for the index's leading column descending (Some(true)),
/// ascending (Some(false)), or nothing the index gives (None).
fn descending_for(query: &Query<'_>, ix: &IndexDef) -> Option<bool> {
    let (col, desc) = *query.order_by.first()?;
    (ix.columns.first() == Some(&col)).then_some(desc)
}

/// The values of a key range's end, one a key column (inline: a kept plan's range is
/// worked out again at each execution).
pub type KeyValues = SmallVec<[Value; 2]>;
/// Conjuncts by position (inline, as [`KeyValues`]).
pub type ConjunctList = SmallVec<[usize; 4]>;

/// The key range the conjuncts give an index.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRange {
    pub lower: Option<KeyEnd>,
    pub upper: Option<KeyEnd>,
    /// Conjuncts that bound the range (for its selectivity).
    pub used: ConjunctList,
    /// Those of them the range answers exactly (not rechecked on the rows).
    pub answered: ConjunctList,
    /// Leading key columns fixed by equalities.
    pub eq_columns: usize,
}

/// The key range the conjuncts give `ix`: equalities on leading key columns, then the one
/// range that every comparison on the next column narrows.
///
/// `types` are the index's key column types. A plan run again with other bind values
/// computes its index path's range again here.
pub fn key_range(types: &[DataType], conjuncts: &[Conjunct], ix: &IndexDef) -> KeyRange {
    let mut prefix = KeyValues::new();
    let mut used = ConjunctList::new();
    for (k, &col) in ix.columns.iter().enumerate() {
        let eq = conjuncts.iter().enumerate().find_map(|(i, c)| match &c.bound {
            Some((bc, ColumnBound::Eq(v))) if *bc == col => key_value(types[k], v).map(|v| (i, v)),
            _ => None,
        });
        if let Some((i, v)) = eq {
            prefix.push(v);
            used.push(i);
            continue;
        }
        // Every range on the column narrows one range (`id > a AND id <= b` is the range
        // (a, b]): the tightest lower and upper ends, and each conjunct's ends in the order
        // of the key column (those that are not cannot bound it).
        let mut candidates: SmallVec<[(usize, End, End, bool); 4]> = SmallVec::new();
        for (i, c) in conjuncts.iter().enumerate() {
            let Some((bc, ColumnBound::Range { lower, upper, exact })) = &c.bound else { continue };
            // A LIKE's range is one of text: it bounds only a string key.
            let text = matches!(types[k], DataType::Varchar2 { .. } | DataType::Char { .. });
            if *bc != col || (!exact && !text) {
                continue;
            }
            let conv = |e: &Option<(Value, bool)>| match e {
                None => Some(None),
                Some((v, inc)) => key_value(types[k], v).map(|v| Some((v, *inc))),
            };
            if let (Some(lo), Some(hi)) = (conv(lower), conv(upper)) {
                candidates.push((i, lo, hi, *exact));
            }
        }
        let eq_columns = prefix.len();
        let end = |e: Option<(Value, bool)>| match e {
            Some((v, inclusive)) => {
                let mut values = prefix.clone();
                values.push(v);
                Some(KeyEnd { values, inclusive })
            }
            None if prefix.is_empty() => None,
            None => Some(KeyEnd { values: prefix.clone(), inclusive: true }),
        };
        if candidates.is_empty() {
            break;
        }
        let (mut lo, mut hi): (End, End) = (None, None);
        for (_, l, h, _) in &candidates {
            narrow(&mut lo, l, Ordering::Greater);
            narrow(&mut hi, h, Ordering::Less);
        }
        let mut answered = used.clone();
        for (i, l, h, exact) in &candidates {
            used.push(*i);
            // Answered by the range when the range's ends are at least as tight as its own.
            if *exact && implies(&lo, l, Ordering::Greater) && implies(&hi, h, Ordering::Less) {
                answered.push(*i);
            }
        }
        // NULLs sort after every value: a range open above stops before the entries whose
        // column is NULL (a comparison never holds for them).
        let upper = match hi {
            Some(hi) => end(Some(hi)),
            None => {
                let mut values = prefix.clone();
                values.push(Datum::Null);
                Some(KeyEnd { values, inclusive: false })
            }
        };
        return KeyRange { lower: end(lo), upper, used, answered, eq_columns };
    }
    let eq_columns = prefix.len();
    let end = (!prefix.is_empty()).then_some(KeyEnd { values: prefix, inclusive: true });
    KeyRange { lower: end.clone(), upper: end, answered: used.clone(), used, eq_columns }
}

/// One end of a range on a key column: the value and whether it is inclusive; `None` for
/// an open end.
type End = Option<(Value, bool)>;

/// Whether `a` admits no more than `b`: a greater lower end (`keep` = Greater) or a
/// smaller upper end (Less), an exclusive end at the same value as an inclusive one, or
/// any end when `b` is open. `None` when the two do not compare.
fn at_least_as_tight(a: &(Value, bool), b: &End, keep: Ordering) -> Option<bool> {
    let Some(b) = b else { return Some(true) };
    match a.0.sql_cmp(&b.0).ok()?? {
        Ordering::Equal => Some(!a.1 || b.1),
        order => Some(order == keep),
    }
}

/// Narrows `current` by `other` when `other` is tighter (ends that do not compare leave it).
fn narrow(current: &mut End, other: &End, keep: Ordering) {
    let Some(o) = other else { return };
    let tighter = match current {
        None => true,
        Some(_) => at_least_as_tight(o, current, keep) == Some(true),
    };
    if tighter {
        *current = other.clone();
    }
}

/// Whether the range's end `range` holds wherever a conjunct's end `own` does not fail.
fn implies(range: &End, own: &End, keep: Ordering) -> bool {
    match range {
        None => own.is_none(),
        Some(r) => at_least_as_tight(r, own, keep) == Some(true),
    }
}

/// `v` as a value of a key column of type `t`, when comparing it in the index's order
/// means the same as the SQL comparison (a number against a number, a string against a
/// string, a date or timestamp against either, an interval against its kind); otherwise
/// the conjunct cannot bound the index.
pub(crate) fn key_value(t: DataType, v: &Value) -> Option<Value> {
    match (t, v) {
        (DataType::Integer | DataType::Number { .. }, Datum::Int(_) | Datum::Num(_)) => Some(v.clone()),
        (DataType::Varchar2 { .. } | DataType::Char { .. }, Datum::Str(_)) => Some(v.clone()),
        (DataType::Date, Datum::Date(_)) => Some(v.clone()),
        (DataType::Date, Datum::Str(s)) => crate::types::parse_date(s, None).ok().map(Datum::Date),
        (DataType::Timestamp { .. }, Datum::Timestamp(_))
        | (DataType::IntervalYearMonth { .. }, Datum::YearMonth(_))
        | (DataType::IntervalDaySecond { .. }, Datum::DaySecond(_)) => Some(v.clone()),
        (DataType::Timestamp { .. }, Datum::Date(d)) => crate::types::datetime::date_micros(*d).map(Datum::Timestamp),
        // A DATE key meets a TIMESTAMP at a whole second as the DATE of that second.
        (DataType::Date, Datum::Timestamp(t)) if t % crate::types::datetime::MICROS_PER_SECOND == 0 => {
            Some(Datum::Date(t / crate::types::datetime::MICROS_PER_SECOND))
        }
        (DataType::Timestamp { .. }, Datum::Str(s)) => {
            crate::types::datetime::parse_timestamp(s).ok().map(Datum::Timestamp)
        }
        _ => None,
    }
}
