#!/usr/bin/env python3
"""page_compare.py: does a reader written from elog(5) agree with the programs?

    page_compare.py [--bin DIR] [-v] [--example] [--also READER] [--strict]
                    LOG-OR-DIR...

For each log (a directory given, or each NNNN-kind directory of a directory
that gen_logs.py filled), it runs page_reader.py and elog-cat on it and
compares the records (offset, timestamp, schema, key, value), the gaps
reported as lost to damage, and the exit status; then page_reader.py
--verify and elog-verify, and compares their verdicts: clean (0) or not.

elog-verify also judges files a reader never reads (indexes, consumers.json,
start, dictionaries no segment names, temporary files), so its verdict is
taken as "damage" only from its lines about segments, salvaged, settings
and the watermark; the others are counted with -v.

With --example, the example reader printed in elog(5) is compared with
elog-cat too (records, gaps, and whether the status is 0), and so is each
--also READER that prints as the example does (tests/format/read_log.py).

Prints one line per disagreement and a summary; exit status 1 if any, but
for those KNOWN_LIB_BUGS (below) explains, unless --strict.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
READER = os.environ.get("PAGE_READER", os.path.join(HERE, "page_reader.py"))
GAP = re.compile(r"offsets? (\d+)(?:-(\d+))? (?:was|were) lost to damage")
SEG = re.compile(r"[0-9]{20}\.log$")


# Disagreements decided as bugs of the library (lib/ is not this test's to
# change): each has a skipped test in tests/cli/page-reader.bats that shows
# it exactly.  A disagreement is taken for one of them when the log was made
# as the first pattern says and the second matches one of its problems,
# none of which is about elog-verify; it is then counted apart and does not
# fail the run, unless --strict.
KNOWN_LIB_BUGS = [
    ("readers report no gap when the records end below the durable end",
     r"watermark-ahead|fixture, (delete-active|rename-segment)",
     r"^gaps: elog-cat \[\], page \['gap \d+ \d+ damage'\]$"),
    ("with a segment above the watermark's, the end of the log is taken "
     "at its base", r"rename-segment|copy-rename|stray-active-higher|"
     r"foreign-active",
     r"^gaps: elog-cat \[.*\], page \['gap \d+ \d+ damage'\]$"),
]


def known_bug(how_line, problems):
    if any(p.startswith("verify:") for p in problems):
        return None
    for name, how_re, sig in KNOWN_LIB_BUGS:
        if re.search(how_re, how_line) and \
                any(re.search(sig, p) for p in problems):
            return name
    return None


def cat(binp, log):
    r = subprocess.run([os.path.join(binp, "elog-cat"), "-F",
                        "%o %T %c %K %S\\n%k%s\\n", log],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, events, pos = r.stdout, [], 0
    while pos < len(out):
        nl = out.index(b"\n", pos)
        off, ts, schema, klen, vlen = map(int, out[pos:nl].split())
        key = out[nl + 1:nl + 1 + klen]
        value = out[nl + 1 + klen:nl + 1 + klen + vlen]
        pos = nl + 2 + klen + vlen
        events.append("record %d %d %d %s %s" % (off, ts, schema,
                                                  key.hex() or "-",
                                                  value.hex() or "-"))
    err = r.stderr.decode("utf-8", "replace")
    gaps = []
    for m in GAP.finditer(err):
        gaps.append("gap %s %s damage" % (m.group(1), m.group(2) or
                                          m.group(1)))
    return events, gaps, r.returncode, err.strip()


def page(log):
    """The reader's records, gaps, status, message and --verify status."""
    r = subprocess.run([sys.executable, READER, "--both", log],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = r.stdout.decode().splitlines()
    events = [l for l in lines if l.startswith("record ")]
    gaps = [l for l in lines if l.startswith("gap ")]
    verdict = [int(l.split()[1]) for l in lines if l.startswith("verify ")]
    return events, gaps, r.returncode, r.stderr.decode().strip(), \
        verdict[0] if verdict else -1


# The example reader printed in elog(5), EXAMPLES, as the page prints it;
# its compressed values need the zstandard module, which a stand-in over
# page_reader.py's libzstd gives where the module is missing.
SHIM = """
import sys
sys.path.insert(0, %r)
from page_reader import Zstd
_z = Zstd()
class ZstdError(Exception):
    pass
class ZstdCompressionDict:
    def __init__(self, data):
        self.data = data
class ZstdDecompressor:
    def __init__(self, dict_data=None):
        self.d = dict_data.data if dict_data else None
    def decompress(self, frame, max_output_size=0):
        try:
            return _z.decompress(frame, self.d)
        except ValueError as e:
            raise ZstdError(str(e))
""" % HERE


def shim_setup(tmp):
    try:
        import zstandard  # noqa: F401
    except ImportError:
        with open(os.path.join(tmp, "zstandard.py"), "w") as f:
            f.write(SHIM)


def example_setup(tmp):
    src = open(os.path.join(HERE, "..", "..", "man", "elog.5")).read()
    code, on, inside = [], False, False
    for line in src.splitlines():
        if line.startswith("An independent reader in Python"):
            on = True
        elif on and line.startswith(".Bd -literal"):
            inside = True
        elif inside and line.startswith(".Ed"):
            break
        elif inside:
            code.append(line.replace("\\e", "\\"))
    path = os.path.join(tmp, "example.py")
    with open(path, "w") as f:
        f.write("\n".join(code) + "\n")
    return path


def example(path, log, shim):
    """Another reader that prints records as the page's example does."""
    env = dict(os.environ)
    env["PYTHONPATH"] = shim
    r = subprocess.run([sys.executable, path, log], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    events = ["record " + l for l in r.stdout.decode().splitlines()]
    err = r.stderr.decode("utf-8", "replace")
    gaps = ["gap %s %s damage" % (m.group(1), m.group(2) or m.group(1))
            for m in re.finditer(r"offsets (\d+)-(\d+) were lost", err)]
    return events, gaps, r.returncode, err.strip()


def verify(binp, log):
    r = subprocess.run([os.path.join(binp, "elog-verify"), "--json", log],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen, other = [], []
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        try:
            p = json.loads(line)
        except ValueError:
            continue
        if p.get("kind") not in ("damage", "loss", "unreadable"):
            continue
        f = p.get("file") or ""
        if SEG.search(f) or f in ("salvaged", "watermark", "settings"):
            seen.append(line)
        else:
            other.append(line)
    return r.returncode, seen, other


def logs_of(args):
    for a in args:
        if os.path.isfile(os.path.join(a, "settings")) or \
                not os.path.isdir(a):
            yield a
            continue
        for n in sorted(os.listdir(a)):
            if re.fullmatch(r"[0-9]{4}-[a-z]+", n):
                yield os.path.join(a, n)


def how(log):
    try:
        with open(log + ".how") as f:
            return f.read().strip()
    except OSError:
        return ""


def main(argv):
    binp = os.environ.get("ELOG_BIN", "build")
    verbose = False
    with_example = False
    strict = False
    also = []
    known = 0
    args = []
    it = iter(argv[1:])
    for a in it:
        if a == "--bin":
            binp = next(it)
        elif a == "-v":
            verbose = True
        elif a == "--example":
            with_example = True
        elif a == "--strict":
            strict = True
        elif a == "--also":
            also.append(next(it))
        else:
            args.append(a)
    others = []
    tmp = tempfile.mkdtemp(prefix="page-compare.")
    shim_setup(tmp)
    if with_example:
        others.append(("the example of elog(5)", example_setup(tmp)))
    others += [(os.path.basename(a), a) for a in also]
    t0 = time.time()
    n = agree = 0
    for log in logs_of(args):
        n += 1
        problems = []
        ce, cg, cs, cerr = cat(binp, log)
        pe, pg, ps, perr, pv = page(log)
        if ce != pe:
            k = next((i for i in range(min(len(ce), len(pe)))
                      if ce[i] != pe[i]), min(len(ce), len(pe)))
            problems.append("records differ at #%d: elog-cat %d records "
                            "(%s), page %d (%s)" % (
                                k, len(ce), ce[k][:60] if k < len(ce) else
                                "end", len(pe),
                                pe[k][:60] if k < len(pe) else "end"))
        if cg != pg:
            problems.append("gaps: elog-cat %s, page %s" % (cg, pg))
        if cs != ps:
            problems.append("status: elog-cat %d (%s), page %d (%s)" % (
                cs, cerr.splitlines()[-1] if cerr else "", ps,
                perr.splitlines()[-1] if perr else ""))
        for name, path in others:
            ee, eg, es, eerr = example(path, log, tmp)
            if ee != ce or eg != cg or (es == 0) != (cs == 0):
                problems.append("%s: %d records, gaps %s, status %d (%s)" % (
                    name, len(ee), eg, es,
                    eerr.splitlines()[-1] if eerr else ""))
        vs, seen, other = verify(binp, log)
        vview = vs if vs in (4, 5) else (1 if seen else 0)
        if (pv != 0) != (vview != 0) or (pv in (4, 5) or vview in (4, 5)) \
                and pv != vview:
            problems.append("verify: elog-verify %d (%s), page --verify %d"
                            % (vs, "; ".join(seen)[:300] or "nothing on "
                               "segments", pv))
        bug = None if strict or not problems else known_bug(how(log),
                                                             problems)
        if bug:
            known += 1
            print("LIB BUG %s [%s]: %s" % (log, how(log), bug))
        elif problems:
            print("DISAGREE %s [%s]" % (log, how(log)))
            for p in problems:
                print("    " + p)
        else:
            agree += 1
            if verbose:
                print("agree %s [%s] cat %d verify %d%s" % (
                    log, how(log), cs, vs, (" (other: %d)" % len(other))
                    if other else ""))
    print("page_compare: %d logs, %d agree, %d disagree, %d of them known "
          "bugs of the library (%.1f s)" % (n, agree, n - agree, known,
                                            time.time() - t0))
    return 0 if n == agree + known else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
