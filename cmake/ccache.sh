# Sourced by the scripts that build OVS (patches/build-ovs.sh,
# cmake/build-ovs-lib.sh, packages/build-deb.sh): one ccache for all of
# them, beside the builds in the build cache, so that an OVS file compiled
# with the same flags by one build is a hit for the next (the stock lib of a
# unit-test flavour and the patched ovs-vswitchd of the same flavour share
# most of lib/).  Builds may run at the same time (tests/prebuild.sh builds
# in the background), so each counts its own hits in a stats log of its own
# instead of zeroing ccache's global counters.

# ccache_setup STATS_LOG [BASE_DIR]: exports what ccache reads.  Paths under
# BASE_DIR are hashed relative to it and the working directory is not hashed
# (a tree's location then does not enter the hash).  Truncates STATS_LOG.
ccache_setup() {
    export CCACHE_DIR=${OVS_BUILD_CACHE:-/var/cache/ovs-dpcls-plugin}/ccache
    export CCACHE_STATSLOG=$1
    : >"$1"
    if [ -n "${2:-}" ]; then
        export CCACHE_BASEDIR=$2 CCACHE_NOHASHDIR=1
    fi
}

# ccache_stats STATS_LOG: one line, e.g. "cache_miss 21 direct_cache_hit 96
# preprocessed_cache_hit 315", of the compiles logged there.
ccache_stats() {
    awk '/^(cache_miss|direct_cache_hit|preprocessed_cache_hit)$/ { n[$1]++ }
         END { printf "cache_miss %d direct_cache_hit %d preprocessed_cache_hit %d\n",
               n["cache_miss"], n["direct_cache_hit"], n["preprocessed_cache_hit"] }' "$1"
}
