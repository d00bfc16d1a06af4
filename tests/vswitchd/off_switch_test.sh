#!/usr/bin/env bash
# The operator's controls of the plugin in ovs-vswitchd, on every release:
#
#   tests/vswitchd/off_switch_test.sh OVS_PREFIX
#
# OVS_PREFIX is a patches/build-ovs.sh install with the plugin's lookups as
# defaults (--plugin-default on 3.x, --validate on 4.0).  Starts a private
# ovs-vswitchd with two PMD threads and two subtables of UDP traffic, and
# checks:
# - `ovs-appctl dpcls-plugin/show`: the version, the OVS it was built for,
#   the hash, the CPU, and each lookup at its default priority
#   (classifier/lookup_table.h), on, or declining where the CPU lacks what
#   jit_avx2 needs;
# - other_config:dpcls-plugin=false: every lookup of the plugin at
#   priority 0, every subtable of every thread on OVS's generic at once,
#   nothing lost; still so after a restart of ovs-vswitchd; a value that
#   is not true or false keeps it off with a warning; removing the key
#   brings the defaults back on every subtable;
# - a priority set live (prio-set) stands when another other_config key
#   changes: the key is applied when its own value changes.
# Prints "N passed, N failed".
set -uo pipefail

prefix=${1:?usage: off_switch_test.sh OVS_PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
use_ovs_prefix "$prefix" off-switch-test

read_cpu
start_ovsdb
start_udp_switch

names=(specialized runtime jit_avx2 jit_fused tail_index)
show() { ovs-appctl dpcls-plugin/show; }
# The lookups of every PMD and main thread subtable, one per line.
lookups() {
    ovs-appctl dpif-netdev/subtable-show --limit 0 | grep -E '^    \(' |
        sed -n 's/.* lookup \([a-z0-9_]*\).*/\1/p'
}
all_generic() { local l; l=$(lookups); [ -n "$l" ] && ! grep -vqx generic <<<"$l"; }
none_generic() { local l; l=$(lookups); [ -n "$l" ] && ! grep -qx generic <<<"$l"; }
off_count() { show | grep -c ': priority 0, off (other_config:dpcls-plugin)$'; }

# ---- dpcls-plugin/show ----
text=$(show)
sed 's/^/# /' <<<"$text"
show_head() {
    grep -Eq '^version: [^ ]' <<<"$text" && grep -Eq '^built for: Open vSwitch [0-9]+\.[0-9]+' <<<"$text" &&
        grep -Eq '^hash: (CRC32C|murmur)' <<<"$text" && grep -Eq '^cpu: ' <<<"$text"
}
check "dpcls-plugin/show: version, build, hash and CPU lines" show_head
for name in "${names[@]}"; do
    prio=$(plugin_prio "$name")
    want="on"
    case "$name" in
        jit_avx2 | jit_fused)
            [ -n "$jit_lacks" ] && want="declines every" ;;
    esac
    check "dpcls-plugin/show: $name at priority $prio, $want" \
        grep -Eq "^$name: priority $prio, $want" <<<"$text"
done
send_udp 5
check "forwarding with the plugin's lookups: every packet where its rule sends it" expect_tx $p2 $p4
check "the subtables run the plugin's lookups (subtable-show)" none_generic

# ---- other_config:dpcls-plugin=false ----
ovs-vsctl set Open_vSwitch . other_config:dpcls-plugin=false
check "dpcls-plugin=false is logged" \
    log_says "other_config:dpcls-plugin=false: the plugin's lookups are at priority 0 \(off\)"
check "dpcls-plugin=false: every lookup of the plugin at priority 0 (dpcls-plugin/show)" \
    test "$(off_count)" -eq ${#names[@]}
check "... every subtable of every thread runs OVS's generic at once (subtable-show)" all_generic
send_udp 5
check "forwarding on OVS's lookups: every packet where its rule sends it" expect_tx $p2 $p4
check "... and the new subtables' lookups too are OVS's" all_generic

# A restart keeps it (the database does).
stop_switch
restart_udp_switch
check "after a restart, every lookup of the plugin is still at priority 0" \
    test "$(off_count)" -eq ${#names[@]}
send_udp 5
check "forwarding after the restart" expect_tx $p2 $p4
check "... on OVS's generic in every subtable" all_generic

# A value that is neither keeps the plugin off, and says so.
ovs-vsctl set Open_vSwitch . other_config:dpcls-plugin=maybe
maybe_refused() {
    log_says "WARN.*other_config:dpcls-plugin=\"maybe\" is not true or false" &&
        [ "$(off_count)" -eq ${#names[@]} ]
}
check "dpcls-plugin=maybe: a warning, and the plugin stays off" maybe_refused

# Removing the key brings the defaults back, at once, on every subtable.
ovs-vsctl remove Open_vSwitch . other_config dpcls-plugin
check "the key removed: logged" \
    log_says "other_config:dpcls-plugin=\(none\): the plugin's lookups are at their default priorities"
text=$(show)
for name in "${names[@]}"; do
    prio=$(plugin_prio "$name")
    check "... $name back at priority $prio" grep -q "^$name: priority $prio, " <<<"$text"
done
check "... every subtable runs the plugin's lookups again (subtable-show)" none_generic
send_udp 5
check "forwarding after the key's removal" expect_tx $p2 $p4

# A priority set live stands while the key does not change.
if ovs-appctl dpif-netdev/subtable-lookup-prio-set runtime 0 >/dev/null 2>&1 ||
    ovs-appctl dpif-netdev/lookup-provider-set runtime 0 >/dev/null 2>&1; then
    ovs-vsctl set Open_vSwitch . other_config:dpcls-jit-hot-hits=3
    runtime_off() { sleep 1; show | grep -q '^runtime: priority 0, off'; }
    check "prio-set runtime 0, then another other_config key changed: runtime stays at 0" runtime_off
else
    not_ok "prio-set runtime 0 (neither subtable-lookup-prio-set nor lookup-provider-set took it)"
fi

stop_switch
check "no ERR or EMER lines in ovs-vswitchd's log" \
    bash -c "! grep -E '\\|(ERR|EMER)\\|' '$work/ovs-vswitchd.log'"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
