#!/usr/bin/env python3
"""undo_history.py: a text document whose every edit survives a crash, with undo.

    undo_history.py LOG COMMAND...

Commands, each one argument: "a TEXT" appends a line, "r N TEXT" replaces
line N (from 1), "d N" deletes line N, "u" or "u N" undoes the last N edits
not yet undone, "p" prints the document.

Each edit is appended to the log and made durable (sync=True) before it is
acknowledged with "ok OFFSET": after a crash, every acknowledged edit is
there.  An undo is a record too, never a cut of the log, as a desktop
editor's history would be: the log stays the whole history.  On start the
document is rebuilt by reading the log from the beginning.  The editor is
the log's only writer (writer=True): a second editor of the same document
is refused, with the first one's pid.
"""

import json
import sys

import elog


class Document:
    def __init__(self):
        self.lines = []
        self.done = []  # the edits that can be undone: (op, index, old line)

    def apply(self, op):
        """Apply one recorded operation; raise ValueError if it cannot be."""
        kind = op["op"]
        if kind == "a":
            self.lines.append(op["text"])
            self.done.append(("a", len(self.lines) - 1, None))
        elif kind == "r":
            i = self._index(op["n"])
            self.done.append(("r", i, self.lines[i]))
            self.lines[i] = op["text"]
        elif kind == "d":
            i = self._index(op["n"])
            self.done.append(("d", i, self.lines.pop(i)))
        elif kind == "u":
            for _ in range(min(op["n"], len(self.done))):
                what, i, old = self.done.pop()
                if what == "a":
                    self.lines.pop(i)
                elif what == "r":
                    self.lines[i] = old
                else:
                    self.lines.insert(i, old)
        else:
            raise ValueError(f"unknown operation {kind!r}")

    def _index(self, n):
        if not 1 <= n <= len(self.lines):
            raise ValueError(f"no line {n}: the document has {len(self.lines)}")
        return n - 1


def parse(cmd):
    """A command as the operation to record (None for "p")."""
    kind, _, rest = cmd.partition(" ")
    if kind == "a":
        return {"op": "a", "text": rest}
    if kind == "r":
        n, _, text = rest.partition(" ")
        return {"op": "r", "n": int(n), "text": text}
    if kind == "d":
        return {"op": "d", "n": int(rest)}
    if kind == "u":
        return {"op": "u", "n": int(rest) if rest else 1}
    if kind == "p":
        return None
    raise ValueError(f"unknown command {cmd!r}")


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: undo_history.py LOG COMMAND...")
    try:
        with elog.Log.open(sys.argv[1], writer=True) as log:
            doc = Document()
            for rec in log.read():
                doc.apply(rec.json())
            for cmd in sys.argv[2:]:
                try:
                    op = parse(cmd)
                    if op is None:
                        for line in doc.lines:
                            print(line)
                        continue
                    # Checked on a copy first: a bad edit is never recorded.
                    trial = Document()
                    trial.lines, trial.done = list(doc.lines), list(doc.done)
                    trial.apply(op)
                except ValueError as e:
                    print(f"error {e}", flush=True)
                    continue
                off = log.append(json.dumps(op), sync=True)
                doc.apply(op)
                print("ok", off, flush=True)
    except elog.WriterBusy as e:
        sys.exit(f"undo_history: the document is open in another editor (pid {e.pid})")
    except elog.ElogError as e:
        sys.exit(f"undo_history: {e}")


if __name__ == "__main__":
    main()
