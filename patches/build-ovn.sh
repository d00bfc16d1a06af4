#!/usr/bin/env bash
# Builds OVN against the project's patched OVS 4.0 tree, once per what it
# is built from, and prints OVN's built tree on its last line.
#
#   patches/build-ovn.sh [--ovs-tree TREE] [--cached]
#
#   --ovs-tree TREE  an OVS 4.0 tree, configured and built (the PREFIX/src
#                    of patches/build-ovs.sh); default: the tree of
#                    `patches/cached-build.sh --ovs 4.0 --validate`, whose
#                    ovs-vswitchd has the plugin linked in and checks every
#                    lookup it serves (OVN's testsuite runs that switch)
#   --cached         builds nothing: prints the tree and exits 0 if it is
#                    built, 1 if not
#
# OVN is Debian unstable's source package ovn 26.03.1-1 (upstream 26.03.1;
# Debian builds it from openvswitch-source >= 3.7), fetched through a
# private apt configuration (cmake/fetch-debian-package.sh) and pinned by
# its .dsc's sha256, which pins the tarballs.  OVN 26.03 predates three
# changes of OVS 4.0's lib; patches/ovn/26.03/ adapts it, one patch per
# change (series: the order).  A patch that does not apply, or a build
# that stops, is an error that says which and where the log is: a new OVN
# or OVS release needs its own patches there.
#
# The build goes to $OVS_BUILD_CACHE (default /var/cache/ovs-dpcls-plugin)
# in a folder keyed by the pin, the patches, this script and the OVS tree
# (whose folder name is its own key); the plugin is not part of the key:
# OVN links OVS's lib, not ovs-vswitchd.  One caller at a time per folder.
set -euo pipefail
cd "$(dirname "$0")/.."
ovn_version=26.03.1
ovn_source=ovn=26.03.1-1
ovn_dsc_sha256=05be90495492858f5cf915801294840318da9db1c472453d2523a50bff9729c3
patch_dir=patches/ovn/26.03

tree="" only_ask=no
while [ $# -gt 0 ]; do
    case "$1" in
        --ovs-tree) tree=${2:?--ovs-tree needs a folder}; shift 2 ;;
        --cached) only_ask=yes; shift ;;
        -h | --help) sed -n '2,28p' "$0"; exit 0 ;;
        *) echo "build-ovn.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$tree" ]; then
    if [ "$only_ask" = yes ]; then
        prefix=$(patches/cached-build.sh --cached --ovs 4.0 --validate) || {
            echo "$prefix/src"; exit 1; }
    else
        prefix=$(patches/cached-build.sh --ovs 4.0 --validate | tail -1)
    fi
    tree=$prefix/src
fi
[ -f "$tree/lib/.libs/libopenvswitch.a" ] && grep -q '^#define VERSION "4\.0' "$tree/config.h" || {
    echo "build-ovn.sh: $tree is not a built OVS 4.0 tree (patches/build-ovs.sh --ovs 4.0)" >&2
    exit 1
}
tree=$(cd "$tree" && pwd)
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
key=$( (cat "$0" "$patch_dir"/*; echo "$ovn_source $ovn_dsc_sha256 $tree"
    grep -s -e '^VERSION_ID=' -e '^VERSION_CODENAME=' /etc/os-release) | sha256sum | cut -c1-16)
out=$cache/ovn-$ovn_version-$key
if [ "$only_ask" = yes ]; then
    echo "$out/src"
    [ -f "$out/.built" ]
    exit
fi
mkdir -p "$cache"
exec 9>"$out.lock"
flock 9
if [ -f "$out/.built" ]; then
    echo "$out/src"
    exit 0
fi
rm -rf "$out"
mkdir -p "$out"
log=$out/build.log
scripts/apt-install-missing.sh patches/build-ovn.sh autoconf automake libtool libcap-ng-dev \
    libssl-dev libunbound-dev dpkg-dev >&2
src=$(cmake/fetch-debian-package.sh sid source "$ovn_source" "$ovn_dsc_sha256" | tail -1)
cp -a "$src" "$out/src"
cd "$out/src"
while read -r p; do
    case "$p" in '' | '#'*) continue ;; esac
    if ! patch -p1 --forward --batch <"$OLDPWD/$patch_dir/$p" >>"$log" 2>&1; then
        echo "build-ovn.sh: $patch_dir/$p does not apply to OVN $ovn_version (log: $log)" >&2
        exit 1
    fi
done <"$OLDPWD/$patch_dir/series"
echo "build-ovn.sh: OVN $ovn_version with $(grep -cv -e '^#' -e '^$' "$OLDPWD/$patch_dir/series") patches, against $tree" >&2
# Without OVN's Sphinx docs (a minute or more of CPU where python3-sphinx
# is installed; nothing here reads them), as cached-build.sh does for OVS.
export SPHINXBUILD=none
{
    ./boot.sh && ./configure --with-ovs-source="$tree" --with-ovs-build="$tree" --enable-silent-rules &&
        make -j"$(nproc)"
} >>"$log" 2>&1 || {
    echo "build-ovn.sh: OVN $ovn_version did not build against $tree; first errors:" >&2
    grep -m5 -e 'error:' -e 'Error ' "$log" >&2 || tail -5 "$log" >&2
    echo "build-ovn.sh: an OVS 4.0 change OVN predates needs a patch in $patch_dir (log: $log)" >&2
    exit 1
}
touch "$out/.built"
echo "$out/src"
