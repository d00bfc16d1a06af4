// reference.hpp: a brute-force classifier, independent of OVS and of the
// lookups under test.  A rule is a full-width mask and masked value over all
// of struct flow's words; a key is expanded to a full flow (words absent
// from its miniflow are zero, as in OVS) and compared with every rule.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "classifier/layout.hpp"
#include "classifier/miniflow.hpp"

namespace ovscls::test {

using ovscls::expand;
using ovscls::FullFlow;

class ReferenceClassifier {
  public:
    void add(const FlowKey& mask, const FlowKey& rule_key, const void* rule) {
        entries_.push_back({expand(mask), expand(rule_key), rule});
    }
    void remove(const void* rule) {
        std::erase_if(entries_, [rule](const Entry& e) { return e.rule == rule; });
    }
    // Every rule the key matches.
    std::vector<const void*> matches(const FlowKey& key) const {
        const FullFlow flow = expand(key);
        std::vector<const void*> out;
        for (const Entry& e : entries_) {
            bool match = true;
            for (size_t w = 0; w < kFlowU64s && match; w++) {
                match = (flow[w] & e.mask[w]) == e.value[w];
            }
            if (match) {
                out.push_back(e.rule);
            }
        }
        return out;
    }
    // For one subtable's rules (at most one can match a key): a lookup that
    // found `rule` for `key` (or found nothing) agrees with the reference.
    bool agrees_within_subtable(const FlowKey& key, bool found, const void* rule) const {
        const auto m = matches(key);
        return m.size() <= 1 && found == !m.empty() && (!found || m[0] == rule);
    }
    size_t size() const { return entries_.size(); }

  private:
    struct Entry {
        FullFlow mask, value;
        const void* rule;
    };
    std::vector<Entry> entries_;
};

}  // namespace ovscls::test
