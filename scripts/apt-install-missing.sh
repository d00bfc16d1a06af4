#!/usr/bin/env bash
# Installs those of the given Debian packages that are not installed, with
# apt-get (as root); does nothing when all are.  Says what it installs.
#
#   scripts/apt-install-missing.sh WHO PACKAGE...
#
# WHO names the caller in messages.  apt-get update runs first, since a
# machine's lists may be missing or stale.
set -euo pipefail
who=${1:?usage: apt-install-missing.sh WHO PACKAGE...}
shift
missing=()
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "$who: missing packages: ${missing[*]}; run as root to install them" >&2
    exit 1
fi
echo "$who: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Another install may hold dpkg's lock (tests/prebuild.sh's package build
# runs apt-get build-dep in the background): wait for it.
apt-get update -qq
apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null ||
    { echo "$who: apt-get install ${missing[*]} failed" >&2; exit 1; }
