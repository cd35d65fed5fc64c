"""The SQLite side of bench/commit_compare.sh, and the table of all three engines.

  commit_compare.py sqlite --db FILE --accounts N --seconds S --sessions "1 2 4 8" --json OUT
  commit_compare.py table --out DIR --seconds S

SQLite: WAL mode, synchronous=FULL (each commit syncs the WAL), the table and index of
the other engines. Each session is a process with its own connection, so Python's lock
serialises nothing; SQLite does: one writer at a time (BEGIN IMMEDIATE takes the write
lock; the others wait in the busy handler, busy_timeout 10 s). Session k of n updates
random ids of its own slice, as in lioscope and PostgreSQL.
"""

import argparse
import json
import multiprocessing
import os
import random
import sqlite3
import time

UPDATE = "UPDATE acct SET bal = bal + 1 WHERE id = ?"


def connect(path):
    conn = sqlite3.connect(path, isolation_level=None, timeout=10.0)
    conn.execute("PRAGMA synchronous=FULL")
    return conn


def create(path, accounts):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    conn = connect(path)
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    conn.execute("CREATE TABLE acct (id INTEGER NOT NULL, bal INTEGER NOT NULL)")
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO acct VALUES (?, 0)", ((i,) for i in range(1, accounts + 1)))
    conn.execute("COMMIT")
    conn.execute("CREATE INDEX acct_id_ix ON acct (id)")
    conn.execute("ANALYZE")
    conn.close()


def session(path, first, count, seconds, barrier, results):
    conn = connect(path)
    ids = random.Random(first)
    commits = busy = 0
    barrier.wait()
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            busy += 1  # waited the whole busy_timeout for the write lock
            continue
        conn.execute(UPDATE, (first + ids.randrange(count),))
        conn.execute("COMMIT")
        commits += 1
    results.put((commits, busy))


def measure(path, accounts, n, seconds):
    barrier = multiprocessing.Barrier(n + 1)
    results = multiprocessing.Queue()
    slice_ = accounts // n
    procs = [
        multiprocessing.Process(target=session, args=(path, k * slice_ + 1, slice_, seconds, barrier, results))
        for k in range(n)
    ]
    for p in procs:
        p.start()
    barrier.wait()
    started = time.monotonic()
    outcomes = [results.get() for _ in procs]
    elapsed = time.monotonic() - started
    for p in procs:
        p.join()
    commits = sum(c for c, _ in outcomes)
    return {
        "sessions": n,
        "elapsed_s": elapsed,
        "commits": commits,
        "commits_per_s": commits / elapsed,
        "busy_timeouts": sum(b for _, b in outcomes),
    }


def run_sqlite(args):
    create(args.db, args.accounts)
    runs = []
    for n in (int(s) for s in args.sessions.split()):
        run = measure(args.db, args.accounts, n, args.seconds)
        print(f"{n} sessions: {run['commits_per_s']:.0f} commits/s", flush=True)
        runs.append(run)
    report = {
        "engine": "sqlite",
        "version": sqlite3.sqlite_version,
        "settings": "journal_mode=WAL, synchronous=FULL, BEGIN IMMEDIATE, busy_timeout 10 s",
        "runs": runs,
    }
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)


def postgres_runs(path, seconds):
    runs = {}
    with open(path) as f:
        for line in f:
            n, tps, txns, wal_sync, wal_write, wal_bytes, sync_ms = line.split()
            txns, wal_sync = int(txns), int(wal_sync)
            runs[int(n)] = {
                "commits_per_s": float(tps),
                "commits_per_sync": txns / wal_sync if wal_sync else None,
                "sync_avg_us": float(sync_ms) * 1000 / wal_sync if wal_sync else None,
                "wal_bytes_per_commit": int(wal_bytes) / txns if txns else None,
            }
    return runs


def cell(v, digits=0):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def table(args):
    with open(os.path.join(args.out, "lioscope.json")) as f:
        lio = json.load(f)["runs"]
    with open(os.path.join(args.out, "sqlite.json")) as f:
        sqlite = {r["sessions"]: r for r in json.load(f)["runs"]}
    pg = postgres_runs(os.path.join(args.out, "postgres.tsv"), args.seconds)
    lio_wait = {r["sessions"]: r for r in lio if r["commit"] == "COMMIT"}
    print("| sessions | lioscope commits/s | SQLite commits/s | PostgreSQL commits/s "
          "| lioscope commits/redo write | PostgreSQL commits/WAL sync "
          "| lioscope log file sync µs | lioscope log file parallel write µs | PostgreSQL WAL sync µs |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sorted(lio_wait):
        l, s, p = lio_wait[n], sqlite.get(n, {}), pg.get(n, {})
        print(f"| {n} | {cell(l['commits_per_s'])} | {cell(s.get('commits_per_s'))} "
              f"| {cell(p.get('commits_per_s'))} | {cell(l['commits_per_redo_write'], 2)} "
              f"| {cell(p.get('commits_per_sync'), 2)} | {cell(l['log_file_sync_avg_us'])} "
              f"| {cell(l['log_file_parallel_write_avg_us'])} | {cell(p.get('sync_avg_us'))} |")
    for r in lio:
        if r["commit"] != "COMMIT":
            print(f"\nlioscope {r['commit']}, {r['sessions']} session: {cell(r['commits_per_s'])} commits/s "
                  f"(not durable when acknowledged)")
    one = lio_wait.get(1, {}).get("commits_per_s")
    eight = lio_wait.get(8, {}).get("commits_per_s")
    if one and eight:
        print(f"lioscope 8 sessions / 1 session: {eight / one:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sqlite")
    s.add_argument("--db", required=True)
    s.add_argument("--accounts", type=int, default=10000)
    s.add_argument("--seconds", type=float, default=5)
    s.add_argument("--sessions", default="1 2 4 8")
    s.add_argument("--json", required=True)
    t = sub.add_parser("table")
    t.add_argument("--out", required=True)
    t.add_argument("--seconds", type=float, default=5)
    args = parser.parse_args()
    run_sqlite(args) if args.command == "sqlite" else table(args)


if __name__ == "__main__":
    main()
