#!/usr/bin/env bash
# The plugin's lookups on OVS 4.0, end to end, each lookup checked:
#
#   tests/vswitchd/validate_test.sh OVS_PREFIX
#
# OVS_PREFIX is a patches/build-ovs.sh --ovs 4.0 --validate install: the
# plugin's lookup providers as defaults (jit_avx2 4, specialized 3, runtime
# 2), and every lookup they serve checked against OVS's generic on the same
# keys (plugin/lookup_validation.h; 4.0 has no autovalidator).  Starts a
# private ovs-vswitchd with two PMD threads, sends UDP packets that two
# subtables serve until they run jit_avx2 code (jit-show, subtable-show),
# switches jit_avx2 off and on again live with
# dpif-netdev/lookup-provider-set (subtable-show follows), checks the
# forwarding throughout, stops the switch the graceful way (ovs-appctl
# exit) and reads the validation's counts from its log: jit_avx2's keys
# checked (> 0), 0 mismatches for every lookup, no mismatch logged.  On a
# CPU without what jit_avx2 needs, it says so and checks the portable
# lookups only.  Prints "N passed, N failed".
set -uo pipefail

prefix=${1:?usage: validate_test.sh OVS_PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
use_ovs_prefix "$prefix" validate-test

read_cpu

start_ovsdb
start_udp_switch
providers=$(ovs-appctl dpif-netdev/lookup-provider-show)
echo "$providers" | sed 's/^/# /'
check "the plugin's providers are registered with its default priorities" \
    test "$(grep -Ec '^  (jit_avx2: priority 4|specialized: priority 3|runtime: priority 2),' \
        <<<"$providers")" -eq 3

jit_lines() { ovs-appctl dpif-netdev/subtable-show --limit 0 | grep -c ') lookup jit_avx2,'; }
# send_until N: traffic until N subtables run jit_avx2 (or 60 rounds).
send_until() {
    local i
    for ((i = 0; i < 60 && $(jit_lines) < $1; i++)); do
        send_udp 1
        sleep 0.2
    done
}

send_udp 5
check "forwarding with the plugin's lookups validated" expect_tx $p2 $p4
if [ -z "$jit_lacks" ]; then
    send_until 2
    echo "# $(jit_lines) subtables run jit_avx2"
    check "hot subtables run jit_avx2 code (subtable-show)" test "$(jit_lines)" -ge 2
    send_udp 10
    check "forwarding through validated jit_avx2 code" expect_tx $p2 $p4
    check "lookup-provider-set jit_avx2 0: accepted" \
        ovs-appctl dpif-netdev/lookup-provider-set jit_avx2 0
    check "... and no subtable runs jit_avx2 any more (subtable-show)" test "$(jit_lines)" -eq 0
    send_udp 5
    check "forwarding with jit_avx2 off" expect_tx $p2 $p4
    check "lookup-provider-set jit_avx2 4: accepted" \
        ovs-appctl dpif-netdev/lookup-provider-set jit_avx2 4
    send_until 1
    check "... and hot subtables run jit_avx2 again (subtable-show)" test "$(jit_lines)" -ge 1
    send_udp 10
    check "forwarding with jit_avx2 back" expect_tx $p2 $p4
else
    echo "not checked: jit_avx2 on OVS 4.0: the CPU lacks $jit_lacks"
    send_udp 20
    check "forwarding" expect_tx $p2 $p4
fi

# The counts, logged at exit.
stop_switch
counts=$(sed -n "s/^.*|dpcls_plugin_validation|INFO|checked //p" "$work/ovs-vswitchd.log")
echo "$counts" | sed 's/^/# checked /'
checked() {  # checked NAME: the keys of NAME's lookups checked (0: none logged)
    local n
    n=$(sed -n "s/^'$1': \([0-9]*\) keys against OVS's generic.*/\1/p" <<<"$counts")
    echo "${n:-0}"
}
check "the validation logged its counts at exit" test -n "$counts"
check "every lookup: 0 mismatches" \
    bash -c "! grep -v ', 0 mismatches\$' <<<\"\$1\" | grep -q ." _ "$counts"
check "no mismatch was logged" \
    bash -c "! grep -q 'dpcls_plugin_validation|ERR|' '$work/ovs-vswitchd.log'"
check "keys checked over the plugin's lookups: $(($(checked specialized) + $(checked runtime) + $(checked jit_avx2)))" \
    test "$(($(checked specialized) + $(checked runtime) + $(checked jit_avx2)))" -gt 0
if [ -z "$jit_lacks" ]; then
    check "jit_avx2's keys checked: $(checked jit_avx2)" test "$(checked jit_avx2)" -gt 0
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
