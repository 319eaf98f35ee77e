"""Format 2.0 from Python: declared streams, pcs and windows written with
Writer, read back with Reader.streams()/windows() and queried with the
streams/pc/window filters, against the brute-force oracle."""
import os
import random
import shutil

import pytest

import memhist
from conftest import REPO
from memhist import Access
from oracle import oracle, rows, start_at

STREAMS = {  # id: declare_stream keyword arguments
    0: {},
    1: dict(kind="thread", name="main", pid=4242, tid=4242, meta={"role": "main"}),
    2: dict(kind="thread", name="worker", pid=4242, tid=4243, parent=1),
    33: dict(kind="cpu", cpu=3, meta={"model": "x", "freq": "2GHz"}),
    7: dict(kind="process", name="child", pid=5000, parent=1),  # no access
}
USED = (0, 1, 2, 33)


def gen(n, seed):
    """Accesses over USED streams (stream 33 shares mask bit 1 with stream
    1), about half with a pc, and the window of each (None outside): runs of
    consecutive ids with increasing window ids and gaps between them."""
    rnd = random.Random(seed)
    acc, win_of = [], []
    t, window, cur = 0, 0, None
    for i in range(n):
        if rnd.random() < 0.3:
            t += rnd.choice((1, 1, 3))
        if rnd.random() < 0.01:
            if cur is None or rnd.random() < 0.7:
                window += rnd.choice((1, 1, 5))
                cur = window
            else:
                cur = None
        phys = rnd.choice((0x1000, 0x9000, 0x7ff000)) + rnd.randrange(0, 0x100)
        has_pc = rnd.random() < 0.5
        pc = 0x400000 + rnd.randrange(0, 64) * 4 if has_pc else 0
        acc.append(Access(i, t, 0, phys, pc, rnd.choice((1, 4, 8)), rnd.choice(USED),
                          rnd.choice((0, 0, 1, 2)), 0, int(has_pc)))
        win_of.append(cur)
    return acc, win_of


def write(path, acc, win_of, commits):
    """Appends acc in batches cut at window changes (window_begin/_end
    between them) and at the commit points."""
    with memhist.Writer(path, slice_accesses=200, block_accesses=64,
                        chunk_min_accesses=16, reorder_window=1000) as w:
        w.set_meta("program", "streams test")
        for sid, kw in STREAMS.items():
            w.declare_stream(sid, **kw)
        lo, prev = 0, None
        for i in range(len(acc) + 1):
            change = i < len(acc) and win_of[i] != prev
            if (change or i in commits or i == len(acc)) and i > lo:
                assert w.append(acc[lo:i]) == i - lo
                lo = i
            if i in commits:
                w.commit()
            if change:
                if win_of[i] is None:
                    w.window_end()
                else:
                    w.window_begin(win_of[i])
                prev = win_of[i]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    acc, win_of = gen(5000, 5)
    path = str(tmp_path_factory.mktemp("streams") / "s.store")
    write(path, acc, win_of, commits=(1200, 1201, 3000))
    r = memhist.Reader(path)
    yield r, acc, win_of
    r.close()


def test_read_back_with_streams_and_pcs(store):
    r, acc, _ = store
    assert rows(r.query(ops="rwx")) == [tuple(a) for a in acc]
    segs = r.segments
    assert len(segs) == 4 and all(s.version == "2.8" for s in segs)  # what 1.13 writes
    assert all(s.aset_bytes > 0 for s in segs)  # the address set (since 1.5)
    assert all(s.idtime_bytes > 0 for s in segs)  # the id transitions (since 1.9)
    # span address sets (since 1.7): MANIFEST positions 2 and 4 (k & -k >= 2)
    assert [s.span_bytes > 0 for s in segs] == [False, True, False, True]
    for s in segs:
        # every segment carries every declared stream; the pc column only
        # when one of its accesses has a pc
        part = acc[s.id_first:s.id_first + s.accesses]
        assert s.streams == len(STREAMS)
        assert s.has_pc == any(a.has_pc for a in part)


def test_streams_table(store):
    r, acc, _ = store
    got = r.streams()
    assert [s.id for s in got] == sorted(STREAMS)
    for s in got:
        kw = STREAMS[s.id]
        mine = [a for a in acc if a.stream == s.id]
        assert s.kind == kw.get("kind", "other")
        assert s.name == kw.get("name")
        assert (s.pid, s.tid, s.cpu, s.parent) == (kw.get("pid"), kw.get("tid"),
                                                   kw.get("cpu"), kw.get("parent"))
        assert s.meta == kw.get("meta", {})
        assert s.accesses == len(mine)
        if mine:
            assert (s.transition_first, s.transition_last) == (mine[0].transition,
                                                               mine[-1].transition)
        else:
            assert (s.transition_first, s.transition_last) == (0, 0)


def test_windows_table(store):
    r, acc, win_of = store
    want = {}
    for a, w in zip(acc, win_of):
        if w is not None:
            first, n, t0, _ = want.get(w, (a.id, 0, a.transition, 0))
            want[w] = (first, n + 1, t0, a.transition)
    got = r.windows()
    assert len(got) >= 3
    assert [(w.window, w.id_first, w.accesses, w.transition_first, w.transition_last)
            for w in got] == [(k,) + v for k, v in sorted(want.items())]


def test_filtered_queries_against_the_oracle(store):
    r, acc, win_of = store
    rnd = random.Random(6)
    windows = sorted({w for w in win_of if w is not None})
    nonempty = 0
    for i in range(300):
        a = rnd.choice(acc)
        kw = {"ops": rnd.choice(("r", "w", "rw", "rwx"))}
        if rnd.random() < 0.5:
            kw["first"] = a.physical - rnd.choice((0, 8, 256))
            kw["last"] = kw["first"] + rnd.choice((0, 15, 4095))
        kw.update(start_at(i, a))
        if rnd.random() < 0.6:
            kw["streams"] = rnd.sample((0, 1, 2, 33, 7, 65), rnd.choice((1, 1, 2, 3)))
        if rnd.random() < 0.4:
            lo = 0x400000 + rnd.randrange(0, 64) * 4
            kw["pc"] = (lo, lo + rnd.choice((0, 0, 12, 100)))
        if rnd.random() < 0.4:
            kw["window"] = rnd.choice(windows)
        if rnd.random() < 0.5:
            kw["max"] = rnd.choice((1, 7, 100))
        first, last = kw.pop("first", 0), kw.pop("last", memhist.reader.U64_MAX)
        got = rows(r.query(first, last, **kw))
        want = oracle(acc, first, last, win_of=win_of, **kw)
        assert got == want, kw
        nonempty += bool(got)
        # a cursor walks the same answer
        kw.pop("max", None)
        with r.cursor(first, last, batch=13, **kw) as c:
            batches = list(c.batches())
        flat = ([x for b in batches for x in b] if memhist._access.np is None
                else _concat(batches))
        assert rows(flat) == oracle(acc, first, last, win_of=win_of, **kw), kw
    assert nonempty > 100


def _concat(batches):
    import numpy as np
    return np.concatenate(batches) if batches else np.zeros(0, memhist.ACCESS_DTYPE)


def test_errors(store, tmp_path):
    r, _, _ = store
    with pytest.raises(memhist.NoSuchError):
        r.query(window=10 ** 9)
    with pytest.raises(memhist.InvalidArgumentError):
        r.query(streams=[])
    with pytest.raises(memhist.InvalidArgumentError):
        r.query(streams=[65536])
    with pytest.raises(memhist.InvalidArgumentError):
        r.query(streams=3)
    with pytest.raises(memhist.InvalidArgumentError):
        r.query(pc=(9, 8))
    with memhist.Writer(str(tmp_path / "w.store")) as w:
        with pytest.raises(memhist.NoStreamError):
            w.append_one(0, 16, 4, "r", stream=5)
        w.declare_stream(5, "thread", name="t5")
        assert w.append_one(0, 16, 4, "r", stream=5, pc=0x401000) == 0
        w.window_begin(3)
        w.append_one(1, 16, 4, "w", stream=5)
        with pytest.raises(memhist.OrderError):
            w.window_begin(3)
        with pytest.raises(memhist.InvalidArgumentError):
            w.declare_stream(65536)
        with pytest.raises(memhist.InvalidArgumentError):
            w.declare_stream(1, "fiber")
    with memhist.Reader(str(tmp_path / "w.store")) as r2:
        assert [(s.id, s.kind, s.name) for s in r2.streams()] == [(0, "other", None),
                                                                  (5, "thread", "t5")]
        assert r2.windows() == [memhist.Window(3, 1, 1, 1, 1)]
        assert rows(r2.query(ops="rw", pc=(0x401000, 0x401000))) == [
            (0, 0, 0, 16, 0x401000, 4, 5, 0, 0, 1)]


def test_format_1_0_store(tmp_path):
    # tests/cli/data/small-v1.store: written by memhist 1.1 (format 1.0).
    src = os.path.join(REPO, "tests", "cli", "data", "small-v1.store")
    path = str(tmp_path / "v1")
    shutil.copytree(src, path)
    with memhist.Reader(path) as r:
        assert [s.version for s in r.segments] == ["1.0"]
        st = r.streams()
        assert [(s.id, s.kind, s.accesses) for s in st] == [(0, "other", 14)]
        assert r.windows() == []
        everything = rows(r.query(ops="rwx"))
        assert len(everything) == 14
        assert all(a[6] == 0 and a[9] == 0 for a in everything)  # stream 0, no pc
        assert rows(r.query(ops="rwx", streams=[0])) == everything
        assert rows(r.query(ops="rwx", streams=[1])) == []
        assert rows(r.query(ops="rwx", pc=(0, memhist.reader.U64_MAX))) == []
