// count_arg.hpp: the soaks' command-line counts (--lookups, --keys, --seed).
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace ovscls::test {

// `text` as a count from 1 to 10^15, written as an integer or as 1e8;
// false (and *out untouched) for anything else.
inline bool parse_count(const char* text, uint64_t* out) {
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text, &end);
    if (errno || end == text || *end || v < 1 || v > 1e15) {
        return false;
    }
    *out = static_cast<uint64_t>(v);
    return true;
}

}  // namespace ovscls::test
