// kernel.hpp: the base of the JIT's two code generators, jit_avx2's
// LookupGenerator and jit_fused's FusedGenerator: what every function they
// generate shares (oneDNN's jit_generator is the model).
//
//   Kernel::make<G>(status, args...)  builds a G (its constructor reserves
//        its code memory, writable), has it emit its code (G::generate()),
//        then makes the memory read+execute: W^X, never both.  No exception
//        leaves it (it runs under OVS's C code, where one would abort the
//        switch): a failure is null, *status saying why.
//   emit_enter(frame_bytes)  the System V prologue: a landing pad for OVS's
//        indirect call (CET IBT), the six callee-saved registers pushed, the
//        frame reserved a page at a time, each page touched (stack clash).
//   emit_leave(frame_bytes)  the epilogue: ymm upper halves cleared, the
//        frame freed, the registers popped, ret.
//   whole_pages(bytes)  a code size estimate rounded up to whole pages.
//   cold(emit), emit_cold()  code off the hot path: a rare branch jumps to
//        code that cold() queues and emit_cold() places after the
//        epilogue, so that the common path falls through.
//   new_label()  a label that lives as long as the kernel (for cold code,
//        which runs after the function that made it has returned).
//
// The generated code is registered with profilers (perf's map, code dumps)
// by the code cache that owns it (code_cache.hpp: announce()); the probe of
// OVS's cmap that both kernels emit is in cmap_probe.hpp, OVS's struct
// offsets and hash in ovs_emit.hpp.
#pragma once

#include <xbyak/xbyak.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace ovscls::jit {

inline constexpr size_t kCodePageBytes = 4096;

// What a generator's create() reports.
struct GenerateStatus {
    enum class Code {
        kOk,
        kTooManyBlocks,  // more than kMaxBlocks blocks
        kNoMemory,       // no code memory (the allocator, or the heap)
        kCodeTooLarge,   // the code outgrew its reserved bytes: a generator bug
        kError,          // any other xbyak error, or an invalid spec: a bug
    };
    Code code = Code::kOk;
    std::string detail;  // for the log; empty when kOk
    bool ok() const { return code == Code::kOk; }
};

class Kernel : public Xbyak::CodeGenerator {
  public:
    // Queues `emit` to run at emit_cold(), after the epilogue.  Its labels
    // must outlive this call (new_label(), or the generator's members).
    void cold(std::function<void()> emit) { cold_.push_back(std::move(emit)); }
    // A label owned by the kernel: its address stays valid until the
    // kernel is destroyed.
    Xbyak::Label& new_label() { return labels_.emplace_back(); }

  protected:
    // Reserves `reserved_bytes` of code memory from `allocator`, writable
    // (not executable) until make() is done.  May throw, as xbyak does.
    Kernel(size_t reserved_bytes, Xbyak::Allocator* allocator)
        : CodeGenerator(reserved_bytes, Xbyak::DontSetProtectRWE, allocator) {}

    // See the top of the file.  G befriends Kernel (its constructor and
    // generate() stay private).
    template <typename G, typename... Args>
    static std::unique_ptr<G> make(GenerateStatus* status, Args&&... args) noexcept;

    // In: the caller's System V frame.  Out: rsp = the frame's base
    // (16-byte aligned when frame_bytes is 8 mod 16).  Clobbers nothing
    // else: the arguments' registers are untouched.
    void emit_enter(uint32_t frame_bytes);
    // In: rsp as emit_enter() left it, the result in rax.  Returns.
    void emit_leave(uint32_t frame_bytes);

    // Emits the code queued by cold(), in order; cold code may queue more.
    void emit_cold();

    static size_t whole_pages(size_t bytes) {
        return (bytes + kCodePageBytes - 1) / kCodePageBytes * kCodePageBytes;
    }

  private:
    std::vector<std::function<void()>> cold_;
    std::deque<Xbyak::Label> labels_;  // a deque: growing it moves none
};

template <typename G, typename... Args>
std::unique_ptr<G> Kernel::make(GenerateStatus* status, Args&&... args) noexcept {
    using Code = GenerateStatus::Code;
    try {
        std::unique_ptr<G> g(new G(std::forward<Args>(args)...));
        g->generate();
        g->setProtectModeRE();  // W^X: writable until here, executable after
        *status = {};
        return g;
    } catch (const Xbyak::Error& e) {
        const int err = e;
        const Code code = err == Xbyak::ERR_CANT_ALLOC || err == Xbyak::ERR_CANT_PROTECT
                              ? Code::kNoMemory
                          : err == Xbyak::ERR_CODE_IS_TOO_BIG ? Code::kCodeTooLarge
                                                              : Code::kError;
        *status = {code, std::string("code generation failed: ") + e.what()};
    } catch (const std::bad_alloc&) {
        *status = {Code::kNoMemory, "code generation failed: out of memory"};
    } catch (...) {
        *status = {Code::kError, "code generation failed: unexpected exception"};
    }
    return nullptr;
}

}  // namespace ovscls::jit
