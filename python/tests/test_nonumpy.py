"""The core without numpy: the round-trip, error and stream tests run again in a
child interpreter where numpy and pandas cannot be imported."""
import os
import subprocess
import sys

import memhist
from conftest import HERE


def test_core_without_numpy():
    # The child tests the same memhist as this process (installed or not).
    pkg_root = os.path.dirname(os.path.dirname(os.path.abspath(memhist.__file__)))
    env = dict(os.environ, MEMHIST_TEST_NO_NUMPY="1", PYTHONPATH=pkg_root)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        os.path.join(HERE, "test_roundtrip.py"),
                        os.path.join(HERE, "test_errors.py"),
                        os.path.join(HERE, "test_streams.py")],
                       env=env, capture_output=True, text=True, cwd=HERE)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " passed" in r.stdout and "failed" not in r.stdout
