#include "tail/tuple_trie.hpp"

#include <cstdlib>
#include <new>

#include "classifier/ovs_services.h"

namespace ovscls::tail {
namespace {

size_t kids_bytes(uint64_t mask) { return sizeof(uint64_t) + std::popcount(mask) * sizeof(void*); }

void free_cb(void* p) { std::free(p); }

}  // namespace

TupleTrie::~TupleTrie() {
    if (levels_ == 0) {
        delete single_.load(std::memory_order_relaxed);
        return;
    }
    free_node(&root_, 0);
}

// Frees what hangs below `node` (at `level`) now, and its child array.
void TupleTrie::free_node(Node* node, unsigned level) {
    const Kids* kids = node->kids.load(std::memory_order_relaxed);
    if (!kids) {
        return;
    }
    for (int i = 0; i < std::popcount(kids->mask); i++) {
        if (level + 1 == levels_) {
            delete static_cast<TupleLeaf*>(kids->ptr[i]);
        } else {
            auto* child = static_cast<Node*>(kids->ptr[i]);
            free_node(child, level + 1);
            delete child;
        }
    }
    std::free(const_cast<Kids*>(kids));
}

const TupleTrie::Kids* TupleTrie::with(const Kids* kids, unsigned id, void* child) {
    const uint64_t old_mask = kids ? kids->mask : 0;
    const uint64_t bit = uint64_t{1} << id;
    const uint64_t mask = child ? old_mask | bit : old_mask & ~bit;
    if (!mask) {
        return nullptr;
    }
    auto* out = static_cast<Kids*>(std::malloc(kids_bytes(mask)));
    if (!out) {
        throw std::bad_alloc();
    }
    out->mask = mask;
    for (uint64_t m = mask; m; m &= m - 1) {
        const unsigned i = std::countr_zero(m);
        out->ptr[index_of(mask, i)] = i == id ? child : kids->ptr[index_of(old_mask, i)];
    }
    bytes_ += kids_bytes(mask);
    return out;
}

void TupleTrie::retire(const Kids* kids) {
    if (kids) {
        bytes_ -= kids_bytes(kids->mask);
        ovsb_rcu_postpone(free_cb, const_cast<Kids*>(kids));
    }
}

bool TupleTrie::insert(const uint8_t ids[], uint32_t slot, const dpcls_subtable* subtable) {
    if (levels_ == 0) {
        if (single_.load(std::memory_order_relaxed)) {
            return false;
        }
        bytes_ += sizeof(TupleLeaf);
        single_.store(new TupleLeaf{slot, subtable}, std::memory_order_release);
        return true;
    }
    Node* node = &root_;
    for (unsigned level = 0; level < levels_; level++) {
        const Kids* kids = node->kids.load(std::memory_order_relaxed);
        const uint64_t bit = uint64_t{1} << ids[level];
        if (kids && (kids->mask & bit)) {
            if (level + 1 == levels_) {
                return false;  // present
            }
            node = static_cast<Node*>(kids->ptr[index_of(kids->mask, ids[level])]);
            continue;
        }
        // A new branch: the child is complete (a leaf, or an empty node
        // filled below) before readers can reach it; an empty node holds
        // nothing for them.
        void* child;
        if (level + 1 == levels_) {
            child = new TupleLeaf{slot, subtable};
            bytes_ += sizeof(TupleLeaf);
        } else {
            child = new Node;
            bytes_ += sizeof(Node);
        }
        node->kids.store(with(kids, ids[level], child), std::memory_order_release);
        retire(kids);
        if (level + 1 < levels_) {
            node = static_cast<Node*>(child);
        }
    }
    return true;
}

bool TupleTrie::remove(const uint8_t ids[]) {
    if (levels_ == 0) {
        const TupleLeaf* leaf = single_.exchange(nullptr, std::memory_order_acq_rel);
        if (!leaf) {
            return false;
        }
        bytes_ -= sizeof(TupleLeaf);
        ovsb_rcu_postpone([](void* p) { delete static_cast<TupleLeaf*>(p); },
                          const_cast<TupleLeaf*>(leaf));
        return true;
    }
    Node* path[kMaxLevels];
    path[0] = &root_;
    void* leaf = nullptr;
    for (unsigned level = 0; level < levels_; level++) {
        const Kids* kids = path[level]->kids.load(std::memory_order_relaxed);
        if (!kids || !(kids->mask & (uint64_t{1} << ids[level]))) {
            return false;
        }
        void* child = kids->ptr[index_of(kids->mask, ids[level])];
        if (level + 1 == levels_) {
            leaf = child;
        } else {
            path[level + 1] = static_cast<Node*>(child);
        }
    }
    // From the leaf up: drop the child from its parent; go on while the
    // parent is left with no child.
    for (unsigned level = levels_; level-- > 0;) {
        const Kids* kids = path[level]->kids.load(std::memory_order_relaxed);
        const Kids* rest = with(kids, ids[level], nullptr);
        path[level]->kids.store(rest, std::memory_order_release);
        retire(kids);
        if (level + 1 == levels_) {
            bytes_ -= sizeof(TupleLeaf);
            ovsb_rcu_postpone([](void* p) { delete static_cast<TupleLeaf*>(p); }, leaf);
        } else {
            bytes_ -= sizeof(Node);
            ovsb_rcu_postpone([](void* p) { delete static_cast<Node*>(p); }, path[level + 1]);
        }
        if (rest || level == 0) {
            break;
        }
    }
    return true;
}

}  // namespace ovscls::tail
