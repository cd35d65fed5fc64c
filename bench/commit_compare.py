"""The SQLite side of bench/commit_compare.sh, its disk probe, and the table of all
three engines.

  commit_compare.py sqlite --db FILE --accounts N --seconds S --sessions "1 2 4 8" --json OUT
  commit_compare.py probe --file PATH
  commit_compare.py table --out DIR

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


def probe(args):
    """Prints the microseconds a 512-byte write and fdatasync take, over about a second."""
    fd = os.open(args.file, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    started, n = time.monotonic(), 0
    while time.monotonic() - started < 1.0:
        os.pwrite(fd, b"x" * 512, 4096 + 512 * n)
        os.fdatasync(fd)
        n += 1
    print(f"{(time.monotonic() - started) * 1e6 / n:.0f}")
    os.close(fd)
    os.unlink(args.file)


def load(path):
    with open(path) as f:
        return json.load(f)


def postgres_runs(path):
    """(round, sessions) -> figures of postgres.tsv."""
    runs = {}
    with open(path) as f:
        for line in f:
            r, n, tps, txns, wal_sync, _wal_write, wal_bytes, sync_ms = line.split()
            txns, wal_sync = int(txns), int(wal_sync)
            runs[int(r), int(n)] = {
                "commits_per_s": float(tps),
                "commits_per_sync": txns / wal_sync if wal_sync else None,
                "sync_avg_us": float(sync_ms) * 1000 / wal_sync if wal_sync else None,
            }
    return runs


def median(values):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def cell(v, digits=0):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def spread(values, digits=0):
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    return f"{cell(median(values), digits)} [{cell(min(values), digits)}..{cell(max(values), digits)}]"


def gather(out):
    """Every measurement: (engine, round, sessions) -> figures, and the rounds' probes."""
    probes = {}
    with open(os.path.join(out, "probe.tsv")) as f:
        for line in f:
            r, us = line.split()
            probes[int(r)] = float(us)
    runs, nowait = {}, []
    for (r, n), figures in postgres_runs(os.path.join(out, "postgres.tsv")).items():
        runs["postgres", r, n] = figures
        for run in load(os.path.join(out, f"lioscope-r{r}-s{n}.json"))["runs"]:
            if run["commit"] == "COMMIT":
                runs["lioscope", r, n] = run
            else:
                nowait.append(run["commits_per_s"])
        runs["sqlite", r, n] = load(os.path.join(out, f"sqlite-r{r}-s{n}.json"))["runs"][0]
    return probes, runs, nowait


def table(args):
    probes, runs, nowait = gather(args.out)
    rounds = sorted(probes)
    levels = sorted({n for (_, _, n) in runs})

    def over_rounds(engine, n, key, digits=0):
        return spread([runs.get((engine, r, n), {}).get(key) for r in rounds], digits)

    print(f"Medians over {len(rounds)} rounds [min..max]; each round runs every engine at every level in turn.\n")
    print("| sessions | lioscope commits/s | SQLite commits/s | PostgreSQL commits/s "
          "| lioscope commits/redo write | PostgreSQL commits/WAL sync "
          "| lioscope log file sync µs | lioscope log file parallel write µs | PostgreSQL WAL sync µs |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in levels:
        print(f"| {n} | {over_rounds('lioscope', n, 'commits_per_s')} | {over_rounds('sqlite', n, 'commits_per_s')} "
              f"| {over_rounds('postgres', n, 'commits_per_s')} "
              f"| {over_rounds('lioscope', n, 'commits_per_redo_write', 2)} "
              f"| {over_rounds('postgres', n, 'commits_per_sync', 2)} "
              f"| {over_rounds('lioscope', n, 'log_file_sync_avg_us')} "
              f"| {over_rounds('lioscope', n, 'log_file_parallel_write_avg_us')} "
              f"| {over_rounds('postgres', n, 'sync_avg_us')} |")
    print("\nBy round: the disk probe (µs a 512-byte write + fdatasync) before it, then commits/s "
          "lioscope / SQLite / PostgreSQL at each level.\n")
    print("| round | probe µs | " + " | ".join(f"{n} sessions" for n in levels) + " |")
    print("|---:|---:|" + "---:|" * len(levels))
    for r in rounds:
        cells = [" / ".join(cell(runs.get((e, r, n), {}).get("commits_per_s")) for e in ("lioscope", "sqlite", "postgres"))
                 for n in levels]
        print(f"| {r} | {cell(probes[r])} | " + " | ".join(cells) + " |")
    print(f"\nlioscope COMMIT WRITE BATCH NOWAIT, 1 session: {spread(nowait)} commits/s (not durable when acknowledged)")
    ratios = [runs[("lioscope", r, 8)]["commits_per_s"] / runs[("lioscope", r, 1)]["commits_per_s"]
              for r in rounds if ("lioscope", r, 8) in runs and ("lioscope", r, 1) in runs]
    if ratios:
        print(f"lioscope 8 sessions / 1 session, by round: {spread(ratios, 2)}")


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
    p = sub.add_parser("probe")
    p.add_argument("--file", required=True)
    args = parser.parse_args()
    {"sqlite": run_sqlite, "table": table, "probe": probe}[args.command](args)


if __name__ == "__main__":
    main()
