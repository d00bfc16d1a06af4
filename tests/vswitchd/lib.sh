# Sourced by the ovs-vswitchd test scripts: TAP-style results and the
# private daemons' lifecycle.  $work is the run directory (also
# OVS_RUNDIR/LOGDIR/DBDIR; use_ovs_prefix makes one); keeps counts in
# $passed and $failed.
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; [ $# -gt 1 ] && printf '%s\n' "$2" | sed 's/^/    /'; }
check() {  # check NAME COMMAND...: passes when the command succeeds
    local name=$1
    shift
    local out
    if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$out"; fi
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
