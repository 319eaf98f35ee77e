"""memhist: the complete memory-access history of a traced program, from Python.

A thin layer over the C library libmemhist.so.1 (ctypes, standard library
only; numpy and pandas are used when present).

Quick tour::

    import memhist
    with memhist.Writer("run.store") as w:          # create, then commit on exit
        w.set_meta("program", "demo")
        w.append(accesses)                           # numpy ACCESS_DTYPE array: zero copy
    with memhist.Reader("run.store") as r:
        r.stats, r.meta, r.segments
        # the last 5 writes to [0x1000, 0x103f] at or before transition 900
        r.query(0x1000, 0x103f, start=900, backward=True, ops="w", max=5)
        for a in r.cursor(0x1000, 0x103f, ops="rwx"):  # every match, lazily
            ...
        r.to_pandas(0x1000, 0x103f, until=900)       # as a DataFrame
        r.streams(), r.windows()                     # threads/CPUs; recorded windows
        r.query(ops="rwx", streams=[1, 2], pc=(0x401000, 0x4010ff), window=3)

Streams (format 2.0): w.declare_stream(1, "thread", name="main", tid=...)
before the first access with stream=1; w.window_begin(K)/w.window_end()
group the next accesses into window K.

Queries return a numpy structured array of ACCESS_DTYPE (byte for byte the
C struct mh_access) when numpy is installed, else a list of Access tuples.

Errors raise a subclass of memhist.Error per MH_E* code (CorruptError,
ChecksumError, NotStoreError, VersionError, TruncatedError, ...) carrying
.code, .name and .detail.

The library is found through MEMHIST_LIBRARY=/path/to/libmemhist.so.1 when
set (and only there), else ctypes.util.find_library("memhist"), the package
directory, then the standard library directories.
"""

import ctypes
import os
from ctypes import byref
from typing import List, NamedTuple, Union

from ._access import (ACCESS_DTYPE, OP_EXEC, OP_NAMES, OP_READ, OP_WRITE,
                      OPS_EXEC, OPS_READ, OPS_WRITE, Access, to_pandas)
from ._lib import REPORT_FN, lib, mh_verify_result
from .errors import (ChecksumError, CommittedError, CorruptError, Error,
                     ExistsError, InputOutputError, InvalidArgumentError,
                     LateError, LockedError, NoSpaceError, NoStreamError,
                     NoSuchError, NotFoundError, NotStoreError, OrderError,
                     OutOfMemoryError, StateError, TruncatedError,
                     VersionError, error)
from .reader import (STREAM_KINDS, Cursor, Reader, SegmentInfo, Stats, Stream,
                     Window, make_query, parse_ops)
from .writer import Writer

__all__ = [
    "Access", "ACCESS_DTYPE", "Reader", "Writer", "Cursor", "Stats",
    "SegmentInfo", "Stream", "Window", "STREAM_KINDS", "make_query", "parse_ops", "to_pandas", "verify",
    "Problem", "VerifyResult", "VERIFY_THREADS_MAX", "library_version", "library_path",
    "OP_READ", "OP_WRITE", "OP_EXEC", "OPS_READ", "OPS_WRITE", "OPS_EXEC",
    "OP_NAMES", "Error", "InputOutputError", "OutOfMemoryError",
    "InvalidArgumentError", "NotStoreError", "VersionError", "CorruptError",
    "ChecksumError", "TruncatedError", "LockedError", "ExistsError",
    "NotFoundError", "CommittedError", "OrderError", "NoSpaceError",
    "StateError", "NoStreamError", "LateError", "NoSuchError", "error",
]

__version__ = "1.13.11"

#: Version of the loaded C library ("1.0.0").
library_version: str = lib.mh_version_string().decode()
#: Path the C library was loaded from.
library_path: str = lib._memhist_path


class Problem(NamedTuple):
    """One problem (or, with repair, one action) reported by verify()."""
    code: int
    name: str
    file: str
    offset: int
    message: str


class VerifyResult(NamedTuple):
    """What verify() found: ok is True when the store is clean."""
    ok: bool
    problems: List[Problem]
    accesses: int
    bytes: int
    segments: int
    repaired: int
    #: the most threads that checked segments at once (1: the calling
    #: thread alone; 0: no segment checked)
    threads: int = 0


#: The most threads verify() takes.
VERIFY_THREADS_MAX = 16


def verify(path: Union[str, os.PathLike], repair: bool = False,
           threads: int = 0) -> VerifyResult:
    """Reads every byte of a store and checks every checksum and invariant
    (mh_verify); with repair=True first removes what a crash left behind.
    threads: how many threads check the segments, 1 to VERIFY_THREADS_MAX
    (0: the library's choice, the processors online up to 8 for a store of
    two segments and 32 MiB or more); the problems are the same, in the
    same order, whatever the count.

    Returns a VerifyResult (problems found are not exceptions); raises
    InvalidArgumentError (threads out of range), NotFoundError,
    LockedError, InputOutputError, OutOfMemoryError.
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or \
            not 0 <= threads <= VERIFY_THREADS_MAX:
        raise InvalidArgumentError(
            detail="threads=%r: not a count in 0 .. %d" % (threads, VERIFY_THREADS_MAX))
    problems: List[Problem] = []

    def report(_ctx, p):  # called by the library, pointers valid only now
        c = p.contents
        if c.struct_size < ctypes.sizeof(c):  # an older library: fields absent
            problems.append(Problem(c.code, lib.mh_error_name(c.code).decode(), "", 0, ""))
            return
        problems.append(Problem(c.code, lib.mh_error_name(c.code).decode(),
                                (c.file or b"").decode("utf-8", "replace"), c.offset,
                                (c.message or b"").decode("utf-8", "replace")))

    res = mh_verify_result()
    res.struct_size = ctypes.sizeof(res)
    fn = REPORT_FN(report)
    flags = (1 if repair else 0) | (threads << 8)  # MH_VERIFY_THREADS(threads)
    rc = lib.mh_verify(os.fsencode(path), flags, fn, None, byref(res))
    if rc and rc != CorruptError.code:
        raise error(rc, "; ".join(p.message for p in problems))
    return VerifyResult(rc == 0, problems, res.accesses, res.bytes, res.segments, res.repaired,
                        res.threads)
