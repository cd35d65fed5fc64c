#!/usr/bin/env bash
# Commits per second of lioscope, SQLite and PostgreSQL on this machine, in one run: the
# same table (ACCOUNTS rows of id, bal with an index on id), the same loop in each session
# (UPDATE acct SET bal = bal + 1 WHERE id = random id of the session's own slice; COMMIT),
# durable commits in all three, 1/2/4/8 sessions, MEASURE_SECONDS each.
#
#   lioscope    `lioscope bench commits` (COMMIT = IMMEDIATE WAIT: log file sync)
#   SQLite      WAL mode, synchronous=FULL, one connection a process, BEGIN IMMEDIATE;
#               SQLite lets one writer in at a time, the others wait (busy_timeout)
#   PostgreSQL  a throwaway cluster, fsync=on, synchronous_commit=on, pgbench -M prepared
#
# Every data directory lies under WORK_DIR (one filesystem; default /tmp), so each
# engine's sync costs the same; pg_test_fsync measures that cost first, and a probe (512
# bytes written and fdatasync'ed, 1 s) before each of ROUNDS rounds, since a shared
# machine's disk is not steady: each round runs every engine at every level in turn.
# Installs what it needs when missing (postgresql, python3). Figures go to OUT_DIR
# (default target/commit-compare): a JSON per engine, round and level, postgres.tsv,
# probe.tsv, fsync.txt, and table.md (medians over the rounds), also printed.
#
# Usage: bench/commit_compare.sh [OUT_DIR]
#   MEASURE_SECONDS=5 SESSIONS="1 2 4 8" ROUNDS=3 ACCOUNTS=10000 WORK_DIR=/tmp PG_PORT=54329
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(realpath -m "${1:-target/commit-compare}")
seconds=${MEASURE_SECONDS:-5}
sessions=${SESSIONS:-1 2 4 8}
accounts=${ACCOUNTS:-10000}
port=${PG_PORT:-54329}
rounds=${ROUNDS:-3}
mkdir -p "$out"

pg_bindir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }
missing=()
[[ -n "$(pg_bindir)" ]] || missing+=(postgresql postgresql-contrib)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
    echo "commit_compare.sh: installing ${missing[*]}" >&2
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi
pgbin=$(pg_bindir)

work=$(mktemp -d "${WORK_DIR:-/tmp}/commit-compare.XXXXXX")
chmod 755 "$work"
pgdata="$work/postgres"
# PostgreSQL refuses to run as root: as root, the cluster belongs to the postgres user.
as_pg() { if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi; }
stop() {
    [[ -f "$pgdata/postmaster.pid" ]] && as_pg "$pgbin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null || true
    rm -rf "$work"
}
trap stop EXIT

{
    echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "data directories under $work: $(findmnt -n -o SOURCE,FSTYPE,OPTIONS -T "$work")"
    echo "sqlite $(python3 -c 'import sqlite3; print(sqlite3.sqlite_version)'), $("$pgbin/postgres" --version)"
    "$pgbin/pg_test_fsync" -s 2 -f "$work/fsync.test" | grep -A6 'one 8kB write'
} | tee "$out/fsync.txt"

echo "== PostgreSQL cluster" >&2
mkdir -p "$pgdata"
((EUID == 0)) && chown postgres: "$pgdata"
as_pg "$pgbin/initdb" -D "$pgdata" -U postgres -A trust --no-instructions >/dev/null
as_pg "$pgbin/pg_ctl" -D "$pgdata" -l "$pgdata/server.log" -w start -o \
    "-c port=$port -c listen_addresses='' -c unix_socket_directories='$pgdata' \
     -c fsync=on -c synchronous_commit=on -c track_wal_io_timing=on" >/dev/null
psql=("$pgbin/psql" -h "$pgdata" -p "$port" -U postgres -X -q -A -t -v ON_ERROR_STOP=1)
"${psql[@]}" -c "CREATE TABLE acct (id integer NOT NULL, bal integer NOT NULL)" \
    -c "INSERT INTO acct SELECT g, 0 FROM generate_series(1, $accounts) g" \
    -c "CREATE INDEX acct_id_ix ON acct (id)" -c "VACUUM ANALYZE acct" \
    -c "SHOW fsync" -c "SHOW synchronous_commit" -c "SHOW wal_sync_method" | paste -sd' ' |
    sed 's/^/postgres fsync, synchronous_commit, wal_sync_method: /' | tee -a "$out/fsync.txt"

# One measurement of PostgreSQL at $1 sessions: "round sessions tps transactions
# wal_sync wal_write wal_bytes wal_sync_time_ms" on postgres.tsv.
postgres_level() {
    local n=$1 slice=$(($accounts / $1)) result wal tps txns
    printf '\\set id :client_id * %d + random(1, %d)\nUPDATE acct SET bal = bal + 1 WHERE id = :id;\n' \
        "$slice" "$slice" >"$work/update.sql"
    "${psql[@]}" -c "SELECT pg_stat_reset_shared('wal')" >/dev/null
    result=$("$pgbin/pgbench" -h "$pgdata" -p "$port" -U postgres -n -M prepared -c "$n" -j "$n" \
        -T "$seconds" -f "$work/update.sql" postgres)
    sleep 1 # backends report their WAL statistics as they exit
    wal=$("${psql[@]}" -F ' ' -c "SELECT wal_sync, wal_write, wal_bytes, wal_sync_time FROM pg_stat_wal")
    tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' <<<"$result")
    txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$result")
    echo "$round $n $tps $txns $wal" >>"$out/postgres.tsv"
}

# The disk's own cost is not steady on a shared virtual machine: each round measures it
# first, and each round runs every engine at every level, so they meet the same disk.
cargo build --release -q
: >"$out/postgres.tsv"
: >"$out/probe.tsv"
for round in $(seq "$rounds"); do
    echo "$round $(python3 bench/commit_compare.py probe --file "$work/probe")" | tee -a "$out/probe.tsv"
    for n in $sessions; do
        echo "== round $round, $n sessions: lioscope, SQLite, PostgreSQL" >&2
        nowait=(--skip-nowait)
        ((n == 1)) && nowait=()
        target/release/lioscope bench commits --dir "$work/lioscope" --accounts "$accounts" \
            --seconds "$seconds" --sessions "$n" "${nowait[@]}" --json "$out/lioscope-r$round-s$n.json" >/dev/null
        rm -rf "$work/lioscope"
        python3 bench/commit_compare.py sqlite --db "$work/sqlite/acct.db" --accounts "$accounts" \
            --seconds "$seconds" --sessions "$n" --json "$out/sqlite-r$round-s$n.json" >/dev/null
        rm -rf "$work/sqlite"
        postgres_level "$n"
    done
done

python3 bench/commit_compare.py table --out "$out" | tee "$out/table.md"
