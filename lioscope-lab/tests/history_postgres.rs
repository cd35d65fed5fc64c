//! The results history in PostgreSQL, where a fleet of machines shares one history: a
//! local server started for the test (in a temporary directory, on a Unix socket), the
//! same runs stored, listed, compared and trended as in SQLite, and a history of a later
//! schema refused. `./test.sh` installs PostgreSQL when it is missing.

use lioscope_lab::environment::Environment;
use lioscope_lab::history::{CompareOptions, FigureSamples, History, Location, NewRun, compare};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest installed PostgreSQL's programs.
fn pg_bin() -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    dirs.sort_by_key(|d| d.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()).unwrap_or(0));
    dirs.pop().expect("PostgreSQL is needed for this test (./test.sh installs it)")
}

/// A PostgreSQL server of its own, stopped when dropped.
struct Server {
    bin: PathBuf,
    data: PathBuf,
    url: String,
}

/// `program args` as the cluster's owner: the postgres user when running as root
/// (PostgreSQL refuses to run as root).
fn as_owner(program: &Path, args: &[&str]) -> std::process::Output {
    let root = is_root();
    let mut command = if root { Command::new("runuser") } else { Command::new(program) };
    if root {
        command.args(["-u", "postgres", "--"]).arg(program);
    }
    let out = command.args(args).output().expect("runs");
    assert!(out.status.success(), "{program:?} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Server {
    fn start(dir: &Path) -> Server {
        let bin = pg_bin();
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let data = dir.join("pg");
        std::fs::create_dir(&data).unwrap();
        if is_root() {
            let owned = Command::new("chown").arg("postgres:").arg(&data).status().unwrap();
            assert!(owned.success());
        }
        let data_s = data.to_str().unwrap();
        as_owner(&bin.join("initdb"), &["-D", data_s, "-U", "postgres", "-A", "trust", "--no-instructions"]);
        let port = 20_000 + std::process::id() % 20_000;
        let options = format!("-k {} -p {port} -c listen_addresses=''", dir.display());
        let log = format!("{data_s}/server.log");
        as_owner(&bin.join("pg_ctl"), &["-D", data_s, "-l", &log, "-w", "-o", &options, "start"]);
        let socket_dir = dir.to_str().unwrap().replace('/', "%2F");
        let url = format!("postgresql://postgres@{socket_dir}:{port}/postgres");
        Server { bin, data, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.data.to_str().unwrap().to_owned();
        let _ =
            std::panic::catch_unwind(|| as_owner(&self.bin.join("pg_ctl"), &["-D", &data, "-m", "immediate", "stop"]));
    }
}

#[test]
fn a_history_in_postgresql_stores_lists_compares_and_trends_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path());
    let location = Location::parse(&server.url);
    assert!(matches!(location, Location::Postgres(_)), "{location:?}");
    let environment = Environment::read();
    let mut history = History::open_at(&location).unwrap();
    let mut ids = Vec::new();
    for (experiment, liops) in [("lio", [10.0, 10.5, 9.5, 10.2, 9.8]), ("lio", [20.0, 21.0, 19.0, 20.4, 19.6])] {
        let run = NewRun {
            experiment,
            environment: &environment,
            parameters: serde_json::json!({"repeat": 5}),
            report: serde_json::json!({"experiment": experiment}),
            figures: vec![
                FigureSamples::new("sessions=1", "liops", liops.to_vec()),
                FigureSamples::new("sessions=1", "factor", vec![1.0]),
            ],
        };
        ids.push(history.record(&run).unwrap());
    }
    let runs = history.runs(Some("lio")).unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), ids);
    assert_eq!(runs[0].commit, environment.lioscope_commit);
    assert!(history.runs(Some("scan")).unwrap().is_empty());
    let trend = history.trend("lio", &environment, ("sessions=1", "liops")).unwrap();
    assert_eq!(trend.iter().map(|t| t.2).collect::<Vec<_>>(), [10.0, 20.0]);
    drop(history);
    let c = compare(&CompareOptions { a: ids[0], b: ids[1], history: Some(server.url.clone()), figure: None }).unwrap();
    let liops = c.figures.iter().find(|f| f.figure == "liops").unwrap();
    assert_eq!(liops.ratio, Some(2.0));
    assert!((liops.p_value.unwrap() - 2.0 / 252.0).abs() < 1e-12);
    let factor = c.figures.iter().find(|f| f.figure == "factor").unwrap();
    assert_eq!(factor.p_value, None, "one sample a side: nothing to test");
    // Reopened: the same schema, the same runs; a later schema is refused.
    let mut again = History::open_at(&location).unwrap();
    assert_eq!(again.runs(None).unwrap().len(), 2);
    let mut client = postgres::Client::connect(&server.url, postgres::NoTls).unwrap();
    client.batch_execute("UPDATE history_schema SET version = 99").unwrap();
    let err = History::open_at(&location).err().unwrap().to_string();
    assert!(err.contains("newer") && err.contains("postgresql://postgres@"), "{err}");
}
