/* ovs_reference.c: see ovs_reference.h. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#if OVSCLS_OVS_VERSION >= 40000
#include "dp-packet.h"
#include "dpif-netdev-dpcls.h"
#else
#include "cpu.h"
#include "dp-packet.h"
#include "dpif-netdev-lookup.h"
#endif
#include "flow.h"
#include "hash.h"
#include "odp-util.h"
#include "openvswitch/ofpbuf.h"
#include "util.h"

#include "reference/ovs_reference.h"

static const struct flow *
as_flow(const uint64_t flow[])
{
    return (const struct flow *) (const void *) flow;
}

/* OVS 3.1 prints ct_tuple6() ports as src_port=/dst_port= but parses only
 * tp_src=/tp_dst= (docs/internals/ovs-3.1-notes.md): rewrite before
 * parsing. */
static void
rewrite_ct_tuple6_ports(char *s)
{
    static const char *from[] = { "src_port=", "dst_port=" };
    static const char *to[] = { "tp_src=", "tp_dst=" };

    for (int i = 0; i < 2; i++) {
        char *p;
        while ((p = strstr(s, from[i])) != NULL) {
            size_t from_len = strlen(from[i]), to_len = strlen(to[i]);
            memcpy(p, to[i], to_len);
            memmove(p + to_len, p + from_len, strlen(p + from_len) + 1);
        }
    }
}

int
ovsb_megaflow_parse(const char *text, uint64_t flow_[], uint64_t wc_[],
                    char *err, size_t err_len)
{
    struct flow *flow = (struct flow *) (void *) flow_;
    struct flow_wildcards *wc = (struct flow_wildcards *) (void *) wc_;
    struct ofpbuf key, mask;
    char *error = NULL;
    int ret = -1;

    BUILD_ASSERT(sizeof *wc == sizeof *flow);

    /* Drop "ufid:... " and everything from ", packets:" (or " actions:"). */
    char *s = xstrdup(text);
    char *start = s;
    if (!strncmp(start, "ufid:", 5)) {
        start += strcspn(start, " ");
        start += strspn(start, " ");
    }
    char *end = strstr(start, ", packets:");
    if (!end) {
        end = strstr(start, " actions:");
    }
    if (end) {
        *end = '\0';
    }
    rewrite_ct_tuple6_ports(start);

    ofpbuf_init(&key, 0);
    ofpbuf_init(&mask, 0);
    memset(flow, 0, sizeof *flow);
    memset(wc, 0, sizeof *wc);
    if (odp_flow_from_string(start, NULL, &key, &mask, &error)) {
        snprintf(err, err_len, "odp_flow_from_string: %s",
                 error ? error : "parse error");
    } else if (odp_flow_key_to_flow(key.data, key.size, flow, &error)
               == ODP_FIT_ERROR) {
        snprintf(err, err_len, "odp_flow_key_to_flow: %s",
                 error ? error : "does not fit");
    } else if (odp_flow_key_to_mask(mask.data, mask.size, wc, flow, &error)
               == ODP_FIT_ERROR) {
        snprintf(err, err_len, "odp_flow_key_to_mask: %s",
                 error ? error : "does not fit");
    } else {
        /* dp_netdev_flow_add(): the dpcls is per in_port, so the in_port
         * mask is wildcarded in the subtable mask. */
        wc->masks.in_port.odp_port = 0;
        ret = 0;
    }
    free(error);
    ofpbuf_uninit(&key);
    ofpbuf_uninit(&mask);
    free(s);
    return ret;
}

size_t
ovsb_frame_compose(const uint64_t flow[], void *buf, size_t buf_len)
{
    struct dp_packet packet;
    size_t len = 0;

    dp_packet_init(&packet, 0);
#if OVSCLS_OVS_VERSION >= 30300
    /* OVS 3.3 added 'bad_csum' (write a wrong L4 checksum): no. */
    flow_compose(&packet, as_flow(flow), NULL, 64, false);
#else
    flow_compose(&packet, as_flow(flow), NULL, 64);
#endif
    if (dp_packet_size(&packet) <= buf_len) {
        len = dp_packet_size(&packet);
        memcpy(buf, dp_packet_data(&packet), len);
    }
    dp_packet_uninit(&packet);
    return len;
}

/* ---- OVS's own lookups. ---- */

/* OVS 4.0 renamed dpcls_subtable_generic_probe() (the registry's probe of
 * its entry "generic") to dpcls_subtable_lookup_probe(), which
 * dpcls_create_subtable() calls: the same choice, the same functions. */
#if OVSCLS_OVS_VERSION >= 40000
#define dpcls_subtable_generic_probe dpcls_subtable_lookup_probe
#endif

ovsb_lookup_func
ovsb_ovs_generic_probe(uint32_t u0, uint32_t u1)
{
    return dpcls_subtable_generic_probe(u0, u1);
}

ovsb_lookup_func
ovsb_ovs_generic_runtime(void)
{
    /* (0, 0) is not among the fingerprints OVS specializes, so its probe
     * returns the generic function, which reads the counts from the
     * subtable at run time. */
    return dpcls_subtable_generic_probe(0, 0);
}

/* The condition under which dpif-netdev-lookup.c registers avx512_gather;
 * OVS 4.0 removed it. */
#define OVSB_AVX512_GATHER_BUILT                                              \
    (OVSCLS_OVS_VERSION < 40000 && __x86_64__ && HAVE_AVX512F                 \
     && HAVE_LD_AVX512_GOOD && HAVE_AVX512BW && __SSE4_2__)

ovsb_lookup_func
ovsb_ovs_avx512_gather_probe(uint32_t u0, uint32_t u1)
{
#if OVSB_AVX512_GATHER_BUILT
    if (!cpu_has_isa(OVS_CPU_ISA_X86_AVX512F)
        || !cpu_has_isa(OVS_CPU_ISA_X86_BMI2)) {
        return NULL;
    }
    return dpcls_subtable_avx512_gather_probe__(
        u0, u1, cpu_has_isa(OVS_CPU_ISA_X86_VPOPCNTDQ));
#else
    (void) u0;
    (void) u1;
    return NULL;
#endif
}

int
ovsb_ovs_avx512_gather_built(void)
{
#if OVSB_AVX512_GATHER_BUILT
    return 1;
#else
    return 0;
#endif
}

uint32_t
ovsb_hash_add64(uint32_t hash, uint64_t data)
{
    return hash_add64(hash, data);
}

uint32_t
ovsb_hash_finish(uint32_t hash, uint32_t final)
{
    return hash_finish(hash, final);
}

int
ovsb_hash_is_crc32(void)
{
    return OVSCLS_HASH_CRC32;
}
