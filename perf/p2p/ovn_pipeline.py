#!/usr/bin/env python3
"""An OVN pipeline on the phy-to-phy bench: a real ovn-northd and
ovn-controller program the OVS-DPDK bridge whose lookups p2p.py measures.

Topology (the Northbound database this module writes, ovn-nbctl):

    dpdk0 = LSP a-vm  --- ls-a 10.1.0.0/16 ---+
      (+100 unbound LSPs, a load balancer)    |
                                           lr0 (default route via 10.2.0.254)
    dpdk1 = LSP b-vm  --- ls-b 10.2.0.0/16 ---+
      (+100 unbound LSPs, port group pg_b     |
       with tenant B's security group)        |
    dpdk2 = LSP t-vm  --- ls-t 10.9.0.0/16 ---+
      (tenant T: its own ACLs)

  - a-vm (dpdk0, the traffic's one ingress) sends from 10.1.0.0/16 (port
    security: its MAC and that network);
  - b-vm (dpdk1) holds 10.2.0.1-32 and 10.2.0.254, the edge appliance the
    router's default route points at ("north-south" below: traffic to
    addresses outside the cloud leaves through it);
  - ls-a has a load balancer: TCP VIPs 10.3.0.1-8:80 to 10.2.0.1-4:8080
    and a UDP VIP 10.3.0.100:53 to 10.2.0.5-6:53 (ct_lb, conntrack);
  - pg_b's ACLs (to-lport, stateful: allow-related, then drop): from the
    address set as_allowed (1000 disjoint prefixes /26-/30 of 10.1.0.0/16)
    to UDP ports 8000-8999 and TCP 8080; UDP 53 from anywhere; to the
    outside networks from anywhere; everything else to pg_b dropped;
  - ls-a has a stateless ACL (from-lport allow-stateless) on a port range
    of the north-south traffic;
  - t-vm (dpdk2, receives only) carries tenant T's own security group
    (TENANT_PREFIXES and TENANT_PORT_RANGES, then drop): the rules the
    tenant flood walks.

Traffic (dpdk0's pcap, FLOWS 5-tuples, frames shuffled):
  - east-west (1/2): UDP from as_allowed's prefixes to b-vm's addresses,
    ports 8000-8999, routed ls-a -> lr0 -> ls-b;
  - load-balanced (1/4): TCP SYNs to the VIPs (port 80) and UDP to the DNS
    VIP, DNAT to b-vm's addresses;
  - north-south (1/4): UDP to 198.51.100.0/24 and 203.0.113.0/24, routed by
    the default route to the edge appliance on ls-b;
  - the tenant flood's pcap adds TENANT_SCAN frames in every FLOOD_FRAMES
    (a few percent): TCP to t-vm from sources and to ports that leave
    tenant T's ACLs at each of their bits (scan_frame()), so that OVS's
    prefix and ports tries give them megaflow masks of their own.

Everything this module starts (two ovsdb-servers, ovn-northd,
ovn-controller) runs under the bench's work folder, stopped by pid.
"""
import contextlib
import os
import random
import struct
import time

import daemons
import make_pcaps

A_MAC, B_MAC, T_MAC = "02:00:00:01:00:01", "02:00:00:02:00:01", "02:00:00:09:00:01"
LRP_A_MAC, LRP_B_MAC, LRP_T_MAC = "02:00:00:00:a0:01", "02:00:00:00:b0:01", "02:00:00:00:90:01"
B_ADDRESSES = [f"10.2.0.{i}" for i in range(1, 33)]
EDGE = "10.2.0.254"
OUTSIDE = ["198.51.100.0/24", "203.0.113.0/24"]
TCP_VIPS = [f"10.3.0.{i}" for i in range(1, 9)]
TCP_BACKENDS = [f"10.2.0.{i}:8080" for i in range(1, 5)]
UDP_VIP, UDP_BACKENDS = "10.3.0.100", ["10.2.0.5:53", "10.2.0.6:53"]
UNBOUND_PORTS = 100  # per switch: the addresses of the other VMs
T_ADDRESS = "10.9.0.1"
# Tenant T's security group on t-vm: a few source prefixes and port ranges
# allowed, the rest dropped (what a tenant may write).
# The prefixes lie in 10.1.0.0/16, the network the scan's frames may come
# from (a-vm's port security drops the rest before any ACL).
TENANT_PREFIXES = ["10.1.16.0/20", "10.1.64.0/22", "10.1.200.0/24", "10.1.222.128/25"]
TENANT_PORT_RANGES = [(1000, 1999), (3000, 3999), (22, 22)]
FLOOD_FRAMES = 100000
TENANT_SCAN = 3072  # scan frames in every FLOOD_FRAMES: 3%


def ip(text):
    a, b, c, d = (int(x) for x in text.split("."))
    return a << 24 | b << 16 | c << 8 | d


def mac(text):
    return bytes.fromhex(text.replace(":", ""))


def allowed_prefixes():
    """as_allowed: 1000 disjoint prefixes of 10.1.0.0/16, each in its own
    /26 block (1024 of them), of lengths 26-30 in turn.  [(net, length)]"""
    return [(ip("10.1.0.0") + (k << 6), 26 + k % 5) for k in range(1000)]


def nb_commands():
    """The Northbound database, as ovn-nbctl commands (argument lists)."""
    cmds = [
        ["ls-add", "ls-a"], ["ls-add", "ls-b"], ["ls-add", "ls-t"], ["lr-add", "lr0"],
        ["lrp-add", "lr0", "lrp-a", LRP_A_MAC, "10.1.255.254/16"],
        ["lrp-add", "lr0", "lrp-b", LRP_B_MAC, "10.2.255.254/16"],
        ["lrp-add", "lr0", "lrp-t", LRP_T_MAC, "10.9.255.254/16"],
        ["lr-route-add", "lr0", "0.0.0.0/0", EDGE],
    ]
    for ls, lrp in (("ls-a", "lrp-a"), ("ls-b", "lrp-b"), ("ls-t", "lrp-t")):
        port = f"{ls}-router"
        cmds += [["lsp-add", ls, port], ["lsp-set-type", port, "router"],
                 ["lsp-set-addresses", port, "router"],
                 ["lsp-set-options", port, f"router-port={lrp}"]]
    cmds += [["lsp-add", "ls-a", "a-vm"],
             ["lsp-set-addresses", "a-vm", f"{A_MAC} 10.1.0.1"],
             ["lsp-set-port-security", "a-vm", f"{A_MAC} 10.1.0.0/16"],
             ["lsp-add", "ls-b", "b-vm"],
             ["lsp-set-addresses", "b-vm", " ".join([B_MAC] + B_ADDRESSES + [EDGE])],
             ["lsp-add", "ls-t", "t-vm"],
             ["lsp-set-addresses", "t-vm", f"{T_MAC} {T_ADDRESS}"],
             ["lsp-set-port-security", "t-vm", f"{T_MAC} {T_ADDRESS}"]]
    b_ports = ["b-vm"]
    for n in range(UNBOUND_PORTS):
        for ls, side in (("ls-a", 1), ("ls-b", 2)):
            name = f"{ls}-vm{n}"
            addr = f"02:00:00:{side:02x}:{1 + n // 256:02x}:{n % 256:02x} 10.{side}.{1 + n // 250}.{n % 250 + 1}"
            cmds += [["lsp-add", ls, name], ["lsp-set-addresses", name, addr],
                     ["lsp-set-port-security", name, addr]]
            if side == 2:
                b_ports.append(name)
    prefixes = ",".join(f'"{make_pcaps.dotted(n)}/{m}"' for n, m in allowed_prefixes())
    cmds += [["create", "Address_Set", "name=as_allowed", f"addresses=[{prefixes}]"],
             ["pg-add", "pg_b", *b_ports]]
    outside = "{" + ", ".join(OUTSIDE) + "}"
    for prio, match, verdict in (
            (1002, "outport == @pg_b && ip4.src == $as_allowed && udp.dst >= 8000 && udp.dst <= 8999",
             "allow-related"),
            (1002, "outport == @pg_b && ip4.src == $as_allowed && tcp.dst == 8080",
             "allow-related"),
            (1001, "outport == @pg_b && udp.dst == 53", "allow-related"),
            (1001, f"outport == @pg_b && ip4.dst == {outside}", "allow-related"),
            (1000, "outport == @pg_b && ip", "drop")):
        cmds.append(["acl-add", "pg_b", "to-lport", str(prio), match, verdict])
    # Stateless (no conntrack) for the north-south UDP port range only: a
    # stateless ACL that matched the load balancer's traffic would take it
    # past ct_lb.
    cmds.append(["acl-add", "ls-a", "from-lport", "900",
                 f'inport == "a-vm" && ip4.dst == {outside} && udp.dst >= 400 && udp.dst <= 499',
                 "allow-stateless"])
    # Tenant T's own security group.
    srcs = "{" + ", ".join(TENANT_PREFIXES) + "}"
    for lo, hi in TENANT_PORT_RANGES:
        ports = f"tcp.dst == {lo}" if lo == hi else f"tcp.dst >= {lo} && tcp.dst <= {hi}"
        cmds.append(["acl-add", "ls-t", "to-lport", "1002",
                     f'outport == "t-vm" && ip4.src == {srcs} && {ports}', "allow-related"])
    cmds.append(["acl-add", "ls-t", "to-lport", "1000", 'outport == "t-vm" && ip', "drop"])
    tcp_vips = [["lb-add", "lb-web", f"{vip}:80", ",".join(TCP_BACKENDS), "tcp"]
                for vip in TCP_VIPS]
    cmds += tcp_vips + [
        ["lb-add", "lb-dns", f"{UDP_VIP}:53", ",".join(UDP_BACKENDS), "udp"],
        ["ls-lb-add", "ls-a", "lb-web"], ["ls-lb-add", "ls-a", "lb-dns"]]
    return cmds


# ---- traffic ----
def eth(dst, src=A_MAC):
    return mac(dst) + mac(src) + struct.pack("!H", 0x0800)


def tcp_syn(src, dst, sport, dport):
    """A TCP SYN with its checksum: OVS's userspace conntrack checks it, and
    marks a segment with a wrong one invalid (OVN then drops it)."""
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x02, 8192, 0, 0)
    pseudo = struct.pack("!IIBBH", src, dst, 0, 6, len(seg))
    csum = make_pcaps.checksum(pseudo + seg)
    return seg[:16] + struct.pack("!H", csum) + seg[18:]


def legit_frame(i, rng):
    """Flow i of the legitimate mix (one frame; the pcap repeats)."""
    nets = ALLOWED
    net, length = nets[i % len(nets)]
    src = net + rng.randrange(1 << (32 - length))
    sport = 1024 + rng.randrange(60000)
    kind = i % 4
    if kind in (0, 1):  # east-west
        dst = ip(B_ADDRESSES[rng.randrange(len(B_ADDRESSES))])
        l4, proto = make_pcaps.udp(sport, 8000 + rng.randrange(1000), 18), 17
    elif kind == 2:  # load-balanced
        if i % 8 == 2:
            dst, l4, proto = ip(UDP_VIP), make_pcaps.udp(sport, 53, 18), 17
        else:
            dst = ip(TCP_VIPS[rng.randrange(len(TCP_VIPS))])
            l4, proto = tcp_syn(src, dst, sport, 80), 6
    else:  # north-south
        base = ip(OUTSIDE[rng.randrange(len(OUTSIDE))].split("/")[0])
        dst, l4, proto = base + rng.randrange(256), make_pcaps.udp(sport, 443, 18), 17
    return make_pcaps.pad(eth(LRP_A_MAC) + make_pcaps.ipv4(proto, dst, l4, src=src))


def scan_frame(m):
    """Scan frame m: TCP to t-vm from a source that leaves tenant T's prefix
    m % 4 at bit 16 + (m // 4) % 16 (inside 10.1.0.0/16), to a port that
    leaves one of its port ranges at bit (m // 64 // 3) % 16: each (source
    prefix length, port prefix length) a megaflow mask of its own, as far
    as OVS's prefix and ports tries make them.  4 x 16 x 3 x 16 = 3072
    frames; 2880 distinct (source, port) pairs, since two of the prefixes
    differ in two bits and a flip of one from each meets."""
    n = len(TENANT_PREFIXES)
    net = ip(TENANT_PREFIXES[m % n].split("/")[0])
    bit = 16 + (m // n) % 16
    lo, _ = TENANT_PORT_RANGES[(m // n // 16) % len(TENANT_PORT_RANGES)]
    port_bit = (m // n // 16 // len(TENANT_PORT_RANGES)) % 16
    src = net ^ (0x80000000 >> bit)
    dport = lo ^ (0x8000 >> port_bit)
    dst = ip(T_ADDRESS)
    return make_pcaps.pad(eth(LRP_A_MAC) + make_pcaps.ipv4(6, dst, tcp_syn(src, dst, 40000, dport),
                                                            src=src))


ALLOWED = allowed_prefixes()


def write_pcaps(out, flows):
    """ovn-FLOWS.pcap (the legitimate mix) and ovn-tenant-flood-FLOWS.pcap
    (FLOOD_FRAMES frames, TENANT_SCAN of them scan frames spread evenly)."""
    rng = random.Random(11)
    legit = [legit_frame(i, rng) for i in range(flows)]
    random.Random(12).shuffle(legit)
    arp = make_pcaps.arp_reply()
    make_pcaps.write_pcap(os.path.join(out, f"ovn-{flows}.pcap"), legit + [arp])
    frames = make_pcaps.interleave(FLOOD_FRAMES, TENANT_SCAN, scan_frame,
                                   lambda k: legit[k % len(legit)])
    make_pcaps.write_pcap(os.path.join(out, f"ovn-tenant-flood-{flows}.pcap"), frames + [arp])


# ---- the control plane ----
PROGRAMS = {"ovn-northd": "northd", "ovn-controller": "controller", "ovn-nbctl": "utilities",
            "ovn-sbctl": "utilities"}


def ovn_layout(ovn_dir):
    """({program: path}, schema folder) of an OVN install: a Debian package
    unpacked (usr/bin, usr/share/ovn) or a build tree (northd/ovn-northd,
    ..., the schemas at its top)."""
    if os.path.isfile(os.path.join(ovn_dir, "usr/bin/ovn-northd")):
        return ({p: os.path.join(ovn_dir, "usr/bin", p) for p in PROGRAMS},
                os.path.join(ovn_dir, "usr/share/ovn"))
    programs = {p: os.path.join(ovn_dir, sub, p) for p, sub in PROGRAMS.items()}
    missing = [p for p in programs.values() if not os.access(p, os.X_OK)]
    if missing:
        raise RuntimeError(f"OVN: {ovn_dir} is neither an unpacked package nor a build tree "
                           f"(missing {', '.join(missing)})")
    return programs, ovn_dir


class Ovn:
    """NB and SB ovsdb-servers, ovn-northd and ovn-controller for `bench`
    (p2p.Bench: its work folder, its OVS binaries, its ovsdb-server at
    db.sock), from the OVN install at `ovn_dir` (ovn_layout())."""

    def __init__(self, bench, ovn_dir):
        self.bench = bench
        self.programs, self.share = ovn_layout(ovn_dir)
        self.work = os.path.join(bench.work, "ovn")
        self.env = dict(bench.env)
        for var in ("OVN_RUNDIR", "OVN_LOGDIR", "OVN_DBDIR", "OVN_SYSCONFDIR"):
            self.env[var] = self.work
        self.env["OVN_NB_DB"] = f"unix:{self.work}/nb.sock"
        self.env["OVN_SB_DB"] = f"unix:{self.work}/sb.sock"
        self.pidfiles = []

    def run(self, *cmd, check=True):
        return self.bench.run(*cmd, check=check, env=self.env)  # with OVN's variables

    def daemon(self, name, *cmd):
        """Starts a daemon detached, its pidfile and log in the work folder
        (its control socket in OVN_RUNDIR, or OVS_RUNDIR for ovsdb-server,
        named by its pid), on core 0."""
        pidfile = os.path.join(self.work, f"{name}.pid")
        # On core 0, with ovs-vswitchd's main thread: core 1 is the PMD's.
        self.run("taskset", "-c", "0", *cmd, "--detach", "--no-chdir", f"--pidfile={pidfile}",
                 f"--log-file={self.work}/{name}.log")
        self.pidfiles.append(pidfile)

    def start(self):
        os.makedirs(self.work, exist_ok=True)
        for db in ("nb", "sb"):
            path = os.path.join(self.work, f"{db}.db")
            if os.path.exists(path):
                os.remove(path)
            self.run("ovsdb-tool", "create", path, os.path.join(self.share, f"ovn-{db}.ovsschema"))
            self.daemon(f"ovsdb-server-{db}", "ovsdb-server", path,
                        f"--remote=punix:{self.work}/{db}.sock")
        self.daemon("ovn-northd", self.programs["ovn-northd"],
                    f"--ovnnb-db={self.env['OVN_NB_DB']}", f"--ovnsb-db={self.env['OVN_SB_DB']}")
        self.bench.vsctl("set", "Open_vSwitch", ".", "external_ids:system-id=p2p-chassis",
                         f"external_ids:ovn-remote={self.env['OVN_SB_DB']}",
                         "external_ids:ovn-encap-type=geneve",
                         "external_ids:ovn-encap-ip=127.0.0.1",
                         "external_ids:ovn-bridge=br0")
        self.daemon("ovn-controller", self.programs["ovn-controller"],
                    f"unix:{self.bench.work}/db.sock")

    def program(self):
        """Writes the Northbound database (one transaction) and waits until
        the chassis has installed it."""
        args = [self.programs["ovn-nbctl"], "--timeout=120"]
        for cmd in nb_commands():
            args += ["--", *cmd]
        self.run(*args)
        self.run(self.programs["ovn-nbctl"], "--timeout=120", "--wait=hv", "sync")

    def wait_bound(self, ports, timeout=60):
        """Waits until each logical port is up (bound on this chassis)."""
        deadline = time.monotonic() + timeout
        for port in ports:
            while self.run(self.programs["ovn-nbctl"], "lsp-get-up", port, check=False).strip() != "up":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"OVN: logical port {port} not up after {timeout} s; "
                                       f"see {self.work}/ovn-controller.log")
                time.sleep(0.3)
        self.run(self.programs["ovn-nbctl"], "--timeout=60", "--wait=hv", "sync")

    def logical_flows(self):
        return len(self.run(self.programs["ovn-sbctl"], "--columns=_uuid", "list", "Logical_Flow").split("\n\n"))

    def stop(self):
        """Stops the daemons (by pid) and unsets the chassis' keys."""
        for pidfile in reversed(self.pidfiles):
            daemons.stop_pidfile(pidfile, wait_s=5)
        self.pidfiles = []
        with contextlib.suppress(RuntimeError):
            self.bench.vsctl("remove", "Open_vSwitch", ".", "external_ids", "ovn-remote",
                             "ovn-encap-type", "ovn-encap-ip", "ovn-bridge", "system-id")


if __name__ == "__main__":
    import sys
    write_pcaps(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 10000)
