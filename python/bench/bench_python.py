#!/usr/bin/env python3
"""Speed of the memhist Python package against its targets (issue 11).

    python3 bench_python.py [--size N] [--queries Q] [--reps R] [--dir DIR]
                            [--include DIR] [--json OUT]

1. append: a synthetic trace of N accesses as numpy ACCESS_DTYPE batches of
   2^20 (the zero-copy path), commit included: M accesses/s (target >= 20).
2. bulk: one query of the whole store into numpy: M accesses/s (>= 50).
   The C side does the same query once (point_c) for comparison.
3. point: Q "last write before T" queries on 8 bytes (backward, ops w,
   max 1), warm, R timed passes: p50 through the prepared path
   (Reader.run), through Reader.query(), and through C (point_c.c, compiled
   here against the header in --include and the library Python loaded, the
   same queries from a file): target Python p50 - C p50 <= 5 us.

Prints a table and, with --json, writes the figures.  No pass/fail: the
machine is shared and noisy; the figures go in reports.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

import memhist

HERE = os.path.dirname(os.path.abspath(__file__))


def synth(n, seed=1):
    """A trace shaped like a program's: 3 accesses per transition, a hot
    stack, a streamed heap buffer and scattered globals."""
    rng = np.random.default_rng(seed)
    a = np.zeros(n, memhist.ACCESS_DTYPE)
    a["transition"] = np.arange(n, dtype=np.uint64) // 3
    kind = rng.integers(0, 10, n)
    stack = 0x7ffd0000 + rng.integers(0, 512, n).astype(np.uint64) * 8
    heap = 0x10000000 + (np.arange(n, dtype=np.uint64) * 8) % (64 << 20)
    glob = 0x600000 + rng.integers(0, 1 << 16, n).astype(np.uint64) * 4
    a["physical"] = np.where(kind < 5, stack, np.where(kind < 8, heap, glob))
    a["linear"] = a["physical"]
    a["has_linear"] = 1
    a["size"] = np.array([1, 2, 4, 8], np.uint32)[rng.integers(0, 4, n)]
    a["op"] = (rng.random(n) < 0.35).astype(np.uint8)  # 35 % writes
    return a


def percentile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=float, default=1e7)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", help="where to write the store (default: a temporary dir)")
    ap.add_argument("--include", default=os.path.join(HERE, "..", "..", "src"),
                    help="directory of memhist.h for the C side")
    ap.add_argument("--json")
    args = ap.parse_args()
    n = int(args.size)
    tmp = tempfile.mkdtemp(prefix="mh_pybench_", dir=args.dir)
    store = os.path.join(tmp, "bench.store")
    res = {"size": n, "library": memhist.library_path}
    try:
        data = synth(n)
        batch = 1 << 20
        t0 = time.perf_counter()
        with memhist.Writer(store) as w:
            for i in range(0, n, batch):
                w.append(data[i:i + batch])
        res["append_s"] = time.perf_counter() - t0
        res["append_maps"] = n / res["append_s"] / 1e6

        with memhist.Reader(store) as r:
            t0 = time.perf_counter()
            every = r.query(ops="rwx")
            res["bulk_s"] = time.perf_counter() - t0
            res["bulk_maps"] = n / res["bulk_s"] / 1e6
            assert len(every) == n and every["id"][-1] == n - 1
            del every

            rng = np.random.default_rng(2)
            js = rng.integers(0, n, args.queries)
            qs = []
            for j in js.tolist():
                lo = int(data["physical"][j]) & ~7
                t = int(data["transition"][j]) + int(rng.integers(0, 1000))
                qs.append((lo, lo + 7, t, 1, 2, 1))
            prepared = [memhist.make_query(lo, hi, start=t, backward=True, ops="w")
                        for lo, hi, t, _, _, _ in qs]
            run, clock = r.run, time.perf_counter_ns
            for q in prepared:  # warm pass, as in C
                run(q, 1)
            times, found = [], 0
            for _ in range(args.reps):
                for q in prepared:
                    t0 = clock()
                    out = run(q, 1)
                    times.append(clock() - t0)
                    found += len(out)
            res["point_run_p50_us"] = percentile(times, 0.5) / 1e3
            res["point_run_p99_us"] = percentile(times, 0.99) / 1e3
            res["point_matches"] = found // args.reps
            times = []
            query = r.query
            for _ in range(args.reps):
                for lo, hi, t, _, _, _ in qs:
                    t0 = clock()
                    query(lo, hi, start=t, backward=True, ops="w", max=1)
                    times.append(clock() - t0)
            res["point_query_p50_us"] = percentile(times, 0.5) / 1e3
            res["point_query_p99_us"] = percentile(times, 0.99) / 1e3

        cc = shutil.which(os.environ.get("CC", "cc"))
        if cc:
            qfile = os.path.join(tmp, "queries.txt")
            with open(qfile, "w") as f:
                f.writelines("%d %d %d %d %d %d\n" % q for q in qs)
            exe = os.path.join(tmp, "point_c")
            subprocess.run([cc, "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L",
                            "-I", args.include, os.path.join(HERE, "point_c.c"), "-o", exe,
                            memhist.library_path,
                            "-Wl,-rpath," + os.path.dirname(os.path.abspath(memhist.library_path))],
                           check=True)
            out = subprocess.run([exe, store, qfile, str(args.reps)], check=True,
                                 capture_output=True, text=True).stdout.split()
            res["point_c_p50_us"] = int(out[0]) / 1e3
            res["point_c_p99_us"] = int(out[1]) / 1e3
            res["bulk_c_maps"] = float(out[3])
            if int(out[2]) != res["point_matches"]:
                raise SystemExit("C and Python found different matches: %s vs %d"
                                 % (out[2], res["point_matches"]))
            res["point_overhead_p50_us"] = res["point_run_p50_us"] - res["point_c_p50_us"]
            res["point_query_overhead_p50_us"] = res["point_query_p50_us"] - res["point_c_p50_us"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("memhist Python bench, %d accesses, library %s" % (n, res["library"]))
    print("  append numpy batches  %8.1f M accesses/s  (target >= 20)" % res["append_maps"])
    print("  whole-store query     %8.1f M accesses/s  (target >= 50)%s" % (
        res["bulk_maps"], ", C: %.1f M/s" % res["bulk_c_maps"] if "bulk_c_maps" in res else ""))
    print("  point p50: Reader.run %6.2f us, Reader.query %6.2f us" %
          (res["point_run_p50_us"], res["point_query_p50_us"]), end="")
    if "point_c_p50_us" in res:
        print(", C %6.2f us -> Python adds %.2f / %.2f us (target <= 5)" %
              (res["point_c_p50_us"], res["point_overhead_p50_us"],
               res["point_query_overhead_p50_us"]))
    else:
        print(" (no C compiler: no C figure)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
