#include "jit/fused_generator.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <new>
#include <tuple>

#include "jit/cmap_probe.hpp"
#include "jit/lookup_shape.hpp"
#include "jit/ovs_emit.hpp"

namespace ovscls::jit {
namespace {

using namespace Xbyak;
using namespace emit;

// Registers.  The callee-saved ones hold the burst's state through the
// whole function (and across the rare call into cmap_find()); the
// caller-saved ones are one subtable's probe of one key, taken over afresh
// by the next subtable.
struct LiveRegs {
    Reg64 keys = util::r12;   // const netdev_flow_key**
    Reg64 rules = util::r13;  // dpcls_rule**
    Reg64 iter = util::r14;   // keys still to visit
    Reg64 found = util::r15;  // keys matched so far
    Reg64 index = util::rbx;  // i, the key at hand
    Reg64 key = util::rbp;    // keys[i]
};
struct ProbeRegs {
    Reg64 hash = util::rax;     // the running hash, then the key's hash
    Reg64 value = util::rcx;    // one masked block; hash_finish()'s operand
    Reg64 h1 = util::rdx;       // rehash(basis, hash), then the second bucket
    Reg64 bucket1 = util::rsi;  // the first bucket
    Reg64 bucket2 = util::rdx;  // the second bucket (h1 is done with)
    Reg64 c1 = util::r8;        // the first bucket's counter
    Reg64 lanes = util::r9;     // the compare's hash lanes, then a slot index
    Reg64 c2 = util::r10;       // the second bucket's counter
    Reg64 node = util::r11;     // a candidate rule
    Reg64 scratch = util::rdi;  // mhash's
};
constexpr LiveRegs kLive;
constexpr ProbeRegs kProbe;

static_assert(distinct({kLive.keys, kLive.rules, kLive.iter, kLive.found, kLive.index, kLive.key,
                        kProbe.hash, kProbe.value, kProbe.h1, kProbe.bucket1, kProbe.c1,
                        kProbe.lanes, kProbe.c2, kProbe.node, kProbe.scratch}));
// The second bucket takes h1's register: h1 is not needed after it.
static_assert(kProbe.bucket2.getIdx() == kProbe.h1.getIdx());
// cmap_find() returns its node in rax and takes (rdi, esi).
static_assert(kProbe.hash.getIdx() == Operand::RAX);

constexpr uint32_t kFrameBuckets = offsetof(FusedFrame, buckets);
constexpr uint32_t kFrameBasis = offsetof(FusedFrame, basis);
constexpr uint32_t kFrameMask = offsetof(FusedFrame, mask);
constexpr uint32_t kFrameHits = offsetof(FusedFrame, hits);
constexpr uint32_t kFrameStates = offsetof(FusedFrame, states);
constexpr uint32_t kFrameMissedOut = offsetof(FusedFrame, missed_out);
constexpr uint32_t kFrameLookupsOut = offsetof(FusedFrame, lookups_out);
constexpr uint32_t kFrameKeysMap = offsetof(FusedFrame, keys_map);
constexpr uint32_t kFrameDeferred = offsetof(FusedFrame, deferred);
constexpr uint32_t kFrameLookups = offsetof(FusedFrame, lookups);
// After six pushes rsp is 8 mod 16: a frame of 8 mod 16 realigns it for the
// call into cmap_find().
constexpr uint32_t kFrameBytes = sizeof(FusedFrame) + 8;

uint32_t blocks_of(const FusedSubtable& s) {
    return static_cast<uint32_t>(std::popcount(s.mask_map.bits[0]) +
                                 std::popcount(s.mask_map.bits[1]));
}

// Block b of subtable s, as a key with `key_map` has it: its value index
// (-1: such keys lack the word) and its mask.
struct KeyBlock {
    int32_t index;
    uint64_t mask;
    bool operator==(const KeyBlock&) const = default;
};
KeyBlock key_block(const FusedSubtable& s, const MiniflowMap& key_map, uint32_t b) {
    const LookupShape shape{s.mask_map, key_map};
    return {shape.block(b).expected_index, s.mask_values[b]};
}

}  // namespace

FusedGenerator::~FusedGenerator() = default;

uint32_t FusedSpec::blocks() const {
    uint32_t n = 0;
    for (const FusedSubtable& s : subtables) n += blocks_of(s);
    return n;
}

HashSharing plan_hash_sharing(const FusedSpec& spec) {
    const size_t n = spec.subtables.size();
    std::vector<std::vector<KeyBlock>> seq(n);
    for (size_t k = 0; k < n; k++) {
        for (uint32_t b = 0; b < blocks_of(spec.subtables[k]); b++) {
            seq[k].push_back(key_block(spec.subtables[k], spec.key_map, b));
        }
    }
    HashSharing out;
    out.steps.resize(n);
    for (size_t k = 1; k < n; k++) {
        size_t best = 0, from = 0;
        for (size_t j = 0; j < k; j++) {
            size_t p = 0;
            while (p < seq[j].size() && p < seq[k].size() && seq[j][p] == seq[k][p]) p++;
            if (p > best) {
                best = p;
                from = j;
            }
        }
        if (best == 0) {
            continue;
        }
        // All of k's blocks shared means an identical mask: not in one
        // classifier.  Still correct: k then hashes no block of its own.
        auto& saves = out.steps[from].saves;
        auto it = std::find_if(saves.begin(), saves.end(),
                               [&](const auto& s) { return s.first == best; });
        uint32_t slot;
        if (it != saves.end()) {
            slot = it->second;
        } else {
            slot = out.slots++;
            saves.emplace_back(static_cast<uint32_t>(best), slot);
        }
        out.steps[k].from_slot = static_cast<int32_t>(slot);
        out.steps[k].from_block = static_cast<uint32_t>(best);
    }
    return out;
}

std::unique_ptr<FusedGenerator> FusedGenerator::create(const FusedSpec& spec, Allocator* allocator,
                                                       GenerateStatus* status) noexcept {
    using Code = GenerateStatus::Code;
    if (spec.subtables.empty() || spec.subtables.size() > kMaxFusedSubtables) {
        *status = {Code::kError, std::to_string(spec.subtables.size()) +
                                     " subtables: a fused lookup serves 1.." +
                                     std::to_string(kMaxFusedSubtables)};
        return nullptr;
    }
    for (const FusedSubtable& s : spec.subtables) {
        if (blocks_of(s) > kMaxBlocks || s.mask_values.size() != blocks_of(s)) {
            *status = {Code::kTooManyBlocks, std::to_string(blocks_of(s)) + " blocks (" +
                                                 std::to_string(s.mask_values.size()) +
                                                 " mask values), more than " +
                                                 std::to_string(kMaxBlocks)};
            return nullptr;
        }
    }
    return make<FusedGenerator>(status, spec, allocator);
}

size_t FusedGenerator::reserved_bytes(const FusedSpec& spec) {
    // Per subtable about 300 bytes of probe, candidate and fallback code;
    // per block up to ~30 bytes hashed and ~20 verified with CRC32 (mhash:
    // ~45 more), and 8 of mask constant; reserved with a margin.
    return whole_pages(1024 + spec.subtables.size() * 512 + spec.blocks() * (kCrc32 ? 64 : 128));
}

FusedGenerator::FusedGenerator(const FusedSpec& spec, Allocator* allocator)
    : Kernel(reserved_bytes(spec), allocator), spec_(spec), sharing_(plan_hash_sharing(spec)) {}

void FusedGenerator::generate() {
    emit_prologue();
    emit_key_loop();
    emit_epilogue();
    emit_cold();
    emit_pool();
}

Label& FusedGenerator::mask_constant(uint64_t mask) {
    for (auto& [value, label] : pool_) {
        if (value == mask) {
            return label;
        }
    }
    pool_.emplace_back(mask, Label());
    return pool_.back().second;
}

void FusedGenerator::emit_pool() {
    align(8);
    for (auto& [value, label] : pool_) {
        L(label);
        dq(value);
    }
}

// In: the System V arguments (edi keys_map, rsi keys, rdx rules, rcx
// missed, r8 lookups).  Out: kLive set up (iter = keys_map, found = 0), the
// frame filled; jumps to the epilogue for an empty burst.  Clobbers rax,
// rcx.
void FusedGenerator::emit_prologue() {
    static_assert(kFrameBytes < kCodePageBytes, "within a page: reserved in one go");
    emit_enter(kFrameBytes);
    mov(kLive.keys, rsi);
    mov(kLive.rules, rdx);
    mov(qword[rsp + kFrameMissedOut], rcx);
    mov(qword[rsp + kFrameLookupsOut], r8);
    mov(kLive.iter.cvt32(), edi);
    mov(dword[rsp + kFrameKeysMap], edi);
    xor_(kLive.found.cvt32(), kLive.found.cvt32());
    mov(dword[rsp + kFrameDeferred], 0);
    mov(dword[rsp + kFrameLookups], 0);
    for (uint32_t k = 0; k < spec_.subtables.size(); k++) {
        mov(dword[rsp + kFrameHits + 4 * k], 0);
        // cmap->impl, read once per burst (rcu-protected), as
        // cmap_find_batch() does.
        mov(rax, reinterpret_cast<uint64_t>(spec_.subtables[k].subtable));
        mov(rax, qword[rax + kSubtableRules]);
        mov(ecx, dword[rax + kCmapImplBasis]);
        mov(dword[rsp + kFrameBasis + 4 * k], ecx);
        mov(ecx, dword[rax + kCmapImplMask]);
        mov(dword[rsp + kFrameMask + 4 * k], ecx);
        lea(rcx, ptr[rax + kCmapImplBuckets]);
        mov(qword[rsp + kFrameBuckets + 8 * k], rcx);
    }
    test(kLive.iter.cvt32(), kLive.iter.cvt32());
    jz(epilogue_, T_NEAR);
}

// Every key of the burst through the subtables in rank order.  In: kLive.
// Out: kLive.found, frame.hits, lookups, deferred.  Clobbers kProbe's
// registers, ymm1, ymm2, the flags.
void FusedGenerator::emit_key_loop() {
    L(key_loop_);
    tzcnt(kLive.index.cvt32(), kLive.iter.cvt32());
    mov(kLive.key, qword[kLive.keys + kLive.index * 8]);
    mov(kProbe.value, spec_.key_map.bits[0]);
    cmp(qword[kLive.key + kKeyMap], kProbe.value);
    jne(defer_, T_NEAR);
    // Unit 1 holds at most 20 bits: always a sign-extendable immediate.
    static_assert(kUnit1Bits < 31);
    cmp(qword[kLive.key + kKeyMap + 8], static_cast<uint32_t>(spec_.key_map.bits[1]));
    jne(defer_, T_NEAR);
    for (uint32_t k = 0; k < spec_.subtables.size(); k++) {
        if (k && spec_.serialize) {
            lfence();  // FusedSpec::serialize: no work ahead of the last answer
        }
        emit_subtable(k);
    }
    // Missed by every subtable: the loop goes on with it (the epilogue
    // derives the missed keys).
    L(next_key_);
    blsr(kLive.iter.cvt32(), kLive.iter.cvt32());
    jnz(key_loop_, T_NEAR);
    jmp(epilogue_, T_NEAR);

    cold([this] {
        L(defer_);  // another map: the loop runs it through every subtable
        mov(ecx, 1);
        shlx(ecx, ecx, kLive.index.cvt32());
        or_(dword[rsp + kFrameDeferred], ecx);
        jmp(next_key_, T_NEAR);
    });
}

void FusedGenerator::emit_block(uint32_t k, uint32_t b, const Reg64& value) {
    const KeyBlock kb = key_block(spec_.subtables[k], spec_.key_map, b);
    if (kb.index < 0) {
        xor_(value.cvt32(), value.cvt32());  // such keys lack the word
        return;
    }
    mov(value, qword[kLive.key + kKeyValues + 8 * kb.index]);
    if (kb.mask != ~uint64_t{0}) {
        and_(value, qword[rip + mask_constant(kb.mask)]);
    }
}

// Subtable k for the key at hand: falls through when the key is not there
// (to subtable k + 1, or next_key_ past the last); jumps to next_key_ with
// rules[i], found, frame.hits[k] and frame.lookups updated when it is.
void FusedGenerator::emit_subtable(uint32_t k) {
    const ProbeRegs& r = kProbe;
    const FusedSubtable& s = spec_.subtables[k];
    const HashSharing::Step& step = sharing_.steps[k];
    const uint32_t blocks = blocks_of(s);
    // The cold code, emitted later, jumps to and back to these.
    Label& verify = new_label();  // a node whose chain may hold the key's rule
    Label& changed = new_label();
    Label& miss = new_label();

    // The key's hash for this subtable.
    if (step.from_slot >= 0) {
        mov(r.hash.cvt32(), dword[rsp + kFrameStates + 4 * step.from_slot]);
    } else {
        xor_(r.hash.cvt32(), r.hash.cvt32());
    }
    for (uint32_t b = step.from_block; b < blocks; b++) {
        emit_block(k, b, r.value);
        hash_add(*this, r.hash, r.value, r.scratch);
        for (const auto& [after, slot] : step.saves) {
            if (after == b + 1) {
                mov(dword[rsp + kFrameStates + 4 * slot], r.hash.cvt32());
            }
        }
    }
    mov(r.value.cvt32(), blocks * 8);
    hash_finish(*this, r.hash, r.value, r.value.cvt32());
    vmovd(xmm1, r.hash.cvt32());
    vpbroadcastd(ymm1, xmm1);

    // cmap (cmap_probe.hpp): h1 = rehash(impl, hash); the first bucket,
    // then the second; in neither: the fallback if the first changed.
    const Address mask = dword[rsp + kFrameMask + 4 * k];
    const Address buckets = qword[rsp + kFrameBuckets + 8 * k];
    mov(r.h1.cvt32(), dword[rsp + kFrameBasis + 4 * k]);
    mov(r.value.cvt32(), r.hash.cvt32());
    hash_finish(*this, r.h1, r.value, r.value.cvt32());
    mov(r.bucket1.cvt32(), r.h1.cvt32());
    cmap_bucket_address(*this, r.bucket1, mask, buckets);
    cmap_probe_bucket(*this, {r.bucket1, r.c1, r.lanes, r.node}, verify);
    cmap_other_hash(*this, r.h1);
    cmap_bucket_address(*this, r.bucket2, mask, buckets);  // h1's register
    cmap_probe_bucket(*this, {r.bucket2, r.c2, r.lanes, r.node}, verify);
    cmap_first_bucket_changed(*this, r.bucket1, r.c1, changed);
    L(miss);

    cold([=, this, &s, &verify, &changed, &miss] {
        Label next_node;
        L(changed);
        mov(esi, r.hash.cvt32());
        mov(rdi, reinterpret_cast<uint64_t>(s.subtable) + kSubtableRules);
        cmap_find_call(*this, r.node, miss);  // a node: its chain, below
        // The candidate's chain: the first rule holding exactly the key's
        // masked words is the match (hash collisions only else).
        L(verify);
        for (uint32_t b = 0; b < blocks; b++) {
            emit_block(k, b, r.value);
            cmp(r.value, qword[r.node + kRuleValues + 8 * b]);
            jne(next_node, T_NEAR);
        }
        mov(qword[kLive.rules + kLive.index * 8], r.node);  // the node is the rule
        bts(kLive.found.cvt32(), kLive.index.cvt32());
        inc(dword[rsp + kFrameHits + 4 * k]);
        add(dword[rsp + kFrameLookups], k + 1);
        jmp(next_key_, T_NEAR);
        L(next_node);
        mov(r.node, qword[r.node]);  // node->next; x86 loads are acquire loads
        test(r.node, r.node);
        jnz(verify, T_NEAR);
        jmp(miss, T_NEAR);
    });
}

// hit_cnt += hits[k] per subtable that had hits (OVS's plain, racy add; a
// subtable without hits in the burst is not written, so that its line stays
// clean in the other cores' caches); *missed, *lookups; returns found.
// Restores the callee-saved registers; clears the upper halves of the ymm
// registers.
void FusedGenerator::emit_epilogue() {
    L(epilogue_);
    for (uint32_t k = 0; k < spec_.subtables.size(); k++) {
        Xbyak::Label no_hits;
        mov(eax, dword[rsp + kFrameHits + 4 * k]);
        test(eax, eax);
        jz(no_hits);
        mov(rcx, reinterpret_cast<uint64_t>(spec_.subtables[k].subtable));
        add(dword[rcx + kSubtableHits], eax);
        L(no_hits);
    }
    // missed = the burst less the found and the deferred keys.
    mov(eax, kLive.found.cvt32());
    or_(eax, dword[rsp + kFrameDeferred]);
    andn(eax, eax, dword[rsp + kFrameKeysMap]);
    mov(rcx, qword[rsp + kFrameMissedOut]);
    mov(dword[rcx], eax);
    mov(eax, dword[rsp + kFrameLookups]);
    mov(rcx, qword[rsp + kFrameLookupsOut]);
    mov(dword[rcx], eax);
    mov(eax, kLive.found.cvt32());
    emit_leave(kFrameBytes);
}

}  // namespace ovscls::jit
