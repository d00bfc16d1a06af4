#!/usr/bin/env python3
"""Phy-to-phy forwarding benchmark of dpcls lookups on OVS-DPDK.

    p2p.py --ovs PREFIX --pcaps DIR --out DIR [--window S] [--rounds N]
           [--scenarios a,b,c,d,f,g,e] [--flows N]

PREFIX is a `patches/build-ovs.sh --dpdk` install.  No NICs are needed:
DPDK's pcap PMD replays a pcap file in a loop as port dpdk0's receive side
and drops what dpdk1 transmits (docs/internals/ovs-dpdk-p2p-notes.md).

For each scenario the lookup implementations are switched live with
`ovs-appctl dpif-netdev/subtable-lookup-prio-set` in alternating windows
(A B C A B C ...), so that drift spreads over all of them.  Per window:
Mpps and cycles/packet of the PMD thread, megaflow hits and subtable
lookups per hit, from `dpif-netdev/pmd-perf-show`, and the PMD thread's
own CPU time from /proc, to flag windows in which it was descheduled.

Everything started is stopped and everything changed is restored (daemons
by pid, the hugetlbfs mount, nr_hugepages), also on errors and Ctrl-C.
"""
import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

import daemons
import make_pcaps
import ovn_pipeline

HUGEPAGES = 1024  # 2 MB pages: 2 GB for dpdk-socket-mem
NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"


# What each CPU-dependent lookup needs (/proc/cpuinfo flag names).  A lookup
# the CPU cannot run is reported as n/a with the reason, never measured:
# after its prio-set the subtables would run another lookup, and its
# windows would be that lookup's figures under the wrong name.
CPU_NEEDS = {"avx512_gather": ["avx512f", "bmi2"],
             "jit_avx2": ["avx2", "bmi1", "bmi2", "popcnt", "sse4_2"],
             "jit_fused": ["avx2", "bmi1", "bmi2", "popcnt", "sse4_2"]}
# A lookup that is a tier above another: selected, both are on.  jit_fused
# serves no subtable by itself; it fuses the top subtables that run
# jit_avx2 code.
RIDES_ON = {"jit_fused": "jit_avx2", "tail_index": "jit_avx2"}


def cpu_flags(path="/proc/cpuinfo"):
    with open(path) as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def cpu_lacks(impl, flags):
    """The features `impl` needs that the CPU lacks, e.g. "AVX512F, BMI2"."""
    missing = [f for f in CPU_NEEDS.get(impl, []) if f not in flags]
    return ", ".join(f.upper().replace("SSE4_2", "SSE4.2") for f in missing)


def testpmd_rx_mpps(out):
    """Median of port 0's Rx-pps in dpdk-testpmd's periodic statistics,
    without the first two (warm-up) readings; None with fewer than three."""
    pps = [int(x) for x in re.findall(r"statistics for port 0\s.*?Rx-pps:\s+(\d+)", out, re.S)]
    if len(pps) < 3:
        return None
    return statistics.median(pps[2:]) / 1e6


def worst_iteration(perf_show):
    """(cycles, TSC Hz) from `pmd-perf-show` with pmd-perf-metrics=true: the
    upper wall of the highest non-empty bin of the PMD's cycles/it histogram
    (bins grow by ~1.43x from 500 to 24M cycles, so this bounds the worst
    iteration within 43%; float('inf') when it lies beyond 24M cycles), and
    the TSC rate from the used cycles, their share and the duration."""
    worst = 0.0
    section = perf_show.split("Histograms", 1)
    if len(section) == 2:
        for line in section[1].splitlines()[2:]:
            cols = line.split()
            if not cols or cols[0].startswith("-"):
                break
            if len(cols) >= 2 and int(cols[1]) > 0:
                worst = float("inf") if cols[0] == ">" else float(cols[0])
    u = re.search(r"Used TSC cycles:\s+(\d+)\s+\(\s*([\d.]+) % of total", perf_show)
    d = re.search(r"Measurement duration:\s+([\d.]+) s", perf_show)
    tsc_hz = None
    if u and d and float(u.group(2)) > 0 and float(d.group(1)) > 0:
        tsc_hz = int(u.group(1)) / (float(u.group(2)) / 100) / float(d.group(1))
    return worst, tsc_hz


class Bench:
    def __init__(self, args):
        self.args = args
        self.prefix = os.path.abspath(args.ovs)
        self.work = os.path.abspath(os.path.join(args.out, "run"))
        self.env = dict(os.environ)
        self.env["PATH"] = f"{self.prefix}/bin:{self.prefix}/sbin:" + self.env["PATH"]
        for var in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR"):
            self.env[var] = self.work
        self.undo = []  # cleanup actions, run in reverse order
        self.jit_show = False  # ovs-vswitchd has dpcls-plugin/jit-show (set by start())
        self.huge = True
        self.traffic_changes = 0  # set_traffic()'s calls: each a new vdev name

    # ---- processes ----
    def run(self, *cmd, check=True, env=None):
        """Runs `cmd` (in the bench's environment, or `env`); its output.
        With `check`, a failure raises with its first arguments and error."""
        res = subprocess.run(cmd, env=env or self.env, capture_output=True, text=True)
        if check and res.returncode:
            shown = " ".join(cmd[:8]) + (" ..." if len(cmd) > 8 else "")
            raise RuntimeError(f"{shown}: {res.stderr.strip() or res.stdout.strip()}")
        return res.stdout

    def appctl(self, *args):
        return self.run("ovs-appctl", *args)

    def vsctl(self, *args):
        return self.run("ovs-vsctl", "--timeout=30", *args)

    def ofctl(self, *args):
        return self.run("ovs-ofctl", *args)

    # ---- setup and teardown ----
    def hugepages(self):
        with open(NR_HUGEPAGES) as f:
            before = int(f.read())
        mnt = os.path.join(self.work, "huge")
        os.makedirs(mnt, exist_ok=True)
        try:
            if before < HUGEPAGES:
                with open(NR_HUGEPAGES, "w") as f:
                    f.write(str(HUGEPAGES))
                self.undo.append(lambda: open(NR_HUGEPAGES, "w").write(str(before)))
            with open(NR_HUGEPAGES) as f:
                got = int(f.read())
            if got < HUGEPAGES:
                raise RuntimeError(f"only {got} of {HUGEPAGES} 2 MB hugepages could be reserved")
            subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", mnt],
                           check=True, capture_output=True)
            self.undo.append(lambda: subprocess.run(["umount", mnt], capture_output=True))
            return mnt
        except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
            print(f"p2p: no hugepages ({e}); running DPDK with --no-huge --legacy-mem, "
                  "which is ~13% slower: compare ratios, not absolute rates", file=sys.stderr)
            self.huge = False
            return None

    def testpmd_drop(self, pcap, seconds=6):
        """The I/O ceiling: dpdk-testpmd forwarding `pcap` from the same
        kind of vdev to a port that drops, on the PMD's core.  Mpps, or None
        when dpdk-testpmd is not installed."""
        if not shutil.which("dpdk-testpmd"):
            return None
        empty = os.path.join(self.work, "empty.pcap")
        mem = ["--in-memory"] if self.huge_dir else ["--no-huge", "--legacy-mem"]
        cmd = ["dpdk-testpmd", "-l", "0,1", "--no-pci", *mem,
               f"--vdev=net_pcap0,rx_pcap={pcap},infinite_rx=1",
               f"--vdev=net_pcap1,rx_pcap={empty}", "--", "--forward-mode=io",
               "--auto-start", "--stats-period=1", "--nb-cores=1"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        self.undo.append(lambda: proc.poll() is None and os.killpg(proc.pid, signal.SIGKILL))
        time.sleep(seconds)
        os.killpg(proc.pid, signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        mpps = testpmd_rx_mpps(out)
        if mpps is None:
            print(f"p2p: dpdk-testpmd gave no rates:\n{out[-2000:]}", file=sys.stderr)
        return mpps

    def prepare(self):
        os.makedirs(self.work, exist_ok=True)
        with open(os.path.join(self.work, "empty.pcap"), "wb") as f:  # header, no packets
            f.write(bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000"))
        self.huge_dir = self.hugepages()

    def start(self):
        huge_dir = self.huge_dir
        db = os.path.join(self.work, "conf.db")
        for old in (db, os.path.join(self.work, "ovs-vswitchd.log")):  # this run's log only
            if os.path.exists(old):
                os.remove(old)
        self.run("ovsdb-tool", "create", db, f"{self.prefix}/share/openvswitch/vswitch.ovsschema")
        self.run("ovsdb-server", db, "--detach", "--no-chdir", "--pidfile", "--log-file",
                 f"--remote=punix:{self.work}/db.sock")
        self.undo.append(lambda: self.kill("ovsdb-server"))
        self.vsctl("--no-wait", "init")
        extra = "--no-pci --file-prefix=ovscls-p2p"
        oc = {"dpdk-init": "true", "pmd-cpu-mask": "0x2", "emc-insert-inv-prob": "0",
              "smc-enable": "false", "pmd-perf-metrics": "true"}
        if huge_dir:
            extra += f" --huge-dir={huge_dir}"
            oc["dpdk-socket-mem"] = "2048"
        else:
            extra += " --no-huge --legacy-mem"
        oc["dpdk-extra"] = extra
        self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                   *[f'other_config:{k}="{v}"' for k, v in oc.items()])
        # The main thread on core 0, the PMD thread on core 1 (pmd-cpu-mask).
        self.run("taskset", "-c", "0", "ovs-vswitchd", "--detach", "--no-chdir", "--pidfile",
                 "--log-file", "--mlockall")
        self.undo.append(lambda: self.kill("ovs-vswitchd"))
        for _ in range(120):
            if self.run("ovs-vsctl", "get", "Open_vSwitch", ".", "dpdk_initialized",
                        check=False).strip() == "true":
                break
            time.sleep(0.5)
        else:
            raise RuntimeError("DPDK did not initialize; see " + self.work + "/ovs-vswitchd.log")
        self.vsctl("add-br", "br0", "--", "set", "bridge", "br0", "datapath_type=netdev",
                   "fail-mode=secure")
        self.jit_show = self.jit_ranking() is not None

    def kill(self, daemon):
        daemons.stop_pidfile(os.path.join(self.work, f"{daemon}.pid"))

    def stop(self):
        while self.undo:
            with contextlib.suppress(Exception):
                self.undo.pop()()

    # ---- ports and traffic ----
    def set_traffic(self, pcap, iface_ids=(), purge=True):
        """(Re)adds the ports: dpdk0 replays `pcap` forever, dpdk1 (and
        dpdk2, ... when `iface_ids` names more) receives nothing (an empty
        pcap) and drops what it transmits.  `iface_ids`: each port's OVN
        logical port (external_ids:iface-id), in order.  A new vdev name per
        change, since DPDK hot-plugs by name.  Then the datapath's flows are
        purged, unless `purge` is false."""
        empty = os.path.join(self.work, "empty.pcap")
        self.traffic_changes += 1
        ports = [f"dpdk{n}" for n in range(max(2, len(iface_ids)))]
        for port in ("dpdk0", "dpdk1", "dpdk2"):
            self.run("ovs-vsctl", "--if-exists", "del-port", "br0", port, check=False)
        for n, port in enumerate(ports):
            rx, loop = (pcap, ",infinite_rx=1") if n == 0 else (empty, "")
            ids = [f"external_ids:iface-id={iface_ids[n]}"] if iface_ids else []
            self.vsctl("add-port", "br0", port, "--", "set", "Interface", port, "type=dpdk",
                       f"ofport_request={n + 1}", *ids,
                       f"options:dpdk-devargs=net_pcap{self.traffic_changes}_{n},rx_pcap={rx}{loop}")
        if purge:
            self.appctl("revalidator/purge")

    def set_emc(self, default):
        """OVS's default EMC insertion (1 in 100 flows), or none (EMC off)."""
        if default:
            self.vsctl("remove", "Open_vSwitch", ".", "other_config", "emc-insert-inv-prob")
        else:
            self.vsctl("set", "Open_vSwitch", ".", 'other_config:emc-insert-inv-prob="0"')

    def set_flows(self, flows):
        path = os.path.join(self.work, "flows.txt")
        with open(path, "w") as f:
            f.write("\n".join(flows) + "\n")
        self.ofctl("del-flows", "br0")
        self.ofctl("add-flows", "br0", path)
        self.appctl("revalidator/purge")

    # ---- measurement ----
    def pmd_tid(self):
        pid = int(open(os.path.join(self.work, "ovs-vswitchd.pid")).read())
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().startswith("pmd"):
                    return pid, int(tid)
        raise RuntimeError("no PMD thread")

    def cpu_seconds(self, pid, tid):
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def port_tx_packets(self, ofport):
        """Packets OVS has sent on OpenFlow port `ofport`, read live from
        the datapath (the Interface table's statistics lag by seconds)."""
        text = self.ofctl("dump-ports", "br0", str(ofport))
        m = re.search(r"tx pkts=(\d+)", text)
        if not m:
            raise RuntimeError(f"no tx count for port {ofport}:\n{text}")
        return int(m.group(1))

    def window(self, seconds):
        pid, tid = self.pmd_tid()
        self.appctl("dpif-netdev/pmd-stats-clear")
        c0, t0 = self.cpu_seconds(pid, tid), time.monotonic()
        fwd0 = self.port_tx_packets(2)
        # jit-show's ranking calls in the window: their count and sum, and,
        # sampled every 0.2 s (a PMD ranks once a second per port), each
        # call's own time, for the window's maximum.
        r0 = self.jit_ranking() if self.jit_show else None
        calls, seen = [], r0["calls"] if r0 else 0
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            time.sleep(min(0.2, max(0.0, end - time.monotonic())))
            r = self.jit_ranking() if r0 else None
            if r and r["calls"] == seen + 1:
                calls.append(r["last_us"])
            if r:
                seen = r["calls"]
        r1 = self.jit_ranking() if r0 else None
        text = self.appctl("dpif-netdev/pmd-perf-show")
        fwd1 = self.port_tx_packets(2)
        c1, t1 = self.cpu_seconds(pid, tid), time.monotonic()
        m = re.search(r"Rx packets:\s+(\d+)\s+\((\d+) Kpps, (\d+) cycles/pkt\)", text)
        h = re.search(r"Megaflow hits:\s+(\d+)\s+\(\s*([\d.]+) %, ([\d.]+) subtbl lookups/hit\)",
                      text)
        e = re.search(r"EMC hits:\s+(\d+)", text)
        s = re.search(r"Simple Match hits:\s*(\d+)", text)
        d = re.search(r"Measurement duration:\s+([\d.]+) s", text)
        u = re.search(r"- Upcalls:\s+(\d+)", text)
        lost = re.search(r"- Lost upcalls:\s+(\d+)", text)
        if not m:
            raise RuntimeError("no packets received in the window:\n" + text)
        rx, duration = int(m.group(1)), float(d.group(1)) if d else seconds
        worst_cycles, tsc_hz = worst_iteration(text)
        return {
            "mpps": rx / duration / 1e6,
            # What port 2 sent, over the wall time between the two reads
            # (about the measurement's duration, plus two appctl calls).
            "forwarded_mpps": (fwd1 - fwd0) / (t1 - t0) / 1e6,
            "worst_iteration_cycles": worst_cycles,
            "worst_iteration_us": worst_cycles / tsc_hz * 1e6 if tsc_hz else None,
            # The JIT's ranking calls: mean over all of the window's, max
            # over those the sampling caught one by one.
            "jit_ranking_calls": r1["calls"] - r0["calls"] if r0 and r1 else None,
            "jit_ranking_mean_us": ((r1["total_us"] - r0["total_us"]) / (r1["calls"] - r0["calls"])
                                    if r0 and r1 and r1["calls"] > r0["calls"] else None),
            "jit_ranking_max_us": max(calls) if calls else None,
            "cycles_per_packet": int(m.group(3)),
            "megaflow_hit_pct": float(h.group(2)) if h else 0.0,
            "subtable_lookups_per_hit": float(h.group(3)) if h else 0.0,
            "emc_hits": int(e.group(1)) if e else 0,
            "simple_match_hits": int(s.group(1)) if s else 0,
            "pmd_cpu_share": (c1 - c0) / (t1 - t0),
            "window_s": t1 - t0,
            # The PMD thread's upcalls (megaflow misses sent to ofproto)
            # and lost ones, a second (pmd-perf-show).
            "upcalls_per_s": int(u.group(1)) / duration if u else None,
            "lost_upcalls_per_s": int(lost.group(1)) / duration if lost else None,
        }

    def implementations(self):
        # OVS 4.0 removed the lookup registry: its series lists lookup
        # providers instead, OVS's own lookups being "generic".
        text = self.run("ovs-appctl", "dpif-netdev/lookup-provider-show", check=False)
        if text.startswith("  generic (Open vSwitch's own)"):
            self.set_prio = "dpif-netdev/lookup-provider-set"
            return ["generic"] + re.findall(r"^  (\S+): priority", text, re.M)
        self.set_prio = "dpif-netdev/subtable-lookup-prio-set"
        text = self.appctl("dpif-netdev/subtable-lookup-info-get")
        names = re.findall(r"^  (\S+) \(Use count", text, re.M)
        return [n for n in names if n != "autovalidator"]

    def select(self, impl, impls):
        for other in impls:
            if other == "generic" and self.set_prio == "dpif-netdev/lookup-provider-set":
                continue  # 4.0: OVS's own serves what no provider above 0 takes
            self.appctl(self.set_prio, other, "1" if other == "generic" else "0")
        if impl in RIDES_ON:
            self.appctl(self.set_prio, RIDES_ON[impl], "100")
        if impl != "generic":
            self.appctl(self.set_prio, impl, "100")
        # Settle until the PMD thread's subtables run `impl` (at most 8 s;
        # specialized may decline fingerprints it lacks), then one more
        # ranking interval: jit_avx2 compiles a hot subtable at a ranking
        # (tier 1) and recompiles it with its packets' map at the next one
        # (tier 2); a subtable with few hits in the interval of the prio-set
        # waits one interval more.
        deadline = time.monotonic() + 8
        time.sleep(0.5)
        while impl != "specialized" and time.monotonic() < deadline:
            used = self.lookups_in_use()
            if used and (set(used) == {impl} or (impl in RIDES_ON and impl in used)):
                break
            time.sleep(0.3)
        time.sleep(1.2)

    def impl_window(self, impl, seconds):
        """window() with the lookups the PMD's subtables ran at its end.  A
        window in which no subtable ran `impl` measured another lookup: it
        does not count for `impl` (w["ran_impl"]); w["flags"] says why, and
        when the PMD thread was descheduled."""
        tail0 = self.tail_counts() if impl == "tail_index" else None
        w = self.window(seconds)
        w["lookups_in_use"] = self.lookups_in_use()
        w["ran_impl"] = impl in w["lookups_in_use"]
        serving_note = ""
        if tail0 is not None:
            # No subtable runs it: it ran if it was handed keys.  With a
            # ranking too short for it (head + minimum tail), the switch runs
            # what it rides on: that is the plugin's default configuration's
            # figure, counted and flagged.
            tail1 = self.tail_counts()
            w["tail_keys"] = tail1["keys"] - tail0["keys"]
            rankings = tail1["rankings"] - tail0["rankings"]
            updates = tail1["updates"] - tail0["updates"]
            w["tail_updates_per_s"] = updates / w["window_s"]
            w["tail_update_mean_us"] = (
                (tail1["update_us"] - tail0["update_us"]) / updates if updates else None)
            w["tail_ranking_hook_mean_us"] = (
                (tail1["ranking_us"] - tail0["ranking_us"]) / rankings if rankings else None)
            w["ran_impl"] = w["tail_keys"] > 0 or RIDES_ON[impl] in w["lookups_in_use"]
            if not w["tail_keys"]:
                serving_note = "  (the index served no key: the ranking is too short for it)"
        w["flags"] = ("" if w["pmd_cpu_share"] > 0.95 else "  (PMD descheduled)") + serving_note
        if not w["ran_impl"]:
            w["flags"] += f"  (no subtable ran {impl}: window not counted)"
        return w

    def pmd_subtables(self):
        """Subtables of the PMD thread, over all its in_ports."""
        text = self.appctl("dpif-netdev/subtable-show", "--limit", "1").split("main thread")[0]
        return sum(int(n) for n in re.findall(r"^  in_port \d+ \(.*?\): (\d+) subtables", text,
                                              re.M))

    def wait_subtables(self, done, timeout, what):
        """Polls the PMD's subtable count until done(count); seconds taken."""
        t0 = time.monotonic()
        while True:
            n = self.pmd_subtables()
            if done(n):
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"{what}: {n} PMD subtables after {timeout} s")
            time.sleep(0.2)

    def jit_ranking(self):
        """jit-show's ranking call counters, or None without jit-show:
        {"calls", "total_us" (both since ovs-vswitchd started), "last_us"}."""
        res = subprocess.run(["ovs-appctl", "dpcls-plugin/jit-show"], env=self.env,
                             capture_output=True, text=True)
        # One "  name: value" per line.
        fields = dict(re.findall(r"^  ([^:\n]+): (\S+)", res.stdout, re.M))
        try:
            return {"calls": int(fields["ranking calls"]),
                    "total_us": float(fields["ranking calls in all"]),
                    "last_us": float(fields["ranking call last"])}
        except (KeyError, ValueError):
            return None

    def tail_counts(self):
        """The plugin's tail indexes since the start (dpcls-plugin/tail-show):
        keys handed to them, calls of the ranking hook and their time (us);
        zeros without the command."""
        res = subprocess.run(["ovs-appctl", "dpcls-plugin/tail-show"], env=self.env,
                             capture_output=True, text=True)
        out = {"keys": 0, "rankings": 0, "ranking_us": 0.0, "updates": 0, "update_us": 0.0}
        if res.returncode:
            return out
        m = re.search(r"keys looked up (\d+)", res.stdout)
        out["keys"] = int(m.group(1)) if m else 0
        m = re.search(r"rankings (\d+) \([\d.]+ / [\d.]+, ([\d.]+) us in all\)", res.stdout)
        if m:
            out["rankings"], out["ranking_us"] = int(m.group(1)), float(m.group(2))
        # Subtables added or removed and rules inserted or removed: calls
        # and their time (mean x calls; the mean is printed to 0.01 us).
        for what in ("subtables added or removed", "rules inserted or removed"):
            m = re.search(what + r" (\d+) \(([\d.]+) / [\d.]+\)", res.stdout)
            if m:
                out["updates"] += int(m.group(1))
                out["update_us"] += int(m.group(1)) * float(m.group(2))
        return out

    def lookups_in_use(self):
        """{lookup name: subtables} over the PMD thread's subtables; a fused
        lookup counts the subtables it serves ("the first N fused")."""
        text = self.appctl("dpif-netdev/subtable-show", "--limit", "0")
        pmd = text.split("main thread")[0]
        used = {}
        for _, name in pmd_subtables(text):
            used[name] = used.get(name, 0) + 1
        for n, name in re.findall(r"^    the first (\d+) fused: lookup (\S+)", pmd, re.M):
            used[name] = used.get(name, 0) + int(n)
        return used


def good_windows(ws):
    """The windows that count for a lookup: those in which it ran, and of
    them those in which the PMD thread was not descheduled (all of them
    when it was in each)."""
    ran = [w for w in ws if w["ran_impl"]]
    return [w for w in ran if w["pmd_cpu_share"] > 0.95] or ran


def pmd_subtables(show):
    """[("(u0,u1)", lookup name)] of the PMD thread's subtables, from
    subtable-show's text (the PMD threads come before the main thread)."""
    return re.findall(r"^    (\(\d+,\d+\)) lookup (\S+),", show.split("main thread")[0], re.M)


def pmd_fingerprints(show):
    """{"(u0,u1)": subtables} of the PMD thread's subtables."""
    fps = {}
    for fp, _ in pmd_subtables(show):
        fps[fp] = fps.get(fp, 0) + 1
    return fps


# ---- scenarios: traffic and rules that reach dpcls ----
# Every scenario adds, per port, a rule matching the ARP reply each pcap
# ends with: a rule that matches more than in_port turns OVS 3.1's simple
# match off for the port, so the other packets reach dpcls.
ARP_GUARD = ["priority=40000,in_port=1,arp,arp_op=2,actions=drop",
             "priority=40000,in_port=2,arp,arp_op=2,actions=drop"]


def scenario_one_subtable(flows):
    return (f"udp-{flows}.pcap", "one subtable: in_port forwarding of Eth/IPv4/UDP (4,1)",
            ARP_GUARD + ["priority=10,in_port=1,ip,actions=output:2",
                         "priority=10,in_port=2,ip,actions=output:1"])


def scenario_prefixes(flows):
    # 221 disjoint nw_dst prefix rules, 17 of each length /20 ... /32, and
    # traffic spread evenly over them (make_pcaps.prefix_rules): 13 (4,2)
    # subtables with equal hits, ~7 subtable lookups per hit.
    rules = list(ARP_GUARD)
    for net, length in make_pcaps.prefix_rules():
        rules.append(f"priority=10,in_port=1,ip,nw_dst={make_pcaps.dotted(net)}/{length},"
                     "actions=output:2")
    rules.append("priority=1,in_port=1,ip,actions=output:2")
    return (f"prefix-{flows}.pcap",
            "13 subtables: 221 nw_dst prefix rules, 17 of each length /20-/32 (4,2)", rules)


def scenario_normal(flows):
    return (f"eth-{flows}.pcap", "NORMAL with MAC learning, Eth-only traffic (5,0)",
            ARP_GUARD + ["priority=10,actions=NORMAL"])


def scenario_pipeline(flows):
    rules = list(ARP_GUARD) + ["table=0,priority=10,in_port=1,udp,actions=resubmit(,1)"]
    for i in range(flows):
        dotted = make_pcaps.dotted((16 << 24) + i)
        rules.append(f"table=1,priority=10,udp,nw_src=10.0.0.1,nw_dst={dotted},"
                     f"tp_src={1024 + i % 50000},tp_dst=5000,actions=output:2")
    rules.append("table=1,priority=1,actions=drop")
    return (f"udp-{flows}.pcap", "OpenFlow pipeline of 2 tables, exact 5-tuple megaflows (4,3)",
            rules)


# Scenario (e): the flood pcap (make_pcaps.flood_frames: legitimate UDP and
# 2.5% attack frames, each of its own megaflow mask against the ACL), in
# three phases per lookup:
#   before  the attack is dropped by its signature (BLOCK, priority 200,
#           checked before the ACL): all its frames share one megaflow;
#   during  BLOCK removed: the revalidators delete that megaflow and each
#           attack frame's upcall installs a megaflow of its own mask, ~2500
#           subtables on the PMD (waited for), then two ranking intervals
#           for the JIT to compile and install;
#   churn   the flood going on, and the datapath flows purged every
#           CHURN_PURGE_S: the flood's ~2500 megaflows (and their masks)
#           are deleted and made again by upcalls, thousands of subtable
#           and rule insertions and removals a second while legitimate
#           traffic flows (the tail index's writer side under load);
#   after   BLOCK back and the datapath flows purged (a narrower megaflow
#           with the same actions stays valid for the revalidators, so
#           without the purge the flood's masks would live on): the flood's
#           subtables are destroyed; what is left is what the flood leaves
#           behind (code, rankings, the legitimate subtable's fast path).
# Legitimate Mpps is what port 2 sends (attack frames are dropped).
BLOCK = f"priority=200,in_port=1,tcp,tp_dst={make_pcaps.FLOOD_DST_PORT}"
FLOOD_PHASES = ("before", "during", "churn", "after")
CHURN_PURGE_S = 0.5  # the churn phase purges the datapath's flows this often


def scenario_flood(flows):
    rules = list(ARP_GUARD) + [
        BLOCK + ",actions=drop",
        "priority=100,in_port=1,tcp,nw_src=10.0.0.1,actions=drop",
        "priority=100,in_port=1,tcp,nw_dst=10.0.0.2,actions=drop",
        "priority=100,in_port=1,tcp,tp_src=1000,actions=drop",
        "priority=10,in_port=1,udp,actions=output:2",
        "priority=0,actions=drop"]
    return (f"flood-{flows}.pcap",
            f"mask flood: {make_pcaps.FLOOD_MASKS} attack frames of their own masks "
            f"in every {make_pcaps.FLOOD_FRAMES} (3-rule ACL), legitimate UDP forwarded",
            rules)


# Scenarios (f) and (g): (b)'s rules and traffic under what a default switch
# runs (EMC on with OVS's default insertion probability 1/100, SMC off), at
# 1000 flows (the EMC holds them: few packets reach dpcls) and 100000 (it
# thrashes: most do).  The other scenarios turn the EMC off.
EMC_DEFAULT = {"f", "g"}


def scenario_prefixes_default(flows):
    _, _, rules = scenario_prefixes(flows)
    return (f"prefix-{flows}.pcap",
            f"(b) with OVS's defaults (EMC on, SMC off), {flows} flows", rules)


# Scenarios (h), (i), (j): an OVN pipeline (ovn_pipeline.py: the topology
# and the traffic), programmed by ovn-northd and ovn-controller; EMC off in
# (h), OVS's default in (i).  (j), the tenant flood: the same traffic, then
# with tenant T's scan in it (ovn-tenant-flood-FLOWS.pcap), legitimate Mpps
# before and during.
OVN_KEYS = {"h", "i", "j"}
OVN_PORTS = ("a-vm", "b-vm", "t-vm")  # dpdk0, dpdk1, dpdk2
EMC_DEFAULT.add("i")


def scenario_ovn(flows, emc):
    return (f"ovn-{flows}.pcap",
            f"OVN pipeline (2 tenants' switches and a router, ACLs, address set of 1000 "
            f"prefixes, load balancer), {flows} 5-tuples, "
            + ("EMC on (OVS's default)" if emc else "EMC off"), None)


SCENARIOS = {"a": scenario_one_subtable, "b": scenario_prefixes, "c": scenario_normal,
             "d": scenario_pipeline, "e": scenario_flood,
             "f": lambda _flows: scenario_prefixes_default(1000),
             "g": lambda _flows: scenario_prefixes_default(100000),
             "h": lambda flows: scenario_ovn(flows, False),
             "i": lambda flows: scenario_ovn(flows, True),
             "j": lambda flows: (f"ovn-tenant-flood-{flows}.pcap", "", None)}
SHORT_NAMES = {"a": "one subtable (4,1)", "b": "13 subtables (4,2)", "c": "NORMAL (5,0)",
               "d": "2-table pipeline (4,3)", "e": "mask flood",
               "f": "(b), defaults, 1k flows", "g": "(b), defaults, 100k flows",
               "h": "OVN, EMC off", "i": "OVN, EMC on", "j": "OVN tenant flood"}


class Purger(threading.Thread):
    """revalidator/purge every CHURN_PURGE_S until stopped: the churn phase."""

    def __init__(self, bench):
        super().__init__(daemon=True)
        self.bench, self.done, self.purges = bench, threading.Event(), 0

    def run(self):
        while not self.done.wait(CHURN_PURGE_S):
            self.bench.appctl("revalidator/purge")
            self.purges += 1

    def stop(self):
        self.done.set()
        self.join()


def flood_phase(bench, phase):
    """Moves the switch into `phase` of scenario (e); seconds it took, and
    what to call when the phase's window is over (or None)."""
    if phase == "churn":
        purger = Purger(bench)
        purger.start()
        return 0.0, purger.stop
    if phase == "during":
        bench.ofctl("--strict", "del-flows", "br0", BLOCK)
        took = bench.wait_subtables(lambda n: n >= 0.9 * make_pcaps.FLOOD_MASKS, 60,
                                    "the flood did not build its subtables")
        time.sleep(2.2)  # two rankings: compile, then install (and tier up)
    elif phase == "after":
        bench.ofctl("add-flow", "br0", BLOCK + ",actions=drop")
        bench.appctl("revalidator/purge")
        took = bench.wait_subtables(lambda n: n < 10, 60, "the flood's subtables stayed")
        time.sleep(1.2)  # one ranking interval, as select() does
    else:
        took = 0.0
    return took, None


def summarize_phases(windows, phases):
    """{impl: {phase: medians of the counted windows}} of a flood's
    windows ({impl: {phase: [window]}}), with the legitimate Mpps's ratio
    to generic's in the same phase."""
    summary = {}
    for impl, by_phase in windows.items():
        summary[impl] = {}
        for phase, ws in by_phase.items():
            good = good_windows(ws)
            if not good:
                summary[impl][phase] = {"not_measured": "no subtable ran it in any window",
                                        "windows": ws}
                continue
            worst = [w["worst_iteration_us"] for w in good if w["worst_iteration_us"]]
            summary[impl][phase] = {
                "legit_mpps_median": statistics.median(w["forwarded_mpps"] for w in good),
                "legit_mpps_min": min(w["forwarded_mpps"] for w in good),
                "legit_mpps_max": max(w["forwarded_mpps"] for w in good),
                "worst_iteration_us_max": max(worst) if worst else None,
                "worst_iteration_us_median": statistics.median(worst) if worst else None,
                "subtables_median": statistics.median(w["subtables"] for w in good),
                "jit_ranking_mean_us": statistics.median(
                    [w["jit_ranking_mean_us"] for w in good if w["jit_ranking_mean_us"]] or [0]),
                "jit_ranking_max_us": max(
                    [w["jit_ranking_max_us"] for w in good if w["jit_ranking_max_us"]] or [0]),
                "upcalls_per_s_median": statistics.median(
                    [w["upcalls_per_s"] for w in good if w.get("upcalls_per_s") is not None]
                    or [0]),
                "lost_upcalls_per_s_max": max(
                    [w["lost_upcalls_per_s"] for w in good
                     if w.get("lost_upcalls_per_s") is not None] or [0]),
                "tail_updates_per_s_median": statistics.median(
                    [w["tail_updates_per_s"] for w in good if w.get("tail_updates_per_s")]
                    or [0]),
                "tail_update_mean_us_median": statistics.median(
                    [w["tail_update_mean_us"] for w in good if w.get("tail_update_mean_us")]
                    or [0]),
                "tail_ranking_hook_mean_us": statistics.median(
                    [w["tail_ranking_hook_mean_us"] for w in good
                     if w.get("tail_ranking_hook_mean_us")] or [0]),
                "windows_used": len(good), "windows": ws}
    for phase in phases:
        base = summary.get("generic", {}).get(phase, {}).get("legit_mpps_median")
        for impl in summary:
            r = summary[impl][phase]
            if base and "legit_mpps_median" in r:
                r["ratio_to_generic"] = r["legit_mpps_median"] / base
    return summary


def run_flood(bench, args, impls, measured, key):
    """Scenario (e): per round and lookup, a window in each phase."""
    pcap, title, rules = SCENARIOS[key](args.flows)
    print(f"p2p: scenario ({key}) {title}", file=sys.stderr)
    bench.set_flows(rules)
    bench.set_traffic(os.path.abspath(os.path.join(args.pcaps, pcap)))
    time.sleep(2)
    windows = {impl: {ph: [] for ph in FLOOD_PHASES} for impl in measured}
    for rnd in range(args.rounds):
        for impl in measured:
            bench.select(impl, impls)
            for phase in FLOOD_PHASES:
                took, end_phase = flood_phase(bench, phase)
                w = bench.impl_window(impl, args.window)
                if end_phase:
                    end_phase()
                w["reached_s"] = took
                w["subtables"] = sum(w["lookups_in_use"].values())
                windows[impl][phase].append(w)
                print(f"  round {rnd} {impl:>14} {phase:>6}: {w['forwarded_mpps']:.2f} Mpps "
                      f"legitimate of {w['mpps']:.2f}, worst iteration "
                      f"<= {w['worst_iteration_us'] or 0:.0f} us, {w['subtables']} subtables "
                      f"on {w['lookups_in_use']}{w['flags']}", file=sys.stderr)
    summary = summarize_phases(windows, FLOOD_PHASES)
    return {"key": key, "title": title, "pcap": pcap, "short": SHORT_NAMES[key],
            "rules": len(rules), "phases": list(FLOOD_PHASES), "results": summary}


# ---- the OVN scenarios ----
def start_ovn(bench, args):
    """NB/SB databases, ovn-northd and ovn-controller on the bench's switch,
    the topology written and installed (ovn_pipeline.Ovn)."""
    ovn = ovn_pipeline.Ovn(bench, os.path.abspath(args.ovn))
    t0 = time.monotonic()
    bench.undo.append(ovn.stop)  # also what a start that fails half-way started
    ovn.start()
    ovn.program()
    print(f"p2p: OVN: topology written and installed in {time.monotonic() - t0:.0f} s, "
          f"{ovn.logical_flows()} logical flows", file=sys.stderr)
    return ovn


def ovn_extras(bench, ovn, args, key):
    """What an OVN scenario made of the switch: OpenFlow rules, logical
    flows, megaflows and subtables per in_port (at its end, under the last
    lookup measured); the megaflows written to OUT/ovn-megaflows-KEY.txt
    (dpctl/dump-flows -m --no-names: the format of tests/corpus/megaflows.txt)."""
    megaflows = bench.appctl("dpctl/dump-flows", "-m", "--no-names")
    path = os.path.join(args.out, f"ovn-megaflows-{key}.txt")
    with open(path, "w") as f:
        f.write(megaflows)
    show = bench.appctl("dpif-netdev/subtable-show", "--limit", "1").split("main thread")[0]
    per_port = {int(p): int(n) for p, n in
                re.findall(r"^  in_port (\d+) \(.*?\): (\d+) subtables", show, re.M)}
    return {"openflow_rules": len(bench.ofctl("dump-flows", "br0").splitlines()) - 1,
            "logical_flows": ovn.logical_flows(),
            "megaflows": sum(1 for line in megaflows.splitlines() if line.startswith("ufid:")),
            "subtables_per_port": per_port, "megaflows_file": path}


def run_tenant_flood(bench, args, impls, measured, ovn):
    """Scenario (j): per round, the OVN traffic alone (before) and with
    tenant T's scan in it (during), a window per lookup in each."""
    key, flows = "j", args.ovn_flows
    legit = os.path.abspath(os.path.join(args.pcaps, f"ovn-{flows}.pcap"))
    flood = os.path.abspath(os.path.join(args.pcaps, f"ovn-tenant-flood-{flows}.pcap"))
    title = (f"OVN tenant flood: tenant T's scan of its own ACLs "
             f"({ovn_pipeline.TENANT_SCAN} frames in every {ovn_pipeline.FLOOD_FRAMES}) "
             f"in (h)'s traffic, EMC off")
    print(f"p2p: scenario ({key}) {title}", file=sys.stderr)
    bench.set_emc(False)
    phases = ("before", "during")
    windows = {impl: {ph: [] for ph in phases} for impl in measured}
    extras = {}
    for rnd in range(args.rounds):
        for phase, pcap in (("before", legit), ("during", flood)):
            # Purged once OVN has bound the new ports (their megaflows from
            # before are stale), not also as they are added.
            bench.set_traffic(pcap, OVN_PORTS, purge=False)
            ovn.wait_bound(OVN_PORTS)
            bench.appctl("revalidator/purge")
            # The scan's megaflows are made by upcalls: wait until the PMD's
            # subtables stop growing (2 s without a new one, 60 s at most).
            last, still, t0 = -1, 0.0, time.monotonic()
            while still < 2 and time.monotonic() - t0 < 60:
                time.sleep(0.5)
                n = bench.pmd_subtables()
                still = still + 0.5 if n == last else 0.0
                last = n
            for impl in measured:
                bench.select(impl, impls)
                w = bench.impl_window(impl, args.window)
                w["subtables"] = bench.pmd_subtables()
                windows[impl][phase].append(w)
                print(f"  round {rnd} {impl:>14} {phase:>6}: {w['forwarded_mpps']:.2f} Mpps "
                      f"legitimate of {w['mpps']:.2f}, {w['subtables']} subtables "
                      f"on {w['lookups_in_use']}{w['flags']}", file=sys.stderr)
            if rnd == 0:
                extras[phase] = ovn_extras(bench, ovn, args, f"{key}-{phase}")
    summary = summarize_phases(windows, phases)
    for impl in summary:
        b, d = summary[impl]["before"], summary[impl]["during"]
        if "legit_mpps_median" in b and "legit_mpps_median" in d:
            d["kept"] = d["legit_mpps_median"] / b["legit_mpps_median"]
    return {"key": key, "title": title, "pcap": os.path.basename(flood), "short": SHORT_NAMES[key],
            "rules": None, "phases": list(phases), "results": summary, "switch": extras}


# ---- the checking run (--check) ----
# The count lines of the checking builds, per lookup: OVS 3.x's
# autovalidator (the series' patch logs them at exit), the plugin's
# validation (4.0), the tail index's own check against OVS's loop.
# A module's name may carry its thread's, "dpcls_plugin(pmd-c01/id:8)".
THREAD = r"(?:\([^)]*\))?"
CHECK_LINES = [
    re.compile(r"\|dpif_lookup_autovalidator" + THREAD + r"\|INFO\|checked '([^']*)': (\d+) \w+ "
               r"lookups against generic, (\d+) mismatches"),
    re.compile(r"\|dpcls_plugin_validation" + THREAD + r"\|INFO\|checked '([^']*)': (\d+) keys "
               r"against OVS's generic, (\d+) mismatches"),
    re.compile(r"\|dpcls_plugin_validation" + THREAD + r"\|INFO\|checked '([^']*)' \(fused\): "
               r"(\d+) keys against OVS's generic over the same subtables, (\d+) mismatches"),
    re.compile(r"\|dpcls_plugin" + THREAD + r"\|INFO\|checked '(tail_index)': (\d+) keys against "
               r"OVS's loop over the tail, (\d+) mismatches")]
MISMATCH_LINE = re.compile(r"\|(?:dpcls_plugin_validation|dpif_lookup_autovalidator)" + THREAD
                           + r"\|ERR\||\|dpcls_plugin" + THREAD + r"\|ERR\|tail_index")


def check_counts(log_text):
    """{lookup: (keys or lookups checked, mismatches)}: each lookup's last
    count line in an ovs-vswitchd log (fused lookups as "NAME (fused)")."""
    counts = {}
    for line in log_text.splitlines():
        for n, pattern in enumerate(CHECK_LINES):
            m = pattern.search(line)
            if m:
                name = m.group(1) + (" (fused)" if n == 2 else "")
                counts[name] = (int(m.group(2)), int(m.group(3)))
    return counts


def judge_check(log):
    """What a checking build's log says: {"counts" (check_counts()),
    "mismatch_lines" (the first 20 that count), "raced_bursts",
    "raced_lines", "passed"}."""
    counts = check_counts(log)
    mismatch_lines = [line for line in log.splitlines() if MISMATCH_LINE.search(line)]
    # OVS 3.x's autovalidator runs generic, then each lookup (generic
    # again among them), on the same keys, without a second look: a burst
    # in which generic disagreed with itself had a flow inserted or removed
    # between the calls, and every lookup's disagreement in that burst is
    # that change's.  Such bursts are reported, not failed; any other
    # disagreement is a mismatch.  (The plugin's own checks look twice:
    # their mismatch lines are mismatches.)  A burst: its lines' timestamp
    # (ms) and thread.
    def burst(line):
        return line.split("|ERR|")[0].split("|")[0] + line.split("|")[2]
    raced = {burst(line) for line in mismatch_lines
             if "|ERR|" in line and "dpif_lookup_autovalidator" in line
             and line.endswith("in func generic")}
    races = [line for line in mismatch_lines
             if "dpif_lookup_autovalidator" in line and burst(line) in raced]
    real = [line for line in mismatch_lines if line not in races]
    race_counts = {}
    for line in races:
        name = line.rsplit("in func ", 1)[-1]
        race_counts[name] = race_counts.get(name, 0) + 1
    passed = (bool(counts) and not real
              and all(m <= race_counts.get(name, 0) for name, (_, m) in counts.items()))
    return {"counts": counts, "mismatch_lines": real[:20], "raced_bursts": len(raced),
            "raced_lines": races[:8], "passed": passed}


def run_check(bench, args, ovn):
    """The tenant flood's traffic (the OVN mix with tenant T's scan in it)
    through a checking build's own lookups (no switching: 3.x's
    autovalidator above all, or 4.0's validation with the plugin's
    defaults) for 2 x rounds x window seconds; then ovs-vswitchd exits
    gracefully and its log's counts are read.  No datapath flow is deleted
    while the traffic flows (set once, no purge): a check runs two lookups
    of the same keys one after the other, and a flow deleted between them
    (revalidator/purge) makes them disagree, OVS's own autovalidator
    reporting generic against generic.  {"counts", "mismatch_lines",
    "passed"}."""
    pcap = f"ovn-tenant-flood-{args.ovn_flows}.pcap"
    seconds = 2 * args.rounds * args.window
    print(f"p2p: check: {pcap} through the build's own lookups, {seconds:.0f} s",
          file=sys.stderr)
    bench.set_emc(False)
    # The traffic starts as the ports are added, before OVN has bound them:
    # the revalidators then delete the megaflows OVN's flows make stale,
    # which the checks' second look (and judge_check() for 3.x's
    # autovalidator) tells from a lookup's mistake.
    bench.set_traffic(os.path.abspath(os.path.join(args.pcaps, pcap)), OVN_PORTS, purge=False)
    ovn.wait_bound(OVN_PORTS)
    time.sleep(seconds)
    print(bench.appctl("dpif-netdev/subtable-show", "--limit", "3"), file=sys.stderr)
    ovn.stop()
    bench.appctl("exit")
    pidfile = os.path.join(bench.work, "ovs-vswitchd.pid")
    for _ in range(100):
        if not os.path.exists(pidfile):
            break
        time.sleep(0.1)
    with open(os.path.join(bench.work, "ovs-vswitchd.log")) as f:
        log = f.read()
    return judge_check(log)


def measure_scenario(bench, args, impls, measured, key, pcap, title, rules):
    """Per round, a window per lookup (alternating), on the traffic and
    rules in place; the medians per lookup and their ratio to generic."""
    windows = {impl: [] for impl in measured}
    for rnd in range(args.rounds):
        for impl in measured:
            bench.select(impl, impls)
            w = bench.impl_window(impl, args.window)
            windows[impl].append(w)
            print(f"  round {rnd} {impl:>14}: {w['mpps']:.2f} Mpps, "
                  f"{w['cycles_per_packet']} cycles/pkt, "
                  f"{w['subtable_lookups_per_hit']:.2f} lookups/hit, "
                  f"subtables on {w['lookups_in_use']}{w['flags']}", file=sys.stderr)
    show = bench.appctl("dpif-netdev/subtable-show")
    summary = {}
    for impl, ws in windows.items():
        ran = [w for w in ws if w["ran_impl"]]
        if not ran:
            summary[impl] = {"not_measured": "no subtable ran it in any window "
                             f"(subtables on {ws[-1]['lookups_in_use']})",
                             "windows": ws}
            continue
        good = good_windows(ws)
        summary[impl] = {
            "mpps_median": statistics.median(w["mpps"] for w in good),
            "mpps_min": min(w["mpps"] for w in good),
            "mpps_max": max(w["mpps"] for w in good),
            "cycles_per_packet_median":
                statistics.median(w["cycles_per_packet"] for w in good),
            "subtable_lookups_per_hit":
                statistics.median(w["subtable_lookups_per_hit"] for w in good),
            "megaflow_hit_pct":
                statistics.median(w["megaflow_hit_pct"] for w in good),
            "lookups_in_use": ws[-1]["lookups_in_use"],
            "windows_used": len(good), "windows": ws,
        }
    base = summary["generic"]["mpps_median"]
    for impl in summary:
        if "mpps_median" in summary[impl]:
            summary[impl]["ratio_to_generic"] = summary[impl]["mpps_median"] / base
    return {"key": key, "title": title, "pcap": pcap, "short": SHORT_NAMES[key],
            "rules": len(rules) if rules else None, "subtable_show": show,
            "fingerprints": pmd_fingerprints(show), "results": summary}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ovs", required=True)
    ap.add_argument("--pcaps", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--window", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--flows", type=int, default=1000)
    ap.add_argument("--scenarios", default="a,b,c,d,f,g,e")
    ap.add_argument("--ovn", default="",
                    help="the OVN install of scenarios h, i, j (an unpacked package or a "
                    "build tree: ovn_pipeline.ovn_layout())")
    ap.add_argument("--ovn-flows", type=int, default=10000,
                    help="5-tuples of the OVN scenarios' traffic")
    ap.add_argument("--check", action="store_true",
                    help="with --ovn: the OVN traffic through a checking build's own "
                    "lookups, then the counts of its log (0 mismatches to pass)")
    ap.add_argument("--impls", default="",
                    help="measure only these lookups (comma-separated; generic always)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if (OVN_KEYS & set(args.scenarios.split(",")) or args.check) and not args.ovn:
        ap.error("scenarios h, i and j and --check need --ovn (perf/p2p/run.sh --ovn gives it)")

    bench = Bench(args)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    results = {"window_s": args.window, "rounds": args.rounds, "flows": args.flows,
               "ovn_flows": args.ovn_flows, "scenarios": []}
    ovn = None
    try:
        bench.prepare()
        results["hugepages"] = bench.huge
        # The I/O ceiling per traffic, before OVS takes the hugepages.
        results["testpmd_drop_mpps"] = {}
        if OVN_KEYS & set(args.scenarios.split(",")) or args.check:
            ovn_pipeline.write_pcaps(args.pcaps, args.ovn_flows)  # a second; never stale
        for key in ([] if args.check else args.scenarios.split(",")):
            pcap = SCENARIOS[key](args.ovn_flows if key in OVN_KEYS else args.flows)[0]
            if pcap not in results["testpmd_drop_mpps"]:
                mpps = bench.testpmd_drop(os.path.abspath(os.path.join(args.pcaps, pcap)))
                results["testpmd_drop_mpps"][pcap] = mpps
                print(f"p2p: dpdk-testpmd io forwarding of {pcap}: "
                      + (f"{mpps:.2f} Mpps" if mpps else "not measured"), file=sys.stderr)
        bench.start()
        impls = bench.implementations()
        results["implementations"] = impls
        # Lookups not measured here and why: the CPU's, before any window;
        # then any lookup that no subtable ran in any of its windows.
        flags = cpu_flags()
        not_measured = {i: f"CPU lacks {cpu_lacks(i, flags)}" for i in impls
                        if cpu_lacks(i, flags)}
        results["not_measured"] = not_measured
        for impl, why in not_measured.items():
            print(f"p2p: {impl}: n/a, not measured ({why})", file=sys.stderr)
        measured = [i for i in impls if i not in not_measured]
        if args.check:
            ovn = start_ovn(bench, args)
            results["check"] = run_check(bench, args, ovn)
            ovn = None  # run_check() stopped it
            args.scenarios = ""
        if args.impls:
            wanted = set(args.impls.split(",")) | {"generic"}
            measured = [i for i in measured if i in wanted]
        for key in filter(None, args.scenarios.split(",")):
            if ovn and key not in OVN_KEYS:
                ovn.stop()  # its flows go with the next scenario's del-flows
                ovn = None
            if key == "e":
                results["flood"] = run_flood(bench, args, impls, measured, key)
                continue
            if key in OVN_KEYS:
                if not ovn:
                    ovn = start_ovn(bench, args)
                if key == "j":
                    results["tenant_flood"] = run_tenant_flood(bench, args, impls, measured, ovn)
                    continue
            flows = args.ovn_flows if key in OVN_KEYS else args.flows
            pcap, title, rules = SCENARIOS[key](flows)
            print(f"p2p: scenario ({key}) {title}", file=sys.stderr)
            bench.set_emc(key in EMC_DEFAULT)
            if key in OVN_KEYS:
                bench.set_traffic(os.path.abspath(os.path.join(args.pcaps, pcap)), OVN_PORTS)
                ovn.wait_bound(OVN_PORTS)
                time.sleep(3)  # upcalls (and conntrack) install the megaflows
            else:
                bench.set_flows(rules)
                bench.set_traffic(os.path.abspath(os.path.join(args.pcaps, pcap)))
                time.sleep(2)  # upcalls install the megaflows
            scenario = measure_scenario(bench, args, impls, measured, key, pcap, title, rules)
            if key in OVN_KEYS:
                scenario.update(ovn_extras(bench, ovn, args, key))
            results["scenarios"].append(scenario)
    finally:
        if ovn:
            ovn.stop()
        bench.stop()
    with open(os.path.join(args.out, "p2p.json"), "w") as f:
        json.dump(results, f, indent=1)
    print_table(results)
    if "check" in results and not results["check"]["passed"]:
        sys.exit(1)


def why_not_measured(results, scenario, impl):
    """None when `impl` was measured in `scenario`, else the reason."""
    if impl in results.get("not_measured", {}):
        return results["not_measured"][impl]
    r = scenario["results"].get(impl, {})
    return r.get("not_measured") if "mpps_median" not in r else None


def print_flood_table(results, f):
    impls = [i for i in results["implementations"] if i in f["results"]]
    print(f"({f['key']}) {f['title']}:")
    print("legitimate Mpps forwarded (median of the windows, ratio to generic) and the worst "
          "PMD iteration (us, upper bound, worst window)")
    print(f"{'phase':<8}{'subtables':>10}" + "".join(f"{i:>24}" for i in impls))
    for phase in f["phases"]:
        subs = [f["results"][i][phase].get("subtables_median") for i in impls]
        subs = [n for n in subs if n is not None]
        line = f"{phase:<8}{(f'{max(subs):.0f}' if subs else '-'):>10}"
        for impl in impls:
            r = f["results"][impl][phase]
            if "legit_mpps_median" not in r:
                line += f"{'n/a':>24}"
                continue
            worst = r["worst_iteration_us_max"]
            worst_s = f"{worst:.0f}us" if worst not in (None, float("inf")) else ">24Mc"
            line += (f"{r['legit_mpps_median']:>7.2f} ({r.get('ratio_to_generic', 0):.2f})"
                     f" {worst_s:>8}")
        print(line)
    def rows(title, cell, only=None):
        """A line per phase: cell(result) per lookup (24 wide), or, with
        `only`, that lookup's cell and blanks for the others."""
        print(title)
        for phase in f["phases"]:
            print(f"{phase:<18}" + "".join(
                cell(f["results"][i][phase]) if only in (None, i) else f"{'':>24}"
                for i in impls))

    rows("the ranking call (dpcls_sort_subtable_vector(), timed by the plugin whichever "
         "lookup runs): mean / max us in the windows",
         lambda r: (f"{r['jit_ranking_mean_us']:>11.1f} /{r['jit_ranking_max_us']:>9.1f}"
                    if r.get("jit_ranking_mean_us") else f"{'-':>24}"))
    rows("upcalls a second on the PMD thread (pmd-perf-show; median of the windows), and lost "
         "upcalls a second (worst window)",
         lambda r: (f"{r['upcalls_per_s_median']:>11.0f} /{r['lost_upcalls_per_s_max']:>9.0f}"
                    if "upcalls_per_s_median" in r else f"{'-':>24}"))
    if "tail_index" in impls:
        rows("of which the tail index's ranking hook (its every publish, mean us in the windows):",
             lambda r: (f"{r['tail_ranking_hook_mean_us']:>24.1f}"
                        if r.get("tail_ranking_hook_mean_us") else f"{'-':>24}"),
             only="tail_index")
        rows("the tail index's writer side: updates a second (subtables added or removed, "
             "rules inserted or removed) / mean us an update",
             lambda r: (f"{r['tail_updates_per_s_median']:>13.0f} /"
                        f"{r['tail_update_mean_us_median']:>9.2f}"
                        if r.get("tail_updates_per_s_median") else f"{'-':>24}"),
             only="tail_index")


def print_table(results):
    if results["scenarios"]:
        print_scenario_table(results)
    if "flood" in results:
        print_flood_table(results, results["flood"])
    if "check" in results:
        c = results["check"]
        print("checked on the OVN traffic (each lookup's last count line in ovs-vswitchd.log):")
        for name, (n, m) in sorted(c["counts"].items()):
            print(f"  {name}: {n} checked, {m} mismatches")
        for line in c["mismatch_lines"]:
            print(f"  {line}")
        if c.get("raced_bursts"):
            print(f"  {c['raced_bursts']} bursts in which OVS's autovalidator found generic "
                  "disagreeing with itself (a flow inserted or removed between its calls); "
                  "the disagreements of those bursts are that change's, not counted:")
            for line in c["raced_lines"]:
                print(f"    {line}")
        print(f"check: {'passed' if c['passed'] else 'FAILED'}"
              + ("" if c["counts"] else " (no count line in the log)"))
    if "tenant_flood" in results:
        t = results["tenant_flood"]
        print_flood_table(results, t)
        print("the legitimate Mpps kept during the tenant's scan (during / before), per lookup: "
              + ", ".join(f"{i} {r['during']['kept']:.2f}" for i, r in t["results"].items()
                          if "kept" in r["during"]))
        for phase, x in t.get("switch", {}).items():
            print(f"  {phase}: {x['megaflows']} megaflows, subtables per in_port "
                  f"{x['subtables_per_port']}, {x['openflow_rules']} OpenFlow rules "
                  f"({x['megaflows_file']})")


def print_scenario_table(results):
    impls = results["implementations"]
    print("Mpps (median of the windows), cycles/packet, and the ratio of Mpps to generic")
    print(f"{'scenario':<10}{'dpcls':>7}{'lookups/hit':>12}{'testpmd io':>12}"
          + "".join(f"{i:>26}" for i in impls))
    for s in results["scenarios"]:
        ceiling = results.get("testpmd_drop_mpps", {}).get(s["pcap"])
        lph = s["results"]["generic"]["subtable_lookups_per_hit"]
        # The share of packets that reached dpcls (megaflow hits; the rest
        # hit the EMC), under generic.
        dpcls = s["results"]["generic"].get("megaflow_hit_pct")
        line = f"({s['key']}){'':<7}" + (f"{dpcls:>6.0f}%" if dpcls is not None else f"{'-':>7}")
        line += f"{lph:>12.2f}"
        line += f"{ceiling:>7.2f} Mpps" if ceiling else f"{'-':>12}"
        for impl in impls:
            if impl not in s["results"] and impl not in results.get("not_measured", {}):
                line += f"{'-':>26}"  # left out by --impls
                continue
            if why_not_measured(results, s, impl):
                line += f"{'n/a':>26}"
                continue
            r = s["results"][impl]
            line += (f"{r['mpps_median']:>8.2f} Mpps {r['cycles_per_packet_median']:>5.0f}c "
                     f"({r['ratio_to_generic']:.2f})")
        print(line)
    for s in results["scenarios"]:
        # The title names OVS 3.1's fingerprint; 4.0's 32 registers move the
        # same megaflows to others: what the PMD's subtables had here.
        fps = s.get("fingerprints")
        print(f"  ({s['key']}) {s['title']}; subtables on: "
              + ", ".join(f"{i}: {s['results'][i]['lookups_in_use']}" for i in impls
                          if not why_not_measured(results, s, i) and i in s["results"])
              + ("; PMD fingerprints: " + ", ".join(f"{fp} x{n}" for fp, n in fps.items())
                 if fps else ""))
        if "megaflows" in s:
            print(f"      {s['logical_flows']} logical flows, {s['openflow_rules']} OpenFlow "
                  f"rules, {s['megaflows']} megaflows, subtables per in_port "
                  f"{s['subtables_per_port']} ({s['megaflows_file']})")
        for i in impls:
            if i not in s["results"] and i not in results.get("not_measured", {}):
                continue
            why = why_not_measured(results, s, i)
            if why:
                print(f"      {i}: n/a, not measured ({why})")


if __name__ == "__main__":
    main()
