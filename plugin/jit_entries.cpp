// jit_entries.cpp: the `jit_avx2` entry points that ovs_registration.c
// registers with ovs-vswitchd, in builds with the JIT (x86-64).  They all go to the
// process engine (jit/engine.hpp).
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "classifier/layout.hpp"
#include "jit/engine.hpp"
#include "plugin/ovscls_plugin.h"

// The C side counts the events by the header's enum.
static_assert(static_cast<int>(ovscls::jit::JitEvent::kCompile) == OVSCLS_PLUGIN_JIT_COMPILE);
static_assert(static_cast<int>(ovscls::jit::JitEvent::kDecline) == OVSCLS_PLUGIN_JIT_DECLINE);
static_assert(static_cast<int>(ovscls::jit::JitEvent::kTierUp) == OVSCLS_PLUGIN_JIT_TIER_UP);
static_assert(static_cast<int>(ovscls::jit::JitEvent::kFusedCompile) ==
              OVSCLS_PLUGIN_FUSED_COMPILE);
static_assert(static_cast<int>(ovscls::jit::JitEvent::kFusedDecline) ==
              OVSCLS_PLUGIN_FUSED_DECLINE);

// OVS's counts-only probe declines; the probe that sees the subtable and its
// hits compiles once the subtable is hot.
extern "C" ovsb_lookup_func ovscls_plugin_jit_probe(uint32_t, uint32_t) { return nullptr; }

extern "C" ovsb_lookup_func ovscls_plugin_jit_probe_subtable(dpcls_subtable* subtable,
                                                             uint32_t hits) {
    const ovscls::Subtable& s = *ovscls::view(subtable);
    return ovscls::jit::process_engine().probe({s.u0_bits, s.u1_bits, subtable, hits});
}

extern "C" void ovscls_plugin_jit_release(dpcls_subtable* subtable, ovsb_lookup_func in_use) {
    ovscls::jit::process_engine().release(subtable, in_use);
}

// Where the JIT's decline lines go: OVS's log (ovs_registration.c passes a
// VLOG writer).
extern "C" void ovscls_plugin_jit_set_log(void (*sink)(const char* line)) {
    ovscls::jit::process_engine().set_log(sink);
}

// Events for OVS's coverage counters.
extern "C" void ovscls_plugin_jit_set_events(ovscls_plugin_jit_event_func event) {
    if (!event) {
        ovscls::jit::process_engine().set_events(nullptr);
        return;
    }
    ovscls::jit::process_engine().set_events([event](ovscls::jit::JitEvent what, uint32_t n) {
        event(static_cast<ovscls_plugin_jit_event>(what), n);
    });
}

namespace {
char* malloced(const std::string& text) {
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out) {
        std::memcpy(out, text.c_str(), text.size() + 1);
    }
    return out;
}
}  // namespace

// other_config's dpcls-jit* keys, all of them each time (a key that is gone
// goes back to its default).  Returns 0, or EINVAL when a value is bad (the
// JIT is then off).  *message: what to log (malloc'ed; free() it), or null
// when the settings did not change.
extern "C" int ovscls_plugin_jit_configure(const char* const keys[], const char* const values[],
                                           size_t n, char** message) {
    ovscls::jit::Engine& engine = ovscls::jit::process_engine();
    bool changed = false;
    const std::string errors = engine.configure_from(keys, values, n, &changed);
    *message = nullptr;
    if (changed || !errors.empty()) {
        *message =
            malloced(errors.empty() ? "jit_avx2 settings: " + engine.config().describe() : errors);
    }
    return errors.empty() ? 0 : EINVAL;
}

// dpcls-plugin/jit-show's text (malloc'ed; free() it).
extern "C" char* ovscls_plugin_jit_show(void) {
    return malloced(ovscls::jit::process_engine().info());
}

extern "C" char* ovscls_plugin_jit_state(void) {
    return malloced(ovscls::jit::process_engine().state());
}

extern "C" char* ovscls_plugin_fused_state(void) {
    return malloced(ovscls::jit::process_engine().fused_state());
}

// OVS's ranking hook: around one dpcls_sort_subtable_vector() call on the
// calling PMD thread (done: false before, true after).
extern "C" void ovscls_plugin_jit_ranking(bool done) {
    if (done) {
        ovscls::jit::process_engine().ranking_end();
    } else {
        ovscls::jit::process_engine().ranking_begin();
    }
}

// jit_fused: OVS's subtable probe declines (it is no subtable lookup); the
// fused hooks go to the process engine's FusedLookups.
extern "C" ovsb_lookup_func ovscls_plugin_fused_probe_counts(uint32_t, uint32_t) { return nullptr; }

extern "C" void* ovscls_plugin_fused_probe(dpcls_subtable* const subtables[], size_t n,
                                           uint32_t* n_subtables, void** handle) {
    const ovscls::FusedLookup lookup = ovscls::jit::process_engine().fused().probe(
        const_cast<const dpcls_subtable* const*>(subtables), n);
    *n_subtables = lookup.subtables;
    *handle = lookup.handle;
    return reinterpret_cast<void*>(lookup.fn);
}

extern "C" void ovscls_plugin_fused_release(void* handle) {
    ovscls::FusedLookup lookup;
    lookup.handle = handle;
    ovscls::jit::process_engine().fused().release(lookup);
}

extern "C" uint64_t ovscls_plugin_fused_ready(void) {
    return ovscls::jit::process_engine().fused().ready_count();
}
