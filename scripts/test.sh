#!/usr/bin/env bash
# Runs the whole Strata test suite on a fresh machine: installs what the tests need, then
# builds and runs every test target, checks that the benchmarks still build and run (small
# sizes; their speed is measured by Benchmarks/run.sh, not here), and runs the example server's
# smoke test (two instances on one PostgreSQL database under a short load).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase says how long it took (on standard error), so a slow CI run shows where it went.
phase_start=$SECONDS
phase() {
    echo "test.sh: $1 took $((SECONDS - phase_start)) s" >&2
    phase_start=$SECONDS
}

# System libraries: Foundation's XML parser (Xcode model loading) needs libxml2 at run time;
# GRDB builds against the system SQLite; the layer check needs Python 3.
need=()
ldconfig -p 2>/dev/null | grep -q 'libxml2\.so\.2' || need+=(libxml2)
[[ -f /usr/include/sqlite3.h ]] || need+=(libsqlite3-dev)
# The layer check (scripts/check-layers.py) and its tests run Python 3.
command -v python3 >/dev/null 2>&1 || need+=(python3)
# The command-line tests run `strata` on a pseudo-terminal with util-linux's `script`.
command -v script >/dev/null 2>&1 || need+=(bsdutils)
# The tool's tests render `strata schema`'s SVG and Graphviz diagrams, and make damaged and
# Core Data stores with the sqlite3 shell.
command -v rsvg-convert >/dev/null 2>&1 || need+=(librsvg2-bin)
command -v dot >/dev/null 2>&1 || need+=(graphviz)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
if ((${#need[@]})); then
    if command -v apt-get >/dev/null 2>&1; then
        sudo_cmd=""
        [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
        $sudo_cmd apt-get update -qq
        $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
    else
        echo "Missing system libraries: ${need[*]} (install them with your package manager)" >&2
        exit 1
    fi
fi

# Layers depend only downward (DESIGN.md); fails fast, before the build, when one does not.
python3 scripts/check-layers.py
phase "installing and the layer check"

# A private PostgreSQL server for the PostgreSQL store's tests (installed from Debian when
# missing), on loopback, stopped at the end. If it cannot start, the run fails here: the
# PostgreSQL tests are never skipped.
postgres_dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-postgres.XXXXXX")
trap 'scripts/postgres.sh stop "$postgres_dir"' EXIT
STRATA_POSTGRES_URL=$(scripts/postgres.sh start "$postgres_dir")
export STRATA_POSTGRES_URL
phase "starting PostgreSQL"

swift build --build-tests
phase "building"
swift test --skip-build "$@"
phase "testing"
Benchmarks/run.sh --quick
phase "the benchmarks' quick run"
Benchmarks/cli.sh --quick
phase "the tool's benchmark, quick"
Examples/run.sh --smoke
phase "the example server's smoke test"
