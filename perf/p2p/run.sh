#!/usr/bin/env bash
# The phy-to-phy forwarding benchmark on OVS-DPDK:
#
#   perf/p2p/run.sh [p2p.py options: --window S --rounds N --flows N --scenarios a,b,c,d]
#
# Builds (or reuses) the patched OVS with DPDK, writes the pcaps, measures
# dpdk-testpmd's io forwarding of the same traffic (the I/O ceiling), and
# runs p2p.py, which reserves hugepages (or says it falls back to
# --no-huge), starts a private ovsdb-server and ovs-vswitchd on DPDK pcap
# vdevs, and restores everything when it ends.  Writes out/p2p/p2p.json,
# the table (out/p2p/table.txt) and the chart (out/p2p/p2p.png, .svg).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh
# dpdk-testpmd and the chart's matplotlib (Debian's, for /usr/bin/python3).
if ! command -v dpdk-testpmd >/dev/null || ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq dpdk-dev python3-matplotlib >/dev/null
fi
prefix=$(patches/cached-build.sh --dpdk --plugin-default | tail -1)
mkdir -p out/p2p
[ -f out/p2p/pcaps/flood-100000.pcap ] || python3 perf/p2p/make_pcaps.py out/p2p/pcaps
python3 perf/p2p/p2p.py --ovs "$prefix" --pcaps out/p2p/pcaps --out out/p2p "$@" |
    tee out/p2p/table.txt
/usr/bin/python3 perf/p2p/chart.py out/p2p/p2p.json out/p2p/p2p
