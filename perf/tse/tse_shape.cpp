// tse_shape.cpp: see tse_shape.hpp.
#include "perf/tse/tse_shape.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <set>
#include <sstream>

namespace ovscls::perf {
namespace {

using Bits = unsigned __int128;  // a field's value, its first bit the highest of `width`

constexpr size_t kFlowLimit = 200000;  // OVS's other_config:flow-limit default
constexpr size_t kLegitRules = 16;     // per legitimate subtable
constexpr size_t kEarlyMasks = 16;     // place=early: where most attack frames go

struct FieldInfo {
    TseField field;
    const char* name;
    unsigned width;
    bool v6;
};
constexpr FieldInfo kFields[] = {
    {TseField::Src4, "src4", 32, false},   {TseField::Dst4, "dst4", 32, false},
    {TseField::Src6, "src6", 128, true},   {TseField::Dst6, "dst6", 128, true},
    {TseField::Sport, "sport", 16, false}, {TseField::Dport, "dport", 16, false},
};
const FieldInfo& info(TseField f) { return kFields[static_cast<int>(f)]; }

uint64_t splitmix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
Bits random_bits(uint64_t seed, unsigned width) {
    const Bits r = (Bits(splitmix(seed)) << 64) | splitmix(seed ^ 0x5555555555555555ull);
    return width == 128 ? r : r & ((Bits(1) << width) - 1);
}
Bits all_ones(unsigned width) { return width == 128 ? ~Bits(0) : (Bits(1) << width) - 1; }
Bits prefix_mask(unsigned width, unsigned len) {
    return len == 0 ? 0 : all_ones(width) & ~(all_ones(width) >> len);
}
Bits bit_at(unsigned width, unsigned pos) {
    return Bits(1) << (width - 1 - pos);
}  // pos from the top
bool is_prefix(Bits mask, unsigned width) {
    const Bits inv = ~mask & all_ones(width);
    return (inv & (inv + 1)) == 0;  // the unset bits are the lowest ones
}

// The attack's base value of a field for ACL rule r (r = 0: scenario (e)'s).
Bits attack_base(TseField f, size_t r) {
    if (r > 0) return random_bits(r * 8 + static_cast<uint64_t>(f), info(f).width);
    switch (f) {
        case TseField::Src4:
            return 0x0A000001u;
        case TseField::Dst4:
            return 0x0A000002u;
        case TseField::Src6:
            return (Bits(0x20010db800000000ull) << 64) | 1;
        case TseField::Dst6:
            return (Bits(0x20010db800000000ull) << 64) | 2;
        case TseField::Sport:
            return 1000;
        case TseField::Dport:
            return 4000;
    }
    return 0;
}

std::string v4(Bits a) {
    const auto x = static_cast<uint32_t>(a);
    return ip(x);
}
std::string v6(Bits a) {
    char s[48];
    std::snprintf(s, sizeof s, "%x:%x:%x:%x:%x:%x:%x:%x", unsigned(a >> 112) & 0xffff,
                  unsigned(a >> 96) & 0xffff, unsigned(a >> 80) & 0xffff,
                  unsigned(a >> 64) & 0xffff, unsigned(a >> 48) & 0xffff,
                  unsigned(a >> 32) & 0xffff, unsigned(a >> 16) & 0xffff, unsigned(a) & 0xffff);
    return s;
}
std::string port(Bits p) { return std::to_string(unsigned(p) & 0xffff); }
std::string hex16(Bits p) {
    char s[8];
    std::snprintf(s, sizeof s, "0x%04x", unsigned(p) & 0xffff);
    return s;
}

// One megaflow or packet over the shape's fields: a value (and, for a
// megaflow, a mask) per field; the other fields as the caller says.
struct Values {
    Bits value[6] = {};
    Bits mask[6] = {};
    bool set[6] = {};
};
void put(Values& v, TseField f, Bits value, Bits mask) {
    v.value[static_cast<int>(f)] = value;
    v.mask[static_cast<int>(f)] = mask;
    v.set[static_cast<int>(f)] = true;
}

const char* kMegaflowHead =
    "recirc_id(0),in_port(1),packet_type(ns=0,id=0),"
    "eth(src=00:00:00:00:00:00/00:00:00:00:00:00,dst=00:00:00:00:00:00/00:00:00:00:00:00),";

// A megaflow of protocol `proto` (6 TCP, 17 UDP) over the set fields.
std::string megaflow(const Values& v, bool ipv6, int proto, const std::string& eth_dst = "") {
    auto field = [&](TseField f, bool addr) {
        const int i = static_cast<int>(f);
        if (!v.set[i]) return std::string();
        const Bits m = v.mask[i], val = v.value[i] & m;
        if (!addr) return port(val) + "/" + hex16(m);
        return ipv6 ? v6(val) + "/" + v6(m) : v4(val) + "/" + v4(m);
    };
    std::string s = eth_dst.empty() ? kMegaflowHead
                                    : "recirc_id(0),in_port(1),packet_type(ns=0,id=0),"
                                      "eth(src=00:00:00:00:00:00/00:00:00:00:00:00,dst=" +
                                          eth_dst + "),";
    s += ipv6 ? "eth_type(0x86dd),ipv6(" : "eth_type(0x0800),ipv4(";
    const std::string src = field(ipv6 ? TseField::Src6 : TseField::Src4, true);
    const std::string dst = field(ipv6 ? TseField::Dst6 : TseField::Dst4, true);
    if (!src.empty()) s += "src=" + src + ",";
    if (!dst.empty()) s += "dst=" + dst + ",";
    s += "proto=" + std::to_string(proto) + ",frag=no)";
    const std::string sp = field(TseField::Sport, false), dp = field(TseField::Dport, false);
    if (!sp.empty() || !dp.empty()) {
        s += proto == 6 ? ",tcp(" : ",udp(";
        if (!sp.empty()) s += "src=" + sp + (dp.empty() ? "" : ",");
        if (!dp.empty()) s += "dst=" + dp;
        s += ")";
    }
    return s;
}

// A frame's flow text: every field given (the ones not set get defaults).
std::string packet(const Values& v, bool ipv6, int proto, const std::string& eth_dst) {
    auto value = [&](TseField f, Bits dflt) {
        const int i = static_cast<int>(f);
        return v.set[i] ? v.value[i] : dflt;
    };
    std::string s = "in_port(1),eth(src=52:54:00:00:00:01,dst=" + eth_dst + "),";
    if (ipv6) {
        s += "eth_type(0x86dd),ipv6(src=" +
             v6(value(TseField::Src6, (Bits(0xfd00000000000000ull) << 64) | 7)) +
             ",dst=" + v6(value(TseField::Dst6, (Bits(0xfd00000000000000ull) << 64) | 9)) +
             ",label=0,proto=" + std::to_string(proto) + ",tclass=0,hlimit=64,frag=no)";
    } else {
        s += "eth_type(0x0800),ipv4(src=" + v4(value(TseField::Src4, 0xC0A80007u)) +
             ",dst=" + v4(value(TseField::Dst4, 0xC0A80009u)) + ",proto=" + std::to_string(proto) +
             ",tos=0,ttl=64,frag=no)";
    }
    s += (proto == 6 ? ",tcp(src=" : ",udp(src=") + port(value(TseField::Sport, 5555)) +
         ",dst=" + port(value(TseField::Dport, 5000)) + ")";
    return s;
}

bool any_v6(const TseShape& s) {
    return std::any_of(s.fields.begin(), s.fields.end(), [](TseField f) { return info(f).v6; });
}

// The masks of the attack, as one mask per field (in s.fields' order).
using MaskTuple = std::vector<Bits>;

// Prefix masks: N distinct tuples of lengths (1..width per field), drawn
// pseudo-randomly from all of them so that every field's length varies,
// leaving out the tuples `reserved` for the legitimate subtables.
std::vector<MaskTuple> prefix_masks(const TseShape& s, const std::set<MaskTuple>& reserved) {
    size_t space = 1;
    for (TseField f : s.fields) space = std::min<size_t>(space * info(f).width, size_t{1} << 40);
    auto tuple_of = [&](uint64_t index) {
        MaskTuple t;
        for (TseField f : s.fields) {
            const unsigned w = info(f).width;
            t.push_back(prefix_mask(w, unsigned(index % w) + 1));
            index /= w;
        }
        return t;
    };
    std::vector<MaskTuple> out;
    if (s.masks * 2 > space) {  // most of them: all, in a shuffled order
        std::vector<uint64_t> all(space);
        for (uint64_t i = 0; i < space; i++) all[i] = i;
        for (uint64_t i = space - 1; i > 0; i--) std::swap(all[i], all[splitmix(i) % (i + 1)]);
        for (uint64_t i : all) {
            MaskTuple t = tuple_of(i);
            if (out.size() < s.masks && !reserved.count(t)) out.push_back(std::move(t));
        }
        return out;
    }
    std::set<MaskTuple> seen(reserved);
    for (uint64_t m = 0; out.size() < s.masks; m++) {
        MaskTuple t = tuple_of(splitmix(m + 424242) % space);
        if (seen.insert(t).second) out.push_back(std::move(t));
    }
    return out;
}

// Arbitrary masks: per field a pseudo-random pattern of at least two bits
// that is no prefix; distinct tuples.
std::vector<MaskTuple> arbitrary_masks(const TseShape& s) {
    std::set<MaskTuple> seen;
    std::vector<MaskTuple> out;
    for (uint64_t m = 0; out.size() < s.masks && m < s.masks * 64; m++) {
        MaskTuple t;
        for (TseField f : s.fields) {
            const unsigned w = info(f).width;
            Bits b = random_bits(m * 131 + static_cast<uint64_t>(f) + 7777, w);
            b |= bit_at(w, w - 1) | bit_at(w, unsigned(m % (w - 1)));  // >= 2 bits, the last set
            if (is_prefix(b, w)) b &= ~bit_at(w, 0);                   // then not a prefix
            t.push_back(b);
        }
        if (seen.insert(t).second) out.push_back(t);
    }
    return out;
}

// The bit an attack megaflow flips: its prefix's last, or for a pattern
// its lowest set bit (the last one the classifier examined).
Bits flipped_bit(Bits mask, unsigned width, bool arbitrary) {
    if (arbitrary) return mask & (~mask + 1);
    for (unsigned len = width; len > 0; len--) {
        if (mask & bit_at(width, len - 1)) return bit_at(width, len - 1);
    }
    return 0;
}

}  // namespace

std::string TseShape::spec() const {
    std::ostringstream o;
    o << "masks=" << masks << ",fields=";
    for (size_t i = 0; i < fields.size(); i++) o << (i ? "+" : "") << info(fields[i]).name;
    o << ",pattern=" << (arbitrary ? "arbitrary" : "prefix") << ",rules=" << rules
      << ",legit=" << legit << ",legit-map=" << (legit_same_map ? "same" : "other")
      << ",attack=" << attack_pct << ",place=" << (early ? "early" : "late");
    return o.str();
}

std::optional<TseShape> parse_tse_shape(const std::string& spec, std::string* error) {
    TseShape s;
    std::istringstream in(spec);
    std::string item;
    auto number = [&](const std::string& key, const std::string& v, size_t lo, size_t hi,
                      size_t* out) {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
        if (v.empty() || *end || v[0] == '-' || n < lo || n > hi) {
            *error = key + "=" + v + ": a number from " + std::to_string(lo) + " to " +
                     std::to_string(hi);
            return false;
        }
        *out = static_cast<size_t>(n);
        return true;
    };
    while (std::getline(in, item, ',')) {
        const size_t eq = item.find('=');
        const std::string key = item.substr(0, eq),
                          v = eq == std::string::npos ? "" : item.substr(eq + 1);
        size_t n = 0;
        if (key == "masks") {
            if (!number(key, v, 1, 100000, &s.masks)) return std::nullopt;
        } else if (key == "rules") {
            if (!number(key, v, 1, 100000, &s.rules)) return std::nullopt;
        } else if (key == "legit") {
            if (!number(key, v, 1, 64, &s.legit)) return std::nullopt;
        } else if (key == "attack") {
            if (!number(key, v, 0, 100, &n)) return std::nullopt;
            s.attack_pct = static_cast<unsigned>(n);
        } else if (key == "fields") {
            s.fields.clear();
            std::istringstream fs(v);
            std::string name;
            while (std::getline(fs, name, '+')) {
                const auto* f = std::find_if(std::begin(kFields), std::end(kFields),
                                             [&](const FieldInfo& i) { return name == i.name; });
                if (f == std::end(kFields) ||
                    std::find(s.fields.begin(), s.fields.end(), f->field) != s.fields.end()) {
                    *error = "fields=" + v +
                             ": '+'-separated, each once, of src4 dst4 src6 "
                             "dst6 sport dport";
                    return std::nullopt;
                }
                s.fields.push_back(f->field);
            }
            const bool has4 = std::any_of(s.fields.begin(), s.fields.end(), [](TseField f) {
                return f == TseField::Src4 || f == TseField::Dst4;
            });
            if (s.fields.empty() || (has4 && any_v6(s))) {
                *error = "fields=" + v +
                         ": at least one, and not IPv4 and IPv6 at once (a "
                         "frame has one or the other)";
                return std::nullopt;
            }
        } else if (key == "pattern" && (v == "prefix" || v == "arbitrary")) {
            s.arbitrary = v == "arbitrary";
        } else if (key == "legit-map" && (v == "same" || v == "other")) {
            s.legit_same_map = v == "same";
        } else if (key == "place" && (v == "early" || v == "late")) {
            s.early = v == "early";
        } else {
            *error = "'" + item +
                     "': keys are masks, fields, pattern (prefix|arbitrary), rules, "
                     "legit, legit-map (same|other), attack, place (early|late)";
            return std::nullopt;
        }
    }
    return s;
}

std::string tse_impossible(const TseShape& s) {
    if (!s.arbitrary) {
        size_t most = 1;
        for (TseField f : s.fields) most = std::min<size_t>(most * info(f).width, 1u << 30);
        const size_t reserved = s.legit_same_map ? s.legit : 0;
        if (s.masks + reserved > most) {
            return std::to_string(s.fields.size()) + " prefix field(s) make at most " +
                   std::to_string(most) + " masks" +
                   (reserved ? " (" + std::to_string(reserved) + " kept for the legitimate)" : "");
        }
    }
    if (s.masks * s.rules + s.legit * kLegitRules > kFlowLimit) {
        return std::to_string(s.masks * s.rules) + " attack megaflows: more than the " +
               std::to_string(kFlowLimit) + " of a PMD thread's flow limit";
    }
    if (s.legit_same_map) {
        // The legitimate masks shorten the widest field by one bit each.
        unsigned widest = 0;
        for (TseField f : s.fields) widest = std::max(widest, info(f).width);
        if (s.legit >= widest)
            return "legit-map=same: at most " + std::to_string(widest - 1) +
                   " legitimate subtables on these fields";
    }
    return "";
}

TseTables make_tse_tables(const TseShape& s) {
    TseTables t;
    const bool ipv6 = any_v6(s);
    const std::string eth_dst = "52:54:00:00:00:02";

    // The legitimate subtables and rules (UDP), and their tuples (same map).
    size_t widest = 0;
    for (size_t i = 0; i < s.fields.size(); i++) {
        if (info(s.fields[i]).width > info(s.fields[widest]).width) widest = i;
    }
    std::set<MaskTuple> reserved;
    std::vector<std::vector<Values>> legit_rules(s.legit);
    std::vector<std::string> legit_text;
    for (size_t sub = 0; sub < s.legit; sub++) {
        for (size_t k = 0; k < kLegitRules; k++) {
            Values v;
            if (s.legit_same_map) {
                // The attack's fields, all full but the widest, shortened by
                // `sub` bits; values from a base the attack does not use.
                MaskTuple tuple;
                for (size_t i = 0; i < s.fields.size(); i++) {
                    const unsigned w = info(s.fields[i]).width;
                    const Bits m = prefix_mask(w, i == widest ? w - unsigned(sub) : w);
                    tuple.push_back(m);
                    put(v, s.fields[i], random_bits(sub * 1000 + k * 10 + i + 99991, w), m);
                }
                reserved.insert(tuple);
            } else {
                // An address prefix of length 12 + sub (IPv6: 64 + sub), rule
                // k of it disjoint from the others ((len << 24) + (k << ...)).
                const unsigned len = (ipv6 ? 64 : 12) + unsigned(sub);
                const unsigned w = ipv6 ? 128 : 32;
                const Bits net = ipv6 ? (Bits(0xfd00 + len) << 112) | (Bits(k) << (128 - len))
                                      : (Bits(len) << 24) | (Bits(k) << (32 - len));
                put(v, ipv6 ? TseField::Dst6 : TseField::Dst4, net, prefix_mask(w, len));
            }
            legit_rules[sub].push_back(v);
            legit_text.push_back(megaflow(v, ipv6, 17, s.legit_same_map ? "" : eth_dst));
        }
    }

    // The attack's megaflows: rules per mask, each ACL rule's base with the
    // mask's flipped bit.
    const std::vector<MaskTuple> masks =
        s.arbitrary ? arbitrary_masks(s) : prefix_masks(s, reserved);
    std::vector<std::string> attack_text;
    std::set<std::string> distinct;
    auto attack_values = [&](size_t m, size_t r, uint64_t salt, bool frame) {
        Values v;
        for (size_t i = 0; i < s.fields.size(); i++) {
            const TseField f = s.fields[i];
            const unsigned w = info(f).width;
            const Bits mask = masks[m][i];
            const Bits rule = (attack_base(f, r) ^ flipped_bit(mask, w, s.arbitrary)) & mask;
            // A frame: the rule's bits, anything elsewhere (the attacker's
            // choice; here pseudo-random).
            put(v, f, frame ? rule | (random_bits(salt * 7 + i, w) & ~mask) : rule, mask);
        }
        return v;
    };
    for (size_t m = 0; m < masks.size(); m++) {
        for (size_t r = 0; r < s.rules; r++) {
            std::string text = megaflow(attack_values(m, r, 0, false), ipv6, 6);
            if (distinct.insert(text).second) attack_text.push_back(std::move(text));
        }
    }
    t.attack_rules = attack_text.size();

    // The packets: legitimate ones spread evenly over the legitimate rules;
    // attack frames over the masks (place=early: 90% on the first 16).
    const size_t n = kPoolBursts * kMaxBurst;
    auto legit_packet = [&](size_t i) {
        const size_t sub = i % s.legit, k = (i / s.legit) % kLegitRules;
        Values v = legit_rules[sub][k];
        for (int f = 0; f < 6; f++) {
            if (!v.set[f]) continue;
            const unsigned w = info(static_cast<TseField>(f)).width;
            v.value[f] = (v.value[f] & v.mask[f]) | (random_bits(i * 11 + f, w) & ~v.mask[f]);
        }
        return packet(v, ipv6, 17, eth_dst);
    };
    auto attack_packet = [&](size_t i) {
        const size_t h = splitmix(i);
        const size_t m = s.early && h % 10 != 0 ? h % std::min(kEarlyMasks, masks.size())
                                                : (h >> 8) % masks.size();
        const size_t r = (h >> 40) % s.rules;
        return packet(attack_values(m, r, i + 1, true), ipv6, 6, eth_dst);
    };
    t.before.name = t.during.name = t.legit.name = t.attack.name = s.spec();
    t.before.rules = legit_text;
    t.during.rules = legit_text;
    t.during.rules.insert(t.during.rules.end(), attack_text.begin(), attack_text.end());
    t.legit.rules = t.attack.rules = t.during.rules;
    t.before.flood = t.during.flood = t.legit.flood = t.attack.flood = true;
    for (size_t i = 0; i < n; i++) {
        t.legit.packets.push_back(legit_packet(i));
        t.attack.packets.push_back(attack_packet(i));
    }
    // The mix: an attack frame where the running share falls below
    // attack_pct; each kind in its own order, so that the legitimate
    // frames spread over every legitimate rule as they do alone.
    size_t attacks = 0, legits = 0;
    for (size_t i = 0; i < n; i++) {
        if ((attacks + 1) * 100 <= (i + 1) * s.attack_pct) {
            t.during.packets.push_back(t.attack.packets[attacks++]);
        } else {
            t.during.packets.push_back(t.legit.packets[legits++]);
        }
    }
    t.before.packets = t.legit.packets;
    t.before.what = std::to_string(s.legit) + " legitimate subtables of " +
                    std::to_string(kLegitRules) + " UDP rules each";
    t.during.what = t.before.what + ", " + std::to_string(masks.size()) + " attack masks with " +
                    std::to_string(t.attack_rules) + " megaflows";
    t.legit.what = t.during.what;
    t.attack.what = t.during.what;
    return t;
}

}  // namespace ovscls::perf
