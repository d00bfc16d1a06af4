#include "jit/lookup_generator.hpp"

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "jit/cmap_probe.hpp"
#include "jit/ovs_emit.hpp"

namespace ovscls::jit {
namespace {

using namespace Xbyak;
using namespace emit;

// Registers, by phase.  The callee-saved ones (kLive) hold the call's state
// through the whole function and across the rare call into cmap_find().
// The caller-saved ones are named per phase; a later phase takes them over
// once the earlier one is done with them, and within a phase no register has
// two roles (checked below at compile time).
struct LiveRegs {
    Reg64 subtable = util::r12;  // dpcls_subtable*
    Reg64 found = util::r13;     // keys_map, then the found map
    Reg64 keys = util::r14;      // const netdev_flow_key**
    Reg64 rules = util::r15;     // dpcls_rule**
    Reg64 iter = util::rbx;      // keys still to visit in a loop
    Reg64 index = util::rbp;     // i, the key being worked on
};
// Flattening and hashing one key: emit_flatten_and_hash and its paths.
struct FlattenRegs {
    Reg64 key = util::r8;       // keys[i]
    Reg64 map0 = util::r9;      // key->map.bits[0]
    Reg64 map1 = util::r10;     // key->map.bits[1]
    Reg64 values1 = util::r11;  // slow path: &key->values[popcount(map0)]
    Reg64 out = util::rdi;      // the key's flattened blocks
    Reg64 hash = util::rax;     // the running hash
    Reg64 value = util::rcx;    // one block
    Reg64 idx = util::rdx;      // slow path: the block's value index; mhash scratch
    Reg64 present = util::rsi;  // slow path: all ones when the key has the word
};
// cmap round 1, after the key's blocks are stored: its map and blocks are
// done with.
struct Round1Regs {
    Reg64 hash = util::rax;     // the key's hash, then h1, then the first bucket
    Reg64 impl = util::r9;      // the cmap impl
    Reg64 final = util::rcx;    // hash_finish()'s second operand
    Reg64 scratch = util::rdx;  // hash_finish()'s shifts
};
// The profile update, once per burst, after the verification.
struct ProfileRegs {
    Reg64 count = util::rcx;    // the burst's slow-path keys found here, then how many
    Reg64 profile = util::rdx;  // the set's first ProfileSlot, then the subtable's
    Reg64 word = util::rsi;     // the sampled key's index, then the key
};
// cmap rounds 2 and 3.
struct ProbeRegs {
    Reg64 impl = util::r8;      // the cmap impl
    Reg64 mask = util::r9;      // impl->mask (32 bits)
    Reg64 round2 = util::r11;   // keys not in their first bucket
    Reg64 bucket = util::rdi;   // the bucket searched
    Reg64 hash = util::rcx;     // the key's hash
    Reg64 node = util::rax;     // the node found (cmap_find()'s result); round 2's h2 and b2
    Reg64 counter = util::rdx;  // the bucket's counter
};
// Verifying candidates: emit_verify and emit_rule_compare.
struct VerifyRegs {
    Reg64 node = util::rax;    // the candidate rule
    Reg64 blocks = util::rdi;  // the key's flattened blocks
    Reg64 value = util::rcx;   // one block (the compare's GPR tail)
};
constexpr LiveRegs kLive;
constexpr FlattenRegs kFlat;
constexpr Round1Regs kRound1;
constexpr ProfileRegs kProfile;
constexpr ProbeRegs kProbe;
constexpr VerifyRegs kVerify;

// True when no two of `regs` are one register, and none is callee-saved
// state (kLive) or rsp.
constexpr bool distinct_scratch(std::initializer_list<Reg64> regs) {
    for (const Reg64& a : regs) {
        if (a.getIdx() == Operand::RSP || !distinct({a, kLive.subtable, kLive.found, kLive.keys,
                                                     kLive.rules, kLive.iter, kLive.index})) {
            return false;
        }
    }
    return distinct(regs);
}
static_assert(distinct_scratch({}) && distinct_scratch({kLive.subtable}) == false,
              "the check itself");
static_assert(distinct_scratch({kFlat.key, kFlat.map0, kFlat.map1, kFlat.values1, kFlat.out,
                                kFlat.hash, kFlat.value, kFlat.idx, kFlat.present}));
static_assert(distinct_scratch({kRound1.hash, kRound1.impl, kRound1.final, kRound1.scratch}));
static_assert(distinct_scratch({kProfile.count, kProfile.profile, kProfile.word}));
static_assert(distinct_scratch({kProbe.impl, kProbe.mask, kProbe.round2, kProbe.bucket, kProbe.hash,
                                kProbe.node, kProbe.counter}));
static_assert(distinct_scratch({kVerify.node, kVerify.blocks, kVerify.value}));
// cmap_find() returns its node in rax and takes its arguments in rdi, esi.
static_assert(kProbe.node.getIdx() == Operand::RAX);
// Round 1 follows the flattening of the same key: it may take over only
// what the flattening no longer needs (the map and the blocks' address),
// and keeps the hash where the flattening left it.
static_assert(kRound1.hash.getIdx() == kFlat.hash.getIdx());

// Frame fields, as rsp displacements (index scaled by the caller).
constexpr uint32_t kFrameHashes = offsetof(LookupFrame, hashes);
constexpr uint32_t kFrameH1 = offsetof(LookupFrame, h1);
constexpr uint32_t kFrameC1 = offsetof(LookupFrame, c1);
constexpr uint32_t kFrameB1 = offsetof(LookupFrame, b1);
constexpr uint32_t kFrameB2 = offsetof(LookupFrame, b2);
constexpr uint32_t kFrameNodes = offsetof(LookupFrame, nodes);
constexpr uint32_t kFrameImpl = offsetof(LookupFrame, impl);
constexpr uint32_t kFrameBuckets = offsetof(LookupFrame, buckets);
constexpr uint32_t kFrameSlowPath = offsetof(LookupFrame, slow_path);

}  // namespace

std::unique_ptr<LookupGenerator> LookupGenerator::create(const LookupShape& shape,
                                                         ProfileTable* profiles,
                                                         Allocator* allocator,
                                                         GenerateStatus* status) noexcept {
    if (shape.blocks() > kMaxBlocks) {
        *status = {
            GenerateStatus::Code::kTooManyBlocks,
            std::to_string(shape.blocks()) + " blocks, more than " + std::to_string(kMaxBlocks)};
        return nullptr;
    }
    return make<LookupGenerator>(status, shape, profiles, allocator);
}

LookupGenerator::LookupGenerator(const LookupShape& shape, ProfileTable* profiles,
                                 Allocator* allocator)
    : Kernel(reserved_bytes(shape), allocator),
      shape_(shape),
      profiles_(profiles),
      blocks_(shape.blocks()),
      stride_(shape.blocks() * 8),
      blocks_off_(sizeof(LookupFrame)),
      // After six pushes rsp is 8 mod 16: a frame of 8 mod 16 realigns it
      // for the call into cmap_find().
      frame_bytes_(((sizeof(LookupFrame) + kMaxBurst * shape.blocks() * 8 + 15) & ~15u) + 8) {}

void LookupGenerator::generate() {
    emit_prologue();
    emit_flatten_and_hash();
    emit_cmap_find_batch();
    emit_verify();
    emit_epilogue();
    emit_cold();
}

size_t LookupGenerator::reserved_bytes(const LookupShape& shape) {
    // Measured (jit_test prints it): about 900 bytes fixed (with the
    // endbr64 and up to two stack probes), and at most 80 bytes per block
    // with CRC32 (both paths and the compare), 190 with mhash; reserved with
    // a margin.
    return whole_pages(1024 + shape.blocks() * (kCrc32 ? 96 : 200));
}

// In: the System V arguments (rdi subtable, esi keys_map, rdx keys,
// rcx rules).  Out: kLive set up (found = iter = keys_map), the frame
// reserved, frame.impl, frame.buckets and frame.slow_path set; jumps to the epilogue for an
// empty burst.  Clobbers rax.
void LookupGenerator::emit_prologue() {
    emit_enter(frame_bytes_);  // up to ~8.4 KiB (32 blocks): probed page by page
    mov(kLive.subtable, rdi);
    mov(kLive.found.cvt32(), esi);
    mov(kLive.keys, rdx);
    mov(kLive.rules, rcx);
    mov(kLive.iter.cvt32(), esi);
    mov(dword[rsp + kFrameSlowPath], 0);
    // cmap->impl, read once (rcu-protected): every key of the burst is
    // looked up in the same impl, as cmap_find_batch() does.
    mov(rax, qword[kLive.subtable + kSubtableRules]);
    mov(qword[rsp + kFrameImpl], rax);
    lea(rax, ptr[rax + kCmapImplBuckets]);
    mov(qword[rsp + kFrameBuckets], rax);
    test(kLive.iter.cvt32(), kLive.iter.cvt32());
    jz(epilogue_, T_NEAR);
}

// For every key of iter: flattens its blocks into the frame, hashes them
// (frame.hashes[i]), and runs cmap round 1 (frame.h1[i], frame.b1[i], the
// bucket prefetched).  In: kLive, frame.impl.  Out: iter = 0.  Clobbers
// kFlat's and kRound1's registers, the flags.
void LookupGenerator::emit_flatten_and_hash() {
    Label key_loop, slow, hashed;
    L(key_loop);
    tzcnt(kLive.index.cvt32(), kLive.iter.cvt32());
    mov(kFlat.key, qword[kLive.keys + kLive.index * 8]);
    mov(kFlat.map0, qword[kFlat.key + kKeyMap]);
    mov(kFlat.map1, qword[kFlat.key + kKeyMap + 8]);
    imul(kFlat.out, kLive.index, stride_);
    lea(kFlat.out, ptr[rsp + kFlat.out + blocks_off_]);
    xor_(kFlat.hash.cvt32(), kFlat.hash.cvt32());

    if (shape_.expected_map) {
        const uint64_t e0 = shape_.expected_map->bits[0], e1 = shape_.expected_map->bits[1];
        mov(kFlat.value, e0);
        cmp(kFlat.map0, kFlat.value);
        jne(slow, T_NEAR);
        // Unit 1 holds at most 20 bits: always a sign-extendable immediate.
        static_assert(kUnit1Bits < 31);
        cmp(kFlat.map1, static_cast<uint32_t>(e1));
        jne(slow, T_NEAR);
        emit_fast_path();
        jmp(hashed, T_NEAR);
    }
    L(slow);
    emit_slow_path();

    L(hashed);
    emit_hash_finish();
    mov(dword[rsp + kFrameHashes + kLive.index * 4], kFlat.hash.cvt32());
    emit_cmap_round1();

    blsr(kLive.iter.cvt32(), kLive.iter.cvt32());
    jnz(key_loop, T_NEAR);
}

// cmap_find_batch()'s round 1, while the key is at hand: the first bucket,
// h1 = rehash(impl, hash), is computed and prefetched now, so its load
// overlaps the next keys' flattening.  In: kRound1.hash = the key's hash,
// kLive.index.  Out: frame.h1[i], frame.b1[i].  Clobbers kRound1's
// registers.
void LookupGenerator::emit_cmap_round1() {
    const Round1Regs& r = kRound1;
    mov(r.impl, qword[rsp + kFrameImpl]);
    mov(r.final.cvt32(), r.hash.cvt32());
    mov(r.hash.cvt32(), dword[r.impl + kCmapImplBasis]);
    emit_finish(r.hash, r.final, r.scratch.cvt32());
    mov(dword[rsp + kFrameH1 + kLive.index * 4], r.hash.cvt32());
    cmap_bucket_address(*this, r.hash, dword[r.impl + kCmapImplMask], qword[rsp + kFrameBuckets]);
    mov(qword[rsp + kFrameB1 + kLive.index * 8], r.hash);
    prefetcht0(ptr[r.hash]);
}

// The blocks of a key whose map is the expected one: fixed value indexes.
// In: kFlat.key, kFlat.out, kFlat.hash.  Out: the blocks at kFlat.out,
// kFlat.hash updated.  Clobbers kFlat.value, kFlat.idx.
void LookupGenerator::emit_fast_path() {
    for (uint32_t b = 0; b < blocks_; b++) {
        const LookupShape::Block block = shape_.block(b);
        if (block.expected_index >= 0) {
            mov(kFlat.value, qword[kFlat.key + kKeyValues + 8 * block.expected_index]);
            and_(kFlat.value, qword[kLive.subtable + kMaskValues + 8 * b]);
        } else {
            xor_(kFlat.value.cvt32(), kFlat.value.cvt32());  // such packets lack the word
        }
        mov(qword[kFlat.out + 8 * b], kFlat.value);
        emit_hash_add();
    }
}

// kFlat.hash = hash_add64(kFlat.hash, kFlat.value).  Clobbers kFlat.idx.
void LookupGenerator::emit_hash_add() { hash_add(*this, kFlat.hash, kFlat.value, kFlat.idx); }

// kFlat.hash = hash_finish(kFlat.hash, blocks * 8).  Clobbers kFlat.value.
void LookupGenerator::emit_hash_finish() {
    mov(kFlat.value.cvt32(), blocks_ * 8);
    emit_finish(kFlat.hash, kFlat.value, kFlat.value.cvt32());
}

// hash = hash_finish(hash, final) (final: a 32-bit value, zero-extended).
// Clobbers `t`, which may be `final`'s own register.
void LookupGenerator::emit_finish(const Reg64& hash, const Reg64& final, const Reg32& t) {
    hash_finish(*this, hash, final, t);
}

// The blocks of any key, as OVS's generic lookup finds them.  In: kFlat.key,
// map0, map1, out, hash.  Out: the blocks at kFlat.out, kFlat.hash updated,
// the key's bit set in frame.slow_path.  Clobbers kFlat.values1, value,
// idx, present.
void LookupGenerator::emit_slow_path() {
    const FlattenRegs& f = kFlat;
    // Tier-up input: which keys came this way (emit_profile() keeps those
    // this subtable matches).
    xor_(f.idx.cvt32(), f.idx.cvt32());
    bts(f.idx.cvt32(), kLive.index.cvt32());
    or_(dword[rsp + kFrameSlowPath], f.idx.cvt32());
    if (shape_.u1() > 0) {
        popcnt(f.values1, f.map0);
        lea(f.values1, ptr[f.key + f.values1 * 8 + kKeyValues]);
    }
    for (uint32_t b = 0; b < blocks_; b++) {
        const LookupShape::Block block = shape_.block(b);
        const Reg64& map = block.unit == 0 ? f.map0 : f.map1;
        // idx = popcount(map & ((1 << bit) - 1)); the load is unconditional,
        // as in OVS: idx never exceeds the key's value count.
        if (block.bit == 0) {
            xor_(f.idx.cvt32(), f.idx.cvt32());
        } else {
            mov(f.idx.cvt32(), block.bit);
            bzhi(f.idx, map, f.idx);
            popcnt(f.idx, f.idx);
        }
        if (block.unit == 0) {
            mov(f.value, qword[f.key + f.idx * 8 + kKeyValues]);
        } else {
            mov(f.value, qword[f.values1 + f.idx * 8]);
        }
        bt(map, static_cast<uint8_t>(block.bit));  // CF = the key has the word
        sbb(f.present, f.present);                 // all ones when CF
        and_(f.value, f.present);
        and_(f.value, qword[kLive.subtable + kMaskValues + 8 * b]);
        mov(qword[f.out + 8 * b], f.value);
        emit_hash_add();
    }
}

// Once per burst, when a key that took the slow path was found here: finds
// the subtable's slot (ProfileSlot: the set its address hashes to, then the
// way whose owner it is), adds how many such keys the burst had and stores
// the map of the first of them there (plain stores).  No slot of its own:
// nothing is written.  In: frame.slow_path, kLive.found (the keys matched),
// kLive.keys, kLive.subtable.  Clobbers kProfile's registers, the flags.
void LookupGenerator::emit_profile() {
    const ProfileRegs& r = kProfile;
    static_assert(sizeof(ProfileSlot) * kProfileWays == 256, "a set is 1 << 8 bytes");
    Label no_sample, update;
    Label way[kProfileWays];
    mov(r.count.cvt32(), dword[rsp + kFrameSlowPath]);
    and_(r.count.cvt32(), kLive.found.cvt32());
    jz(no_sample, T_NEAR);
    // profile = &profiles->slots[profile_set(subtable) * kProfileWays]
    mov(r.word, kProfileHashMul);
    mov(r.profile, kLive.subtable);
    imul(r.profile, r.word);
    shr(r.profile, 64 - kProfileSetBits);
    shl(r.profile, 8);
    mov(r.word, reinterpret_cast<uint64_t>(profiles_->slots));
    add(r.profile, r.word);
    for (uint32_t w = 0; w < kProfileWays; w++) {
        cmp(qword[r.profile + w * sizeof(ProfileSlot) + offsetof(ProfileSlot, owner)],
            kLive.subtable);
        je(way[w], T_NEAR);
    }
    jmp(no_sample, T_NEAR);
    for (uint32_t w = kProfileWays; w-- > 0;) {
        L(way[w]);
        if (w) {
            add(r.profile, sizeof(ProfileSlot));  // falls through to w - 1, then update
        }
    }
    L(update);
    tzcnt(r.word.cvt32(), r.count.cvt32());
    mov(r.word, qword[kLive.keys + r.word * 8]);  // the first such key
    popcnt(r.count.cvt32(), r.count.cvt32());
    add(qword[r.profile + offsetof(ProfileSlot, slow_keys)], r.count);
    mov(r.count, qword[r.word + kKeyMap]);
    mov(qword[r.profile + offsetof(ProfileSlot, sample_map)], r.count);
    mov(r.count, qword[r.word + kKeyMap + 8]);
    mov(qword[r.profile + offsetof(ProfileSlot, sample_map) + 8], r.count);
    L(no_sample);
}

// OVS's cmap_find_batch() (lib/cmap.c), inline, in its three rounds (the
// first ran in the flattening loop), each over the whole burst so that one
// key's bucket loads while another's is compared, with the concurrent-reader
// protocol of cmap_probe.hpp: a bucket read under an even, unchanged
// counter; a key not in its first bucket looked for in its second; and
// when it is in neither but the first bucket changed meanwhile, OVS's own
// cmap_find().
//
// In: kLive.found = the burst, frame.hashes, h1, b1, buckets, impl.  Out:
// kLive.found = the keys whose hash has a node, frame.nodes[i] for them
// (their rules prefetched).  Clobbers kProbe's registers, rsi, r10 (the
// call), ymm1, ymm2, the flags.
void LookupGenerator::emit_cmap_find_batch() {
    const ProbeRegs& r = kProbe;
    const emit::CmapBucketRegs bucket{r.bucket, r.counter, r.node, r.node};
    // Labels that the probes' cold code jumps to live as long as the kernel.
    Label& round2_found = new_label();
    Label& round3_found = new_label();
    Label& round3_miss = new_label();
    Label& round3_changed = new_label();
    Label done;

    mov(r.impl, qword[rsp + kFrameImpl]);
    mov(r.mask.cvt32(), dword[r.impl + kCmapImplMask]);

    // Round 2: look in the first buckets; prefetch the second ones of
    // the keys not found.
    xor_(r.round2.cvt32(), r.round2.cvt32());
    emit_each_key(kLive.found.cvt32(), [&](const Label& next) {
        emit_key_bucket(kFrameB1);
        cmap_probe_bucket(*this, bucket, round2_found);
        mov(dword[rsp + kFrameC1 + kLive.index * 4], r.counter.cvt32());
        mov(r.node.cvt32(), dword[rsp + kFrameH1 + kLive.index * 4]);
        cmap_other_hash(*this, r.node);
        cmap_bucket_address(*this, r.node, r.mask.cvt32(), qword[rsp + kFrameBuckets]);
        mov(qword[rsp + kFrameB2 + kLive.index * 8], r.node);
        prefetcht0(ptr[r.node]);
        bts(r.round2.cvt32(), kLive.index.cvt32());
        jmp(next);
        L(round2_found);
        emit_found(r.node);
    });

    // Round 3: the second buckets.
    test(r.round2.cvt32(), r.round2.cvt32());
    jz(done, T_NEAR);
    emit_each_key(r.round2.cvt32(), [&](const Label& next) {
        emit_key_bucket(kFrameB2);
        cmap_probe_bucket(*this, bucket, round3_found);
        mov(r.bucket, qword[rsp + kFrameB1 + kLive.index * 8]);
        mov(r.counter.cvt32(), dword[rsp + kFrameC1 + kLive.index * 4]);
        cmap_first_bucket_changed(*this, r.bucket, r.counter, round3_changed);
        L(round3_miss);
        btr(kLive.found.cvt32(), kLive.index.cvt32());
        jmp(next);
        L(round3_found);
        emit_found(r.node);
    });
    L(done);

    // The first bucket changed since round 2: cmap_find() reads both
    // buckets stably.  It clobbers every caller-saved register; nothing of
    // kProbe is live across it but what is reloaded per key (impl and mask
    // only feed round 2, which is over).
    cold([this, &round3_found, &round3_miss, &round3_changed] {
        L(round3_changed);
        lea(rdi, ptr[kLive.subtable + kSubtableRules]);
        mov(esi, dword[rsp + kFrameHashes + kLive.index * 4]);
        cmap_find_call(*this, kProbe.node, round3_miss);
        jmp(round3_found, T_NEAR);
    });
}

// For key i: bucket = the bucket stored for it at frame + slots + 8i, and
// its hash broadcast in ymm1's eight dwords (cmap_probe_bucket()'s input).
// Clobbers kProbe.hash.
void LookupGenerator::emit_key_bucket(uint32_t slots) {
    mov(kProbe.bucket, qword[rsp + slots + kLive.index * 8]);
    mov(kProbe.hash.cvt32(), dword[rsp + kFrameHashes + kLive.index * 4]);
    vmovd(xmm1, kProbe.hash.cvt32());
    vpbroadcastd(ymm1, xmm1);
}

// frame.nodes[i] = node, and its rule's key starts loading.  Clobbers
// nothing.
void LookupGenerator::emit_found(const Reg64& node) {
    mov(qword[rsp + kFrameNodes + kLive.index * 8], node);
    prefetcht0(ptr[node + kRuleValues]);
}

// For every key of kLive.found: walks its node chain for the first rule
// whose key equals the flattened blocks; rules[i] = that rule, or the key
// leaves kLive.found (a hash collision).  In: frame.nodes.  Clobbers
// kVerify's registers, ymm0, ymm1, the flags.
void LookupGenerator::emit_verify() {
    const VerifyRegs& r = kVerify;

    // The candidate rules were prefetched as the cmap rounds found them.
    test(kLive.found.cvt32(), kLive.found.cvt32());
    jz(epilogue_, T_NEAR);
    emit_each_key(kLive.found.cvt32(), [&](const Label& next) {
        Label chain, next_node;
        mov(r.node, qword[rsp + kFrameNodes + kLive.index * 8]);
        imul(r.blocks, kLive.index, stride_);
        lea(r.blocks, ptr[rsp + r.blocks + blocks_off_]);
        L(chain);
        emit_rule_compare(next_node);
        mov(qword[kLive.rules + kLive.index * 8], r.node);  // the node is the rule
        jmp(next);
        L(next_node);
        mov(r.node, qword[r.node]);  // node->next; x86 loads are acquire loads
        test(r.node, r.node);
        jnz(chain);
        btr(kLive.found.cvt32(), kLive.index.cvt32());  // hash collision only: not found here
    });
}

// For each set bit of `keys`, lowest first: kLive.index = its number, then
// the code `body` emits, which may jump to the label it is given to go on
// with the next key.  In: `keys` (a register, not kLive.iter, or memory).
// Out: kLive.iter = 0.  Clobbers kLive.index, the flags.
void LookupGenerator::emit_each_key(const Operand& keys,
                                    const std::function<void(const Label& next)>& body) {
    Label loop, next;
    mov(kLive.iter.cvt32(), keys);
    L(loop);
    tzcnt(kLive.index.cvt32(), kLive.iter.cvt32());
    body(next);
    L(next);
    blsr(kLive.iter.cvt32(), kLive.iter.cvt32());
    jnz(loop);  // backwards: short or near, as the distance needs
}

// Jumps to `mismatch` unless the rule at kVerify.node holds exactly the
// blocks at kVerify.blocks: 4 blocks per ymm, then 2 per xmm, then one in a
// GPR.  Clobbers kVerify.value, ymm0, ymm1, the flags.
void LookupGenerator::emit_rule_compare(const Label& mismatch) {
    const VerifyRegs& r = kVerify;
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
        vmovdqu(t, yword[r.blocks + 8 * b]);
        vpxor(t, t, yword[r.node + kRuleValues + 8 * b]);
        accumulate(t);
    }
    if (b + 2 <= blocks_) {
        const Xmm t = vector ? xmm1 : xmm0;
        vmovdqu(t, xword[r.blocks + 8 * b]);
        vpxor(t, t, xword[r.node + kRuleValues + 8 * b]);
        accumulate(t);
        b += 2;
    }
    if (vector) {
        vptest(ymm0, ymm0);
        jnz(mismatch, T_NEAR);
    }
    if (b < blocks_) {
        mov(r.value, qword[r.blocks + 8 * b]);
        cmp(r.value, qword[r.node + kRuleValues + 8 * b]);
        jne(mismatch, T_NEAR);
    }
}

// The profile update (emit_profile()), subtable->hit_cnt +=
// popcount(found); returns found.  Every path of the function ends here,
// the empty burst's and the one without a candidate included.  Restores the
// callee-saved registers; clears the upper halves of the ymm registers.
void LookupGenerator::emit_epilogue() {
    L(epilogue_);
    emit_profile();
    // OVS's plain "subtable->hit_cnt += count": racy by design, as in OVS.
    popcnt(eax, kLive.found.cvt32());
    add(dword[kLive.subtable + kSubtableHits], eax);
    mov(eax, kLive.found.cvt32());
    emit_leave(frame_bytes_);
}

}  // namespace ovscls::jit
