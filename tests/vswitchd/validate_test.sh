#!/usr/bin/env bash
# The plugin's lookups on OVS 4.0, end to end, each lookup checked:
#
#   tests/vswitchd/validate_test.sh OVS_PREFIX
#
# OVS_PREFIX is a patches/build-ovs.sh --ovs 4.0 --validate install: the
# plugin's lookup providers as defaults (jit_avx2 4, specialized 3, runtime
# 2, jit_fused 4, tail_index 4), and every lookup they serve checked: the
# subtable and fused lookups against OVS's generic on the same keys
# (plugin/lookup_validation.h; 4.0 has no autovalidator), the tail index
# against OVS's loop over the same subtables (it serves from a port's first
# subtable on in these builds).  Starts a private ovs-vswitchd with two PMD
# threads, sends UDP packets that two subtables serve until they run
# jit_avx2 code and a fused lookup serves both (jit-show, subtable-show),
# switches jit_avx2, jit_fused and tail_index off and on again live with
# dpif-netdev/lookup-provider-set (subtable-show follows), checks the
# forwarding throughout, stops the switch the graceful way (ovs-appctl
# exit) and reads the validation's counts from its log: keys checked (> 0)
# for jit_avx2, jit_fused and tail_index, 0 mismatches for every lookup, no
# mismatch logged.  On a CPU without what jit_avx2 needs, it says so and
# checks the portable lookups and the tail index only.  Then restarts the
# switch with other_config:lookup-provider-priorities="tail_index=0": the
# choice survives the restart, removing the key restores the default, a
# key naming no provider changes nothing.  Prints "N passed, N failed".
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
defaults=$(for name in jit_avx2 specialized runtime jit_fused tail_index; do
    printf '%s: priority %s|' $name "$(plugin_prio $name)"; done)
check "the plugin's providers are registered with its default priorities (classifier/lookup_table.h)" \
    test "$(grep -Ec "^  (${defaults%|})," <<<"$providers")" -eq 5

jit_lines() { ovs-appctl dpif-netdev/subtable-show --limit 0 | grep -c ') lookup jit_avx2,'; }
fused_lines() { ovs-appctl dpif-netdev/subtable-show | grep -c '^    the first [0-9]* fused: lookup jit_fused'; }
tail_lines() { ovs-appctl dpif-netdev/subtable-show | grep -c '^    from the [0-9]*th on: tail index tail_index'; }
# send_until N [LINES]: traffic until LINES (default jit_lines) counts N
# (or 60 rounds).
send_until() {
    local i
    for ((i = 0; i < 60 && $(${2:-jit_lines}) < $1; i++)); do
        send_udp 1
        sleep 0.2
    done
}

# off_and_on NAME PRIO LINES: with NAME serving (LINES, a count of
# subtable-show lines, >= 1), lookup-provider-set NAME 0 takes it off every
# port (LINES 0), NAME PRIO brings it back; forwarding checked throughout.
off_and_on() {
    local name=$1 prio=$2 lines=$3
    check "lookup-provider-set $name 0: accepted" \
        ovs-appctl dpif-netdev/lookup-provider-set "$name" 0
    check "... and $name serves nothing any more (subtable-show)" test "$($lines)" -eq 0
    send_udp 5
    check "forwarding with $name off" expect_tx $p2 $p4
    check "lookup-provider-set $name $prio: accepted" \
        ovs-appctl dpif-netdev/lookup-provider-set "$name" "$prio"
    send_until 1 "$lines"
    check "... and $name serves again (subtable-show)" test "$($lines)" -ge 1
    send_udp 10
    check "forwarding with $name back" expect_tx $p2 $p4
}

send_udp 5
check "forwarding with the plugin's lookups validated" expect_tx $p2 $p4
if [ -z "$jit_lacks" ]; then
    send_until 2
    echo "# $(jit_lines) subtables run jit_avx2"
    check "hot subtables run jit_avx2 code (subtable-show)" test "$(jit_lines)" -ge 2
    send_udp 10
    check "forwarding through validated jit_avx2 code" expect_tx $p2 $p4
    off_and_on jit_avx2 4 jit_lines

    # jit_fused: one lookup over the port's two subtables once both run
    # jit_avx2 code.
    send_until 1 fused_lines
    check "a fused lookup serves the port's subtables (subtable-show)" test "$(fused_lines)" -ge 1
    send_udp 10
    check "forwarding through the validated fused lookup" expect_tx $p2 $p4
    off_and_on jit_fused 4 fused_lines
else
    echo "not checked: jit_avx2 and jit_fused on OVS 4.0: the CPU lacks $jit_lacks"
    send_udp 20
    check "forwarding" expect_tx $p2 $p4
fi

# tail_index: in validation builds it serves from a port's first subtable
# on, once the port has two, each answer checked against OVS's loop.
send_until 1 tail_lines
check "the tail index serves the port (subtable-show)" test "$(tail_lines)" -ge 1
off_and_on tail_index 4 tail_lines
tail_show=$(ovs-appctl dpcls-plugin/tail-show)
echo "$tail_show" | sed 's/^/# /'

# The counts, logged as they grow (each time one passes a power of two):
# there before the switch stops, so that a switch killed without its exit
# hooks leaves them too.  Then at exit.
check "the counts are in the log before the exit" \
    grep -q "dpcls_plugin_validation|INFO|checked 'specialized': [1-9]" <<<"$(vlog_plain "$work/ovs-vswitchd.log")"
stop_switch
plain_log=$(vlog_plain "$work/ovs-vswitchd.log")
counts=$(sed -n -e "s/^.*|dpcls_plugin_validation|INFO|checked //p" \
    -e "s/^.*|dpcls_plugin|INFO|checked \('tail_index'\)/\1 (tail)/p" <<<"$plain_log")
echo "$counts" | sed 's/^/# checked /'
checked() {  # checked NAME ['(fused)'|'(tail)']: keys of NAME's lookups checked, its last line (0: none logged)
    local n
    n=$(grep -F "'$1'${2:+ $2}: " <<<"$counts" | sed -n 's/^[^:]*: \([0-9]*\) keys against .*/\1/p' |
        tail -1)
    echo "${n:-0}"
}
check "the validation logged its counts at exit" test -n "$counts"
check "every lookup: 0 mismatches" \
    bash -c "! grep -v ', 0 mismatches\$' <<<\"\$1\" | grep -q ." _ "$counts"
check "no mismatch was logged" \
    bash -c "! grep -q 'dpcls_plugin_validation|ERR|' <<<\"\$1\"" _ "$plain_log"
check "keys checked over the plugin's lookups: $(($(checked specialized) + $(checked runtime) + $(checked jit_avx2)))" \
    test "$(($(checked specialized) + $(checked runtime) + $(checked jit_avx2)))" -gt 0
if [ -z "$jit_lacks" ]; then
    check "jit_avx2's keys checked: $(checked jit_avx2)" test "$(checked jit_avx2)" -gt 0
    check "jit_fused's keys checked: $(checked jit_fused '(fused)')" \
        test "$(checked jit_fused '(fused)')" -gt 0
fi
check "tail_index's keys checked against OVS's loop: $(checked tail_index '(tail)')" \
    test "$(checked tail_index '(tail)')" -gt 0
# other_config:lookup-provider-priorities keeps a choice across a restart
# (after the counts above: the restarted switch logs its own at exit).
ovs-vsctl --no-wait set Open_vSwitch . 'other_config:lookup-provider-priorities="tail_index=0"'
restart_udp_switch
check "after a restart with tail_index=0 in other_config, it is at 0" \
    grep -q '^  tail_index: priority 0,' <<<"$(ovs-appctl dpif-netdev/lookup-provider-show)"
send_udp 10
check "forwarding after the restart" expect_tx $p2 $p4
check "... and the tail index serves no port (subtable-show)" test "$(tail_lines)" -eq 0
ovs-vsctl remove Open_vSwitch . other_config lookup-provider-priorities
tail_prio=$(plugin_prio tail_index)
check "the key removed: tail_index back at its default priority $tail_prio" \
    grep -q "^  tail_index: priority $tail_prio," <<<"$(ovs-appctl dpif-netdev/lookup-provider-show)"
send_until 1 tail_lines
check "... and the index serves the port again (subtable-show)" test "$(tail_lines)" -ge 1
ovs-vsctl set Open_vSwitch . 'other_config:lookup-provider-priorities="nosuch=1"'
check "a key naming no provider is refused with a warning, nothing changed" \
    bash -c "grep -q 'lookup-provider-priorities=\"nosuch=1\": no lookup provider .nosuch.; no priority changed' '$work/ovs-vswitchd.log' &&
             ovs-appctl dpif-netdev/lookup-provider-show | grep -q '^  tail_index: priority $tail_prio,'"
stop_switch
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
