#!/usr/bin/env python3
"""Traffic for the phy-to-phy benchmark: pcap files of minimum-size frames.

    make_pcaps.py OUT_DIR

Writes OUT_DIR/<kind>-<flows>.pcap for every kind below and 1, 1000 and
100000 distinct flows (one frame per flow, flows in a shuffled order so
consecutive frames differ).  Each file ends with one ARP reply: a rule that
matches it (arp_op=2) turns OVS 3.1's "simple match" off for the port, so
the other frames reach dpcls (see docs/internals/ovs-dpdk-p2p-notes.md).

Kinds (Ethernet frames of 64 bytes with FCS, i.e. 60 bytes in the pcap,
except IPv6/TCP, whose headers alone need 74):
  eth       Ethernet only (EtherType 0x88b5, local experimental); flows by
            source MAC
  ipv4      Ethernet/IPv4 (protocol 253, experimental); flows by nw_dst
  udp       Ethernet/IPv4/UDP; flows by nw_dst and UDP ports
  ipv6tcp   Ethernet/IPv6/TCP; flows by IPv6 dst and TCP ports
  vlan      802.1Q VID 100, IPv4/UDP; flows by nw_dst and UDP ports
  mix       the above, interleaved
  prefix    Ethernet/IPv4/UDP, flow i inside prefix rule i % 221 of
            prefix_rules(): every one of the 13 prefix lengths carries the
            same share of the traffic (scenario b)
  flood     scenario (e): FLOOD_FRAMES frames, of which FLOOD_MASKS are
            attack frames (Eth/IPv4/TCP, attack_frame(): each differs from
            the scenario's ACL at its own bits, so each gets a megaflow mask
            of its own) spread evenly among UDP frames of the flows
Flow i of every IPv4 kind goes to 10.(i>>16 & 0xff).(i>>8 & 0xff).(i & 0xff)
+ 16.0.0.0, so nw_dst prefixes of the rules generator select known shares.
"""
import os
import random
import struct
import sys

SRC_MAC = bytes.fromhex("525400000001")
DST_MAC = bytes.fromhex("525400000002")
MIN_FRAME = 60  # without the 4-byte FCS


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(ethertype: int, src: bytes = SRC_MAC, vlan: int = -1) -> bytes:
    hdr = DST_MAC + src
    if vlan >= 0:
        hdr += struct.pack("!HH", 0x8100, vlan)
    return hdr + struct.pack("!H", ethertype)


def ipv4(proto: int, dst: int, payload: bytes, src: int = 0x0A000001) -> bytes:
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, proto, 0,
                      src.to_bytes(4, "big"), dst.to_bytes(4, "big"))
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return hdr + payload


def udp(sport: int, dport: int, length: int) -> bytes:
    return struct.pack("!HHHH", sport, dport, 8 + length, 0) + bytes(length)


def ipv6_tcp(dst_low: int, sport: int, dport: int) -> bytes:
    tcp = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x10, 8192, 0, 0)
    src = bytes.fromhex("20010db8000000000000000000000001")
    dst = bytes.fromhex("20010db8000100000000") + dst_low.to_bytes(6, "big")
    return struct.pack("!IHBB", 0x60000000, len(tcp), 6, 64) + src + dst + tcp


def pad(frame: bytes) -> bytes:
    return frame + bytes(max(0, MIN_FRAME - len(frame)))


def flow_dst(i: int) -> int:
    return (16 << 24) + (i & 0xFFFFFF)


def frame(kind: str, i: int) -> bytes:
    if kind == "eth":
        return pad(eth(0x88B5, src=bytes([0x52, 0x54, 0x01]) + (i & 0xFFFFFF).to_bytes(3, "big")))
    if kind == "ipv4":
        return pad(eth(0x0800) + ipv4(253, flow_dst(i), bytes(0)))
    if kind == "udp":
        return pad(eth(0x0800) + ipv4(17, flow_dst(i), udp(1024 + (i % 50000), 5000, 18)))
    if kind == "ipv6tcp":
        return pad(eth(0x86DD) + ipv6_tcp(i, 1024 + (i % 50000), 80))
    if kind == "vlan":
        return pad(eth(0x0800, vlan=100) + ipv4(17, flow_dst(i), udp(1024 + (i % 50000), 5000, 14)))
    raise ValueError(kind)


# Scenario (b): 17 disjoint nw_dst prefixes of each length /20 ... /32:
# those of length L lie in L.0.0.0/8, rule k at the k-th block of 2^(32-L)
# addresses.  With disjoint prefixes each megaflow's nw_dst mask is exactly
# its rule's length: 13 subtables, and equal traffic per length.
PREFIX_LENGTHS = range(20, 33)
PREFIX_RULES_PER_LENGTH = 17


def prefix_rules():
    """[(network as int, length)], in the order flows are spread over."""
    rules = []
    for k in range(PREFIX_RULES_PER_LENGTH):
        for length in PREFIX_LENGTHS:
            rules.append(((length << 24) + (k << (32 - length)), length))
    return rules


PREFIX_RULES = prefix_rules()


def dotted(addr: int) -> str:
    """An IPv4 address as OpenFlow rules write it."""
    return ".".join(str(addr >> s & 0xFF) for s in (24, 16, 8, 0))


def address_in(rules, i: int) -> int:
    """Flow i's address: inside rule i % len(rules) of [(network, length)],
    spread over the prefix by the flow's turn among that rule's flows."""
    net, length = rules[i % len(rules)]
    return net + (i // len(rules) * 2654435761) % (1 << (32 - length))


def prefix_frame(i: int) -> bytes:
    """Flow i: inside prefix rule i % 221, UDP source port by flow."""
    dst = address_in(PREFIX_RULES, i)
    return pad(eth(0x0800) + ipv4(17, dst, udp(1024 + (i % 50000), 5000, 18)))


# Scenario (e), a Tuple Space Explosion (CVE-2019-25076) inside the traffic
# of one port.  The scenario's ACL has three one-field TCP rules (nw_src
# 10.0.0.1, nw_dst 10.0.0.2, tp_src 1000); OVS's classifier un-wildcards of
# each field only the prefix that tells a packet from the rule (its prefix
# and ports tries), so attack frame m, which first differs from the rules at
# bit i of nw_src, j of nw_dst and k of tp_src, gets a megaflow of its own
# mask: FLOOD_MASKS frames make FLOOD_MASKS subtables.  The pcap repeats
# forever, so every mask stays hit for as long as the attack is let through.
FLOOD_MASKS = 2500
FLOOD_FRAMES = 100000  # FLOOD_MASKS of them attack frames: 2.5%
FLOOD_DST_PORT = 4000  # every attack frame's; the block rule matches it


def attack_frame(m: int) -> bytes:
    i, j, k = m % 32, (m // 32) % 32, (m // 1024) % 16
    src = 0x0A000001 ^ (0x80000000 >> i)
    dst = 0x0A000002 ^ (0x80000000 >> j)
    sport = 1000 ^ (0x8000 >> k)
    tcp = struct.pack("!HHIIBBHHH", sport, FLOOD_DST_PORT, 1, 0, 0x50, 0x02, 8192, 0, 0)
    return pad(eth(0x0800) + ipv4(6, dst, tcp, src=src))


def interleave(total: int, attacks: int, attack, legit) -> list:
    """`total` frames: attack(m) at position m * total / attacks for m <
    `attacks`, legit(k) for the k-th of the others."""
    frames, m = [], 0
    for n in range(total):
        if m < attacks and n * attacks >= m * total:
            frames.append(attack(m))
            m += 1
        else:
            frames.append(legit(n - m))
    return frames


def flood_frames(order) -> list:
    """FLOOD_FRAMES frames: the legitimate UDP flows of `order`, cycled, and
    attack frame m at position m * FLOOD_FRAMES / FLOOD_MASKS."""
    return interleave(FLOOD_FRAMES, FLOOD_MASKS, attack_frame,
                      lambda k: frame("udp", order[k % len(order)]))


def arp_reply() -> bytes:
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 2, SRC_MAC, bytes([10, 0, 0, 1]),
                      DST_MAC, bytes([10, 0, 0, 2]))
    return pad(eth(0x0806) + arp)


def write_pcap(path: str, frames) -> None:
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for n, fr in enumerate(frames):
            f.write(struct.pack("<IIII", n // 1000000, n % 1000000, len(fr), len(fr)))
            f.write(fr)


KINDS = ["eth", "ipv4", "udp", "ipv6tcp", "vlan"]
FLOWS = [1, 1000, 100000]


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    rng = random.Random(7)
    for flows in FLOWS:
        order = list(range(flows))
        rng.shuffle(order)
        for kind in KINDS + ["mix"]:
            if kind == "mix":
                frames = [frame(KINDS[n % len(KINDS)], i) for n, i in enumerate(order)]
            else:
                frames = [frame(kind, i) for i in order]
            write_pcap(os.path.join(out, f"{kind}-{flows}.pcap"), frames + [arp_reply()])
        # Every prefix rule needs flows: at least one per rule.
        n = max(flows, len(PREFIX_RULES))
        prefix_order = list(range(n))
        rng.shuffle(prefix_order)
        write_pcap(os.path.join(out, f"prefix-{flows}.pcap"),
                   [prefix_frame(i) for i in prefix_order] + [arp_reply()])
        write_pcap(os.path.join(out, f"flood-{flows}.pcap"), flood_frames(order) + [arp_reply()])
    print(f"wrote {len(FLOWS) * (len(KINDS) + 3)} pcaps to {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
