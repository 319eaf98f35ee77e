"""asks_csv.py - what the scripts beside it (asks.py, asks_pair.py,
wide_answer.py) share to read the CSV of `mh_bench --asks FILE`: the
quantile mh_bench's summaries use, and the rows of one implementation with
the columns a script needs checked present.
"""
import csv


def nearest_rank(sorted_values, q):
    """The q quantile by nearest rank (as mh_bench's summaries); nan when
    there is no value."""
    if not sorted_values:
        return float("nan")
    k = max(0, -(-int(q * 1000) * len(sorted_values) // 1000) - 1)
    return sorted_values[min(k, len(sorted_values) - 1)]


def impl_rows(path, impl, need):
    """Yields (line number, row) for each row of implementation impl in the
    CSV at path, a row a dict of its fields (None where a row cut short has
    none). ValueError when a column of need is missing (a CSV older than
    stop 47's, or another file); OSError and csv.Error as open and csv
    raise them."""
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        missing = [c for c in need if c not in (rd.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not an --asks CSV of mh_bench since stop 47: "
                             f"no column {', '.join(missing)}")
        for r in rd:
            if r.get("implementation") == impl:
                yield rd.line_num, r


def not_an_ask(path, line):
    """The error of a row whose fields are missing or not numbers."""
    return ValueError(f"{path} line {line}: not an ask (a field missing or not a number)")
