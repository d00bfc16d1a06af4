# Sourced by the scripts that read ovs-vswitchd's logs.
#
# vlog_plain FILE...: the log's lines with the thread name that OVS writes
# after the module of a line logged by a thread other than the main one
# dropped: "...|00004|dpcls_plugin(pmd-c02/id:6)|INFO|..." reads as
# "...|00004|dpcls_plugin|INFO|...", so that one pattern finds a line
# whichever thread logged it (a PMD thread logs the validation's
# mismatches and its counts as they grow).
vlog_plain() {
    sed 's/^\([^|]*|[^|]*|[A-Za-z0-9_-]*\)([^)|]*)|/\1|/' "$@"
}
