// cmap_layout.hpp: checks, in the OVS this code is linked into, that OVS's
// private cmap layout is the one the generated code walks.
//
// struct cmap_impl and struct cmap_bucket live in lib/cmap.c, not in a
// header, so neither ovs_bridge.c nor the plugin can check them at compile
// time, and the plugin is linked into an ovs-vswitchd it was not compiled
// against.  The check fills a cmap through OVS's own exported functions and
// looks for every node exactly where classifier/ovs_abi.h says it is.
#pragma once

#include <string>

namespace ovscls::jit {

// True when OVS's cmap matches OVSCLS_CMAP_* of ovs_abi.h.  Otherwise false,
// with what differed in *why.  Runs the check once per process (a few
// dozen cmap insertions, one allocation) and returns the same answer
// afterwards.  Thread-safe.
bool cmap_layout_matches(std::string* why);

}  // namespace ovscls::jit
