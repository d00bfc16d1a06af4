#!/usr/bin/env bash
# Runs the tests, in phases; each phase has a label (tests/run.sh --list):
#
#   unit        the GoogleTest suites (unit, differential, fused, JIT,
#               concurrency) against OVS 3.1's x86 flavours (sse42: CRC32
#               hash, the default; debian: Debian's flags, mhash) and
#               against OVS 3.5's and 4.0's sse42 libs
#   aarch64     the same against OVS 3.1's aarch64 flavours (cross-built, run
#               under qemu-aarch64), and the patched ovs-vswitchd for
#               aarch64 (tests/vswitchd/foreign_arch_test.sh)
#   sanitizer   the concurrency and JIT tests under ThreadSanitizer, all
#               unit tests under AddressSanitizer (leaks too) and UBSan
#   bench       smoke runs of the microbenchmark, the whole-classifier
#               benchmark (and its negative control), callgrind's counts and
#               the JIT flood
#   fuzz        the libFuzzer targets, 40 s each (tests/fuzz.sh)
#   p2p         the phy-to-phy benchmark's traffic and parser tests
#   docs        README.md's figures against docs/results, the docs' links,
#               the man page made of the reference page
#   series      OVS's checkpatch.py on every patch of every release line
#   vswitchd    ovs-vswitchd 3.1, 3.5 and 4.0 with the plugin built in:
#               OVS's own testsuite subsets and the project's end-to-end
#               tests (tests/vswitchd/run.sh)
#   host-safety what the root-run scripts refuse and leave behind
#   packages    Debian 12's and Debian 13's openvswitch packages rebuilt
#               with the plugin, installed over Debian's, run with ovs-ctl
#               and purged
#   emulated    the tests on emulated CPUs without AVX512, without AVX2
#
#   tests/run.sh                 every phase (what .ci/run runs)
#   tests/run.sh --quick         the unit tests of the sse42 flavour and 10 s
#                                of each fuzzer: the loop while changing code
#   tests/run.sh --only LABEL... the phases of these labels
#   tests/run.sh --list          the labels, nothing run
#   tests/run.sh --help          this text, nothing run
#
# Installs its own packages (scripts/install-deps.sh).  Ends with the time
# each phase took, the budget line (CI stops a run at 90 minutes) and
# "tests: N passed, N failed" over ctest's JUnit reports (one per test) and
# the scripts' exit statuses (one per script).
set -euo pipefail
cd "$(dirname "$0")/.."

labels=(unit aarch64 sanitizer bench fuzz p2p docs series vswitchd host-safety packages emulated)
selected=("${labels[@]}")
quick=no
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
args=("$@")
case "${1:-}" in
    "") ;;
    -h | --help) usage; exit 0 ;;
    --list) printf '%s\n' "${labels[@]}"; exit 0 ;;
    --quick) [ $# -eq 1 ] || { echo "tests/run.sh: --quick takes nothing after it" >&2; exit 2; }
        quick=yes selected=(unit fuzz) ;;
    --only)
        shift
        [ $# -gt 0 ] || { echo "tests/run.sh: --only needs labels (tests/run.sh --list)" >&2; exit 2; }
        for l in "$@"; do
            [[ " ${labels[*]} " == *" $l "* ]] ||
                { echo "tests/run.sh: no phase is labelled '$l' (tests/run.sh --list)" >&2; exit 2; }
        done
        selected=("$@") ;;
    *) echo "tests/run.sh: unknown option '$1' (tests/run.sh --help)" >&2; exit 2 ;;
esac
selected_label() { [[ " ${selected[*]} " == *" $1 "* ]]; }

# Daemons are reaped here, not by PID 1.  OVS's tests stop a daemon and then
# wait, in steps of a second, until its pid is gone (OVS_WAIT_WHILE([kill -0
# $TMPPID])); a detached daemon is an orphan, and its pid is gone only once
# its reaper waits for it.  Where PID 1 reaps late (seen on this project's
# development machine: a VM's init that reaps every second or two), every test
# waited 2-4 s after its daemons had exited: 297 of the 471 s that OVS
# 3.1's 73 tests took on 2026-12-04.  tini -s (Debian's tini) makes itself
# the reaper of every orphan below it and waits for each at once.
if [ "${OVSCLS_TESTS_REAPER:-}" != "$PPID" ]; then
    scripts/apt-install-missing.sh tests/run.sh tini
    # The marker names tini's pid (this script's parent after the exec),
    # so that a value inherited from elsewhere does not skip the reaper.
    export OVSCLS_TESTS_REAPER=$$
    exec tini -s -- "$PWD/tests/run.sh" "${args[@]}"
fi
full=no
[ "${#selected[@]}" -eq "${#labels[@]}" ] && [ "$quick" = no ] && full=yes

passed=0
failed=0

# Each "=== " phase is timed; the table is printed at the end, so that a CI
# log says where the time went.
# Beside each phase's time, how busy the machine's CPUs were (all of them,
# background builds included, from /proc/stat): a phase near 100% is
# CPU-bound, one far below it leaves room for work beside it.
timings=()
phase_name=""
phase_start=$SECONDS
cpu_busy_ticks() {  # the ticks all CPUs spent busy since boot (not idle, not iowait)
    awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}
phase_busy=$(cpu_busy_ticks)
ticks_per_s=$(getconf CLK_TCK)
cpus=$(nproc)
phase() {  # phase TITLE: ends the running phase, starts the next
    local busy wall
    busy=$(cpu_busy_ticks)
    if [ -n "$phase_name" ]; then
        wall=$((SECONDS - phase_start))
        timings+=("$(printf '%6d s  %3d%%  %s' "$wall" \
            $(((busy - phase_busy) * 100 / ticks_per_s / cpus / (wall > 0 ? wall : 1))) "$phase_name")")
    fi
    phase_name=$1
    phase_start=$SECONDS
    phase_busy=$busy
    [ -z "$1" ] || echo "=== $1"
}
count() {  # count COMMAND...: runs it; its exit status is one pass or one failure
    if "$@"; then
        passed=$((passed + 1))
    else
        echo "FAILED: $*" >&2
        failed=$((failed + 1))
    fi
}

phase "packages (scripts/install-deps.sh)"
scripts/install-deps.sh

# A full run builds the later releases' patched ovs-vswitchd, the Debian
# packages and the aarch64 switch in the background at nice 19 while OVS
# 3.1's testsuite runs (tests/prebuild.sh says why; start_prebuild below);
# each phase still asks for its build and waits for it if need be.  The
# builder has a session of its own, ended on every exit of this script.
prebuild_pid=""
prebuild_log=$(mktemp)
stop_prebuild() {
    [ -z "$prebuild_pid" ] || kill -TERM -- "-$prebuild_pid" 2>/dev/null || true
    rm -f "$prebuild_log"
}
trap stop_prebuild EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
start_prebuild() {
    [ "$full" = yes ] || return 0
    setsid nice -n 19 tests/prebuild.sh $$ >"$prebuild_log" 2>&1 </dev/null &
    prebuild_pid=$!
}

# run_ctest PRESET: runs a flavour's tests through its ctest preset
# (CMakePresets.json: build/PRESET, the sanitizers' options, tsan's
# filter) and counts each test from ctest's JUnit report.
run_ctest() {
    local report=$PWD/build/$1/ctest-junit.xml counts
    rm -f "$report"
    ctest --preset "$1" --parallel "$(nproc)" --output-junit "$report" || true
    # Each <testcase> has status="run" (passed), "fail", "notrun" or
    # "disabled"; no report, or one without a test, is a failure.
    counts=$(python3 - "$report" <<'PY' || echo "0 1"
import sys, xml.etree.ElementTree as ET
cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
status = [c.get("status") for c in cases]
ok = status.count("run")
print(ok, len(status) - ok if status else 1)
PY
)
    passed=$((passed + ${counts% *}))
    failed=$((failed + ${counts#* }))
}

# Each test binary says which CPU-dependent lookups it checked here
# ("cpu case:" lines, cpu_case.hpp); this prints them after the run.
print_cpu_case() {  # print_cpu_case BUILD_DIR
    grep -h -E '^cpu case:|^not checked' "$1/Testing/Temporary/LastTest.log" | sort | uniq -c |
        sed 's/^ */    /'
}

# unit_flavour TITLE [--ovs RELEASE] FLAVOUR: builds what ctest runs there
# (the ctest_binaries target: no benchmark, no soak; the bench phase builds
# the rest of sse42) and runs it.
unit_flavour() {
    local title=$1 dir  # dir: the preset, build/FLAVOUR[-ovsRELEASE]
    shift
    phase "$title"
    scripts/build.sh "$@" --target ctest_binaries
    dir=${*: -1}
    [ "$1" != --ovs ] || dir=${*: -1}-ovs$2
    run_ctest "$dir"
    print_cpu_case "build/$dir"
}

# ---- unit ----
if selected_label unit; then
    unit_flavour "tests against the OVS 'sse42' flavour" sse42
    if [ "$quick" = no ]; then
        unit_flavour "tests against the OVS 'debian' flavour" debian
        # OVS 3.5 (Debian 13's 3.5.0, fetched through a private apt
        # configuration by cmake/fetch-debian-package.sh): the same tests
        # against its lib, in the sse42 flavour (the hash flavours are the
        # same code in both releases).
        unit_flavour "tests against OVS 3.5's lib, flavour 'sse42'" --ovs 3.5 sse42
        # OVS 4.0 (Debian testing's 4.0.0, fetched the same way; its lib
        # compiles with this machine's toolchain): its struct flow (32
        # registers) and struct dpcls_subtable (no registry) differ from
        # 3.x's (classifier/ovs_abi.h).
        unit_flavour "tests against OVS 4.0's lib, flavour 'sse42'" --ovs 4.0 sse42
    fi
fi

# ---- aarch64 (the unit tests; the switch comes after the packages) ----
# Cross-built with Debian's g++-aarch64-linux-gnu, run under qemu-aarch64
# (ctest's CMAKE_CROSSCOMPILING_EMULATOR): generic and specialized against
# OVS's own lookups, with OVS's ARM CRC32C hash (aarch64-crc) and with
# Debian's flags (aarch64-debian, mhash).  No JIT.
if selected_label aarch64; then
    for flavour in aarch64-crc aarch64-debian; do
        unit_flavour "tests against the OVS '$flavour' flavour (cross-built, under qemu-aarch64)" "$flavour"
    done
fi

# ---- sanitizer ----
if selected_label sanitizer; then
    phase "concurrency and JIT tests under ThreadSanitizer"
    scripts/build.sh tsan --target concurrency_test --target jit_test --target fused_test
    run_ctest tsan

    phase "the unit tests under AddressSanitizer (leaks too) and UndefinedBehaviorSanitizer"
    scripts/build.sh asan --target differential_test --target classifier_test --target hash_test \
        --target corpus_test --target concurrency_test --target jit_test --target fused_test \
        --target tail_index_test
    run_ctest asan
fi

# ---- bench (smoke runs of the sse42 build: they check answers, not speed) ----
dpcls_bench_broken_is_caught() {
    # The negative control: a lookup that drops a found key must fail the
    # benchmark's answer check.
    local out
    if out=$(build/sse42/perf/dpcls_bench --quick --table prefix-13 --broken-lookup 2>&1); then
        echo "dpcls_bench --broken-lookup passed: its answer check checks nothing" >&2
        return 1
    elif grep -q '^prefix-13/broken: [1-9][0-9]* of 8192 keys answered differently' <<<"$out"; then
        echo "dpcls_bench --broken-lookup: the answer check caught it ($(grep 'broken:' <<<"$out"))"
    else
        echo "$out" >&2
        echo "dpcls_bench --broken-lookup failed otherwise than by its answer check" >&2
        return 1
    fi
}
callgrind_counts() {
    local out
    out=$(perf/instructions.sh '^4,1/real/1/hit/' 2>&1) &&
        grep -Eq '^4,1/real/1/hit +[0-9.]+ \([0-9.]+\) +[0-9.]+ \(1\.00\)' <<<"$out" ||
        { echo "$out" >&2; return 1; }
}
if selected_label bench; then
    phase "microbenchmark smoke run (one fingerprint)"
    scripts/build.sh sse42 >/dev/null
    count build/sse42/perf/microbench --quick --benchmark_filter='^4,1/real/1000/' \
        --benchmark_min_time=0.001 >/dev/null

    phase "whole-classifier benchmark smoke run (perf/dpcls_bench --quick: every lookup answers as OVS's generic)"
    count build/sse42/perf/dpcls_bench --quick
    count dpcls_bench_broken_is_caught

    phase "instruction counts under callgrind (perf/instructions.sh smoke run)"
    count callgrind_counts

    phase "JIT flood (10000 new masks): bounded compiles, every packet hits"
    count build/sse42/perf/jit_flood >/dev/null
fi

# ---- fuzz ----
if selected_label fuzz; then
    seconds=40
    [ "$quick" = no ] || seconds=10
    phase "fuzz targets (libFuzzer under ASan and UBSan, $seconds s each)"
    UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" count tests/fuzz.sh --seconds "$seconds"
fi

# ---- p2p, docs, series ----
if selected_label p2p; then
    phase "perf/p2p: scenario (b)'s prefix traffic, pcap format, testpmd parser"
    count python3 tests/p2p_test.py
fi
if selected_label docs; then
    phase "docs: README.md's figures are on dated docs/results pages, no broken link, the man page"
    count python3 tests/docs/readme_figures_test.py
    count python3 tests/docs/links_test.py
    count python3 tests/docs/manpage_test.py
fi
if selected_label series; then
    phase "the patch series: OVS's checkpatch.py on every patch of every release line"
    count patches/checkpatch.sh
fi

# ---- vswitchd ----
if selected_label vswitchd; then
    phase "ovs-vswitchd 3.1 with the plugin (patched build, OVS testsuite, project tests)"
    # OVS 3.1's build first, alone: the builder would slow it as much as
    # it gains (2026-12-04: the unit phases took 1.7x as long with it
    # running beside them); it starts once it is done.  (One build serves
    # the plugin-default and the autovalidator runs: tests/vswitchd/run.sh.)
    if [ "$full" = yes ]; then
        patches/cached-build.sh --plugin-default >/dev/null || true
        start_prebuild
    fi
    count tests/vswitchd/run.sh
    phase "ovs-vswitchd 3.5 with the plugin (patched build, OVS testsuite, project tests)"
    count tests/vswitchd/run.sh --ovs 3.5 --no-flood
    # OVS 4.0 with its own series (lookup providers): the testsuite subset
    # with the plugin's providers as defaults, each lookup checked, and the
    # project's validate and flood tests; run.sh says what it does not run
    # there.
    phase "ovs-vswitchd 4.0 with the plugin (patched build, OVS testsuite, project tests)"
    count tests/vswitchd/run.sh --ovs 4.0
fi

# ---- host-safety ----
# The scripts that run as root refuse what they could not undo and leave
# no mount or scratch folder behind (deb_install_test.sh --here on a
# machine with OVS traces, build-ovs.sh --prefix, debian-root.sh's mounts).
if selected_label host-safety; then
    phase "host safety: refusals of deb_install_test.sh --here and build-ovs.sh, debian-root.sh's mounts"
    count tests/host_safety_test.sh
fi

# ---- packages ----
# Debian's own openvswitch packages of Debian 12 (3.1) and Debian 13 (3.5,
# built in the Debian 13 root) with the series and the plugin
# (packages/build-deb.sh, cached), installed over Debian's packages with
# apt in a throw-away root of their release, run with ovs-ctl (both
# ovs-vswitchd alternatives), taken back to Debian's and purged, the root
# compared with before and the machine checked to be unchanged.
debian_packages() {  # debian_packages RELEASE
    local debs
    debs=$(packages/build-deb.sh --release "$1" | tail -1) &&
        tests/deb_install_test.sh --release "$1" "$debs"
}
if selected_label packages; then
    phase "Debian 12 packages with the plugin: build, install over Debian's, run with ovs-ctl, purge"
    count debian_packages 12
    phase "Debian 13 packages with the plugin: build (Debian 13 root), install over Debian's, run with ovs-ctl, purge"
    count debian_packages 13
fi

# ---- aarch64 (the switch) ----
foreign_arch_switch() {
    local native foreign
    native=$(patches/cached-build.sh --plugin-default | tail -1) &&
        foreign=$(patches/cached-build.sh --host aarch64-linux-gnu --plugin-default | tail -1) &&
        tests/vswitchd/foreign_arch_test.sh "$foreign" "$native"
}
if selected_label aarch64; then
    phase "the patched ovs-vswitchd for aarch64 (cross-built, run under qemu-aarch64)"
    count foreign_arch_switch
fi

# ---- emulated ----
emulated_cpus() {
    local prefix
    scripts/build.sh sse42 >/dev/null &&
        prefix=$(patches/cached-build.sh --plugin-default | tail -1) &&
        tests/emulated_cpus.sh build/sse42 "$prefix"
}
if selected_label emulated; then
    phase "the tests on emulated CPUs: without AVX512, without AVX2 (qemu-x86_64)"
    count emulated_cpus
fi

phase ""
[ -z "$prebuild_pid" ] || wait "$prebuild_pid" 2>/dev/null || true
echo "time per phase, and how busy the $cpus CPUs were:"
printf '%s\n' "${timings[@]}"
if [ -n "$prebuild_pid" ]; then
    echo "built ahead in the background (tests/prebuild.sh, inside the phases' times):"
    sed 's/^prebuild: /    /' "$prebuild_log"
fi
# CI stops a run at 90 minutes; a cold full run (empty build cache) is the
# longest, and this line says how close this one came.
echo "budget: $((SECONDS / 60)) min $((SECONDS % 60)) s of CI's 90 min ($((SECONDS * 100 / 5400))%)"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
