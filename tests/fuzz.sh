#!/usr/bin/env bash
# Runs the libFuzzer targets of tests/fuzz/ (clang 14, ASan, UBSan, leak
# detection on):
#
#   tests/fuzz.sh [--seconds N]     (default 60 per target)
#
# Builds them (scripts/build.sh fuzz -> build/fuzz), then runs each for N
# seconds on a working corpus in build/fuzz/corpus/TARGET, started from the
# committed seeds (tests/fuzz/seeds/TARGET: inputs that once failed, kept
# with their fix) and from seeds made of the project's own tables (one per
# fingerprint of lookups/fingerprints.def).  Prints per target the inputs
# run, the coverage (edges) and what the target says it checked; fails on
# any crash, mismatch, leak or undefined behaviour, naming the input that
# caused it (build/fuzz/artifacts/).
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

# lookup_fuzz reads u1 then u0 from its first two bytes (Gen::below).
fingerprint_seeds() {
    local dir=$1
    sed -n 's/^FINGERPRINT(\([0-9]*\), *\([0-9]*\),.*/\1 \2/p' lookups/fingerprints.def |
        while read -r u0 u1; do
            { printf "\\x$(printf %02x "$u1")\\x$(printf %02x "$u0")"
              head -c 256 /dev/zero | tr '\0' '\125'; } >"$dir/fingerprint-$u0-$u1"
        done
}

failed=0
mkdir -p build/fuzz/artifacts
for target in lookup_fuzz; do
    corpus=build/fuzz/corpus/$target
    mkdir -p "$corpus"
    fingerprint_seeds "$corpus"
    out=build/fuzz/$target.log
    echo "fuzz: $target for $seconds s"
    if build/fuzz/tests/fuzz/$target -max_total_time="$seconds" -max_len=4096 -timeout=20 \
        -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/$target-" \
        "$corpus" "tests/fuzz/seeds/$target" >"$out" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out")
        cov=$(grep -o 'cov: [0-9]*' "$out" | tail -1)
        echo "  $runs inputs, coverage ${cov#cov: } edges; $(grep "^$target:" "$out" | tail -1)"
    else
        grep -E '^(==[0-9]+==ERROR|SUMMARY|lookup_fuzz:|.*runtime error)' "$out" | head -20 >&2
        grep -E 'Test unit written to' "$out" >&2 || true
        echo "fuzz: $target FAILED (log: $out); keep the input in tests/fuzz/seeds/$target with its fix" >&2
        failed=1
    fi
done
exit "$failed"
