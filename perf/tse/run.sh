#!/usr/bin/env bash
# The Tuple Space Explosion grid at the classifier: every shape of
# perf/tse/cells.txt (or the given ones), OVS's generic against the
# plugin's defaults, as a table and a heat map.
#
#   perf/tse/run.sh [--quick] [--out DIR] [--cell SPEC]...
#
# Builds the sse42 flavour (scripts/build.sh), runs perf/tse/tse_grid and
# writes DIR/grid.json (a line per cell), DIR/grid.md (the table, the
# worst and the best cell) and DIR/grid.png/.svg (the heat map).  DIR:
# default out/tse.  --quick: few repetitions (answers checked, timings
# rough).  Takes ~20 minutes on 2 cores for the whole grid.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=out/tse quick=() cells=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=(--quick); shift ;;
        --out) out=${2:?--out needs a folder}; shift 2 ;;
        --cell) cells+=(--cell "${2:?--cell needs a shape}"); shift 2 ;;
        *) echo "perf/tse/run.sh: unknown argument '$1' (see its header)" >&2; exit 2 ;;
    esac
done
[ ${#cells[@]} -gt 0 ] || cells=(--cells perf/tse/cells.txt)
scripts/apt-install-missing.sh perf/tse/run.sh python3-matplotlib
scripts/build.sh sse42 --target tse_grid >/dev/null
mkdir -p "$out"
echo "perf/tse: the grid of $(grep -cv -e '^#' -e '^$' perf/tse/cells.txt) shapes; per-cell detail in $out/grid.log"
build/sse42/perf/tse_grid "${quick[@]}" --json "$out/grid.json" "${cells[@]}" >"$out/grid.log"
/usr/bin/python3 perf/tse/report.py "$out/grid.json" "$out/grid"
echo "perf/tse: $out/grid.md, $out/grid.png"
