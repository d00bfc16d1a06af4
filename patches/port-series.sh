#!/usr/bin/env bash
# Makes a 3.x release line's series from the one 3.x series kept by hand,
# 3.1's (patches/series-3.1): applies it, patch by patch, to the release's
# source and exports what it committed with export-series.sh.
#
#   patches/port-series.sh RELEASE [OUT]       a pinned 3.x release
#   patches/port-series.sh --ovs-source SRC [OUT]
#
# RELEASE: a 3.x line of cmake/ovs-sources.txt (3.1, 3.5): writes
# OUT/RELEASE/ and OUT/series-RELEASE (OUT: default patches/, i.e. the
# committed files; tests/series_port_test.sh writes elsewhere and
# compares).  SRC: any other 3.x tree (a release tarball or a directory,
# e.g. v3.3.x or v3.7.x): checks that the series applies to it, and
# exports to OUT/X.Y/ when OUT is given.
#
# The patches are the same changes on every 3.x tree; only NEWS differs
# where the trees' NEWS do.  A patch's NEWS hunks are rewritten for the
# release: its "Post-vX.Y.Z" heading, and the lines of the release's own
# NEWS that the hunk shows as context below it (the hunks stay at the top
# of the file, so their line numbers do not change).  Every other hunk
# must apply (git am -C1: at an offset, one line of context matching at
# each end, as the trees' context differs here and there); the first that
# does not is named and nothing is written.  The export is deterministic
# (see export-series.sh): porting the same series again gives the same
# bytes.
#
# Works in a folder of its own (mktemp), removed at exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
source "$top/cmake/ovs-table.sh"
usage="usage: port-series.sh RELEASE [OUT] | --ovs-source SRC [OUT]"
source_line=3.1 # the 3.x series kept by hand
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ "${1:-}" = --ovs-source ]; then
    src=${2:?$usage}
    out=${3:-}
    if [ -d "$src" ]; then
        cp -a "$src/." "$work/ovs"
    elif [ -f "$src" ]; then
        mkdir "$work/unpack" && tar -xf "$src" -C "$work/unpack"
        mv "$work/unpack"/*/ "$work/ovs"
    else
        echo "port-series.sh: $src is neither a tree nor a tarball" >&2
        exit 2
    fi
    rm -rf "$work/ovs/.git"
    version=$(sed -n 's/^AC_INIT(openvswitch, *\([0-9][0-9.]*\).*/\1/p' "$work/ovs/configure.ac" 2>/dev/null || true)
    [[ $version =~ ^3\.[0-9]+\.[0-9]+$ ]] ||
        { echo "port-series.sh: $src is no Open vSwitch 3.x tree (configure.ac's AC_INIT: '${version:-none}')" >&2; exit 2; }
    release=${version%.*}
else
    release=${1:?$usage}
    out=${2:-$here}
    [[ $release =~ ^3\.[0-9]+$ ]] && version=$(ovs_source "$release" version 2>/dev/null) ||
        { echo "port-series.sh: $release is no pinned 3.x release of cmake/ovs-sources.txt" >&2; exit 2; }
    ovs_source_unpack "$release" "$work/ovs" >/dev/null
fi
source_version=$(ovs_source "$source_line" version)

# A tree of its own: the release as one commit, then the ported patches.
export GIT_AUTHOR_NAME=port-series GIT_AUTHOR_EMAIL=port-series@localhost
export GIT_COMMITTER_NAME=port-series GIT_COMMITTER_EMAIL=port-series@localhost
export GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" GIT_AUTHOR_DATE="2000-01-01T00:00:00Z"
chown -R "$(id -u):$(id -g)" "$work/ovs" # our copy: git trusts its owner
git -C "$work/ovs" init -q
git -C "$work/ovs" add -A
git -C "$work/ovs" commit -q -m "v$version"
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_AUTHOR_DATE # git am takes the patch's

n=0
while read -r p; do
    case "$p" in "" | \#*) continue ;; esac
    n=$((n + 1))
    python3 - "$here/$p" "$work/ovs/NEWS" "$source_version" "$version" >"$work/patch" <<'PY' ||
import re, sys
patch, news, old, new = sys.argv[1:]
release_heading = re.compile(r"^v\d+\.\d+\.\d+ - ")
target = open(news).read().split("\n")
first = next(i for i, l in enumerate(target) if release_heading.match(l))
out, in_news, below = [], False, None
for line in open(patch).read().split("\n"):
    if line.startswith("diff --git "):
        in_news = line == "diff --git a/NEWS b/NEWS"
    elif in_news and line.startswith("@@"):
        below = None        # each hunk: nothing of the release's NEWS seen yet
    elif in_news and line[:1] in " +-" and not line.startswith(("---", "+++")):
        line = re.sub(r"^([ +-])Post-v" + re.escape(old) + "$", r"\1Post-v" + new, line)
        if below is None and line[:1] == " " and release_heading.match(line[1:]):
            below = first
        if below is not None:
            if line[:1] != " ":
                sys.exit(f"a NEWS hunk changes the release's own NEWS ({line!r}): port it by hand")
            line, below = " " + target[below], below + 1
    out.append(line)
sys.stdout.write("\n".join(out))
PY
        { echo "port-series.sh: $p: its NEWS hunks cannot be ported to $version" >&2; exit 1; }
    if ! git -C "$work/ovs" am -q -C1 "$work/patch" >"$work/am.log" 2>&1; then
        echo "port-series.sh: $p (patch $n of series-$source_line) does not apply to OVS $version:" >&2
        sed 's/^/    /' "$work/am.log" >&2
        exit 1
    fi
done <"$here/series-$source_line"

if [ -z "$out" ]; then
    echo "port-series.sh: the $n patches of series-$source_line apply to OVS $version"
    exit 0
fi
base=$(git -C "$work/ovs" rev-list --max-parents=0 HEAD)
"$here/export-series.sh" "$work/ovs" "$base" "$release" "$out"
