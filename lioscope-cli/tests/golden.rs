//! Golden SQL scripts: each `tests/golden/NAME.sql` runs on a fresh database and its
//! output must equal `tests/golden/NAME.out`. Regenerate with `UPDATE_GOLDEN=1 cargo test
//! --test golden` and review the diff.
//!
//! A script may start with `-- block_size: N`, `-- db_cache_size: SIZE` or
//! `-- parameter NAME: VALUE` lines to choose how its database is created. Output shows
//! each statement after `SQL> ` and then what the shell prints, or `ERROR: ` and the
//! message: statements run as if typed at the shell's prompt, so only the statements of
//! scripts they run with `@` are echoed under SET ECHO ON. CPU and elapsed times are
//! left out.
//!
//! Scripts may use several sessions, each with its own shell settings. Comment lines
//! before a statement direct it:
//! - `-- session N`: this statement and the following ones run in session N (sessions
//!   start at 1 and are opened on first use); output is shown after `SQL[N]> `.
//! - `-- background`: the statement starts and the script goes on without waiting (a
//!   statement that will wait for a row lock); its output is shown at `-- await N`.
//! - `-- blocked N`: first wait until session N waits for a row lock.
//! - `-- await N`: first wait for session N's background statement and show its output.

#[path = "../../tests/common/mod.rs"]
mod common;

use lioscope::{Database, DatabaseOptions};
use lioscope_cli::format::OutputFormat;
use lioscope_cli::output::Output;
use lioscope_cli::runner::ScriptRunner;
use lioscope_cli::script::split_script;
use lioscope_cli::sqlplus::OnError;
use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

fn options(script: &str) -> DatabaseOptions {
    let mut opts = DatabaseOptions::default();
    for line in script.lines().take_while(|l| l.starts_with("--")) {
        if let Some(v) = line.strip_prefix("-- block_size:") {
            opts.block_size = v.trim().parse().expect("block_size is a number");
        }
        if let Some(v) = line.strip_prefix("-- db_cache_size:") {
            opts.parameters.push(("db_cache_size".into(), v.trim().into()));
        }
        if let Some((name, value)) = line.strip_prefix("-- parameter ").and_then(|p| p.split_once(':')) {
            opts.parameters.push((name.trim().into(), value.trim().into()));
        }
    }
    opts
}

/// A session of a script, running its statements on its own thread.
struct Worker {
    sid: u32,
    jobs: Sender<(String, Sender<String>)>,
    /// The output of the statement running in the background, when there is one.
    pending: Option<Receiver<String>>,
    thread: std::thread::JoinHandle<()>,
}

impl Worker {
    fn start(db: &Database) -> Worker {
        let (jobs, inbox) = channel::<(String, Sender<String>)>();
        let (sid_tx, sid_rx) = channel();
        let db = db.clone();
        let thread = std::thread::spawn(move || {
            let session = db.session();
            sid_tx.send(session.sid()).expect("the script waits for the sid");
            let (output, transcript) = Output::transcript();
            let mut runner = ScriptRunner::new(&session, OutputFormat::Table, output, OnError::Continue);
            runner.settings.show_times = false;
            for (statement, reply) in inbox {
                runner.run_typed(&statement);
                let _ = reply.send(transcript.take());
            }
        });
        Worker { sid: sid_rx.recv().expect("the session opens"), jobs, pending: None, thread }
    }

    /// Closes the session (rolling back what it left uncommitted) and ends its thread.
    fn close(self) {
        drop(self.jobs);
        self.thread.join().expect("the session thread ends cleanly");
    }

    fn submit(&self, statement: &str) -> Receiver<String> {
        let (reply, output) = channel();
        self.jobs.send((statement.to_owned(), reply)).expect("the session thread runs");
        output
    }
}

/// Waits until session `sid` waits for a row lock (seen through `v$session` from `db`).
fn wait_until_blocked(db: &Database, sid: u32) {
    let probe = db.session();
    let started = Instant::now();
    loop {
        let r = probe
            .execute(&format!(
                "SELECT COUNT(*) FROM v$session WHERE sid = {sid} AND event = 'enq: TX - row lock contention'"
            ))
            .expect("v$session is queryable");
        if r.rows[0][0].to_string() == "1" {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "session with sid {sid} never blocked");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A statement of a script, or a directive about the statements after it.
enum Item {
    Statement(String),
    Session(u32),
    Background,
    Blocked(u32),
    Await(u32),
}

/// The script's statements and directives, in order.
fn items(script: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut text = String::new();
    for line in script.lines() {
        let directive = line.trim().strip_prefix("--").map(str::trim).and_then(|d| {
            let number = |rest: &str| rest.trim().parse::<u32>().ok();
            if let Some(n) = d.strip_prefix("session ") {
                number(n).map(Item::Session)
            } else if let Some(n) = d.strip_prefix("blocked ") {
                number(n).map(Item::Blocked)
            } else if let Some(n) = d.strip_prefix("await ") {
                number(n).map(Item::Await)
            } else {
                (d == "background").then_some(Item::Background)
            }
        });
        match directive {
            Some(d) => {
                items.extend(statements(&std::mem::take(&mut text)));
                items.push(d);
            }
            None => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    items.extend(statements(&text));
    items
}

fn statements(text: &str) -> impl Iterator<Item = Item> {
    split_script(text).into_iter().map(|s| Item::Statement(s.text))
}

fn run_script(path: &Path) -> String {
    let script = std::fs::read_to_string(path).expect("script is readable");
    // Scripts refer to files next to them as 'golden/...'; run from the tests directory.
    let (_dir, _, db) = common::temp_db(options(&script));
    let mut workers: HashMap<u32, Worker> = HashMap::new();
    let mut current = 1u32;
    let mut background = false;
    let mut out = String::new();
    for item in items(&script) {
        let statement = match item {
            Item::Session(n) => {
                current = n;
                continue;
            }
            Item::Background => {
                background = true;
                continue;
            }
            Item::Blocked(n) => {
                wait_until_blocked(&db, workers[&n].sid);
                continue;
            }
            Item::Await(n) => {
                let pending = workers.get_mut(&n).and_then(|w| w.pending.take()).expect("a background statement");
                out.push_str(&format!("(session {n} continues)\n{}\n", pending.recv().expect("it ends")));
                continue;
            }
            Item::Statement(statement) => statement,
        };
        let shown: String =
            statement.lines().filter(|l| !l.trim_start().starts_with("--")).collect::<Vec<_>>().join("\n");
        if shown.trim().is_empty() {
            continue;
        }
        let prompt = if current == 1 { "SQL> ".to_owned() } else { format!("SQL[{current}]> ") };
        out.push_str(&format!("{prompt}{shown}\n"));
        let worker = workers.entry(current).or_insert_with(|| Worker::start(&db));
        let output = worker.submit(&statement);
        if std::mem::take(&mut background) {
            worker.pending = Some(output);
            out.push_str("(waits)\n\n");
            continue;
        }
        out.push_str(&output.recv().expect("the statement ends"));
        out.push('\n');
    }
    let mut sessions: Vec<(u32, Worker)> = workers.into_iter().collect();
    sessions.sort_by_key(|(n, _)| *n);
    sessions.into_iter().for_each(|(_, w)| w.close());
    out
}

#[test]
fn golden_scripts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    std::env::set_current_dir(&root).expect("tests directory exists");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut scripts: Vec<_> = std::fs::read_dir(root.join("golden"))
        .expect("tests/golden exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    scripts.sort();
    assert!(!scripts.is_empty(), "there are golden scripts");
    let mut failures = Vec::new();
    for script in &scripts {
        let actual = run_script(script);
        let expected_path = script.with_extension("out");
        if update {
            std::fs::write(&expected_path, &actual).expect("write golden output");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if actual != expected {
            let first_diff = actual
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(actual.lines().count().min(expected.lines().count()));
            failures.push(format!(
                "{}: output differs from {} at line {}:\n  expected: {:?}\n  actual:   {:?}",
                script.display(),
                expected_path.display(),
                first_diff + 1,
                expected.lines().nth(first_diff).unwrap_or("<end>"),
                actual.lines().nth(first_diff).unwrap_or("<end>")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden script(s) differ (UPDATE_GOLDEN=1 to regenerate):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
