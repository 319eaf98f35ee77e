"""numpy and pandas paths: zero-copy append of ACCESS_DTYPE arrays, bulk
conversion of other structured arrays, results straight into numpy,
to_pandas."""
import pytest

np = pytest.importorskip("numpy")

import memhist
from oracle import rows


def make(n):
    a = np.zeros(n, memhist.ACCESS_DTYPE)
    a["transition"] = np.arange(n) // 4
    a["physical"] = 0x10000 + (np.arange(n) * 24) % 4096
    a["size"] = 8
    a["op"] = np.arange(n) % 3
    a["linear"] = a["physical"] + 0x1000
    a["has_linear"] = np.arange(n) % 2
    a["id"] = np.arange(n)
    return a


def test_exact_dtype_is_passed_without_copy(tmp_path, monkeypatch):
    a = make(5000)
    seen = []
    from memhist import writer
    real = writer.lib.mh_writer_append_batch

    class Spy:
        def __getattr__(self, k):
            return getattr(writer.lib.__wrapped__, k)

    def spy(h, ptr, n, bad):
        seen.append((ptr, n))
        return real(h, ptr, n, bad)

    class Lib:
        __wrapped__ = writer.lib

        def __getattr__(self, k):
            return spy if k == "mh_writer_append_batch" else getattr(self.__wrapped__, k)

    monkeypatch.setattr(writer, "lib", Lib())
    with memhist.Writer(str(tmp_path / "s")) as w:
        w.append(a[:3000])
        rest = a[3000:][["transition", "physical", "size", "op"]]  # another dtype
        w.append(rest)
    assert seen[0] == (a.ctypes.data, 3000)
    assert seen[1][0] not in range(a.ctypes.data, a.ctypes.data + a.nbytes)
    assert seen[1][1] == 2000


def test_structured_and_column_inputs(tmp_path):
    a = make(3000)
    other = np.zeros(1000, dtype=[("transition", "<i8"), ("physical", "<u8"),
                                  ("size", "<u2"), ("op", "<i1"), ("linear", "<u8")])
    for f in other.dtype.names:
        other[f] = a[f][2000:]
    path = str(tmp_path / "s")
    with memhist.Writer(path) as w:
        w.append(a[:1000])
        w.append({k: a[k][1000:2000] for k in ("transition", "physical", "size", "op",
                                               "linear", "has_linear")})
        w.append(other)  # linear given, has_linear absent: 1
    want = a.copy()
    want["has_linear"][2000:] = 1
    want["linear"][want["has_linear"] == 0] = 0  # absent linear reads back as 0
    with memhist.Reader(path) as r:
        got = r.query(ops="rwx")
        assert got.dtype == memhist.ACCESS_DTYPE
        assert (got == want).all()
        bad = other.copy()
        bad["op"][5] = -1
    with memhist.Writer(path, mode="append") as w:
        with pytest.raises(memhist.InvalidArgumentError):
            w.append(bad)
        with pytest.raises(memhist.InvalidArgumentError):
            w.append(np.arange(5))


def test_to_pandas(tmp_path):
    pd = pytest.importorskip("pandas")
    a = make(200)
    path = str(tmp_path / "s")
    with memhist.Writer(path) as w:
        w.append(a)
    with memhist.Reader(path) as r:
        df = r.to_pandas(0x10000, 0x10007, ops="rwx")
        res = r.query(0x10000, 0x10007, ops="rwx")
        assert list(df["id"]) == list(res["id"])
        assert list(df["op"]) == [memhist.OP_NAMES[o] for o in res["op"]]
        assert df["linear"].isna().tolist() == (res["has_linear"] == 0).tolist()
        assert df["pc"].isna().all()
        same = memhist.to_pandas([memhist.Access(*t) for t in rows(res)])
        pd.testing.assert_frame_equal(df, same)
