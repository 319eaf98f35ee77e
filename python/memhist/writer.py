"""Writing a store: Writer (append accesses, metadata, commit)."""

import ctypes
import os
from ctypes import byref, c_size_t, c_void_p
from typing import Any, Iterable, Mapping, Optional, Union

from . import _access
from ._access import FIELDS, np
from ._lib import errbuf, errmsg, lib, mh_access, mh_stream_info, mh_writer_options
from .errors import InvalidArgumentError, error
from .reader import STREAM_KINDS, STREAM_MAX, PathLike, _u64

MH_CREATE, MH_APPEND = 1, 2
_MODES = {"create": MH_CREATE, "append": MH_APPEND, "create_or_append": MH_CREATE | MH_APPEND}
_OPS = {"r": 0, "read": 0, "w": 1, "write": 1, "x": 2, "exec": 2, "execute": 2}
_OPTIONS = ("slice_accesses", "block_accesses", "chunk_min_accesses",
            "lz4_acceleration", "commit_accesses", "background", "reorder_window",
            "address_postings", "span_sets")
_REQUIRED = ("transition", "physical", "size", "op")


def _op(v: Union[int, str]) -> int:
    if isinstance(v, str):
        if v not in _OPS:
            raise InvalidArgumentError(detail="op %r: use 'r', 'w', 'x' or 0, 1, 2" % v)
        return _OPS[v]
    return v


class Writer:
    """Appends accesses to a store; the only writer of that store while open.

    Use as a context manager: leaving the block normally commits and
    closes; leaving it through an exception abandons what was not committed
    (the store keeps its committed accesses).

    Args:
        path: the store directory.
        mode: "create" (ExistsError if it exists), "append" (NotFoundError if
            absent) or "create_or_append".
        **options: mh_writer_options fields: slice_accesses, block_accesses,
            chunk_min_accesses, lz4_acceleration, commit_accesses, background,
            reorder_window.

    Raises ExistsError, NotFoundError, LockedError, InvalidArgumentError and
    the reader's errors (appending to a damaged store).
    """

    def __init__(self, path: PathLike, mode: str = "create", **options: int) -> None:
        self._h = None
        self.path = os.fsdecode(path)
        if mode not in _MODES:
            raise InvalidArgumentError(detail="mode %r: use one of %s" % (mode, ", ".join(_MODES)))
        opt = mh_writer_options()
        lib.mh_writer_options_init_size(byref(opt), ctypes.sizeof(opt))
        for k, v in options.items():
            if k not in _OPTIONS:
                raise InvalidArgumentError(detail="unknown writer option %r (known: %s)"
                                           % (k, ", ".join(_OPTIONS)))
            if isinstance(v, bool) or not isinstance(v, int):
                raise InvalidArgumentError(detail="writer option %s must be an int" % k)
            setattr(opt, k, v)
            if getattr(opt, k) != v:
                raise InvalidArgumentError(detail="writer option %s=%d is out of range" % (k, v))
        h = c_void_p()
        eb = errbuf()
        rc = lib.mh_writer_open_ex(os.fsencode(path), _MODES[mode], byref(opt), byref(h),
                                   eb, len(eb))
        if rc:
            raise error(rc, eb.value.decode("utf-8", "replace"))
        self._h = h
        self._bad = c_size_t()
        self._one = mh_access()

    def _handle(self) -> c_void_p:
        if self._h is None:
            raise InvalidArgumentError(detail="writer is closed")
        return self._h

    def _check(self, rc: int, detail: str = "") -> None:
        if rc:
            # The library's detail when it gave one (it names the bad access
            # itself), else what this package knows.
            msg = errmsg(lib.mh_writer_errmsg, self._h)
            raise error(rc, msg or detail)

    # -- lifetime -------------------------------------------------------
    def close(self) -> None:
        """Commits, then releases the store. Safe to call twice."""
        if self._h is not None:
            h, self._h = self._h, None
            rc = lib.mh_writer_close(h)
            if rc:
                raise error(rc)

    def abandon(self) -> None:
        """Releases the store without committing what is pending."""
        if self._h is not None:
            lib.mh_writer_abandon(self._h)
            self._h = None

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abandon()

    def __del__(self) -> None:
        try:
            self.abandon()
        except Exception:
            pass

    # -- writing --------------------------------------------------------
    def set_meta(self, key: str, value: str) -> None:
        """Sets a metadata key (saved with the next commit)."""
        self._check(lib.mh_writer_set_meta(self._handle(), key.encode(), value.encode()))

    def declare_stream(self, id: int, kind: Union[str, int] = "other", *,
                       name: Optional[str] = None, parent: Optional[int] = None,
                       pid: Optional[int] = None, tid: Optional[int] = None,
                       cpu: Optional[int] = None,
                       meta: Optional[Mapping[str, str]] = None) -> None:
        """Declares stream id (0 .. 65535), or replaces the description of a
        declared one; kind is "other", "thread", "cpu", "process" or its
        code; None means unknown. meta: key/values of the stream. Stream 0
        exists without being declared; any other must be declared before
        its first access (else NoStreamError)."""
        h = self._handle()
        s = mh_stream_info()
        lib.mh_stream_info_init(byref(s))
        if isinstance(kind, str):
            if kind not in STREAM_KINDS:
                raise InvalidArgumentError(detail="stream kind %r: use one of %s"
                                           % (kind, ", ".join(STREAM_KINDS)))
            kind = STREAM_KINDS.index(kind)
        if _u64("id", id) > STREAM_MAX:
            raise InvalidArgumentError(detail="stream id %d is above %d" % (id, STREAM_MAX))
        s.id = id
        if _u64("kind", kind) > 0xFFFFFFFF:  # the library refuses unknown kinds
            raise InvalidArgumentError(detail="stream kind %d is out of range" % kind)
        s.kind = kind
        for field, v, top in (("parent", parent, 0xFFFFFFFE), ("cpu", cpu, 0xFFFFFFFE),
                              ("pid", pid, (1 << 64) - 2), ("tid", tid, (1 << 64) - 2)):
            if v is not None:
                if _u64(field, v) > top:
                    raise InvalidArgumentError(detail="stream %s=%d is out of range" % (field, v))
                setattr(s, field, v)
        name_b = None if name is None else name.encode()
        s.name = name_b
        self._check(lib.mh_writer_stream_declare(h, byref(s)))
        for k, v in (meta or {}).items():
            self._check(lib.mh_writer_stream_set_meta(h, s.id, k.encode(), v.encode()))

    def window_begin(self, window: int) -> None:
        """Starts window `window` at the next appended access (ending the
        current one); window ids must increase over the store (OrderError)."""
        self._check(lib.mh_writer_window_begin(self._handle(), _u64("window", window)))

    def window_end(self) -> None:
        """Ends the current window: the next accesses belong to no window."""
        self._check(lib.mh_writer_window_end(self._handle()))

    def append_one(self, transition: int, physical: int, size: int, op: Union[int, str],
                   linear: Optional[int] = None, *, stream: int = 0,
                   pc: Optional[int] = None) -> int:
        """Appends one access; op is 0/1/2 or 'r'/'w'/'x'; stream a declared
        stream id; pc the instruction's address (None: absent). Returns its
        id."""
        h = self._handle()
        a = self._one
        a.transition, a.physical, a.size, a.op = transition, physical, size, _op(op)
        a.linear, a.has_linear = (0, 0) if linear is None else (linear, 1)
        a.stream = stream
        a.pc, a.has_pc = (0, 0) if pc is None else (pc, 1)
        idx = lib.mh_writer_next_id(h)
        self._check(lib.mh_writer_append(h, byref(a)))
        return idx

    def append(self, accesses: Any) -> int:
        """Appends a batch of accesses in order; all or nothing.

        accesses is one of:
          - a numpy array of ACCESS_DTYPE (C-contiguous): passed to the
            library as is, no copy;
          - any numpy structured array, or a mapping of column name to
            array/sequence, with columns transition, physical, size, op and
            optionally linear (has_linear then defaults to 1), has_linear,
            pc, has_pc, stream: converted in bulk by numpy;
          - a sequence of Access tuples (id is ignored).
        Returns the number appended.  On a bad access nothing is appended
        and the exception's detail names its index.
        """
        h = self._handle()
        arr = self._as_buffer(accesses)
        n = len(arr)
        ptr = arr.ctypes.data if np is not None else ctypes.addressof(arr)
        rc = lib.mh_writer_append_batch(h, ptr, n, byref(self._bad))
        if rc:
            bad = self._bad.value
            detail = "access %d of the batch" % bad if bad < n else ""
            self._check(rc, detail)
        return n

    def _as_buffer(self, data: Any) -> Any:
        if np is None:
            return self._as_ctypes(data)
        if isinstance(data, np.ndarray) and data.dtype == _access.ACCESS_DTYPE:
            return np.ascontiguousarray(data)  # no copy when contiguous
        if isinstance(data, np.ndarray) and data.dtype.names:
            cols = {k: data[k] for k in data.dtype.names}
        elif isinstance(data, Mapping):
            cols = data
        elif isinstance(data, np.ndarray):
            raise InvalidArgumentError(detail="a numpy array to append must be structured")
        else:
            seq = list(data)
            if not seq:
                return np.zeros(0, _access.ACCESS_DTYPE)
            try:
                t = np.array(seq, dtype=[(f, "u8") for f in FIELDS])
            except (TypeError, ValueError, OverflowError) as e:
                raise InvalidArgumentError(
                    detail="a sequence to append must hold Access tuples (%s)" % e) from None
            cols = {f: t[f] for f in FIELDS if f != "id"}
        missing = [k for k in _REQUIRED if k not in cols]
        if missing:
            raise InvalidArgumentError(detail="columns missing: %s" % ", ".join(missing))
        n = len(cols["transition"])
        out = np.zeros(n, _access.ACCESS_DTYPE)
        for k, v in cols.items():
            if k in ("id", "reserved"):
                continue
            if k not in _access.ACCESS_DTYPE.names:
                raise InvalidArgumentError(detail="unknown column %r" % k)
            info = np.iinfo(out.dtype[k])
            if not isinstance(v, np.ndarray):
                # A Python sequence is Python objects already: checking them
                # here is what numpy's conversion would cost anyway, and it
                # keeps huge and negative ints from becoming floats or wrapping.
                v = list(v)
                for i, x in enumerate(v):
                    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= info.max:
                        raise InvalidArgumentError(detail="column %s row %d: %r is not an int in "
                                                   "0 .. %d" % (k, i, x, info.max))
                v = np.array(v, dtype=out.dtype[k])
            if len(v) != n:
                raise InvalidArgumentError(detail="column %s has %d rows, transition %d"
                                           % (k, len(v), n))
            if v.dtype.kind not in "uib":
                raise InvalidArgumentError(detail="column %s must be integers, not %s" % (k, v.dtype))
            if v.dtype.kind == "i" and n and v.min() < 0:
                raise InvalidArgumentError(detail="column %s has negative values" % k)
            if n and v.dtype.kind != "b" and v.max() > info.max:
                raise InvalidArgumentError(detail="column %s has values above %d" % (k, info.max))
            out[k] = v
        if "linear" in cols and "has_linear" not in cols:
            out["has_linear"] = 1
        if "pc" in cols and "has_pc" not in cols:
            out["has_pc"] = 1
        return out

    def _as_ctypes(self, data: Iterable[Any]) -> ctypes.Array:
        if isinstance(data, Mapping):
            keys = list(data)
            rows = [dict(zip(keys, vals)) for vals in zip(*(data[k] for k in keys))]
        else:
            rows = [a._asdict() if hasattr(a, "_asdict") else a for a in data]
        buf = (mh_access * len(rows))()
        for i, r in enumerate(rows):
            if not isinstance(r, Mapping):
                raise InvalidArgumentError(detail="access %d is not an Access or mapping" % i)
            missing = [k for k in _REQUIRED if k not in r]
            if missing:
                raise InvalidArgumentError(detail="access %d lacks %s" % (i, ", ".join(missing)))
            a = buf[i]
            for k, v in r.items():
                if k in ("id", "reserved"):
                    continue
                if k not in FIELDS:
                    raise InvalidArgumentError(detail="unknown column %r" % k)
                v = _op(v) if k == "op" else v
                try:
                    setattr(a, k, v)
                except TypeError:
                    raise InvalidArgumentError(detail="access %d: %s=%r is not an int" % (i, k, v)) from None
                if getattr(a, k) != v:  # ctypes truncates silently
                    raise InvalidArgumentError(detail="access %d: %s=%r is out of range" % (i, k, v))
            if "linear" in r and "has_linear" not in r:
                a.has_linear = 1
            if "pc" in r and "has_pc" not in r:
                a.has_pc = 1
        return buf

    def discard_from(self, transition: int) -> None:
        """Discards uncommitted accesses with transition >= transition."""
        self._check(lib.mh_writer_discard_from(self._handle(), transition))

    def commit(self) -> None:
        """Makes everything appended so far durable."""
        self._check(lib.mh_writer_commit(self._handle()))

    @property
    def next_id(self) -> int:
        """Id the next appended access will get."""
        return lib.mh_writer_next_id(self._handle())

    @property
    def committed(self) -> int:
        """Number of accesses committed so far (the store's total)."""
        return lib.mh_writer_committed(self._handle())
