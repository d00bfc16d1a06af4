#!/usr/bin/env python3
"""A Tuple Space Explosion of a given shape, made by a switch: the ACL and
the traffic whose upcalls give the shape's megaflow masks.

A shape is perf/tse's text (perf/tse/tse_shape.hpp: masks=, fields=,
pattern=, rules=, legit=, legit-map=, attack=, place=).  perf/tse builds
the megaflows of a shape directly; here ovs-vswitchd has to make them,
and it makes only some shapes:

  - A prefix field is un-wildcarded up to the first bit in which a packet
    differs from every rule of the field (OVS's prefix tries), so an ACL
    rule on a field and frames that leave its value at bit l give masks of
    length l.  The tries are per flow table, at most 3 (CLS_MAX_TRIES):
    nw_src and nw_dst by default, ipv6_src and ipv6_dst set here when a
    shape wants them (Flow_Table prefixes).
  - The ports trie is one 32-bit field, tp_src then tp_dst: fields=sport
    gives lengths 1-16, sport+dport lengths 1-32 of the two as one (32
    masks, not 16 x 16), and dport alone nothing (a tp_dst rule alone is
    no prefix of the pair: OVS matches it exactly).
  - pattern=arbitrary is not made: OVS un-wildcards a prefix (a trie) or
    the whole field, never a bit pattern of the attacker's choice.
  - legit-map=same is not made: the legitimate UDP frames' masks are what
    OVS makes of their rules (their own map).
  - rules=R is R one-field ACL rules per field, each of its own base
    value (as perf/tse does): a frame is un-wildcarded up to the rule it
    agrees with longest, so the masks are the switch's, counted, not
    assumed.
  - The pcap has at most MAX_FRAMES frames (the pcap vdev keeps them all
    in mbufs of OVS's mempool): a shape with more megaflows than attack
    frames gets as many megaflows as it has frames.

    tse_switch.py SHAPE OUT.pcap     writes the pcap, prints the rules

Deterministic: the same shape gives the same rules and frames.
"""
import math
import random
import struct
import sys

import make_pcaps

MAX_FRAMES = 120000  # scenario (e)'s 100000 run; OVS's shared mempool holds 262144
MIN_FRAMES = 20000
FLOW_LIMIT = 200000  # other_config:flow-limit's default
LEGIT_RULES = 16  # per legitimate subtable, as perf/tse
EARLY_MASKS = 16  # place=early: 90% of the attack frames on the first 16 masks

# name: (OpenFlow field, width in bits, IPv6?)
FIELDS = {"src4": ("nw_src", 32, False), "dst4": ("nw_dst", 32, False),
          "src6": ("ipv6_src", 128, True), "dst6": ("ipv6_dst", 128, True),
          "sport": ("tp_src", 16, False), "dport": ("tp_dst", 16, False)}
DEFAULTS = {"masks": "1000", "fields": "src4+sport+dport", "pattern": "prefix", "rules": "1",
            "legit": "1", "legit-map": "other", "attack": "10", "place": "late"}
BASES = {"src4": 0x0A000001, "dst4": 0x0A000002,
         "src6": 0x20010DB8000000000000000000000001, "dst6": 0x20010DB8000000000000000000000002,
         "ports": (1000 << 16) | 4000}


def parse(spec):
    """The shape's keys (every one, defaults filled in); ValueError naming
    the bad key or value."""
    shape = dict(DEFAULTS)
    for kv in filter(None, spec.split(",")):
        key, eq, value = kv.partition("=")
        if not eq or key not in DEFAULTS:
            raise ValueError(f"bad key in '{kv}' (keys: {', '.join(DEFAULTS)})")
        shape[key] = value
    for key in ("masks", "rules", "legit", "attack"):
        if not shape[key].isdigit() or int(shape[key]) == 0:
            raise ValueError(f"{key}={shape[key]}: a positive number")
    if int(shape["attack"]) > 99:
        raise ValueError("attack= is a percentage below 100")
    for f in shape["fields"].split("+"):
        if f not in FIELDS:
            raise ValueError(f"fields: unknown '{f}' (fields: {', '.join(FIELDS)})")
    for key, allowed in (("pattern", ("prefix", "arbitrary")), ("legit-map", ("same", "other")),
                         ("place", ("early", "late"))):
        if shape[key] not in allowed:
            raise ValueError(f"{key}={shape[key]}: one of {', '.join(allowed)}")
    return shape


def dimensions(shape):
    """[(name, width)]: the prefixes the switch varies, the two ports as one."""
    fields = shape["fields"].split("+")
    dims = [(f, FIELDS[f][1]) for f in fields if f not in ("sport", "dport")]
    if "sport" in fields:
        dims.append(("ports", 32 if "dport" in fields else 16))
    return dims


def mask_space(shape):
    """How many masks the switch's prefixes over the shape's fields make:
    the product of its dimensions' widths (lengths 1..width each)."""
    return math.prod(width for _, width in dimensions(shape))


def cannot(shape):
    """Why a switch does not make this shape (empty when it does)."""
    fields = shape["fields"].split("+")
    if shape["pattern"] == "arbitrary":
        return "arbitrary masks: OVS un-wildcards a prefix (its tries) or a whole field"
    if shape["legit-map"] == "same":
        return "legit-map=same: the legitimate frames' masks are what OVS makes of their rules"
    if "dport" in fields and "sport" not in fields:
        return "dport alone: OVS's ports trie is over tp_src then tp_dst (a tp_dst rule is exact)"
    v6 = {FIELDS[f][2] for f in fields if f not in ("sport", "dport")}
    if len(v6) > 1:
        return "IPv4 and IPv6 addresses in one frame"
    space = mask_space(shape)
    if int(shape["masks"]) > space:
        return f"the switch's prefixes over {shape['fields']} make at most {space} masks"
    if int(shape["masks"]) * int(shape["rules"]) > FLOW_LIMIT:
        return f"more megaflows than OVS's flow limit ({FLOW_LIMIT})"
    return ""


def is_v6(shape):
    return any(FIELDS[f][2] for f in shape["fields"].split("+") if f in FIELDS)


def prefixes(shape):
    """The flow table's prefix tries the shape needs (None: OVS's default)."""
    six = [FIELDS[f][0] for f in shape["fields"].split("+") if f in ("src6", "dst6")]
    return ",".join(six) if six else None


def base(dim, rule, width):
    """The ACL's value of dimension `dim` (`width` bits) for rule `rule` (0:
    scenario (e)'s; the others pseudo-random).  The ports of 16 bits are
    tp_src alone."""
    if rule == 0:
        return BASES[dim] >> (32 - width) if dim == "ports" else BASES[dim]
    return random.Random(f"{dim}/{rule}").getrandbits(width)


def v6(x):
    return ":".join(f"{x >> s & 0xFFFF:x}" for s in range(112, -1, -16))


def rules(shape):
    """The cell's OpenFlow rules (the ACL, the legitimate traffic's rules, a
    default drop), and the attack's signature to block it by (the 'before'
    phase: all its frames in one megaflow), without actions."""
    proto = "tcp6" if is_v6(shape) else "tcp"
    acl = []
    for r in range(int(shape["rules"])):
        for dim, width in dimensions(shape):
            value = base(dim, r, width)
            if dim == "ports":
                if width == 32:
                    match = f"tp_src={value >> 16},tp_dst={value & 0xFFFF}"
                else:
                    match = f"tp_src={value}"
            else:
                text = v6(value) if FIELDS[dim][2] else make_pcaps.dotted(value)
                match = f"{FIELDS[dim][0]}={text}"
            acl.append(f"priority=100,in_port=1,{proto},{match},actions=drop")
    legit = int(shape["legit"])
    if legit == 1:
        flows = ["priority=10,in_port=1,udp,actions=output:2"]
    else:
        flows = [f"priority=10,in_port=1,udp,nw_dst={make_pcaps.dotted(net)}/{length},actions=output:2"
                 for net, length in legit_rules(legit)]
    return acl + flows + ["priority=0,actions=drop"], f"priority=200,in_port=1,{proto}"


def legit_rules(legit):
    """[(network, length)]: LEGIT_RULES disjoint nw_dst prefixes of each of
    `legit` lengths, /32 down (scenario (b)'s layout: length L in L.0.0.0/8)."""
    out = []
    for length in range(32, 32 - legit, -1):
        for k in range(LEGIT_RULES):
            out.append(((length << 24) + (k << (32 - length)), length))
    return out


def mask_tuples(shape):
    """The shape's masks as tuples of prefix lengths (1..width per
    dimension), drawn pseudo-randomly from all of them so that every
    dimension varies; distinct."""
    dims, masks = dimensions(shape), int(shape["masks"])
    picks = random.Random(424242).sample(range(mask_space(shape)), masks)
    out = []
    for index in picks:
        t = []
        for _, w in dims:
            t.append(index % w + 1)
            index //= w
        out.append(tuple(t))
    return out


def attack_values(shape, lengths, rule, seed):
    """{dimension: value}: rule `rule`'s bases, each left at its length's bit
    (the bits after it random)."""
    rng = random.Random(seed)
    out = {}
    for (dim, width), length in zip(dimensions(shape), lengths):
        b = base(dim, rule, width)
        flip = 1 << (width - length)
        low = rng.getrandbits(width - length) if length < width else 0
        prefix = (b >> (width - length + 1) << (width - length + 1)) if length > 1 else 0
        out[dim] = prefix | ((b & flip) ^ flip) | low
    return out


def tcp(sport, dport):
    return struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x02, 8192, 0, 0)


def attack_frame(shape, values):
    ports = values.get("ports")
    if ports is not None and dict(dimensions(shape))["ports"] == 16:
        ports = (ports << 16) | BASES["ports"] & 0xFFFF  # tp_src varies, tp_dst the base's
    sport, dport = ((ports >> 16, ports & 0xFFFF) if ports is not None
                    else (BASES["ports"] >> 16, BASES["ports"] & 0xFFFF))
    if is_v6(shape):
        src = values.get("src6", BASES["src6"]).to_bytes(16, "big")
        dst = values.get("dst6", BASES["dst6"]).to_bytes(16, "big")
        seg = tcp(sport, dport)
        ip6 = struct.pack("!IHBB", 0x60000000, len(seg), 6, 64) + src + dst + seg
        return make_pcaps.pad(make_pcaps.eth(0x86DD) + ip6)
    ip = make_pcaps.ipv4(6, values.get("dst4", BASES["dst4"]), tcp(sport, dport),
                         src=values.get("src4", BASES["src4"]))
    return make_pcaps.pad(make_pcaps.eth(0x0800) + ip)


def legit_frame(shape, i):
    legit = int(shape["legit"])
    if legit == 1:
        dst = make_pcaps.flow_dst(i % 1000)
    else:
        dst = make_pcaps.address_in(legit_rules(legit), i)
    return make_pcaps.pad(make_pcaps.eth(0x0800) +
                          make_pcaps.ipv4(17, dst, make_pcaps.udp(1024 + i % 1000, 5000, 18)))


def frames(shape):
    """The pcap's frames: the attack's share of them attack frames, spread
    evenly among the legitimate ones; each (mask, rule) pair once before
    any repeats (place=late), or 90% of them on the first EARLY_MASKS masks
    (place=early)."""
    masks, rules_n, pct = int(shape["masks"]), int(shape["rules"]), int(shape["attack"])
    pairs = masks * rules_n
    # Enough frames for every pair once, as far as MAX_FRAMES goes: with
    # place=early only a tenth of the attack frames spread over the pairs.
    spread = 10 if shape["place"] == "early" else 1
    total = min(MAX_FRAMES, max(MIN_FRAMES, -(-pairs * 100 * spread // pct)))
    n_attack = total * pct // 100
    tuples = mask_tuples(shape)
    order = list(range(pairs))
    random.Random(7).shuffle(order)
    attack, spread = [], 0
    for a in range(n_attack):
        if shape["place"] == "early" and a % 10:
            m, r = (a * 7919) % min(EARLY_MASKS, masks), a % rules_n
        else:  # the next pair in order: every one before any repeats
            m, r = divmod(order[spread % pairs], rules_n)
            spread += 1
        attack.append(attack_frame(shape, attack_values(shape, tuples[m], r, a)))
    out, a = [], 0
    for n in range(total):
        if a < n_attack and n * n_attack >= a * total:
            out.append(attack[a])
            a += 1
        else:
            out.append(legit_frame(shape, n - a))
    return out + [make_pcaps.arp_reply()]


def main(spec, pcap):
    shape = parse(spec)
    why = cannot(shape)
    if why:
        sys.exit(f"tse_switch.py: not made in a switch: {why}")
    make_pcaps.write_pcap(pcap, frames(shape))
    flows, block = rules(shape)
    print("\n".join(flows + [f"# before: {block},actions=drop"]))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
