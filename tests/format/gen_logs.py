#!/usr/bin/env python3
"""gen_logs.py: make many logs with the real programs, for page_compare.py.

    gen_logs.py [--count N] [--seed S] [--bin DIR] [--fixtures DIR] OUTDIR

Makes N logs (default 300) in OUTDIR, as OUTDIR/NNNN-kind, each with a line
OUTDIR/NNNN-kind.how saying how it was made.  The kinds cycle through: clean
logs, keyed and unkeyed; compacted; retained; compaction killed at a step
(tests/crash's elog-compact-faulty) or by SIGKILL; writers killed mid-batch;
several writers at once; zstd with a trained dictionary; the format-1
fixture, read as it is and upgraded; and damage of every kind the format
names (bytes flipped, files truncated, segments deleted, copied, renamed,
mixed in from another log, a stray copy of the active segment, an index
removed or stale, watermark and start garbled), with or without a later
elog-verify --repair [--salvage] and more appends.  The random choices come
from --seed, so the same seed makes the same logs, but for what writers
running at once and SIGKILL timings decide.

The programs are taken from --bin (default $ELOG_BIN, else ./build).
"""

import argparse
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time

P = {}          # program name -> path
FIXTURES = None
HAVE_ZSTD = False


def run(args, stdin=b"", check=False, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    r = subprocess.run(args, input=stdin, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, env=e)
    if check and r.returncode != 0:
        raise RuntimeError("%s: status %d" % (" ".join(args), r.returncode))
    return r.returncode


def append(log, rng, n, keyed=None, opts=(), tombstones=0.0, sizes=(1, 60)):
    """Append n records; keyed: None (random), True, False."""
    if keyed is None:
        keyed = rng.random() < 0.5
    lines = []
    nkeys = rng.randint(1, 30)
    for _ in range(n):
        size = rng.randint(*sizes)
        value = "".join(rng.choice("abcdefghij0123456789 {}\":,")
                        for _ in range(size)).strip() or "x"
        if rng.random() < 0.2:
            value = '{"n":%d,"s":"%s"}' % (rng.randint(0, 10**6),
                                          value.replace('"', "").replace(
                                              "\\", ""))
        if keyed:
            key = "k%d" % rng.randint(0, nkeys)
            if rng.random() < tombstones:
                value = ""
            lines.append("%s %s" % (key, value))
        else:
            lines.append(value)
    data = ("\n".join(lines) + "\n").encode()
    args = [P["append"]] + list(opts)
    if keyed:
        args += ["-K", " "]
    if rng.random() < 0.3:
        args += ["--batch", str(rng.randint(1, 50))]
    if rng.random() < 0.2:
        args += ["-s", str(rng.randint(0, 65535))]
    return run(args + [log], data)


def new_log_opts(rng, cleanup=None, compress=False):
    opts = ["--segment-bytes", str(rng.choice([4096, 4096, 6144, 8192,
                                              16384]))]
    opts += ["--index-interval", str(rng.choice([64, 256, 1024, 4096]))]
    if cleanup:
        opts += ["--cleanup", cleanup]
    if compress:
        opts += ["--compress", "zstd:%d" % rng.randint(1, 9)]
    return opts


def segs(log):
    return sorted(n for n in os.listdir(log)
                  if len(n) == 24 and n.endswith(".log") and n[:20].isdigit())


def flip(path, rng, lo=0, hi=None):
    size = os.path.getsize(path)
    hi = size if hi is None else min(hi, size)
    if hi <= lo:
        return "nothing to flip"
    pos = rng.randrange(lo, hi)
    with open(path, "r+b") as f:
        f.seek(pos)
        b = f.read(1)
        f.seek(pos)
        f.write(bytes([b[0] ^ (1 << rng.randrange(8))]))
    return "flipped byte %d of %s" % (pos, os.path.basename(path))


def truncate(path, rng, lo=0):
    size = os.path.getsize(path)
    n = rng.randrange(lo, size) if size > lo else 0
    os.truncate(path, n)
    return "truncated %s to %d of %d" % (os.path.basename(path), n, size)


# -- the kinds --------------------------------------------------------------
def k_clean(log, rng):
    opts = new_log_opts(rng)
    for _ in range(rng.randint(1, 4)):
        append(log, rng, rng.randint(1, 200), None, opts)
    return "clean, appended in several runs"


def k_empty(log, rng):
    # a log made and nothing written, or one record
    r = rng.random()
    if r < 0.5:
        run([P["append"]] + new_log_opts(rng) + [log], b"")
        return "created with no record"
    append(log, rng, 1, None, new_log_opts(rng))
    return "one record"


def k_compacted(log, rng):
    opts = new_log_opts(rng, "compact")
    for _ in range(rng.randint(1, 4)):
        append(log, rng, rng.randint(50, 300), True, opts, tombstones=0.15)
        if rng.random() < 0.7:
            run([P["compact"], "--grace", rng.choice(["0", "1h"]), log])
    if rng.random() < 0.5:
        append(log, rng, rng.randint(1, 50), None, opts)
    return "keyed with tombstones, compacted between appends"


def k_retained(log, rng):
    opts = new_log_opts(rng, rng.choice([None, "compact"]))
    for _ in range(rng.randint(2, 4)):
        append(log, rng, rng.randint(50, 300), None, opts, tombstones=0.1)
    how = rng.choice(["bytes", "age", "compact+bytes"])
    if how == "age":
        run([P["retain"], "--max-age", "0", log])
    else:
        if "compact" in how:
            run([P["compact"], "--grace", "0", log])
        run([P["retain"], "--max-bytes", str(rng.randint(4096, 30000)), log])
    if rng.random() < 0.5:
        append(log, rng, rng.randint(1, 100), None, opts)
    return "retained by " + how


def k_compact_crash(log, rng):
    opts = new_log_opts(rng, "compact")
    for _ in range(rng.randint(2, 3)):
        append(log, rng, rng.randint(100, 300), True, opts, tombstones=0.2)
    faulty = P.get("faulty")
    if faulty and rng.random() < 0.8:
        step = rng.randint(1, 40)
        st = run([faulty, "--grace", "0", log],
                 env={"ELOG_MAINT_CRASH_AT": str(step)})
        how = "elog-compact crashed at step %d (status %d)" % (step, st)
    else:
        p = subprocess.Popen([P["compact"], "--grace", "0", log],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        time.sleep(rng.random() * 0.01)
        p.send_signal(signal.SIGKILL)
        p.wait()
        how = "elog-compact killed by SIGKILL (status %d)" % p.returncode
    if rng.random() < 0.3:
        append(log, rng, rng.randint(1, 50), True, opts)
        how += ", then appended"
    if rng.random() < 0.3:
        run([P["compact"], "--grace", "0", log])
        how += ", then compacted again"
    return how


def k_writer_killed(log, rng):
    opts = new_log_opts(rng)
    append(log, rng, rng.randint(10, 100), None, opts)
    data = b"".join(b"killed writer record %d\n" % i for i in range(20000))
    p = subprocess.Popen([P["append"], "--batch", str(rng.randint(1, 500)),
                          log], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        p.stdin.write(data[:rng.randint(1000, len(data))])
    except BrokenPipeError:
        pass
    time.sleep(rng.random() * 0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    how = "a writer killed mid-stream"
    if rng.random() < 0.5:
        append(log, rng, rng.randint(1, 30), None, opts)
        how += ", then another writer appended"
    return how


def k_concurrent(log, rng):
    opts = new_log_opts(rng)
    append(log, rng, 1, False, opts)
    procs = []
    n = rng.randint(2, 5)
    for w in range(n):
        data = b"".join(b"writer %d record %d\n" % (w, i)
                        for i in range(rng.randint(50, 400)))
        args = [P["append"], "--batch", str(rng.randint(1, 20)), log]
        if rng.random() < 0.5:
            args[1:1] = ["-k", "w%d" % w]
        p = subprocess.Popen(args, stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        procs.append((p, data))
    for p, data in procs:
        try:
            p.stdin.write(data)
            p.stdin.close()
        except BrokenPipeError:
            pass
    for p, _ in procs:
        p.wait()
    return "%d writers at once" % n


def k_zstd(log, rng):
    if not HAVE_ZSTD:
        return k_clean(log, rng)
    opts = new_log_opts(rng, compress=True)
    opts[1] = str(rng.choice([16384, 32768]))
    total = 0
    for _ in range(rng.randint(2, 4)):
        n = rng.randint(300, 700)
        append(log, rng, n, None, opts, sizes=(20, 120), tombstones=0.05)
        total += n
    how = "zstd, %d records" % total
    if rng.random() < 0.4:
        run([P["compact"], "--grace", "0", log])
        how += ", compact attempted"
    return how


def k_fixture(log, rng):
    # The fixture's values are compressed: a build without zstd refuses
    # them, as it should, where a reader with libzstd reads them.
    if not HAVE_ZSTD or not FIXTURES or \
            not os.path.isdir(os.path.join(FIXTURES, "zstd-log")):
        return k_clean(log, rng)
    shutil.rmtree(log, ignore_errors=True)
    shutil.copytree(os.path.join(FIXTURES, "zstd-log"), log)
    r = rng.random()
    if r < 0.3:
        return "the format-1 fixture as it is"
    if r < 0.7 and HAVE_ZSTD:
        append(log, rng, rng.randint(1, 300), None, sizes=(20, 100))
        return "the format-1 fixture, upgraded by an append"
    return damage(log, rng, "the format-1 fixture")


def donor(rng, tmp):
    """Another log, to take segments from."""
    d = os.path.join(tmp, "donor")
    shutil.rmtree(d, ignore_errors=True)
    append(d, rng, rng.randint(100, 400), None, ["--segment-bytes", "4096"])
    return d


def damage(log, rng, what):
    s = segs(log)
    if not s:
        return what + ", no segment to damage"
    tmp = os.path.dirname(log)
    kinds = ["flip-closed", "flip-active", "flip-header", "truncate-closed",
             "truncate-active", "delete-middle", "delete-first",
             "delete-last-closed", "delete-active", "copy-rename",
             "stray-active-higher", "stray-active-lower", "foreign-segment",
             "foreign-active", "rename-segment", "index-removed",
             "index-stale", "watermark-garbled", "start-garbled",
             "seal-flip", "mix-closed", "dup-segment"]
    kind = rng.choice(kinds)
    d = lambda n: os.path.join(log, n)
    closed, active = s[:-1], s[-1]
    how = what + ", " + kind + ": "
    if kind == "flip-closed" and closed:
        how += flip(d(rng.choice(closed)), rng, 32)
    elif kind == "flip-active":
        how += flip(d(active), rng, 32)
    elif kind == "flip-header":
        how += flip(d(rng.choice(s)), rng, 0, 32)
    elif kind == "truncate-closed" and closed:
        how += truncate(d(rng.choice(closed)), rng, 1)
    elif kind == "truncate-active":
        how += truncate(d(active), rng, 0)
    elif kind == "delete-middle" and len(closed) >= 2:
        n = rng.choice(closed[1:])
        os.unlink(d(n))
        how += "removed " + n
    elif kind == "delete-first" and closed:
        os.unlink(d(closed[0]))
        how += "removed " + closed[0]
    elif kind == "delete-last-closed" and closed:
        os.unlink(d(closed[-1]))
        how += "removed " + closed[-1]
    elif kind == "delete-active" and closed:
        os.unlink(d(active))
        how += "removed the active " + active
    elif kind in ("copy-rename", "stray-active-higher", "stray-active-lower",
                  "rename-segment", "dup-segment"):
        src = active if "active" in kind else rng.choice(s)
        base = int(src[:20])
        if kind == "stray-active-lower" and len(s) >= 2:
            lo, hi = int(s[-2][:20]), base
            nb = rng.randint(lo + 1, hi - 1) if hi - lo > 1 else base + 7
        elif kind == "dup-segment":
            nb = base + rng.randint(1, 3)
        else:
            nb = base + rng.randint(1, 5000)
        dst = "%020d.log" % nb
        if os.path.exists(d(dst)):
            how += "no free name"
        elif kind == "rename-segment":
            os.rename(d(src), d(dst))
            how += "renamed %s to %s" % (src, dst)
        else:
            shutil.copyfile(d(src), d(dst))
            how += "copied %s to %s" % (src, dst)
    elif kind in ("foreign-segment", "foreign-active", "mix-closed"):
        other = donor(rng, tmp)
        os_ = segs(other)
        src = os_[-1] if kind == "foreign-active" else rng.choice(os_)
        if kind == "mix-closed" and closed:
            dst = rng.choice(closed)
        elif kind == "foreign-active":
            dst = "%020d.log" % (int(active[:20]) + rng.randint(0, 3))
        else:
            dst = src
        shutil.copyfile(os.path.join(other, src), d(dst))
        how += "put the donor's %s as %s" % (src, dst)
    elif kind == "index-removed":
        idx = [n for n in os.listdir(log) if n.endswith(".idx")]
        if idx:
            n = rng.choice(idx)
            os.unlink(d(n))
            how += "removed " + n
    elif kind == "index-stale":
        idx = sorted(n for n in os.listdir(log) if n.endswith(".idx"))
        if len(idx) >= 2:
            a, b = rng.sample(idx, 2)
            shutil.copyfile(d(a), d(b))
            how += "copied %s over %s" % (a, b)
        elif idx:
            how += truncate(d(idx[0]), rng, 16)
    elif kind == "watermark-garbled" and os.path.exists(d("watermark")):
        how += flip(d("watermark"), rng, 0, 40)
    elif kind == "start-garbled":
        if os.path.exists(d("start")):
            how += flip(d("start"), rng, 0, 32)
    elif kind == "seal-flip" and closed:
        n = rng.choice(closed)
        size = os.path.getsize(d(n))
        how += flip(d(n), rng, max(size - 56, 0))
    else:
        how += "not applicable, left as it is"
    return how


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from page_reader import crc32c  # noqa: E402


def log_id(log):
    for line in open(os.path.join(log, "settings")):
        if line.startswith("id "):
            return bytes.fromhex(line[3:].strip())
    return bytes(16)


def seal_of(path):
    """(pos, next, end, id) of a segment's valid-looking seal, or None."""
    with open(path, "rb") as f:
        data = f.read()
    n = len(data) - 56
    if n < 32 or data[n:n + 8] != b"ELOGSEAL":
        return None
    nxt, end, pos, ident = struct.unpack_from("<QQQ16s", data, n + 8)
    return n, nxt, end, ident


def write_seal(path, pos, nxt, end, ident, append=False):
    body = b"ELOGSEAL" + struct.pack("<QQQ16s", nxt, end, pos, ident)
    seal = body + struct.pack("<II", crc32c(body), 0)
    with open(path, "r+b") as f:
        f.seek(pos)
        f.write(seal)
        f.truncate(pos + 56)


def records_of(path):
    """[(pos, length, offset)] of the records before any seal."""
    with open(path, "rb") as f:
        data = f.read()
    out, pos = [], 32
    while pos + 8 <= len(data):
        length, = struct.unpack_from("<I", data, pos)
        if not 24 <= length <= 1 << 24 or pos + 4 + length > len(data):
            break
        out.append((pos, length, struct.unpack_from("<Q", data, pos + 8)[0]))
        pos += 4 + length
    return out


def craft(log, rng, what):
    """Damage that keeps every checksum right: what only the rules of the
    page catch."""
    s = segs(log)
    d = lambda n: os.path.join(log, n)
    closed, active = s[:-1], s[-1]
    sealed = [n for n in closed if seal_of(d(n))]
    kinds = ["seal-foreign", "seal-end-low", "seal-next-high",
             "seal-next-low", "seal-pos", "unsealed-at-record",
             "header-foreign", "header-base", "header-version",
             "watermark-ahead", "watermark-behind", "watermark-short-len",
             "start-high", "start-foreign", "start-inside", "start-version",
             "salvaged-end", "salvaged-middle", "salvaged-malformed",
             "settings-unknown", "settings-corrupt", "empty-active-file",
             "tmp-files", "segment-dir", "record-offset-low"]
    kind = rng.choice(kinds)
    how = what + ", " + kind + ": "
    ident = log_id(log)
    if kind.startswith("seal-") and sealed:
        n = rng.choice(sealed)
        pos, nxt, end, sid = seal_of(d(n))
        if kind == "seal-foreign":
            sid = bytes(rng.randrange(256) for _ in range(16))
        elif kind == "seal-end-low":
            recs = records_of(d(n))
            end = recs[-1][2] if recs else int(n[:20])
        elif kind == "seal-next-high":
            nxt += rng.randint(1, 50)
        elif kind == "seal-next-low":
            nxt = max(end, nxt - rng.randint(1, 50))
        elif kind == "seal-pos":
            pos_field = pos + rng.choice([-1, 1, 56])
            body = b"ELOGSEAL" + struct.pack("<QQQ16s", nxt, end, pos_field,
                                             sid)
            with open(d(n), "r+b") as f:
                f.seek(pos)
                f.write(body + struct.pack("<II", crc32c(body), 0))
            return how + "seal of %s names pos %d" % (n, pos_field)
        write_seal(d(n), pos, nxt, end, sid)
        return how + "seal of %s now next %d end %d" % (n, nxt, end)
    if kind == "unsealed-at-record" and closed:
        n = rng.choice(closed)
        recs = records_of(d(n))
        if recs:
            k = rng.randrange(len(recs))
            os.truncate(d(n), recs[k][0] + 4 + recs[k][1])
            return how + "%s cut after its record %d" % (n, recs[k][2])
    if kind in ("header-foreign", "header-base", "header-version"):
        n = rng.choice(s)
        with open(d(n), "r+b") as f:
            h = bytearray(f.read(32))
            if len(h) == 32:
                if kind == "header-foreign":
                    struct.pack_into("<I", h, 8, 2)
                    h[28:32] = bytes(rng.randrange(1, 256) for _ in range(4))
                elif kind == "header-base":
                    struct.pack_into("<Q", h, 16, int(n[:20]) + 1)
                else:
                    struct.pack_into("<I", h, 8, 3)
                tag = bytes(h[28:32]) if h[28:32] != bytes(4) else b""
                struct.pack_into("<I", h, 24, crc32c(bytes(h[:24]) + tag))
                f.seek(0)
                f.write(h)
                return how + "header of " + n
    if kind.startswith("watermark-") and os.path.exists(d("watermark")):
        with open(d("watermark"), "rb") as f:
            w = bytearray(f.read())
        if len(w) == 40:
            e, a, l = struct.unpack_from("<QQQ", w, 8)
            if kind == "watermark-ahead":
                e += rng.randint(1, 20)
            elif kind == "watermark-behind":
                e = max(a, e - rng.randint(1, 20))
            else:
                l = max(0, l - rng.randint(1, 40))
            struct.pack_into("<QQQ", w, 8, e, a, l)
            struct.pack_into("<I", w, 32, crc32c(bytes(w[:32])))
            with open(d("watermark"), "wb") as f:
                f.write(w)
            return how + "watermark now %d %d %d" % (e, a, l)
    if kind.startswith("start-"):
        first = int(s[0][:20])
        tag = ident[:4]
        version = 1
        if kind == "start-high":
            first = int(active[:20]) + rng.randint(1, 10)
        elif kind == "start-foreign":
            tag = bytes(rng.randrange(1, 256) for _ in range(4))
            first = int(rng.choice(s)[:20])
        elif kind == "start-inside" and len(s) > 1:
            first = int(s[1][:20]) + rng.randint(1, 5)
        elif kind == "start-version":
            version = 2
        body = b"ELOGSTA\n" + struct.pack("<I4sQ", version, tag, first)
        with open(d("start"), "wb") as f:
            f.write(body + struct.pack("<II", crc32c(body), 0))
        return how + "start now %d (version %d)" % (first, version)
    if kind.startswith("salvaged-"):
        recs = [r for n in s for r in records_of(d(n))]
        if recs:
            if kind == "salvaged-end":
                f_ = recs[-1][2] - rng.randint(0, 3)
                l_ = recs[-1][2] + rng.randint(0, 5)
            else:
                f_ = rng.choice(recs)[2]
                l_ = f_ + rng.randint(0, 10)
            text = "elog-salvaged 1\n%d %d 1764385200000\n" % (f_, l_)
            if kind == "salvaged-malformed":
                text += "garbage\n"
            with open(d("salvaged"), "w") as f:
                f.write(text)
            return how + text.replace("\n", "|")
    if kind == "settings-unknown":
        with open(d("settings"), "a") as f:
            f.write(rng.choice(["cleanup never\n", "compression lz4\n",
                                "retain_consumers keep\n",
                                "newkey whatever\n"]))
        return how + "a line added to settings"
    if kind == "settings-corrupt":
        with open(d("settings"), "a") as f:
            f.write(rng.choice(["nospace\n", "segment_bytes 12\n",
                                "# comment\n\n"]))
        return how + "a line added to settings"
    if kind == "empty-active-file":
        nb = "%020d.log" % (int(active[:20]) + rng.randint(0, 1) *
                            rng.randint(1, 9))
        if not os.path.exists(d(nb)):
            open(d(nb), "w").close()
            return how + "empty " + nb
    if kind == "tmp-files":
        for n in ("%s.new" % active, "settings.tmp.1.1", "%s.compact" % s[0],
                  "%s.cut-1" % active, "00000000000000000000.idx.compact",
                  "1234.log", "%020d.log~" % 7):
            with open(d(n), "wb") as f:
                f.write(b"ELOGSEG\n" + bytes(rng.randrange(256)
                                             for _ in range(40)))
        return how + "temporary and stray files"
    if kind == "segment-dir":
        nb = "%020d.log" % (int(active[:20]) - rng.randint(1, 9))
        if not os.path.exists(d(nb)):
            os.mkdir(d(nb))
            return how + "a directory named " + nb
    if kind == "record-offset-low":
        n = rng.choice(s)
        recs = records_of(d(n))
        if len(recs) >= 2:
            k = rng.randrange(1, len(recs))
            pos, length, off = recs[k]
            with open(d(n), "r+b") as f:
                f.seek(pos + 8)
                rec = bytearray(f.read(length - 4))
                struct.pack_into("<Q", rec, 0, recs[k - 1][2])
                f.seek(pos + 4)
                f.write(struct.pack("<I", crc32c(bytes(rec))) + rec)
            return how + "record %d of %s takes the previous offset" % (
                off, n)
    return how + "not applicable, left as it is"


def harmed(log, rng, harm, compact, repair, after):
    """A log made, maybe compacted, harmed, maybe repaired, then maybe
    appended to or run maintenance on: the thresholds of each choice."""
    opts = new_log_opts(rng, rng.choice([None, "compact"]))
    for _ in range(rng.randint(1, 3)):
        append(log, rng, rng.randint(100, 400), None, opts, tombstones=0.1)
    if rng.random() < compact:
        run([P["compact"], "--grace", "0", log])
    how = harm(log, rng, "made")
    r = rng.random()
    if r < repair[0]:
        st = run([P["verify"], "--repair", log])
        how += "; elog-verify --repair (status %d)" % st
    elif r < repair[1]:
        st = run([P["verify"], "--repair", "--salvage", log])
        how += "; elog-verify --repair --salvage (status %d)" % st
    r = rng.random()
    if r < after[0]:
        st = append(log, rng, rng.randint(1, 50), None, opts)
        how += "; appended (status %d)" % st
    elif r < after[1]:
        st = run([P["compact"], "--grace", "0", log])
        how += "; elog-compact (status %d)" % st
    elif r < after[2]:
        st = run([P["retain"], "--max-bytes", "8192", log])
        how += "; elog-retain (status %d)" % st
    return how


def k_crafted(log, rng):
    return harmed(log, rng, craft, 0.3, (0.2, 0.35), (0.2, 0.3, 0.4))


def k_zstd_damaged(log, rng):
    if not HAVE_ZSTD:
        return k_damaged(log, rng)
    how = k_zstd(log, rng)
    d = lambda n: os.path.join(log, n)
    dicts = [n for n in os.listdir(log) if n.startswith("dict.")]
    r = rng.random()
    if r < 0.3 and dicts:
        n = rng.choice(dicts)
        if rng.random() < 0.5:
            os.unlink(d(n))
            how += ", removed " + n
        else:
            how += ", " + flip(d(n), rng)
    elif r < 0.6:
        # a value's tag changed, its record's CRC made right again
        cands = []
        for n in segs(log):
            for pos, length, off in records_of(d(n)):
                klen = struct.unpack_from("<H", open(d(n), "rb").read(
                    pos + 28)[pos + 26:pos + 28])[0]
                if 24 + klen < length:
                    cands.append((n, pos, length, klen))
        if cands:
            n, pos, length, klen = rng.choice(cands)
            with open(d(n), "r+b") as f:
                f.seek(pos + 8)
                rec = bytearray(f.read(length - 4))
                rec[20 + klen] = rng.choice([1, 2, 7, 0x28])
                f.seek(pos + 4)
                f.write(struct.pack("<I", crc32c(bytes(rec))) + rec)
            how += ", the value tag of the record at byte %d of %s" % (pos, n)
    else:
        how = damage(log, rng, how)
    if rng.random() < 0.3:
        st = run([P["verify"], "--repair", "--salvage", log])
        how += "; elog-verify --repair --salvage (status %d)" % st
    return how


def k_damaged(log, rng):
    return harmed(log, rng, damage, 0.2, (0.25, 0.5), (0.25, 0.4, 0.5))


KINDS = [("clean", k_clean), ("empty", k_empty), ("compacted", k_compacted),
         ("retained", k_retained), ("compactcrash", k_compact_crash),
         ("writerkilled", k_writer_killed), ("concurrent", k_concurrent),
         ("zstd", k_zstd), ("fixture", k_fixture), ("damaged", k_damaged),
         ("damaged", k_damaged), ("crafted", k_crafted),
         ("crafted", k_crafted), ("zstddamaged", k_zstd_damaged)]


def main():
    global FIXTURES, HAVE_ZSTD
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=34)
    ap.add_argument("--bin", default=os.environ.get("ELOG_BIN", "build"))
    ap.add_argument("--fixtures", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
    ap.add_argument("outdir")
    a = ap.parse_args()
    for p in ("append", "cat", "compact", "retain", "verify"):
        P[p] = os.path.join(a.bin, "elog-" + p)
        if not os.access(P[p], os.X_OK):
            sys.exit("gen_logs.py: %s: not found (give --bin)" % P[p])
    faulty = os.path.join(a.bin, "tests", "elog-compact-faulty")
    if os.access(faulty, os.X_OK):
        P["faulty"] = faulty
    FIXTURES = a.fixtures
    t = os.path.join(a.outdir, "probe")
    shutil.rmtree(t, ignore_errors=True)
    HAVE_ZSTD = run([P["append"], "--compress", "zstd", t], b"x\n") == 0
    shutil.rmtree(t, ignore_errors=True)
    os.makedirs(a.outdir, exist_ok=True)
    for i in range(a.count):
        name, fn = KINDS[i % len(KINDS)]
        rng = random.Random("%d/%d" % (a.seed, i))
        log = os.path.join(a.outdir, "%04d-%s" % (i, name))
        shutil.rmtree(log, ignore_errors=True)
        how = fn(log, rng)
        with open(log + ".how", "w") as f:
            f.write(how + "\n")
    shutil.rmtree(os.path.join(a.outdir, "donor"), ignore_errors=True)


if __name__ == "__main__":
    main()
