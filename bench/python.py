"""bench/python.py: the Python binding of elog side by side with Python's own
sqlite3 module, in the same run (issue 36).

    python3 bench/python.py --dir DIR --ack-threads PROG [--quick | --full]
                            [--runs N] [--json FILE]

bench/run.sh runs it after the C suite, with the package installed into a
fresh venv from the tree and PROG the C program of the same workload
(bench/ack-threads.c).  The SQLite table is the C suite's,
log(offset INTEGER PRIMARY KEY, ts INTEGER, schema INTEGER, key BLOB,
value BLOB), journal_mode=WAL, synchronous=FULL.  Records have 16-byte keys
and 100-byte values.  Each figure is the median of RUNS runs, the
competitors taking turns, each run starting one further on.  The rows are
printed as bench/bench.c prints its own: elog's figure, the reference's,
the ratio elog/ref and the issue's target with PASS or MISS (a figure that
could not be measured is a MISS); rows without a target are context.
Every phase checks its result: the records acknowledged are in the log or
the table.  Targets are reported, never asserted: the exit status is 0
when the suite ran to the end.
"""

import argparse
import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

import elog

KEY_LEN = 16
SIZE = 100

QUICK = {"name": "quick", "runs": 3, "batch_n": 200_000, "ack_secs": 2.0, "read_n": 500_000,
         "follow_n": 300}
FULL = {"name": "full", "runs": 5, "batch_n": 1_000_000, "ack_secs": 5.0, "read_n": 2_000_000,
        "follow_n": 2000}

S = dict(QUICK)
npass = nmiss = 0
jsonf = None


def value(i):
    head = b'{"seq":%d,"type":"reading","pad":"' % i
    return head + b"x" * (SIZE - len(head) - 2) + b'"}'


def key(i):
    return b"key-%012d" % (i % 1000)


def fmt(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    a = abs(v)
    if a >= 1e7:
        return f"{v / 1e6:.1f}M"
    if a >= 1e6:
        return f"{v / 1e6:.2f}M"
    if a >= 1e5:
        return f"{v / 1e3:.0f}k"
    if a >= 1e4:
        return f"{v / 1e3:.1f}k"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 0.1 or a == 0:
        return f"{v:.2f}"
    return f"{v:.2g}"


def header():
    print("%-44s %-6s %9s  %-20s %9s %8s  %-16s %s" % ("workload", "unit", "elog", "reference",
                                                     "ref", "ratio", "target", ""))


def row(rid, workload, unit, e, refname, ref, goal=None, bound=None):
    """One row, as bench.c's row(): goal "ratio>=" bounds elog/ref."""
    global npass, nmiss
    ok_e = e is not None and not math.isnan(e)
    ok_r = ref is not None and not math.isnan(ref) and ref > 0
    ratio = e / ref if ok_e and ok_r else float("nan")
    q = "-" if math.isnan(ratio) else (f"{ratio:.2f}x" if ratio >= 0.1 else f"{ratio:.2g}x")
    target, verdict = "", ""
    if goal == "ratio>=":
        target = f"ratio >= {bound:g}"
        passed = not math.isnan(ratio) and ratio >= bound
        verdict = "PASS" if passed else "MISS"
        if passed:
            npass += 1
        else:
            nmiss += 1
    print("%-44s %-6s %9s  %-20s %9s %8s  %-16s %s" % (workload, unit, fmt(e), refname, fmt(ref),
                                                     q, target, verdict), flush=True)
    if jsonf:
        nn = (lambda x: None if x is None or math.isnan(x) else float(f"{x:.6g}"))
        jsonf.write(json.dumps({
            "id": rid, "workload": workload, "unit": unit, "elog": nn(e), "reference": refname,
            "ref": nn(ref), "ratio": nn(ratio), "target": target or None,
            "verdict": verdict or "INFO", "mode": S["name"], "runs": S["runs"]}) + "\n")
        jsonf.flush()


def progress(msg):
    print(f"bench python: {msg}", file=sys.stderr, flush=True)


def median(v):
    v = sorted(x for x in v if x is not None and not math.isnan(x))
    if not v:
        return float("nan")
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def rm(p):
    shutil.rmtree(p, ignore_errors=True)
    for ext in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(p + ext)
        except (FileNotFoundError, IsADirectoryError):
            pass


def sq_open(p):
    db = sqlite3.connect(p, isolation_level=None, check_same_thread=False, timeout=60)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE IF NOT EXISTS log (offset INTEGER PRIMARY KEY, ts INTEGER, "
               "schema INTEGER, key BLOB, value BLOB)")
    return db


def sq_count(p):
    db = sqlite3.connect(p)
    try:
        return db.execute("SELECT count(*) FROM log").fetchone()[0]
    finally:
        db.close()


def elog_count(p):
    return sum(1 for _ in elog.Log.open(p).read())


def ms():
    return int(time.time() * 1000)


# ---- batched append: flush every 1,000 ------------------------------------

def w_batch(workdir):
    n = S["batch_n"]
    batches = [[(key(i), value(i)) for i in range(b, min(b + 1000, n))] for b in range(0, n, 1000)]
    rows = [[(ms(), 0, k, v) for k, v in batch] for batch in batches]
    d, db = os.path.join(workdir, "batch.elog"), os.path.join(workdir, "batch.db")
    er, sr = [], []
    progress(f"batched append {n} x {SIZE} B, flush every 1000: {S['runs']} runs, elog, sqlite3")
    for run in range(S["runs"]):
        for turn in range(2):
            which = (turn + run) % 2
            rm(d), rm(db)
            if which == 0:
                t0 = time.perf_counter()
                with elog.Log.open(d, writer=True) as log:
                    for batch in batches:
                        log.append_many(batch)
                        log.flush()
                er.append(n / (time.perf_counter() - t0))
                assert elog.Log.open(d).durable_offset == n
            else:
                c = sq_open(db)
                t0 = time.perf_counter()
                for r in rows:
                    c.execute("BEGIN")
                    c.executemany("INSERT INTO log (ts, schema, key, value) VALUES (?, ?, ?, ?)", r)
                    c.execute("COMMIT")
                sr.append(n / (time.perf_counter() - t0))
                c.close()
                assert sq_count(db) == n
        progress(f"  run {run + 1}: elog {er[-1]:.0f} rec/s, sqlite3 {sr[-1]:.0f} rec/s")
    rm(d), rm(db)
    row("py_batch_100", "python: batched append, flush/1000, 100 B", "rec/s", median(er),
        "sqlite3 WAL FULL", median(sr), "ratio>=", 5)


# ---- durable acknowledgements: 1 and 8 threads ----------------------------

def run_threads(worker, threads, counts):
    """Run worker(k) in threads; the acknowledgements per second they
    counted in counts."""
    t0 = time.perf_counter()
    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / (time.perf_counter() - t0)


def elog_acks(d, threads, secs):
    keys = [key(i) for i in range(1000)]
    val = value(0)
    counts = [0] * threads
    with elog.Log.open(d, writer=True, shared=True) as log:
        deadline = time.perf_counter() + secs

        def worker(k):
            i = 0
            while time.perf_counter() < deadline:
                log.append(val, key=keys[i % 1000], sync=True)
                i += 1
            counts[k] = i

        rate = run_threads(worker, threads, counts)
    assert elog_count(d) == sum(counts)
    return rate


def sqlite_acks(db, threads, secs):
    sq_open(db).close()
    counts = [0] * threads
    val = value(0)
    deadline = time.perf_counter() + secs

    def worker(k):
        c = sq_open(db)
        i = 0
        while time.perf_counter() < deadline:
            c.execute("INSERT INTO log (ts, schema, key, value) VALUES (?, 0, ?, ?)",
                      (ms(), key(i), val))
            i += 1
        counts[k] = i
        c.close()

    rate = run_threads(worker, threads, counts)
    assert sq_count(db) == sum(counts)
    return rate


def c_acks(prog, d, threads, secs):
    out = subprocess.run([prog, d, str(threads), str(secs), str(SIZE)], capture_output=True,
                         text=True, check=True).stdout.split()
    assert elog_count(d) == int(out[1])
    return float(out[0])


def w_ack(workdir, prog):
    secs = S["ack_secs"]
    d, db = os.path.join(workdir, "ack.elog"), os.path.join(workdir, "ack.db")
    for threads in (1, 8):
        pr, sr, cr = [], [], []
        progress(f"durable ack, {threads} thread(s): {secs:g} s x {S['runs']} runs, "
                 "Python, sqlite3, C")
        for run in range(S["runs"]):
            for turn in range(3):
                which = (turn + run) % 3
                rm(d), rm(db)
                if which == 0:
                    pr.append(elog_acks(d, threads, secs))
                elif which == 1:
                    sr.append(sqlite_acks(db, threads, secs))
                else:
                    cr.append(c_acks(prog, d, threads, secs))
            progress(f"  run {run + 1}: Python {pr[-1]:.0f} acks/s, sqlite3 {sr[-1]:.0f}, "
                     f"C {cr[-1]:.0f}")
        rm(d), rm(db)
        p = median(pr)
        name = "1 thread" if threads == 1 else f"{threads} threads"
        row(f"py_ack{threads}", f"python: durable ack, {name}, 100 B", "acks/s", p,
            "sqlite3 WAL FULL" if threads == 1 else f"sqlite3 {threads} conns", median(sr))
        if threads == 8:
            row(f"py_ack{threads}_c", "  against C, the same workload", "acks/s", p,
                f"C {threads} threads", median(cr), "ratio>=", 0.8)
        else:
            row(f"py_ack{threads}_c", "  against C, the same workload", "acks/s", p,
                "C 1 thread", median(cr))


# ---- sequential read ------------------------------------------------------

def w_read(workdir):
    n = S["read_n"]
    d, db = os.path.join(workdir, "read.elog"), os.path.join(workdir, "read.db")
    rm(d), rm(db)
    progress(f"sequential read of {n} x {SIZE} B: building the log and the table")
    with elog.Log.open(d, writer=True) as log:
        for b in range(0, n, 10000):
            log.append_many((key(i), value(i)) for i in range(b, min(b + 10000, n)))
    c = sq_open(db)
    for b in range(0, n, 10000):
        c.execute("BEGIN")
        c.executemany("INSERT INTO log VALUES (?, ?, 0, ?, ?)",
                      ((i, ms(), key(i), value(i)) for i in range(b, min(b + 10000, n))))
        c.execute("COMMIT")
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    er, sr = [], []
    for run in range(S["runs"]):
        for turn in range(2):
            which = (turn + run) % 2
            total = got = 0
            if which == 0:
                t0 = time.perf_counter()
                for rec in elog.Log.open(d).read():
                    total += len(rec.value)
                    got += 1
                er.append(got / (time.perf_counter() - t0))
            else:
                c = sq_open(db)
                t0 = time.perf_counter()
                for r in c.execute("SELECT offset, ts, schema, key, value FROM log "
                                   "ORDER BY offset"):
                    total += len(r[4])
                    got += 1
                sr.append(got / (time.perf_counter() - t0))
                c.close()
            assert got == n and total == n * SIZE
        progress(f"  run {run + 1}: elog {er[-1]:.0f} rec/s, sqlite3 {sr[-1]:.0f} rec/s")
    rm(d), rm(db)
    row("py_read_100", "python: sequential read, 100 B", "rec/s", median(er),
        "sqlite3 SELECT", median(sr), "ratio>=", 3)


# ---- follow latency -------------------------------------------------------

FOLLOW_ELOG = """
import elog, sys, time
n = int(sys.argv[2])
out = []
print("ready", flush=True)
for rec in elog.Log.open(sys.argv[1]).read(follow=True, idle=30):
    out.append("%d %.9f" % (rec.offset, time.monotonic()))
    if len(out) == n:
        break
print("\\n".join(out))
"""

FOLLOW_SQLITE = """
import sqlite3, sys, time
n = int(sys.argv[2])
db = sqlite3.connect(sys.argv[1])
out = []
nxt = 0
print("ready", flush=True)
deadline = time.monotonic() + 60
while len(out) < n and time.monotonic() < deadline:
    any_ = False
    for off, v in db.execute("SELECT offset, value FROM log WHERE offset >= ? ORDER BY offset",
                             (nxt,)):
        out.append("%d %.9f" % (off, time.monotonic()))
        nxt = off + 1
        any_ = True
    if not any_:
        time.sleep(0.001)
print("\\n".join(out))
"""


def follow_run(workdir, use_sqlite):
    n = S["follow_n"]
    d, db = os.path.join(workdir, "follow.elog"), os.path.join(workdir, "follow.db")
    rm(d), rm(db)
    if use_sqlite:
        c = sq_open(db)
        p = subprocess.Popen([sys.executable, "-c", FOLLOW_SQLITE, db, str(n)],
                             stdout=subprocess.PIPE, text=True)
    else:
        log = elog.Log.open(d, writer=True)
        p = subprocess.Popen([sys.executable, "-c", FOLLOW_ELOG, d, str(n)],
                             stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline() == "ready\n"
    time.sleep(0.05)
    done = []
    for i in range(n):
        v = value(i)
        if use_sqlite:
            c.execute("INSERT INTO log VALUES (?, ?, 0, ?, ?)", (i, ms(), key(i), v))
        else:
            log.append(v, key=key(i))
            log.flush()
        done.append(time.monotonic())
        time.sleep(0.002)  # the follower goes back to waiting
    out, _ = p.communicate(timeout=120)
    if use_sqlite:
        c.close()
    else:
        log.close()
    got = {int(a): float(b) for a, b in (line.split() for line in out.splitlines())}
    assert len(got) == n, f"the follower received {len(got)} of {n}"
    lat = sorted(max(0.0, got[i] - done[i]) * 1e6 for i in range(n))
    rm(d), rm(db)
    return lat[n // 2], lat[min(n - 1, math.ceil(0.99 * n) - 1)]


def w_follow(workdir):
    e50, e99, s50, s99 = [], [], [], []
    progress(f"follow latency, {S['follow_n']} records: {S['runs']} runs, elog, sqlite3 polling 1 ms")
    for run in range(S["runs"]):
        for turn in range(2):
            if (turn + run) % 2 == 0:
                a, b = follow_run(workdir, False)
                e50.append(a), e99.append(b)
            else:
                a, b = follow_run(workdir, True)
                s50.append(a), s99.append(b)
        progress(f"  run {run + 1}: elog p50 {e50[-1]:.0f} us, sqlite3 p50 {s50[-1]:.0f} us")
    row("py_follow_p50", "python: follow latency p50", "us", median(e50),
        "sqlite3 poll 1 ms", median(s50))
    row("py_follow_p99", "  p99", "us", median(e99), "sqlite3 poll 1 ms", median(s99))


def main():
    global jsonf
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--ack-threads", required=True, help="the C program of the ack rows")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true")
    g.add_argument("--full", action="store_true")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.full:
        S.update(FULL)
    if a.runs:
        S["runs"] = a.runs
    if a.json:
        jsonf = sys.stdout if a.json == "-" else open(a.json, "a")
    workdir = os.path.join(a.dir, "python")
    os.makedirs(workdir, exist_ok=True)
    progress(f"{S['name']} sizes, elog {elog.__version__} on Python "
             f"{sys.version.split()[0]}, sqlite3 {sqlite3.sqlite_version}")
    print()
    header()
    w_batch(workdir)
    w_ack(workdir, a.ack_threads)
    w_read(workdir)
    w_follow(workdir)
    print(f"python rows: {npass} PASS, {nmiss} MISS")
    rm(workdir)


if __name__ == "__main__":
    main()
