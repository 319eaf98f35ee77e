"""Shared fixtures of the memhist Python tests.

Environment:
  MEMHIST_LIBRARY       the libmemhist.so.1 under test (else the usual search)
  MEMHIST_BUILD_DIR     a CMake build of the repository (tools/memhist and
                        tests/lackey_victim), for the real-recording tests;
                        default: build/release or build/rel of the repository
  MEMHIST_REQUIRE_ALL=1 a test that would be skipped (no valgrind, no build,
                        no compiler) fails instead: CI sets it, so nothing
                        is silently left out there
  MEMHIST_TEST_NO_NUMPY=1  hide numpy and pandas (the core's fallback run)
"""
import os
import shutil
import subprocess
import sys

if os.environ.get("MEMHIST_TEST_NO_NUMPY") == "1":
    # None in sys.modules makes "import numpy" raise ImportError.
    for mod in ("numpy", "pandas"):
        sys.modules[mod] = None

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GOLDEN = os.path.join(REPO, "format", "golden")


def need(cond, why):
    """Skips the test when cond is false, or fails it under MEMHIST_REQUIRE_ALL=1."""
    if cond:
        return
    if os.environ.get("MEMHIST_REQUIRE_ALL") == "1":
        pytest.fail("required but unavailable: " + why)
    pytest.skip(why)


def build_dir():
    env = os.environ.get("MEMHIST_BUILD_DIR")
    if env:
        return env
    for name in ("build/release", "build/rel", "build"):
        d = os.path.join(REPO, name)
        if os.path.exists(os.path.join(d, "tools", "memhist")):
            return d
    return None


def parse_lackey(path):
    """The accesses of a lackey log, by the semantics of `memhist import
    --format lackey` (man page), written independently of the C parser:
    the k-th I line (0-based) starts transition k; L read, S write, M read
    then write; linear = physical = address; pc = the address of the last
    I line (none before the first)."""
    from memhist import Access
    out = []
    t, instrs, pc = 0, 0, 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("==") or line.startswith("--"):
                continue
            kind = line[0] if line[0] == "I" else line[1]
            addr_s, size_s = line[2:].strip().split(",")
            addr, size = int(addr_s, 16), int(size_s)
            if kind == "I":
                t, instrs, pc = instrs, instrs + 1, addr
                continue
            ops = {"L": (0,), "S": (1,), "M": (0, 1)}[kind]
            for op in ops:
                out.append(Access(len(out), t, addr, addr, pc, size, 0, op, 1,
                                  int(instrs > 0)))
    return out


@pytest.fixture(scope="session")
def lackey_store(tmp_path_factory):
    """(store path, accesses) of tests/lackey_victim recorded by valgrind
    lackey and imported with the memhist CLI; accesses parsed from the log."""
    bd = build_dir()
    need(bd is not None, "no CMake build of memhist (set MEMHIST_BUILD_DIR)")
    cli = os.path.join(bd, "tools", "memhist")
    victim = os.path.join(bd, "tests", "lackey_victim")
    need(os.path.exists(cli) and os.path.exists(victim),
         "%s lacks tools/memhist or tests/lackey_victim" % bd)
    need(shutil.which("valgrind") is not None, "valgrind is not installed")
    d = tmp_path_factory.mktemp("lackey")
    # valgrind and the CLI run without a sanitizer runtime preloaded for
    # this process (the ASan run of these tests preloads one).
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    log = str(d / "lackey.log")
    subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes",
                    "--log-file=" + log, victim], check=True, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = str(d / "victim.store")
    subprocess.run([cli, "import", "--format", "lackey", "--quiet", log, store],
                   check=True, env=env)
    return store, parse_lackey(log)
