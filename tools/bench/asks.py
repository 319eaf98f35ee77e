#!/usr/bin/env python3
"""asks.py FILE [--impl NAME] [--first K] [--classes N]

Reads the CSV of `mh_bench --asks FILE` and says where each class's tail
comes from: for every class of the implementation (default memhist), its
p50 and p99 over all timed asks, the p99 of the asks past the first K of
each pass (default 6), and how many of the asks at or above the p99 are
among the first K of their pass. The first asks of a pass are those that
meet the CPU's caches, TLBs and branch predictors as the other
implementations' pass left them (stop 36). Prints the first N classes
(default: all) and a count over every class.

Exit status: 0, 2 on bad usage or an unreadable file.
"""
import csv
import sys
from collections import OrderedDict

from asks_csv import nearest_rank


def main(argv):
    impl, first, limit, path = "memhist", 6, None, None
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in ("--impl", "--first", "--classes") and i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--impl":
                impl = v
            else:
                try:
                    n = int(v)
                except ValueError:
                    print("asks.py: bad number: " + v, file=sys.stderr)
                    return 2
                if n < 0:
                    print("asks.py: bad number: " + v, file=sys.stderr)
                    return 2
                if a == "--first":
                    first = n
                else:
                    limit = n
            i += 2
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif path is None and not a.startswith("--"):
            path = a
            i += 1
        else:
            print("asks.py: bad usage (asks.py FILE [--impl NAME] [--first K] "
                  "[--classes N])", file=sys.stderr)
            return 2
    if path is None:
        print("asks.py: no FILE", file=sys.stderr)
        return 2
    try:
        with open(path, newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("implementation") == impl]
    except (OSError, csv.Error) as e:
        print("asks.py: %s: %s" % (path, e), file=sys.stderr)
        return 2
    by = OrderedDict()
    for r in rows:
        by.setdefault((r["workload"], r["class"]), []).append(
            (float(r["us"]), int(r["query"])))
    mostly_first = 0
    shown = 0
    for (workload, cls), asks in by.items():
        times = sorted(t for t, _ in asks)
        p99 = nearest_rank(times, 0.99)
        top = [q for t, q in asks if t >= p99]
        in_first = sum(1 for q in top if q < first)
        late = sorted(t for t, q in asks if q >= first)
        if top and 2 * in_first >= len(top):
            mostly_first += 1
        if limit is None or shown < limit:
            print("%s  %-30s p50 %8.2f  p99 %9.2f  p99 past the first %d %9.2f  "
                  "tail asks among the first %d: %d of %d"
                  % (workload, cls, nearest_rank(times, 0.5), p99, first,
                     nearest_rank(late, 0.99), first, in_first, len(top)))
            shown += 1
    print("%s: %d of %d classes have their p99 asks mostly among the first %d of a pass"
          % (impl, mostly_first, len(by), first))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
