#!/usr/bin/env bash
# Makes answers-sf0.01.json, the expected answers the TPC-H test checks lioscope's
# against: DuckDB's answers (its Python package, `pip install duckdb`) to the 22 queries
# with both parameter sets, on the rows `tpchgen` makes at scale factor 0.01. The same
# run compares lioscope's answers with DuckDB's, and fails if one differs (the file is
# written before that check, so that a difference can be looked into).
set -euo pipefail
cd "$(dirname "$0")/../../.."
cargo run --release -p lioscope-cli -- bench tpch --sf 0.01 --parameters both --peers --peer duckdb \
    --save-answers lioscope-lab/tests/tpch/answers-sf0.01.json
