// tse_shape.hpp: Tuple Space Explosion tables of the shape an attacker
// picks, for perf/tse_grid.
//
// The attack (Csikor et al., CoNEXT 2019; CVE-2019-25076): an ACL's rule
// on a field makes OVS un-wildcard a packet's bits up to the first one in
// which it differs from the rule, so frames that differ from the rule at
// different bits get megaflows of different masks, one subtable each.  An
// attack megaflow of prefix length l on a field holds the rule's first
// l - 1 bits and the l-th flipped: it agrees with every other one up to its
// own length.  With prefix lengths varied in k fields at once the masks
// are the tuples of lengths; with an ACL of non-prefix masks (TSE's
// "arbitrary mask" variant) the megaflows' masks are bit patterns.
//
// A shape, as text (perf/tse_grid --cell SPEC; every key optional):
//
//   masks=1000            attack masks (subtables) on the port
//   fields=src4+sport     the fields whose lengths vary: src4 dst4 (IPv4
//                         addresses), src6 dst6 (IPv6), sport dport (TCP)
//   pattern=prefix        prefix lengths, or arbitrary: non-prefix masks
//   rules=1               attack megaflows per mask (an ACL of that many
//                         rules: each its own base value)
//   legit=1               subtables of the legitimate traffic (UDP; 16
//                         rules each, the traffic spread evenly over them)
//   legit-map=other       same: their masks are on the attack's fields (the
//                         same miniflow map: one family in the tail index);
//                         other: eth_dst and an address prefix (another map)
//   attack=10             percent of the frames that are attack frames
//   place=late            late: the attack frames spread evenly over the
//                         masks; early: 90% of them on the first 16 masks,
//                         which the ranking then puts near the top (where
//                         dpcls-tail-head leaves them to the loop)
//
// Some shapes cannot exist: k prefix fields of widths W1..Wk make at most
// W1 * ... * Wk masks (one IPv4 field: 32), and a switch holds at most
// 200000 megaflows per PMD thread (other_config:flow-limit's default):
// tse_impossible() says why, and the grid reports the cell as not made.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "perf/bench_classifier.hpp"

namespace ovscls::perf {

enum class TseField { Src4, Dst4, Src6, Dst6, Sport, Dport };

struct TseShape {
    size_t masks = 1000;
    std::vector<TseField> fields{TseField::Src4, TseField::Sport, TseField::Dport};
    bool arbitrary = false;
    size_t rules = 1;
    size_t legit = 1;
    bool legit_same_map = false;
    unsigned attack_pct = 10;
    bool early = false;

    std::string spec() const;  // parse_tse_shape()'s text, every key
};

// The shape `spec` gives (keys not named keep their defaults); none, with
// *error saying which key and value, for a bad one.
std::optional<TseShape> parse_tse_shape(const std::string& spec, std::string* error);

// Why no switch holds this shape (too many masks for the fields, more
// megaflows than the flow limit); empty when one can.
std::string tse_impossible(const TseShape& shape);

struct TseTables {
    Table before;             // the legitimate rules and packets only
    Table during;             // with the attack's megaflows; packets: the mix
    Table legit;              // during's rules; packets: the legitimate ones only
    Table attack;             // during's rules; packets: the attack frames only
    size_t attack_rules = 0;  // distinct attack megaflows made
};

// The tables of a possible shape (tse_impossible() empty).  Deterministic:
// the same shape gives the same text.
TseTables make_tse_tables(const TseShape& shape);

}  // namespace ovscls::perf
