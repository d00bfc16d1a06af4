#include "tail/lane_trie.hpp"

#include "classifier/ovs_services.h"

namespace ovscls::tail {

LaneTrie::~LaneTrie() {
    for (auto& child : root_.child) {
        free_subtree(child.load(std::memory_order_relaxed));
    }
}

void LaneTrie::free_subtree(Node* node) {
    while (node) {  // the recursion goes down one side, the loop the other
        free_subtree(node->child[0].load(std::memory_order_relaxed));
        Node* next = node->child[1].load(std::memory_order_relaxed);
        delete node;
        node = next;
    }
}

void LaneTrie::free_subtree_cb(void* node) { free_subtree(static_cast<Node*>(node)); }

size_t LaneTrie::insert(uint16_t value, unsigned depth) {
    size_t made = 0;
    Node* node = &root_;
    node->below++;
    for (unsigned d = 0; d < depth; d++) {
        auto& slot = node->child[(value >> (kLaneBits - 1 - d)) & 1];
        Node* next = slot.load(std::memory_order_relaxed);
        if (!next) {
            next = new Node;
            made++;
            // Release: a reader that finds the node finds it initialized.
            slot.store(next, std::memory_order_release);
        }
        node = next;
        node->below++;
    }
    node->rules.fetch_add(1, std::memory_order_release);
    nodes_ += made;
    return made;
}

size_t LaneTrie::remove(uint16_t value, unsigned depth) {
    // The path, and the first node on it that no rule will be at or below.
    Node* path[kLaneBits + 1];
    path[0] = &root_;
    for (unsigned d = 0; d < depth; d++) {
        path[d + 1] =
            path[d]->child[(value >> (kLaneBits - 1 - d)) & 1].load(std::memory_order_relaxed);
        if (!path[d + 1]) {
            return 0;  // not there: the caller's bug, and nothing to undo
        }
    }
    path[depth]->rules.fetch_sub(1, std::memory_order_relaxed);
    unsigned cut = depth + 1;  // none
    for (unsigned d = 0; d <= depth; d++) {
        if (--path[d]->below == 0 && d > 0 && cut > depth) {
            cut = d;
        }
    }
    if (cut > depth) {
        return 0;
    }
    // Unlink path[cut] and free it once no reader can be on it.  Below it
    // hangs only the rest of this path: removals unlink every node that
    // holds no rule at or below it, so no other node is there.
    const size_t freed = depth - cut + 1;
    path[cut - 1]->child[(value >> (kLaneBits - cut)) & 1].store(nullptr,
                                                                 std::memory_order_release);
    ovsb_rcu_postpone(free_subtree_cb, path[cut]);
    nodes_ -= freed;
    return freed;
}

}  // namespace ovscls::tail
