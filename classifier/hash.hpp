// hash.hpp: Open vSwitch's hash_add64() and hash_finish(), in both of the
// flavours lib/hash.h compiles to.
//
// A lookup must hash the flattened key exactly as the OVS build it lives in
// hashed the rule (a CRC32 lookup against mhash-filed rules misses every
// packet).  The build defines OVSCLS_HASH_CRC32 from the OVS flavour it links
// and compiles this project with that flavour's flags; the assert below
// ties the two together, and tests/hash_test.cpp compares these with OVS's
// own functions.
#pragma once

#include <cstdint>

#include "ovs_abi.h"

#if OVSCLS_HASH_CRC32
#include <nmmintrin.h>
#endif

namespace ovscls::hash {

#if OVSCLS_HASH_CRC32
static_assert(__SSE4_2__, "the CRC32 flavour needs -msse4.2, like its OVS lib");

inline uint32_t add64(uint32_t hash, uint64_t data) {
    return static_cast<uint32_t>(_mm_crc32_u64(hash, data));
}

inline uint32_t finish(uint32_t hash, uint32_t final) {
    // The low 32 bits of OVS's 64-bit arithmetic are all it returns.
    uint32_t h = static_cast<uint32_t>(_mm_crc32_u64(hash, final)) * 0x805204f3u;
    return h ^ (h >> 16);
}

#else
#if defined(__SSE4_2__)
#error "OVSCLS_HASH_CRC32=0 but compiled with -msse4.2: OVS would hash with CRC32"
#endif

inline uint32_t rot(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

inline uint32_t mhash_add(uint32_t hash, uint32_t data) {
    if (data) {  // zero-valued data does not change the hash before mixing
        data *= 0xcc9e2d51u;
        data = rot(data, 15);
        data *= 0x1b873593u;
        hash ^= data;
    }
    hash = rot(hash, 13);
    return hash * 5 + 0xe6546b64u;
}

inline uint32_t add64(uint32_t hash, uint64_t data) {
    return mhash_add(mhash_add(hash, static_cast<uint32_t>(data)),
                     static_cast<uint32_t>(data >> 32));
}

inline uint32_t finish(uint32_t hash, uint32_t final) {
    hash ^= final;
    hash ^= hash >> 16;
    hash *= 0x85ebca6bu;
    hash ^= hash >> 13;
    hash *= 0xc2b2ae35u;
    hash ^= hash >> 16;
    return hash;
}
#endif

}  // namespace ovscls::hash
