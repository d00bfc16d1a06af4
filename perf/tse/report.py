#!/usr/bin/python3
"""The Tuple Space Explosion grid as a table and a heat map.

    report.py GRID_JSON OUT_BASENAME   -> OUT_BASENAME.md, .png and .svg

GRID_JSON: perf/tse/tse_grid --json's lines, one cell each, or
perf/p2p/tse_grid.py's (cells measured in the switch: "switch": true,
kept and attack/legit per lookup from Mpps and cycles a packet, no
probes or writer ticks).  The table has
a row per cell: for OVS's generic and the plugin, "kept" (the legitimate
packets a classifier-bound PMD forwards during the flood, as a share of
before's: (1 - attack%) * T_before / T_mix) and attack/legit (T_attack /
T_legit); the plugin's tail-index probes per key and writer ticks.  A cell
that misses a goal of issue 44 (kept >= 0.70 at attack=10%, attack/legit
<= 3, the legitimate packets forwarded during the flood no fewer than
with generic: T_mix no higher) says which.  Then the worst cell and
the best.  The heat map: the plugin's kept over masks x fields, and the
other axes as strips.  Needs Debian's python3-matplotlib.
"""
import json
import sys

GOAL_KEPT, GOAL_RATIO = 0.70, 3.0


def kept(cell, lookup):
    f = cell["lookups"][lookup]
    if "kept" in f:  # the switch: legitimate Mpps during / before
        return f["kept"]
    return (1 - cell["attack_pct"] / 100) * f["before"] / f["mix"] if f["mix"] else 0.0


def ratio(cell, lookup):
    f = cell["lookups"][lookup]
    if "attack_per_legit" in f:  # the switch: from cycles a packet
        return f["attack_per_legit"]
    return f["attack"] / f["legit"] if f["legit"] else 0.0


def vs_generic(cell):
    """The legitimate packets the plugin forwards during the flood, over
    generic's: T_mix of generic over the plugin's."""
    g, p = cell["lookups"].get("ovs_generic"), cell["lookups"]["plugin"]
    if g and "during_mpps" in p:  # the switch: legitimate Mpps during
        return p["during_mpps"] / g["during_mpps"] if g["during_mpps"] else 0.0
    return g["mix"] / p["mix"] if g and p["mix"] else 0.0


def misses(cell):
    out = []
    k = kept(cell, "plugin")
    if cell["attack_pct"] == 10 and k < GOAL_KEPT:
        out.append(f"kept {k:.2f} < {GOAL_KEPT}")
    if ratio(cell, "plugin") > GOAL_RATIO:
        out.append(f"attack/legit {ratio(cell, 'plugin'):.1f} > {GOAL_RATIO:.0f}")
    if cell["lookups"].get("ovs_generic") and vs_generic(cell) < 1:
        out.append("legitimate Mpps during below generic's")
    return out


def number(lookup, key, digits):
    """A figure the cell has, or blank (the switch has no probe counts)."""
    return f"{lookup[key]:.{digits}f}" if key in lookup else ""


def table(cells):
    # The classifier's cells have the index's probes and the writer's ticks;
    # the switch's, the subtables the PMD held during the flood.
    switch = any(c.get("switch") for c in cells)
    extra = ["subtables during"] if switch else ["probes/key", "insert", "remove"]
    rows = ["| axis | shape | generic kept | plugin kept | plugin / generic during "
            "| generic atk/leg | plugin atk/leg | " + " | ".join(extra) + " | goals |",
            "|---|---|" + "---:|" * (5 + len(extra)) + "---|"]
    for c in cells:
        if not c["made"]:
            rows.append(f"| {c['axis']} | `{c['spec']}` |" + " |" * (5 + len(extra)) +
                        f" not made: {c['why']} |")
            continue
        p = c["lookups"]["plugin"]
        g = c["lookups"].get("ovs_generic")
        m = misses(c)
        figures = ([f"{c.get('subtables_during', 0):.0f}"] if switch else
                   [number(p, "probes_per_key", 2), number(p, "insert", 0),
                    number(p, "remove", 0)])
        rows.append(
            f"| {c['axis']} | `{c['spec']}` | {kept(c, 'ovs_generic'):.2f} | "
            f"{kept(c, 'plugin'):.2f} | {vs_generic(c):.2f}x | "
            f"{ratio(c, 'ovs_generic') if g else 0:.1f} | "
            f"{ratio(c, 'plugin'):.1f} | " + " | ".join(figures) + " | "
            f"{'; '.join(m) if m else 'met'} |")
    made = [c for c in cells if c["made"]]
    if made:
        worst = min(made, key=lambda c: kept(c, "plugin"))
        best = max(made, key=lambda c: kept(c, "plugin"))
        worst_ratio = max(made, key=lambda c: ratio(c, "plugin"))
        rows += ["",
                 f"Worst cell by kept: `{worst['spec']}`: {kept(worst, 'plugin'):.2f} "
                 f"(generic {kept(worst, 'ovs_generic'):.2f}), attack/legit "
                 f"{ratio(worst, 'plugin'):.1f}.",
                 f"Worst cell by attack/legit: `{worst_ratio['spec']}`: "
                 f"{ratio(worst_ratio, 'plugin'):.1f}.",
                 f"Best cell: `{best['spec']}`: kept {kept(best, 'plugin'):.2f}.",
                 f"The plugin forwards {min(map(vs_generic, made)):.2f}x to "
                 f"{max(map(vs_generic, made)):.2f}x the legitimate packets generic does during "
                 f"the flood ({'legitimate Mpps' if made[0].get('switch') else 'T_mix'}).",
                 f"Cells meeting every goal: {sum(1 for c in made if not misses(c))} of "
                 f"{len(made)} made ({len(cells) - len(made)} not made)."]
    return "\n".join(rows) + "\n"


def key_of(spec, name):
    return dict(kv.split("=", 1) for kv in spec.split(","))[name]


def heatmap(cells, out):
    import matplotlib  # here, so that the table needs no matplotlib (tests)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    made = [c for c in cells if c["made"]]
    grid = [c for c in cells if c["axis"] == "masks-fields"]
    others = [c for c in made if c["axis"] != "masks-fields"]
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.5), gridspec_kw={"width_ratios": [1, 1.3]})
    ax = axes[0]
    if grid:
        masks = sorted({int(key_of(c["spec"], "masks")) for c in grid})
        fields = list(dict.fromkeys(key_of(c["spec"], "fields") for c in grid))
        z = [[float("nan")] * len(fields) for _ in masks]
        for c in grid:
            i = masks.index(int(key_of(c["spec"], "masks")))
            j = fields.index(key_of(c["spec"], "fields"))
            if c["made"]:
                z[i][j] = kept(c, "plugin")
        im = ax.imshow(z, vmin=0, vmax=1, cmap="RdYlGn", aspect="auto")
        for i in range(len(masks)):
            for j in range(len(fields)):
                ax.text(j, i, "n/a" if z[i][j] != z[i][j] else f"{z[i][j]:.2f}",
                        ha="center", va="center", fontsize=9)
        ax.set_xticks(range(len(fields)), fields, rotation=20, fontsize=8)
        ax.set_yticks(range(len(masks)), masks)
        ax.set_ylabel("attack masks")
        where = "in the switch" if any(c.get("switch") for c in cells) else "at the classifier"
        ax.set_title(f"plugin {where}: legitimate kept during / before (10% attack)\n"
                     "(text: x generic's legitimate packets during the flood)", fontsize=9)
        for c in grid:
            if c["made"]:
                i = masks.index(int(key_of(c["spec"], "masks")))
                j = fields.index(key_of(c["spec"], "fields"))
                ax.text(j, i + 0.25, f"{vs_generic(c):.1f}x", ha="center", va="center",
                        fontsize=7)
        fig.colorbar(im, ax=ax, fraction=0.046)
    else:  # a run of single cells (--cell): no masks x fields to map
        ax.axis("off")
        ax.text(0.5, 0.5, "no cell of the masks x fields axis in this run\n(the bars: every cell made)",
                ha="center", va="center", fontsize=10, transform=ax.transAxes)
    ax = axes[1]
    if others:
        ys = range(len(others))
        ax.barh([y + 0.2 for y in ys], [kept(c, "plugin") for c in others], height=0.4,
                label="plugin", color="tab:green")
        ax.barh([y - 0.2 for y in ys], [kept(c, "ovs_generic") for c in others], height=0.4,
                label="OVS generic", color="tab:gray")
        for y, c in zip(ys, others):  # what the kept ratios hide: during, against generic
            ax.text(kept(c, "plugin") + 0.01, y + 0.2, f"{vs_generic(c):.1f}x generic's during",
                    va="center", fontsize=6)
        ax.axvline(GOAL_KEPT, color="k", linestyle="--", linewidth=0.8)
        ax.set_yticks(list(ys), [f"{c['axis']}: " + ",".join(
            kv for kv in c["spec"].split(",") if not kv.startswith(("legit-map=other", "place=late",
                                                                   "pattern=prefix", "rules=1,")))
            for c in others], fontsize=6)
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("legitimate kept during / before")
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out + ".png", dpi=110)
    fig.savefig(out + ".svg")


def main(path, out):
    with open(path) as f:
        cells = [json.loads(line) for line in f if line.strip()]
    with open(out + ".md", "w") as f:
        f.write(table(cells))
    heatmap(cells, out)
    print(table(cells), end="")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
