#!/usr/bin/env python3
"""wide_answer.py FILE [--impl NAME]

Issue 10's wide-range rule ("whole-space and 1 MiB queries at max 1 and 10
at least as fast as the 8-byte ones") read at the same answer, from the CSV
of `mh_bench --asks FILE`.

A wide question almost always returns its max accesses; an 8-byte one
often returns fewer (an address written a few times in the trace has no
tenth write after T, and none at all after its last), and a question that
answers less costs less. For each wide class (1MiB or whole, max 1 or 10,
each direction and operation set) whose point class is in the file, it
prints:
  - the wide class's p50 over all its timed asks and the point class's:
    their ratio is the rule as summarize.py judges it;
  - the point class's asks that returned max accesses (its full answers):
    how many, their p50, and the wide class's p50 over its own full
    answers against it: the rule at the same answer;
  - each class's p50 time per access returned (asks returning none left
    out).
Two last lines count the classes meeting the rule each way (a class whose
point class has no full answer is not judged at the same answer).
Quantiles by nearest rank, as mh_bench's summaries. Nothing is measured
here.

Exit status: 0; 2 on bad usage, an unreadable file, a CSV without the
columns used (one written before stop 47), a row cut short, or no wide
class with its point class in the file.
"""
import csv
import re
import sys

from asks_csv import impl_rows, nearest_rank, not_an_ask

NEED = ("class", "implementation", "us", "results")
CLASS = re.compile(r"^(point|1MiB|whole) max(1|10) (fwd|bwd) (read|write|rw)$")


def p50(values):
    """The median by nearest rank, None when there is no value."""
    return nearest_rank(sorted(values), 0.5) if values else None


def load(path, impl):
    """{class: [(us, results)]} of impl's timed asks, the classes the rule
    names only."""
    out = {}
    for line, r in impl_rows(path, impl, NEED):
        c = r.get("class")
        if c is None or not CLASS.match(c):
            continue
        try:  # a short row leaves None in its missing fields
            us, res = float(r["us"]), int(r["results"])
        except (TypeError, ValueError):
            raise not_an_ask(path, line) from None
        out.setdefault(c, []).append((us, res))
    return out


def fmt(x):
    return "-" if x is None else f"{x:.3g}"


def ratio(a, b):
    return None if a is None or b is None or b <= 0 else a / b


def main(argv):
    impl, path = "memhist", None
    i = 1
    while i < len(argv):
        if argv[i] == "--impl" and i + 1 < len(argv):
            impl = argv[i + 1]
            i += 2
        elif argv[i] in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        elif not argv[i].startswith("--") and path is None:
            path = argv[i]
            i += 1
        else:
            print("wide_answer.py: bad usage (wide_answer.py FILE [--impl NAME])",
                  file=sys.stderr)
            return 2
    if path is None:
        print("wide_answer.py: an --asks CSV is needed", file=sys.stderr)
        return 2
    try:
        asks = load(path, impl)
    except (OSError, csv.Error, ValueError) as e:
        print(f"wide_answer.py: {e}", file=sys.stderr)
        return 2
    rows = []
    for c in asks:
        m = CLASS.match(c)
        if m.group(1) == "point":
            continue
        point = "point " + c.split(" ", 1)[1]
        if point in asks:
            rows.append((c, point, int(m.group(2))))
    if not rows:
        print(f"wide_answer.py: {path}: no 1MiB or whole max1 / max10 class with its "
              f"point class ({impl})", file=sys.stderr)
        return 2
    print("| wide class | p50 us | point p50 us (all asks) | wide / point | "
          "point asks with max answers | their p50 us | wide p50 us, max answers | "
          "wide / point, same answer | us an access returned, wide / point (p50) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    met = judged_same = met_same = 0
    for c, point, mx in rows:
        w, p = asks[c], asks[point]
        w50, p50_all = p50([u for u, _ in w]), p50([u for u, _ in p])
        pf = [u for u, n in p if n == mx]
        wf = [u for u, n in w if n == mx]
        pf50, wf50 = p50(pf), p50(wf)
        r_all, r_same = ratio(w50, p50_all), ratio(wf50, pf50)
        met += r_all is not None and r_all <= 1
        if r_same is not None:
            judged_same += 1
            met_same += r_same <= 1
        wa = p50([u / n for u, n in w if n > 0])
        pa = p50([u / n for u, n in p if n > 0])
        print(f"| {c} | {fmt(w50)} | {fmt(p50_all)} | "
              f"{'-' if r_all is None else f'{r_all:.2f}x'} | {len(pf)} of {len(p)} | "
              f"{fmt(pf50)} | {fmt(wf50)} | "
              f"{'-' if r_same is None else f'{r_same:.2f}x'} | {fmt(wa)} / {fmt(pa)} |")
    print(f"{met} of {len(rows)} wide classes at most their point class's p50 ({impl})")
    print(f"{met_same} of {judged_same} at most it at the same answer "
          "(the point class's asks that returned max accesses)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
