#!/usr/bin/env bash
# Coverage-guided fuzzing of predicates with libFuzzer.
#   scripts/fuzz.sh [SECONDS] [parser|differential|all]     (defaults: 60, parser)
# parser:       the format-string parser alone (PredicateFuzzer, seed corpus Fuzz/corpus).
# differential: generated format strings run in SQL and in memory must agree
#               (DifferentialFuzzer, seed corpus Fuzz/corpus-differential).
# all:          both, one after the other, SECONDS each.
# Builds Fuzz/ in release with -sanitize=fuzzer (linked by lld) into .build-fuzz, copies the seed
# corpus to a temporary folder, and fails when the fuzzer finds a crash, a hang or (differential)
# a disagreement; the input is written to .build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
target="${2:-parser}"
case "$target" in
    parser | differential | all) ;;
    *)
        echo "usage: scripts/fuzz.sh [SECONDS] [parser|differential|all]" >&2
        exit 64
        ;;
esac
scratch="$PWD/.build-fuzz"
nice swift build -c release --package-path Fuzz --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer -Xswiftc -use-ld=lld
mkdir -p "$scratch/artifacts"
# Swift's own backtracer would catch the crash first; libFuzzer must see it to save the input.
export SWIFT_BACKTRACE=enable=no
corpora="$(mktemp -d)"
trap 'rm -rf "$corpora"' EXIT

run() {
    local executable="$1" seeds="$2" max_len="$3"
    local corpus="$corpora/$executable"
    mkdir -p "$corpus"
    cp "$seeds"/* "$corpus/"
    nice "$scratch/release/$executable" "$corpus" \
        -max_total_time="$seconds" -timeout=5 -max_len="$max_len" -print_final_stats=1 \
        -artifact_prefix="$scratch/artifacts/"
}

if [[ "$target" == parser || "$target" == all ]]; then
    run PredicateFuzzer Fuzz/corpus 512
fi
if [[ "$target" == differential || "$target" == all ]]; then
    run DifferentialFuzzer Fuzz/corpus-differential 1024
fi
