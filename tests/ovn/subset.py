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
them.  Prints the numbers on one line, and on stderr how many per kind.
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
        if title in titles and title not in seen:
            seen.add(title)
            taken.append(number)
            per_kind[titles[title]] = per_kind.get(titles[title], 0) + 1
    print(" ".join(taken))
    print("subset: " + ", ".join(f"{k} {n}" for k, n in sorted(per_kind.items())) +
          f"; {len(taken)} tests of {len(titles)} titles", file=sys.stderr)


if __name__ == "__main__":
    main()
