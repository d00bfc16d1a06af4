#!/usr/bin/env bash
# Installs what building and testing this project needs on Debian 12, with
# apt-get (as root).  Skips apt-get entirely when everything is present.
set -euo pipefail

packages=(
    g++ cmake make python3          # toolchain; python3 also runs OVS's generators
    openvswitch-source              # Open vSwitch 3.1.0 source tarball
    libgtest-dev libbenchmark-dev   # GoogleTest, Google Benchmark
    libxbyak-dev                    # xbyak (the JIT)
    qemu-user                       # tests on emulated CPUs (tests/emulated_cpus.sh)
    valgrind                        # callgrind instruction counts (perf/instructions.sh)
    g++-aarch64-linux-gnu           # the aarch64 flavours, cross-built
    googletest                      #   with GoogleTest built from source
    clang-14 libclang-rt-14-dev     # the fuzz targets (libFuzzer, tests/fuzz.sh)
    ccache                          # patches/build-ovs.sh: OVS objects shared by its builds
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps.sh: missing packages: ${missing[*]}; run as root to install them" >&2
    exit 1
fi
echo "install-deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
