#!/usr/bin/env bash
# ovs-vswitchd with the plugin built in:
#   1. builds it in two configurations (patches/cached-build.sh: once, then
#      cached outside the clone): plugin-default (the plugin's lookups are
#      the defaults) and autovalidator (OVS checks every registered lookup,
#      the plugin's included, against its generic on every lookup);
#   2. runs OVS's own testsuite subsets in both: dpif-netdev.at and pmd.at
#      (tests 1041-1079 of 3.1.0) and the "ofproto-dpif megaflow" tests
#      (1154, 1269-1296), with OVS's RECHECK=yes, printing the summary lines
#      of the first pass and of any recheck;
#   3. runs vswitchd_test.sh (two PMD threads, tiering, the JIT's other_config
#      and jit-show, prio-set under traffic) and flood_test.sh (a 2500-mask
#      megaflow flood with legitimate traffic flowing) against the
#      plugin-default build.
# Prints "N passed, N failed" over the four suites' results.
set -uo pipefail
cd "$(dirname "$0")/../.."
suites="1041-1079 1154 1269-1296"

passed=0
failed=0
declare -A prefixes
for config in plugin-default autovalidator; do
    if ! prefix=$(patches/cached-build.sh "--$config" | tail -1); then
        echo "vswitchd: building the $config configuration failed"
        failed=$((failed + 1))
        continue
    fi
    prefixes[$config]=$prefix
    echo "=== OVS testsuite ($config): tests $suites"
    log="$prefix/testsuite.log"
    # RECHECK=yes is OVS's own way to run timing-sensitive tests once more
    # (its CI does the same): failures of the first pass are re-run alone.
    # Both passes' summaries are printed, so a test that passed only on the
    # recheck stays visible.  autotest ends a pass with "All N tests were
    # successful." or "ERROR: All N tests were run, / M failed unexpectedly."
    # shellcheck disable=SC2086 # the test ranges are separate words
    make -C "$prefix/src" -j"$(nproc)" check TESTSUITEFLAGS="-j$(nproc) $suites" \
        RECHECK=yes >"$log" 2>&1
    grep -E 'successful|tests were run|failed unexpectedly|tests were skipped|^ *[0-9]+: .*\.at:[0-9]+' "$log" |
        sed 's/^/    /'
    last=$(grep -E 'successful|failed unexpectedly' "$log" | tail -1)
    if grep -q 'successful' <<<"$last"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "    (see $prefix/src/tests/testsuite.log)"
    fi
done

prefix=${prefixes[plugin-default]:-}
for test in vswitchd_test flood_test; do
    echo "=== project tests of the patched ovs-vswitchd: $test"
    if [ -n "$prefix" ] && tests/vswitchd/$test.sh "$prefix"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
done
echo "vswitchd suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
