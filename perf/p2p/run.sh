#!/usr/bin/env bash
# The phy-to-phy forwarding benchmark on OVS-DPDK:
#
#   perf/p2p/run.sh [--ovs 3.1|3.5|4.0] [p2p.py options: --window S --rounds N
#                   --flows N --scenarios a,b,c,d,f,g,e]
#   perf/p2p/run.sh [--ovs ...] --tse [tse_grid.py options: --cells FILE
#                   --cell SPEC --window S --rounds N]
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
release=3.1 tse=
if [ "${1:-}" = --ovs ]; then
    release=${2:?--ovs needs 3.1, 3.5 or 4.0}
    shift 2
fi
if [ "${1:-}" = --tse ]; then
    tse=--tse
    shift
fi
case "$release" in
    3.1) out=out/p2p ;;
    3.5) out=out/p2p-3.5 ;;
    4.0) out=out/p2p-4.0 ;;
    *) echo "p2p/run.sh: --ovs takes 3.1, 3.5 or 4.0" >&2; exit 2 ;;
esac
[ -z "$tse" ] || out=$out-tse
if [ "$release" = 3.5 ] && ! grep -q '^VERSION_ID="13"' /etc/os-release; then
    echo "p2p/run.sh: OVS 3.5 with DPDK 24.11 runs in a Debian 13 root" >&2
    exec scripts/debian-root.sh trixie -- perf/p2p/run.sh --ovs 3.5 $tse "$@"
fi
if [ "$release" = 4.0 ] && ! grep -q '^VERSION_CODENAME=forky' /etc/os-release; then
    echo "p2p/run.sh: OVS 4.0 with DPDK 25.11 runs in a Debian testing (forky) root" >&2
    exec scripts/debian-root.sh forky -- perf/p2p/run.sh --ovs 4.0 $tse "$@"
fi
[ "$release" != 3.1 ] || scripts/install-deps.sh
# dpdk-testpmd and the chart's matplotlib (Debian's, for /usr/bin/python3).
if ! command -v dpdk-testpmd >/dev/null || ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq dpdk-dev python3-matplotlib >/dev/null
fi
build_args=(--dpdk --plugin-default)
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
python3 perf/p2p/p2p.py --ovs "$prefix" --pcaps out/p2p/pcaps --out "$out" "$@" |
    tee "$out/table.txt"
/usr/bin/python3 perf/p2p/chart.py "$out/p2p.json" "$out/p2p"
