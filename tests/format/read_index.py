#!/usr/bin/env python3
"""read_index.py: check every index file of a log against its segment,
written from elog(5) ("Index files", "Records", "The settings file") alone.

For each "<base>.idx" beside a "<base>.log": the header (magic, version
1 or 2, reserved 0), then each entry as the page lays it out, with its
CRC, pointing at the start of a record of the segment with the entry's
offset; placed at the first record, then at the first record at least
index_interval bytes after the previous entry's; and, for version 2, with
the times the records give: ts_max and ts_min from the segment's first
record through the entry's, span_min and span_max of the records from the
previous entry's up to this one (empty for the first entry).  An index
may cover only the first part of the active segment.

Prints one line per index, "<name> v<version> <entries> entries", and
exits 1 after printing the first disagreement.
Usage: read_index.py DIR
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_log import crc32c  # noqa: E402  (the CRC-32C of elog(5))

I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def fail(msg):
    print("read_index: " + msg)
    sys.exit(1)


def interval_of(directory):
    with open(os.path.join(directory, "settings")) as f:
        for line in f:
            words = line.split()
            if len(words) == 2 and words[0] == "index_interval":
                return int(words[1])
    fail("settings: no index_interval")


def records(seg):
    """(pos, offset, ts) of each record after the 32-byte header, up to
    the first bytes that are not a whole record with a right CRC."""
    pos = 32
    while pos + 28 <= len(seg):
        length, crc = struct.unpack_from("<II", seg, pos)
        end = pos + 4 + length
        if length < 24 or end > len(seg) or crc32c(seg[pos + 8:end]) != crc:
            return
        offset, ts = struct.unpack_from("<Qq", seg, pos + 8)
        yield pos, offset, ts
        pos = end


def entries(name, idx):
    if len(idx) < 16 or idx[0:8] != b"ELOGIDX\n":
        fail(name + ": not an index header")
    version, reserved = struct.unpack_from("<II", idx, 8)
    if version not in (1, 2) or reserved != 0:
        fail("%s: version %d, reserved %d" % (name, version, reserved))
    size = 48 if version == 2 else 24
    if (len(idx) - 16) % size:
        fail("%s: %d bytes of entries of %d" % (name, len(idx) - 16, size))
    out = []
    for at in range(16, len(idx), size):
        e = idx[at:at + size]
        if version == 2:
            off, ts_max, ts_min, s_min, s_max, pos, crc = \
                struct.unpack("<QqqqqII", e)
        else:
            off, ts_max, pos, crc = struct.unpack("<QqII", e)
            ts_min = s_min = s_max = None
        if crc != crc32c(e[:size - 4]):
            fail("%s: entry at byte %d: crc" % (name, at))
        out.append((off, ts_max, ts_min, s_min, s_max, pos))
    return version, out


def check(directory, base, interval):
    name = "%020d.idx" % base
    with open(os.path.join(directory, "%020d.log" % base), "rb") as f:
        seg = f.read()
    with open(os.path.join(directory, name), "rb") as f:
        version, ents = entries(name, f.read())
    # What the entries should be, from the records and the rule.
    want, last, ts_max, ts_min = [], None, None, None
    s_min, s_max = I64_MAX, I64_MIN
    for pos, offset, ts in records(seg):
        ts_max = ts if ts_max is None else max(ts_max, ts)
        ts_min = ts if ts_min is None else min(ts_min, ts)
        if last is None or pos >= last + interval:
            want.append((offset, ts_max, ts_min, s_min, s_max, pos))
            last, s_min, s_max = pos, ts, ts
        else:
            s_min, s_max = min(s_min, ts), max(s_max, ts)
    if len(ents) > len(want) or ents != [
            w if version == 2 else (w[0], w[1], None, None, None, w[5])
            for w in want[:len(ents)]]:
        for k, (e, w) in enumerate(zip(ents, want)):
            if version == 1:
                w = (w[0], w[1], None, None, None, w[5])
            if e != w:
                fail("%s: entry %d is %r, the records say %r" % (name, k, e, w))
        fail("%s: %d entries, the records give %d" % (name, len(ents), len(want)))
    print("%s v%d %d entries" % (name, version, len(ents)))
    return len(ents) == len(want)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    directory = argv[1]
    interval = interval_of(directory)
    bases = sorted(int(n[:20]) for n in os.listdir(directory)
                   if len(n) == 24 and n.endswith(".log") and n[:20].isdigit())
    for i, base in enumerate(bases):
        whole = check(directory, base, interval)
        # Only the active (newest) segment's index may trail its records.
        if not whole and i + 1 < len(bases):
            fail("%020d.idx: entries missing at its end" % base)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
