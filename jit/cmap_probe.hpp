// cmap_probe.hpp: OVS's cmap lookup (lib/cmap.c), as both generators emit
// it.  The one place where generated code reads a cmap.
//
// A reader that may run beside a writer (OVS's cmap_find() and
// cmap_find_batch()) looks for a 32-bit hash like this:
//
//   1. h1 = rehash(impl, hash): hash_finish(impl->basis, hash) (the
//      generators emit it with ovs_emit.hpp's hash_finish());
//      b1 = &impl->buckets[h1 & impl->mask]            cmap_bucket_address()
//   2. the hash in b1, read under its counter c1        cmap_probe_bucket()
//        the counter is odd: a writer is in the bucket, pause, read again;
//        the five slots' hashes compared with the key's; a slot that holds
//        it gives its node; the counter read again: changed, read again;
//        a null node (a slot keeps its hash when its last node is
//        removed) is "not here"
//   3. not in b1: h2 = other_hash(h1) = h1 rotated by 16   cmap_other_hash()
//      b2 = &impl->buckets[h2 & impl->mask], probed as b1
//   4. in neither: if b1's counter is no longer c1, a writer may have moved
//      the node from b2 to b1 meanwhile (cmap_find_batch() says the same):
//      OVS's own cmap_find() reads both buckets stably     cmap_find_call()
//      else the hash has no node.
//
// jit_avx2 runs the steps as cmap_find_batch() does, each over the whole
// burst before the next (step 1 while flattening, 2 and 3's address, then
// 3's probe and 4), so that one key's bucket loads while another's is
// compared; jit_fused runs them key by key, the keys being few per
// subtable once the better-ranked ones matched.  Both call the functions
// below, which emit each step alike: the common outcome falls through, and
// the rare ones (an odd or changed counter, a slot that holds the hash, the
// fallback) are cold code (Kernel::cold()).
//
// Worked example, jit_fused, a key whose rule is in b2: b1's counter is
// even, no slot of b1 holds the hash, the counter is unchanged: fall
// through; rotate h1, address b2; b2's counter even, slot 3 holds the
// hash: jump to the cold code, which reads node = b2->nodes[3], re-reads
// b2's counter (unchanged), finds the node not null and jumps to `found`,
// where the generator verifies the rule.
//
// x86 keeps loads in order, so OVS's acquire fences need no instruction.
#pragma once

#include <xbyak/xbyak.h>

#include "jit/kernel.hpp"

namespace ovscls::jit::emit {

// The registers one bucket's probe uses; `lanes` may be `node`'s register.
struct CmapBucketRegs {
    Xbyak::Reg64 bucket;   // the bucket's address (in)
    Xbyak::Reg64 counter;  // its counter, as the probe read it (out)
    Xbyak::Reg64 lanes;    // scratch: the slots whose hash matched
    Xbyak::Reg64 node;     // the node found (out, at `found` only)
};

// h = the address of bucket (h & mask) of a cmap whose buckets start at
// `buckets` (&impl->buckets[0]: a register or a memory operand).  In: h's
// low 32 bits.  Out: h.  Clobbers the flags.
void cmap_bucket_address(Kernel& g, const Xbyak::Reg64& h, const Xbyak::Operand& mask,
                         const Xbyak::Operand& buckets);

// h = other_hash(h): the second bucket's hash (lib/cmap.c rotates by 16).
void cmap_other_hash(Kernel& g, const Xbyak::Reg64& h);

// Step 2 for one bucket: looks for the hash broadcast in ymm1's eight
// dwords in r.bucket, under its counter.  Falls through when no node of
// the bucket has the hash, r.counter holding the (even) counter it was
// read under; jumps to `found` with r.node when one has (the counter
// unchanged around the read).  The odd-counter wait and the slot read are
// cold code, emitted later: `found` must live as long as the kernel
// (Kernel::new_label(), or a member).  Clobbers r.lanes, ymm2, the flags.
void cmap_probe_bucket(Kernel& g, const CmapBucketRegs& r, const Xbyak::Label& found);

// Step 4's test: jumps to `changed` when `bucket`'s counter is no longer
// `counter` (the first bucket's, as its probe read it); falls through
// when it is.  Clobbers the flags.
void cmap_first_bucket_changed(Kernel& g, const Xbyak::Reg64& bucket, const Xbyak::Reg64& counter,
                               const Xbyak::Label& changed);

// Step 4's fallback: node = OVS's cmap_find(rdi, esi); falls through when
// it is a node, jumps to `miss` when it is null.  In: rdi = the cmap
// (&subtable->rules), esi = the hash.  Clobbers every caller-saved
// register and the ymm registers' upper halves (cleared first: OVS's code
// may be SSE, and pays for no AVX-SSE transition).
void cmap_find_call(Kernel& g, const Xbyak::Reg64& node, const Xbyak::Label& miss);

}  // namespace ovscls::jit::emit
