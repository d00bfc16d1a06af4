#!/usr/bin/env python3
"""One megaflow per mask: a sample of `dpctl/dump-flows -m --no-names`
output for tests/corpus/megaflows.txt.

    tests/corpus/sample.py [--max N] DUMP...

Two megaflows have the same mask when their matches differ only in values
(every "field=value", "field=value/mask", "key(value/mask)" and
"key(value)" keeps its field and mask, the value is dropped).  Prints the
first megaflow of each mask, at most N (default 40): the commonest mask of
each fingerprint first, then the other masks, those of more megaflows
first, each as dumped (the corpus' parser takes the match up to its
statistics); then,
as '#' lines, how many masks and megaflows each fingerprint
(dp-extra-info:miniflow_bits) had in the dumps.
"""
import argparse
import re
from collections import Counter, OrderedDict

STATS = re.compile(r" packets:\d+, bytes:\d+, used:[^,]+,( flags:[^,]*,)?")
VALUE_MASK = re.compile(r"=([^,/()]*)/([^,()]*)")
VALUE = re.compile(r"=([^,/()]*)(?=[,)])")
KEY_VALUE_MASK = re.compile(r"\(([^=(),/]+)/([^=(),]+)\)")
KEY_VALUE = re.compile(r"\(([^=(),/]+)\)")
BITS = re.compile(r"miniflow_bits\((\d+),(\d+)\)")


def mask_of(line):
    match = line.split(" actions:")[0].split(", ", 1)[-1]
    match = STATS.sub("", match)
    match = VALUE_MASK.sub(lambda m: "=*/" + m.group(2), match)
    match = VALUE.sub("=*", match)
    match = KEY_VALUE_MASK.sub(lambda m: "(*/" + m.group(2) + ")", match)
    return KEY_VALUE.sub("(*)", match)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max", type=int, default=40)
    ap.add_argument("dumps", nargs="+")
    args = ap.parse_args()
    first, count, fp_of = OrderedDict(), Counter(), {}
    per_fp_masks, per_fp_flows = Counter(), Counter()
    for path in args.dumps:
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.startswith("ufid:"):
                    continue
                key = mask_of(line)
                m = BITS.search(line)
                fp = f"({m.group(1)},{m.group(2)})" if m else "(?)"
                per_fp_flows[fp] += 1
                if key not in first:
                    first[key] = line
                    fp_of[key] = fp
                    per_fp_masks[fp] += 1
                count[key] += 1
    ranked = [key for key, _ in count.most_common()]
    picked = []
    for fp in per_fp_flows:
        picked.append(next(key for key in ranked if fp_of[key] == fp))
    picked += [key for key in ranked if key not in picked]
    for key in picked[:args.max]:
        print(first[key])
    for fp, n in per_fp_flows.most_common():
        print(f"#   {fp}: {per_fp_masks[fp]} masks, {n} megaflows")


if __name__ == "__main__":
    main()
