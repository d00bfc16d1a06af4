/* ovs_reference: Open vSwitch 3.1.0's own code, for tests and benchmarks.
 *
 * Not part of the classifier: what tests compare against and how they get
 * their inputs the way OVS would.  OVS's own lookup implementations (the
 * truth of every differential test, and the ratio base of the benchmarks),
 * megaflow text parsed by OVS's odp-util, frames OVS composes, and the hash
 * functions of the OVS build linked in.  Compiled, like
 * classifier/ovs_bridge.c, against OVS's private headers; plain C ABI.
 *
 * Flows are OVSCLS_FLOW_U64S words, as in ovs_bridge.h. */
#ifndef OVSCLS_OVS_REFERENCE_H
#define OVSCLS_OVS_REFERENCE_H 1

#include <stddef.h>
#include <stdint.h>

#include "classifier/ovs_bridge.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Inputs, the way OVS reads and writes them. ---- */

/* Parses one megaflow as `ovs-appctl dpctl/dump-flows -m` prints it
 * ("ufid:... " prefix and ", packets:..." suffix allowed) into a flow and its
 * wildcards, with the in_port mask zeroed as dp_netdev_flow_add() does.
 * Returns 0, or -1 with a message in 'err'. */
int ovsb_megaflow_parse(const char* text, uint64_t flow[], uint64_t wc[], char* err,
                        size_t err_len);

/* Composes a frame that carries 'flow' (OVS's flow_compose()).  Returns its
 * length, or 0 when it does not fit in 'buf_len'. */
size_t ovsb_frame_compose(const uint64_t flow[], void* buf, size_t buf_len);

/* ---- OVS's own lookup implementations, the reference. ---- */

/* OVS's dpcls_subtable_generic_probe(): its specialized instance for the
 * eight fingerprints it lists, otherwise the run-time-count generic. */
ovsb_lookup_func ovsb_ovs_generic_probe(uint32_t u0, uint32_t u1);
/* OVS's run-time-count generic, whatever the fingerprint. */
ovsb_lookup_func ovsb_ovs_generic_runtime(void);
/* OVS's avx512_gather as its registry entry would select it, or NULL when
 * this OVS build did not register it or the CPU lacks AVX512F/BMI2. */
ovsb_lookup_func ovsb_ovs_avx512_gather_probe(uint32_t u0, uint32_t u1);
/* 1 when this OVS build registers avx512_gather (x86_64, an assembler and
 * compiler with working AVX512, OVS core built with SSE4.2). */
int ovsb_ovs_avx512_gather_built(void);

/* The hash_add64()/hash_finish() of the OVS build linked in, for tests of
 * the C++ mirror. */
uint32_t ovsb_hash_add64(uint32_t hash, uint64_t data);
uint32_t ovsb_hash_finish(uint32_t hash, uint32_t final);
/* 1 when the linked OVS lib hashes with CRC32. */
int ovsb_hash_is_crc32(void);

#ifdef __cplusplus
}
#endif

#endif /* OVSCLS_OVS_REFERENCE_H */
