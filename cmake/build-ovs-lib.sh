#!/usr/bin/env bash
# Build Open vSwitch 3.1.0's lib/ (libopenvswitch.a, libopenvswitchavx512.a)
# from Debian's openvswitch-source tarball, in one of two flavours, and cache
# the configured tree outside the clone so later builds and CI reuse it.
#
#   build-ovs-lib.sh FLAVOUR        FLAVOUR = sse42 | debian | sse42-tsan
#
# sse42:  CFLAGS="-g -O2 -msse4.2 -mpopcnt" (OVS's recommended flags: CRC32
#         hash, avx512_gather registered).
# debian: CFLAGS="-g -O2" (Debian's own packages: murmur-style hash, no
#         avx512_gather).
# sse42-tsan: sse42 built with -fsanitize=thread, for the concurrency test:
#         ThreadSanitizer only sees the ordering cmap, pvector and OVS-RCU
#         give (their atomics) when OVS's lib is instrumented too.
#
# Prints the path of the built tree on its last line.  The cache key is the
# tarball's sha256 and the flags, so a changed tarball or flag set never
# reuses a stale build.
set -euo pipefail

flavour=${1:?usage: build-ovs-lib.sh sse42|debian}
tarball=${OVS_TARBALL:-/usr/src/openvswitch/openvswitch.tar.gz}
# openvswitch-source 3.1.0-2+deb12u1 (Debian 12).
expected_sha256=82dde6737921b63b284ad8399f95c7f1de94e1b96b2036dcf4a78c9f969ab03f
cache_root=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}

case "$flavour" in
    sse42) cflags="-g -O2 -msse4.2 -mpopcnt" ;;
    debian) cflags="-g -O2" ;;
    sse42-tsan) cflags="-g -O1 -msse4.2 -mpopcnt -fsanitize=thread" ;;
    *) echo "build-ovs-lib.sh: unknown flavour '$flavour' (want sse42, debian or sse42-tsan)" >&2; exit 2 ;;
esac
# Features the classifier does not need are switched off.  What configure
# still detects (libunbound, libunwind when installed) is linked through
# the LIBS line of OVS's own Makefile, saved below as ovs-libs.txt.
configure_args=(--disable-ssl --disable-libcapng --without-dpdk)

if [ ! -r "$tarball" ]; then
    echo "build-ovs-lib.sh: $tarball not found; install Debian's openvswitch-source" >&2
    exit 1
fi
actual_sha256=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$actual_sha256" != "$expected_sha256" ]; then
    echo "build-ovs-lib.sh: $tarball has sha256 $actual_sha256," >&2
    echo "  expected $expected_sha256 (openvswitch-source 3.1.0-2+deb12u1)" >&2
    exit 1
fi

key=$(printf '%s\n%s\n%s\n' "$actual_sha256" "$cflags" "${configure_args[*]}" | sha256sum | cut -c1-16)
dir="$cache_root/ovs-3.1.0-$flavour-$key"
if [ -f "$dir/.built" ]; then
    echo "$dir/src"
    exit 0
fi

echo "build-ovs-lib.sh: building OVS 3.1.0 lib ($flavour: $cflags) in $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
tar -xzf "$tarball" -C "$dir"
mv "$dir/openvswitch" "$dir/src"
cd "$dir/src"
./configure CFLAGS="$cflags" LDFLAGS="$(case $flavour in *tsan) echo -fsanitize=thread ;; esac)" "${configure_args[@]}" >"$dir/configure.log" 2>&1 ||
    { tail -20 "$dir/configure.log" >&2; exit 1; }
jobs=$(nproc)
# lib/ alone needs automake's BUILT_SOURCES (generated headers) first; a
# plain `make lib/libopenvswitch.la` does not build them.
built_sources=$(printf 'print-built-sources:\n\t@echo $(BUILT_SOURCES)\n' |
    make -s -f Makefile -f - print-built-sources)
# shellcheck disable=SC2086 # word splitting of the list is intended
make -j"$jobs" $built_sources >"$dir/make.log" 2>&1 &&
    make -j"$jobs" lib/libopenvswitch.la lib/libopenvswitchavx512.la >>"$dir/make.log" 2>&1 ||
    { tail -30 "$dir/make.log" >&2; exit 1; }
# The link flags OVS's own programs use, for CMake to read.
sed -n 's/^LIBS = //p' Makefile >"$dir/src/ovs-libs.txt"
touch "$dir/.built"
echo "$dir/src"
