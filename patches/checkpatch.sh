#!/usr/bin/env bash
# Runs Open vSwitch's own utilities/checkpatch.py on every patch of every
# series, each series with the checkpatch.py of its release (the pinned
# source of cmake/ovs-sources.txt), and prints its output per patch.
#
#   patches/checkpatch.sh [RELEASE...]     default: every series-RELEASE
#
# Exits non-zero unless checkpatch.py finds no problem (0 errors, 0
# warnings) in every patch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
source "$top/cmake/ovs-table.sh"
releases=("$@")
[ ${#releases[@]} -gt 0 ] ||
    mapfile -t releases < <(ls "$here" | sed -n 's/^series-\([0-9]*\.[0-9]*\)$/\1/p')
bad=0 checked=0
for release in "${releases[@]}"; do
    [ -f "$here/series-$release" ] || { echo "checkpatch.sh: no patches/series-$release" >&2; exit 2; }
    tree=$(mktemp -d)
    ovs_source_unpack "$release" "$tree/ovs" >/dev/null
    echo "== series-$release, with OVS $(ovs_source "$release" version)'s utilities/checkpatch.py"
    while read -r p; do
        case "$p" in "" | \#*) continue ;; esac
        out=$(cd "$tree/ovs" && python3 utilities/checkpatch.py "$here/$p" 2>&1) || true
        echo "$p:"
        sed 's/^/    /' <<<"$out"
        checked=$((checked + 1))
        grep -q "no obvious problems found" <<<"$out" || bad=$((bad + 1))
    done <"$here/series-$release"
    rm -rf "$tree"
done
echo "checkpatch.sh: $checked patches checked, $bad with errors or warnings"
[ "$bad" -eq 0 ]
