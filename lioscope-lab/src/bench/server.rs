//! `lioscope bench server`: `pgbench` against `lioscope serve` and against PostgreSQL,
//! the same scripts on the same rows in the same run, over TCP on the loopback.
//!
//! Tables as pgbench's (`branches`, `tellers`, `accounts`, `history`, with primary keys),
//! `--branches` of them with 10 tellers and `--accounts-per-branch` accounts each, made
//! the same in both. Two scripts, given to `pgbench -n -f` with `-M prepared` (each
//! statement parsed once per connection, then bound and executed):
//!
//! ```text
//!  tpcb:   \set aid/bid/tid/delta at random
//!          BEGIN; UPDATE accounts ...; SELECT abalance ...; UPDATE tellers ...;
//!          UPDATE branches ...; INSERT INTO history ...; END;
//!  select: \set aid at random; SELECT abalance FROM accounts WHERE aid = :aid
//! ```
//!
//! Each (engine, script, client count) runs `--seconds` with `-j` the smaller of the
//! clients and the CPUs, and per-transaction logs (`-l`) give the latency percentiles.
//! Both servers are up for the whole run and each (script, client count) runs on
//! lioscope then at once on PostgreSQL, so that a ratio's two figures come from the same
//! few minutes of a shared host whose disk and CPUs drift. With `--rounds N` each pair
//! runs N times, the engine that goes first alternating, and the summary gives each
//! engine's median TPS and the median (lowest, highest) of the rounds' ratios: one run
//! of each says little where the host's own drift is as large as the gap. Every run also
//! reports the CPU its server spent a transaction, user and system apart, and pgbench's
//! (see [`process_cpu`]): steadier than TPS on a shared host, and on a machine whose
//! CPUs pgbench shares with the server, the split of the time between them.
//! Both engines are durable at commit: PostgreSQL with its defaults (`fsync`,
//! `synchronous_commit = on`), lioscope with its (the commit waits for its redo write
//! and sync). Both checkpoint after the load, then every 300 s at most
//! (`checkpoint_timeout`, `log_checkpoint_timeout`), and after about as much redo:
//! PostgreSQL when the WAL since its last checkpoint nears `max_wal_size` / (1 +
//! `checkpoint_completion_target`), 1 GB / 1.9 with its defaults, lioscope at each log
//! switch, its logs made 512 MB for the run. On a 2-CPU machine pgbench's own threads
//! share the CPUs with the server: the same for both engines, and said in the report.

use super::peers::PgServer;
use super::process_cpu::{self, CpuTime};
use lioscope::{Database, DatabaseOptions, Error, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Seconds between checkpoints in both engines: PostgreSQL's default `checkpoint_timeout`,
/// given to lioscope as `log_checkpoint_timeout` (whose default, 3, keeps recovery short
/// at the cost of writing hot blocks, and logging their images again, every few seconds).
const CHECKPOINT_SECONDS: u32 = 300;

/// lioscope's redo log files for the run: a log switch checkpoints, so their size is the
/// redo between checkpoints, as PostgreSQL's `max_wal_size` (1 GB) makes about 540 MB.
const LOG_FILE_SIZE: &str = "512M";

/// Options of the server benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerBenchOptions {
    /// Branches (pgbench's scale): each has 10 tellers.
    #[arg(long, default_value_t = 32)]
    pub branches: u64,
    /// Accounts per branch.
    #[arg(long, default_value_t = 10_000)]
    pub accounts_per_branch: u64,
    /// Client counts to run each script with.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1, 8, 32])]
    pub clients: Vec<usize>,
    /// Seconds each run lasts.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Runs of each script and client count on each engine. The engines take turns,
    /// which goes first alternating by round, and the report gives each engine's median
    /// and the median of the rounds' ratios.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Leave PostgreSQL out.
    #[arg(long)]
    pub no_postgres: bool,
    /// Also run lioscope with `timed_statistics = FALSE`, as the engine `lioscope
    /// untimed`: its calls do not read their thread's CPU clock (two system calls a call
    /// fewer), so the runs show what timing DB CPU costs.
    #[arg(long)]
    pub untimed: bool,
    /// Directory for the databases (default: a temporary directory, removed after).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// One run's figures.
#[derive(Debug, Clone)]
pub struct RunFigures {
    pub engine: &'static str,
    pub script: &'static str,
    pub clients: usize,
    /// Which round (from 1) of this script and client count.
    pub round: u32,
    pub tps: f64,
    pub transactions: usize,
    pub failed: usize,
    /// Latency percentiles p50, p95, p99, in milliseconds.
    pub latency_ms: [f64; 3],
    /// The server's CPU a transaction, microseconds (see [`process_cpu`]); `None` where
    /// it could not be read.
    pub server_cpu_us: Option<CpuTime>,
    /// pgbench's CPU a transaction, microseconds.
    pub client_cpu_us: Option<CpuTime>,
}

const TABLES: &[&str] = &[
    "CREATE TABLE branches (bid INTEGER PRIMARY KEY, bbalance INTEGER, filler CHAR(88))",
    "CREATE TABLE tellers (tid INTEGER PRIMARY KEY, bid INTEGER, tbalance INTEGER, filler CHAR(84))",
    "CREATE TABLE accounts (aid INTEGER PRIMARY KEY, bid INTEGER, abalance INTEGER, filler CHAR(84))",
    "CREATE TABLE history (tid INTEGER, bid INTEGER, aid INTEGER, delta INTEGER, filler CHAR(22))",
];

fn tpcb_script(branches: u64, accounts: u64) -> String {
    format!(
        "\\set aid random(1, {accounts})\n\\set bid random(1, {branches})\n\\set tid random(1, {tellers})\n\\set delta random(-5000, 5000)\n\
         BEGIN;\n\
         UPDATE accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
         SELECT abalance FROM accounts WHERE aid = :aid;\n\
         UPDATE tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
         UPDATE branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
         INSERT INTO history (tid, bid, aid, delta) VALUES (:tid, :bid, :aid, :delta);\n\
         END;\n",
        tellers = branches * 10
    )
}

fn select_script(accounts: u64) -> String {
    format!("\\set aid random(1, {accounts})\nSELECT abalance FROM accounts WHERE aid = :aid;\n")
}

pub fn run(opts: &ServerBenchOptions) -> Result<Vec<RunFigures>> {
    let tmp = tempfile::tempdir().map_err(|e| Error::io("create temporary directory", "/tmp", e))?;
    let work = opts.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    std::fs::create_dir_all(&work).map_err(|e| Error::io("create directory", &work, e))?;
    let accounts = opts.branches * opts.accounts_per_branch;
    let scripts = [
        ("tpcb", write(&work.join("tpcb.sql"), &tpcb_script(opts.branches, accounts))?),
        ("select", write(&work.join("select.sql"), &select_script(accounts))?),
    ];
    let mut figures = Vec::new();

    // lioscope: the rows made in-process, then served.
    let parameters = vec![(String::from("log_file_size"), String::from(LOG_FILE_SIZE))];
    let db = Database::create(work.join("lioscope"), DatabaseOptions { parameters, ..Default::default() })?;
    {
        let s = db.session();
        for sql in TABLES {
            s.execute(sql)?;
        }
        s.execute(&format!(
            "INSERT INTO branches SELECT LEVEL, 0, 'b' FROM dual CONNECT BY LEVEL <= {}",
            opts.branches
        ))?;
        s.execute(&format!(
            "INSERT INTO tellers SELECT LEVEL, TRUNC((LEVEL - 1) / 10) + 1, 0, 't' FROM dual CONNECT BY LEVEL <= {}",
            opts.branches * 10
        ))?;
        s.execute(&format!(
            "INSERT INTO accounts SELECT LEVEL, TRUNC((LEVEL - 1) / {}) + 1, 0, 'a' FROM dual CONNECT BY LEVEL <= {accounts}",
            opts.accounts_per_branch
        ))?;
        s.execute("COMMIT")?;
        for t in ["branches", "tellers", "accounts"] {
            s.execute(&format!("ANALYZE TABLE {t} COMPUTE STATISTICS"))?;
        }
        // Checkpoints as PostgreSQL's: the load's blocks written before the runs, then
        // the same interval (its checkpoint_timeout, 300 s).
        s.execute("ALTER SYSTEM CHECKPOINT")?;
        s.execute(&format!("ALTER SYSTEM SET log_checkpoint_timeout = {CHECKPOINT_SECONDS}"))?;
    }
    let embedded = embedded_point_selects(&db, accounts, opts.seconds.min(5))?;
    // Kept to set the served database's `timed_statistics` before each lioscope run.
    let served = db.clone();
    eprintln!("embedded: {embedded:.2} µs a point select (prepared, one session, no protocol)");
    let server = lioscope_server::Server::start(
        db,
        lioscope_server::ServerOptions {
            listen: "127.0.0.1:0".parse().expect("an address"),
            auth: lioscope_server::Auth::Trust,
            ..Default::default()
        },
    )
    .map_err(|e| Error::io("listen", "127.0.0.1", e))?;
    let target =
        Target { host: "127.0.0.1".into(), port: server.local_addr().port(), user: "sys".into(), db: "bench".into() };
    let postgres = if opts.no_postgres { None } else { Some(start_postgres(opts, &work)?) };
    // Each script and client count runs on one engine and at once on the other, so that
    // the two figures of a ratio are minutes apart at most, whatever the host does; with
    // rounds, which engine goes first alternates, so neither always meets a warmer host.
    let lioscope = Engine { name: "lioscope", target: target.clone(), server: ServerProcess::Own, timed: Some(true) };
    let untimed = opts.untimed.then(|| Engine {
        name: UNTIMED,
        target: target.clone(),
        server: ServerProcess::Own,
        timed: Some(false),
    });
    let postgres_engine = postgres.as_ref().map(|(pg, target)| Engine {
        name: "PostgreSQL",
        target: target.clone(),
        server: pg.postmaster_pid().map_or(ServerProcess::Unknown, ServerProcess::Tree),
        timed: None,
    });
    for (script, path) in &scripts {
        for &clients in &opts.clients {
            for round in 1..=opts.rounds {
                let mut engines: Vec<&Engine> =
                    std::iter::once(&lioscope).chain(&untimed).chain(&postgres_engine).collect();
                if round % 2 == 0 {
                    engines.reverse();
                }
                for engine in engines {
                    if let Some(timed) = engine.timed {
                        let value = if timed { "TRUE" } else { "FALSE" };
                        served.session().execute(&format!("ALTER SYSTEM SET timed_statistics = {value}"))?;
                    }
                    let run = Run { script, path, clients, round, seconds: opts.seconds };
                    figures.push(pgbench(engine, &run, &work)?);
                    eprintln!("{}", line(figures.last().expect("pushed")));
                }
            }
        }
    }
    drop(served);
    server.shutdown()?;
    drop(postgres);
    figures.sort_by_key(|f| (engine_rank(f.engine), f.script != "tpcb", f.clients, f.round));
    println!("{}", table(&figures));
    println!("{}", summary(&figures));
    if let Some(served) = figures.iter().find(|f| f.engine == "lioscope" && f.script == "select" && f.clients == 1) {
        println!(
            "The cost of the protocol: a point select takes {embedded:.2} µs in the embedded API (prepared, one \
             session), {:.2} µs through the server with one pgbench client (1 / TPS: the round trip, pgbench's \
             own work and the server's)",
            1e6 / served.tps.max(f64::MIN_POSITIVE)
        );
    }
    Ok(figures)
}

/// A throwaway PostgreSQL server holding the same rows, checkpointed, and how pgbench
/// reaches it.
fn start_postgres(opts: &ServerBenchOptions, work: &Path) -> Result<(PgServer, Target)> {
    let checkpoint_timeout = format!("checkpoint_timeout={CHECKPOINT_SECONDS}s");
    let pg = PgServer::start_with(work, &["listen_addresses=127.0.0.1", "max_connections=100", &checkpoint_timeout])
        .map_err(|e| Error::InvalidParameter { name: "postgres".into(), message: e })?;
    let port = pg_port(pg.url());
    let mut client = postgres::Client::connect(pg.url(), postgres::NoTls)
        .map_err(|e| Error::InvalidParameter { name: "postgres".into(), message: e.to_string() })?;
    let pg_err = |e: postgres::Error| Error::InvalidParameter {
        name: "postgres".into(),
        message: e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string()),
    };
    for sql in TABLES {
        client.batch_execute(sql).map_err(pg_err)?;
    }
    let accounts = opts.branches * opts.accounts_per_branch;
    client
        .batch_execute(&format!(
            "INSERT INTO branches SELECT g, 0, 'b' FROM generate_series(1, {b}) g;\
             INSERT INTO tellers SELECT g, (g - 1) / 10 + 1, 0, 't' FROM generate_series(1, {t}) g;\
             INSERT INTO accounts SELECT g, (g - 1) / {per} + 1, 0, 'a' FROM generate_series(1, {accounts}) g;",
            b = opts.branches,
            t = opts.branches * 10,
            per = opts.accounts_per_branch
        ))
        .map_err(pg_err)?;
    client.batch_execute("VACUUM ANALYZE").map_err(pg_err)?;
    client.batch_execute("CHECKPOINT").map_err(pg_err)?;
    let target = Target { host: "127.0.0.1".into(), port, user: "postgres".into(), db: "postgres".into() };
    Ok((pg, target))
}

/// Microseconds a point select by primary key takes in the embedded API: the select
/// script's statement, prepared once, run for `seconds` in one session with random keys.
fn embedded_point_selects(db: &Database, accounts: u64, seconds: u64) -> Result<f64> {
    use rand::{Rng, SeedableRng};
    let session = db.session();
    let mut select = session.prepare_statement("SELECT abalance FROM accounts WHERE aid = :1")?;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let started = std::time::Instant::now();
    let mut done = 0u64;
    while started.elapsed().as_secs() < seconds.max(1) {
        for _ in 0..1000 {
            let aid = rng.random_range(1..=accounts as i64);
            select.execute(&session, &[aid.into()])?;
        }
        done += 1000;
    }
    Ok(started.elapsed().as_secs_f64() * 1e6 / done as f64)
}

fn write(path: &Path, text: &str) -> Result<PathBuf> {
    std::fs::write(path, text).map_err(|e| Error::io("write", path, e))?;
    Ok(path.to_path_buf())
}

/// The port in a `postgresql://user@socket:port/db` URL.
fn pg_port(url: &str) -> u16 {
    url.rsplit(':').next().and_then(|p| p.split('/').next()).and_then(|p| p.parse().ok()).unwrap_or(5432)
}

#[derive(Clone)]
struct Target {
    host: String,
    port: u16,
    user: String,
    db: String,
}

/// Where a server's CPU time is read.
enum ServerProcess {
    /// This process: lioscope serves from the benchmark's own threads.
    Own,
    /// A process and its children (PostgreSQL's postmaster, backends and workers).
    Tree(u32),
    /// Not known (PostgreSQL's postmaster.pid unreadable): no figure.
    Unknown,
}

impl ServerProcess {
    /// The server's CPU so far and its live child processes.
    fn reading(&self) -> Option<(CpuTime, usize)> {
        match self {
            ServerProcess::Own => process_cpu::own_and_children().map(|(own, _)| (own, 0)),
            ServerProcess::Tree(pid) => process_cpu::process_tree(*pid),
            ServerProcess::Unknown => None,
        }
    }

    /// The server's CPU since `before`, once the children that served the run are reaped.
    fn since(&self, before: Option<(CpuTime, usize)>) -> Option<CpuTime> {
        let (before, children) = before?;
        if let ServerProcess::Tree(pid) = self {
            // The backends exit after pgbench does; their time is the postmaster's once
            // it has reaped them.
            if !process_cpu::reaped_children(*pid, children, std::time::Duration::from_secs(10)) {
                return None;
            }
        }
        Some(self.reading()?.0 - before)
    }
}

struct Engine {
    name: &'static str,
    target: Target,
    server: ServerProcess,
    /// lioscope's `timed_statistics`, set before each of its runs; `None` for PostgreSQL.
    timed: Option<bool>,
}

/// The name of lioscope's runs with `timed_statistics = FALSE`.
const UNTIMED: &str = "lioscope untimed";

/// Where an engine's runs go in the report: lioscope's, then its untimed ones, then
/// PostgreSQL's.
fn engine_rank(engine: &str) -> u8 {
    match engine {
        "lioscope" => 0,
        UNTIMED => 1,
        _ => 2,
    }
}

/// What one pgbench run is asked.
struct Run<'a> {
    script: &'static str,
    path: &'a Path,
    clients: usize,
    round: u32,
    seconds: u64,
}

/// One pgbench run; its transactions' latencies from its per-transaction logs, and the
/// CPU the server and pgbench spent meanwhile.
fn pgbench(engine: &Engine, run: &Run, work: &Path) -> Result<RunFigures> {
    let (target, script, clients) = (&engine.target, run.script, run.clients);
    let logs = work.join(format!("log-{}-{script}-{clients}", engine.name));
    let _ = std::fs::remove_dir_all(&logs);
    std::fs::create_dir_all(&logs).map_err(|e| Error::io("create directory", &logs, e))?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let server_before = engine.server.reading();
    let client_before = process_cpu::own_and_children().map(|(_, children)| children);
    let output = Command::new("pgbench")
        .current_dir(&logs)
        .args(["-h", &target.host, "-p", &target.port.to_string(), "-U", &target.user, "-n", "-M", "prepared"])
        .args(["-c", &clients.to_string(), "-j", &clients.min(cpus).to_string(), "-T", &run.seconds.to_string()])
        .args(["-l", "--log-prefix", "tx", "-f"])
        .arg(run.path)
        .arg(&target.db)
        .output()
        .map_err(|e| Error::io("run", "pgbench", e))?;
    let client_cpu = process_cpu::own_and_children().zip(client_before).map(|((_, after), before)| after - before);
    let server_cpu = engine.server.since(server_before);
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(Error::InvalidParameter {
            name: "pgbench".into(),
            message: format!(
                "{} {script} {clients}: {}{}",
                engine.name,
                stdout,
                String::from_utf8_lossy(&output.stderr)
            ),
        });
    }
    let find = |prefix: &str| -> f64 {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let mut latencies: Vec<u64> = Vec::new();
    let mut failed = 0;
    for entry in std::fs::read_dir(&logs).map_err(|e| Error::io("read", &logs, e))?.flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for fields in text.lines().map(|l| l.split_whitespace().collect::<Vec<_>>()) {
            match fields.get(2).map(|f| f.parse::<u64>()) {
                Some(Ok(us)) => latencies.push(us),
                // "failed" or "skipped" in place of the latency.
                Some(Err(_)) => failed += 1,
                None => {}
            }
        }
    }
    latencies.sort_unstable();
    let percentile = |p: f64| -> f64 {
        if latencies.is_empty() {
            return 0.0;
        }
        let i = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[i] as f64 / 1000.0
    };
    let transactions = latencies.len();
    Ok(RunFigures {
        engine: engine.name,
        script,
        clients,
        round: run.round,
        tps: find("tps ="),
        transactions,
        failed,
        latency_ms: [percentile(0.50), percentile(0.95), percentile(0.99)],
        server_cpu_us: server_cpu.map(|t| t.micros_per(transactions)),
        client_cpu_us: client_cpu.map(|t| t.micros_per(transactions)),
    })
}

/// `user + system = total`, or a dash where the time was not read.
fn cpu_cell(cpu: Option<CpuTime>) -> String {
    cpu.map_or_else(|| "–".into(), |c| format!("{:.1} + {:.1} = {:.1}", c.user_s, c.system_s, c.total_s()))
}

fn line(f: &RunFigures) -> String {
    format!(
        "| {} | {} | {} | {} | {:.0} | {} | {} | {:.2} | {:.2} | {:.2} | {} | {} |",
        f.engine,
        f.script,
        f.clients,
        f.round,
        f.tps,
        f.transactions,
        f.failed,
        f.latency_ms[0],
        f.latency_ms[1],
        f.latency_ms[2],
        cpu_cell(f.server_cpu_us),
        cpu_cell(f.client_cpu_us),
    )
}

/// Every run's figures as a Markdown table.
pub fn table(figures: &[RunFigures]) -> String {
    let mut out = String::from(
        "| engine | script | clients | round | TPS | transactions | failed | p50 ms | p95 ms | p99 ms | server CPU µs/tx (user + sys) | pgbench CPU µs/tx |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for f in figures {
        out.push_str(&line(f));
        out.push('\n');
    }
    out
}

/// The middle value (the mean of the two middle ones for an even count) with the lowest
/// and the highest; `None` if empty.
fn median_and_range(mut values: Vec<f64>) -> Option<(f64, f64, f64)> {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = match n {
        0 => return None,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    Some((median, values[0], values[n - 1]))
}

fn median(values: Vec<f64>) -> Option<f64> {
    median_and_range(values).map(|(median, _, _)| median)
}

/// For each script, client count and lioscope engine (with `timed_statistics` TRUE, the
/// default, and FALSE where run): its median TPS and median server CPU a transaction over
/// the rounds beside PostgreSQL's, and its TPS over PostgreSQL's, the median of the
/// rounds' ratios (each from the two runs of one round) with the lowest and highest.
pub fn summary(figures: &[RunFigures]) -> String {
    let mut out = String::from(
        "| script | clients | engine | rounds | TPS | PostgreSQL TPS | TPS ratio: median (lowest–highest) | server CPU µs/tx | PostgreSQL server CPU µs/tx |\n\
         |---|---:|---|---:|---:|---:|---|---:|---:|\n",
    );
    let mut cases: Vec<(&str, usize, &str)> =
        figures.iter().filter(|f| engine_rank(f.engine) < 2).map(|f| (f.script, f.clients, f.engine)).collect();
    cases.sort_by_key(|&(script, clients, engine)| (script != "tpcb", clients, engine_rank(engine)));
    cases.dedup();
    for (script, clients, engine) in cases {
        let runs = |engine: &str| -> Vec<&RunFigures> {
            figures.iter().filter(|f| f.engine == engine && f.script == script && f.clients == clients).collect()
        };
        let (ours, theirs) = (runs(engine), runs("PostgreSQL"));
        let tps = |runs: &[&RunFigures]| median(runs.iter().map(|f| f.tps).collect());
        let cpu = |runs: &[&RunFigures]| median(runs.iter().filter_map(|f| Some(f.server_cpu_us?.total_s())).collect());
        let ratios: Vec<f64> = ours
            .iter()
            .filter_map(|l| {
                let p = theirs.iter().find(|p| p.round == l.round)?;
                Some(l.tps / p.tps.max(f64::MIN_POSITIVE))
            })
            .collect();
        let ratio =
            median_and_range(ratios).map_or_else(|| "–".into(), |(m, lo, hi)| format!("{m:.2} ({lo:.2}–{hi:.2})"));
        let cell = |v: Option<f64>, digits: usize| v.map_or_else(|| "–".into(), |v| format!("{v:.digits$}"));
        out.push_str(&format!(
            "| {script} | {clients} | {engine} | {} | {} | {} | {ratio} | {} | {} |\n",
            ours.len().max(theirs.len()),
            cell(tps(&ours), 0),
            cell(tps(&theirs), 0),
            cell(cpu(&ours), 1),
            cell(cpu(&theirs), 1),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(engine: &'static str, round: u32, tps: f64) -> RunFigures {
        RunFigures {
            engine,
            script: "select",
            clients: 8,
            round,
            tps,
            transactions: tps as usize,
            failed: 0,
            latency_ms: [0.1, 0.2, 0.3],
            server_cpu_us: None,
            client_cpu_us: None,
        }
    }

    /// Each lioscope engine gets its row beside PostgreSQL's, the ratio of each round's
    /// runs, lioscope's default first.
    #[test]
    fn the_summary_compares_each_lioscope_engine_with_postgresql_round_by_round() {
        let figures = [
            run("PostgreSQL", 1, 100.0),
            run(UNTIMED, 1, 110.0),
            run("lioscope", 1, 90.0),
            run("PostgreSQL", 2, 200.0),
            run("lioscope", 2, 220.0),
            run(UNTIMED, 2, 240.0),
        ];
        let text = summary(&figures);
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(
            rows,
            [
                "| select | 8 | lioscope | 2 | 155 | 150 | 1.00 (0.90–1.10) | – | – |",
                "| select | 8 | lioscope untimed | 2 | 175 | 150 | 1.15 (1.10–1.20) | – | – |",
            ]
        );
    }
}
