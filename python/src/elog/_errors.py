"""The exceptions of elog, one class per kind of failure of the library.

Every failure of libelog comes back as an int: a negative ELOG_* code or a
positive errno value, with a message that names the file, position or name
involved.  make_error() turns the pair into one of the classes below, all
subclasses of ElogError; the C half of the package calls it for every
failure, so that the mapping is written here, once.
"""

import errno as _errno
import os as _os
import re as _re

# The library's codes (lib/elog.h).
GAP = -2
LOCKED = -3
CORRUPT = -4
NOTLOG = -5
BADVERSION = -6
TOOBIG = -7
FAILED = -8
NETFS = -9
INVALID = -10
TIMEOUT = -11
UNSUPPORTED = -12
NOCOMPACT = -13
END = -14
NOTREG = -15
LINKED = -16
SETTING = -17
BADNAME = -20
NOCONSUMER = -21
BEYOND = -22
TOOMANY = -23
TAKEN = -24


class ElogError(Exception):
    """Any failure of elog.

    Attributes:
        code: the library's code, a negative ELOG_* value, or an errno value
            (then the exception is also an OSError: see ElogOSError).
        message: the library's message, with the failure's context (file,
            byte position, name).
        path: the log directory the call worked on ("" when none).
        next_step: what to do about it, or None; str(error) ends with it.
    """

    next_step_text = None

    def __init__(self, message, code=0, path="", next_step=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.path = path
        if next_step is None and self.next_step_text:
            next_step = self.next_step_text.format(path=path or "DIR")
        self.next_step = next_step

    def __str__(self):
        where = f"{self.path}: " if self.path else ""
        if self.next_step:
            return f"{where}{self.message}; {self.next_step}"
        return f"{where}{self.message}"


class Busy(ElogError):
    """A lock stayed taken past the time to wait (ELOG_LOCKED): another
    writer, a maintenance run (retention, compaction, repair)."""

    next_step_text = "retry later, or give a longer wait_ms"


class WriterBusy(Busy):
    """Another writer has the log open: a second exclusive writer, or a
    shared writer beside an exclusive one.

    pid is the process holding the log open for writing when it could be
    read from /proc/locks, else None.
    """

    next_step_text = "stop the other writer, or open with shared=True beside shared writers"

    def __init__(self, message, code=LOCKED, path="", next_step=None, pid=None):
        super().__init__(message, code, path, next_step)
        self.pid = pid


class Corrupt(ElogError):
    """Damaged data (ELOG_CORRUPT): a record or file failed its check."""

    next_step_text = "run elog-verify {path} to see what is damaged"


class NotALog(ElogError):
    """The directory is not an elog log (ELOG_NOTLOG)."""

    next_step_text = "check the path, or open with create=True to make a log there"


class BadVersion(ElogError):
    """A file of a newer or unknown format version (ELOG_BADVERSION)."""

    next_step_text = "use the elog version that wrote the log"


class Unsupported(ElogError):
    """The log needs zstd, which this build of elog lacks (ELOG_UNSUPPORTED)."""

    next_step_text = "install libzstd-dev and reinstall the elog package"


class TooBig(ElogError, ValueError):
    """A record larger than elog.MAX_RECORD, or a key larger than
    elog.MAX_KEY (ELOG_TOOBIG)."""


class WriterFailed(ElogError):
    """The writer failed earlier (ELOG_FAILED): a sync failed, and the
    records it covered may not be on disk."""

    next_step_text = "close the log and open it again; records not acknowledged must be appended again"


class NetworkFS(ElogError):
    """The log is on a network filesystem, where locks and fsync cannot be
    trusted (ELOG_NETFS)."""

    next_step_text = "keep the log on a local filesystem"


class InvalidArgument(ElogError, ValueError):
    """An invalid argument or setting (ELOG_INVALID)."""


class SettingMismatch(InvalidArgument):
    """A creation setting given to Log.open() differs from the one stored
    with the log (ELOG_SETTING)."""

    next_step_text = "change the log's settings with elog-retain --set"


class BadConsumerName(InvalidArgument):
    """Not a valid consumer name (ELOG_BADNAME)."""


class Timeout(ElogError, TimeoutError):
    """A wait timed out (ELOG_TIMEOUT)."""


class NoCompact(ElogError):
    """Compaction of a log whose cleanup is delete (ELOG_NOCOMPACT): its keys
    filter, they do not name state."""

    next_step_text = "only if its keys name state: elog-retain --set cleanup=compact {path}"


class Gap(ElogError):
    """Records a reader expected are gone (ELOG_GAP), raised by a reader
    opened with strict=True.

    first and last are the offsets gone (inclusive); cause is "retention"
    or "damage".  Calling next() on the reader again goes on after them.
    """

    def __init__(self, message, code=GAP, path="", next_step=None, first=None, last=None,
                 cause=None):
        if next_step is None and cause == "damage":
            next_step = f"see elog-verify --salvage {path or 'DIR'}"
        super().__init__(message, code, path, next_step)
        self.first = first
        self.last = last
        self.cause = cause


class BadFile(ElogError):
    """A file of the log is not a regular file (ELOG_NOTREG) or has more
    than one hard link (ELOG_LINKED)."""

    next_step_text = "move the file out of the log directory, then run elog-verify {path}"


class NoConsumer(ElogError, LookupError):
    """No consumer of that name (ELOG_NOCONSUMER)."""

    next_step_text = "list the consumers with Log.consumers() (elog-commit -l {path})"


class Beyond(ElogError, ValueError):
    """An offset at or above the log's durable end (ELOG_BEYOND): a
    commit of a record that is not durable."""


class TooManyConsumers(ElogError):
    """The log has elog.CONSUMERS_MAX consumers already (ELOG_TOOMANY)."""

    next_step_text = "delete consumers no longer used (elog-commit -d {path} NAME)"


class OffsetTaken(ElogError, ValueError):
    """An offset at or below the log's end (ELOG_TAKEN)."""


class ElogOSError(ElogError, OSError):
    """A system call failed: code and errno are the errno value."""

    def __init__(self, message, code=0, path="", next_step=None):
        ElogError.__init__(self, message, code, path, next_step)
        self.errno = code
        self.strerror = message
        self.filename = path or None

    def __str__(self):
        return ElogError.__str__(self)


class Full(ElogOSError):
    """The disk or the user's quota is full (ENOSPC, EDQUOT)."""

    next_step_text = "free space (elog-retain {path} drops old segments), then retry"


class GapWarning(UserWarning):
    """Warned when a reader skips records that are gone (not strict)."""


_BY_CODE = {
    LOCKED: Busy,
    CORRUPT: Corrupt,
    NOTLOG: NotALog,
    BADVERSION: BadVersion,
    TOOBIG: TooBig,
    FAILED: WriterFailed,
    NETFS: NetworkFS,
    INVALID: InvalidArgument,
    TIMEOUT: Timeout,
    UNSUPPORTED: Unsupported,
    NOCOMPACT: NoCompact,
    NOTREG: BadFile,
    LINKED: BadFile,
    SETTING: SettingMismatch,
    GAP: Gap,
    BADNAME: BadConsumerName,
    NOCONSUMER: NoConsumer,
    BEYOND: Beyond,
    TOOMANY: TooManyConsumers,
    TAKEN: OffsetTaken,
}

_OS_CLASSES = {}


def _os_class(code):
    """ElogOSError, or a subclass that is also OSError's own class for the
    errno value (FileNotFoundError, PermissionError, ...), so that `except
    FileNotFoundError` works as it does for open()."""
    if code in (_errno.ENOSPC, _errno.EDQUOT):
        return Full
    base = type(OSError(code, ""))
    if base is OSError:
        return ElogOSError
    cls = _OS_CLASSES.get(base)
    if cls is None:
        cls = type("Elog" + base.__name__, (ElogOSError, base),
                   {"__doc__": f"ElogOSError that is also {base.__name__}.",
                    "__module__": __name__})
        _OS_CLASSES[base] = cls
    return cls


_WRITER_OPEN = _re.compile(r"writer has the log open(?: \(pid (\d+)\))?")


def make_error(code, message, path="", **extra):
    """The exception for the library's code and message (not raised)."""
    if code > 0:
        next_step = None
        if code == _errno.ENOENT and message == _os.strerror(code):
            next_step = "check the path, or open with create=True to make a log there"
        return _os_class(code)(message, code, path, next_step)
    m = _WRITER_OPEN.search(message) if code == LOCKED else None
    if m:
        return WriterBusy(message, code, path, pid=int(m.group(1)) if m.group(1) else None)
    cls = _BY_CODE.get(code, ElogError)
    return cls(message, code, path, **extra)
