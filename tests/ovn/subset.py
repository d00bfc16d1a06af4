#!/usr/bin/env python3
"""The subset of OVN's testsuite that tests/ovn/run.sh runs, as numbers.

    tests/ovn/subset.py OVN_TESTS_DIR < LISTING

LISTING is `tests/testsuite -l` of the built OVN tree.  A test is taken
when its body in ovn.at sends packets into a switch (netdev-dummy/receive,
or one of ovn-macros.at's helpers that do) and its title names what a
logical pipeline does with them: ACLs, conjunctions and port groups, NAT,
load balancers, port security, multicast (IGMP, MLD), ARP and ND
responders and neighbours, logical routers and routing, and the logical
switching they sit on (hypervisors and switches, localnet and VLANs,
DHCP and DNS answered by the controller, MAC learning).  Those are the
tests whose packets go through ovs-vswitchd's dpcls under OVN's flows;
tests that only check flows, northd's output or the databases send none.
A test defined for several northd settings (OVN_FOR_EACH_NORTHD) is taken
in one of them, the first listed: the flows a switch gets do not depend on
them.  Left out for the phase's time (at most ~30 minutes on 2 cores):
LEFT_OUT, the longest tests whose kind others of the subset cover (each
took 40 s to 3 min alone on a 2-vCPU machine, 2026-12-07).  Prints the
numbers on one line, and on stderr how many per kind and what was left out.
"""

import re
import sys

# Helpers of ovn-macros.at that inject packets with netdev-dummy/receive.
INJECTS = re.compile(
    r"netdev-dummy/receive|netdev_dummy_receive|send_ip_multicast_pkt|send_garp|"
    r"send_na\b|send_igmp|send_mld|send_arp|send_icmp|test_ip\b|test_arp\b|test_icmp")

# (kind, pattern on the title): the first that matches names the kind.
KINDS = [
    ("acl", r"\bacl|conj|port.?group"),
    ("nat", r"\bnat\b|snat|dnat"),
    ("lb", r"load.?balanc|\blb\b|hairpin"),
    ("port-security", r"port.?security"),
    ("multicast", r"igmp|\bmld\b|multicast|mcast"),
    ("arp-nd", r"\barp\b|nd_|neighbor|\bnd\b|solicitation|responder"),
    ("router", r"router|routing|\bl3\b|\blr\b"),
    # Logical switching across hypervisors, localnet and VLANs, DHCP and
    # DNS answered by the controller, MAC learning: the traffic every
    # pipeline above sits on.
    ("switching", r"\bHVs?\b|\bLSs?\b|lports?|localnet|vlan|spine|megaflow|dhcp|dns|\bttl\b|"
                  r"floating ip|\bfdb\b|mac binding"),
]


# Title -> what else of the subset covers it.
LEFT_OUT = {
    "3 HVs, 3 LS, 3 lports/LS, 1 LR": "routing between switches: the other router tests (181 s)",
    "Port Groups": "port groups: ACLs on Port Groups (125 s)",
    "dhcpv4 : 1 HV, 2 LS, 2 LSPs/LS": "the controller's answers: dhcpv6, dns lookup (97 s)",
    "3 HVs, 1 LS, 3 lports/HV": "logical switching across HVs: the other HV tests (87 s)",
    "4 HV, 1 LS, 1 LR, packet test with HA distributed router gateway port":
        "the 4 HV, 3 LS, 2 LR variant (69 s)",
    "MAC binding aging - probing": "MAC binding aging (57 s)",
    "MAC binding aging - probing GW router Dynamic Neigh": "MAC binding aging (57 s)",
    "MAC binding aging - probing distributed GW router": "MAC binding aging (43 s)",
    "MAC binding aging - persistence of the active entry": "MAC binding aging (42 s)",
    "IGMP external querier": "IGMP snoop/querier/relay (43 s)",
}


def chosen_titles(ovn_at):
    """Title -> kind, for the tests of ovn.at that the subset takes."""
    text = open(ovn_at, encoding="utf-8").read()
    out = {}
    for title, body in re.findall(r"AT_SETUP\(\[(.*?)\]\)(.*?)AT_CLEANUP", text, re.S):
        if not INJECTS.search(body):
            continue
        for kind, pattern in KINDS:
            if re.search(pattern, title, re.I):
                out[title.strip()] = kind
                break
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: subset.py OVN_TESTS_DIR < LISTING")
    titles = chosen_titles(sys.argv[1] + "/ovn.at")
    taken, per_kind = [], {}
    seen = set()
    # "  123: ovn.at:4567      ACL conjunction -- parallelization=yes -- ovn_monitor_all=yes"
    line_re = re.compile(r"^\s*(\d+): (ovn\.at):\d+\s+(.*?)\s*$")
    for line in sys.stdin:
        m = line_re.match(line)
        if not m:
            continue
        number, full = m.group(1), m.group(3)
        title = full.split(" -- ")[0].strip()
        if title in titles and title not in seen and title not in LEFT_OUT:
            seen.add(title)
            taken.append(number)
            per_kind[titles[title]] = per_kind.get(titles[title], 0) + 1
    print(" ".join(taken))
    print("subset: " + ", ".join(f"{k} {n}" for k, n in sorted(per_kind.items())) +
          f"; {len(taken)} tests of {len(titles)} titles", file=sys.stderr)
    left = [t for t in LEFT_OUT if t in titles]
    print(f"subset: left out for time, {len(left)}: "
          + "; ".join(f"{t} ({LEFT_OUT[t]})" for t in left), file=sys.stderr)


if __name__ == "__main__":
    main()
