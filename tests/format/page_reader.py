#!/usr/bin/env python3
"""page_reader.py: a reader of elog logs written from elog(5) alone.

    page_reader.py [--verify] LOG

It follows the steps of elog(5), "Reading a log", without the library,
and prints what elog-cat(1) would read, one line per event, in log order:

    record OFFSET TS SCHEMA KEY VALUE   (key and value in hex, '-' if empty)
    gap FIRST LAST damage               (offsets lost to damage, reported)

An error (a damaged record, a refused file) is one line on standard error,
"page_reader.py: LOG: message", after the records before it.  The exit
status is elog-cat's: 0 when the log was read to its durable end (gaps
reported on the way), 4 for damage or a format this page does not
describe, 5 when LOG is not a log or cannot be read.

With --verify, the exit status is instead that of elog-verify(1) for what a
reader can see: 0 when every durable record reads and no offset is lost, 1
when damage stops the reader, a gap is reported, or a segment in the
directory is refused by the checks of "Segment files" (a copy, another
log's, a bad header), 4 and 5 as above.

It was written from man/elog.5 alone, as issue 34 asks: where the page left
a question open, the choice made is marked "Q:" below.  Compressed values
need libzstd, reached through ctypes (no module beyond the standard
library); without it a value stored with tag 1 is refused as elog-cat
refuses it in a build without zstd.
"""

import ctypes
import ctypes.util
import errno
import os
import re
import stat
import struct
import sys
import time

MAX_RECORD = 16777216
SEG_NAME = re.compile(r"[0-9]{20}\.log")


class Refuse(Exception):
    """Stop reading: status 4 (damage, unknown format) or 5 (not a log)."""

    def __init__(self, message, status=4, version=False):
        super().__init__(message)
        self.status = status
        self.version = version    # a format this page does not describe


# Checksums: CRC-32C, reflected polynomial 0x82F63B78, a byte at a time.
def _table():
    t = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


_CRC_TABLE = _table()


def crc32c(data, c=0):
    c ^= 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


# zstd through ctypes: ZSTD_decompress_usingDict with the frame's magic put
# back in front, as "Compression" says.
class Zstd:
    def __init__(self):
        self.lib = None
        name = ctypes.util.find_library("zstd") or "libzstd.so.1"
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            return
        lib.ZSTD_createDCtx.restype = ctypes.c_void_p
        lib.ZSTD_decompress_usingDict.restype = ctypes.c_size_t
        lib.ZSTD_decompress_usingDict.argtypes = [
            ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t,
            ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
            ctypes.c_size_t]
        lib.ZSTD_isError.restype = ctypes.c_uint
        lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        lib.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
        lib.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p,
                                                 ctypes.c_size_t]
        self.lib = lib
        self.dctx = lib.ZSTD_createDCtx()

    def decompress(self, frame, dictionary):
        if self.lib is None:
            raise Refuse("a value compressed with zstd, and no libzstd here")
        size = self.lib.ZSTD_getFrameContentSize(frame, len(frame))
        # ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two greatest values.
        if size >= (1 << 64) - 2 or size > MAX_RECORD:
            raise ValueError("zstd frame without a size in range")
        out = ctypes.create_string_buffer(max(size, 1))
        d = dictionary or b""
        n = self.lib.ZSTD_decompress_usingDict(
            self.dctx, out, size, frame, len(frame), d, len(d))
        if self.lib.ZSTD_isError(n) or n != size:
            raise ValueError("zstd frame does not decompress")
        return out.raw[:size]


class Reader:
    def __init__(self, path, verify=False):
        self.path = path
        self.verify = verify
        self.events = []          # printed as they come
        self.damaged = False      # for --verify
        self.zstd = None
        self.dicts = {}

    # -- output ---------------------------------------------------------
    def emit(self, line):
        if not self.verify:
            sys.stdout.write(line + "\n")

    def gap(self, first, last):
        if first <= last:
            self.damaged = True
            self.emit("gap %d %d damage" % (first, last))

    # -- files ----------------------------------------------------------
    def read_file(self, name, limit=None):
        """The bytes of name, None when it is missing."""
        p = os.path.join(self.path, name)
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ELOOP:
                # Q: a symbolic link where a file of the log should be: the
                # page does not say; taken as a file that is not there.
                return None
            raise Refuse("%s: %s" % (name, e.strerror), 5)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks = []
            want = limit if limit is not None else 1 << 62
            while want > 0:
                b = os.read(fd, min(want, 1 << 20))
                if not b:
                    break
                chunks.append(b)
                want -= len(b)
            return b"".join(chunks)
        finally:
            os.close(fd)

    # -- step 1: settings -----------------------------------------------
    def settings(self):
        raw = self.read_file("settings")
        if raw is None:
            raise Refuse("not a log (no settings file)", 5)
        if len(raw) > 4096:
            raise Refuse("settings: corrupt: longer than 4096 bytes")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise Refuse("settings: corrupt: not text")
        conf = {}
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        # else Q: a last line without its newline, though "each line ends
        # with a newline": the library reads it all the same (the page now
        # says so).
        for line in lines:
            if line == "" or line.startswith("#"):
                continue
            if " " not in line:
                raise Refuse("settings: corrupt: a line without a space")
            key, value = line.split(" ", 1)
            conf[key] = value
        # The format, and the words of a later version, first of all.
        if "format" not in conf:
            raise Refuse("settings: corrupt: no format")
        if conf["format"] not in ("1", "2"):
            raise Refuse("settings: unsupported format version",
                         version=True)
        for key, words in (("compression", ("none", "zstd")),
                           ("retain_consumers", ("report", "protect")),
                           ("cleanup", ("delete", "compact"))):
            if key in conf and conf[key] not in words:
                raise Refuse("settings: unsupported format version",
                         version=True)

        def number(key, lo=None, hi=None, required=False):
            if key not in conf:
                if required:
                    raise Refuse("settings: corrupt: no %s" % key)
                return None
            v = conf[key]
            if not re.fullmatch(r"[0-9]{1,20}", v):
                raise Refuse("settings: corrupt: %s" % key)
            n = int(v)
            if (lo is not None and n < lo) or (hi is not None and n > hi):
                raise Refuse("settings: corrupt: %s out of range" % key)
            return n

        if not re.fullmatch(r"[0-9a-f]{32}", conf.get("id", "")):
            raise Refuse("settings: corrupt: id")
        number("created_ms")
        number("segment_bytes", 4096, 1073741824, True)
        number("index_interval", 64, 16777216, True)
        number("retain_ms")
        number("retain_bytes")
        number("compression_level", 0, 19)
        if conf.get("dictionary", "auto") not in ("auto", "none"):
            raise Refuse("settings: corrupt: dictionary")
        self.log_id = bytes.fromhex(conf["id"])

    # -- step 2: the watermark ------------------------------------------
    def watermark(self):
        """(E, A, L), or None when nothing is durable."""
        last, same = None, 0
        for _ in range(100):
            wm = self.read_file("watermark", 40)
            if wm is None or wm == b"":
                return None
            if len(wm) == 40 and wm[:8] == b"ELOGWMK\n" and \
                    crc32c(wm[:32]) == struct.unpack_from("<I", wm, 32)[0]:
                # Q: the reserved field (bytes 36-39) is not covered by
                # the CRC and the page does not say a reader checks it.
                return struct.unpack_from("<QQQ", wm, 8)
            same = same + 1 if wm == last else 1
            last = wm
            if same >= 8:
                break
            time.sleep(0.001)
        return "garbled"

    # -- step 3: the segments -------------------------------------------
    def segments(self):
        try:
            names = os.listdir(self.path)
        except OSError as e:
            raise Refuse("%s" % e.strerror, 5)
        segs = []
        for n in names:
            if not SEG_NAME.fullmatch(n):
                continue
            try:
                st = os.lstat(os.path.join(self.path, n))
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(st.st_mode):
                # Q: a directory, link or FIFO with a segment's name: the
                # page does not say.  Left out, as the library leaves it;
                # elog-verify reports it.
                self.damaged = True
                continue
            segs.append(int(n[:20]))
        segs.sort()
        st = self.read_file("start")
        if st is not None and len(st) == 32 and st[:8] == b"ELOGSTA\n" and \
                crc32c(st[:24]) == struct.unpack_from("<I", st, 24)[0]:
            version, = struct.unpack_from("<I", st, 8)
            if version != 1:
                raise Refuse("start: unsupported format version",
                             version=True)
            first, = struct.unpack_from("<Q", st, 16)
            sound = st[28:32] == bytes(4) and \
                st[12:16] in (bytes(4), self.log_id[:4]) and \
                segs and first <= segs[-1]
            if sound:
                while len(segs) > 1 and segs[1] <= first:
                    del segs[0]
        return segs

    # -- compression ----------------------------------------------------
    def dictionary(self, n):
        if n in self.dicts:
            return self.dicts[n]
        d = self.read_file("dict.%d" % n)
        if d is None:
            raise ValueError("dict.%d is missing" % n)
        if len(d) < 24 or d[:8] != b"ELOGDICT":
            raise ValueError("dict.%d: bad magic" % n)
        version, ident, length, crc = struct.unpack_from("<4I", d, 8)
        if version != 1:
            raise ValueError("dict.%d: unsupported version" % n)
        # Q: "length: bytes of dictionary that follow": is a file longer
        # than 24 + length damaged?  Taken so: the file is exactly that.
        if ident != n or length != len(d) - 24 or length > 1 << 20 or \
                crc32c(d[24:]) != crc:
            raise ValueError("dict.%d: damaged" % n)
        self.dicts[n] = d[24:]
        return d[24:]

    def decode(self, stored, dict_id):
        if not stored:
            return stored
        if stored[0] == 0:
            return stored[1:]
        if stored[0] != 1:
            raise ValueError("unknown value tag %d" % stored[0])
        if self.zstd is None:
            self.zstd = Zstd()
        d = self.dictionary(dict_id) if dict_id else None
        return self.zstd.decompress(b"\x28\xb5\x2f\xfd" + stored[1:], d)

    # -- step 5: a segment's header -------------------------------------
    def header(self, name, base, data):
        """(version, codec, dict_id) of a header the page lets us read."""
        if len(data) < 32 or data[:8] != b"ELOGSEG\n":
            raise Refuse("%s: byte 0: bad segment header" % name)
        version, flags, hbase, crc = struct.unpack_from("<IIQI", data, 8)
        tag = data[28:32]
        if crc32c(data[:24] + (tag if tag != bytes(4) else b"")) != crc:
            raise Refuse("%s: byte 0: bad segment header checksum" % name)
        codec, dict_id = flags & 0xFF, flags >> 8
        if version not in (1, 2) or codec > 1 or (codec == 0 and dict_id):
            raise Refuse("%s: unsupported segment version or codec" % name)
        if hbase != base:
            raise Refuse("%s: a copy of segment %d under another name"
                          % (name, hbase))
        if version == 2 and tag != bytes(4) and tag != self.log_id[:4]:
            raise Refuse("%s: a segment of another log" % name)
        return version, codec, dict_id

    def seal(self, name, base, data):
        """(records_end, next, end) of a closed segment: the seal, if any.

        A damaged seal is damage where it starts: returned as
        (n, None, 'damaged')."""
        n = len(data) - 56
        if n < 32 or data[n:n + 8] != b"ELOGSEAL":
            return len(data), None, None
        nxt, end, pos, ident, crc, reserved = \
            struct.unpack_from("<QQQ16sII", data, n + 8)
        if crc32c(data[n:n + 48]) != crc or reserved != 0 or pos != n or \
                not base <= end <= nxt:
            return n, None, "damaged"
        if ident != self.log_id:
            raise Refuse("%s: its seal names another log" % name)
        return n, nxt, end

    # -- the steps, in order --------------------------------------------
    def run(self):
        self.settings()
        wm = self.watermark()
        segs = self.segments()
        if wm is None:
            return 0                      # nothing durable yet
        if wm == "garbled":
            E = A = segs[-1] if segs else 0
            L = 0
        else:
            E, A, L = wm
        salvaged = self.salvaged()
        # elog-verify reports each recorded range as a loss while the
        # log's segments still span it, though a reader may pass over none
        # of it (a record may even stand at such an offset).
        if segs and any(l >= segs[0] and f < E for f, l in salvaged):
            self.damaged = True
        reported = []                     # recorded ranges reported, [a, b]

        def recorded(a, b):
            """Report the recorded losses that meet [a, b], each once."""
            for f, l in salvaged:
                lo, hi = max(a, f), min(b, l)
                if lo <= hi and not any(x <= lo and hi <= y
                                        for x, y in reported):
                    self.gap(lo, hi)
                    reported.append((lo, hi))

        def meets(a, b):
            return any(f <= b and l >= a for f, l in salvaged)

        # The next offset wanted starts at the base of the first segment
        # read (Q: the page said only "the log's first offset"; it now
        # says this, which is what the library does).
        want = None
        lower = None     # the seal before named a next above this segment
        covered = None   # offsets below it are accounted for by the chain
        i = 0
        readable = [s for s in segs if s <= A]
        while i < len(readable):
            base = readable[i]
            name = "%020d.log" % base
            # the segment whose base is A and that is the last one listed
            active = base == A and segs[-1] == base
            data = self.read_file(name)
            if data is None:
                # gone between listing and opening: list again and go on
                # from the greatest base not above the next offset wanted
                if base in self.segments():
                    raise Refuse("%s: cannot be read" % name, 5)
                segs = self.segments()
                readable = [s for s in segs if s <= A]
                w = want if want is not None else 0
                j = 0
                for k, s in enumerate(readable):
                    if s <= w:
                        j = k
                i = j
                continue
            if want is None:
                want = base
                covered = base
            short = False
            if active:
                if L <= 32:
                    break                 # nothing of it is durable
                if len(data) < L:
                    short = True
                data = data[:L]
            version, codec, dict_id = self.header(name, base, data)
            closed = not active
            records_end, nxt, top = len(data), None, None
            if closed:
                records_end, nxt, top = self.seal(name, base, data)
            pos, prev = 32, None
            below_seal, lower = lower, None
            # the next segment listed, when it lies above A: a segment made
            # after the watermark was read, or a stray file; either way no
            # record of this one may reach its base (elog-verify checks)
            k = segs.index(base) + 1
            beyond = segs[k] if k < len(segs) and segs[k] > A else None
            while pos < records_end:
                if records_end - pos < 8:
                    raise Refuse("%s: byte %d: incomplete record"
                                 % (name, pos))
                length, crc = struct.unpack_from("<II", data, pos)
                if not 24 <= length <= MAX_RECORD:
                    raise Refuse("%s: byte %d: record length out of range"
                                 % (name, pos))
                if pos + 4 + length > records_end:
                    raise Refuse("%s: byte %d: incomplete record"
                                 % (name, pos))
                if crc32c(data[pos + 8:pos + 4 + length]) != crc:
                    raise Refuse("%s: byte %d: checksum mismatch"
                                 % (name, pos))
                off, ts, schema, klen = struct.unpack_from("<QqHH", data,
                                                           pos + 8)
                if 24 + klen > length:
                    raise Refuse("%s: byte %d: key longer than the record"
                                 % (name, pos))
                if off < base or (prev is not None and off <= prev):
                    raise Refuse("%s: byte %d: offset out of order"
                                 % (name, pos))
                if top is not None and top != "damaged" and off >= top:
                    raise Refuse("%s: byte %d: offset at or above the "
                                 "seal's end" % (name, pos))
                if beyond is not None and off >= beyond:
                    self.damaged = True
                if off >= E:
                    return 0              # the durable end
                prev = off
                if off >= want:
                    # Q: the recorded ranges are checked before the value
                    # is decoded: a loss reported, then the damage.
                    recorded(want, off - 1)
                    key = data[pos + 28:pos + 28 + klen]
                    value = data[pos + 28 + klen:pos + 4 + length]
                    if codec == 1:
                        try:
                            value = self.decode(value, dict_id)
                        except ValueError as e:
                            raise Refuse("%s: byte %d: %s" % (name, pos, e))
                    if below_seal is not None:
                        self.damaged = True   # not a merge's leftover
                    self.emit("record %d %d %d %s %s" % (
                        off, ts, schema, key.hex() or "-",
                        value.hex() or "-"))
                    want = off + 1
                pos += 4 + length
            if top == "damaged":
                raise Refuse("%s: byte %d: damaged seal" % (name, records_end))
            after_last = prev + 1 if prev is not None else base
            covered = max(covered, after_last)
            if short:
                # records missing from the durable bytes: acknowledged, lost
                break
            if not closed:
                break
            # step 7: the chain, after a closed segment of version 2 (or
            # of version 1 with a seal, read as version 2)
            # The next segment read is the one that holds the next offset
            # wanted: the greatest base not above it, or the next listed
            # when that lies above it.  A segment listed in between, all of
            # whose offsets were returned already, is never read (a copy
            # under another name, or one an interrupted merge left).
            j = i + 1
            while j + 1 < len(readable) and readable[j + 1] <= want:
                j += 1
            following = readable[j] if j < len(readable) else E
            if version == 2 or nxt is not None:
                expected = nxt if nxt is not None else after_last
                lo, hi = max(expected, want), min(following, E)
                if lo < hi:
                    if not meets(lo, hi - 1):
                        self.gap(lo, hi - 1)
                        want = hi
                covered = max(covered, expected, following)
                # A next segment below the seal's next is what an
                # interrupted merge left (its records are copies, below
                # the next offset wanted) or a segment that does not
                # belong to the chain: elog-verify reports the latter.
                lower = expected if following < expected else None
            elif j < len(readable):
                # version 1: nothing is checked after it; the next
                # segment's base says where its range ends
                covered = max(covered, following)
            i = j
        # steps 4 and 7: the durable end not reached
        if want is None:
            want = covered = segs[0] if segs else 0
        lo = max(want, covered)
        if lo < E and not meets(lo, E - 1):
            self.gap(lo, E - 1)
        recorded(want, E - 1)
        return 0

    def salvaged(self):
        """The recorded ranges; a malformed file is ignored by readers."""
        ranges = self.salvaged_file()
        if ranges is None:
            # elog-verify reports a malformed file
            self.damaged = True
            return []
        return ranges

    def salvaged_file(self):
        raw = self.read_file("salvaged")
        if raw is None:
            return []
        try:
            lines = raw.decode("ascii").split("\n")
        except UnicodeDecodeError:
            return None
        if lines[0] != "elog-salvaged 1" or lines[-1] != "":
            return None
        ranges = []
        for line in lines[1:-1]:
            m = re.fullmatch(r"([0-9]+) ([0-9]+) ([0-9]+)", line)
            if not m:
                return None
            f, l = int(m.group(1)), int(m.group(2))
            if f > l or (ranges and f <= ranges[-1][1]):
                return None
            ranges.append((f, l))
        return ranges

    def verify_extra(self):
        """--verify: the checks of "Segment files" on every segment."""
        segs = self.segments()
        for base in segs:
            name = "%020d.log" % base
            data = self.read_file(name, 32)
            if data is None or len(data) < 32:
                # Q: an empty newest segment is a writer creating one?
                # No: the writer creates it as .log.new and renames it.
                if data is not None and base == segs[-1] and len(data) == 0:
                    continue
                if data is not None:
                    self.damaged = True
                continue
            try:
                self.header(name, base, data)
            except Refuse:
                self.damaged = True


def main(argv):
    args = argv[1:]
    mode = "read"
    if args and args[0] in ("--verify", "--both"):
        mode = args[0][2:]
        args = args[1:]
    if len(args) != 1:
        sys.stderr.write("usage: page_reader.py [--verify | --both] LOG\n")
        return 2
    r = Reader(args[0], mode == "verify")
    status, verdict = 0, None
    try:
        r.run()
    except Refuse as e:
        sys.stdout.flush()
        sys.stderr.write("page_reader.py: %s: %s\n" % (args[0], e))
        status = e.status
        if e.status != 4 or e.version:
            verdict = e.status
        r.damaged = True
    if verdict is None and not hasattr(r, "log_id"):
        verdict = 1                       # settings corrupt
    if verdict is None:
        # what elog-verify says of what a reader sees: damage, a loss
        try:
            r.verify_extra()
            verdict = 1 if r.damaged else 0
        except Refuse as e:
            verdict = e.status
    if mode == "verify":
        return verdict
    if mode == "both":
        print("verify %d" % verdict)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
