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
3 a segment this reader does not decode (compressed values).
"""

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


def read_watermark(path):
    """(durable_end, segment_base, segment_bytes); zeros when missing."""
    for _ in range(100):
        try:
            with open(path, "rb") as f:
                b = f.read(40)
        except FileNotFoundError:
            return 0, 0, 0
        if len(b) == 0:
            return 0, 0, 0
        if (len(b) == 40 and b[0:8] == b"ELOGWMK\n"
                and struct.unpack_from("<I", b, 32)[0] == crc32c(b[0:32])):
            return struct.unpack_from("<QQQ", b, 8)
        time.sleep(0.01)  # a rewrite in progress: read again
    raise Damage("watermark: bad magic or crc")


def read_segment(path, name, base, limit):
    """Yield (offset, ts, schema, key, value) from the first limit bytes."""
    with open(path, "rb") as f:
        data = f.read() if limit is None else f.read(limit)
    if len(data) < 32:
        raise Damage("%s: truncated header" % name)
    magic, version, flags, hbase, hcrc = struct.unpack_from("<8sIIQI", data, 0)
    if magic != b"ELOGSEG\n" or hcrc != crc32c(data[0:24]) or hbase != base:
        raise Damage("%s: bad segment header" % name)
    codec, dictionary = flags & 0xFF, flags >> 8
    if version != 1 or codec > 1 or (codec == 0 and dictionary != 0):
        raise Unsupported("%s: a segment format this reader does not know" % name)
    if codec != 0:
        raise Unsupported("%s: compressed values are not decoded here" % name)
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
        yield pos, offset, ts, schema, key, value
        pos += 4 + length


def read_log(directory, out):
    end, active, active_bytes = read_watermark(os.path.join(directory, "watermark"))
    segments = []
    for name in os.listdir(directory):
        m = re.fullmatch(r"([0-9]{20})\.log", name)
        if m:
            segments.append((int(m.group(1)), name))
    segments.sort()
    last = None
    for base, name in segments:
        if base > active:
            break  # made after the watermark was read: nothing durable
        limit = active_bytes if base == active else None
        for pos, offset, ts, schema, key, value in read_segment(
                os.path.join(directory, name), name, base, limit):
            if offset >= end:
                return
            if offset < base or (last is not None and offset <= last):
                raise Damage("%s: offset %d out of order at byte %d" % (name, offset, pos))
            last = offset
            out.write("%d %d %d %s %s\n" % (offset, ts, schema,
                                            key.hex() or "-", value.hex() or "-"))


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
