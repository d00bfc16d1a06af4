#!/usr/bin/env bash
# The plugin's lookups under OVS's autovalidator, end to end:
#
#   tests/vswitchd/autovalidator_test.sh OVS_PREFIX
#
# OVS_PREFIX is a patches/build-ovs.sh --autovalidator install (the
# plugin's lookups at priority 0, the autovalidator above everything), or a
# --plugin-default one of 3.x run with OVSCLS_PLUGIN_TEST_MODE=autovalidator
# in the environment, which behaves the same (tests/vswitchd/run.sh).
# With 3.x series patch 8, the autovalidator runs and checks against OVS's
# generic, on every lookup, what each implementation would run: jit_avx2's
# code once a subtable is hot, and jit_fused's fused lookups over a port's
# top subtables.  Starts a private ovs-vswitchd with two PMD threads, sends
# UDP packets that two subtables of one miniflow map serve until both PMD
# threads' subtables run jit_avx2 code and a fused lookup (jit-show,
# subtable-show), checks the forwarding, stops the switch the graceful way
# (ovs-appctl exit), and reads the autovalidator's counts from its log:
# jit_avx2's subtable lookups and jit_fused's fused lookups checked (> 0),
# and 0 mismatches for every implementation; and the plugin's own count of
# the tail index's answers it checked against OVS's loop (> 0, 0
# mismatches).  On a CPU without what
# jit_avx2 needs, it says so and checks the portable lookups only.  Prints
# "N passed, N failed".
set -uo pipefail

prefix=${1:?usage: autovalidator_test.sh OVS_PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
use_ovs_prefix "$prefix" autovalidator-test

read_cpu

start_ovsdb
start_udp_switch
check "the autovalidator is the best implementation (info-get)" \
    grep -Eq '  autovalidator \(Use count: [0-9]+, Priority: 255\)' \
    <<<"$(ovs-appctl dpif-netdev/subtable-lookup-info-get)"
for lookup in specialized runtime jit_avx2 jit_fused; do
    check "the plugin's $lookup is at priority 0 (info-get)" \
        grep -Eq "  $lookup \(Use count: [0-9]+, Priority: 0\)" \
        <<<"$(ovs-appctl dpif-netdev/subtable-lookup-info-get)"
done

fused_lines() { ovs-appctl dpif-netdev/subtable-show --limit 0 | grep -c '^    the first [0-9]* fused: lookup jit_fused'; }
compiles() { jit_field compiles; }

send_udp 5
check "forwarding under the autovalidator" expect_tx $p2 $p4
if [ -z "$jit_lacks" ]; then
    for ((i = 0; i < 60 && $(fused_lines) < 2; i++)); do
        send_udp 1
        sleep 0.2
    done
    echo "# after $i rounds: $(fused_lines) fused lookups, $(compiles) jit_avx2 compiles"
    check "jit_avx2 compiled code for the hot subtables although the autovalidator is the best" \
        test "$(compiles)" -gt 0
    check "jit_fused: both PMD threads' p1 classifiers run a fused lookup (subtable-show)" \
        test "$(fused_lines)" -ge 2
    send_udp 20
    check "forwarding through the validated jit_avx2 and jit_fused lookups" expect_tx $p2 $p4
else
    echo "not checked: jit_avx2 and jit_fused under the autovalidator: the CPU lacks $jit_lacks"
    send_udp 20
    check "forwarding" expect_tx $p2 $p4
fi

# The counts, logged at exit.
stop_switch
plain_log=$(vlog_plain "$work/ovs-vswitchd.log")
counts=$(sed -n 's/^.*|dpif_lookup_autovalidator|INFO|checked //p' <<<"$plain_log")
echo "$counts" | sed 's/^/# checked /'
checked() {  # checked NAME KIND: the number of KIND lookups of NAME checked
    sed -n "s/^'$1': \([0-9]*\) $2 lookups against generic.*/\1/p" <<<"$counts"
}
check "the autovalidator logged its counts at exit" test -n "$counts"
check "every checked implementation: 0 mismatches" \
    bash -c "! grep -v ', 0 mismatches\$' <<<\"\$1\" | grep -q ." _ "$counts"
check "no mismatch was logged" \
    bash -c "! grep -q 'dpif_lookup_autovalidator|ERR|' <<<\"\$1\"" _ "$plain_log"
check "runtime's subtable lookups checked: $(checked runtime subtable)" \
    test "$(checked runtime subtable)" -gt 0
# The plugin's tail index, which no autovalidator sees (it is no subtable
# lookup): in these builds it serves every port with two subtables or more
# and checks each answer against OVS's loop itself (plugin/ovs_registration.c).
tail_counts=$(sed -n "s/^.*|dpcls_plugin|INFO|checked 'tail_index': //p" <<<"$plain_log")
echo "# tail_index: $tail_counts"
# (Logged as the count grows and at exit: the last line is the count.)
tail_checked=$(sed -n 's/^\([0-9]*\) keys against .*/\1/p' <<<"$tail_counts" | tail -1)
check "the tail index's answers checked against OVS's loop: ${tail_checked:-none} keys" \
    test "${tail_checked:-0}" -gt 0
check "the tail index: 0 mismatches" grep -q ', 0 mismatches$' <<<"$tail_counts"
check "no tail index mismatch was logged" \
    bash -c "! grep -q 'dpcls_plugin|ERR|tail_index' <<<\"\$1\"" _ "$plain_log"
if [ -z "$jit_lacks" ]; then
    check "jit_avx2's subtable lookups checked: $(checked jit_avx2 subtable)" \
        test "$(checked jit_avx2 subtable)" -gt 0
    check "jit_fused's fused lookups checked: $(checked jit_fused fused)" \
        test "$(checked jit_fused fused)" -gt 0
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
