#!/usr/bin/env bash
# ovs-vswitchd with the plugin built in, for one OVS release line:
#
#   tests/vswitchd/run.sh [--ovs RELEASE] [--gate | --more] [--no-flood]
#                                      (RELEASE: 3.1, 3.5, 4.0; default 3.1)
#
#   --gate   (3.x) the testsuite in the autovalidator configuration only,
#            and every project test (tests/run.sh's gate: the checking
#            mode of the release, and all that the plugin-default
#            configuration adds is the project tests' part)
#   --more   (3.x) what --gate leaves: the testsuite in the plugin-default
#            configuration; and a build with OVS's own
#            --enable-autovalidator (the plugin's lookups at 0, what the
#            test mode stands in for) under autovalidator_test.sh
#   neither  all of the above but the --enable-autovalidator build
#
#   1. builds it once (patches/cached-build.sh --plugin-default: once, then
#      cached outside the clone) and runs it in two configurations:
#      plugin-default (the plugin's lookups are the defaults) and
#      autovalidator (OVS checks every registered lookup, the plugin's
#      included, against its generic on every lookup), the latter with
#      OVSCLS_PLUGIN_TEST_MODE=autovalidator in the environment, which
#      makes the build behave as an --autovalidator one (plugin/
#      ovs_registration.c; a second build cost ~200 s of 2 cores even with
#      every object in ccache);
#   2. runs OVS's own testsuite subsets in both: every test of
#      dpif-netdev.at and pmd.at, the series' own dpcls.at, and the megaflow
#      tests of ofproto-dpif.at
#      ("ofproto-dpif megaflow - ..." and "controller action without
#      megaflows"), chosen by name from the release's own testsuite (tests
#      1041-1079, 1154 and 1269-1296 of 3.1.0), with OVS's RECHECK=yes,
#      printing the summary lines of the first pass and of any recheck;
#      In the autovalidator build it keeps the tests' folders and sums the
#      counts each test's ovs-vswitchd logs at exit (3.x series patch 8): the
#      lookups it checked per implementation, and the mismatches (0, or the
#      suite fails); and the keys the plugin's tail index served there, each
#      checked against OVS's loop over the same subtables (plugin/
#      ovs_registration.c: in these builds it serves every position of a port
#      with two subtables or more), more than 0 and 0 mismatches;
#   3. runs vswitchd_test.sh (two PMD threads, tiering, the JIT's other_config
#      and jit-show, prio-set under traffic) and, unless --no-flood,
#      flood_test.sh (a 2500-mask megaflow flood with legitimate traffic
#      flowing) and off_switch_test.sh (dpcls-plugin/show, and
#      other_config:dpcls-plugin=false across a restart) against the
#      plugin-default build, and autovalidator_test.sh
#      (jit_avx2's code and jit_fused's lookups checked by the
#      autovalidator) against the autovalidator build.
# On OVS 4.0 (--ovs 4.0), which has no autovalidator: the validate build
# only (the plugin's defaults, each subtable and fused lookup it serves
# checked against OVS's generic and its tail index against OVS's loop, the
# keys checked per lookup logged at exit: summed over the testsuite, more
# than 0 for specialized, runtime and tail_index, 0 mismatches for all),
# validate_test.sh (jit_avx2, jit_fused and tail_index validated, each
# switched off and on live with lookup-provider-set), off_switch_test.sh
# and, unless
# --no-flood, flood_test.sh against the same build.
# Prints the seconds each build and suite took, and "N passed, N failed"
# over what ran: each test of OVS's testsuite subset, each checking mode's
# counts (one check), each check of the project tests (their own "N
# passed" lines); a build that failed, or a test that failed without
# saying so, is one failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/counts.sh
source tests/vlog.sh
release=3.1 flood=yes part=all
while [ $# -gt 0 ]; do
    case "$1" in
        --ovs) release=${2:?--ovs needs a release}; shift 2 ;;
        --gate) part="gate"; shift ;;
        --more) part="more"; shift ;;
        --no-flood) flood=no; shift ;;
        *) echo "vswitchd/run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
build_args=()
[ "$release" = 3.1 ] || build_args=(--ovs "$release")
# Set below for the autovalidator runs only.
unset OVSCLS_PLUGIN_TEST_MODE

# with_mode CONFIG COMMAND...: runs COMMAND as CONFIG wants ovs-vswitchd
# run: the autovalidator configuration is the plugin-default build with
# OVSCLS_PLUGIN_TEST_MODE=autovalidator.
with_mode() {
    local config=$1
    shift
    if [ "$config" = autovalidator ]; then
        OVSCLS_PLUGIN_TEST_MODE=autovalidator "$@"
    else
        "$@"
    fi
}
build_config() {  # build_config CONFIG: the build that CONFIG runs
    case "$1" in
        autovalidator) echo plugin-default ;;
        enable-autovalidator) echo autovalidator ;;
        *) echo "$1" ;;
    esac
}
# prefix_of CONFIG: the cached build CONFIG runs (built if need be).
prefix_of() {
    patches/cached-build.sh "${build_args[@]}" "--$(build_config "$1")" | tail -1
}

# The subset, by file and title, as numbers of this release's testsuite.
subset() {  # PREFIX
    make -C "$1/src" tests/testsuite >/dev/null 2>&1 || return 1
    "$1/src/tests/testsuite" -l | awk '
        /^ *[0-9]+: (dpif-netdev|pmd|dpcls)\.at:/ || /ofproto-dpif megaflow - / ||
        /ofproto-dpif - controller action without megaflows/ { sub(":", "", $1); print $1 }' |
        tr '\n' ' '
}

passed=0
failed=0
declare -A prefixes
configs=(plugin-default autovalidator)
tests=(plugin-default:vswitchd_test plugin-default:off_switch_test autovalidator:autovalidator_test)
[ "$flood" = yes ] && tests+=(plugin-default:flood_test)
case "$part" in
    gate) configs=(autovalidator) ;;
    more) configs=(plugin-default) tests=(enable-autovalidator:autovalidator_test) ;;
esac
if [ "${release%%.*}" = 4 ]; then
    # OVS 4.0 removed the autovalidator: the plugin's validation mode
    # (build-ovs.sh --validate) checks its lookups instead.  One build
    # serves both purposes: its lookups are the plugin's defaults, as in the
    # plugin-default build, each answer checked too (the CI time a second
    # build and testsuite run would cost, ~6 minutes, buys no check).
    # vswitchd_test drives 3.x's subtable-lookup-prio-set and -info-get,
    # which 4.0 removed; validate_test covers 4.0's lookup-provider-set.
    configs=(validate)
    tests=(validate:validate_test validate:off_switch_test)
    [ "$flood" = yes ] && tests+=(validate:flood_test)
    [ "$part" != more ] || { echo "vswitchd/run.sh: --more is for 3.x (4.0 has one configuration)" >&2; exit 2; }
    echo "vswitchd: OVS $release: NOT run: vswitchd_test and autovalidator_test" \
        "(3.x's prio-set commands and autovalidator; validate_test covers 4.0's providers)"
fi
for config in "${configs[@]}"; do
    build_start=$SECONDS
    if ! prefix=$(prefix_of "$config"); then
        echo "vswitchd: building the OVS $release $config configuration failed"
        failed=$((failed + 1))
        continue
    fi
    prefixes[$config]=$prefix
    echo "vswitchd: OVS $release $config build: $((SECONDS - build_start)) s (0 if it was cached)"
    suites=$(subset "$prefix")
    if [ -z "$suites" ]; then
        echo "vswitchd: OVS $release's testsuite has none of the subset's tests"
        failed=$((failed + 1))
        continue
    fi
    echo "=== OVS $release testsuite ($config): $(wc -w <<<"$suites") tests: $suites"
    log="$prefix/testsuite-$config.log"
    # RECHECK=yes is OVS's own way to run timing-sensitive tests once more
    # (its CI does the same): failures of the first pass are re-run alone.
    # Both passes' summaries are printed, so a test that passed only on the
    # recheck stays visible.  autotest ends a pass with "All N tests were
    # successful." or "ERROR: All N tests were run, / M failed unexpectedly."
    # With the autovalidator, the tests' folders are kept (-d), for the
    # counts each test's ovs-vswitchd logs at exit.
    debug=""
    [ "$config" = autovalidator ] || [ "$config" = validate ] && debug=-d
    # shellcheck disable=SC2086 # the test ranges are separate words
    suite_start=$SECONDS
    with_mode "$config" make -C "$prefix/src" -j"$(nproc)" check \
        TESTSUITEFLAGS="$debug -j$(nproc) $suites" RECHECK=yes >"$log" 2>&1
    grep -E 'successful|tests were run|failed unexpectedly|tests were skipped|^ *[0-9]+: .*\.at:[0-9]+' "$log" |
        sed 's/^/    /'
    echo "    ($((SECONDS - suite_start)) s)"
    # Each test of the subset counts: all passed when the last pass says
    # "successful" (a test that failed only before the recheck passed);
    # else the last pass's "M failed unexpectedly" failed.
    last=$(grep -E 'successful|failed unexpectedly' "$log" | tail -1)
    n=$(wc -w <<<"$suites")
    if grep -q 'successful' <<<"$last"; then
        passed=$((passed + n))
    else
        # autotest puts the count at the start of its own line.
        m=$(sed -nE 's/^(.* )?([0-9]+) failed unexpectedly.*/\2/p' <<<"$last")
        m=${m:-$n}
        failed=$((failed + m))
        passed=$((passed + (n > m ? n - m : 0)))
        echo "    (see $prefix/src/tests/testsuite.log)"
    fi
    if [ "$config" = validate ]; then
        # What the plugin's validation checked, per lookup, summed over the
        # tests' ovs-vswitchd logs (each logs it at exit): more than 0 keys
        # of specialized, of runtime and of tail_index (jit_avx2 and
        # jit_fused need hot subtables, which validate_test.sh makes), and
        # 0 mismatches.
        # A switch logs its counts as they grow and at exit: each log's
        # last line per lookup is its count.
        counts=$(for log in "$prefix"/src/tests/testsuite.dir/*/ovs-vswitchd.log; do
            [ -f "$log" ] || continue
            vlog_plain "$log" | sed -n \
            -e "s/.*|dpcls_plugin_validation|INFO|checked '\([^']*\)': \([0-9]*\) keys against OVS's generic, \([0-9]*\) mismatches/\1 \2 \3/p" \
            -e "s/.*|dpcls_plugin_validation|INFO|checked '\([^']*\)' (fused): \([0-9]*\) keys against OVS's generic over the same subtables, \([0-9]*\) mismatches/\1(fused) \2 \3/p" \
            -e "s/.*|dpcls_plugin|INFO|checked '\(tail_index\)': \([0-9]*\) keys against OVS's loop over the tail, \([0-9]*\) mismatches/\1 \2 \3/p" \
                | awk '{ last[$1] = $0 } END { for (k in last) print last[k] }'
            done |
            awk '{ c[$1] += $2; m[$1] += $3 }
                 END { for (k in c) printf "%s: %d keys checked, %d mismatches\n", k, c[k], m[k] }' | sort)
        echo "    validation, over the testsuite's ovs-vswitchd logs:"
        sed 's/^/      /' <<<"${counts:-nothing checked}"
        if [ -n "$counts" ] && ! grep -qv ' 0 mismatches$' <<<"$counts" &&
            grep -Eq '^specialized: [1-9][0-9]* keys' <<<"$counts" &&
            grep -Eq '^runtime: [1-9][0-9]* keys' <<<"$counts" &&
            grep -Eq '^tail_index: [1-9][0-9]* keys' <<<"$counts"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "    mismatches, no counts logged, or no key of specialized, runtime or tail_index checked"
        fi
    fi
    if [ "$config" = autovalidator ]; then
        # What the autovalidator checked, per implementation, summed over
        # the tests' ovs-vswitchd logs (3.x series patch 8 logs it at exit).
        # The plugin checks its tail index itself in these builds (its
        # answers against OVS's loop over the same subtables) and logs
        # "checked 'tail_index': N keys against ..." at exit too.
        counts=$(for log in "$prefix"/src/tests/testsuite.dir/*/ovs-vswitchd.log; do
            [ -f "$log" ] || continue
            vlog_plain "$log" | sed -n \
            -e "s/.*|dpif_lookup_autovalidator|INFO|checked '\([^']*\)': \([0-9]*\) \([a-z]*\) lookups against generic, \([0-9]*\) mismatches/\1 \3 \2 \4/p" \
            -e "s/.*|dpcls_plugin|INFO|checked '\(tail_index\)': \([0-9]*\) keys against OVS's loop over the tail, \([0-9]*\) mismatches/\1 tail \2 \3/p" \
                | awk '{ last[$1 " " $2] = $0 } END { for (k in last) print last[k] }'
            done |
            awk '{ c[$1 " " $2] += $3; m[$1 " " $2] += $4 }
                 END { for (k in c) printf "%s lookups: %d checked, %d mismatches\n", k, c[k], m[k] }' | sort)
        echo "    autovalidator, over the testsuite's ovs-vswitchd logs:"
        sed 's/^/      /' <<<"${counts:-nothing checked}"
        # generic's count says that the autovalidator ran (it checks every
        # lookup against generic), specialized's and runtime's that it
        # checked the plugin's portable lookups, tail_index's that the
        # plugin checked its index (jit_avx2 and jit_fused need hot
        # subtables: autovalidator_test.sh checks them).
        if [ -n "$counts" ] && ! grep -qv ' 0 mismatches$' <<<"$counts" &&
            grep -Eq '^generic subtable lookups: [1-9][0-9]* checked' <<<"$counts" &&
            grep -Eq '^specialized subtable lookups: [1-9][0-9]* checked' <<<"$counts" &&
            grep -Eq '^runtime subtable lookups: [1-9][0-9]* checked' <<<"$counts" &&
            grep -Eq '^tail_index tail lookups: [1-9][0-9]* checked' <<<"$counts"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "    mismatches, no counts logged, or no lookup of generic, specialized, runtime or the tail index checked"
        fi
    fi
done

for config_test in "${tests[@]}"; do
    test=${config_test#*:}
    prefix=${prefixes[${config_test%%:*}]:-}
    # A configuration whose testsuite did not run here: its build.
    if [ -z "$prefix" ] && ! prefix=$(prefix_of "${config_test%%:*}"); then
        echo "vswitchd: building the OVS $release ${config_test%%:*} configuration failed"
        prefix=""
    fi
    echo "=== project tests of the patched ovs-vswitchd (OVS $release, ${config_test%%:*}): $test"
    suite_start=$SECONDS
    # The test's own checks count ("N passed, N failed", its last line); a
    # test that failed without saying so, or did not run, is one failure.
    if [ -n "$prefix" ]; then
        run_counted with_mode "${config_test%%:*}" tests/vswitchd/$test.sh "$prefix" || true
    else
        failed=$((failed + 1))
    fi
    echo "    ($test: $((SECONDS - suite_start)) s)"
done
echo "vswitchd (OVS $release): $passed passed, $failed failed"
[ "$failed" -eq 0 ]
