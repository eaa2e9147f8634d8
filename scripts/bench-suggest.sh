#!/usr/bin/env bash
# gatekit's `mutants suggest --all` beside each peer's own mutants, on real changes of real
# projects: the diff between two published versions of a package, in each language.
#
#   scripts/bench-suggest.sh [LABEL...]      # default: every project below
#
# For each project, in a scratch folder (printed; removed unless KEEP=1), with the registry
# archives kept in ~/.cache/gatekit/bench-suggest (nothing downloaded lands in the checkout):
#   1. downloads both versions from their registry (crates.io, npm, PyPI, the Go module proxy),
#      commits the old one to a new git repository and the new one on top (build output such as
#      a bundled dist/ left out of both);
#   2. asks the peer for its own mutants of the lines the change adds: cargo-mutants
#      `--list --json --diff --in-diff`, Stryker's `--mutate FILE:LINES` (run with a command
#      runner that runs nothing, read from its JSON report), mutmut 3's generator with its line
#      filter set to the changed lines (bench_suggest_mutmut.py says why);
#   3. runs `mutants suggest --all --diff HEAD~1 --json` in the repository;
#   4. compares them by effect (bench_suggest_compare.py): the file's bytes after the swap, all
#      whitespace removed; applies each of gatekit's proposals in a scratch copy and builds it
#      (`cargo check`, `node --check` for JavaScript, `tsc --noEmit`, `python -m py_compile`,
#      `go build ./...`).
# It prints per project: the peer's mutants on the changed lines, recall (the share of them
# gatekit also proposes), how many of gatekit's proposals the peer lacks, anchors unique (each
# anchor counted in its file) and the share of proposals that build; then the goals. It also
# times a clean build of the grammar crates (`-p syntax`, fresh CARGO_TARGET_DIR, -j 2), and
# prints the date and the load average at the start and the end.
#
# A peer or toolchain that is missing is named on a line of its own and that row reads "not
# measured": no figure is ever made up. Before anything, bench_suggest_selftest.py checks the
# comparison on small cases; if it fails, nothing is measured.
#
#   BUILD_SAMPLE=N        build-check only N proposals per project, drawn with a fixed seed
#                         (default 0: every one)
#   PEER_BUILD=1          also build each of Stryker's and cargo-mutants' own mutants the same
#                         way: the share of a peer's mutants that build, beside gatekit's
#   GRAMMAR_BUILD=0       skip the grammar crates' build timing
#   SUGGEST_JSON_DIR=DIR  read gatekit's proposals from DIR/LABEL.json instead of running
#                         `mutants suggest` (to try the script on a hand-made file of the
#                         `suggest --json` shape); every row then says so
#   MUTANTS=PATH          the `mutants` binary (default: a release build of this checkout)
set -euo pipefail

. "$(dirname "$0")/bench-lib.sh"
cache="$HOME/.cache/gatekit/bench-suggest"
helper="$here/scripts/bench_suggest_compare.py"
export BUILD_SAMPLE=${BUILD_SAMPLE:-0}
mkdir -p "$cache/dl"

# label  language    registry  package         old      new      peer           exclude
projects=(
  "strsim         rust        crates    strsim          0.10.0   0.11.0   cargo-mutants  -"
  "qs             javascript  npm       qs              6.12.0   6.12.1   Stryker        dist"
  "query-core     typescript npm       @tanstack/query-core 5.59.0 5.59.13 Stryker   build"
  "more-itertools python      pypi      more-itertools  10.3.0   10.4.0   mutmut         -"
  "uuid           go          go        github.com/google/uuid v1.5.0 v1.6.0 none        -"
)

echo "start: $(stamp)"
if ! selftest=$(python3 "$here/scripts/bench_suggest_selftest.py" 2>&1); then
  echo "$selftest" >&2
  echo "the comparison's self-test failed: nothing measured" >&2
  exit 1
fi

scratch bench-suggest
rows=()

# --- the tools -------------------------------------------------------------------------------
have() { command -v "$1" > /dev/null 2>&1; }
missing() { echo "MISSING: $*" >&2; }

cm=${CARGO_MUTANTS:-$HOME/.cache/gatekit/cargo-mutants/bin/cargo-mutants}
if [ ! -x "$cm" ] && have cargo; then
  echo "installing cargo-mutants into ~/.cache/gatekit/cargo-mutants (from crates.io)" >&2
  cargo install --locked --quiet cargo-mutants --version "${CARGO_MUTANTS_VERSION:-27.1.0}" \
    --root "$HOME/.cache/gatekit/cargo-mutants" || missing "cargo-mutants (install failed)"
fi
stryker="$cache/stryker/node_modules/.bin/stryker"
if [ ! -x "$stryker" ] && have npm; then
  echo "installing Stryker and TypeScript into $cache/stryker (from npm)" >&2
  mkdir -p "$cache/stryker"
  [ -f "$cache/stryker/package.json" ] || echo '{"private": true}' > "$cache/stryker/package.json"
  (cd "$cache/stryker" && npm install --silent --no-audit --no-fund \
    @stryker-mutator/core typescript @types/node) || missing "Stryker (npm install failed)"
fi
mutmut_py="$cache/mutmut-venv/bin/python"
if [ ! -x "$mutmut_py" ]; then
  echo "installing mutmut into $cache/mutmut-venv (from PyPI)" >&2
  { python3 -m venv "$cache/mutmut-venv" && "$mutmut_py" -m pip install --quiet mutmut; } \
    || missing "mutmut (pip install failed)"
fi
export PATH="$cache/stryker/node_modules/.bin:$PATH"

if [ -n "${SUGGEST_JSON_DIR:-}" ]; then
  echo "NOTE: gatekit's proposals are read from $SUGGEST_JSON_DIR (hand-made), not measured" >&2
  gm=""
else
  gm=${MUTANTS:-$(release mutants)}
  if ! "$gm" suggest --help > /dev/null 2>&1; then
    missing "gatekit's \`mutants suggest\` ($gm has no suggest command): gatekit not measured"
    gm=""
  fi
fi

# --- downloads, kept in the cache ---------------------------------------------------------
# fetch REGISTRY NAME VERSION: prints the folder holding that version's unpacked sources.
fetch() {
  local reg=$1 name=$2 ver=$3 dir="$cache/dl/$1/${2//\//_}-$3"
  if [ ! -d "$dir/src" ]; then
    rm -rf "$dir" && mkdir -p "$dir/src"
    case $reg in
      crates) curl -sSfL "https://static.crates.io/crates/$name/$name-$ver.crate" \
                | tar xz -C "$dir/src" --strip-components 1 ;;
      npm) (cd "$dir" && npm pack --silent "$name@$ver" > /dev/null) \
             && tar xzf "$dir"/*.tgz -C "$dir/src" --strip-components 1 ;;
      pypi) python3 -m pip download --quiet --no-deps --no-binary :all: "$name==$ver" -d "$dir" \
              && tar xzf "$dir"/*.tar.gz -C "$dir/src" --strip-components 1 ;;
      go) curl -sSfL "https://proxy.golang.org/$name/@v/$ver.zip" -o "$dir/module.zip" \
            && (cd "$dir" && python3 -m zipfile -e module.zip unz) \
            && cp -a "$dir/unz/$name@$ver/." "$dir/src/" && rm -rf "$dir/unz" ;;
    esac || { rm -rf "$dir"; return 1; }
  fi
  echo "$dir/src"
}

# prepare LABEL OLD_DIR NEW_DIR EXCLUDE: a git repository of the old version, the new on top.
prepare() {
  local repo="$work/$1/repo" g=(git -c user.name=bench -c user.email=bench@example.invalid)
  mkdir -p "$repo"
  cp -a "$2/." "$repo/"
  (
    cd "$repo"
    [ "$4" = - ] || rm -rf "$4"
    "${g[@]}" init -q -b main
    "${g[@]}" add -A --force && "${g[@]}" commit -q -m old
    find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
    cp -a "$3/." .
    [ "$4" = - ] || rm -rf "$4"
    "${g[@]}" add -A --force && "${g[@]}" commit -q --allow-empty -m new
  )
  echo "$repo"
}

# --- the peers ----------------------------------------------------------------------------
# Each writes the effects of its own mutants of the changed lines to $1 (a JSON list).
peer_cargo_mutants() { # OUT REPO
  [ -x "$cm" ] || { missing "cargo-mutants ($cm): the peer of $label is not measured"; return 1; }
  git -C "$2" diff HEAD~1 HEAD > "$work/$label/change.diff"
  "$cm" mutants --dir "$2" --list --json --diff --in-diff "$work/$label/change.diff" \
    > "$work/$label/cargo-mutants.json"
  python3 "$helper" peer-cargo-mutants "$work/$label/cargo-mutants.json" "$2" "$1"
}
peer_stryker() { # OUT REPO
  [ -x "$stryker" ] || { missing "Stryker ($stryker): the peer of $label is not measured"; return 1; }
  local ranges
  # Source files only: test code is not mutated, by gatekit or by a reviewer asking Stryker.
  ranges=$(python3 "$helper" stryker-ranges "$work/$label/changed.json")
  [ -n "$ranges" ] || { echo '[]' > "$1"; return 0; }
  cat > "$work/$label/stryker.json" <<JSON
{"testRunner": "command", "commandRunner": {"command": "true"}, "coverageAnalysis": "off",
 "reporters": ["json"], "jsonReporter": {"fileName": "$work/$label/stryker-report.json"},
 "tempDirName": "$work/$label/stryker-tmp", "concurrency": 2, "plugins": [], "checkers": []}
JSON
  (cd "$2" && "$stryker" run "$work/$label/stryker.json" --mutate "$ranges" \
    > "$work/$label/stryker.log" 2>&1) || { tail -5 "$work/$label/stryker.log" >&2; return 1; }
  python3 "$helper" peer-stryker "$work/$label/stryker-report.json" "$2" "$1"
}
peer_mutmut() { # OUT REPO
  [ -x "$mutmut_py" ] || { missing "mutmut ($mutmut_py): the peer of $label is not measured"; return 1; }
  "$mutmut_py" "$here/scripts/bench_suggest_mutmut.py" "$2" "$work/$label/changed.json" "$1"
}

# --- the grammar crates' clean build --------------------------------------------------------
if [ "${GRAMMAR_BUILD:-1}" != 0 ]; then
  echo "grammar crates: a clean build of -p syntax, -j 2, fresh target dir ($(stamp))" >&2
  t0=$(date +%s.%N)
  if CARGO_TARGET_DIR="$work/grammar-target" cargo build --quiet -j 2 -p syntax \
      --manifest-path "$here/Cargo.toml"; then
    grammar="$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')") s"
  else
    grammar="build failed: not measured"
  fi
  rm -rf "$work/grammar-target"
fi

# --- each project -------------------------------------------------------------------------
for entry in "${projects[@]}"; do
  read -r label lang reg name old new peer exclude <<< "$entry"
  if [ $# -gt 0 ] && [[ " $* " != *" $label "* ]]; then continue; fi
  mkdir -p "$work/$label"
  row="$work/$label/row.json"
  title="$label $old→$new ($lang)"
  unmeasured() { # REASON
    python3 -c 'import json,sys; json.dump({"label": sys.argv[1], "peer": sys.argv[2],
      "unmeasured": sys.argv[3]}, open(sys.argv[4], "w"))' "$title" "$peer" "$1" "$row"
    rows+=("$row")
  }
  toolchain=$lang
  case $lang in rust) tool=cargo ;; javascript) tool=node ;; typescript) tool=tsc ;;
                python) tool=python3 ;; go) tool=go ;; esac
  if ! have "$tool"; then missing "$tool (the $lang toolchain)"; unmeasured "$tool missing"; continue; fi
  echo "== $title: downloading from $reg" >&2
  if ! a=$(fetch "$reg" "$name" "$old") || ! b=$(fetch "$reg" "$name" "$new"); then
    missing "the $reg archive of $name $old or $new (download failed: is the registry reachable?)"
    unmeasured "download from $reg failed"; continue
  fi
  repo=$(prepare "$label" "$a" "$b" "$exclude")
  python3 "$helper" changed "$repo" > "$work/$label/changed.json"

  peer_out="$work/$label/peer.json"
  case $peer in
    cargo-mutants) peer_cargo_mutants "$peer_out" "$repo" || peer_out=- ;;
    Stryker) peer_stryker "$peer_out" "$repo" || peer_out=- ;;
    mutmut) peer_mutmut "$peer_out" "$repo" || peer_out=- ;;
    none) echo "$title: no peer is compared for $lang (none named): peer not measured" >&2
          peer_out=- ;;
  esac

  suggest="$work/$label/suggest.json"
  if [ -n "${SUGGEST_JSON_DIR:-}" ]; then
    cp "$SUGGEST_JSON_DIR/$label.json" "$suggest"
    title="$title HAND-MADE"
  elif [ -n "$gm" ]; then
    if ! (cd "$repo" && "$gm" suggest --all --diff HEAD~1 --json) > "$suggest" \
        2> "$work/$label/suggest.err"; then
      cat "$work/$label/suggest.err" >&2
      unmeasured "mutants suggest failed"; continue
    fi
  else
    unmeasured "gatekit's mutants suggest missing"; continue
  fi
  echo "== $title: comparing, then building proposals ($(stamp))" >&2
  python3 "$helper" compare "$row" "$suggest" "$repo" "$peer_out" "$toolchain" "$title" "$peer"
  rows+=("$row")
done

echo
if [ ${#rows[@]} -gt 0 ]; then python3 "$helper" table "${rows[@]}"; fi
[ "${GRAMMAR_BUILD:-1}" = 0 ] || echo "grammar crates, clean build of -p syntax on -j 2: $grammar"
echo "end: $(stamp)"
