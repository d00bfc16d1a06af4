#!/usr/bin/env python3
"""What the series costs a switch that does not use it, phy-to-phy.

    series_cost.py --build LABEL=PREFIX --build LABEL=PREFIX [...]
                   --pcaps DIR --out DIR [--window S] [--rounds N]
                   [--windows-per-start N] [--flows N]

Each PREFIX is a `patches/build-ovs.sh --dpdk` install, e.g. `--stock` (Open
vSwitch as released) and `--series-only` (the series, no plugin linked: no
fused lookup registered, OVS's generic on every subtable).  The traffic and
rules are p2p.py's scenario (b): 221 nw_dst prefix rules in 13 (4,2)
subtables, ~7 subtable lookups per hit, EMC and SMC off, so every packet
runs dpcls_lookup()'s loop over the ranking, the code patch 7 rewrote.

The builds cannot run side by side on one PMD core, so they take turns:
per round each build's ovs-vswitchd is started (p2p.py's Bench: main
thread on core 0, PMD thread on core 1, the same pcap vdevs), its megaflows
installed by a first pass of the traffic, a warm-up window thrown away,
then --windows-per-start windows measured, and the daemons stopped; the
order of the builds alternates from round to round, so that drift spreads
over all of them.  A window counts only if the PMD thread had its core
(CPU share > 95%), every subtable ran `generic` (subtable-lookup-info-get's
use counts) and >= 99% of the packets were megaflow hits.  Prints, per
build, the median Mpps and cycles/packet and, per round, the ratio of each
build's median to the first build's; writes DIR/series_cost.json.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import sys
import time
import types

import p2p


def generic_use(bench):
    """{lookup: use count} from subtable-lookup-info-get (OVS 3.1+, stock
    included): how many subtables, over all threads, run each lookup."""
    text = bench.appctl("dpif-netdev/subtable-lookup-info-get")
    return {name: int(n) for name, n in re.findall(r"^  (\S+) \(Use count: (\d+)", text, re.M)}


def measure_build(host, label, prefix, args, pcap, rules):
    """Starts `prefix`'s switch, measures args.windows_per_start windows,
    stops it; returns the windows (dicts of p2p.Bench.window() plus what
    decides whether they count)."""
    bench = p2p.Bench(types.SimpleNamespace(ovs=prefix, out=os.path.join(args.out, label)))
    os.makedirs(bench.work, exist_ok=True)
    shutil.copy(os.path.join(host.work, "empty.pcap"), bench.work)  # dpdk1's rx_pcap
    bench.huge_dir, bench.huge = host.huge_dir, host.huge
    windows = []
    try:
        bench.start()
        bench.set_emc(False)
        bench.set_flows(rules)
        bench.set_traffic(pcap, 0)
        time.sleep(3)  # upcalls install the megaflows
        bench.window(1.0)  # warm-up, thrown away
        for _ in range(args.windows_per_start):
            w = bench.window(args.window)
            use = generic_use(bench)
            w["lookup_use"] = use
            w["counts"] = (w["pmd_cpu_share"] > 0.95 and use.get("generic", 0) >= 13
                           and all(n == 0 for name, n in use.items() if name != "generic")
                           and w["megaflow_hit_pct"] >= 99.0)
            windows.append(w)
            print(f"  {label:>12}: {w['mpps']:.3f} Mpps, {w['cycles_per_packet']} cycles/pkt, "
                  f"{w['subtable_lookups_per_hit']:.2f} lookups/hit, "
                  f"{w['megaflow_hit_pct']:.1f}% megaflow hits, PMD CPU "
                  f"{w['pmd_cpu_share']:.0%}, lookups in use {use}"
                  + ("" if w["counts"] else "  (not counted)"), file=sys.stderr)
    finally:
        bench.stop()
    return windows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", action="append", required=True, metavar="LABEL=PREFIX")
    ap.add_argument("--pcaps", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--window", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--windows-per-start", type=int, default=2)
    ap.add_argument("--flows", type=int, default=1000)
    args = ap.parse_args()
    builds = []
    for b in args.build:
        label, sep, prefix = b.partition("=")
        if not sep or not os.path.isfile(os.path.join(prefix, "sbin", "ovs-vswitchd")):
            ap.error(f"--build {b}: want LABEL=PREFIX of a build-ovs.sh --dpdk install")
        builds.append((label, os.path.abspath(prefix)))
    if len(builds) < 2:
        ap.error("give two builds or more")
    os.makedirs(args.out, exist_ok=True)
    pcap_name, title, rules = p2p.SCENARIOS["b"](args.flows)
    pcap = os.path.abspath(os.path.join(args.pcaps, pcap_name))

    host = p2p.Bench(types.SimpleNamespace(ovs=builds[0][1], out=args.out))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    results = {"scenario": title, "pcap": pcap_name, "window_s": args.window,
               "rounds": args.rounds, "windows_per_start": args.windows_per_start,
               "builds": {label: {"prefix": prefix, "windows": []} for label, prefix in builds},
               "round_ratios": []}
    try:
        host.prepare()  # hugepages, once for all builds
        results["hugepages"] = host.huge
        for rnd in range(args.rounds):
            order = builds if rnd % 2 == 0 else builds[::-1]
            print(f"series_cost: round {rnd}", file=sys.stderr)
            medians = {}
            for label, prefix in order:
                ws = measure_build(host, label, prefix, args, pcap, rules)
                for w in ws:
                    w["round"] = rnd
                results["builds"][label]["windows"] += ws
                good = [w["mpps"] for w in ws if w["counts"]]
                if good:
                    medians[label] = statistics.median(good)
            base = builds[0][0]
            if base in medians:
                results["round_ratios"].append(
                    {label: m / medians[base] for label, m in medians.items()})
    finally:
        host.stop()
    for label, _ in builds:
        r = results["builds"][label]
        good = [w for w in r["windows"] if w["counts"]]
        r["windows_counted"] = len(good)
        if good:
            r["mpps_median"] = statistics.median(w["mpps"] for w in good)
            r["mpps_min"] = min(w["mpps"] for w in good)
            r["mpps_max"] = max(w["mpps"] for w in good)
            r["cycles_per_packet_median"] = statistics.median(
                w["cycles_per_packet"] for w in good)
            r["subtable_lookups_per_hit"] = statistics.median(
                w["subtable_lookups_per_hit"] for w in good)
        ratios = [rr[label] for rr in results["round_ratios"] if label in rr]
        if ratios:
            r["ratio_median"] = statistics.median(ratios)
            r["ratio_min"], r["ratio_max"] = min(ratios), max(ratios)
    with open(os.path.join(args.out, "series_cost.json"), "w") as f:
        json.dump(results, f, indent=1)
    base = builds[0][0]
    print(f"scenario (b) {title}, OVS's generic lookup, EMC and SMC off; "
          f"{args.rounds} rounds x {args.windows_per_start} windows of {args.window:g} s"
          + ("" if results["hugepages"] else "; DPDK without hugepages"))
    print(f"{'build':<20}{'windows':>9}{'Mpps median':>13}{'(min-max)':>16}{'cycles/pkt':>12}"
          f"{'lookups/hit':>13}{'per-round ratio to ' + base:>34}")
    for label, _ in builds:
        r = results["builds"][label]
        if "mpps_median" not in r:
            print(f"{label:<20}{r['windows_counted']:>9}   no window counted")
            continue
        ratio = (f"{r['ratio_median']:.3f} ({r['ratio_min']:.3f}-{r['ratio_max']:.3f})"
                 if "ratio_median" in r else "n/a")
        print(f"{label:<20}{r['windows_counted']:>9}{r['mpps_median']:>13.3f}"
              f"{'(%.3f-%.3f)' % (r['mpps_min'], r['mpps_max']):>16}"
              f"{r['cycles_per_packet_median']:>12}{r['subtable_lookups_per_hit']:>13.2f}"
              f"{ratio:>34}")
    if any("mpps_median" not in results["builds"][label] for label, _ in builds):
        sys.exit(1)


if __name__ == "__main__":
    main()
