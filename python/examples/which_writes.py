#!/usr/bin/env python3
"""Which writes built this buffer before transition T?

    python3 which_writes.py STORE FIRST LAST T [--csv OUT]

Lists, as a pandas DataFrame in id order, every write that touched bytes of
[FIRST, LAST] (inclusive, hex or decimal) at a transition before T, with
live_bytes: how many of the buffer's bytes still held that write's value
at T (0 = completely overwritten since).
"""
import argparse

import numpy as np

import memhist


def which_writes(store: str, first: int, last: int, t: int):
    """DataFrame of the writes to [first, last] with transition < t."""
    with memhist.Reader(store) as r:
        # Backward from t - 1: newest first, which is the order in which
        # the last writer of each byte is found.
        w = r.query(first, last, start=t - 1, backward=True, ops="w") if t > 0 \
            else r.query(first, last, max=0)
    owner = np.full(last - first + 1, -1, dtype=np.int64)  # newest write per byte
    live = np.zeros(len(w), dtype=np.int64)
    for i, (phys, size) in enumerate(zip(w["physical"].tolist(), w["size"].tolist())):
        lo, hi = max(phys, first) - first, min(phys + size - 1, last) - first
        span = owner[lo:hi + 1]
        free = span < 0
        span[free] = i
        live[i] = int(free.sum())
    df = memhist.to_pandas(w[::-1])  # oldest first
    df["live_bytes"] = live[::-1]
    return df.reset_index(drop=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store")
    ap.add_argument("first", type=lambda s: int(s, 0))
    ap.add_argument("last", type=lambda s: int(s, 0))
    ap.add_argument("t", type=lambda s: int(s, 0))
    ap.add_argument("--csv", help="also write the table to this CSV file")
    a = ap.parse_args()
    df = which_writes(a.store, a.first, a.last, a.t)
    show = df[["id", "transition", "physical", "size", "live_bytes"]].copy()
    show["physical"] = show["physical"].map(hex)
    print(show.to_string(index=False))
    if a.csv:
        df.to_csv(a.csv, index=False)


if __name__ == "__main__":
    main()
