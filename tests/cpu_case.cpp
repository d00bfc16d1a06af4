// cpu_case.cpp: the oracle of cpu_case.hpp, and a Google Test environment
// that prints its "cpu case:" line once at the start of every test binary.
#include "cpu_case.hpp"

#include <gtest/gtest.h>

#include <cstdio>

#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"
#if defined(__x86_64__)
#include "cpu_features.h"
#endif
#if OVSCLS_WITH_JIT
#include "jit/engine.hpp"
#endif

namespace ovscls::test {
namespace {

// "the CPU has A, B" or "the CPU lacks B" for the features in `needed`.
struct Need {
    bool has;
    const char* name;
};
[[maybe_unused]] Availability from_cpu(std::initializer_list<Need> needed) {
    std::string has, lacks;
    for (const Need& n : needed) {
        std::string& list = n.has ? has : lacks;
        list += (list.empty() ? "" : ", ") + std::string(n.name);
    }
    if (!lacks.empty()) {
        return {false, "the CPU lacks " + lacks};
    }
    return {true, "the CPU has " + has};
}

}  // namespace

Availability ovs_avx512_gather_availability() {
#if !defined(__x86_64__)
    return {false, "not in this OVS build: it is x86-64 code"};
#else
    if (OVSCLS_OVS_VERSION >= 40000) {
        return {false, "removed in OVS 4.0 (with the lookup registry)"};
    }
    if (!ovsb_ovs_avx512_gather_built()) {
        return {false, "not in this OVS build: it needs OVS core built with SSE4.2"};
    }
    const cpu_features f = cpu_features_read();
    return from_cpu({{f.avx512f, "AVX512F"}, {f.bmi2, "BMI2"}});
#endif
}

Availability jit_avx2_availability() {
#if !OVSCLS_WITH_JIT
    return {false, jit_build_note()};
#else
    if (!jit::process_engine().config().enabled) {
        return {false, "disabled by OVSCLS_JIT"};
    }
    const cpu_features f = cpu_features_read();
    if (OVSCLS_HASH_CRC32) {
        return from_cpu({{f.avx2, "AVX2"},
                         {f.bmi1, "BMI1"},
                         {f.bmi2, "BMI2"},
                         {f.popcnt, "POPCNT"},
                         {f.sse42, "SSE4.2"}});
    }
    return from_cpu({{f.avx2, "AVX2"}, {f.bmi1, "BMI1"}, {f.bmi2, "BMI2"}, {f.popcnt, "POPCNT"}});
#endif
}

std::string cpu_case_line() {
    std::string line = "cpu case:";
    for (auto [name, a] : {std::pair{"ovs_avx512_gather", ovs_avx512_gather_availability()},
                           std::pair{"jit_avx2", jit_avx2_availability()}}) {
        line += std::string(" ") + name + (a.available ? " checked (" : " NOT checked (") + a.why +
                ");";
    }
    line.pop_back();
    return line;
}

namespace {

class PrintCpuCase : public ::testing::Environment {
    void SetUp() override { std::printf("%s\n", cpu_case_line().c_str()); }
};

// Registered before main() runs; Google Test owns and deletes it.
[[maybe_unused]] ::testing::Environment* const kPrintCpuCase =
    ::testing::AddGlobalTestEnvironment(new PrintCpuCase);

}  // namespace
}  // namespace ovscls::test
