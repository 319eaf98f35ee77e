"""Loading libmemhist and declaring its C interface with ctypes.

This module is the only place that knows the C layouts.  Every structure
mirrors src/memhist.h field for field; tests/test_abi.py compiles a small C
program against the installed header and compares every size and offset, so
a header change that is not mirrored here fails a test instead of corrupting
memory.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from ctypes import (POINTER, Structure, c_char, c_char_p, c_int, c_int32,
                    c_size_t, c_uint, c_uint8, c_uint32, c_uint64, c_void_p)
from typing import List

#: ABI major version this package is written for (first number of mh_version_string()).
ABI_MAJOR = 1
SONAME = "libmemhist.so.1"

u64 = c_uint64
u32 = c_uint32


class mh_access(Structure):
    _fields_ = [("id", u64), ("transition", u64), ("linear", u64),
                ("physical", u64), ("pc", u64), ("size", u32), ("stream", u32),
                ("op", c_uint8), ("has_linear", c_uint8), ("has_pc", c_uint8),
                ("reserved", c_uint8 * 5)]


class mh_query(Structure):
    _fields_ = [("struct_size", u32), ("start_kind", u32), ("direction", u32),
                ("ops", u32), ("start", u64), ("addr_first", u64),
                ("addr_last", u64), ("end_kind", u32), ("reserved", u32),
                ("end", u64),
                # since 1.2
                ("streams", POINTER(u32)), ("nstreams", u32), ("filter", u32),
                ("pc_first", u64), ("pc_last", u64), ("window", u64)]


class mh_writer_options(Structure):
    _fields_ = [("struct_size", u32), ("slice_accesses", u32),
                ("block_accesses", u32), ("chunk_min_accesses", u32),
                ("lz4_acceleration", c_int32), ("commit_accesses", u64),
                ("background", c_int32), ("reserved", c_int32),
                # since 1.2
                ("reorder_window", u64),
                # since 1.3
                ("id_map", u32), ("reserved2", u32),
                # since 1.4
                ("address_postings", u32), ("reserved3", u32),
                # since 1.6
                ("span_sets", u32), ("reserved4", u32)]


class mh_reader_options(Structure):
    _fields_ = [("struct_size", u32), ("reserved", u32), ("cache_bytes", u64)]


class mh_stats(Structure):
    _fields_ = [("struct_size", u32), ("accesses", u64), ("op_counts", u64 * 3),
                ("transition_first", u64), ("transition_last", u64),
                ("segments", u64), ("slices", u64), ("chunks", u64),
                ("blocks", u64), ("file_bytes", u64), ("compressed_bytes", u64),
                ("raw_bytes", u64)]


class mh_segment_info(Structure):
    _fields_ = [("struct_size", u32), ("seq", u64), ("file_name", c_char_p),
                ("version_major", u32), ("version_minor", u32),
                ("id_first", u64), ("accesses", u64), ("op_counts", u64 * 3),
                ("transition_first", u64), ("transition_last", u64),
                ("slices", u32), ("chunks", u32), ("blocks", u32),
                ("rows_per_block", u32), ("file_bytes", u64),
                ("compressed_bytes", u64), ("raw_bytes", u64),
                ("dict_bytes", u64), ("index_bytes", u64),
                # since 1.2
                ("streams", u32), ("windows", u32), ("summary_bytes", u64),
                ("has_pc", u32),
                # since 1.3
                ("idmap_bytes", u64), ("aset_bytes", u64),
                ("fine_summary_bytes", u64), ("apost_bytes", u64),
                # since 1.7
                ("span_bytes", u64),
                # since 1.9
                ("idtime_bytes", u64)]


class mh_stream_info(Structure):
    _fields_ = [("struct_size", u32), ("id", u32), ("kind", u32), ("parent", u32),
                ("pid", u64), ("tid", u64), ("cpu", u32), ("reserved", u32),
                ("name", c_char_p), ("accesses", u64), ("transition_first", u64),
                ("transition_last", u64)]


class mh_window_info(Structure):
    _fields_ = [("struct_size", u32), ("window", u64), ("id_first", u64),
                ("accesses", u64), ("transition_first", u64), ("transition_last", u64)]


class mh_problem(Structure):
    _fields_ = [("struct_size", u32), ("code", c_int), ("file", c_char_p),
                ("offset", u64), ("message", c_char_p)]


class mh_verify_result(Structure):
    _fields_ = [("struct_size", u32), ("problems", u64), ("accesses", u64),
                ("bytes", u64), ("segments", u64), ("repaired", u64),
                ("threads", u64)]


#: Every structure the package passes to the library, by its C name.
STRUCTS = {cls.__name__: cls for cls in (
    mh_access, mh_query, mh_writer_options, mh_reader_options, mh_stats,
    mh_segment_info, mh_problem, mh_verify_result, mh_stream_info,
    mh_window_info)}

REPORT_FN = ctypes.CFUNCTYPE(None, c_void_p, POINTER(mh_problem))

# (name, restype, argtypes); opaque handles are plain void pointers.
_PROTOTYPES = [
    ("mh_version_number", c_uint, []),
    ("mh_version_string", c_char_p, []),
    ("mh_strerror", c_char_p, [c_int]),
    ("mh_error_name", c_char_p, [c_int]),
    ("mh_op_name", c_char_p, [c_uint]),
    ("mh_writer_options_init_size", None, [POINTER(mh_writer_options), c_size_t]),
    ("mh_writer_open_ex", c_int, [c_char_p, c_uint, POINTER(mh_writer_options),
                                  POINTER(c_void_p), c_char_p, c_size_t]),
    ("mh_writer_set_meta", c_int, [c_void_p, c_char_p, c_char_p]),
    ("mh_writer_append", c_int, [c_void_p, POINTER(mh_access)]),
    ("mh_writer_append_batch", c_int, [c_void_p, c_void_p, c_size_t,
                                       POINTER(c_size_t)]),
    ("mh_writer_next_id", u64, [c_void_p]),
    ("mh_stream_info_init", None, [POINTER(mh_stream_info)]),
    ("mh_writer_stream_declare", c_int, [c_void_p, POINTER(mh_stream_info)]),
    ("mh_writer_stream_set_meta", c_int, [c_void_p, u32, c_char_p, c_char_p]),
    ("mh_writer_window_begin", c_int, [c_void_p, u64]),
    ("mh_writer_window_end", c_int, [c_void_p]),
    ("mh_writer_discard_from", c_int, [c_void_p, u64]),
    ("mh_writer_commit", c_int, [c_void_p]),
    ("mh_writer_committed", u64, [c_void_p]),
    ("mh_writer_close", c_int, [c_void_p]),
    ("mh_writer_abandon", None, [c_void_p]),
    ("mh_writer_errmsg", c_size_t, [c_void_p, c_char_p, c_size_t]),
    ("mh_reader_options_init", None, [POINTER(mh_reader_options)]),
    ("mh_reader_open_ex", c_int, [c_char_p, POINTER(mh_reader_options),
                                  POINTER(c_void_p), c_char_p, c_size_t]),
    ("mh_reader_close", None, [c_void_p]),
    ("mh_reader_errmsg", c_size_t, [c_void_p, c_char_p, c_size_t]),
    ("mh_reader_stats", c_int, [c_void_p, POINTER(mh_stats)]),
    ("mh_reader_meta_count", c_size_t, [c_void_p]),
    ("mh_reader_meta_get", c_int, [c_void_p, c_size_t, POINTER(c_char_p),
                                   POINTER(c_char_p)]),
    ("mh_reader_segment_count", c_size_t, [c_void_p]),
    ("mh_reader_segment_info", c_int, [c_void_p, c_size_t,
                                       POINTER(mh_segment_info)]),
    ("mh_reader_stream_count", c_size_t, [c_void_p]),
    ("mh_reader_stream_info", c_int, [c_void_p, c_size_t, POINTER(mh_stream_info)]),
    ("mh_reader_stream_meta_count", c_size_t, [c_void_p, c_size_t]),
    ("mh_reader_stream_meta_get", c_int, [c_void_p, c_size_t, c_size_t,
                                          POINTER(c_char_p), POINTER(c_char_p)]),
    ("mh_reader_window_count", c_size_t, [c_void_p]),
    ("mh_reader_window_info", c_int, [c_void_p, c_size_t, POINTER(mh_window_info)]),
    ("mh_query_init_size", None, [POINTER(mh_query), c_size_t]),
    # out is a void pointer so that a numpy buffer's address passes as is.
    ("mh_query_run", c_int, [c_void_p, POINTER(mh_query), c_void_p, c_size_t,
                             POINTER(c_size_t)]),
    ("mh_cursor_open", c_int, [c_void_p, POINTER(mh_query), POINTER(c_void_p)]),
    ("mh_cursor_next", c_int, [c_void_p, c_void_p, c_size_t, POINTER(c_size_t)]),
    ("mh_cursor_close", None, [c_void_p]),
    ("mh_cursor_errmsg", c_size_t, [c_void_p, c_char_p, c_size_t]),
    ("mh_verify", c_int, [c_char_p, c_uint, REPORT_FN, c_void_p,
                          POINTER(mh_verify_result)]),
]


def _candidates() -> List[str]:
    """Where the library is looked for, in order (see the package docstring)."""
    env = os.environ.get("MEMHIST_LIBRARY")
    if env:
        # An explicit choice is the only candidate: falling back silently
        # would test or use another library than the one asked for.
        return [env]
    out = []
    found = ctypes.util.find_library("memhist")
    if found:
        out.append(found)
    here = os.path.dirname(os.path.abspath(__file__))
    out.append(os.path.join(here, SONAME))
    for d in ("/usr/local/lib", "/usr/local/lib64", "/usr/lib",
              "/usr/lib64", "/usr/lib/%s-linux-gnu" % os.uname().machine,
              os.path.join(sys.prefix, "lib")):
        out.append(os.path.join(d, SONAME))
    return out


def load() -> ctypes.CDLL:
    """Loads libmemhist and declares its prototypes.

    Raises ImportError naming every place tried when no usable library is
    found, or when the one found has another ABI major version.
    """
    tried = []
    lib = None
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    if lib is None:
        raise ImportError(
            "memhist: cannot load the shared library %s; set MEMHIST_LIBRARY="
            "/path/to/%s. Tried: %s" % (SONAME, SONAME, "; ".join(tried)))
    try:
        for name, res, args in _PROTOTYPES:
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
    except AttributeError as e:
        raise ImportError("memhist: %s is not a compatible libmemhist (%s)"
                          % (path, e)) from None
    version = lib.mh_version_string().decode()
    major = int(version.split(".")[0])
    if major != ABI_MAJOR:
        raise ImportError("memhist: %s has ABI major version %d, this package "
                          "needs %d" % (path, major, ABI_MAJOR))
    lib._memhist_path = path
    return lib


lib = load()


ERRMSG_MAX = 512  # MH_ERRMSG_MAX: room for any detail line, NUL included


def errbuf() -> ctypes.Array:
    """A buffer for the error detail of an *_ex open call."""
    return ctypes.create_string_buffer(ERRMSG_MAX)


def errmsg(fn, handle) -> str:
    """The error detail a handle keeps about its last failure ('' if none)."""
    buf = ctypes.create_string_buffer(ERRMSG_MAX)
    fn(handle, buf, len(buf))
    return buf.value.decode("utf-8", "replace")
