#!/usr/bin/env bash
# The lookup differential at volume: >= 10^8 lookups over every fingerprint
# of lookups/fingerprints.def and random ones, every implementation against
# OVS's generic, keys against guard pages (tests/soak.cpp says what it
# checks).  Not in tests/run.sh: it takes minutes.
#
#   tests/soak.sh [--lookups N] [--seed S]     (default 1e8, seed 1)
#   tests/soak.sh --tail [--keys N] [--seed S]
#                 the tail index against OVS's loop instead: >= 10^8 keys
#                 through random tables and mask floods (tests/tail_soak.cpp)
#
# Builds build/sse42's soak target (RelWithDebInfo, the lookups as shipped;
# the sanitizers see the same code in tests/run.sh's asan and fuzz builds),
# prints the count, the mismatches (the first ten in full) and the time;
# exits 1 on any mismatch.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
esac
target=soak
if [ "${1:-}" = --tail ]; then
    target=tail_soak
    shift
fi
if ! log=$(scripts/build.sh sse42 --target "$target" 2>&1); then
    echo "$log" | tail -30 >&2
    echo "soak.sh: the build failed" >&2
    exit 1
fi
echo "$target: $(date -u '+%Y-%m-%d %H:%M UTC'), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
exec "build/sse42/tests/$target" "$@"
