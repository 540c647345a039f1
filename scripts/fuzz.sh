#!/usr/bin/env bash
# Coverage-guided fuzzing of the predicate format-string parser with libFuzzer.
#   scripts/fuzz.sh [SECONDS]     (default 60)
# Builds Fuzz/ in release with -sanitize=fuzzer (linked by lld) into .build-fuzz, copies the seed
# corpus to a temporary folder, and fails when the fuzzer finds a crash or a hang
# (the crashing input is written to .build-fuzz/artifacts/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
scratch="$PWD/.build-fuzz"
nice swift build -c release --package-path Fuzz --scratch-path "$scratch" \
    -Xswiftc -sanitize=fuzzer -Xswiftc -use-ld=lld
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
cp Fuzz/corpus/* "$corpus/"
mkdir -p "$scratch/artifacts"
nice "$scratch/release/PredicateFuzzer" "$corpus" \
    -max_total_time="$seconds" -timeout=5 -max_len=512 -print_final_stats=1 \
    -artifact_prefix="$scratch/artifacts/"
