//! The results history in PostgreSQL, where a fleet of machines shares one history: a
//! local server started for the test (in a temporary directory, on a Unix socket), the
//! same runs stored, listed, compared and trended as in SQLite, and a history of a later
//! schema refused. `./test.sh` installs PostgreSQL when it is missing.

use lioscope_lab::bench::peers::PgServer;
use lioscope_lab::environment::Environment;
use lioscope_lab::history::{CompareOptions, FigureSamples, History, Location, NewRun, compare};

#[test]
fn a_history_in_postgresql_stores_lists_compares_and_trends_runs() {
    let dir = tempfile::tempdir().unwrap();
    let server = PgServer::start(dir.path()).expect("PostgreSQL is needed for this test (./test.sh installs it)");
    let location = Location::parse(server.url());
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
    let c = compare(&CompareOptions { a: ids[0], b: ids[1], history: Some(server.url().to_owned()), figure: None })
        .unwrap();
    let liops = c.figures.iter().find(|f| f.figure == "liops").unwrap();
    assert_eq!(liops.ratio, Some(2.0));
    assert!((liops.p_value.unwrap() - 2.0 / 252.0).abs() < 1e-12);
    let factor = c.figures.iter().find(|f| f.figure == "factor").unwrap();
    assert_eq!(factor.p_value, None, "one sample a side: nothing to test");
    // Reopened: the same schema, the same runs; a later schema is refused.
    let mut again = History::open_at(&location).unwrap();
    assert_eq!(again.runs(None).unwrap().len(), 2);
    let mut client = postgres::Client::connect(server.url(), postgres::NoTls).unwrap();
    client.batch_execute("UPDATE history_schema SET version = 99").unwrap();
    let err = History::open_at(&location).err().unwrap().to_string();
    assert!(err.contains("newer") && err.contains("postgresql://postgres@"), "{err}");
}
