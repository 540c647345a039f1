#!/usr/bin/env bash
# Builds the benchmarks in release and runs them.
#   Benchmarks/run.sh                    SQLite: full sizes, median of 5 runs after a warm-up → Benchmarks/RESULTS.md
#   Benchmarks/run.sh --quick            SQLite: small sizes, one run, debug build (in .build-packages, shared with
#                                        Examples/run.sh --smoke): checks that the benchmarks still run (CI)
#   Benchmarks/run.sh --postgres         PostgreSQL (a private server, started and removed here): full sizes
#                                        → Benchmarks/RESULTS-postgres.md
#   Benchmarks/run.sh --postgres --quick PostgreSQL: small sizes, one run → .build-bench/RESULTS-postgres-quick.md
# Each builds only its own product: the SQLite runs (and CI) never build postgres-nio's and
# Fluent's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=false
postgres=false
for argument in "$@"; do
    case $argument in
    --quick) quick=true ;;
    --postgres) postgres=true ;;
    *)
        echo "usage: Benchmarks/run.sh [--quick] [--postgres]" >&2
        exit 2
        ;;
    esac
done
# Strata's SQLite store (GRDB's system library) and the SQLite benchmarks' raw contender need
# SQLite's headers.
if [[ ! -f /usr/include/sqlite3.h ]]; then
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev
fi
scratch="$PWD/.build-bench"
# The SQLite quick run only checks that the benchmarks still build and run (CI runs it): a
# debug build is enough, and much faster to make than a release one. Figures come from release.
# That debug build shares its scratch folder with the example server's smoke test (also in CI):
# Strata and the dependencies both have are compiled once (see Packages/README.md).
configuration=release
if $quick && ! $postgres; then
    configuration=debug
    scratch="$PWD/.build-packages"
fi
temporary=()
cleanup() {
    if [[ -n ${pgdir:-} ]]; then scripts/postgres.sh stop "$pgdir" || true; fi
    rm -rf "${temporary[@]}"
}
trap cleanup EXIT

mode=()
if $quick; then mode=(--quick); fi
if $postgres; then
    product=StrataPostgresBenchmarks
    results="Benchmarks/RESULTS-postgres.md"
    $quick && results="$scratch/RESULTS-postgres-quick.md"
    title="PostgreSQL benchmark results"
else
    product=StrataBenchmarks
    results="Benchmarks/RESULTS.md"
    $quick && results="$scratch/RESULTS-quick.md"
    title="Benchmark results"
fi
nice swift build -c "$configuration" --package-path Benchmarks --scratch-path "$scratch" --product "$product"
if $postgres; then
    # A private server on loopback in a folder of its own, stopped and removed on exit.
    serverdir="$(mktemp -d)"
    temporary+=("$serverdir")
    pgdir="$serverdir/postgres"
    STRATA_POSTGRES_URL="$(scripts/postgres.sh start "$pgdir")"
    export STRATA_POSTGRES_URL
fi
table="$(mktemp)"
analysis="$(mktemp)"
temporary+=("$table" "$analysis")
"$scratch/$configuration/$product" "${mode[@]}" --output "$table"
# The hand-written analysis below the marker line of a results file (before/after figures,
# profiler findings) survives a new run; the measured table above it is replaced.
marker="<!-- analysis: kept by run.sh -->"
if [[ -f $results ]] && grep -qF "$marker" "$results"; then
    awk -v marker="$marker" 'found || $0 == marker { found = 1; print }' "$results" > "$analysis"
fi
{
    echo "# $title"
    echo
    echo "Measured $(date -u +%Y-%m-%d) on $(uname -m) with $(swift --version 2>/dev/null | head -1)."
    echo
    cat "$table"
    if [[ -s "$analysis" ]]; then
        echo
        cat "$analysis"
    fi
} > "$results"
echo "wrote $results"
