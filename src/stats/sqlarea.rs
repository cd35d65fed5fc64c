//! Per-statement totals over every session, as `v$sql` shows them: one entry per
//! statement text, with its executions, the rows they processed, their buffer gets and
//! disk reads, elapsed and CPU time, and the performance counters of the executions that
//! ran with counters on, and what its work areas did (`v$sql_workarea`).
//!
//! ```text
//!  SqlArea ─ Mutex ─ HashMap<text, SqlEntry>      (at most CAPACITY entries)
//!                     SqlEntry: sql_id, totals, counted executions' counters, last active
//! ```
//!
//! Invariants: an entry's totals only grow, each execution adds to exactly one entry, once,
//! when it ends (failed executions count too, as Oracle's do). When the area is full the
//! least recently executed half is aged out at once (so a workload of ever-new texts pays
//! the eviction's sort once per CAPACITY / 2 statements). Counter totals cover only
//! `counted_executions` of the executions, and are absent (not zero) when none were
//! counted or the machine does not offer the counter.

use super::hwcounters::{Counter, Reading};
use super::workarea::{WorkareaRun, WorkareaTotals};
use foldhash::HashMap;
use parking_lot::Mutex;

/// Characters of a statement `SQL_TEXT` shows (Oracle's v$sql shows the first 1,000;
/// entries are told apart by their whole text).
pub const SQL_TEXT_CHARS: usize = 1000;

/// Entries kept before the least recently executed half is aged out.
pub const CAPACITY: usize = 4096;

/// What one execution did.
#[derive(Debug, Clone, Default)]
pub struct Execution {
    pub rows_processed: u64,
    pub buffer_gets: u64,
    pub disk_reads: u64,
    pub elapsed_us: u64,
    pub cpu_us: u64,
    /// The session's and its helpers' counters over the execution, when they were on.
    pub counters: Option<Reading>,
    /// What its work areas did, by plan line id.
    pub workareas: Vec<(u32, WorkareaRun)>,
}

/// One statement's totals.
#[derive(Debug, Clone)]
pub struct SqlEntry {
    pub sql_id: String,
    pub sql_text: String,
    pub executions: u64,
    pub rows_processed: u64,
    pub buffer_gets: u64,
    pub disk_reads: u64,
    pub elapsed_us: u64,
    pub cpu_us: u64,
    /// Executions that ran with performance counters on.
    pub counted_executions: u64,
    /// Their counters' totals (scaled for multiplexing), by counter; a counter the machine
    /// does not offer never appears.
    pub counters: std::collections::BTreeMap<Counter, u64>,
    /// Its work areas (`v$sql_workarea`), by plan line id.
    pub workareas: Vec<WorkareaTotals>,
    /// The area's execution sequence number of its latest execution (for ageing out).
    last_active: u64,
}

impl SqlEntry {
    /// The entry of `text` before its first execution.
    fn new(text: &str) -> SqlEntry {
        SqlEntry {
            sql_id: sql_id(text),
            sql_text: text.chars().take(SQL_TEXT_CHARS).collect(),
            executions: 0,
            rows_processed: 0,
            buffer_gets: 0,
            disk_reads: 0,
            elapsed_us: 0,
            cpu_us: 0,
            counted_executions: 0,
            counters: Default::default(),
            workareas: Vec::new(),
            last_active: 0,
        }
    }
}

/// The per-statement totals of one database.
#[derive(Debug, Default)]
pub struct SqlArea {
    inner: Mutex<Area>,
}

#[derive(Debug, Default)]
struct Area {
    /// Keyed by the text a client sends, hashed at every execution: by `foldhash`
    /// (randomly seeded), which costs fewer instructions than SipHash.
    entries: HashMap<String, SqlEntry>,
    executions: u64,
}

impl SqlArea {
    /// Adds one execution of `text` (already trimmed of blanks and a trailing `;`).
    pub fn record(&self, text: &str, execution: &Execution) {
        let mut area = self.inner.lock();
        area.executions += 1;
        let now = area.executions;
        // A statement run before is found with one lookup, without copying its text.
        let entry = match area.entries.get_mut(text) {
            Some(entry) => entry,
            None => {
                if area.entries.len() >= CAPACITY {
                    age_out(&mut area.entries);
                }
                area.entries.entry(text.to_owned()).or_insert_with(|| SqlEntry::new(text))
            }
        };
        entry.executions += 1;
        entry.rows_processed += execution.rows_processed;
        entry.buffer_gets += execution.buffer_gets;
        entry.disk_reads += execution.disk_reads;
        entry.elapsed_us += execution.elapsed_us;
        entry.cpu_us += execution.cpu_us;
        entry.last_active = now;
        for (line, run) in &execution.workareas {
            match entry.workareas.binary_search_by_key(line, |w| w.operation_id) {
                Ok(at) => entry.workareas[at].add(run),
                Err(at) => entry.workareas.insert(at, WorkareaTotals::new(*line, run)),
            }
        }
        if let Some(reading) = &execution.counters {
            entry.counted_executions += 1;
            for counter in Counter::ALL {
                if let Some(v) = reading.value(counter) {
                    *entry.counters.entry(counter).or_default() += v;
                }
            }
        }
    }

    /// Every entry, most recently executed first.
    pub fn entries(&self) -> Vec<SqlEntry> {
        let area = self.inner.lock();
        let mut entries: Vec<SqlEntry> = area.entries.values().cloned().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.last_active));
        entries
    }
}

/// Drops the least recently executed half of `entries`.
fn age_out(entries: &mut HashMap<String, SqlEntry>) {
    let mut ages: Vec<u64> = entries.values().map(|e| e.last_active).collect();
    let middle = ages.len() / 2;
    let (_, &mut cut, _) = ages.select_nth_unstable(middle);
    entries.retain(|_, e| e.last_active > cut);
}

/// A 13-character identifier of `text`, in the shape of Oracle's SQL_ID (base 32 of a
/// 64-bit hash; not Oracle's MD5-derived value): the same text always has the same id.
pub fn sql_id(text: &str) -> String {
    sql_id_of_hash(sql_hash(text))
}

/// The 64-bit hash a SQL_ID writes out (FNV-1a: stable across runs and builds, unlike
/// std's hasher). Active Session History keeps the hash and writes the id when read.
pub fn sql_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The SQL_ID of hash `hash`: its 64 bits as 13 base-32 digits (the first holds 4 bits).
pub fn sql_id_of_hash(hash: u64) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdfghjkmnpqrstuvwxyz";
    (0..13).rev().map(|i| ALPHABET[((hash >> (i * 5)) & 31) as usize] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rows: u64) -> Execution {
        Execution { rows_processed: rows, buffer_gets: 3, elapsed_us: 10, cpu_us: 7, ..Default::default() }
    }

    #[test]
    fn executions_of_one_text_add_up() {
        let area = SqlArea::default();
        area.record("SELECT 1 FROM dual", &run(1));
        area.record("SELECT 1 FROM dual", &run(1));
        area.record("SELECT 2 FROM dual", &run(1));
        let entries = area.entries();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].sql_text, "SELECT 2 FROM dual", "most recent first");
        let one = &entries[1];
        assert_eq!((one.executions, one.rows_processed, one.buffer_gets, one.cpu_us), (2, 2, 6, 14));
        assert_eq!(one.counted_executions, 0);
        assert!(one.counters.is_empty());
    }

    #[test]
    fn a_full_area_ages_out_the_least_recently_executed_half() {
        let area = SqlArea::default();
        for i in 0..CAPACITY {
            area.record(&format!("SELECT {i} FROM dual"), &run(0));
        }
        area.record("SELECT 0 FROM dual", &run(0)); // now the most recent
        area.record("SELECT 'new' FROM dual", &run(0));
        let texts: Vec<String> = area.entries().into_iter().map(|e| e.sql_text).collect();
        assert!(texts.len() <= CAPACITY / 2 + 1, "{}", texts.len());
        assert!(texts.contains(&"SELECT 0 FROM dual".to_owned()));
        assert!(texts.contains(&"SELECT 'new' FROM dual".to_owned()));
        assert!(!texts.contains(&"SELECT 1 FROM dual".to_owned()), "the oldest went");
    }

    #[test]
    fn counters_add_only_what_was_counted() {
        let area = SqlArea::default();
        let mut reading = Reading::default();
        reading.counts.insert(Counter::TaskClock, super::super::hwcounters::Count::new(500, 10, 10));
        reading.unavailable.insert(Counter::Instructions, "not available on this machine: test".into());
        area.record("SELECT 1 FROM dual", &Execution { counters: Some(reading), ..run(1) });
        area.record("SELECT 1 FROM dual", &run(1));
        let e = &area.entries()[0];
        assert_eq!((e.executions, e.counted_executions), (2, 1));
        assert_eq!(e.counters.get(&Counter::TaskClock), Some(&500));
        assert_eq!(e.counters.get(&Counter::Instructions), None);
    }

    #[test]
    fn sql_ids_are_stable_and_shaped_like_oracles() {
        let id = sql_id("SELECT 1 FROM dual");
        assert_eq!(id.len(), 13);
        assert_eq!(id, sql_id("SELECT 1 FROM dual"));
        assert_ne!(id, sql_id("SELECT 2 FROM dual"));
        assert!(id.chars().all(|c| "0123456789abcdfghjkmnpqrstuvwxyz".contains(c)));
    }
}
