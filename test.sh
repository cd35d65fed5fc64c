#!/usr/bin/env bash
# Every test of lioscope: unit, integration and golden SQL scripts, in release mode.
# Installs what the tests need when it is missing: valgrind (the lab's instruction counts
# by callgrind, and their test), chromium (opens the lab's HTML reports headless to
# check that their charts are drawn) and postgresql (a server the results history's
# test starts, as a fleet's shared history). Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")"

missing=()
command -v valgrind >/dev/null || missing+=(valgrind)
command -v "${LIOSCOPE_CHROMIUM:-chromium}" >/dev/null || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
if ((${#missing[@]})); then
    echo "test.sh: installing ${missing[*]}" >&2
    sudo=()
    ((EUID == 0)) || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi

cargo test --release "$@"
