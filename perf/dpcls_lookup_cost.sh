#!/usr/bin/env bash
# What OVS's own dpcls_lookup() costs, in instructions (callgrind), in two or
# more builds of ovs-vswitchd side by side: e.g. stock Open vSwitch and the
# same release with the series of patches/ applied and no plugin linked
# (what the series costs a switch that does not use it):
#
#   perf/dpcls_lookup_cost.sh LABEL=OVS_BUILD_TREE [LABEL=OVS_BUILD_TREE...]
#
# OVS_BUILD_TREE is a configured and built Open vSwitch source tree (it has
# vswitchd/ovs-vswitchd, ovsdb/ovsdb-server, utilities/ovs-vsctl...).  For
# each, and for two tables, it starts that ovs-vswitchd under
# valgrind --tool=callgrind --toggle-collect=dpcls_lookup (instructions are
# counted inside dpcls_lookup() and what it calls, nowhere else) on the
# dummy datapath, a port polled by the main thread, EMC off (every packet
# reaches dpcls), installs the megaflows with a first pass of the traffic,
# zeroes the counts, sends the traffic again in batches of 32 packets, and
# prints the instructions per packet:
#   1 subtable:   one rule on in_port, ip and nw_src (one megaflow mask;
#                 a rule on in_port and ip alone would make megaflows
#                 that OVS's simple match serves without dpcls);
#   13 subtables: 221 nw_dst prefix rules, 17 of each length /20 ... /32
#                 (perf/p2p scenario (b)), packets spread evenly over them,
#                 so that a packet visits ~7 subtables.
# Callgrind counts are exact for a binary and its input: no repetitions
# are needed, and the machine's load does not matter.  With
# DPCLS_LOOKUP_COST_OUT=DIR the callgrind files are kept there
# (callgrind.LABEL.TABLE), for callgrind_annotate.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
command -v valgrind >/dev/null || { echo "dpcls_lookup_cost.sh: needs valgrind" >&2; exit 1; }
work=$(mktemp -d /tmp/dpcls-lookup-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The 221 prefix rules of perf/p2p scenario (b): (network, length).
prefix_rules() {
    python3 -c '
import sys; sys.path.insert(0, "perf/p2p")
import make_pcaps
for net, length in make_pcaps.prefix_rules():
    print(".".join(str(net >> s & 255) for s in (24, 16, 8, 0)), length, net)'
}
packet() {  # packet DST SRC_PORT
    echo "in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=$1,proto=17,tos=0,ttl=64,frag=no),udp(src=$2,dst=5000)"
}

# measure LABEL TREE TABLE: prints "instructions packets"
# Runs in a subshell of its own (the caller's $(...)), whose exit, normal
# or by a signal, stops the two daemons it started.
measure() {
    local label=$1 tree=$2 table=$3 run i b dst
    db_pid="" vs_pid=""  # not local: the EXIT trap runs after the function returned
    trap 'kill $db_pid $vs_pid 2>/dev/null || true' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    run=$(mktemp -d "$work/run.XXXXXX")
    export OVS_RUNDIR=$run OVS_LOGDIR=$run OVS_DBDIR=$run OVS_SYSCONFDIR=$run
    local vsctl="$tree/utilities/ovs-vsctl" appctl="$tree/utilities/ovs-appctl" ofctl="$tree/utilities/ovs-ofctl"
    "$tree/ovsdb/ovsdb-tool" create "$run/conf.db" "$tree/vswitchd/vswitch.ovsschema" >/dev/null
    # (Its output elsewhere: the caller reads this function's output to its
    # end, which a daemon holding it would never give.)
    "$tree/ovsdb/ovsdb-server" "$run/conf.db" --detach --no-chdir --pidfile --log-file \
        --remote=punix:"$run/db.sock" >/dev/null 2>&1
    db_pid=$(cat "$run/ovsdb-server.pid")
    "$vsctl" --no-wait init
    "$vsctl" --no-wait set Open_vSwitch . other_config:emc-insert-inv-prob=0 other_config:max-idle=600000
    valgrind --tool=callgrind --toggle-collect=dpcls_lookup --callgrind-out-file="$run/callgrind.out" \
        "$tree/vswitchd/ovs-vswitchd" --enable-dummy --disable-system --disable-system-route \
        --no-chdir --pidfile --log-file >"$run/valgrind.log" 2>&1 &
    vs_pid=$!
    for ((i = 0; i < 300; i++)); do
        [ -S "$run/ovs-vswitchd.$(cat "$run/ovs-vswitchd.pid" 2>/dev/null).ctl" ] && break
        sleep 0.2
    done
    "$vsctl" add-br br0 -- set bridge br0 datapath-type=dummy fail-mode=secure \
        -- add-port br0 p1 -- set interface p1 type=dummy ofport_request=1 \
        -- add-port br0 p2 -- set interface p2 type=dummy ofport_request=2
    # A rule that matches more than in_port, so that OVS's simple match
    # (in_port-only megaflows, which skip dpcls) stays off for the port.
    {
        echo "priority=40000,in_port=1,arp,arp_op=2,actions=drop"
        if [ "$table" = 1 ]; then
            echo "priority=10,in_port=1,ip,nw_src=10.0.0.1,actions=output:2"
        else
            prefix_rules | while read -r dotted length _; do
                echo "priority=10,in_port=1,ip,nw_dst=$dotted/$length,actions=output:2"
            done
            echo "priority=1,in_port=1,ip,actions=output:2"
        fi
    } >"$run/flows"
    "$ofctl" add-flows br0 "$run/flows"
    # The traffic: 32 * 14 packets, destinations spread over the rules.
    mapfile -t rules < <(prefix_rules)
    local pkts=()
    for ((i = 0; i < 32 * 14; i++)); do
        read -r _ length net <<<"${rules[i % ${#rules[@]}]}"
        dst=$((net + (i / ${#rules[@]} * 2654435761) % (1 << (32 - length))))
        pkts+=("$(packet "$((dst >> 24 & 255)).$((dst >> 16 & 255)).$((dst >> 8 & 255)).$((dst & 255))" $((1024 + i)))")
    done
    tx() { "$ofctl" dump-ports br0 2 | sed -n 's/.*tx pkts=\([0-9]*\).*/\1/p'; }
    send() {  # one batch at a time, each forwarded before the next (under
        # valgrind the switch is slow, and netdev-dummy's queue is short)
        local want
        for ((b = 0; b < ${#pkts[@]}; b += 32)); do
            want=$(($(tx) + 32))
            "$appctl" netdev-dummy/receive p1 "${pkts[@]:b:32}" >/dev/null
            for ((i = 0; i < 100 && $(tx) < want; i++)); do sleep 0.05; done
        done
    }
    send  # installs the megaflows (upcalls)
    sleep 1
    local tx0 ir
    tx0=$(tx)
    callgrind_control -z "$(cat "$run/ovs-vswitchd.pid")" >/dev/null
    send
    send
    callgrind_control -d "$(cat "$run/ovs-vswitchd.pid")" >/dev/null
    ir=$(cat "$run"/callgrind.out* | awk '/^summary:/ { s += $2 } END { print s + 0 }')
    if [ -n "${DPCLS_LOOKUP_COST_OUT:-}" ]; then
        mkdir -p "$DPCLS_LOOKUP_COST_OUT"
        cat "$run"/callgrind.out* >"$DPCLS_LOOKUP_COST_OUT/callgrind.$label.$table"
    fi
    # Per packet that went through dpcls (every packet hits a rule, so is
    # forwarded to p2).
    echo "$ir $(($(tx) - tx0))"
    "$appctl" exit >/dev/null 2>&1 || true
    kill "$db_pid" 2>/dev/null || true
    sleep 1
}

printf '%-12s %-14s %14s %10s %12s\n' build table instructions packets "per packet"
for arg in "$@"; do
    label=${arg%%=*}
    tree=$(cd "${arg#*=}" && pwd)
    for table in 1 13; do
        # measure runs in a subshell: waited for here (to its end, its
        # daemons stopped) before the next starts or the EXIT trap removes
        # its folder.  (Read from a process substitution, the last one
        # outlived the script and left its ovsdb-server running.)
        result=$(measure "$label" "$tree" "$table")
        read -r ir n <<<"$result"
        printf '%-12s %-14s %14d %10d %12.1f\n' "$label" "$table subtables" "$ir" "$n" \
            "$(echo "$ir / $n" | bc -l)"
    done
done
