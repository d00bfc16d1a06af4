#include "subtable_cases.hpp"

#include <bit>
#include <fstream>
#include <random>
#include <set>

#include "reference/ovs_reference.h"

namespace ovscls::perf {
namespace {

MiniflowMap union_map(const MiniflowMap& a, const MiniflowMap& b) {
    return {{a.bits[0] | b.bits[0], a.bits[1] | b.bits[1]}};
}

}  // namespace

std::vector<MaskCase> load_mask_cases(const std::string& corpus,
                                      const std::vector<std::pair<uint32_t, uint32_t>>& wanted) {
    std::vector<MaskCase> out;
    std::set<std::pair<uint32_t, uint32_t>> seen;
    std::ifstream in(corpus);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        MaskCase c;
        c.base_flow.assign(kFlowU64s, 0);
        std::vector<uint64_t> wc(kFlowU64s);
        char err[256];
        if (ovsb_megaflow_parse(line.c_str(), c.base_flow.data(), wc.data(), err, sizeof err) ||
            !ovsb_mask_init(ovs(&c.mask), c.base_flow.data(), wc.data())) {
            continue;
        }
        c.u0 = std::popcount(c.mask.map.bits[0]);
        c.u1 = std::popcount(c.mask.map.bits[1]);
        if (!seen.insert({c.u0, c.u1}).second) {
            continue;
        }
        c.synthetic = false;
        // The map of the frame OVS composes for this megaflow; tunnel
        // megaflows have no frame, so their flow's own words stand in.
        uint8_t frame[2048];
        FlowKey packet{};
        if (line.find("tunnel(") == std::string::npos) {
            const size_t len = ovsb_frame_compose(c.base_flow.data(), frame, sizeof frame);
            ovsb_key_from_frame(ovs(&packet), frame, len, 1);
        } else {
            ovsb_key_from_flow(ovs(&packet), c.base_flow.data());
        }
        c.packet_map = union_map(packet.map, c.mask.map);
        // A short description: the line between recirc_id and ", packets".
        const size_t from = line.find("recirc_id");
        const size_t to = line.find(", packets");
        c.name = line.substr(from, to - from);
        out.push_back(std::move(c));
    }

    std::mt19937_64 rng(99);
    for (auto [u0, u1] : wanted) {
        if (seen.count({u0, u1})) {
            continue;
        }
        MaskCase c;
        c.u0 = u0;
        c.u1 = u1;
        c.synthetic = true;
        c.name = "synthetic";
        uint64_t map[2] = {0, 0};
        while (std::popcount(map[0]) < static_cast<int>(u0)) map[0] |= uint64_t{1} << (rng() % 64);
        while (std::popcount(map[1]) < static_cast<int>(u1))
            map[1] |= uint64_t{1} << (rng() % kUnit1Bits);
        std::vector<uint64_t> values(u0 + u1);
        for (auto& v : values) {
            v = rng() | 1;
        }
        ovsb_mask_init_raw(ovs(&c.mask), map, values.data(), values.size());
        c.base_flow.assign(kFlowU64s, 0);
        c.packet_map = c.mask.map;
        // Packets carry a few more words than the mask matches.
        for (int i = 0; i < 6; i++) {
            c.packet_map.bits[0] |= uint64_t{1} << (rng() % 64);
        }
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace ovscls::perf
