#!/usr/bin/env python3
"""summarize.py - the summary table and the issue-10 targets of one mh_bench run.

    tools/bench/summarize.py all.json [more.json ...]

Reads the JSON that `mh_bench --json FILE` writes (several files are read as
one run: the 10^9 store is usually a separate invocation) and prints, as
Markdown: one summary row per workload, then each issue-10 target with the
figures it is judged on and whether it is met. Nothing is measured here.

"SQLite" is the legacy settings (10 M accesses a slice, chunk cap 100,000),
"design" the design's own defaults (about 500 slices, chunk cap 4096); a
target "against SQLite" must hold against both.
"""
import json
import sys

POINT = "point max1 bwd write"  # "the last write to these 8 bytes before T"
# the target's whole family: 8 bytes, max 1, both directions, every operation
POINT_FAMILY = tuple(f"point max1 {d} {o}" for d in ("fwd", "bwd")
                     for o in ("read", "write", "rw"))
SQLS = ("sqlite", "sqlite_design")


def fmt(x, digits=3):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def cls(w, name):
    for q in w["queries"]:
        if q["class"] == name:
            return q
    return None


def lat(q, impl, key):
    if q is None or q.get(impl) is None:
        return None
    return q[impl].get(key)


def ratio(a, b):
    return a / b if a and b else None


def rx(x):
    return f"{x:.1f}x" if x is not None else "-"


def verdict(ok):
    if ok is None:
        return "not measured"
    return "met" if ok else "**missed**"


def is_real(w):
    # lackey logs and recorded stores (mh_bench --store); not the x36 store
    return w["name"].startswith(("lackey-", "store-"))


def summary(ws):
    print("| workload | accesses | dist | ingest M/s memhist (bg on) | ingest k/s SQLite / design "
          "| bytes/access memhist / SQLite / design | open ms warm memhist / SQLite / design "
          "| open ms cold memhist / SQLite / design "
          "| point p50 us memhist / SQLite / design | point p99 us memhist "
          "| writer RSS MiB memhist / SQLite / design | reader RSS MiB memhist / SQLite / design |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in ws:
        ing, bpa = w["ingest_accesses_per_s"], w["bytes_per_access"]
        p = cls(w, POINT)
        cold = w.get("cold") or {}

        def three(d, f=fmt):
            return " / ".join(f(d.get(k)) if d.get(k) is not None else "-"
                              for k in ("memhist",) + SQLS)

        def cold_open(k):
            c = cold.get(k)
            return f"{c['open_ms']:.2f}" if c else "-"

        cells = [
            w["name"], str(w["accesses"]), w.get("dist", "near"),
            f"{ing['memhist_bg'] / 1e6:.2f}",
            " / ".join(f"{ing[k] / 1e3:.0f}" if ing.get(k) else "-" for k in SQLS),
            three(bpa), three(w["open_ms"], lambda x: f"{x:.3f}"),
            " / ".join(cold_open(k) for k in ("memhist",) + SQLS),
            " / ".join(fmt(lat(p, k, "p50_us")) for k in ("memhist",) + SQLS),
            fmt(lat(p, "memhist", "p99_us")),
            " / ".join(fmt(w["writer_peak_rss_mib"].get(k)) for k in ("memhist_bg",) + SQLS),
            three(w["reader_peak_rss_mib"], lambda x: f"{x:.1f}"),
        ]
        print("| " + " | ".join(cells) + " |")


def point_family(w):
    """The point targets over every class of the family (the line above
    judges the one question users ask most): how many of them meet each,
    and the ones that do not."""
    fam = [q for q in (cls(w, c) for c in POINT_FAMILY) if q and q.get("memhist")]
    if not fam:
        return
    n = len(fam)

    def judged(key, limit):
        bad = [f"{q['class'][len('point max1 '):]} {fmt(q['memhist'][key])}"
               for q in fam if q["memhist"][key] > limit]
        return (f"{n - len(bad)} of {n}" + (f" (not: {', '.join(bad)})" if bad else ""),
                not bad)

    p50, ok50 = judged("p50_us", 5)
    p99, ok99 = judged("p99_us", 50)
    line = (f"- every point max1 class (both directions, read / write / rw): "
            f"p50 <= 5 us {p50}: {verdict(ok50)}")
    oks = []
    for k in SQLS:
        rs = [(ratio(lat(q, k, "p50_us"), q["memhist"]["p50_us"]), q["class"])
              for q in fam if q.get(k)]
        rs = [(r, c) for r, c in rs if r is not None]
        if not rs:
            continue
        r, c = min(rs)
        met = sum(1 for x, _ in rs if x >= 100)
        oks.append(met == len(rs))
        line += (f"; >= 100x {'SQLite' if k == 'sqlite' else 'design'} {met} of {len(rs)}"
                 f" (lowest: {c[len('point max1 '):]} {rx(r)})")
    if oks:
        line += f": {verdict(all(oks))}"
    print(line + f"; p99 <= 50 us {p99}: {verdict(ok99)}")


def wide_vs_point(w):
    """Issue 10: "whole-space and 1 MiB queries at max 1 and 10 must be at
    least as fast as the 8-byte ones": each wide class against the point
    class of the same max, direction and operations, at p50."""
    slow, n = [], 0
    for mx in ("max1", "max10"):
        for d in ("fwd", "bwd"):
            for o in ("read", "write", "rw"):
                p = cls(w, f"point {mx} {d} {o}")
                for wide in ("1MiB", "whole"):
                    q = cls(w, f"{wide} {mx} {d} {o}")
                    a, b = lat(q, "memhist", "p50_us"), lat(p, "memhist", "p50_us")
                    if a is None or b is None:
                        continue
                    n += 1
                    if a > b:
                        slow.append(a / b)
    if n:
        print(f"- 1 MiB and whole-space max1 / max10 classes at most their point class's p50: "
              f"{n - len(slow)} of {n}"
              + (f" (the others {min(slow):.2f}-{max(slow):.2f}x the point's)" if slow else "")
              + f": {verdict(not slow)}")


def per_workload(w, machine=None):
    turns = ("each implementation's passes back to back (--turns impl)"
             if w.get("turns") == "impl" else "the implementations taking turns pass by pass")
    print(f"{w['name']} ({w['accesses']} accesses, {w.get('dist', 'near')} distribution, "
          f"{w['answers_compared']} answers compared, {w['mismatches']} mismatches; "
          f"timed: {turns}):")
    ing, bpa = w["ingest_accesses_per_s"], w["bytes_per_access"]
    p = cls(w, POINT)
    p50, p99 = lat(p, "memhist", "p50_us"), lat(p, "memhist", "p99_us")
    if p50 is not None:
        rs = [ratio(lat(p, k, "p50_us"), p50) for k in SQLS]
        have = [r for r in rs if r is not None]
        print(f"- point query ({POINT}) p50 {fmt(p50)} us (target <= 5 us): "
              f"{verdict(p50 <= 5)}; {rx(rs[0])} SQLite, {rx(rs[1])} design "
              f"(target >= 100x): {verdict(min(have) >= 100 if have else None)}; "
              f"p99 {fmt(p99)} us (target <= 50 us): {verdict(p99 <= 50)}")
        rest = lat(p, "memhist", "p99_rest_us")
        if rest is not None:
            first = ("" if w.get("turns") == "impl" else
                     ", the first being memhist's ask right after SQLite's pass")
            print(f"  (p99 of the asks after each timed pass's first{first}: {fmt(rest)} us)")
        faults = lat(p, "memhist", "asks_with_faults")
        if faults is not None:
            calm = lat(p, "memhist", "p99_calm_us")
            print(f"  (--faults: {faults} of {lat(p, 'memhist', 'asks')} asks took a minor "
                  f"page fault; p99 of the others {fmt(calm) if calm is not None else '-'} us)")
    point_family(w)
    wide_vs_point(w)
    for k in SQLS:
        if not any(q.get(k) for q in w["queries"]):
            continue
        qs = [q for q in w["queries"] if q.get(k) and q.get("memhist")]
        lose50 = [q["class"] for q in qs if q["memhist"]["p50_us"] >= q[k]["p50_us"]]
        lose99 = [q["class"] for q in qs if q["memhist"]["p99_us"] >= q[k]["p99_us"]]
        name = "SQLite" if k == "sqlite" else "SQLite design"
        print(f"- every class faster than {name}: p50 {len(qs) - len(lose50)} of {len(qs)}"
              + (f" (not: {', '.join(lose50)})" if lose50 else "")
              + f"; p99 {len(qs) - len(lose99)} of {len(qs)}"
              + (f" (not: {', '.join(lose99)})" if lose99 else "")
              + f": {verdict(not lose50 and not lose99)}")
    for k in SQLS:
        if bpa.get(k):
            r = bpa[k] / bpa["memhist"]
            name = "SQLite" if k == "sqlite" else "SQLite design"
            print(f"- size {bpa['memhist']:.2f} bytes per access, 1/{r:.1f} of {name} "
                  f"(target <= 1/20): {verdict(r >= 20)}")
    c = (w.get("cold") or {}).get("memhist")
    if c:
        print(f"- cold open {c['open_ms']:.2f} ms (target <= 5 ms): "
              f"{verdict(c['open_ms'] <= 5)}; cold first {c['queries']} queries p50 "
              f"{fmt(c['p50_us'])} us, p99 {fmt(c['p99_us'])} us; "
              f"{c['cached_pct']:.1f} % of the store still cached after the drop")
    if is_real(w):
        r = ing["memhist_bg"]
        cores = (w.get("ingest_cpu_cores") or {}).get("memhist_bg")
        busy = ""
        if cores is not None:
            nproc = machine.get("nproc") if machine else None
            busy = (f"; its median run kept {cores:.2f}"
                    + (f" of {nproc}" if nproc else "") + " cores busy (CPU time over wall time)")
        print(f"- ingest {r / 1e6:.1f} M/s (target >= 25 M/s on each real trace): "
              f"{verdict(r >= 25e6)}{busy}")


def scale(ws):
    big = [w for w in ws if w["accesses"] >= 10**9]
    if not big:
        print("- 10^9 store: not in this run; its targets (never-accessed p50 <= 10 us, "
              "every class p50 within 2x and p99 within 3x of 25 M) are not judged")
        return
    b = big[0]
    # the reference: the trace the big store repeats (name "X-xK" repeats X),
    # else the workload nearest 25 M accesses below 10^8
    base = b["name"].rsplit("-x", 1)[0]
    cands = [w for w in ws if w["name"] == base] or \
        [w for w in ws if w["accesses"] < 10**8]
    if not cands:
        print(f"- {b['name']}: no workload near 25 M to compare with")
        return
    r = min(cands, key=lambda w: abs(w["accesses"] - 25e6))
    nev = [q for q in b["queries"] if q.get("never") and q.get("memhist")]
    worst = max((q["memhist"]["p50_us"] for q in nev), default=None)
    print(f"{b['name']} ({b['accesses']} accesses) against {r['name']} ({r['accesses']}):")
    print(f"- never-accessed p50, slowest class {fmt(worst)} us (target <= 10 us): "
          f"{verdict(worst <= 10 if worst is not None else None)}")
    s50, s99, n = [], [], 0
    miss = set()  # the classes beyond 2x or 3x
    # a repeated trace holds each address in every copy: a question that
    # stopped at the trace's end goes on into the next copies, so some
    # classes' answers are larger (and spread over copies) at 10^9; the
    # verdicts stand, a last line says which misses compare answers of
    # another size (mean results more than 10 % apart)
    grown = []
    for q in b["queries"]:
        qr = cls(r, q["class"])
        if not qr or not q.get("memhist") or not qr.get("memhist"):
            continue
        n += 1
        if q.get("mean_results", 0) > 1.1 * qr.get("mean_results", 0) + 0.05:
            grown.append(q["class"])
        if q["memhist"]["p50_us"] > 2 * qr["memhist"]["p50_us"]:
            miss.add(q["class"])
            s50.append(f"{q['class']} {fmt(q['memhist']['p50_us'])} vs "
                       f"{fmt(qr['memhist']['p50_us'])}")
        if q["memhist"]["p99_us"] > 3 * qr["memhist"]["p99_us"]:
            miss.add(q["class"])
            s99.append(f"{q['class']} {fmt(q['memhist']['p99_us'])} vs "
                       f"{fmt(qr['memhist']['p99_us'])}")
    print(f"- p50 within 2x: {n - len(s50)} of {n}"
          + (f" (beyond: {'; '.join(s50)})" if s50 else "") + f": {verdict(not s50)}")
    print(f"- p99 within 3x: {n - len(s99)} of {n}"
          + (f" (beyond: {'; '.join(s99)})" if s99 else "") + f": {verdict(not s99)}")
    same = [c for c in miss if c not in grown]
    print(f"- answers larger at 10^9 (mean results > 1.1x): {len(grown)} classes; "
          f"of the classes beyond 2x / 3x, {len(miss) - len(same)} of {len(miss)} are among them"
          + (f" (the others: {'; '.join(sorted(same))})" if same else ""))
    # the reader's cache: a class whose answers' blocks the cache held at
    # 25 M may decode them again in every pass at 10^9 (same cache option)
    cb, cr = b.get("reader_cache_bytes"), r.get("reader_cache_bytes")
    dec = []
    for c in sorted(miss):
        qb, qr = cls(b, c), cls(r, c)
        db = qb.get("memhist_blocks_decoded_per_ask") if qb else None
        dr = qr.get("memhist_blocks_decoded_per_ask") if qr else None
        if db is not None and dr is not None and db > dr + 0.5:
            dec.append(f"{c} {db:.1f} vs {dr:.1f}")
    if cb is not None or cr is not None:
        print(f"- reader cache option: {fmt(cb / 2**20 if cb is not None else None)} MiB at 10^9, "
              f"{fmt(cr / 2**20 if cr is not None else None)} MiB at {r['accesses']}"
              + ("" if cb == cr else " (not the same: the comparison is not like for like)"))
    if dec:
        print(f"- of the classes beyond, {len(dec)} decode more blocks a timed ask at 10^9 "
              f"(the cache holds a smaller share of their answers): {'; '.join(dec)}")


def format2(ws):
    """Issue 9's figures: streams, pc column cost, address summary, producers,
    one-stream classes against their unfiltered twins."""
    rows = [w for w in ws if "streams" in w]
    if not rows:
        return
    print("| workload | streams | bytes/access | without pc (pc costs) | summary "
          "bytes/access | ingest batch / producers (threads) | one stream slower "
          "than unfiltered at p50 |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for w in rows:
        bpa = w["bytes_per_access"]["memhist"]
        nopc = w.get("bytes_per_access_without_pc")
        pc = f"{nopc:.3f} (+{bpa - nopc:.3f})" if nopc is not None else "-"
        summ = w.get("summary_bytes", 0) / max(w["accesses"], 1)
        prod = w.get("producer_accesses_per_s")
        ing = f"{w['ingest_accesses_per_s']['memhist_bg'] / 1e6:.1f} M"
        if prod is not None:
            ing += f" / {prod / 1e6:.1f} M ({w.get('producer_threads')})"
        byname = {q["class"]: q for q in w["queries"]}
        slow, n = [], 0
        for q in w["queries"]:
            if not q.get("one_stream") or not q.get("memhist"):
                continue
            u = byname.get(q["class"][:-len(" 1str")])
            if not u or not u.get("memhist"):
                continue
            n += 1
            r = q["memhist"]["p50_us"] / max(u["memhist"]["p50_us"], 1e-9)
            if r > 1:
                slow.append(f"{q['class']} {r:.2f}x")
        one = (f"{len(slow)} of {n}" + (": " + ", ".join(slow) if slow else "")) if n else "-"
        print(f"| {w['name']} | {w['streams']} | {bpa:.3f} | {pc} | {summ:.4f} | {ing} | "
              f"{one} |")
    print()


def main():
    if len(sys.argv) < 2:
        print("usage: summarize.py BENCH.json [MORE.json ...]", file=sys.stderr)
        return 2
    ws, m = [], None
    for path in sys.argv[1:]:
        with open(path) as f:
            d = json.load(f)
        m = m or d.get("machine")
        ws += d["workloads"]
    if isinstance(m, dict):
        print(f"Machine: {m.get('nproc')} cores, {m.get('cpu')}, {m.get('kernel')}; "
              f"{m.get('date')}.")
        print()
    summary(ws)
    print()
    format2(ws)
    for w in ws:
        per_workload(w, m if isinstance(m, dict) else None)
    scale(ws)
    return 0


if __name__ == "__main__":
    sys.exit(main())
