#!/usr/bin/env bash
# Runs every test: the GoogleTest suites against the OVS build flavours
# (sse42: CRC32 hash, the default; debian: Debian's flags, mhash; and both
# again for aarch64, cross-built and run under qemu-aarch64) of OVS 3.1 and
# against OVS 3.5's and 4.0's sse42 libs, the
# concurrency and JIT tests under ThreadSanitizer, all unit tests under
# AddressSanitizer (with leak detection) and UndefinedBehaviorSanitizer, a
# short microbenchmark smoke run, the fuzz targets for 40 s each
# (tests/fuzz.sh), the JIT flood run, the phy-to-phy
# benchmark's traffic and parser tests, the README's figures against
# docs/results and the docs' links (tests/docs/),
# ovs-vswitchd 3.1, 3.5 and 4.0 with the plugin built in (tests/vswitchd/run.sh:
# OVS's own testsuite subsets and the project's end-to-end tests), Debian 12's
# openvswitch packages rebuilt with the plugin, installed, run with ovs-ctl
# and purged (packages/build-deb.sh, tests/deb_install_test.sh), the patched
# ovs-vswitchd cross-built for aarch64 under qemu-aarch64
# (tests/vswitchd/foreign_arch_test.sh), and the tests
# again on emulated CPUs without AVX512 and without AVX2
# (tests/emulated_cpus.sh).  Installs its own packages
# (scripts/install-deps.sh).
#
#   tests/run.sh        every test (what .ci/run runs); no options
#   tests/run.sh --help this text, nothing run
set -euo pipefail
case "${1:-}" in
    "") ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "tests/run.sh: no options but --help (got '$1'); it runs every test" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."

passed=0
failed=0

# Each "=== " phase is timed; the table is printed at the end, so that a CI
# log says where the time went.
timings=()
phase_name=""
phase_start=$SECONDS
phase() {  # phase TITLE: ends the running phase, starts the next
    if [ -n "$phase_name" ]; then
        timings+=("$(printf '%6d s  %s' $((SECONDS - phase_start)) "$phase_name")")
    fi
    phase_name=$1
    phase_start=$SECONDS
    [ -z "$1" ] || echo "=== $1"
}

phase "packages (scripts/install-deps.sh)"
scripts/install-deps.sh

# The late phases' builds (patched ovs-vswitchd, Debian packages) start now
# in the background at nice 19 (tests/prebuild.sh says why); each phase
# still asks for its build and waits for it if need be.  The builder has a
# session of its own, ended on every exit of this script.
prebuild_log=$(mktemp)
setsid nice -n 19 tests/prebuild.sh $$ >"$prebuild_log" 2>&1 </dev/null &
prebuild_pid=$!
stop_prebuild() {
    kill -TERM -- "-$prebuild_pid" 2>/dev/null || true
    rm -f "$prebuild_log"
}
trap stop_prebuild EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

run_ctest() {  # run_ctest BUILD_DIR [ctest args]
    local dir=$1
    shift
    local log
    log=$(mktemp)
    if (cd "$dir" && ctest --output-on-failure "$@") | tee "$log"; then :; fi
    # "100% tests passed, 0 tests failed out of 6"
    local line total bad
    line=$(grep -E 'tests passed, [0-9]+ tests? failed out of' "$log" || echo "0 failed out of 0")
    total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
    bad=$(sed -E 's/.*, ([0-9]+) tests? failed.*/\1/' <<<"$line")
    [ "$total" -gt 0 ] || bad=1
    passed=$((passed + total - bad))
    failed=$((failed + bad))
    rm -f "$log"
}

# Each test binary says which CPU-dependent lookups it checked here
# ("cpu case:" lines, cpu_case.hpp); this prints them after the run.
print_cpu_case() {  # print_cpu_case BUILD_DIR
    grep -h -E '^cpu case:|^not checked' "$1/Testing/Temporary/LastTest.log" | sort | uniq -c |
        sed 's/^ */    /'
}

for flavour in sse42 debian; do
    phase "tests against the OVS '$flavour' flavour"
    scripts/build.sh "$flavour"
    run_ctest "build/$flavour"
    print_cpu_case "build/$flavour"
done

# OVS 3.5 (Debian 13's 3.5.0, fetched through a private apt configuration
# by cmake/fetch-debian-package.sh): the same tests against its lib, in the
# sse42 flavour (the hash flavours are the same code in both releases).
phase "tests against OVS 3.5's lib, flavour 'sse42'"
scripts/build.sh --ovs 3.5 sse42
run_ctest build/sse42-ovs3.5
print_cpu_case build/sse42-ovs3.5

# OVS 4.0 (Debian testing's 4.0.0, fetched the same way; its lib compiles
# with this machine's toolchain): the same tests against its lib, whose
# struct flow (32 registers) and struct dpcls_subtable (no registry) differ
# from 3.x's (classifier/ovs_abi.h).
phase "tests against OVS 4.0's lib, flavour 'sse42'"
scripts/build.sh --ovs 4.0 sse42
run_ctest build/sse42-ovs4.0
print_cpu_case build/sse42-ovs4.0

# aarch64: cross-built with Debian's g++-aarch64-linux-gnu, run under
# qemu-aarch64 (ctest's CMAKE_CROSSCOMPILING_EMULATOR): generic and
# specialized against OVS's own lookups, with OVS's ARM CRC32C hash
# (aarch64-crc) and with Debian's flags (aarch64-debian, mhash).  No JIT.
for flavour in aarch64-crc aarch64-debian; do
    phase "tests against the OVS '$flavour' flavour (cross-built, under qemu-aarch64)"
    scripts/build.sh "$flavour"
    run_ctest "build/$flavour"
    print_cpu_case "build/$flavour"
done

phase "concurrency and JIT tests under ThreadSanitizer"
scripts/build.sh tsan --target concurrency_test --target jit_test --target fused_test
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1"
run_ctest build/tsan -R 'concurrency_test|jit_test|fused_test'

phase "the unit tests under AddressSanitizer (leaks too) and UndefinedBehaviorSanitizer"
scripts/build.sh asan --target differential_test --target classifier_test --target hash_test \
    --target corpus_test --target concurrency_test --target jit_test --target fused_test \
    --target tail_index_test
export ASAN_OPTIONS="halt_on_error=1 detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
run_ctest build/asan

phase "microbenchmark smoke run (one fingerprint)"
if build/sse42/perf/microbench --quick --benchmark_filter='^4,1/real/1000/' \
    --benchmark_min_time=0.001 >/dev/null; then
    passed=$((passed + 1))
else
    echo "microbench smoke run failed" >&2
    failed=$((failed + 1))
fi

phase "whole-classifier benchmark smoke run (perf/dpcls_bench --quick: every lookup answers as OVS's generic)"
if build/sse42/perf/dpcls_bench --quick; then
    passed=$((passed + 1))
else
    echo "dpcls_bench smoke run failed" >&2
    failed=$((failed + 1))
fi
# Its negative control: a lookup that drops a found key must fail the check.
if out=$(build/sse42/perf/dpcls_bench --quick --table prefix-13 --broken-lookup 2>&1); then
    echo "dpcls_bench --broken-lookup passed: its answer check checks nothing" >&2
    failed=$((failed + 1))
elif grep -q '^prefix-13/broken: [1-9][0-9]* of 8192 keys answered differently' <<<"$out"; then
    echo "dpcls_bench --broken-lookup: the answer check caught it ($(grep 'broken:' <<<"$out"))"
    passed=$((passed + 1))
else
    echo "$out" >&2
    echo "dpcls_bench --broken-lookup failed otherwise than by its answer check" >&2
    failed=$((failed + 1))
fi

phase "instruction counts under callgrind (perf/instructions.sh smoke run)"
if out=$(perf/instructions.sh '^4,1/real/1/hit/' 2>&1) &&
    grep -Eq '^4,1/real/1/hit +[0-9.]+ \([0-9.]+\) +[0-9.]+ \(1\.00\)' <<<"$out"; then
    passed=$((passed + 1))
else
    echo "$out" >&2
    echo "instructions.sh smoke run failed" >&2
    failed=$((failed + 1))
fi

phase "fuzz targets (libFuzzer under ASan and UBSan, 40 s each)"
if tests/fuzz.sh --seconds 40; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

phase "JIT flood (10000 new masks): bounded compiles, every packet hits"
if build/sse42/perf/jit_flood >/dev/null; then
    passed=$((passed + 1))
else
    echo "jit_flood failed" >&2
    failed=$((failed + 1))
fi

phase "perf/p2p: scenario (b)'s prefix traffic, pcap format, testpmd parser"
if python3 tests/p2p_test.py; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

phase "docs: README.md's figures are on dated docs/results pages, no broken link"
for check in tests/docs/readme_figures_test.py tests/docs/links_test.py; do
    if python3 "$check"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
done

phase "the patch series: OVS's checkpatch.py on every patch of every release line"
if patches/checkpatch.sh; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

phase "ovs-vswitchd 3.1 with the plugin (patched build, OVS testsuite, project tests)"
if tests/vswitchd/run.sh; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

phase "ovs-vswitchd 3.5 with the plugin (patched build, OVS testsuite, project tests)"
if tests/vswitchd/run.sh --ovs 3.5 --no-flood; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

# OVS 4.0 with its own series (lookup providers): the testsuite subset with
# the plugin's providers as defaults, each lookup checked, and the project's
# validate and flood tests; run.sh says what it does not run there.
phase "ovs-vswitchd 4.0 with the plugin (patched build, OVS testsuite, project tests)"
if tests/vswitchd/run.sh --ovs 4.0; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

# The scripts that run as root refuse what they could not undo and leave
# no mount or scratch folder behind (deb_install_test.sh --here on a
# machine with OVS traces, build-ovs.sh --prefix, debian-root.sh's mounts).
phase "host safety: refusals of deb_install_test.sh --here and build-ovs.sh, debian-root.sh's mounts"
if tests/host_safety_test.sh; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

# Debian 12's own openvswitch source package with the series and the
# plugin (packages/build-deb.sh, cached), installed over Debian's packages
# with apt in a throw-away Debian 12 root, run with ovs-ctl (both
# ovs-vswitchd alternatives), taken back to Debian's and purged, the root
# compared with before and the machine checked to be unchanged.
phase "Debian 12 packages with the plugin: build, install over Debian's, run with ovs-ctl, purge"
if debs=$(packages/build-deb.sh | tail -1) && tests/deb_install_test.sh "$debs"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

phase "the patched ovs-vswitchd for aarch64 (cross-built, run under qemu-aarch64)"
if native=$(patches/cached-build.sh --plugin-default | tail -1) &&
    foreign=$(patches/cached-build.sh --host aarch64-linux-gnu --plugin-default | tail -1) &&
    tests/vswitchd/foreign_arch_test.sh "$foreign" "$native"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

phase "the tests on emulated CPUs: without AVX512, without AVX2 (qemu-x86_64)"
if prefix=$(patches/cached-build.sh --plugin-default | tail -1) &&
    tests/emulated_cpus.sh build/sse42 "$prefix"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1))
fi

phase ""
wait "$prebuild_pid" 2>/dev/null || true
echo "time per phase:"
printf '%s\n' "${timings[@]}"
echo "built ahead in the background (tests/prebuild.sh, inside the phases' times):"
sed 's/^prebuild: /    /' "$prebuild_log"
# CI stops a run at 90 minutes; a cold run (empty build cache) is the
# longest, and this line says how close this one came.
echo "budget: $((SECONDS / 60)) min $((SECONDS % 60)) s of CI's 90 min ($((SECONDS * 100 / 5400))%)"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
