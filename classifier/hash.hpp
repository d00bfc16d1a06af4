// hash.hpp: Open vSwitch's hash_add64() and hash_finish(), in both of the
// flavours lib/hash.h compiles to.
//
// A lookup must hash the flattened key exactly as the OVS build it lives in
// hashed the rule (a CRC32 lookup against mhash-filed rules misses every
// packet).  lib/hash.h compiles to one of two functions:
//   - CRC32C when the compiler targets x86-64 with SSE4.2 (_mm_crc32_u64) or
//     aarch64 with the CRC extension (__crc32cd, hash-aarch64.h): the same
//     polynomial and the same finish, so the same hash;
//   - mhash (murmur-style) otherwise.
// The build defines OVSCLS_HASH_CRC32 from the OVS flavour it links
// (cmake/ovs-flavours.txt) and compiles this project with that flavour's
// flags; the checks below tie the two together at compile time, exactly as
// lib/hash.h chooses, and tests/hash_test.cpp compares these with OVS's own
// functions.
#pragma once

#include <cstdint>

#include "classifier/ovs_abi.h"

// lib/hash.h's own condition for CRC32C.
#if (defined(__SSE4_2__) && defined(__x86_64__)) || \
    (defined(__ARM_FEATURE_CRC32) && defined(__aarch64__))
#define OVSCLS_COMPILER_HASH_CRC32 1
#else
#define OVSCLS_COMPILER_HASH_CRC32 0
#endif
#if OVSCLS_HASH_CRC32 && !OVSCLS_COMPILER_HASH_CRC32
#error \
    "the OVS lib hashes with CRC32C, but these flags give neither -msse4.2 (x86-64) nor +crc (aarch64)"
#elif !OVSCLS_HASH_CRC32 && OVSCLS_COMPILER_HASH_CRC32
#error "the OVS lib hashes with mhash, but with these flags OVS's lib/hash.h would use CRC32C"
#endif

#if OVSCLS_HASH_CRC32 && defined(__x86_64__)
#include <nmmintrin.h>
#elif OVSCLS_HASH_CRC32 && defined(__aarch64__)
#include <arm_acle.h>
#endif

namespace ovscls::hash {

#if OVSCLS_HASH_CRC32
inline uint32_t crc32c_u64(uint32_t crc, uint64_t data) {
#if defined(__x86_64__)
    return static_cast<uint32_t>(_mm_crc32_u64(crc, data));
#else
    return __crc32cd(crc, data);
#endif
}

inline uint32_t add64(uint32_t hash, uint64_t data) { return crc32c_u64(hash, data); }

inline uint32_t finish(uint32_t hash, uint32_t final) {
    // The low 32 bits of OVS's 64-bit arithmetic are all it returns.
    uint32_t h = crc32c_u64(hash, final) * 0x805204f3u;
    return h ^ (h >> 16);
}

#else

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
