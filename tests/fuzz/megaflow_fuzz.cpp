// megaflow_fuzz.cpp: libFuzzer target, operators' and the wire's inputs into
// the lookups: megaflow text through OVS's parser, raw frames through OVS's
// miniflow_extract().
//
// Input layout (megaflow_seeds.cpp writes seeds in it):
//   TEXT '\n' PORT { LEN_HI LEN_LO FRAME[LEN] }...
// TEXT is one megaflow as `ovs-appctl dpctl/dump-flows -m` prints it, PORT
// the in_port the frames arrive on, then up to 31 frames, each with a
// big-endian length (cut to what is left and to 9216 bytes).
//
// 1. TEXT, NUL-terminated and ending at a PROT_NONE page (guarded_bytes.hpp:
//    the OVS lib is not instrumented), goes through ovsb_megaflow_parse()
//    (odp_flow_from_string() and the key/mask conversions of dpif-netdev).
//    A refusal must leave a message; an accepted megaflow becomes a
//    subtable mask as dp_netdev_flow_add() makes it (when it fits a key).
//    Without one, the mask is an exact match on the first frame's fields.
// 2. Each frame, ending at a PROT_NONE page, goes through miniflow_extract();
//    the key must be a valid miniflow (the classifier would otherwise count
//    it invalid and never look it up).
// 3. Rules: the megaflow's flow and every other frame's flow under the mask.
//    Keys: every frame's, and the megaflow's flow as a packet key.  OVS's
//    generic must agree with the brute-force reference, and every lookup of
//    the registry (with jit_avx2's fast path for the first frame's map) with
//    OVS's generic, keys placed against guard pages as in lookup_fuzz.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "classifier/classifier.hpp"
#include "fuzz/guarded_bytes.hpp"
#include "lookup_fixture.hpp"
#include "reference.hpp"
#include "reference/ovs_reference.h"

namespace ovscls::test {
namespace {

constexpr size_t kMaxText = 4096;
constexpr size_t kMaxFrame = 9216;  // a jumbo frame
constexpr uint32_t kMaxFrames = kMaxBurst - 1;

struct Fixture {
    LookupFixture lookups{"megaflow_fuzz"};
    GuardedBytes text{kMaxText + 1};
    GuardedBytes frame{kMaxFrame};
};

struct Tally {
    uint64_t inputs = 0, parsed = 0, refused = 0, too_wide = 0, frames = 0, hits = 0;
};
Tally& tally() {
    static auto* t = new Tally;
    return *t;
}

Fixture& fixture() {
    static Fixture* f = [] {
        std::atexit([] {
            const Tally& t = tally();
            char prefix[256];
            std::snprintf(prefix, sizeof prefix,
                          "megaflow_fuzz: %llu inputs: %llu megaflows parsed, %llu refused by "
                          "the parser, %llu too wide for a key; %llu frames extracted, %llu hits",
                          (unsigned long long)t.inputs, (unsigned long long)t.parsed,
                          (unsigned long long)t.refused, (unsigned long long)t.too_wide,
                          (unsigned long long)t.frames, (unsigned long long)t.hits);
            fixture().lookups.print_checked(prefix);
        });
        return new Fixture;  // never destroyed (lookup_fixture.hpp)
    }();
    return *f;
}

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "megaflow_fuzz: %s\n", what.c_str());
    std::abort();
}

// The megaflow of TEXT, or false when the parser refuses it.
bool parse(Fixture& f, const uint8_t* text, size_t len, FullFlow& flow, FullFlow& wc) {
    std::string s(reinterpret_cast<const char*>(text), len);
    s.resize(std::strlen(s.c_str()));  // up to an embedded NUL, as C reads it
    const char* guarded = reinterpret_cast<const char*>(f.text.place(s.c_str(), s.size() + 1));
    char err[256];
    std::memset(err, 'x', sizeof err);
    if (ovsb_megaflow_parse(guarded, flow.data(), wc.data(), err, sizeof err) == 0) {
        return true;
    }
    const size_t n = strnlen(err, sizeof err);
    if (n == 0 || n == sizeof err) {
        fail("the parser refused \"" + s + "\" without a terminated message");
    }
    return false;
}

}  // namespace
}  // namespace ovscls::test

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ovscls;
    using namespace ovscls::test;
    Fixture& f = fixture();
    tally().inputs++;

    const uint8_t* nl = static_cast<const uint8_t*>(std::memchr(data, '\n', size));
    const size_t text_len = std::min(nl ? static_cast<size_t>(nl - data) : size, kMaxText);
    FullFlow flow{}, wc{};
    const bool parsed = parse(f, data, text_len, flow, wc);
    tally().parsed += parsed;
    tally().refused += !parsed;

    // Frames into keys.
    std::vector<FlowKey> keys;
    if (nl) {
        const uint8_t* p = nl + 1;
        const uint8_t* end = data + size;
        const uint32_t in_port = p < end ? *p++ : 0;
        while (end - p >= 2 && keys.size() < kMaxFrames) {
            size_t len = static_cast<size_t>(p[0]) << 8 | p[1];
            p += 2;
            len = std::min({len, static_cast<size_t>(end - p), kMaxFrame});
            FlowKey key{};
            ovsb_key_from_frame(ovs(&key), f.frame.place(p, len), len, in_port);
            p += len;
            if (std::string why = validate_key(key); !why.empty()) {
                fail("miniflow_extract() made an invalid key: " + why);
            }
            keys.push_back(key);
        }
    }
    tally().frames += keys.size();

    // The subtable's mask: the megaflow's, or exact on the first frame.
    FlowKey mask{};
    bool have_mask = parsed && ovsb_mask_init(ovs(&mask), flow.data(), wc.data());
    tally().too_wide += parsed && !have_mask;
    if (!have_mask && !keys.empty()) {
        ovsb_key_expand(ovs(&keys[0]), flow.data());
        const MiniflowMap& map = keys[0].map;
        wc = {};
        for (size_t w = 0; w < kFlowU64s; w++) {
            if (map.bits[w / 64] >> (w % 64) & 1) {
                wc[w] = ~uint64_t{0};
            }
        }
        have_mask = ovsb_mask_init(ovs(&mask), flow.data(), wc.data());
    }
    if (!have_mask) {
        return 0;
    }
    if (std::string why = validate_mask(mask); !why.empty()) {
        fail("a megaflow's mask is not a valid mask: " + why);
    }

    dpcls_subtable* subtable = ovsb_subtable_create(ovs(&mask));
    ReferenceClassifier reference;
    std::vector<dpcls_rule*> rules;
    auto add_rule = [&](const uint64_t* rule_flow) {
        dpcls_rule* rule = ovsb_rule_alloc();
        ovsb_key_init_masked(ovs(&view(rule)->flow), rule_flow, ovs(&mask));
        if (ovsb_subtable_find(subtable, ovs(&view(rule)->flow))) {
            ovsb_rule_free(rule);
            return;
        }
        ovsb_subtable_insert(subtable, rule);
        reference.add(mask, view(rule)->flow, rule);
        rules.push_back(rule);
    };
    if (parsed) {
        add_rule(flow.data());
        FlowKey own{};
        ovsb_key_from_flow(ovs(&own), flow.data());
        keys.push_back(own);
    }
    for (size_t i = 1; i < keys.size(); i += 2) {
        FullFlow frame_flow{};
        ovsb_key_expand(ovs(&keys[i]), frame_flow.data());
        add_rule(frame_flow.data());
    }

    const netdev_flow_key* ptrs[kMaxBurst];
    for (size_t i = 0; i < keys.size(); i++) {
        ptrs[i] = f.lookups.keys.place(static_cast<uint32_t>(i), keys[i]);
    }
    const uint32_t keys_map = keys.size() == 32 ? ~0u : (1u << keys.size()) - 1;
    if (keys_map) {
        const std::vector<NamedLookup> impls =
            lookups_under_test(f.lookups, subtable, &keys[0].map);
        uint32_t want_found;
        dpcls_rule* want[kMaxBurst];
        check_burst(f.lookups, impls, subtable, keys_map, ptrs, &want_found, want);
        for (size_t i = 0; i < keys.size(); i++) {
            if (!reference.agrees_within_subtable(keys[i], want_found >> i & 1, want[i])) {
                fail("OVS's generic disagrees with the reference on key " + std::to_string(i));
            }
        }
        tally().hits += std::popcount(want_found);
    }

    f.lookups.registry.release(subtable, nullptr);
    for (dpcls_rule* rule : rules) {
        ovsb_subtable_remove(subtable, rule);
        ovsb_rule_free_deferred(rule);
    }
    ovsb_subtable_destroy_deferred(subtable, nullptr, nullptr);
    ovsb_rcu_quiesce();
    return 0;
}
