#!/usr/bin/env bash
# Compares packages built by packages/build-deb.sh with Debian's own binary
# packages of the same source version, so that a rebuild which ships a file
# less, a file more, another conffile or another maintainer script than
# Debian's is caught before an operator installs it.
#
#   packages/compare-with-debian.sh OURS DEBIAN [ADDED]
#
#   OURS     a folder with the rebuilt .debs (build-deb.sh's result)
#   DEBIAN   a folder with Debian's .debs of that source version
#            (cmake/fetch-debian-package.sh SUITE debs openvswitch=VERSION)
#   ADDED    a file of "PACKAGE PATH" lines: the paths the rebuild adds on
#            purpose (build-deb.sh writes it: the plugin's man page, the
#            files the series creates in openvswitch-source's tree)
#
# For every package in DEBIAN, the package of the same name in OURS must
# have (1) the same paths (dpkg-deb -c), but for ADDED's; (2) the same
# conffiles; (3) the same maintainer scripts (preinst, postinst, prerm,
# postrm), debhelper's version stamps in the "Automatically added by
# dh_.../13.x" lines aside.  One path of Debian's is not expected: the
# changelog of a binNMU (usr/share/doc/PACKAGE/changelog.Debian.ARCH.gz,
# in a package whose version ends in +bN: Debian's rebuild of the same
# source, which this is not).  Contents of binaries are not compared: they
# are built here, with the series in them.  OURS' -dbgsym packages have no
# counterpart (Debian ships them elsewhere).  Prints one line per package
# and each difference; exits 1 on any.
set -euo pipefail
usage="usage: compare-with-debian.sh OURS DEBIAN [ADDED]"
ours=${1:?$usage}
debian=${2:?$usage}
added_file=${3:-/dev/null}

added() { awk -v p="$1" '$1 == p { print $2 }' "$added_file"; }
paths() { dpkg-deb -c "$1" | awk '{ print $6 }' | LC_ALL=C sort; }
# A control-area file with debhelper's version stamps normalised (empty
# when the package has none).
script() { [ ! -f "$1" ] || sed -E 's#(Automatically added by dh_[a-z_]+)/[0-9][0-9.~+a-z]*#\1/VERSION#' "$1"; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

status=0
checked=0
for theirs in "$debian"/*.deb; do
    read -r name version arch < <(dpkg-deb -W --showformat='${Package} ${Version} ${Architecture}\n' "$theirs")
    mine=$(find "$ours" -maxdepth 1 -name "${name}_*.deb" | head -1)
    if [ -z "$mine" ]; then
        echo "$name: MISSING (Debian ships $(basename "$theirs"))"
        status=1
        continue
    fi
    diffs=""
    expected=$( (paths "$theirs" | if [[ $version =~ \+b[0-9]+$ ]]; then
        grep -vxF "./usr/share/doc/$name/changelog.Debian.$arch.gz"
    else cat; fi; added "$name") | LC_ALL=C sort -u)
    d=$(diff <(echo "$expected") <(paths "$mine") | grep '^[<>]' || true)
    [ -z "$d" ] || diffs+="  files (< only Debian's, > only ours):"$'\n'"$(sed 's/^/    /' <<<"$d")"$'\n'
    # Each control area unpacked once, its five files compared.
    rm -rf "$scratch/theirs" "$scratch/mine"
    dpkg-deb -e "$theirs" "$scratch/theirs"
    dpkg-deb -e "$mine" "$scratch/mine"
    for f in conffiles preinst postinst prerm postrm; do
        d=$(diff <(script "$scratch/theirs/$f") <(script "$scratch/mine/$f") || true)
        [ -z "$d" ] || diffs+="  $f (< Debian's, > ours):"$'\n'"$(sed 's/^/    /' <<<"$d")"$'\n'
    done
    checked=$((checked + 1))
    if [ -n "$diffs" ]; then
        echo "$name: DIFFERS from $(basename "$theirs")"
        printf '%s' "$diffs"
        status=1
    else
        n=$(added "$name" | grep -cv '/$' || true)
        echo "$name: same files$([ "$n" = 0 ] || echo " (+ $n added: $(added "$name" | grep -v '/$' | xargs -n1 basename | paste -sd' '))"), conffiles and maintainer scripts as $(basename "$theirs")"
    fi
done
[ "$checked" -gt 0 ] || { echo "compare-with-debian.sh: no Debian package in $debian" >&2; exit 1; }
exit "$status"
