/* cpu_features.h: what the CPU this process runs on offers, as its CPUID
 * (real or emulated) and the kernel's saved register state report it.
 *
 * This is the tests' own oracle for which lookups must be available here.
 * It is independent of the code under test: OVS decides with cpu_has_isa()
 * (lib/cpu.c), the JIT with xbyak's Cpu; the tests ask GCC's
 * __builtin_cpu_supports(), so that a probe that wrongly declines (or
 * wrongly accepts) on some CPU is a test failure, not a silent skip.
 * Plain C: tests/cpu_has.c uses it for the shell tests too. */
#ifndef OVSCLS_TESTS_CPU_FEATURES_H
#define OVSCLS_TESTS_CPU_FEATURES_H

#include <stdbool.h>

struct cpu_features {
    bool sse42; /* crc32: OVS's hash in the sse42 flavour */
    bool popcnt;
    bool avx2;
    bool bmi1;
    bool bmi2;
    bool avx512f; /* with bmi2: what OVS's avx512_gather probe asks for */
};

static inline struct cpu_features cpu_features_read(void) {
    __builtin_cpu_init();
    struct cpu_features f;
    f.sse42 = __builtin_cpu_supports("sse4.2");
    f.popcnt = __builtin_cpu_supports("popcnt");
    f.avx2 = __builtin_cpu_supports("avx2");
    f.bmi1 = __builtin_cpu_supports("bmi");
    f.bmi2 = __builtin_cpu_supports("bmi2");
    f.avx512f = __builtin_cpu_supports("avx512f");
    return f;
}

#endif /* OVSCLS_TESTS_CPU_FEATURES_H */
