#!/usr/bin/env python3
"""Ratios to OVS's generic over several microbench runs: how far they move.

    spread.py [--base=IMPL] RUN1.json RUN2.json ...
                              (microbench --benchmark_out files; base
                               ovs_generic unless given)

On a shared machine absolute ticks drift between runs; ratios measured in
the same run drift less, but not zero.  For every implementation this
prints, over all rows (fingerprint x rules x hit/miss) and runs: the range
of its ratio to ovs_generic (or --base), the rows where any run put it above 1.0, and
the median over runs of each row's ratio; so a README claim can be stated
with the spread it has.
"""
import json
import statistics
import sys

def medians(path):
    rows = {}
    with open(path) as f:
        for b in json.load(f)["benchmarks"]:
            if b.get("aggregate_name") != "median":
                continue
            fp, kind, rules, traffic, impl = b["run_name"].split("/min_time")[0].split("/")
            rows.setdefault(f"({fp}) {kind} {rules} {traffic}", {})[impl] = b["ticks_per_pkt"]
    return rows


def main(args):
    base = "ovs_generic"
    if args and args[0].startswith("--base="):
        base = args.pop(0)[len("--base="):]
    runs = [medians(p) for p in args]
    impls = sorted({i for r in runs for row in r.values() for i in row} - {base})
    print(f"{len(runs)} runs; ratio of TSC ticks per packet to {base} (same run)")
    for impl in impls:
        ratios = {}  # row -> [ratio per run]
        for run in runs:
            for row, m in run.items():
                if impl in m and base in m:
                    ratios.setdefault(row, []).append(m[impl] / m[base])
        if not ratios:
            continue
        flat = [x for v in ratios.values() for x in v]
        row_medians = [statistics.median(v) for v in ratios.values()]
        above = sorted(row for row, v in ratios.items() if max(v) > 1.0)
        print(f"  {impl:<20} all rows and runs {min(flat):.2f}-{max(flat):.2f}, "
              f"row medians {min(row_medians):.2f}-{max(row_medians):.2f}, "
              f"rows above 1.00 in some run: {len(above)} of {len(ratios)}"
              + (f" ({'; '.join(above[:6])}{' ...' if len(above) > 6 else ''})" if above else ""))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
