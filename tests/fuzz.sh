#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ (clang 14, ASan, UBSan, leak
# detection on):
#
#   tests/fuzz.sh [--seconds N]     (default 60 per target)
#
# The targets: lookup_fuzz (one subtable, every lookup against OVS's
# generic), classifier_fuzz (operation sequences on a classifier against the
# brute-force reference), megaflow_fuzz (megaflow text through OVS's parser,
# frames through miniflow_extract(), into the lookups); each file's top
# comment says what it checks.  Builds them (scripts/build.sh fuzz ->
# build/fuzz), then runs each for N seconds on a working corpus in
# build/fuzz/corpus/TARGET, started from the committed seeds
# (tests/fuzz/seeds/TARGET: inputs that once failed, kept with their fix)
# and from seeds made of the project's own tables by fuzz_seeds (the
# fingerprints of lookups/fingerprints.def, the megaflows of tests/corpus
# with the frames of tests/frames.hpp).  Prints per target the inputs
# run, the coverage (edges) and what the target says it checked; fails on
# any crash, mismatch, leak or undefined behaviour, naming the input that
# caused it (build/fuzz/artifacts/).  The targets run side by side, one per
# CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
        -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
case "$seconds" in '' | *[!0-9]*) echo "fuzz.sh: --seconds wants a whole number" >&2; exit 2 ;; esac

if ! log=$(scripts/build.sh fuzz 2>&1); then
    echo "$log" | tail -30 >&2
    echo "fuzz.sh: the fuzz build failed" >&2
    exit 1
fi

# fuzz_target TARGET: runs one target for $seconds s; its report goes to
# build/fuzz/TARGET.summary (printed in order below), its exit status is
# the check's.
fuzz_target() {
    local target=$1 corpus=build/fuzz/corpus/$1 out=build/fuzz/$1.log max_len seeds_from
    mkdir -p "$corpus" "tests/fuzz/seeds/$target"
    case $target in
        megaflow_fuzz) seeds_from=(tests/corpus/megaflows.txt); max_len=8192 ;;
        *) seeds_from=(); max_len=4096 ;;
    esac
    {
        build/fuzz/tests/fuzz/fuzz_seeds "$target" "$corpus" "${seeds_from[@]}" || return 1
        echo "fuzz: $target for $seconds s"
        if build/fuzz/tests/fuzz/$target -max_total_time="$seconds" -max_len="$max_len" -timeout=20 \
            -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/$target-" \
            "$corpus" "tests/fuzz/seeds/$target" >"$out" 2>&1; then
            runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out")
            cov=$(grep -o 'cov: [0-9]*' "$out" | tail -1)
            echo "  $runs inputs, coverage ${cov#cov: } edges; $(grep "^$target:" "$out" | tail -1)"
        else
            grep -E "^(==[0-9]+==ERROR|SUMMARY|$target:|.*runtime error)" "$out" | head -20
            grep -E 'Test unit written to' "$out" || true
            echo "fuzz: $target FAILED (log: $out); keep the input in tests/fuzz/seeds/$target with its fix"
            return 1
        fi
    } >"build/fuzz/$target.summary" 2>&1
}

# The targets run side by side, as many at once as the machine has CPUs
# (each is one process on one CPU, so each still gets its N seconds of a
# CPU); a target's status is kept in a file, as "wait -n", which keeps no
# more than nproc running, reaps them in any order.
mkdir -p build/fuzz/artifacts
targets=(lookup_fuzz classifier_fuzz megaflow_fuzz)
slots=$(nproc)
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$slots" ]; do wait -n || true; done
    rm -f "build/fuzz/$target.status"
    (if fuzz_target "$target"; then echo 0; else echo 1; fi >"build/fuzz/$target.status") &
done
wait
failed=0
for target in "${targets[@]}"; do
    cat "build/fuzz/$target.summary" 2>/dev/null || echo "fuzz: $target left no report"
    [ "$(cat "build/fuzz/$target.status" 2>/dev/null)" = 0 ] || failed=1
done
exit "$failed"
