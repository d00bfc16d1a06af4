#!/usr/bin/env bash
# The tests on CPUs this machine may not have, under qemu-x86_64 (user-mode
# emulation: the program's CPUID answers as the emulated model does, and
# an instruction the model lacks raises SIGILL as on real hardware):
#
#   no-avx512  Haswell: AVX2, BMI1/2, SSE4.2, POPCNT, no AVX512.  OVS's
#              avx512_gather declines; jit_avx2 runs.
#   no-avx2    Nehalem: SSE4.2, POPCNT, no AVX, no BMI.  jit_avx2 declines
#              too; generic and specialized serve everything.
#
# Each runs the sse42 flavour's test binaries and the end-to-end
# ovs-vswitchd test (vswitchd_test.sh with OVS_EMULATOR), so that both the
# case of the real CPU and these are checked on every machine CI gets.
# The tests decide what to expect from the CPU they see (cpu_case.hpp,
# cpu_has.c); this script first checks that the emulated CPU lacks what its
# name says, so a qemu whose model gained a feature cannot pass unnoticed.
#
#   tests/emulated_cpus.sh BUILD_DIR [OVS_PREFIX]
#
# BUILD_DIR is scripts/build.sh sse42's; OVS_PREFIX a --plugin-default
# build (without it the ovs-vswitchd test is not run, and it says so).
# Prints "emulated cpus: N passed, N failed".
set -uo pipefail
build=${1:?usage: emulated_cpus.sh BUILD_DIR [OVS_PREFIX]}
prefix=${2:-}
here=$(cd "$(dirname "$0")" && pwd)

# Models named with the features qemu's TCG does not emulate removed, so
# that it does not warn about them.
declare -A models=(
    [no-avx512]="Haswell-noTSX,-pcid,-x2apic,-tsc-deadline,-invpcid"
    [no-avx2]="Nehalem"
)
declare -A must_lack=([no-avx512]="avx512f" [no-avx2]="avx2 bmi1 bmi2")
tests=(differential_test corpus_test classifier_test hash_test concurrency_test jit_test)

passed=0
failed=0
if ! command -v qemu-x86_64 >/dev/null; then
    echo "emulated cpus: qemu-x86_64 not found (Debian's qemu-user; scripts/install-deps.sh)"
    echo "emulated cpus: 0 passed, 1 failed"
    exit 1
fi
for name in no-avx512 no-avx2; do
    emulator="qemu-x86_64 -cpu ${models[$name]}"
    features=" $($emulator "$build/tests/cpu_has") "
    echo "=== emulated CPU '$name' ($emulator):$features"
    bad=""
    for f in ${must_lack[$name]}; do
        [[ $features == *" $f "* ]] && bad="$bad $f"
    done
    if [ -n "$bad" ]; then
        echo "not ok - the emulated CPU was to lack${bad}, but has it"
        failed=$((failed + 1))
        continue
    fi
    for t in "${tests[@]}"; do
        log=$(mktemp)
        if (cd "$build/tests" && $emulator "./$t") >"$log" 2>&1; then
            passed=$((passed + 1))
            echo "ok - $t ($(grep -m1 '^cpu case:' "$log" | sed 's/^cpu case: //'))"
            grep -E '^not checked' "$log" | sort | uniq -c | sed 's/^ */    /'
        else
            failed=$((failed + 1))
            echo "not ok - $t"
            tail -40 "$log" | sed 's/^/    /'
        fi
        rm -f "$log"
    done
    if [ -z "$prefix" ]; then
        echo "not checked: ovs-vswitchd on this CPU (no patched build given)"
    elif OVS_EMULATOR="$emulator" "$here/vswitchd/vswitchd_test.sh" "$prefix" >"$build/vswitchd-$name.log" 2>&1; then
        passed=$((passed + 1))
        echo "ok - ovs-vswitchd end to end"
        grep -E '^ok - .*CPU' "$build/vswitchd-$name.log" | sed 's/^/    /'
    else
        failed=$((failed + 1))
        echo "not ok - ovs-vswitchd end to end"
        # Each failed check with what follows it up to the next passing
        # one (the test's own dump of the state it saw), and where the
        # logs are.
        awk '/^not ok/ { show = 1 } /^ok - / { show = 0 } show || /logs kept/' \
            "$build/vswitchd-$name.log" | sed 's/^/    /'
    fi
done
echo "emulated cpus: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
