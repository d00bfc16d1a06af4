#!/usr/bin/env bash
# The patched ovs-vswitchd, end to end, on OVS's dummy datapath:
#
#   tests/vswitchd/vswitchd_test.sh OVS_PREFIX
#
# OVS_PREFIX is a patches/build-ovs.sh --plugin-default install.  Starts a
# private ovsdb-server and ovs-vswitchd (netdev-dummy ports: two polled by a
# PMD thread, one by the main thread), adds OpenFlow rules that create
# megaflows of several masks, injects packets with netdev-dummy/receive and
# checks where they went; then switches lookup implementations with
# subtable-lookup-prio-set while packets keep flowing and checks the
# forwarding, subtable-lookup-info-get and subtable-show again; and feeds
# prio-set bad input.  OVS's own testsuite never sends traffic after a
# prio-set.  Prints "N passed, N failed"; exits non-zero on any failure.
#
# What to expect of the CPU-dependent lookups (avx512_gather, jit_avx2) is
# decided from the CPU ovs-vswitchd runs on, as tests/cpu_has.c reads it,
# and each such check says which case it took.  OVS_EMULATOR, when set
# (e.g. "qemu-x86_64 -cpu Nehalem"), runs ovs-vswitchd and cpu_has under
# that emulator, so that the other cases can be tried on any machine.
set -uo pipefail

prefix=${1:?usage: vswitchd_test.sh OVS_PREFIX}
prefix=$(cd "$prefix" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
emulator=${OVS_EMULATOR:-}
export PATH="$prefix/bin:$prefix/sbin:$PATH"
work=$(mktemp -d /tmp/vswitchd-test.XXXXXX)
export OVS_RUNDIR=$work OVS_LOGDIR=$work OVS_DBDIR=$work OVS_SYSCONFDIR=$work
export OVS_PKGDATADIR=$prefix/share/openvswitch

source "$here/lib.sh"
trap cleanup EXIT

# ---- the CPU, and what it lets each lookup do ----
# cpu_has is plain C, built here so that this script needs only the prefix.
cc -O2 -Wall -Werror -I"$here/.." -o "$work/cpu_has" "$here/../cpu_has.c" || exit 1
# shellcheck disable=SC2086 # the emulator is a command with its arguments
cpu=" $($emulator "$work/cpu_has") "
cpu_lacks() {  # cpu_lacks FEATURE...: prints "AVX2, BMI2" for those missing
    local f missing=()
    for f in "$@"; do
        [[ $cpu == *" $f "* ]] || missing+=("${f^^}")
    done
    local IFS=,
    echo "${missing[*]}" | sed 's/,/, /g; s/SSE42/SSE4.2/'
}
# The plugin is built for OVS's sse42 flavour: the JIT also needs SSE4.2.
jit_lacks=$(cpu_lacks avx2 bmi1 bmi2 popcnt sse42)
avx512_lacks=$(cpu_lacks avx512f bmi2)
echo "# CPU${emulator:+ (under $emulator)}:$cpu"

# ---- start ----
start_ovsdb
# The JIT compiles a subtable after 2 hits in a ranking interval (64 by
# default), so that a few injected packets make subtables hot.
# shellcheck disable=SC2086 # the emulator is a command with its arguments
OVSCLS_JIT_HOT_HITS=2 $emulator \
    "$prefix/sbin/ovs-vswitchd" --enable-dummy --disable-system --disable-system-route --dummy-numa 0,0 \
    --detach --no-chdir --pidfile --log-file 2>"$work/ovs-vswitchd.stderr"
ovs-vsctl add-br br0 -- set bridge br0 datapath-type=dummy fail-mode=secure \
    other-config:hwaddr=aa:55:aa:55:00:00 \
    -- add-port br0 p1 -- set interface p1 type=dummy-pmd ofport_request=1 \
    -- add-port br0 p2 -- set interface p2 type=dummy-pmd ofport_request=2 \
    -- add-port br0 p3 -- set interface p3 type=dummy ofport_request=3 \
    -- add-port br0 p4 -- set interface p4 type=dummy ofport_request=4

# Rules of several masks.  From p1 (PMD thread): IPv4 by nw_dst prefix, UDP by
# tp_dst, exact 5-tuple; from p3 (main thread): by eth_dst.
ovs-ofctl add-flows br0 - <<'FLOWS'
priority=300,in_port=1,tcp,nw_src=10.0.0.1,nw_dst=10.9.9.9,tp_src=1000,tp_dst=80,actions=output:4
priority=200,in_port=1,udp,tp_dst=53,actions=output:2
priority=100,in_port=1,ip,nw_dst=10.1.0.0/16,actions=output:2
priority=100,in_port=1,ip,nw_dst=10.2.0.0/16,actions=output:4
priority=50,in_port=3,dl_dst=52:54:00:00:00:02,actions=output:2
priority=0,actions=drop
FLOWS

pkt_udp53='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.5.5.5,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=53)'
pkt_net1='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.1.2.3,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=4000)'
pkt_net2='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.2.2.3,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=4000)'
pkt_5tuple='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.9.9.9,proto=6,tos=0,ttl=64,frag=no),tcp(src=1000,dst=80)'
pkt_miss='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.3.3.3,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=4000)'
pkt_p3='in_port(3),eth(src=52:54:00:00:00:09,dst=52:54:00:00:00:02),eth_type(0x0806),arp(sip=10.0.0.9,tip=10.0.0.2,op=1,sha=52:54:00:00:00:09,tha=00:00:00:00:00:00)'

# send ROUNDS: each round one packet of each kind; expected per round:
# p2 += 3 (udp53, net1, p3), p4 += 2 (net2, 5-tuple).
send() {
    for ((r = 0; r < $1; r++)); do
        ovs-appctl netdev-dummy/receive p1 "$pkt_udp53" "$pkt_net1" "$pkt_net2" \
            "$pkt_5tuple" "$pkt_miss" >/dev/null
        ovs-appctl netdev-dummy/receive p3 "$pkt_p3" >/dev/null
    done
}

# ---- forwarding with the plugin's lookups as defaults ----
send 10
check "forwarding, plugin defaults: every packet where its rule sends it" expect_tx 30 20

info=$(ovs-appctl dpif-netdev/subtable-lookup-info-get)
check "info-get lists jit_avx2 at priority 4" grep -q '  jit_avx2 (Use count: [0-9]*, Priority: 4)' <<<"$info"
check "info-get lists specialized at priority 3" grep -q '  specialized (Use count: [0-9]*, Priority: 3)' <<<"$info"
check "info-get lists runtime at priority 2" grep -q '  runtime (Use count: [0-9]*, Priority: 2)' <<<"$info"

show=$(ovs-appctl dpif-netdev/subtable-show)
check "subtable-show lists the PMD thread's subtables" grep -q '^pmd thread numa_id 0 core_id' <<<"$show"
check "subtable-show lists the main thread's subtables" grep -q '^main thread' <<<"$show"
check "subtable-show names the in_port" grep -Eq '^  in_port [0-9]+ \(p1\): [0-9]+ subtables' <<<"$show"
check "subtable-show names the lookup and the masked fields" \
    grep -Eq '^    \([0-9]+,[0-9]+\) lookup (jit_avx2|specialized|runtime), rules [0-9]+, hits [0-9]+: .*recirc_id' <<<"$show"
check "subtable-show shows the nw_dst prefix mask (OVS's field name ip_dst)" \
    grep -q 'ip_dst/255.255.0.0' <<<"$show"
check "subtable-show summarizes fingerprints" grep -Eq '^  \([0-9]+,[0-9]+\): hits [0-9]+, subtables [0-9]+, lookup ' <<<"$show"
check "rules of several masks made at least three subtables" \
    test "$(grep -cE '^    \(' <<<"$show")" -ge 3

# ---- tiering: a hot subtable moves to JIT code at a ranking interval ----
# Each thread ranks its subtables about once a second; each round of `send`
# hits every p1 subtable once or twice.
jit_seen=no
rounds=0
while [ "$rounds" -lt 30 ]; do
    send 1
    rounds=$((rounds + 1))
    if ovs-appctl dpif-netdev/subtable-show | grep -q 'lookup jit_avx2'; then
        jit_seen=yes
        break
    fi
    sleep 0.2
done
if [ -z "$jit_lacks" ]; then
    check "a hot subtable moves to jit_avx2 at a ranking interval (CPU has what jit_avx2 needs)" \
        test "$jit_seen" = yes
else
    check "no subtable moves to jit_avx2 (CPU lacks $jit_lacks: it declines)" test "$jit_seen" = no
    check "the log says why jit_avx2 declines (CPU lacks $jit_lacks)" \
        grep -q "jit_avx2 declines (cpu): the CPU lacks" "$work/ovs-vswitchd.log"
fi
p2=$((30 + 3 * rounds))
p4=$((20 + 2 * rounds))
check "forwarding after the ranking intervals: every packet where its rule sends it" \
    expect_tx $p2 $p4

# ---- switching implementations while packets flow ----
impls=$(sed -n 's/^  \([a-z0-9_]*\) (Use count.*/\1/p' <<<"$info" | grep -v autovalidator)
# Each implementation goes back to its start-up priority after its turn,
# so that a lookup that declines leaves the subtables on the plugin's
# defaults, not on whatever sorts first among equal priorities.
declare -A start_prio
while read -r name prio; do
    start_prio[$name]=$prio
done < <(sed -n 's/^  \([a-z0-9_]*\) (Use count: [0-9]*, Priority: \([0-9]*\)).*/\1 \2/p' <<<"$info")
send_in_background() {
    (for ((i = 0; i < 20; i++)); do send 1; done) &
    sender=$!
}
for impl in $impls generic specialized; do
    send_in_background
    reply=$(ovs-appctl dpif-netdev/subtable-lookup-prio-set "$impl" 200 2>&1)
    check "prio-set $impl 200 replies with what changed" \
        grep -Eq '^Lookup priority change affected [0-9]+ dpcls ports and [0-9]+ subtables.$' <<<"$reply"
    wait "$sender"
    p2=$((p2 + 60))
    p4=$((p4 + 40))
    check "forwarding while switching to $impl: nothing lost, nothing misrouted" expect_tx $p2 $p4
    show=$(ovs-appctl dpif-netdev/subtable-show)
    used=$(grep -E '^    \(' <<<"$show" | sed -E 's/.* lookup ([a-z0-9_]+),.*/\1/' | sort -u |
        paste -sd, - | sed 's/,/, /g')
    # The CPU decides what to expect.  A lookup the CPU cannot run declines,
    # and every subtable stays on the best other lookup whose probe accepts
    # it: with the plugin's defaults, jit_avx2 (hot subtables, if the CPU
    # can run it), specialized (listed fingerprints), runtime (any).
    if [ "$impl" = specialized ]; then
        want='lookup (specialized|runtime)'  # specialized declines unlisted fingerprints
        case="specialized where listed, runtime elsewhere"
    elif [ "$impl" = jit_avx2 ] && [ -z "$jit_lacks" ]; then
        # Subtables not hot (again) yet stay on the best other lookup.
        want='lookup (jit_avx2|generic|specialized|runtime)'
        case="CPU has what jit_avx2 needs; hot subtables on it"
        check "after prio-set jit_avx2 hot subtables use it" grep -q 'lookup jit_avx2' <<<"$show"
    elif [ "$impl" = jit_avx2 ]; then
        want='lookup (specialized|runtime)'
        case="CPU lacks $jit_lacks: subtables stay on $used"
    elif [ "$impl" = avx512_gather ] && [ -n "$avx512_lacks" ]; then
        if [ -z "$jit_lacks" ]; then
            want='lookup (jit_avx2|specialized|runtime)'
        else
            want='lookup (specialized|runtime)'
        fi
        case="CPU lacks $avx512_lacks: subtables stay on $used"
    else
        want="lookup $impl"
        case="every subtable on $impl"
        [ "$impl" = avx512_gather ] && case="CPU has AVX512F and BMI2: $case"
    fi
    check "after prio-set $impl every subtable of every thread is where it should be ($case)" \
        bash -c "[ -n \"\$1\" ] && ! grep -E '^    \(' <<<\"\$1\" | grep -Evq \"$want\"" _ "$show"
    ovs-appctl dpif-netdev/subtable-lookup-prio-set "$impl" "${start_prio[$impl]}" >/dev/null
done

# The main thread's subtables are re-probed too (OVS 3.1 skipped them).
ovs-appctl dpif-netdev/subtable-lookup-prio-set generic 250 >/dev/null
main_lookups=$(ovs-appctl dpif-netdev/subtable-show | sed -n '/^main thread/,/^pmd\|^fingerprints/p' | grep -E '^    \(')
check "prio-set re-probes the main thread's subtables" \
    bash -c "[ -n \"\$1\" ] && ! grep -vq 'lookup generic' <<<\"\$1\"" _ "$main_lookups"

# ---- bad input: a clear reply, and the switch keeps forwarding ----
err=$(ovs-appctl dpif-netdev/subtable-lookup-prio-set nosuch 5 2>&1)
check "prio-set of an unknown name says so and lists the names" \
    grep -q "subtable lookup function 'nosuch' not found; available: autovalidator generic" <<<"$err"
for bad in 256 -1 abc 3x ""; do
    err=$(ovs-appctl dpif-netdev/subtable-lookup-prio-set generic "$bad" 2>&1)
    check "prio-set priority '$bad' is refused" grep -q 'error converting priority, use integer in range 0-255' <<<"$err"
done
check "a refused priority changes nothing" \
    grep -q '  generic (Use count: [0-9]*, Priority: 250)' <<<"$(ovs-appctl dpif-netdev/subtable-lookup-info-get)"
err=$(ovs-appctl dpif-netdev/subtable-show -pmd x 2>&1)
check "subtable-show with a bad core id says so" grep -q 'invalid pmd core id' <<<"$err"
err=$(ovs-appctl dpif-netdev/subtable-show nosuchdp 2>&1)
check "subtable-show with an unknown datapath says so" grep -q 'please specify an existing datapath' <<<"$err"
send 5
check "forwarding after bad input" expect_tx $((p2 + 15)) $((p4 + 10))
check "ovs-vswitchd is still running" kill -0 "$(cat "$work/ovs-vswitchd.pid")"
check "no lookup mismatch or crash in the log" \
    bash -c "! grep -E 'matches_good|EMER|Assertion|ERR\|' '$work/ovs-vswitchd.log'"

echo "vswitchd: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
