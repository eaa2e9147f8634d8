#!/usr/bin/env python3
"""Runs every example of the README and the book, and compares what it prints with the page.

    python3 scripts/check-examples.py --bin DIR [PAGE.md ...]

With no pages: README.md and docs/book/src/*.md (not SUMMARY.md, not promises.md). DIR holds
`gatekit` (the umbrella binary answers to `gate`, `mutants` and `probe` through links made in
the sandbox) or the three tools themselves; it goes first on PATH.

Each page runs in a sandbox of its own (a temp dir with HOME, the XDG dirs, TMPDIR and
GIT_CONFIG_GLOBAL inside it), its fenced blocks in page order, in the sandbox's `work/`:
- ```sh / ```console blocks run with bash (`set -eo pipefail`); the exit code must be 0 unless
  a `check: exit N` note says otherwise;
- an untagged or ```text block right after a command block is that command's stdout (its
  stderr with a `check: stderr` note), compared after redactions (below);
- an untagged block whose lines start with `gate`, `mutants` or `probe`, with no command block
  before it, is a synopsis: every subcommand and `--flag` in it must be in that command's
  `--help`;
- ```toml blocks must parse (the Rust test `gatekit/tests/examples.rs` then reads each with the
  tool's own reader, from `--list-toml`); with `check: file PATH` the block is also written there;
- ```yaml blocks must parse (PyYAML), every job must have `runs-on` and steps, and no step may
  install gatekit from its own source (`--path` without a checkout of gatekit);
- ```text and other tagged blocks not right after a command are prose and are not run.

Notes are HTML comments, invisible in the rendered page, that start with `check:`:
- `<!-- check: setup` ... `-->` runs its shell lines in the sandbox (hidden preparation);
- `<!-- check: skip REASON -->` skips the next block, listed with its reason;
- `<!-- check: exit N -->` the next command block must exit N;
- `<!-- check: stderr -->` the next output block is the command's stderr;
- `<!-- check: output of COMMAND -->` the next block is an excerpt of what COMMAND prints
  (run hidden, once per check: it may not stand on what the page prepared);
- `<!-- check: file PATH -->` the next TOML block is written to PATH in `work/`;
- `<!-- check: as COMMAND -->` the next command block is run as COMMAND instead (for
  `cargo run --release --bin gatekit --`, which is the built `gatekit`), hidden as above; the
  check lists each block it ran so.

Redactions, applied to the shown and the printed text alike: times (`2026-12-02T08:07:55Z`) to
`[TIME]`, durations (`0.12s`, `1m40s`, `500ms`) to `[DUR]`, commit and tree ids (hex with a
letter, 7+ characters) to `[ID]`, the sandbox's HOME and the pages' `/home/you` to `~`, its temp dir to `/tmp` and then `/tmp/NAME` to
`[TMP]`, runs of spaces to one and of dashes to three (a table's rule follows its widths). In a shown block a line `...` stands for any lines and `[..]`
for any text within a line.

Exit 0 when every example matched; 1 listing each difference; the skipped examples are listed
with their reasons either way.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib

# The matcher lives beside this script; importing it must leave no __pycache__ in the repository.
sys.dont_write_bytecode = True
from examples_match import first_difference, matches, redact  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
TOOLS = ("gate", "mutants", "probe")
COMMAND_LANGS = ("sh", "console", "bash", "shell")
TIMEOUT = 120


class Block:
    """One fenced block: its language, text, first line, and the notes before it."""

    def __init__(self, lang, text, line, notes):
        self.lang = lang
        self.text = text
        self.line = line
        self.notes = notes


def parse(path):
    """The page's fenced blocks and setups, in order: ('block', Block) or ('setup', line, text)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    items = []
    notes = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("<!-- check:"):
            body = [stripped[len("<!-- check:"):]]
            start = i
            while "-->" not in body[-1]:
                i += 1
                if i >= len(lines):
                    raise SystemExit(f"{path}:{start + 1}: a check note that never ends (-->)")
                body.append(lines[i])
            body[-1] = body[-1][: body[-1].index("-->")]
            head = body[0].strip()
            if head == "setup":
                items.append(("setup", start + 1, "\n".join(body[1:])))
            else:
                notes.append((start + 1, " ".join(b.strip() for b in body).strip()))
            i += 1
            continue
        m = re.match(r"^(\s*)(`{3,})(\S*)\s*$", line)
        if m:
            indent, fence, lang = m.group(1), m.group(2), m.group(3)
            start = i
            body = []
            i += 1
            while i < len(lines) and not re.match(r"^\s*" + fence + r"\s*$", lines[i]):
                text = lines[i]
                body.append(text[len(indent):] if text.startswith(indent) else text.lstrip())
                i += 1
            items.append(("block", Block(lang, "\n".join(body), start + 1, notes)))
            notes = []
        elif stripped and notes and not stripped.startswith("<!--"):
            # A note belongs to the block right after it; prose between is allowed only for
            # `output of`, which introduces a block the prose names.
            pass
        i += 1
    return items


def note(block, word):
    """The text after `word` in the block's notes, or None."""
    for _, text in block.notes:
        if text == word or text.startswith(word + " "):
            return text[len(word):].strip()
    return None


class Sandbox:
    """A temp dir with HOME, XDG dirs, TMPDIR and a git config of its own."""

    def __init__(self, bindir):
        # In /tmp whatever TMPDIR says: the tools wrap a long line by its width, so a page's
        # shown output holds only for paths as long as the ones it was written with (CI's
        # TMPDIR is a longer folder of its own).
        self.root = tempfile.mkdtemp(prefix="gatekit-examples-", dir="/tmp")
        self.home = os.path.join(self.root, "home")
        self.tmp = os.path.join(self.root, "tmp")
        self.work = os.path.join(self.root, "work")
        self.bin = os.path.join(self.root, "bin")
        for d in (self.home, self.tmp, self.work, self.bin):
            os.makedirs(d)
        gatekit = os.path.join(bindir, "gatekit")
        for tool in TOOLS + ("gatekit",):
            own = os.path.join(bindir, tool)
            target = own if os.path.exists(own) else gatekit
            if not os.path.exists(target):
                raise SystemExit(f"check-examples: no {tool} or gatekit in {bindir}")
            os.symlink(target, os.path.join(self.bin, tool))
        gitconfig = os.path.join(self.home, ".gitconfig")
        with open(gitconfig, "w") as f:
            f.write("[user]\n\tname = A Reviewer\n\temail = reviewer@example.invalid\n"
                    "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
                    "[advice]\n\tdetachedHead = false\n")
        keep = {k: os.environ[k] for k in ("LANG", "LC_ALL", "TERM") if k in os.environ}
        self.env = dict(keep)
        self.env.update({
            "PATH": self.bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "TMPDIR": self.tmp,
            "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
            "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
            "XDG_STATE_HOME": os.path.join(self.home, ".local/state"),
            "XDG_DATA_HOME": os.path.join(self.home, ".local/share"),
            "GIT_CONFIG_GLOBAL": gitconfig,
            "GIT_CONFIG_NOSYSTEM": "1",
            "NO_COLOR": "1",
            # npm asks its registry for a newer npm unless told not to: the examples stay offline.
            "npm_config_update_notifier": "false",
            "EXAMPLES_ROOT": self.root,
            "EXAMPLES_REPO": ROOT,
        })
        # The sandbox shares the machine's npm cache read-only in spirit: `npm ci --offline`
        # in an example installs from it, as it would for the user.
        if os.environ.get("npm_config_cache"):
            self.env["npm_config_cache"] = os.environ["npm_config_cache"]

    def run(self, script, timeout=TIMEOUT):
        """Runs `script` with bash in work/: (exit code, stdout, stderr)."""
        try:
            p = subprocess.run(
                ["bash", "-c", "set -eo pipefail\n" + script],
                cwd=self.work, env=self.env, capture_output=True, timeout=timeout,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return None, "", f"timed out after {timeout}s"
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")

    def close(self):
        subprocess.run(["chmod", "-R", "u+w", self.root], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)




class Page:
    def __init__(self, path, rel):
        self.path = path
        self.rel = rel
        self.found = 0
        self.ran = 0
        self.matched = 0
        self.skipped = []
        self.substituted = []
        self.prose = 0
        self.secs = 0.0
        self.failures = []
        self.toml = []

    def fail(self, line, what):
        self.failures.append(f"{self.rel}:{line}: {what}")


def is_synopsis(text):
    first = text.strip().split("\n")[0] if text.strip() else ""
    return first.split(" ")[0] in TOOLS


def check_synopsis(page, block, sandbox, helps):
    """Every subcommand and flag of a synopsis is in that command's --help."""
    for n, line in enumerate(block.text.split("\n")):
        words = line.split("#")[0].split()
        if not words:
            continue
        if words[0] in TOOLS and len(words) > 1:
            tool, sub = words[0], words[1]
        # A continuation line belongs to the command above it.
        key = (tool, sub)
        if key not in helps:
            # `TOOL help` is clap's own subcommand: it answers without --help.
            code, out, err = sandbox.run(f"{tool} help" if sub == "help" else f"{tool} {sub} --help")
            helps[key] = out if code == 0 else None
        if helps[key] is None:
            page.fail(block.line + n + 1, f"`{tool} {sub}` is no command (`{tool} {sub} --help` failed)")
            return False
        for flag in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line):
            if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", helps[key]):
                page.fail(block.line + n + 1, f"`{tool} {sub} {flag}`: no such flag in `{tool} {sub} --help`")
                return False
    return True


YAML = r"""
import json, sys
try:
    import yaml
except ImportError:
    sys.exit(3)
doc = yaml.safe_load(sys.stdin.read())
problems = []
jobs = doc.get("jobs") if isinstance(doc, dict) else None
if not isinstance(jobs, dict):
    problems.append("no `jobs:`")
else:
    for name, job in jobs.items():
        if "runs-on" not in job:
            problems.append(f"job `{name}` has no `runs-on`")
        steps = job.get("steps") or []
        if not steps:
            problems.append(f"job `{name}` has no steps")
        # A user installs the tools from gatekit's repository (`cargo install --git`), or from
        # a checkout of it; `--path` alone builds whatever the user's own repository holds.
        gatekit_checked_out = any(
            str(s.get("uses", "")).startswith("actions/checkout")
            and "gatekit" in str((s.get("with") or {}).get("repository", ""))
            for s in steps)
        for s in steps:
            run = str(s.get("run", ""))
            if "cargo install" in run and "--git" not in run and not gatekit_checked_out:
                problems.append(f"job `{name}` installs with `{run.strip()}`: not from gatekit's "
                                "repository (`--git`) nor a checkout of it")
print(json.dumps({"problems": problems, "runs": [str(s.get("run", "")) for j in (jobs or {}).values()
                                                  for s in (j.get("steps") or [])]}))
"""


def check_yaml(page, block, sandbox, helps):
    p = subprocess.run([sys.executable, "-c", YAML], input=block.text.encode(), capture_output=True)
    if p.returncode == 3:
        page.skipped.append(f"{page.rel}:{block.line}: YAML not checked: PyYAML is not installed")
        return False
    if p.returncode != 0:
        page.fail(block.line, "the YAML does not parse: " + p.stderr.decode().strip().split("\n")[-1])
        return False
    answer = json.loads(p.stdout)
    for problem in answer["problems"]:
        page.fail(block.line, problem)
    # Every gate, mutants and probe command in the steps: its subcommand and flags exist.
    commands = []
    for run in answer["runs"]:
        for segment in re.split(r"&&|\|\||;|\||\n", run.replace("\\\n", " ")):
            words = segment.split()
            if len(words) > 1 and words[0] in TOOLS:
                commands.append(" ".join(words))
    synopsis = Block("", "\n".join(commands), block.line, [])
    return not answer["problems"] and check_synopsis(page, synopsis, sandbox, helps)


def check_spec(page, block, sandbox):
    """A mutants.toml example is read by `mutants check` itself: bad input there is exit 2. A
    `check: fragment` (a spec's [[mutant]] entries alone) gets each suite it names defined."""
    text = block.text
    if note(block, "fragment") is not None:
        names = {m.get("suite") for m in tomllib.loads(text).get("mutant", [])}
        text = "".join(f'[suites.{n}]\nrun = "true"\n\n' for n in sorted(n for n in names if n)) + text
    scratch = tempfile.mkdtemp(dir=sandbox.tmp)
    with open(os.path.join(scratch, "spec.toml"), "w") as f:
        f.write(text + "\n")
    code, out, err = sandbox.run(f"git init -q {scratch} && mutants check {scratch}/spec.toml --dir {scratch}")
    if code == 2 or code is None:
        page.fail(block.line, "`mutants check` refuses the spec: " + err.strip())
        return False
    return True


def prose_commands(path):
    """Every `gate ...`, `mutants ...` and `probe ...` code span of the page's prose (outside
    fences and notes), with its line, joined where a span wraps onto the next line."""
    lines = open(path, encoding="utf-8").read().split("\n")
    kept = []
    fence = None
    comment = False
    for n, line in enumerate(lines, 1):
        stripped = line.strip()
        if comment:
            comment = "-->" not in line
            continue
        if fence is None and stripped.startswith("<!--"):
            comment = "-->" not in line
            continue
        m = re.match(r"^\s*(`{3,})", line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif stripped == fence or stripped.startswith(fence) and not stripped[len(fence):].strip():
                fence = None
            continue
        if fence is None:
            kept.append((n, stripped))
    text = ""
    starts = []
    for n, line in kept:
        starts.append((len(text), n))
        text += line + " "
    found = []
    for m in re.finditer(r"`((?:gate|mutants|probe) [^`]+)`", text):
        line = max((n for at, n in starts if at <= m.start()), default=1)
        found.append((line, m.group(1)))
    return found


def check_prose(page, sandbox, helps):
    """Each command a page's prose names: its subcommand and flags exist."""
    for line, command in prose_commands(page.path):
        words = command.split()
        if not re.fullmatch(r"[a-z][a-z-]*", words[1]):
            continue  # `gate COMMAND --help`: a placeholder, not a command
        page.prose += 1
        check_synopsis(page, Block("", command, line - 1, []), sandbox, helps)


HIDDEN = {}
# Each command's --help, read once per check: the tools are the same for every page.
HELPS = {}
HIDDEN_LOCK = threading.Lock()


def hidden(sandbox, command):
    """What a hidden command (`check: as`, `check: output of`) prints. Such a command stands on
    nothing a page prepared (`gatekit demo` builds its own sample), so each runs once per check,
    in the sandbox of the first page that asks, and its temp paths are read as the asker's."""
    with HIDDEN_LOCK:
        if command not in HIDDEN:
            HIDDEN[command] = (threading.Lock(), [])
        lock, result = HIDDEN[command]
    with lock:
        if not result:
            result.append((sandbox.tmp, sandbox.run(command)))
    origin, (code, out, err) = result[0]
    return code, out.replace(origin, sandbox.tmp), err.replace(origin, sandbox.tmp)


def check_page(page, bindir):
    started = time.monotonic()
    try:
        check_page_in_sandbox(page, bindir)
    finally:
        page.secs = time.monotonic() - started


def check_page_in_sandbox(page, bindir):
    sandbox = Sandbox(bindir)
    helps = HELPS
    try:
        check_prose(page, sandbox, helps)
        items = parse(page.path)
        last = None  # the command block an output block may follow, with its result
        for item in items:
            if item[0] == "setup":
                _, line, script = item
                code, out, err = sandbox.run(script)
                if code != 0:
                    page.fail(line, f"the setup failed (exit {code}):\n    {err.strip()[-2000:]}")
                    return
                last = None
                continue
            block = item[1]
            skip = note(block, "skip")
            after = last
            last = None
            if block.lang in COMMAND_LANGS:
                page.found += 1
                if skip is not None:
                    page.skipped.append(f"{page.rel}:{block.line}: {skip}")
                    last = ("skipped", block)
                    continue
                script = note(block, "as") or block.text
                if note(block, "as"):
                    page.substituted.append(f"{page.rel}:{block.line}: run as `{script}`")
                want = int(note(block, "exit") or 0)
                code, out, err = hidden(sandbox, script) if note(block, "as") else sandbox.run(script)
                page.ran += 1
                if code != want:
                    page.fail(block.line, f"exit {code}, the page expects {want}:\n    "
                              + "\n    ".join((err.strip() or out.strip()).split("\n")[-15:]))
                    last = ("failed", block)
                else:
                    page.matched += 1
                    last = ("ran", block, out, err)
                continue
            output_of = note(block, "output of")
            if block.lang in ("", "text") and (output_of is not None or after is not None):
                if skip is not None:
                    page.skipped.append(f"{page.rel}:{block.line}: {skip}")
                    continue
                if output_of is not None:
                    page.found += 1
                    code, out, err = hidden(sandbox, output_of)
                    page.ran += 1
                    printed = redact(err if note(block, "stderr") is not None else out, sandbox)
                    shown = ["..."] + redact(block.text, None) + ["..."]
                    if code not in (0, None) or not matches(shown, printed):
                        page.fail(block.line, f"not in what `{output_of}` prints (exit {code}): "
                                  + first_difference(shown, printed))
                    else:
                        page.matched += 1
                    continue
                if after[0] != "ran":
                    continue  # counted with its command
                page.matched -= 1
                printed = redact(after[3] if note(block, "stderr") is not None else after[2], sandbox)
                shown = redact(block.text, None)
                if matches(shown, printed):
                    page.matched += 1
                else:
                    page.fail(block.line, "the output differs from the page: " + first_difference(shown, printed))
                continue
            if block.lang == "" and is_synopsis(block.text):
                page.found += 1
                if skip is not None:
                    page.skipped.append(f"{page.rel}:{block.line}: {skip}")
                    continue
                page.ran += 1
                if check_synopsis(page, block, sandbox, helps):
                    page.matched += 1
                continue
            if block.lang == "toml":
                page.found += 1
                if skip is not None:
                    page.skipped.append(f"{page.rel}:{block.line}: {skip}")
                    continue
                page.ran += 1
                try:
                    tomllib.loads(block.text)
                except tomllib.TOMLDecodeError as e:
                    page.fail(block.line, f"the TOML does not parse: {e}")
                    continue
                target = note(block, "file")
                if target:
                    path = os.path.join(sandbox.work, target)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "w") as f:
                        f.write(block.text + "\n")
                spec = "[[mutant]]" in block.text or "[suites." in block.text
                if spec and not check_spec(page, block, sandbox):
                    continue
                if not spec:
                    page.toml.append({"page": page.rel, "line": block.line, "text": block.text})
                if target and spec:
                    # A spec the page writes to a file must hold where it stands: every anchor
                    # once in its file, as `mutants check` counts them.
                    code, out, err = sandbox.run(f"mutants check {target}")
                    if code != 0:
                        page.fail(block.line, f"`mutants check {target}` exits {code}:\n    "
                                  + "\n    ".join((err.strip() or out.strip()).split("\n")[-10:]))
                        continue
                page.matched += 1
                continue
            if block.lang in ("yaml", "yml"):
                page.found += 1
                if skip is not None:
                    page.skipped.append(f"{page.rel}:{block.line}: {skip}")
                    continue
                page.ran += 1
                if check_yaml(page, block, sandbox, helps):
                    page.matched += 1
                continue
            if block.lang == "" and block.text.strip():
                page.found += 1
                page.fail(block.line, "an untagged block that is no command's output and no synopsis: "
                          "tag it (```text for prose) or say whose output it is (check: output of)")
    finally:
        sandbox.close()


def default_pages():
    pages = [os.path.join(ROOT, "README.md")]
    book = os.path.join(ROOT, "docs/book/src")
    for name in sorted(os.listdir(book)):
        if name.endswith(".md") and name not in ("SUMMARY.md", "promises.md"):
            pages.append(os.path.join(book, name))
    return pages


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the folder of the built gatekit (or gate, mutants, probe)")
    ap.add_argument("--list-toml", metavar="FILE", help="write every TOML example, as JSON, to FILE")
    ap.add_argument("--jobs", type=int, default=2, help="pages checked at once (default 2)")
    ap.add_argument("pages", nargs="*")
    args = ap.parse_args()
    bindir = os.path.abspath(args.bin)
    paths = [os.path.abspath(p) for p in args.pages] or default_pages()
    pages = [Page(path, os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path)
             for path in paths]
    # Pages are independent (a sandbox each), so they run side by side; each page's examples
    # run in its order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(lambda page: check_page(page, bindir), pages))
    for page in pages:
        print(f"{page.rel}: {page.found} examples, {page.ran} run, {page.matched} matched, "
              f"{len(page.skipped)} skipped, {len(page.failures)} differ; "
              f"{page.prose} commands in the prose, their flags checked ({page.secs:.1f}s)", flush=True)
    failures = [f for p in pages for f in p.failures]
    skipped = [s for p in pages for s in p.skipped]
    substituted = [s for p in pages for s in p.substituted]
    print(f"\n{sum(p.found for p in pages)} examples in {len(pages)} pages: "
          f"{sum(p.ran for p in pages)} run, {sum(p.matched for p in pages)} matched, "
          f"{len(skipped)} skipped, {len(failures)} differ")
    if skipped:
        print("skipped:")
        for s in skipped:
            print("  " + s)
    if substituted:
        print("run as another command (the note says why):")
        for s in substituted:
            print("  " + s)
    if failures:
        print("differences:")
        for f in failures:
            print("  " + f)
    if args.list_toml:
        with open(args.list_toml, "w") as f:
            json.dump([t for p in pages for t in p.toml], f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
