#!/usr/bin/env bash
# OVN's own testsuite against the plugin: a real controller's pipelines,
# every lookup checked.
#
#   tests/ovn/run.sh [--no-recheck]
#
# 1. Builds (or reuses) OVS 4.0 with the series and the plugin in its
#    validation mode (patches/cached-build.sh --ovs 4.0 --validate: the
#    plugin's lookups are the defaults and each answer is checked against
#    OVS's generic, the tail index's against OVS's loop), and OVN 26.03.1
#    against that tree (patches/build-ovn.sh: Debian unstable's source with
#    patches/ovn/26.03/).
# 2. Runs the tests of OVN's ovn.at that send packets through the logical
#    pipelines (tests/ovn/subset.py says which and why): OVN's suite drives
#    ovs-vswitchd on the dummy datapath, so each packet it injects goes
#    through the dpcls.  OVS's RECHECK=yes re-runs a test that failed once,
#    as OVS's and OVN's CI do; both passes are printed.
# 3. Reads every ovs-vswitchd.log the tests left (OVN's tests do not fail
#    on a logged error): a mismatch line fails the phase, a switch whose log
#    has no count line fails it (the plugin logs its counts as they grow,
#    from the first other_config on, so a switch killed by a test leaves
#    them too), and the keys checked are summed per lookup (each log's last
#    line per lookup).  Goal: 0 mismatches, and keys of specialized,
#    jit_avx2 and tail_index checked (jit_fused: below).
# 4. A test that failed both passes is run again with the stock switch
#    (no series, no plugin) built from the same OVS source, and listed as
#    failing with the stock switch too (OVN's or this machine's) or only
#    with the plugin (counted failed).  --no-recheck leaves that out.
#
# The thresholds are lowered for the tests' switches only, through their
# environment (OVN's tests send tens of packets, fewer than the JIT's
# defaults wait for): OVSCLS_JIT_HOT_HITS=0 (compile a subtable at its
# first ranking with hits), which only validation builds read in place of
# other_config's dpcls-jit-hot-hits (plugin/ovs_registration.c,
# jit_test_hot_hits(); docs/ref/ovs-dpcls-plugin.md): an operator's switch
# never does.  NOT CHECKED here: jit_fused.  OVN's tests add their ports
# as netdev-dummy ports, which ovs-vswitchd's main thread polls (no PMD
# thread: the count lines are the main thread's), and OVS ranks a dpcls and
# asks for fused lookups only on PMD threads (dp_netdev_pmd_try_optimize()
# runs in pmd_thread_main() alone), so no fused lookup is ever made there.
# jit_fused under OVN's pipelines is checked on the PMD thread of OVS-DPDK
# instead: perf/p2p/run.sh --ovs 4.0 --ovn --check (its keys and mismatches
# on docs/results/2026-12-07-ovn-p2p.md).
#
# Prints "N passed, N failed": each test of the subset, and the log checks.
set -euo pipefail
cd "$(dirname "$0")/../.."
source tests/vlog.sh
recheck=yes
case "${1:-}" in
    --no-recheck) recheck=no ;;
    "") ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "ovn/run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
# OVN's test macros: tcpdump for captures, scapy (fmt_pkt and its
# scapy-server.py), $PYTHON for OVS's ovs-pcap (unset, every test that
# compares captured packets fails after 30 s).  Debian's python3, which
# has Debian's scapy: another python3 first in PATH (pyenv's, a venv's)
# would not, and the tests that build packets with scapy hang until their
# timeouts.
scripts/apt-install-missing.sh tests/ovn/run.sh tcpdump python3-scapy python3 >&2
export PYTHON=/usr/bin/python3
export PATH=/usr/bin:$PATH
jobs=$(nproc)
passed=0 failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAILED: $*"; }

start=$SECONDS
prefix=$(patches/cached-build.sh --ovs 4.0 --validate | tail -1)
ovn=$(patches/build-ovn.sh --ovs-tree "$prefix/src" | tail -1)
echo "ovn: OVS 4.0 validation build and OVN 26.03.1: $((SECONDS - start)) s (0 if cached)"
make -C "$ovn" tests/testsuite >/dev/null
suites=$("$ovn/tests/testsuite" -l | python3 tests/ovn/subset.py "$ovn/tests")
n=$(wc -w <<<"$suites")
[ "$n" -gt 0 ] || { bad "OVN's testsuite has none of the subset's tests"; echo "$passed passed, $failed failed"; exit 1; }
echo "=== OVN 26.03.1's testsuite, $n tests, against OVS 4.0 with the plugin (validation): $suites"

# One run of OVN's testsuite: the tests' folders kept (-d) for the logs.
run_suite() {  # run_suite OVN_TREE LOG TESTS...
    local tree=$1 log=$2
    shift 2
    # shellcheck disable=SC2086 # the test numbers are separate words
    OVSCLS_JIT_HOT_HITS=0 make -C "$tree" -j"$jobs" check \
        TESTSUITEFLAGS="-d -j$jobs $*" RECHECK=yes >"$log" 2>&1 || true
}
log=$ovn/testsuite-plugin.log
suite_start=$SECONDS
# shellcheck disable=SC2086 # the test numbers are separate words
run_suite "$ovn" "$log" $suites
grep -E 'successful|tests were run|failed unexpectedly|tests were skipped' "$log" | sed 's/^/    /'
echo "    ($((SECONDS - suite_start)) s)"
# Numbers that failed the last pass ("  123: ovn.at:456  TITLE  FAILED").
# (No testsuite.log is left when every test passed.)
failed_numbers=$( (awk '/^## Summary of the failures/ { s = 1 } s && /^ *[0-9]+: / { sub(":", "", $1); print $1 }' \
    "$ovn/tests/testsuite.log" 2>/dev/null || true) | sort -un | tr '\n' ' ')
last=$(grep -E 'successful|failed unexpectedly' "$log" | tail -1 || true)
if grep -q successful <<<"$last"; then
    failed_numbers=""
fi
m=$(wc -w <<<"$failed_numbers")
skipped=$(sed -nE 's/^ *([0-9]+) tests? (was|were) skipped.*/\1/p' "$log" | tail -1)
skipped=${skipped:-0}
passed=$((passed + n - m - skipped))
echo "    passed (first pass or recheck): $((n - m - skipped)) of $n; skipped by OVN's own checks: $skipped"

# The logs: every switch's, of every test that ran.
mapfile -t logs < <(find "$ovn/tests/testsuite.dir" -name ovs-vswitchd.log 2>/dev/null | sort)
counts_of() {  # counts_of LOG: its last count line per lookup, "NAME KEYS MISMATCHES"
    vlog_plain "$1" | sed -n \
        -e "s/.*|dpcls_plugin_validation|INFO|checked '\([^']*\)': \([0-9]*\) keys against OVS's generic, \([0-9]*\) mismatches/\1 \2 \3/p" \
        -e "s/.*|dpcls_plugin_validation|INFO|checked '\([^']*\)' (fused): \([0-9]*\) keys against OVS's generic over the same subtables, \([0-9]*\) mismatches/\1(fused) \2 \3/p" \
        -e "s/.*|dpcls_plugin|INFO|checked '\(tail_index\)': \([0-9]*\) keys against OVS's loop over the tail, \([0-9]*\) mismatches/\1 \2 \3/p" |
        awk '{ last[$1] = $0 } END { for (k in last) print last[k] }'
}
silent=0 mismatch_logs=0
all_counts=""
for f in "${logs[@]}"; do
    c=$(counts_of "$f")
    if [ -z "$c" ]; then
        silent=$((silent + 1))
        [ "$silent" -gt 5 ] || echo "    no count line: ${f#"$ovn"/tests/}"
    fi
    errors=$(vlog_plain "$f" | grep -e 'dpcls_plugin_validation|ERR|' -e 'dpcls_plugin|ERR|tail_index' || true)
    if [ -n "$errors" ]; then
        mismatch_logs=$((mismatch_logs + 1))
        head -2 <<<"$errors" | sed 's/^/    /'
    fi
    all_counts+=$c$'\n'
done
summed=$(awk 'NF == 3 { c[$1] += $2; m[$1] += $3 }
    END { for (k in c) printf "%s: %d keys checked, %d mismatches\n", k, c[k], m[k] }' <<<"$all_counts" | sort)
echo "    validation, over ${#logs[@]} ovs-vswitchd logs:"
sed 's/^/      /' <<<"${summed:-nothing checked}"
if [ "${#logs[@]}" -gt 0 ] && [ "$silent" -eq 0 ]; then
    ok "every switch's log has its counts (${#logs[@]} logs)"
else
    bad "$silent of ${#logs[@]} switch logs have no count line"
fi
if [ "$mismatch_logs" -eq 0 ] && [ -n "$summed" ] && ! grep -v ' 0 mismatches$' <<<"$summed" | grep -q .; then
    ok "0 mismatches"
else
    bad "mismatches (in $mismatch_logs logs), or nothing checked"
fi
for lookup in specialized jit_avx2 tail_index; do
    keys=$(awk -v k="$lookup:" '$1 == k { print $2 }' <<<"$summed")
    if [ "${keys:-0}" -gt 0 ]; then
        ok "$lookup: $keys keys checked"
    else
        bad "$lookup: no key checked"
    fi
done
echo "not checked: jit_fused: OVN's tests poll their dummy ports from ovs-vswitchd's main thread," \
    "which OVS never ranks nor offers fused lookups (PMD threads only); checked under OVN's" \
    "pipelines by perf/p2p/run.sh --ovs 4.0 --ovn --check"

# Failures: once more with the stock switch of the same source.
if [ -n "$failed_numbers" ] && [ "$recheck" = yes ]; then
    echo "=== the $m failing tests with the stock switch (OVS 4.0 as released, OVN built against it)"
    stock=$(patches/cached-build.sh --tree --ovs 4.0 --stock | tail -1)
    stock_ovn=$(patches/build-ovn.sh --ovs-tree "$stock" | tail -1)
    make -C "$stock_ovn" tests/testsuite >/dev/null
    # shellcheck disable=SC2086 # the test numbers are separate words
    run_suite "$stock_ovn" "$stock_ovn/testsuite-stock.log" $failed_numbers
    stock_failed=$( (awk '/^## Summary of the failures/ { s = 1 } s && /^ *[0-9]+: / { sub(":", "", $1); print $1 }' \
        "$stock_ovn/tests/testsuite.log" 2>/dev/null || true) | sort -un | tr '\n' ' ')
    if grep -q successful <<<"$(grep -E 'successful|failed unexpectedly' "$stock_ovn/testsuite-stock.log" | tail -1)"; then
        stock_failed=""
    fi
    for t in $failed_numbers; do
        title=$("$ovn/tests/testsuite" -l | awk -v t="$t" '$1 == t ":" { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }')
        if grep -qw "$t" <<<"$stock_failed"; then
            echo "    $t ($title): fails with the stock switch too (not the plugin's)"
        else
            echo "    $t ($title): passes with the stock switch: the plugin's"
        fi
    done
fi
if [ -n "$failed_numbers" ]; then
    failed=$((failed + m))
    echo "FAILED: $m tests: $failed_numbers(see $ovn/tests/testsuite.log)"
fi
echo "ovn: $((SECONDS - start)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
