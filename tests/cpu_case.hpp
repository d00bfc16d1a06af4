// cpu_case.hpp: which of the CPU-dependent lookups the tests must find
// available on the CPU they run on, decided from that CPU
// (tests/cpu_features.h) and from what the build compiled in, never from
// the machine the tests were written on.
//
// A lookup the oracle says is available must be there (a probe declining
// it is a failure); one it says is not is left out, and every test binary
// says so in a "cpu case:" line that tests/run.sh prints.
#pragma once

#include <cstdint>
#include <string>

namespace ovscls::test {

struct Availability {
    bool available;
    std::string why;  // either way, e.g. "the CPU lacks AVX512F"
};

// OVS's avx512_gather: registered by this OVS build, and the CPU has
// AVX512F and BMI2 (what dpcls_subtable_avx512_gather_probe() asks for).
Availability ovs_avx512_gather_availability();

// OVS's avx512_gather accepts fingerprints of at most this many blocks
// (fewer than two ZMM registers of 8 words, or one of its specialized
// instances, all smaller; lib/dpif-netdev-lookup-avx512-gather.c).
constexpr uint32_t kOvsAvx512GatherMaxBlocks = 15;

// jit_avx2: enabled (OVSCLS_JIT), and the CPU has AVX2, BMI1, BMI2, POPCNT
// and, when OVS hashes with CRC32, SSE4.2.
Availability jit_avx2_availability();

// One line naming what this process checks and what not, and why.
std::string cpu_case_line();

}  // namespace ovscls::test
