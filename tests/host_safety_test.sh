#!/usr/bin/env bash
# The scripts that run as root refuse what they could not undo, and leave
# nothing behind:
#
#   tests/host_safety_test.sh
#
# 1. tests/deb_install_test.sh --here, in a throw-away Debian 12 root
#    (scripts/debian-root.sh --profile packages --throwaway), on a machine
#    that has (a) an OVS package removed but not purged (state rc, in
#    dpkg's database), (b) a source install's /etc/openvswitch/conf.db,
#    (c) an unowned /usr/sbin/ovs-vswitchd, (d) an OVS daemon of another
#    origin running: each time it refuses (exit 3, naming the reason) and
#    the root is as it was: every path's type, mode, size and ctime (any
#    write changes a ctime), and the contents of /etc, /usr/sbin, /tmp and
#    dpkg's database.  The packages it reads for the paths they would own
#    are Debian's own, downloaded in the root.  (That it runs to its end on
#    a machine without OVS is tests/deb_install_test.sh itself, in
#    tests/run.sh.)
# 2. patches/build-ovs.sh --prefix DIR refuses a folder with something in
#    it that it did not make (an operator's /usr/local, say) and leaves it
#    byte for byte; a prefix it made (its marker) is accepted; its scratch
#    folders are gone after a run that failed.
# 3. scripts/debian-root.sh mounts nothing in the machine's mount table
#    while its command runs (a killed run can leave none behind), and
#    undoes the mounts a killed run of an older version left (simulated in
#    a mount namespace of this test's own).
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
source tests/vswitchd/lib.sh # ok, not_ok, check
source tests/counts.sh       # summary_counts
[ "$(id -u)" = 0 ] || { echo "host_safety_test.sh: needs root (chroot, mounts)"; exit 1; }
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}

# ---- 1. deb_install_test.sh --here refuses, in a throw-away root ----
# The script run in the root: prints TAP lines of its own.
inner=$(
    cat <<'INNER'
set -uo pipefail
source tests/vswitchd/lib.sh
# root_state: everything of the root's own file system (not /proc, /sys,
# /dev or the project's folder, which are other mounts).
root_state() {
    find / -xdev -printf '%p %y %m %s %C@ %l\n' 2>/dev/null | LC_ALL=C sort
    find /etc /usr/sbin /tmp /var/lib/dpkg -xdev -type f -print0 2>/dev/null | LC_ALL=C sort -z |
        xargs -0r sha256sum
}
debs=/var/cache/apt/archives
refuses() {  # refuses NAME REASON_REGEX: the test refuses, and the root stays as it was
    local out rc before after
    before=$(root_state | sha256sum)
    out=$(tests/deb_install_test.sh --here "$debs" 2>&1)
    rc=$?
    after=$(root_state | sha256sum)
    if [ "$rc" -eq 3 ] && grep -Eq "$2" <<<"$out"; then
        ok "$1: deb_install_test.sh --here refuses ($(grep -E "$2" <<<"$out" | head -1 | cut -c1-120))"
    else
        not_ok "$1: deb_install_test.sh --here refuses (exit 3, reason /$2/)" "exit $rc: $out"
    fi
    if [ "$before" = "$after" ]; then
        ok "$1: the root is as it was (paths, modes, sizes, ctimes; contents of /etc, /usr/sbin, /tmp, dpkg's database)"
    else
        not_ok "$1: the root is as it was" "$(tail -5 <<<"$out")"
    fi
}
ls "$debs"/openvswitch-switch_*.deb >/dev/null || { not_ok "Debian's packages are downloaded in the root"; }

# (a) removed, not purged: dpkg's database says rc
cp /var/lib/dpkg/status /tmp/status.orig
cat >>/var/lib/dpkg/status <<'STANZA'

Package: openvswitch-switch
Status: deinstall ok config-files
Priority: optional
Section: net
Architecture: amd64
Version: 3.1.0-2+deb12u1
Description: Open vSwitch switch implementations (removed, its configuration kept)
STANZA
check "(a) dpkg reports openvswitch-switch in state rc" \
    bash -c "dpkg-query -W -f='\${db:Status-Abbrev}' openvswitch-switch | grep -q '^rc'"
refuses "(a) an rc package" 'dpkg knows OVS packages .*rc +openvswitch-switch'
cp /tmp/status.orig /var/lib/dpkg/status
rm /tmp/status.orig

# (b) a source install's database
mkdir /etc/openvswitch
echo "an operator's database" >/etc/openvswitch/conf.db
refuses "(b) a source install's /etc/openvswitch/conf.db" 'paths the packages would own exist: .*/etc/openvswitch'
rm -r /etc/openvswitch

# (c) an unowned /usr/sbin/ovs-vswitchd
echo "an operator's ovs-vswitchd" >/usr/sbin/ovs-vswitchd
refuses "(c) an unowned /usr/sbin/ovs-vswitchd" 'paths the packages would own exist: .*/usr/sbin/ovs-vswitchd'
rm /usr/sbin/ovs-vswitchd

# (d) an OVS daemon of another origin (a program named ovs-vswitchd)
mkdir /opt/elsewhere
cp /bin/sleep /opt/elsewhere/ovs-vswitchd
/opt/elsewhere/ovs-vswitchd 600 &
daemon=$!
refuses "(d) an ovs-vswitchd of another origin running" 'OVS daemons run: [0-9]+ /opt/elsewhere/ovs-vswitchd'
kill "$daemon"
wait "$daemon" 2>/dev/null
rm -r /opt/elsewhere
echo "$passed passed, $failed failed"
INNER
)
echo "# 1. deb_install_test.sh --here in a throw-away Debian 12 root with OVS traces"
out=$(scripts/debian-root.sh bookworm --profile packages --throwaway -- bash -c "$inner" 2>&1)
echo "$out"
p="" f=""
read -r p f < <(summary_counts <(echo "$out")) || true
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-0}))
[ -n "${p:-}" ] || not_ok "the checks in the throw-away root printed their summary"
[ "${p:-0}" -ge 9 ] || not_ok "the checks in the throw-away root: at least 9 passed" "${p:-0} passed"

# ---- 2. build-ovs.sh --prefix ----
echo "# 2. patches/build-ovs.sh --prefix"
work=$(mktemp -d /tmp/host-safety-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
tree_state() { (cd "$1" && find . -printf '%p %y %m %s %C@\n' | LC_ALL=C sort && find . -type f -print0 |
    LC_ALL=C sort -z | xargs -0r sha256sum); }
# An operator's prefix, like /usr/local: src/ with their own sources.
mkdir -p "$work/usr-local/src/their-project" "$work/usr-local/bin"
echo "their code" >"$work/usr-local/src/their-project/main.c"
echo "their tool" >"$work/usr-local/bin/tool"
before=$(tree_state "$work/usr-local")
out=$(patches/build-ovs.sh --prefix "$work/usr-local" 2>&1)
rc=$?
check "build-ovs.sh refuses a non-empty prefix it did not make (exit 2, says why)" \
    bash -c "[ $rc -eq 2 ] && grep -q 'not empty and was not made by build-ovs.sh' <<<'$out'"
check "the refused prefix is byte for byte as it was (src/ kept)" \
    test "$before" = "$(tree_state "$work/usr-local")"
# A prefix it made (marker), and a failing run: a tree that is no OVS
# source fails after the prefix is taken; no scratch folder is left.
mkdir -p "$work/tmp" "$work/not-ovs"
echo "AC_INIT(something, 1.0)" >"$work/not-ovs/configure.ac"
out=$(TMPDIR=$work/tmp patches/build-ovs.sh --prefix "$work/new-prefix" --ovs-source "$work/not-ovs" 2>&1)
rc=$?
check "build-ovs.sh takes a new prefix and marks it (.ovs-dpcls-plugin-prefix)" \
    test -f "$work/new-prefix/.ovs-dpcls-plugin-prefix"
check "build-ovs.sh fails on a tree that is not Open vSwitch's" \
    bash -c "[ $rc -ne 0 ] && grep -q 'not an Open vSwitch source tree' <<<'$out'"
check "its scratch folders are gone after the failed run" test -z "$(ls -A "$work/tmp")"
out=$(TMPDIR=$work/tmp patches/build-ovs.sh --prefix "$work/new-prefix" --ovs-source "$work/not-ovs" 2>&1)
check "build-ovs.sh takes its own marked prefix again" \
    bash -c "grep -q 'not an Open vSwitch source tree' <<<'$out' && ! grep -q 'was not made by' <<<'$out'"

# ---- 3. debian-root.sh's mounts ----
echo "# 3. scripts/debian-root.sh's mounts"
# While a command runs in a root, the machine's mount table has none of
# the run's mounts.
scripts/debian-root.sh bookworm --profile packages -- sleep 3 &
runner=$!
sleep 2
during=$(findmnt -rn -o TARGET | grep -F "$cache/root-" || true)
wait "$runner"
check "nothing of a running root is mounted in the machine's mount table" test -z "$during"
# A killed run of an older version left mounts under a root: a run undoes
# them first.  Simulated in this test's own mount namespace, so that the
# machine's table is never touched even if this check fails.
fake=$(mktemp -d "$cache/root-hostsafetytest-XXXXXX")
out=$(unshare --mount --propagation private bash -c '
    mkdir -p "$1/proc" "$1/dev"
    mount -t tmpfs stale "$1/proc" && mount -t tmpfs stale "$1/dev" || exit 9
    scripts/debian-root.sh bookworm --profile packages -- true 2>&1
    echo "left: $(findmnt -rn -o TARGET | grep -cF "$1")"' _ "$fake" 2>&1)
check "a run undoes the mounts a killed run left, and says so" \
    bash -c "grep -q 'undoing mounts a killed run left: .*$fake/dev' <<<'$out' && grep -qx 'left: 0' <<<'$out'"
[ -z "$(findmnt -rn -o TARGET | grep -F "$fake")" ] && rm -rf "$fake"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
