// frames.hpp: real frames for miniflow_extract(): Ethernet, 802.1Q, ARP,
// IPv4 and IPv6 with TCP, UDP, ICMP, SCTP, fragments, and truncated and
// malformed variants.  Built byte by byte, network byte order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ovscls::test {

using Bytes = std::vector<uint8_t>;

struct Frame {
    std::string what;
    Bytes bytes;
};

inline void put16(Bytes& b, uint16_t v) {
    b.push_back(v >> 8);
    b.push_back(v & 0xff);
}
inline void put32(Bytes& b, uint32_t v) {
    put16(b, v >> 16);
    put16(b, v & 0xffff);
}
inline void put(Bytes& b, std::initializer_list<uint8_t> v) { b.insert(b.end(), v); }

inline Bytes eth(uint16_t type, uint8_t host = 1, int vlan = -1) {
    Bytes b;
    put(b, {0x52, 0x54, 0x00, 0x00, 0x00, uint8_t(host + 1)});  // dst
    put(b, {0x52, 0x54, 0x00, 0x00, 0x00, host});               // src
    if (vlan >= 0) {
        put16(b, 0x8100);
        put16(b, static_cast<uint16_t>(vlan));
    }
    put16(b, type);
    return b;
}

inline Bytes l4(uint8_t proto, uint16_t sport, uint16_t dport) {
    Bytes b;
    switch (proto) {
        case 6:  // TCP, SYN
            put16(b, sport), put16(b, dport), put32(b, 1), put32(b, 0);
            put(b, {0x50, 0x02}), put16(b, 8192), put16(b, 0), put16(b, 0);
            break;
        case 17:  // UDP
            put16(b, sport), put16(b, dport), put16(b, 8 + 18), put16(b, 0);
            break;
        case 132:  // SCTP common header
            put16(b, sport), put16(b, dport), put32(b, 7), put32(b, 0);
            break;
        case 1:   // ICMP echo
        case 58:  // ICMPv6 echo request
            put(b, {uint8_t(proto == 1 ? 8 : 128), 0}), put16(b, 0), put32(b, 0x00010001);
            break;
    }
    b.resize(b.size() + 18, 0xab);  // payload
    return b;
}

inline Bytes ipv4(uint8_t proto, uint32_t src, uint32_t dst, const Bytes& payload,
                  uint16_t frag = 0, uint8_t ver_ihl = 0x45, int total = -1) {
    Bytes b;
    put(b, {ver_ihl, 0});
    put16(b, total >= 0 ? total : static_cast<uint16_t>(20 + payload.size()));
    put16(b, 0x1234), put16(b, frag);
    put(b, {64, proto}), put16(b, 0);
    put32(b, src), put32(b, dst);
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

inline Bytes ipv6(uint8_t next, uint16_t dst_last, const Bytes& payload, int plen = -1) {
    Bytes b;
    put32(b, 0x60000000);
    put16(b, plen >= 0 ? plen : static_cast<uint16_t>(payload.size()));
    put(b, {next, 64});
    put(b, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    put(b, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    put16(b, dst_last);
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

inline Bytes cat(Bytes a, const Bytes& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

inline Bytes arp(uint16_t op, uint32_t sip, uint32_t tip) {
    Bytes b;
    put16(b, 1), put16(b, 0x0800), put(b, {6, 4}), put16(b, op);
    put(b, {0x52, 0x54, 0, 0, 0, 1}), put32(b, sip);
    put(b, {0, 0, 0, 0, 0, 0}), put32(b, tip);
    return b;
}

// A set of well-formed frames over `flows` distinct address/port choices,
// then truncated and malformed variants of some of them.
inline std::vector<Frame> corpus_frames(int flows) {
    std::vector<Frame> out;
    for (int f = 0; f < flows; f++) {
        const uint32_t src = 0x0a000001 + f, dst = 0x0a010200 + (f % 7);
        const uint16_t sport = 1024 + f, dport = f % 3 ? 80 : 53;
        const uint8_t host = 1 + f % 4;
        out.push_back({"ipv4/tcp", cat(eth(0x0800, host), ipv4(6, src, dst, l4(6, sport, dport)))});
        out.push_back(
            {"ipv4/udp", cat(eth(0x0800, host), ipv4(17, src, dst, l4(17, sport, dport)))});
        out.push_back({"ipv4/icmp", cat(eth(0x0800, host), ipv4(1, src, dst, l4(1, 0, 0)))});
        out.push_back(
            {"ipv4/sctp", cat(eth(0x0800, host), ipv4(132, src, dst, l4(132, sport, 3868)))});
        out.push_back({"ipv4/frag-first",
                       cat(eth(0x0800, host), ipv4(17, src, dst, l4(17, sport, dport), 0x2000))});
        out.push_back({"ipv4/frag-later",
                       cat(eth(0x0800, host), ipv4(17, src, dst, l4(17, sport, dport), 0x0010))});
        out.push_back({"vlan/ipv4/udp", cat(eth(0x0800, host, 100 + f % 3),
                                            ipv4(17, src, dst, l4(17, sport, dport)))});
        out.push_back({"arp", cat(eth(0x0806, host), arp(1 + f % 2, src, dst))});
        out.push_back({"ipv6/tcp", cat(eth(0x86dd, host), ipv6(6, f, l4(6, sport, 22)))});
        out.push_back({"ipv6/udp", cat(eth(0x86dd, host), ipv6(17, f, l4(17, sport, dport)))});
        out.push_back({"ipv6/icmpv6", cat(eth(0x86dd, host), ipv6(58, f, l4(58, 0, 0)))});
        Bytes frag_hdr;  // IPv6 fragment header, then UDP
        put(frag_hdr, {17, 0}), put16(frag_hdr, f % 2 ? 0x0008 : 0x0001), put32(frag_hdr, 99);
        out.push_back(
            {"ipv6/frag", cat(eth(0x86dd, host), ipv6(44, f, cat(frag_hdr, l4(17, 1, 2))))});
        out.push_back({"eth/lldp", cat(eth(0x88cc, host), Bytes(46, 0x02))});
    }
    // Truncated: every well-formed kind cut at several lengths.
    const size_t n = out.size();
    for (size_t i = 0; i < n && i < 13; i++) {
        for (size_t len : {0, 6, 13, 14, 17, 20, 33, 38, 53}) {
            if (len < out[i].bytes.size()) {
                Bytes cut(out[i].bytes.begin(), out[i].bytes.begin() + len);
                out.push_back({out[i].what + "/truncated", cut});
            }
        }
    }
    // Malformed headers.
    const Bytes udp = l4(17, 1, 2);
    out.push_back({"ipv4/bad-ihl", cat(eth(0x0800), ipv4(17, 1, 2, udp, 0, 0x43))});
    out.push_back({"ipv4/bad-version", cat(eth(0x0800), ipv4(17, 1, 2, udp, 0, 0x65))});
    out.push_back({"ipv4/total-too-long", cat(eth(0x0800), ipv4(17, 1, 2, udp, 0, 0x45, 1500))});
    out.push_back({"ipv4/total-too-short", cat(eth(0x0800), ipv4(17, 1, 2, udp, 0, 0x45, 10))});
    out.push_back({"ipv6/plen-too-long", cat(eth(0x86dd), ipv6(17, 1, udp, 1400))});
    out.push_back({"vlan/truncated-tag",
                   Bytes{0x52, 0x54, 0, 0, 0, 2, 0x52, 0x54, 0, 0, 0, 1, 0x81, 0x00, 0x00}});
    return out;
}

}  // namespace ovscls::test
