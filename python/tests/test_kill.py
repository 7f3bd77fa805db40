"""Kill tests of the binding: the issue's sketch as a SQLite consumer killed
with SIGKILL at random points (every record applied exactly once), a writer
killed mid-batch (nothing acknowledged lost), and a follower beside
compaction and retention."""

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from conftest import sigint_default, wait_sleeping
from elog import Log

SEED = int(os.environ.get("ELOG_PY_SEED", random.randrange(1 << 30)))


@pytest.fixture
def rng():
    print(f"seed {SEED} (ELOG_PY_SEED={SEED} draws the same kills)")
    return random.Random(SEED)


# The consumer: the sketch, its six lines as written, with what
# they need around them (payload, db, cursor, apply) and a print for the
# test.  Each run appends one record of its own, as the sketch does, then
# applies every record after its cursor in one SQLite transaction each.
SKETCH_CONSUMER = '''
import json, os, sqlite3, sys
from elog import Log

os.chdir(sys.argv[1])
payload = json.dumps({"doc": 42, "run": int(sys.argv[2])}).encode()
db = sqlite3.connect("consumer.db")
db.execute("CREATE TABLE IF NOT EXISTS cursor (off INTEGER)")
db.execute("CREATE TABLE IF NOT EXISTS applied (off INTEGER PRIMARY KEY, n INTEGER, value BLOB)")
with db:
    if db.execute("SELECT count(*) FROM cursor").fetchone()[0] == 0:
        db.execute("INSERT INTO cursor VALUES (-1)")
cursor = db.execute("SELECT off FROM cursor").fetchone()[0]


def apply(rec, db):
    db.execute("INSERT INTO applied VALUES (?, 1, ?) "
               "ON CONFLICT(off) DO UPDATE SET n = n + 1", (rec.offset, rec.value))


log = Log.open("events/", writer=True)        # a second writer gets an error
off = log.append(key=b"doc:42", value=payload)
log.flush()                                   # one fsync; durable_offset catches up
for rec in Log.open("events/").read(from_offset=cursor + 1, follow=True):
    with db:                                  # the consumer's own SQLite transaction
        apply(rec, db)
        db.execute("UPDATE cursor SET off = ?", (rec.offset,))
print("ended", flush=True)
'''


def db_cursor(path):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            return db.execute("SELECT off FROM cursor").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return None


def test_sketch_sqlite_consumer_killed(tmp_path, rng):
    work = str(tmp_path)
    prog = os.path.join(work, "consumer.py")
    with open(prog, "w") as f:
        f.write(SKETCH_CONSUMER)
    events = os.path.join(work, "events")
    sent = 0
    kills = 0
    for run in range(14):
        # Between runs, a producer of its own appends a batch (the
        # consumer holds the exclusive writer while it runs).
        with Log.open(events, writer=True) as log:
            log.append_many(json.dumps({"i": sent + k}).encode() for k in range(120))
            sent += 120
        p = subprocess.Popen([sys.executable, prog, work, str(run)])
        time.sleep(rng.uniform(0.05, 1.2))
        if p.poll() is None:
            p.kill()
            kills += 1
        p.wait()
    # The last run catches up, its own record included; Ctrl-C then ends
    # its follow cleanly.
    before = Log.open(events).durable_offset
    p = subprocess.Popen([sys.executable, prog, work, "99"], stdout=subprocess.PIPE, text=True,
                         preexec_fn=sigint_default)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        end = Log.open(events).durable_offset
        if end > before and db_cursor(os.path.join(work, "consumer.db")) == end - 1:
            break
        time.sleep(0.1)
    assert wait_sleeping(p.pid)  # from its last commit into the wait for more
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0 and out == "ended\n"
    assert kills >= 5

    recs = {r.offset: r.value for r in Log.open(events).read()}
    db = sqlite3.connect(os.path.join(work, "consumer.db"))
    rows = db.execute("SELECT off, n, value FROM applied ORDER BY off").fetchall()
    assert [r[0] for r in rows] == sorted(recs) == list(range(len(recs)))
    assert all(n == 1 for _, n, _ in rows), [r for r in rows if r[1] != 1]
    assert all(recs[off] == value for off, _, value in rows)
    # Every record the producer sent is there, each once.
    sent_back = sorted(json.loads(v)["i"] for v in recs.values() if b'"i"' in v)
    assert sent_back == list(range(sent))


WRITER = '''
import elog, os, sys, threading
path, mode = sys.argv[1], sys.argv[2]
tag = os.getpid()
if mode == "batch":
    # The exclusive writer: append_many batches, an acknowledgement after
    # each flush.
    log = elog.Log.open(path, writer=True)
    i = 0
    while True:
        n = 1 + i % 300
        r = log.append_many(b"%d:%d" % (tag, i + k) for k in range(n))
        log.flush()
        print("ack", r.start, r.stop, tag, i, ".", flush=True)
        i += n
else:
    # A shared writer, four threads appending durably, one at a time each.
    log = elog.Log.open(path, writer=True, shared=True)
    out = threading.Lock()
    def worker(k):
        i = 0
        while True:
            v = b"%d:%d:%d" % (tag, k, i)
            off = log.append(v, sync=True)
            with out:
                print("one", off, v.decode(), ".", flush=True)
            i += 1
    for k in range(4):
        threading.Thread(target=worker, args=(k,), daemon=True).start()
    threading.Event().wait()
'''


def test_writer_killed_mid_batch_loses_nothing_acked(logdir, rng):
    acked = {}
    for run in range(16):
        mode = "batch" if run % 2 == 0 else "threads"
        p = subprocess.Popen([sys.executable, "-c", WRITER, logdir, mode],
                             stdout=subprocess.PIPE, text=True)
        # Killed at a random moment after its first acknowledgement.
        lines = [p.stdout.readline()]
        reader = threading.Thread(target=lambda: lines.extend(p.stdout))
        reader.start()
        time.sleep(rng.uniform(0, 0.4))
        p.kill()
        p.wait()
        reader.join()
        for line in lines:
            f = line.split()
            if f[-1:] != ["."]:
                continue  # cut short by the kill: the last line at most
            if f[0] == "ack":
                start, stop, tag, i = map(int, f[1:5])
                for k, off in enumerate(range(start, stop)):
                    acked[off] = b"%d:%d" % (tag, i + k)
            elif f[0] == "one":
                acked[int(f[1])] = f[2].encode()
    assert len(acked) > 100
    seen = set()
    last = -1
    recs = {}
    for r in Log.open(logdir).read(strict=True):
        assert r.offset > last  # no offset twice, in order
        last = r.offset
        recs[r.offset] = r.value
        seen.add(r.value)
    lost = [off for off, v in acked.items() if recs.get(off) != v]
    assert not lost, f"{len(lost)} acknowledged records lost or changed, first {lost[:5]}"
    assert len(seen) == len(recs)  # no record written twice
    assert Log.open(logdir).verify().clean


FOLLOWER = '''
import elog, json, sys, warnings
warnings.simplefilter("ignore", elog.GapWarning)
rd = elog.Log.open(sys.argv[1]).read(follow=True, idle=120)
with open(sys.argv[2], "w") as out:
    for rec in rd:
        out.write("%d %s %s\\n" % (rec.offset, rec.key.decode(), rec.value.decode()))
        if rec.value == b"END":
            break
    out.write("gaps " + json.dumps(rd.gaps) + "\\n")
'''


def test_follower_survives_compaction_and_retention(tmp_path):
    logdir = str(tmp_path / "events")
    got = str(tmp_path / "followed")
    log = Log.open(logdir, writer=True, segment_bytes=4096, cleanup="compact")
    follower = subprocess.Popen([sys.executable, "-c", FOLLOWER, logdir, got])
    written = {}
    done = threading.Event()
    stats = {"rewritten": 0, "removed": 0, "runs": 0}
    errors = []

    def maintain():
        m = Log.open(logdir)
        try:
            while not done.is_set():
                c = m.compact(grace_ms=0, wait=5)
                stats["rewritten"] += c.segments_rewritten
                r = m.retain(max_bytes=12 * 1024, wait=5)
                stats["removed"] += r.segments
                stats["runs"] += 1
        except Exception as e:  # noqa: BLE001 -- reported by the test
            errors.append(e)

    t = threading.Thread(target=maintain)
    t.start()
    for i in range(4000):
        key = "k%d" % (i % 300)
        v = "v%d" % i
        written[log.append(v, key=key)] = (key, v)
        if i % 40 == 39:
            log.flush()
            time.sleep(0.002)
    # Maintenance goes on a while after the last write, under the follower.
    time.sleep(0.5)
    done.set()
    t.join()
    written[log.append("END", key="end")] = ("end", "END")
    log.close()
    assert follower.wait(timeout=300) == 0
    assert not errors, errors
    assert stats["rewritten"] > 0 and stats["removed"] > 0, stats

    with open(got) as f:
        lines = f.read().splitlines()
    gaps = json.loads(lines.pop()[len("gaps "):])
    last = -1
    seen = set()
    for line in lines:
        off, key, v = line.split(" ")
        off = int(off)
        assert off > last
        last = off
        assert written[off] == (key, v)
        seen.add(off)
    assert lines[-1].endswith(" END")
    # What the follower did not see was removed by retention (a gap it was
    # told of) or by compaction (a newer record of its key came after).
    newest = {}
    for off, (key, _) in written.items():
        newest[key] = max(newest.get(key, -1), off)
    for off, (key, _) in written.items():
        if off in seen:
            continue
        in_gap = any(a <= off <= b for a, b, _ in gaps)
        assert in_gap or newest[key] > off, f"offset {off} ({key}) vanished"
    assert Log.open(logdir).verify().clean
