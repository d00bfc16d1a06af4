#!/usr/bin/env bash
# Builds, in the background and at the lowest CPU priority, what the late
# phases of tests/run.sh need, in the order they need it:
#
#   tests/prebuild.sh PARENT_PID BUILD...
#
# BUILD, in the order given: ovs-4.0 (4.0's validate build, the gate's),
# ovs-3.5 (the patched ovs-vswitchd of OVS 3.5: one build serves its
# plugin-default and autovalidator runs), debian-12 and debian-13 (the
# Debian packages, packages/build-deb.sh), aarch64 (the aarch64
# ovs-vswitchd).  tests/run.sh starts it once OVS 3.1's build is done, as
# 3.1's testsuite starts, with the builds its selected labels need.  Why:
# on 2 cores much of a cold tests/run.sh is builds, and OVS's testsuite
# keeps about a third of the CPU busy (73 tests at -j2: 160 CPU-seconds in
# 247 s); built beside it at nice 19, the builds take what the tests leave.
# Beside CPU-bound phases they do not pay: on 2026-12-04, started at the
# beginning, this made the unit-test phases take 1.7x as long (2636 s
# against 1570 s) and saved about as much in the late phases
# (docs/results/2026-12-02-test-suite-times.md).  Every build is cached by its key and locked, so the
# phase that needs one calls the same script, waits if it is still being
# built here, and then finds it: the phases stay the authority (a build
# that failed here is built again there, and fails there, in the open).
#
# Prints one line per build ("prebuild: NAME: built in N s" or "... failed
# after N s"); tests/run.sh prints them with its time table.  Stops before
# the next build once PARENT_PID (tests/run.sh) is gone.
set -uo pipefail
cd "$(dirname "$0")/.."
parent=${1:?usage: tests/prebuild.sh PARENT_PID BUILD...}
shift
# tests/run.sh starts this in a session of its own, and Linux's autogroup
# scheduling shares the CPU between sessions as equals whatever their
# processes' nice: the session's own nice is what makes it yield.
if [ -w /proc/self/autogroup ]; then
    echo 19 >/proc/self/autogroup 2>/dev/null || true
fi

build() {  # build NAME COMMAND...
    local name=$1 start=$SECONDS
    shift
    if ! kill -0 "$parent" 2>/dev/null; then
        echo "prebuild: tests/run.sh ($parent) is gone: stopping before $name"
        exit 0
    fi
    if "$@" >/dev/null 2>&1; then
        echo "prebuild: $name: done in $((SECONDS - start)) s"
    else
        echo "prebuild: $name: failed after $((SECONDS - start)) s (its phase builds it again)"
    fi
}

for wanted in "$@"; do
    case "$wanted" in
        ovs-4.0) build "OVS 4.0 validate" patches/cached-build.sh --ovs 4.0 --validate ;;
        ovs-3.5) build "OVS 3.5 plugin-default" patches/cached-build.sh --ovs 3.5 --plugin-default ;;
        debian-12) build "Debian 12 packages" packages/build-deb.sh --release 12 ;;
        debian-13) build "Debian 13 packages" packages/build-deb.sh --release 13 ;;
        aarch64) build "OVS 3.1 aarch64 plugin-default" patches/cached-build.sh --host aarch64-linux-gnu --plugin-default ;;
        *) echo "prebuild: unknown build '$wanted'"; exit 2 ;;
    esac
done
