"""The three examples of python/examples, run as a user would, killed with
SIGKILL along the way."""

import os
import random
import sqlite3
import subprocess
import sys
import time


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


def load_example(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Model:
    """The document undo_history.py should hold after the commands
    acknowledged: its own Document, run in memory (what the edits and
    undos do is checked by test_undo_history_commands)."""

    undo = load_example("undo_history")

    def __init__(self):
        self.doc = self.undo.Document()

    @property
    def lines(self):
        return self.doc.lines

    def copy(self):
        m = Model()
        m.doc.lines, m.doc.done = list(self.doc.lines), list(self.doc.done)
        return m

    def run(self, cmd):
        self.doc.apply(self.undo.parse(cmd))


def test_undo_history_commands(tmp_path):
    log = str(tmp_path / "notes")
    out = subprocess.run(example("undo_history.py") + [
        log, "a buy milk", "a call Ana", "r 2 call Bo", "a pay rent", "d 1", "p", "u 2", "p",
        "d 7", "u 9", "p"], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["ok 0", "ok 1", "ok 2", "ok 3", "ok 4", "call Bo", "pay rent",
                   "ok 5", "buy milk", "call Bo",
                   "error no line 7: the document has 2", "ok 6"]
    again = subprocess.run(example("undo_history.py") + [log, "p"], capture_output=True,
                           text=True, check=True).stdout
    assert again == ""


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
    out = [p.stdout.readline() for _ in range(20)]  # 20 actions taken, then the kill
    assert kill_after(p, 0.1)
    out += p.stdout.readlines()
    steps = [int(x.split()[1]) for x in out
             if x.startswith("step ") and x.endswith("\n") and len(x.split()) == 3]
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
