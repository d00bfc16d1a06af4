#!/usr/bin/env bash
# Builds Open vSwitch (the source in cmake/ovs-sources.txt: Debian 12's
# openvswitch-source, 3.1.0) with the ovs-dpcls-plugin lookups linked in,
# and installs it.
#
#   patches/build-ovs.sh --prefix DIR [--dpdk] [--autovalidator]
#                        [--plugin-default] [--flavour F] [--host HOST]
#
#   --prefix DIR       install into DIR (bin/, sbin/, share/...); the
#                      configured, built tree stays in DIR/src, so other
#                      programs can compile against its headers and config.h
#                      and link DIR/src/lib/.libs/libopenvswitch.a
#   --dpdk             build with DPDK (--with-dpdk=shared, Debian's
#                      libdpdk-dev 22.11, the version OVS 3.1 expects)
#   --autovalidator    OVS's --enable-autovalidator: every lookup
#                      implementation, the plugin's included, is checked
#                      against OVS's generic on every lookup
#   --plugin-default   the plugin's lookups are the defaults at start-up
#                      (priorities 3 and 2, above OVS's generic at 1);
#                      without it OVS's own defaults stand
#   --flavour F        a flavour of cmake/ovs-flavours.txt, which has its
#                      CFLAGS: sse42 (default; CRC32 hashing, OVS's
#                      recommended flags), debian (Debian's own "-g -O2",
#                      mhash), aarch64-crc and aarch64-debian (cross-built
#                      with Debian's gcc-aarch64-linux-gnu, configure
#                      --host; the plugin without jit_avx2).  The plugin is
#                      compiled for the same flavour: a mismatch cannot link.
#   --host HOST        the GNU triplet to build for, e.g. aarch64-linux-gnu:
#                      without --flavour, the first flavour of the table
#                      for HOST (aarch64-crc); with it, must be its host
#
# The series in patches/series is applied to a fresh tree; if a patch does
# not apply, nothing is built and the script says which one.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
prefix="" dpdk=no autovalidator=no plugin_default=no flavour="" want_host=""
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --dpdk) dpdk=yes; shift ;;
        --autovalidator) autovalidator=yes; shift ;;
        --plugin-default) plugin_default=yes; shift ;;
        --flavour) flavour=${2:?--flavour needs a flavour of cmake/ovs-flavours.txt}; shift 2 ;;
        --host) want_host=${2:?--host needs a GNU triplet}; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "build-ovs.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "build-ovs.sh: --prefix DIR is required" >&2; usage >&2; exit 2; }
source "$top/cmake/ovs-table.sh"
if [ -z "$flavour" ] && [ -n "$want_host" ]; then
    for f in $(ovs_flavour_names); do
        if [ "$(ovs_flavour "$f" host)" = "$want_host" ]; then flavour=$f; break; fi
    done
    [ -n "$flavour" ] || { echo "build-ovs.sh: no flavour in cmake/ovs-flavours.txt is for host '$want_host'" >&2; exit 2; }
fi
flavour=${flavour:-sse42}
cflags=$(ovs_flavour "$flavour" cflags) || exit 2
host=$(ovs_flavour "$flavour" host)
cross=$(ovs_cross_prefix "$host")
if [ -n "$want_host" ] && [ "$want_host" != "$host" ]; then
    echo "build-ovs.sh: flavour $flavour is for $host, not --host $want_host" >&2
    exit 2
fi
version=$(ovs_source version)
if [ -n "$cross" ] && [ "$dpdk" = yes ]; then
    echo "build-ovs.sh: --dpdk is not supported when cross-building for $host" >&2
    exit 2
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
jobs=$(nproc)
log="$prefix/build.log"
: >"$log"
step() { echo "build-ovs.sh: $*" >&2; }
fail() { echo "build-ovs.sh: $1 failed; the last lines of $log:" >&2; tail -25 "$log" >&2; exit 1; }

"$top/scripts/install-deps.sh"
if [ "$dpdk" = yes ]; then
    dpkg-query -W -f='${Status}' libdpdk-dev 2>/dev/null | grep -q "install ok installed" || {
        step "installing libdpdk-dev"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            libdpdk-dev pkg-config >/dev/null
    }
fi

# 1. The plugin library, for the same hash flavour.
step "building libovscls_plugin.a ($flavour)"
plugin_args=(-DOVSCLS_PLUGIN_ONLY=ON -DOVS_FLAVOUR="$flavour" -DCMAKE_BUILD_TYPE=Release)
[ -n "$cross" ] && plugin_args+=(-DCMAKE_TOOLCHAIN_FILE="$top/cmake/toolchain-$host.cmake")
cmake -S "$top" -B "$prefix/plugin-build" "${plugin_args[@]}" >>"$log" 2>&1 ||
    fail "configuring the plugin"
cmake --build "$prefix/plugin-build" -j"$jobs" --target ovscls_plugin >>"$log" 2>&1 ||
    fail "building the plugin"
plugin_lib="$prefix/plugin-build/libovscls_plugin.a"

# 2. A fresh tree from the tarball, checksum verified, with the series.
tarball=${OVS_TARBALL:-$(ovs_source tarball)}
[ "$(sha256sum "$tarball" | cut -d' ' -f1)" = "$(ovs_source sha256)" ] || {
    echo "build-ovs.sh: $tarball is not $(ovs_source origin) (sha256 differs)" >&2
    exit 1
}
step "unpacking OVS $version into $prefix/src"
rm -rf "$prefix/src" "$prefix/src.tmp"
mkdir -p "$prefix/src.tmp"
tar -xzf "$tarball" -C "$prefix/src.tmp"
mv "$prefix/src.tmp/openvswitch" "$prefix/src"
rmdir "$prefix/src.tmp"
cd "$prefix/src"
while read -r p; do
    case "$p" in "" | \#*) continue ;; esac
    if ! patch -p1 --dry-run --silent <"$here/$p" >>"$log" 2>&1; then
        echo "build-ovs.sh: patch $p does not apply to $tarball; nothing was built" >&2
        patch -p1 --dry-run <"$here/$p" >&2 || true
        exit 1
    fi
    patch -p1 --silent <"$here/$p" >>"$log" 2>&1
    step "applied $p"
done <"$here/series"

# 3. configure, build, install.
args=(--prefix="$prefix" --localstatedir="$prefix/var" --sysconfdir="$prefix/etc")
[ "$dpdk" = yes ] && args+=(--with-dpdk=shared)
# Cross: configure would find the build machine's OpenSSL and libcap-ng
# headers, which the cross linker has no libraries for.
[ -n "$cross" ] && args+=(--host="$host" --disable-ssl --disable-libcapng)
[ "$autovalidator" = yes ] && args+=(--enable-autovalidator)
cppflags=""
[ "$plugin_default" = yes ] && cppflags="-DDPCLS_PLUGIN_DEFAULT"
step "configuring: ${args[*]} CFLAGS=\"$cflags\" CPPFLAGS=\"$cppflags\""
./configure "${args[@]}" CFLAGS="$cflags" CPPFLAGS="$cppflags" \
    LIBS="$plugin_lib -lstdc++" >>"$log" 2>&1 || fail "configure"
step "building with $jobs jobs (a few minutes)"
make -j"$jobs" >>"$log" 2>&1 || fail "make"
make install >>"$log" 2>&1 || fail "make install"
# What was built, for scripts that reuse this prefix.
cat >"$prefix/build-info" <<INFO
flavour=$flavour
host=$host
dpdk=$dpdk
autovalidator=$autovalidator
plugin_default=$plugin_default
INFO
step "installed into $prefix: $(ls "$prefix/sbin" | tr '\n' ' ')"
