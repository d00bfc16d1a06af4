#!/usr/bin/env bash
# Configures and builds the project against one OVS flavour:
#   scripts/build.sh [--ovs RELEASE] FLAVOUR [cmake --build args, e.g. --target T]
# into build/FLAVOUR for the default release (3.1), build/FLAVOUR-ovsRELEASE
# for another (3.5, 4.0; cmake/ovs-sources.txt).
# FLAVOUR: a flavour of cmake/ovs-flavours.txt (sse42, debian, aarch64-crc,
# aarch64-debian), or tsan (sse42 under ThreadSanitizer), asan (this
# project's code under AddressSanitizer and UndefinedBehaviorSanitizer,
# against the sse42 OVS lib) or fuzz
# (clang 14: the libFuzzer targets of tests/fuzz/ under ASan and UBSan).  A
# flavour for another architecture is cross-built with its toolchain file
# (cmake/toolchain-HOST.cmake).
# The OVS lib itself is built once per flavour and cached outside the clone
# (cmake/build-ovs-lib.sh; $OVS_BUILD_CACHE, default /var/cache/ovs-dpcls-plugin).
set -euo pipefail
cd "$(dirname "$0")/.."
source cmake/ovs-table.sh
release=$(ovs_release_names | head -1)
if [ "${1:-}" = --ovs ]; then
    release=${2:?--ovs needs a release of cmake/ovs-sources.txt}
    ovs_source "$release" version >/dev/null || exit 2
    shift 2
fi
flavour=${1:?usage: scripts/build.sh [--ovs RELEASE] FLAVOUR|tsan|asan|fuzz [--target T]}
shift
dir=build/$flavour
[ "$release" = "$(ovs_release_names | head -1)" ] || dir=build/$flavour-ovs$release
case "$flavour" in
    tsan) args=(-DOVS_FLAVOUR=sse42 -DOVSCLS_TSAN=ON) ;;
    asan) args=(-DOVS_FLAVOUR=sse42 -DOVSCLS_ASAN=ON) ;;
    fuzz) args=(-DOVS_FLAVOUR=sse42 -DOVSCLS_FUZZ=ON -DCMAKE_C_COMPILER=clang-14
        -DCMAKE_CXX_COMPILER=clang++-14) ;;
    *)
        host=$(ovs_flavour "$flavour" host) || exit 2
        args=(-DOVS_FLAVOUR="$flavour")
        if [ -n "$(ovs_cross_prefix "$host")" ]; then
            args+=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-$host.cmake")
        fi
        ;;
esac
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOVS_RELEASE="$release" "${args[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)" "$@"
