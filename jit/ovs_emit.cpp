#include "jit/ovs_emit.hpp"

namespace ovscls::jit::emit {
namespace {

using namespace Xbyak;

// lib/hash.h's constants, as 32-bit immediates.
constexpr int kCrcFinishMul = static_cast<int>(0x805204f3u);
constexpr int kMhashC1 = static_cast<int>(0xcc9e2d51u);
constexpr int kMhashC2 = static_cast<int>(0x1b873593u);
constexpr int kMhashAdd = static_cast<int>(0xe6546b64u);
constexpr int kMhashFinish1 = static_cast<int>(0x85ebca6bu);
constexpr int kMhashFinish2 = static_cast<int>(0xc2b2ae35u);

}  // namespace

void hash_add(CodeGenerator& g, const Reg64& hash, const Reg64& value, const Reg64& scratch) {
    if (kCrc32) {
        g.crc32(hash, value);
        return;
    }
    // mhash_add() of the low, then the high 32 bits.  OVS skips the mixing
    // step for zero data; mixing zero yields zero, so no branch is needed.
    const Reg32 h = hash.cvt32(), d = scratch.cvt32();
    for (int half = 0; half < 2; half++) {
        if (half == 0) {
            g.imul(d, value.cvt32(), kMhashC1);
        } else {
            g.mov(scratch, value);
            g.shr(scratch, 32);
            g.imul(d, d, kMhashC1);
        }
        g.rol(d, 15);
        g.imul(d, d, kMhashC2);
        g.xor_(h, d);
        g.rol(h, 13);
        g.lea(h, g.ptr[hash + hash * 4 + kMhashAdd]);  // h * 5 + 0xe6546b64
    }
}

void hash_finish(CodeGenerator& g, const Reg64& hash, const Reg64& final, const Reg32& t) {
    const Reg32 h = hash.cvt32();
    auto xor_shift = [&](int shift) {
        g.mov(t, h);
        g.shr(t, shift);
        g.xor_(h, t);
    };
    if (kCrc32) {
        g.crc32(hash, final);
        g.imul(h, h, kCrcFinishMul);
        xor_shift(16);
        return;
    }
    g.xor_(h, final.cvt32());
    xor_shift(16);
    g.imul(h, h, kMhashFinish1);
    xor_shift(13);
    g.imul(h, h, kMhashFinish2);
    xor_shift(16);
}

}  // namespace ovscls::jit::emit
