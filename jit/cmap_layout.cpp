#include "jit/cmap_layout.hpp"

#include <cstdint>
#include <cstring>

#include "classifier/hash.hpp"
#include "classifier/layout.hpp"
#include "classifier/ovs_abi.h"
// cmap_init(), cmap_insert()...: OVS's exported functions on `struct cmap`
// (one pointer) and `struct cmap_node` (one pointer), both mirrored in
// classifier/layout.hpp as Cmap and CmapNode.
#include "classifier/ovs_functions.h"

namespace ovscls::jit {
namespace {

uint32_t u32_at(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

const void* ptr_at(const uint8_t* p) {
    const void* v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// How many lanes of bucket `b` hold `node` under `hash`.
int lanes_holding(const uint8_t* impl, uint32_t b, uint32_t hash, const CmapNode* node) {
    const uint8_t* bucket = impl + OVSCLS_CMAP_IMPL_OFF_BUCKETS + OVSCLS_CMAP_BUCKET_SIZE * b;
    int found = 0;
    for (int j = 0; j < OVSCLS_CMAP_BUCKET_ENTRIES; j++) {
        found += u32_at(bucket + OVSCLS_CMAP_BUCKET_OFF_HASHES + 4 * j) == hash &&
                 ptr_at(bucket + OVSCLS_CMAP_BUCKET_OFF_NODES + sizeof(void*) * j) == node;
    }
    return found;
}

// Fills a cmap with kNodes nodes of distinct hashes, then finds each node in
// one of its two candidate buckets (lib/cmap.c: rehash() is
// hash_finish(basis, hash); the second candidate is the first rotated by 16)
// exactly once.  Empty when it matches.
std::string check() {
    constexpr int kNodes = 40;  // more than one bucket's worth: mask > 0
    static CmapNode nodes[kNodes];
    Cmap cmap;
    // OVS's functions take OVS's structs, which Cmap and CmapNode mirror.
    auto* ovs_cmap = reinterpret_cast<struct cmap*>(&cmap);
    auto ovs_node = [](CmapNode* node) { return reinterpret_cast<struct cmap_node*>(node); };
    cmap_init(ovs_cmap);
    for (int i = 0; i < kNodes; i++) {
        cmap_insert(ovs_cmap, ovs_node(&nodes[i]), 0x9e3779b9u * static_cast<uint32_t>(i + 1));
    }
    const auto* impl = static_cast<const uint8_t*>(cmap.impl.load(std::memory_order_acquire));
    std::string why;
    const uint32_t n = u32_at(impl + OVSCLS_CMAP_IMPL_OFF_N);
    const uint32_t mask = u32_at(impl + OVSCLS_CMAP_IMPL_OFF_MASK);
    const uint32_t basis = u32_at(impl + OVSCLS_CMAP_IMPL_OFF_BASIS);
    if (n != kNodes) {
        why = "cmap_impl.n reads " + std::to_string(n) + " after " + std::to_string(kNodes) +
              " insertions";
    } else if (mask == 0 || (mask & (mask + 1)) != 0 ||
               uint64_t{mask + 1} * OVSCLS_CMAP_BUCKET_ENTRIES < kNodes) {
        why = "cmap_impl.mask reads " + std::to_string(mask) + ", not buckets - 1";
    } else {
        for (int i = 0; i < kNodes && why.empty(); i++) {
            const uint32_t hash = 0x9e3779b9u * static_cast<uint32_t>(i + 1);
            const uint32_t h1 = hash::finish(basis, hash);
            const uint32_t h2 = (h1 << 16) | (h1 >> 16);
            int found = lanes_holding(impl, h1 & mask, hash, &nodes[i]);
            if ((h2 & mask) != (h1 & mask)) {
                found += lanes_holding(impl, h2 & mask, hash, &nodes[i]);
            }
            if (found != 1) {
                why = "node " + std::to_string(i) + " found " + std::to_string(found) +
                      " times in its candidate buckets, not once";
            }
        }
    }
    for (int i = 0; i < kNodes; i++) {
        cmap_replace(ovs_cmap, ovs_node(&nodes[i]), nullptr,
                     0x9e3779b9u * static_cast<uint32_t>(i + 1));
    }
    cmap_destroy(ovs_cmap);  // frees the impl after an RCU grace period
    return why;
}

}  // namespace

bool cmap_layout_matches(std::string* why) {
    static const std::string result = check();
    if (!result.empty() && why != nullptr) {
        *why = "OVS's cmap is not laid out as classifier/ovs_abi.h says: " + result;
    }
    return result.empty();
}

}  // namespace ovscls::jit
