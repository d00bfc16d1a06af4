#include "jit/kernel.hpp"

namespace ovscls::jit {
namespace {

using namespace Xbyak::util;

// The stack's guard page is one page: no store may skip over it.
constexpr uint32_t kStackProbeBytes = 4096;

}  // namespace

void Kernel::emit_enter(uint32_t frame_bytes) {
    // A landing pad for OVS's indirect call: where the CPU enforces
    // indirect branch tracking (CET IBT) a call to code without it faults;
    // elsewhere it is a nop.
    endbr64();
    for (const Xbyak::Reg64& r : {rbx, rbp, r12, r13, r14, r15}) {
        push(r);
    }
    // A frame of more than a page (jit_avx2's is up to ~8.4 KiB with 32
    // blocks) is reserved a page at a time, touching each, so that it
    // cannot step over the stack's guard page (stack clash); a frame within
    // a page is reserved in one go.
    uint32_t left = frame_bytes;
    while (left > kStackProbeBytes) {
        sub(rsp, kStackProbeBytes);
        or_(qword[rsp], 0);
        left -= kStackProbeBytes;
    }
    sub(rsp, left);
}

void Kernel::emit_leave(uint32_t frame_bytes) {
    vzeroupper();  // no AVX-SSE transition penalty in OVS's code after us
    add(rsp, frame_bytes);
    for (const Xbyak::Reg64& r : {r15, r14, r13, r12, rbp, rbx}) {
        pop(r);
    }
    ret();
}

void Kernel::emit_cold() {
    // By index, each moved out before it runs: cold code may queue more,
    // which may move the vector's elements.
    for (size_t c = 0; c < cold_.size(); c++) {
        std::function<void()> emit = std::move(cold_[c]);
        emit();
    }
    cold_.clear();
}

}  // namespace ovscls::jit
