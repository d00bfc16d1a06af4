#!/usr/bin/env bash
# A megaflow mask flood (Tuple Space Explosion, CVE-2019-25076) against the
# patched ovs-vswitchd on OVS's dummy datapath, with legitimate traffic
# flowing meanwhile:
#
#   tests/vswitchd/flood_test.sh OVS_PREFIX [MASKS]
#
# OVS_PREFIX is a patches/build-ovs.sh --plugin-default install (on OVS 4.0
# its --validate one: the same defaults, each lookup checked).  Four
# OpenFlow rules, each on one field (nw_src, nw_dst, tp_src, and an UDP rule
# for the legitimate traffic), as an ACL would have them.  OVS's classifier
# un-wildcards of each field only the prefix it needs to tell a packet from
# the rule (its prefix tries), so an attack packet that first differs from
# the rules at bit i of nw_src, j of nw_dst and k of tp_src gets a megaflow
# of its own mask: MASKS (2500 by default) such packets make MASKS subtables
# on the PMD thread that polls them.  Each is sent three times in a row, so
# that every subtable is hot for the JIT (dpcls-jit-hot-hits=2) and, as all
# of them have one mask map, moves to the one shared lookup at a ranking.
#
# Checked while the flood lasts and after it: every legitimate packet is
# forwarded; ovs-vswitchd's RSS grows less than 256 MiB and its mapped JIT
# code stays under 1 MiB (the flood's masks share a few mask maps, so their
# subtables share code); prio-set and subtable-show answer within 10 s;
# no compile runs on a PMD thread (jit-show's count); nothing crashes.
# Prints "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

prefix=${1:?usage: flood_test.sh OVS_PREFIX [MASKS]}
masks=${2:-2500}
here=$(cd "$(dirname "$0")" && pwd)

source "$here/lib.sh"
use_ovs_prefix "$prefix" vswitchd-flood

start_ovsdb
ovs-vsctl --no-wait set Open_vSwitch . other_config:pmd-cpu-mask=0x6 \
    other_config:pmd-rxq-assign=roundrobin other_config:dpcls-jit-hot-hits=2
ovs-vswitchd --enable-dummy --disable-system --disable-system-route --dummy-numa 0,0,0 \
    --detach --no-chdir --pidfile --log-file 2>"$work/ovs-vswitchd.stderr"
ovs-vsctl add-br br0 -- set bridge br0 datapath-type=dummy fail-mode=secure \
    other-config:hwaddr=aa:55:aa:55:00:00 \
    -- add-port br0 p1 -- set interface p1 type=dummy-pmd ofport_request=1 options:n_rxq=2 \
    -- add-port br0 p2 -- set interface p2 type=dummy-pmd ofport_request=2 \
    -- add-port br0 p4 -- set interface p4 type=dummy ofport_request=4
ovs-ofctl add-flows br0 - <<'FLOWS'
priority=100,in_port=1,tcp,nw_src=10.0.0.1,actions=output:4
priority=100,in_port=1,tcp,nw_dst=10.0.0.2,actions=output:4
priority=100,in_port=1,tcp,tp_src=1000,actions=output:4
priority=90,in_port=1,udp,tp_dst=53,actions=output:2
priority=0,actions=drop
FLOWS
pid=$(cat "$work/ovs-vswitchd.pid")
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }

legit='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.7.0.1,dst=10.8.0.1,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=53)'
# The attack packets, one line each: bit i of nw_src, j of nw_dst and k of
# tp_src flipped against the rules' values (10.0.0.1, 10.0.0.2, 1000).
attack=$work/attack.txt
python3 - "$masks" >"$attack" <<'PY'
import sys
n = int(sys.argv[1])
def ip(v):
    return ".".join(str((v >> s) & 255) for s in (24, 16, 8, 0))
for m in range(n):
    i, j, k = m % 32, (m // 32) % 32, (m // 1024) % 16
    src = 0x0a000001 ^ (0x80000000 >> i)
    dst = 0x0a000002 ^ (0x80000000 >> j)
    sport = 1000 ^ (0x8000 >> k)
    print("in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),"
          f"ipv4(src={ip(src)},dst={ip(dst)},proto=6,tos=0,ttl=64,frag=no),"
          f"tcp(src={sport},dst=4000)")
PY
check "the attack has $masks packets of distinct prefixes" test "$(sort -u "$attack" | wc -l)" -eq "$masks"

# Legitimate traffic into both of p1's queues (both PMD threads), in the
# background, counted: LEGIT_ROUNDS rounds of 2 x 8 packets.
legit_rounds=0
legit_loop() {
    local r
    for ((r = 0; r < $1; r++)); do
        ovs-appctl netdev-dummy/receive p1 --qid 0 $(printf "$legit %.0s" 1 2 3 4 5 6 7 8) >/dev/null
        ovs-appctl netdev-dummy/receive p1 --qid 1 $(printf "$legit %.0s" 1 2 3 4 5 6 7 8) >/dev/null
        sleep 0.05
    done
}
legit_loop 5
legit_rounds=5
check "legitimate traffic is forwarded before the flood" expect_p2 $((legit_rounds * 16))
rss_before=$(rss_kib)

# The flood: all attack packets into queue 0, 20 per call, each thrice.
# A dummy rx queue holds at most 100 packets and drops beyond, which no NIC
# queue of a real switch would mimic exactly: so each call waits until the
# PMD thread has taken the previous one (p1's rx counter, read live from the
# datapath), and no packet, attack or legitimate, is lost in the dummy
# device itself.
rx() {
    ovs-appctl dpctl/show -s | awk '/^  port [0-9]+: p1 / { getline; sub(/.*RX packets:/, ""); print $1 + 0; exit }'
}
legit_loop 60 &
legit_pid=$!
flood_start=$(date +%s.%N)
split -l 20 "$attack" "$work/chunk."
for chunk in "$work"/chunk.*; do
    mapfile -t pkts <"$chunk"
    before=$(rx)
    ovs-appctl netdev-dummy/receive p1 --qid 0 "${pkts[@]}" "${pkts[@]}" "${pkts[@]}" >/dev/null
    for ((w = 0; w < 500 && $(rx) < before + 3 * ${#pkts[@]}; w++)); do
        sleep 0.01
    done
    rm -f "$chunk"
done
flood_secs=$(echo "$(date +%s.%N) - $flood_start" | bc)
echo "# flood: $masks packets x 3 sent in ${flood_secs}s"

# While the flood's subtables are there: answers within 10 s.
t0=$(date +%s.%N)
show=$(timeout 10 ovs-appctl dpif-netdev/subtable-show --limit 5)
check "subtable-show answers during the flood (in $(echo "$(date +%s.%N) - $t0" | bc)s)" \
    test -n "$show"
# The fingerprint summary: "  (4,1): hits 120, subtables 1, lookup ...".
subtables=$(grep -E '^  \([0-9]+,[0-9]+\): hits' <<<"$show" | grep -oE 'subtables [0-9]+' |
    awk '{ s += $2 } END { print s + 0 }')
echo "# subtables on all threads: $subtables"
grep -E '^  \(' <<<"$show" | sed 's/^/#   /'
check "the flood made at least 2000 megaflow masks (subtables: $subtables)" test "$subtables" -ge 2000
# A ranking (about once a second) after their three hits moves the hot
# flood subtables onto the lookup they share.
sleep 2
subtable_show=$(ovs-appctl dpif-netdev/subtable-show --limit 0)
on_jit=$(grep -cE '^    \(.* lookup jit_avx2,' <<<"$subtable_show")
if ovs-appctl dpcls-plugin/tail-show >/dev/null 2>&1; then
    tail_lines=$(grep -E '^    from the [0-9]+th on: tail index tail_index' <<<"$subtable_show")
    echo "# subtable-show's tail index lines:"
    sed 's/^/#   /' <<<"$tail_lines"
    check "subtable-show says where the tail index serves the flooded port" test -n "$tail_lines"
    # The off switch, a bad value (fail closed) and back, during the flood:
    # off stops the index serving at once (subtable-show asks the index
    # where it serves, as dpcls_lookup() does); the log says why.
    tail_lines_now() {
        ovs-appctl dpif-netdev/subtable-show --limit 0 | grep -cE '^    from the [0-9]+th on: tail index' || true
    }
    ovs-vsctl set Open_vSwitch . other_config:dpcls-tail=false
    check "other_config:dpcls-tail=false: tail-show says OFF" \
        bash -c "ovs-appctl dpcls-plugin/tail-show | grep -q '^tail_index: OFF'"
    check "other_config:dpcls-tail=false: the index serves no port" test "$(tail_lines_now)" -eq 0
    ovs-vsctl remove Open_vSwitch . other_config dpcls-tail -- \
        set Open_vSwitch . other_config:dpcls-tail-min-subtables=lots
    check "a bad dpcls-tail-min-subtables turns the index off" \
        bash -c "ovs-appctl dpcls-plugin/tail-show | grep -q '^tail_index: OFF'"
    check "a bad dpcls-tail-min-subtables is logged with its key and value" \
        grep -q 'dpcls-tail-min-subtables="lots" is not a number from 1 to 65535; tail_index is OFF until it is fixed' \
        "$work/ovs-vswitchd.log"
    check "a bad dpcls-tail-min-subtables: the index serves no port" test "$(tail_lines_now)" -eq 0
    ovs-vsctl remove Open_vSwitch . other_config dpcls-tail-min-subtables
    check "the key removed: tail-show says on" \
        bash -c "ovs-appctl dpcls-plugin/tail-show | grep -q '^tail_index: on, head '"
    check "the key removed: the index serves the flooded port again" test "$(tail_lines_now)" -ge 1
fi
jit_show=$(ovs-appctl dpcls-plugin/jit-show)
echo "# jit-show with the flood's subtables on it:"
sed 's/^/#   /' <<<"$jit_show"
echo "# subtables on jit_avx2: $on_jit"
mapped=$(jit_field 'mapped bytes' "$jit_show")
check "mapped JIT code stays under 1 MiB (${mapped:-?} bytes)" test "${mapped:-0}" -lt $((1 << 20))
if grep -q '^jit_avx2: enabled' <<<"$jit_show"; then
    check "most flood subtables run the shared JIT code ($on_jit of $subtables)" \
        test "$on_jit" -ge $((masks / 2))
else
    echo "not checked: flood subtables on JIT code ($(ovs-appctl dpcls-plugin/jit-show | head -1))"
fi
# prio-set moves every subtable (the flood's too) off the JIT and back; the
# flood subtables, no longer hit, then stay on specialized/generic.  OVS 4.0
# has no prio-set: its series' lookup-provider-set turns jit_avx2 off and on.
if grep -q "dpif-netdev/lookup-provider-set" <<<"$(ovs-appctl list-commands)"; then
    prio_off=(dpif-netdev/lookup-provider-set jit_avx2 0)
    prio_on=(dpif-netdev/lookup-provider-set jit_avx2 4)
else
    prio_off=(dpif-netdev/subtable-lookup-prio-set generic 200)
    prio_on=(dpif-netdev/subtable-lookup-prio-set generic 1)
fi
check "prio-set (${prio_off[*]}) answers during the flood" \
    timeout 10 ovs-appctl "${prio_off[@]}"
check "prio-set back (${prio_on[*]}) answers during the flood" \
    timeout 10 ovs-appctl "${prio_on[@]}"
wait "$legit_pid"
legit_rounds=$((legit_rounds + 60))
expect_tx_seconds=20
check "every legitimate packet was forwarded during the flood" expect_p2 $((legit_rounds * 16))

jit_show=$(ovs-appctl dpcls-plugin/jit-show)
echo "# jit-show after the flood and the prio-set round trip:"
sed 's/^/#   /' <<<"$jit_show"
# The tail index (tail_index, 3.x series patch 9): the flood's subtables past
# the first ones are answered by it, not probed one by one.
if tail_show=$(ovs-appctl dpcls-plugin/tail-show 2>/dev/null); then
    echo "# tail-show after the flood:"
    sed 's/^/#   /' <<<"$tail_show"
    check "the tail index matched keys of the flood's subtables" \
        grep -Eq 'matched [1-9]' <<<"$tail_show"
    check "tail-show has a line per index: its subtables, memory, where it serves from, candidates a key" \
        grep -Eq '^  index 1: [0-9]+ subtables in [0-9]+ families \([0-9]+ not indexed\), [0-9.]+ KiB; .*candidates a key [0-9.]+ \(max [0-9]+\)' <<<"$tail_show"
else
    echo "# not checked: the tail index (this build has no dpcls-plugin/tail-show)"
fi
rss_after=$(rss_kib)
echo "# ovs-vswitchd RSS: $rss_before KiB before the flood, $rss_after KiB after"
check "RSS grew less than 256 MiB ($(((rss_after - rss_before) / 1024)) MiB)" \
    test $((rss_after - rss_before)) -lt $((256 * 1024))
check "no compile ran on a PMD thread (jit-show's count)" \
    test "$(jit_field 'compiles not on the compiler thread' "$jit_show")" = 0

legit_loop 5
legit_rounds=$((legit_rounds + 5))
check "legitimate traffic is forwarded after the flood" expect_p2 $((legit_rounds * 16))
check "ovs-vswitchd is still running" kill -0 "$pid"
check "no crash or assertion in the log" \
    bash -c "! grep -E 'EMER|Assertion|ERR\|' '$work/ovs-vswitchd.log'"

echo "flood: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
