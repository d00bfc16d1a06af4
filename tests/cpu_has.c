/* cpu_has: prints the features of tests/cpu_features.h that the CPU it
 * runs on offers, one line, space-separated (e.g. "sse42 popcnt avx2 bmi1
 * bmi2"), for shell tests that decide what to expect from the CPU; run it
 * under the same emulator as the program under test. */
#include <stdio.h>

#include "cpu_features.h"

int main(void) {
    const struct cpu_features f = cpu_features_read();
    const struct {
        bool has;
        const char* name;
    } all[] = {{f.sse42, "sse42"}, {f.popcnt, "popcnt"}, {f.avx2, "avx2"},
               {f.bmi1, "bmi1"},   {f.bmi2, "bmi2"},     {f.avx512f, "avx512f"}};
    const char* sep = "";
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i].has) {
            printf("%s%s", sep, all[i].name);
            sep = " ";
        }
    }
    printf("\n");
    return 0;
}
