#!/usr/bin/env bash
# Configures and builds the project against one OVS flavour:
#   scripts/build.sh FLAVOUR [cmake --build args, e.g. --target T]   -> build/FLAVOUR
# FLAVOUR: sse42 (OVS built with -msse4.2 -mpopcnt, CRC32 hash), debian
# (Debian's flags, mhash), tsan (sse42 under ThreadSanitizer) or asan (this
# project's code under AddressSanitizer, against the sse42 OVS lib).
# The OVS lib itself is built once per flavour and cached outside the clone
# (cmake/build-ovs-lib.sh; $OVS_BUILD_CACHE, default /var/cache/ovs-dpcls-plugin).
set -euo pipefail
cd "$(dirname "$0")/.."
flavour=${1:?usage: scripts/build.sh sse42|debian|tsan|asan [--target T]}
shift
case "$flavour" in
    sse42 | debian) args=(-DOVS_FLAVOUR="$flavour") ;;
    tsan) args=(-DOVS_FLAVOUR=sse42 -DOVSCLS_TSAN=ON) ;;
    asan) args=(-DOVS_FLAVOUR=sse42 -DOVSCLS_ASAN=ON) ;;
    *) echo "build.sh: unknown flavour '$flavour' (want sse42, debian, tsan or asan)" >&2; exit 2 ;;
esac
cmake -S . -B "build/$flavour" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${args[@]}" >/dev/null
cmake --build "build/$flavour" -j"$(nproc)" "$@"
