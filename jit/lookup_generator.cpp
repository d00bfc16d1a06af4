#include "jit/lookup_generator.hpp"

#include <cstddef>

extern "C" const struct cmap_node* cmap_find(const struct cmap* cmap, uint32_t hash);

namespace ovscls::jit {
namespace {

using namespace Xbyak;

// Byte offsets into OVS's structs, as ovs_abi.h pins them.
constexpr uint32_t kKeyMap = OVSCLS_KEY_OFF_MF;
constexpr uint32_t kKeyValues = OVSCLS_KEY_OFF_VALUES;
constexpr uint32_t kSubtableRules = OVSCLS_SUBTABLE_OFF_RULES;
constexpr uint32_t kSubtableHits = OVSCLS_SUBTABLE_OFF_HIT_CNT;
constexpr uint32_t kMaskValues = OVSCLS_SUBTABLE_OFF_MASK + OVSCLS_KEY_OFF_VALUES;
constexpr uint32_t kRuleValues = OVSCLS_RULE_OFF_FLOW + OVSCLS_KEY_OFF_VALUES;
static_assert(offsetof(Rule, node) == 0, "a cmap node is its rule's address");

// struct cmap_impl and struct cmap_bucket, private to lib/cmap.c: ovs_abi.h
// has the numbers; jit/cmap_layout.cpp checks them in the running OVS before
// anything is compiled.
constexpr uint32_t kCmapImplMask = OVSCLS_CMAP_IMPL_OFF_MASK;
constexpr uint32_t kCmapImplBasis = OVSCLS_CMAP_IMPL_OFF_BASIS;
constexpr uint32_t kCmapImplBuckets = OVSCLS_CMAP_IMPL_OFF_BUCKETS;
constexpr uint32_t kCmapBucketShift = 6;
static_assert(1u << kCmapBucketShift == OVSCLS_CMAP_BUCKET_SIZE);
constexpr uint32_t kCmapBucketNodes = OVSCLS_CMAP_BUCKET_OFF_NODES;
// The hashes are dwords 1..5 of the bucket: a vpcmpeqd over the first 32
// bytes, masked to those lanes.
static_assert(OVSCLS_CMAP_BUCKET_OFF_HASHES == 4 && OVSCLS_CMAP_BUCKET_ENTRIES == 5);
constexpr uint32_t kCmapHashLanes = 0x3e;
static_assert(offsetof(CmapNode, next) == 0);

// The hash of the OVS build this code is linked into (classifier/hash.hpp):
// CRC32 when OVS was built with SSE4.2, murmur-style mhash otherwise.
constexpr bool kCrc32 = OVSCLS_HASH_CRC32;
// lib/hash.h's constants, as 32-bit immediates.
constexpr int kCrcFinishMul = static_cast<int>(0x805204f3u);
constexpr int kMhashC1 = static_cast<int>(0xcc9e2d51u);
constexpr int kMhashC2 = static_cast<int>(0x1b873593u);
constexpr int kMhashAdd = static_cast<int>(0xe6546b64u);
constexpr int kMhashFinish1 = static_cast<int>(0x85ebca6bu);
constexpr int kMhashFinish2 = static_cast<int>(0xc2b2ae35u);

}  // namespace

LookupGenerator::LookupGenerator(const LookupShape& shape, LookupProfile* profile,
                                 Allocator* allocator)
    : CodeGenerator(reserved_bytes(shape), DontSetProtectRWE, allocator),
      shape_(shape),
      profile_(profile),
      blocks_(shape.blocks()),
      stride_(shape.blocks() * 8) {
    if (blocks_ > kMaxBlocks) {
        throw Error(ERR_BAD_PARAMETER);
    }
    scratch_off_ = 0;
    hashes_off_ = scratch_off_ + kMaxBurst * stride_;
    nodes_off_ = hashes_off_ + kMaxBurst * 4;
    h1_off_ = nodes_off_ + kMaxBurst * 8;
    c1_off_ = h1_off_ + kMaxBurst * 4;
    b1_off_ = c1_off_ + kMaxBurst * 4;
    b2_off_ = b1_off_ + kMaxBurst * 8;
    slow_count_off_ = b2_off_ + kMaxBurst * 8;
    sample_off_ = slow_count_off_ + 8;
    impl_off_ = sample_off_ + 16;
    // After six pushes rsp is 8 mod 16: a frame of 8 mod 16 realigns it for
    // the call into cmap_find().
    frame_bytes_ = ((impl_off_ + 8 + 15) & ~15u) + 8;

    emit_prologue();
    emit_flatten_and_hash();
    emit_probe();
    emit_verify();
    emit_epilogue();
}

size_t LookupGenerator::reserved_bytes(const LookupShape& shape) {
    // Measured (jit_test prints it): about 800 bytes fixed, and at most 80
    // bytes per block with CRC32 (both paths and the compare), 190 with
    // mhash; reserved with a margin.
    const size_t bytes = 1024 + shape.blocks() * (kCrc32 ? 96 : 200);
    return (bytes + kCodePageBytes - 1) / kCodePageBytes * kCodePageBytes;
}

void LookupGenerator::emit_prologue() {
    for (const Reg64& r : {rbx, rbp, r12, r13, r14, r15}) {
        push(r);
    }
    sub(rsp, frame_bytes_);
    mov(subtable_, rdi);
    mov(found_.cvt32(), esi);
    mov(keys_, rdx);
    mov(rules_, rcx);
    mov(iter_.cvt32(), esi);
    mov(dword[rsp + slow_count_off_], 0);
    // cmap->impl, read once (rcu-protected): every key of the burst is
    // looked up in the same impl, as cmap_find_batch() does.
    mov(rax, qword[subtable_ + kSubtableRules]);
    mov(qword[rsp + impl_off_], rax);
    test(iter_.cvt32(), iter_.cvt32());
    jz(epilogue_, T_NEAR);
}

void LookupGenerator::emit_flatten_and_hash() {
    Label key_loop, slow, hashed;
    L(key_loop);
    tzcnt(index_.cvt32(), iter_.cvt32());
    mov(key_, qword[keys_ + index_ * 8]);
    mov(map0_, qword[key_ + kKeyMap]);
    mov(map1_, qword[key_ + kKeyMap + 8]);
    imul(out_, index_, stride_);
    add(out_, rsp);  // scratch is at rsp + 0
    xor_(hash_.cvt32(), hash_.cvt32());

    if (shape_.expected_map) {
        const uint64_t e0 = shape_.expected_map->bits[0], e1 = shape_.expected_map->bits[1];
        mov(value_, e0);
        cmp(map0_, value_);
        jne(slow, T_NEAR);
        // Unit 1 holds at most 20 bits: always a sign-extendable immediate.
        static_assert(kUnit1Bits < 31);
        cmp(map1_, static_cast<uint32_t>(e1));
        jne(slow, T_NEAR);
        emit_fast_path();
        jmp(hashed, T_NEAR);
    }
    L(slow);
    emit_slow_path();

    L(hashed);
    emit_hash_finish();
    mov(dword[rsp + hashes_off_ + index_ * 4], hash_.cvt32());

    // cmap_find_batch()'s round 1, while the key is at hand: the first
    // bucket, h1 = rehash(impl, hash), is computed and prefetched now, so
    // its load overlaps the next keys' flattening.
    const Reg64 impl = map0_, bucket = out_;
    mov(impl, qword[rsp + impl_off_]);
    mov(value_.cvt32(), hash_.cvt32());
    mov(hash_.cvt32(), dword[impl + kCmapImplBasis]);
    emit_finish(hash_, value_, idx_.cvt32());
    mov(dword[rsp + h1_off_ + index_ * 4], hash_.cvt32());
    emit_bucket_address(hash_, dword[impl + kCmapImplMask], impl, bucket);
    mov(qword[rsp + b1_off_ + index_ * 8], bucket);
    prefetcht0(ptr[bucket]);

    blsr(iter_.cvt32(), iter_.cvt32());
    jnz(key_loop, T_NEAR);
}

void LookupGenerator::emit_fast_path() {
    for (uint32_t b = 0; b < blocks_; b++) {
        const LookupShape::Block block = shape_.block(b);
        if (block.expected_index >= 0) {
            mov(value_, qword[key_ + kKeyValues + 8 * block.expected_index]);
            and_(value_, qword[subtable_ + kMaskValues + 8 * b]);
        } else {
            xor_(value_.cvt32(), value_.cvt32());  // such packets lack the word
        }
        mov(qword[out_ + 8 * b], value_);
        emit_hash_add();
    }
}

// hash = hash_add64(hash, value).  Clobbers idx_.
void LookupGenerator::emit_hash_add() {
    if (kCrc32) {
        crc32(hash_, value_);
        return;
    }
    // mhash_add() of the low, then the high 32 bits.  OVS skips the mixing
    // step for zero data; mixing zero yields zero, so no branch is needed.
    const Reg32 h = hash_.cvt32(), d = idx_.cvt32();
    for (int half = 0; half < 2; half++) {
        if (half == 0) {
            imul(d, value_.cvt32(), kMhashC1);
        } else {
            mov(idx_, value_);
            shr(idx_, 32);
            imul(d, d, kMhashC1);
        }
        rol(d, 15);
        imul(d, d, kMhashC2);
        xor_(h, d);
        rol(h, 13);
        lea(h, ptr[hash_ + hash_ * 4 + kMhashAdd]);  // h * 5 + 0xe6546b64
    }
}

// hash = hash_finish(hash, blocks * 8).  Clobbers value_.
void LookupGenerator::emit_hash_finish() {
    mov(value_.cvt32(), blocks_ * 8);
    emit_finish(hash_, value_, value_.cvt32());
}

// h = hash_finish(h, final) (final: a 32-bit value, zero-extended); `t` is
// a scratch register and may be `final`'s own.
void LookupGenerator::emit_finish(const Reg64& hash, const Reg64& final, const Reg32& t) {
    const Reg32 h = hash.cvt32();
    auto xor_shift = [&](int shift) {
        mov(t, h);
        shr(t, shift);
        xor_(h, t);
    };
    if (kCrc32) {
        crc32(hash, final);
        imul(h, h, kCrcFinishMul);
        xor_shift(16);
        return;
    }
    xor_(h, final.cvt32());
    xor_shift(16);
    imul(h, h, kMhashFinish1);
    xor_shift(13);
    imul(h, h, kMhashFinish2);
    xor_shift(16);
}

void LookupGenerator::emit_slow_path() {
    // Tier-up input: how many keys came this way, and one of their maps.
    inc(dword[rsp + slow_count_off_]);
    mov(qword[rsp + sample_off_], map0_);
    mov(qword[rsp + sample_off_ + 8], map1_);
    if (shape_.u1() > 0) {
        popcnt(values1_, map0_);
        lea(values1_, ptr[key_ + values1_ * 8 + kKeyValues]);
    }
    for (uint32_t b = 0; b < blocks_; b++) {
        const LookupShape::Block block = shape_.block(b);
        const Reg64& map = block.unit == 0 ? map0_ : map1_;
        // idx = popcount(map & ((1 << bit) - 1)); the load is unconditional,
        // as in OVS: idx never exceeds the key's value count.
        if (block.bit == 0) {
            xor_(idx_.cvt32(), idx_.cvt32());
        } else {
            mov(idx_.cvt32(), block.bit);
            bzhi(idx_, map, idx_);
            popcnt(idx_, idx_);
        }
        if (block.unit == 0) {
            mov(value_, qword[key_ + idx_ * 8 + kKeyValues]);
        } else {
            mov(value_, qword[values1_ + idx_ * 8]);
        }
        bt(map, static_cast<uint8_t>(block.bit));  // CF = the key has the word
        sbb(present_, present_);                   // all ones when CF
        and_(value_, present_);
        and_(value_, qword[subtable_ + kMaskValues + 8 * b]);
        mov(qword[out_ + 8 * b], value_);
        emit_hash_add();
    }
}

void LookupGenerator::emit_probe() {
    Label no_sample;
    mov(value_.cvt32(), dword[rsp + slow_count_off_]);
    test(value_.cvt32(), value_.cvt32());
    jz(no_sample);
    mov(idx_, reinterpret_cast<uint64_t>(profile_));
    add(qword[idx_ + offsetof(LookupProfile, slow_keys)], value_);
    mov(present_, qword[rsp + sample_off_]);
    mov(qword[idx_ + offsetof(LookupProfile, sample_map)], present_);
    mov(present_, qword[rsp + sample_off_ + 8]);
    mov(qword[idx_ + offsetof(LookupProfile, sample_map) + 8], present_);
    L(no_sample);
    emit_cmap_find_batch();
}

// OVS's cmap_find_batch() (lib/cmap.c), inline, in its three rounds (the
// first ran in the flattening loop) and with its concurrent-reader protocol: a bucket is read
// between two reads of its counter, which must be even and unchanged (else read again); a key not
// in its first bucket is looked for in its second; and when it is in neither but the first bucket
// changed meanwhile (a writer may have moved it), OVS's own cmap_find() takes a stable reading of
// both.  x86 keeps loads in order, so OVS's acquire fences need no instruction here.
//
// The difference: a bucket's five hashes are compared with the key's in one
// vpcmpeqd over the bucket's first 32 bytes (counter, hashes[5], half a
// node), whose mask bits 1..5 are the hashes.
void LookupGenerator::emit_cmap_find_batch() {
    const Reg64 impl = r8, bucket = rdi, node = rax, counter = rdx, hash = rcx, round2 = r11;
    const Reg32 mask = r9d;
    Label round2_loop, round2_miss, round2_next, round3, round3_found, round3_miss, round3_next,
        done;

    // Round 1 ran in the flattening loop (first buckets computed and
    // prefetched), on the impl read once in the prologue.
    mov(impl, qword[rsp + impl_off_]);
    mov(mask, dword[impl + kCmapImplMask]);

    // Round 2: look in the first buckets; prefetch the second ones of
    // the keys not found.
    xor_(round2.cvt32(), round2.cvt32());
    mov(iter_.cvt32(), found_.cvt32());
    L(round2_loop);
    tzcnt(index_.cvt32(), iter_.cvt32());
    emit_find_key_in_bucket(b1_off_, bucket, hash, node, counter);
    jz(round2_miss);
    emit_found(node);
    jmp(round2_next);
    L(round2_miss);
    mov(dword[rsp + c1_off_ + index_ * 4], counter.cvt32());
    mov(node.cvt32(), dword[rsp + h1_off_ + index_ * 4]);
    rol(node.cvt32(), 16);  // other_hash(h1)
    emit_bucket_address(node, mask, impl, bucket);
    mov(qword[rsp + b2_off_ + index_ * 8], bucket);
    prefetcht0(ptr[bucket]);
    bts(round2.cvt32(), index_.cvt32());
    L(round2_next);
    blsr(iter_.cvt32(), iter_.cvt32());
    jnz(round2_loop);

    // Round 3: the second buckets.
    test(round2.cvt32(), round2.cvt32());
    jz(done, T_NEAR);
    mov(iter_.cvt32(), round2.cvt32());
    L(round3);
    tzcnt(index_.cvt32(), iter_.cvt32());
    emit_find_key_in_bucket(b2_off_, bucket, hash, node, counter);
    jnz(round3_found);
    mov(bucket, qword[rsp + b1_off_ + index_ * 8]);
    mov(counter.cvt32(), dword[bucket]);
    cmp(counter.cvt32(), dword[rsp + c1_off_ + index_ * 4]);
    je(round3_miss);
    // The first bucket changed since round 2: let cmap_find() read both
    // buckets stably.  (Only rbx, rbp and r12-r15 live across the call.)
    lea(rdi, ptr[subtable_ + kSubtableRules]);
    mov(esi, dword[rsp + hashes_off_ + index_ * 4]);
    mov(rax, reinterpret_cast<uint64_t>(&cmap_find));
    call(rax);
    test(node, node);
    jnz(round3_found);
    L(round3_miss);
    btr(found_.cvt32(), index_.cvt32());
    jmp(round3_next);
    L(round3_found);
    emit_found(node);
    L(round3_next);
    blsr(iter_.cvt32(), iter_.cvt32());
    jnz(round3);
    L(done);
}

// Key i's search in the bucket stored for it at [rsp + slots + 8i]; ends
// with ZF set when the key's hash is not there (node = 0).
void LookupGenerator::emit_find_key_in_bucket(uint32_t slots, const Reg64& bucket,
                                              const Reg64& hash, const Reg64& node,
                                              const Reg64& counter) {
    mov(bucket, qword[rsp + slots + index_ * 8]);
    mov(hash.cvt32(), dword[rsp + hashes_off_ + index_ * 4]);
    emit_find_in_bucket(bucket, hash, node, counter);
    test(node, node);
}

// nodes[i] = node, and its rule's key starts loading.
void LookupGenerator::emit_found(const Reg64& node) {
    mov(qword[rsp + nodes_off_ + index_ * 8], node);
    prefetcht0(ptr[node + kRuleValues]);
}

// bucket = &impl->buckets[h & mask]; clobbers h.
void LookupGenerator::emit_bucket_address(const Reg64& h, const Operand& mask, const Reg64& impl,
                                          const Reg64& bucket) {
    and_(h.cvt32(), mask);
    shl(h, kCmapBucketShift);
    lea(bucket, ptr[impl + h + kCmapImplBuckets]);
}

// cmap_find_in_bucket() between two reads of an even, unchanged counter:
// node = the first entry of `bucket` whose hash is `hash`'s low 32 bits, or
// 0; `counter` = the counter it was read under.  Clobbers ymm1, ymm2.
void LookupGenerator::emit_find_in_bucket(const Reg64& bucket, const Reg64& hash, const Reg64& node,
                                          const Reg64& counter) {
    Label retry, odd, none, check;
    vmovd(xmm1, hash.cvt32());
    vpbroadcastd(ymm1, xmm1);
    jmp(retry);
    L(odd);
    pause();  // a writer is in the bucket
    L(retry);
    mov(counter.cvt32(), dword[bucket]);
    test(counter.cvt8(), 1);
    jnz(odd);
    vpcmpeqd(ymm2, ymm1, yword[bucket]);
    vmovmskps(node.cvt32(), ymm2);
    and_(node.cvt32(), kCmapHashLanes);
    jz(none);
    tzcnt(node.cvt32(), node.cvt32());  // lane j holds hashes[j - 1]
    mov(node, qword[bucket + node * 8 + kCmapBucketNodes - 8]);
    jmp(check);
    L(none);
    xor_(node.cvt32(), node.cvt32());
    L(check);
    cmp(counter.cvt32(), dword[bucket]);
    jne(retry);
}

void LookupGenerator::emit_verify() {
    Label verify_key, chain, next_node, next_key;
    const Reg64 node = hash_;  // rax: the hash is stored, reuse the register

    // The candidate rules were prefetched as the cmap rounds found them.
    test(found_.cvt32(), found_.cvt32());
    jz(epilogue_, T_NEAR);
    mov(iter_.cvt32(), found_.cvt32());
    L(verify_key);
    tzcnt(index_.cvt32(), iter_.cvt32());
    mov(node, qword[rsp + nodes_off_ + index_ * 8]);
    imul(out_, index_, stride_);
    add(out_, rsp);
    L(chain);
    emit_rule_compare(next_node);
    mov(qword[rules_ + index_ * 8], node);  // the node is the rule
    jmp(next_key);
    L(next_node);
    mov(node, qword[node]);  // node->next; x86 loads are acquire loads
    test(node, node);
    jnz(chain);
    btr(found_.cvt32(), index_.cvt32());  // hash collision only: not found here
    L(next_key);
    blsr(iter_.cvt32(), iter_.cvt32());
    jnz(verify_key, T_NEAR);
}

// Jumps to `mismatch` unless the rule at rax holds exactly the blocks at
// rdi: 4 blocks per ymm, then 2 per xmm, then one in a GPR.
void LookupGenerator::emit_rule_compare(const Label& mismatch) {
    const Reg64 node = hash_;
    uint32_t b = 0;
    bool vector = false;
    auto accumulate = [&](const Xmm& part) {
        if (vector) {
            vpor(ymm0, ymm0, Ymm(part.getIdx()));  // VEX xmm ops zeroed the upper half
        } else if (part.getIdx() != 0) {
            vmovdqa(ymm0, Ymm(part.getIdx()));
        }
        vector = true;
    };
    for (; b + 4 <= blocks_; b += 4) {
        const Ymm t = vector ? ymm1 : ymm0;
        vmovdqu(t, yword[out_ + 8 * b]);
        vpxor(t, t, yword[node + kRuleValues + 8 * b]);
        accumulate(t);
    }
    if (b + 2 <= blocks_) {
        const Xmm t = vector ? xmm1 : xmm0;
        vmovdqu(t, xword[out_ + 8 * b]);
        vpxor(t, t, xword[node + kRuleValues + 8 * b]);
        accumulate(t);
        b += 2;
    }
    if (vector) {
        vptest(ymm0, ymm0);
        jnz(mismatch, T_NEAR);
    }
    if (b < blocks_) {
        mov(value_, qword[out_ + 8 * b]);
        cmp(value_, qword[node + kRuleValues + 8 * b]);
        jne(mismatch, T_NEAR);
    }
}

void LookupGenerator::emit_epilogue() {
    L(epilogue_);
    // OVS's plain "subtable->hit_cnt += count": racy by design, as in OVS.
    popcnt(eax, found_.cvt32());
    add(dword[subtable_ + kSubtableHits], eax);
    mov(eax, found_.cvt32());
    vzeroupper();
    add(rsp, frame_bytes_);
    for (const Reg64& r : {r15, r14, r13, r12, rbp, rbx}) {
        pop(r);
    }
    ret();
}

}  // namespace ovscls::jit
