#!/usr/bin/env bash
# The main job: builds the classifier against OVS 3.1.0 (sse42 flavour) and
# runs the subtable-lookup microbenchmark, printing the comparison table
# (TSC ticks per packet, ratio to OVS's own lookups measured in the same
# run) and writing out/microbench.json; then the JIT flood (10000 new
# masks: compiles, declines, code memory, CPU; out/jit_flood.txt).
# Installs its own packages.
#
#   perf/run.sh [--quick] [extra Google Benchmark flags]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh sse42 --target microbench --target jit_flood
mkdir -p out
# Pinned to the last core, away from the shell and the kernel's usual work.
core=$(($(nproc) - 1))
taskset -c "$core" build/sse42/perf/microbench "$@" \
    --benchmark_enable_random_interleaving=true \
    --benchmark_out=out/microbench-raw.json --benchmark_out_format=json >out/microbench.log
python3 perf/table.py out/microbench-raw.json out/microbench.json | tee out/microbench-table.txt
echo
echo "JIT under a flood of 10000 new masks:"
taskset -c "$core" build/sse42/perf/jit_flood | tee out/jit_flood.txt
