// jit_absent.cpp: the `jit_avx2` entry points ovs-vswitchd calls
// (patches/0004), in builds without the JIT (every architecture but
// x86-64, or -DOVSCLS_JIT=OFF).  The entry stays in OVS's table, so prio-set
// and subtable-lookup-info-get behave the same everywhere; its probe
// declines every subtable and says why, once, in OVS's log.
#include <atomic>

#include "classifier/ovs_bridge.h"

namespace {
std::atomic<void (*)(const char*)> log_sink{nullptr};
std::atomic<bool> said{false};
}  // namespace

extern "C" ovsb_lookup_func dpcls_subtable_plugin_jit_probe(uint32_t, uint32_t) { return nullptr; }

extern "C" ovsb_lookup_func dpcls_subtable_plugin_jit_probe_subtable(dpcls_subtable*, uint32_t) {
    if (!said.exchange(true)) {
        if (auto* sink = log_sink.load()) {
            sink(
                "jit_avx2 declines every subtable: this plugin was built without the JIT "
                "(it generates x86-64 code only)");
        }
    }
    return nullptr;
}

extern "C" void dpcls_subtable_plugin_jit_release(dpcls_subtable*, ovsb_lookup_func) {}

extern "C" void dpcls_subtable_plugin_jit_set_log(void (*sink)(const char* line)) {
    log_sink.store(sink);
}
