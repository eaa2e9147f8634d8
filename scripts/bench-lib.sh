# What the bench scripts share; sourced by them (`. "$(dirname "$0")/bench-lib.sh"`), never run.
#
# here            the checkout the script belongs to
# release BIN     builds gatekit's BIN in release mode and prints the binary's path
# scratch NAME    makes the scratch folder $work, removed when the script exits unless KEEP=1

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
