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
    ccache                          # one cache of OVS objects for all OVS builds (cmake/ccache.sh)
    autoconf automake libtool       # patches/build-ovs.sh: ./boot.sh after the series
    dpkg-dev debhelper              # packages/build-deb.sh
    groff-base                      # tests/docs/manpage_test.py reads the man page
    tini                            # tests/run.sh: reaps the tests' daemons at once
)

exec "$(dirname "$0")/apt-install-missing.sh" install-deps.sh "${packages[@]}"
