#include "registry.hpp"

#include <algorithm>
#include <memory>

#include "classifier.hpp"
#include "jit_lookup.hpp"

namespace ovscls {

LookupRegistry::LookupRegistry() {
    add("generic", 1, generic_probe);
    add("specialized", 2, specialized_probe);
    add("jit_avx2", 3, jit::probe, jit::release);
}

LookupRegistry& LookupRegistry::global() {
    static LookupRegistry registry;
    return registry;
}

Status LookupRegistry::add(std::string_view name, uint32_t priority, ProbeFn probe,
                           ReleaseFn release) {
    std::lock_guard lock(mutex_);
    if (name.empty() || !probe) {
        return Status::error("a lookup implementation needs a name and a probe");
    }
    if (priority > 255) {
        return Status::error("priority " + std::to_string(priority) +
                             " is out of range: use 0 to 255");
    }
    if (find(name)) {
        return Status::error("a lookup implementation named '" + std::string(name) +
                             "' is already registered");
    }
    size_t n = count_.load(std::memory_order_relaxed);
    if (n == kMaxImpls) {
        return Status::error("the lookup registry is full");
    }
    auto impl = std::make_unique<LookupImpl>();
    impl->name = name;
    impl->priority.store(priority, std::memory_order_relaxed);
    impl->probe = probe;
    impl->release = release;
    impls_[n] = std::move(impl);
    count_.store(n + 1, std::memory_order_release);
    return Status::ok();
}

LookupRegistry::Choice LookupRegistry::best_for(const ProbeContext& ctx) const {
    Choice best;
    int64_t best_priority = -1;
    const size_t n = size();
    for (size_t i = 0; i < n; i++) {
        LookupImpl& impl = *impls_[i];
        const int64_t priority = impl.priority.load(std::memory_order_relaxed);
        if (priority <= best_priority) {
            continue;
        }
        if (ovsb_lookup_func fn = impl.probe(ctx)) {
            best = {fn, &impl};
            best_priority = priority;
        }
    }
    return best;
}

void LookupRegistry::release(const dpcls_subtable* subtable, ovsb_lookup_func in_use) const {
    const size_t n = size();
    for (size_t i = 0; i < n; i++) {
        if (impls_[i]->release) {
            impls_[i]->release(subtable, in_use);
        }
    }
}

LookupImpl* LookupRegistry::find(std::string_view name) const {
    const size_t n = size();
    for (size_t i = 0; i < n; i++) {
        if (impls_[i]->name == name) {
            return impls_[i].get();
        }
    }
    return nullptr;
}

Status LookupRegistry::set_priority(std::string_view name, int64_t priority, uint32_t* changed) {
    std::lock_guard lock(mutex_);
    LookupImpl* impl = find(name);
    if (!impl) {
        std::string known;
        for (size_t i = 0; i < size(); i++) {
            known += (i ? ", " : "") + impls_[i]->name;
        }
        return Status::error("unknown lookup implementation '" + std::string(name) +
                             "' (available: " + known + ")");
    }
    if (priority < 0 || priority > 255) {
        return Status::error("priority " + std::to_string(priority) +
                             " is out of range: use 0 to 255");
    }
    impl->priority.store(static_cast<uint32_t>(priority), std::memory_order_relaxed);
    uint32_t n = 0;
    for (Classifier* cls : classifiers_) {
        n += cls->reprobe();
    }
    if (changed) {
        *changed = n;
    }
    return Status::ok();
}

std::string LookupRegistry::info() const {
    std::string out = "Available dpcls implementations:\n";
    for (size_t i = 0; i < size(); i++) {
        const LookupImpl& impl = *impls_[i];
        out += "  " + impl.name + " (Use count: " + std::to_string(impl.use_count.load()) +
               ", Priority: " + std::to_string(impl.priority.load()) + ")\n";
    }
    return out;
}

void LookupRegistry::attach(Classifier* cls) {
    std::lock_guard lock(mutex_);
    classifiers_.push_back(cls);
}

void LookupRegistry::detach(Classifier* cls) {
    std::lock_guard lock(mutex_);
    std::erase(classifiers_, cls);
}

}  // namespace ovscls
