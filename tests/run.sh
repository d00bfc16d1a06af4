#!/usr/bin/env bash
# Runs the tests, in phases, each under a label (tests/run.sh --list).
#
# The gate (tests/run.sh): what proves the product works on the current
# release (OVS 4.0) and on the oldest one supported (OVS 3.1), x86-64; 45
# minutes at most on a new 2-core machine, 15 with every build cached.
#
#   unit             the GoogleTest suites (unit, differential, fused, JIT,
#                    concurrency) against OVS 3.1's and OVS 4.0's libs,
#                    CRC32 hash (flavour sse42)
#   sanitizer        the concurrency, JIT, fused and tail-index tests under
#                    ThreadSanitizer (the tail index's tests have no
#                    threads: not these) and under AddressSanitizer (leaks
#                    too) and UBSan, OVS 3.1
#   bench            smoke runs of the microbenchmark, the whole-classifier
#                    benchmark (and its negative control), callgrind's
#                    counts and the JIT flood
#   fuzz             the libFuzzer targets, 20 s each (tests/fuzz.sh)
#   p2p              the phy-to-phy benchmark's traffic and parser tests,
#                    the TSE shapes it makes in the switch
#   docs             README.md's figures against docs/results, the docs'
#                    links, the man page made of the reference page
#   series           OVS's checkpatch.py on every patch of every release
#                    line; the 3.x lines' files are what port-series.sh
#                    makes of the one 3.x series (tests/series_port_test.sh)
#   vswitchd         ovs-vswitchd 3.1 and 4.0 with the plugin built in: OVS's
#                    testsuite subset in the checking mode of the release
#                    (3.1: OVS's autovalidator; 4.0: the plugin's
#                    validation) and the project's end-to-end tests
#                    (tests/vswitchd/run.sh --gate)
#   host-safety      what the root-run scripts refuse and leave behind; the
#                    Debian mirrors they take; how checks are counted
#
# The matrix (tests/run.sh --all: the gate, then these, in this order of
# value; ~2 hours on a new 2-core machine):
#
#   emulated         the tests on emulated CPUs without AVX512, without AVX2
#   flavours         the unit tests against OVS 3.1 built with Debian's own
#                    flags (mhash, the hash of Debian's packages)
#   ovs-3.5          OVS 3.5 (Debian 13's): the unit tests against its lib,
#                    its patched ovs-vswitchd with OVS's testsuite subset
#                    under the autovalidator and the project's tests
#   packages         Debian 12's and Debian 13's openvswitch packages rebuilt
#                    with the plugin, installed over Debian's, run with
#                    ovs-ctl and purged
#   vswitchd-3.1-more  OVS 3.1's testsuite subset with the plugin's lookups as
#                    the defaults (no checking mode), and a build with OVS's
#                    own --enable-autovalidator (what the gate's test mode
#                    stands in for) under autovalidator_test.sh
#   sanitizer-more   the other unit tests (differential, classifier, hash,
#                    corpus) under AddressSanitizer and UBSan
#   aarch64          the unit tests against OVS 3.1's aarch64 flavours
#                    (cross-built, run under qemu-aarch64) and the patched
#                    ovs-vswitchd for aarch64
#   series-each      each patch of the 3.1, 3.5 and 4.0 series applied in
#                    turn to its release, built, and tests/dpcls.at run
#                    (patches/check-each-patch.sh): one change a reviewer
#                    can apply and test on its own
#   ovn              OVN 26.03.1 built against OVS 4.0 with the series
#                    (patches/build-ovn.sh), its testsuite's packet tests
#                    against the plugin in its validation mode, every
#                    switch's log read (tests/ovn/run.sh)
#
#   tests/run.sh                 the gate
#   tests/run.sh --all           the gate and the matrix
#   tests/run.sh --all --budget MINUTES
#                                the gate, then each matrix label only while
#                                the time left before MINUTES (since the
#                                start) covers its estimate for the cache
#                                state it finds; the others are listed as
#                                left out, with the command that runs them
#                                (.ci/run: --budget 80)
#   tests/run.sh --quick         the unit tests against OVS 3.1's lib and 10 s
#                                of each fuzzer: the loop while changing code
#   tests/run.sh --only LABEL... the phases of these labels
#   tests/run.sh --list          the labels, gate first, nothing run
#   tests/run.sh --help          this text, nothing run
#
# Installs its own packages (scripts/install-deps.sh).  A phase that fails
# (a build included) is counted failed and the run goes on.  Ends with a
# table: each phase's wall time, the CPU seconds the machine spent in it,
# whether its builds were cached (warm) or not (cold), and the budget lines
# (the gate's 45 minutes, CI's 80 and 90); then "tests: N passed, N
# failed" over ctest's JUnit reports (one per test) and the scripts' exit
# statuses (one per script).  A label left out is neither.
set -euo pipefail
cd "$(dirname "$0")/.."

# label | part | cold s | warm s: the estimates --budget plans with, from
# measured runs on 2-vCPU machines (docs/results/2026-12-02-test-suite-times.md);
# a label's last warm time on this machine is used instead where there is
# one, and its last cold time where that is longer (record_time, estimate).  Cold: none of the
# label's builds in the build cache (the C++ builds are in the clone, so
# they are always built; ccache makes them cheap when warm).
phase_table() {
    cat <<'TABLE'
unit              | gate   |  600 |  120
sanitizer         | gate   |  480 |  150
bench             | gate   |  240 |  150
fuzz              | gate   |  150 |   60
p2p               | gate   |   10 |   10
docs              | gate   |   10 |   10
series            | gate   |   60 |   30
vswitchd          | gate   | 1500 |  600
host-safety       | gate   |  150 |  110
emulated          | matrix |  420 |  260
flavours          | matrix |  300 |   80
ovs-3.5           | matrix |  900 |  550
packages          | matrix | 2700 |  150
vswitchd-3.1-more | matrix |  600 |  420
sanitizer-more    | matrix |  330 |  120
aarch64           | matrix | 1200 |  400
series-each       | matrix | 3600 | 2400
ovn               | matrix | 2200 | 1200
TABLE
}
table_field() {  # table_field LABEL COLUMN (2: part, 3: cold, 4: warm)
    phase_table | awk -F'|' -v l="$1" -v c="$2" '{ gsub(/ /, "") } $1 == l { print $c }'
}
mapfile -t labels < <(phase_table | awk -F'|' '{ gsub(/ /, ""); print $1 }')
mapfile -t gate_labels < <(phase_table | awk -F'|' '{ gsub(/ /, "") } $2 == "gate" { print $1 }')

selected=("${gate_labels[@]}")
quick=no budget="" mode=gate
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
args=("$@")
is_label() { [[ " ${labels[*]} " == *" $1 "* ]]; }
case "${1:-}" in
    "") ;;
    -h | --help) usage; exit 0 ;;
    --list) phase_table | awk -F'|' '{ gsub(/ /, ""); printf "%-18s %s\n", $1, $2 }'; exit 0 ;;
    --quick) [ $# -eq 1 ] || { echo "tests/run.sh: --quick takes nothing after it" >&2; exit 2; }
        quick=yes selected=(unit fuzz) mode=quick ;;
    --all)
        selected=("${labels[@]}") mode=all
        if [ $# -gt 1 ]; then
            [ "$2" = --budget ] && [ $# -eq 3 ] && [[ $3 =~ ^[1-9][0-9]*$ ]] ||
                { echo "tests/run.sh: --all takes only --budget MINUTES after it" >&2; exit 2; }
            budget=$(($3 * 60))
        fi ;;
    --only)
        shift
        [ $# -gt 0 ] || { echo "tests/run.sh: --only needs labels (tests/run.sh --list)" >&2; exit 2; }
        for l in "$@"; do
            is_label "$l" || { echo "tests/run.sh: no phase is labelled '$l' (tests/run.sh --list)" >&2; exit 2; }
        done
        selected=("$@") mode=only ;;
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
cache=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}

passed=0
failed=0
# count COMMAND...: runs it (in this shell, its output shown as it comes)
# and counts its checks (tests/counts.sh: a script's "N passed, N failed",
# else its exit status as one check).
source tests/counts.sh
count() {
    run_counted "$@" || echo "FAILED: $* (${counted#* } of its checks failed)" >&2
}

# ---- phases, their times and the CPU they used ----
# Each "=== " phase is timed; the table is printed at the end, so that a CI
# log says where the time went.  CPU seconds: what all the machine's CPUs
# spent busy (from /proc/stat, background builds included): near 2x the
# wall time on 2 cores is CPU-bound, far below it leaves room beside it.
timings=()
phase_name=""
phase_label=""
phase_state=""
phase_start=$SECONDS
cpu_busy_ticks() {  # the ticks all CPUs spent busy since boot (not idle, not iowait)
    awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat
}
phase_busy=$(cpu_busy_ticks)
ticks_per_s=$(getconf CLK_TCK)
cpus=$(nproc)
phase() {  # phase TITLE: ends the running phase, starts the next (of $label, $state)
    local busy wall
    busy=$(cpu_busy_ticks)
    if [ -n "$phase_name" ]; then
        wall=$((SECONDS - phase_start))
        timings+=("$(printf '%6d s %7d s  %-5s %-18s %s' "$wall" $(((busy - phase_busy) / ticks_per_s)) \
            "$phase_state" "$phase_label" "$phase_name")")
    fi
    phase_name=$1 phase_label=${label:-} phase_state=${state:-}
    phase_start=$SECONDS
    phase_busy=$busy
    [ -z "$1" ] || echo "=== $1"
}

# ---- builds and whether they are cached ----
# The probes ask each build script whether its result is in the build cache
# without building anything: a label is warm when every build it needs is.
lib_cached() {  # lib_cached [--ovs RELEASE] FLAVOUR: cmake/build-ovs-lib.sh's tree
    local src
    src=$(cmake/build-ovs-lib.sh --dir "$@") && [ -f "$(dirname "$src")/.built" ]
}
patched_cached() { patches/cached-build.sh --cached "$@" >/dev/null 2>&1; }
debs_cached() { packages/build-deb.sh --release "$1" --cached >/dev/null 2>&1; }
root_cached() { scripts/debian-root.sh "$@" --cached >/dev/null 2>&1; }
# The tree of OVS 3.1's (4.0's) patched switch, whose lib the sse42
# flavour links (CMakeLists.txt).
tree_cached() { patches/cached-build.sh --cached --tree "$@" >/dev/null 2>&1; }
label_cached() {  # label_cached LABEL: are its builds cached?
    case "$1" in
        unit) tree_cached --plugin-default && tree_cached --ovs 4.0 --validate ;;
        sanitizer) tree_cached --plugin-default && lib_cached sse42-tsan ;;
        bench | fuzz | sanitizer-more) tree_cached --plugin-default ;;
        p2p | docs | series) true ;;  # nothing built
        series-each) false ;;  # builds OVS after each patch, with ccache only
        vswitchd) patched_cached --plugin-default && patched_cached --ovs 4.0 --validate ;;
        host-safety) root_cached bookworm --profile packages ;;
        emulated) patched_cached --plugin-default ;;
        flavours) lib_cached debian ;;
        ovs-3.5) patched_cached --ovs 3.5 --plugin-default ;;
        packages) debs_cached 12 && debs_cached 13 && root_cached bookworm --profile packages &&
            root_cached trixie --profile packages ;;
        vswitchd-3.1-more) patched_cached --plugin-default && patched_cached --autovalidator ;;
        aarch64) lib_cached aarch64-crc && lib_cached aarch64-debian &&
            patched_cached --host aarch64-linux-gnu --plugin-default ;;
        ovn) patched_cached --ovs 4.0 --validate && patches/build-ovn.sh --cached >/dev/null 2>&1 ;;
        *) false ;;
    esac
}

# A label's wall time on this machine, by cache state, kept in the build
# cache (one line each: LABEL STATE SECONDS, the last run's).
times_file=$cache/tests-run-times.txt
record_time() {  # record_time LABEL STATE SECONDS
    mkdir -p "$cache"
    { grep -v "^$1 $2 " "$times_file" 2>/dev/null || true; echo "$1 $2 $3"; } >"$times_file.new" &&
        mv "$times_file.new" "$times_file"
}
estimate() {  # estimate LABEL STATE: seconds
    # Warm: this machine's last warm time, else the table's.  Cold: the
    # larger of the two, since "cold" is any label with one build missing,
    # and a last cold time may have had the others cached.
    local own table
    own=$(awk -v l="$1" -v s="$2" '$1 == l && $2 == s { print $3 }' "$times_file" 2>/dev/null)
    if [ "$2" = warm ]; then
        echo "${own:-$(table_field "$1" 4)}"
    else
        own=${own:-0}
        table=$(table_field "$1" 3)
        echo $((own > table ? own : table))
    fi
}

# ---- the background builder ----
# Runs builds that later phases need at the lowest CPU priority while
# phases that leave CPU idle run (OVS's testsuite keeps about a third of it
# busy): tests/prebuild.sh says why and how.  It is started as OVS 3.1's
# testsuite starts, builds what the selected labels still need, and is
# ended on every exit of this script (a build it leaves half done is built
# again, in the open, by its phase).
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
    local wanted=()
    [ -z "$prebuild_pid" ] || return 0
    [ "$mode" = quick ] && return 0
    selected_label vswitchd && wanted+=(ovs-4.0)
    selected_label ovs-3.5 && wanted+=(ovs-3.5)
    selected_label packages && wanted+=(debian-12 debian-13)
    selected_label aarch64 && wanted+=(aarch64)
    [ ${#wanted[@]} -gt 0 ] || return 0
    setsid nice -n 19 tests/prebuild.sh $$ "${wanted[@]}" >"$prebuild_log" 2>&1 </dev/null &
    prebuild_pid=$!
}

# ---- the phases ----
# run_ctest PRESET [CTEST ARGS...]: runs a flavour's tests through its ctest
# preset (CMakePresets.json: build/PRESET, the sanitizers' options, tsan's
# filter) and counts each test from ctest's JUnit report.
run_ctest() {
    local preset=$1 report counts
    shift
    report=$PWD/build/$preset/ctest-junit.xml
    rm -f "$report"
    ctest --preset "$preset" --parallel "$(nproc)" --output-junit "$report" "$@" || true
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
    grep -h -E '^cpu case:|^not checked' "$1/Testing/Temporary/LastTest.log" 2>/dev/null | sort | uniq -c |
        sed 's/^ */    /'
}
build_or_fail() {  # build_or_fail WHAT COMMAND...: a failed build is one failure
    local what=$1
    shift
    if "$@"; then
        return 0
    fi
    echo "FAILED: building $what ($*)" >&2
    failed=$((failed + 1))
    return 1
}
# unit_flavour TITLE [--ovs RELEASE] FLAVOUR: builds what ctest runs there
# (the ctest_binaries target: no benchmark, no soak; the bench phase builds
# the rest of sse42) and runs it.
unit_flavour() {
    local title=$1 dir  # dir: the preset, build/FLAVOUR[-ovsRELEASE]
    shift
    phase "$title"
    dir=${*: -1}
    [ "$1" != --ovs ] || dir=${*: -1}-ovs$2
    build_or_fail "$dir" scripts/build.sh "$@" --target ctest_binaries || return 0
    run_ctest "$dir"
    print_cpu_case "build/$dir"
}

label_unit() {
    unit_flavour "tests against OVS 3.1's lib, flavour 'sse42'" sse42
    [ "$quick" = yes ] && return 0
    # OVS 4.0 (Debian testing's 4.0.0, fetched through a private apt
    # configuration by cmake/fetch-debian-package.sh): its struct flow (32
    # registers) and struct dpcls_subtable (no registry) differ from 3.x's
    # (classifier/ovs_abi.h).
    unit_flavour "tests against OVS 4.0's lib, flavour 'sse42'" --ovs 4.0 sse42
}

jit_tests='concurrency_test|jit_test|fused_test|tail_index_test'
asan_tests() {  # asan_tests 'A|B|...': builds these tests under ASan and UBSan and runs them
    # shellcheck disable=SC2046 # one --target per test
    build_or_fail asan scripts/build.sh asan $(printf -- '--target %s ' ${1//|/ }) &&
        run_ctest asan -R "^($1)\$"
}
label_sanitizer() {
    phase "concurrency and JIT tests under ThreadSanitizer"
    build_or_fail tsan scripts/build.sh tsan --target concurrency_test --target jit_test --target fused_test &&
        run_ctest tsan
    phase "concurrency, JIT, fused and tail-index tests under AddressSanitizer (leaks too) and UBSan"
    asan_tests "$jit_tests"
}
label_sanitizer_more() {
    phase "differential, classifier, hash and corpus tests under AddressSanitizer (leaks too) and UBSan"
    asan_tests 'differential_test|classifier_test|hash_test|corpus_test'
}

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
label_bench() {  # smoke runs of the sse42 build: they check answers, not speed
    phase "microbenchmark smoke run (one fingerprint)"
    build_or_fail "sse42 (all)" scripts/build.sh sse42 >/dev/null || return 0
    count build/sse42/perf/microbench --quick --benchmark_filter='^4,1/real/1000/' \
        --benchmark_min_time=0.001 >/dev/null
    phase "whole-classifier benchmark smoke run (perf/dpcls_bench --quick: every lookup answers as OVS's generic)"
    count build/sse42/perf/dpcls_bench --quick
    count dpcls_bench_broken_is_caught
    phase "Tuple Space Explosion grid smoke run (perf/tse/tse_grid --quick: three shapes, every key answered as OVS's generic)"
    count build/sse42/perf/tse_grid --quick --cell masks=100,fields=src4+sport+dport \
        --cell masks=200,fields=dst6,pattern=arbitrary,legit=3,legit-map=same,place=early \
        --cell masks=300,fields=src4+dst4+sport+dport,rules=4,legit=5
    phase "instruction counts under callgrind (perf/instructions.sh smoke run)"
    count callgrind_counts
    phase "JIT flood (10000 new masks): bounded compiles, every packet hits"
    count build/sse42/perf/jit_flood >/dev/null
}

label_fuzz() {
    local seconds=20
    [ "$quick" = no ] || seconds=10
    phase "fuzz targets (libFuzzer under ASan and UBSan, $seconds s each)"
    UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" count tests/fuzz.sh --seconds "$seconds"
}
label_p2p() {
    phase "perf/p2p: scenario (b)'s prefix traffic, pcap format, testpmd parser, TSE shapes"
    count python3 tests/p2p_test.py
    count python3 tests/p2p_tse_test.py
}
label_docs() {
    phase "docs: README.md's figures are on dated docs/results pages, no broken link, the man page"
    count python3 tests/docs/readme_figures_test.py
    count python3 tests/docs/links_test.py
    count python3 tests/docs/manpage_test.py
}
label_series() {
    phase "the patch series: OVS's checkpatch.py on every patch of every release line"
    count patches/checkpatch.sh
    count tests/series_port_test.sh
}

label_vswitchd() {
    phase "ovs-vswitchd 3.1 with the plugin (patched build, OVS testsuite under the autovalidator, project tests)"
    # OVS 3.1's build first, alone: the background builder would slow it as
    # much as it gains (2026-12-04: CPU-bound phases took 1.7x as long with
    # it beside them); it starts once it is done, as the testsuite starts.
    patches/cached-build.sh --plugin-default >/dev/null || true
    start_prebuild
    count tests/vswitchd/run.sh --gate
    # OVS 4.0 with its own series (lookup providers): the testsuite subset
    # with the plugin's providers as defaults, each lookup checked, and the
    # project's validate and flood tests; run.sh says what it does not run
    # there.
    phase "ovs-vswitchd 4.0 with the plugin (patched build, OVS testsuite under validation, project tests)"
    count tests/vswitchd/run.sh --ovs 4.0
}
label_vswitchd_3_1_more() {
    phase "ovs-vswitchd 3.1: OVS testsuite with the plugin's defaults, and OVS's own --enable-autovalidator build"
    count tests/vswitchd/run.sh --more
}

# The scripts that run as root refuse what they could not undo and leave
# no mount or scratch folder behind (deb_install_test.sh --here on a
# machine with OVS traces, build-ovs.sh --prefix, debian-root.sh's mounts);
# the scripts that fetch from Debian use the mirrors the machine's apt does.
label_host_safety() {
    phase "host safety: refusals of deb_install_test.sh --here and build-ovs.sh, debian-root.sh's mounts"
    count tests/host_safety_test.sh
    phase "the Debian mirrors from the machine's apt sources (cmake/debian-mirrors.sh)"
    count tests/debian_mirrors_test.sh
    phase "how the scripts count checks (tests/counts.sh)"
    count tests/counts_test.sh
}

emulated_cpus() {
    local prefix
    scripts/build.sh sse42 >/dev/null &&
        prefix=$(patches/cached-build.sh --plugin-default | tail -1) &&
        tests/emulated_cpus.sh build/sse42 "$prefix"
}
label_emulated() {
    phase "the tests on emulated CPUs: without AVX512, without AVX2 (qemu-x86_64)"
    count emulated_cpus
}
label_flavours() {
    unit_flavour "tests against OVS 3.1's lib, flavour 'debian' (Debian's flags, mhash)" debian
}
label_ovs_3_5() {
    # OVS 3.5 (Debian 13's 3.5.0, fetched through a private apt
    # configuration): the same tests against its lib (the hash flavours
    # are the same code in both releases), then its switch.
    unit_flavour "tests against OVS 3.5's lib, flavour 'sse42'" --ovs 3.5 sse42
    phase "ovs-vswitchd 3.5 with the plugin (patched build, OVS testsuite under the autovalidator, project tests)"
    count tests/vswitchd/run.sh --ovs 3.5 --gate --no-flood
}

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
label_packages() {
    phase "Debian 12 packages with the plugin: build, install over Debian's, run with ovs-ctl, purge"
    count debian_packages 12
    phase "Debian 13 packages with the plugin: build (Debian 13 root), install over Debian's, run with ovs-ctl, purge"
    count debian_packages 13
}

# Cross-built with Debian's g++-aarch64-linux-gnu, run under qemu-aarch64
# (ctest's CMAKE_CROSSCOMPILING_EMULATOR): generic and specialized against
# OVS's own lookups, with OVS's ARM CRC32C hash (aarch64-crc) and with
# Debian's flags (aarch64-debian, mhash).  No JIT.
foreign_arch_switch() {
    local native foreign
    native=$(patches/cached-build.sh --plugin-default | tail -1) &&
        foreign=$(patches/cached-build.sh --host aarch64-linux-gnu --plugin-default | tail -1) &&
        tests/vswitchd/foreign_arch_test.sh "$foreign" "$native"
}
label_series_each() {
    local release
    for release in 3.1 3.5 4.0; do
        phase "the $release series one patch at a time: each builds and passes tests/dpcls.at"
        count patches/check-each-patch.sh "$release"
    done
}
# OVN 26.03.1's own testsuite (its tests that send packets through the
# logical pipelines) against OVS 4.0 with the plugin in its validation
# mode, every switch's log read for mismatches and counts (tests/ovn/run.sh).
label_ovn() {
    phase "OVN 26.03.1's testsuite against OVS 4.0 with the plugin (validation: every lookup checked)"
    count tests/ovn/run.sh
}
label_aarch64() {
    local flavour
    for flavour in aarch64-crc aarch64-debian; do
        unit_flavour "tests against OVS 3.1's lib, flavour '$flavour' (cross-built, under qemu-aarch64)" "$flavour"
    done
    phase "the patched ovs-vswitchd for aarch64 (cross-built, run under qemu-aarch64)"
    count foreign_arch_switch
}

# ---- the run ----
label="" state=""
phase "packages (scripts/install-deps.sh)"
build_or_fail "this project's build dependencies" scripts/install-deps.sh || true

left_out=()
gate_end=""
for label in "${labels[@]}"; do
    selected_label "$label" || continue
    part=$(table_field "$label" 2)
    if [ "$part" = matrix ] && [ -z "$gate_end" ]; then
        gate_end=$SECONDS
    fi
    state=cold
    label_cached "$label" && state=warm
    if [ -n "$budget" ] && [ "$part" = matrix ]; then
        need=$(estimate "$label" "$state")
        # 10% over the estimate: machines differ, and the builder may still
        # be busy beside the phase.
        if [ $((SECONDS + need * 11 / 10)) -gt "$budget" ]; then
            why="its builds are $([ "$state" = warm ] && echo cached || echo "not cached")"
            why="$why and need ~$(((need + 59) / 60)) min; $(((budget - SECONDS) / 60)) min were left"
            left_out+=("$label: left out, $why (run it: tests/run.sh --only $label)")
            echo "=== $label: left out, $why (tests/run.sh --only $label)"
            continue
        fi
    fi
    label_start=$SECONDS
    "label_${label//[.-]/_}" || { echo "FAILED: the $label phases" >&2; failed=$((failed + 1)); }
    phase ""  # closes the label's last phase
    [ "$mode" = quick ] || record_time "$label" "$state" $((SECONDS - label_start))
done
label="" state=""
phase ""
[ -n "$gate_end" ] || gate_end=$SECONDS

# The background builder is not waited for in a budgeted run (what it
# still builds is for a later run); elsewhere its last build is let finish.
if [ -n "$prebuild_pid" ]; then
    if [ -n "$budget" ]; then
        kill -TERM -- "-$prebuild_pid" 2>/dev/null || true
    fi
    wait "$prebuild_pid" 2>/dev/null || true
fi
minutes() { printf '%d min %d s' $(($1 / 60)) $(($1 % 60)); }
echo "time per phase (wall, CPU seconds of the $cpus CPUs, the label's builds cached or not):"
printf '%s\n' "${timings[@]}"
for l in "${left_out[@]}"; do echo "  left out  $l"; done
if [ -n "$prebuild_pid" ]; then
    echo "built ahead in the background (tests/prebuild.sh, inside the phases' times):"
    sed 's/^prebuild: /    /' "$prebuild_log"
fi
case "$mode" in
    gate | all)
        echo "budget: the gate took $(minutes "$gate_end") of its 45 min ($((gate_end * 100 / 2700))%)" ;;
esac
echo "budget: $(minutes "$SECONDS") in all, of CI's 80 min line and 90 min limit ($((SECONDS * 100 / 5400))% of 90)"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
