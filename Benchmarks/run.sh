#!/usr/bin/env bash
# Builds the benchmarks in release and runs them, writing Benchmarks/RESULTS.md.
#   Benchmarks/run.sh            full sizes, median of 5 runs after a warm-up
#   Benchmarks/run.sh --quick    small sizes, one run: checks that the benchmarks still run
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -f /usr/include/sqlite3.h ]]; then
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsqlite3-dev
fi
scratch="$PWD/.build-bench"
nice swift build -c release --package-path Benchmarks --scratch-path "$scratch"
mode=(); results="Benchmarks/RESULTS.md"
if [ "${1:-}" = "--quick" ]; then mode=(--quick); results="$scratch/RESULTS-quick.md"; fi
table="$(mktemp)"
trap 'rm -f "$table"' EXIT
"$scratch/release/StrataBenchmarks" "${mode[@]}" --output "$table"
# The hand-written analysis below the marker line of RESULTS.md (before/after figures, profiler
# findings) survives a new run; the measured table above it is replaced.
marker="<!-- analysis: kept by run.sh -->"
analysis="$(mktemp)"
trap 'rm -f "$table" "$analysis"' EXIT
if [[ -f Benchmarks/RESULTS.md ]] && grep -qF "$marker" Benchmarks/RESULTS.md; then
    awk -v marker="$marker" 'found || $0 == marker { found = 1; print }' Benchmarks/RESULTS.md > "$analysis"
fi
{
    echo "# Benchmark results"
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
