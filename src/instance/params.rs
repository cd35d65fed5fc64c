//! Initialization parameters: their names, defaults, what accepts them and when a change
//! takes effect, as `v$parameter` and `SHOW PARAMETERS` show them.

use crate::error::{Error, Result};
use crate::storage::control::{MAX_LOG_FILE_SIZE, MIN_LOG_FILE_SIZE};
use std::collections::BTreeMap;

/// When a change to a parameter takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Modifiable {
    /// ALTER SESSION and ALTER SYSTEM, at once.
    SessionAndSystem,
    /// ALTER SYSTEM only, at once (a setting of the instance, not of a session).
    SystemImmediate,
    /// ALTER SYSTEM only; applies from the next open of the database.
    SystemDeferredToOpen,
    /// Fixed when the database is created.
    Never,
}

/// The kind of value a parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A whole number between the bounds.
    Integer { min: u64, max: u64 },
    /// A size in bytes between the bounds, written with an optional K, M or G suffix.
    Size { min: u64, max: u64 },
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// TRUE or FALSE.
    Boolean,
}

#[derive(Debug)]
pub struct ParameterDef {
    pub name: &'static str,
    pub kind: Kind,
    pub default: &'static str,
    pub modifiable: Modifiable,
    pub description: &'static str,
}

pub const DB_BLOCK_SIZE: &str = "db_block_size";
pub const DB_CACHE_SIZE: &str = "db_cache_size";
pub const MBRC: &str = "db_file_multiblock_read_count";
pub const FILESYSTEMIO_OPTIONS: &str = "filesystemio_options";
pub const UNDO_TABLESPACE_SIZE: &str = "undo_tablespace_size";
pub const UNDO_TABLESPACE_MAXSIZE: &str = "undo_tablespace_maxsize";
pub const UNDO_RETENTION: &str = "undo_retention";
pub const PRE_PAGE_SGA: &str = "pre_page_sga";
pub const STATISTICS_LEVEL: &str = "statistics_level";
pub const TIMED_STATISTICS: &str = "timed_statistics";
pub const PARALLEL_MAX_SERVERS: &str = "parallel_max_servers";
pub const INMEMORY_SIZE: &str = "inmemory_size";
pub const INMEMORY_MAX_POPULATE_SERVERS: &str = "inmemory_max_populate_servers";
pub const INMEMORY_IMCU_TARGET_ROWS: &str = "_inmemory_imcu_target_rows";
pub const LOG_FILE_SIZE: &str = "log_file_size";
pub const COMMIT_LOGGING: &str = "commit_logging";
pub const COMMIT_WAIT: &str = "commit_wait";
pub const LOG_CHECKPOINT_TIMEOUT: &str = "log_checkpoint_timeout";
pub const ASH_SAMPLING_INTERVAL: &str = "_ash_sampling_interval";
pub const ASH_SIZE: &str = "_ash_size";
pub const SORT_AREA_SIZE: &str = "sort_area_size";
pub const WORKAREA_SIZE_POLICY: &str = "workarea_size_policy";
pub const PGA_AGGREGATE_TARGET: &str = "pga_aggregate_target";
pub const HASH_AREA_SIZE: &str = "hash_area_size";
pub const OPTIMIZER_INDEX_CACHING: &str = "optimizer_index_caching";
pub const OPTIMIZER_INDEX_COST_ADJ: &str = "optimizer_index_cost_adj";
pub const OPTIMIZER_CACHE_AWARENESS: &str = "optimizer_cache_awareness";
pub const SESSION_CACHED_CURSORS: &str = "session_cached_cursors";

/// Every parameter lioscope knows.
pub const PARAMETERS: &[ParameterDef] = &[
    ParameterDef {
        name: DB_BLOCK_SIZE,
        kind: Kind::Integer { min: 2048, max: 32768 },
        default: "8192",
        modifiable: Modifiable::Never,
        description: "Size of a database block in bytes, chosen at creation",
    },
    ParameterDef {
        name: DB_CACHE_SIZE,
        kind: Kind::Size { min: 1 << 20, max: u64::MAX },
        default: "128M",
        modifiable: Modifiable::SystemDeferredToOpen,
        description: "Size of the buffer cache",
    },
    ParameterDef {
        name: PRE_PAGE_SGA,
        kind: Kind::Boolean,
        default: "TRUE",
        modifiable: Modifiable::SystemDeferredToOpen,
        description: "TRUE: a background thread populates the buffer cache's memory after open, so that loads do not wait for the kernel to zero fresh pages",
    },
    ParameterDef {
        name: MBRC,
        kind: Kind::Integer { min: 1, max: 1024 },
        default: "128",
        modifiable: Modifiable::SessionAndSystem,
        description: "Blocks read by one multiblock read call of a full scan (never across an extent)",
    },
    ParameterDef {
        name: FILESYSTEMIO_OPTIONS,
        kind: Kind::Choice(&["none", "directio"]),
        default: "none",
        modifiable: Modifiable::SystemDeferredToOpen,
        description: "none: buffered I/O (FLUSH BUFFER_CACHE also drops the OS page cache of the datafiles); directio: O_DIRECT",
    },
    ParameterDef {
        name: SORT_AREA_SIZE,
        kind: Kind::Size { min: 64 << 10, max: u64::MAX },
        default: "512M",
        modifiable: Modifiable::SessionAndSystem,
        description: "Memory one sort of CREATE INDEX may use (keys, their 24-byte entries and the radix sort's copy of them); beyond it sorted runs go to a temporary file in the database directory and are merged (sorts (disk)). The default keeps about 9 million short keys in memory; at most 2G is used",
    },
    ParameterDef {
        name: WORKAREA_SIZE_POLICY,
        kind: Kind::Choice(&["auto", "manual"]),
        default: "auto",
        modifiable: Modifiable::SessionAndSystem,
        description: "How a hash join's work area is sized: auto, from pga_aggregate_target; manual, from hash_area_size. Beyond it the join spills partitions to a temporary file (workarea executions - onepass / multipass)",
    },
    ParameterDef {
        name: PGA_AGGREGATE_TARGET,
        kind: Kind::Size { min: 10 << 20, max: u64::MAX },
        default: "2G",
        modifiable: Modifiable::SystemImmediate,
        description: "Under workarea_size_policy = auto, one hash join's work area takes at most 20% of this, and at most 1G",
    },
    ParameterDef {
        name: HASH_AREA_SIZE,
        kind: Kind::Size { min: 1 << 10, max: u64::MAX },
        default: "128K",
        modifiable: Modifiable::SessionAndSystem,
        description: "Under workarea_size_policy = manual, the memory one hash join's work area takes (Oracle's default, twice Oracle's sort_area_size of 64K)",
    },
    ParameterDef {
        name: OPTIMIZER_INDEX_CACHING,
        kind: Kind::Integer { min: 0, max: 100 },
        default: "0",
        modifiable: Modifiable::SessionAndSystem,
        description: "Percent of the index blocks of a nested loop's index probes the optimizer assumes are in the buffer cache: that share of the probe's index reads costs the CPU of a logical read instead of a single-block read, so nested loops look cheaper (table blocks and other index paths are not affected)",
    },
    ParameterDef {
        name: OPTIMIZER_INDEX_COST_ADJ,
        kind: Kind::Integer { min: 1, max: 10000 },
        default: "100",
        modifiable: Modifiable::SessionAndSystem,
        description: "Percent of their regular cost the optimizer gives the block reads of index access paths (unique, range and full scans, the table rows they fetch by rowid, and a nested loop's index probes; not the fast full scan): 50 makes them look half as expensive",
    },
    ParameterDef {
        name: OPTIMIZER_CACHE_AWARENESS,
        kind: Kind::Boolean,
        default: "FALSE",
        modifiable: Modifiable::SessionAndSystem,
        description: "TRUE: when a statement is planned, the optimizer counts each segment's blocks in the buffer cache and costs the share of a segment's reads it expects cached as the CPU of logical reads instead of single-block or multiblock reads (Oracle's hidden _optimizer_cache_stats, with the cache counted at once instead of gathered statistics); FALSE: every read is costed as a disk read",
    },
    ParameterDef {
        name: SESSION_CACHED_CURSORS,
        kind: Kind::Integer { min: 0, max: 65535 },
        default: "50",
        modifiable: Modifiable::SessionAndSystem,
        description: "Queries a session keeps parsed, with their plans, by text: a query run again from the same text (without bind variables) runs its kept plan (a soft parse, counted in session cursor cache hits) unless the dictionary, the statistics or a parameter changed since it was planned; the least recently run goes first when more are kept; 0: every statement is parsed and planned anew",
    },
    ParameterDef {
        name: STATISTICS_LEVEL,
        kind: Kind::Choice(&["basic", "typical", "all"]),
        default: "typical",
        modifiable: Modifiable::SessionAndSystem,
        description: "all: every query gathers row-source statistics (rows, cr, pr, pw, time per plan line), at the cost of reading the clock around the rows each line passes on; basic: timed_statistics is FALSE unless set",
    },
    ParameterDef {
        name: TIMED_STATISTICS,
        kind: Kind::Boolean,
        default: "TRUE",
        modifiable: Modifiable::SessionAndSystem,
        description: "Unless set, FALSE where statistics_level is basic and TRUE otherwise. FALSE: a user call does not ask the operating system for its thread's CPU time (two system calls a call, and two a physical read), so DB CPU, CPU used by this session, v$sql CPU_TIME and the physical reads' CPU statistics do not grow; elapsed and wait times, read from a clock that needs no system call, are still timed",
    },
    ParameterDef {
        name: PARALLEL_MAX_SERVERS,
        kind: Kind::Integer { min: 0, max: 1 },
        default: "1",
        modifiable: Modifiable::SessionAndSystem,
        description: "Helper threads a statement may use beside its session's: 1 lets INSERT ... SELECT over the CONNECT BY row generator evaluate its expressions on a helper thread while the session stores the rows (on a machine with more than one CPU; the helper's CPU time counts as the session's); 0: none",
    },
    ParameterDef {
        name: INMEMORY_SIZE,
        kind: Kind::Size { min: 0, max: u64::MAX },
        default: "0",
        modifiable: Modifiable::SystemImmediate,
        description: "Memory for the in-memory column store; 0 leaves it off. Raising it lets population go on at once; lowering it below what is populated keeps what is there and populates no more",
    },
    ParameterDef {
        name: INMEMORY_MAX_POPULATE_SERVERS,
        kind: Kind::Integer { min: 0, max: 64 },
        // On a machine with one CPU; `default_value` gives half the CPUs.
        default: "1",
        modifiable: Modifiable::SystemImmediate,
        description: "Background workers populating the column store (default: half the CPUs, at least 1); 0 stops population",
    },
    ParameterDef {
        name: INMEMORY_IMCU_TARGET_ROWS,
        kind: Kind::Integer { min: 1, max: u32::MAX as u64 },
        default: "524288",
        modifiable: Modifiable::SystemImmediate,
        description: "Rows a column-store unit covers, about: planning ends a unit after the block that brings it to this many, or at 64 MiB of blocks; units planned from then on (Oracle's hidden parameter of the same name)",
    },
    ParameterDef {
        name: UNDO_TABLESPACE_SIZE,
        kind: Kind::Size { min: 64 << 10, max: u64::MAX },
        default: "64M",
        modifiable: Modifiable::Never,
        description: "Size of the undo tablespace (undotbs01.dbf) when it is created",
    },
    ParameterDef {
        name: UNDO_TABLESPACE_MAXSIZE,
        kind: Kind::Size { min: 64 << 10, max: u64::MAX },
        default: "32G",
        modifiable: Modifiable::Never,
        description: "Size the undo tablespace grows up to, an extent at a time, when no undo block can be reused (AUTOEXTEND ON MAXSIZE), chosen at creation; at most 4,194,304 blocks",
    },
    ParameterDef {
        name: UNDO_RETENTION,
        kind: Kind::Integer { min: 0, max: u32::MAX as u64 },
        default: "900",
        modifiable: Modifiable::SystemImmediate,
        description: "Seconds after a transaction ends before its undo blocks count as expired (reused first)",
    },
    ParameterDef {
        name: LOG_FILE_SIZE,
        kind: Kind::Size { min: MIN_LOG_FILE_SIZE, max: MAX_LOG_FILE_SIZE },
        default: "64M",
        modifiable: Modifiable::Never,
        description: "Size of each online redo log file (three groups, redo01.log to redo03.log), chosen at creation; below 4G (4,294,967,295 bytes at most), as a redo position holds a 32-bit offset in its file",
    },
    ParameterDef {
        name: COMMIT_LOGGING,
        kind: Kind::Choice(&["immediate", "batch"]),
        default: "immediate",
        modifiable: Modifiable::SessionAndSystem,
        description: "immediate: a commit has its redo written at once (by its session, or by the next write if one is under way); batch: the commit record waits for the log writer's next write (every 200 ms, or at 1 MB of redo)",
    },
    ParameterDef {
        name: COMMIT_WAIT,
        kind: Kind::Choice(&["wait", "nowait", "force_wait"]),
        default: "wait",
        modifiable: Modifiable::SessionAndSystem,
        description: "wait: COMMIT returns once its redo is on disk (log file sync); nowait: at once, so a crash may lose commits acknowledged in the last moments; force_wait: wait even when the COMMIT statement says NOWAIT",
    },
    ParameterDef {
        name: LOG_CHECKPOINT_TIMEOUT,
        kind: Kind::Integer { min: 0, max: u32::MAX as u64 },
        default: "3",
        modifiable: Modifiable::SystemImmediate,
        description: "Seconds the checkpoint position may lag behind the log: the database writer writes, oldest first, the blocks first changed longer ago (incremental checkpoints, which bound the redo recovery applies); 0: checkpoints only at log switches, when asked, and at close",
    },
    ParameterDef {
        name: ASH_SAMPLING_INTERVAL,
        kind: Kind::Integer { min: 10, max: 3_600_000 },
        default: "1000",
        modifiable: Modifiable::SystemImmediate,
        description: "Milliseconds between two samples of the active sessions for v$active_session_history (Oracle's hidden parameter of the same name); each sample records the interval it was taken with",
    },
    ParameterDef {
        name: ASH_SIZE,
        kind: Kind::Integer { min: 0, max: 100_000_000 },
        default: "100000",
        modifiable: Modifiable::SystemImmediate,
        description: "Samples v$active_session_history keeps at most (a sample is one active session at one tick); the oldest go first. Lowering it drops the oldest at once",
    },
];

impl ParameterDef {
    /// The value the parameter has when nothing set it: [`ParameterDef::default`], except
    /// for a default that depends on the machine (`inmemory_max_populate_servers`: half
    /// the CPUs, at least 1).
    pub fn default_value(&self) -> &'static str {
        if self.name == INMEMORY_MAX_POPULATE_SERVERS {
            static HALF_THE_CPUS: std::sync::OnceLock<String> = std::sync::OnceLock::new();
            return HALF_THE_CPUS.get_or_init(|| (crate::stats::osstat::usable_cpus() / 2).max(1).to_string());
        }
        self.default
    }
}

/// The definition of `name` (case-insensitive).
pub fn lookup(name: &str) -> Result<&'static ParameterDef> {
    PARAMETERS
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| Error::UnknownObject { kind: "parameter", name: name.to_ascii_lowercase() })
}

/// Checks `value` for `def` and returns it in canonical form.
pub fn validate(def: &ParameterDef, value: &str) -> Result<String> {
    let bad = |message: String| Error::InvalidParameter { name: def.name.to_owned(), message };
    let value = value.trim().trim_matches('\'');
    match def.kind {
        Kind::Integer { min, max } => {
            let n: u64 = value.parse().map_err(|_| bad(format!("'{value}' is not a whole number")))?;
            if n < min || n > max {
                return Err(bad(format!("{n} is not between {min} and {max}")));
            }
            Ok(n.to_string())
        }
        Kind::Size { min, max } => {
            let n = parse_size(value).ok_or_else(|| bad(format!("'{value}' is not a size (e.g. 512M, 2G)")))?;
            if n < min {
                return Err(bad(format!("{n} bytes is below the minimum of {min}")));
            }
            if n > max {
                return Err(bad(format!("{n} bytes is above the maximum of {max}")));
            }
            Ok(value.to_ascii_uppercase())
        }
        Kind::Choice(words) => words
            .iter()
            .find(|w| w.eq_ignore_ascii_case(value))
            .map(|w| (*w).to_owned())
            .ok_or_else(|| bad(format!("'{value}' is not one of {}", words.join(", ")))),
        Kind::Boolean => ["TRUE", "FALSE"]
            .into_iter()
            .find(|w| w.eq_ignore_ascii_case(value))
            .map(str::to_owned)
            .ok_or_else(|| bad(format!("'{value}' is not TRUE or FALSE"))),
    }
}

/// Parses `123`, `64K`, `512M`, `2G` into bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, factor) = match text.chars().last()?.to_ascii_uppercase() {
        'K' => (&text[..text.len() - 1], 1u64 << 10),
        'M' => (&text[..text.len() - 1], 1 << 20),
        'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(factor)
}

/// `bytes` written as a size: with a G, M or K suffix when it is a whole multiple.
pub fn format_size(bytes: u64) -> String {
    match bytes {
        b if b > 0 && b % (1 << 30) == 0 => format!("{}G", b >> 30),
        b if b > 0 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b > 0 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => b.to_string(),
    }
}

/// The validated value `value` of the numeric parameter `name`, as a number.
pub fn number(name: &str, value: &str) -> u64 {
    parse_size(value).unwrap_or_else(|| panic!("parameter {name} holds a validated number, found '{value}'"))
}

/// A set of parameter values over the defaults.
#[derive(Debug, Clone, Default)]
pub struct ParameterValues {
    /// Values set explicitly (ALTER SYSTEM, ALTER SESSION, options at open); persisted.
    set: BTreeMap<&'static str, String>,
    /// Values fixed when the database was created (`db_block_size`): reported by `get`
    /// over anything set, but neither counted as set nor persisted.
    created: BTreeMap<&'static str, String>,
}

impl ParameterValues {
    /// The values stored in the control file of the database in `dir` (`parameters`):
    /// one that is unknown or invalid is an error naming the file and the parameter.
    pub fn stored(dir: &std::path::Path, map: &BTreeMap<String, String>) -> Result<ParameterValues> {
        let mut values = ParameterValues::default();
        for (k, v) in map {
            values.set(k, v).map_err(|e| Error::NotADatabase {
                path: dir.to_owned(),
                reason: format!("{}: parameters.{k}: {e}", crate::storage::control::CONTROL_FILE),
            })?;
        }
        Ok(values)
    }

    /// These values with `name` fixed to `value` by the database's creation.
    pub fn created_with(mut self, name: &'static str, value: String) -> ParameterValues {
        assert!(lookup(name).is_ok_and(|d| d.modifiable == Modifiable::Never), "{name} is fixed at creation");
        self.created.insert(name, value);
        self
    }

    /// Validates and sets a value.
    pub fn set(&mut self, name: &str, value: &str) -> Result<()> {
        let def = lookup(name)?;
        let canonical = validate(def, value)?;
        self.set.insert(def.name, canonical);
        Ok(())
    }

    /// The value of `name`: as created, set, or the default (for `timed_statistics`, the
    /// one `statistics_level` implies, `timed_statistics_by_level`).
    pub fn get(&self, name: &str) -> &str {
        match self.created.get(name).or_else(|| self.set.get(name)) {
            Some(v) => v,
            None if name == TIMED_STATISTICS => timed_statistics_by_level(self.get(STATISTICS_LEVEL)),
            None => lookup(name).map(ParameterDef::default_value).unwrap_or(""),
        }
    }

    /// Whether `name` was set explicitly.
    pub fn is_set(&self, name: &str) -> bool {
        self.set.contains_key(name)
    }

    pub fn get_u64(&self, name: &str) -> u64 {
        number(name, self.get(name))
    }

    /// The value of the boolean parameter `name`.
    pub fn get_bool(&self, name: &str) -> bool {
        match self.get(name) {
            "TRUE" => true,
            "FALSE" => false,
            other => panic!("parameter {name} holds a validated boolean, found '{other}'"),
        }
    }

    /// The explicitly set values, for persisting.
    pub fn to_map(&self) -> BTreeMap<String, String> {
        self.set.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    }
}

/// `timed_statistics` where it was not set: FALSE under `statistics_level = basic`, TRUE
/// otherwise, as Oracle derives it.
pub fn timed_statistics_by_level(statistics_level: &str) -> &'static str {
    if statistics_level.eq_ignore_ascii_case("basic") { "FALSE" } else { "TRUE" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_bounds() {
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("x"), None);
        let mut v = ParameterValues::default();
        assert_eq!(v.get_u64(MBRC), 128);
        v.set("DB_FILE_MULTIBLOCK_READ_COUNT", "8").unwrap();
        assert_eq!(v.get_u64(MBRC), 8);
        assert!(v.set(MBRC, "0").is_err());
        assert!(v.set("no_such_thing", "1").is_err());
        assert!(v.set(FILESYSTEMIO_OPTIONS, "async").is_err());
        assert!(v.get_bool(PRE_PAGE_SGA));
        v.set("PRE_PAGE_SGA", "false").unwrap();
        assert_eq!(v.get(PRE_PAGE_SGA), "FALSE");
        assert!(!v.get_bool(PRE_PAGE_SGA));
        assert!(v.set(PRE_PAGE_SGA, "yes").is_err());
    }

    /// A redo position holds a 32-bit offset in its log file: a larger file is refused,
    /// with the limit named.
    #[test]
    fn log_file_size_is_limited_by_the_redo_offset() {
        let def = lookup(LOG_FILE_SIZE).unwrap();
        assert_eq!(validate(def, "4095M").unwrap(), "4095M");
        assert_eq!(validate(def, "4294967295").unwrap(), "4294967295");
        for too_big in ["4G", "4294967296", "5G"] {
            let e = validate(def, too_big).unwrap_err().to_string();
            assert!(e.contains("log_file_size") && e.contains("maximum of 4294967295"), "{e}");
        }
    }

    #[test]
    fn values_fixed_at_creation_are_reported_but_not_set() {
        let v = ParameterValues::default().created_with(DB_BLOCK_SIZE, "2048".into());
        assert_eq!(v.get(DB_BLOCK_SIZE), "2048");
        assert!(!v.is_set(DB_BLOCK_SIZE));
        assert!(v.to_map().is_empty());
    }
}
