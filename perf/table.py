#!/usr/bin/env python3
"""Turn microbench's Google Benchmark JSON into the comparison table.

Reads the median TSC ticks per packet of every (subtable case, rules,
hit/miss, implementation), prints one table with each implementation's
ratio to OVS's `ovs_generic` (OVS's own choice: its specialized instance
where it has one) measured in the same run, and writes a results JSON.

  table.py BENCH.json RESULTS.json
"""
import json
import sys

IMPLS = ["ovs_generic_runtime", "ovs_generic", "ovs_avx512_gather", "generic", "specialized"]
BASE = "ovs_generic"


def main(bench_path, out_path):
    with open(bench_path) as f:
        bench = json.load(f)
    rows = {}
    for b in bench["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"].split("/min_time")[0]
        fp, kind, rules, traffic, impl = name.split("/")
        rows.setdefault((fp, kind, int(rules), traffic), {})[impl] = b["ticks_per_pkt"]

    def fp_key(k):
        u0, u1 = (int(x) for x in k[0].split(","))
        return (u0, u1, k[2], k[3])

    header = f"{'fingerprint':<12}{'mask':<10}{'rules':>7} {'pkts':<5}"
    for impl in IMPLS:
        header += f"{impl:>22}"
    print("TSC ticks per packet (median), ratio to ovs_generic in brackets")
    print(header)
    results = []
    for key in sorted(rows, key=fp_key):
        fp, kind, rules, traffic = key
        medians = rows[key]
        base = medians.get(BASE)
        line = f"({fp}){'':<{10 - len(fp)}}{kind:<10}{rules:>7} {traffic:<5}"
        entry = {"fingerprint": fp, "mask": kind, "rules": rules, "traffic": traffic,
                 "ticks_per_packet": medians, "ratio_to_ovs_generic": {}}
        for impl in IMPLS:
            if impl in medians:
                ratio = medians[impl] / base
                entry["ratio_to_ovs_generic"][impl] = round(ratio, 3)
                line += f"{medians[impl]:>14.1f} ({ratio:4.2f})"
            else:
                line += f"{'-':>22}"
        print(line)
        results.append(entry)
    context = bench.get("context", {})
    with open(out_path, "w") as f:
        json.dump({"context": context, "unit": "TSC ticks per packet, median",
                   "baseline": BASE, "results": results}, f, indent=1)
    print(f"\nwritten {out_path}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
