"""A real recording: tests/lackey_victim traced by valgrind lackey and
imported with the memhist CLI, read from Python and checked against the
oracle over the accesses parsed from the same log."""
import random

import memhist
from oracle import oracle, rows, start_at


def test_store_holds_the_log(lackey_store):
    path, acc = lackey_store
    assert len(acc) > 10000  # a real program, not a stub
    with memhist.Reader(path) as r:
        assert len(r) == len(acc)
        assert rows(r.query(ops="rwx")) == [tuple(a) for a in acc]
        assert r.stats.writes == sum(a.op == 1 for a in acc)


def test_random_queries_on_the_recording(lackey_store):
    path, acc = lackey_store
    rnd = random.Random(77)
    tmax = acc[-1].transition
    nonempty = 0
    with memhist.Reader(path) as r:
        for i in range(120):
            a = rnd.choice(acc)
            first = a.physical - rnd.choice((0, 8, 64, 4096))
            last = first + rnd.choice((0, 7, 63, 4095))
            kw = {"ops": rnd.choice(("r", "w", "rw"))}
            kw.update(start_at(i, a))
            if rnd.random() < 0.5:
                kw["max"] = rnd.choice((1, 10, 1000))
            if rnd.random() < 0.3:
                kw["until"] = rnd.randrange(tmax + 1)
            want = oracle(acc, first, last, **kw)
            assert rows(r.query(first, last, **kw)) == want, (hex(first), hex(last), kw)
            c = r.cursor(first, last, batch=rnd.choice((1, 100)),
                         **{k: v for k, v in kw.items() if k != "max"})
            got = [x for b in c.batches() for x in rows(b)]
            assert got[:len(want)] == want if "max" in kw else got == want
            nonempty += bool(want)
    assert nonempty > 60


def test_pc_queries_on_the_recording(lackey_store):
    # Every access after the first I line carries that line's address as
    # its pc: query by the pc of real instructions (one, or a run of them)
    # and compare with the oracle.
    path, acc = lackey_store
    assert sum(a.has_pc for a in acc) > len(acc) - 10
    pcs = sorted({a.pc for a in acc if a.has_pc})
    rnd = random.Random(78)
    found = 0
    with memhist.Reader(path) as r:
        for i in range(60):
            lo = rnd.choice(pcs)
            hi = lo if i % 2 == 0 else lo + rnd.choice((16, 256, 4096))
            kw = {"ops": rnd.choice(("r", "w", "rw")), "pc": (lo, hi)}
            if i % 3 == 0:
                kw["start"] = rnd.choice(acc).transition
            got = rows(r.query(**kw))
            assert got == oracle(acc, **kw), kw
            found += len(got)
    assert found > 0
