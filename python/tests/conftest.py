"""Shared fixtures of the elog package's tests.

The tests import elog as installed (tests/run.sh installs it into a fresh
venv), never from src/.  The programs (elog-cat, elog-append), for the
tests that compare with them, are found in ELOG_BIN, else in the tree's
build/ or build-nozstd/; those tests are skipped when there are none.
"""

import os
import subprocess
import sys

import pytest

TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _bin_dir():
    for d in (os.environ.get("ELOG_BIN"), os.path.join(TREE, "build"),
              os.path.join(TREE, "build-nozstd")):
        if d and os.access(os.path.join(d, "elog-cat"), os.X_OK):
            return d
    return None


@pytest.fixture
def logdir(tmp_path):
    """A path for a log that does not exist yet."""
    return str(tmp_path / "events")


@pytest.fixture
def elog_bin():
    d = _bin_dir()
    if d is None:
        pytest.skip("no elog programs built (make, or ELOG_BIN=DIR)")
    return d


def run_python(code, *args, **kw):
    """Run code in a new interpreter (the one running the tests)."""
    return subprocess.run([sys.executable, "-c", code, *args], **kw)


def python_proc(code, *args, **kw):
    return subprocess.Popen([sys.executable, "-c", code, *args], **kw)


def sigint_default():
    """preexec_fn of a child that Ctrl-C must reach: a job that a shell
    started in the background (scripts/test.sh's lanes) ignores SIGINT,
    its children inherit that, and Python then installs no handler."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_sleeping(pid, timeout=60):
    """Wait until process pid sleeps (state S) at three looks in a row, 50
    ms apart: a follower then waits for records in the library, where
    SIGINT ends its follow cleanly, not in Python code between two."""
    import time

    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline and seen < 3:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        seen = seen + 1 if state == "S" else 0
        time.sleep(0.05)
    return seen >= 3
