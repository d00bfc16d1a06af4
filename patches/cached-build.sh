#!/usr/bin/env bash
# Builds the patched OVS once per configuration and reuses it afterwards:
#
#   patches/cached-build.sh [build-ovs.sh options but --prefix]
#           the whole build, installed; prints the prefix on its last line
#   patches/cached-build.sh --tree [the same options]
#           only its tree (step 1 below); prints the tree (PREFIX/src) on
#           its last line, with ovs-libs.txt in it (cmake/ovs-link-flags.sh)
#   patches/cached-build.sh --cached [--tree] [the same options]
#           builds nothing: prints the prefix (the tree) and exits 0 if it
#           is built, 1 if not
#
# In two steps, each cached by exactly what it is built from:
#   1. the tree (patches/build-ovs.sh --tree-only): OVS with the series,
#      configured and built (its lib, its programs, its tests' programs
#      once `make check` has run), keyed by the OVS source and flavour
#      tables, the series, the scripts that build it and the system.  The
#      unit tests of the sse42 flavour link this tree's lib
#      (CMakeLists.txt), so one build of a release serves its unit tests,
#      its ovs-vswitchd and its testsuite;
#   2. the plugin, built against the tree and linked into its ovs-vswitchd,
#      and the install (build-ovs.sh --link-only), keyed by every source
#      the plugin is built from: a changed plugin is linked into the same
#      tree again, without building OVS again.
# The build goes to $OVS_BUILD_CACHE (default /var/cache/ovs-dpcls-plugin),
# in a folder named by the options and the tree's key.  One caller at a
# time per folder: a second (tests/prebuild.sh builds ahead in the
# background, CMake asks for the tree) waits for the first and then finds
# it built.
set -euo pipefail
cd "$(dirname "$0")/.."
case " $* " in *" -h "* | *" --help "*) exec patches/build-ovs.sh --help ;; esac
only_ask=no only_tree=no
while [ $# -gt 0 ]; do
    case "$1" in
        --cached) only_ask=yes; shift ;;
        --tree) only_tree=yes; shift ;;
        *) break ;;
    esac
done
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
key_of() {  # key_of PATH...: a hash of the files under PATH but documents
    find "$@" -type f ! -name '*.md' | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16
}
source cmake/ovs-table.sh
# series_of [build-ovs.sh options]: the series files the build applies, the
# series' list and its patches: a pinned release's own line (build-ovs.sh
# takes series-RELEASE when there is one); every series for --ovs-source,
# whose version picks one at build time; none for --stock.
series_of() {
    local release
    release=$(ovs_release_names | head -1)
    while [ $# -gt 0 ]; do
        case "$1" in
            --ovs) release=${2:-}; shift ;;
            --ovs-source) release=any; shift ;;
            --stock) return 0 ;;
        esac
        shift
    done
    if [ "$release" != any ] && [ -f "patches/series-$release" ]; then
        echo "patches/series-$release"
        grep -v -e '^#' -e '^$' "patches/series-$release" | sed 's|^|patches/|'
    else
        ls patches/series-*
        grep -hv -e '^#' -e '^$' patches/series-* | sort -u | sed 's|^|patches/|'
    fi
}
# The tree: its series and the scripts and tables that build it, so that
# editing another release line's patch builds nothing again; the system it
# is built on counts too (a Debian 13 or testing root,
# scripts/debian-root.sh, shares the cache with the Debian 12 machine).
mapfile -t series_files < <(series_of "$@")
tree_key=$( (key_of patches/build-ovs.sh "${series_files[@]}" cmake/ovs-sources.txt \
    cmake/ovs-flavours.txt cmake/ovs-table.sh cmake/fetch-debian-package.sh cmake/ccache.sh \
    cmake/ovs-link-flags.sh scripts/apt-install-missing.sh
    grep -s -e '^VERSION_ID=' -e '^VERSION_CODENAME=' /etc/os-release) | sha256sum | cut -c1-16)
# The plugin: every source it is built from (its documents aside), and the
# script that links it.
plugin_key=$(key_of patches/build-ovs.sh CMakeLists.txt cmake classifier lookups tail jit plugin)
# The folder's name says the options; "--ovs 3.1" (the default release)
# names the same build as no --ovs.
named=()
while [ $# -gt 0 ]; do
    if [ "$1" = --ovs ] && [ "${2:-}" = "$(ovs_release_names | head -1)" ]; then
        shift 2
    else
        named+=("$1")
        shift
    fi
done
set -- "${named[@]}"
name=$(printf '%s' "$*" | tr -c 'a-z0-9' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
prefix="$cache/ovs-patched-${name:-stock}-$tree_key"
tree_built() { [ -f "$prefix/.tree-built" ]; }
plugin_built() { [ -f "$prefix/.built" ] && [ "$(cat "$prefix/.built")" = "$plugin_key" ]; }
if [ "$only_ask" = yes ]; then
    if [ "$only_tree" = yes ]; then
        echo "$prefix/src"
        tree_built
    else
        echo "$prefix"
        tree_built && plugin_built
    fi
    exit
fi
mkdir -p "$cache"
exec 9>"$prefix.lock"
flock 9
# Without OVS's Sphinx docs (html and man, a minute or more of CPU per
# build where python3-sphinx is installed): the series changes no
# document, and nothing here reads them.  (configure takes SPHINXBUILD from
# the environment.)
export SPHINXBUILD=none
# Called by CMake's make as a build step (--tree), this script sees that
# make's MAKEFLAGS, whose jobserver it is not handed: OVS's make would warn
# "jobserver unavailable: using -j1" and compile on one core.  build-ovs.sh
# runs its own make with its own -j instead.
unset MAKEFLAGS MFLAGS MAKELEVEL
if ! tree_built; then
    rm -rf "$prefix"
    patches/build-ovs.sh --prefix "$prefix" --tree-only "$@" >&2
    touch "$prefix/.tree-built"
fi
# (Again where a CMake build that owns it as an output removed it.)
[ -s "$prefix/src/ovs-libs.txt" ] || cmake/ovs-link-flags.sh "$prefix/src" >"$prefix/src/ovs-libs.txt"
if [ "$only_tree" = yes ]; then
    echo "$prefix/src"
    exit 0
fi
if ! plugin_built; then
    rm -f "$prefix/.built"
    patches/build-ovs.sh --prefix "$prefix" --link-only "$@" >&2
    echo "$plugin_key" >"$prefix/.built"
fi
echo "$prefix"
