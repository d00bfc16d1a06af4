// random_subtable.hpp: one subtable in OVS's own structs with random rules,
// the brute-force reference over the same rules, and keys of every kind
// (hit, miss, lacking words, extra words).  The fixture of the differential
// tests.
#pragma once

#include <vector>

#include "classifier/registry.hpp"
#include "generators.hpp"
#include "lookup_check.hpp"
#include "reference.hpp"
#include "standalone/builtin_lookups.hpp"

namespace ovscls::test {

// One subtable in OVS's structs with random rules, and the reference.
struct RandomSubtable {
    FlowKey mask;
    dpcls_subtable* subtable;
    std::vector<dpcls_rule*> rules;
    std::vector<FullFlow> rule_flows;
    ReferenceClassifier reference;

    // `registry` is told when the subtable dies (its JIT lets go of code).
    RandomSubtable(Gen& g, uint32_t u0, uint32_t u1, size_t n_rules,
                   const LookupRegistry& registry = builtin_registry())
        : mask(g.mask(u0, u1)), registry_(registry) {
        subtable = ovsb_subtable_create(ovs(&mask));
        for (size_t r = 0; r < n_rules; r++) {
            FullFlow flow = g.flow();
            dpcls_rule* rule = ovsb_rule_alloc();
            ovsb_key_init_masked(&ovs_key(rule), flow.data(), ovs(&mask));
            if (ovsb_subtable_find(subtable, &ovs_key(rule))) {
                ovsb_rule_free(rule);  // same masked key twice: not a new rule
                continue;
            }
            ovsb_subtable_insert(subtable, rule);
            rules.push_back(rule);
            rule_flows.push_back(flow);
            reference.add(mask, view(rule)->flow, rule);
        }
    }
    ~RandomSubtable() {
        registry_.release(subtable, nullptr);  // frees JIT code
        for (dpcls_rule* rule : rules) {
            ovsb_subtable_remove(subtable, rule);
            ovsb_rule_free_deferred(rule);
        }
        ovsb_subtable_destroy_deferred(subtable, nullptr, nullptr);
        ovsb_rcu_quiesce();
    }
    static netdev_flow_key& ovs_key(dpcls_rule* rule) { return *ovs(&view(rule)->flow); }
    RandomSubtable(const RandomSubtable&) = delete;
    RandomSubtable& operator=(const RandomSubtable&) = delete;

    // A key of one of the four kinds: hit, miss, lacking words, extra words.
    FlowKey random_key(Gen& g) {
        const uint32_t kind = g.below(4);
        FullFlow flow = g.flow();
        if (kind != 1 && !rules.empty()) {
            // Start from a rule's flow: identical on the mask's bits.
            const FullFlow& base = rule_flows[g.below(rules.size())];
            const FullFlow m = expand(mask);
            for (size_t w = 0; w < kFlowU64s; w++) {
                flow[w] = (base[w] & m[w]) | (flow[w] & ~m[w]);
            }
            if (g.chance(10)) {  // flip one bit somewhere: usually a miss
                flow[g.below(kFlowU64s)] ^= uint64_t{1} << g.below(64);
            }
        }
        return g.key(flow, mask, kind == 2 || g.chance(10), kind == 3 || g.chance(30));
    }

  private:
    const LookupRegistry& registry_;
};

}  // namespace ovscls::test
