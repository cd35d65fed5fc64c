//! The `lioscope` command.

use clap::{Parser, Subcommand};
use lioscope::{Database, DatabaseOptions};
use lioscope_cli::format::OutputFormat;
use lioscope_cli::output::Output;
use lioscope_cli::runner::{Flow, ScriptRunner};
use lioscope_cli::sqlplus::OnError;
use lioscope_cli::target::{Remote, Target};
use std::path::PathBuf;
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// lioscope: an embeddable database engine whose every cost is visible.
#[derive(Parser)]
#[command(name = "lioscope", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Create a new database in DIR.
    Create {
        dir: PathBuf,
        /// Block size in bytes: 2048, 4096, 8192, 16384 or 32768.
        #[arg(long, default_value_t = 8192)]
        block_size: usize,
        /// Uniform extent size in bytes (K, M, G suffixes allowed).
        #[arg(long, default_value = "1M")]
        extent_size: String,
        /// A parameter for the new database, NAME=VALUE (repeatable): those fixed at
        /// creation such as log_file_size or undo_tablespace_size, or any other.
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Interactive SQL shell on the database in DIR (created if it does not exist), or on
    /// a lioscope server (--connect). A failed statement is reported and the shell goes
    /// on (WHENEVER SQLERROR CONTINUE); HELP lists the SQL*Plus commands.
    Shell {
        #[arg(required_unless_present = "connect")]
        dir: Option<PathBuf>,
        /// A lioscope server to run in instead of a directory:
        /// postgres://USER:PASSWORD@HOST:PORT/DB (or PGPASSWORD for the password).
        #[arg(long, conflicts_with_all = ["dir", "db_cache_size"])]
        connect: Option<String>,
        /// Buffer cache size for this open (e.g. 512M, 2G).
        #[arg(long)]
        db_cache_size: Option<String>,
    },
    /// Run a script of SQL and SQL*Plus commands (SET, PROMPT, @, VARIABLE, EXEC, PRINT,
    /// WHENEVER SQLERROR, EXIT; see HELP in the shell). At the first error (printed on
    /// stderr with its line) it rolls back and exits with status 1 (WHENEVER SQLERROR
    /// EXIT FAILURE) unless the script says WHENEVER SQLERROR CONTINUE; at the end it
    /// commits.
    Sql {
        #[arg(required_unless_present = "connect")]
        dir: Option<PathBuf>,
        /// A lioscope server to run in instead of a directory:
        /// postgres://USER:PASSWORD@HOST:PORT/DB (or PGPASSWORD for the password).
        #[arg(long, conflicts_with_all = ["dir", "db_cache_size"])]
        connect: Option<String>,
        /// Statements separated by ';' (error lines count from the text's first line).
        #[arg(short = 'c', long = "command", conflicts_with = "file")]
        command: Option<String>,
        /// A script file of statements separated by ';'.
        #[arg(short = 'f', long = "file")]
        file: Option<PathBuf>,
        /// How results are printed.
        #[arg(long, value_enum, default_value_t = OutputFormat::Table)]
        format: OutputFormat,
        /// Buffer cache size for this open (e.g. 512M, 2G).
        #[arg(long)]
        db_cache_size: Option<String>,
    },
    /// Serve the database in DIR (created if missing) to clients of PostgreSQL's wire
    /// protocol (psql, drivers, pgbench): each connection a lioscope session. Stops
    /// cleanly on SIGTERM or SIGINT (running statements get a grace period, then are
    /// rolled back; the database is checkpointed).
    Serve {
        dir: PathBuf,
        /// The address to listen on.
        #[arg(long, default_value = "127.0.0.1:5433")]
        listen: std::net::SocketAddr,
        /// Connections past this many are refused (SQLSTATE 53300).
        #[arg(long, default_value_t = 100)]
        max_connections: usize,
        /// The database name clients must ask for (any name is accepted without it).
        #[arg(long)]
        database: Option<String>,
        /// How clients log in: `scram-sha-256` (a lioscope user's password, as
        /// `CREATE USER name IDENTIFIED BY pw` or `ALTER USER SYS IDENTIFIED BY pw` set
        /// it) or `trust` (the user a client names, no password; loopback addresses only).
        #[arg(long, value_parser = ["scram-sha-256", "trust"], default_value = "scram-sha-256")]
        auth: String,
        /// The server's TLS certificate chain (PEM): clients that ask for TLS get it.
        #[arg(long, requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The private key of the TLS certificate (PEM).
        #[arg(long, requires = "tls_cert")]
        tls_key: Option<PathBuf>,
        /// Refuse clients that do not use TLS.
        #[arg(long, requires = "tls_cert")]
        require_tls: bool,
        /// Seconds running statements may go on at shutdown before they are interrupted.
        #[arg(long, default_value_t = 10)]
        shutdown_grace: u64,
        /// Buffer cache size for this open (e.g. 512M, 2G).
        #[arg(long)]
        db_cache_size: Option<String>,
    },
    /// Run files of SQLite's sqllogictest format (files, or directories searched for
    /// `.test` files), each on a fresh database in a temporary directory; print per file
    /// the records run, passed, failed and skipped, the total, and the failures grouped by
    /// reason. Exits with status 1 when a record failed.
    Sqllogictest {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Also print each failure's location, SQL and why.
        #[arg(long)]
        verbose: bool,
    },
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
    /// Experiments of the lab.
    Lab {
        #[command(subcommand)]
        which: LabCommand,
    },
}

#[derive(Subcommand)]
enum LabCommand {
    /// The cost of consistent reads: full scans beside another session's uncommitted updates.
    Cr(lioscope_lab::cr::CrOptions),
    /// The cost of a row by access path (index with bad and good clustering factor, full
    /// scan, in-memory scans), with performance counters.
    Scan(lioscope_lab::scan::ScanOptions),
    /// Where the join methods cross: NESTED LOOPS through a well and a badly clustered
    /// index, HASH JOIN and MERGE JOIN, each forced, by outer rows joined; measured, and
    /// by the optimizer's costs, with its own choice at each.
    Join(lioscope_lab::join::JoinOptions),
    /// Logical reads per second, SLOB-style: 1..2×CPUs sessions each reading random index
    /// ranges of its own cached table; the scaling factor and %steal.
    Lio(lioscope_lab::lio::LioOptions),
    /// Cores against threads: 1..2×CPUs CPU-bound workers launched at once, wall time by
    /// load level, the knee, and utilization by threads and by cores.
    Cpu(lioscope_lab::cpu::CpuOptions),
    /// In-memory population by worker count and MEMCOMPRESS level, of plain and migrated
    /// rows: speed a worker, and where the time goes by phase.
    Populate(lioscope_lab::populate::PopulateOptions),
    /// CPU during multiblock reads: cold full scans at each db_file_multiblock_read_count,
    /// and the fit of CPU to read calls and blocks (a fixed cost per read call?).
    Mbrc(lioscope_lab::mbrc::MbrcOptions),
    /// The runs stored in the results history, oldest first.
    History(lioscope_lab::history::HistoryOptions),
    /// Two stored runs' figures side by side: ratios, and the significance of each
    /// difference (Mann-Whitney U).
    Compare(lioscope_lab::history::CompareOptions),
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Load the customers table and measure cached and cold full scans.
    Scan(lioscope_lab::bench::ScanBenchOptions),
    /// Index range scans through every row of the customers table, by an index with a
    /// good and one with a bad clustering factor; index build speed beside PostgreSQL's
    /// and SQLite's on the same rows.
    Index(lioscope_lab::bench::index::IndexBenchOptions),
    /// The in-memory column store: population speed by worker count and MEMCOMPRESS
    /// level (optionally of migrated rows), and in-memory full scans beside row-store ones.
    Inmemory(lioscope_lab::bench::inmemory::InMemoryBenchOptions),
    /// Commits per second: 1..8 sessions each updating one row and committing in a loop;
    /// `log file sync` waits and the commits each redo write covers (group commit).
    Commits(lioscope_lab::bench::commits::CommitBenchOptions),
    /// Loads of the customers table to a durable commit (COPY and INSERT ... SELECT)
    /// beside PostgreSQL's COPY of the same file: rows/s, redo bytes per loaded byte,
    /// the waits on the log.
    Load(lioscope_lab::bench::load::LoadBenchOptions),
    /// Customers joined to orders beside PostgreSQL, SQLite and DuckDB on the same rows,
    /// one thread each: a few customers' orders by index (NESTED LOOPS), every order
    /// (HASH JOIN), and a hash join with a filter on its build side; answers compared.
    Join(lioscope_lab::bench::join::JoinBenchOptions),
    /// TPC-H's 22 queries at a scale factor (the data made in-process), with their plans
    /// and row-source statistics; with --peers beside PostgreSQL, SQLite and DuckDB on
    /// the same rows, every answer compared.
    Tpch(lioscope_lab::bench::tpch::TpchBenchOptions),
    /// pgbench against `lioscope serve` and PostgreSQL on the same rows: a TPC-B-like
    /// script and point selects by key, prepared, at 1, 8 and 32 clients; TPS and
    /// latency percentiles.
    Server(lioscope_lab::bench::server::ServerBenchOptions),
}

fn options(db_cache_size: Option<String>) -> DatabaseOptions {
    let parameters = db_cache_size.map(|s| vec![("db_cache_size".to_owned(), s)]).unwrap_or_default();
    DatabaseOptions { parameters, ..Default::default() }
}

/// Runs a command; the exit status it asks for (EXIT n in a script or the shell).
fn run(cli: Cli) -> lioscope::Result<u8> {
    match cli.command {
        Command::Create { dir, block_size, extent_size, set } => {
            let extent_size = lioscope::parse_size(&extent_size).ok_or_else(|| lioscope::Error::InvalidParameter {
                name: "--extent-size".into(),
                message: format!("'{extent_size}' is not a size"),
            })? as usize;
            let parameters = set
                .iter()
                .map(|p| match p.split_once('=') {
                    Some((name, value)) => Ok((name.trim().to_owned(), value.trim().to_owned())),
                    None => Err(lioscope::Error::InvalidParameter {
                        name: "--set".into(),
                        message: format!("'{p}' is not NAME=VALUE"),
                    }),
                })
                .collect::<lioscope::Result<Vec<_>>>()?;
            Database::create(&dir, DatabaseOptions { block_size, extent_size, parameters, ..Default::default() })?
                .close()?;
            println!("Database created in {}.", dir.display());
            Ok(0)
        }
        Command::Shell { dir, connect, db_cache_size } => match (connect, dir) {
            (Some(url), _) => {
                let remote = Remote::connect(&url)?;
                let banner = format!(
                    "lioscope {} on the server at {}. Type HELP for help.",
                    env!("CARGO_PKG_VERSION"),
                    remote.address()
                );
                let history = std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".lioscope_history"));
                lioscope_cli::shell::run(&remote, &banner, history)
            }
            (None, Some(dir)) => {
                let db = Database::open_or_create(&dir, options(db_cache_size))?;
                let session = db.session();
                lioscope_cli::shell::attach_progress_bar(&session);
                let mut banner = format!(
                    "lioscope {} on {} (block size {}). Type HELP for help.",
                    env!("CARGO_PKG_VERSION"),
                    db.dir().display(),
                    session.parameters().get(lioscope::DB_BLOCK_SIZE_PARAMETER)
                );
                if let Some(recovery) = db.recovery().summary() {
                    banner.push_str(&format!("\n{recovery}"));
                }
                let status = lioscope_cli::shell::run(&session, &banner, Some(db.dir().join(".lioscope_history")))?;
                drop(session);
                db.close()?;
                Ok(status)
            }
            (None, None) => Err(lioscope::Error::InvalidParameter {
                name: "shell".into(),
                message: "give DIR or --connect URL".into(),
            }),
        },
        Command::Sql { dir, connect, command, file, format, db_cache_size } => {
            type RunScript = Box<dyn FnOnce(&mut ScriptRunner) -> lioscope::Result<Flow>>;
            let run_script: RunScript = match (command, file) {
                (Some(text), _) => Box::new(move |runner| Ok(runner.run_command_text(&text))),
                (None, Some(file)) => Box::new(move |runner| runner.run_file(&file)),
                (None, None) => {
                    return Err(lioscope::Error::InvalidParameter {
                        name: "sql".into(),
                        message: "give -c STATEMENTS or -f FILE".into(),
                    });
                }
            };
            let run = |target: &dyn Target| -> lioscope::Result<u8> {
                let mut runner = ScriptRunner::new(target, format, Output::terminal(), OnError::EXIT_FAILURE);
                Ok(match run_script(&mut runner)? {
                    Flow::Continue => runner.finish().map(|()| 0)?,
                    Flow::Exit(status) => status,
                })
            };
            match (connect, dir) {
                (Some(url), _) => run(&Remote::connect(&url)?),
                (None, Some(dir)) => {
                    let db = Database::open(&dir, options(db_cache_size))?;
                    let session = db.session();
                    let status = run(&session)?;
                    drop(session);
                    db.close()?;
                    Ok(status)
                }
                (None, None) => Err(lioscope::Error::InvalidParameter {
                    name: "sql".into(),
                    message: "give DIR or --connect URL".into(),
                }),
            }
        }
        Command::Serve {
            dir,
            listen,
            max_connections,
            database,
            auth,
            tls_cert,
            tls_key,
            require_tls,
            shutdown_grace,
            db_cache_size,
        } => {
            let db = Database::open_or_create(&dir, options(db_cache_size))?;
            let auth = match auth.as_str() {
                "trust" => lioscope_server::Auth::Trust,
                _ => lioscope_server::Auth::ScramSha256,
            };
            if auth == lioscope_server::Auth::ScramSha256 && db.password_verifier("SYS").is_none() {
                eprintln!(
                    "lioscope serve: SYS has no password, so no client can log in as SYS; give it one \
                     (with the server stopped): lioscope sql {} -c 'ALTER USER sys IDENTIFIED BY \"...\"'",
                    dir.display()
                );
            }
            let tls = tls_cert.zip(tls_key).map(|(certificate, key)| lioscope_server::TlsFiles { certificate, key });
            let server_options = lioscope_server::ServerOptions {
                listen,
                max_connections,
                database,
                auth,
                tls,
                require_tls,
                shutdown_grace: std::time::Duration::from_secs(shutdown_grace),
            };
            let server = lioscope_server::Server::start(db, server_options).map_err(|e| {
                lioscope::Error::InvalidParameter { name: "--listen".into(), message: format!("{listen}: {e}") }
            })?;
            eprintln!(
                "lioscope serving {} on {} (PostgreSQL protocol, as server version {}); SIGTERM or Ctrl-C stops it.",
                dir.display(),
                server.local_addr(),
                lioscope_server::SERVER_VERSION
            );
            server.run_until_signal()?;
            eprintln!("lioscope server stopped; database closed.");
            Ok(0)
        }
        Command::Sqllogictest { paths, verbose } => {
            let mut outcomes = Vec::new();
            for file in lioscope_cli::logic_test::test_files(&paths)? {
                let outcome = lioscope_cli::logic_test::run_file(&file);
                eprintln!("{}", lioscope_cli::logic_test::file_line(&outcome));
                outcomes.push(outcome);
            }
            print!("{}", lioscope_cli::logic_test::report(&outcomes, verbose));
            let clean = outcomes.iter().all(|o| o.failed == 0 && o.error.is_none());
            Ok(if clean { 0 } else { 1 })
        }
        Command::Bench { which } => bench(which).map(|()| 0),
        Command::Lab { which } => lab(which).map(|()| 0),
    }
}

fn bench(which: BenchCommand) -> lioscope::Result<()> {
    match which {
        BenchCommand::Scan(opts) => lioscope_lab::bench::run(&opts),
        BenchCommand::Index(opts) => lioscope_lab::bench::index::run(&opts),
        BenchCommand::Inmemory(opts) => lioscope_lab::bench::inmemory::run(&opts),
        BenchCommand::Commits(opts) => lioscope_lab::bench::commits::run(&opts).map(|_| ()),
        BenchCommand::Load(opts) => lioscope_lab::bench::load::run(&opts).map(|_| ()),
        BenchCommand::Join(opts) => lioscope_lab::bench::join::run(&opts).map(|_| ()),
        BenchCommand::Tpch(opts) => lioscope_lab::bench::tpch::run(&opts).map(|_| ()),
        BenchCommand::Server(opts) => lioscope_lab::bench::server::run(&opts).map(|_| ()),
    }
}

fn lab(which: LabCommand) -> lioscope::Result<()> {
    match which {
        LabCommand::Cr(opts) => lioscope_lab::cr::run(&opts),
        LabCommand::Scan(opts) => match &opts.callgrind_child {
            Some(path) => lioscope_lab::scan::run_callgrind_child(&opts, path),
            None => lioscope_lab::scan::run(&opts).map(|_| ()),
        },
        LabCommand::Join(opts) => match &opts.callgrind_child {
            Some(point) => lioscope_lab::join::run_callgrind_child(&opts, point),
            None => lioscope_lab::join::run(&opts).map(|_| ()),
        },
        LabCommand::Lio(opts) => lioscope_lab::lio::run(&opts).map(|_| ()),
        LabCommand::Cpu(opts) => lioscope_lab::cpu::run(&opts).map(|_| ()),
        LabCommand::Populate(opts) => lioscope_lab::populate::run(&opts).map(|_| ()),
        LabCommand::Mbrc(opts) => lioscope_lab::mbrc::run(&opts).map(|_| ()),
        LabCommand::History(opts) => lioscope_lab::history::list(&opts).map(|_| ()),
        LabCommand::Compare(opts) => lioscope_lab::history::compare(&opts).map(|_| ()),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("lioscope: {e}");
            ExitCode::FAILURE
        }
    }
}
