#!/usr/bin/env bash
# Runs Open vSwitch's own utilities/checkpatch.py on every patch of every
# series, each series with the checkpatch.py of its release (the pinned
# source of cmake/ovs-sources.txt), and prints its output per patch.
#
#   patches/checkpatch.sh [RELEASE...]     default: every series-RELEASE
#
# Exits non-zero unless checkpatch.py finds no problem (0 errors, 0
# warnings) in every patch, and unless each series is consistent with
# itself: the cover letter is [PATCH 0/N] for its N patches and lists
# 1/N ... N/N, every patch is [PATCH i/N] (or all [PATCH vK i/N]), and each patch's author (From:)
# signs it (Signed-off-by), with an address that is no placeholder
# (.invalid, .example.com, localhost), and the cover letter's shortlog
# names those authors and no one else.
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
    # The series as a whole: numbering, the cover letter's list, signers.
    if ! out=$(python3 - "$here" "$release" <<'PY'
import re, sys
here, release = sys.argv[1:]
patches = [l.strip() for l in open(f"{here}/series-{release}") if l.strip() and not l.startswith("#")]
n, errors, authors = len(patches), [], set()
w = len(str(n))  # git format-patch pads the numbers to n's width
cover = open(f"{here}/{release}/0000-cover-letter.patch").read()
# "[PATCH i/N]", or "[PATCH vK i/N]" for a resent series (all alike).
version = re.search(r"^Subject: \[PATCH (v\d+ )?", cover, re.M)
tag = lambda i: f"[PATCH {version.group(1) or '' if version else ''}{i:0{w}d}/{n}]"
if tag(0) not in cover:
    errors.append(f"the cover letter is not {tag(0)}")
listed = re.findall(r"^ {1,2}(\d+)/(\d+)  ", cover, re.M)
if listed != [(str(i), str(n)) for i in range(1, n + 1)]:
    errors.append(f"the cover letter lists {['/'.join(x) for x in listed]}, not 1/{n} ... {n}/{n}")
for i, p in enumerate(patches, 1):
    text = open(f"{here}/{p}").read()
    head = text.split("\n\n", 1)[0]
    author = re.search(r"^From: (.*)$", head, re.M)
    if tag(i) not in head:
        errors.append(f"{p}: not {tag(i)}")
    if not author or f"Signed-off-by: {author.group(1)}" not in text:
        errors.append(f"{p}: its author does not sign it")
    elif re.search(r"@[^>]*\.(invalid|example\.com)>|@localhost>", author.group(1)):
        errors.append(f"{p}: a placeholder address: {author.group(1)}")
    else:
        authors.add(author.group(1).split(" <")[0])
# The cover letter's shortlog ("Name (count):") names the patches' authors.
shortlog = dict(re.findall(r"^(\S.*) \((\d+)\):$", cover, re.M))
if set(shortlog) != authors or sum(map(int, shortlog.values())) != n:
    errors.append(f"the cover letter's shortlog names {shortlog}, the patches' authors are {sorted(authors)}")
print("\n".join(errors) if errors else f"{n} patches, numbered, listed by the cover letter, signed by their author")
sys.exit(1 if errors else 0)
PY
    ); then
        bad=$((bad + 1))
    fi
    echo "series-$release as a whole:"
    sed 's/^/    /' <<<"$out"
    rm -rf "$tree"
done
echo "checkpatch.sh: $checked patches checked, $bad with errors or warnings"
[ "$bad" -eq 0 ]
