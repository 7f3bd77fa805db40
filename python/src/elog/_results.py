"""The results of elog's calls: consumers, and the reports of retention,
compaction and verification, as frozen dataclasses."""

from dataclasses import dataclass as _dataclass, field as _field
from typing import List, Optional


@_dataclass(frozen=True)
class Consumer:
    """A named consumer's committed offset (Log.consumers(), Log.consumer()).

    offset is the last record it processed; lag the offsets still to read,
    to the durable end; lost the offsets retention removed before it read
    them, from lost_first to lost_last, until Log.ack_loss() acknowledges
    them.  next is the first offset it reads next; uncommitted is True for
    a consumer registered before its first record (elog-commit --create),
    whose offset and committed_ms then mean nothing (committed_ms is when
    it was registered).
    """

    name: str
    offset: int
    committed_ms: int
    lag: int
    lost: int
    lost_first: int
    lost_last: int
    next: int
    uncommitted: bool


@_dataclass(frozen=True)
class SegmentReport:
    """What retention or compaction did to one segment: action is "removed"
    (retention), "rewritten" or "merged" (compaction, merged into `into`)."""

    action: str
    base: int
    end: int
    into: int
    records_before: int
    records_after: int
    bytes_before: int
    bytes_after: int
    newest_ms: Optional[int]
    damaged: bool


@_dataclass(frozen=True)
class ConsumerLoss:
    """A named consumer that lost (dry run: would lose) records it had not
    read, offsets first to last; recorded until Log.ack_loss()."""

    name: str
    first: int
    last: int
    records: int
    forced: bool
    recorded: bool


@_dataclass(frozen=True)
class RetainResult:
    """The result of Log.retain(): segments and bytes removed, the log's
    first offset before and after, the .log bytes left, and why the first
    closed segment kept was kept (kept_why: "none", "young", "untrusted",
    "consumer" (kept_consumer has not read it) or "damaged")."""

    segments: int
    bytes: int
    start_before: int
    start_after: int
    total_bytes: int
    leftovers: int
    kept_why: str
    kept_base: int
    kept_end: int
    kept_newest_ms: Optional[int]
    kept_judged_ms: Optional[int]
    kept_damaged: bool
    kept_consumer: str
    losers: int
    losses_unrecorded: bool
    consumers_unknown: bool
    unjudged: int
    unjudged_base: int
    damaged: int
    dry_run: bool
    removed: List[SegmentReport] = _field(default_factory=list)
    losses: List[ConsumerLoss] = _field(default_factory=list)


@_dataclass(frozen=True)
class CompactResult:
    """The result of Log.compact(): closed segments, records and bytes
    before and after, distinct keys, tombstones kept (within their grace)
    and removed, and each segment changed."""

    segments_before: int
    segments_after: int
    segments_rewritten: int
    records_before: int
    records_after: int
    bytes_before: int
    bytes_after: int
    keys: int
    tombstones_kept: int
    tombstones_removed: int
    leftovers: int
    memory: int
    dry_run: bool
    changed: List[SegmentReport] = _field(default_factory=list)


@_dataclass(frozen=True)
class Problem:
    """One thing Log.verify() found.

    kind: "damage", "warning", "repaired", "loss" or "unreadable"; file: the
    file's name in the log directory ("." for the directory); pos: the byte
    position, or None for the whole file; text: what is wrong; hint: the
    next step ("cut", "retain", "foreign", "compact_copy", "compact",
    "loss", "reseal", "salvage", "no_salvage" or "none"), detail: what that
    step would do.
    """

    kind: str
    file: str
    pos: Optional[int]
    text: str
    hint: str
    detail: str


@_dataclass(frozen=True)
class SegmentInfo:
    """One segment as Log.verify() found it."""

    base: int
    bytes: int
    records: int
    first: Optional[int]
    last: Optional[int]
    ts_min: Optional[int]
    ts_max: Optional[int]
    active: bool
    damaged: bool


@_dataclass(frozen=True)
class VerifyResult:
    """The result of Log.verify().

    damage, warnings and repaired count the problems; remaining is the
    damage left (after a repair); losses the ranges lost for good;
    unreadable the ranges readers cannot read, of which salvageable
    repair=True, salvage=True gets past.  clean is True when nothing is
    damaged, lost or unreadable.
    """

    damage: int
    warnings: int
    repaired: int
    remaining: int
    segments: int
    records: int
    bytes: int
    losses: int
    unreadable: int
    salvageable: int
    problems: List[Problem] = _field(default_factory=list)
    segment_list: List[SegmentInfo] = _field(default_factory=list)

    @property
    def clean(self) -> bool:
        return self.remaining == 0 and self.losses == 0 and self.unreadable == 0
