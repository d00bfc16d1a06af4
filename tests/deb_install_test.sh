#!/usr/bin/env bash
# The Debian packages (packages/build-deb.sh), installed, run and removed
# the Debian way, in a throw-away root of their Debian release:
#
#   tests/deb_install_test.sh [--release 12|13] DEBS_DIR          in a throw-away root (default)
#   tests/deb_install_test.sh [--release 12|13] --here DEBS_DIR   on the machine it runs on
#
#   --release 12|13   the packages' Debian release: 12 (bookworm, OVS
#                     3.1.0; the default) or 13 (trixie, OVS 3.5.0)
#
# By default the test runs itself (--here) in a copy of a cached root of
# the release (scripts/debian-root.sh SUITE --profile packages --throwaway: an
# overlay discarded at the end, its own PID, network, UTS and IPC
# namespaces, no CAP_SYS_MODULE), so that the machine's packages, files
# and services are never touched, whatever they are: an operator may run it
# on the host that carries their switch.  Around that run it records what
# the root could still reach on the machine (the OVS packages' dpkg states,
# the OVS paths with their contents, the openvswitch and bridge kernel
# modules, the OVS daemons) and fails if any of it changed.
#
# --here runs the test on the machine it is on, which it changes (packages
# installed and purged, a switch started): it refuses, changing nothing,
# when dpkg knows any openvswitch* or python3-openvswitch package in any
# state but "not installed" (an `rc` package's configuration would be
# reused and then purged), when any path the packages would own exists (a
# source install's /etc/openvswitch/conf.db, an unowned
# /usr/sbin/ovs-vswitchd: dpkg would overwrite them, the purge remove
# them), or when any OVS daemon of any origin runs.  It then:
# 1. Records the machine: every package's version and state, the manually
#    installed set, the ovs-vswitchd alternative, the files and folders the
#    packages own or make (/etc/openvswitch, /var/lib/openvswitch,
#    /var/log/openvswitch, ...: each with a hash of its listing and of its
#    files' contents), /usr/sbin/policy-rc.d, the openvswitch kernel
#    module, the packages' OVS daemons.
# 2. The operator's switch, four packages: openvswitch-switch,
#    openvswitch-switch-dpdk, openvswitch-common, python3-openvswitch (not
#    the ipsec, vtep, testcontroller, test, doc, source and pki packages:
#    they bring other daemons, e.g. strongswan, and nothing of the lookups).
#    Where the machine has no policy-rc.d, one refusing service starts is
#    added for the test and removed (there is no init here; the maintainer
#    scripts would otherwise start the init script).
#    a. Debian's own, from the machine's apt sources: starts the switch with
#       /usr/share/openvswitch/scripts/ovs-ctl (the init script's way;
#       --enable-dummy through --ovs-vswitchd-options), makes a bridge on
#       the dummy datapath (kept in the database), forwards, stops.
#    b. These packages over them (apt-get install ./...deb, SHA256SUMS
#       checked first, and the whole folder resolved by a simulated
#       apt-get install ./*.deb): an upgrade.  For each ovs-vswitchd of the packages
#       (openvswitch-switch's, then openvswitch-switch-dpdk's
#       ovs-vswitchd-dpdk, chosen with update-alternatives --set): starts it
#       with ovs-ctl, checks the version, that the bridge survived, the
#       plugin's registration lines in /var/log/openvswitch,
#       subtable-lookup-info-get, forwards packets through a PMD thread,
#       checks that the subtable moved to jit_avx2 (or, on a CPU without
#       what jit_avx2 needs, stayed on the plugin's specialized/runtime: the
#       CPU decides, and the check says which case), switches to generic with
#       prio-set and back, forwarding each time, and stops it.
#    c. Back to Debian's (apt-get install --allow-downgrades NAME=VERSION,
#       as the README says): none of the plugin's lookups, still forwards.
# 3. On every exit (the end, an error, Ctrl-C or TERM): stops the switch it
#    started, purges every package the test added (dependencies too),
#    removes what Debian's purge leaves (and says what) and the policy-rc.d
#    it added, and compares the machine with step 1: any difference is a
#    failure.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
passed=0
failed=0
# ok, not_ok, check, cpu_lacks, and expect_p2 (p2's tx counter, tx, reaches N
# in 5 s).
source "$here/vswitchd/lib.sh"
source "$here/counts.sh"       # summary_counts
ctl=/usr/share/openvswitch/scripts/ovs-ctl
wanted=(openvswitch-common openvswitch-switch openvswitch-switch-dpdk python3-openvswitch)

mode=root release=12
if [ "${1:-}" = --release ]; then
    release=${2:?--release needs 12 or 13}
    shift 2
fi
case "$release" in
    12) suite=bookworm ovs_version=3.1.0 ;;
    13) suite=trixie ovs_version=3.5.0 ;;
    *) echo "deb_install_test.sh: --release takes 12 or 13, not '$release'"; exit 2 ;;
esac
[ "${1:-}" = --here ] && { mode=here; shift; }
debs=${1:?usage: deb_install_test.sh [--here] DEBS_DIR}
debs=$(cd "$debs" && pwd)
[ "$(id -u)" = 0 ] || { echo "deb_install_test.sh: needs root (apt-get install)"; exit 1; }

# ovs_daemons: every OVS daemon that runs, of any origin, "PID EXE".
ovs_daemons() {
    local pid exe
    for pid in $(pgrep -f 'ovs-vswitchd|ovsdb-server'); do
        exe=$(readlink "/proc/$pid/exe") || continue
        case "${exe##*/}" in ovs-vswitchd* | ovsdb-server*) echo "$pid $exe" ;; esac
    done
}
# ovs_states: the dpkg states of every OVS package dpkg knows, "STATE NAME VERSION".
ovs_states() {
    dpkg-query -W -f='${db:Status-Abbrev} ${binary:Package} ${Version}\n' 'openvswitch*' \
        python3-openvswitch 2>/dev/null | LC_ALL=C sort
}
# path_state PATH [shallow]: what PATH is, with a hash of a folder's
# listing and of its files' contents (not with shallow), or "absent".
path_state() {
    local p=$1
    if [ -L "$p" ]; then
        echo "$p link $(readlink "$p")"
    elif [ -d "$p" ] && [ -n "${2:-}" ]; then
        echo "$p $(stat -c '%F %a' "$p")"
    elif [ -d "$p" ]; then
        echo "$p $(stat -c '%F %a' "$p") listing $(find "$p" -mindepth 1 -printf '%P %y %m %s %l\n' 2>&1 |
            LC_ALL=C sort | sha256sum | cut -c1-16) contents $(find "$p" -type f -print0 2>/dev/null |
            LC_ALL=C sort -z | xargs -0r sha256sum 2>&1 | sha256sum | cut -c1-16)"
    elif [ -e "$p" ]; then
        echo "$p $(stat -c '%F %a' "$p") $(sha256sum <"$p" | cut -c1-16)"
    else
        echo "$p absent"
    fi
}
# OVS's own folders, and the paths the packages make at install time
# (ovs-vswitchd is an alternative: no package file).
ovs_dirs=(/etc/openvswitch /var/lib/openvswitch /var/log/openvswitch /run/openvswitch
    /var/run/openvswitch /usr/share/openvswitch /usr/lib/openvswitch-switch
    /usr/lib/openvswitch-switch-dpdk /usr/sbin/ovs-vswitchd /etc/alternatives/ovs-vswitchd
    /var/lib/dpkg/alternatives/ovs-vswitchd)

if [ "$mode" = root ]; then
    # ---- on the machine: the test in a throw-away root of the release ----
    work=$(mktemp -d /tmp/deb-install-test.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    cc -O2 -Wall -Werror -I"$here" -o "$work/cpu_has" "$here/cpu_has.c" || exit 1
    # What the root could reach on this machine, before and after.
    host_state() {
        echo "# OVS packages"
        ovs_states
        echo "# paths"
        # (a running switch's logs grow: that folder by its presence only)
        for p in "${ovs_dirs[@]}" /usr/sbin/ovsdb-server /usr/bin/ovs-vsctl \
            /usr/sbin/policy-rc.d; do
            path_state "$p" $([ "$p" = /var/log/openvswitch ] && echo shallow)
        done
        echo "# kernel modules"
        for m in openvswitch bridge; do
            [ -e "/sys/module/$m" ] && echo "$m loaded" || echo "$m not loaded"
        done
        echo "# OVS daemons"
        ovs_daemons
    }
    host_state >"$work/host-before"
    echo "# the machine's OVS packages, paths, modules and daemons recorded; the test runs in a throw-away Debian $release ($suite) root"
    rc=0
    "$top/scripts/debian-root.sh" "$suite" --profile packages --throwaway --bind "$debs" -- \
        env DEB_TEST_CPU="$("$work/cpu_has")" DEB_TEST_THROWAWAY_ROOT=1 \
        tests/deb_install_test.sh --release "$release" --here "$debs" | tee "$work/inner.log" || rc=$?
    inner_passed="" inner_failed=""
    read -r inner_passed inner_failed < <(summary_counts "$work/inner.log") || true
    passed=${inner_passed:-0}
    failed=${inner_failed:-0}
    [ "$rc" -eq 0 ] || [ "$failed" -gt 0 ] || not_ok "the test in the root ended with status $rc"
    [ -n "${inner_passed:-}" ] || not_ok "the test in the root printed no summary"
    host_state >"$work/host-after"
    if diff -u "$work/host-before" "$work/host-after" >"$work/host-diff"; then
        ok "this machine's OVS packages, paths, kernel modules and daemons are as they were"
    else
        not_ok "this machine's OVS packages, paths, kernel modules and daemons are as they were" \
            "$(cat "$work/host-diff")"
    fi
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

# ---- --here: refuse a machine this test could not leave as it was ----
refusals=()
known=$(ovs_states | awk 'substr($1, 2, 1) != "n"')
[ -z "$known" ] || refusals+=("dpkg knows OVS packages (state, name, version): ${known//$'\n'/; }")
# The paths the packages would own: their files and links, and OVS's own
# folders (folders like /usr/bin are shared and not counted).
owned_by_packages=()
for p in "${wanted[@]}"; do
    f=$(ls "$debs/${p}_"*.deb 2>/dev/null | head -1)
    [ -n "$f" ] || continue
    while read -r path; do owned_by_packages+=("$path"); done < <(dpkg-deb --fsys-tarfile "$f" |
        tar -tv | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }')
done
present=()
for p in "${owned_by_packages[@]}" "${ovs_dirs[@]}"; do
    if [ -e "$p" ] || [ -L "$p" ]; then present+=("$p"); fi
done
[ ${#present[@]} -eq 0 ] || refusals+=("paths the packages would own exist: ${present[*]:0:8}$(
    [ ${#present[@]} -le 8 ] || echo " (and $((${#present[@]} - 8)) more)")")
[ -z "$(ovs_daemons)" ] || refusals+=("OVS daemons run: $(ovs_daemons | tr '\n' ' ')")
if [ ${#refusals[@]} -gt 0 ]; then
    echo "deb_install_test.sh --here: refused: this machine has Open vSwitch already, and the test"
    echo "  installs, runs and purges its own: it could not leave the machine as it was."
    printf '  - %s\n' "${refusals[@]}"
    echo "  Run it without --here: it then runs in a throw-away Debian $release root."
    exit 3
fi

# ---- 1. the machine before ----
work=$(mktemp -d /tmp/deb-install-test.XXXXXX)
owned_paths=("${ovs_dirs[@]}" /etc/default/openvswitch-switch /etc/init.d/openvswitch-switch
    /etc/logrotate.d/openvswitch-switch /usr/sbin/ovsdb-server
    /usr/bin/ovs-vsctl /usr/sbin/policy-rc.d)
snapshot() {  # snapshot FILE
    {
        echo "# packages"
        dpkg-query -W -f='${binary:Package} ${Version} ${db:Status-Abbrev}\n' | LC_ALL=C sort
        echo "# manually installed"
        apt-mark showmanual | LC_ALL=C sort
        echo "# paths"
        for p in "${owned_paths[@]}"; do path_state "$p"; done
        echo "# kernel module"
        [ -e /sys/module/openvswitch ] && echo "openvswitch loaded" || echo "openvswitch not loaded"
        echo "# daemons"
        [ -n "$(ovs_daemons)" ] && ovs_daemons || echo none
    } >"$1"
}
snapshot "$work/before"
echo "# machine recorded: $(dpkg-query -W -f='${db:Status-Abbrev}\n' | grep -c '^ii') packages installed"

# ---- 3. on every exit: stop, purge, compare (defined here, run by the trap) ----
policy_added=no
restore() {
    local how=$1 added
    trap - EXIT INT TERM
    [ "$how" = end ] || echo "# interrupted ($how): undoing the test's changes"
    if [ -n "$(ovs_daemons)" ]; then
        "$ctl" stop >/dev/null 2>&1 || true
        [ -z "$(ovs_daemons)" ] || not_ok "the switch the test started stopped" "$(ovs_daemons)"
    fi
    snapshot "$work/installed"
    # What the install added: installed now, absent or not installed before.
    added=$(awk 'FNR == 1 { f++ } /^# manually/ { skip = 1 } /^# packages/ { skip = 0; next }
        skip { next } f == 1 { if (substr($3, 2, 1) == "i") before[$1] = 1; next }
        substr($3, 2, 1) == "i" && !($1 in before) { print $1 }' "$work/before" "$work/installed")
    echo "# purging what the install added: $(wc -w <<<"$added") packages"
    # shellcheck disable=SC2086 # one package name per word
    if [ -z "$added" ]; then
        :
    elif DEBIAN_FRONTEND=noninteractive apt-get purge -y $added >"$work/apt-purge.log" 2>&1; then
        ok "apt-get purge of the $(wc -w <<<"$added") packages the install added"
    else
        not_ok "apt-get purge" "$(tail -15 "$work/apt-purge.log" 2>/dev/null)"
    fi
    [ "$policy_added" = yes ] && rm -f /usr/sbin/policy-rc.d
    # ovs-ctl start loads the openvswitch kernel module where the kernel has
    # loadable modules (in the throw-away root it cannot): unloaded again if it did.
    if grep -qxF "openvswitch not loaded" "$work/before" && [ -e /sys/module/openvswitch ]; then
        echo "# ovs-ctl loaded the openvswitch kernel module: rmmod openvswitch"
        rmmod openvswitch || echo "# rmmod openvswitch failed"
    fi
    # What Debian's purge leaves: its postrm removes /etc/openvswitch/conf.db,
    # but ovs-ctl keeps the database in /var/lib/openvswitch; and the folders.
    # Absent before (the test refuses otherwise), so the test's: said, then
    # removed, so that the comparison is with the machine before.
    for p in "${owned_paths[@]}"; do
        if grep -qxF "$p absent" "$work/before" && { [ -e "$p" ] || [ -L "$p" ]; }; then
            echo "# left by apt-get purge (Debian's packaging, not this test's): $p$([ -d "$p" ] &&
                echo " ($(ls -A "$p" | tr '\n' ' '))"); removed"
            rm -rf "$p"
        fi
    done
    snapshot "$work/after"
    if diff -u "$work/before" "$work/after" >"$work/diff"; then
        ok "the machine is as it was (packages and their states, manual marks, paths and their contents, alternatives, daemons)"
    else
        not_ok "the machine is as it was" "$(cat "$work/diff")"
    fi
    [ "$how" = end ] || not_ok "the test ran to its end" "interrupted: $how"
    echo "$passed passed, $failed failed"
    if [ "$failed" -gt 0 ]; then
        echo "logs kept in $work"
        exit 1
    fi
    rm -rf "$work"
    exit 0
}
trap 'restore "exit status $?"' EXIT
trap 'restore SIGINT' INT
trap 'restore SIGTERM' TERM

# ---- 2. the switch's pieces, then a. b. c. ----
if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy_added=yes
    printf '#!/bin/sh\n# deb_install_test.sh: no service starts during its install\nexit 101\n' \
        >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
fi
if [ -n "${DEB_TEST_CPU:-}" ]; then
    cpu=" $DEB_TEST_CPU "
else
    cc -O2 -Wall -Werror -I"$here" -o "$work/cpu_has" "$here/cpu_has.c" || exit 1
    cpu=" $("$work/cpu_has") "
fi
jit_lacks=$(cpu_lacks avx2 bmi1 bmi2 popcnt)
echo "# CPU:$cpu"

# apt_install NAME ARGS...: apt-get install; on the machine its downloads
# (the dependencies, Debian's packages) go to a folder of the test, not to
# the machine's package cache; the throw-away root has them downloaded.
archives=()
if [ -z "${DEB_TEST_THROWAWAY_ROOT:-}" ]; then
    mkdir -p "$work/archives/partial"
    archives=(-o Dir::Cache::Archives="$work/archives")
fi
apt_install() {
    local name=$1 log=$work/apt-$((++apt_runs)).log
    shift
    if DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "${archives[@]}" "$@" >"$log" 2>&1; then
        ok "$name ($(grep -c '^Setting up' "$log") packages set up)"
    else
        not_ok "$name" "$(tail -15 "$log")"
    fi
}
apt_runs=0
# has_versions VERSION: every package of $wanted is at VERSION
has_versions() {
    local p v bad=""
    for p in "${wanted[@]}"; do
        v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null)
        [ "$v" = "$1" ] || bad+="$p is '${v:-not installed}'; "
    done
    [ -z "$bad" ] || { echo "$bad"; return 1; }
}

log=/var/log/openvswitch/ovs-vswitchd.log
# start_switch LABEL: ovs-ctl start.  --enable-dummy registers the dummy
# datapath while ovs-vswitchd parses its options, which initializes
# dpif-netdev, whose registration log lines then come before ovs-ctl's own
# --log-file (it puts its options last) and go to the console, which ovs-ctl
# sets to "emer": so the log file is named first too.  Without
# --enable-dummy (a production switch) they come after.
start_switch() {
    local out
    [ -d /var/log/openvswitch ] && : >"$log"
    if out=$("$ctl" start --system-id=random --no-record-hostname \
        --ovs-vswitchd-options="--log-file=$log --enable-dummy" 2>&1); then
        ok "$1: ovs-ctl start"
        echo "$out" | sed 's/^/    # /'
    else
        not_ok "$1: ovs-ctl start" "$out"
    fi
}
stop_switch() {  # stop_switch LABEL
    local out
    if out=$("$ctl" stop 2>&1); then ok "$1: ovs-ctl stop"; else not_ok "$1: ovs-ctl stop" "$out"; fi
    check "$1: no OVS daemon left" test -z "$(ovs_daemons)"
    grep -E '\|(ERR|EMER)\|' "$log" 2>/dev/null | sed 's/^/    # logged: /'
}

pkt='in_port(1),eth(src=52:54:00:00:00:01,dst=52:54:00:00:00:02),eth_type(0x0800),ipv4(src=10.0.0.1,dst=10.1.2.3,proto=17,tos=0,ttl=64,frag=no),udp(src=999,dst=4000)'
# p2's tx counter, live (the Interface table's statistics are refreshed
# only every 5 s).
tx() { ovs-ofctl dump-ports br0 2 | sed -n 's/.*tx pkts=\([0-9]*\).*/\1/p'; }
# settled: p2's tx counter once it has stopped moving (the packets
# wait_lookup sent, in a subshell of check, are counted this way).
settled() {
    local a b
    a=$(tx p2)
    while sleep 0.3; b=$(tx p2); [ "$a" != "$b" ]; do a=$b; done
    echo "$a"
}
send() {  # send N: N packets into p1 (a PMD port)
    local i
    for ((i = 0; i < $1; i++)); do ovs-appctl netdev-dummy/receive p1 "$pkt" >/dev/null; done
}
# forwards LABEL WHAT: 10 packets more out of p2 than before
forwards() {
    local want
    want=$(($(settled) + 10))
    send 10
    check "$1: forwarded by $2: 10 more packets out of p2 ($want)" expect_p2 "$want"
}
pmd_lookup() {  # the lookup of the PMD thread's p1 subtable
    ovs-appctl dpif-netdev/subtable-show | awk '/^pmd thread/ { pmd = 1 } /^main thread/ { pmd = 0 }
        pmd && /^    \(/ { match($0, /lookup [a-z0-9_]+/); print substr($0, RSTART + 7, RLENGTH - 7); exit }'
}
wait_lookup() {  # wait_lookup REGEX: sends packets until the subtable's lookup matches, 10 s
    local i
    for ((i = 0; i < 50; i++)); do
        [[ $(pmd_lookup) =~ ^($1)$ ]] && return 0
        send 2
        sleep 0.2
    done
    echo "the p1 subtable's lookup is '$(pmd_lookup)', want $1"
    return 1
}
# The bridge: made once (under Debian's packages), kept in the database
# across the upgrade and the way back, as an operator's is.  OpenFlow rules
# are not in the database: added at every start.
make_bridge() {
    # EMC off, so that every packet reaches dpcls; the JIT compiles a
    # subtable after 2 hits in a ranking interval.
    ovs-vsctl set Open_vSwitch . other_config:emc-insert-inv-prob=0 other_config:dpcls-jit-hot-hits=2 \
        -- add-br br0 -- set bridge br0 datapath-type=dummy fail-mode=secure \
        -- add-port br0 p1 -- set interface p1 type=dummy-pmd ofport_request=1 \
        -- add-port br0 p2 -- set interface p2 type=dummy ofport_request=2
}
add_rule() { ovs-ofctl add-flow br0 'priority=100,in_port=1,ip,nw_dst=10.1.0.0/16,actions=output:2'; }

# ---- 2a. Debian's own packages, from the machine's apt sources ----
debian_version=$(apt-cache policy openvswitch-switch | sed -n 's/^ *Candidate: //p')
echo "# ---- Debian's openvswitch-switch $debian_version, from $(apt-cache policy openvswitch-switch |
    awk '/ 500 / { print $2, $3; exit }') ----"
apt_install "apt-get install Debian's ${wanted[*]}" "${wanted[@]/%/=$debian_version}"
check "dpkg has Debian's $debian_version" has_versions "$debian_version"
start_switch "Debian's"
make_bridge
add_rule
forwards "Debian's" "OVS's own lookups"
check "Debian's: subtable-lookup-info-get lists none of the plugin's lookups" \
    bash -c "! ovs-appctl dpif-netdev/subtable-lookup-info-get | grep -Eq 'jit_avx2|specialized|runtime'"
stop_switch "Debian's"

# ---- 2b. these packages over them: an upgrade ----
check "SHA256SUMS matches the packages" bash -c "cd '$debs' && sha256sum -c --quiet SHA256SUMS"
files=()
for p in "${wanted[@]}"; do
    f=$(ls "$debs/${p}_"*.deb 2>/dev/null | head -1)
    if [ -n "$f" ]; then files+=("$f"); else not_ok "the folder has $p" "no ${p}_*.deb in $debs"; fi
done
version=$(dpkg-deb -f "${files[0]}" Version)
# The whole folder (ipsec, vtep, testcontroller, test, doc, source, pki and
# the -dbgsym packages too) installs together: apt resolves it, simulated.
all_debs=("$debs"/*.deb)
check "apt-get install --simulate of all ${#all_debs[@]} packages of the folder resolves" \
    apt-get install --simulate --no-install-recommends "${all_debs[@]}"
apt_install "apt-get install ${files[*]##*/} (over Debian's)" "${files[@]}"
check "dpkg has $version" has_versions "$version"
man_page=/usr/share/man/man7/ovs-dpcls-plugin.7.gz
check "openvswitch-switch installs ovs-dpcls-plugin(7) ($man_page)" \
    bash -c "dpkg -L openvswitch-switch | grep -qxF $man_page && zcat $man_page | grep -q '^\.TH OVS'"
copyright=/usr/share/doc/openvswitch-switch/copyright
check "openvswitch-switch's copyright names the plugin (Apache-2.0) and xbyak (BSD-3-clause)" \
    bash -c "grep -qx 'Files: debian/ovscls-plugin/\*' $copyright && grep -q 'xbyak' $copyright"

run_switch() {  # run_switch BINARY LABEL: each ovs-vswitchd of the packages
    local binary=$1 label=$2 before_lookup line lp info
    echo "# ---- $label: $binary ----"
    check "$label: update-alternatives --set ovs-vswitchd" update-alternatives --set ovs-vswitchd "$binary"
    check "$label: /usr/sbin/ovs-vswitchd is $binary" test "$(readlink -f /usr/sbin/ovs-vswitchd)" = "$binary"
    start_switch "$label"
    check "$label: ovs-vswitchd --version is Open vSwitch $ovs_version" \
        grep -qF "ovs-vswitchd (Open vSwitch) $ovs_version" <<<"$(ovs-vswitchd --version)"
    if [[ $label == *dpdk* ]]; then
        check "$label: ovs-vswitchd-dpdk is built with DPDK" grep -q '^DPDK ' <<<"$(ovs-vswitchd --version)"
    fi
    check "$label: br0 and its ports, made under Debian's packages, are kept" \
        test "$(ovs-vsctl list-ports br0 | tr '\n' ' ')" = "p1 p2 "
    for lp in "jit_avx2 4" "specialized 3" "runtime 2"; do
        line="dpcls lookup implementation '${lp% *}' registered, priority ${lp#* }"
        check "$label: $log says: $line" grep -qF "dpif_netdev_lookup|INFO|$line" "$log"
    done
    info=$(ovs-appctl dpif-netdev/subtable-lookup-info-get)
    for lp in "jit_avx2 4" "specialized 3" "runtime 2" "generic 1"; do
        check "$label: subtable-lookup-info-get lists ${lp% *} at priority ${lp#* }" \
            grep -q "  ${lp% *} (Use count: [0-9]*, Priority: ${lp#* })" <<<"$info"
    done
    add_rule
    forwards "$label" "the plugin's lookups"
    if [ -z "$jit_lacks" ]; then
        check "$label: the hot subtable moved to jit_avx2 (the CPU has AVX2, BMI1, BMI2, POPCNT)" \
            wait_lookup jit_avx2
    else
        check "$label: the subtable stays on the plugin's specialized/runtime (CPU lacks $jit_lacks)" \
            wait_lookup 'specialized|runtime'
    fi
    before_lookup=$(pmd_lookup)
    forwards "$label" "$before_lookup"
    check "$label: prio-set generic 10" ovs-appctl dpif-netdev/subtable-lookup-prio-set generic 10
    check "$label: the subtable is on generic" wait_lookup generic
    forwards "$label" generic
    check "$label: prio-set generic 1 (back)" ovs-appctl dpif-netdev/subtable-lookup-prio-set generic 1
    check "$label: the subtable is back on $before_lookup" wait_lookup "$before_lookup"
    forwards "$label" "$before_lookup"
    # The persistent switch, and the status command, as the README gives them.
    check "$label: dpcls-plugin/show names the plugin's version" \
        grep -Eq '^version: [^ ]' <<<"$(ovs-appctl dpcls-plugin/show)"
    check "$label: ovs-vsctl set Open_vSwitch . other_config:dpcls-plugin=false" \
        ovs-vsctl set Open_vSwitch . other_config:dpcls-plugin=false
    check "$label: the subtable is on generic" wait_lookup generic
    forwards "$label" "generic (dpcls-plugin=false)"
    check "$label: the key removed" ovs-vsctl remove Open_vSwitch . other_config dpcls-plugin
    check "$label: the subtable is back on $before_lookup" wait_lookup "$before_lookup"
    stop_switch "$label"
}
if [ -x "$ctl" ]; then
    run_switch /usr/lib/openvswitch-switch/ovs-vswitchd "openvswitch-switch"
    run_switch /usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk "openvswitch-switch-dpdk"
    check "update-alternatives --auto ovs-vswitchd" update-alternatives --auto ovs-vswitchd
else
    not_ok "ovs-ctl is installed" "$ctl is missing"
fi

# ---- 2c. back to Debian's packages (README's way back) ----
apt_install "back to Debian's: apt-get install --allow-downgrades ${wanted[*]/%/=$debian_version}" \
    --allow-downgrades "${wanted[@]/%/=$debian_version}"
check "dpkg has Debian's $debian_version again" has_versions "$debian_version"
start_switch "Debian's again"
check "Debian's again: subtable-lookup-info-get lists none of the plugin's lookups" \
    bash -c "! ovs-appctl dpif-netdev/subtable-lookup-info-get | grep -Eq 'jit_avx2|specialized|runtime'"
add_rule
forwards "Debian's again" "OVS's own lookups"
stop_switch "Debian's again"


restore end
