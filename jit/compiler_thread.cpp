#include "jit/compiler_thread.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "jit/code_cache.hpp"

namespace ovscls::jit {
namespace {
constexpr int kNice = 10;
}  // namespace

CompilerThread::CompilerThread(size_t capacity, Work work)
    : capacity_(capacity), work_(std::move(work)) {}

CompilerThread::~CompilerThread() {
    ovsb_thread* thread;
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        queue_.clear();
        waiting_.store(0, std::memory_order_relaxed);
        thread = thread_;
    }
    wake_.notify_all();
    if (thread) {
        ovsb_thread_join(thread);
    }
}

bool CompilerThread::submit(const CompileRequest& request) {
    std::unique_lock lock(mutex_);
    if (stop_ || queue_.size() >= capacity_) {
        return false;
    }
    if (!thread_) {
        thread_ = ovsb_thread_create("dpcls_plugin", main, this);
    }
    queue_.push_back(request);
    waiting_.store(queue_.size(), std::memory_order_relaxed);
    lock.unlock();
    wake_.notify_one();
    return true;
}

void CompilerThread::cancel(const dpcls_subtable* subtable) {
    std::lock_guard lock(mutex_);
    std::erase_if(queue_, [&](const CompileRequest& r) { return r.subtable == subtable; });
    waiting_.store(queue_.size(), std::memory_order_relaxed);
    if (queue_.empty() && !busy_) {
        idle_.notify_all();
    }
}

void CompilerThread::drain() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

size_t CompilerThread::queued() const {
    std::lock_guard lock(mutex_);
    return queue_.size() + busy_;
}

void CompilerThread::main(void* self) { static_cast<CompilerThread*>(self)->run(); }

void CompilerThread::run() {
    ovsb_rcu_quiesce_start();  // for good: see the header
    // Background work: where it shares a core, forwarding threads go first.
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kNice);
    CodeCache::mark_compiler_thread();
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_) {
            break;
        }
        const CompileRequest request = queue_.front();
        queue_.pop_front();
        waiting_.store(queue_.size(), std::memory_order_relaxed);
        busy_ = true;
        lock.unlock();
        work_(request);
        lock.lock();
        busy_ = false;
        if (queue_.empty()) {
            idle_.notify_all();
        }
    }
    busy_ = false;
    idle_.notify_all();
}

}  // namespace ovscls::jit
