# Counting the checks of test scripts: sourced by tests/run.sh,
# tests/vswitchd/run.sh, tests/host_safety_test.sh and
# tests/deb_install_test.sh.
#
# A test script that runs many checks ends with one line
#     [WHAT: ]N passed, N failed
# (its last such line counts).  These functions add such a script's counts
# to the caller's 'passed' and 'failed'.

# summary_counts FILE: prints "N M" from FILE's last summary line, or
# nothing when it has none.  Changes nothing.
summary_counts() {
    sed -nE 's/^([^:]*: )?([0-9]+) passed, ([0-9]+) failed$/\2 \3/p' "$1" | tail -1
}

# add_counts FILE STATUS: adds the summary of FILE (a script's output) to
# 'passed' and 'failed'; a non-zero STATUS (the script's exit status) with
# no failure counted is one failure more, and output with no summary counts
# as one check, passed when STATUS is 0.  Sets 'counted' to "N M", what it
# added.  Returns 0 when nothing failed.
add_counts() {
    local p="" f=""
    read -r p f < <(summary_counts "$1") || true
    if [ -z "$p" ]; then
        if [ "$2" -eq 0 ]; then p=1 f=0; else p=0 f=1; fi
    elif [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    counted="$p $f"
    [ "$f" -eq 0 ]
}

# run_counted COMMAND...: runs it in this shell, its output shown as it
# comes, and adds its counts (add_counts).  Returns 0 when nothing failed.
run_counted() {
    local out status
    out=$(mktemp /tmp/tests-counts.XXXXXX)
    # A group, so that this shell starts tee (for a simple command the
    # child would, and $! would not be tee's); its status kept under set -e.
    { "$@"; } > >(tee "$out") && status=0 || status=$?
    wait $! # tee has written all
    add_counts "$out" "$status"
    status=$?
    rm -f "$out"
    return "$status"
}
