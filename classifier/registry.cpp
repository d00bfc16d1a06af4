#include "classifier/registry.hpp"

#include <algorithm>
#include <memory>

namespace ovscls {

Status LookupRegistry::add(const LookupDescriptor& d) {
    std::lock_guard lock(mutex_);
    const std::string_view name = d.name;
    const uint32_t priority = d.priority;
    if (name.empty() || !d.probe) {
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
    impl->probe_fn = d.probe;
    impl->release_fn = d.release;
    impl->ranking_fn = d.ranking;
    impl->context = d.context;
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
        if (impls_[i]->release_fn) {
            impls_[i]->release_fn(impls_[i]->context, subtable, in_use);
        }
    }
}

void LookupRegistry::ranking(bool begins) const {
    const size_t n = size();
    for (size_t i = 0; i < n; i++) {
        if (impls_[i]->ranking_fn) {
            impls_[i]->ranking_fn(impls_[i]->context, begins);
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
    for (PriorityListener* listener : listeners_) {
        n += listener->on_priority_change();
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

void LookupRegistry::subscribe(PriorityListener* listener) {
    std::lock_guard lock(mutex_);
    listeners_.push_back(listener);
}

void LookupRegistry::unsubscribe(PriorityListener* listener) {
    std::lock_guard lock(mutex_);
    std::erase(listeners_, listener);
}

}  // namespace ovscls
