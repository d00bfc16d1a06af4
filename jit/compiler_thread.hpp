// compiler_thread.hpp: where jit_avx2 compiles, away from the PMD threads.
//
// A ranking call on a PMD thread (dpcls_sort_subtable_vector() -> probe)
// must never stall forwarding for a compile (~30 us each, thousands in a
// mask flood).  So the probe only submits a request here and returns; this
// thread compiles it, and the engine installs the finished code at the
// subtable's next ranking.  The queue is bounded: a full queue refuses the
// request (the subtable stays where it is and asks again next ranking), so a
// flood of new masks costs a PMD one short mutex hold per request, never a
// wait behind a compile.
//
// The thread is an OVS thread (ovs_thread_create(), through the bridge), so
// OVS-RCU knows it; it never reads RCU-protected memory (a request carries
// its shape by value and the subtable only as a key), so it stays quiescent
// for good and never holds up a grace period.  It starts with the first
// request, not before: ovs-vswitchd must not have threads when it forks to
// detach.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include "classifier/ovs_services.h"
#include "jit/lookup_shape.hpp"

namespace ovscls::jit {

struct CompileRequest {
    const dpcls_subtable* subtable;  // a key only: never dereferenced here
    uint64_t generation;             // which life of that address asked
    LookupShape shape;
    // Other work instead (a fused lookup, jit/fused_lookups.hpp): run as is.
    std::function<void()> job = nullptr;
};

class CompilerThread {
  public:
    using Work = std::function<void(const CompileRequest&)>;

    // `work` runs on the thread, one request at a time, with no lock held.
    CompilerThread(size_t capacity, Work work);
    // Drops what is queued, waits for the request in progress, joins.
    ~CompilerThread();
    CompilerThread(const CompilerThread&) = delete;
    CompilerThread& operator=(const CompilerThread&) = delete;

    // Queues `request`; false when the queue is full.  Never waits for a
    // compile: the queue's mutex is held only to push.
    bool submit(const CompileRequest& request);
    // Drops the queued requests of `subtable` (a request already being
    // compiled is delivered, and the engine discards it).
    void cancel(const dpcls_subtable* subtable);
    // Returns once nothing is queued or being compiled (tests, benchmarks).
    void drain();
    size_t queued() const;
    // Whether submit() would refuse for want of room, without the queue's
    // mutex: a ranking in a flood asks this for thousands of subtables.
    bool full() const { return waiting_.load(std::memory_order_relaxed) >= capacity_; }

  private:
    static void main(void* self);
    void run();

    const size_t capacity_;
    const Work work_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;  // a request or stop
    std::condition_variable idle_;  // the queue ran empty
    std::deque<CompileRequest> queue_;
    std::atomic<size_t> waiting_{0};  // queue_.size(), for full()
    bool busy_ = false;
    bool stop_ = false;
    ovsb_thread* thread_ = nullptr;
};

}  // namespace ovscls::jit
