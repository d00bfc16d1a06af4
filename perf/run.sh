#!/usr/bin/env bash
# The main job: builds the classifier against OVS 3.1.0 (sse42 flavour) and
# runs the subtable-lookup microbenchmark, printing the comparison table
# (TSC ticks per packet, ratio to OVS's own lookups measured in the same
# run) and writing out/microbench.json, the whole-classifier lookups of
# tables whose traffic crosses many subtables (perf/dpcls_bench.cpp;
# out/dpcls_bench.txt), and the instructions per packet under callgrind
# (perf/instructions.sh); then the JIT flood (10000 new
# masks: compiles, declines, code memory, CPU; out/jit_flood.txt); then the
# phy-to-phy forwarding benchmark on OVS-DPDK (perf/p2p/run.sh: Mpps per
# scenario and lookup, out/p2p/).  Installs its own packages.
#
# The p2p benchmark needs root (hugepages, a hugetlbfs mount); without
# 2 MB hugepages it runs DPDK with --no-huge and says so.  Skip it with
# OVSCLS_SKIP_P2P=1.
#
#   perf/run.sh [--quick] [extra Google Benchmark flags]
#   perf/run.sh --help     this text; nothing installed, built or run
set -euo pipefail
case " $* " in *" -h "* | *" --help "*) sed -n '2,18p' "$0"; exit 0 ;; esac
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh sse42 --target microbench --target dpcls_bench --target jit_flood
mkdir -p out
# Pinned to the last core, away from the shell and the kernel's usual work.
core=$(($(nproc) - 1))
taskset -c "$core" build/sse42/perf/microbench "$@" \
    --benchmark_enable_random_interleaving=true \
    --benchmark_out=out/microbench-raw.json --benchmark_out_format=json >out/microbench.log
python3 perf/table.py out/microbench-raw.json out/microbench.json | tee out/microbench-table.txt
echo
echo "Whole-classifier lookups where traffic crosses many subtables (dpcls_bench):"
quick=()
case " $* " in *" --quick "*) quick=(--quick) ;; esac
taskset -c "$core" build/sse42/perf/dpcls_bench "${quick[@]}" | tee out/dpcls_bench.txt
echo
echo "Instructions per packet (callgrind; the same on every run, unlike ticks):"
perf/instructions.sh | tee out/instructions.txt
echo
echo "JIT under a flood of 10000 new masks:"
taskset -c "$core" build/sse42/perf/jit_flood | tee out/jit_flood.txt
echo
echo "Phy-to-phy forwarding on OVS-DPDK (perf/p2p):"
if [ "${OVSCLS_SKIP_P2P:-0}" = 1 ]; then
    echo "p2p: skipped (OVSCLS_SKIP_P2P=1)"
elif [ "$(id -u)" -ne 0 ]; then
    echo "p2p: skipped: it needs root to reserve hugepages and mount hugetlbfs"
else
    perf/p2p/run.sh
fi
