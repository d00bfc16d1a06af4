// subtable_cases.hpp: the subtables the microbenchmark measures.
//
// Masks come from real megaflows (tests/corpus/megaflows.txt, parsed by
// OVS's odp_flow_from_string) where one exists, and are random masks of the
// fingerprint otherwise (marked "synthetic").  Rule values are random inside
// each mask, because one real megaflow mask admits many rules only when its
// masked fields vary.  Packet keys carry the map of a real frame that OVS
// composes for the megaflow (miniflow_extract), so they hold the extra words
// real packets hold.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "classifier/layout.hpp"

namespace ovscls::perf {

struct MaskCase {
    std::string name;  // e.g. "4,1 in_port fwd IPv4"
    uint32_t u0, u1;
    bool synthetic;
    FlowKey mask;
    MiniflowMap packet_map;           // words a packet key of this traffic holds
    std::vector<uint64_t> base_flow;  // OVSCLS_FLOW_U64S words
};

// Loads the real-megaflow masks from `corpus` (one per fingerprint, first
// seen) and adds synthetic masks for the fingerprints in `wanted` that the
// corpus lacks.
std::vector<MaskCase> load_mask_cases(const std::string& corpus,
                                      const std::vector<std::pair<uint32_t, uint32_t>>& wanted);

}  // namespace ovscls::perf
