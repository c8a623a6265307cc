#!/usr/bin/python3
"""The documentation's examples, figures and test references, checked.

Called by test/doctest.sh, which starts the throwaway server; this file only
reads Markdown, runs what it marks and compares. Python standard library only.

What it reads (README.md and docs/*.md, or the files given):

  <!-- doctest: sql [vary] -->     the fenced block after it runs in psql,
  <!-- doctest: sh [vary] -->      in bash, or is configuration of the
  <!-- doctest: conf -->           server the examples run on;
  <!-- doctest: skip REASON -->    it cannot run here, for REASON.

  A marker is the line right before the opening fence (both may be indented,
  in a list item); GitHub does not render
  HTML comments, so readers see only the block.

  sql: statements end with ";". A statement's output is shown either in a
  comment on its last line, "-- → VALUE" (exact) or "-- e.g. VALUE" (a value
  that varies: compared by shape, below), as psql -At prints it; or in
  comment lines right after it (no blank line between), "-- " followed by
  each line of psql's aligned output without the row count. Other comments describe, and
  are not compared. Each file's blocks run in order in a database of its own
  that has the extension, as the postgres superuser, server time zone UTC.

  sh: "$ COMMAND" lines, each followed by its standard output. A command with
  no output shown must succeed; its output is not compared. "127.0.0.1:8080"
  in a command is the HTTP endpoint of the test server (its port is free).

  vary: ids (15 to 19 digits), UUIDs and timestamps are replaced by <id>,
  <uuid> and <time> on both sides before comparing, so that their number and
  place are checked but not their values. Never use it for decoded values:
  an id decoded in the text must decode to the same time on the server.

  <!-- figures: bench/results/FILE.md -->   before a paragraph: every number
  of the paragraph (4.088, 29.05, 99.8, 156...; link targets aside) and every
  "commit abc1234" must occur in that results file. A paragraph that links to
  bench/results/ and quotes a decimal figure without this marker is an error,
  except between <!-- results:begin --> and <!-- results:end -->, which
  bench/run.sh writes from its results.

  Test: `FILE` `NAME`   anywhere in the text: FILE must exist and contain
  NAME (a case function, a check's description): the test a claim names.

  [text](TARGET)   outside fences and code spans: a relative TARGET (not
  http:, https: or mailto:) must be a file or directory of the checkout, and
  its #anchor, if any, a heading of that Markdown file (GitHub's anchors:
  lower case, punctuation dropped, spaces as "-", "-1"... for repeats).

Modes:
  doctest.py conf PORT FILES...    prints the conf blocks' lines (port substituted)
  doctest.py run FILES...          runs everything; env DOCTEST_PGHOST, DOCTEST_PGPORT,
                                   DOCTEST_HTTP_PORT, DOCTEST_PSQL (psql path),
                                   DOCTEST_AS_PG (1: run psql as the postgres user)
  doctest.py static FILES...       only the checks that need no server
Output: "ok N - ..." / "not ok N - ..." lines; exit status 1 if any failed.
"""

import difflib
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MARKER = re.compile(r"^<!--\s*doctest:\s*(\w+)\s*(.*?)\s*-->\s*$")
FIGURES = re.compile(r"^<!--\s*figures:\s*(\S+)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)\s*([\w+-]*)\s*$")
TESTREF = re.compile(r"Test:\s+`([^`\s]+)`\s+`([^`]+)`")
DECIMAL = re.compile(r"(?<![\w.])\d[\d,]*\.\d+(?![\w.]*\d)")
COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")
HTTP_DEFAULT = "127.0.0.1:8080"

VARY = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d(:\d\d)?)?"), "<time>"),
    (re.compile(r"\b\d{15,19}\b"), "<id>"),
]


def vary(text):
    for rx, sub in VARY:
        text = rx.sub(sub, text)
    return text


class Block:
    def __init__(self, path, line, info, kind, opts, lines):
        self.path, self.line, self.info = path, line, info
        self.kind, self.opts, self.lines = kind, opts, lines

    def where(self):
        return "%s:%d" % (shown(self.path), self.line)


def shown(path):
    """The path relative to the checkout, when it is inside it."""
    rel = os.path.relpath(os.path.abspath(path), ROOT)
    return path if rel.startswith("..") else rel


def parse(path):
    """Returns (blocks, paragraphs-with-figure-markers, all lines)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info, start = m.group(1), m.group(2), m.group(3), i
        j = i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        marker = MARKER.match(lines[start - 1].strip()) if start > 0 else None
        kind, opts = (marker.group(1), marker.group(2)) if marker else (None, "")
        body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[start + 1:j]]
        blocks.append(Block(path, start + 1, info, kind, opts, body))
        i = j + 1
    return blocks, lines


def paragraphs(lines):
    """(first line number, marker line or None, text) of each paragraph outside fences."""
    out, cur, start, infence, generated = [], [], 0, False, False
    for n, line in enumerate(lines):
        # Between <!-- results:begin --> and <!-- results:end -->: written by
        # bench/run.sh from its results (docs/benchmarks.md), not by hand.
        if line.startswith("<!-- results:begin"):
            generated = True
        elif line.startswith("<!-- results:end"):
            generated = False
            continue
        if generated:
            continue
        if FENCE.match(line):
            infence = not infence
            if cur:
                out.append((start, cur))
                cur = []
            continue
        if infence:
            continue
        if line.strip() == "":
            if cur:
                out.append((start, cur))
                cur = []
        else:
            if not cur:
                start = n
            cur.append(line)
    if cur:
        out.append((start, cur))
    result = []
    for start, para in out:
        marker = None
        if FIGURES.match(para[0].strip()):
            marker, para = para[0], para[1:]
        result.append((start + 1, marker, "\n".join(para)))
    return result


class Report:
    def __init__(self):
        self.count = 0
        self.failed = 0

    def ok(self, good, desc, detail=""):
        self.count += 1
        if good:
            print("ok %d - %s" % (self.count, desc))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.count, desc))
            for line in detail.rstrip("\n").split("\n") if detail else []:
                print("#   " + line)
        sys.stdout.flush()
        return good


def diff(expected, actual):
    return "\n".join(difflib.unified_diff(expected, actual, "documented", "actual", lineterm="", n=2))


# --- sql ------------------------------------------------------------------

def split_sql(lines):
    """[(statement, inline comment or None, [output lines])]"""
    stmts, cur, last = [], [], None
    for line in lines:
        stripped = line.strip()
        if not cur and stripped.startswith("--"):
            # Right after a statement (no blank line): its output.
            if last is not None and last[3]:
                text = line[line.index("--") + 2:]
                last[2].append(text[1:] if text.startswith(" ") else text)
            continue
        if stripped == "":
            if last is not None:
                last[3] = False
            if cur:
                cur.append(line)
            continue
        code, comment = line, None
        if "--" in line:
            k = line.index("--")
            code, comment = line[:k], line[k + 2:].strip()
        cur.append(code.rstrip())
        if code.rstrip().endswith(";"):
            last = ["\n".join(cur).strip(), comment, [], True]
            stmts.append(last)
            cur = []
    if cur and "".join(cur).strip():
        stmts.append(["\n".join(cur).strip(), None, [], False])
    return [(s, c, out) for s, c, out, _ in stmts]


def psql(db, script):
    cmd = [os.environ.get("DOCTEST_PSQL", "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
           "-h", os.environ["DOCTEST_PGHOST"], "-p", os.environ["DOCTEST_PGPORT"],
           "-U", "postgres", "-d", db]
    if os.environ.get("DOCTEST_AS_PG") == "1":
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    p = subprocess.run(cmd, input=script, capture_output=True, text=True, cwd="/", timeout=120)
    return p.returncode, p.stdout, p.stderr


def run_sql(block, db, rep):
    stmts = split_sql(block.lines)
    script = []
    for n, (stmt, comment, out) in enumerate(stmts):
        script.append("\\echo @@doctest %d@@" % n)
        inline = comment is not None and (comment.startswith("→") or comment.startswith("e.g."))
        if inline:
            script.append("\\pset format unaligned\n\\pset tuples_only on")
        else:
            script.append("\\pset format aligned\n\\pset tuples_only off\n\\pset footer off")
        script.append(stmt)
    rc, stdout, stderr = psql(db, "\n".join(script) + "\n")
    if rc != 0:
        return rep.ok(False, "%s sql: runs" % block.where(), stderr)
    parts = re.split(r"^@@doctest (\d+)@@\n", stdout, flags=re.M)
    got = {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
    good, detail, compared = True, [], 0
    for n, (stmt, comment, out) in enumerate(stmts):
        actual = [l.rstrip() for l in got.get(n, "").rstrip("\n").split("\n")]
        varies = "vary" in block.opts.split()
        if comment is not None and comment.startswith("→"):
            expected = [comment[1:].strip()]
        elif comment is not None and comment.startswith("e.g."):
            expected, varies = [comment[4:].strip()], True
        elif out:
            expected = [l.rstrip() for l in out]
        else:
            continue
        compared += 1
        if varies:
            expected, actual = [vary(l) for l in expected], [vary(l) for l in actual]
        if expected != actual:
            good = False
            detail.append(stmt.split("\n")[0])
            detail.append(diff(expected, actual))
    return rep.ok(good, "%s sql: %d output(s) as documented" % (block.where(), compared), "\n".join(detail))


# --- sh -------------------------------------------------------------------

def split_sh(lines):
    cmds = []
    for line in lines:
        if line.startswith("$ "):
            cmds.append((line[2:], []))
        elif cmds:
            cmds[-1][1].append(line)
    return cmds


def run_sh(block, rep, workdir):
    env = dict(os.environ)
    env["PATH"] = os.path.join(ROOT, "build") + ":" + env.get("PATH", "")
    port = os.environ.get("DOCTEST_HTTP_PORT", "")
    good, detail, compared = True, [], 0
    cmds = split_sh(block.lines)
    if not cmds:
        return rep.ok(False, "%s sh: has \"$ \" command lines" % block.where())
    for cmd, out in cmds:
        real = cmd.replace(HTTP_DEFAULT, "127.0.0.1:" + port) if port else cmd
        p = subprocess.run(["bash", "-o", "pipefail", "-c", real], capture_output=True, text=True,
                           env=env, cwd=workdir, timeout=60)
        if p.returncode != 0:
            good = False
            detail.append("$ %s\nexit %d: %s" % (cmd, p.returncode, p.stderr.strip()))
            continue
        if not out:
            continue
        compared += 1
        expected = [l.rstrip() for l in out]
        actual = [l.rstrip() for l in p.stdout.rstrip("\n").split("\n")]
        if "vary" in block.opts.split():
            expected, actual = [vary(l) for l in expected], [vary(l) for l in actual]
        if expected != actual:
            good = False
            detail.append("$ " + cmd)
            detail.append(diff(expected, actual))
    return rep.ok(good, "%s sh: %d command(s), %d output(s) as documented" % (block.where(), len(cmds), compared),
                  "\n".join(detail))


# --- checks without a server ----------------------------------------------

def looks_like_example(block):
    """A block that shows output: "$ cmd" then output, or "-- →"/"-- e.g." in SQL."""
    if block.info in ("sh", "console", "bash", "") and any(l.startswith("$ ") for l in block.lines):
        return any(l and not l.startswith("$ ") for l in block.lines)
    if block.info == "sql":
        return any(re.search(r"--\s*(→|e\.g\.)", l) for l in block.lines)
    return False


def static_checks(path, blocks, lines, rep):
    rel = shown(path)
    for b in blocks:
        if b.kind is None and looks_like_example(b):
            rep.ok(False, "%s: a block that shows output is marked <!-- doctest: ... -->" % b.where())
        elif b.kind == "skip":
            rep.ok(bool(b.opts.strip()), "%s skipped: %s" % (b.where(), b.opts.strip() or "(no reason given)"))
        elif b.kind not in (None, "sql", "sh", "conf", "skip"):
            rep.ok(False, "%s: unknown doctest kind %r" % (b.where(), b.kind))
    for line_no, marker, text in paragraphs(lines):
        figures = DECIMAL.findall(text)
        cites = re.search(r"bench/results/", text)
        if marker is not None:
            # Every number of a marked paragraph, integers too ("156 ms"),
            # but not the commit hash (checked whole, below) or link targets.
            plain = re.sub(r"\]\([^)]*\)|\bcommit [0-9a-f]+", " ", text)
            figures = re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])", plain)
            figures = [f.rstrip(",") for f in figures]
        if marker is None:
            if cites and figures:
                rep.ok(False, "%s:%d: figures %s quoted from bench/results/ have a <!-- figures: FILE --> marker"
                       % (rel, line_no, ", ".join(figures)))
            continue
        cited = FIGURES.match(marker.strip()).group(1)
        target = os.path.join(ROOT, cited)
        if not os.path.isfile(target):
            rep.ok(False, "%s:%d: cited results file %s exists" % (rel, line_no, cited))
            continue
        with open(target, encoding="utf-8") as f:
            results = f.read()
        missing = [x for x in figures if x not in results]
        missing += ["commit " + c for c in COMMIT.findall(text) if c not in results]
        rep.ok(not missing and bool(figures),
               "%s:%d: %d figure(s) quoted are in %s" % (rel, line_no, len(figures), cited),
               ("not there: " + ", ".join(missing)) if missing else ("" if figures else "no figure found"))
    text = "\n".join(lines)
    for m in TESTREF.finditer(text):
        tfile, name = m.group(1), m.group(2)
        line_no = text.count("\n", 0, m.start()) + 1
        full = os.path.join(ROOT, tfile)
        found = False
        if os.path.isfile(full):
            with open(full, encoding="utf-8", errors="replace") as f:
                found = name in f.read()
        rep.ok(found, "%s:%d: the test named exists: %s %s" % (rel, line_no, tfile, name),
               "" if found else ("no such file" if not os.path.isfile(full) else "%r not found in it" % name))


LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
CODESPAN = re.compile(r"`[^`\n]*`")


def anchors(path):
    """The anchors GitHub makes for the headings of a Markdown file."""
    _, lines = parse(path)
    seen, out, infence = {}, set(), False
    for line in lines:
        if FENCE.match(line):
            infence = not infence
            continue
        m = None if infence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def link_checks(path, lines, rep):
    """Every relative link of the document leads to a file and heading that exist."""
    rel, base, infence = shown(path), os.path.dirname(os.path.abspath(path)), False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            infence = not infence
            continue
        if infence:
            continue
        for m in LINK.finditer(CODESPAN.sub("``", line)):
            target = m.group(1)
            if re.match(r"^(https?|mailto):", target):
                continue
            name, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(base, name)) if name else os.path.abspath(path)
            # In the checkout (or, for a document outside it, beside the document).
            inside = not name or not os.path.relpath(full, ROOT).startswith("..") or \
                not os.path.relpath(full, base).startswith("..")
            if not inside or not os.path.exists(full):
                rep.ok(False, "%s:%d: the link's target exists: %s" % (rel, n, target),
                       "outside the checkout" if not inside else "no such file")
            elif anchor and (not full.endswith(".md") or anchor not in anchors(full)):
                rep.ok(False, "%s:%d: the link's target exists: %s" % (rel, n, target),
                       "no heading %r in %s" % (anchor, shown(full)))
            else:
                rep.ok(True, "%s:%d: the link's target exists: %s" % (rel, n, target))


def conf_lines(files, port):
    out = []
    for path in files:
        blocks, _ = parse(path)
        for b in blocks:
            if b.kind == "conf":
                for line in b.lines:
                    out.append(line.replace(HTTP_DEFAULT, "127.0.0.1:" + port) if port else line)
    return out


def run(files, with_server, rep=None):
    rep = rep or Report()
    workdir = tempfile.mkdtemp(prefix="snowflake-doctest.")
    for k, path in enumerate(files):
        blocks, lines = parse(path)
        static_checks(path, blocks, lines, rep)
        link_checks(path, lines, rep)
        if not with_server:
            continue
        db = None
        for b in blocks:
            if b.kind == "sql":
                if db is None:
                    db = "doctest_%d" % k
                    rc, _, err = psql("postgres", "DROP DATABASE IF EXISTS %s;\nCREATE DATABASE %s;\n" % (db, db))
                    rc2, _, err2 = psql(db, "CREATE EXTENSION snowflake;\n") if rc == 0 else (1, "", "")
                    if not rep.ok(rc == 0 and rc2 == 0, "%s: database %s with the extension" % (shown(path), db), err + err2):
                        break
                run_sql(b, db, rep)
            elif b.kind == "sh":
                run_sh(b, rep, workdir)
            elif b.kind == "conf":
                rep.ok(True, "%s conf: in the test server's postgresql.conf" % b.where())
    subprocess.run(["rm", "-rf", workdir])
    return rep


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    mode = argv[1]
    if mode == "conf":
        print("\n".join(conf_lines(argv[3:], argv[2])))
        return 0
    files = argv[2:] or [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    rep = run(files, with_server=(mode == "run"))
    print("# %d check(s), %d failed" % (rep.count, rep.failed))
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
