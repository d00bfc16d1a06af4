#!/usr/bin/env bash
# What the series costs a switch that does not use it, phy-to-phy on
# OVS-DPDK:
#
#   perf/p2p/series_cost.sh [series_cost.py options: --window S --rounds N
#                           --windows-per-start N]
#
# Builds (or reuses, patches/cached-build.sh) OVS 3.1 with DPDK twice:
# --stock (Open vSwitch as released) and --series-only (the series of
# patches/, no plugin linked, so no fused lookup is registered), writes the
# pcaps if needed, and runs series_cost.py: scenario (b) of perf/p2p (13
# subtables, OVS's generic lookup, EMC and SMC off), the two switches
# taking turns on the same cores, hugepages reserved and restored as
# perf/p2p/run.sh does.  Writes out/p2p-series-cost/series_cost.json and
# the table (out/p2p-series-cost/table.txt).  Needs root (hugepages,
# DPDK); OVS 3.1 only (3.5's DPDK 24.11 needs a Debian 13 root).
set -euo pipefail
cd "$(dirname "$0")/../.."
case " $* " in *" -h "* | *" --help "*) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
scripts/install-deps.sh
stock=$(patches/cached-build.sh --dpdk --stock | tail -1)
series=$(patches/cached-build.sh --dpdk --series-only | tail -1)
out=out/p2p-series-cost
mkdir -p "$out"
[ -f out/p2p/pcaps/prefix-1000.pcap ] || python3 perf/p2p/make_pcaps.py out/p2p/pcaps
python3 perf/p2p/series_cost.py --build "stock=$stock" --build "series=$series" \
    --pcaps out/p2p/pcaps --out "$out" "$@" | tee "$out/table.txt"
