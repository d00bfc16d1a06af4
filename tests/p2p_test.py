#!/usr/bin/env python3
"""Unit tests of the phy-to-phy benchmark's traffic and parsing (perf/p2p).

The benchmark itself needs root, hugepages and an OVS-DPDK build, so it is
not part of tests/run.sh; these check what it relies on: scenario (b)'s
prefix layout and frames, scenario (e)'s flood traffic, the pcap format,
the testpmd and pmd-perf-show parsers and the flood table, the OVN
scenarios' topology and traffic, and the checking run's verdict.
"""
import contextlib
import io
import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "perf", "p2p"))
import make_pcaps  # noqa: E402
import ovn_pipeline  # noqa: E402
import p2p  # noqa: E402


class PrefixTraffic(unittest.TestCase):
    def test_rules_are_17_disjoint_prefixes_of_each_length_20_to_32(self):
        rules = make_pcaps.prefix_rules()
        self.assertEqual(len(rules), 13 * 17)
        for length in range(20, 33):
            self.assertEqual(sum(1 for _, n in rules if n == length), 17)
        for net, length in rules:
            self.assertEqual(net & ((1 << (32 - length)) - 1), 0, "network aligned")
        spans = sorted((net, net + (1 << (32 - length))) for net, length in rules)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            self.assertLessEqual(end, start, "prefixes overlap")

    def test_flow_i_lands_in_rule_i_mod_221_as_a_64_byte_udp_frame(self):
        rules = make_pcaps.prefix_rules()
        for i in (0, 1, 220, 221, 5000, 99999):
            frame = make_pcaps.prefix_frame(i)
            self.assertEqual(len(frame), 60)  # 64 on the wire with the FCS
            self.assertEqual(frame[12:14], b"\x08\x00")
            self.assertEqual(frame[23], 17)  # UDP
            dst = struct.unpack("!I", frame[30:34])[0]
            net, length = rules[i % len(rules)]
            self.assertEqual(dst >> (32 - length), net >> (32 - length))

    def test_pcap_header_and_records(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.pcap")
            make_pcaps.write_pcap(path, [make_pcaps.prefix_frame(0), make_pcaps.arp_reply()])
            with open(path, "rb") as f:
                data = f.read()
        magic, major, minor, _, _, snaplen, linktype = struct.unpack("<IHHiIII", data[:24])
        self.assertEqual((magic, major, minor, linktype), (0xA1B2C3D4, 2, 4, 1))
        _, _, incl, orig = struct.unpack("<IIII", data[24:40])
        self.assertEqual((incl, orig), (60, 60))
        self.assertEqual(len(data), 24 + 2 * (16 + 60))


def ip_bits_differing(a, b):
    """Index (0 = most significant) of the first bit where a and b differ."""
    return 32 - (a ^ b).bit_length()


class FloodTraffic(unittest.TestCase):
    def test_attack_frames_differ_from_the_acl_at_their_own_bits(self):
        seen = set()
        for m in range(make_pcaps.FLOOD_MASKS):
            frame = make_pcaps.attack_frame(m)
            self.assertEqual(len(frame), 60)
            self.assertEqual(frame[23], 6)  # TCP
            src, dst = struct.unpack("!II", frame[26:34])
            sport, dport = struct.unpack("!HH", frame[34:38])
            self.assertEqual(dport, make_pcaps.FLOOD_DST_PORT)  # what BLOCK matches
            # The first bit where each field leaves the ACL's value: that
            # prefix length is what OVS's tries un-wildcard.
            where = (ip_bits_differing(src, 0x0A000001), ip_bits_differing(dst, 0x0A000002),
                     16 - (sport ^ 1000).bit_length())
            self.assertNotIn(where, seen, f"frame {m} shares its mask")
            seen.add(where)

    def test_flood_pcap_spreads_2500_attack_frames_among_legitimate_udp(self):
        frames = make_pcaps.flood_frames(list(range(1000)))
        self.assertEqual(len(frames), make_pcaps.FLOOD_FRAMES)
        attack = [n for n, f in enumerate(frames) if f[23] == 6]
        self.assertEqual(len(attack), make_pcaps.FLOOD_MASKS)
        self.assertEqual(len({frames[n] for n in attack}), make_pcaps.FLOOD_MASKS)
        gaps = {b - a for a, b in zip(attack, attack[1:])}
        self.assertEqual(gaps, {make_pcaps.FLOOD_FRAMES // make_pcaps.FLOOD_MASKS})
        legit = [f for f in frames if f[23] == 17]
        self.assertEqual(len(legit), make_pcaps.FLOOD_FRAMES - make_pcaps.FLOOD_MASKS)
        self.assertEqual(len(set(legit)), 1000)  # every flow, cycled


# pmd-perf-show (OVS 3.1, pmd-perf-metrics=true), cut to what worst_iteration reads.
PERF_SHOW = """Time: 02:57:43.287
Measurement duration: 2.000 s

pmd thread numa_id 0 core_id 1:

  Iterations:              1000  (2.00 us/it)
  - Used TSC cycles:  4000000000  ( 80.0 % of total cycles)
  Rx packets:              ...

Histograms
   cycles/it              packets/it             cycles/pkt
   500       10           0         5            100       1
   {mid}     {mid_n}           1         0            200       0
   24000000  0            1000      0            30000     0
   >         {over}            >         0            >         0
-----------------------------------------------------------------
   cycles/it              packets/it
"""


class PerfShowParser(unittest.TestCase):
    def test_worst_iteration_is_the_highest_nonempty_cycles_bin(self):
        worst, hz = p2p.worst_iteration(PERF_SHOW.format(mid=716, mid_n=3, over=0))
        self.assertEqual(worst, 716.0)
        self.assertAlmostEqual(hz, 4000000000 / 0.8 / 2.0)
        worst, _ = p2p.worst_iteration(PERF_SHOW.format(mid=716, mid_n=3, over=2))
        self.assertEqual(worst, float("inf"))
        worst, _ = p2p.worst_iteration(PERF_SHOW.format(mid=716, mid_n=0, over=0))
        self.assertEqual(worst, 500.0)

    def test_without_histograms_nothing_is_made_up(self):
        worst, hz = p2p.worst_iteration("Measurement duration: 2.000 s\n")
        self.assertEqual((worst, hz), (0.0, None))


# Port blocks as dpdk-testpmd 22.11 prints them every --stats-period.
TESTPMD_BLOCK = """
  ######################## NIC statistics for port 0  ########################
  RX-packets: {n}      RX-missed: 0          RX-bytes:  0
  RX-errors: 0
  RX-nombuf:  0
  TX-packets: 0          TX-errors: 0          TX-bytes:  0

  Throughput (since last show)
  Rx-pps:     {pps}          Rx-bps:  33970639872
  Tx-pps:            0          Tx-bps:            0
  ############################################################################

  ######################## NIC statistics for port 1  ########################
  RX-packets: 0          RX-missed: 0          RX-bytes:  0
  Throughput (since last show)
  Rx-pps:            0          Rx-bps:            0
  ############################################################################
"""


class TestpmdParser(unittest.TestCase):
    def test_median_of_port_0_after_warm_up(self):
        out = "".join(TESTPMD_BLOCK.format(n=k, pps=pps)
                      for k, pps in enumerate([0, 50000000, 70000000, 71000000, 69000000]))
        self.assertAlmostEqual(p2p.testpmd_rx_mpps(out), 70.0)

    def test_too_few_readings(self):
        self.assertIsNone(p2p.testpmd_rx_mpps(TESTPMD_BLOCK.format(n=1, pps=5)))


class CpuDependentLookups(unittest.TestCase):
    def test_cpu_lacks_names_what_is_missing(self):
        self.assertEqual(p2p.cpu_lacks("avx512_gather", {"avx2", "bmi2"}), "AVX512F")
        self.assertEqual(p2p.cpu_lacks("avx512_gather", {"avx512f", "bmi2"}), "")
        self.assertEqual(p2p.cpu_lacks("jit_avx2", {"sse4_2", "popcnt"}), "AVX2, BMI1, BMI2")
        self.assertEqual(p2p.cpu_lacks("jit_avx2", {"avx2", "bmi1", "bmi2", "popcnt"}),
                         "SSE4.2")
        self.assertEqual(p2p.cpu_lacks("generic", set()), "")

    def test_cpu_flags_reads_the_flags_line(self):
        with tempfile.NamedTemporaryFile("w", suffix="cpuinfo") as f:
            f.write("processor\t: 0\nflags\t\t: fpu sse4_2 avx2 bmi2\nbugs\t\t: x\n")
            f.flush()
            self.assertEqual(p2p.cpu_flags(f.name), {"fpu", "sse4_2", "avx2", "bmi2"})

    def test_table_says_na_never_another_lookups_figures(self):
        measured = {"mpps_median": 5.0, "cycles_per_packet_median": 400.0,
                    "ratio_to_generic": 1.0, "lookups_in_use": {"generic": 2},
                    "subtable_lookups_per_hit": 1.0}
        results = {
            "implementations": ["generic", "avx512_gather", "jit_avx2"],
            "not_measured": {"avx512_gather": "CPU lacks AVX512F"},
            "scenarios": [{"key": "a", "title": "one subtable", "pcap": "x.pcap",
                           "results": {"generic": measured,
                                       "jit_avx2": {"not_measured": "no subtable ran it"}}}],
        }
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            p2p.print_table(results)
        text = out.getvalue()
        row = next(line for line in text.splitlines() if line.startswith("(a)"))
        self.assertEqual(row.count("n/a"), 2, row)
        self.assertEqual(row.count("Mpps"), 1, row)
        self.assertIn("avx512_gather: n/a, not measured (CPU lacks AVX512F)", text)
        self.assertIn("jit_avx2: n/a, not measured (no subtable ran it)", text)


class FloodTable(unittest.TestCase):
    def test_phases_ratios_and_na(self):
        def r(mpps, worst, mean):
            return {"legit_mpps_median": mpps, "worst_iteration_us_max": worst,
                    "jit_ranking_mean_us": mean, "jit_ranking_max_us": 2 * mean,
                    "subtables_median": 3, "ratio_to_generic": mpps / 10.0}
        results = {
            "implementations": ["generic", "avx512_gather", "jit_avx2"],
            "scenarios": [],
            "flood": {"key": "e", "title": "mask flood", "phases": ["before", "during"],
                      "results": {
                          "generic": {"before": r(10.0, 100.0, 20.0),
                                      "during": r(1.0, float("inf"), 1500.0)},
                          "jit_avx2": {"before": r(12.0, 90.0, 25.0),
                                       "during": {"not_measured": "no subtable ran it"}}}},
        }
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            p2p.print_table(results)
        text = out.getvalue()
        before = next(line for line in text.splitlines() if line.startswith("before "))
        self.assertIn("12.00 (1.20)", before)
        self.assertNotIn("avx512_gather", text)  # not run in (e): no column
        during = next(line for line in text.splitlines() if line.startswith("during "))
        self.assertIn(">24Mc", during)
        self.assertIn("n/a", during)


def ipv4_fields(frame):
    """(src, dst, proto, l4 bytes) of an Ethernet/IPv4 frame."""
    ihl = (frame[14] & 0xF) * 4
    total = struct.unpack("!H", frame[16:18])[0]
    src, dst = struct.unpack("!II", frame[26:34])
    return src, dst, frame[23], frame[14 + ihl:14 + total]


class OvnTraffic(unittest.TestCase):
    def test_address_set_is_1000_disjoint_prefixes_of_10_1_0_0_16(self):
        prefixes = ovn_pipeline.allowed_prefixes()
        self.assertEqual(len(prefixes), 1000)
        spans = sorted((net, net + (1 << (32 - n))) for net, n in prefixes)
        for (_, end), (start, _) in zip(spans, spans[1:]):
            self.assertLessEqual(end, start, "prefixes overlap")
        for net, n in prefixes:
            self.assertEqual(net >> 16, ovn_pipeline.ip("10.1.0.0") >> 16)
            self.assertIn(n, range(26, 31))
        cmds = ovn_pipeline.nb_commands()
        as_cmd = next(c for c in cmds if c[:2] == ["create", "Address_Set"])
        self.assertEqual(as_cmd[3].count("/"), 1000)
        self.assertEqual(sum(1 for c in cmds if c[0] == "acl-add"), 10)
        lsps = [c[2] for c in cmds if c[0] == "lsp-add"]
        self.assertEqual(len(lsps), len(set(lsps)), "logical port names unique")
        self.assertEqual(len(lsps), 3 + 3 + 2 * ovn_pipeline.UNBOUND_PORTS)

    def test_legitimate_frames_pass_port_security_with_valid_checksums(self):
        import random
        rng = random.Random(1)
        allowed = ovn_pipeline.allowed_prefixes()
        kinds = set()
        for i in range(400):
            frame = ovn_pipeline.legit_frame(i, rng)
            self.assertEqual(len(frame), 60)
            self.assertEqual(frame[:6], ovn_pipeline.mac(ovn_pipeline.LRP_A_MAC))
            self.assertEqual(frame[6:12], ovn_pipeline.mac(ovn_pipeline.A_MAC))
            src, dst, proto, l4 = ipv4_fields(frame)
            net, n = allowed[i % len(allowed)]
            self.assertEqual(src >> (32 - n), net >> (32 - n), "inside its allowed prefix")
            self.assertEqual(make_pcaps.checksum(frame[14:34]), 0, "IPv4 header checksum")
            if proto == 6:  # conntrack drops a segment whose checksum is wrong
                pseudo = struct.pack("!IIBBH", src, dst, 0, 6, len(l4))
                self.assertEqual(make_pcaps.checksum(pseudo + l4), 0, "TCP checksum")
            kinds.add((proto, struct.unpack("!H", l4[2:4])[0] if proto == 6 else dst >> 24))
        self.assertIn((6, 80), kinds)  # the load balancer's VIPs

    def test_scan_walks_2880_pairs_inside_a_vms_network(self):
        pairs = set()
        for m in range(ovn_pipeline.TENANT_SCAN):
            src, dst, proto, l4 = ipv4_fields(ovn_pipeline.scan_frame(m))
            self.assertEqual(proto, 6)
            self.assertEqual(dst, ovn_pipeline.ip(ovn_pipeline.T_ADDRESS))
            self.assertEqual(src >> 16, ovn_pipeline.ip("10.1.0.0") >> 16)
            pairs.add((src, struct.unpack("!H", l4[2:4])[0]))
        self.assertEqual(len(pairs), 2880)  # of 4 x 16 x 3 x 16 frames: some meet

    def test_pcaps_hold_the_mix_and_a_few_percent_of_scan(self):
        with tempfile.TemporaryDirectory() as d:
            ovn_pipeline.write_pcaps(d, 1000)
            with open(os.path.join(d, "ovn-tenant-flood-1000.pcap"), "rb") as f:
                data = f.read()
            self.assertTrue(os.path.exists(os.path.join(d, "ovn-1000.pcap")))
        n = scan = 0
        pos = 24
        t = ovn_pipeline.ip(ovn_pipeline.T_ADDRESS)
        while pos < len(data):
            length = struct.unpack("<I", data[pos + 8:pos + 12])[0]
            frame = data[pos + 16:pos + 16 + length]
            n += 1
            scan += frame[12:14] == b"\x08\x00" and ipv4_fields(frame)[1] == t
            pos += 16 + length
        self.assertEqual(n, ovn_pipeline.FLOOD_FRAMES + 1)  # and the ARP reply
        self.assertEqual(scan, ovn_pipeline.TENANT_SCAN)

    def test_layout_of_an_unpacked_package_and_a_build_tree(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(RuntimeError, "neither an unpacked package"):
                ovn_pipeline.ovn_layout(d)
            for sub, prog in (("northd", "ovn-northd"), ("controller", "ovn-controller"),
                              ("utilities", "ovn-nbctl"), ("utilities", "ovn-sbctl")):
                os.makedirs(os.path.join(d, sub), exist_ok=True)
                path = os.path.join(d, sub, prog)
                open(path, "w").close()
                os.chmod(path, 0o755)
            programs, share = ovn_pipeline.ovn_layout(d)
            self.assertEqual(programs["ovn-northd"], os.path.join(d, "northd", "ovn-northd"))
            self.assertEqual(share, d)


class CheckVerdict(unittest.TestCase):
    AV = "2026-12-07T17:50:10.782Z|{n:05d}|dpif_lookup_autovalidator(pmd-c01/id:8)|ERR|" \
         "matches_good 0xffffffff != matches_test 0x0 in func {func}"
    COUNTS = "\n".join([
        "2026-12-07T17:51:00.000Z|00090|dpif_lookup_autovalidator|INFO|checked 'generic': "
        "100 subtable lookups against generic, {g} mismatches",
        "2026-12-07T17:51:00.000Z|00091|dpif_lookup_autovalidator|INFO|checked 'jit_avx2': "
        "90 subtable lookups against generic, {j} mismatches",
        "2026-12-07T17:51:00.000Z|00092|dpcls_plugin(pmd-c01/id:8)|INFO|checked "
        "'tail_index': 32 keys against OVS's loop over the tail, 0 mismatches"])

    def test_a_burst_where_generic_disagreed_with_itself_is_a_race(self):
        log = "\n".join([self.AV.format(n=17, func="generic"),
                         self.AV.format(n=18, func="jit_avx2"),
                         self.COUNTS.format(g=1, j=1)])
        v = p2p.judge_check(log)
        self.assertTrue(v["passed"], v)
        self.assertEqual(v["raced_bursts"], 1)
        self.assertEqual(v["counts"]["tail_index"], (32, 0))

    def test_a_lookup_disagreeing_alone_fails(self):
        log = "\n".join([self.AV.format(n=18, func="jit_avx2"), self.COUNTS.format(g=0, j=1)])
        v = p2p.judge_check(log)
        self.assertFalse(v["passed"])
        self.assertEqual(len(v["mismatch_lines"]), 1)

    def test_the_plugins_own_mismatch_and_no_counts_fail(self):
        line = ("2026-12-07T17:44:27.538Z|00017|dpcls_plugin(pmd-c01/id:8)|ERR|tail_index: "
                "key 0 of a burst: a miss, OVS's loop over the same subtables: a rule")
        self.assertFalse(p2p.judge_check(line + "\n" + self.COUNTS.format(g=0, j=0))["passed"])
        self.assertFalse(p2p.judge_check("nothing logged")["passed"])
        fused = ("x|00001|dpcls_plugin_validation|INFO|checked 'jit_fused' (fused): 5 keys "
                 "against OVS's generic over the same subtables, 0 mismatches")
        self.assertEqual(p2p.check_counts(fused), {"jit_fused (fused)": (5, 0)})


if __name__ == "__main__":
    # tests/counts.sh's summary line, on stdout (unittest reports on stderr).
    result = unittest.main(exit=False).result
    failed = len(result.failures) + len(result.errors)
    print(f"p2p_test: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed or not result.testsRun else 0)
