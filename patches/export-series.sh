#!/usr/bin/env bash
# Exports a release line's series from a git tree in which it is committed
# on top of the release, with the cover letter of patches/cover-letter.txt:
#
#   patches/export-series.sh GIT_TREE BASE RELEASE [OUT]
#
# GIT_TREE: a git copy of the release's source (e.g. the unpacked pinned
# source, git init, one commit) with the series committed on top of BASE,
# the release's commit.  Writes OUT/RELEASE/0000-cover-letter.patch and
# the patches, and OUT/series-RELEASE (OUT: default patches/).  Then run
# patches/checkpatch.sh.
#
# To change a patch: apply the series to such a tree (git am), change,
# commit (git rebase -i), export.  The 3.x series is kept once, as 3.1's:
# patches/port-series.sh makes every other 3.x line's files from it (they
# differ only where the trees do: NEWS).  4.0's is a series of its own,
# since 4.0 removed the lookup registry.
#
# The files depend only on the commits' contents, authors, dates and
# messages: no commit id (--zero-commit), the cover letter dated as the
# latest patch, so that exporting the same series twice gives the same bytes
# (tests/series_port_test.sh compares).  A cover letter template whose
# first line is "Series-version: N" (N > 1) makes the subjects
# "[PATCH vN i/M]", as upstream's resent series.
#
# Whoever exports signs: each patch's author (From:) and Signed-off-by are
# the exporter's git identity (git config user.name and user.email, as
# `git commit -s` takes them, read in this project's folder), whoever
# committed the series in GIT_TREE; the script refuses to export without one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:?usage: export-series.sh GIT_TREE BASE RELEASE}
base=${2:?usage: export-series.sh GIT_TREE BASE RELEASE}
release=${3:?usage: export-series.sh GIT_TREE BASE RELEASE [OUT]}
dest=${4:-$here}
name=$(git -C "$here" config user.name || true)
email=$(git -C "$here" config user.email || true)
if [ -z "$name" ] || [ -z "$email" ]; then
    echo "export-series.sh: no git identity (git config user.name and user.email): who signs the series?" >&2
    exit 2
fi
cover=$here/cover-letter.txt
[ ! -f "$here/cover-letter-$release.txt" ] || cover=$here/cover-letter-$release.txt
version=$(sed -n '1s/^Series-version: \([0-9]*\)$/\1/p' "$cover")
prefix=PATCH
[ -z "$version" ] || [ "$version" -le 1 ] || prefix="PATCH v$version"
out=$dest/$release
rm -rf "$out"
mkdir -p "$out"
GIT_COMMITTER_DATE="@$(git -C "$tree" log --format=%at "$base..HEAD" | sort -n | tail -1) +0000" \
    git -C "$tree" format-patch -q --zero-commit --cover-letter \
    --subject-prefix="$prefix" -o "$out" "$base..HEAD"
# The exporter as author and signer of every patch (a folded From: header
# included), one Signed-off-by each, and as the one author of the cover
# letter's shortlog (git's lists the commits' authors in GIT_TREE).
python3 - "$name <$email>" "$out"/*.patch <<'PY'
import re, sys
who, paths = sys.argv[1], sorted(sys.argv[2:])
subjects = []
for path in paths[1:]:
    m = re.search(r"^Subject: \[PATCH (?:v\d+ )?[0-9/]+\] (.*(?:\n[ \t].*)*)$", open(path).read(), re.M)
    subjects.append(re.sub(r"\n[ \t]+", " ", m.group(1)))
for path in paths:
    head, sep, body = open(path).read().partition("\n\n")
    head = re.sub(r"^From: .*(\n[ \t].*)*$", "From: " + who, head, count=1, flags=re.M)
    if "/0000-cover-letter.patch" in path:
        shortlog = f"{who.split(' <')[0]} ({len(subjects)}):\n" + "".join(
            f"  {s}\n" for s in subjects) + "\n"
        body, n = re.subn(r"(^[^ \n].* \(\d+\):\n(?:  .*\n)+\n)+", lambda _: shortlog, body,
                          count=1, flags=re.M)
        assert n == 1, "no shortlog in the cover letter"
    else:
        lines = [l for l in body.split("\n") if not l.startswith("Signed-off-by: ")]
        cut = lines.index("---")
        while cut > 0 and lines[cut - 1] == "":
            cut -= 1
            del lines[cut]
        trailer = cut > 0 and re.match(r"^[A-Z][A-Za-z-]*: ", lines[cut - 1])
        lines[cut:cut] = ([] if trailer else [""]) + ["Signed-off-by: " + who]
        body = "\n".join(lines)
    open(path, "w").write(head + sep + body)
PY
# The cover letter's subject is the first line of cover-letter-RELEASE.txt
# (a release line whose series differs: 4.0) or of cover-letter.txt (after
# its Series-version line), its blurb the rest (@RELEASE@ replaced).
python3 - "$out/0000-cover-letter.patch" "$cover" "$release" <<'PY'
import re, sys
path, template, release = sys.argv[1:]
text = re.sub(r"\ASeries-version: \d+\n", "", open(template).read())
subject, _, blurb = text.replace("@RELEASE@", release).partition("\n")
text = open(path).read()
text = text.replace("*** SUBJECT HERE ***", subject.strip())
text = text.replace("*** BLURB HERE ***", blurb.strip("\n"))
open(path, "w").write(text)
PY
(cd "$dest" && ls "$release"/0*.patch | grep -v '/0000-cover-letter') >"$dest/series-$release"
echo "export-series.sh: $(wc -l <"$dest/series-$release") patches and a cover letter in $out"
