// Realistic inputs: keys from OVS's miniflow_extract() over real frames, and
// masks from megaflows as operators see them in `dpctl/dump-flows -m`.
// Every implementation against OVS's generic and the reference.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>

#include "frames.hpp"
#include "lookup_impls.hpp"
#include "reference.hpp"

#ifndef CORPUS_DIR
#error "CORPUS_DIR must point at tests/corpus"
#endif

namespace ovscls::test {
namespace {

struct Megaflow {
    std::string line;
    FullFlow flow{}, wc{};
    FlowKey mask{};
    int reported_u0 = -1, reported_u1 = -1;  // dp-extra-info, when given
};

std::vector<Megaflow> load_megaflows() {
    std::ifstream in(std::string(CORPUS_DIR) + "/megaflows.txt");
    EXPECT_TRUE(in) << "cannot open the megaflow corpus";
    std::vector<Megaflow> out;
    std::string line;
    const std::regex bits(R"(miniflow_bits\((\d+),(\d+)\))");
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        Megaflow m;
        m.line = line;
        char err[256];
        if (ovsb_megaflow_parse(line.c_str(), m.flow.data(), m.wc.data(), err, sizeof err)) {
            ADD_FAILURE() << "cannot parse: " << line << "\n  " << err;
            continue;
        }
        if (!ovsb_mask_init(ovs(&m.mask), m.flow.data(), m.wc.data())) {
            ADD_FAILURE() << "mask does not fit: " << line;
            continue;
        }
        std::smatch sm;
        if (std::regex_search(line, sm, bits)) {
            m.reported_u0 = std::stoi(sm[1]);
            m.reported_u1 = std::stoi(sm[2]);
        }
        out.push_back(m);
    }
    return out;
}

std::vector<FlowKey> frame_keys(const std::vector<Frame>& frames, uint32_t in_port) {
    std::vector<FlowKey> keys;
    for (const Frame& f : frames) {
        FlowKey key{};
        ovsb_key_from_frame(ovs(&key), f.bytes.data(), f.bytes.size(), in_port);
        keys.push_back(key);
    }
    return keys;
}

TEST(Corpus, MegaflowFingerprintsMatchWhatOvsReports) {
    const auto megaflows = load_megaflows();
    ASSERT_GE(megaflows.size(), 25u);
    std::map<std::pair<int, int>, int> histogram;
    using Fingerprint = std::pair<int, int>;
    std::map<std::pair<Fingerprint, Fingerprint>, int> moved;  // 3.1 -> 4.0
    for (const Megaflow& m : megaflows) {
        const int u0 = std::popcount(m.mask.map.bits[0]);
        const int u1 = std::popcount(m.mask.map.bits[1]);
        histogram[{u0, u1}]++;
        if (m.reported_u0 < 0) {
            continue;
        }
        if (OVSCLS_OVS_VERSION < 40000) {
            EXPECT_EQ(u0, m.reported_u0) << m.line;
            EXPECT_EQ(u1, m.reported_u1) << m.line;
        } else {
            // The corpus was dumped by OVS 3.1.  OVS 4.0's struct flow has 8
            // more register words before the packet fields, which moves some
            // of them from the map's unit 0 to unit 1: the same megaflow
            // keeps its number of words, not their split.
            EXPECT_EQ(u0 + u1, m.reported_u0 + m.reported_u1) << m.line;
            moved[{{m.reported_u0, m.reported_u1}, {u0, u1}}]++;
        }
    }
    if (OVSCLS_OVS_VERSION >= 40000) {
        std::printf(
            "OVS 4.0: the split (u0,u1) NOT checked against the 3.1 dumps (their number "
            "of words is); fingerprint in 3.1 -> here: count\n");
        for (auto [fps, n] : moved) {
            std::printf("  (%d,%d) -> (%d,%d): %d\n", fps.first.first, fps.first.second,
                        fps.second.first, fps.second.second, n);
        }
    }
    std::printf("megaflow fingerprints (u0,u1): count\n");
    for (auto [fp, n] : histogram) {
        std::printf("  (%d,%d): %d\n", fp.first, fp.second, n);
    }
}

// For each megaflow mask: rules from frames' flows and from the megaflow's
// own flow; keys from miniflow_extract over every frame (well-formed,
// truncated, malformed) and over frames composed from each rule's flow.
TEST(Corpus, FramesAgainstMegaflowMasks) {
    const auto megaflows = load_megaflows();
    const auto frames = corpus_frames(24);
    const auto keys = frame_keys(frames, 1);
    uint64_t lookups = 0, hits = 0;
    std::map<std::string, uint64_t> served;  // lookups per implementation
    // A mask on conntrack state or a recirculation id: metadata, not a
    // packet's bytes ("ct_mark(0/0x1)", "recirc_id(0x2)").
    const std::regex packet_metadata(
        R"((ct_state|ct_zone|ct_mark|ct_label)\([^/)]*/(0x)?0*[1-9a-f]|recirc_id\((0x)?0*[1-9a-f]|ct_tuple[46]\()");
    size_t composed_skipped = 0;

    for (const Megaflow& m : megaflows) {
        dpcls_subtable* subtable = ovsb_subtable_create(ovs(&m.mask));
        ReferenceClassifier reference;
        std::vector<dpcls_rule*> rules;
        auto add_rule = [&](const uint64_t* flow) {
            dpcls_rule* rule = ovsb_rule_alloc();
            ovsb_key_init_masked(ovs(&view(rule)->flow), flow, ovs(&m.mask));
            if (ovsb_subtable_find(subtable, ovs(&view(rule)->flow))) {
                ovsb_rule_free(rule);
                return;
            }
            ovsb_subtable_insert(subtable, rule);
            reference.add(m.mask, view(rule)->flow, rule);
            rules.push_back(rule);
        };
        add_rule(m.flow.data());
        // Rules from every other frame: the rest of the keys are misses.
        for (size_t i = 0; i < keys.size(); i += 2) {
            FullFlow flow{};
            ovsb_key_expand(ovs(&keys[i]), flow.data());
            add_rule(flow.data());
        }
        // Keys: all frames, the megaflow's flow as a packet key (what a
        // decapsulated packet with that tunnel metadata extracts to), and
        // the frame OVS composes from the megaflow (no frame carries tunnel,
        // conntrack or recirculation metadata, so only for megaflows that
        // match none: OVN's, after ct(), do).
        std::vector<FlowKey> all = keys;
        FlowKey own{};
        ovsb_key_from_flow(ovs(&own), m.flow.data());
        EXPECT_EQ(reference.matches(own).size(), 1u) << m.line;
        all.push_back(own);
        uint8_t buf[2048];
        const bool has_tunnel = m.line.find("tunnel(") != std::string::npos;
        const bool has_metadata = std::regex_search(m.line, packet_metadata);
        composed_skipped += has_tunnel || has_metadata;
        if (size_t len = has_tunnel || has_metadata
                             ? 0
                             : ovsb_frame_compose(m.flow.data(), buf, sizeof buf)) {
            FlowKey key{};
            ovsb_key_from_frame(ovs(&key), buf, len, 1);
            all.push_back(key);
            // flow_compose() writes a frame whose extracted flow equals the
            // megaflow's flow on every matched field: it must hit.
            std::string diff;
            const FullFlow got = expand(key), mask = expand(m.mask);
            for (size_t w = 0; w < kFlowU64s; w++) {
                if ((got[w] & mask[w]) != (m.flow[w] & mask[w])) {
                    char s[96];
                    std::snprintf(s, sizeof s, " word %zu: %016llx vs %016llx", w,
                                  (unsigned long long)(got[w] & mask[w]),
                                  (unsigned long long)(m.flow[w] & mask[w]));
                    diff += s;
                }
            }
            EXPECT_EQ(reference.matches(key).size(), 1u)
                << "composed frame misses:" << diff << "\n  " << m.line;
        }

        const ovsb_lookup_func truth = ovs_truth(subtable);
        const auto impls = lookups_for(subtable, builtin_registry());
        for (size_t start = 0; start < all.size(); start += kMaxBurst) {
            const size_t cnt = std::min<size_t>(kMaxBurst, all.size() - start);
            const netdev_flow_key* ptrs[kMaxBurst];
            for (size_t i = 0; i < cnt; i++) {
                ptrs[i] = ovs(&all[start + i]);
            }
            const uint32_t keys_map = cnt == 32 ? ~0u : (1u << cnt) - 1;
            dpcls_rule* expected[kMaxBurst] = {};
            const uint32_t expected_found = truth(subtable, keys_map, ptrs, expected);
            hits += std::popcount(expected_found);
            for (size_t i = 0; i < cnt; i++) {
                const auto matches = reference.matches(all[start + i]);
                ASSERT_EQ(!matches.empty(), bool(expected_found >> i & 1)) << m.line;
                if (!matches.empty()) {
                    ASSERT_EQ(matches[0], expected[i]);
                }
            }
            for (const NamedLookup& impl : impls) {
                dpcls_rule* got[kMaxBurst] = {};
                const uint32_t found = impl.fn(subtable, keys_map, ptrs, got);
                lookups += cnt;
                served[impl.name] += cnt;
                ASSERT_EQ(found, expected_found) << impl.name << " on " << m.line;
                for (uint32_t map = found; map; map &= map - 1) {
                    ASSERT_EQ(got[std::countr_zero(map)], expected[std::countr_zero(map)])
                        << impl.name;
                }
            }
        }
        for (dpcls_rule* rule : rules) {
            ovsb_subtable_remove(subtable, rule);
            ovsb_rule_free_deferred(rule);
        }
        builtin_registry().release(subtable, nullptr);
        ovsb_subtable_destroy_deferred(subtable, nullptr, nullptr);
        ovsb_rcu_quiesce();
    }
    std::printf("frames %zu, megaflows %zu, lookups %llu, hits %llu\n", frames.size(),
                megaflows.size(), static_cast<unsigned long long>(lookups),
                static_cast<unsigned long long>(hits));
    std::printf(
        "NOT checked: a frame composed from the megaflow, for %zu megaflows that match "
        "tunnel, conntrack or recirculation metadata (no frame carries it; their own "
        "flow's key is looked up instead)\n",
        composed_skipped);
    EXPECT_GT(hits, megaflows.size());
    expect_every_implementation_served(served, true);
}

}  // namespace
}  // namespace ovscls::test
