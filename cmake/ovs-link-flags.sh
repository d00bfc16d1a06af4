#!/usr/bin/env bash
# Prints the link flags a program that links a configured OVS tree's
# lib/.libs/libopenvswitch.a needs, as OVS's own Makefile has them: the
# libraries libopenvswitch.la is linked with (OpenSSL, libcap-ng, ... where
# configure found them) and LIBS (what configure added for every program),
# without libtool's .la references, which the archives cover.
#
#   cmake/ovs-link-flags.sh TREE >TREE/ovs-libs.txt
#
# CMakeLists.txt hands the file to the linker as a response file.
set -euo pipefail
tree=${1:?usage: ovs-link-flags.sh TREE}
[ -f "$tree/Makefile" ] || { echo "ovs-link-flags.sh: $tree is not a configured OVS tree" >&2; exit 1; }
# shellcheck disable=SC2016 # make expands these, not the shell
flags=$(printf 'ovscls-print-link-flags:\n\t@echo $(lib_libopenvswitch_la_LIBADD) $(LIBS)\n' |
    make -s --no-print-directory -C "$tree" -f Makefile -f - ovscls-print-link-flags)
for word in $flags; do
    case "$word" in *.la) ;; *) printf '%s ' "$word" ;; esac
done
echo
