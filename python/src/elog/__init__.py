"""elog: an append-only event log kept in a directory of files.

Any number of processes append records (or one alone, the exclusive
writer), any number read them in order, each from its own position; a
record is durable, on disk, once flush() returns, and readers never see one
that is not.  Named consumers keep their place in the log itself.  This
package is the Python binding of libelog, the C library of the elog
programs (elog-append, elog-cat, ...): the same log, the same files.

    import elog

    with elog.Log.open("events/", writer=True) as log:   # a second writer gets WriterBusy
        off = log.append(b'{"type": "login"}', key=b"user:42")
        log.flush()                                        # one fdatasync for all appended

    for rec in elog.Log.open("events/").read(from_offset=0):
        print(rec.offset, rec.key, rec.json())

Reading: Log.read() returns an iterator of Record objects (offset, ts_ms,
schema, key, value and json()); follow=True waits for new records like
`tail -f` and ends on idle=SECONDS or Ctrl-C.  Consumers: commit(),
create_consumer(), committed(), consumers().  Maintenance: retain(),
compact(), verify(), summary().  Every failure raises a subclass of ElogError carrying the
library's message and, where there is one, the next step.

Threads: a writing Log is shared by threads, and the appends of several
threads share their syncs (group commit); every call that may wait
(fdatasync, a lock, following) releases the GIL.  A reader is used by one
thread at a time.  The manual pages elog(7), elog(3) and elog(5) describe
the model, the C calls and the files.
"""

import datetime as _dt
import os as _os
import warnings as _warnings
from typing import Any, Dict, Iterable, List, Optional, Union

from ._errors import (
    BadConsumerName,
    BadFile,
    BadVersion,
    Beyond,
    Busy,
    Corrupt,
    ElogError,
    ElogOSError,
    Full,
    Gap,
    GapWarning,
    InvalidArgument,
    NetworkFS,
    NoCompact,
    NoConsumer,
    NotALog,
    OffsetTaken,
    SettingMismatch,
    Timeout,
    TooBig,
    TooManyConsumers,
    Unsupported,
    WriterBusy,
    WriterFailed,
)
from . import _elog
from ._elog import Reader, Record
from ._results import (
    CompactResult,
    Consumer,
    ConsumerLoss,
    Problem,
    RetainResult,
    SegmentInfo,
    SegmentReport,
    VerifyResult,
)

__version__ = "0.2.0"
LIB_VERSION = _elog.LIB_VERSION
MAX_RECORD = _elog.MAX_RECORD
MAX_KEY = _elog.MAX_KEY
CONSUMERS_MAX = 4096
CONSUMER_NAME_MAX = _elog.CONSUMER_NAME_MAX

__all__ = [
    "Log", "Record", "Reader", "Consumer", "RetainResult", "SegmentReport", "ConsumerLoss",
    "CompactResult", "VerifyResult", "Problem", "SegmentInfo", "have_zstd",
    "ElogError", "Busy", "WriterBusy", "Corrupt", "NotALog", "BadVersion", "Unsupported",
    "TooBig", "WriterFailed", "NetworkFS", "InvalidArgument", "SettingMismatch",
    "BadConsumerName", "Timeout", "NoCompact", "Gap", "BadFile", "NoConsumer", "Beyond",
    "TooManyConsumers", "OffsetTaken", "ElogOSError", "Full", "GapWarning",
]

PathType = Union[str, bytes, "_os.PathLike[str]", "_os.PathLike[bytes]"]


def have_zstd() -> bool:
    """True when this build reads and writes zstd-compressed logs."""
    return _elog.have_zstd()


def _ms(t, what):
    """A time as ms since the epoch: an int (ms), a datetime (naive: local
    time), or None."""
    if t is None or isinstance(t, int) and not isinstance(t, bool):
        return t
    if isinstance(t, _dt.datetime):
        return int(round(t.timestamp() * 1000))
    raise TypeError(f"{what} must be an int of ms since the epoch or a datetime")


def _wait_ms(wait):
    """Seconds to wait (None: the call's default; 0: not at all; float('inf'): no
    limit) as the library's wait_ms."""
    if wait is None:
        return 0
    if wait == float("inf"):
        return _elog.WAIT_FOREVER
    if wait < 0:
        raise ValueError("wait must be a number of seconds >= 0, or None")
    ms = int(round(wait * 1000))
    return _elog.WAIT_NONE if ms == 0 else ms


_CREATION = {
    "segment_bytes", "index_interval", "retain_ms", "retain_bytes", "compression",
    "compression_level", "dictionary", "retain_consumers", "cleanup",
}


def _writer_options(settings):
    """Log.open()'s **settings as Writer's keywords."""
    o = {}
    for name, v in settings.items():
        if name in ("segment_bytes", "index_interval", "retain_ms", "retain_bytes",
                    "compression_level", "batch_bytes"):
            if v is not None:
                o[name] = v
        elif name == "compression":
            if v not in (None, "none", "zstd"):
                raise ValueError("compression must be 'none' or 'zstd'")
            o[name] = 1 if v == "zstd" else 0
        elif name == "dictionary":
            o["no_dictionary"] = not v
        elif name == "retain_consumers":
            if v not in (None, "report", "protect"):
                raise ValueError("retain_consumers must be 'report' or 'protect'")
            if v is not None:
                o[name] = 1 if v == "protect" else 0
        elif name == "cleanup":
            if v not in (None, "delete", "compact"):
                raise ValueError("cleanup must be 'delete' or 'compact'")
            if v is not None:
                o[name] = 2 if v == "compact" else 1
        elif name == "wait":
            o["wait_ms"] = _wait_ms(v)
        else:
            raise TypeError(f"Log.open() got an unexpected keyword argument {name!r}")
    return o


def _iso(ms):
    if ms is None:
        return None
    t = _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class Log:
    """A log directory, opened for reading, or for reading and writing.

    Open one with Log.open().  A Log is a context manager: leaving the
    block closes it, which makes every appended record durable first.
    """

    def __init__(self, path: PathType, _writer=None):
        self._path = path
        self._dir = _os.fsdecode(path) if not isinstance(path, bytes) else path
        self._writer = _writer

    @classmethod
    def open(cls, path: PathType, writer: bool = False, create: Optional[bool] = None,
             shared: bool = False, **settings) -> "Log":
        """Open the log in directory path.

        writer=False opens it for reading: no handle is held, each read()
        opens its own reader.  writer=True opens it for appending too, as
        the log's only writer: a second writer, in this process or another,
        gets WriterBusy (with the holder's pid).  shared=True (with
        writer=True) is one of any number of writers, in any number of
        processes, appending at once; offsets are then learned when a
        batch is written (see append()).

        create: make the directory and the log when missing; the default is
        True for a writer, False for a reader.  A reader that creates opens
        a writer for a moment.

        settings (keywords), for a log that is created (given for an
        existing log, each must match its stored setting, else
        SettingMismatch): segment_bytes (roll size, default 64 MiB),
        index_interval (bytes, default 4096), retain_ms and retain_bytes
        (retention policy, None: none), compression ("none" or "zstd"),
        compression_level (1..19), dictionary (False: never train a zstd
        dictionary), retain_consumers ("report" or "protect"), cleanup
        ("delete", the default, or "compact": whether compact() may drop a
        key's older records).  For the handle: batch_bytes (a buffer that
        flushes by itself, default 1 MiB) and wait (seconds to wait for the
        log's lock; None: 10 s; float("inf"): no limit).
        """
        if create is None:
            create = bool(writer)
        if shared and not writer:
            raise ValueError("shared=True is for a writer: give writer=True too")
        opts = _writer_options(settings)
        if writer:
            w = _elog.Writer(path, create=create, exclusive=not shared, **opts)
            return cls(path, w)
        if create:
            # A shared writer, for a moment, creates the log when it is
            # missing (or checks the settings given against the log's); a
            # log that is there, with nothing to check, is left alone, as
            # its exclusive writer would refuse the shared one.
            try:
                _elog.settings_read(path)
                missing = False
            except (NotALog, FileNotFoundError):
                missing = True
            if missing or set(settings) & _CREATION:
                _elog.Writer(path, create=True, exclusive=False, **opts).close()
        else:
            bad = set(settings) - {"wait", "batch_bytes"}
            if bad:
                raise ValueError(
                    f"{sorted(bad)[0]} is a setting of a log being created: give create=True"
                )
        _elog.settings_read(path)  # NotALog, ... now rather than at the first read
        return cls(path)

    # -- the handle --------------------------------------------------------

    @property
    def path(self):
        """The log directory, as given to open()."""
        return self._path

    @property
    def writable(self) -> bool:
        """True when opened with writer=True and not closed."""
        return self._writer is not None and not self._writer.closed

    @property
    def closed(self) -> bool:
        """True after close() of a writing Log (a reading Log is never closed)."""
        return self._writer is not None and self._writer.closed

    def close(self) -> None:
        """Make every appended record durable, then release the log.  A
        no-op when not writing or already closed."""
        if self._writer is not None:
            self._writer.close()

    def __enter__(self) -> "Log":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self):
        mode = "closed" if self.closed else ("writer" if self._writer else "reader")
        if self._writer is not None and not self._writer.closed and not self._writer.exclusive:
            mode = "shared writer"
        return f"<elog.Log {self._dir!r} {mode}>"

    def _w(self):
        if self._writer is None:
            raise InvalidArgument("the log is open for reading: open it with writer=True",
                                  -10, self._dir)
        return self._writer

    # -- writing -----------------------------------------------------------

    def append(self, value: Union[bytes, str], key: Union[bytes, str, None] = None,
               schema: int = 0, ts_ms: Optional[int] = None, *, sync: bool = False
               ) -> Optional[int]:
        """Append one record; return its offset.

        value and key are bytes (a str is stored as UTF-8; other bytes-like
        objects are copied).  key None: an unkeyed record; an empty value
        with a key is a tombstone for compaction.  schema: the
        application's payload format id (0..65535, 0: none).  ts_ms: the
        record's time in ms since the epoch (None: now).

        The record is buffered, not yet durable: flush() (or sync=True, or
        close()) makes it so.  The buffer writes itself out when it holds
        batch_bytes.  The offset is returned at once for the exclusive
        writer; a shared writer learns it only when the batch is written,
        so its append() returns None unless sync=True, which appends,
        flushes and returns the offset of a durable record.
        """
        return self._w().append(value, key, schema=schema, ts_ms=_ms(ts_ms, "ts_ms"),
                                sync=sync)

    def append_many(self, items: Iterable[Any]) -> Union[range, int]:
        """Append every item of an iterable; not yet durable (see flush()).

        An item is a value (bytes or str), or a tuple (key, value), (key,
        value, schema) or (key, value, schema, ts_ms).  Returns the offsets
        taken as a range for the exclusive writer (consecutive: no other
        thread appends in between), or the number of records for a shared
        writer.  When an item is bad, the items before it are appended and
        the error is raised.
        """
        return self._w().append_many(items)

    def flush(self) -> int:
        """Make every record appended before the call durable (one
        fdatasync, shared with the other threads and processes flushing at
        the same time) and return durable_offset."""
        return self._w().flush()

    @property
    def durable_offset(self) -> int:
        """The durable end: every record with an offset below it is on
        disk.  For a writer, as it last saw it (flush() moves it); for a
        reader, as the log's watermark says now."""
        if self._writer is not None and not self._writer.closed:
            return self._writer.durable_end
        return _elog.summary(self._path)["durable_end"]

    @property
    def next_offset(self) -> int:
        """The offset the next record appended through this Log would get,
        if no other writer writes first."""
        return self._w().next_offset

    def notice(self) -> Optional[str]:
        """Something the writer did that an operator should hear of though
        no call failed (a recovery that cut another writer's unsynced
        records), once; else None."""
        return self._w().notice()

    def settings(self) -> Dict[str, Any]:
        """The settings stored with the log: id, created_ms, segment_bytes,
        index_interval, retain_ms, retain_bytes (0: none), compression,
        compression_level, no_dictionary, retain_consumers, cleanup, and
        format (1: written by elog 0.2 only, 2: by 0.3)."""
        if self._writer is not None and not self._writer.closed:
            return self._writer.settings
        return _elog.settings_read(self._path)

    # -- reading -----------------------------------------------------------

    def read(self, from_offset: Optional[int] = None, follow: bool = False,
             key: Union[bytes, str, None] = None, since=None, until=None,
             reverse: bool = False, group: Optional[str] = None,
             idle: Optional[float] = None, *, last: Optional[int] = None,
             limit: Optional[int] = None, strict: bool = False) -> Reader:
        """Iterate over the log's durable records, in offset order.

        from_offset: the first offset to read (the first record at or after
        it); None: the beginning.  group: start just after the consumer
        group's committed offset (commit() moves it; read() does not).
        last=N: the last N records.  key: only the records of that key.
        since/until (ms since the epoch, or datetime): only records stamped
        in [since, until], whatever order the clocks wrote them in.
        reverse=True: newest first (from from_offset down, or the end),
        down to the group's committed offset + 1 when group is given.
        limit: at most that many records.

        follow=True: at the end, wait for new records like `tail -f`.  The
        iteration then ends on idle (seconds without a record) or on
        KeyboardInterrupt (Ctrl-C), cleanly (reader.interrupted tells);
        the wait releases the GIL.

        Records that are gone (retention removed them while this reader
        was behind, or damage) are skipped with a GapWarning and listed in
        reader.gaps; strict=True raises Gap instead.
        """
        return Reader(self._path, from_offset=from_offset, follow=follow, key=key,
                      since=_ms(since, "since"), until=_ms(until, "until"),
                      reverse=reverse, group=group, idle=idle, last=last, limit=limit,
                      strict=strict, on_gap=_warn_gap)

    def __iter__(self):
        """Iterate over every durable record (read())."""
        return self.read()

    # -- consumers ---------------------------------------------------------

    def commit(self, name: str, offset: int) -> None:
        """Record offset as the last record consumer name processed (made
        durable before it returns).  The offset must be below the durable
        end (else Beyond); a new name is created."""
        _elog.consumer_commit(self._path, name, offset)

    def committed(self, name: str) -> Optional[int]:
        """Consumer name's committed offset, or None when it has none (no
        such consumer, or one created and not yet committed)."""
        c = _elog.consumer_get(self._path, name)
        return None if c is None or c["uncommitted"] else c["offset"]

    def consumer(self, name: str) -> Optional[Consumer]:
        """Consumer name's entry (offset, lag, losses), or None."""
        c = _elog.consumer_get(self._path, name)
        return None if c is None else Consumer(**c)

    def consumers(self) -> List[Consumer]:
        """Every named consumer, sorted by name, with its lag."""
        return [Consumer(**c) for c in _elog.consumer_list(self._path)]

    def create_consumer(self, name: str) -> None:
        """Register consumer name before its first record (elog-commit
        --create): uncommitted, it reads from the log's first record, and
        retention's protect keeps every record for it.  Nothing changes
        when the name exists."""
        _elog.consumer_create(self._path, name)

    def delete_consumer(self, name: str) -> None:
        """Forget consumer name (NoConsumer when there is none)."""
        _elog.consumer_delete(self._path, name)

    def ack_loss(self, name: str) -> None:
        """Acknowledge consumer name's loss to retention."""
        _elog.consumer_ack_loss(self._path, name)

    # -- maintenance -------------------------------------------------------

    def retain(self, max_age_ms: Optional[int] = None, max_bytes: Optional[int] = None, *,
               dry_run: bool = False, wait: Optional[float] = 0,
               now_ms: Optional[int] = None) -> RetainResult:
        """Remove the oldest closed segments by age and size (elog-retain).

        max_age_ms / max_bytes: None: the log's stored policy; -1: no limit
        of that kind.  dry_run: report, change nothing.  wait: seconds to
        wait for a maintenance run holding the log (0: none, Busy at once).
        Runs beside live writers and readers.
        """
        r = _elog.retain(self._path, max_age_ms=max_age_ms, max_bytes=max_bytes,
                         dry_run=dry_run, wait_ms=_maint_wait(wait), now_ms=now_ms or 0)
        r["removed"] = [SegmentReport(**s) for s in r["removed"]]
        r["losses"] = [ConsumerLoss(**c) for c in r["losses"]]
        return RetainResult(**r)

    def compact(self, grace_ms: Optional[int] = None, min_lag_ms: int = 0, *,
                dry_run: bool = False, wait: Optional[float] = 0,
                now_ms: Optional[int] = None) -> CompactResult:
        """Keep the newest record of each key in the closed segments
        (elog-compact), in a log created with cleanup="compact" (else
        NoCompact).  grace_ms: how long a tombstone stays (None: 24 h, 0:
        removed at once); min_lag_ms: leave younger records alone."""
        r = _elog.compact(self._path, grace_ms=grace_ms, min_lag_ms=min_lag_ms,
                          dry_run=dry_run, wait_ms=_maint_wait(wait), now_ms=now_ms or 0)
        r["changed"] = [SegmentReport(**s) for s in r["changed"]]
        return CompactResult(**r)

    def verify(self, repair: bool = False, salvage: bool = False, *,
               wait: Optional[float] = None) -> VerifyResult:
        """Check every byte of the log (elog-verify); repair=True repairs
        what it can, salvage=True (with repair) gets past damage in the
        active segment too.  Returns the problems found, whatever they are:
        result.clean says whether the log is sound."""
        r = _elog.verify(self._path, repair=repair, salvage=salvage, wait_ms=_wait_ms(wait))
        r["problems"] = [Problem(**p) for p in r["problems"]]
        r["segment_list"] = [SegmentInfo(**s) for s in r["segment_list"]]
        return VerifyResult(**r)

    def summary(self) -> Dict[str, Any]:
        """One look at the log, as `elog-cat -L --json` prints it: the same
        keys and values (times as ms and as RFC 3339 text, writers' pids,
        retention, compaction, compression, consumers).  Takes no lock and
        does not scan the log."""
        return _summary(self._dir, _elog.summary(self._path),
                        _elog.consumer_list(self._path))


def _maint_wait(wait):
    # Maintenance calls default to not waiting at all (0 in the library).
    return 0 if wait == 0 or wait is None else _wait_ms(wait)


def _warn_gap(first, last, cause, message):
    _warnings.warn(GapWarning(message), stacklevel=2)


def _summary(dirname, s, consumers):
    st = s["settings"]
    dirtext = dirname if isinstance(dirname, str) else _os.fsdecode(dirname)
    try:
        dirtext.encode("utf-8")
    except UnicodeEncodeError:
        dirtext = None

    def times(d, name, ms):
        d[name + "_ms"] = ms
        d[name] = _iso(ms)

    out = {"dir": dirtext, "id": st["id"]}
    times(out, "created", st["created_ms"])
    has = s["records"] > 0
    out["first"] = s["first"] if has else None
    out["last"] = s["last"] if has else None
    out["records"] = s["records"]
    out["records_exact"] = s["records_exact"]
    times(out, "copy_holes", s["copy_last_ms"])
    out["durable_end"] = s["durable_end"]
    out["start"] = s["start"]
    out["format"] = st["format"]

    def versions(bits):
        return [v for v in range(1, 33) if bits >> (v - 1) & 1]

    out["segment_versions"] = versions(s["segment_versions"])
    out["index_versions"] = versions(s["index_versions"])
    out["segments"] = s["segments"]
    out["active_segment"] = s["active_base"]
    out["segment_bytes"] = st["segment_bytes"]
    out["log_bytes"] = s["log_bytes"]
    out["dir_bytes"] = s["dir_bytes"]
    out["disk_bytes"] = s["disk_bytes"]
    times(out, "oldest", s["oldest_ms"] if has else None)
    times(out, "newest", s["newest_ms"] if has else None)
    out["writers"] = s["writers"]
    out["writers_exclusive"] = s["writers_exclusive"]
    out["writing_pid"] = s["batch_pid"] or None
    out["maintenance_pid"] = s["maint_pid"] or None
    ret = {"max_age_ms": st["retain_ms"] or None, "max_bytes": st["retain_bytes"] or None}
    times(ret, "last_run", s["retain_last_ms"])
    out["retention"] = ret
    comp = {"cleanup": st["cleanup"]}
    times(comp, "last_run", s["compact_last_ms"])
    out["compaction"] = comp
    zstd = st["compression"] == "zstd"
    ratio = None
    if zstd and not s["sample_unknown"] and s["sample_stored"]:
        ratio = round(s["sample_raw"] / s["sample_stored"], 2)
    out["compression"] = {
        "codec": st["compression"],
        "level": st["compression_level"] if zstd else None,
        "ratio": ratio,
        "sample_bytes": s["sample_stored"],
    }
    out["damaged"] = s["damaged"]
    out["lost"] = s["lost"]
    out["pending"] = s["pending"]
    out["pending_cut"] = s["pending_cut"]
    cl = []
    for c in consumers:
        e = {"name": c["name"], "offset": None if c["uncommitted"] else c["offset"],
             "next": c["next"], "lag": c["lag"], "lost": c["lost"]}
        if c["lost"]:
            e["lost_first"] = c["lost_first"]
            e["lost_last"] = c["lost_last"]
        times(e, "committed", None if c["uncommitted"] else c["committed_ms"])
        if c["uncommitted"]:
            times(e, "created", c["committed_ms"])
        cl.append(e)
    out["consumers"] = cl
    return out
