"""The timed parts of a bench beside a peer, shared by bench_vs_mutmut.py and bench_vs_stryker.py.

runs.txt (bench-lib.sh's `interleave`) holds a line per part and tool: TOOL PART N SECONDS
LOAD_BEFORE LOAD_AFTER. gatekit's report of part P is gk-P/mutants.json.
"""

import json
import os


def table(work, peer, read_peer):
    """Prints each part's wall time, per mutant and load; returns gatekit's verdicts and the
    peer's by mutant name (read_peer(part) gives the peer's for one part), and each tool's
    wall time per mutant over all its parts."""
    runs = [line.split() for line in open(os.path.join(work, "runs.txt"))]
    verdicts = {"gatekit": {}, peer: {}}
    secs, count = {"gatekit": 0.0, peer: 0.0}, {"gatekit": 0, peer: 0}
    print(f"{'part':5} {'tool':8} {'mutants':>7} {'wall':>8} {'per mutant':>11} "
          f"{'load before':>11} {'load after':>10}")
    for tool, part, n, wall, before, after in runs:
        n, wall = int(n), float(wall)
        secs[tool] += wall
        count[tool] += n
        print(f"{part:5} {tool:8} {n:7} {wall:7.1f}s {wall / n:10.2f}s {before:>11} {after:>10}")
        try:
            if tool == "gatekit":
                report = json.load(open(os.path.join(work, f"gk-{part}", "mutants.json")))
                verdicts[tool].update({m["name"]: m["verdict"] for m in report["mutants"]})
            else:
                verdicts[tool].update(read_peer(part))
        except (OSError, ValueError) as e:
            print(f"  no report from {tool} for part {part}: {e}")
    per = {t: secs[t] / count[t] if count[t] else float("nan") for t in secs}
    return verdicts["gatekit"], verdicts[peer], per


def ratio_line(peer_name, per, peer):
    """The closing line: each tool's wall time per mutant and the ratio."""
    g, p = per["gatekit"], per[peer]
    return (f"wall time per mutant (whole command over its mutants): gatekit {g:.2f}s, "
            f"{peer_name} {p:.2f}s; ratio gatekit/{peer_name} {g / p:.2f}x")
