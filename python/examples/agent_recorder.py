#!/usr/bin/env python3
"""agent_recorder.py: record every action of an AI agent, replay a run.

    agent_recorder.py LOG record RUN [--steps N] [--seed S]
    agent_recorder.py LOG replay RUN
    agent_recorder.py LOG window SINCE_MS UNTIL_MS

`record` runs a toy agent that edits files in a workspace (a dict of path to
text).  Before it performs an action it appends the action to the log as a
JSON record: schema 1, the run id as the key, the agent's own clock as the
timestamp, made durable (sync=True) first, so that an action that happened
is always in the log.  Any number of agents record at once: each opens the
log as a shared writer.  It prints "step N OFFSET" per action and, at the
end, "state DIGEST" (a hash of the workspace).

`replay` reads the run's records (read(key=RUN)) in order and performs them
again on an empty workspace; it prints the same "state DIGEST" as the run
did at the point it stopped.  `window` prints the actions of every run
stamped between SINCE and UNTIL (ms since the epoch), in offset order.
"""

import argparse
import hashlib
import json
import random
import sys
import time

import elog

SCHEMA_ACTION = 1


def perform(workspace, action):
    """Apply one action to the workspace (the agent's tools)."""
    tool = action["tool"]
    if tool == "write":
        workspace[action["path"]] = action["text"]
    elif tool == "append":
        workspace[action["path"]] = workspace.get(action["path"], "") + action["text"]
    elif tool == "delete":
        workspace.pop(action["path"], None)
    elif tool == "note":
        pass  # a thought, recorded but changing nothing
    else:
        raise ValueError(f"unknown tool {tool!r}")


def digest(workspace):
    return hashlib.sha256(json.dumps(workspace, sort_keys=True).encode()).hexdigest()[:16]


def choose(rng, workspace, step):
    """The toy agent's next action."""
    paths = sorted(workspace)
    r = rng.random()
    if not paths or r < 0.3:
        return {"tool": "write", "path": f"f{rng.randrange(8)}.txt", "text": f"draft {step}\n"}
    if r < 0.7:
        return {"tool": "append", "path": rng.choice(paths), "text": f"line {step}\n"}
    if r < 0.85:
        return {"tool": "delete", "path": rng.choice(paths)}
    return {"tool": "note", "text": f"thinking about step {step}"}


def record(log, run, steps, seed):
    rng = random.Random(seed)
    workspace = {}
    for step in range(steps):
        action = choose(rng, workspace, step)
        action["step"] = step
        off = log.append(json.dumps(action), key=run, schema=SCHEMA_ACTION,
                         ts_ms=int(time.time() * 1000), sync=True)
        perform(workspace, action)
        print("step", step, off, flush=True)
    print("state", digest(workspace), flush=True)


def replay(log, run):
    workspace = {}
    for rec in log.read(key=run):
        if rec.schema == SCHEMA_ACTION:
            perform(workspace, rec.json())
    print("state", digest(workspace))


def window(log, since, until):
    for rec in log.read(since=since, until=until):
        if rec.schema == SCHEMA_ACTION:
            a = rec.json()
            print(rec.ts_ms, rec.key.decode(), a["step"], a["tool"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("run")
    r.add_argument("--steps", type=int, default=100)
    r.add_argument("--seed", type=int, default=1)
    p = sub.add_parser("replay")
    p.add_argument("run")
    w = sub.add_parser("window")
    w.add_argument("since", type=int)
    w.add_argument("until", type=int)
    a = ap.parse_args()
    try:
        if a.cmd == "record":
            with elog.Log.open(a.log, writer=True, shared=True, cleanup="delete") as log:
                record(log, a.run, a.steps, a.seed)
        elif a.cmd == "replay":
            replay(elog.Log.open(a.log), a.run)
        else:
            window(elog.Log.open(a.log), a.since, a.until)
    except elog.ElogError as e:
        sys.exit(f"agent_recorder: {e}")


if __name__ == "__main__":
    main()
