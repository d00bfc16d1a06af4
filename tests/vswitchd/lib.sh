# Sourced by the ovs-vswitchd test scripts: TAP-style results and the
# private daemons' lifecycle.  $work is the run directory (also
# OVS_RUNDIR/LOGDIR/DBDIR; use_ovs_prefix makes one); keeps counts in
# $passed and $failed.
source "$(dirname "${BASH_SOURCE[0]}")/../vlog.sh"
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/    /'; }
check() {  # check NAME COMMAND...: passes when the command succeeds; returns its status
    local name=$1
    shift
    local out
    if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; return 1; fi
}

# log_says PATTERN: succeeds once ovs-vswitchd's log ($work's) has a line
# matching PATTERN (grep -E), waiting up to 10 s; else says what is missing.
# A setting's log line comes from the reconfiguration that follows
# ovs-vsctl, which on a slow (emulated) CPU may end after ovs-vsctl does.
log_says() {
    local i
    for ((i = 0; i < 100; i++)); do
        grep -Eq "$1" "$work/ovs-vswitchd.log" && return 0
        sleep 0.1
    done
    echo "not in the log: $1"
    return 1
}

# use_ovs_prefix PREFIX NAME: runs OVS from the install at PREFIX (its bin
# and sbin first in PATH, $prefix made absolute), in a fresh private run
# directory $work (/tmp/NAME.XXXXXX) for the daemons' sockets, logs and
# database, removed at exit unless something failed.
use_ovs_prefix() {
    prefix=$(cd "$1" && pwd)
    export PATH="$prefix/bin:$prefix/sbin:$PATH"
    work=$(mktemp -d "/tmp/$2.XXXXXX")
    export OVS_RUNDIR=$work OVS_LOGDIR=$work OVS_DBDIR=$work OVS_SYSCONFDIR=$work
    export OVS_PKGDATADIR=$prefix/share/openvswitch
    trap cleanup EXIT
}

# jit_field NAME [REPORT]: the first word of the value on jit-show's
# "  NAME: value" line (each name is unique in the report), from REPORT, or
# from a fresh `ovs-appctl dpcls-plugin/jit-show` when none is given.
jit_field() {
    local report
    report=${2-$(ovs-appctl dpcls-plugin/jit-show)}
    sed -n "s/^  $1: \([^ ]*\).*/\1/p" <<<"$report" | head -1
}

# Stops the daemons; keeps $work when something failed, for its logs.
cleanup() {
    for d in ovs-vswitchd ovsdb-server; do
        [ -f "$work/$d.pid" ] && kill "$(cat "$work/$d.pid")" 2>/dev/null
    done
    sleep 0.5
    if [ "$failed" -gt 0 ]; then
        echo "logs kept in $work"
    else
        rm -rf "$work"
    fi
}

# A private ovsdb-server on $work/db.sock with a fresh database, EMC off (so
# that repeated packets go through dpcls) and megaflows that stay a minute
# without packets (so that a slow, emulated run keeps its subtables).
start_ovsdb() {
    ovsdb-tool create "$work/conf.db" "$OVS_PKGDATADIR/vswitch.ovsschema" >/dev/null
    ovsdb-server "$work/conf.db" --detach --no-chdir --pidfile --log-file \
        --remote=punix:"$work/db.sock" 2>"$work/ovsdb-server.stderr"
    ovs-vsctl --no-wait init
    ovs-vsctl --no-wait set Open_vSwitch . other_config:emc-insert-inv-prob=0 \
        other_config:max-idle=60000
}

tx() { ovs-vsctl get interface "$1" statistics:tx_packets; }
# expect_tx P2 P4: waits for the tx counters of p2 and p4 to reach them, up
# to $expect_tx_seconds (5 by default; an emulated switch needs longer).
expect_tx() {
    local i
    for ((i = 0; i < ${expect_tx_seconds:-5} * 10; i++)); do
        [ "$(tx p2)" -eq "$1" ] && [ "$(tx p4)" -eq "$2" ] && return 0
        sleep 0.1
    done
    echo "p2 tx $(tx p2) (want $1), p4 tx $(tx p4) (want $2)"
    return 1
}
# expect_p2 N: waits for p2's tx counter to reach N (as expect_tx).
expect_p2() {
    local i
    for ((i = 0; i < ${expect_tx_seconds:-5} * 10; i++)); do
        [ "$(tx p2)" -eq "$1" ] && return 0
        sleep 0.1
    done
    echo "p2 tx $(tx p2) (want $1)"
    return 1
}

# cpu_lacks FEATURE...: of the features tests/cpu_has.c names, those missing
# from " $cpu " (its output), as "AVX2, BMI2"; empty when none is.
cpu_lacks() {
    local f missing=()
    for f in "$@"; do
        [[ $cpu == *" $f "* ]] || missing+=("${f^^}")
    done
    local IFS=,
    echo "${missing[*]}" | sed 's/,/, /g; s/SSE42/SSE4.2/'
}

# start_udp_switch [OTHER_CONFIG...]: after start_ovsdb, a private
# ovs-vswitchd with two PMD threads (cores 1 and 2), jit_avx2 hot after 2
# hits, and br0: p1 (dummy-pmd, two rx queues) in, p2 (dummy-pmd) and p4
# (dummy) out, with two subtables for UDP packets of one miniflow map: by
# tp_dst (53 to p2) and by nw_dst/16 (10.1/16 to p4).  OTHER_CONFIG:
# further key=value settings of the Open_vSwitch table.
start_udp_switch() {
    local extra=("${@/#/other_config:}")
    ovs-vsctl --no-wait set Open_vSwitch . other_config:pmd-cpu-mask=0x6 \
        other_config:pmd-rxq-assign=roundrobin other_config:dpcls-jit-hot-hits=2 "${extra[@]}"
    start_vswitchd
    ovs-vsctl add-br br0 -- set bridge br0 datapath-type=dummy fail-mode=secure \
        -- add-port br0 p1 -- set interface p1 type=dummy-pmd ofport_request=1 options:n_rxq=2 \
        -- add-port br0 p2 -- set interface p2 type=dummy-pmd ofport_request=2 \
        -- add-port br0 p4 -- set interface p4 type=dummy ofport_request=4
    add_udp_flows
}

# add_udp_flows: start_udp_switch's OpenFlow rules (ovs-vswitchd keeps
# them in memory only: again after a restart).
add_udp_flows() {
    ovs-ofctl add-flows br0 - <<'FLOWS'
priority=200,in_port=1,udp,tp_dst=53,actions=output:2
priority=100,in_port=1,ip,nw_dst=10.1.0.0/16,actions=output:4
priority=0,actions=drop
FLOWS
}

# restart_udp_switch: after stop_switch, start_udp_switch's switch again,
# from the database: waits (up to 5 s) until a PMD thread polls p1, adds
# the OpenFlow rules again (ovs-vswitchd kept them in memory only) and
# counts p2's and p4's packets from 0, as the new switch does.
restart_udp_switch() {
    local i
    start_vswitchd
    for ((i = 0; i < 50; i++)); do
        grep -q 'port: p1' <<<"$(ovs-appctl dpif-netdev/pmd-rxq-show)" && break
        sleep 0.1
    done
    add_udp_flows
    p2=0
    p4=0
}

# start_vswitchd: ovs-vswitchd on the dummy datapath (three NUMA-0 cores),
# its log in $work; again after stop_switch, it finds its bridges in the
# database.
start_vswitchd() {
    "$prefix/sbin/ovs-vswitchd" --enable-dummy --disable-system --disable-system-route \
        --dummy-numa 0,0,0 --detach --no-chdir --pidfile --log-file 2>>"$work/ovs-vswitchd.stderr"
}

# send_udp ROUNDS: per round and rx queue of p1, 2 packets to UDP port 53
# (out p2) and 1 to 10.1.2.3 (out p4); $p2 and $p4 count what is expected.
udp53='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.5.5.5,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=53)'
net1='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.1.2.3,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=4000)'
p2=0
p4=0
send_udp() {
    local round qid
    for ((round = 0; round < $1; round++)); do
        for qid in 0 1; do
            ovs-appctl netdev-dummy/receive p1 --qid $qid "$udp53" "$udp53" "$net1" >/dev/null
        done
        p2=$((p2 + 4))
        p4=$((p4 + 2))
    done
}

# plugin_prio NAME: the plugin's default priority of lookup NAME, from the
# table both the plugin and the library are built from
# (classifier/lookup_table.h).
plugin_prio() {
    sed -n "s/^ *X($1, *-\{0,1\}[0-9]*, *\(-\{0,1\}[0-9]*\)).*/\1/p" \
        "$(dirname "${BASH_SOURCE[0]}")/../../classifier/lookup_table.h"
}

# stop_switch: ovs-vswitchd exits the graceful way (its exit hooks log),
# waited for up to 5 s.
stop_switch() {
    local i
    ovs-appctl exit >/dev/null 2>&1
    for ((i = 0; i < 50; i++)); do
        [ -e "$work/ovs-vswitchd.pid" ] || break
        sleep 0.1
    done
}

# read_cpu: builds tests/cpu_has.c and sets $cpu (its features, space
# separated and padded) and $jit_lacks (what jit_avx2 needs and the CPU
# lacks; empty when nothing), and prints the CPU line.
read_cpu() {
    cc -O2 -Wall -Werror -I"$here/.." -o "$work/cpu_has" "$here/../cpu_has.c" || exit 1
    cpu=" $("$work/cpu_has") "
    jit_lacks=$(cpu_lacks avx2 bmi1 bmi2 popcnt sse42)
    echo "# CPU:$cpu"
}
