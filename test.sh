#!/usr/bin/env bash
# Every test of lioscope: unit, integration and golden SQL scripts, in release mode.
# Installs what the tests need when it is missing: valgrind (the lab's instruction counts
# by callgrind, and their test), chromium (opens the lab's HTML reports headless to
# check that their charts are drawn) and postgresql (a server the results history's
# test starts, as a fleet's shared history, and a peer of the benchmarks; its psql and
# pgbench are clients of lioscope's server), PostgreSQL's JDBC driver with a JDK (a
# database browser's client of the server), DuckDB's Python package (a peer of the
# join benchmark), psycopg and SQLAlchemy (clients of lioscope's server). Extra arguments go
# to `cargo test`.
#
# `./test.sh --quick`: the fast tier, a few minutes and nothing installed: the unit tests
# of every crate and the golden SQL scripts. It leaves out the integration tests (among
# them everything that needs valgrind, chromium or PostgreSQL) and says so.
set -euo pipefail
cd "$(dirname "$0")"

if [[ "${1:-}" == --quick ]]; then
    shift
    echo "test.sh --quick: unit tests of every crate and the golden SQL scripts;" \
        "skipping the integration tests (crash loops, concurrency, recovery faults, the lab's" \
        "reports in chromium, callgrind counts under valgrind, PostgreSQL peers): run ./test.sh for those" >&2
    cargo test --release --workspace --lib --bins "$@"
    cargo test --release -p lioscope-cli --test golden "$@"
    exit 0
fi

missing=()
command -v valgrind >/dev/null || missing+=(valgrind)
command -v "${LIOSCOPE_CHROMIUM:-chromium}" >/dev/null || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
# PostgreSQL's JDBC driver and a JDK to run the database-browser client in one file.
[[ -e /usr/share/java/postgresql.jar ]] || missing+=(libpostgresql-jdbc-java)
command -v javac >/dev/null || missing+=(default-jdk-headless)
if ((${#missing[@]})); then
    echo "test.sh: installing ${missing[*]}" >&2
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi

# DuckDB, a peer of the join benchmark, through its Python package (its test checks the
# answers wherever python3 has it).
if command -v python3 >/dev/null && ! python3 -c "import duckdb" 2>/dev/null; then
    echo "test.sh: installing the duckdb Python package" >&2
    python3 -m pip install --quiet duckdb || echo "test.sh: duckdb did not install; bench join runs without it" >&2
fi

# psycopg, the Python driver the server's client test connects with.
if command -v python3 >/dev/null && ! python3 -c "import psycopg" 2>/dev/null; then
    echo "test.sh: installing the psycopg Python package" >&2
    python3 -m pip install --quiet "psycopg[binary]" || echo "test.sh: psycopg did not install; its server test says it skipped" >&2
fi
# SQLAlchemy, whose inspector the psycopg test lists tables and keys with.
if command -v python3 >/dev/null && ! python3 -c "import sqlalchemy" 2>/dev/null; then
    echo "test.sh: installing the SQLAlchemy Python package" >&2
    python3 -m pip install --quiet sqlalchemy || echo "test.sh: SQLAlchemy did not install; the psycopg test says it skipped its checks" >&2
fi

cargo test --release "$@"
