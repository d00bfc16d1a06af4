#!/usr/bin/env bash
# cmake/debian-mirrors.sh takes the Debian mirrors from the machine's apt
# sources as apt reads them, an environment variable overriding, and says
# what to set when there is none:
#
#   tests/debian_mirrors_test.sh
#
# Each case writes apt sources into a folder of its own (the function reads
# DEBIAN_MIRRORS_SOURCES_LIST and _PARTS instead of /etc/apt) and checks
# the main and security URIs found, or the error.  Reads nothing of the
# machine's apt configuration; writes only its mktemp folder.
set -uo pipefail
cd "$(dirname "$0")/.."
source tests/vswitchd/lib.sh # ok, not_ok, check
source cmake/debian-mirrors.sh
scratch=$(mktemp -d /tmp/debian-mirrors-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

n=0
# sources NAME: a fresh pair of sources.list and sources.list.d for a case.
sources() {
    n=$((n + 1))
    dir=$scratch/$n
    mkdir -p "$dir/sources.list.d"
    export DEBIAN_MIRRORS_SOURCES_LIST=$dir/sources.list DEBIAN_MIRRORS_SOURCES_PARTS=$dir/sources.list.d
    unset DEBIAN_MIRROR DEBIAN_SECURITY_MIRROR
}
# expect WHICH WANT CASE: debian_mirror WHICH prints WANT (or fails, WANT
# being "error: TEXT" and TEXT in its message).
expect() {
    local which=$1 want=$2 name=$3 got rc
    got=$(debian_mirror "$which" 2>&1)
    rc=$?
    case "$want" in
        error:*)
            if [ $rc -ne 0 ] && [[ $got == *"${want#error: }"* ]]; then ok "$name"; else
                not_ok "$name" "status $rc: $got"; fi ;;
        *) if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then ok "$name"; else
            not_ok "$name" "status $rc: $got (wanted $want)"; fi ;;
    esac
}

# 1. Debian 12's own layout: deb822, main and security paragraphs, a
#    third-party repository first (its own suite), a disabled paragraph.
sources
cat >"$dir/sources.list.d/a-vendor.sources" <<'EOF'
Types: deb
URIs: https://vendor.example.org/apt
Suites: nodistro
Components: main
EOF
cat >"$dir/sources.list.d/debian.sources" <<'EOF'
# a comment
Types: deb deb-src
URIs: http://disabled.example.org/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: http://mirror.example.org/debian/
Suites: bookworm
 bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://mirror.example.org/debian-security
Suites: bookworm-security
Components: main
EOF
expect main http://mirror.example.org/debian "deb822: the Debian paragraph, not the vendor's or the disabled one"
expect security http://mirror.example.org/debian-security "deb822: the -security paragraph"

# 2. The one-line format, with options, a comment and a local cache.
sources
cat >"$dir/sources.list" <<'EOF'
# deb http://commented.example.org/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://cache.example.org:3142/debian trixie main non-free-firmware
deb http://cache.example.org:3142/debian-security trixie-security main
EOF
expect main http://cache.example.org:3142/debian "one-line: options skipped, the port kept"
expect security http://cache.example.org:3142/debian-security "one-line: the security line"

# 3. No main component, an unusable scheme, no Debian suite: nothing.
sources
cat >"$dir/sources.list.d/x.list" <<'EOF'
deb http://mirror.example.org/debian bookworm contrib
deb mirror+file:/etc/apt/mirrors.txt bookworm main
deb http://ppa.example.org/ubuntu jammy main
EOF
expect main "error: Set DEBIAN_MIRROR" "no usable entry: an error naming DEBIAN_MIRROR"
expect security "error: Set DEBIAN_SECURITY_MIRROR" "no security entry: an error naming DEBIAN_SECURITY_MIRROR"

# 4. The environment overrides the sources; a value that is not one URI is
#    refused.
sources
echo "deb http://mirror.example.org/debian bookworm main" >"$dir/sources.list"
export DEBIAN_MIRROR=http://override.example.org/debian/
expect main http://override.example.org/debian "DEBIAN_MIRROR overrides the sources"
export DEBIAN_MIRROR='http://x.example.org/debian; rm -rf /'
expect main "error: not one URI" "DEBIAN_MIRROR with a space and a ';' is refused"
export DEBIAN_MIRROR='mirror.example.org/debian'
expect main "error: not one URI" "DEBIAN_MIRROR without a scheme is refused"
unset DEBIAN_MIRROR

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
