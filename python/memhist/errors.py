"""Exceptions: one class per MH_E* code of src/memhist.h, all under Error.

Every exception carries the library's code (.code, a negative int), its
symbolic name (.name, "MH_ECORRUPT") and the library's error detail
(.detail: which file, which offset, which check; '' when the library gave
none).  str(e) reads "MH_ECORRUPT: corrupt data: <detail>".
"""
from __future__ import annotations

from typing import Dict, Optional, Type

from ._lib import lib


class Error(Exception):
    """Base class of every memhist failure.

    Attributes:
        code: the MH_E* code (negative int).
        name: its symbolic name, e.g. "MH_ECHECKSUM".
        detail: what the library said about this failure ('' if nothing).
    """

    code: int = 0

    def __init__(self, code: Optional[int] = None, detail: str = "") -> None:
        if code is None:
            code = type(self).code
        self.code = code
        self.name = lib.mh_error_name(code).decode()
        self.text = lib.mh_strerror(code).decode()
        self.detail = detail
        msg = "%s: %s" % (self.name, self.text)
        if detail:
            msg += ": " + detail
        super().__init__(msg)


class InputOutputError(Error):
    """MH_EIO: the operating system failed a read or write."""
    code = -1


class OutOfMemoryError(Error, MemoryError):
    """MH_ENOMEM: an allocation failed."""
    code = -2


class InvalidArgumentError(Error, ValueError):
    """MH_EINVAL: an argument is out of its domain (also a ValueError)."""
    code = -3


class NotStoreError(Error):
    """MH_ENOTSTORE: the path is not a memhist store or file."""
    code = -4


class VersionError(Error):
    """MH_EVERSION: unsupported format version, feature or byte order."""
    code = -5


class CorruptError(Error):
    """MH_ECORRUPT: a structure breaks an invariant of the format."""
    code = -6


class ChecksumError(Error):
    """MH_ECHECKSUM: stored bytes do not match their checksum."""
    code = -7


class TruncatedError(Error):
    """MH_ETRUNCATED: a file ends before its structures do."""
    code = -8


class LockedError(Error):
    """MH_ELOCKED: another writer holds the store."""
    code = -9


class ExistsError(Error):
    """MH_EEXIST: the store to create already exists."""
    code = -10


class NotFoundError(Error):
    """MH_ENOENT: no store at that path."""
    code = -11


class CommittedError(Error):
    """MH_ECOMMITTED: the accesses to discard are already committed."""
    code = -12


class OrderError(Error):
    """MH_EORDER: an appended transition is smaller than the previous one."""
    code = -13


class NoSpaceError(Error):
    """MH_ENOSPC: no space left on the device, or file size limit reached."""
    code = -14


class StateError(Error):
    """MH_ESTATE: the writer failed earlier; only close or abandon remain."""
    code = -15


class NoStreamError(Error):
    """MH_ENOSTREAM: an access or call names a stream that was not declared."""
    code = -16


class LateError(Error):
    """MH_ELATE: an access older than the merge's reorder window allows."""
    code = -17


class NoSuchError(Error, LookupError):
    """MH_ENOTFOUND: no such stream or window in the store (also a LookupError)."""
    code = -18


#: Exception class of every code, by code.
BY_CODE: Dict[int, Type[Error]] = {
    cls.code: cls for cls in Error.__subclasses__()}


def error(code: int, detail: str = "") -> Error:
    """The exception for code (Error itself for a code this package does not know)."""
    cls = BY_CODE.get(code, Error)
    return cls(code, detail)
