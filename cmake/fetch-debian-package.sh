#!/usr/bin/env bash
# Fetches a package of another Debian release with apt, through a private
# apt configuration kept in the build cache (its own sources list, lists,
# package cache and archives), so the machine's own apt sources, lists and
# preferences are never read or changed.  The archive's Release file is
# checked against Debian's archive keyring as apt always does.
#
#   fetch-debian-package.sh SUITE binary NAME=VERSION [SHA256]   unpacks the .deb
#   fetch-debian-package.sh SUITE source NAME=VERSION [SHA256]   apt-get source
#   fetch-debian-package.sh SUITE versions NAME   the versions of source
#                                   package NAME in SUITE, one per line
#   fetch-debian-package.sh SUITE dsc NAME=VERSION [SHA256]      the .dsc and
#                                   every file of the source package but its
#                                   upstream tarball(s) (the Debian tarball)
#   fetch-debian-package.sh SUITE debs NAME=VERSION   the .deb files of every
#                                   binary package that source package NAME
#                                   VERSION built for this machine's
#                                   architecture and 'all' (binNMUs such as
#                                   3.5.0-1+b1 included), as Debian ships them
#
# SHA256, when given, pins the .deb (binary) or the .dsc (source, whose
# checksums pin the tarballs): a rebuilt or changed package is refused.
#
# Prints the unpacked directory on its last line: for `binary`, the root
# the .deb's files are under (dpkg-deb -x); for `source`, the source tree
# (dpkg-source -x, Debian's patches applied); for `dsc`, a folder with the
# files, each checked against the archive's Sources index by apt-helper
# (for a package whose upstream tarball the mirror no longer serves: the
# caller supplies the upstream tree); for `debs`, a folder with the .debs.
# A second call finds it in
# the cache.  SUITE is a Debian suite (trixie, forky, bookworm-security),
# fetched from the Debian mirror this machine's apt uses, or its security
# mirror for a -security suite (cmake/debian-mirrors.sh: $DEBIAN_MIRROR and
# $DEBIAN_SECURITY_MIRROR override).
set -euo pipefail
usage="usage: fetch-debian-package.sh SUITE binary|source|dsc|debs NAME=VERSION [SHA256] | SUITE versions NAME"
suite=${1:?$usage}
kind=${2:?$usage}
spec=${3:?$usage}
pinned=${4:-}
case "$kind" in binary | source | dsc | debs | versions) ;; *) echo "$usage" >&2; exit 2 ;; esac
case "$kind:$spec" in
    versions:*=*) echo "fetch-debian-package.sh: versions takes a source package's NAME" >&2; exit 2 ;;
    versions:*) name=$spec version=any ;;
    *:*=*) name=${spec%%=*} version=${spec#*=} ;;
    *) echo "fetch-debian-package.sh: '$spec' needs an exact version (NAME=VERSION)" >&2; exit 2 ;;
esac
case "$suite$name$version" in
    *[!A-Za-z0-9.+~:-]*) echo "fetch-debian-package.sh: bad suite, name or version" >&2; exit 2 ;;
esac
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cache_root=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
apt_root=$cache_root/apt-$suite
out=$cache_root/debian-$suite/$kind-$name-${version//:/_}

if [ "$kind" != versions ] && [ -f "$out/.done" ]; then
    echo "$out"
    exit 0
fi
mkdir -p "$apt_root/lists/partial" "$apt_root/archives/partial" "$apt_root/cache" \
    "$cache_root/debian-$suite"
exec 9>"$apt_root/.lock"
flock 9
if [ "$kind" != versions ] && [ -f "$out/.done" ]; then
    echo "$out"
    exit 0
fi

# The mirror, only now that the cache does not have it: a fetch that the
# cache serves needs no apt sources.  Security updates (bookworm-security)
# are served from a mirror of their own.
source "$(dirname "$0")/debian-mirrors.sh"
case "$suite" in
    *-security) mirror=$(debian_mirror security) || exit 1 ;;
    *) mirror=$(debian_mirror main) || exit 1 ;;
esac
cat >"$apt_root/sources.list" <<EOF
deb [signed-by=$keyring] $mirror $suite main
deb-src [signed-by=$keyring] $mirror $suite main
EOF
apt_opts=(
    -o Dir::Etc::SourceList="$apt_root/sources.list"
    -o Dir::Etc::SourceParts=/nonexistent
    -o Dir::Etc::Preferences=/dev/null
    -o Dir::Etc::PreferencesParts=/nonexistent
    -o Dir::State::Lists="$apt_root/lists"
    -o Dir::Cache="$apt_root/cache"
    -o Dir::Cache::Archives="$apt_root/archives"
    -o APT::Get::List-Cleanup=false
    -o Acquire::Languages=none
)
# Debian's testing suite (forky) signs its Release files valid for a week;
# the package registry this project uses serves a copy older than that.
# A pinned fetch does not rest on the Release file's date: the .deb's or
# the .dsc's sha256 decides, so apt checks the signature but not the date.
# An unpinned fetch keeps apt's check.
if [ -n "$pinned" ]; then
    apt_opts+=(-o Acquire::Check-Valid-Until=false)
fi
# Lists older than a day are fetched again (a point release moves versions).
if [ -z "$(find "$apt_root/lists" -maxdepth 1 -name '*Release' -mmin -1440 2>/dev/null)" ]; then
    echo "fetch-debian-package.sh: apt-get update for $suite (private lists in $apt_root)" >&2
    apt-get "${apt_opts[@]}" -q update >"$apt_root/update.log" 2>&1 ||
        { tail -20 "$apt_root/update.log" >&2; exit 1; }
fi

if [ "$kind" = versions ]; then
    # The versions of source package NAME in the suite's Sources index,
    # one per line ('apt-cache showsrc' reads the private lists only).
    apt-cache "${apt_opts[@]}" showsrc "$name" 2>/dev/null |
        awk -v name="$name" '/^Package: / { p = ($2 == name) } p && /^Version: / { print $2 }' |
        sort -u
    exit 0
fi

check_pin() {  # FILE
    [ -n "$pinned" ] || return 0
    local actual
    actual=$(sha256sum "$1" | cut -d' ' -f1)
    if [ "$actual" != "$pinned" ]; then
        echo "fetch-debian-package.sh: $(basename "$1") has sha256 $actual, pinned $pinned" >&2
        exit 1
    fi
}

work=$(mktemp -d "$cache_root/debian-$suite/.fetch-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "fetch-debian-package.sh: fetching $kind $name=$version from $suite" >&2
if [ "$kind" = binary ]; then
    apt-get "${apt_opts[@]}" -q download "$name=$version" >"$work/fetch.log" 2>&1 ||
        { tail -20 "$work/fetch.log" >&2; exit 1; }
    check_pin ./*.deb
    mkdir root
    dpkg-deb -x ./*.deb root
    tree=root
elif [ "$kind" = dsc ]; then
    # apt-get source --print-uris: 'URI' FILE SIZE SHA256:HASH, one per file.
    apt-get "${apt_opts[@]}" -q source --print-uris "$name=$version" >"$work/uris" 2>"$work/fetch.log" ||
        { tail -20 "$work/fetch.log" >&2; exit 1; }
    mkdir files
    while read -r uri file _ hash; do
        case "$file" in *.orig.tar.* | *.orig-*.tar.*) continue ;; esac
        /usr/lib/apt/apt-helper download-file "${uri//\'/}" "files/$file" "$hash" >>"$work/fetch.log" 2>&1 ||
            { tail -20 "$work/fetch.log" >&2; exit 1; }
    done < <(grep "^'" "$work/uris")
    check_pin files/*.dsc
    tree=files
elif [ "$kind" = debs ]; then
    # The binary packages the source lists (Binary:), each in the version
    # built from VERSION: its own Version, or a binNMU's whose Source
    # field names VERSION ("openvswitch (3.5.0-1)").  One built for
    # another architecture only is not in this architecture's index.
    binaries=$(apt-cache "${apt_opts[@]}" showsrc "$name" 2>/dev/null | awk -F': ' -v ver="$version" '
        /^Package: / { b = "" } /^[A-Za-z-]+: / { inb = 0 } /^Binary: / { b = $2; inb = 1; next }
        /^ / && inb { b = b $0 }
        /^Version: / && $2 == ver { v = 1 } /^$/ { if (v && b != "") { gsub(/, */, " ", b); print b; exit } v = 0 }')
    [ -n "$binaries" ] || { echo "fetch-debian-package.sh: $suite has no source package $name=$version" >&2; exit 1; }
    mkdir debs
    for b in $binaries; do
        v=$(apt-cache "${apt_opts[@]}" show "$b" 2>/dev/null | awk -v src="$name" -v ver="$version" '
            /^Version: / { v = $2 }
            /^Source: / { s = $2; sv = ($3 == "") ? "" : substr($3, 2, length($3) - 2) }
            /^$/ { if (v != "" && s == src && (sv == ver || (sv == "" && v == ver))) { print v; exit }
                   v = ""; s = src; sv = "" }
            BEGIN { s = src }
            END { if (v != "" && s == src && (sv == ver || (sv == "" && v == ver))) print v }' | head -1)
        [ -n "$v" ] || continue
        (cd debs && apt-get "${apt_opts[@]}" -q download "$b=$v") >>"$work/fetch.log" 2>&1 ||
            { tail -20 "$work/fetch.log" >&2; exit 1; }
    done
    ls debs/*.deb >/dev/null 2>&1 || { echo "fetch-debian-package.sh: no binary package of $name=$version in $suite" >&2; exit 1; }
    tree=debs
else
    command -v dpkg-source >/dev/null ||
        { echo "fetch-debian-package.sh: needs dpkg-source (apt-get install dpkg-dev)" >&2; exit 1; }
    apt-get "${apt_opts[@]}" -q source --download-only "$name=$version" >"$work/fetch.log" 2>&1 ||
        { tail -20 "$work/fetch.log" >&2; exit 1; }
    check_pin ./*.dsc
    tree=tree
    dpkg-source -x ./*.dsc tree >>"$work/fetch.log" 2>&1 ||
        { tail -20 "$work/fetch.log" >&2; exit 1; }
fi
rm -rf "$out"
mv "$work/$tree" "$out"
touch "$out/.done"
echo "$out"
