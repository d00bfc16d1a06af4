#!/usr/bin/env bash
# Builds libovscls_plugin.a against a configured, built, patched Open
# vSwitch tree and links it into that tree's ovs-vswitchd.  Used by
# patches/build-ovs.sh and by the Debian packaging (packages/build-deb.sh's
# debian/rules), so both link the plugin the same way.
#
#   plugin/link-into-ovs.sh --ovs-build DIR [--ovs-source DIR] --flavour F
#                           [--plugin-default [--test-modes]] [--validate]
#                           [--toolchain FILE]
#
#   --ovs-build DIR    where OVS was configured and built (its Makefile,
#                      config.h and generated headers are there)
#   --ovs-source DIR   OVS's source tree, when configured out of it
#                      (default: the build directory)
#   --flavour F        the plugin's flavour of cmake/ovs-flavours.txt; its
#                      hash must be the one this OVS build hashes with
#                      (OVS refuses, with a log line, a plugin that hashes
#                      differently).  "auto": the flavour of the build's
#                      host whose hash the build's own compiler and flags
#                      select (OVS's lib/hash.h: CRC32C where the compiler
#                      targets SSE4.2 on x86-64 or CRC32 on aarch64, else
#                      mhash), for builds made elsewhere, e.g. Debian's
#   --plugin-default   the plugin's lookups above OVS's generic at start-up
#   --test-modes       (3.x, with --plugin-default) OVSCLS_PLUGIN_TEST_MODE=
#                      autovalidator in ovs-vswitchd's environment makes it
#                      an autovalidator build (plugin/ovs_registration.c):
#                      the project's test builds, not the packages
#   --validate         OVS 4.0 (no autovalidator): every lookup the plugin
#                      serves is checked against OVS's generic
#                      (plugin/lookup_validation.h)
#   --toolchain FILE   a CMake toolchain file (cross builds)
#
# The plugin is built in DIR/ovscls-plugin/.  Then automake's variable for
# ovs-vswitchd's link flags is extended in DIR's generated Makefile, to link
# the plugin whole (-Wl,--whole-archive: OVS refers to none of its symbols,
# its constructor registers it), so that every later make in DIR (make
# check, make install) links the same; ovs-vswitchd is relinked and checked
# with nm.  No other program gets the plugin.  Nothing in OVS's sources is
# changed.  CC, CXX, CFLAGS, CXXFLAGS and LDFLAGS from the environment reach
# CMake as usual (Debian's hardening flags, in a package build).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="" source="" flavour="" plugin_default=OFF validate=OFF test_modes=OFF toolchain=""
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --ovs-build) build=${2:?--ovs-build needs a directory}; shift 2 ;;
        --ovs-source) source=${2:?--ovs-source needs a directory}; shift 2 ;;
        --flavour) flavour=${2:?--flavour needs a flavour}; shift 2 ;;
        --plugin-default) plugin_default=ON; shift ;;
        --validate) validate=ON; shift ;;
        --test-modes) test_modes=ON; shift ;;
        --toolchain) toolchain=${2:?--toolchain needs a file}; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "link-into-ovs.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$build" ] && [ -n "$flavour" ] ||
    { echo "link-into-ovs.sh: --ovs-build and --flavour are required" >&2; usage >&2; exit 2; }
build=$(cd "$build" && pwd)
source=$(cd "${source:-$build}" && pwd)
[ -f "$build/Makefile" ] && [ -f "$build/config.h" ] ||
    { echo "link-into-ovs.sh: $build is not a configured OVS build (no Makefile, config.h)" >&2; exit 1; }
step() { echo "link-into-ovs.sh: $*" >&2; }

if [ "$flavour" = auto ]; then
    source "$top/cmake/ovs-table.sh"
    # make_var NAME: the value make gives NAME in the build (CC is an
    # expression in OVS's Makefile: gcc, or cgcc under sparse).
    make_var() {
        make -s --no-print-directory -C "$build" -f Makefile \
            -f <(printf 'ovscls-print-%%:\n\t@echo $(%s)\n' '$*') "ovscls-print-$1"
    }
    cc=$(make_var CC)
    # shellcheck disable=SC2046 # the flags are words
    macros=$($cc $(make_var CPPFLAGS) $(make_var CFLAGS) $(make_var OVS_CFLAGS) -dM -E -x c /dev/null) ||
        { echo "link-into-ovs.sh: cannot run $cc with the build's flags" >&2; exit 1; }
    host=$($cc -dumpmachine | sed -E 's/-(pc|unknown)-/-/')
    hash=mhash
    case "$host" in
        x86_64-*) grep -q '^#define __SSE4_2__ ' <<<"$macros" && hash=crc32c ;;
        aarch64-*) grep -q '^#define __ARM_FEATURE_CRC32 ' <<<"$macros" && hash=crc32c ;;
    esac
    flavour=""
    for f in $(ovs_flavour_names); do
        case "$f" in *-tsan) continue ;; esac
        if [ "$(ovs_flavour "$f" host)" = "$host" ] && [ "$(ovs_flavour "$f" hash)" = "$hash" ]; then
            flavour=$f
            break
        fi
    done
    [ -n "$flavour" ] ||
        { echo "link-into-ovs.sh: no flavour of cmake/ovs-flavours.txt is for $host with $hash" >&2; exit 1; }
    step "$build hashes with $hash on $host: flavour $flavour"
fi

# The link line this script extends; a tree whose Makefile reads otherwise
# links ovs-vswitchd differently (see its vswitchd/automake.mk).
ldflags_line='vswitchd_ovs_vswitchd_LDFLAGS = $(AM_LDFLAGS) $(DPDK_vswitchd_LDFLAGS)'
plugin_build=$build/ovscls-plugin
plugin_lib=$plugin_build/libovscls_plugin.a
if ! grep -qxF "$ldflags_line" "$build/Makefile" &&
    ! grep -q "^vswitchd_ovs_vswitchd_LDFLAGS = .*--whole-archive,$plugin_lib," "$build/Makefile"; then
    echo "link-into-ovs.sh: $build/Makefile links ovs-vswitchd differently; see vswitchd/automake.mk" >&2
    exit 1
fi

# OVS_CFLAGS: what configure found, e.g. DPDK's include paths and
# rte_config.h, which OVS's headers need (lib/dpdk.h).
cmake_args=(-DOVSCLS_PLUGIN_ONLY=ON -DOVS_FLAVOUR="$flavour" -DCMAKE_BUILD_TYPE=Release
    -DOVSCLS_OVS_TREE="$source" -DOVSCLS_OVS_BUILD="$build"
    -DOVSCLS_OVS_CFLAGS="$(sed -n 's/^OVS_CFLAGS = //p' "$build/Makefile")"
    -DOVSCLS_PLUGIN_DEFAULT="$plugin_default" -DOVSCLS_PLUGIN_VALIDATE="$validate"
    -DOVSCLS_PLUGIN_TEST_MODES="$test_modes")
[ -z "$toolchain" ] || cmake_args+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain")
command -v ccache >/dev/null && cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
    -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# CMake reads no CPPFLAGS (Debian's hardening puts -D_FORTIFY_SOURCE=2
# there): hand them over as debhelper does for CMake projects.
if [ -n "${CPPFLAGS:-}" ]; then
    export CFLAGS="${CFLAGS:-} $CPPFLAGS" CXXFLAGS="${CXXFLAGS:-} $CPPFLAGS"
fi
# A plugin build of another checkout (the tree is cached, the checkouts
# come and go): CMake keeps one source folder per build folder.
if [ -f "$plugin_build/CMakeCache.txt" ] &&
    ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$top" "$plugin_build/CMakeCache.txt"; then
    step "the plugin build in $plugin_build is of another checkout: building it anew"
    rm -rf "$plugin_build"
fi
step "building libovscls_plugin.a ($flavour, plugin default: $plugin_default, validate: $validate) in $plugin_build"
cmake -S "$top" -B "$plugin_build" "${cmake_args[@]}" >"$build/ovscls-plugin.log" 2>&1 ||
    { tail -25 "$build/ovscls-plugin.log" >&2; echo "link-into-ovs.sh: configuring the plugin failed" >&2; exit 1; }
cmake --build "$plugin_build" -j"$(nproc)" --target ovscls_plugin >>"$build/ovscls-plugin.log" 2>&1 ||
    { tail -25 "$build/ovscls-plugin.log" >&2; echo "link-into-ovs.sh: building the plugin failed" >&2; exit 1; }

sed -i "s|^vswitchd_ovs_vswitchd_LDFLAGS = .*|$ldflags_line -Wl,--whole-archive,$plugin_lib,--no-whole-archive -lstdc++|" \
    "$build/Makefile"
step "linking $build/vswitchd/ovs-vswitchd with the plugin"
rm -f "$build/vswitchd/ovs-vswitchd"
make -C "$build" -j"$(nproc)" vswitchd/ovs-vswitchd >>"$build/ovscls-plugin.log" 2>&1 ||
    { tail -25 "$build/ovscls-plugin.log" >&2; echo "link-into-ovs.sh: linking ovs-vswitchd failed" >&2; exit 1; }
# libtool may leave the real binary in vswitchd/.libs (a shared build).
binary=$build/vswitchd/ovs-vswitchd
[ -f "$build/vswitchd/.libs/ovs-vswitchd" ] && binary=$build/vswitchd/.libs/ovs-vswitchd
# (binutils' nm reads the symbols of a cross-built ELF file too.)
[ "$(nm "$binary" | grep -c ' ovscls_plugin_hash_blocks$')" = 1 ] ||
    { echo "link-into-ovs.sh: $binary was linked without the plugin" >&2; exit 1; }
step "ovs-vswitchd has the plugin"
