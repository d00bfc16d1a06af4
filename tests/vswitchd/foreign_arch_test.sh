#!/usr/bin/env bash
# The patched ovs-vswitchd of another architecture (cross-built), run under
# qemu-user on OVS's dummy datapath:
#
#   tests/vswitchd/foreign_arch_test.sh FOREIGN_PREFIX NATIVE_PREFIX
#
# FOREIGN_PREFIX is a `patches/build-ovs.sh --host aarch64-linux-gnu
# --plugin-default` install, NATIVE_PREFIX a native one.  Only
# ovs-vswitchd runs emulated (qemu-HOST -L /usr/HOST): the machine has no
# binfmt_misc, so the foreign ovsdb-server, ovs-vsctl and ovs-appctl cannot
# be started by name, and OVS's testsuite (which does exactly that) cannot
# run; the native tools speak the same protocols over the same sockets.
# Checks that the plugin's lookups are registered, that jit_avx2 (not in
# this build) declines and says so in OVS's log, that packets are forwarded
# through specialized/runtime, and that prio-set switches to OVS's generic
# and back without losing a packet.  Prints "N passed, N failed".
set -uo pipefail

foreign=$(cd "${1:?usage: foreign_arch_test.sh FOREIGN_PREFIX NATIVE_PREFIX}" && pwd)
native=$(cd "${2:?usage: foreign_arch_test.sh FOREIGN_PREFIX NATIVE_PREFIX}" && pwd)
host=$(sed -n 's/^host=//p' "$foreign/build-info" 2>/dev/null)
if [ -z "$host" ] || [ "$host" = "$(gcc -dumpmachine)" ]; then
    echo "foreign_arch_test.sh: $foreign is not a cross-built install (no host= in build-info)" >&2
    exit 2
fi
if ! "$native/bin/ovs-vsctl" --version >/dev/null 2>&1; then
    echo "foreign_arch_test.sh: $native/bin/ovs-vsctl does not run here: not a native install" >&2
    exit 2
fi
arch=${host%%-*}
emulator=(qemu-"$arch" -L /usr/"$host")
export PATH="$native/bin:$native/sbin:$PATH"
work=$(mktemp -d /tmp/foreign-arch-test.XXXXXX)
export OVS_RUNDIR=$work OVS_LOGDIR=$work OVS_DBDIR=$work OVS_SYSCONFDIR=$work
export OVS_PKGDATADIR=$native/share/openvswitch

source "$(dirname "$0")/lib.sh"
trap cleanup EXIT

check "ovs-vswitchd is built for $host" \
    bash -c "readelf -h '$foreign/sbin/ovs-vswitchd' | grep -q 'Machine: *AArch64'"
echo "# $("${emulator[@]}" "$foreign/sbin/ovs-vswitchd" --version | head -1) under ${emulator[*]}"

start_ovsdb
# ovs-vswitchd --detach forks; qemu-user follows the fork.
"${emulator[@]}" "$foreign/sbin/ovs-vswitchd" --enable-dummy --disable-system \
    --disable-system-route --dummy-numa 0,0 --detach --no-chdir --pidfile --log-file \
    2>"$work/ovs-vswitchd.stderr"
ovs-vsctl --timeout=60 add-br br0 -- set bridge br0 datapath-type=dummy fail-mode=secure \
    other-config:hwaddr=aa:55:aa:55:00:00 \
    -- add-port br0 p1 -- set interface p1 type=dummy-pmd ofport_request=1 \
    -- add-port br0 p2 -- set interface p2 type=dummy-pmd ofport_request=2 \
    -- add-port br0 p4 -- set interface p4 type=dummy ofport_request=4
ovs-ofctl add-flows br0 - <<'FLOWS'
priority=200,in_port=1,udp,tp_dst=53,actions=output:2
priority=100,in_port=1,ip,nw_dst=10.1.0.0/16,actions=output:2
priority=100,in_port=1,ip,nw_dst=10.2.0.0/16,actions=output:4
priority=0,actions=drop
FLOWS

pkt() {  # pkt NW_DST UDP_DST
    echo "in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=$1,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=$2)"
}
send() {  # send ROUNDS: per round p2 += 2, p4 += 1
    for ((r = 0; r < $1; r++)); do
        ovs-appctl netdev-dummy/receive p1 "$(pkt 10.5.5.5 53)" "$(pkt 10.1.2.3 4000)" \
            "$(pkt 10.2.2.3 4000)" "$(pkt 10.3.3.3 4000)" >/dev/null
    done
}
expect_tx_seconds=20  # the switch runs emulated

send 10
check "forwarding with the plugin's lookups: every packet where its rule sends it" expect_tx 20 10
info=$(ovs-appctl dpif-netdev/subtable-lookup-info-get)
for name in jit_avx2 specialized runtime; do
    check "info-get lists $name at priority $(plugin_prio $name)" \
        grep -Eq "^  $name.*Priority: $(plugin_prio $name)\)" <<<"$info"
done
# Ranking intervals pass (about one a second) while packets arrive: a
# subtable that became hot would be offered to jit_avx2.
for ((i = 0; i < 5; i++)); do send 1; sleep 0.5; done
show=$(ovs-appctl dpif-netdev/subtable-show)
check "subtables run the portable lookups (specialized, runtime), none jit_avx2" \
    bash -c "grep -E '^    \(' <<<'$show' | grep -Eq 'lookup (specialized|runtime)' &&
             ! grep -q 'lookup jit_avx2' <<<'$show'"
# Forwarding alone would not show that the lookups find rules: a dpcls miss
# goes up to ofproto, which forwards the packet too.  Hits counted on the
# plugin's lookups do (they hash as the aarch64 OVS does).
hits=$(sed -nE 's/^    \(.*lookup (specialized|runtime), rules [0-9]+, hits ([0-9]+).*/\2/p' <<<"$show" |
    awk '{ n += $1 } END { print n + 0 }')
check "the plugin's lookups find rules (${hits:-0} hits)" test "${hits:-0}" -gt 0
check "the log says jit_avx2 is not in this build" \
    grep -q "jit_avx2 declines every subtable: this plugin was built without the JIT" \
    "$work/ovs-vswitchd.log"
p2=$((20 + 10)) p4=$((10 + 5))
check "forwarding after the ranking intervals" expect_tx $p2 $p4

for impl in generic specialized; do
    reply=$(ovs-appctl dpif-netdev/subtable-lookup-prio-set "$impl" 200 2>&1)
    check "prio-set $impl 200 is accepted" grep -q '^Lookup priority change affected' <<<"$reply"
    send 5
    p2=$((p2 + 10)) p4=$((p4 + 5))
    check "forwarding on $impl: nothing lost, nothing misrouted" expect_tx $p2 $p4
    show=$(ovs-appctl dpif-netdev/subtable-show)
    if [ "$impl" = generic ]; then want='generic'; else want='(specialized|runtime)'; fi
    check "after prio-set $impl every subtable runs $want" \
        bash -c "grep -Eq '^    \(' <<<'$show' && ! grep -E '^    \(' <<<'$show' | grep -Evq 'lookup $want,'"
    ovs-appctl dpif-netdev/subtable-lookup-prio-set "$impl" \
        "$([ "$impl" = generic ] && echo 1 || echo 3)" >/dev/null
done
check "no ERR or EMER lines in ovs-vswitchd's log" \
    bash -c "! grep -E '\|(ERR|EMER)\|' '$work/ovs-vswitchd.log'"

echo "foreign-arch ($host): $passed passed, $failed failed"
[ "$failed" -eq 0 ]
