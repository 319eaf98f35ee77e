#!/usr/bin/env python3
"""summarize.py - the summary table and the issue-5 targets of one mh_bench run.

    tools/bench/summarize.py all.json

Reads the JSON that `mh_bench --json FILE` writes and prints, as Markdown:
one summary row per workload, then each target with the figure it is judged
on and whether it is met. Nothing is measured here: every figure comes from
the one run the JSON holds, so the ratios are side by side.
"""
import json
import sys

POINT = "point max1 bwd write"  # "the last write to these 8 bytes before T"


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


def summary(ws):
    print("| workload | accesses | ingest M/s memhist bg on / off | ingest k/s SQLite "
          "| ingest ratio (bg on) | bytes/access memhist / SQLite (ratio) "
          "| open ms memhist / SQLite | point \"last write before T\" p50 us "
          "memhist / SQLite (ratio) | p99 us memhist / SQLite "
          "| writer RSS MiB memhist / SQLite | reader RSS MiB memhist / SQLite |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in ws:
        sq = w["sqlite_ran"]
        ing, bpa = w["ingest_accesses_per_s"], w["bytes_per_access"]
        pm = cls(w, POINT)["memhist"]
        ps = cls(w, POINT)["sqlite"] if sq else None

        def side(m, s, f=fmt):
            return f"{f(m)} / {f(s) if sq else '-'}"

        def ratio(a, b):
            return f"{a / b:.1f}x" if sq and a and b else "-"

        cells = [
            w["name"], str(w["accesses"]),
            f"{ing['memhist_bg'] / 1e6:.2f} / {ing['memhist_nobg'] / 1e6:.2f}",
            f"{ing['sqlite'] / 1e3:.0f}" if sq else "-",
            ratio(ing["memhist_bg"], ing["sqlite"]),
            f"{side(bpa['memhist'], bpa['sqlite'])} ({ratio(bpa['sqlite'], bpa['memhist'])})",
            side(w["open_ms"]["memhist"], w["open_ms"]["sqlite"], lambda x: f"{x:.3f}"),
            f"{side(pm['p50_us'], ps['p50_us'] if ps else None)} "
            f"({ratio(ps['p50_us'], pm['p50_us']) if ps else '-'})",
            side(pm["p99_us"], ps["p99_us"] if ps else None),
            side(w["writer_peak_rss_mib"]["memhist_bg"], w["writer_peak_rss_mib"]["sqlite"],
                 lambda x: f"{x:.1f}"),
            side(w["reader_peak_rss_mib"]["memhist"], w["reader_peak_rss_mib"]["sqlite"],
                 lambda x: f"{x:.1f}"),
        ]
        print("| " + " | ".join(cells) + " |")


def verdict(ok):
    return "met" if ok else "**missed**"


def targets(ws):
    print()
    for w in ws:
        if not w["sqlite_ran"]:
            continue
        ing, bpa = w["ingest_accesses_per_s"], w["bytes_per_access"]
        p = cls(w, POINT)
        r_ing = ing["memhist_bg"] / ing["sqlite"]
        r_size = bpa["sqlite"] / bpa["memhist"]
        r_pt = p["sqlite"]["p50_us"] / p["memhist"]["p50_us"]
        lose50 = [q["class"] for q in w["queries"] if q["class"] != POINT
                  and q["memhist"]["p50_us"] >= q["sqlite"]["p50_us"]]
        lose99 = [q["class"] for q in w["queries"] if q["class"] != POINT
                  and q["memhist"]["p99_us"] >= q["sqlite"]["p99_us"]]
        n = len(w["queries"]) - 1
        print(f"{w['name']}:")
        print(f"- ingest {r_ing:.1f}x SQLite (target 50x): {verdict(r_ing >= 50)}; "
              f"{ing['memhist_bg'] / 1e6:.1f} M/s with background threads, "
              f"{ing['memhist_nobg'] / 1e6:.1f} M/s without (target 30 M/s): "
              f"{verdict(ing['memhist_bg'] >= 30e6)}")
        print(f"- size 1/{r_size:.1f} of SQLite (target 1/15): {verdict(r_size >= 15)}; "
              f"{bpa['memhist']:.2f} bytes per access")
        print(f"- point query p50 {r_pt:.1f}x faster (target 50x): {verdict(r_pt >= 50)}; "
              f"p99 {p['memhist']['p99_us']:.1f} us (target < 100 us): "
              f"{verdict(p['memhist']['p99_us'] < 100)}")
        print(f"- the other {n} classes faster at p50: {n - len(lose50)} of {n}"
              + (f" (slower: {', '.join(lose50)})" if lose50 else "")
              + f"; at p99: {n - len(lose99)} of {n}"
              + (f" (slower: {', '.join(lose99)})" if lose99 else "")
              + f": {verdict(not lose50 and not lose99)}")
    big = [w for w in ws if w["accesses"] >= 10**8]
    ref = [w for w in ws if w["accesses"] == 10**7 and w["name"].startswith("synthetic")]
    if big and ref:
        b, r = big[0], ref[0]
        ib, ir = b["ingest_accesses_per_s"]["memhist_bg"], r["ingest_accesses_per_s"]["memhist_bg"]
        slow = []
        for q in b["queries"]:
            qr = cls(r, q["class"])
            if qr and q["memhist"]["p50_us"] > 2 * qr["memhist"]["p50_us"]:
                slow.append(f"{q['class']} {fmt(q['memhist']['p50_us'])} vs "
                            f"{fmt(qr['memhist']['p50_us'])} us")
        pb, pr = cls(b, POINT)["memhist"]["p50_us"], cls(r, POINT)["memhist"]["p50_us"]
        print(f"scale, {b['name']} against {r['name']}:")
        print(f"- ingest {ib / 1e6:.1f} vs {ir / 1e6:.1f} M/s ({ib / ir:.2f}x; target >= 0.9x): "
              f"{verdict(ib >= 0.9 * ir)}")
        print(f"- query p50 within 2x of 10^7: {len(b['queries']) - len(slow)} of "
              f"{len(b['queries'])} classes (point: {fmt(pb)} vs {fmt(pr)} us)"
              + (f"; beyond 2x: {'; '.join(slow)}" if slow else "")
              + f": {verdict(not slow)}")
        print(f"- open {b['open_ms']['memhist']:.3f} ms vs {r['open_ms']['memhist']:.3f} ms "
              f"(target: a few ms at most): {verdict(b['open_ms']['memhist'] < 5)}")
        print(f"- writer peak RSS {b['writer_peak_rss_mib']['memhist_bg']:.1f} MiB vs "
              f"{r['writer_peak_rss_mib']['memhist_bg']:.1f} MiB (bounded by the options)")


def main():
    if len(sys.argv) != 2:
        print("usage: summarize.py BENCH.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        d = json.load(f)
    m = d.get("machine")
    if isinstance(m, dict):
        print(f"Machine: {m.get('nproc')} cores, {m.get('cpu')}, {m.get('kernel')}; "
              f"{m.get('date')}.")
        print()
    summary(d["workloads"])
    targets(d["workloads"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
