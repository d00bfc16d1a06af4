#!/usr/bin/env bash
# The 3.x series is kept once, as 3.1's; every 3.x release line's files are
# made from it by patches/port-series.sh.  Checks, for each pinned 3.x
# release (3.1, 3.5), that porting the series again gives exactly the
# committed files (patches/RELEASE/, patches/series-RELEASE): no one edited
# a ported file by hand, and the source applies to the release.  Any other
# 3.x trees named in OVS_SERIES_SOURCES (space-separated tarballs or
# directories, e.g. v3.3.x and v3.7.x) are checked to take the series.
#
#   tests/series_port_test.sh
#
# Prints "ok - ..." or "not ok - ..." per check, what it did not check and
# why, then "N passed, N failed".  Writes only under its own mktemp folder.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
source "$top/cmake/ovs-table.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1"; failed=$((failed + 1)); }

for release in $(ls "$top/patches" | sed -n 's/^series-\(3\.[0-9]*\)$/\1/p'); do
    if ! ovs_source "$release" version >/dev/null 2>&1; then
        not_ok "series-$release: no pinned OVS $release in cmake/ovs-sources.txt to port it to"
        continue
    fi
    out=$work/$release
    mkdir -p "$out"
    if ! "$top/patches/port-series.sh" "$release" "$out" >"$work/port-$release.log" 2>&1; then
        not_ok "series-3.1 ported to OVS $release: $(tail -5 "$work/port-$release.log" | tr '\n' ' ')"
        continue
    fi
    if diff -r "$top/patches/$release" "$out/$release" >"$work/diff-$release" &&
        diff "$top/patches/series-$release" "$out/series-$release" >>"$work/diff-$release"; then
        ok "series-3.1 ported to OVS $(ovs_source "$release" version) gives the committed patches/$release ($(wc -l <"$out/series-$release") patches and the cover letter)"
    else
        not_ok "series-3.1 ported to OVS $release differs from the committed patches/$release (run patches/port-series.sh $release):"
        head -40 "$work/diff-$release" | sed 's/^/    /'
    fi
done

checked_extra=""
for src in ${OVS_SERIES_SOURCES:-}; do
    if out=$("$top/patches/port-series.sh" --ovs-source "$src" 2>&1); then
        ok "$(tail -1 <<<"$out") ($src)"
    else
        not_ok "series-3.1 on $src: $(tail -5 <<<"$out" | tr '\n' ' ')"
    fi
    checked_extra="$checked_extra $src"
done
[ -n "$checked_extra" ] ||
    echo "not checked: v3.3.x and v3.7.x (and the other 3.x releases): no Debian suite ships their source; set OVS_SERIES_SOURCES to their tarballs or trees to check them"
echo "series_port_test: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
