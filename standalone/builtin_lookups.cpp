#include "standalone/builtin_lookups.hpp"

#include "lookups/lookups.hpp"
#if OVSCLS_WITH_JIT
#include "jit/engine.hpp"
#endif

namespace ovscls {

void add_builtin_lookups(LookupRegistry& registry, jit::Engine* engine) {
    registry.add(generic_descriptor());
    registry.add(specialized_descriptor());
#if OVSCLS_WITH_JIT
    registry.add((engine ? *engine : jit::process_engine()).descriptor());
#else
    (void)engine;
#endif
}

LookupRegistry& builtin_registry() {
    static LookupRegistry& registry = *[] {
        auto* r = new LookupRegistry;  // never destroyed: classifiers may outlive statics
        add_builtin_lookups(*r);
        return r;
    }();
    return registry;
}

bool jit_built() { return OVSCLS_WITH_JIT; }

std::string jit_build_note() {
#if OVSCLS_WITH_JIT
    return "jit_avx2: built (x86-64)";
#else
    return "jit_avx2: not built (OVSCLS_JIT=OFF; the JIT generates x86-64 code only)";
#endif
}

}  // namespace ovscls
