// tse_grid: what a Tuple Space Explosion of the attacker's choosing costs
// the legitimate traffic, per shape (perf/tse_shape.hpp), at the
// classifier: OVS's loop with OVS's generic lookup in every subtable
// against the plugin's defaults (jit_avx2, jit_fused over the top
// subtables, the tail index behind them; without the JIT where it is not
// built: specialized and the tail index).
//
//   tse_grid [--quick] [--json FILE] [--cells FILE] [--cell SPEC]...
//
// --plugin-only: the plugin's lookups alone, unchecked (for a profiler).
// --cell SPEC: one shape; --cells FILE: one per line ('#' comments; a line
// may start with "AXIS |", the grid's name for what the line varies).
// For each shape and lookup, three classifiers of the same rules' kind:
//   before   the legitimate rules only, ranked on the legitimate traffic;
//   during   with the attack's megaflows, ranked on the mix (attack=%);
// timed on: before's legitimate keys (T_before), and during's mix (T_mix),
// legitimate keys alone (T_legit) and attack frames alone (T_attack), in
// TSC ticks per key (median of repetitions of median windows,
// bench_classifier.hpp).  Reported per lookup:
//   legit kept  (1 - attack%) * T_before / T_mix: the legitimate packets a
//               classifier-bound PMD forwards during the flood, as a share
//               of before's (the goal: >= 0.70 at attack=10);
//   attack/legit  T_attack / T_legit: what an attack key costs against a
//               legitimate one, during (the goal: <= 3);
// and the tail index's probes and loops per key, the writer's ticks per
// insert and per removal, and the ranking's ticks.  Every lookup's answer
// to every key (mix, legitimate, attack) is checked against OVS's generic
// before any timing: a mismatch fails the run (exit 1).  A shape no switch
// can hold (tse_impossible()) is printed as not made, with the reason.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "perf/bench_classifier.hpp"
#include "perf/tse/tse_shape.hpp"
#include "reference/ovs_reference.h"
#include "standalone/builtin_lookups.hpp"

namespace ovscls::perf {
namespace {

struct Cell {
    std::string axis;  // what the line of the grid varies ("" for --cell)
    TseShape shape;
};

struct Figures {
    double before = 0, mix = 0, legit = 0, attack = 0;  // ticks per key
    double probes_per_key = 0, loops_per_key = 0;       // the tail index's, during
    double insert = 0, remove = 0, ranking = 0;         // writer ticks, during
    std::string impls;
};

// `name`'s registry: "ovs_generic" or "plugin".
void fill_registry(const std::string& name, LookupRegistry& r) {
    if (name == "ovs_generic") {
        r.add({"ovs_generic", 1, ovs_generic_probe, nullptr, nullptr});
    } else {
        add_builtin_lookups(r);
    }
}

std::unique_ptr<Setup> make_setup(const std::string& name) {
    auto s = std::make_unique<Setup>();
    s->name = name;
    s->registry = std::make_unique<LookupRegistry>();
    fill_registry(name, *s->registry);
    if (name == "plugin") {
        s->tail = true;
        if (jit_built()) s->fused = &jit::process_engine().fused();
    }
    return s;
}

// Answers of `s` to `keys`, -1 for a miss.
std::vector<int> answers(Setup& s, Keys& keys) {
    std::vector<int> a;
    pass(s, keys, &a, nullptr);
    return a;
}

int run_cell(const Cell& cell, const std::vector<std::string>& names, int reps, int windows,
             std::FILE* json) {
    const TseShape& shape = cell.shape;
    const std::string spec = shape.spec();
    const std::string why = tse_impossible(shape);
    if (!why.empty()) {
        std::printf("\n%s\n  not made: %s\n", spec.c_str(), why.c_str());
        if (json) {
            std::fprintf(json, "{\"axis\":\"%s\",\"spec\":\"%s\",\"made\":false,\"why\":\"%s\"}\n",
                         cell.axis.c_str(), spec.c_str(), why.c_str());
        }
        return 0;
    }
    const TseTables t = make_tse_tables(shape);
    std::optional<Keys> k_before = make_keys(t.before), k_mix = make_keys(t.during),
                        k_legit = make_keys(t.legit), k_attack = make_keys(t.attack);
    if (!k_before || !k_mix || !k_legit || !k_attack) return 1;

    std::vector<std::unique_ptr<Setup>> before, during;
    for (const std::string& name : names) {
        before.push_back(make_setup(name));
        during.push_back(make_setup(name));
        if (!fill(*before.back(), t.before) || !fill(*during.back(), t.during)) return 1;
        settle(*before.back(), *k_before);
        settle(*during.back(), *k_mix);
    }
    // Exactness first: every key of every pool, as OVS's generic answers.
    int status = 0;
    std::string hit_counts;
    struct Pool {
        const char* what;
        Keys* keys;
        bool flooded;
    } pools[] = {{"legitimate (before)", &*k_before, false},
                 {"mix", &*k_mix, true},
                 {"legitimate", &*k_legit, true},
                 {"attack", &*k_attack, true}};
    for (const Pool& p : pools) {
        auto& set = p.flooded ? during : before;
        const std::vector<int> base = answers(*set[0], *p.keys);
        hit_counts +=
            std::string(hit_counts.empty() ? "" : ", ") + p.what + " " +
            std::to_string(std::count_if(base.begin(), base.end(), [](int a) { return a >= 0; })) +
            "/" + std::to_string(base.size());
        for (size_t i = 1; i < set.size(); i++) {
            const std::vector<int> got = answers(*set[i], *p.keys);
            size_t bad = 0;
            for (size_t j = 0; j < base.size(); j++) bad += got[j] != base[j];
            if (bad) {
                std::fprintf(stderr,
                             "%s: %s on the %s keys: %zu of %zu answered differently "
                             "from ovs_generic\n",
                             spec.c_str(), set[i]->name.c_str(), p.what, bad, base.size());
                status = 1;
            }
        }
    }
    if (status) return status;

    std::vector<Figures> fig(names.size());
    std::vector<std::vector<double>> r_before(names.size()), r_mix(names.size()),
        r_legit(names.size()), r_attack(names.size());
    auto windows_for = [&](const Setup& s) {  // the loop over thousands: fewer windows
        return s.subtables > 100 ? std::max(4, windows * 100 / static_cast<int>(s.subtables))
                                 : windows;
    };
    for (int r = 0; r < reps; r++) {
        for (size_t i = 0; i < names.size(); i++) {
            const size_t n = (i + static_cast<size_t>(r)) % names.size();
            r_before[n].push_back(timed_rep(*before[n], *k_before, windows));
            const int w = windows_for(*during[n]);
            r_mix[n].push_back(timed_rep(*during[n], *k_mix, w));
            r_legit[n].push_back(timed_rep(*during[n], *k_legit, w));
            r_attack[n].push_back(timed_rep(*during[n], *k_attack, w));
            ovsb_rcu_quiesce();
        }
    }
    const double share = 1.0 - shape.attack_pct / 100.0;
    std::printf("\n%s%s\n  %s; keys hit: %s; every lookup answered as %s\n",
                cell.axis.empty() ? "" : (cell.axis + " | ").c_str(), spec.c_str(),
                t.during.what.c_str(), hit_counts.c_str(), names[0].c_str());
    std::printf("  %-12s %9s %9s %9s %9s %7s %7s %8s %9s %9s\n", "lookup", "T_before", "T_mix",
                "T_legit", "T_attack", "kept", "atk/leg", "probes", "insert", "ranking");
    for (size_t i = 0; i < names.size(); i++) {
        Figures& f = fig[i];
        f.before = median(r_before[i]);
        f.mix = median(r_mix[i]);
        f.legit = median(r_legit[i]);
        f.attack = median(r_attack[i]);
        f.insert = during[i]->insert_ticks;
        f.ranking = during[i]->ranking_ticks;
        f.impls = during[i]->impls;
        if (during[i]->index) {
            const auto st =
                during[i]->cls->with_writer_lock([&] { return during[i]->index->stats(); });
            f.probes_per_key = st.keys ? double(st.probes) / double(st.keys) : 0;
            f.loops_per_key = st.keys ? double(st.loops) / double(st.keys) : 0;
        }
        const double kept = f.mix > 0 ? share * f.before / f.mix : 0;
        const double ratio = f.legit > 0 ? f.attack / f.legit : 0;
        std::printf("  %-12s %9.1f %9.1f %9.1f %9.1f %7.2f %7.2f %8.2f %9.0f %9.0f\n",
                    names[i].c_str(), f.before, f.mix, f.legit, f.attack, kept, ratio,
                    f.probes_per_key, f.insert, f.ranking);
    }
    for (size_t i = 0; i < names.size(); i++) {
        fig[i].remove = remove_all(*during[i]);
        std::printf("  %-12s remove %.0f ticks a rule; %s\n", names[i].c_str(), fig[i].remove,
                    fig[i].impls.c_str());
    }
    if (json) {
        std::fprintf(json,
                     "{\"axis\":\"%s\",\"spec\":\"%s\",\"made\":true,\"attack_rules\":%zu,"
                     "\"attack_pct\":%u,\"lookups\":{",
                     cell.axis.c_str(), spec.c_str(), t.attack_rules, shape.attack_pct);
        for (size_t i = 0; i < names.size(); i++) {
            const Figures& f = fig[i];
            std::fprintf(json,
                         "%s\"%s\":{\"before\":%.2f,\"mix\":%.2f,\"legit\":%.2f,\"attack\":%.2f,"
                         "\"probes_per_key\":%.3f,\"loops_per_key\":%.4f,\"insert\":%.1f,"
                         "\"remove\":%.1f,\"ranking\":%.0f}",
                         i ? "," : "", names[i].c_str(), f.before, f.mix, f.legit, f.attack,
                         f.probes_per_key, f.loops_per_key, f.insert, f.remove, f.ranking);
        }
        std::fprintf(json, "}}\n");
        std::fflush(json);
    }
    return 0;
}

}  // namespace
}  // namespace ovscls::perf

int main(int argc, char** argv) {
    using namespace ovscls;
    using namespace ovscls::perf;
    int reps = 5, windows = 64;
    std::vector<Cell> cells;
    std::vector<std::string> names = {"ovs_generic", "plugin"};
    std::FILE* json = nullptr;
    const char* usage =
        "usage: tse_grid [--quick] [--reps N] [--plugin-only] [--json FILE]"
        " [--cells FILE] [--cell SPEC]...\n"
        "  SPEC: masks=N,fields=F+F,pattern=prefix|arbitrary,rules=N,legit=N,\n"
        "        legit-map=same|other,attack=PCT,place=early|late (perf/tse/tse_shape.hpp)\n";
    auto add = [&](const std::string& axis, const std::string& spec) {
        std::string error;
        auto shape = parse_tse_shape(spec, &error);
        if (!shape) {
            std::fprintf(stderr, "tse_grid: %s: %s\n", spec.c_str(), error.c_str());
            return false;
        }
        cells.push_back({axis, *shape});
        return true;
    };
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--quick")) {
            reps = 2;
            windows = 8;
        } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = std::max(1, std::atoi(argv[++i]));  // profiling: a longer timed part
        } else if (!std::strcmp(argv[i], "--plugin-only")) {
            names = {"plugin"};  // profiling: no answer check against generic
        } else if (!std::strcmp(argv[i], "--cell") && i + 1 < argc) {
            if (!add("", argv[++i])) return 2;
        } else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) {
            json = std::fopen(argv[++i], "w");
            if (!json) {
                std::fprintf(stderr, "tse_grid: cannot write %s\n", argv[i]);
                return 2;
            }
        } else if (!std::strcmp(argv[i], "--cells") && i + 1 < argc) {
            std::ifstream in(argv[++i]);
            if (!in) {
                std::fprintf(stderr, "tse_grid: cannot read %s\n", argv[i]);
                return 2;
            }
            std::string line;
            while (std::getline(in, line)) {
                line.erase(0, line.find_first_not_of(" \t"));
                if (line.empty() || line[0] == '#') continue;
                std::string axis;
                const size_t bar = line.find('|');
                if (bar != std::string::npos) {
                    axis = line.substr(0, bar);
                    axis.erase(axis.find_last_not_of(" \t") + 1);
                    line = line.substr(bar + 1);
                    line.erase(0, line.find_first_not_of(" \t"));
                }
                if (!add(axis, line)) return 2;
            }
        } else {
            std::fprintf(stderr, "%s", usage);
            return 2;
        }
    }
    if (cells.empty()) {
        std::fprintf(stderr, "%s", usage);
        return 2;
    }
    std::printf(
        "tse_grid: TSC ticks per key, median of %d repetitions of median windows of %zu bursts "
        "of %u keys; kept = (1 - attack%%) * T_before / T_mix, atk/leg = T_attack / T_legit\n",
        reps, kWindowBursts, ovscls::kMaxBurst);
    if (!jit_built()) {
        std::printf("plugin: without the JIT here (%s): specialized lookups and the tail index\n",
                    jit_build_note().c_str());
    }
    int status = 0;
    for (const Cell& c : cells) status |= run_cell(c, names, reps, windows, json);
    if (json) std::fclose(json);
    return status;
}
