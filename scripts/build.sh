#!/usr/bin/env bash
# Configures and builds the project against one OVS flavour, through the
# CMake presets (CMakePresets.json: one per flavour, which says its cache
# variables and, for aarch64, its toolchain file):
#
#   scripts/build.sh [--ovs RELEASE] FLAVOUR [cmake --build args, e.g. --target T]
#
# into build/FLAVOUR for the default release (3.1), build/FLAVOUR-ovsRELEASE
# for another (3.5, 4.0; cmake/ovs-sources.txt).  FLAVOUR: a configure
# preset (cmake --list-presets): sse42, debian, aarch64-crc, aarch64-debian
# (cmake/ovs-flavours.txt has their flags), tsan (sse42 under
# ThreadSanitizer), asan (this project's code under AddressSanitizer and
# UndefinedBehaviorSanitizer, against the sse42 OVS lib) or fuzz (clang 14:
# the libFuzzer targets of tests/fuzz/).  The same by hand:
#
#   cmake --preset sse42 && cmake --build --preset sse42 && ctest --preset sse42
#
# OVS itself is built once and cached outside the clone ($OVS_BUILD_CACHE,
# default /var/cache/ovs-dpcls-plugin): for sse42 (and asan, fuzz), the tree
# of the release's patched ovs-vswitchd (patches/cached-build.sh --tree),
# for the other flavours OVS's lib alone (cmake/build-ovs-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source cmake/ovs-table.sh
default_release=$(ovs_release_names | head -1)
release=$default_release
if [ "${1:-}" = --ovs ]; then
    release=${2:?--ovs needs a release of cmake/ovs-sources.txt}
    ovs_source "$release" version >/dev/null || exit 2
    shift 2
fi
flavour=${1:?usage: scripts/build.sh [--ovs RELEASE] FLAVOUR [--target T]}
shift
presets=$(cmake --list-presets 2>/dev/null | sed -n 's/^ *"\([^"]*\)".*/\1/p')
grep -qxF "$flavour" <<<"$presets" ||
    { echo "scripts/build.sh: no preset '$flavour'; CMakePresets.json has: $(echo $presets)" >&2; exit 2; }
preset=$flavour
[ "$release" = "$default_release" ] || preset=$flavour-ovs$release
if grep -qxF "$preset" <<<"$presets"; then
    cmake --preset "$preset" >/dev/null
    cmake --build --preset "$preset" -j"$(nproc)" "$@"
else
    # A flavour and release without a preset of their own: the flavour's,
    # with the release and the folder given.
    cmake --preset "$flavour" -B "build/$flavour-ovs$release" -DOVS_RELEASE="$release" >/dev/null
    cmake --build "build/$flavour-ovs$release" -j"$(nproc)" "$@"
fi
