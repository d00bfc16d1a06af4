#!/usr/bin/env bash
# Runs a command in a Debian root of some release, made once with
# debootstrap and kept in the build cache:
#
#   scripts/debian-root.sh SUITE [--profile build|packages] [--throwaway]
#                          [--bind DIR]... [--] COMMAND [ARG...]
#
#   --profile build     (default) what a patched OVS with DPDK and the p2p
#                       benchmark need (compilers, DPDK); the project folder
#                       and the build cache are mounted in it
#   --profile packages  a bare root with the suite's updates and security
#                       sources and Debian's Open vSwitch packages
#                       downloaded (not installed), for the package install
#                       test (tests/deb_install_test.sh); modprobe and rmmod
#                       are stand-ins there that load nothing
#   --throwaway         the command runs in a copy of the cached root (an
#                       overlay over it) that is discarded when it ends, in
#                       its own PID, network, UTS and IPC namespaces and
#                       without CAP_SYS_MODULE: what it installs, starts or
#                       configures never reaches the machine or the cache,
#                       and its daemons die with it
#   --bind DIR          also mount DIR (read-write) at the same path
#   --cached            runs nothing: exits 0 if the root is made, 1 if
#                       not (tests/run.sh plans with it)
#
# What for: OVS 3.5 wants DPDK 24.11, which Debian 13 (trixie) ships, and
# OVS 4.0 DPDK 25.11, which Debian testing (forky) ships; Debian 12 has
# neither, and those DPDK packages need a newer C library than Debian 12's;
# and the Debian packages must be install-tested without
# touching the machine's own packages, files and services.  The machine's
# own packages and apt sources are not touched.
#
# The root ($OVS_BUILD_CACHE/root-SUITE-KEY, KEY a hash of the suite, the
# profile and its package list) is made by debootstrap (installed with
# apt-get when missing) from the Debian mirror this machine's apt uses
# (cmake/debian-mirrors.sh: $DEBIAN_MIRROR and $DEBIAN_SECURITY_MIRROR
# override), checked against Debian's archive keyring; the root's own apt
# sources name the same mirrors.
# The command runs as root in it, in this project's folder (bind-mounted at
# the same path).
#
# Mounts: everything runs in a private mount namespace, so no mount of a
# run reaches the machine's mount table, and a run that is killed leaves
# none behind; mounts that older versions of this script left in the
# machine's table under the cache's roots are found (findmnt) and undone
# first, and said.  No folder is removed while anything is mounted below
# it (checked with findmnt; the script refuses otherwise).
set -euo pipefail
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
suite="" profile=build throwaway=no binds=() only_ask=no
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile=${2:?--profile needs build or packages}; shift 2 ;;
        --throwaway) throwaway=yes; shift ;;
        --cached) only_ask=yes; shift ;;
        --bind) binds+=("$(cd "${2:?--bind needs a directory}" && pwd)"); shift 2 ;;
        --bind=*) binds+=("$(cd "${1#--bind=}" && pwd)"); shift ;;
        -h | --help) usage; exit 0 ;;
        --) shift; break ;;
        -*) echo "debian-root.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
        *) if [ -z "$suite" ]; then suite=$1; shift; else break; fi ;;
    esac
done
[ -n "$suite" ] && { [ $# -gt 0 ] || [ "$only_ask" = yes ]; } || { usage >&2; exit 2; }
case "$suite" in *[!a-z]*) echo "debian-root.sh: bad suite '$suite'" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "debian-root.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
source "$top/cmake/debian-mirrors.sh"
mirror=$(debian_mirror main) || exit 1
security_mirror=$(debian_mirror security) || exit 1
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
case "$profile" in
    build)
        packages=(
            # building OVS with the series, and the plugin (patches/build-ovs.sh)
            patch g++ make cmake pkg-config python3 ccache autoconf automake libtool
            libssl-dev libcap-ng-dev libnuma-dev libpcap-dev libxbyak-dev
            # DPDK (Debian's: 24.11 in trixie; perf/p2p/run.sh adds dpdk-dev,
            # which has dpdk-testpmd, when it runs)
            libdpdk-dev dpdk
            # the p2p benchmark (perf/p2p): its chart, and ps/kill
            python3-matplotlib procps
        )
        downloads=()
        ;;
    packages)
        # pgrep for the test's daemon checks; the switch's packages are
        # only downloaded, so that every run installs them from scratch
        packages=(procps)
        downloads=(openvswitch-switch openvswitch-switch-dpdk openvswitch-common python3-openvswitch)
        ;;
    *) echo "debian-root.sh: unknown profile '$profile' (build or packages)" >&2; exit 2 ;;
esac
if [ "$profile" = build ]; then
    key=$(printf '%s\n' "$suite" upgraded "${packages[@]}" | sha256sum | cut -c1-16)
    root=$cache/root-$suite-$key
else
    key=$(printf '%s\n' "$suite" "$profile" upgraded "${packages[@]}" "${downloads[@]}" "$mirror" \
        "$security_mirror" | sha256sum | cut -c1-16)
    root=$cache/root-$suite-$profile-$key
fi
if [ "$only_ask" = yes ]; then
    [ -f "$root/.done" ]
    exit
fi

# mounts_below DIR: the mount points at or below DIR, deepest first.
mounts_below() {
    findmnt -rn -o TARGET | awk -v d="$1" 'index($0, d) == 1 &&
        (length($0) == length(d) || substr($0, length(d) + 1, 1) == "/")' | awk '{ print length, $0 }' |
        sort -rn | cut -d' ' -f2-
}
# remove_owned DIR: rm -rf of a folder this script made, never while
# anything is mounted below it.
remove_owned() {
    local left
    left=$(mounts_below "$1")
    if [ -n "$left" ]; then
        echo "debian-root.sh: not removing $1: mounted below it: ${left//$'\n'/ }" >&2
        return 1
    fi
    rm -rf "$1"
}

if [ -z "${DEBIAN_ROOT_INSIDE:-}" ]; then
    # ---- in the machine's mount namespace ----
    # Mounts left by a run of an older version of this script (which
    # mounted in the machine's namespace) and killed before its cleanup.
    if [ -d "$cache" ]; then
        for d in "$cache"/root-* "$cache"/throwaway-*; do
            [ -d "$d" ] || continue
            stale=$(mounts_below "$d")
            [ -n "$stale" ] || continue
            echo "debian-root.sh: undoing mounts a killed run left: ${stale//$'\n'/ }" >&2
            while read -r m; do umount -l "$m" || true; done <<<"$stale"
        done
        # Throw-away copies whose run is gone (a killed run).
        for d in "$cache"/throwaway-*; do
            [ -f "$d/.debian-root-throwaway" ] || continue
            pid=$(cat "$d/.debian-root-throwaway")
            [ -d "/proc/$pid" ] && continue
            echo "debian-root.sh: removing the throw-away root of a run that is gone: $d" >&2
            remove_owned "$d"
        done
    fi
    mkdir -p "$cache"
    scratch=""
    ns=(--mount --propagation private)
    if [ "$throwaway" = yes ]; then
        scratch=$(mktemp -d "$cache/throwaway-$suite.XXXXXX")
        echo $$ >"$scratch/.debian-root-throwaway"
        ns+=(--pid --fork --kill-child --net --uts --ipc)
    fi
    cleanup_outer() {
        [ -z "$scratch" ] || remove_owned "$scratch" || true
    }
    trap cleanup_outer EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    again=("$0" "$suite" --profile "$profile" "${binds[@]/#/--bind=}")
    [ "$throwaway" = yes ] && again+=(--throwaway)
    # The root is made in a mount namespace of its own too (debootstrap
    # mounts), with the machine's network; the command then runs in its own.
    # One maker per root: two runs that need it at once (tests/prebuild.sh's
    # build beside a phase's) would debootstrap into the same folder.  The
    # second waits on the lock and then finds the root made.
    if [ ! -f "$root/.done" ]; then
        (
            flock 9
            [ -f "$root/.done" ] ||
                DEBIAN_ROOT_INSIDE=make unshare --mount --propagation private "${again[@]}" -- true
        ) 9>"$root.lock"
    fi
    rc=0
    DEBIAN_ROOT_INSIDE=run DEBIAN_ROOT_SCRATCH=$scratch unshare "${ns[@]}" "${again[@]}" -- "$@" ||
        rc=$?
    exit "$rc"
fi

# ---- in a private mount namespace: make the root ----
if [ "$DEBIAN_ROOT_INSIDE" = make ]; then
    command -v debootstrap >/dev/null || {
        echo "debian-root.sh: installing debootstrap" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            debootstrap >/dev/null
    }
    echo "debian-root.sh: making a Debian $suite root ($profile) in $root (a few minutes, once)" >&2
    [ ! -e "$root.tmp" ] || remove_owned "$root.tmp"
    # A suite newer than this machine's debootstrap knows (forky, Debian's
    # testing, on Debian 12) is made with its sid script, which testing and
    # unstable share.
    script=()
    [ -e "/usr/share/debootstrap/scripts/$suite" ] || script=(/usr/share/debootstrap/scripts/sid)
    debootstrap --variant=minbase --keyring="$keyring" "$suite" "$root.tmp" "$mirror" \
        "${script[@]}" >"$root.log" 2>&1 ||
        { tail -20 "$root.log" >&2; exit 1; }
    # Debian's testing suite (forky) signs its Release files valid for a
    # week, and the package registry this project uses serves an older
    # copy: apt in that root checks the signature but not the date (what
    # it builds against is pinned by sha256 in cmake/ovs-sources.txt).
    if [ "$suite" = forky ]; then
        echo "debian-root.sh: $suite: apt checks its Release file's signature, not its date" >&2
        echo 'Acquire::Check-Valid-Until "false";' >"$root.tmp/etc/apt/apt.conf.d/99ovscls-valid-until"
    fi
    # Packages install without the daemons starting (no init in a root).
    printf '#!/bin/sh\nexit 101\n' >"$root.tmp/usr/sbin/policy-rc.d"
    chmod +x "$root.tmp/usr/sbin/policy-rc.d"
    if [ "$profile" = packages ]; then
        # The suite as a machine of that release has it (its updates and
        # security updates too), so that its candidates are an operator's.
        cat >"$root.tmp/etc/apt/sources.list" <<SOURCES
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security_mirror $suite-security main
SOURCES
        # The host's kernel modules are not the root's to load or unload
        # (ovs-ctl start inserts openvswitch, and may remove the bridge
        # module): stand-ins found first in PATH (ovs-ctl keeps PATH's
        # order), and --throwaway runs without CAP_SYS_MODULE anyway.
        for tool in modprobe rmmod; do
            printf '#!/bin/sh\necho "%s $*: not run: a test root does not load or unload the kernel'"'"'s modules" >&2\nexit 0\n' \
                "$tool" >"$root.tmp/usr/local/sbin/$tool"
            chmod 755 "$root.tmp/usr/local/sbin/$tool"
        done
    fi
    # Upgraded from the suite's updates and security sources first: a root
    # of debootstrap's versions alone has the install test's packages pull
    # in a newer library (Debian 13's libssl3t64 3.5.10, 2026-12-07), which
    # the purge then leaves, and the root is not as it was.
    chroot "$root.tmp" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get upgrade -y -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends ${packages[*]} ${downloads[*]:+&& \
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --download-only ${downloads[*]}}" \
        >>"$root.log" 2>&1 ||
        { tail -20 "$root.log" >&2; exit 1; }
    mv "$root.tmp" "$root"
    touch "$root/.done"
    exit 0
fi

# ---- in a private mount namespace: run the command ----
[ -f "$root/.done" ] || { echo "debian-root.sh: no root at $root" >&2; exit 1; }

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[i]}" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
run_root=$root
if [ "$throwaway" = yes ]; then
    scratch=${DEBIAN_ROOT_SCRATCH:?}
    mkdir -p "$scratch/upper" "$scratch/work" "$scratch/merged"
    mounted+=("$scratch/merged")
    mount -t overlay overlay -o "lowerdir=$root,upperdir=$scratch/upper,workdir=$scratch/work" \
        "$scratch/merged"
    run_root=$scratch/merged
fi
bind() {  # SOURCE: mounted at the same path in the root
    mkdir -p "$run_root$1"
    mounted+=("$run_root$1")
    mount --rbind "$1" "$run_root$1"
    mount --make-rslave "$run_root$1"
}
if [ "$throwaway" = yes ]; then
    # Its own PID namespace: a /proc of its own; its own network: a sysfs
    # that shows it.
    mounted+=("$run_root/proc")
    mount -t proc proc "$run_root/proc"
    mounted+=("$run_root/sys")
    mount -t sysfs sysfs "$run_root/sys"
    ip link set lo up 2>/dev/null || true
else
    bind /proc
    bind /sys
fi
bind /dev
bind "$top"
[ "$profile" = build ] && bind "$cache"
for b in "${binds[@]}"; do bind "$b"; done
cp /etc/resolv.conf "$run_root/etc/resolv.conf" 2>/dev/null || true
drop=()
[ "$throwaway" = yes ] && drop=(setpriv --bounding-set -sys_module)
"${drop[@]}" chroot "$run_root" /usr/bin/env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    TERM="${TERM:-dumb}" OVS_BUILD_CACHE="$cache" \
    /bin/bash -c 'cd "$1" && shift && exec "$@"' debian-root "$top" "$@"
