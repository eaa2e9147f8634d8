# What the bench scripts share; sourced by them (`. "$(dirname "$0")/bench-lib.sh"`), never run.
#
# here            the checkout the script belongs to
# release BIN     builds gatekit's BIN in release mode and prints the binary's path
# scratch NAME    makes the scratch folder $work, removed when the script exits unless KEEP=1
# stamp           the UTC time and the load averages, for a bench's start and end lines
# selftest PY     runs a bench helper's offline self-test, and stops the bench when it fails

here=$(cd "$(dirname "$0")/.." && pwd)

release() {
  echo "building gatekit's $1 (release)" >&2
  cargo build --quiet --release -p "$1" --manifest-path "$here/Cargo.toml"
  echo "$here/target/release/$1"
}

scratch() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$work"' EXIT; fi
  echo "scratch: $work" >&2
}

stamp() { echo "$(date -u '+%Y-%m-%d %H:%M:%S UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"; }

selftest() {
  local out
  if ! out=$(python3 "$here/scripts/$1" 2>&1); then
    echo "$out" >&2
    echo "the translation's self-test failed: nothing measured" >&2
    exit 1
  fi
}
