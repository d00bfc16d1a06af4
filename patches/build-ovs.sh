#!/usr/bin/env bash
# Builds Open vSwitch with the ovs-dpcls-plugin lookups linked in, and
# installs it.
#
#   patches/build-ovs.sh --prefix DIR [--ovs RELEASE | --ovs-source SRC]
#                        [--dpdk] [--autovalidator | --validate]
#                        [--plugin-default | --series-only | --stock]
#                        [--flavour F] [--host HOST] [--tree-only | --link-only]
#
#   --prefix DIR       install into DIR (bin/, sbin/, share/...); the
#                      configured, built tree stays in DIR/src, so other
#                      programs can compile against its headers and config.h
#                      and link DIR/src/lib/.libs/libopenvswitch.a.  DIR
#                      must be new or empty, or made by this script (its
#                      marker file .ovs-dpcls-plugin-prefix): another
#                      folder is refused, untouched
#   --ovs RELEASE      a release line of cmake/ovs-sources.txt, its source
#                      pinned by sha256: 3.1 (default; Debian 12's
#                      openvswitch-source 3.1.0), 3.5 (Debian 13's 3.5.0)
#                      or 4.0 (Debian testing's 4.0.0), the last two
#                      fetched through a private apt configuration
#   --ovs-source SRC   any other Open vSwitch 3.x or 4.0.x source: a release
#                      tarball or a directory (a git tree without
#                      ./configure gets ./boot.sh first); its version
#                      (configure.ac) picks the series
#   --dpdk             build with DPDK (--with-dpdk=shared, Debian's
#                      libdpdk-dev): 22.11 for OVS 3.1 (Debian 12's), 24.11
#                      for 3.5 (Debian 13's: run this in a Debian 13 root,
#                      scripts/debian-root.sh trixie -- patches/build-ovs.sh),
#                      25.11 for 4.0 (Debian testing's: in a forky root)
#   --autovalidator    OVS's --enable-autovalidator: every lookup
#                      implementation, the plugin's included, is checked
#                      against OVS's generic on every lookup (3.x only:
#                      4.0 removed it)
#   --validate         (4.0, which has no autovalidator) the plugin checks
#                      every lookup it serves against OVS's generic, and
#                      logs at exit how many keys it checked per lookup
#                      (plugin/lookup_validation.h); its lookups are the
#                      defaults, as with --plugin-default
#   --plugin-default   the plugin's lookups are the defaults at start-up
#                      (above OVS's generic at 1; plugin/README.md);
#                      without it OVS's own defaults stand.  On 3.x, such
#                      a build started with OVSCLS_PLUGIN_TEST_MODE=
#                      autovalidator in its environment behaves as an
#                      --autovalidator build (the plugin's lookups at 0,
#                      OVS's autovalidator above all), so that one build
#                      serves both of tests/vswitchd/run.sh's runs; the
#                      Debian packages have no such mode
#   --series-only      the series applied, no plugin linked: what the
#                      series costs a switch that does not use it
#   --stock            Open vSwitch as released: no series, no plugin (the
#                      baseline for --series-only, e.g. perf/p2p/series_cost.sh)
#   --flavour F        a flavour of cmake/ovs-flavours.txt, which has its
#                      CFLAGS: sse42 (default; CRC32 hashing, OVS's
#                      recommended flags), debian (Debian's own "-g -O2",
#                      mhash), aarch64-crc and aarch64-debian (cross-built
#                      with Debian's gcc-aarch64-linux-gnu, configure
#                      --host; the plugin without jit_avx2).  The plugin is
#                      compiled for the same flavour (OVS refuses, with a
#                      log line, a plugin that hashes differently).
#   --host HOST        the GNU triplet to build for, e.g. aarch64-linux-gnu:
#                      without --flavour, the first flavour of the table
#                      for HOST (aarch64-crc); with it, must be its host
#   --tree-only        steps 1-3 below only: DIR/src is OVS with the
#                      series, configured and built (its lib, its programs,
#                      ovs-vswitchd without the plugin); nothing installed
#   --link-only        steps 4-5 only, in DIR/src as --tree-only left it
#                      with the same options (refused otherwise): the
#                      plugin built and linked into ovs-vswitchd, and the
#                      install.  So a changed plugin is linked again
#                      without building OVS again (patches/cached-build.sh)
#
# The series (patches/series-RELEASE: one per release line, listing the
# patch files, which series share when identical) is that of the tree's
# release line, else the nearest older one, else any other whose every
# patch applies; it is applied to a fresh tree.  On a tree of another
# release line a patch's NEWS hunk may not apply (NEWS differs from release
# to release): it is then left out, and said so; any other hunk must apply.
# When no series applies, nothing is built and the script says which patch
# of which series failed.
#
# The plugin is not referred to by OVS: it registers its lookups from a
# constructor (dpcls_subtable_lookup_register() on 3.x,
# dpcls_lookup_provider_register() on 4.0, added by the series), and
# is linked into ovs-vswitchd whole (--whole-archive); every other program
# is OVS's own.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
prefix="" dpdk=no autovalidator=no validate=no plugin_default=no flavour="" want_host="" release="" ovs_src=""
series=yes plugin=yes stage=all
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --ovs) release=${2:?--ovs needs a release of cmake/ovs-sources.txt}; shift 2 ;;
        --ovs-source) ovs_src=${2:?--ovs-source needs a tarball or directory}; shift 2 ;;
        --dpdk) dpdk=yes; shift ;;
        --autovalidator) autovalidator=yes; shift ;;
        --validate) validate=yes; shift ;;
        --plugin-default) plugin_default=yes; shift ;;
        --series-only) plugin=no; shift ;;
        --stock) series=no plugin=no; shift ;;
        --flavour) flavour=${2:?--flavour needs a flavour of cmake/ovs-flavours.txt}; shift 2 ;;
        --host) want_host=${2:?--host needs a GNU triplet}; shift 2 ;;
        --tree-only) stage=tree-only; shift ;;
        --link-only) stage=link-only; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "build-ovs.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "build-ovs.sh: --prefix DIR is required" >&2; usage >&2; exit 2; }
if [ "$plugin" = no ] && [ "$plugin_default" = yes ]; then
    echo "build-ovs.sh: --plugin-default needs the plugin: not with --series-only or --stock" >&2
    exit 2
fi
source "$top/cmake/ovs-table.sh"
if [ -z "$flavour" ] && [ -n "$want_host" ]; then
    for f in $(ovs_flavour_names); do
        if [ "$(ovs_flavour "$f" host)" = "$want_host" ]; then flavour=$f; break; fi
    done
    [ -n "$flavour" ] || { echo "build-ovs.sh: no flavour in cmake/ovs-flavours.txt is for host '$want_host'" >&2; exit 2; }
fi
flavour=${flavour:-sse42}
cflags=$(ovs_flavour "$flavour" cflags) || exit 2
host=$(ovs_flavour "$flavour" host)
cross=$(ovs_cross_prefix "$host")
if [ -n "$want_host" ] && [ "$want_host" != "$host" ]; then
    echo "build-ovs.sh: flavour $flavour is for $host, not --host $want_host" >&2
    exit 2
fi
if [ -n "$release" ] && [ -n "$ovs_src" ]; then
    echo "build-ovs.sh: --ovs and --ovs-source exclude each other" >&2
    exit 2
fi
if [ -n "$ovs_src" ]; then
    [ -e "$ovs_src" ] || { echo "build-ovs.sh: --ovs-source $ovs_src does not exist" >&2; exit 2; }
    ovs_src=$(cd "$(dirname "$ovs_src")" && pwd)/$(basename "$ovs_src")
else
    release=${release:-$(ovs_release_names | head -1)}
    ovs_source "$release" version >/dev/null ||
        { echo "build-ovs.sh: for another release, give its source with --ovs-source" >&2; exit 2; }
fi
# The DPDK release each OVS release line is built with (its NEWS says).
case "$release" in
    3.1) dpdk_line=22.11 ;;
    3.5) dpdk_line=24.11 ;;
    4.0) dpdk_line=25.11 ;;
    *) dpdk_line="" ;;
esac
if [ "$dpdk" = yes ] && [ -z "$dpdk_line" ]; then
    echo "build-ovs.sh: --dpdk is for the pinned releases (--ovs 3.1, 3.5 or 4.0)" >&2
    exit 2
fi
if [ -n "$cross" ] && [ "$dpdk" = yes ]; then
    echo "build-ovs.sh: --dpdk is not supported when cross-building for $host" >&2
    exit 2
fi
# What steps 1-3 build the tree with: --link-only checks that the tree it
# links into was built with the same.
tree_options="release=$release source=$ovs_src flavour=$flavour dpdk=$dpdk autovalidator=$autovalidator series=$series"
# The prefix is this script's only with its marker: it then removes and
# rewrites DIR/src and installs over DIR.  A folder with anything in it and
# no marker (an operator's /usr/local, say) is refused, untouched.
marker=.ovs-dpcls-plugin-prefix
if [ -e "$prefix" ] && [ ! -f "$prefix/$marker" ] && [ -n "$(ls -A "$prefix" 2>/dev/null)" ]; then
    echo "build-ovs.sh: --prefix $prefix is not empty and was not made by build-ovs.sh" >&2
    echo "  (no $prefix/$marker): refusing to build and install into it; give a new or empty folder" >&2
    exit 2
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
[ -f "$prefix/$marker" ] ||
    echo "made by patches/build-ovs.sh, which removes and rewrites its src/ and installs over it" \
        >"$prefix/$marker"
# Scratch space of this run, removed on every exit.
scratch_root=$(mktemp -d)
trap 'rm -rf "$scratch_root"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
jobs=$(nproc)
log="$prefix/build.log"
[ "$stage" = link-only ] || : >"$log"
step() { echo "build-ovs.sh: $*" >&2; }
fail() { echo "build-ovs.sh: $1 failed; the last lines of $log:" >&2; tail -25 "$log" >&2; exit 1; }

# What this script needs (not the whole project's scripts/install-deps.sh:
# it also runs in a Debian 13 root, scripts/debian-root.sh).
needed=(patch g++ make cmake pkg-config python3 ccache autoconf automake libtool)
[ "$host" = x86_64-linux-gnu ] && needed+=(libxbyak-dev)
[ -n "$cross" ] && needed+=("g++-$host")
[ "$dpdk" = yes ] && needed+=(libdpdk-dev libnuma-dev libpcap-dev)
[ "$release" = 3.1 ] && needed+=(openvswitch-source)
"$top/scripts/apt-install-missing.sh" build-ovs.sh "${needed[@]}" || exit 1
if [ "$dpdk" = yes ]; then
    have_dpdk=$(pkg-config --modversion libdpdk 2>/dev/null || echo none)
    case "$have_dpdk" in
        "$dpdk_line".*) step "DPDK $have_dpdk (OVS $release wants $dpdk_line)" ;;
        *) echo "build-ovs.sh: OVS $release is built with DPDK $dpdk_line; this system's libdpdk-dev is $have_dpdk" >&2
           [ "$dpdk_line" = 24.11 ] &&
               echo "  (Debian 13 ships it: scripts/debian-root.sh trixie -- patches/build-ovs.sh ...)" >&2
           [ "$dpdk_line" = 25.11 ] &&
               echo "  (Debian testing ships it: scripts/debian-root.sh forky -- patches/build-ovs.sh ...)" >&2
           exit 1 ;;
    esac
fi

# 1. A fresh tree (a pinned release, or the given source) with a series.
stamp=$prefix/src/.ovscls-tree-options
if [ "$stage" = link-only ]; then
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$tree_options" ] || {
        echo "build-ovs.sh: --link-only: $prefix/src is no tree that --tree-only built with these options" >&2
        echo "  ($tree_options)" >&2
        exit 2
    }
    step "linking the plugin into the tree built before ($prefix/src)"
else
    rm -rf "$prefix/src" "$prefix/src.tmp"
    if [ -n "$release" ]; then
        step "unpacking OVS $(ovs_source "$release" version) ($(ovs_source "$release" origin)) into $prefix/src"
        ovs_source_unpack "$release" "$prefix/src" 2>>"$log" || fail "unpacking OVS $release"
    elif [ -d "$ovs_src" ]; then
        step "copying $ovs_src into $prefix/src"
        cp -a "$ovs_src" "$prefix/src.tmp" && mv "$prefix/src.tmp" "$prefix/src"
    else
        step "unpacking $ovs_src into $prefix/src"
        mkdir -p "$prefix/src.tmp"
        tar -xf "$ovs_src" -C "$prefix/src.tmp" || fail "unpacking $ovs_src"
        top_dirs=("$prefix"/src.tmp/*)
        [ ${#top_dirs[@]} -eq 1 ] && [ -d "${top_dirs[0]}" ] ||
            { echo "build-ovs.sh: $ovs_src does not hold one top directory" >&2; exit 1; }
        mv "${top_dirs[0]}" "$prefix/src"
        rmdir "$prefix/src.tmp"
    fi
fi
cd "$prefix/src"
# 3.x has the lookup registry (lib/dpif-netdev-lookup.c); 4.0 removed it
# and keeps OVS's own lookups in lib/dpif-netdev-dpcls.c.
[ -f configure.ac ] && { [ -f lib/dpif-netdev-lookup.c ] || [ -f lib/dpif-netdev-dpcls.c ]; } ||
    { echo "build-ovs.sh: $prefix/src is not an Open vSwitch source tree" >&2; exit 1; }
version=$(sed -n 's/^AC_INIT(openvswitch, *\([0-9][0-9.]*\),.*/\1/p' configure.ac)
case "$version" in
    3.*.* | 4.0.*) ;;
    *) echo "build-ovs.sh: the tree is Open vSwitch '${version:-unknown}', not a 3.x or 4.0.x release" >&2; exit 1 ;;
esac
if [ "$autovalidator" = yes ] && [ "${version%%.*}" != 3 ]; then
    echo "build-ovs.sh: --autovalidator: Open vSwitch $version has no autovalidator (4.0 removed it): --validate" >&2
    exit 2
fi
if [ "$validate" = yes ] && { [ "${version%%.*}" = 3 ] || [ "$plugin" = no ]; }; then
    echo "build-ovs.sh: --validate is the plugin's check for OVS 4.0 (3.x: --autovalidator)" >&2
    exit 2
fi
# ccache (Debian's), its cache beside the builds: configurations and
# releases share most of OVS's objects (ccache's preprocessor mode sees
# through -D flags and config.h lines no file uses), and a changed plugin
# changes none of them.  Paths inside the tree and the tree's location do
# not enter the hash.
cc=${cross}gcc
if command -v ccache >/dev/null; then
    source "$top/cmake/ccache.sh"
    ccache_setup "$prefix/ccache-stats.log" "$prefix"
    cc="ccache $cc"
fi
if [ "$stage" != link-only ]; then
    if [ ! -x configure ]; then
        step "no ./configure (a git tree): ./boot.sh"
        for tool in autoconf automake libtool; do
            command -v "$tool" >/dev/null || missing_tools+=("$tool")
        done
        if [ -n "${missing_tools[*]:-}" ]; then
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                "${missing_tools[@]}" >/dev/null
        fi
        ./boot.sh >>"$log" 2>&1 || fail "./boot.sh"
    fi

    if [ "$series" = yes ]; then
        # Series to try: the tree's release line, then the older lines nearest
        # first, then the newer ones.
        # without_news PATCH: the patch without its NEWS diff.
        without_news() {
            awk '/^diff --git / { skip = ($3 == "a/NEWS") } !skip' "$1"
        }
        # apply_patch DIR PATCH [own]: applies PATCH in DIR; for a series of
        # another release line, retries without NEWS when the whole does not apply.
        # Sets $news_left_out when it did.
        apply_patch() {
            local dir=$1 p=$2 own=${3:-}
            news_left_out=no
            if (cd "$dir" && patch -p1 --dry-run --silent --force <"$p" >/dev/null 2>&1); then
                (cd "$dir" && patch -p1 --silent --force --no-backup-if-mismatch <"$p" >/dev/null 2>&1)
            elif [ -z "$own" ] && (cd "$dir" && without_news "$p" |
                patch -p1 --dry-run --silent --force >/dev/null 2>&1); then
                news_left_out=yes
                (cd "$dir" && without_news "$p" | patch -p1 --silent --force --no-backup-if-mismatch             >/dev/null 2>&1)
            else
                return 1
            fi
        }
        line=${version%.*}
        # Only series of the tree's major release: 4.0's hooks differ from 3.x's.
        candidates=$(ls "$here" | sed -n 's/^series-\([0-9]*\.[0-9]*\)$/\1/p' | awk -v l="$line" '
            function num(v, p) { split(v, p, "."); return p[1] * 1000 + p[2] }
            int(num($0) / 1000) == int(num(l) / 1000) {
                d = num($0) - num(l); print (d == 0 ? 0 : d < 0 ? 1 : 2), (d < 0 ? -d : d), $0 }' |
            sort -k1,1n -k2,2n | cut -d' ' -f3)
        # True when every patch of series-$1 applies, in order, to a scratch copy
        # of the tree; else names the first that does not in $failed_patch.
        series_applies() {
            local scratch p ok=0
            scratch=$(mktemp -d "$scratch_root/series.XXXXXX")
            cp -a . "$scratch/t"
            while read -r p; do
                case "$p" in "" | \#*) continue ;; esac
                if ! apply_patch "$scratch/t" "$here/$p" "$([ "$1" = "$line" ] && echo own)"; then
                    failed_patch=$p
                    ok=1
                    break
                fi
            done <"$here/series-$1"
            rm -rf "$scratch"
            return "$ok"
        }
        chosen="" tried=()
        for s in $candidates; do
            if series_applies "$s"; then
                chosen=$s
                break
            fi
            tried+=("series-$s ($failed_patch does not apply)")
        done
        if [ -z "$chosen" ]; then
            echo "build-ovs.sh: no series fits Open vSwitch $version; tried: ${tried[*]:-no series at all}" >&2
            echo "  (patches/README.md says how to port the series to another release)" >&2
            exit 1
        fi
        [ "$chosen" = "$line" ] || step "no series-$line: series-$chosen applies to OVS $version"
        while read -r p; do
            case "$p" in "" | \#*) continue ;; esac
            apply_patch . "$here/$p" "$([ "$chosen" = "$line" ] && echo own)" || fail "applying $p"
            if [ "$news_left_out" = yes ]; then
                step "applied $p (series-$chosen) without its NEWS hunk (this tree's NEWS differs)"
            else
                step "applied $p (series-$chosen)"
            fi
        done <"$here/series-$chosen"
        # The series adds a test program to tests/automake.mk: regenerate.
        for tool in autoconf automake libtoolize; do
            command -v "$tool" >/dev/null || {
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                    autoconf automake libtool >/dev/null
                break
            }
        done
        step "./boot.sh (the series changes tests/automake.mk)"
        ./boot.sh >>"$log" 2>&1 || fail "./boot.sh"
    else
        step "--stock: no series, no plugin: Open vSwitch $version as released"
    fi

    # 2. configure.
    args=(--prefix="$prefix" --localstatedir="$prefix/var" --sysconfdir="$prefix/etc")
    [ "$dpdk" = yes ] && args+=(--with-dpdk=shared)
    # Cross: configure would find the build machine's OpenSSL and libcap-ng
    # headers, which the cross linker has no libraries for.
    [ -n "$cross" ] && args+=(--host="$host" --disable-ssl --disable-libcapng)
    [ "$autovalidator" = yes ] && args+=(--enable-autovalidator)
    step "configuring: ${args[*]} CC=\"$cc\" CFLAGS=\"$cflags\""
    ./configure "${args[@]}" CC="$cc" CFLAGS="$cflags" >>"$log" 2>&1 || fail "configure"

    # 3. OVS as it is (which also generates the headers that the plugin's
    # registration includes, e.g. odp-netlink.h).
    step "building OVS with $jobs jobs (a few minutes without ccache hits)"
    make -j"$jobs" >>"$log" 2>&1 || fail "make"
    echo "$tree_options" >"$stamp"
fi  # steps 1-3
if [ "$stage" = tree-only ]; then
    [[ $cc != ccache* ]] || step "ccache: $(ccache_stats "$prefix/ccache-stats.log")"
    step "built OVS $version with the series in $prefix/src (--tree-only: no plugin, nothing installed)"
    exit 0
fi
# 4. The plugin, for the same hash flavour, built against this tree and
# linked into ovs-vswitchd only (plugin/link-into-ovs.sh), then install.
if [ "$plugin" = yes ]; then
    link_args=(--ovs-build "$prefix/src" --flavour "$flavour")
    [ "$plugin_default" = yes ] && link_args+=(--plugin-default)
    [ "$plugin_default" = yes ] && [ "${version%%.*}" = 3 ] && link_args+=(--test-modes)
    [ "$validate" = yes ] && link_args+=(--validate)
    [ -n "$cross" ] && link_args+=(--toolchain "$top/cmake/toolchain-$host.cmake")
    "$top/plugin/link-into-ovs.sh" "${link_args[@]}" 2>&1 | tee -a "$log" | sed 's/^/  /' >&2 ||
        fail "building and linking the plugin"
else
    step "no plugin linked (--series-only or --stock)"
fi

if [[ $cc == ccache* ]]; then
    step "ccache: $(ccache_stats "$prefix/ccache-stats.log")"
fi
make install >>"$log" 2>&1 || fail "make install"
# What was built, for scripts that reuse this prefix.
cat >"$prefix/build-info" <<INFO
flavour=$flavour
host=$host
dpdk=$dpdk
autovalidator=$autovalidator
validate=$validate
plugin_default=$plugin_default
series=$series
plugin=$plugin
INFO
step "installed into $prefix: $(ls "$prefix/sbin" | tr '\n' ' ')"
