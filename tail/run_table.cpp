// run_table.cpp: see run_table.hpp.
#include "tail/run_table.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

#include "classifier/ovs_services.h"

namespace ovscls::tail {
namespace {

uint16_t prefix_mask(unsigned depth) {
    return depth ? static_cast<uint16_t>(0xffffu << (kLaneBits - depth)) : 0;
}

unsigned home(uint16_t value, uint32_t capacity) {
    const uint64_t h = (uint64_t{value} + 1) * 0x9e3779b97f4a7c15ull;
    return static_cast<unsigned>(h >> 32) & (capacity - 1);
}

void free_cb(void* p) { std::free(p); }

}  // namespace

uint64_t RunLengths::clamped(unsigned lo, unsigned hi) const {
    const unsigned n = hi - lo + 1;  // <= 64
    const unsigned word = lo / 64, shift = lo % 64;
    uint64_t bits = w[word] >> shift;
    if (shift && word + 1 < kRunLengthWords) {
        bits |= w[word + 1] << (64 - shift);
    }
    uint64_t out = n == 64 ? bits : bits & ((uint64_t{1} << n) - 1);
    bool below = shift && (w[word] & ((uint64_t{1} << shift) - 1));
    for (unsigned i = 0; i < word; i++) {
        below = below || w[i];
    }
    bool above = false;
    const unsigned next = hi + 1;
    if (next / 64 < kRunLengthWords) {
        above = (w[next / 64] >> (next % 64)) != 0;
        for (unsigned i = next / 64 + 1; i < kRunLengthWords; i++) {
            above = above || w[i];
        }
    }
    return out | uint64_t{below} | uint64_t{above} << (n - 1);
}

RunTable::RunTable(unsigned lanes) : lanes_(lanes) { bytes_ = sizeof(*this); }

RunTable::~RunTable() {
    // The root's parts; free_node() frees what hangs below it.
    Kids* kids = root_.kids.load(std::memory_order_relaxed);
    for (uint32_t i = 0; kids && i < kids->capacity; i++) {
        if (Node* n = kids->slot[i].node.load(std::memory_order_relaxed)) {
            free_node(n);
        }
    }
    std::free(kids);
    std::free(const_cast<Ends*>(root_.small.load(std::memory_order_relaxed)));
    delete root_.table.load(std::memory_order_relaxed);
}

void RunTable::free_node(Node* node) {
    Kids* kids = node->kids.load(std::memory_order_relaxed);
    for (uint32_t i = 0; kids && i < kids->capacity; i++) {
        if (Node* n = kids->slot[i].node.load(std::memory_order_relaxed)) {
            free_node(n);
        }
    }
    std::free(kids);
    std::free(const_cast<Ends*>(node->small.load(std::memory_order_relaxed)));
    delete node->table.load(std::memory_order_relaxed);
    delete node;
}

// After a grace period: a node that was unlinked with no rule, so with no
// child left either.
void RunTable::free_node_cb(void* p) {
    auto* node = static_cast<Node*>(p);
    std::free(node->kids.load(std::memory_order_relaxed));
    std::free(const_cast<Ends*>(node->small.load(std::memory_order_relaxed)));
    delete node->table.load(std::memory_order_relaxed);
    delete node;
}

size_t RunTable::low_tables() const { return low_tables_; }

size_t RunTable::node_bytes(const Node& node) {
    size_t out = sizeof(Node) + node.counts.capacity() * sizeof(node.counts[0]);
    if (const Ends* e = node.small.load(std::memory_order_relaxed)) {
        out += sizeof(Ends) + e->n * sizeof(End);
    }
    if (const LaneTable* t = node.table.load(std::memory_order_relaxed)) {
        out += t->bytes();
    }
    if (const Kids* k = node.kids.load(std::memory_order_relaxed)) {
        out += sizeof(Kids) + k->capacity * sizeof(Kids::Slot);
    }
    return out;
}

// ---- reader side ----

uint32_t RunTable::depths_of(const Node& node, uint16_t value) {
    // `small` first: once it is null, `table` (stored before it) serves.
    if (const Ends* e = node.small.load(std::memory_order_acquire)) {
        uint32_t out = 0;
        for (uint32_t i = 0; i < e->n; i++) {
            out |= uint32_t{(value & e->e[i].mask) == e->e[i].prefix} << e->e[i].depth;
        }
        return out;
    }
    const LaneTable* t = node.table.load(std::memory_order_acquire);
    return t ? t->depths(value) : 0;
}

RunTable::Kids::Slot* RunTable::slot_of(Kids* k, uint16_t value) {
    if (!k) {
        return nullptr;
    }
    const uint32_t key = uint32_t{value} + 1;
    for (unsigned i = home(value, k->capacity);; i = (i + 1) & (k->capacity - 1)) {
        const uint32_t at = k->slot[i].key.load(std::memory_order_acquire);
        if (at == key) {
            return &k->slot[i];
        }
        if (at == 0) {
            return nullptr;  // never full: the writer keeps it at most half used
        }
    }
}

RunTable::Node* RunTable::child_of(const Node& node, uint16_t value) {
    Kids::Slot* slot = slot_of(node.kids.load(std::memory_order_acquire), value);
    return slot ? slot->node.load(std::memory_order_acquire) : nullptr;
}

RunLengths RunTable::lengths(const uint16_t values[]) const {
    RunLengths out;
    const Node* node = &root_;
    for (unsigned s = 0; node; s++) {
        const uint64_t d = depths_of(*node, values[s]);  // bits 0..16: lengths 16s..16s+16
        const unsigned at = 16 * s;
        out.w[at / 64] |= d << (at % 64);
        if (at % 64 > 64 - 17 && at / 64 + 1 < kRunLengthWords) {
            out.w[at / 64 + 1] |= d >> (64 - at % 64);
        }
        if (s + 1 == lanes_) {
            break;
        }
        node = child_of(*node, values[s]);
    }
    return out;
}

// ---- writer side ----

RunTable::Node* RunTable::child(Node& node, uint16_t value, bool make) {
    Kids* k = node.kids.load(std::memory_order_relaxed);
    const uint32_t key = uint32_t{value} + 1;
    if (Kids::Slot* slot = slot_of(k, value)) {
        Node* n = slot->node.load(std::memory_order_relaxed);
        if (n || !make) {
            return n;
        }
        n = new Node;  // again under a key a removed child left
        slot->node.store(n, std::memory_order_release);
        bytes_ += node_bytes(*n);
        nodes_++;
        return n;
    }
    if (!make) {
        return nullptr;
    }
    const size_t before = node_bytes(node);
    if (!k || (k->used + 1) * 2 > k->capacity) {
        // A new table of the live children at most a quarter full; readers
        // of the old one see what it held until they are gone.
        uint32_t live = 0;
        for (uint32_t i = 0; k && i < k->capacity; i++) {
            live += k->slot[i].node.load(std::memory_order_relaxed) != nullptr;
        }
        uint32_t capacity = 4;
        while (capacity < (live + 1) * 4) {
            capacity *= 2;
        }
        auto* grown =
            static_cast<Kids*>(std::calloc(1, sizeof(Kids) + capacity * sizeof(Kids::Slot)));
        if (!grown) {
            throw std::bad_alloc();
        }
        grown->capacity = capacity;
        for (uint32_t i = 0; k && i < k->capacity; i++) {
            if (Node* n = k->slot[i].node.load(std::memory_order_relaxed)) {
                const uint32_t v = k->slot[i].key.load(std::memory_order_relaxed) - 1;
                unsigned j = home(static_cast<uint16_t>(v), capacity);
                while (grown->slot[j].key.load(std::memory_order_relaxed)) {
                    j = (j + 1) & (capacity - 1);
                }
                grown->slot[j].node.store(n, std::memory_order_relaxed);
                grown->slot[j].key.store(v + 1, std::memory_order_relaxed);
                grown->used++;
            }
        }
        node.kids.store(grown, std::memory_order_release);
        if (k) {
            ovsb_rcu_postpone(free_cb, k);
        }
        k = grown;
    }
    unsigned i = home(value, k->capacity);
    while (k->slot[i].key.load(std::memory_order_relaxed)) {
        i = (i + 1) & (k->capacity - 1);
    }
    Node* n = new Node;
    // The node before the key: a reader that finds the key finds the node.
    k->slot[i].node.store(n, std::memory_order_relaxed);
    k->slot[i].key.store(key, std::memory_order_release);
    k->used++;
    bytes_ += node_bytes(node) - before + node_bytes(*n);
    nodes_++;
    return n;
}

// Unlinks the child of `parent` by `value` (it holds no rule, so no child
// either) and frees it after a grace period.  The slot keeps its key.
void RunTable::unlink(Node& parent, uint16_t value) {
    Kids::Slot* slot = slot_of(parent.kids.load(std::memory_order_relaxed), value);
    Node* n = slot->node.load(std::memory_order_relaxed);
    slot->node.store(nullptr, std::memory_order_release);
    bytes_ -= node_bytes(*n);
    if (const LaneTable* t = n->table.load(std::memory_order_relaxed)) {
        low_tables_ -= t->low_tables();
    }
    nodes_--;
    ovsb_rcu_postpone(free_node_cb, n);
}

// The node's small ends, made anew from its counts and published whole.
void RunTable::publish_small(Node& node) {
    Ends* e = nullptr;
    if (!node.counts.empty()) {
        e = static_cast<Ends*>(std::malloc(sizeof(Ends) + node.counts.size() * sizeof(End)));
        if (!e) {
            throw std::bad_alloc();
        }
        e->n = static_cast<uint32_t>(node.counts.size());
        for (uint32_t i = 0; i < e->n; i++) {
            const unsigned depth = node.counts[i].first >> 16;
            e->e[i] = {static_cast<uint16_t>(node.counts[i].first), prefix_mask(depth), depth};
        }
    }
    const Ends* old = node.small.exchange(e, std::memory_order_acq_rel);
    if (old) {
        ovsb_rcu_postpone(free_cb, const_cast<Ends*>(old));
    }
}

// One rule more (add) or less with end (`prefix`, `depth`) in `node`;
// false (changing nothing) when a removed end is not there.
bool RunTable::add_end(Node& node, uint16_t prefix, unsigned depth, bool add) {
    const size_t before = node_bytes(node);
    if (LaneTable* t = node.table.load(std::memory_order_relaxed)) {
        const size_t lows = t->low_tables();
        const bool done = add ? (t->insert(prefix, depth), true) : t->remove(prefix, depth);
        low_tables_ += t->low_tables() - lows;
        bytes_ += node_bytes(node) - before;
        return done;
    }
    const uint32_t key = depth << 16 | prefix;
    auto it = std::find_if(node.counts.begin(), node.counts.end(),
                           [&](const auto& c) { return c.first == key; });
    if (!add) {
        if (it == node.counts.end()) {
            return false;
        }
        if (--it->second == 0) {
            *it = node.counts.back();
            node.counts.pop_back();
            publish_small(node);
        }
    } else if (it != node.counts.end()) {
        it->second++;
    } else if (node.counts.size() < kSmallEnds) {
        node.counts.emplace_back(key, 1);
        publish_small(node);
    } else {
        // More ends than a scan should read: a LaneTable from now on.
        auto* t = new LaneTable;
        for (const auto& [k, n] : node.counts) {
            for (uint32_t r = 0; r < n; r++) {
                t->insert(static_cast<uint16_t>(k), k >> 16);
            }
        }
        t->insert(prefix, depth);
        node.table.store(t, std::memory_order_release);
        node.counts.clear();
        node.counts.shrink_to_fit();
        publish_small(node);  // null: readers go to the table
        low_tables_ += t->low_tables();
    }
    bytes_ += node_bytes(node) - before;
    return true;
}

void RunTable::insert(const uint16_t values[], unsigned length) {
    const unsigned s = length ? (length - 1) / 16 : 0;
    const unsigned depth = length - 16 * s;
    Node* node = &root_;
    node->rules++;
    for (unsigned k = 0; k < s; k++) {
        node = child(*node, values[k], true);
        node->rules++;
    }
    add_end(*node, values[s] & prefix_mask(depth), depth, true);
}

void RunTable::remove(const uint16_t values[], unsigned length) {
    const unsigned s = length ? (length - 1) / 16 : 0;
    const unsigned depth = length - 16 * s;
    Node* path[kMaxRunLanes];
    path[0] = &root_;
    for (unsigned k = 0; k < s; k++) {
        path[k + 1] = child(*path[k], values[k], false);
        if (!path[k + 1]) {
            return;  // not there: the caller's bug, and nothing to undo
        }
    }
    if (!add_end(*path[s], values[s] & prefix_mask(depth), depth, false)) {
        return;
    }
    for (unsigned k = 0; k <= s; k++) {
        path[k]->rules--;
    }
    // From the deepest node up, unlink the nodes no rule holds any more.
    for (unsigned k = s; k > 0 && path[k]->rules == 0; k--) {
        unlink(*path[k - 1], values[k - 1]);
    }
}

}  // namespace ovscls::tail
