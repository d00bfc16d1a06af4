#!/usr/bin/env bash
# Applies a release line's series one patch at a time to the pinned
# release and, after each, builds OVS and runs the testsuite's dpcls tests
# (tests/dpcls.at, which the series adds and grows): each patch is one
# change a reviewer can apply and test on its own, as OVS asks of a series.
#
#   patches/check-each-patch.sh RELEASE [FIRST [LAST]]
#
# RELEASE: a line with a patches/series-RELEASE (3.1, 3.5, 4.0).  FIRST and
# LAST: the patches to check, by number (default: all; the ones before
# FIRST are applied and built once, unchecked).  The release's source is
# the pinned one (cmake/ovs-sources.txt), configured once with the sse42
# flavour's flags, built with ccache after each patch (make's own
# dependencies rebuild what a patch touched: boot.sh runs again when a
# patch changes the build's Makefile.am files).  Works in a scratch folder
# of its own under $OVS_BUILD_CACHE (default /var/cache/ovs-dpcls-plugin),
# removed at exit unless a patch failed (its logs are kept there, and
# named).  Prints "ok - N/M SUBJECT (dpcls tests: K)" or "not ok - ..."
# per patch, then "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
source "$top/cmake/ovs-table.sh"
usage="usage: check-each-patch.sh RELEASE [FIRST [LAST]]"
release=${1:?$usage}
[ -f "$here/series-$release" ] || { echo "check-each-patch.sh: no patches/series-$release" >&2; exit 2; }
mapfile -t series < <(grep -v -e '^#' -e '^$' "$here/series-$release")
first=${2:-1}
last=${3:-${#series[@]}}
[[ $first =~ ^[0-9]+$ && $last =~ ^[0-9]+$ ]] && [ "$first" -ge 1 ] && [ "$first" -le "$last" ] &&
    [ "$last" -le ${#series[@]} ] ||
    { echo "check-each-patch.sh: FIRST and LAST within 1..${#series[@]}" >&2; exit 2; }
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
mkdir -p "$cache"
work=$(mktemp -d "$cache/each-patch-$release.XXXXXX")
keep=no
trap '[ "$keep" = yes ] || rm -rf "$work"' EXIT
jobs=$(nproc)
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
unset MAKEFLAGS MFLAGS MAKELEVEL
export SPHINXBUILD=none # OVS's docs: the series changes no document

passed=0 failed=0
ovs_source_unpack "$release" "$work/ovs" >/dev/null || { echo "check-each-patch.sh: no OVS $release source" >&2; exit 1; }
cd "$work/ovs" || exit 1
# build STAGE: configures once (boot.sh first where a patch changed the
# build), then makes the programs and the testsuite.  Output to $work/STAGE.log.
configured=no
build() {
    local log=$work/$1.log
    if [ "$configured" = no ] || [ -n "${reboot:-}" ]; then
        { ./boot.sh && ./configure CC="ccache gcc" CFLAGS="-g -O2 -msse4.2 -mpopcnt"; } >"$log" 2>&1 ||
            return 1
        configured=yes reboot=""
    fi
    make -j"$jobs" >>"$log" 2>&1 && make -j"$jobs" tests/testsuite >>"$log" 2>&1
}

n=0
for p in "${series[@]}"; do
    n=$((n + 1))
    subject=$(sed -n 's/^Subject: \[PATCH[^]]*\] //p' "$here/$p" | head -1)
    if ! patch -p1 --silent --force --no-backup-if-mismatch <"$here/$p" >"$work/apply-$n.log" 2>&1; then
        not_applied="$n/${#series[@]} $subject (does not apply: $work/apply-$n.log)"
        echo "not ok - $not_applied"
        failed=$((failed + 1)) keep=yes
        break
    fi
    grep -q '^diff --git a/\(.*/\)\{0,1\}\(automake\.mk\|Makefile\.am\|configure\.ac\) ' "$here/$p" && reboot=yes
    [ "$n" -lt "$first" ] && continue
    [ "$n" -gt "$last" ] && break
    if ! build "build-$n"; then
        echo "not ok - $n/${#series[@]} $subject (does not build: $work/build-$n.log)"
        failed=$((failed + 1)) keep=yes
        continue
    fi
    # The dpcls tests (AT_SETUP titles "dpcls - ..."), by keyword; none
    # before the patch that adds tests/dpcls.at.
    tests=$(tests/testsuite -l 2>/dev/null | awk '/^ *[0-9]+: dpcls\.at:/ { sub(":", "", $1); print $1 }' | tr '\n' ' ')
    if [ -z "$tests" ]; then
        echo "ok - $n/${#series[@]} $subject (builds; no dpcls test yet)"
        passed=$((passed + 1))
        continue
    fi
    # shellcheck disable=SC2086 # the test numbers are separate words
    if make check TESTSUITEFLAGS="-j$jobs $tests" >"$work/check-$n.log" 2>&1; then
        echo "ok - $n/${#series[@]} $subject (dpcls tests: $(wc -w <<<"$tests"))"
        passed=$((passed + 1))
    else
        echo "not ok - $n/${#series[@]} $subject (dpcls tests fail: $work/check-$n.log)"
        grep -E '^ *[0-9]+: .*FAILED' "$work/check-$n.log" | sed 's/^/    /'
        failed=$((failed + 1)) keep=yes
    fi
done
[ "$keep" = no ] || echo "check-each-patch.sh: logs kept in $work"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
