#!/usr/bin/env bash
# Builds the patched OVS once per configuration and reuses it afterwards:
#
#   patches/cached-build.sh [build-ovs.sh options but --prefix]
#   patches/cached-build.sh --cached [the same options]
#                           only says whether it is built: prints the
#                           prefix and exits 0 if so, 1 if not; builds
#                           nothing
#
# The build goes to $OVS_BUILD_CACHE (default /var/cache/ovs-dpcls-plugin),
# in a folder named by the options and a key over everything that goes into
# it (the patches, build-ovs.sh, the OVS source and flavour table, and every
# source the plugin is built from), so a change to any of them builds anew.
# Prints the prefix on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
case " $* " in *" -h "* | *" --help "*) exec patches/build-ovs.sh --help ;; esac
only_ask=no
if [ "${1:-}" = --cached ]; then
    only_ask=yes
    shift
fi
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}
# The system it is built on counts too (a Debian 13 or testing root,
# scripts/debian-root.sh, shares the cache with the Debian 12 machine).
key=$( (find patches CMakeLists.txt cmake classifier lookups tail jit plugin -type f | LC_ALL=C sort |
    xargs cat; grep -s -e '^VERSION_ID=' -e '^VERSION_CODENAME=' /etc/os-release) | sha256sum | cut -c1-16)
name=$(printf '%s' "$*" | tr -c 'a-z0-9' '-' | sed 's/--*/-/g; s/^-//; s/-$//')
prefix="$cache/ovs-patched-${name:-stock}-$key"
if [ "$only_ask" = yes ]; then
    echo "$prefix"
    [ -f "$prefix/.built" ]
    exit
fi
# One build of a prefix at a time: a second caller (tests/prebuild.sh builds
# ahead in the background) waits for the first and then finds it built.
mkdir -p "$cache"
exec 9>"$prefix.lock"
flock 9
if [ ! -f "$prefix/.built" ]; then
    rm -rf "$prefix"
    # Without OVS's Sphinx docs (html and man, a minute or more of CPU per
    # build where python3-sphinx is installed): the series changes no
    # document, and nothing here reads them.  (configure takes SPHINXBUILD
    # from the environment.)
    SPHINXBUILD=none patches/build-ovs.sh --prefix "$prefix" "$@" >&2
    touch "$prefix/.built"
fi
echo "$prefix"
