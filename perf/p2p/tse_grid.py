#!/usr/bin/env python3
"""The Tuple Space Explosion grid in the switch: perf/tse's cells made by
ovs-vswitchd's upcalls (tse_switch.py), phy-to-phy on OVS-DPDK.

    tse_grid.py --ovs PREFIX --out DIR [--cells FILE | --cell SPEC ...]
                [--window S] [--rounds N]

Per cell that a switch can make (tse_switch.cannot() says why not for
the others): the cell's ACL and legitimate rules, its pcap replayed as
port dpdk0's receive side (p2p.py's Bench: private daemons, PMD on core
1, EMC and SMC off), and per round and lookup (OVS's `generic`, the
plugin's `tail_index`: jit_avx2 and the index), two windows, as scenario
(e):

  before  the attack blocked by its signature (one megaflow for all of it)
  during  the block removed: each attack frame's upcall makes its own
          megaflow; the window starts once the PMD's subtable count has
          stopped growing for 3 s, then two ranking intervals

Per window: the legitimate Mpps port 2 sent, the PMD's cycles a packet,
its subtables.  Per cell and lookup: kept = legitimate Mpps during /
before (medians), and an attack frame's cost against a legitimate one,
estimated from cycles a packet: C_before is about a legitimate frame's
(the blocked attack frames share one megaflow), so an attack frame costs
(C_during - (1 - a) C_before) / a, a the attack's share of the frames.
Writes DIR/grid.json (a line per cell, perf/tse/report.py reads it) and
DIR/pcaps/.
"""
import argparse
import json
import os
import signal
import statistics
import sys
import time

import make_pcaps
import p2p
import tse_switch

LOOKUPS = {"generic": "ovs_generic", "tail_index": "plugin"}  # p2p's names, report.py's


def read_cells(path):
    """[(axis, spec)] of a perf/tse cells file ('axis | spec' lines)."""
    cells = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                axis, _, spec = line.partition("|")
                cells.append((axis.strip(), spec.strip()))
    return cells


def set_prefixes(bench, fields):
    """The flow table's prefix tries: `fields` (OpenFlow names), or OVS's
    default (nw_src, nw_dst) for None."""
    if fields:
        bench.vsctl("--", "--id=@ft", "create", "Flow_Table", f"prefixes={fields}",
                    "--", "set", "Bridge", "br0", "flow_tables:0=@ft")
    else:
        bench.vsctl("clear", "Bridge", "br0", "flow_tables")


def wait_flood(bench, before, timeout=120):
    """Waits until the PMD's subtables stopped growing for 3 s (at least one
    more than `before`); their count and the seconds it took."""
    t0 = time.monotonic()
    last, since = bench.pmd_subtables(), time.monotonic()
    while time.monotonic() - t0 < timeout:
        time.sleep(0.5)
        n = bench.pmd_subtables()
        if n != last:
            last, since = n, time.monotonic()
        elif n > before and time.monotonic() - since >= 3:
            break
    return last, time.monotonic() - t0


def measure_cell(bench, impls, measured, shape, pcap, args):
    flows, block = tse_switch.rules(shape)
    set_prefixes(bench, tse_switch.prefixes(shape))
    bench.set_emc(False)
    bench.set_flows(p2p.ARP_GUARD + flows + [block + ",actions=drop"])
    bench.set_traffic(os.path.abspath(pcap))
    time.sleep(2)
    calm = bench.pmd_subtables()
    windows = {impl: {"before": [], "during": []} for impl in measured}
    made = []
    for rnd in range(args.rounds):
        for impl in measured:
            bench.select(impl, impls)
            w = bench.impl_window(impl, args.window)
            windows[impl]["before"].append(w)
            bench.ofctl("--strict", "del-flows", "br0", block)
            subtables, took = wait_flood(bench, calm)
            made.append(subtables)
            time.sleep(2.2)  # two rankings: compile, then install (and tier up)
            d = bench.impl_window(impl, args.window)
            windows[impl]["during"].append(d)
            # Before, the ranking is too short for the index (it rides on
            # jit_avx2): only whether the PMD was descheduled is news.
            late = "" if w["pmd_cpu_share"] > 0.95 else "  (PMD descheduled before)"
            print(f"    round {rnd} {impl:>10}: legitimate {w['forwarded_mpps']:.2f} Mpps "
                  f"before, {d['forwarded_mpps']:.2f} during ({subtables} subtables, made in "
                  f"{took:.0f} s){late}{d['flags']}", file=sys.stderr)
            bench.ofctl("add-flow", "br0", block + ",actions=drop")
            bench.appctl("revalidator/purge")
            bench.wait_subtables(lambda n: n <= calm + 2, 60, "the flood's subtables stayed")
            time.sleep(1.2)
    pct = int(shape["attack"]) / 100
    lookups = {}
    for impl, phases in windows.items():
        before, during = p2p.good_windows(phases["before"]), p2p.good_windows(phases["during"])
        if not before or not during:
            continue
        b = statistics.median(w["forwarded_mpps"] for w in before)
        d = statistics.median(w["forwarded_mpps"] for w in during)
        cb = statistics.median(w["cycles_per_packet"] for w in before)
        cd = statistics.median(w["cycles_per_packet"] for w in during)
        lookups[LOOKUPS[impl]] = {
            "before_mpps": b, "during_mpps": d, "kept": d / b if b else 0.0,
            "cycles_before": cb, "cycles_during": cd,
            "attack_per_legit": (cd - (1 - pct) * cb) / (pct * cb) if cb else 0.0,
            "windows": phases}
    return lookups, made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ovs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--cells", default="")
    ap.add_argument("--cell", action="append", default=[])
    ap.add_argument("--window", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    cells = [("cell", s) for s in args.cell] + (read_cells(args.cells) if args.cells else [])
    if not cells:
        sys.exit("tse_grid.py: no cells (--cells FILE or --cell SPEC)")
    shapes = []
    for axis, spec in cells:
        try:
            shapes.append((axis, spec, tse_switch.parse(spec)))
        except ValueError as e:
            sys.exit(f"tse_grid.py: bad cell '{spec}': {e}")
    pcaps = os.path.join(args.out, "pcaps")
    os.makedirs(pcaps, exist_ok=True)
    args.pcaps = pcaps  # Bench wants it; the cells' pcaps are written here
    bench = p2p.Bench(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    out = open(os.path.join(args.out, "grid.json"), "w")
    try:
        bench.prepare()
        bench.start()
        impls = bench.implementations()
        flags = p2p.cpu_flags()
        measured = [i for i in ("generic", "tail_index")
                    if i in impls and not p2p.cpu_lacks(i, flags)]
        if measured != ["generic", "tail_index"]:
            sys.exit(f"tse_grid.py: this switch or CPU lacks a lookup (has {impls})")
        for serial, (axis, spec, shape) in enumerate(shapes):
            cell = {"axis": axis, "spec": ",".join(f"{k}={v}" for k, v in shape.items()),
                    "attack_pct": int(shape["attack"]), "switch": True}
            why = tse_switch.cannot(shape)
            t0 = time.monotonic()
            if why:
                cell.update(made=False, why=why)
                print(f"p2p-tse: {cell['spec']}: not made: {why}", file=sys.stderr)
            else:
                print(f"p2p-tse: {cell['spec']}", file=sys.stderr)
                pcap = os.path.join(pcaps, f"cell-{serial}.pcap")
                frames = tse_switch.frames(shape)
                make_pcaps.write_pcap(pcap, frames)
                lookups, made = measure_cell(bench, impls, measured, shape, pcap, args)
                cell.update(made=len(lookups) == 2, lookups=lookups, frames=len(frames),
                            subtables_during=statistics.median(made) if made else 0,
                            why="" if len(lookups) == 2 else "a lookup ran in no window")
                os.remove(pcap)  # up to ~10 MB a cell; tse_switch.py remakes it
            cell["seconds"] = round(time.monotonic() - t0, 1)
            out.write(json.dumps(cell) + "\n")
            out.flush()
    finally:
        out.close()
        bench.stop()


if __name__ == "__main__":
    main()
