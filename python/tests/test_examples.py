"""The three examples of python/examples, run as a user would, killed with
SIGKILL along the way."""

import os
import random
import sqlite3
import subprocess
import sys
import time

import pytest

import elog
from elog import Log

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
SEED = int(os.environ.get("ELOG_PY_SEED", random.randrange(1 << 30)))


def example(name):
    return [sys.executable, os.path.join(EXAMPLES, name)]


def kill_after(p, delay):
    time.sleep(delay)
    if p.poll() is None:
        p.kill()
        p.wait()
        return True
    p.wait()
    return False


class Model:
    """The document undo_history.py should hold, from the commands
    acknowledged."""

    def __init__(self):
        self.lines, self.done = [], []

    def copy(self):
        m = Model()
        m.lines, m.done = list(self.lines), list(self.done)
        return m

    def run(self, cmd):
        kind, _, rest = cmd.partition(" ")
        if kind == "a":
            self.lines.append(rest)
            self.done.append(("a", len(self.lines) - 1, None))
        elif kind == "r":
            n, _, text = rest.partition(" ")
            i = int(n) - 1
            self.done.append(("r", i, self.lines[i]))
            self.lines[i] = text
        elif kind == "d":
            i = int(rest) - 1
            self.done.append(("d", i, self.lines.pop(i)))
        else:
            for _ in range(min(int(rest or 1), len(self.done))):
                what, i, old = self.done.pop()
                if what == "a":
                    self.lines.pop(i)
                elif what == "r":
                    self.lines[i] = old
                else:
                    self.lines.insert(i, old)


def commands(rng, model, n):
    out = []
    m = model.copy()
    for k in range(n):
        r = rng.random()
        if not m.lines or r < 0.4:
            c = f"a line {rng.randrange(10**6)}"
        elif r < 0.6:
            c = f"r {rng.randrange(len(m.lines)) + 1} changed {k}"
        elif r < 0.75:
            c = f"d {rng.randrange(len(m.lines)) + 1}"
        else:
            c = f"u {rng.choice(['', '1', '2', '3'])}".strip()
        m.run(c)
        out.append(c)
    return out


def test_undo_history_killed(tmp_path):
    rng = random.Random(SEED)
    log = str(tmp_path / "doc")
    model = Model()
    kills = 0
    for run in range(20):
        cmds = commands(rng, model, 40)
        p = subprocess.Popen(example("undo_history.py") + [log] + cmds, stdout=subprocess.PIPE,
                             text=True)
        # Killed after a random number of acknowledgements (the last run
        # is not): at any point of the next edit's append.
        stop = rng.randrange(len(cmds)) if run < 19 else len(cmds)
        lines = []
        while len(lines) < stop:
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line)
        if stop < len(cmds):
            time.sleep(rng.uniform(0, 0.01))
            p.kill()
            kills += 1
        lines += p.stdout.readlines()
        p.wait()
        acked = [x for x in lines if x.startswith("ok ") and x.endswith("\n")]
        for c in cmds[:len(acked)]:
            model.run(c)
        printed = subprocess.run(example("undo_history.py") + [log, "p"], capture_output=True,
                                 text=True, check=True).stdout.splitlines()
        if printed != model.lines and len(acked) < len(cmds):
            # Durable, and killed before its "ok": the next one is there.
            model.run(cmds[len(acked)])
        assert printed == model.lines, f"run {run}, seed {SEED}"
    assert kills >= 5
    # A second editor of the same document is refused with the first's pid.
    first = subprocess.Popen([sys.executable, "-c",
                              "import elog, sys, time\n"
                              "log = elog.Log.open(sys.argv[1], writer=True)\n"
                              "print('open', flush=True)\n"
                              "time.sleep(60)\n", log], stdout=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline() == "open\n"
        r = subprocess.run(example("undo_history.py") + [log, "a x"], capture_output=True,
                           text=True)
        assert r.returncode == 1
        assert f"(pid {first.pid})" in r.stderr
    finally:
        first.kill()
        first.wait()


def test_agent_recorder_replays_runs(tmp_path):
    log = str(tmp_path / "actions")
    t0 = int(time.time() * 1000)
    # Three agents at once: shared writers of one log.
    ps = [subprocess.Popen(example("agent_recorder.py") + [log, "record", f"run-{k}", "--steps",
                                                           "60", "--seed", str(k)],
                           stdout=subprocess.PIPE, text=True) for k in range(3)]
    states = {}
    for k, p in enumerate(ps):
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0
        states[k] = out.splitlines()[-1]
        assert states[k].startswith("state ")
    t1 = int(time.time() * 1000)
    for k in range(3):
        r = subprocess.run(example("agent_recorder.py") + [log, "replay", f"run-{k}"],
                           capture_output=True, text=True, check=True)
        assert r.stdout.splitlines() == [states[k]]
    w = subprocess.run(example("agent_recorder.py") + [log, "window", str(t0), str(t1)],
                       capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(w) == 180
    assert sorted(int(x.split()[2]) for x in w if " run-1 " in x) == list(range(60))
    # A run killed half way replays to where it stopped: its actions are
    # in the log, in order, each acknowledged one included.
    p = subprocess.Popen(example("agent_recorder.py") + [log, "record", "run-k", "--steps",
                                                         "100000"],
                         stdout=subprocess.PIPE, text=True)
    assert kill_after(p, 1.0)
    steps = [int(x.split()[1]) for x in p.stdout.read().splitlines()
             if x.startswith("step ") and len(x.split()) == 3]
    recorded = [rec.json()["step"] for rec in Log.open(log).read(key="run-k")]
    assert recorded == list(range(len(recorded)))
    assert len(recorded) >= len(steps) > 0


def test_edge_gateway_ships_once(tmp_path):
    rng = random.Random(SEED)
    log = str(tmp_path / "readings")
    db = str(tmp_path / "receiver.db")
    readings = "".join(f"s{i % 7}:{i}\n" for i in range(6000))
    subprocess.run(example("edge_gateway.py") + ["collect", log, "--retain-bytes", "65536"],
                   input=readings, text=True, check=True)
    s = Log.open(log).summary()
    assert 0 < s["log_bytes"] <= 65536 + 16384  # the limit, and the segment being filled
    kept = {r.offset: r for r in Log.open(log).read()}
    assert 0 < len(kept) < 6000
    kills = 0
    for _ in range(8):
        p = subprocess.Popen(example("edge_gateway.py") + ["ship", log, db, "--idle", "5"])
        kills += kill_after(p, rng.uniform(0.05, 0.5))
    subprocess.run(example("edge_gateway.py") + ["ship", log, db, "--idle", "0.2"], check=True)
    assert kills >= 1
    rows = sqlite3.connect(db).execute(
        "SELECT id, log_offset, sensor, value FROM readings ORDER BY log_offset").fetchall()
    log_id = Log.open(log).settings()["id"]
    assert [r[1] for r in rows] == sorted(kept)
    for ident, off, sensor, value in rows:
        assert ident == f"{log_id}:{off}"
        assert (kept[off].key.decode(), kept[off].value.decode()) == (sensor, value)
    assert Log.open(log).committed("uplink") == max(kept)
