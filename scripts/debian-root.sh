#!/usr/bin/env bash
# Runs a command in a Debian root of another release, made once with
# debootstrap and kept in the build cache:
#
#   scripts/debian-root.sh SUITE [--] COMMAND [ARG...]
#
# What for: OVS 3.5 wants DPDK 24.11, which Debian 13 (trixie) ships and
# Debian 12 does not, and Debian 13's DPDK packages need a newer C library
# than Debian 12's.  So OVS 3.5 with DPDK is built and run in a Debian 13
# root on the Debian 12 machine, with Debian 13's own packages, as an
# operator of Debian 13 would have them.  The machine's own packages and
# apt sources are not touched.
#
# The root ($OVS_BUILD_CACHE/root-SUITE-KEY, KEY a hash of the suite and the
# package list below) is made by debootstrap (installed with apt-get when
# missing) from $DEBIAN_MIRROR (default http://deb.debian.org/debian),
# checked against Debian's archive keyring, with the packages a patched OVS
# with DPDK and the p2p benchmark need.  The command runs as root in it,
# in this project's folder (bind-mounted at the same path) with the build
# cache, /proc, /sys and /dev mounted; the mounts are undone when it ends,
# also on errors and Ctrl-C.
set -euo pipefail
usage="usage: debian-root.sh SUITE [--] COMMAND [ARG...]"
suite=${1:?$usage}
shift
[ "${1:-}" != "--" ] || shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
case "$suite" in *[!a-z]*) echo "debian-root.sh: bad suite '$suite'" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "debian-root.sh: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
packages=(
    # building OVS with the series, and the plugin (patches/build-ovs.sh)
    patch g++ make cmake pkg-config python3 ccache autoconf automake libtool
    libssl-dev libcap-ng-dev libnuma-dev libpcap-dev libxbyak-dev
    # DPDK (Debian's: 24.11 in trixie; perf/p2p/run.sh adds dpdk-dev, which
    # has dpdk-testpmd, when it runs)
    libdpdk-dev dpdk
    # the p2p benchmark (perf/p2p): its chart, and ps/kill
    python3-matplotlib procps
)
key=$(printf '%s\n' "$suite" "${packages[@]}" | sha256sum | cut -c1-16)
root=$cache/root-$suite-$key

if [ ! -f "$root/.done" ]; then
    command -v debootstrap >/dev/null || {
        echo "debian-root.sh: installing debootstrap" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            debootstrap >/dev/null
    }
    echo "debian-root.sh: making a Debian $suite root in $root (a few minutes, once)" >&2
    rm -rf "$root.tmp"
    mkdir -p "$cache"
    debootstrap --variant=minbase --keyring="$keyring" "$suite" "$root.tmp" "$mirror" \
        >"$cache/root-$suite.log" 2>&1 ||
        { tail -20 "$cache/root-$suite.log" >&2; exit 1; }
    # Packages install without the daemons starting (no init in a root).
    printf '#!/bin/sh\nexit 101\n' >"$root.tmp/usr/sbin/policy-rc.d"
    chmod +x "$root.tmp/usr/sbin/policy-rc.d"
    chroot "$root.tmp" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends ${packages[*]}" \
        >>"$cache/root-$suite.log" 2>&1 ||
        { tail -20 "$cache/root-$suite.log" >&2; exit 1; }
    mv "$root.tmp" "$root"
    touch "$root/.done"
fi

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[i]}" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bind() {  # SOURCE: mounted at the same path in the root
    mkdir -p "$root$1"
    mount --rbind "$1" "$root$1"
    mount --make-rslave "$root$1"
    mounted+=("$root$1")
}
bind /proc
bind /sys
bind /dev
bind "$top"
bind "$cache"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    TERM="${TERM:-dumb}" OVS_BUILD_CACHE="$cache" \
    /bin/bash -c 'cd "$1" && shift && exec "$@"' debian-root "$top" "$@"
