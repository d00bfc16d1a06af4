// The C++ hash mirror against the hash_add64()/hash_finish() of the OVS lib
// this build links (CRC32 or mhash, per flavour).
#include "classifier/hash.hpp"

#include <gtest/gtest.h>

#include <random>

#include "reference/ovs_reference.h"

TEST(Hash, MirrorEqualsOvs) {
    EXPECT_EQ(ovsb_hash_is_crc32(), OVSCLS_HASH_CRC32);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 100000; i++) {
        const uint32_t h = static_cast<uint32_t>(rng());
        const uint64_t data = i % 7 ? rng() : (i % 3 ? 0 : rng() >> 32);  // zero halves too
        ASSERT_EQ(ovscls::hash::add64(h, data), ovsb_hash_add64(h, data));
        const uint32_t final = static_cast<uint32_t>(rng() % 600);
        ASSERT_EQ(ovscls::hash::finish(h, final), ovsb_hash_finish(h, final));
    }
}
