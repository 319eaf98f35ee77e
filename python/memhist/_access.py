"""The access record in Python: a named tuple, and a numpy dtype that is
byte for byte the C struct mh_access (so numpy buffers go to C as they are).

numpy is optional: without it results are lists of Access tuples.
"""

import ctypes
from typing import Any, NamedTuple, Sequence, Union

from ._lib import mh_access

try:  # numpy is optional at the core; everything falls back to tuples.
    import numpy as np
except ImportError:  # pragma: no cover - exercised by the no-numpy test run
    np = None

OP_READ, OP_WRITE, OP_EXEC = 0, 1, 2
OPS_READ, OPS_WRITE, OPS_EXEC = 1, 2, 4
OP_NAMES = ("read", "write", "execute")


class Access(NamedTuple):
    """One memory access as returned by queries without numpy.

    op is 0 read, 1 write, 2 execute; linear is meaningful only when
    has_linear, pc only when has_pc.
    """
    id: int
    transition: int
    linear: int
    physical: int
    pc: int
    size: int
    stream: int
    op: int
    has_linear: int
    has_pc: int


FIELDS = Access._fields

if np is not None:
    #: numpy dtype identical to struct mh_access (56 bytes, C alignment).
    ACCESS_DTYPE = np.dtype({
        "names": list(FIELDS) + ["reserved"],
        "formats": ["u8"] * 5 + ["u4", "u4", "u1", "u1", "u1", ("u1", (5,))],
        "offsets": [getattr(mh_access, f).offset for f in FIELDS] +
                   [mh_access.reserved.offset],
        "itemsize": ctypes.sizeof(mh_access),
    })
else:
    ACCESS_DTYPE = None

#: What queries return: a numpy array of ACCESS_DTYPE, or a list of Access.
Accesses = Union[np.ndarray, Sequence[Access]] if np is not None else Sequence[Access]


def empty(n: int) -> Any:
    """A zeroed buffer for n accesses: numpy array or ctypes array."""
    if np is not None:
        return np.zeros(n, ACCESS_DTYPE)
    return (mh_access * n)()


def from_ctypes(buf: ctypes.Array, n: int) -> list:
    """The first n records of a ctypes mh_access array as Access tuples."""
    return [Access(a.id, a.transition, a.linear, a.physical, a.pc, a.size,
                   a.stream, a.op, a.has_linear, a.has_pc)
            for a in buf[:n]]


_PD_TYPES = dict(id="uint64", transition="uint64", linear="uint64", physical="uint64",
                 pc="uint64", size="uint32", stream="uint32", op="uint8",
                 has_linear="uint8", has_pc="uint8")


def to_pandas(accesses: Accesses):
    """A pandas DataFrame of query results (numpy array or Access list).

    Columns: the Access fields, with op as a categorical of
    "read"/"write"/"execute"; linear and pc are nullable (pd.NA where absent).
    """
    import pandas as pd
    if np is not None and isinstance(accesses, np.ndarray):
        cols = {f: accesses[f] for f in FIELDS}
    else:
        cols = {f: [getattr(a, f) for a in accesses] for f in FIELDS}
    df = pd.DataFrame({f: pd.Series(cols[f], dtype=_PD_TYPES[f]) for f in FIELDS})
    df["op"] = pd.Categorical.from_codes(df["op"].astype("int64"),
                                         categories=list(OP_NAMES))
    for f, flag in (("linear", "has_linear"), ("pc", "has_pc")):
        df[f] = df[f].astype("UInt64").mask(df[flag] == 0)
    return df
