#!/usr/bin/env bash
# Builds Open vSwitch's lib/ (libopenvswitch.a, and libopenvswitchavx512.a
# on x86-64) from a release's source in cmake/ovs-sources.txt, in one
# flavour of cmake/ovs-flavours.txt, and caches the configured tree outside
# the clone so later builds and CI reuse it.
#
#   build-ovs-lib.sh [--ovs RELEASE] FLAVOUR         build (or find) it;
#                                                    prints the tree's path
#                                                    on its last line
#   build-ovs-lib.sh --dir [--ovs RELEASE] FLAVOUR   only print where it is
#                                                    (or will be)
#
# RELEASE: 3.1 (the default), 3.5 or 4.0 (cmake/ovs-sources.txt).
#
# Flavours (the table has the flags): sse42 (CRC32 hash, avx512_gather
# registered), debian (Debian's own flags, mhash), sse42-tsan (sse42 under
# ThreadSanitizer: TSan sees the ordering cmap, pvector and OVS-RCU give only
# when OVS's lib is instrumented too), aarch64-crc and aarch64-debian
# (cross-built with Debian's gcc-aarch64-linux-gnu).
#
# The cache key is the source's sha256, the flags and the configure
# arguments, so a changed source or flag set never reuses a stale build.
# Also writes ovs-libs.txt in the tree: the link flags OVS's own programs
# use (its Makefile's LIBS), which the project links with as a response file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/ovs-table.sh"

only_dir=no
release=$(ovs_release_names | head -1)
while [ $# -gt 1 ]; do
    case "$1" in
        --dir) only_dir=yes; shift ;;
        --ovs) release=${2:?--ovs needs a release}; shift 2 ;;
        *) break ;;
    esac
done
flavour=${1:?usage: build-ovs-lib.sh [--dir] [--ovs RELEASE] FLAVOUR}
cflags=$(ovs_flavour "$flavour" cflags)
host=$(ovs_flavour "$flavour" host)
cross=$(ovs_cross_prefix "$host")
version=$(ovs_source "$release" version)
expected_sha256=$(ovs_source "$release" sha256)
cache_root=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}

# Features the classifier does not need are switched off.  What configure
# still detects (libunbound, libunwind when installed) is linked through
# the LIBS line of OVS's own Makefile, saved below.
configure_args=(--disable-ssl --disable-libcapng --without-dpdk)
[ -n "$cross" ] && configure_args+=(--host="$host")
key=$(printf '%s\n%s\n%s\n' "$expected_sha256" "$cflags" "${configure_args[*]}" |
    sha256sum | cut -c1-16)
dir="$cache_root/ovs-$version-$flavour-$key"
if [ "$only_dir" = yes ]; then
    echo "$dir/src"
    exit 0
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/.lock-$flavour"
flock 9  # one build per flavour at a time; the second finds it built
if [ -f "$dir/.built" ]; then
    # ovs-libs.txt is CMake's custom-command output: a build directory whose
    # rule changed may have deleted it.  Written again from the Makefile.
    [ -s "$dir/src/ovs-libs.txt" ] || sed -n 's/^LIBS = //p' "$dir/src/Makefile" >"$dir/src/ovs-libs.txt"
    echo "$dir/src"
    exit 0
fi
if [ -n "$cross" ] && ! command -v "${cross}gcc" >/dev/null; then
    echo "build-ovs-lib.sh: flavour $flavour needs ${cross}gcc (apt-get install gcc-$host)" >&2
    exit 1
fi

echo "build-ovs-lib.sh: building OVS $version lib ($flavour: $cflags${cross:+, for $host}) in $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
ovs_source_unpack "$release" "$dir/src" || { echo "build-ovs-lib.sh: no OVS $version source" >&2; exit 1; }
cd "$dir/src"
ldflags=$(case $cflags in *-fsanitize=thread*) echo -fsanitize=thread ;; esac)
# Through the ccache patches/build-ovs.sh uses (cmake/ccache.sh): its build
# of the same release and flags compiles most of lib/ as this one does.
cc=${cross}gcc
if command -v ccache >/dev/null; then
    source "$here/ccache.sh"
    ccache_setup "$dir/ccache-stats.log" "$dir"
    cc="ccache $cc"
fi
./configure CC="$cc" CFLAGS="$cflags" LDFLAGS="$ldflags" "${configure_args[@]}" >"$dir/configure.log" 2>&1 ||
    { tail -20 "$dir/configure.log" >&2; exit 1; }
jobs=$(nproc)
# Called by CMake's make as a build step, this script sees that make's
# MAKEFLAGS, whose jobserver it is not handed: OVS's make then warns
# "jobserver unavailable: using -j1" and compiles on one core.  It runs its
# own make with its own -j instead.
unset MAKEFLAGS MFLAGS MAKELEVEL
# lib/ alone needs automake's BUILT_SOURCES (generated headers) first; a
# plain `make lib/libopenvswitch.la` does not build them.
built_sources=$(printf 'print-built-sources:\n\t@echo $(BUILT_SOURCES)\n' |
    make -s -f Makefile -f - print-built-sources)
libs=(lib/libopenvswitch.la)
# OVS builds its AVX512 lookups as a library of their own on x86-64 only.
if grep -q '^am__append_[0-9]* = lib/libopenvswitchavx512.la' Makefile; then
    libs+=(lib/libopenvswitchavx512.la)
fi
# shellcheck disable=SC2086 # word splitting of the list is intended
make -j"$jobs" $built_sources >"$dir/make.log" 2>&1 &&
    make -j"$jobs" "${libs[@]}" >>"$dir/make.log" 2>&1 ||
    { tail -30 "$dir/make.log" >&2; exit 1; }
# The link flags OVS's own programs use, for CMake to pass to the linker.
sed -n 's/^LIBS = //p' Makefile >"$dir/src/ovs-libs.txt"
[ "$cc" = "${cross}gcc" ] || echo "build-ovs-lib.sh: ccache: $(ccache_stats "$dir/ccache-stats.log")" >&2
touch "$dir/.built"
echo "$dir/src"
