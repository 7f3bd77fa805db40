"""The API of the sketch and around it: open, append, flush, read, consumers,
maintenance, errors."""

import datetime
import json
import os
import signal
import subprocess
import time

import pytest

import elog
from elog import Log, Record
from conftest import python_proc, run_python, sigint_default, wait_sleeping


def test_sketch_api_roundtrip(logdir):
    log = Log.open(logdir, writer=True)
    off = log.append(key=b"doc:42", value=b'{"n": 1}')
    assert off == 0
    assert log.durable_offset == 0
    assert log.flush() == 1
    assert log.durable_offset == 1
    recs = list(Log.open(logdir).read(from_offset=0))
    assert [(r.offset, r.key, r.value, r.schema) for r in recs] == [(0, b"doc:42", b'{"n": 1}', 0)]
    assert recs[0].json() == {"n": 1}
    assert abs(recs[0].ts_ms - time.time() * 1000) < 600_000
    log.close()
    assert log.closed
    log.close()  # a no-op


def test_context_manager_makes_durable(logdir):
    with Log.open(logdir, writer=True) as log:
        log.append(b"a")
        log.append("b", key="k", schema=7, ts_ms=1234)
    assert log.closed
    r = list(Log.open(logdir).read())
    assert [(x.value, x.key, x.schema, x.ts_ms) for x in r][1] == (b"b", b"k", 7, 1234)
    with pytest.raises(ValueError, match="closed"):
        log.append(b"c")


def test_reader_needs_a_log(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        Log.open(str(tmp_path / "nothing"))
    assert isinstance(e.value, elog.ElogOSError) and e.value.errno == 2
    assert "create=True" in str(e.value)
    os.mkdir(tmp_path / "empty")
    with pytest.raises(elog.NotALog) as e:
        Log.open(str(tmp_path / "empty"))
    assert "create=True" in str(e.value)
    log = Log.open(str(tmp_path / "made"), create=True)
    assert list(log.read()) == []
    # Beside the log's exclusive writer, a reader that may create opens.
    with Log.open(str(tmp_path / "made"), writer=True) as w:
        w.append(b"x", sync=True)
        assert [r.value for r in Log.open(str(tmp_path / "made"), create=True).read()] == [b"x"]
    assert not log.writable
    with pytest.raises(elog.InvalidArgument, match="writer=True"):
        log.append(b"x")


def test_second_writer_gets_pid(logdir):
    with Log.open(logdir, writer=True):
        with pytest.raises(elog.WriterBusy) as e:
            Log.open(logdir, writer=True)
        assert e.value.pid == os.getpid()
        assert isinstance(e.value, elog.Busy) and isinstance(e.value, elog.ElogError)
        # From another process too, and a shared writer beside an exclusive one.
        p = run_python(
            "import elog, sys\n"
            "for shared in (False, True):\n"
            "    try:\n"
            "        elog.Log.open(sys.argv[1], writer=True, shared=shared)\n"
            "    except elog.WriterBusy as e:\n"
            "        print(e.pid)\n", logdir, capture_output=True, text=True, check=True)
        assert p.stdout.split() == [str(os.getpid())] * 2


def test_shared_writers(logdir):
    a = Log.open(logdir, writer=True, shared=True)
    b = Log.open(logdir, writer=True, shared=True)
    assert a.append(b"x") is None  # learned when the batch is written
    assert b.append(b"y", sync=True) in (0, 1)
    assert a.append_many([b"1", b"2"]) == 2
    assert a.append(b"z", sync=True) == 4 or a.durable_offset == 5
    a.close()
    b.close()
    assert sorted(r.value for r in Log.open(logdir).read()) == [b"1", b"2", b"x", b"y", b"z"]
    with pytest.raises(ValueError, match="writer=True"):
        Log.open(logdir, shared=True)
    # An exclusive writer is refused beside a shared one.
    with Log.open(logdir, writer=True, shared=True):
        with pytest.raises(elog.WriterBusy):
            Log.open(logdir, writer=True)


def test_append_many_forms(logdir):
    with Log.open(logdir, writer=True) as log:
        r = log.append_many([b"v", "s", bytearray(b"ba"), memoryview(b"mv"), (b"k", b"v2"),
                             ("k2", "v3", 9), (b"k3", b"v4", 1, 5)])
        assert r == range(0, 7)
        assert log.append_many(iter([])) == range(7, 7)
        gen = (b"x%d" % i for i in range(1000))
        assert log.append_many(gen) == range(7, 1007)
        with pytest.raises(TypeError):
            log.append_many([b"ok", 42])
        with pytest.raises(TypeError):
            log.append_many([(b"only-key",)])
        assert log.flush() == 1008  # the item before the bad one went in
    recs = list(Log.open(logdir).read())
    assert recs[6] == Record(6, 5, 1, b"k3", b"v4")
    assert recs[5].schema == 9 and recs[5].key == b"k2"
    assert recs[1007].value == b"ok"
    # Records are values: equal, hashed and pickled by their fields.
    import pickle

    assert pickle.loads(pickle.dumps(recs[6])) == recs[6]
    assert len({recs[6], Record(6, 5, 1, b"k3", b"v4"), recs[5]}) == 2
    assert recs[6] != recs[5]


def test_append_arguments(logdir):
    with Log.open(logdir, writer=True) as log:
        with pytest.raises(TypeError):
            log.append(42)
        with pytest.raises(TypeError):
            log.append(None)
        with pytest.raises(ValueError):
            log.append(b"x", schema=70000)
        with pytest.raises(ValueError, match="empty"):
            log.append(b"x", key=b"")
        with pytest.raises(elog.TooBig) as e:
            log.append(b"x" * (elog.MAX_RECORD + 1))
        assert isinstance(e.value, ValueError)
        assert log.append(b"", key=b"gone") == 0  # a tombstone
        assert log.append(b"when", ts_ms=datetime.datetime(2026, 1, 1,
                                                           tzinfo=datetime.timezone.utc)) == 1
    r = list(Log.open(logdir).read())
    assert r[1].ts_ms == 1767225600000


def test_read_options(logdir):
    with Log.open(logdir, writer=True) as log:
        for i in range(20):
            log.append(b"v%d" % i, key=b"even" if i % 2 == 0 else b"odd", ts_ms=1000 + i)
    log = Log.open(logdir)
    assert [r.offset for r in log.read(from_offset=15)] == [15, 16, 17, 18, 19]
    assert [r.offset for r in log.read(key=b"odd", limit=3)] == [1, 3, 5]
    assert [r.offset for r in log.read(key="even", from_offset=14)] == [14, 16, 18]
    assert [r.offset for r in log.read(since=1005, until=1008)] == [5, 6, 7, 8]
    assert [r.offset for r in log.read(reverse=True, limit=3)] == [19, 18, 17]
    assert [r.offset for r in log.read(reverse=True, from_offset=4)] == [4, 3, 2, 1, 0]
    assert [r.offset for r in log.read(last=2)] == [18, 19]
    assert [r.offset for r in log.read(reverse=True, last=2)] == [19, 18]
    assert [r.offset for r in log.read(from_offset=100)] == []
    t = datetime.datetime.fromtimestamp(1.010, datetime.timezone.utc)
    assert [r.offset for r in log.read(since=t)][0] == 10
    with pytest.raises(ValueError):
        log.read(follow=True, reverse=True)
    with pytest.raises(ValueError):
        log.read(from_offset=1, group="g")
    with pytest.raises(ValueError):
        log.read(since=5, until=4)
    with pytest.raises(ValueError):
        log.read(from_offset=-1)
    with pytest.raises(TypeError):
        log.read(since="yesterday")
    # A reader is a context manager and closes itself at the end.
    with log.read() as rd:
        assert next(rd).offset == 0
        assert rd.position == 1
    assert rd.closed
    assert list(rd) == []
    # The Log itself iterates over every record.
    assert len(list(log)) == 20


def test_create_consumer(logdir):
    with Log.open(logdir, writer=True) as log:
        log.create_consumer("late")
        c = log.consumer("late")
        assert (c.uncommitted, c.next, c.lag) == (True, 0, 0)
        assert log.committed("late") is None
        log.append_many([b"a", b"b"])
        log.flush()
        assert [r.value for r in log.read(group="late")] == [b"a", b"b"]
        log.create_consumer("late")  # exists: no change
        assert log.consumer("late").uncommitted
        log.commit("late", 0)
        log.create_consumer("late")
        assert log.committed("late") == 0
        with pytest.raises(elog.BadConsumerName):
            log.create_consumer("no spaces")


def test_consumers(logdir):
    with Log.open(logdir, writer=True) as log:
        log.append_many([b"a", b"b", b"c"])
        log.flush()
        assert log.committed("g") is None
        assert log.consumer("g") is None
        log.commit("g", 1)
        assert log.committed("g") == 1
        assert [r.value for r in log.read(group="g")] == [b"c"]
        assert [r.offset for r in log.read(group="g", reverse=True)] == [2]
        (c,) = log.consumers()
        assert (c.name, c.offset, c.lag, c.lost) == ("g", 1, 1, 0)
        with pytest.raises(elog.Beyond):
            log.commit("g", 3)
        with pytest.raises(elog.BadConsumerName):
            log.commit("no spaces", 0)
        with pytest.raises(elog.NoConsumer) as e:
            log.delete_consumer("other")
        assert isinstance(e.value, LookupError)
        # A group that never committed starts at the beginning.
        assert [r.value for r in log.read(group="other")] == [b"a", b"b", b"c"]
        assert [r.value for r in log.read(group="other", reverse=True)] == [b"c", b"b", b"a"]
        log.delete_consumer("g")
        assert log.consumers() == []


def test_settings_and_mismatch(logdir):
    with Log.open(logdir, writer=True, segment_bytes=8192, cleanup="compact",
                  retain_bytes=1 << 20) as log:
        s = log.settings()
        assert (s["segment_bytes"], s["cleanup"], s["retain_bytes"]) == (8192, "compact", 1 << 20)
    assert Log.open(logdir).settings()["id"] == s["id"]
    with pytest.raises(elog.SettingMismatch) as e:
        Log.open(logdir, writer=True, segment_bytes=4096)
    assert "elog-retain --set" in str(e.value)
    with pytest.raises(ValueError):
        Log.open(logdir, segment_bytes=4096)  # a reader does not create
    with pytest.raises(TypeError):
        Log.open(logdir, writer=True, no_such_setting=1)
    with pytest.raises(ValueError):
        Log.open(logdir, writer=True, cleanup="sometimes")


def test_maintenance_results(logdir):
    with Log.open(logdir, writer=True, segment_bytes=4096, cleanup="compact") as log:
        for i in range(400):
            log.append(b"value-%04d" % i, key=b"k%d" % (i % 5))
        log.flush()
        c = log.compact(grace_ms=0)
        assert isinstance(c, elog.CompactResult)
        assert c.records_after < c.records_before and c.keys == 5
        assert all(s.action in ("rewritten", "merged", "emptied") for s in c.changed)
        for i in range(400):
            log.append(b"value-%04d" % i, key=b"k%d" % (i % 5))
        log.flush()
        dry = log.retain(max_bytes=4096, dry_run=True)
        assert dry.dry_run and dry.segments >= 1
        r = log.retain(max_bytes=4096)
        assert r.segments == dry.segments and r.start_after > r.start_before
        assert [s.action for s in r.removed] == ["removed"] * r.segments
        v = log.verify()
        assert v.clean and v.damage == 0 and v.segments == len(v.segment_list)
    plain = logdir + "-plain"
    with Log.open(plain, writer=True) as log:
        log.append(b"x")
        with pytest.raises(elog.NoCompact) as e:
            log.compact()
        assert "cleanup=compact" in str(e.value)


def test_verify_finds_damage(logdir):
    with Log.open(logdir, writer=True, segment_bytes=4096) as log:
        for i in range(200):
            log.append(b"value-%04d" % i)
    seg = os.path.join(logdir, "00000000000000000000.log")
    with open(seg, "r+b") as f:
        f.seek(200)
        f.write(b"\xff" * 16)
    v = Log.open(logdir).verify()
    assert not v.clean and v.damage >= 1
    assert any(p.kind == "damage" and p.file == "00000000000000000000.log" for p in v.problems)
    with pytest.raises(elog.Corrupt) as e:
        list(Log.open(logdir).read(strict=True))
    assert "elog-verify" in str(e.value)


def test_gaps_warn_or_raise(logdir):
    with Log.open(logdir, writer=True, segment_bytes=4096) as log:
        for i in range(300):
            log.append(b"value-%04d" % i)
        log.flush()
        rd = Log.open(logdir).read(from_offset=0)
        first = next(rd)
        rd2 = Log.open(logdir).read(from_offset=0, strict=True)
        next(rd2)
        r = log.retain(max_bytes=4096)
        assert r.segments >= 2
    with pytest.warns(elog.GapWarning, match="removed by retention"):
        rest = list(rd)
    assert first.offset == 0 and rest[-1].offset == 299
    assert rd.gaps and rd.gaps[0][2] == "retention"
    with pytest.raises(elog.Gap) as e:
        list(rd2)
    assert e.value.cause == "retention" and e.value.first <= e.value.last


def test_summary_is_elog_cat_L(logdir, elog_bin):
    with Log.open(logdir, writer=True, compression="zstd" if elog.have_zstd() else "none") as log:
        log.append_many([(b"k%d" % i, b'{"i": %d}' % i) for i in range(50)])
        log.flush()
        log.commit("mailer", 10)
    p = subprocess.run([os.path.join(elog_bin, "elog-cat"), "-L", "--json", logdir],
                       capture_output=True, text=True, check=True)
    assert Log.open(logdir).summary() == json.loads(p.stdout)


def test_programs_read_what_python_writes(logdir, elog_bin):
    with Log.open(logdir, writer=True) as log:
        log.append(b'{"a":1}', key=b"k", schema=3, ts_ms=5)
    out = subprocess.run([os.path.join(elog_bin, "elog-cat"), logdir], capture_output=True,
                         text=True, check=True).stdout
    assert json.loads(out) == {"offset": 0, "ts": 5, "schema": 3, "key": "k",
                               "value": {"a": 1}}
    subprocess.run([os.path.join(elog_bin, "elog-append"), "-K", ":", logdir],
                   input="key2:from the program\n", text=True, check=True)
    r = list(Log.open(logdir).read(from_offset=1))
    assert (r[0].key, r[0].value) == (b"key2", b"from the program")


def test_follow_ends_on_idle(logdir):
    with Log.open(logdir, writer=True) as log:
        log.append(b"one")
    t0 = time.monotonic()
    got = list(Log.open(logdir).read(follow=True, idle=0.3))
    assert [r.value for r in got] == [b"one"]
    assert time.monotonic() - t0 >= 0.25


def test_follow_sees_new_records(logdir):
    import threading

    with Log.open(logdir, writer=True) as log:
        got = []
        rd = log.read(follow=True, idle=30)

        def follow():
            for rec in rd:
                got.append(rec.value)
                if rec.value == b"last":
                    break

        t = threading.Thread(target=follow)
        t.start()
        for i in range(20):
            log.append(b"r%d" % i)
            log.flush()
        log.append(b"last", sync=True)
        t.join(60)
        assert not t.is_alive()
        assert got == [b"r%d" % i for i in range(20)] + [b"last"]


def test_follow_ends_cleanly_on_ctrl_c(logdir):
    with Log.open(logdir, writer=True) as log:
        log.append(b"one")
    p = python_proc(
        "import elog, sys\n"
        "rd = elog.Log.open(sys.argv[1]).read(follow=True)\n"
        "for rec in rd:\n"
        "    print(rec.value.decode(), flush=True)\n"
        "print('ended', rd.interrupted, flush=True)\n", logdir,
        stdout=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    assert p.stdout.readline() == "one\n"
    assert wait_sleeping(p.pid)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert out == "ended True\n" and p.returncode == 0


def test_errors_carry_code_and_message(logdir):
    e = elog._errors.make_error(-4, "00000000000000000000.log: bad crc at byte 28", logdir)
    assert isinstance(e, elog.Corrupt) and e.code == -4
    assert e.message.endswith("byte 28") and e.path == logdir
    assert str(e) == f"{logdir}: {e.message}; run elog-verify {logdir} to see what is damaged"
    full = elog._errors.make_error(28, "No space left on device", logdir)
    assert isinstance(full, elog.Full) and isinstance(full, OSError) and full.errno == 28
    other = elog._errors.make_error(13, "Permission denied", logdir)
    assert isinstance(other, elog.ElogOSError) and isinstance(other, PermissionError)
    assert type(elog._errors.make_error(5, "Input/output error")) is elog.ElogOSError
    assert type(elog._errors.make_error(-99, "new code")) is elog.ElogError
    with pytest.raises(elog.ElogOSError) as oe:
        Log.open("/proc/no-such-dir/x", writer=True)
    assert oe.value.errno > 0


def test_help_and_docstrings():
    assert "append-only" in elog.__doc__
    for name in elog.__all__:
        obj = getattr(elog, name)
        assert obj.__doc__, name
    for name in dir(Log):
        if not name.startswith("_"):
            assert getattr(Log, name).__doc__, name
    for name in ("offset", "ts_ms", "schema", "key", "value", "json"):
        assert getattr(Record, name).__doc__, name
    for name in ("position", "gaps", "interrupted", "close"):
        assert getattr(elog.Reader, name).__doc__, name
