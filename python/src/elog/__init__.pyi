"""Type stubs of the elog package (the Python binding of libelog)."""

import datetime
import os
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from ._results import (
    CompactResult as CompactResult,
    Consumer as Consumer,
    ConsumerLoss as ConsumerLoss,
    Problem as Problem,
    RetainResult as RetainResult,
    SegmentInfo as SegmentInfo,
    SegmentReport as SegmentReport,
    VerifyResult as VerifyResult,
)
from ._errors import (
    BadConsumerName as BadConsumerName,
    BadFile as BadFile,
    BadVersion as BadVersion,
    Beyond as Beyond,
    Busy as Busy,
    Corrupt as Corrupt,
    ElogError as ElogError,
    ElogOSError as ElogOSError,
    Full as Full,
    Gap as Gap,
    GapWarning as GapWarning,
    InvalidArgument as InvalidArgument,
    NetworkFS as NetworkFS,
    NoCompact as NoCompact,
    NoConsumer as NoConsumer,
    NotALog as NotALog,
    OffsetTaken as OffsetTaken,
    SettingMismatch as SettingMismatch,
    Timeout as Timeout,
    TooBig as TooBig,
    TooManyConsumers as TooManyConsumers,
    Unsupported as Unsupported,
    WriterBusy as WriterBusy,
    WriterFailed as WriterFailed,
)

__version__: str
LIB_VERSION: str
MAX_RECORD: int
MAX_KEY: int
CONSUMERS_MAX: int
CONSUMER_NAME_MAX: int

PathType = Union[str, bytes, os.PathLike]
Data = Union[bytes, bytearray, memoryview, str]
Time = Union[int, datetime.datetime]
Item = Union[Data, Tuple[Optional[Data], Data], Tuple[Optional[Data], Data, int],
             Tuple[Optional[Data], Data, int, Optional[int]]]

def have_zstd() -> bool: ...

class Record:
    offset: int
    ts_ms: int
    schema: int
    key: Optional[bytes]
    value: bytes
    def __init__(self, offset: int, ts_ms: int, schema: int, key: Optional[Data],
                 value: Data) -> None: ...
    def json(self) -> Any: ...

class Reader(Iterator[Record]):
    position: Optional[int]
    durable_end: Optional[int]
    gaps: List[Tuple[int, int, str]]
    interrupted: bool
    closed: bool
    def __iter__(self) -> "Reader": ...
    def __next__(self) -> Record: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Reader": ...
    def __exit__(self, *exc: object) -> None: ...

class Log:
    @classmethod
    def open(cls, path: PathType, writer: bool = ..., create: Optional[bool] = ...,
             shared: bool = ..., *, segment_bytes: Optional[int] = ...,
             index_interval: Optional[int] = ..., retain_ms: Optional[int] = ...,
             retain_bytes: Optional[int] = ..., compression: Optional[str] = ...,
             compression_level: Optional[int] = ..., dictionary: bool = ...,
             retain_consumers: Optional[str] = ..., cleanup: Optional[str] = ...,
             batch_bytes: Optional[int] = ..., wait: Optional[float] = ...) -> "Log": ...
    @property
    def path(self) -> PathType: ...
    @property
    def writable(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Log": ...
    def __exit__(self, *exc: object) -> None: ...
    def append(self, value: Data, key: Optional[Data] = ..., schema: int = ...,
               ts_ms: Optional[Time] = ..., *, sync: bool = ...) -> Optional[int]: ...
    def append_many(self, items: Iterable[Item]) -> Union[range, int]: ...
    def flush(self) -> int: ...
    @property
    def durable_offset(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    def notice(self) -> Optional[str]: ...
    def settings(self) -> Dict[str, Any]: ...
    def read(self, from_offset: Optional[int] = ..., follow: bool = ...,
             key: Optional[Data] = ..., since: Optional[Time] = ...,
             until: Optional[Time] = ..., reverse: bool = ..., group: Optional[str] = ...,
             idle: Optional[float] = ..., *, last: Optional[int] = ...,
             limit: Optional[int] = ..., strict: bool = ...) -> Reader: ...
    def __iter__(self) -> Reader: ...
    def commit(self, name: str, offset: int) -> None: ...
    def committed(self, name: str) -> Optional[int]: ...
    def consumer(self, name: str) -> Optional[Consumer]: ...
    def consumers(self) -> List[Consumer]: ...
    def create_consumer(self, name: str) -> None: ...
    def delete_consumer(self, name: str) -> None: ...
    def ack_loss(self, name: str) -> None: ...
    def retain(self, max_age_ms: Optional[int] = ..., max_bytes: Optional[int] = ..., *,
               dry_run: bool = ..., wait: Optional[float] = ...,
               now_ms: Optional[int] = ...) -> RetainResult: ...
    def compact(self, grace_ms: Optional[int] = ..., min_lag_ms: int = ..., *,
                dry_run: bool = ..., wait: Optional[float] = ...,
                now_ms: Optional[int] = ...) -> CompactResult: ...
    def verify(self, repair: bool = ..., salvage: bool = ..., *,
               wait: Optional[float] = ...) -> VerifyResult: ...
    def summary(self) -> Dict[str, Any]: ...
