"""Threads share one writing Log: offsets stay right, and the durable
appends of several threads share their syncs (group commit), which they can
only if elog_sync() runs with the GIL released."""

import shutil
import subprocess
import sys
import threading

import pytest

from elog import Log


@pytest.mark.parametrize("shared", [False, True])
def test_threads_offsets(logdir, shared):
    with Log.open(logdir, writer=True, shared=shared) as log:
        got = {}
        lock = threading.Lock()

        def worker(k):
            for i in range(50):
                v = b"%d-%d" % (k, i)
                off = log.append(v, sync=(i % 2 == 0) or not shared)
                if off is not None:
                    with lock:
                        got[off] = v
            log.flush()

        ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert log.durable_offset == 400
    recs = {r.offset: r.value for r in Log.open(logdir).read()}
    assert len(recs) == 400 and sorted(recs) == list(range(400))
    assert len(got) == (400 if not shared else 200)
    for off, v in got.items():
        assert recs[off] == v


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_threads_share_syncs(logdir):
    code = (
        "import elog, sys, threading\n"
        "log = elog.Log.open(sys.argv[1], writer=True)\n"
        "def worker(k):\n"
        "    for i in range(40):\n"
        "        log.append(b'%d-%d' % (k, i), sync=True)\n"
        "ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]\n"
        "[t.start() for t in ts]\n"
        "[t.join() for t in ts]\n"
        "log.close()\n"
    )
    trace = logdir + ".strace"
    subprocess.run(["strace", "-f", "-qq", "-e", "trace=fdatasync", "-o", trace,
                    sys.executable, "-c", code, logdir], check=True)
    with open(trace) as f:
        syncs = sum(1 for line in f if "fdatasync(" in line)
    acks = 8 * 40
    assert Log.open(logdir).durable_offset == acks
    # One sync per acknowledgement would be 320 (and more: the log's
    # other files); shared syncs are far fewer.
    assert 0 < syncs < acks * 3 // 4, f"{syncs} fdatasync calls for {acks} acknowledgements"


def test_close_waits_for_other_threads(logdir):
    log = Log.open(logdir, writer=True)
    errors = []

    def worker():
        try:
            for i in range(2000):
                log.append(b"x", sync=(i % 100 == 0))
        except ValueError as e:  # closed under it: refused, not a crash
            errors.append(e)

    ts = [threading.Thread(target=worker) for _ in range(4)]
    for t in ts:
        t.start()
    log.close()
    for t in ts:
        t.join()
    assert all("closed" in str(e) for e in errors)
    n = sum(1 for _ in Log.open(logdir).read())
    assert n == Log.open(logdir).durable_offset


def test_reader_is_one_thread_at_a_time(logdir):
    import time

    with Log.open(logdir, writer=True) as log:
        log.append(b"a")
    rd = Log.open(logdir).read(follow=True, idle=5)
    assert next(rd).value == b"a"
    inside = threading.Event()
    t = threading.Thread(target=lambda: (inside.set(), list(rd)))
    t.start()
    inside.wait()
    time.sleep(1)  # the thread waits in the follow, the GIL released
    with pytest.raises(RuntimeError, match="one thread"):
        next(rd)
    with pytest.raises(RuntimeError, match="in use"):
        rd.close()
    t.join()
    assert rd.closed
