#!/usr/bin/env bash
# The phy-to-phy forwarding benchmark on OVS-DPDK:
#
#   perf/p2p/run.sh [--ovs 3.1|3.5|4.0] [p2p.py options: --window S --rounds N
#                   --flows N --scenarios a,b,c,d,f,g,e]
#   perf/p2p/run.sh [--ovs ...] --tse [tse_grid.py options: --cells FILE
#                   --cell SPEC --window S --rounds N]
#   perf/p2p/run.sh [--ovs 3.1|4.0] --ovn [--check] [p2p.py options]
#                   (--scenario ovn is the same as --ovn)
#
# --ovn runs the OVN scenarios (h, i, j; p2p.py --scenarios picks others
# too): a topology programmed by a real ovn-northd and ovn-controller onto
# the bridge (perf/p2p/ovn_pipeline.py).  The OVN of each release: on 3.1,
# Debian 12's ovn 23.03.1 binaries, unpacked from its .debs into the build
# cache (never installed on the machine); on 4.0, OVN 26.03.1 built against
# the DPDK switch's tree (patches/build-ovn.sh).  Writes out/p2p-ovn/ (3.1)
# or out/p2p-4.0-ovn/.  --check runs the OVN traffic once through the
# release's checking build instead (3.1: the build above with
# OVSCLS_PLUGIN_TEST_MODE=autovalidator, OVS's autovalidator checking every
# lookup; 4.0: a --validate build, the plugin's defaults each checked) and
# fails on a mismatch: out/p2p[-4.0]-ovn-check/.
#
# --tse runs the Tuple Space Explosion grid in the switch instead
# (tse_grid.py, perf/tse/cells.txt by default): out/p2p-tse/grid.json,
# grid.md (the table) and grid.png (the heat map), perf/tse/report.py's.
#
# Builds (or reuses) the patched OVS with DPDK, writes the pcaps, measures
# dpdk-testpmd's io forwarding of the same traffic (the I/O ceiling), and
# runs p2p.py, which reserves hugepages (or says it falls back to
# --no-huge), starts a private ovsdb-server and ovs-vswitchd on DPDK pcap
# vdevs, and restores everything when it ends.  Writes out/p2p/p2p.json,
# the table (out/p2p/table.txt) and the chart (out/p2p/p2p.png, .svg); for
# --ovs 3.5 and 4.0, the same in out/p2p-3.5/ and out/p2p-4.0/.
#
# --ovs 3.1 (default) builds with Debian 12's DPDK 22.11 on this machine.
# --ovs 3.5 builds with DPDK 24.11, Debian 13's: the whole run (build,
# testpmd, the switch) happens in a Debian 13 root (scripts/debian-root.sh,
# made once and cached), with Debian 13's packages.
# --ovs 4.0 builds with DPDK 25.11, Debian testing's, in a forky root; the
# lookups are switched with 4.0's series' dpif-netdev/lookup-provider-set.
set -euo pipefail
cd "$(dirname "$0")/../.."
release=3.1 tse= ovn= check=
if [ "${1:-}" = --ovs ]; then
    release=${2:?--ovs needs 3.1, 3.5 or 4.0}
    shift 2
fi
if [ "${1:-}" = --tse ]; then
    tse=--tse
    shift
elif [ "${1:-}" = --ovn ] || [ "${1:-} ${2:-}" = "--scenario ovn" ]; then
    ovn=--ovn
    [ "$1" = --ovn ] && shift || shift 2
    if [ "${1:-}" = --check ]; then
        check=--check
        shift
    fi
fi
case "$release" in
    3.1) out=out/p2p ;;
    3.5) out=out/p2p-3.5 ;;
    4.0) out=out/p2p-4.0 ;;
    *) echo "p2p/run.sh: --ovs takes 3.1, 3.5 or 4.0" >&2; exit 2 ;;
esac
[ -z "$tse" ] || out=$out-tse
[ -z "$ovn" ] || out=$out-ovn
[ -z "$check" ] || out=$out-check
if [ -n "$ovn" ] && [ "$release" = 3.5 ]; then
    echo "p2p/run.sh: --ovn runs on 3.1 (Debian 12's OVN 23.03.1) and 4.0 (OVN 26.03.1)" >&2
    exit 2
fi
if [ "$release" = 3.5 ] && ! grep -q '^VERSION_ID="13"' /etc/os-release; then
    echo "p2p/run.sh: OVS 3.5 with DPDK 24.11 runs in a Debian 13 root" >&2
    exec scripts/debian-root.sh trixie -- perf/p2p/run.sh --ovs 3.5 $tse "$@"
fi
if [ "$release" = 4.0 ] && ! grep -q '^VERSION_CODENAME=forky' /etc/os-release; then
    echo "p2p/run.sh: OVS 4.0 with DPDK 25.11 runs in a Debian testing (forky) root" >&2
    exec scripts/debian-root.sh forky -- perf/p2p/run.sh --ovs 4.0 $tse $ovn $check "$@"
fi
[ "$release" != 3.1 ] || scripts/install-deps.sh
# dpdk-testpmd and the chart's matplotlib (Debian's, for /usr/bin/python3).
if ! command -v dpdk-testpmd >/dev/null || ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq dpdk-dev python3-matplotlib >/dev/null
fi
build_args=(--dpdk --plugin-default)
if [ -n "$check" ]; then
    case "$release" in
        3.1) export OVSCLS_PLUGIN_TEST_MODE=autovalidator ;;
        4.0) build_args=(--dpdk --validate) ;;
    esac
fi
[ "$release" = 3.1 ] || build_args=(--ovs "$release" "${build_args[@]}")
prefix=$(patches/cached-build.sh "${build_args[@]}" | tail -1)
mkdir -p "$out"
if [ -n "$tse" ]; then
    cells=()
    case " $* " in *" --cell "* | *" --cells "*) ;; *) cells=(--cells perf/tse/cells.txt) ;; esac
    python3 perf/p2p/tse_grid.py --ovs "$prefix" --out "$out" "${cells[@]}" "$@" \
        2>&1 | tee "$out/grid.log"
    /usr/bin/python3 perf/tse/report.py "$out/grid.json" "$out/grid"
    echo "p2p/run.sh: $out/grid.md, $out/grid.png"
    exit 0
fi
[ -f out/p2p/pcaps/flood-100000.pcap ] || python3 perf/p2p/make_pcaps.py out/p2p/pcaps
ovn_args=()
if [ -n "$ovn" ]; then
    if [ "$release" = 3.1 ]; then
        # Debian 12's OVN: its .debs (apt checks them against the archive's
        # signed Release), unpacked once beside them in the build cache.
        debs=$(cmake/fetch-debian-package.sh bookworm debs ovn=23.03.1-1~deb12u2 | tail -1)
        ovn_dir=$debs/unpacked
        if [ ! -f "$ovn_dir/.done" ]; then
            mkdir -p "$ovn_dir"
            for package in ovn-common ovn-central ovn-host; do
                dpkg-deb -x "$debs/${package}_"*.deb "$ovn_dir"
            done
            touch "$ovn_dir/.done"
        fi
        # What those programs link to (OVS's libraries are in them).
        scripts/apt-install-missing.sh p2p/run.sh libunbound8 libevent-2.1-7 libcap-ng0 libudev1 >&2
    else
        # OVN's programs talk to the switch over OpenFlow and OVSDB only:
        # one build against the benchmark's tree serves the checking run too.
        ovn_tree=$(patches/cached-build.sh --tree --ovs 4.0 --dpdk --plugin-default | tail -1)
        ovn_dir=$(patches/build-ovn.sh --ovs-tree "$ovn_tree" | tail -1)
    fi
    ovn_args=(--ovn "$ovn_dir" $check)
    case " $* " in *" --scenarios "*) ;; *) ovn_args+=(--scenarios h,i,j) ;; esac
fi
python3 perf/p2p/p2p.py --ovs "$prefix" --pcaps out/p2p/pcaps --out "$out" "${ovn_args[@]}" "$@" |
    tee "$out/table.txt"
[ -n "$check" ] || /usr/bin/python3 perf/p2p/chart.py "$out/p2p.json" "$out/p2p"
