#!/usr/bin/env python3
"""soak_check.py: judge what soak.sh left in its directory.

  soak_check.py --dir T --kills K --runs LAST [--writers N]
                                   check everything, print the summary or
                                   the violations
  soak_check.py --last-offset FILE the offset of the last whole record in a
                                   follower's output
  soak_check.py --sample-watermark WM OUT STOP
                                   read the watermark WM every millisecond
                                   until the file STOP exists, writing each
                                   new valid value to OUT

The watermark's samples must never decrease, the log's final end must be
at or above every one, and every offset of the active segment below the
last one must be in the final log (retention and compaction touch only
closed segments).  elog-verify --repair, run beside the writers on the
healthy log, must exit 0 (or 3, the log busy).  A writer may fail only
with ELOG_FAILED's documented reasons (LOCK changed under it, or its
unacknowledged records cut): counted, never a loss.

The truth is what the generator sent: w/R.sent holds the lines of writer run
R (a superset of what the writer read), w/R.ack the offsets it printed, the
j-th for the j-th line.  A line is "key|value", or a value alone.  Runs were
made by --writers concurrent lanes, so the runs' records interleave in the
log: a run's offsets increase in its input order, but they need not be
consecutive, and one run's need not all lie above an earlier run's.

Every offset that was acknowledged, or printed by the follower or the
consumer, is "known durable": the final log must hold it with exactly the
bytes sent, unless compaction (a newer record of its key is known, or it is
a tombstone, removed at once with --grace 0s) or retention (it is below the
log's first segment) accounts for its absence.  No offset may be
acknowledged twice, and no sent line may show up at two offsets.  A record
seen anywhere (final log, follower, consumer) must be a line some run sent:
a value names its run and line; a tombstone, whose value is empty, is the
line acknowledged at its offset, or else one of the tombstones of its key
that were sent and never acknowledged (at most one offset each).  The
offsets of one run's records, wherever seen, increase with its line
numbers.
"""

import base64
import bisect
import json
import os
import re
import struct
import sys
import time

GAP = re.compile(r"^elog-cat: .*: offsets \d+-\d+ were removed by retention$")
# What elog-cat -g says, once, of a consumer that has committed nothing yet.
NEW_CONSUMER = re.compile(r'^elog-cat: .*: consumer "soak" has committed nothing: '
                          r"a new consumer, reading from the beginning of the log$")
IDENT = re.compile(rb'^\{"r":(\d+),"i":(\d+),')
SANITIZER = re.compile(r"Sanitizer|runtime error:|LeakSanitizer")
# What a writer may fail with (status 5) beside the soak's LOCK rewrite,
# its repairs and its kills (a writer killed in its sync leaves a failed
# sync record: the next writer cuts back, and a writer whose records went
# and that cannot write them again fails; elog(5), LOCK; elog-append(1)):
# nothing it acknowledged is at stake.
EXPECTED_FAILURE = re.compile(r"LOCK was removed or replaced|were removed before they were durable")


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC_TABLE = _crc_table()


def decode_watermark(b):
    """(durable_end, segment_base, segment_bytes) of a 40-byte watermark,
    or None when it is not a whole valid one (a read that raced with a
    write, elog(5))."""
    if len(b) != 40 or b[:8] != b"ELOGWMK\n":
        return None
    end, base, nbytes, crc = struct.unpack("<QQQI", b[8:36])
    if crc32c(b[:32]) != crc:
        return None
    return end, base, nbytes


def sample_watermark(path, out, stop):
    """Every millisecond, until stop exists: read the watermark; each valid
    value that differs from the last goes to out as 't end base bytes'."""
    last = None
    n = 0
    with open(out, "w") as f:
        while True:
            # Checked before a read, so that a sampler started late (its
            # python slow to start on a busy machine) still reads once.
            done = n % 100 == 0 and os.path.exists(stop)
            n += 1
            try:
                fd = os.open(path, os.O_RDONLY)
                try:
                    b = os.pread(fd, 64, 0)
                finally:
                    os.close(fd)
            except OSError:
                b = b""
            v = decode_watermark(b)
            if v is not None and v != last:
                f.write("%.3f %d %d %d\n" % (time.time(), v[0], v[1], v[2]))
                f.flush()
                last = v
            if done:
                break
            time.sleep(0.001)
    return 0


def parse_dump(data):
    """Records of elog-cat -F '%o\\t%K\\t%S\\t%k%s\\n' output: a list of
    (offset, key or None, value).  A record cut short at the end (a
    follower killed while writing) is left out."""
    out = []
    pos = 0
    n = len(data)
    while pos < n:
        t1 = data.find(b"\t", pos)
        if t1 < 0:
            break
        t2 = data.find(b"\t", t1 + 1)
        if t2 < 0:
            break
        t3 = data.find(b"\t", t2 + 1)
        if t3 < 0:
            break
        try:
            off = int(data[pos:t1])
            klen = int(data[t1 + 1:t2])
            vlen = int(data[t2 + 1:t3])
        except ValueError:
            raise ValueError("bad record header at byte %d: %r" % (pos, data[pos:t3 + 1][:80]))
        end = t3 + 1 + klen + vlen
        if end >= n:
            break  # no room for the newline: cut short
        if data[end:end + 1] != b"\n":
            raise ValueError("record at byte %d does not end with a newline" % pos)
        key = data[t3 + 1:t3 + 1 + klen] if klen else None
        out.append((off, key, data[t3 + 1 + klen:end]))
        pos = end + 1
    return out


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return b""


def read_text(path):
    return read_bytes(path).decode("utf-8", "replace")


def whole_lines(path):
    """The lines of a file that end with a newline, without it."""
    data = read_bytes(path)
    lines = data.split(b"\n")
    return lines[:-1]  # the last piece is empty or cut short


def split_line(line):
    """(key, value) of an input line under elog-append -K '|'."""
    i = line.find(b"|")
    if i > 0:
        return line[:i], line[i + 1:]
    return None, line


def show(key, value):
    if key is None:
        b = value
    else:
        b = key + b"|" + value
    s = b.decode("utf-8", "backslashreplace")
    if len(s) > 160:
        s = s[:160] + "..."
    return repr(s)


class Checker:
    def __init__(self, d, kills, last_run, writers=1):
        self.d = d
        self.kills = kills
        self.last_run = last_run
        self.writers = writers
        self.violations = []
        self.lost = 0
        self.reused = 0
        self.duplicated = 0

    def bad(self, offset, expected, found, what):
        if isinstance(found, str) and found.startswith("status 124"):
            found = "no exit within the soak's time limit (hung?), " + found
        self.violations.append((offset, expected, found, what))

    def p(self, *parts):
        return os.path.join(self.d, *parts)

    # -- the writer runs --------------------------------------------------

    def load_writers(self):
        self.sent = {}
        self.acks = {}
        self.known = {}      # offset -> (run, line, source)
        self.placed = {}     # (run, line) -> offset, for lines that name themselves
        self.tombs = {}      # key -> [(run, line)] of tombstones sent, never acknowledged
        self.tomb_at = {}    # offset -> (run, line) given to an unacknowledged tombstone
        self.tomb_used = {}  # key -> how many of tombs[key] tomb_at has given out
        self.killed = 0
        self.expected_failures = 0
        self.acked = 0
        self.interleaved = 0  # runs whose acknowledged offsets have gaps
        owner = {}
        runs = {}
        last_acked = -1
        for ln in read_text(self.p("w", "runs")).splitlines():
            f = ln.split()
            runs[int(f[0])] = int(f[1])
        for r in range(0, self.last_run + 1):
            if r not in runs:
                self.bad("-", "writer run %d" % r, "no record of it", "writer")
                continue
            rc = runs[r]
            err = read_text(self.p("w", "%d.err" % r)).strip()
            clean = r == 0 or r == self.last_run
            if clean and rc != 0:
                self.bad("-", "clean writer run %d exits 0" % r, "status %d: %s" % (rc, err), "writer")
            if not clean:
                if rc == 137:
                    self.killed += 1
                elif rc == 5 and EXPECTED_FAILURE.search(err):
                    self.expected_failures += 1
                elif rc != 0:
                    self.bad("-", "writer run %d killed (137)" % r, "status %d: %s" % (rc, err), "writer")
            self.sent[r] = whole_lines(self.p("w", "%d.sent" % r))
            acks = []
            for a in whole_lines(self.p("w", "%d.ack" % r)):
                try:
                    acks.append(int(a))
                except ValueError:
                    self.bad("-", "an offset", repr(a), "writer run %d printed" % r)
            self.acks[r] = acks
            if clean and len(acks) != len(self.sent[r]):
                self.bad("-", "%d offsets from clean run %d" % (len(self.sent[r]), r),
                         "%d" % len(acks), "writer")
            if len(acks) > len(self.sent[r]):
                self.bad(acks[len(self.sent[r])], "no offset: run %d sent %d lines" % (r, len(self.sent[r])),
                         "%d offsets printed" % len(acks), "writer")
                acks = acks[:len(self.sent[r])]
            # Other writers' batches may come between two of this run's
            # batches, so its offsets only have to increase.
            prev = -1
            for j, o in enumerate(acks):
                if o <= prev:
                    self.bad(o, "an offset above %d (run %d line %d)" % (prev, r, j - 1),
                             "%d (run %d line %d)" % (o, r, j), "acknowledged offsets of one run not increasing")
                prev = max(prev, o)
                if o in owner:
                    self.reused += 1
                    self.bad(o, "acknowledged once (run %d line %d)" % owner[o],
                             "acknowledged again by run %d line %d" % (r, j), "reused offset")
                    continue
                owner[o] = (r, j)
                self.known[o] = (r, j, "acknowledged by run %d" % r)
                if IDENT.match(split_line(self.sent[r][j])[1]):
                    self.placed[(r, j)] = o
                self.acked += 1
            if acks and acks[-1] - acks[0] != len(acks) - 1:
                self.interleaved += 1
                if self.writers == 1:
                    self.bad(acks[-1], "%d (run %d starts at %d, %d offsets)" %
                             (acks[0] + len(acks) - 1, r, acks[0], len(acks)), "%d" % acks[-1],
                             "offsets of one run not consecutive with one writer lane")
            if self.writers == 1 and acks:
                # One lane: the runs wrote one after the other.
                if acks[0] <= last_acked:
                    self.bad(acks[0], "run %d to start above %d, where the run before ended" % (r, last_acked),
                             "%d" % acks[0], "acknowledged offsets not increasing with one writer lane")
                last_acked = max(last_acked, acks[-1])
            for i in range(len(acks), len(self.sent[r])):
                k, v = split_line(self.sent[r][i])
                if k is not None and v == b"":
                    self.tombs.setdefault(k, []).append((r, i))

    def line(self, r, i):
        s = self.sent.get(r)
        if s is None or i < 0 or i >= len(s):
            return None
        return s[i]

    # -- telling which sent line a record is -------------------------------

    def identify(self, off, key, value, what):
        """(run, line) of the sent line that a record with these bytes at
        this offset is, or None.  Values name their run and line.  A
        tombstone (an empty value) names nothing; the acknowledged ones
        are known by their offset before this is asked.  Any other is
        taken for one of the tombstones of its key that some run sent and
        never acknowledged (its writer was killed after the write, before
        it printed): each of them may be at one offset at most."""
        m = IDENT.match(value)
        if m:
            r, i = int(m.group(1)), int(m.group(2))
            ln = self.line(r, i)
            if ln is None or split_line(ln) != (key, value):
                return None
            return r, i
        if key is not None and value == b"":
            who = self.tomb_at.get(off)
            if who is not None:
                return who if split_line(self.line(*who))[0] == key else None
            cands = self.tombs.get(key, [])
            if not cands:
                return None
            used = self.tomb_used.get(key, 0)
            if used >= len(cands):
                self.duplicated += 1
                self.bad(off, "at most %d offsets for the %d unacknowledged tombstones of %s, at %s" %
                         (len(cands), len(cands), show(key, b""),
                          sorted(o for o, w in self.tomb_at.items() if w in cands)),
                         "one more", what + ": tombstone duplicated")
                who = cands[-1]
            else:
                who = cands[used]
                self.tomb_used[key] = used + 1
            self.tomb_at[off] = who
            return who
        return None

    def place(self, r, i, off, what):
        """Line i of run r was seen at off: it must be at no other."""
        was = self.placed.get((r, i))
        if was is None:
            self.placed[(r, i)] = off
        elif was != off:
            self.duplicated += 1
            self.bad(off, "run %d line %d once, at %d (%s)" % (r, i, was, self.known.get(was, (0, 0, "?"))[2]),
                     "again at %d" % off, what + ": record duplicated")

    def check_run_order(self):
        """The records of one run, wherever seen, are at offsets that
        increase with their line numbers (elog-append keeps input order)."""
        per_run = {}
        for (r, i), o in self.placed.items():
            per_run.setdefault(r, []).append((i, o))
        for r, lines in sorted(per_run.items()):
            lines.sort()
            for (i1, o1), (i2, o2) in zip(lines, lines[1:]):
                if o2 <= o1:
                    self.bad(o2, "run %d line %d above its line %d (offset %d)" % (r, i2, i1, o1),
                             "%d" % o2, "records of one run out of input order")

    def observe(self, off, key, value, what):
        """A record seen at off with these bytes by `what`: it must be the
        line sent for that offset; it is known durable from now on."""
        exp = self.known.get(off)
        if exp is not None:
            r, i, src = exp
            ln = self.line(r, i)
            ek, ev = split_line(ln)
            if (ek, ev) != (key, value):
                who = self.identify(off, key, value, what)
                if who is not None:
                    self.reused += 1
                    kind = "offset reused for run %d line %d" % who
                else:
                    self.lost += 1
                    kind = "record changed"
                self.bad(off, show(ek, ev) + " (run %d line %d, %s)" % (r, i, src),
                         show(key, value), what + ": " + kind)
            return
        who = self.identify(off, key, value, what)
        if who is None:
            self.bad(off, "a line that was sent", show(key, value), what + ": unknown record")
            return
        if off not in self.tomb_at:
            self.place(who[0], who[1], off, what)
        self.known[off] = (who[0], who[1], what)

    # -- the final log -----------------------------------------------------

    def load_final(self):
        rc = read_text(self.p("verify.rc")).strip()
        if rc != "0":
            self.bad("-", "elog-verify exits 0", "status %s: %s" % (rc, read_text(self.p("verify.out")).strip()),
                     "final verify")
        rc = read_text(self.p("final.rc")).strip()
        err = read_text(self.p("final.err")).strip()
        if rc != "0" or err:
            self.bad("-", "elog-cat of the log exits 0 quietly", "status %s: %s" % (rc, err), "final read")
        self.final = parse_dump(read_bytes(self.p("final.dump")))
        self.final_offs = [o for o, _, _ in self.final]
        self.final_map = {}
        prev = -1
        for o, k, v in self.final:
            if o in self.final_map:
                self.reused += 1
                self.bad(o, "each offset once", "twice in the log", "final log")
            elif o <= prev:
                self.bad(o, "an offset above %d" % prev, "%d" % o, "final log out of order")
            self.final_map[o] = (k, v)
            prev = max(prev, o)
        self.log_start = None
        self.active_base = None
        for ln in read_text(self.p("segments.json")).splitlines():
            s = json.loads(ln)
            if self.log_start is None:
                self.log_start = s["base"]
            if s.get("active"):
                self.active_base = s["base"]
        if self.log_start is None:
            self.bad("-", "segments", "elog-verify -l listed none: " + read_text(self.p("segments.err")),
                     "final log")
            self.log_start = 0

    # -- the follower ------------------------------------------------------

    def load_follower(self):
        self.followed = []
        runs = []
        for ln in read_text(self.p("f", "runs")).splitlines():
            f = ln.split()
            runs.append((int(f[0]), f[1], int(f[2])))
        for n, sig, rc in runs:
            want = 0 if sig == "TERM" else 137
            if rc != want and not (sig == "KILL" and rc == 0):
                self.bad("-", "follower %d to exit %d after SIG%s" % (n, want, sig),
                         "status %d: %s" % (rc, read_text(self.p("f", "%d.err" % n)).strip()), "follower")
            for ln in read_text(self.p("f", "%d.err" % n)).splitlines():
                if not GAP.match(ln):
                    self.bad("-", "no message but gaps", ln, "follower %d stderr" % n)
            try:
                recs = parse_dump(read_bytes(self.p("f", "%d.out" % n)))
            except ValueError as e:
                self.bad("-", "follower output", str(e), "follower %d" % n)
                continue
            for o, k, v in recs:
                self.followed.append((o, k, v, "follower %d" % n))
        stuck = read_text(self.p("f", "stuck")).strip()
        if stuck:
            self.bad("-", "the follower reaches the end", stuck, "follower")
        prev = -1
        for o, k, v, what in self.followed:
            if o <= prev:
                self.bad(o, "an offset above %d" % prev, "%d" % o, what + ": offsets not increasing")
            prev = max(prev, o)

    def check_stream(self, offs, after, what):
        """offs, a reader's offsets in order, after it started just above
        `after`: no record the final log holds may have been skipped."""
        lo = after
        for o in offs:
            a = bisect.bisect_right(self.final_offs, lo)
            b = bisect.bisect_left(self.final_offs, o)
            for x in self.final_offs[a:b]:
                self.bad(x, "printed, between %d and %d" % (lo, o), "skipped, but the log holds it",
                         what + ": record skipped")
            lo = max(lo, o)
        return lo

    # -- the consumer ------------------------------------------------------

    def load_consumer(self):
        self.consumed = []   # (offset, obj, batch)
        self.batches = []    # (batch, committed before, offsets)
        self.commits = 0
        committed = None
        for ln in read_text(self.p("c", "runs")).splitlines():
            f = ln.split()
            n, rc, last, mode, commit, crc = int(f[0]), int(f[1]), f[2], f[3], f[4], f[5]
            err = read_text(self.p("c", "%d.err" % n))
            if rc != 0:
                self.bad("-", "elog-cat -g soak exits 0", "status %d: %s" % (rc, err.strip()),
                         "consumer batch %d" % n)
            for e in err.splitlines():
                if not GAP.match(e) and not (committed is None and NEW_CONSUMER.match(e)):
                    self.bad("-", "no message but gaps", e, "consumer batch %d stderr" % n)
            offs = []
            for jl in whole_lines(self.p("c", "%d.json" % n)):
                try:
                    obj = json.loads(jl)
                    o = obj["offset"]
                except (ValueError, KeyError) as e:
                    self.bad("-", "a JSON record", repr(jl[:160]), "consumer batch %d: %s" % (n, e))
                    continue
                offs.append(o)
                self.consumed.append((o, obj, "consumer batch %d" % n))
            self.batches.append((n, committed, offs))
            if offs and committed is not None and offs[0] <= committed:
                self.bad(offs[0], "a record above the committed offset %d" % committed, "%d" % offs[0],
                         "consumer batch %d" % n)
            if crc != "-":
                if crc != "0":
                    self.bad(commit, "commit taken", "status %s: %s" % (crc, read_text(self.p("c", "%d.cerr" % n)).strip()),
                             "consumer batch %d commit (%s)" % (n, mode))
                else:
                    committed = int(commit)
                    self.commits += 1
        self.committed = committed

    def json_matches(self, obj, key, value):
        if key is None:
            if obj.get("key", 0) is not None or "key_b64" in obj:
                return False
        else:
            try:
                if obj.get("key") != key.decode("utf-8"):
                    return False
            except UnicodeDecodeError:
                if obj.get("key_b64") != base64.b64encode(key).decode():
                    return False
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            return "value" not in obj and obj.get("value_b64") == base64.b64encode(value).decode()
        if "value" not in obj:
            return False
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, (dict, list)):
            return obj["value"] == parsed and not isinstance(obj["value"], str)
        return obj["value"] == text

    def check_consumed(self):
        for o, obj, what in self.consumed:
            exp = self.known.get(o)
            if exp is None:
                # Not acknowledged, not followed: find its line by its bytes,
                # or by the run and line an embedded JSON value names.
                v = obj.get("value")
                r, i = -1, -1
                named = False
                if isinstance(v, dict) and isinstance(v.get("r"), int) and isinstance(v.get("i"), int):
                    r, i = v["r"], v["i"]
                    named = True
                else:
                    try:
                        if "key_b64" in obj:
                            kb = base64.b64decode(obj["key_b64"])
                        elif obj.get("key") is not None:
                            kb = obj["key"].encode("utf-8")
                        else:
                            kb = None
                        if "value_b64" in obj:
                            vb = base64.b64decode(obj["value_b64"])
                        else:
                            vb = v.encode("utf-8")
                        who = self.identify(o, kb, vb, what)
                    except (AttributeError, ValueError):
                        who = None
                    if who is not None:
                        r, i = who
                ln = self.line(r, i)
                if ln is None:
                    self.bad(o, "a line that was sent", repr(json.dumps(obj)[:160]), what + ": unknown record")
                    continue
                k, v = split_line(ln)
                if not self.json_matches(obj, k, v):
                    self.bad(o, "a line that was sent", repr(json.dumps(obj)[:160]),
                             what + ": unknown record (it names run %d line %d, whose bytes differ)" % (r, i))
                    continue
                if named:
                    self.place(r, i, o, what)
                exp = (r, i, what)
                self.known[o] = exp
            r, i, src = exp
            k, v = split_line(self.line(r, i))
            if not self.json_matches(obj, k, v):
                self.lost += 1
                self.bad(o, show(k, v) + " (run %d line %d, %s)" % (r, i, src),
                         repr(json.dumps(obj, ensure_ascii=False)[:160]), what + ": record differs")
        for n, committed, offs in self.batches:
            self.check_stream(offs, committed if committed is not None else -1, "consumer batch %d" % n)

    # -- everything --------------------------------------------------------

    def run(self):
        self.load_writers()
        self.load_final()
        self.load_follower()
        self.load_consumer()

        # What the follower printed, then what the log holds, against the
        # lines sent.  Followed records join the known durable ones.
        for o, k, v, what in self.followed:
            self.observe(o, k, v, what)
        self.check_consumed()
        last = self.check_stream([o for o, _, _, _ in self.followed], -1, "follower")
        if self.final_offs and last < self.final_offs[-1]:
            self.bad(self.final_offs[-1], "followed", "the follower stopped at %d" % last, "follower")

        # What the log holds: what is known must be there with its bytes,
        # the rest must be lines that were sent, each at one offset.
        for o, k, v in self.final:
            self.observe(o, k, v, "final log")
        self.check_run_order()

        # Every known durable record is in the log, or accounted for.
        newest = {}
        for o, (r, i, _) in self.known.items():
            k, _ = split_line(self.line(r, i))
            if k is not None and newest.get(k, -1) < o:
                newest[k] = o
        for o, (k, v) in self.final_map.items():
            if k is not None and newest.get(k, -1) < o:
                newest[k] = o
        self.by_retention = self.by_compaction = 0
        for o in sorted(self.known):
            if o in self.final_map:
                continue
            r, i, src = self.known[o]
            k, v = split_line(self.line(r, i))
            if self.active_base is None or o < self.active_base:
                if o < self.log_start:
                    self.by_retention += 1
                    continue
                # A tombstone of its key that a killed run wrote but never
                # acknowledged may have been durable (at least once), have
                # deleted the key in compaction, and gone itself at once
                # (--grace 0s): nothing is left to show it.
                if k is not None and (newest.get(k, -1) > o or v == b"" or k in self.tombs):
                    self.by_compaction += 1
                    continue
            self.lost += 1
            self.bad(o, show(k, v) + " (run %d line %d, %s)" % (r, i, src), "nothing",
                     "durable record lost")

        # A soak that acknowledged or followed nothing tested nothing.
        first = len(self.acks.get(0, []))
        last = len(self.acks.get(self.last_run, []))
        if self.acked - first - last <= 0:
            self.bad("-", "killed writer runs that acknowledged records", "none", "soak")
        if not self.followed:
            self.bad("-", "followed records", "none", "soak")
        if self.writers > 1 and self.kills >= 10 * self.writers and self.interleaved == 0:
            self.bad("-", "a run whose batches other writers' came between", "none", "soak")

        self.check_commits()
        self.check_maint()
        self.check_side_lanes()
        self.check_watermark()
        self.check_sanitizers()

    def check_commits(self):
        got = None
        for ln in read_text(self.p("consumers.json")).splitlines():
            obj = json.loads(ln)
            if obj.get("name") == "soak":
                got = obj.get("offset")
        if self.committed is not None and got != self.committed:
            self.bad(self.committed, "consumer soak at %d" % self.committed, "%s" % got, "elog-commit -l")
        end = self.final_offs[-1] if self.final_offs else -1
        if got is not None and got > end:
            self.bad(got, "a committed offset at most %d, the last record" % end, "%d" % got,
                     "commit beyond the durable end")
        probe = read_text(self.p("probe")).splitlines()
        perr = read_text(self.p("probe.err")).strip()
        for ln in probe:
            where, off, rc = ln.split()
            want = "2" if where == "end" else "0"
            if rc != want:
                self.bad(off, "elog-commit of offset %s, %s, to exit %s" %
                         (off, "the durable end" if where == "end" else "the last record", want),
                         "status %s: %s" % (rc, perr), "commit probe")
        if len(probe) != 2:
            self.bad("-", "two commit probes", "%d" % len(probe), "commit probe")

    def check_maint(self):
        self.compactions = self.retentions = 0
        for ln in read_text(self.p("m", "runs")).splitlines():
            n, what, how, rc = ln.split()
            rc = int(rc)
            if what == "compact":
                self.compactions += 1
                ok = rc == 0 or (how == "crash-at" and rc == 86) or (how == "killed" and rc == 137)
            else:
                self.retentions += 1
                ok = rc == 0
            if not ok:
                err = read_text(self.p("m", "%s.%s.err" % (n, what))).strip()
                self.bad("-", "elog-%s run %s (%s) to succeed" % (what, n, how),
                         "status %d: %s" % (rc, err), "maintenance")

    def check_side_lanes(self):
        """The repairs beside the writers and the LOCK rewrite."""
        self.repairs = self.rewrites = 0
        for ln in read_text(self.p("s", "runs")).splitlines():
            n, what, rc = ln.split()
            if what == "repair":
                self.repairs += 1
                if rc not in ("0", "3"):
                    self.bad("-", "elog-verify --repair %s on the healthy log to exit 0 (or 3, busy)" % n,
                             "status %s: %s" % (rc, read_text(self.p("s", "%s.repair" % n)).strip()[:300]),
                             "repair")
            elif what == "lock-rewrite":
                self.rewrites += 1
        self.stops = len(read_text(self.p("s", "stops")).splitlines())
        if self.repairs >= 2 and self.rewrites != 1:
            self.bad("-", "one LOCK rewrite after the first or second repair", "%d" % self.rewrites,
                     "LOCK rewrite lane")

    def check_watermark(self):
        """The sampled watermark never goes back, the log ends at or above
        every sample, and the active segment holds every offset below the
        last sample from its base."""
        self.samples = 0
        prev = None
        top = None
        for ln in read_text(self.p("s", "wm")).splitlines():
            f = ln.split()
            end, base, nbytes = int(f[1]), int(f[2]), int(f[3])
            self.samples += 1
            if prev is not None and end < prev[0]:
                self.bad(end, "a durable end at or above %d (sampled at %s)" % (prev[0], prev[3]),
                         "%d at %s" % (end, f[0]), "watermark went back")
            prev = (end, base, nbytes, f[0])
            top = prev if top is None or end > top[0] else top
        if top is None:
            self.bad("-", "watermark samples", "none", "watermark sampler")
            return
        final_end = self.final_offs[-1] + 1 if self.final_offs else 0
        if top[0] > final_end:
            self.bad(top[0], "a final log ending at or above the sampled durable end %d" % top[0],
                     "it ends at %d" % final_end, "published records lost")
        lo = self.active_base if self.active_base is not None else final_end
        missing = [o for o in range(lo, top[0]) if o not in self.final_map]
        if missing:
            self.lost += len(missing)
            self.bad(missing[0], "every offset from %d to %d, published (sampled %s), in the final log" %
                     (lo, top[0] - 1, top[3]), "%d missing" % len(missing), "published records lost")

    def check_sanitizers(self):
        for sub in ("w", "f", "c", "m", "s", ""):
            dd = os.path.join(self.d, sub)
            for name in sorted(os.listdir(dd)):
                path = os.path.join(dd, name)
                if not (name.endswith("err") or name == "verify.out") or not os.path.isfile(path):
                    continue
                bad = [ln for ln in read_text(path).splitlines() if SANITIZER.search(ln)]
                if bad:
                    self.bad("-", "no sanitizer report", bad[0].strip(), os.path.join(sub, name))

    def report(self):
        for off, exp, found, what in self.violations:
            print("soak: VIOLATION %s: offset %s: expected %s, found %s" % (what, off, exp, found))
        print("soak: %d kills, %d writer lane%s, %d acknowledged records, %d followed records, "
              "%d compactions, %d retention runs, %d duplicated, %d lost, %d reused" %
              (self.killed, self.writers, "" if self.writers == 1 else "s", self.acked, len(self.followed), self.compactions,
               self.retentions, self.duplicated, self.lost, self.reused))
        print("soak: (%d consumed in %d batches, %d commits, final commit %s; %d records in the final "
              "log from %d; %d known durable records gone by retention, %d by compaction; "
              "%d runs interleaved with other writers; %d repairs, %d LOCK rewrites, %d stops, "
              "%d writer runs failed as documented; %d watermark samples)" %
              (len(self.consumed), len(self.batches), self.commits, self.committed, len(self.final),
               self.log_start, self.by_retention, self.by_compaction, self.interleaved,
               self.repairs, self.rewrites, self.stops, self.expected_failures, self.samples),
              file=sys.stderr)
        # Not a violation: temporary files of killed processes, for
        # segments retention has deleted (see soak-repro-tmp-leak.sh).
        try:
            names = os.listdir(self.p("log"))
        except OSError:
            names = []
        stale = [n for n in names if ".tmp." in n and n[:20].isdigit() and int(n[:20]) < self.log_start]
        if stale:
            print("soak: note: %d temporary files outlived their segments, such as %s" %
                  (len(stale), sorted(stale)[0]), file=sys.stderr)
        return 1 if self.violations else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--last-offset":
        try:
            recs = parse_dump(read_bytes(argv[2]))
        except ValueError:
            recs = []
        if recs:
            print(recs[-1][0])
        return 0
    if len(argv) == 5 and argv[1] == "--sample-watermark":
        return sample_watermark(argv[2], argv[3], argv[4])
    args = dict(zip(argv[1::2], argv[2::2]))
    try:
        c = Checker(args["--dir"], int(args["--kills"]), int(args["--runs"]),
                    int(args.get("--writers", "1")))
    except (KeyError, ValueError):
        print("usage: soak_check.py --dir T --kills K --runs LAST [--writers N] | --last-offset FILE",
              file=sys.stderr)
        return 2
    c.run()
    return c.report()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
