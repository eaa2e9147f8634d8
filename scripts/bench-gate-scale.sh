#!/usr/bin/env bash
# gate at scale, each beside the bare git or sha256 work it needs, in one run.
#
#   scripts/bench-gate-scale.sh            # 50,000-file candidate, 100,000-commit history
#   FILES=20000 COMMITS=10000 RUNS=3 scripts/bench-gate-scale.sh
#
# What it does, all inside one scratch folder (printed; removed unless KEEP=1):
#   1. builds, with `git fast-import` (seconds, not minutes), a repository whose base holds
#      5,000 files, a candidate branch that adds $FILES files of about 200 bytes (and modifies
#      10 and deletes 10 of the base's), a `short` head 10 commits past the base (one touching
#      a candidate path) and a `main` head $COMMITS commits past it (two touching candidate
#      paths); then packs the candidate with `gate pack`;
#   2. apply: `gate apply --head short` beside the bare work it stands on, done by hand:
#      `git worktree add --detach` of the base + `git apply --index` + `git write-tree`;
#      interleaved, $RUNS times each, loose objects the last run wrote pruned before each run
#      (so neither side finds the other's blobs), medians compared;
#   3. check: `gate check` of the candidate's manifest in an applied checkout beside
#      `sha256sum -c` of it, both warm, $RUNS times each;
#   4. drift over the long history: the `git log` gate runs for drift inside
#      `gate apply --head main` (timed by git's own trace2 lines, so it is the real call
#      with the real paths), beside the bare `git log --format=%H BASE..main -- PATHS`;
#      and the whole `gate apply --head main` beside the bare apply work plus that git log.
# Every figure is printed with the machine's load average at the time. A ratio counts only
# because both sides ran here, in this invocation, on this machine.
set -euo pipefail

FILES=${FILES:-50000}
COMMITS=${COMMITS:-100000}
RUNS=${RUNS:-3}
. "$(dirname "$0")/bench-lib.sh"

gate=$(release gate)
scratch bench-gate-scale
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

load() { cut -d' ' -f1-3 /proc/loadavg | sed 's/^/load average /'; }
now() { date +%s.%N; }
# Seconds since $1, to the millisecond.
since() { echo "$(now) - $1" | bc -l | xargs printf '%.3f'; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { echo "$1 / $2" | bc -l | xargs printf '%.2f'; }

# ---- 1. the repository ---------------------------------------------------------------------
repo="$work/repo"
git init -q -b main "$repo"
started=$(now)
python3 - "$FILES" "$COMMITS" <<'PY' | git -C "$repo" fast-import --quiet
import sys
files, commits = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout.buffer
state = 0x9E3779B97F4A7C15
def content(i, salt):
    # ~200 bytes that differ per file, cheaply.
    line = f"{salt} {i} " + "x" * (i % 97 + 1)
    return (line + "\n" + line[::-1] + "\n").encode()
def blob_cmd(path, data):
    out.write(b"M 100644 inline " + path.encode() + b"\ndata %d\n" % len(data) + data + b"\n")
t = 1_700_000_000
def commit(ref, mark, parent, msg, body):
    global t
    t += 1
    out.write(b"commit %s\nmark :%d\ncommitter bench <bench@example.invalid> %d +0000\n" % (ref.encode(), mark, t))
    m = msg.encode()
    out.write(b"data %d\n%s\n" % (len(m), m))
    if parent:
        out.write(b"from :%d\n" % parent)
    body()
    out.write(b"\n")
def base():
    blob_cmd("README", b"base\n")
    for j in range(5000):
        blob_cmd(f"src/m{j // 100}/f{j}.rs", content(j, "base"))
commit("refs/heads/base", 1, None, "base", base)
def cand_path(i):
    return f"gen/p{i // 5000}/q{i // 50 % 100}/f{i:05}.txt"
def candidate():
    for i in range(files):
        blob_cmd(cand_path(i), content(i, "cand"))
    for j in range(10):
        blob_cmd(f"src/m0/f{j}.rs", content(j, "changed"))
    for j in range(100, 110):
        out.write(f"D src/m1/f{j}.rs\n".encode())
commit("refs/heads/cand", 2, 1, "candidate", candidate)
# short: 10 commits, the fifth touching a candidate path.
mark, parent = 10, 1
for i in range(10):
    path = cand_path(files - 1) if i == 4 else f"hist/h{i}.txt"
    commit("refs/heads/short", mark, parent, f"short {i}", lambda: blob_cmd(path, content(i, "short")))
    mark, parent = mark + 1, mark
# main: `commits` commits, two touching candidate paths.
parent = 1
for i in range(commits):
    if i == commits // 2:
        path = cand_path(files // 2)
    elif i == commits - 3:
        path = "src/m0/f3.rs"
    else:
        path = f"hist/h{i % 1000}.txt"
    commit("refs/heads/main", mark, parent, f"history {i}", lambda: blob_cmd(path, content(i, "hist")))
    mark, parent = mark + 1, mark
PY
git -C "$repo" symbolic-ref HEAD refs/heads/main
git -C "$repo" read-tree cand
echo "repository: base 5000 files, candidate +$FILES files, main $COMMITS commits past the base, in $(since "$started") s"
started=$(now)
"$gate" pack --repo "$repo" --base base --out "$work/pack" >/dev/null
patch="$work/pack/build.patch"
manifest="$work/pack/candidate-manifest.sha256"
echo "gate pack: $(wc -l <"$manifest") manifest lines, $(du -h "$patch" | cut -f1) patch, in $(since "$started") s"
git -C "$repo" read-tree base

prune() { git -C "$repo" worktree prune; git -C "$repo" prune --expire=now; }

# ---- 2. apply ------------------------------------------------------------------------------
bare_apply() { # $1: folder
  git -C "$repo" worktree add -q --detach "$1" base
  git -C "$1" apply --index "$patch"
  git -C "$1" write-tree >/dev/null
}
gate_apply() { # $1: folder, $2: head; exit 1 (drift) is expected
  local code=0
  "$gate" apply --repo "$repo" --base base --head "$2" --patch "$patch" --manifest "$manifest" \
    --worktree "$1" --json >"$1.json" || code=$?
  [ "$code" = 1 ] || { echo "gate apply exited $code" >&2; cat "$1.json" >&2; exit 1; }
}
echo
echo "apply ($(load))"
bare_times=() gate_times=()
for i in $(seq "$RUNS"); do
  prune; t=$(now); bare_apply "$work/bare-$i"; bare_times+=("$(since "$t")")
  git -C "$repo" worktree remove --force "$work/bare-$i"
  prune; t=$(now); gate_apply "$work/gate-$i" short; gate_times+=("$(since "$t")")
  [ "$i" = "$RUNS" ] || { "$gate" clean >/dev/null 2>&1 || true; rm -rf "$work/gate-$i"; }
done
summary=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["candidate"]["manifest"]["summary"])' "$work/gate-$RUNS.json")
bare=$(echo "${bare_times[*]}" | median) ours=$(echo "${gate_times[*]}" | median)
echo "  bare: worktree add --detach + apply --index + write-tree: ${bare_times[*]} s, median $bare s"
echo "  gate apply --head short ($summary):                      ${gate_times[*]} s, median $ours s"
echo "  gate apply / bare: $(ratio "$ours" "$bare")x  ($(load))"

# ---- 3. check ------------------------------------------------------------------------------
checkout="$work/gate-$RUNS"
"$gate" check --status "$manifest" "$checkout"
(cd "$checkout" && sha256sum -c --status "$manifest")
ours_c=() theirs_c=()
for i in $(seq "$RUNS"); do
  t=$(now); "$gate" check --status "$manifest" "$checkout"; ours_c+=("$(since "$t")")
  t=$(now); (cd "$checkout" && sha256sum -c --status "$manifest"); theirs_c+=("$(since "$t")")
done
ours=$(echo "${ours_c[*]}" | median) theirs=$(echo "${theirs_c[*]}" | median)
echo
echo "check, $(wc -l <"$manifest") files, warm"
echo "  gate check --status:   ${ours_c[*]} s, median $ours s"
echo "  sha256sum -c --status: ${theirs_c[*]} s, median $theirs s"
echo "  sha256sum / gate: $(ratio "$theirs" "$ours")x  ($(load))"
"$gate" clean >/dev/null 2>&1 || true
rm -rf "$checkout"

# ---- 4. drift over the long history --------------------------------------------------------
paths="$work/paths"
git -C "$repo" diff --name-only --no-renames base cand >"$paths"
echo
echo "drift over $COMMITS commits, $(wc -l <"$paths") candidate paths ($(load))"
bare_log=() gate_log=() gate_whole=() bare_whole=()
for i in $(seq "$RUNS"); do
  t=$(now)
  # The bare question, paths on the command line (xargs would split it into several logs).
  found=$(git -C "$repo" log --format=%H base..main -- $(cat "$paths") | wc -l)
  bare_log+=("$(since "$t")")
  prune; t=$(now); gate_apply "$work/long-$i" main; gate_whole+=("$(since "$t")")
  "$gate" clean >/dev/null 2>&1 || true; rm -rf "$work/long-$i"
  prune; t=$(now); bare_apply "$work/bare-long-$i"
  git -C "$repo" log --format=%H base..main -- $(cat "$paths") >/dev/null
  bare_whole+=("$(since "$t")")
  git -C "$repo" worktree remove --force "$work/bare-long-$i"
  # Once more with git's trace2 on (the plain target: a start and an exit line a process, no
  # regions), for the time of gate's own git log alone.
  prune; trace="$work/trace-$i.txt"
  GIT_TRACE2="$trace" gate_apply "$work/traced-$i" main
  "$gate" clean >/dev/null 2>&1 || true; rm -rf "$work/traced-$i"
  gate_log+=("$(python3 - "$trace" <<'PY'
import re, sys
# gate runs its git children one after another, so each exit line closes the last start.
argv, total = "", None
for line in open(sys.argv[1]):
    if " start " in line:
        argv = line.split(" start ", 1)[1]
    m = re.search(r" exit elapsed:([0-9.]+)", line)
    if m and " log " in argv:
        total = float(m.group(1))
print(f"{total:.3f}")
PY
)")
done
drifting=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["candidate"]["drift"]))' "$work/long-$RUNS.json" 2>/dev/null || echo "?")
bare=$(echo "${bare_log[*]}" | median) ours=$(echo "${gate_log[*]}" | median)
echo "  bare git log --format=%H base..main -- PATHS ($found commits): ${bare_log[*]} s, median $bare s"
echo "  gate's drift git log (GIT_TRACE2):                     ${gate_log[*]} s, median $ours s"
echo "  gate's drift / bare: $(ratio "$ours" "$bare")x"
bare=$(echo "${bare_whole[*]}" | median) ours=$(echo "${gate_whole[*]}" | median)
echo "  bare apply work + that git log:   ${bare_whole[*]} s, median $bare s"
echo "  gate apply --head main:           ${gate_whole[*]} s, median $ours s"
echo "  gate apply / bare: $(ratio "$ours" "$bare")x  ($(load))"
