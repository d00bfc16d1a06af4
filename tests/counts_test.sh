#!/usr/bin/env bash
# Checks tests/counts.sh, by which tests/run.sh and the scripts that run
# other test scripts count checks: a script's last "[WHAT: ]N passed, N
# failed" line, its exit status where it says nothing or contradicts it.
#
#   tests/counts_test.sh      prints ok/not ok per check, then the counts
set -uo pipefail
cd "$(dirname "$0")/.."
source tests/counts.sh
ok=0 bad=0
expect() {  # expect "P F" STATUS TITLE COMMAND...: run_counted adds P and F
    local want=$1 want_status=$2 title=$3 status
    shift 3
    passed=0 failed=0
    run_counted "$@" >/dev/null
    status=$?
    if [ "$passed $failed" = "$want" ] && [ "$status" = "$want_status" ]; then
        echo "ok - $title"; ok=$((ok + 1))
    else
        echo "not ok - $title: counted '$passed $failed' returned $status, wanted '$want' and $want_status"
        bad=$((bad + 1))
    fi
}
expect "7 0" 0 "a script's summary counts its checks" \
    bash -c 'echo "3 passed, 9 failed"; echo "what: 7 passed, 0 failed"'
expect "4 2" 1 "its failures count, the last summary line wins" \
    bash -c 'echo "1 passed, 0 failed"; echo "4 passed, 2 failed"; exit 1'
expect "5 1" 1 "a non-zero exit with no failure counted is one failure" \
    bash -c 'echo "5 passed, 0 failed"; exit 3'
expect "1 0" 0 "a command with no summary is one check: passed on exit 0" true
expect "0 1" 1 "... failed on another exit status" false
expect "0 1" 1 "a summary line inside other text does not count" \
    bash -c 'echo "note: 5 passed, 0 failed earlier"; echo "x 2 passed, 0 failed y"; exit 1'
echo "counts_test: $ok passed, $bad failed"
[ "$bad" -eq 0 ]
