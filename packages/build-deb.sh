#!/usr/bin/env bash
# Builds Debian's own Open vSwitch packages of Debian 12 (OVS 3.1) or
# Debian 13 (OVS 3.5) with the plugin's lookups in ovs-vswitchd, to install
# over Debian's and run the Debian way.
#
#   packages/build-deb.sh [--release 12|13] [--debian-version V] [--out DIR]
#                         [--revision N] [--no-plugin-default]
#
#   --release 12|13       Debian 12, bookworm (default): openvswitch
#                         3.1.0-2+deb12u1, built on Debian 12; Debian 13,
#                         trixie: openvswitch 3.5.0-1, built in the Debian
#                         13 root of scripts/debian-root.sh (this script
#                         runs itself there when the machine is no Debian
#                         13; the root gets the build dependencies)
#   --debian-version V    Debian's version to rebuild (default: the newest
#                         of the suite and its security updates with the
#                         same upstream version, e.g. 3.1.0-2+deb12u2 once
#                         Debian publishes it; the pinned one above when
#                         none is newer or the mirror cannot be read)
#   --out DIR             also copy the packages and SHA256SUMS into DIR
#   --cached              builds nothing: prints the cached build's folder
#                         and exits 0 if it is built, 1 if not (on any
#                         machine; tests/run.sh plans with it)
#   --revision N          the local version suffix, +ovsclsN (default 1):
#                         raise it for a newer plugin, so apt upgrades
#   --no-plugin-default   the plugin's lookups registered at priority 0
#                         (OVS's generic stays the default until prio-set);
#                         by default they are preferred (build-ovs.sh's
#                         --plugin-default), and prio-set switches back
#
# What it does, on the release's Debian (needs root: it installs the build
# dependencies with apt-get, as dpkg-buildpackage's users do):
#   1. Debian 12: Debian's source package openvswitch 3.1.0-2+deb12u1, through a
#      private apt configuration with a deb-src line
#      (cmake/fetch-debian-package.sh; the machine's apt sources are not
#      changed): its .dsc and Debian tarball.  The mirror no longer serves
#      its upstream tarball (openvswitch_3.1.0.orig.tar.xz: 404), so the
#      upstream tree is the one Debian ships in openvswitch-source 3.1.0's
#      /usr/src/openvswitch/openvswitch.tar.gz (pinned by sha256 in
#      cmake/ovs-sources.txt, which the rest of the project builds too)
#      with Debian's own patches reversed; they are applied again, in
#      order, by dpkg-source as the build starts, like every quilt patch.
#      Debian 13: the mirror serves none of the files of the source
#      package openvswitch 3.5.0-1 (its .dsc, Debian and upstream tarballs:
#      404, though trixie's Sources index lists them), but
#      openvswitch-source 3.5.0-1 ships the tree it was built from with
#      Debian's debian/ of that version (its changelog's first entry is
#      3.5.0-1; "d/patches/*: Drop": Debian patches nothing), the tree
#      cmake/ovs-sources.txt pins for 3.5: the packages are built from it.
#      Being `make distdir` output, its debian/ lacks ten files that
#      debian/automake.mk does not distribute: the five Debian installs
#      verbatim are taken from Debian's 3.5.0-1 binary packages, the other
#      five (openvswitch-switch-dpdk.install, python3-openvswitch.install,
#      openvswitch-source.docs, openvswitch-common.postinst,
#      openvswitch-switch.preinst) from
#      Debian's openvswitch 4.0.0-2 source package, pinned; step 4 proves
#      the result.
#   2. The series (patches/series-3.1 or -3.5) goes to debian/patches/ovscls/, after
#      Debian's in debian/patches/series; the plugin's sources (the CMake
#      project without its tests) to debian/ovscls-plugin/; debian/rules
#      gets a hook after dh_auto_build that builds the plugin against each
#      of Debian's two OVS builds (_debian: ovs-vswitchd; _dpdk:
#      openvswitch-switch-dpdk's ovs-vswitchd-dpdk) and links it into that
#      ovs-vswitchd (plugin/link-into-ovs.sh, the flavour read off the
#      build's own compiler flags, so its hash is OVS's).  Build-Depends
#      gains cmake, g++ and libxbyak-dev.  A changelog entry gives the
#      version 3.1.0-2+deb12u1+ovsclsN (3.5.0-1+ovsclsN).  openvswitch-switch gains the man
#      page ovs-dpcls-plugin(7), made from docs/ref/ovs-dpcls-plugin.md by
#      packages/md2man.py.
#   3. dpkg-buildpackage -b with DEB_BUILD_OPTIONS=nocheck (the project's
#      tests cover the series: tests/run.sh runs OVS's own testsuite on it)
#      builds every binary package, openvswitch-switch-dpdk included.
#   4. packages/compare-with-debian.sh: every package ships the paths,
#      conffiles and maintainer scripts of Debian's own binary package of
#      that version, the man page added; any other difference fails the
#      build (the report is kept as compare-with-debian.txt).
#
# The packages go to a folder of the build cache ($OVS_BUILD_CACHE, default
# /var/cache/ovs-dpcls-plugin) named by the version and a key over every
# input (this folder, the series, the plugin's sources, the Debian source
# package); a second call with the same inputs reuses it.  The folder holds
# the .debs, SHA256SUMS (sha256sum -c checks them) and PACKAGES (name,
# version, architecture, size of each).  Prints the folder on its last line.
# The build runs in a fixed folder of the cache with ccache, so that a
# rebuild after a change to the plugin compiles only the plugin.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out="" revision=1 plugin_default=yes release=12 debian_version="" only_ask=no
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --release) release=${2:?--release needs 12 or 13}; shift 2 ;;
        --debian-version) debian_version=${2:?--debian-version needs a version}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --revision) revision=${2:?--revision needs a number}; shift 2 ;;
        --no-plugin-default) plugin_default=no; shift ;;
        --cached) only_ask=yes; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "build-deb.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
case "$revision" in
    "" | *[!0-9]*) echo "build-deb.sh: --revision takes a whole number, not '$revision'" >&2; exit 2 ;;
esac
step() { echo "build-deb.sh: $*" >&2; }
die() { echo "build-deb.sh: $*" >&2; exit 1; }

# The source packages this script knows how to rebuild: each release's
# suite, Debian version and OVS release line (cmake/ovs-sources.txt,
# patches/series-LINE).
case "$release" in
    12) suite=bookworm pinned_version=3.1.0-2+deb12u1 line=3.1 ;;
    13) suite=trixie pinned_version=3.5.0-1 line=3.5 ;;
    *) die "--release takes 12 or 13, not '$release'" ;;
esac
upstream_version=${pinned_version%%-*}
# shellcheck source=/dev/null
. /etc/os-release
if [ "$only_ask" = no ] && { [ "${ID:-}" != debian ] || [ "${VERSION_ID:-}" != "$release" ]; }; then
    # Debian 13's packages are built in the Debian 13 root (the machine's
    # own packages untouched); Debian 12's need a Debian 12 machine.
    if [ "$release" = 13 ] && [ -z "${OVSCLS_IN_DEBIAN_ROOT:-}" ]; then
        step "this is ${PRETTY_NAME:-an unknown system}: building in the Debian 13 root (scripts/debian-root.sh trixie)"
        args=(--release 13 --revision "$revision")
        [ -z "$debian_version" ] || args+=(--debian-version "$debian_version")
        [ -z "$out" ] || args+=(--out "$out")
        [ "$plugin_default" = yes ] || args+=(--no-plugin-default)
        [ -z "$out" ] || mkdir -p "$out"
        exec "$top/scripts/debian-root.sh" trixie ${out:+--bind "$(cd "$out" && pwd)"} -- \
            env OVSCLS_IN_DEBIAN_ROOT=1 packages/build-deb.sh "${args[@]}"
    fi
    die "the packages are Debian $release's, built on Debian $release; this is ${PRETTY_NAME:-an unknown system}"
fi
[ "$(id -u)" = 0 ] || [ "$only_ask" = yes ] || die "needs root (apt-get installs the build dependencies)"
[ "$(dpkg --print-architecture)" = amd64 ] ||
    die "built and tested on amd64 only; this is $(dpkg --print-architecture)"

# The Debian version: the one asked for (--debian-version), else the newest
# that the suite and its security updates have of the pinned upstream
# version (a security update is a new Debian revision, e.g. +deb12u2, with
# the fix in debian/patches), else the pinned one (cmake/ovs-sources.txt's
# tree), e.g. when the mirror cannot be reached.  A version other than the
# pinned one is checked by apt's signatures only: its tree is not the one
# cmake/ovs-sources.txt pins by sha256, and the build says so.
debian_suite=$suite
asked=$debian_version
[ -n "$asked" ] || debian_version=$pinned_version
for s in "$suite" "$suite-security"; do
    if ! found=$("$top/cmake/fetch-debian-package.sh" "$s" versions openvswitch 2>/dev/null); then
        step "could not read $s's versions of openvswitch${asked:+ (looking for $asked)}"
        continue
    fi
    while read -r v; do
        [ -n "$v" ] && [ "${v%%-*}" = "$upstream_version" ] || continue
        if [ -n "$asked" ]; then
            # The first suite that has the version asked for.
            [ "$v" != "$asked" ] || [ -n "${asked_suite:-}" ] || asked_suite=$s
        elif dpkg --compare-versions "$v" gt "$debian_version"; then
            debian_version=$v debian_suite=$s
        fi
    done <<<"$found"
done
debian_suite=${asked_suite:-$debian_suite}
case "$debian_version" in
    "$upstream_version"-*) ;;
    *) die "Debian version '$debian_version' is not of OVS $upstream_version (cmake/ovs-sources.txt's $line)" ;;
esac
version=$debian_version+ovscls$revision
if [ "$debian_version" = "$pinned_version" ]; then
    step "Debian's openvswitch $debian_version ($debian_suite), the pinned one"
else
    step "Debian's openvswitch $debian_version ($debian_suite), newer than the pinned $pinned_version:" \
        "its sources are checked by apt's signatures, not by cmake/ovs-sources.txt's sha256"
fi

cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
key=$( (cd "$top" && find packages/build-deb.sh packages/md2man.py docs/ref/ovs-dpcls-plugin.md \
    plugin classifier lookups tail jit cmake CMakeLists.txt \
    "patches/series-$line" "patches/$line" -type f | LC_ALL=C sort | xargs cat
    echo "$debian_version $revision $plugin_default") | sha256sum | cut -c1-16)
result=$cache/debs-$version-$key
if [ "$only_ask" = yes ]; then
    echo "$result"
    [ -f "$result/.built" ]
    exit
fi
mkdir -p "$cache"
exec 8>"$cache/debs.lock"
flock 8

copy_out() {
    [ -n "$out" ] || return 0
    mkdir -p "$out"
    cp "$result"/*.deb "$result/SHA256SUMS" "$result/PACKAGES" "$out/"
    step "copied $(ls "$result"/*.deb | wc -l) packages, SHA256SUMS and PACKAGES into $out"
}
# The rebuilt packages ship what Debian's do (paths, conffiles, maintainer
# scripts), plus the plugin's man page and, in openvswitch-source's tree,
# the files the series creates: packages/compare-with-debian.sh.  This is
# what proves a debian/ completed in step 1 to be Debian's.  Run on every
# call, a cached result included (it takes seconds), so that the check
# in force is the one that passed.  Writes DIR/compare-with-debian.txt.
compare_with_debian() {  # compare_with_debian DIR: the .debs in DIR
    local debs
    debs=$("$top/cmake/fetch-debian-package.sh" "$debian_suite" debs "openvswitch=$debian_version" | tail -1) ||
        die "fetching Debian's own packages of $debian_version to compare with failed"
    {
        printf 'openvswitch-switch %s\n' ./usr/share/man/man7/ ./usr/share/man/man7/ovs-dpcls-plugin.7.gz
        # openvswitch-source ships the tree (3.5) or a tarball of it (3.1):
        # in the tree, the files the series creates.
        if dpkg-deb -c "$(ls "$1"/openvswitch-source_*.deb)" | grep ' \./usr/src/openvswitch/NEWS$' >/dev/null; then
            while read -r p; do
                case "$p" in "" | \#*) continue ;; esac
                sed -n '/^--- \/dev\/null$/{n;s|^+++ b/|openvswitch-source ./usr/src/openvswitch/|p}' "$top/patches/$p"
            done <"$top/patches/series-$line"
        fi
    } >"$1/added-to-debian"
    "$here/compare-with-debian.sh" "$1" "$debs" "$1/added-to-debian" >"$1/compare-with-debian.txt" 2>&1 || {
        cat "$1/compare-with-debian.txt" >&2
        die "the packages in $1 differ from Debian's $debian_version (above)"
    }
    step "the packages ship Debian's $debian_version files, conffiles and maintainer scripts (+ the man page)"
}
if [ -f "$result/.built" ]; then
    step "cached: $result"
    compare_with_debian "$result"
    copy_out
    echo "$result"
    exit 0
fi

# ---- 1. Debian's source package, the upstream tree under it ----
needed=(dpkg-dev debhelper ccache cmake g++ libxbyak-dev)
"$top/scripts/apt-install-missing.sh" build-deb.sh "${needed[@]}" || exit 1
source "$top/cmake/ovs-table.sh"
[ "$(ovs_source "$line" version)" = "$upstream_version" ] ||
    die "cmake/ovs-sources.txt's $line is not $upstream_version"
if [ "$release" = 12 ]; then
    dsc_dir=$("$top/cmake/fetch-debian-package.sh" "$debian_suite" dsc "openvswitch=$debian_version" | tail -1)
    # The upstream tree: openvswitch-source's tarball, pinned as for every
    # other build of 3.1 (cmake/ovs-sources.txt) when the version is.
    src_deb=$("$top/cmake/fetch-debian-package.sh" "$debian_suite" binary "openvswitch-source=$debian_version" | tail -1)
    tarball=$src_deb/usr/src/openvswitch/openvswitch.tar.gz
fi

# A fixed build folder (its path is in Debian's -ffile-prefix-map flag, so
# ccache hits only when it stays put).
work=$cache/deb-build
tree=$work/openvswitch-$upstream_version
rm -rf "$work"
mkdir -p "$work"
log=$work/build.log
: >"$log"
fail() { echo "build-deb.sh: $1 failed; the last lines of $log:" >&2; tail -30 "$log" >&2; exit 1; }
if [ "$release" = 12 ]; then
    step "unpacking the upstream tree ($tarball) and $(basename "$dsc_dir"/*.debian.tar.xz)"
    if [ "$debian_version" = "$pinned_version" ]; then
        # ovs_source_unpack checks the tarball against cmake/ovs-sources.txt's sha256.
        OVS_TARBALL=$tarball ovs_source_unpack 3.1 "$tree" || die "unpacking $tarball failed"
    else
        mkdir "$tree.unpack" && tar -xzf "$tarball" -C "$tree.unpack" &&
            mv "$tree.unpack/openvswitch" "$tree" && rmdir "$tree.unpack" || die "unpacking $tarball failed"
    fi
    # The tarball is `make dist` of Debian's build: its debian/ is an old copy.
    rm -rf "$tree/debian"
    tar -xJf "$dsc_dir"/*.debian.tar.xz -C "$tree"
else
    step "unpacking openvswitch-source $debian_version's tree, Debian's debian/ in it"
    if [ "$debian_version" = "$pinned_version" ]; then
        # (cmake/ovs-sources.txt's 3.5, checked against its sha256)
        ovs_source_unpack "$line" "$tree" || die "unpacking openvswitch-source $debian_version failed"
    else
        src_deb=$("$top/cmake/fetch-debian-package.sh" "$debian_suite" binary "openvswitch-source=$debian_version" | tail -1)
        cp -a "$src_deb/usr/src/openvswitch" "$tree" || die "copying openvswitch-source $debian_version's tree failed"
    fi
    [ "$(cd "$tree" && dpkg-parsechangelog -S Version)" = "$debian_version" ] ||
        die "openvswitch-source's debian/changelog is not $debian_version's"
    # That tree is Debian's `make distdir` (debian/rules), so its debian/
    # holds only the files debian/automake.mk distributes: ten that the
    # build needs are not among them.  The five Debian installs as they
    # are come from Debian's own binary packages of this version; the
    # rest (two dh_install lists, a dh_installdocs list, two maintainer
    # scripts) from Debian's next upload of the same packaging,
    # openvswitch 4.0.0-2's source package (pinned by its .dsc).  Step 4
    # checks the result against Debian's packages of this version: that
    # is what shows these to be 3.5.0-1's (it found the tenth file).
    step "completing debian/ from Debian's $debian_version binaries and 4.0.0-2 source package"
    debs=$("$top/cmake/fetch-debian-package.sh" "$debian_suite" debs "openvswitch=$debian_version" | tail -1)
    from_deb() {  # PACKAGE PATH-IN-PACKAGE DEBIAN-FILE
        local d
        d=$(mktemp -d)
        dpkg-deb -x "$(ls "$debs/$1"_*.deb)" "$d" && mkdir -p "$(dirname "$tree/debian/$3")" &&
            cp "$d/$2" "$tree/debian/$3" || die "no $2 in Debian's $1 $debian_version"
        rm -rf "$d"
    }
    from_deb openvswitch-vtep etc/openvswitch-vtep/openvswitch-vtep.sh scripts/openvswitch-vtep.sh
    for f in openvswitch-testcontroller.default openvswitch-testcontroller.sh; do
        from_deb openvswitch-testcontroller "etc/openvswitch-testcontroller/$f" "scripts/$f"
    done
    for p in openvswitch-common openvswitch-switch; do
        from_deb "$p" "usr/share/lintian/overrides/$p" "$p.lintian-overrides"
    done
    next=$("$top/cmake/fetch-debian-package.sh" forky dsc openvswitch=4.0.0-2 \
        eea5aee0fc5c0d278753a67d85ae59e0ab1de43962fddb59245afac5cd123de5 | tail -1)
    for f in openvswitch-switch-dpdk.install python3-openvswitch.install \
        openvswitch-common.postinst openvswitch-switch.preinst openvswitch-source.docs; do
        [ ! -e "$tree/debian/$f" ] || die "openvswitch-source's debian/ has $f now: drop it from this list"
        tar -xJf "$next"/openvswitch_4.0.0-2.debian.tar.xz -C "$tree" "debian/$f" ||
            die "no debian/$f in Debian's openvswitch 4.0.0-2"
    done
fi
# The tree is `make dist` of Debian's build, Debian's patches applied:
# reverse them, last first, to reach the upstream tree that dpkg-source
# applies them to (Debian 13's 3.5.0-1 has none).
mkdir -p "$tree/debian/patches"
touch "$tree/debian/patches/series"
while read -r p; do
    case "$p" in "" | \#*) continue ;; esac
    (cd "$tree" && patch -R -p1 --silent --force --no-backup-if-mismatch <"debian/patches/$p" \
        >>"$log" 2>&1) || fail "reversing Debian's $p on openvswitch-source's tree"
done < <(tac "$tree/debian/patches/series")
step "reversed Debian's $(grep -c '^[^#]' "$tree/debian/patches/series") patches: the upstream $upstream_version tree"

# ---- 2. The series, the plugin, the packaging changes ----
mkdir -p "$tree/debian/patches/ovscls"
n=0
while read -r p; do
    case "$p" in "" | \#*) continue ;; esac
    cp "$top/patches/$p" "$tree/debian/patches/ovscls/"
    echo "ovscls/$(basename "$p")" >>"$tree/debian/patches/series"
    n=$((n + 1))
done <"$top/patches/series-$line"
step "added the series' $n patches to debian/patches/series (after Debian's)"
mkdir -p "$tree/debian/ovscls-plugin"
(cd "$top" && cp -r CMakeLists.txt cmake classifier lookups tail jit plugin "$tree/debian/ovscls-plugin/")
# The plugin's version for dpcls-plugin/show (the copy has no .git).
git -C "$top" describe --always --dirty 2>/dev/null >"$tree/debian/ovscls-plugin/VERSION" ||
    echo "$version" >"$tree/debian/ovscls-plugin/VERSION"
# ovs-dpcls-plugin(7), made from the reference page (packages/md2man.py),
# installed by openvswitch-switch, whose ovs-vswitchd has the plugin.
python3 "$here/md2man.py" --version "$version" \
    --date "$(git -C "$top" log -1 --format=%cs 2>/dev/null || date +%F)" \
    "$top/docs/ref/ovs-dpcls-plugin.md" >"$tree/debian/ovs-dpcls-plugin.7" ||
    die "making the man page from docs/ref/ovs-dpcls-plugin.md failed"
echo debian/ovs-dpcls-plugin.7 >>"$tree/debian/openvswitch-switch.manpages"
# debian/copyright: the plugin's sources and the series (Apache-2.0), and
# xbyak (BSD-3-clause), whose header-only code the JIT compiles into both
# ovs-vswitchd.  Debian's file already has both licences' stand-alone
# paragraphs; the new Files paragraphs go before the first of those.
for l in Apache-2.0 BSD-3-clause; do
    grep -qx "License: $l" "$tree/debian/copyright" ||
        die "debian/copyright has no stand-alone 'License: $l' paragraph to refer to"
done
cat >"$work/copyright-ovscls" <<'COPYRIGHT'
Files: debian/ovscls-plugin/*
Copyright: the ovs-dpcls-plugin authors
License: Apache-2.0
Comment: ovs-dpcls-plugin's lookups, built into ovs-vswitchd and
 ovs-vswitchd-dpdk.  Its JIT (jit/) is compiled with the headers of xbyak
 (Debian's libxbyak-dev, header-only), so both binaries contain xbyak's
 code: Copyright 2007 MITSUNARI Shigeo <herumi@nifty.com>, under the
 BSD-3-clause licence below.

Files: debian/patches/ovscls/*
Copyright: the ovs-dpcls-plugin authors
License: Apache-2.0
Comment: the series that lets a lookup register at run time, offered under
 Open vSwitch's licence.

COPYRIGHT
awk -v add="$work/copyright-ovscls" '
    !done && prev_blank && /^License:/ { while ((getline l < add) > 0) print l; done = 1 }
    { print; prev_blank = ($0 == "") }
    END { if (!done) exit 1 }' "$tree/debian/copyright" >"$tree/debian/copyright.new" ||
    die "debian/copyright has no stand-alone License paragraph after a blank line"
mv "$tree/debian/copyright.new" "$tree/debian/copyright"
# Build-Depends: what the plugin is built with.
grep -q '^Build-Depends:' "$tree/debian/control" || die "debian/control has no Build-Depends line"
sed -i 's/^Build-Depends: /Build-Depends: cmake, g++, libxbyak-dev [amd64], /' "$tree/debian/control"
# debian/rules: after Debian's builds, the plugin into each ovs-vswitchd.
link_flags="--flavour auto$([ "$plugin_default" = yes ] && echo " --plugin-default")"
cat >>"$tree/debian/rules" <<RULES

# ovs-dpcls-plugin: build the plugin's lookups against each OVS build and
# link them into its ovs-vswitchd (debian/ovscls-plugin/plugin/link-into-ovs.sh).
execute_after_dh_auto_build:
	debian/ovscls-plugin/plugin/link-into-ovs.sh --ovs-build _debian --ovs-source . $link_flags
ifneq (,\$(filter i386 amd64 ppc64el arm64 riscv64, \$(DEB_HOST_ARCH)))
	debian/ovscls-plugin/plugin/link-into-ovs.sh --ovs-build _dpdk --ovs-source . $link_flags
endif

execute_after_dh_auto_clean:
	rm -rf _debian/ovscls-plugin _dpdk/ovscls-plugin
RULES
name=${DEBFULLNAME:-ovs-dpcls-plugin build}
mail=${DEBEMAIL:-root@$(hostname -f 2>/dev/null || hostname)}
{
    echo "openvswitch ($version) $suite; urgency=medium"
    echo
    echo "  * ovs-dpcls-plugin: the lookups specialized, runtime, jit_avx2,"
    echo "    jit_fused and tail_index built into ovs-vswitchd and"
    echo "    ovs-vswitchd-dpdk,"
    if [ "$plugin_default" = yes ]; then
        echo "    preferred over OVS's generic (dpif-netdev/subtable-lookup-prio-set"
        echo "    switches back)."
    else
        echo "    at priority 0 (dpif-netdev/subtable-lookup-prio-set enables them)."
    fi
    echo "  * debian/patches/ovscls: the series that lets a lookup register at run"
    echo "    time, with fixes and dpif-netdev/subtable-show:"
    while read -r p; do
        case "$p" in "" | \#*) continue ;; esac
        echo "    - $(sed -n 's/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//p' "$top/patches/$p" | head -1)"
    done <"$top/patches/series-$line"
    echo "  * debian/rules: build the plugin and link it into both ovs-vswitchd."
    echo "  * debian/control: Build-Depends on cmake, g++, libxbyak-dev."
    echo "  * openvswitch-switch: the man page ovs-dpcls-plugin(7)."
    echo "  * debian/copyright: the plugin and the series (Apache-2.0), xbyak"
    echo "    (BSD-3-clause, compiled into the JIT)."
    echo
    # The entry's date, which dpkg-buildpackage makes SOURCE_DATE_EPOCH:
    # the project's last commit, so that a rebuild of it is the same.
    echo " -- $name <$mail>  $(git -C "$top" log -1 --format=%aD 2>/dev/null || date -R)"
    echo
    cat "$tree/debian/changelog"
} >"$tree/debian/changelog.new"
mv "$tree/debian/changelog.new" "$tree/debian/changelog"
(cd "$tree" && dpkg-parsechangelog -S Version) | grep -qxF "$version" || die "the changelog does not parse"

# ---- 3. Build ----
step "installing the build dependencies (apt-get build-dep on the tree)"
DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq -o DPkg::Lock::Timeout=600 "$tree" >>"$log" 2>&1 ||
    fail "apt-get build-dep"
source "$top/cmake/ccache.sh"
ccache_setup "$work/ccache-stats.log"
# Debian's tools only (a pyenv or /usr/local python first in PATH lacks
# Debian's setuptools, whose --install-layout=deb debian/rules uses), and
# ccache's compiler wrappers.
export PATH=/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin
start=$SECONDS
step "dpkg-buildpackage -b (DEB_BUILD_OPTIONS=nocheck parallel=$(nproc)); log in $log"
(cd "$tree" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -b -uc -us) \
    >>"$log" 2>&1 || fail "dpkg-buildpackage"
step "built in $((SECONDS - start)) s; ccache: $(ccache_stats "$work/ccache-stats.log")"

# ---- 4. Debian's packages, file by file (compare_with_debian, above) ----
compare_with_debian "$work"

# ---- 5. The folder ----
rm -rf "$result" "$result.tmp"
mkdir -p "$result.tmp"
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$result.tmp/"
(cd "$result.tmp" && sha256sum ./*.deb | sed 's| \./| |' >SHA256SUMS)
for deb in "$result.tmp"/*.deb; do
    dpkg-deb -W --showformat='${Package} ${Version} ${Architecture} ' "$deb"
    stat -c '%s' "$deb"
done | awk '{ printf "%-36s %-32s %-6s %10d bytes\n", $1, $2, $3, $4 }' >"$result.tmp/PACKAGES"
cp "$log" "$result.tmp/build.log"
cp "$work/compare-with-debian.txt" "$result.tmp/"
touch "$result.tmp/.built"
mv "$result.tmp" "$result"
rm -rf "$work"
step "packages in $result:"
sed 's/^/  /' "$result/PACKAGES" >&2
copy_out
echo "$result"
