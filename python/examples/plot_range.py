#!/usr/bin/env python3
"""A picture of the accesses to an address range over time.

    python3 plot_range.py STORE FIRST LAST OUT.png [--ops rwx] [--max N]

One point per access: x its transition, y its address, colour its
operation.  Drawn with matplotlib's Agg backend (no display needed).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import memhist  # noqa: E402

# Reads as dots under writes as crosses, so both show where they share a byte.
STYLE = {0: ("tab:blue", "o"), 1: ("tab:red", "x"), 2: ("tab:green", "^")}


def plot_range(store: str, first: int, last: int, out: str, ops: str = "rw",
               max: int = 1_000_000) -> int:
    """Saves the picture to out (PNG); returns the number of accesses drawn."""
    with memhist.Reader(store) as r:
        a = r.query(first, last, ops=ops, max=max)  # straight into numpy
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
    for op, (colour, marker) in STYLE.items():
        sel = a[a["op"] == op]
        if len(sel):
            ax.scatter(sel["transition"], sel["physical"] - first, s=6, c=colour, marker=marker, linewidths=0.6,
                       label="%s (%d)" % (memhist.OP_NAMES[op], len(sel)))
    ax.set_xlabel("transition")
    ax.set_ylabel("address - 0x%x" % first)
    ax.set_ylim(-1, last - first + 1)
    ax.set_title("accesses to [0x%x, 0x%x]" % (first, last))
    if len(a):
        ax.legend(loc="upper right", markerscale=3)
    fig.tight_layout()
    fig.savefig(out, format="png")
    plt.close(fig)
    return len(a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("store")
    ap.add_argument("first", type=lambda s: int(s, 0))
    ap.add_argument("last", type=lambda s: int(s, 0))
    ap.add_argument("out")
    ap.add_argument("--ops", default="rw")
    ap.add_argument("--max", type=int, default=1_000_000)
    a = ap.parse_args()
    n = plot_range(a.store, a.first, a.last, a.out, a.ops, a.max)
    print("%d accesses drawn to %s" % (n, a.out))


if __name__ == "__main__":
    main()
