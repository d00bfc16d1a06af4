// jit_absent.cpp: the `jit_avx2` entry points that ovs_registration.c
// registers with ovs-vswitchd, in builds without the JIT (every
// architecture but x86-64, or -DOVSCLS_JIT=OFF).  The entry is registered
// all the same, so that prio-set and subtable-lookup-info-get read the same
// everywhere; its probe declines every subtable and says why, once, in
// OVS's log.
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "classifier/ovs_bridge.h"
#include "plugin/ovscls_plugin.h"

namespace {
std::atomic<void (*)(const char*)> log_sink{nullptr};
std::atomic<bool> said{false};
}  // namespace

extern "C" ovsb_lookup_func ovscls_plugin_jit_probe(uint32_t, uint32_t) { return nullptr; }

extern "C" ovsb_lookup_func ovscls_plugin_jit_probe_subtable(dpcls_subtable*, uint32_t) {
    if (!said.exchange(true)) {
        if (auto* sink = log_sink.load()) {
            sink(
                "jit_avx2 declines every subtable: this plugin was built without the JIT "
                "(it generates x86-64 code only)");
        }
    }
    return nullptr;
}

extern "C" void ovscls_plugin_jit_release(dpcls_subtable*, ovsb_lookup_func) {}

extern "C" void ovscls_plugin_jit_set_log(void (*sink)(const char* line)) { log_sink.store(sink); }

extern "C" void ovscls_plugin_jit_set_events(ovscls_plugin_jit_event_func) {}

namespace {
constexpr char kNotBuilt[] =
    "jit_avx2: not built (the JIT generates x86-64 code only); its settings do nothing\n";
char* malloced_not_built() {
    char* out = static_cast<char*>(std::malloc(sizeof kNotBuilt));
    if (out) {
        std::memcpy(out, kNotBuilt, sizeof kNotBuilt);
    }
    return out;
}
}  // namespace

// dpcls-jit* settings are accepted and ignored; said once when there are any.
extern "C" int ovscls_plugin_jit_configure(const char* const[], const char* const[], size_t n,
                                           char** message) {
    static std::atomic<bool> told{false};
    *message = n && !told.exchange(true) ? malloced_not_built() : nullptr;
    return 0;
}

extern "C" char* ovscls_plugin_jit_show(void) { return malloced_not_built(); }
extern "C" char* ovscls_plugin_jit_state(void) {
    return strdup("declines every subtable (not built: the JIT generates x86-64 code only)");
}
extern "C" char* ovscls_plugin_fused_state(void) {
    return strdup("declines every port (not built: the JIT generates x86-64 code only)");
}
extern "C" void ovscls_plugin_jit_ranking(bool) {}

// jit_fused: nothing to fuse without the JIT.
extern "C" ovsb_lookup_func ovscls_plugin_fused_probe_counts(uint32_t, uint32_t) { return nullptr; }
extern "C" void* ovscls_plugin_fused_probe(dpcls_subtable* const[], size_t, uint32_t*, void**) {
    return nullptr;
}
extern "C" void ovscls_plugin_fused_release(void*) {}
extern "C" uint64_t ovscls_plugin_fused_ready(void) { return 0; }
