#!/usr/bin/python3
"""Chart of the phy-to-phy benchmark: Mpps per scenario and implementation.

    chart.py P2P_JSON OUT_BASENAME      -> OUT_BASENAME.png and .svg

Bars are the median Mpps of each implementation's windows, whiskers their
min and max.  dpdk-testpmd's io forwarding of the same traffic (the I/O
ceiling), when measured, is a dashed line over the scenario, or, when it is
far above the bars, written there instead so the bars stay readable.
Needs Debian's python3-matplotlib (hence /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path, out):
    with open(path) as f:
        res = json.load(f)
    impls = res["implementations"]
    scenarios = res["scenarios"]
    width = 0.8 / len(impls)
    top = 0.0
    # Wide enough for the title and a legend of every lookup, also with few
    # scenarios (the OVN run has two).
    fig, ax = plt.subplots(figsize=(max(8.5, 2.2 + 2.0 * len(scenarios)), 4.8))
    for n, impl in enumerate(impls):
        xs, med, lo, hi = [], [], [], []
        for k, s in enumerate(scenarios):
            r = s["results"].get(impl)
            if not r or "mpps_median" not in r:
                continue  # not measured here (n/a): no bar, never another's figures
            xs.append(k - 0.4 + width * (n + 0.5))
            med.append(r["mpps_median"])
            lo.append(r["mpps_median"] - r["mpps_min"])
            hi.append(r["mpps_max"] - r["mpps_median"])
            top = max(top, r["mpps_max"])
        na = res.get("not_measured", {}).get(impl)
        label = f"{impl} (n/a: {na})" if na else impl
        ax.bar(xs, med, width, yerr=[lo, hi], capsize=2, label=label)
    ceiling = res.get("testpmd_drop_mpps", {})
    ymax = top * 1.45
    for k, s in enumerate(scenarios):
        mpps = ceiling.get(s["pcap"])
        if mpps and mpps <= 2 * top:
            ax.hlines(mpps, k - 0.45, k + 0.45, colors="black", linestyles="dashed",
                      label="dpdk-testpmd io (I/O ceiling)" if k == 0 else None)
            ymax = max(ymax, mpps * 1.1)
        elif mpps:
            ax.text(k, top * 1.15, f"testpmd io: {mpps:.1f} Mpps", ha="center", fontsize=8)
    ax.set_ylim(0, ymax)
    ax.set_xticks(range(len(scenarios)))
    ax.set_xticklabels([f"({s['key']}) {s.get('short', s['title'][:24])}" for s in scenarios],
                       fontsize=8)
    ax.set_ylabel("Mpps (median, min-max)")
    huge = "hugepages" if res.get("hugepages") else "no hugepages (--no-huge)"
    emc = "EMC and SMC off"
    emc_on = [s["key"] for s in scenarios if s["key"] in ("f", "g", "i")]
    if emc_on:
        emc = f"SMC off, EMC off but in ({'), ('.join(emc_on)}) (OVS's default)"
    # (f) and (g) have flow counts of their own (1000 and 100000), the OVN
    # scenarios theirs (--ovn-flows).
    parts = []
    if any(s["key"] not in ("f", "g", "h", "i") for s in scenarios):
        parts.append(f"{res['flows']} flows")
    if any(s["key"] == "g" for s in scenarios):
        parts.append("(g) 100000")
    if any(s["key"] in ("h", "i") for s in scenarios):
        parts.append(f"OVN {res.get('ovn_flows', '?')} 5-tuples")
    flows = ", ".join(parts) or f"{res['flows']} flows"
    ax.set_title(f"OVS-DPDK phy-to-phy, {emc},\n{flows}, {huge}", fontsize=10)
    ax.legend(fontsize=8, ncol=min(len(impls) + 1, 4), loc="upper center")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)
    fig.savefig(out + ".svg")
    print(f"wrote {out}.png and {out}.svg")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
