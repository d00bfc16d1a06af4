// fuzz_seeds.cpp: writes the seed corpus of a fuzz target from the
// project's own tables (tests/fuzz.sh runs it before each target):
//
//   fuzz_seeds lookup_fuzz DIR               one seed per fingerprint of
//                                            lookups/fingerprints.def
//   fuzz_seeds classifier_fuzz DIR           sequences from fixed PRNG seeds
//   fuzz_seeds megaflow_fuzz DIR MEGAFLOWS   one seed per megaflow of
//                                            tests/corpus, with the frames of
//                                            tests/frames.hpp
//
// Seeds only start the search: libFuzzer mutates them, and the committed
// tests/fuzz/seeds/TARGET keep the inputs that once failed.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "frames.hpp"

namespace {

using ovscls::test::Bytes;

bool write(const std::string& path, const Bytes& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
        std::fprintf(stderr, "fuzz_seeds: cannot write %s\n", path.c_str());
        return false;
    }
    return true;
}

// lookup_fuzz reads u1 and then u0 as its first two decisions (one byte
// each, Gen::below); the rest decides masks, rules and keys.
bool lookup_seeds(const std::string& dir) {
    struct Fp {
        int u0, u1;
    };
    static constexpr Fp kFingerprints[] = {
#define FINGERPRINT(U0, U1, ORIGIN) {U0, U1},
#include "lookups/fingerprints.def"
#undef FINGERPRINT
    };
    for (const Fp& fp : kFingerprints) {
        Bytes b = {static_cast<uint8_t>(fp.u1), static_cast<uint8_t>(fp.u0)};
        b.resize(258, 0x55);
        if (!write(dir + "/fingerprint-" + std::to_string(fp.u0) + "-" + std::to_string(fp.u1),
                   b)) {
            return false;
        }
    }
    return true;
}

// classifier_fuzz reads every decision from its input: inputs of a few
// sizes, so that short and long operation sequences start the search.
bool classifier_seeds(const std::string& dir) {
    std::mt19937_64 rng(20261202);
    for (size_t size : {64, 256, 1024, 4096}) {
        for (int i = 0; i < 2; i++) {
            Bytes b(size);
            for (auto& byte : b) {
                byte = static_cast<uint8_t>(rng());
            }
            if (!write(dir + "/sequence-" + std::to_string(size) + "-" + std::to_string(i), b)) {
                return false;
            }
        }
    }
    return true;
}

// megaflow_fuzz: TEXT '\n' PORT { LEN_HI LEN_LO FRAME }...
bool megaflow_seeds(const std::string& dir, const char* megaflows) {
    std::ifstream in(megaflows);
    if (!in) {
        std::fprintf(stderr, "fuzz_seeds: cannot read %s\n", megaflows);
        return false;
    }
    const auto frames = ovscls::test::corpus_frames(2);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') {
            continue;
        }
        Bytes b(line.begin(), line.end());
        b.push_back('\n');
        b.push_back(1);  // in_port
        // A different handful of frames per megaflow, within 31 frames.
        for (size_t i = n % 5; i < frames.size() && i < size_t(n % 5) + 31 * 5; i += 5) {
            ovscls::test::put16(b, static_cast<uint16_t>(frames[i].bytes.size()));
            b.insert(b.end(), frames[i].bytes.begin(), frames[i].bytes.end());
        }
        if (!write(dir + "/megaflow-" + std::to_string(n++), b)) {
            return false;
        }
    }
    return n > 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string target = argc > 2 ? argv[1] : "";
    bool ok = false;
    if (target == "lookup_fuzz" && argc == 3) {
        ok = lookup_seeds(argv[2]);
    } else if (target == "classifier_fuzz" && argc == 3) {
        ok = classifier_seeds(argv[2]);
    } else if (target == "megaflow_fuzz" && argc == 4) {
        ok = megaflow_seeds(argv[2], argv[3]);
    } else {
        std::fprintf(stderr,
                     "usage: fuzz_seeds lookup_fuzz|classifier_fuzz DIR\n"
                     "       fuzz_seeds megaflow_fuzz DIR MEGAFLOWS\n");
        return 2;
    }
    return ok ? 0 : 1;
}
