"""How scripts/check-examples.py compares what a command printed with what a page shows.

Both sides are redacted alike (times, durations, ids, temp paths, the widths of a table's
spaces and rules), then matched line by line, a shown `...` line standing for any lines and
`[..]` for any text within one.
"""

import re

TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
DURATION = re.compile(r"(?<![\w.])(\d+h)?(\d+m)?\d+(\.\d+)?(ms|s)\b|(?<![\w.])\d+h\d+m\b|(?<![\w.])\d+m\b(?!\w)")
HEX = re.compile(r"(?<![\w/])(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}(?![\w])|(?<![\w/])\d{12,64}(?!\w)")
TMP = re.compile(r"/tmp/[^\s/:'\"`)]+")


def redact(text, sandbox):
    """The text with what differs between runs (times, ids, temp paths) replaced."""
    out = []
    for line in text.split("\n"):
        if sandbox is not None:
            line = line.replace(sandbox.tmp, "/tmp").replace(sandbox.work + "/", "")
            line = line.replace(sandbox.work, ".").replace(sandbox.home, "~")
        line = line.replace("/home/you", "~")  # the pages' HOME
        line = TIME.sub("[TIME]", line)
        line = TMP.sub("[TMP]", line)
        line = HEX.sub("[ID]", line)
        line = DURATION.sub("[DUR]", line)
        line = re.sub(r"-{3,}", "---", line)
        line = re.sub(r"\s+", " ", line).strip()
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    while out and out[0] == "":
        out.pop(0)
    return out


def line_matches(shown, printed):
    if "[..]" not in shown:
        return shown == printed
    parts = [re.escape(p) for p in shown.split("[..]")]
    return re.fullmatch(".*".join(parts), printed) is not None


def matches(shown, printed):
    """Whether the printed lines match the shown ones, `...` lines standing for any lines."""
    memo = {}

    def go(i, j):
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(shown):
            r = j == len(printed)
        elif shown[i] == "...":
            r = any(go(i + 1, k) for k in range(j, len(printed) + 1))
        else:
            r = j < len(printed) and line_matches(shown[i], printed[j]) and go(i + 1, j + 1)
        memo[key] = r
        return r

    return go(0, 0)


def first_difference(shown, printed):
    """Where the shown lines and the printed ones part, then what was printed (redacted)."""
    where = part(shown, printed)
    return where + "\n    printed (redacted):\n      " + "\n      ".join(printed[:80])


def part(shown, printed):
    for k, s in enumerate(shown):
        if s == "...":
            return "shown (redacted):\n      " + "\n      ".join(shown)
        if k >= len(printed):
            return f"shown line {k + 1} `{s}`, but the output ended"
        if not line_matches(s, printed[k]):
            return f"line {k + 1}: shown `{s}`\n    printed `{printed[k]}`"
    return f"the output goes on: `{printed[len(shown)]}`"
