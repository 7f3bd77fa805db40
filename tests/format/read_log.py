#!/usr/bin/env python3
"""read_log.py: an independent reader of an elog log directory.

Written from elog(5) alone (the section "Reading a log" and the layouts it
refers to), sharing no code with libelog, so that comparing its output with
elog-cat's checks the format and its documentation together.

usage: read_log.py DIR

Prints one line per durable record, in offset order:

    OFFSET TS_MS SCHEMA KEY VALUE

KEY and VALUE in lowercase hex, "-" when empty.  Exit status: 0 success,
1 damaged data (the message names the file and byte position), 2 usage,
3 what this reader cannot read: a compressed value when Python has no
zstandard module (Debian: python3-zstandard), a newer format, or a
directory that is not a log.
"""

import bisect
import os
import re
import struct
import sys
import time

MAX_RECORD = 16 * 1024 * 1024


def _crc_table():
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        table.append(c)
    return table


_TABLE = _crc_table()
LOG_ID = b""  # the log's id, from its settings (read_log())


def crc32c(data):
    """CRC-32C (Castagnoli), reflected, initial and final XOR 0xFFFFFFFF."""
    c = 0xFFFFFFFF
    t = _TABLE
    for b in data:
        c = (c >> 8) ^ t[(c ^ b) & 0xFF]
    return c ^ 0xFFFFFFFF


class Damage(Exception):
    pass


class Unsupported(Exception):
    pass


def read_file(directory, name):
    """A whole file of the log, or None when it does not exist."""
    try:
        with open(os.path.join(directory, name), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def sound(b, magic, n):
    """A watermark (n 40) or start file (n 32): length, magic and crc."""
    return (len(b) == n and b[0:8] == magic
            and struct.unpack_from("<I", b, n - 8)[0] == crc32c(b[0:n - 8]))


def read_watermark(directory):
    """(durable_end, segment_base, segment_bytes), or None when garbled.

    Missing or empty: all zeros, nothing is durable yet.  A bad magic or
    crc is first taken for a rewrite in progress and read again; one that
    stays bad (a power loss garbled it: it is never synced) is None."""
    for _ in range(100):
        b = (read_file(directory, "watermark") or b"")[0:40]
        if len(b) == 0:
            return 0, 0, 0
        if sound(b, b"ELOGWMK\n", 40):
            return struct.unpack_from("<QQQ", b, 8)
        time.sleep(0.001)
    return None


def list_segments(directory):
    """Sorted segment bases, less those wholly below a sound start file."""
    bases = sorted(int(n[0:20]) for n in os.listdir(directory)
                   if re.fullmatch(r"[0-9]{20}\.log", n))
    st = read_file(directory, "start") or b""
    if sound(st, b"ELOGSTA\n", 32):
        if struct.unpack_from("<I", st, 8)[0] != 1:
            raise Unsupported("start: unsupported version")
        (first,) = struct.unpack_from("<Q", st, 16)
        # Bytes 12-15 name the log (0: none); another log's file is
        # damaged, and ignored.
        if (st[12:16] in (bytes(4), LOG_ID[:4]) and st[28:32] == bytes(4)
                and bases and first <= bases[-1]):
            while len(bases) > 1 and bases[1] <= first:
                del bases[0]
    return bases


class Values:
    """Stored values of compressed segments, decoded (elog(5),
    "Compression"), with the log's dictionaries loaded once each."""

    def __init__(self, directory):
        self.directory = directory
        self.dicts = {}

    def decode(self, name, pos, stored, dict_id):
        if len(stored) == 0 or stored[0] == 0:
            return stored[1:]
        if stored[0] != 1:
            raise Damage("%s: record at byte %d: unknown value encoding %d"
                         % (name, pos, stored[0]))
        try:
            import zstandard
        except ImportError:
            raise Unsupported("%s: compressed values need the zstandard module" % name)
        if dict_id and dict_id not in self.dicts:
            fname = "dict.%d" % dict_id
            d = read_file(self.directory, fname)
            if d is None:
                raise Damage("%s: record at byte %d: %s: dictionary missing"
                             % (name, pos, fname))
            if (len(d) < 24 or d[0:8] != b"ELOGDICT" or struct.unpack_from("<4I", d, 8)
                    != (1, dict_id, len(d) - 24, crc32c(d[24:]))):
                raise Damage("%s: record at byte %d: %s: damaged dictionary"
                             % (name, pos, fname))
            self.dicts[dict_id] = zstandard.ZstdCompressionDict(d[24:])
        try:
            z = zstandard.ZstdDecompressor(dict_data=self.dicts.get(dict_id))
            return z.decompress(b"\x28\xb5\x2f\xfd" + stored[1:],
                                max_output_size=MAX_RECORD)
        except zstandard.ZstdError as e:
            raise Damage("%s: record at byte %d: bad zstd frame (%s)" % (name, pos, e))


def segment_version(data, name, base):
    """The header's version, once magic, crc, base and codec are checked."""
    if len(data) < 32:
        raise Damage("%s: truncated header" % name)
    magic, version, flags, hbase, hcrc, tag = struct.unpack_from("<8sIIQI4s", data, 0)
    # Bytes 28-31 name the log in version 2 (zero: none), and are then
    # under the crc; in version 1 they are reserved.
    tag = tag if version >= 2 and tag != bytes(4) else b""
    if magic != b"ELOGSEG\n" or hcrc != crc32c(data[0:24] + tag):
        raise Damage("%s: bad segment header" % name)
    if hbase != base or (tag and LOG_ID and tag != LOG_ID[:4]):
        raise Damage("%s: a copy of another segment or log" % name)
    codec, dictionary = flags & 0xFF, flags >> 8
    if version not in (1, 2) or codec > 1 or (codec == 0 and dictionary != 0):
        raise Unsupported("%s: a segment format this reader does not know" % name)
    return version


def split_seal(data, name, base):
    """A closed segment of version 2: (its records' bytes, the base its
    seal names as the next, None), or (data, None, None) when the seal is
    gone; a damaged seal ends the records too, and is the third."""
    n = len(data) - 56
    if n < 32 or data[n:n + 8] != b"ELOGSEAL":
        return data, None, None
    nxt, end, pos = struct.unpack_from("<QQQ", data, n + 8)
    crc, reserved = struct.unpack_from("<II", data, n + 48)
    if (crc != crc32c(data[n:n + 48]) or reserved != 0 or pos != n
            or end < base or nxt < end):
        # damage where it starts: the records before it are returned
        return data[0:n], None, n
    return data[0:n], nxt, None


def read_segment(data, name, base, values):
    """Yield (pos, offset, ts, schema, key, value) from the bytes given."""
    segment_version(data, name, base)
    flags = struct.unpack_from("<I", data, 12)[0]
    codec, dictionary = flags & 0xFF, flags >> 8
    pos = 32
    while pos < len(data):
        if len(data) - pos < 4:
            raise Damage("%s: truncated record at byte %d" % (name, pos))
        (length,) = struct.unpack_from("<I", data, pos)
        if length < 24 or length > MAX_RECORD:
            raise Damage("%s: corrupt record at byte %d" % (name, pos))
        if len(data) - pos < 4 + length:
            raise Damage("%s: truncated record at byte %d" % (name, pos))
        crc, offset, ts, schema, key_len = struct.unpack_from("<IQqHH", data, pos + 4)
        if 24 + key_len > length or crc != crc32c(data[pos + 8:pos + 4 + length]):
            raise Damage("%s: corrupt record at byte %d" % (name, pos))
        key = data[pos + 28:pos + 28 + key_len]
        value = data[pos + 28 + key_len:pos + 4 + length]
        if codec == 1:
            value = values.decode(name, pos, value, dictionary)
        yield pos, offset, ts, schema, key, value
        pos += 4 + length


def read_log(directory, out):
    """elog(5), "Reading a log", step by step."""
    global LOG_ID
    settings = read_file(directory, "settings")
    if settings is None:
        raise Unsupported("not an elog directory (no settings file)")
    conf = dict(l.split(" ", 1) for l in settings.decode().splitlines()
                if l and not l.startswith("#") and " " in l)
    # The log's format first, and the values a reader must know.
    if (conf.get("format") not in ("1", "2")
            or conf.get("compression", "none") not in ("none", "zstd")
            or conf.get("retain_consumers", "report") not in ("report", "protect")
            or conf.get("cleanup", "delete") not in ("delete", "compact")):
        raise Unsupported("settings: unsupported format version")
    # A corrupt file (elog(5), The settings file) is refused too.
    lines = [l for l in settings.decode("utf-8", "replace").splitlines()
             if l and not l.startswith("#")]
    ranges = {"segment_bytes": (4096, 1 << 30), "index_interval": (64, 1 << 24),
              "compression_level": (0, 19), "created_ms": (0, 1 << 64),
              "retain_ms": (0, 1 << 64), "retain_bytes": (0, 1 << 64)}
    if (any(" " not in l for l in lines) or len(settings) > 4096
            or not re.fullmatch(r"[0-9a-f]{32}", conf.get("id", ""))
            or "segment_bytes" not in conf or "index_interval" not in conf
            or conf.get("dictionary", "auto") not in ("auto", "none")
            or any(k in conf and not (re.fullmatch(r"[0-9]{1,20}", conf[k])
                                      and lo <= int(conf[k]) <= hi)
                   for k, (lo, hi) in ranges.items())):
        raise Damage("settings: corrupt")
    LOG_ID = bytes.fromhex(conf["id"])
    wm = read_watermark(directory)
    bases = list_segments(directory)
    if wm is None:
        # Garbled: every closed segment is durable (each was synced before
        # the next was made), nothing of the newest.
        newest = bases[-1] if bases else 0
        wm = (newest, newest, 0)
    end, active, active_bytes = wm
    values = Values(directory)
    # The losses a repair recorded (elog(5), "salvaged"); a malformed file
    # is ignored.
    sv = (read_file(directory, "salvaged") or b"").decode("ascii", "replace").split("\n")
    holes = ([tuple(int(x) for x in l.split()[:2]) for l in sv[1:-1]]
             if sv[0] == "elog-salvaged 1" and not sv[-1]
             and all(re.fullmatch(r"[0-9]+ [0-9]+ [0-9]+", l) for l in sv[1:-1])
             else [])

    def recorded(a, b):
        for first, last in holes:
            if a <= b and first <= b and last >= a:
                sys.stderr.write("read_log.py: %s: offsets %d-%d were lost to damage\n"
                                 % (directory, max(a, first), min(b, last)))

    # The next offset wanted: the first segment's base at first, the
    # offset after the last record returned then.  A recorded loss below
    # the first segment lay in segments retention removed: history.
    want = bases[0] if bases else 0
    i = 0
    while i < len(bases) and bases[i] <= active:
        base = bases[i]
        name = "%020d.log" % base
        data = read_file(directory, name)
        if data is None:
            # Removed by retention or merged into the segment before it
            # since the listing: list again and go on from the segment
            # that holds the next offset wanted.
            bases = list_segments(directory)
            i = max(bisect.bisect_right(bases, want) - 1, 0)
            continue
        closed = not (base == active and i + 1 == len(bases))
        if not closed:
            # The active segment: only what the watermark says was synced
            # (a segment it names that has a successor is read whole).
            if active_bytes <= 32:
                break
            data = data[0:active_bytes]
        seal_next = bad_seal = None
        if closed and segment_version(data, name, base) == 2:
            data, seal_next, bad_seal = split_seal(data, name, base)
        prev = None
        for pos, offset, ts, schema, key, value in read_segment(data, name, base, values):
            if offset < base or (prev is not None and offset <= prev):
                raise Damage("%s: offset %d out of order at byte %d" % (name, offset, pos))
            if offset >= end:
                return
            prev = offset
            if offset < want:
                continue  # a copy left by an interrupted merge
            recorded(want, offset - 1)
            want = offset + 1
            out.write("%d %d %d %s %s\n" % (offset, ts, schema,
                                            key.hex() or "-", value.hex() or "-"))
        if bad_seal is not None:
            raise Damage("%s: damaged seal at byte %d" % (name, bad_seal))
        # Next, the segment that holds the next offset wanted: one listed
        # before it (a copy under another name) is not read.
        j = max(i + 1, bisect.bisect_right(bases, want) - 1)
        # The chain of segments: what the seal names next must be the next
        # segment read (or, after the last not above the watermark's, the
        # durable end); a closed segment of version 2 without a seal was
        # cut short.
        if closed and segment_version(data, name, base) == 2:
            nxt = min(bases[j] if j < len(bases) and bases[j] <= active
                      else end, end)
            lost_from = seal_next if seal_next is not None else (
                prev + 1 if prev is not None else base)
            lost_from = max(lost_from, want)
            if lost_from < nxt and not any(f < nxt and l >= lost_from for f, l in holes):
                sys.stderr.write("read_log.py: %s: offsets %d-%d were lost to damage\n"
                                 % (directory, lost_from, nxt - 1))
                want = nxt
        i = j
    if want < end:
        recorded(want, end - 1)


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.stderr.write("usage: read_log.py DIR\n")
        return 2
    try:
        read_log(argv[1], sys.stdout)
    except Damage as e:
        sys.stderr.write("read_log.py: %s: %s\n" % (argv[1], e))
        return 1
    except Unsupported as e:
        sys.stderr.write("read_log.py: %s: %s\n" % (argv[1], e))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
