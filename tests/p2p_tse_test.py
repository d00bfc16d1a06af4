#!/usr/bin/env python3
"""Unit tests of the TSE grid in the switch (perf/p2p/tse_switch.py,
tse_grid.py's cells file reader, perf/tse/report.py on switch cells).

The grid itself needs root, hugepages and an OVS-DPDK build (perf/p2p/run.sh
--tse); these check what it relies on: which shapes a switch can make, the
ACL, and that every attack frame leaves its rule at the bit its mask tuple
says (so OVS's prefix tries give it that mask), the attack's share and
place, the legitimate frames' rules; and the report's figures for a cell
measured in the switch.  Not checked here: that ovs-vswitchd makes those
masks (the grid counts the PMD's subtables per cell and reports them).
"""
import os
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "perf", "p2p"))
sys.path.insert(0, os.path.join(HERE, "..", "perf", "tse"))
import report  # noqa: E402
import tse_grid  # noqa: E402
import tse_switch  # noqa: E402


def shape(spec):
    return tse_switch.parse(spec)


def fields_of(frame):
    """{dimension: value} of an attack frame, and its IP protocol."""
    ethertype = struct.unpack("!H", frame[12:14])[0]
    if ethertype == 0x86DD:
        src, dst = frame[22:38], frame[38:54]
        sport, dport = struct.unpack("!HH", frame[54:58])
        out = {"src6": int.from_bytes(src, "big"), "dst6": int.from_bytes(dst, "big")}
        proto = frame[20]
    else:
        out = {"src4": int.from_bytes(frame[26:30], "big"),
               "dst4": int.from_bytes(frame[30:34], "big")}
        sport, dport = struct.unpack("!HH", frame[34:38])
        proto = frame[23]
    out["ports16"], out["ports32"] = sport, (sport << 16) | dport
    return out, proto


def first_difference(a, b, width):
    """1-based position of the first bit in which a and b differ (width + 1:
    none): the bits a prefix trie un-wildcards to tell a from b."""
    x = a ^ b
    return width - x.bit_length() + 1 if x else width + 1


class Shapes(unittest.TestCase):
    def test_defaults_and_bad_text(self):
        s = shape("")
        self.assertEqual((s["masks"], s["fields"], s["attack"]), ("1000", "src4+sport+dport", "10"))
        for bad in ("masks=0", "masks=x", "fields=src5", "pattern=odd", "colour=red", "attack=100",
                    "place=middle", "rules"):
            with self.assertRaises(ValueError, msg=bad):
                shape(bad)

    def test_what_a_switch_cannot_make_says_why(self):
        cases = {"pattern=arbitrary": "arbitrary", "legit-map=same": "legit-map=same",
                 "masks=10,fields=dport": "ports trie", "masks=10,fields=src4+src6": "IPv4 and IPv6",
                 "masks=33,fields=src4": "at most 32", "masks=1025,fields=src4+sport+dport":
                 "at most 1024", "masks=1000,fields=src4+dst4+sport+dport,rules=201": "flow limit"}
        for spec, why in cases.items():
            self.assertIn(why, tse_switch.cannot(shape(spec)), spec)
        for spec in ("masks=32,fields=src4", "masks=1024,fields=src4+sport+dport",
                     "masks=10000,fields=src6+dst6+sport+dport", "masks=16,fields=sport"):
            self.assertEqual(tse_switch.cannot(shape(spec)), "", spec)

    def test_acl_has_a_rule_per_field_and_rule_and_the_block_matches_the_protocol(self):
        flows, block = tse_switch.rules(shape("masks=100,fields=src4+dst4+sport+dport,rules=3"))
        acl = [f for f in flows if f.startswith("priority=100,")]
        self.assertEqual(len(acl), 3 * 3)  # src4, dst4, the ports pair
        self.assertTrue(all(",tcp," in f for f in acl))
        self.assertEqual(sum("tp_src=" in f and "tp_dst=" in f for f in acl), 3)
        self.assertEqual(block, "priority=200,in_port=1,tcp")
        flows, block = tse_switch.rules(shape("masks=100,fields=src6,legit=5"))
        self.assertTrue(block.endswith(",tcp6"))
        self.assertEqual(sum("nw_dst=" in f for f in flows if "udp" in f), 5 * 16)
        self.assertEqual(tse_switch.prefixes(shape("fields=src6+dst6+sport")), "ipv6_src,ipv6_dst")
        self.assertIsNone(tse_switch.prefixes(shape("fields=src4+dst4")))


class AttackFrames(unittest.TestCase):
    def check(self, spec):
        s = shape(spec)
        frames = tse_switch.frames(s)
        dims = tse_switch.dimensions(s)
        attack = [f for f in frames[:-1] if fields_of(f)[1] == 6]
        pct = int(s["attack"])
        self.assertAlmostEqual(len(attack) / (len(frames) - 1), pct / 100, delta=0.002, msg=spec)
        tuples = set(tse_switch.mask_tuples(s))
        self.assertEqual(len(tuples), int(s["masks"]))
        seen = {}
        for f in attack:
            values, _ = fields_of(f)
            lengths = []
            for dim, width in dims:
                v = values["ports%d" % width] if dim == "ports" else values[dim]
                # The trie un-wildcards up to the rule the frame agrees with
                # longest: with one rule, its base.
                lengths.append(first_difference(v, tse_switch.base(dim, 0, width), width))
            self.assertIn(tuple(lengths), tuples, spec)
            seen[tuple(lengths)] = seen.get(tuple(lengths), 0) + 1
        return s, attack, seen

    def test_every_attack_frame_leaves_its_rule_at_its_masks_lengths(self):
        for spec in ("masks=100,fields=src6", "masks=1000,fields=src4+dst4",
                     "masks=1000,fields=src4+sport+dport,attack=20",
                     "masks=500,fields=src6+dst6+sport+dport,attack=1",
                     "masks=16,fields=sport"):
            s, attack, seen = self.check(spec)
            if len(attack) >= int(s["masks"]):
                self.assertEqual(len(seen), int(s["masks"]), f"{spec}: every mask has frames")

    def test_early_puts_nine_in_ten_attack_frames_on_sixteen_masks(self):
        _, attack, seen = self.check("masks=1000,fields=src4+sport+dport,place=early")
        top16 = sum(sorted(seen.values(), reverse=True)[:16])
        self.assertGreaterEqual(top16 / len(attack), 0.89)
        # The other tenth: a mask each, as far as the pcap's frames go
        # (MAX_FRAMES: 24000 attack frames at 20%, 2400 of them spread).
        _, attack, seen = self.check("masks=10000,fields=src4+dst4+sport+dport,place=early,"
                                     "attack=20")
        self.assertEqual(len(attack), tse_switch.MAX_FRAMES * 20 // 100)
        self.assertGreaterEqual(len(seen), len(attack) // 10)

    def test_legitimate_frames_are_udp_inside_their_rules(self):
        s = shape("masks=100,fields=src4+dst4,legit=5")
        nets = tse_switch.legit_rules(5)
        udp = [f for f in tse_switch.frames(s)[:-1] if f[23] == 17]
        self.assertTrue(udp)
        for f in udp[:2000]:
            dst = int.from_bytes(f[30:34], "big")
            self.assertTrue(any(dst >> (32 - n) == net >> (32 - n) for net, n in nets))


class Report(unittest.TestCase):
    def test_switch_cells_give_kept_ratio_and_misses(self):
        def lookup(before, during, cb, cd):
            return {"before_mpps": before, "during_mpps": during, "kept": during / before,
                    "cycles_before": cb, "cycles_during": cd,
                    "attack_per_legit": (cd - 0.9 * cb) / (0.1 * cb)}
        cell = {"axis": "masks-fields", "spec": "masks=100,fields=src4", "attack_pct": 10,
                "switch": True, "made": True,
                "lookups": {"ovs_generic": lookup(10.0, 2.0, 100, 500),
                            "plugin": lookup(20.0, 16.0, 60, 80)}}
        self.assertAlmostEqual(report.kept(cell, "plugin"), 0.8)
        self.assertAlmostEqual(report.vs_generic(cell), 8.0)
        self.assertAlmostEqual(report.ratio(cell, "plugin"), (80 - 54) / 6)
        self.assertEqual(report.misses(cell), ["attack/legit 4.3 > 3"])
        not_made = {"axis": "pattern", "spec": "pattern=arbitrary", "attack_pct": 10,
                    "made": False, "why": "arbitrary masks"}
        text = report.table([cell, not_made])
        self.assertIn("| 0.80 |", text)
        self.assertIn("not made: arbitrary masks", text)
        self.assertIn("Cells meeting every goal: 0 of 1 made (1 not made)", text)

    def test_the_cells_file_is_read_as_the_classifier_grid_reads_it(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# comment\n\naxis-a | masks=100,fields=src6\nb|masks=10\n")
        try:
            self.assertEqual(tse_grid.read_cells(f.name),
                             [("axis-a", "masks=100,fields=src6"), ("b", "masks=10")])
        finally:
            os.unlink(f.name)
        cells = tse_grid.read_cells(os.path.join(HERE, "..", "perf", "tse", "cells.txt"))
        self.assertGreaterEqual(len(cells), 20)
        for _, spec in cells:
            tse_switch.parse(spec)  # every cell of the grid is a shape here too


if __name__ == "__main__":
    # tests/counts.sh's summary line, on stdout (unittest reports on stderr).
    result = unittest.main(exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"p2p_tse_test: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.testsRun else 0)
