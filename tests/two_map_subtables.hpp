// two_map_subtables.hpp: two subtables whose packets carry different
// miniflow maps, for the tests of what one subtable's traffic may do to
// another's JIT code: A (a (4,1) mask) with packets of map X, B (a (3,2)
// mask) with packets of map Y, 50 rules each.  jit_test checks that B's
// packets passing through A do not tier A up to Y; fused_test that A and B
// are not fused, and that the declined offer is counted.
#pragma once

#include <utility>
#include <vector>

#include "classifier/classifier.hpp"
#include "classifier/miniflow.hpp"
#include "generators.hpp"

namespace ovscls::test {

struct TwoMapSubtables {
    FlowKey mask_a, mask_b;
    std::vector<FullFlow> flows_a, flows_b;  // one rule each, in A and in B
    MiniflowMap map_x{}, map_y{};            // A's mask map and 3 words more, B's and 5 more

    explicit TwoMapSubtables(Gen& g) : mask_a(g.mask(4, 1)), mask_b(g.mask(3, 2)) {
        for (int i = 0; i < 50; i++) {
            flows_a.push_back(g.flow());
            flows_b.push_back(g.flow());
        }
        map_x = mask_a.map;
        map_x.bits[0] |= g.bits(3, 64);
        map_y = mask_b.map;
        map_y.bits[0] |= g.bits(5, 64);
    }

    // Inserts the rules into `cls`.  Out: false when it refused one.
    bool insert_into(Classifier& cls) const {
        for (size_t i = 0; i < flows_a.size(); i++) {
            if (!cls.insert(mask_a, flows_a[i].data()) || !cls.insert(mask_b, flows_b[i].data())) {
                return false;
            }
        }
        return true;
    }

    // A packet of one of A's rules, with map X; of one of B's, with map Y.
    FlowKey key_of_a(Gen& g) const {
        return make_key(map_x, flows_a[g.below(flows_a.size())].data());
    }
    FlowKey key_of_b(Gen& g) const {
        return make_key(map_y, flows_b[g.below(flows_b.size())].data());
    }

    // One burst of kMaxBurst packets through `cls`: `of_a` of A's and the
    // rest of B's, at random places.  Out: false when a packet matched no
    // rule (every one has its rule).
    bool lookup_burst(Classifier& cls, Gen& g, uint32_t of_a) const {
        bool is_a[kMaxBurst];
        for (uint32_t i = 0; i < kMaxBurst; i++) {
            is_a[i] = i < of_a;
        }
        for (uint32_t i = kMaxBurst - 1; i > 0; i--) {
            std::swap(is_a[i], is_a[g.below(i + 1)]);
        }
        FlowKey keys[kMaxBurst];
        const netdev_flow_key* ptrs[kMaxBurst];
        dpcls_rule* rules[kMaxBurst];
        for (uint32_t i = 0; i < kMaxBurst; i++) {
            keys[i] = is_a[i] ? key_of_a(g) : key_of_b(g);
            ptrs[i] = ovs(&keys[i]);
        }
        return cls.lookup(ptrs, kMaxBurst, rules);
    }
};

}  // namespace ovscls::test
