#!/usr/bin/env bash
# The `strata` tool against the sqlite3 shell on one table of a million rows (issue 19's targets):
#   C1  strata export STORE --entity Movie --format ndjson    vs  sqlite3 -json STORE 'SELECT * FROM "Movie"'
#   C2  strata query STORE Movie --count                       vs  sqlite3 STORE 'SELECT COUNT(*) FROM "Movie"'
# Each pair runs three times, interleaved, output to /dev/null; each run's ratio is reported,
# with the range (the machine is shared: a target holds when every run meets it). A count takes
# milliseconds, so each count figure is the median of 15 runs. Beside C2 runs the floor: a Swift
# program that only imports Foundation and prints the date, built the way `swift build` links
# (dynamically), and the same count on the demo's tiny store, which is strata's fixed cost.
#   Benchmarks/cli.sh           1,000,000 rows, release build → Benchmarks/RESULTS-cli.md
#   Benchmarks/cli.sh --quick   10,000 rows, debug build, one run: checks that it runs (CI)
#   Benchmarks/cli.sh --rows N  another size
set -euo pipefail
shopt -s inherit_errexit
export LC_ALL=C # a "." in $EPOCHREALTIME and for sort -n
cd "$(dirname "$0")/.."
rows=1000000
runs=3
configuration=release
quick=false
while [[ $# -gt 0 ]]; do
    case $1 in
    --quick)
        quick=true
        rows=10000
        runs=1
        configuration=debug
        ;;
    --rows)
        rows=$2
        shift
        ;;
    *)
        echo "usage: Benchmarks/cli.sh [--quick] [--rows N]" >&2
        exit 2
        ;;
    esac
    shift
done
if ! command -v sqlite3 > /dev/null; then
    sudo_cmd=""
    [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sqlite3
fi
# The measured build (release, or debug with --quick) also makes the store, with `strata demo`,
# whose key paths through relationships an optimized build once could not resolve.
if [[ $configuration == release ]]; then
    build_path=.build-cli-release
    nice swift build -c release --product strata --build-path "$build_path"
else
    build_path=.build
    swift build --product strata
fi
strata="$build_path/$configuration/strata"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
store="$work/Movies.sqlite"

# A store of the demo's model, then a million movies imported into it.
"$strata" demo --store "$store" > /dev/null
awk -v rows="$rows" 'BEGIN {
    for (i = 1; i <= rows; i++) {
        printf "{\"id\":\"%08X-0000-4000-8000-%012X\",\"title\":\"Movie number %d\",\"releaseDate\":\"20%02d-%02d-%02dT12:00:00Z\",\"boxOffice\":%d.%02d,\"genres\":[\"drama\",\"crime\"]}\n",
            i, i, i, i % 30, 1 + i % 12, 1 + i % 28, i * 7 % 1000000000, i % 100
    }
}' > "$work/movies.ndjson"
import_start=$EPOCHREALTIME
"$strata" import "$store" "$work/movies.ndjson" --entity Movie --no-progress 2> /dev/null
import_seconds=$(awk -v a="$EPOCHREALTIME" -v b="$import_start" 'BEGIN { printf "%.2f", a - b }')
rm "$work/movies.ndjson"
total=$(sqlite3 "$store" 'SELECT COUNT(*) FROM "Movie"')

# Seconds a command takes, its output discarded.
seconds() {
    local start=$EPOCHREALTIME
    if ! "$@" > /dev/null 2>&1; then
        echo "cli.sh: failed: $*" >&2
        return 1
    fi
    awk -v a="$EPOCHREALTIME" -v b="$start" 'BEGIN { printf "%.4f", a - b }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# The median of 15 runs of a short command, in seconds.
median_seconds() {
    local samples=()
    local sample index
    for ((index = 0; index < 15; index++)); do
        sample=$(seconds "$@") || return 1
        samples+=("$sample")
    done
    printf '%s\n' "${samples[@]}" | sort -n | sed -n 8p
}
# The least any Swift program that uses Foundation takes to start, print and exit here.
printf 'import Foundation\nprint(Date())\n' > "$work/floor.swift"
swiftc -O "$work/floor.swift" -o "$work/floor"
small="$work/Small.sqlite"
"$strata" demo --store "$small" > /dev/null
# Warm the file cache once, so that no contender pays for the first read.
sqlite3 "$store" 'SELECT * FROM "Movie"' > /dev/null

declare -a export_ratios count_ratios report floor_report
for ((run = 1; run <= runs; run++)); do
    s_export=$(seconds sqlite3 -json "$store" 'SELECT * FROM "Movie"')
    t_export=$(seconds "$strata" export "$store" --entity Movie --format ndjson --no-progress)
    s_count=$(median_seconds sqlite3 "$store" 'SELECT COUNT(*) FROM "Movie"')
    t_count=$(median_seconds "$strata" query "$store" Movie --count --format ndjson)
    f_start=$(median_seconds "$work/floor")
    f_count=$(median_seconds "$strata" query "$small" Movie --count --format ndjson)
    floor_report+=("| $run | ${f_start} s | $(ratio "$f_start" "$s_count")× | ${f_count} s |")
    export_ratios+=("$(ratio "$t_export" "$s_export")")
    count_ratios+=("$(ratio "$t_count" "$s_count")")
    report+=("| $run | $t_export s | $s_export s | ${export_ratios[-1]}× | $t_count s | $s_count s | ${count_ratios[-1]}× |")
done
range() { printf '%s\n' "$@" | sort -n | awk 'NR == 1 { low = $1 } { high = $1 } END { print (low == high ? low : low "–" high) }'; }
output="Benchmarks/RESULTS-cli.md"
$quick && output="$build_path/RESULTS-cli-quick.md"
{
    echo "# The strata tool against the sqlite3 shell"
    echo
    echo "Measured $(date -u +%Y-%m-%d) on $(uname -m), $configuration build, $total rows of Movie"
    echo "(\`Benchmarks/cli.sh\`). Import of the rows with \`strata import\`: $import_seconds s."
    echo
    echo "| run | strata export (NDJSON) | sqlite3 -json | ratio (target ≤ 2) | strata query --count | sqlite3 COUNT(*) | ratio (target ≤ 1.2) |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${report[@]}"
    echo
    echo "Export: $(range "${export_ratios[@]}")× sqlite3 -json. Count: $(range "${count_ratios[@]}")× sqlite3."
    echo
    echo "The floor under C2: a Swift program that only imports Foundation and prints the date (built"
    echo "with \`swiftc -O\`, linked like \`swift build\`), against the same sqlite3 count; and strata's"
    echo "count on the demo's store of a few rows, which is its cost before the count itself."
    echo
    echo "| run | Foundation program | its share of sqlite3's count | strata query --count, tiny store |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${floor_report[@]}"
} > "$output"
cat "$output"
