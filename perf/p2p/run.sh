#!/usr/bin/env bash
# The phy-to-phy forwarding benchmark on OVS-DPDK (work in progress, see
# perf/p2p/README.md):
#
#   perf/p2p/run.sh [p2p.py options: --window S --rounds N --flows N --scenarios a,b,c,d]
#
# Builds (or reuses) the patched OVS with DPDK, writes the pcaps, and runs
# p2p.py, which reserves hugepages, starts a private ovsdb-server and
# ovs-vswitchd on DPDK pcap vdevs, and restores everything when it ends.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh
prefix=$(patches/cached-build.sh --dpdk --plugin-default | tail -1)
mkdir -p out/p2p
[ -f out/p2p/pcaps/udp-100000.pcap ] || python3 perf/p2p/make_pcaps.py out/p2p/pcaps
python3 perf/p2p/p2p.py --ovs "$prefix" --pcaps out/p2p/pcaps --out out/p2p "$@"
