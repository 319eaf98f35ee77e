#!/usr/bin/env python3
"""asks_pair.py BIG.csv SMALL.csv [--impl NAME]

Pairs the questions of two `mh_bench --asks` runs drawn with the same seed,
one of them with `--repeat K` (its questions are the other's, each start
moved into a copy of the trace): a question is a class and a query index,
and both runs must ask it of the same range, direction and operations.

For each class it prints, over the questions it holds in both runs (each
question's time the median of its timed asks, its answer the accesses those
returned):
  - same: how many questions return as many accesses in both runs, and the
    median over them of BIG's time / SMALL's (cost at the same answer:
    what the store's size alone costs);
  - grown: how many return more in BIG (a question that ran out of trace in
    SMALL goes on into the next copies), and the median over them of BIG's
    time per access returned / SMALL's (each with at least one access);
  - the median blocks decoded a timed ask in each run (the reader's cache
    holds a smaller share of the answers of a bigger store).
A last line counts the classes whose "same" median is within 2x.

Exit status: 0; 2 on bad usage, an unreadable file, a CSV without the
columns above (one written before `results` was added), or questions that
do not pair (not the same seed and classes).
"""
import csv
import sys
from statistics import median

from asks_csv import impl_rows, not_an_ask


def load(path, impl):
    """{(class, query): (question, [us], [results], [blocks])} of impl."""
    out = {}
    need = ("class", "implementation", "query", "us", "blocks_decoded", "direction",
            "addr_first", "addr_last", "ops", "results")
    for line, r in impl_rows(path, impl, need):
        try:  # a short row leaves None in its missing fields
            key = (r["class"], int(r["query"]))
            us, res, dec = float(r["us"]), int(r["results"]), int(r["blocks_decoded"])
        except (TypeError, ValueError):
            raise not_an_ask(path, line) from None
        q = (r["direction"], r["addr_first"], r["addr_last"], r["ops"])
        e = out.setdefault(key, (q, [], [], []))
        if e[0] != q:
            raise ValueError(f"{path}: {key} asks two questions")
        e[1].append(us)
        e[2].append(res)
        e[3].append(dec)
    return out


def main(argv):
    impl = "memhist"
    files = []
    i = 1
    while i < len(argv):
        if argv[i] == "--impl" and i + 1 < len(argv):
            impl = argv[i + 1]
            i += 2
        elif argv[i] in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif not argv[i].startswith("--") and len(files) < 2:
            files.append(argv[i])
            i += 1
        else:
            print("asks_pair.py: bad usage (asks_pair.py BIG.csv SMALL.csv [--impl NAME])",
                  file=sys.stderr)
            return 2
    if len(files) != 2:
        print("asks_pair.py: two CSV files are needed", file=sys.stderr)
        return 2
    try:
        big, small = load(files[0], impl), load(files[1], impl)
    except (OSError, csv.Error, ValueError) as e:
        print(f"asks_pair.py: {e}", file=sys.stderr)
        return 2
    keys = [k for k in big if k in small]
    if not keys:
        print("asks_pair.py: no question of one run is in the other", file=sys.stderr)
        return 2
    for k in keys:
        if big[k][0] != small[k][0]:
            print(f"asks_pair.py: {k[0]} query {k[1]} asks another range, direction or "
                  "operations in the two runs (not the same seed?)", file=sys.stderr)
            return 2
    classes = []
    for k in keys:
        if k[0] not in classes:
            classes.append(k[0])
    within = judged = 0
    print("| class | questions | same answer | BIG/SMALL time, same answer (median) | "
          "grown answer | BIG/SMALL time per access, grown (median) | "
          "blocks decoded an ask, BIG / SMALL (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c in classes:
        ks = [k for k in keys if k[0] == c]
        same, grown, dec_b, dec_s = [], [], [], []
        for k in ks:
            tb, ts = median(big[k][1]), median(small[k][1])
            nb, ns = max(big[k][2]), max(small[k][2])
            dec_b.append(median(big[k][3]))
            dec_s.append(median(small[k][3]))
            if nb == ns:
                same.append(tb / ts if ts > 0 else float("inf"))
            elif nb > ns and ns > 0:
                grown.append((tb / nb) / (ts / ns) if ts > 0 else float("inf"))
        ms = median(same) if same else None
        mg = median(grown) if grown else None
        if ms is not None:
            judged += 1
            within += ms <= 2
        print(f"| {c} | {len(ks)} | {len(same)} | "
              f"{'-' if ms is None else f'{ms:.2f}x'} | {len(grown)} | "
              f"{'-' if mg is None else f'{mg:.2f}x'} | "
              f"{median(dec_b):.1f} / {median(dec_s):.1f} |")
    print(f"{within} of {judged} classes within 2x at the same answer "
          f"({files[0]} against {files[1]}, {impl})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
