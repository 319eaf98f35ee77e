"""Reading a store: Reader (metadata, statistics, segments, queries) and
Cursor (a resumable iterator over every match of a query)."""

import ctypes
import os
import weakref
from ctypes import addressof, byref, c_char_p, c_size_t, c_void_p
from typing import Any, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple, Union

from . import _access
from ._access import Access, np
from ._lib import (errbuf, errmsg, lib, mh_access, mh_query, mh_reader_options,
                   mh_segment_info, mh_stats, mh_stream_info, mh_window_info, u32)
from .errors import Error, InvalidArgumentError, error

U64_MAX = (1 << 64) - 1
U32_NONE = (1 << 32) - 1
STREAM_MAX = 65535
MH_FILTER_PC, MH_FILTER_WINDOW = 1, 2
#: Stream kinds by code (enum mh_stream_kind).
STREAM_KINDS = ("other", "thread", "cpu", "process")
PathLike = Union[str, bytes, os.PathLike]

_OP_LETTERS = {"r": 1, "w": 2, "x": 4}

# Results of up to _SMALL accesses go through a ctypes buffer (see Reader.run);
# _RAW[k] is the ctypes type of k accesses (at least one byte, so that
# np.frombuffer always has a buffer).
_SMALL = 256
# Unbounded results beyond _BIG accesses are gathered by Reader._collect.
_BIG = 1 << 20
_RAW = [ctypes.c_char * max(1, k * ctypes.sizeof(mh_access)) for k in range(_SMALL + 1)]


def parse_ops(ops: Union[str, int]) -> int:
    """Operation set as the C bit mask: 'r', 'w', 'x' letters in any
    combination ('rw', 'rwx'), or an int mask (1 read, 2 write, 4 exec)."""
    if isinstance(ops, bool):
        raise InvalidArgumentError(detail="ops must be letters or a mask, not %r" % ops)
    if isinstance(ops, int):
        if ops <= 0 or ops & ~7:
            raise InvalidArgumentError(detail="ops mask %d is not a non-empty subset of 7" % ops)
        return ops
    if isinstance(ops, str) and ops:
        mask = 0
        for ch in ops:
            bit = _OP_LETTERS.get(ch)
            if bit is None:
                raise InvalidArgumentError(
                    detail="ops %r: unknown letter %r (use r, w, x)" % (ops, ch))
            mask |= bit
        return mask
    raise InvalidArgumentError(detail="ops must be letters or a mask, not %r" % (ops,))


def _u64(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            v = v.__index__()  # numpy integers
        except AttributeError:
            raise InvalidArgumentError(detail="%s must be an int, not %r" % (name, v)) from None
    if not 0 <= v <= U64_MAX:
        raise InvalidArgumentError(detail="%s=%d is outside 0 .. 2**64-1" % (name, v))
    return v


def make_query(first: int = 0, last: int = U64_MAX, *, start: Optional[int] = None,
               after: Optional[int] = None, before: Optional[int] = None,
               backward: bool = False, ops: Union[str, int] = "rw",
               until: Optional[int] = None, to_id: Optional[int] = None,
               streams: Optional[Iterable[int]] = None,
               pc: Optional[Tuple[int, int]] = None,
               window: Optional[int] = None) -> mh_query:
    """Builds the C query (see Reader.query for the parameters)."""
    q = mh_query()
    lib.mh_query_init_size(byref(q), ctypes.sizeof(q))
    q.addr_first = _u64("first", first)
    q.addr_last = _u64("last", last)
    q.ops = parse_ops(ops)
    given = [k for k, v in (("start", start), ("after", after), ("before", before)) if v is not None]
    if len(given) > 1:
        raise InvalidArgumentError(detail="give one of start, after, before (got %s)" % ", ".join(given))
    if after is not None:
        if backward:
            raise InvalidArgumentError(detail="after= goes forward; use before= to go backward")
        q.start_kind, q.direction, q.start = 1, 0, _u64("after", after)
    elif before is not None:
        q.start_kind, q.direction, q.start = 1, 1, _u64("before", before)
    else:
        q.start_kind = 0
        q.direction = 1 if backward else 0
        q.start = _u64("start", start) if start is not None else (U64_MAX if backward else 0)
    if until is not None and to_id is not None:
        raise InvalidArgumentError(detail="give one of until, to_id")
    if until is not None:
        q.end_kind, q.end = 1, _u64("until", until)
    elif to_id is not None:
        q.end_kind, q.end = 2, _u64("to_id", to_id)
    if streams is not None:
        if isinstance(streams, (int, str, bytes)):
            raise InvalidArgumentError(detail="streams must be a collection of stream ids, "
                                       "not %r" % (streams,))
        ids = [_u64("stream", v) for v in streams]
        if not ids:
            raise InvalidArgumentError(detail="streams is empty (None means every stream)")
        bad = [v for v in ids if v > STREAM_MAX]
        if bad:
            raise InvalidArgumentError(detail="stream %d is above %d" % (bad[0], STREAM_MAX))
        arr = (u32 * len(ids))(*ids)
        # the query points into arr: keep it alive as long as q
        q._streams_buf = arr
        q.streams = ctypes.cast(arr, ctypes.POINTER(u32))
        q.nstreams = len(ids)
    if pc is not None:
        try:
            pc_first, pc_last = pc
        except (TypeError, ValueError):
            raise InvalidArgumentError(detail="pc must be a (first, last) pair, not %r"
                                       % (pc,)) from None
        q.pc_first, q.pc_last = _u64("pc first", pc_first), _u64("pc last", pc_last)
        if q.pc_first > q.pc_last:
            raise InvalidArgumentError(detail="pc range %#x > %#x" % (q.pc_first, q.pc_last))
        q.filter |= MH_FILTER_PC
    if window is not None:
        q.window = _u64("window", window)
        q.filter |= MH_FILTER_WINDOW
    return q


class Stream(NamedTuple):
    """One stream of a store (mh_stream_info and its key/values).

    kind is "other", "thread", "cpu" or "process"; parent, pid, tid, cpu
    and name are None when unknown; accesses and the transition range are
    over the whole store (0, 0 when it has no access).
    """
    id: int
    kind: str
    name: Optional[str]
    parent: Optional[int]
    pid: Optional[int]
    tid: Optional[int]
    cpu: Optional[int]
    accesses: int
    transition_first: int
    transition_last: int
    meta: Dict[str, str]


class Window(NamedTuple):
    """One window of a store (mh_window_info): its accesses are the ids
    id_first .. id_first + accesses - 1."""
    window: int
    id_first: int
    accesses: int
    transition_first: int
    transition_last: int


class Stats(NamedTuple):
    """Totals of a store (mh_stats)."""
    accesses: int
    reads: int
    writes: int
    executes: int
    transition_first: int
    transition_last: int
    segments: int
    slices: int
    chunks: int
    blocks: int
    file_bytes: int
    compressed_bytes: int
    raw_bytes: int


class SegmentInfo(NamedTuple):
    """One segment file of a store (mh_segment_info)."""
    seq: int
    file_name: str
    version: str
    id_first: int
    accesses: int
    op_counts: tuple
    transition_first: int
    transition_last: int
    slices: int
    chunks: int
    blocks: int
    rows_per_block: int
    file_bytes: int
    compressed_bytes: int
    raw_bytes: int
    dict_bytes: int
    index_bytes: int
    streams: int = 0
    windows: int = 0
    summary_bytes: int = 0
    has_pc: bool = False
    idmap_bytes: int = 0
    aset_bytes: int = 0
    fine_summary_bytes: int = 0
    apost_bytes: int = 0
    span_bytes: int = 0
    idtime_bytes: int = 0


class Reader:
    """The committed content of a store, opened read-only.

    Use as a context manager or call close().  Queries may run from many
    threads at once (the library releases the GIL while it works).

    Args:
        path: the store directory.
        cache_bytes: decoded-block cache per query context (None: library
            default, 16 MiB).

    Raises NotFoundError, NotStoreError, VersionError, CorruptError,
    ChecksumError, TruncatedError, InputOutputError (with .detail).
    """

    def __init__(self, path: PathLike, cache_bytes: Optional[int] = None) -> None:
        self._h = None
        self.path = os.fsdecode(path)
        opt = None
        if cache_bytes is not None:
            opt = mh_reader_options()
            lib.mh_reader_options_init(byref(opt))
            opt.cache_bytes = _u64("cache_bytes", cache_bytes)
            opt = byref(opt)
        h = c_void_p()
        eb = errbuf()
        rc = lib.mh_reader_open_ex(os.fsencode(path), opt, byref(h), eb, len(eb))
        if rc:
            raise error(rc, eb.value.decode("utf-8", "replace"))
        self._h = h
        self._cursors: "weakref.WeakSet[Cursor]" = weakref.WeakSet()
        # Opening reads the MANIFEST only; the totals read every segment,
        # so they wait until asked for (a damaged segment then fails the
        # call that needs it, and a query elsewhere still answers).
        self._stats: Optional[Stats] = None
        self._run = lib.mh_query_run

    # -- lifetime -------------------------------------------------------
    def close(self) -> None:
        """Closes open cursors, then the reader. Safe to call twice."""
        if self._h is not None:
            for c in list(self._cursors):
                c.close()
            lib.mh_reader_close(self._h)
            self._h = None

    def __enter__(self) -> "Reader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _handle(self) -> c_void_p:
        if self._h is None:
            raise InvalidArgumentError(detail="reader is closed")
        return self._h

    def _check(self, rc: int) -> None:
        if rc:
            raise error(rc, errmsg(lib.mh_reader_errmsg, self._h))

    # -- description ----------------------------------------------------
    def __len__(self) -> int:
        return self.stats.accesses

    def __repr__(self) -> str:
        return "<memhist.Reader %r: %s accesses%s>" % (
            self.path, self._stats.accesses if self._stats else "?",
            "" if self._h is not None else ", closed")

    @property
    def stats(self) -> Stats:
        """Totals of the store (the committed content the reader sees),
        read from every segment on first use."""
        if self._stats is None:
            st = mh_stats()
            st.struct_size = ctypes.sizeof(st)
            self._check(lib.mh_reader_stats(self._handle(), byref(st)))
            self._stats = Stats(st.accesses, *st.op_counts, st.transition_first,
                                st.transition_last, st.segments, st.slices,
                                st.chunks, st.blocks, st.file_bytes,
                                st.compressed_bytes, st.raw_bytes)
        return self._stats

    @property
    def meta(self) -> Dict[str, str]:
        """Metadata of the newest segment, as a dict of str."""
        h = self._handle()
        out = {}
        k, v = c_char_p(), c_char_p()
        for i in range(lib.mh_reader_meta_count(h)):
            self._check(lib.mh_reader_meta_get(h, i, byref(k), byref(v)))
            out[k.value.decode("utf-8", "replace")] = v.value.decode("utf-8", "replace")
        return out

    @property
    def segments(self) -> List[SegmentInfo]:
        """One SegmentInfo per segment file, in id order."""
        h = self._handle()
        out = []
        for i in range(lib.mh_reader_segment_count(h)):
            s = mh_segment_info()
            s.struct_size = ctypes.sizeof(s)
            self._check(lib.mh_reader_segment_info(h, i, byref(s)))
            out.append(SegmentInfo(
                s.seq, s.file_name.decode(), "%d.%d" % (s.version_major, s.version_minor),
                s.id_first, s.accesses, tuple(s.op_counts), s.transition_first,
                s.transition_last, s.slices, s.chunks, s.blocks, s.rows_per_block,
                s.file_bytes, s.compressed_bytes, s.raw_bytes, s.dict_bytes,
                s.index_bytes, s.streams, s.windows, s.summary_bytes, bool(s.has_pc),
                s.idmap_bytes, s.aset_bytes, s.fine_summary_bytes, s.apost_bytes,
                s.span_bytes, s.idtime_bytes))
        return out

    def _table_failed(self, info, struct) -> None:
        """A count of 0 is either an empty table or a table that could not
        be built (the count calls return 0 then): asking for entry 0 tells
        them apart (MH_EINVAL when the table is merely empty)."""
        x = struct()
        x.struct_size = ctypes.sizeof(x)
        rc = info(self._handle(), 0, byref(x))
        if rc not in (0, InvalidArgumentError.code):
            self._check(rc)

    def _table(self, count, info, ctype):
        """Yields (i, record) for each record of one of the store's tables,
        read with its C calls count and info into a fresh ctype struct; a
        count of 0 first asks whether the table failed to load."""
        h = self._handle()
        n = count(h)
        if n == 0:
            self._table_failed(info, ctype)
        for i in range(n):
            x = ctype()
            x.struct_size = ctypes.sizeof(x)
            self._check(info(h, i, byref(x)))
            yield i, x

    def streams(self) -> List[Stream]:
        """Every stream of the store, in increasing id (a format 1.0 store
        has one: stream 0, kind "other")."""
        h = self._handle()
        out = []
        k, v = c_char_p(), c_char_p()
        for i, s in self._table(lib.mh_reader_stream_count, lib.mh_reader_stream_info,
                                mh_stream_info):
            meta = {}
            for j in range(lib.mh_reader_stream_meta_count(h, i)):
                self._check(lib.mh_reader_stream_meta_get(h, i, j, byref(k), byref(v)))
                meta[k.value.decode("utf-8", "replace")] = v.value.decode("utf-8", "replace")

            def opt(x: int, none: int) -> Optional[int]:
                return None if x == none else x
            out.append(Stream(
                s.id, STREAM_KINDS[s.kind] if s.kind < len(STREAM_KINDS) else "unknown",
                None if s.name is None else s.name.decode("utf-8", "replace"),
                opt(s.parent, U32_NONE), opt(s.pid, U64_MAX), opt(s.tid, U64_MAX),
                opt(s.cpu, U32_NONE), s.accesses, s.transition_first, s.transition_last,
                meta))
        return out

    def windows(self) -> List[Window]:
        """Every window of the store, in increasing window id."""
        out = []
        for _, w in self._table(lib.mh_reader_window_count, lib.mh_reader_window_info,
                                mh_window_info):
            out.append(Window(w.window, w.id_first, w.accesses, w.transition_first,
                              w.transition_last))
        return out

    # -- queries --------------------------------------------------------
    def query(self, first: int = 0, last: int = U64_MAX, *, start: Optional[int] = None,
              after: Optional[int] = None, before: Optional[int] = None,
              backward: bool = False, ops: Union[str, int] = "rw",
              max: Optional[int] = None, until: Optional[int] = None,
              to_id: Optional[int] = None, streams: Optional[Iterable[int]] = None,
              pc: Optional[Tuple[int, int]] = None,
              window: Optional[int] = None) -> _access.Accesses:
        """The accesses whose bytes overlap [first, last], in query order.

        Where to start (one of):
            start=T: from transition T inclusive (default 0 forward, the end
                of the store backward);
            after=X: forward, ids greater than X;
            before=X: backward, ids smaller than X.
        backward: go toward smaller ids (with start=).
        ops: 'r', 'w', 'x' letters ('rw' default, 'rwx' all) or a bit mask.
        max: at most this many (None: all).
        until=T: stop after the last access with transition <= T (forward)
            or >= T (backward); to_id=X: stop at id X inclusive.
        streams: only the accesses of these stream ids (None: every stream;
            an id the store does not have matches nothing).
        pc=(A, B): only accesses with a pc in [A, B] (none without a pc).
        window=K: only the accesses of window K (NoSuchError if the store
            has no window K).

        Returns a numpy structured array of ACCESS_DTYPE (ascending ids
        forward, descending backward), or a list of Access without numpy.
        Resume a chain with after=/before= the last id returned.
        Raises InvalidArgumentError, CorruptError, ChecksumError, ...
        """
        q = make_query(first, last, start=start, after=after, before=before,
                       backward=backward, ops=ops, until=until, to_id=to_id,
                       streams=streams, pc=pc, window=window)
        return self.run(q, max)

    def run(self, q: mh_query, max: Optional[int] = None) -> _access.Accesses:
        """Runs a prepared query (from make_query): the fast path for
        repeating point queries, which skips argument parsing."""
        h = self._h
        if h is None:
            raise InvalidArgumentError(detail="reader is closed")
        # No more than the store holds can match: the buffer for an unbounded
        # query is sized by it when the totals are known (untouched pages
        # cost nothing); otherwise the answer is gathered as it comes.
        total = self._stats.accesses if self._stats is not None else U64_MAX
        if max is None:
            cap = total
        else:
            if type(max) is not int or max < 0:
                max = _u64("max", max)
            cap = max if max < total else total
        n = c_size_t()  # per call: threads may share the reader
        if np is not None:
            if cap <= _SMALL:
                # Small results: a ctypes buffer viewed by numpy costs a third
                # of np.empty + .ctypes.data, which matters for point queries.
                raw = _RAW[cap]()
                rc = self._run(h, q, addressof(raw), cap, n)
                if rc:
                    self._check(rc)
                return np.frombuffer(raw, _access.ACCESS_DTYPE, count=n.value)
            if cap > _BIG:
                return self._collect(q, cap)
            buf = np.empty(cap, _access.ACCESS_DTYPE)
            rc = self._run(h, q, buf.ctypes.data, cap, n)
            if rc:
                self._check(rc)
            got = n.value
            if got == cap:
                return buf
            if got * 2 < cap:
                buf.resize(got, refcheck=False)  # gives the unused pages back
                return buf
            return buf[:got]
        if cap > _BIG:  # as _collect: memory follows the result
            step = min(_BIG, 1 << 16)
            c = Cursor(self, q, step)
            try:
                out: list = []
                while len(out) < cap:
                    b = c.next_batch(min(step, cap - len(out)))
                    if not b:
                        break
                    out += b
                return out
            finally:
                c.close()
        buf = _access.empty(cap)
        rc = self._run(h, q, ctypes.addressof(buf), cap, n)
        if rc:
            self._check(rc)
        return _access.from_ctypes(buf, n.value)

    def _collect(self, q: mh_query, cap: int) -> Any:
        """A large result, gathered by a cursor into one numpy buffer that
        doubles as it fills: memory follows the result, not the store (an
        unbounded query on a huge store would otherwise reserve the whole
        store's size).  resize() is realloc, which moves large buffers by
        remapping pages, not by copying them."""
        c = c_void_p()
        rc = lib.mh_cursor_open(self._h, byref(q), byref(c))
        if rc:
            self._check(rc)
        try:
            size = ctypes.sizeof(mh_access)
            # from a small start: with unknown totals, cap may be 2**64-1
            buf = np.empty(min(cap, 4096), _access.ACCESS_DTYPE)
            filled, n = 0, c_size_t()
            while filled < cap:
                if filled == len(buf):
                    buf.resize(min(2 * len(buf), cap), refcheck=False)
                want = len(buf) - filled
                rc = lib.mh_cursor_next(c, buf.ctypes.data + filled * size, want, byref(n))
                if rc:
                    raise error(rc, errmsg(lib.mh_cursor_errmsg, c))
                if n.value == 0:  # only 0 means the end
                    break
                filled += n.value
            buf.resize(filled, refcheck=False)
            return buf
        finally:
            lib.mh_cursor_close(c)

    def cursor(self, first: int = 0, last: int = U64_MAX, *, start: Optional[int] = None,
               after: Optional[int] = None, before: Optional[int] = None,
               backward: bool = False, ops: Union[str, int] = "rw",
               until: Optional[int] = None, to_id: Optional[int] = None,
               streams: Optional[Iterable[int]] = None,
               pc: Optional[Tuple[int, int]] = None, window: Optional[int] = None,
               batch: int = 4096) -> "Cursor":
        """A Cursor over every match of the query (parameters as query()).

        batch is how many accesses each library call fetches."""
        q = make_query(first, last, start=start, after=after, before=before,
                       backward=backward, ops=ops, until=until, to_id=to_id,
                       streams=streams, pc=pc, window=window)
        c = Cursor(self, q, batch)
        self._cursors.add(c)
        return c

    def to_pandas(self, first: int = 0, last: int = U64_MAX, **query: Any):
        """query(first, last, **query) as a pandas DataFrame (see
        memhist.to_pandas for the columns)."""
        return _access.to_pandas(self.query(first, last, **query))


class Cursor:
    """Iterator over every match of a query, fetched in batches.

    Iterating yields one access at a time (a numpy record, or an Access);
    batches() yields whole arrays (the fast way).  last_id is the id of the
    last access handed out: to resume later, open a new cursor or query
    with after=last_id (forward) or before=last_id (backward).
    """

    def __init__(self, reader: Reader, q: mh_query, batch: int) -> None:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise InvalidArgumentError(detail="batch must be a positive int, not %r" % (batch,))
        self._h = None
        self._reader = reader
        self._batch = batch
        self._backward = bool(q.direction)
        self.last_id: Optional[int] = None
        h = c_void_p()
        rc = lib.mh_cursor_open(reader._handle(), byref(q), byref(h))
        if rc:
            raise error(rc, errmsg(lib.mh_reader_errmsg, reader._h))
        self._h = h
        self._n = c_size_t()

    def close(self) -> None:
        """Frees the cursor (closing the reader does it too)."""
        if self._h is not None:
            lib.mh_cursor_close(self._h)
            self._h = None

    def __enter__(self) -> "Cursor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    @property
    def resume(self) -> Dict[str, int]:
        """Keyword arguments that continue where this cursor stopped:
        reader.cursor(first, last, ops=..., **c.resume)."""
        if self.last_id is None:
            raise InvalidArgumentError(detail="cursor has returned nothing yet")
        return {"before" if self._backward else "after": self.last_id}

    def next_batch(self, max: Optional[int] = None) -> _access.Accesses:
        """Up to max (default the cursor's batch) next matches; empty at the end."""
        if self._h is None:
            raise InvalidArgumentError(detail="cursor is closed")
        cap = self._batch if max is None else _u64("max", max)
        buf = _access.empty(cap)
        ptr = buf.ctypes.data if np is not None else ctypes.addressof(buf)
        rc = lib.mh_cursor_next(self._h, ptr, cap, byref(self._n))
        if rc:
            raise error(rc, errmsg(lib.mh_cursor_errmsg, self._h))
        got = self._n.value
        out = buf[:got] if np is not None else _access.from_ctypes(buf, got)
        if got:
            self.last_id = int(out[-1]["id"] if np is not None else out[-1].id)
        return out

    def batches(self) -> Iterator[_access.Accesses]:
        """Yields non-empty batches until the end."""
        while True:
            b = self.next_batch()
            if len(b) == 0:
                return
            yield b

    def __iter__(self) -> Iterator[Any]:
        for b in self.batches():
            for rec in b:
                # last_id follows what the caller got, so resume is exact
                # even when iteration stops inside a batch.
                self.last_id = int(rec["id"] if np is not None else rec.id)
                yield rec
