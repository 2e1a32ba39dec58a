#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets of Fuzz/ (a package of its own, outside the main build and test graph)
# in release with `--sanitize=fuzzer`, then runs each target for FUZZ_SECONDS (default 60) on its committed seeds
# (Fuzz/Corpus/NAME) plus the corpus earlier runs grew (Fuzz/.build/fuzz/NAME). Prints one line per target:
#   fuzz target=NAME execs=N crashes=K
# and exits 1 if any target crashed or did not run. FUZZ_TARGETS="a b" runs only those; a crashing input is kept in
# Fuzz/.build/crashes/NAME/ (replay it with FACESEAL_FUZZ_TARGET=NAME Fuzz/.build/release/faceseal-fuzz FILE, then
# make it a regression test).
set -uo pipefail
cd "$(dirname "$0")/../Fuzz"
seconds="${FUZZ_SECONDS:-60}"
swift="${SWIFT:-swift}"
if ! "$swift" build -c release --sanitize=fuzzer -Xswiftc -enable-testing > .build-fuzz.log 2>&1; then
    tail -30 .build-fuzz.log
    echo "fuzz: build failed"
    exit 1
fi
rm -f .build-fuzz.log
binary=".build/release/faceseal-fuzz"
targets="${FUZZ_TARGETS:-$(ls Corpus)}"
status=0
for target in $targets; do
    work=".build/fuzz/$target"
    crashes=".build/crashes/$target"
    mkdir -p "$work" "$crashes"
    before=$(ls "$crashes" | wc -l)
    FACESEAL_FUZZ_TARGET="$target" "$binary" "$work" "Corpus/$target" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" > "$work.log" 2>&1
    execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\)/\1/p' "$work.log" | tail -1)
    found=$(( $(ls "$crashes" | wc -l) - before ))
    echo "fuzz target=$target execs=${execs:-0} crashes=$found"
    if [ "$found" -gt 0 ] || [ -z "$execs" ]; then
        status=1
        grep -E 'ERROR|Fatal error|SUMMARY|Test unit written' "$work.log" | head -5
    fi
done
exit $status
