#!/usr/bin/env bash
# Instructions per packet of every lookup, counted by callgrind: the same
# figure on every run of the same binary, whatever else the shared machine
# does; for when perf/run.sh's TSC ticks wobble.  Instructions are not
# cycles (a cache miss costs one instruction and a hundred cycles), so read
# both: a lookup that executes fewer instructions yet takes more ticks
# waits on memory, one that executes more does more work.
#
#   perf/instructions.sh [REGEX]
#
# REGEX selects microbench cases, "U0,U1/real|synthetic/RULES/hit|miss/IMPL"
# (default: OVS's eight fingerprints and (5,0), 1000 rules, hit and miss).
# Runs microbench --quick --count=2000 under valgrind --tool=callgrind,
# collecting only count_bursts() (2000 bursts of 32 keys per case, after a
# warm-up pass), one dump per case; prints instructions per packet and the
# ratio to ovs_generic (OVS's own choice) of the same case.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-'^(4,0|4,1|5,0|5,1|5,2|5,3|8,1|9,1|9,4)/(real|synthetic)/1000/'}
bursts=2000
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
scripts/install-deps.sh
scripts/build.sh sse42 --target microbench >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
valgrind --tool=callgrind --collect-atstart=no \
    --toggle-collect='ovscls::perf::(anonymous namespace)::count_bursts(*' \
    --callgrind-out-file="$work/cg.out" \
    build/sse42/perf/microbench --quick --count=$bursts --only="$filter" >"$work/log" 2>&1 || {
    tail "$work/log" >&2
    exit 1
}
python3 - "$work" "$bursts" <<'PY'
import glob, re, sys
work, bursts = sys.argv[1], int(sys.argv[2])
# One dump per case, named by microbench ("Trigger: Client Request: NAME").
per_pkt = {}
for part in glob.glob(f"{work}/cg.out.*"):
    text = open(part).read()
    name = re.search(r"^desc: Trigger: Client Request: (\S+)", text, re.M)
    if not name:
        continue
    ir = int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))
    per_pkt[name.group(1)] = ir / (bursts * 32)
if not per_pkt:
    sys.exit("instructions.sh: no case matched, or callgrind wrote no dumps")
rows = {}
for name, v in sorted(per_pkt.items(), key=lambda kv: [int(x) for x in kv[0].split("/")[0].split(",")] + kv[0].split("/")[1:]):
    key, impl = name.rsplit("/", 1)
    rows.setdefault(key, {})[impl] = v
impls = sorted({i for r in rows.values() for i in r},
               key=lambda i: ["ovs_generic_runtime", "ovs_generic", "ovs_avx512_gather",
                              "generic", "specialized", "jit_avx2"].index(i)
               if i in ["ovs_generic_runtime", "ovs_generic", "ovs_avx512_gather", "generic",
                        "specialized", "jit_avx2"] else 99)
print("instructions per packet (callgrind), ratio to ovs_generic in brackets")
print(f"{'case':<26}" + "".join(f"{i:>22}" for i in impls))
for key in rows:
    base = rows[key].get("ovs_generic")
    line = f"{key:<26}"
    for i in impls:
        v = rows[key].get(i)
        line += f"{'-':>22}" if v is None else f"{v:>14.1f} ({v / base:4.2f})" if base else f"{v:>22.1f}"
    print(line)
PY
# Lookups microbench could not run here; under valgrind that includes
# avx512_gather, as valgrind emulates no AVX512.
grep -E '^[a-z0-9_]+: not measured' "$work/log" | sed 's/^/n\/a /; s/$/ (under valgrind)/' || true
