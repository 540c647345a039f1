#!/usr/bin/env bash
# Runs the whole Strata test suite on a fresh machine: installs what the tests need, then
# builds and runs every test target, checks that the benchmarks still build and run (small
# sizes; their speed is measured by Benchmarks/run.sh, not here), and runs the example server's
# smoke test (two instances on one PostgreSQL database under a short load).
#
#   scripts/test.sh [ARGS…]         the whole suite (what CI runs); ARGS go to `swift test`
#   scripts/test.sh --tsan [ARGS…]  the whole test suite under ThreadSanitizer, by hand (not in
#                                   CI): builds with `--sanitize=thread` into .build-tsan (the
#                                   normal build in .build is kept) and runs every test, and the
#                                   `strata` processes the tests start, instrumented. Fails when
#                                   a test fails or when ThreadSanitizer reports anything (a data
#                                   race, say) in the tests or in any child process; the reports
#                                   are printed at the end. Known reports in code that is not
#                                   Strata's are suppressed by scripts/tsan-suppressions.txt.
#                                   Skips the benchmarks and the example server. Takes about an
#                                   hour on two cores, most of it the first build.
set -euo pipefail
cd "$(dirname "$0")/.."

tsan=false
if [[ ${1:-} == --tsan ]]; then
    tsan=true
    shift
fi

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
# The main API stays documented, with an example on every public function (issue 36): fails
# when a public declaration of these folders has no doc comment, or a function no example.
python3 scripts/doc-coverage.py --require-documented 100 --require-examples 100 \
    Sources/Strata/Query Sources/Strata/Objects Sources/Strata/History Sources/Strata/Repository \
    Sources/Strata/Stack Sources/Strata/Migration Sources/Strata/Observation Sources/StrataPostgres
phase "installing and the layer check"

# A private PostgreSQL server for the PostgreSQL store's tests (installed from Debian when
# missing), on loopback, stopped at the end. If it cannot start, the run fails here: the
# PostgreSQL tests are never skipped.
postgres_dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-postgres.XXXXXX")
trap 'scripts/postgres.sh stop "$postgres_dir"' EXIT
STRATA_POSTGRES_URL=$(scripts/postgres.sh start "$postgres_dir")
export STRATA_POSTGRES_URL
phase "starting PostgreSQL"

if $tsan; then
    # A separate scratch path, so that the normal build is not thrown away.
    tsan_build=(--sanitize=thread --scratch-path .build-tsan)
    swift build --build-tests "${tsan_build[@]}"
    phase "building with ThreadSanitizer"
    # Every report goes to a file of its own (report.PID), from this process's tests and from
    # every child they start (children inherit TSAN_OPTIONS): a report is found even where a
    # test discards a child's standard error. halt_on_error ends the reporting process at once,
    # so the test it belongs to fails too.
    tsan_reports=$(mktemp -d "${TMPDIR:-/tmp}/strata-tsan.XXXXXX")
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan-suppressions.txt log_path=$tsan_reports/report${TSAN_OPTIONS:+ $TSAN_OPTIONS}"
    status=0
    swift test --skip-build "${tsan_build[@]}" "$@" || status=$?
    phase "testing with ThreadSanitizer"
    if compgen -G "$tsan_reports/report*" >/dev/null; then
        cat "$tsan_reports"/report* >&2
        echo "test.sh: ThreadSanitizer reported problems (above; kept in $tsan_reports):" >&2
        grep -h '^WARNING: ThreadSanitizer\|^ThreadSanitizer:\|ERROR: ThreadSanitizer' "$tsan_reports"/report* | sort | uniq -c >&2 || true
        exit 1
    fi
    rm -rf "$tsan_reports"
    exit "$status"
fi

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
