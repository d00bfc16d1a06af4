// The classifier's and registry's contracts: misuse gets a clear error,
// registry selection follows OVS 3.1's rules, ranking follows hits.
#include "classifier/classifier.hpp"

#include <gtest/gtest.h>

#include <set>

#include "generators.hpp"
#include "lookups/lookups.hpp"
#include "standalone/builtin_lookups.hpp"

namespace ovscls::test {
namespace {

FullFlow some_flow(uint64_t seed) {
    Gen g(seed);
    return g.flow();
}

TEST(Classifier, DuplicateInsertIsRejected) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    Classifier cls(registry);
    Gen g(1);
    const FlowKey mask = g.mask(4, 1);
    const FullFlow flow = some_flow(2);
    ASSERT_TRUE(cls.insert(mask, flow.data()));
    const Status again = cls.insert(mask, flow.data());
    ASSERT_FALSE(again);
    EXPECT_NE(again.message().find("duplicate rule"), std::string::npos) << again.message();
    EXPECT_EQ(cls.rule_count(), 1u);
}

TEST(Classifier, RemovingAnUnknownRuleIsAnError) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    Classifier cls(registry), other(registry);
    Gen g(3);
    const FlowKey mask = g.mask(5, 0);
    const FullFlow flow = some_flow(4);
    dpcls_rule* rule = nullptr;
    ASSERT_TRUE(other.insert(mask, flow.data(), &rule));
    EXPECT_FALSE(cls.remove(rule));  // belongs to another classifier
    EXPECT_FALSE(cls.remove(nullptr));
    EXPECT_TRUE(other.remove(rule));
    const Status twice = other.remove(rule);
    EXPECT_FALSE(twice);
    EXPECT_NE(twice.message().find("rule not found"), std::string::npos);
    ovsb_rcu_quiesce();
}

TEST(Classifier, InvalidMasksAreRejected) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    Classifier cls(registry);
    Gen g(5);
    const FullFlow flow = some_flow(6);

    FlowKey beyond = g.mask(2, 1);
    beyond.map.bits[1] |= uint64_t{1} << 40;  // struct flow has 84 words
    EXPECT_NE(cls.insert(beyond, flow.data()).message().find("beyond"), std::string::npos);

    FlowKey zero_block = g.mask(3, 0);
    zero_block.values[1] = 0;
    EXPECT_NE(cls.insert(zero_block, flow.data()).message().find("zero"), std::string::npos);

    FlowKey bad_len = g.mask(3, 0);
    bad_len.len += 8;
    EXPECT_NE(cls.insert(bad_len, flow.data()).message().find("length"), std::string::npos);

    FlowKey too_many{};
    too_many.map.bits[0] = ~uint64_t{0};
    too_many.map.bits[1] = 0xff;  // 72 blocks
    EXPECT_NE(cls.insert(too_many, flow.data()).message().find("more than"), std::string::npos);
    EXPECT_EQ(cls.rule_count(), 0u);
    EXPECT_TRUE(cls.subtables().empty());
}

TEST(Classifier, InvalidKeysMissAndAreCounted) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    Classifier cls(registry);
    Gen g(7);
    const FlowKey mask = g.mask(4, 1);
    const FullFlow flow = some_flow(8);
    ASSERT_TRUE(cls.insert(mask, flow.data()));

    FlowKey good = g.key(flow, mask, false, false);
    FlowKey bad = good;
    bad.map.bits[1] |= uint64_t{1} << 63;
    const netdev_flow_key* keys[] = {ovs(&good), ovs(&bad)};
    dpcls_rule* rules[2];
    EXPECT_FALSE(cls.lookup(keys, 2, rules));
    EXPECT_NE(rules[0], nullptr);
    EXPECT_EQ(rules[1], nullptr);
    EXPECT_EQ(cls.invalid_keys(), 1u);
}

TEST(Classifier, EmptySubtableIsDestroyedAndRankingFollowsHits) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    Classifier cls(registry);
    Gen g(9);
    const FlowKey mask_a = g.mask(4, 0), mask_b = g.mask(4, 2);
    const FullFlow fa = some_flow(10), fb = some_flow(11);
    dpcls_rule *ra, *rb;
    ASSERT_TRUE(cls.insert(mask_a, fa.data(), &ra));
    ASSERT_TRUE(cls.insert(mask_b, fb.data(), &rb));
    auto subtables = cls.subtables();
    ASSERT_EQ(subtables.size(), 2u);
    EXPECT_EQ(subtables[0].u1, 0u);  // insertion order: a first

    // Hit b three times, a once: after sorting, b ranks first.
    FlowKey kb = g.key(fb, mask_b, false, true), ka = g.key(fa, mask_a, false, true);
    const netdev_flow_key* keys[] = {ovs(&kb), ovs(&kb), ovs(&kb), ovs(&ka)};
    dpcls_rule* rules[4];
    int lookups = 0;
    ASSERT_TRUE(cls.lookup(keys, 4, rules, &lookups));
    EXPECT_EQ(rules[0], rb);
    EXPECT_EQ(rules[3], ra);
    EXPECT_EQ(lookups, 3 * 2 + 1);  // b's keys matched in the 2nd subtable
    cls.sort_subtables();
    subtables = cls.subtables();
    EXPECT_EQ(subtables[0].u1, 2u);
    ASSERT_TRUE(cls.lookup(keys, 4, rules, &lookups));
    EXPECT_EQ(lookups, 3 + 2);

    ASSERT_TRUE(cls.remove(rb));
    ASSERT_EQ(cls.subtables().size(), 1u);
    EXPECT_FALSE(cls.lookup(keys, 1, rules));
    ovsb_rcu_quiesce();
}

ovsb_lookup_func decline(void*, const ProbeContext&) { return nullptr; }

TEST(Registry, BestIsHighestPriorityThatAccepts) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    // Built-ins: generic 1, specialized 2.
    EXPECT_EQ(registry.best_for({4, 1, nullptr}).impl->name, "specialized");
    EXPECT_EQ(registry.best_for({3, 3, nullptr}).impl->name, "generic");  // not listed
    ASSERT_TRUE(registry.add({"never", 200, decline, nullptr, nullptr}));
    EXPECT_EQ(registry.best_for({4, 1, nullptr}).impl->name, "specialized");
    // Equal priorities: the earlier entry wins.
    ASSERT_TRUE(registry.set_priority("generic", 2));
    EXPECT_EQ(registry.best_for({4, 1, nullptr}).impl->name, "generic");
}

TEST(Registry, SetPriorityReprobesLiveSubtablesAndCountsThem) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    Classifier cls(registry);
    Gen g(12);
    for (auto [u0, u1] : {std::pair{4u, 1u}, {5u, 0u}, {3u, 3u}}) {
        const FullFlow f = some_flow(u0 * 8 + u1);
        ASSERT_TRUE(cls.insert(g.mask(u0, u1), f.data()));
    }
    EXPECT_EQ(registry.find("specialized")->use_count.load(), 2);
    EXPECT_EQ(registry.find("generic")->use_count.load(), 1);
    uint32_t changed = 0;
    ASSERT_TRUE(registry.set_priority("generic", 10, &changed));
    EXPECT_EQ(changed, 2u);
    EXPECT_EQ(registry.find("generic")->use_count.load(), 3);
    for (const auto& s : cls.subtables()) {
        EXPECT_EQ(s.impl, "generic");
    }
    EXPECT_EQ(registry.info(), std::string("Available dpcls implementations:\n"
                                           "  generic (Use count: 3, Priority: 10)\n"
                                           "  specialized (Use count: 0, Priority: 2)\n") +
                                   (jit_built() ? "  jit_avx2 (Use count: 0, Priority: 3)\n" : ""))
        << jit_build_note();
}

TEST(Registry, BadInputGetsClearErrors) {
    LookupRegistry registry;
    add_builtin_lookups(registry);
    const Status unknown = registry.set_priority("nosuch", 5);
    EXPECT_EQ(unknown.message(),
              std::string("unknown lookup implementation 'nosuch' (available: generic, "
                          "specialized") +
                  (jit_built() ? ", jit_avx2)" : ")"));
    const Status range = registry.set_priority("generic", 256);
    EXPECT_EQ(range.message(), "priority 256 is out of range: use 0 to 255");
    EXPECT_FALSE(registry.set_priority("generic", -1));
    EXPECT_FALSE(registry.add({"generic", 3, decline, nullptr, nullptr}));
    EXPECT_EQ(registry.find("generic")->priority.load(), 1u);
}

TEST(Registry, SpecializedListHoldsOvsEightAndMore) {
    std::set<std::pair<uint32_t, uint32_t>> listed;
    for (const Fingerprint& fp : specialized_fingerprints()) {
        listed.insert({fp.u0, fp.u1});
        EXPECT_NE(specialized_probe({fp.u0, fp.u1, nullptr}), nullptr);
    }
    for (auto fp : {std::pair{9u, 4u},
                    {9u, 1u},
                    {8u, 1u},
                    {5u, 3u},
                    {5u, 2u},
                    {5u, 1u},
                    {4u, 6u},
                    {4u, 4u},
                    {8u, 2u},
                    {10u, 1u},
                    {4u, 1u},
                    {4u, 0u},
                    {5u, 0u},
                    {4u, 2u},
                    {4u, 3u}}) {
        EXPECT_TRUE(listed.count(fp)) << fp.first << "," << fp.second;
    }
    EXPECT_EQ(specialized_probe({15, 15, nullptr}), nullptr);
}

}  // namespace
}  // namespace ovscls::test
