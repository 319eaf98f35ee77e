"""Every ctypes structure of memhist._lib against the C header: a small C
program compiled against src/memhist.h prints each struct's size and each
field's offset, and both must equal ctypes' view.  A header change not
mirrored in _lib.py fails here instead of corrupting memory."""
import ctypes
import os
import shutil
import subprocess

import pytest

from conftest import REPO, need
from memhist import _lib
import memhist


def header_dir():
    return os.environ.get("MEMHIST_INCLUDE", os.path.join(REPO, "src"))


def c_layout(tmp_path):
    cc = shutil.which(os.environ.get("CC", "cc"))
    need(cc is not None, "no C compiler")
    need(os.path.exists(os.path.join(header_dir(), "memhist.h")), "memhist.h not found")
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "memhist.h"',
             "int main(void) {"]
    for name, cls in _lib.STRUCTS.items():
        lines.append('printf("%s %%zu\\n", sizeof(%s));' % (name, name))
        for f in cls._fields_:
            lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));'
                         % (name, f[0], name, f[0]))
    lines.append("return 0; }")
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines))
    exe = str(tmp_path / "layout")
    subprocess.run([cc, "-std=c11", "-I", header_dir(), str(src), "-o", exe], check=True)
    out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return dict(line.split() for line in out.splitlines())


def test_struct_layouts_match_the_header(tmp_path):
    want = c_layout(tmp_path)
    got = {}
    for name, cls in _lib.STRUCTS.items():
        got[name] = str(ctypes.sizeof(cls))
        for f in cls._fields_:
            got["%s.%s" % (name, f[0])] = str(getattr(cls, f[0]).offset)
    assert got == {k: want[k] for k in got}


def test_numpy_dtype_is_the_struct():
    np = memhist._access.np
    need(np is not None, "numpy hidden")
    dt = memhist.ACCESS_DTYPE
    assert dt.itemsize == ctypes.sizeof(_lib.mh_access) == 56
    for f, *_ in _lib.mh_access._fields_:
        assert dt.fields[f][1] == getattr(_lib.mh_access, f).offset


def test_error_codes_match_the_header():
    # The classes' codes are the header's MH_ERROR_LIST values, by name.
    text = open(os.path.join(header_dir(), "memhist.h")).read()
    for code, cls in memhist.errors.BY_CODE.items():
        name = _lib.lib.mh_error_name(code).decode()
        assert "X(%s, %d," % (name, code) in text


def test_loaded_library_version():
    assert memhist.library_version.split(".")[0] == "1"
    assert os.path.exists(memhist.library_path) or "/" not in memhist.library_path


def test_installed_package_is_tested():
    # CI installs the package and runs these tests from the venv: make sure
    # the installed copy, not the source tree, was imported.
    if os.environ.get("MEMHIST_EXPECT_INSTALLED") != "1":
        pytest.skip("MEMHIST_EXPECT_INSTALLED=1 not set (CI sets it)")
    src = os.path.join(REPO, "python", "memhist")
    assert not os.path.abspath(memhist.__file__).startswith(src + os.sep)
    assert "site-packages" in memhist.__file__


def test_missing_library_is_a_clear_import_error(tmp_path):
    import sys
    missing = str(tmp_path / "libmemhist.so.1")
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(memhist.__file__)))
    env = dict(os.environ, MEMHIST_LIBRARY=missing, PYTHONPATH=pkg_root)
    r = subprocess.run([sys.executable, "-c", "import memhist"], env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: memhist: cannot load")
    assert missing in last and "MEMHIST_LIBRARY" in last
