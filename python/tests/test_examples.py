"""The examples of python/examples (and the README) run on a real small
recording: the DataFrame has the oracle's rows, the PNG is a real PNG."""
import collections
import csv
import os
import struct
import subprocess
import sys
import zlib

import pytest

from conftest import HERE

pytest.importorskip("pandas")
pytest.importorskip("matplotlib")
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")


def busiest_buffer(acc):
    """The 256-byte aligned window with the most writes, and a T in the
    middle of them: a buffer that was built by many writes."""
    count = collections.Counter(a.physical // 256 for a in acc if a.op == 1)
    win = count.most_common(1)[0][0]
    ws = [a for a in acc if a.op == 1 and a.physical // 256 == win]
    return win * 256, win * 256 + 255, ws[len(ws) // 2].transition


def run(*args):
    import memhist  # the examples use the memhist this test process uses
    root = os.path.dirname(os.path.dirname(os.path.abspath(memhist.__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True,
                       cwd=EXAMPLES, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_which_writes(lackey_store, tmp_path):
    path, acc = lackey_store
    first, last, t = busiest_buffer(acc)
    out = str(tmp_path / "w.csv")
    text = run("which_writes.py", path, hex(first), hex(last), str(t), "--csv", out)
    with open(out) as f:
        got = list(csv.DictReader(f))
    want = [a for a in acc if a.op == 1 and a.transition < t
            and a.physical <= last and a.physical + a.size - 1 >= first]
    assert len(want) > 10
    assert [int(g["id"]) for g in got] == [a.id for a in want]
    assert all(g["op"] == "write" for g in got)
    # live_bytes by brute force: replay the writes byte by byte.
    owner = {}
    for a in want:
        for b in range(max(a.physical, first), min(a.physical + a.size - 1, last) + 1):
            owner[b] = a.id
    live = collections.Counter(owner.values())
    assert [int(g["live_bytes"]) for g in got] == [live.get(a.id, 0) for a in want]
    assert str(want[-1].id) in text


def png_size(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    w, h = struct.unpack(">II", data[16:24])
    crc = struct.unpack(">I", data[29:33])[0]
    assert crc == zlib.crc32(data[12:29])
    assert data.endswith(b"IEND\xaeB`\x82")
    return w, h, len(data)


def test_plot_range(lackey_store, tmp_path):
    path, acc = lackey_store
    first, last, _ = busiest_buffer(acc)
    png = str(tmp_path / "range.png")
    text = run("plot_range.py", path, hex(first), hex(last), png, "--ops", "rwx")
    n = sum(1 for a in acc if a.physical <= last and a.physical + a.size - 1 >= first)
    assert text.startswith("%d accesses drawn" % n)
    w, h, size = png_size(png)
    assert (w, h) == (900, 450)
    assert size > 5000  # points, axes and labels, not an empty canvas


def test_readme_example_matches(lackey_store):
    # The README's which_writes is the example's, so it cannot rot unseen.
    import re
    readme = open(os.path.join(os.path.dirname(os.path.dirname(HERE)), "README.md")).read()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "def which_writes" in b]
    assert len(blocks) == 1
    ns = {}
    exec(blocks[0], ns)
    sys.path.insert(0, EXAMPLES)
    try:
        import which_writes
    finally:
        sys.path.remove(EXAMPLES)
    path, acc = lackey_store
    first, last, t = busiest_buffer(acc)
    a, b = ns["which_writes"](path, first, last, t), which_writes.which_writes(path, first, last, t)
    assert len(a) > 10
    assert a["id"].tolist() == b["id"].tolist()
    assert a["live_bytes"].tolist() == b["live_bytes"].tolist()
