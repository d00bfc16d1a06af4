#include "jit/cmap_probe.hpp"

#include <cstdint>

// OVS's cmap_find(), the fallback's callee.
#include "classifier/ovs_functions.h"
#include "jit/ovs_emit.hpp"

namespace ovscls::jit::emit {

using namespace Xbyak;

void cmap_bucket_address(Kernel& g, const Reg64& h, const Operand& mask, const Operand& buckets) {
    g.and_(h.cvt32(), mask);
    g.shl(h, kCmapBucketShift);
    g.add(h, buckets);
}

void cmap_other_hash(Kernel& g, const Reg64& h) { g.rol(h.cvt32(), 16); }

void cmap_probe_bucket(Kernel& g, const CmapBucketRegs& r, const Label& found) {
    Label& retry = g.new_label();
    Label& odd = g.new_label();
    Label& candidate = g.new_label();
    Label& absent = g.new_label();
    g.L(retry);
    g.mov(r.counter.cvt32(), g.dword[r.bucket]);
    g.test(r.counter.cvt8(), 1);
    g.jnz(odd, CodeGenerator::T_NEAR);
    // The hashes are dwords 1..5 of the bucket: one compare of its first
    // 32 bytes (counter, hashes[5], half a node), masked to those lanes.
    g.vpcmpeqd(g.ymm2, g.ymm1, g.yword[r.bucket]);
    g.vmovmskps(r.lanes.cvt32(), g.ymm2);
    g.and_(r.lanes.cvt32(), kCmapHashLanes);
    g.jnz(candidate, CodeGenerator::T_NEAR);
    g.cmp(r.counter.cvt32(), g.dword[r.bucket]);
    g.jne(retry, CodeGenerator::T_NEAR);
    g.L(absent);

    g.cold([&g, r, &retry, &odd, &candidate, &absent, &found] {
        g.L(odd);
        g.pause();  // a writer is in the bucket
        g.jmp(retry, CodeGenerator::T_NEAR);
        // The first slot that holds the hash (lane j is hashes[j - 1]): its
        // node, valid if the counter did not change meanwhile.
        g.L(candidate);
        g.tzcnt(r.lanes.cvt32(), r.lanes.cvt32());
        g.mov(r.node, g.qword[r.bucket + r.lanes * 8 + kCmapBucketNodes - 8]);
        g.cmp(r.counter.cvt32(), g.dword[r.bucket]);
        g.jne(retry, CodeGenerator::T_NEAR);
        g.test(r.node, r.node);
        g.jz(absent, CodeGenerator::T_NEAR);  // the slot's last node was removed
        g.jmp(found, CodeGenerator::T_NEAR);
    });
}

void cmap_first_bucket_changed(Kernel& g, const Reg64& bucket, const Reg64& counter,
                               const Label& changed) {
    g.cmp(counter.cvt32(), g.dword[bucket]);
    g.jne(changed, CodeGenerator::T_NEAR);
}

void cmap_find_call(Kernel& g, const Reg64& node, const Label& miss) {
    g.vzeroupper();
    g.mov(g.rax, reinterpret_cast<uint64_t>(&cmap_find));
    g.call(g.rax);
    if (node.getIdx() != Operand::RAX) {
        g.mov(node, g.rax);
    }
    g.test(node, node);
    g.jz(miss, CodeGenerator::T_NEAR);
}

}  // namespace ovscls::jit::emit
