"""A failed fdatasync, which a healthy disk never gives: the shim of the CLI
tests (tests/cli/syncfault.c) makes it fail with EIO under a child
interpreter.  The flush raises, nothing of the batch is acknowledged, and
the writer refuses further work with WriterFailed and its next step."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import TREE
from elog import Log

SHIM = os.path.join(TREE, "tests", "cli", "syncfault.c")

CHILD = """
import elog, sys
log = elog.Log.open(sys.argv[1], writer=True)
log.append_many([b"a", b"b"])
try:
    log.flush()
except elog.ElogOSError as e:
    print("flush", e.errno, "nothing of this batch was acknowledged" in str(e))
try:
    log.append(b"c")
except elog.WriterFailed as e:
    print("append", type(e).__name__, "open it again" in str(e))
try:
    log.close()
except elog.WriterFailed as e:
    print("close", type(e).__name__)
"""


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None or not os.path.exists(SHIM),
                    reason="no C compiler or no tests/cli/syncfault.c")
def test_failed_sync(tmp_path):
    so = str(tmp_path / "syncfault.so")
    subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-fPIC", "-shared", "-O2", "-o", so,
                    SHIM, "-ldl"], check=True)
    logdir = str(tmp_path / "events")
    with Log.open(logdir, writer=True) as log:
        log.append(b"before", sync=True)
    env = dict(os.environ, ELOG_TEST_SYNC_FAULT="eio",
               LD_PRELOAD=(os.environ.get("LD_PRELOAD", "") + " " + so).strip())
    p = subprocess.run([sys.executable, "-c", CHILD, logdir], env=env, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["flush 5 True", "append WriterFailed True",
                                     "close WriterFailed"]
    # What was acknowledged is there; the next writer goes on.
    with Log.open(logdir, writer=True) as log:
        log.append(b"after", sync=True)
    values = [r.value for r in Log.open(logdir).read()]
    assert values[0] == b"before" and values[-1] == b"after"
    assert Log.open(logdir).verify().clean
